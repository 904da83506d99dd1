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
    """One ``x-kubernetes-validations`` entry."""

    rule: str
    message: str = ""
    message_expression: str = ""
    reason: str = ""
    field_path: str = ""
    optional_old_self: bool = False


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


@dataclass(slots=True, eq=False)
class SchemaNode:
    """One compiled node of an OpenAPI v3 structural schema (the fields other modules may read).

    ``types`` is empty when any type is accepted (``x-kubernetes-preserve-unknown-fields`` or
    int-or-string handled by ``int_or_string``). ``additional`` is the compiled
    ``additionalProperties`` schema, ``True`` for "anything", ``None``/``False`` for "no other keys".
    """

    types: frozenset[str] = frozenset()
    nullable: bool = False
    properties: dict[str, SchemaNode] = field(default_factory=dict)
    additional: SchemaNode | bool | None = None
    items: SchemaNode | None = None
    required: tuple[str, ...] = ()
    enum: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    exclusive_maximum: bool = False
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    min_items: int | None = None
    max_items: int | None = None
    min_properties: int | None = None
    max_properties: int | None = None
    format: str | None = None
    default: Any = MISSING
    preserve_unknown: bool = False
    int_or_string: bool = False
    embedded_resource: bool = False
    list_type: str | None = None
    list_map_keys: tuple[str, ...] = ()
    map_type: str | None = None
    validations: tuple[CelRule, ...] = ()
    #: True when this node or a descendant has a ``default`` (lets defaulting skip whole subtrees).
    has_defaults: bool = False
    #: True when this node or a descendant has ``validations`` (lets CEL skip whole subtrees).
    has_validations: bool = False


class StructuralSchema:
    """A compiled schema for one kind and version."""

    def __init__(self, root: SchemaNode, name: str) -> None:
        self.root = root
        self.name = name

    def apply_defaults(self, obj: Any) -> None:
        """Apply ``default`` values in place, as the API server does when decoding (STUB)."""
        return None

    def validate(self, obj: Any) -> list[Finding]:
        """Schema-layer findings: types, unknown fields, required, enum, ranges, list-map keys (STUB)."""
        return []

    def node_at(self, path: tuple[str | int, ...]) -> SchemaNode | None:
        """The schema node that governs ``path`` in an object, or None."""
        node: SchemaNode | None = self.root
        for seg in path:
            if node is None:
                return None
            if isinstance(seg, int):
                node = node.items
            elif seg in node.properties:
                node = node.properties[seg]
            elif isinstance(node.additional, SchemaNode):
                node = node.additional
            else:
                return None
        return node


def compile_openapi(schema: dict[str, Any], name: str, version: KubeVersion) -> StructuralSchema:
    """Compile an OpenAPI v3 schema (a CRD ``openAPIV3Schema`` or one of ours) (STUB)."""
    return StructuralSchema(SchemaNode(), name)


def builtin_schema(definition: str, version: KubeVersion) -> StructuralSchema:
    """A Kubernetes definition from kubernetes-validate (``io.k8s.api.batch.v1.Job``) for a release (STUB)."""
    return StructuralSchema(SchemaNode(), definition)


def authored_schema(name: str, version: KubeVersion) -> StructuralSchema:
    """One of our schemas, ``jobsetctl/schemas/<name>.json``, with Kubernetes refs resolved for a release (STUB)."""
    return StructuralSchema(SchemaNode(), name)


def has_type_errors(findings: list[Finding]) -> bool:
    return any(f.rule is TYPE for f in findings)
