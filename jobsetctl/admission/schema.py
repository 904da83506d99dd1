"""Structural schemas: compiled once, then used for defaulting and validation (STUB: to be completed).

Interface contract (other modules rely on it):

* :class:`SchemaNode` is one node of a compiled OpenAPI v3 structural schema.
* :class:`StructuralSchema` wraps a root node: ``apply_defaults(obj)`` applies schema ``default`` values
  in place, ``validate(obj)`` returns schema-layer findings.
* :func:`builtin_schema` compiles a Kubernetes definition from kubernetes-validate for a release.
* :func:`authored_schema` compiles one of our JSON Schemas under ``jobsetctl/schemas/``.
* :func:`has_type_errors` says whether findings include a type error (the chain then stops).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.kube.versions import KubeVersion
from jobsetctl.rules.registry import define

TYPE = define("schema-type", Layer.SCHEMA, Severity.ERROR, "A value has the wrong type for its field.")


@dataclass(slots=True)
class CelRule:
    rule: str
    message: str = ""
    message_expression: str = ""
    reason: str = ""
    field_path: str = ""
    optional_old_self: bool = False


@dataclass(slots=True)
class SchemaNode:
    types: frozenset[str] = frozenset()
    properties: dict[str, SchemaNode] = field(default_factory=dict)
    additional: SchemaNode | bool | None = None
    items: SchemaNode | None = None
    validations: tuple[CelRule, ...] = ()


class StructuralSchema:
    def __init__(self, root: SchemaNode, name: str) -> None:
        self.root = root
        self.name = name

    def apply_defaults(self, obj: Any) -> None:
        return None

    def validate(self, obj: Any) -> list[Finding]:
        return []


def builtin_schema(definition: str, version: KubeVersion) -> StructuralSchema:
    return StructuralSchema(SchemaNode(), definition)


def authored_schema(name: str, version: KubeVersion) -> StructuralSchema:
    return StructuralSchema(SchemaNode(), name)


def has_type_errors(findings: list[Finding]) -> bool:
    return any(f.rule is TYPE for f in findings)
