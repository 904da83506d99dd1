"""Structural validation of one object against a compiled schema: the hot path of every admission.

Messages are the API server's, built as apiextensions-apiserver builds them from kube-openapi's
validator (``pkg/apiserver/validation/validation.go``, ``kubeOpenAPIResultToFieldErrors``):

* type: ``field.TypeInvalid(path, "<given>", "<path> in body must be of type <type>: \\"<given>\\"")``
  (kube-openapi ``validate/type.go``, ``errors.InvalidType``);
* required: ``field.Required(path, "")``; enum: ``field.NotSupported``; maxLength: ``field.TooLong``
  (``may not be more than N bytes``, although kube-openapi counts runes); maxItems and maxProperties:
  ``field.TooMany`` (so too many *properties* read "must have at most N items"); every other failure:
  ``field.Invalid(path, value, <kube-openapi message>)``;
* composite failures (anyOf/oneOf/allOf) are not field errors upstream, so they render with a ``<nil>``
  path: ``<nil>: Invalid value: "": "<path>" must validate at least one schema (anyOf)``;
* unknown fields: structural pruning under strict field validation
  (``pkg/apiserver/schema/pruning/algorithm.go``, ``customresource_handler.go``):
  ``strict decoding error: unknown field "<path>"``;
* list-type map/set duplicates: ``pkg/apiserver/schema/listtype/validation.go``: only the second
  occurrence of a key is reported, with the key as a map (``{"name":"x"}``) as current apimachinery
  renders non-scalar bad values with ``json.Marshal``.

Paths in kube-openapi messages join every key with "." (``limits.nvidia.com/gpu``) and put indices in
brackets. Findings come in document order; the validator never stops at the first error.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Final

from jobsetctl.admission.schema_formats import format_ok, go_float
from jobsetctl.admission.schema_hints import unknown_field_hint
from jobsetctl.admission.schema_node import (
    ARRAY,
    BOOLEAN,
    INTEGER,
    JSON_TYPE_OF,
    NULL,
    NUMBER,
    OBJECT,
    STRING,
    SchemaNode,
)
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
from jobsetctl.diagnostics import Finding
from jobsetctl.kube.field import (
    ErrorType,
    Path,
    field_error,
    go_quote,
    invalid,
    not_supported,
    required,
    too_many,
)
from jobsetctl.kube.quantity import QUANTITY_ERROR, is_quantity
from jobsetctl.kube.versions import KubeVersion

_BIT: Final[dict[type, int]] = {
    dict: OBJECT,
    list: ARRAY,
    str: STRING,
    int: INTEGER,
    float: NUMBER,
    bool: BOOLEAN,
    type(None): NULL,
}


#: A path while walking: ``()`` at the root, else ``(parent, key)``; linked, so descending costs one
#: small tuple instead of copying the whole path. :func:`segments` turns it into a field path.
Walk = tuple[Any, ...]


class Run:
    """One validation: where findings go, and what messages need beyond the node (the root)."""

    __slots__ = ("native", "out", "root", "version")

    def __init__(self, root: SchemaNode, native: bool, version: KubeVersion | None = None) -> None:
        self.root = root
        self.native = native
        self.version = version
        self.out: list[Finding] = []


def validate(
    root: SchemaNode, obj: Any, *, native: bool = False, version: KubeVersion | None = None
) -> list[Finding]:
    """Every schema finding for ``obj``, in document order (``version`` only improves hints)."""
    run = Run(root, native, version)
    t = type(obj)
    if t in root.fast:
        return run.out
    if t is dict and root.walk_object:
        _object(root, obj, (), run)
    else:
        _value(root, obj, (), run)
    return run.out


def segments(walk: Walk) -> Path:
    out: list[str | int] = []
    while walk:
        walk, key = walk
        out.append(key)
    out.reverse()
    return tuple(out)


def kube_path(path: Path) -> str:
    """kube-openapi's rendering of a path: ``spec.replicatedJobs[0].template``, keys always dotted."""
    out: list[str] = []
    for seg in path:
        if isinstance(seg, int):
            out.append(f"[{seg}]")
        elif out:
            out.append("." + seg)
        else:
            out.append(seg)
    return "".join(out)


def _where(walk: Walk) -> tuple[Path, str]:
    path = segments(walk)
    return path, kube_path(path)


# --- the walk ---------------------------------------------------------------------------------------


def _value(node: SchemaNode, value: Any, walk: Walk, run: Run) -> None:
    t = type(value)
    mask = node.type_mask
    if mask and not (_BIT.get(t, 0) & mask):
        # kube-openapi takes a float64 for an integer only within ±(2^53 - 1) (swag.IsFloat64AJSONInteger):
        # 1e30, or an integer beyond int64 (which the decoder makes a float64), is a "number".
        integral_float = t is float and mask & INTEGER and value.is_integer() and abs(value) <= _MAX_JSON_INTEGER
        if not integral_float and not (value is None and node.nullable):
            _type_error(node, value, walk, run)
            # kube-openapi runs the other validators after a type failure; only enum and the
            # composite keywords can still fire for a value of the wrong kind.
            if node.enum is not None:
                _enum(node, value, walk, run)
            if node.any_of or node.one_of or node.all_of:
                _composite(node, value, walk, run)
            return
    if value is None:
        return
    if t is dict:
        _object(node, value, walk, run)
    elif t is list:
        _array(node, value, walk, run)
    if node.scalar_checks:
        _checks(node, value, t, walk, run)


def _object(node: SchemaNode, obj: dict[str, Any], walk: Walk, run: Run) -> None:
    props = node.properties
    extra = node.extra
    is_open = node.open
    for key, value in obj.items():
        child = props.get(key)
        if child is None:
            if extra is not None:
                child = extra
            elif is_open:
                continue
            else:
                _unknown(node, (walk, key), run)
                continue
        t = type(value)
        if t in child.fast:
            continue
        if t is dict and child.walk_object:
            _object(child, value, (walk, key), run)
        elif t is list and child.walk_array:
            _array(child, value, (walk, key), run)
        else:
            _value(child, value, (walk, key), run)
    if node.required:
        for name in node.required:
            if name not in obj:
                path, _ = _where(walk)
                where = kube_path((*path, name))
                run.out.append(REQUIRED.finding(required(where), path=where, at=path))
    if node.min_properties is not None or node.max_properties is not None:
        _property_count(node, len(obj), walk, run)


def _array(node: SchemaNode, arr: list[Any], walk: Walk, run: Run) -> None:
    items = node.items
    if items is not None:
        fast = items.fast
        walk_object = items.walk_object
        for index, value in enumerate(arr):
            t = type(value)
            if t in fast:
                continue
            if t is dict and walk_object:
                _object(items, value, (walk, index), run)
            else:
                _value(items, value, (walk, index), run)
    size = len(arr)
    if node.min_items is not None and size < node.min_items:
        path, where = _where(walk)
        message = invalid(where, size, f"{where} in body should have at least {node.min_items} items")
        run.out.append(ITEMS.finding(message, path=where, at=path))
    if node.max_items is not None and size > node.max_items:
        path, where = _where(walk)
        run.out.append(ITEMS.finding(too_many(where, size, node.max_items), path=where, at=path))
    if node.unique and size > 1:
        _unique(node, arr, walk, run)


def _checks(node: SchemaNode, value: Any, t: type, walk: Walk, run: Run) -> None:
    """Scalar constraints, in kube-openapi's validator order: composite, string, format, number, enum."""
    if node.any_of or node.one_of or node.all_of:
        _composite(node, value, walk, run)
    if t is str:
        _string(node, value, walk, run)
        if node.checked_format:
            _format(node, value, walk, run)
        if node.quantity and not is_quantity(value):
            path, where = _where(walk)
            run.out.append(PATTERN.finding(invalid(where, value, QUANTITY_ERROR), path=where, at=path))
    elif t is int or t is float:
        if node.minimum is not None or node.maximum is not None:
            _range(node, value, walk, run)
        if run.native and node.checked_format in ("int32", "int64") and t is int:
            _int_range(node, value, walk, run)
    if node.enum is not None:
        _enum(node, value, walk, run)


# --- individual checks --------------------------------------------------------------------------------


def _type_error(node: SchemaNode, value: Any, walk: Walk, run: Run) -> None:
    path, where = _where(walk)
    given = JSON_TYPE_OF.get(type(value), "object")
    detail = f"{where} in body must be of type {node.type_label}: {go_quote(given)}"
    message = field_error(ErrorType.TYPE_INVALID, where, given, detail)
    run.out.append(TYPE.finding(message, path=where, at=path, hint=_int_or_string_hint(node, value)))


def _int_or_string_hint(node: SchemaNode, value: Any) -> str | None:
    if not node.int_or_string or type(value) is not float:
        return None
    return (
        f"a custom resource takes an int-or-string here (a quantity, a port), not a fraction: "
        f'quote it ("{value!r}") or use a suffix such as "{value * 1000:g}m"'
    )


def _unknown(node: SchemaNode, walk: Walk, run: Run) -> None:
    path, where = _where(walk)
    message = f'strict decoding error: unknown field "{where}"'
    hint = unknown_field_hint(node, path, run.version)
    run.out.append(UNKNOWN_FIELD.finding(message, path=where, at=path, hint=hint))


def _string(node: SchemaNode, value: str, walk: Walk, run: Run) -> None:
    # kube-openapi's stringValidator stops at its first failure: maxLength, minLength, pattern.
    if node.max_length is not None and len(value) > node.max_length:
        path, where = _where(walk)
        run.out.append(LENGTH.finding(_too_long(where, node.max_length), path=where, at=path))
        return
    if node.min_length is not None and len(value) < node.min_length:
        path, where = _where(walk)
        detail = f"{where} in body should be at least {node.min_length} chars long"
        run.out.append(LENGTH.finding(invalid(where, value, detail), path=where, at=path))
        return
    if node.pattern_re is not None and node.pattern_re.search(value) is None:
        path, where = _where(walk)
        detail = f"{where} in body should match '{node.pattern}'"
        run.out.append(PATTERN.finding(invalid(where, value, detail), path=where, at=path))


def _range(node: SchemaNode, value: int | float, walk: Walk, run: Run) -> None:
    # kube-openapi compares an integer against int64(bound) (truncating a fractional bound) and prints
    # the bound as that integer; a float is compared and printed as a float64 (%v).
    is_int = type(value) is int
    if node.minimum is not None:
        bound: int | float = int(node.minimum) if is_int else float(node.minimum)
        low = value <= bound if node.exclusive_minimum else value < bound
        if low:
            word = "greater than" if node.exclusive_minimum else "greater than or equal to"
            _range_error(value, bound, word, walk, run)
    if node.maximum is not None:
        bound = int(node.maximum) if is_int else float(node.maximum)
        high = value >= bound if node.exclusive_maximum else value > bound
        if high:
            word = "less than" if node.exclusive_maximum else "less than or equal to"
            _range_error(value, bound, word, walk, run)


def _range_error(value: int | float, bound: int | float, word: str, walk: Walk, run: Run) -> None:
    path, where = _where(walk)
    shown = go_float(bound) if isinstance(bound, float) else str(bound)
    message = invalid(where, value, f"{where} in body should be {word} {shown}")
    run.out.append(RANGE.finding(message, path=where, at=path))


_MAX_JSON_INTEGER: Final = 2**53 - 1
_INT_BOUNDS: Final = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def _int_range(node: SchemaNode, value: int, walk: Walk, run: Run) -> None:
    low, high = _INT_BOUNDS[node.checked_format]
    if low <= value <= high:
        return
    # A built-in kind's JSON decoder (encoding/json's UnmarshalTypeError): "Go struct field" names the
    # struct that holds the field and the JSON path from the root without indices. Unsure: the exact
    # struct/field text depends on the Go version sigs.k8s.io/json was forked from.
    path, where = _where(walk)
    struct = _struct_name(run.root, path)
    fields = ".".join(seg for seg in path if isinstance(seg, str))
    message = (
        f"json: cannot unmarshal number {value} into Go struct field {struct}.{fields} "
        f"of type {node.checked_format}"
    )
    run.out.append(FORMAT.finding(message, path=where, at=path))


def _struct_name(root: SchemaNode, path: Path) -> str:
    node: SchemaNode | None = root
    holder = root.ref
    for seg in path[:-1]:
        if node is None:
            break
        if isinstance(seg, int):
            node = node.items
        else:
            child = node.properties.get(seg)
            node = child if child is not None else (
                node.additional if isinstance(node.additional, SchemaNode) else None
            )
        if node is not None and node.ref:
            holder = node.ref
    return holder.rsplit(".", 1)[-1] if holder else "Object"


def _enum(node: SchemaNode, value: Any, walk: Walk, run: Run) -> None:
    enum = node.enum or ()
    if any(_enum_equal(value, allowed) for allowed in enum):
        return
    path, where = _where(walk)
    allowed_text = [a if isinstance(a, str) else json.dumps(a, separators=(",", ":")) for a in enum]
    run.out.append(ENUM.finding(not_supported(where, value, allowed_text), path=where, at=path))


def _enum_equal(value: Any, allowed: Any) -> bool:
    """kube-openapi's enum test: convert the value to the enum value's Go type, then compare."""
    if isinstance(allowed, bool) or isinstance(value, bool):
        return type(allowed) is type(value) and value == allowed
    if isinstance(allowed, str):
        if type(value) is int:
            # Go converts an integer to the string of that code point (reflect ConvertibleTo).
            return 0 <= value <= 0x10FFFF and chr(value) == allowed
        return type(value) is str and value == allowed
    if isinstance(allowed, int | float) and type(value) in (int, float):
        return bool(value == allowed)
    return bool(value == allowed) and type(value) is type(allowed)


def _property_count(node: SchemaNode, count: int, walk: Walk, run: Run) -> None:
    path, where = _where(walk)
    if node.min_properties is not None and count < node.min_properties:
        detail = f"{where} in body should have at least {node.min_properties} properties"
        run.out.append(PROPERTIES.finding(invalid(where, count, detail), path=where, at=path))
    if node.max_properties is not None and count > node.max_properties:
        run.out.append(PROPERTIES.finding(too_many(where, count, node.max_properties), path=where, at=path))


def _too_long(where: str, limit: int) -> str:
    # apimachinery field.TooLong says "byte" for a limit of 1 (the shared too_long always says "bytes").
    noun = "byte" if limit == 1 else "bytes"
    return field_error(ErrorType.TOO_LONG, where, detail=f"may not be more than {limit} {noun}")


def _composite(node: SchemaNode, value: Any, walk: Walk, run: Run) -> None:
    if node.any_of:
        failures = _branch_failures(node.any_of, value, walk, run)
        if failures is not None:
            path, where = _where(walk)
            text = f"{go_quote(where)} must validate at least one schema (anyOf)"
            finding = _nil_error(text, failures, path)
            hint = _int_or_string_hint(node, value)
            run.out.append(replace(finding, hint=hint) if hint else finding)
            run.out.extend(failures)
    if node.one_of:
        results = [_branch(b, value, walk, run) for b in node.one_of]
        valid = sum(1 for r in results if not r)
        if valid != 1:
            path, where = _where(walk)
            extra = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
            best = next((r for r in results if r), [])
            text = f"{go_quote(where)} must validate one and only one schema (oneOf). {extra}"
            run.out.append(_nil_error(text, best, path))
            if valid == 0:
                run.out.extend(best)
    if node.all_of:
        results = [_branch(b, value, walk, run) for b in node.all_of]
        for r in results:
            run.out.extend(r)
        valid = sum(1 for r in results if not r)
        if valid != len(results):
            path, where = _where(walk)
            suffix = ". None validated" if valid == 0 else ""
            run.out.append(_nil_error(f"{go_quote(where)} must validate all the schemas (allOf){suffix}",
                                      [f for r in results for f in r], path))


def _branch(branch: SchemaNode, value: Any, walk: Walk, run: Run) -> list[Finding]:
    if type(value) in branch.fast:
        return []
    sub = Run(run.root, run.native, run.version)
    _value(branch, value, walk, sub)
    return sub.out


def _branch_failures(
    branches: tuple[SchemaNode, ...], value: Any, walk: Walk, run: Run
) -> list[Finding] | None:
    """None when a branch accepts the value, else the failures of the first branch (kube-openapi keeps
    the failures of the branch with most passing checks; with bare type branches that is the first)."""
    t = type(value)
    if any(t in branch.fast for branch in branches):
        return None
    first: list[Finding] | None = None
    for branch in branches:
        failures = _branch(branch, value, walk, run)
        if not failures:
            return None
        if first is None:
            first = failures
    return first or []


def _nil_error(detail: str, failures: list[Finding], at: Path) -> Finding:
    rule = failures[0].rule if failures else TYPE
    return rule.finding(invalid("<nil>", "", detail), path="<nil>", at=at)


_UNSPECIFIED: Final = ("unspecified",)


def _unique(node: SchemaNode, arr: list[Any], walk: Walk, run: Run) -> None:
    names = node.list_map_keys
    tokens: list[Any] = []
    if node.unique == "set":
        tokens = [_set_token(item) for item in arr]
    else:
        for item in arr:
            if item is not None and type(item) is not dict:
                return  # upstream: "must be an object for an array of list-type map" (a type error already)
            if len(names) == 1:
                if item is not None and names[0] in item:
                    tokens.append(_set_token(item[names[0]]))
                else:
                    tokens.append(_UNSPECIFIED)
            else:
                tokens.append(_set_token(_map_key(item, names)))
    seen: dict[Any, int] = {}
    for index, token in enumerate(tokens):
        times = seen.get(token, 0)
        seen[token] = times + 1
        if times == 1:
            item = arr[index]
            if node.unique == "set":
                key: Any = item
            elif len(names) == 1:
                key = {names[0]: item[names[0]]} if token is not _UNSPECIFIED else {}
            else:
                key = _map_key(item, names)
            path = (*segments(walk), index)
            where = kube_path(path)
            message = field_error(ErrorType.DUPLICATE, where, key)
            run.out.append(DUPLICATE.finding(message, path=where, at=path))


def _map_key(item: dict[str, Any] | None, names: tuple[str, ...]) -> dict[str, Any]:
    return {} if item is None else {k: item[k] for k in names if k in item}


def _set_token(value: Any) -> Any:
    # Go compares scalars as interface values (type and value) and compounds by their JSON encoding.
    t = type(value)
    if t is dict or t is list:
        return ("json", json.dumps(value, sort_keys=True, separators=(",", ":")))
    return (t, value)


def _format(node: SchemaNode, value: str, walk: Walk, run: Run) -> None:
    fmt = node.checked_format
    if fmt in ("int32", "int64") or format_ok(fmt, value):
        return
    path, where = _where(walk)
    detail = f"{where} in body must be of type {fmt}: {go_quote(value)}"
    message = field_error(ErrorType.TYPE_INVALID, where, value, detail)
    run.out.append(FORMAT.finding(message, path=where, at=path))
