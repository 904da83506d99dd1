"""The compiled form of a structural schema: one :class:`SchemaNode` per schema node, shared where possible.

Other modules read these nodes (the CEL layer walks ``validations``; ``render`` asks for defaults), so the
documented fields are an interface. The fields after ``has_validations`` are precomputed by the compiler
for the validator's hot path (``schema_validate``) and are private to the schema layer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final

#: JSON types as bits, so a node's accepted types are one integer and a check is one ``&``.
OBJECT: Final = 1
ARRAY: Final = 2
STRING: Final = 4
INTEGER: Final = 8
NUMBER: Final = 16
BOOLEAN: Final = 32
NULL: Final = 64

TYPE_BITS: Final[dict[str, int]] = {
    "object": OBJECT,
    "array": ARRAY,
    "string": STRING,
    "integer": INTEGER,
    "number": NUMBER,
    "boolean": BOOLEAN,
    "null": NULL,
}

#: The JSON type name kube-openapi infers for a decoded value (``schemaInfoForType``), by Python type.
#: ``bool`` must be looked up before ``int`` would match it: ``type(True) is bool``, so a dict keyed by the
#: exact type is both fast and right.
JSON_TYPE_OF: Final[dict[type, str]] = {
    dict: "object",
    list: "array",
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
}


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

    ``types`` is empty when any type is accepted. ``additional`` is the compiled
    ``additionalProperties`` schema, ``True`` for "anything", ``None``/``False`` for "no other keys".
    Nodes compiled from a Kubernetes definition are shared by every place that references it (and may
    be part of a cycle, e.g. ``JSONSchemaProps``): never mutate a node after compilation.
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
    #: Value-validation branches (``anyOf``/``oneOf``/``allOf``) as Kubernetes schemas use them.
    any_of: tuple[SchemaNode, ...] = ()
    one_of: tuple[SchemaNode, ...] = ()
    all_of: tuple[SchemaNode, ...] = ()
    #: The Kubernetes definition this node was compiled from (``io.k8s.api.core.v1.PodSpec``), else "".
    ref: str = ""
    #: A Kubernetes ``Quantity`` in a built-in kind: the value must parse as a quantity (the Go decoder).
    quantity: bool = False

    # --- precomputed by the compiler (private to the schema layer) -------------------------------------
    #: Accepted JSON types as a bit mask (0 = any type).
    type_mask: int = 0
    #: The expected type as kube-openapi prints it: ``integer``, ``integer,string``.
    type_label: str = ""
    #: Python types a value may have and need no further check at all (the validator's fast path).
    fast: frozenset[type] = frozenset()
    #: Keys that are not properties are accepted (``additionalProperties: true``, preserve-unknown, or an
    #: open object of a Kubernetes definition, where JSON Schema semantics leave extra keys allowed).
    open: bool = False
    #: ``x-kubernetes-list-type`` whose uniqueness the API server checks for this node ("map"/"set"), or "".
    unique: str = ""
    #: Compiled ``pattern``.
    pattern_re: re.Pattern[str] | None = None
    #: Scalar constraints present (enum, bounds, lengths, pattern, format, quantity): the slow path.
    scalar_checks: bool = False
    #: Children with a default, as (key, node) pairs in schema order (defaulting visits only these first).
    defaulted: tuple[tuple[str, SchemaNode], ...] = ()
    #: A format the API server enforces on this node (already filtered per compile mode), else "".
    checked_format: str = ""
    #: A dict (a list) value needs only the object (array) walk: the type fits and nothing else applies.
    walk_object: bool = False
    walk_array: bool = False
    #: ``additional`` when it is a schema (keys that are not properties are validated against it).
    extra: SchemaNode | None = None
