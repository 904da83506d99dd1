"""CEL functions our compiler evaluates natively (the standard library subset CRD rules use).

``matches`` has RE2 semantics, as Go's ``regexp`` (which cel-go uses) does: we use the ``re2``
module (google-re2, which cel-python itself depends on). If it is missing we fall back to Python's
``re`` after a small translation; the differences then are Python's backtracking (no linear-time
guarantee) and a few escapes RE2 lacks or spells differently, listed in :func:`_python_pattern`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, Final

from jobsetctl.admission.cel_time import parse_duration, parse_timestamp
from jobsetctl.admission.cel_values import (
    TYPES,
    CelError,
    NoSuchOverload,
    Optional,
    size,
    to_bool,
    to_bytes,
    to_double,
    to_int,
    to_string,
    to_uint,
    type_name,
)
from jobsetctl.admission.regex_dialect import re2_to_python


@functools.cache
def _re2_module() -> Any:
    """google-re2, or None; imported on the first pattern (loading it costs ~4 ms a run that has none)."""
    try:  # pragma: no branch - google-re2 ships with cel-python
        import re2
    except ImportError:  # pragma: no cover
        return None
    return re2


#: Patterns compiled at run time (a pattern taken from the object) are cached, bounded.
_RUNTIME_PATTERN_CACHE: Final = 512


class RegexError(CelError):
    pass


@functools.lru_cache(maxsize=_RUNTIME_PATTERN_CACHE)
def compile_regex(pattern: str) -> Callable[[str], Any]:
    """A ``search`` function for an RE2 pattern; raises :class:`RegexError` for a bad pattern."""
    _re2 = _re2_module()
    if _re2 is not None:
        options = _re2.Options()
        options.log_errors = False  # the error is reported as a CEL error, not on stderr
        try:
            return _re2.compile(pattern, options).search
        except Exception as exc:  # re2 raises its own error type
            raise RegexError(f"error parsing regexp: {_re2_reason(exc)}") from exc
    try:
        return re.compile(_python_pattern(pattern)).search
    except re.error as exc:
        raise RegexError(f"error parsing regexp: {exc}") from exc


def _re2_reason(exc: Exception) -> str:
    detail = exc.args[0] if exc.args else str(exc)
    return detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)


def _python_pattern(pattern: str) -> str:
    """RE2 → Python ``re`` (:func:`~jobsetctl.admission.regex_dialect.re2_to_python`: ``\\z`` and a
    bare ``$`` are end of text); ``(?P<n>`` is shared; POSIX classes ``[[:alpha:]]`` and ``\\pL`` have
    no Python equivalent and fail to compile (reported as a regex error)."""
    return re2_to_python(pattern)


def matches(text: Any, pattern: Any) -> bool:
    if type(text) is not str or type(pattern) is not str:
        raise NoSuchOverload()
    return compile_regex(pattern)(text) is not None


def starts_with(text: Any, prefix: Any) -> bool:
    if type(text) is not str or type(prefix) is not str:
        raise NoSuchOverload()
    return text.startswith(prefix)


def ends_with(text: Any, suffix: Any) -> bool:
    if type(text) is not str or type(suffix) is not str:
        raise NoSuchOverload()
    return text.endswith(suffix)


def contains(text: Any, part: Any) -> bool:
    if type(text) is not str or type(part) is not str:
        raise NoSuchOverload()
    return part in text


def cel_type(value: Any) -> Any:
    return TYPES.get(type_name(value)) or TYPES["type"]


def dyn(value: Any) -> Any:
    return value


def timestamp(value: Any) -> Any:
    from datetime import datetime

    if type(value) is datetime:
        return value
    if type(value) is str:
        return parse_timestamp(value)
    raise NoSuchOverload()


def duration(value: Any) -> Any:
    from datetime import timedelta

    if type(value) is timedelta:
        return value
    if type(value) is str:
        return parse_duration(value)
    raise NoSuchOverload()


# Kubernetes' string extension library (cel-go ``ext.Strings``), the functions that need no locale.

def lower_ascii(text: Any) -> str:
    if type(text) is not str:
        raise NoSuchOverload()
    return "".join(c.lower() if c.isascii() else c for c in text)


def upper_ascii(text: Any) -> str:
    if type(text) is not str:
        raise NoSuchOverload()
    return "".join(c.upper() if c.isascii() else c for c in text)


def trim(text: Any) -> str:
    if type(text) is not str:
        raise NoSuchOverload()
    return text.strip()


def split(text: Any, separator: Any) -> list[str]:
    if type(text) is not str or type(separator) is not str:
        raise NoSuchOverload()
    if separator == "":
        return list(text)
    return text.split(separator)


def join(items: Any, separator: Any = "") -> str:
    if type(items) is not list or type(separator) is not str or any(type(i) is not str for i in items):
        raise NoSuchOverload()
    return separator.join(items)


def index_of(text: Any, part: Any) -> int:
    if type(text) is not str or type(part) is not str:
        raise NoSuchOverload()
    return text.find(part)


def last_index_of(text: Any, part: Any) -> int:
    if type(text) is not str or type(part) is not str:
        raise NoSuchOverload()
    return text.rfind(part)


def replace(text: Any, old: Any, new: Any) -> str:
    if type(text) is not str or type(old) is not str or type(new) is not str:
        raise NoSuchOverload()
    return text.replace(old, new)


def optional_of(value: Any) -> Optional:
    return Optional(True, value)


def optional_of_non_zero(value: Any) -> Optional:
    """``optional.ofNonZeroValue``: none for the zero value of the type."""
    kind = type(value)
    if value is None or value is False:
        zero = True
    elif kind in (str, bytes, list, dict):
        zero = len(value) == 0
    elif kind is not bool and isinstance(value, int | float):
        zero = value == 0
    else:
        zero = False
    return Optional(False) if zero else Optional(True, value)


def has_value(target: Any) -> bool:
    if type(target) is not Optional:
        raise NoSuchOverload()
    return target.has


def value_of(target: Any) -> Any:
    if type(target) is not Optional:
        raise NoSuchOverload()
    if not target.has:
        raise CelError("optional.none() dereference")
    return target.value


#: Global functions: name -> (argument counts, implementation).
GLOBAL_FUNCTIONS: Final[dict[str, tuple[tuple[int, ...], Callable[..., Any]]]] = {
    "size": ((1,), size),
    "int": ((1,), to_int),
    "uint": ((1,), to_uint),
    "double": ((1,), to_double),
    "string": ((1,), to_string),
    "bytes": ((1,), to_bytes),
    "bool": ((1,), to_bool),
    "dyn": ((1,), dyn),
    "type": ((1,), cel_type),
    "matches": ((2,), matches),
    "timestamp": ((1,), timestamp),
    "duration": ((1,), duration),
}

#: Member functions: name -> (argument counts besides the target, implementation(target, *args)).
MEMBER_FUNCTIONS: Final[dict[str, tuple[tuple[int, ...], Callable[..., Any]]]] = {
    "size": ((0,), size),
    "matches": ((1,), matches),
    "startsWith": ((1,), starts_with),
    "endsWith": ((1,), ends_with),
    "contains": ((1,), contains),
    "lowerAscii": ((0,), lower_ascii),
    "upperAscii": ((0,), upper_ascii),
    "trim": ((0,), trim),
    "split": ((1,), split),
    "join": ((0, 1), join),
    "indexOf": ((1,), index_of),
    "lastIndexOf": ((1,), last_index_of),
    "replace": ((2,), replace),
    "hasValue": ((0,), has_value),
    "value": ((0,), value_of),
}

#: Functions whose work grows with their string argument (cost: one unit per ten characters, as cel-go
#: charges string traversal).
TRAVERSING: Final = frozenset({"matches", "startsWith", "endsWith", "contains", "lowerAscii", "upperAscii",
                                "trim", "split", "indexOf", "lastIndexOf", "replace"})
