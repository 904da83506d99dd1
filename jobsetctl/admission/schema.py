"""Structural schemas: compiled once, then used for defaulting and validation.

Interface contract (other modules rely on it):

* :class:`SchemaNode` is one node of a compiled OpenAPI v3 structural schema.
* :class:`StructuralSchema` wraps a root node: ``apply_defaults(obj)`` applies schema ``default`` values
  in place, ``validate(obj)`` returns schema-layer findings.
* :func:`builtin_schema` compiles a Kubernetes definition from kubernetes-validate for a release.
* :func:`authored_schema` compiles one of our JSON Schemas under ``jobsetctl/schemas/``.
* :func:`has_type_errors` says whether findings include a type error (the chain then stops).

Two semantics, as upstream has two (details in :mod:`.schema_compile`):

* custom resources (:func:`authored_schema`, :func:`compile_openapi`) behave as apiextensions-apiserver
  treats a CRD: unknown fields are errors (strict field validation), non-nullable ``null`` values are
  pruned while defaulting, list-type maps and sets must be unique, int32/int64 formats are not enforced;
* built-in kinds (:func:`builtin_schema`) behave as their Go decoder does: ``null`` is the zero value,
  int32/int64 overflow and bad quantities are decode errors, list uniqueness is left to the kind's own
  validation (a Job may repeat an env name; a JobSet's pod template may not).

**Our schema format** (``jobsetctl/schemas/<group>_<version>_<Kind>.json``) is JSON Schema with the
Kubernetes ``x-kubernetes-*`` extensions, local ``$defs``, and three additions:

* ``{"$ref": "k8s:<definition>"}`` embeds a Kubernetes type as controller-gen embeds it in a CRD, resolved
  against the chosen release's kubernetes-validate definitions;
* the overlay ``_k8s_embedded.json`` says what controller-gen adds to embedded Kubernetes types that
  kubernetes-validate lacks: the ``+default`` markers of ``k8s.io/api`` (``defaults``: definition ->
  property -> value, e.g. ``ContainerPort.protocol: TCP``) and the restricted embedded ``ObjectMeta``
  (``embeddedRefs``: a ``$ref`` to a definition, inside another definition, is replaced);
* ``x-jobsetctl-patch`` next to a ``$ref`` applies RFC 6902 operations to a copy of the target.

Formats checked for custom resources: date-time, date, byte, uuid/uuid3/uuid4/uuid5 (apiextensions also
keeps uri, email, hostname, ipv4, ipv6, cidr, mac, isbn, creditcard, ssn, hexcolor, rgbcolor, duration,
bsonobjectid and password; we accept those unchecked: none of our schemas uses them).
"""

from __future__ import annotations

import functools
from typing import Any

import jobsetctl.kube.meta  # noqa: F401  (registers the meta-* rules with the schema layer's)
from jobsetctl.admission import schema_compile
from jobsetctl.admission.schema_compile import (
    EMBEDDED,
    NATIVE,
    OBJECT_META_DEFINITION,
    Compiler,
    Doc,
    SchemaError,
)
from jobsetctl.admission.schema_defaults import apply_defaults as _apply_defaults
from jobsetctl.admission.schema_node import MISSING, CelRule, SchemaNode
from jobsetctl.admission.schema_rules import (
    DUPLICATE,
    ENUM,
    FORMAT,
    ITEMS,
    LENGTH,
    PATTERN,
    PROPERTIES,
    RANGE,
    REQUIRED,
    TYPE,
    UNKNOWN_FIELD,
)
from jobsetctl.admission.schema_validate import validate as _validate
from jobsetctl.diagnostics import Finding
from jobsetctl.kube.versions import KubeVersion

__all__ = [
    "DUPLICATE",
    "ENUM",
    "FORMAT",
    "ITEMS",
    "LENGTH",
    "MISSING",
    "PATTERN",
    "PROPERTIES",
    "RANGE",
    "REQUIRED",
    "TYPE",
    "UNKNOWN_FIELD",
    "CelRule",
    "SchemaError",
    "SchemaNode",
    "StructuralSchema",
    "authored_schema",
    "builtin_schema",
    "compile_openapi",
    "has_type_errors",
]


class StructuralSchema:
    """A compiled schema for one kind and version."""

    def __init__(
        self, root: SchemaNode, name: str, *, native: bool = False, version: KubeVersion | None = None
    ) -> None:
        self.root = root
        self.name = name
        #: Built-in kind semantics (see the module docstring) instead of custom-resource semantics.
        self.native = native
        #: The release the schema was compiled for (hints name the release that knows an unknown field).
        self.version = version

    def apply_defaults(self, obj: Any) -> None:
        """Apply ``default`` values in place, as the API server does when decoding.

        For custom resources this also prunes ``null`` values of non-nullable fields without a default
        (apiextensions ``PruneNonNullableNullsWithoutDefaults``), so a ``null`` the API server would drop
        behaves as an absent field in every later layer.
        """
        _apply_defaults(self.root, obj, prune_nulls=not self.native)

    def validate(self, obj: Any) -> list[Finding]:
        """Schema-layer findings: types, unknown fields, required, enum, ranges, list-map keys."""
        return _validate(self.root, obj, native=self.native, version=self.version)

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

    def __repr__(self) -> str:
        return f"StructuralSchema({self.name!r}, native={self.native})"


def compile_openapi(schema: dict[str, Any], name: str, version: KubeVersion) -> StructuralSchema:
    """Compile an OpenAPI v3 schema (a CRD ``openAPIV3Schema`` or one of ours), with CRD semantics.

    Not cached (a dict is not hashable): callers that compile a CRD once per run should keep the result.
    """
    root = Compiler(version).compile_root(_with_resource_meta(schema), Doc("crd", name, schema))
    return StructuralSchema(root, name, version=version)


@functools.cache
def builtin_schema(definition: str, version: KubeVersion) -> StructuralSchema:
    """A Kubernetes definition from kubernetes-validate (``io.k8s.api.batch.v1.Job``) for a release."""
    root = Compiler(version).definition(definition, NATIVE)
    return StructuralSchema(root, definition, native=True, version=version)


@functools.cache
def authored_schema(name: str, version: KubeVersion) -> StructuralSchema:
    """One of our schemas, ``jobsetctl/schemas/<name>.json``, with Kubernetes refs resolved for a release."""
    document = schema_compile.authored_document(name)
    root = Compiler(version).compile_root(_with_resource_meta(document), Doc("authored", name, document))
    return StructuralSchema(root, name, version=version)


def embedded_definition(definition: str, version: KubeVersion) -> SchemaNode:
    """A Kubernetes definition as a CRD embeds it (what ``k8s:<definition>`` compiles to)."""
    return Compiler(version).definition(definition, EMBEDDED)


def has_type_errors(findings: list[Finding]) -> bool:
    return any(f.rule is TYPE for f in findings)


_RESOURCE_META = {
    "apiVersion": {"type": "string"},
    "kind": {"type": "string"},
    "metadata": {"$ref": f"k8s:{OBJECT_META_DEFINITION}"},
}


def _with_resource_meta(schema: dict[str, Any]) -> dict[str, Any]:
    """The root of a resource always has apiVersion, kind and a full ObjectMeta.

    A CRD says ``metadata: {type: object}``, but the API server never prunes or type-checks the root's
    metadata through the schema: it coerces it into ``ObjectMeta`` (apiextensions
    ``pkg/apiserver/schema/objectmeta``), reporting unknown metadata fields under strict validation.
    """
    properties = schema.get("properties")
    if schema.get("type") != "object" or not isinstance(properties, dict):
        return schema
    patched = dict(properties)
    for key, value in _RESOURCE_META.items():
        current = patched.get(key)
        bare = isinstance(current, dict) and not current.get("properties") and "$ref" not in current
        if current is None or (key == "metadata" and bare):
            patched[key] = value
    if patched == properties:
        return schema
    return {**schema, "properties": patched}
