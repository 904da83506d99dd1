"""Field paths and field errors rendered the way Kubernetes' apimachinery ``field`` package renders them.

Every message jobsetctl reports for an upstream rule is built here, so the wording of
``<path>: <Type>: <value>: <detail>`` lives in one place (jobset.md §2.1, trainer.md §2.1).
"""

from __future__ import annotations

import json
import re
from enum import StrEnum
from typing import Any, Final

#: A location inside an object: mapping keys and list indices, outermost first.
Path = tuple[str | int, ...]

_SEGMENT = re.compile(r"\.?([^.\[\]]+)|\[(\d+)\]|\[([^\]]*)\]")


def path_string(path: Path) -> str:
    """Render ``("spec", "replicatedJobs", 0, "name")`` as ``spec.replicatedJobs[0].name``.

    Map keys that are not identifiers (labels, annotations) render as ``[key]``, as apimachinery's
    ``Path.Key`` does: ``metadata.labels[app.kubernetes.io/name]``.
    """
    out: list[str] = []
    for seg in path:
        if isinstance(seg, int) or (out and not _is_identifier(seg)):
            out.append(f"[{seg}]")
        else:
            out.append(("." if out else "") + seg)
    return "".join(out)


def _is_identifier(seg: str) -> bool:
    return bool(seg) and all(c.isalnum() or c == "_" for c in seg)


def parse_path(text: str) -> Path:
    """Inverse of :func:`path_string` for the forms it produces (used to point at upstream paths)."""
    segs: list[str | int] = []
    for m in _SEGMENT.finditer(text):
        name, index, key = m.groups()
        if name is not None:
            segs.append(name)
        elif index is not None:
            segs.append(int(index))
        elif key is not None:
            segs.append(key)
    return tuple(segs)


class ErrorType(StrEnum):
    """apimachinery ``field.ErrorType`` strings."""

    NOT_FOUND = "Not found"
    REQUIRED = "Required value"
    DUPLICATE = "Duplicate value"
    INVALID = "Invalid value"
    NOT_SUPPORTED = "Unsupported value"
    FORBIDDEN = "Forbidden"
    TOO_LONG = "Too long"
    TOO_MANY = "Too many"
    INTERNAL = "Internal error"
    TYPE_INVALID = "Invalid value"


class _Omit:
    def __repr__(self) -> str:
        return "OMIT"


#: Marker for "no bad value": the error body is just the type (apimachinery ``omitValue``).
OMIT: Final = _Omit()

# Types whose body never shows the value, whatever is passed (apimachinery ``ErrorBody``).
_VALUELESS = {ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.TOO_LONG, ErrorType.INTERNAL}


def go_quote(text: str) -> str:
    """Go's ``%q`` / ``strconv.Quote`` for the characters manifests contain."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif not ch.isprintable():
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def go_value(value: Any) -> str:
    """Render a bad value as apimachinery does: strings quoted, numbers and booleans bare, nil as ``"null"``.

    Struct values are printed by Go with ``%#v``; we cannot reproduce Go syntax for them, so they
    are rendered as compact JSON (trainer.md §2.1 says to compare type, path and detail only).
    """
    if value is None:
        return '"null"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value) if isinstance(value, float) else str(value)
    if isinstance(value, str):
        return go_quote(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)


def field_error(kind: ErrorType, path: str | Path, value: Any = OMIT, detail: str = "") -> str:
    """``<path>: <Type>[: <value>][: <detail>]``, apimachinery ``field.Error.Error()``."""
    where = path if isinstance(path, str) else path_string(path)
    if kind in _VALUELESS or value is OMIT:
        body = str(kind)
    else:
        body = f"{kind}: {go_value(value)}"
    if detail:
        body += f": {detail}"
    return f"{where}: {body}" if where else body


def invalid(path: str | Path, value: Any, detail: str) -> str:
    return field_error(ErrorType.INVALID, path, value, detail)


def required(path: str | Path, detail: str = "") -> str:
    return field_error(ErrorType.REQUIRED, path, OMIT, detail)


def forbidden(path: str | Path, detail: str) -> str:
    return field_error(ErrorType.FORBIDDEN, path, OMIT, detail)


def not_supported(path: str | Path, value: Any, supported: list[str]) -> str:
    detail = "supported values: " + ", ".join(go_quote(s) for s in supported)
    return field_error(ErrorType.NOT_SUPPORTED, path, value, detail)


def too_long(path: str | Path, limit: int) -> str:
    return field_error(ErrorType.TOO_LONG, path, OMIT, f"may not be more than {limit} bytes")


def too_many(path: str | Path, actual: int, limit: int) -> str:
    # apimachinery pluralises the noun ("at most 1 item", "at most 5 items").
    noun = "item" if limit == 1 else "items"
    return field_error(ErrorType.TOO_MANY, path, actual, f"must have at most {limit} {noun}")


def duplicate(path: str | Path, value: Any) -> str:
    return field_error(ErrorType.DUPLICATE, path, value)


def internal(detail: str) -> str:
    """A plain (non-field) webhook error: wrapped with a nil path (jobset.md §2.1)."""
    return field_error(ErrorType.INTERNAL, "<nil>", OMIT, detail)


def invalid_status(group: str, kind: str, name: str, causes: list[str]) -> str:
    """The message of an ``Invalid`` (422) status, as a Go client's ``err.Error()`` reads it:
    ``<Kind>.<group> "<name>" is invalid: <cause>`` (several causes as ``[c1, c2]``)."""
    qualified = f"{kind}.{group}" if group else kind
    joined = causes[0] if len(causes) == 1 else "[" + ", ".join(causes) + "]"
    return f'{qualified} "{name}" is invalid: {joined}'
