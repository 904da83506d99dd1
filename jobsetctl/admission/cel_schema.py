"""How the API server turns object data into CEL values, driven by the structural schema.

Kubernetes does not evaluate CRD rules on raw JSON: ``UnstructuredToVal``
(``k8s.io/apiserver/pkg/cel/common/values.go``) types every value by its schema node, and that
typing is visible in rule results. We reproduce it lazily: data stays raw, and the compiler, which
knows the schema node of each sub-expression statically, converts only the values a rule touches.

What the typing changes (each point is a quirk test in ``tests/admission/test_cel_kubernetes.py``):

* ``type: number`` values are doubles even when written as integers (``1`` is ``1.0``);
* strings with ``format: date``/``date-time`` are timestamps, ``duration`` durations, ``byte`` bytes;
* an *object* (a schema with ``properties``) treats a null-valued field as absent (``has()`` is
  false, selecting it is ``no such key``), while a *map* (``additionalProperties``) keeps nulls;
* equality of lists with ``x-kubernetes-list-type: map`` or ``set`` ignores order, and ``+`` on them
  merges (map: by key, positions of the left kept) or unions (set) instead of concatenating;
* equality is asymmetric: the left operand's typing decides (a typed set on the left ignores order,
  a literal list on the left does not);
* two objects that both hold the same null field compare *unequal* (the null is looked up as absent
  in the other object) — an oddity of ``unstructuredMap.Equal``;
* at a resource root (and an ``x-kubernetes-embedded-resource``), ``apiVersion``, ``kind``,
  ``metadata.name`` and ``metadata.generateName`` are declared, and no other ``metadata`` field;
* field names are escaped (``__dash__``, ``__dot__``, ``__slash__``, ``__underscores__``, reserved
  words as ``__namespace__``); Kubernetes also accepts a reserved word unescaped (``self.namespace``).

:func:`ratchet_equal` is the other half: ``CorrelatedObject.CachedDeepEqual``
(``common/equality.go``), which decides whether a failing rule on an update is only a warning.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from jobsetctl.admission.cel_time import decode_base64, parse_date, parse_duration, parse_timestamp
from jobsetctl.admission.cel_values import ABSENT, CelError, NoSuchOverload, equal
from jobsetctl.admission.schema import SchemaNode

Converter = Callable[[Any], Any]

RESERVED: Final = frozenset({
    "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function", "if",
    "import", "let", "loop", "package", "namespace", "return", "var", "void", "while",
})
_ESCAPES: Final = {"underscores": "__", "dot": ".", "dash": "-", "slash": "/"}


def unescape(name: str) -> str | None:
    """Kubernetes ``cel.Unescape``: the property name a CEL field name stands for, or None."""
    if "__" not in name:
        return name
    out: list[str] = []
    i = 0
    while i < len(name):
        start = name.find("__", i)
        if start < 0:
            out.append(name[i:])
            break
        end = name.find("__", start + 2)
        if end < 0:
            out.append(name[i:])
            break
        contents = name[start + 2:end]
        if not contents or "_" in contents:
            # The escape pattern is `__[^_]+__`; an underscore inside means no escape starts here.
            out.append(name[i:start + 1])
            i = start + 1
            continue
        out.append(name[i:start])
        if contents in _ESCAPES:
            out.append(_ESCAPES[contents])
        elif contents in RESERVED:
            if len(contents) + 4 != len(name):
                return None
            out.append(contents)
        else:
            return None
        i = end + 2
    return "".join(out)


@dataclass(frozen=True, slots=True)
class NodeInfo:
    """What the CEL layer needs to know about a schema node, computed once."""

    #: ``object`` (declared properties), ``map`` (additionalProperties), ``empty`` (an object whose
    #: fields are all hidden), ``list``, ``scalar``, ``dyn`` (int-or-string, untyped).
    kind: str
    type_name: str
    nullable: bool
    converter: Converter | None
    #: Equality must follow the schema (order-insensitive lists, formats, the null quirk).
    typed_equality: bool


def schema_type(node: SchemaNode) -> str:
    """The ``type`` the API server prints in ``Invalid value: "<type>"`` (empty when untyped)."""
    if len(node.types) == 1:
        return next(iter(node.types))
    if node.embedded_resource:
        return "object"
    return ""


@functools.cache
def info(node: SchemaNode) -> NodeInfo:
    name = schema_type(node)
    if node.int_or_string or (not node.types and not node.embedded_resource):
        return NodeInfo("dyn", name, True, None, False)
    if name == "object" or node.embedded_resource:
        if node.properties or node.embedded_resource:
            kind = "object"
        elif isinstance(node.additional, SchemaNode):
            kind = "map"
        else:
            kind = "empty"
        return NodeInfo(kind, name, node.nullable, None, _needs_typed_equality(node))
    if name == "array":
        return NodeInfo("list", name, node.nullable, None, _needs_typed_equality(node))
    converter: Converter | None = None
    if name == "number":
        converter = _to_double
    elif name == "string" and node.format in _FORMAT_CONVERTERS:
        converter = _FORMAT_CONVERTERS[node.format]
    return NodeInfo("scalar", name, node.nullable, converter, converter is not None and name == "string")


def _to_double(value: Any) -> Any:
    return float(value) if type(value) is int else value


def _formatted(parse: Callable[[str], Any]) -> Converter:
    def convert(value: Any) -> Any:
        return parse(value) if type(value) is str else value

    return convert


_FORMAT_CONVERTERS: Final[dict[str | None, Converter]] = {
    "date-time": _formatted(parse_timestamp),
    "date": _formatted(parse_date),
    "duration": _formatted(parse_duration),
    "byte": _formatted(decode_base64),
}


def _needs_typed_equality(node: SchemaNode) -> bool:
    seen: set[int] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if current.list_type in ("map", "set"):
            return True
        if current.format in _FORMAT_CONVERTERS and "string" in current.types:
            return True
        if current.properties and any(child.nullable for child in current.properties.values()):
            return True
        stack.extend(current.properties.values())
        if isinstance(current.additional, SchemaNode):
            stack.append(current.additional)
        if current.items is not None:
            stack.append(current.items)
    return False


def convert(value: Any, node: SchemaNode) -> Any:
    """``UnstructuredToVal`` for one value (containers stay raw and are typed statically)."""
    if value is None:
        if node.nullable or info(node).kind == "dyn":
            return None
        raise CelError("invalid data, got null for schema with nullable=false")
    converter = info(node).converter
    return value if converter is None else converter(value)


# ------------------------------------------------------------------------------- resource roots

_STRING = SchemaNode(types=frozenset({"string"}))
_ROOT_METADATA = SchemaNode(
    types=frozenset({"object"}), properties={"name": _STRING, "generateName": _STRING},
)


@functools.cache
def with_type_and_object_meta(node: SchemaNode) -> SchemaNode:
    """Kubernetes ``WithTypeAndObjectMeta``: what a rule at a resource root may see."""
    properties = dict(node.properties)
    metadata = properties.get("metadata")
    if (
        metadata is not None
        and "string" in properties.get("kind", SchemaNode()).types
        and "string" in properties.get("apiVersion", SchemaNode()).types
        and "object" in metadata.types
        and "string" in metadata.properties.get("name", SchemaNode()).types
        and "string" in metadata.properties.get("generateName", SchemaNode()).types
    ):
        return node
    properties["kind"] = _STRING
    properties["apiVersion"] = _STRING
    properties["metadata"] = _ROOT_METADATA
    from dataclasses import replace

    return replace(node, types=frozenset({"object"}), properties=properties)


@functools.cache
def list_of(items: SchemaNode) -> SchemaNode:
    """The type of a list a macro builds from typed elements (plain, atomic list semantics)."""
    return SchemaNode(types=frozenset({"array"}), items=items)


# ------------------------------------------------------------------------------------- equality

def typed_equal(left: Any, right: Any, node: SchemaNode) -> bool:
    """``left == right`` where ``left`` is typed by ``node`` (the typed operand's ``Equal`` decides)."""
    details = info(node)
    if not details.typed_equality or left is None or right is None:
        return equal(left, right)
    if details.kind == "list":
        return _list_equal(left, right, node)
    if details.kind == "object":
        return _object_equal(left, right, node)
    if details.kind == "map":
        return _map_equal(left, right, node)
    if details.converter is not None:
        return equal(details.converter(left), _convert_other(right, details.converter))
    return equal(left, right)


def _convert_other(value: Any, converter: Converter) -> Any:
    try:
        return converter(value)
    except CelError:
        return value


def _list_equal(left: Any, right: Any, node: SchemaNode) -> bool:
    if type(left) is not list or type(right) is not list:
        return equal(left, right)
    if len(left) != len(right):
        return False
    items = node.items
    if items is None:
        return equal(left, right)
    if node.list_type == "map":
        # Kubernetes unstructuredMapList.Equal: every element of the right operand must match the
        # left element with the same key; positions do not matter.
        by_key = {map_list_key(element, node.list_map_keys): element for element in left}
        for element in right:
            mine = by_key.get(map_list_key(element, node.list_map_keys), ABSENT)
            if mine is ABSENT or not typed_equal(convert(mine, items), element, items):
                return False
        return True
    if node.list_type == "set":
        members = {_hashable(element) for element in left}
        return all(_hashable(element) in members for element in right)
    return all(
        typed_equal(convert(mine, items), theirs, items) for mine, theirs in zip(left, right, strict=True)
    )


def _hashable(value: Any) -> Any:
    # Sets hold scalars only (structural schemas enforce it); keep the kind so 1 and true differ.
    return (type(value).__name__, value) if not isinstance(value, list | dict) else (id(value),)


def _object_equal(left: Any, right: Any, node: SchemaNode) -> bool:
    if type(left) is not dict or type(right) is not dict:
        return equal(left, right)
    if len(left) != len(right):
        return False
    for key, value in left.items():
        child = node.properties.get(key)
        if child is not None:
            other = right.get(key)
            if other is None:
                # Find() treats a null field as absent, so two objects holding the same null field
                # are unequal (Kubernetes unstructuredMap.Equal; quirk).
                return False
            if value is None or not typed_equal(convert(value, child), other, child):
                return False
        elif key in right and not go_deep_equal(value, right[key]):
            return False
    return True


def _map_equal(left: Any, right: Any, node: SchemaNode) -> bool:
    if type(left) is not dict or type(right) is not dict:
        return equal(left, right)
    if len(left) != len(right):
        return False
    assert isinstance(node.additional, SchemaNode)
    values = node.additional
    for key, value in left.items():
        if key not in right:
            return False
        if not typed_equal(convert(value, values), right[key], values):
            return False
    return True


def map_list_key(element: Any, keys: tuple[str, ...]) -> Any:
    """The identity of a list-map element: its key fields (absent keys count as null)."""
    if type(element) is not dict:
        return ("not-an-object", id(element))
    return tuple(_hashable(element.get(key)) for key in keys)


def go_deep_equal(left: Any, right: Any) -> bool:
    """Go ``reflect.DeepEqual`` on decoded JSON: kinds must match exactly (int64 is not float64)."""
    lk = type(left)
    if lk is not type(right):
        return False
    if lk is dict:
        return len(left) == len(right) and all(
            key in right and go_deep_equal(value, right[key]) for key, value in left.items()
        )
    if lk is list:
        return len(left) == len(right) and all(
            go_deep_equal(a, b) for a, b in zip(left, right, strict=True)
        )
    return bool(left == right)


# --------------------------------------------------------------------------------- list addition

def typed_add(left: list[Any], right: Any, node: SchemaNode) -> list[Any]:
    """``+`` on a typed list: merge for list-maps, union for sets, concatenation otherwise."""
    if type(right) is not list:
        raise NoSuchOverload()
    if node.list_type == "map":
        merged = list(left)
        positions = {map_list_key(element, node.list_map_keys): i for i, element in enumerate(merged)}
        for element in right:
            key = map_list_key(element, node.list_map_keys)
            if key in positions:
                merged[positions[key]] = element
            else:
                positions[key] = len(merged)
                merged.append(element)
        return merged
    if node.list_type == "set":
        union = list(left)
        members = {_hashable(element) for element in union}
        for element in right:
            if _hashable(element) not in members:
                members.add(_hashable(element))
                union.append(element)
        return union
    return left + right


# ------------------------------------------------------------------------------------ ratcheting

def ratchet_equal(new: Any, old: Any, node: SchemaNode | None) -> bool:
    """``CorrelatedObject.CachedDeepEqual``: list-maps correlate by key, lists without a list type by
    index, atomic lists and sets as a whole; object fields by name."""
    if new is None and old is None:
        return True
    if new is None or old is None:
        return False
    if type(new) is list or type(old) is list:
        if type(new) is not list or type(old) is not list or len(new) != len(old):
            return False
        if node is None or node.items is None:
            return go_deep_equal(new, old)
        if node.list_type == "map":
            by_key = {map_list_key(element, node.list_map_keys): element for element in old}
            for element in new:
                previous = by_key.get(map_list_key(element, node.list_map_keys))
                if previous is None or not ratchet_equal(element, previous, node.items):
                    return False
            return True
        if node.list_type in ("set", "atomic"):
            return go_deep_equal(new, old)
        return all(ratchet_equal(a, b, node.items) for a, b in zip(new, old, strict=True))
    if type(new) is dict or type(old) is dict:
        if type(new) is not dict or type(old) is not dict or len(new) != len(old):
            return False
        for key, value in new.items():
            if key not in old:
                return False
            child = child_schema(node, key)
            if child is None:
                return False
            if not ratchet_equal(value, old[key], child):
                return False
        return True
    return go_deep_equal(new, old)


def child_schema(node: SchemaNode | None, key: str) -> SchemaNode | None:
    if node is None:
        return None
    if key in node.properties:
        return node.properties[key]
    if isinstance(node.additional, SchemaNode):
        return node.additional
    return None
