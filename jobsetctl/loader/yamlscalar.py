"""Kubernetes' reading of YAML scalars: go-yaml v2's YAML 1.1 rules, as sigs.k8s.io/yaml hands them to JSON.

``y``/``n``/``yes``/``no``/``on``/``off`` are booleans, ``012`` is octal, ``1_000`` is 1000, sexagesimal
``1:20`` stays a string, timestamps stay the text the user wrote (see :mod:`jobsetctl.loader.yamlload`).
"""

from __future__ import annotations

import math
import re
from typing import Any

# go-yaml v2 resolve table (resolve.go): the YAML 1.1 booleans and nulls Kubernetes accepts.
_BOOL_TRUE = {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"}
_BOOL_FALSE = {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"}
_NULLS = {"", "~", "null", "Null", "NULL"}
_INFS = {".inf": math.inf, ".Inf": math.inf, ".INF": math.inf, "+.inf": math.inf, "+.Inf": math.inf,
         "+.INF": math.inf, "-.inf": -math.inf, "-.Inf": -math.inf, "-.INF": -math.inf}
_NANS = {".nan", ".NaN", ".NAN"}
_INT_RE = re.compile(r"[-+]?(0b[01_]+|0x[0-9a-fA-F_]+|0o?[0-7_]+|[0-9][0-9_]*)")
_FLOAT_RE = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")

_plain_cache: dict[str, Any] = {}


def resolve_plain(text: str) -> Any:
    """The value go-yaml v2 gives a plain (unquoted) scalar, as sigs.k8s.io/yaml hands it to JSON."""
    try:
        return _plain_cache[text]
    except KeyError:
        pass
    value = _resolve_plain(text)
    if len(_plain_cache) < 50_000:
        _plain_cache[text] = value
    return value


def _resolve_plain(text: str) -> Any:
    if text in _NULLS:
        return None
    if text in _BOOL_TRUE:
        return True
    if text in _BOOL_FALSE:
        return False
    first = text[0]
    if first in "+-.0123456789":
        if _INT_RE.fullmatch(text):
            digits = text.replace("_", "")
            sign = -1 if digits[0] == "-" else 1
            body = digits.lstrip("+-")
            try:
                if body.startswith(("0b", "0B")):
                    return _fits_int64(sign * int(body[2:], 2), text)
                if body.startswith(("0x", "0X")):
                    return _fits_int64(sign * int(body[2:], 16), text)
                if body.startswith(("0o", "0O")):
                    return _fits_int64(sign * int(body[2:], 8), text)
                if len(body) > 1 and body[0] == "0":
                    return _fits_int64(sign * int(body, 8), text)
                value = sign * int(body)
                if _INT64_MIN <= value <= _INT64_MAX:
                    return value
                # Beyond int64 Go parses the digits as a float64 (strconv.ParseFloat), below.
            except ValueError:
                pass  # "08": not octal; go-yaml then tries it as a float
        if _FLOAT_RE.fullmatch(text.replace("_", "")):
            number = float(text.replace("_", ""))
            if math.isinf(number):
                return text  # strconv.ParseFloat fails with ErrRange ("1e400"): go-yaml keeps the string
            # Go's JSON encoder prints an integral float64 without a fraction, so the API server sees an integer.
            if number.is_integer() and abs(number) < 2**53:
                return int(number)
            return number
        if text in _INFS:
            return _INFS[text]
        if text in _NANS:
            return math.nan
    return text


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _fits_int64(value: int, text: str) -> int | float | str:
    """What reaches the API server for a hex, octal or binary integer: itself within int64; beyond, go-yaml
    finds no int and strconv.ParseFloat rejects the prefix, so the text stays a string. (Values between
    2^63 and 2^64 decode as uint64 in go-yaml and reach the API server as a float64.)"""
    if _INT64_MIN <= value <= _INT64_MAX:
        return value
    if 0 < value < 2**64:
        return float(value)
    return text


#: Plain scalars that YAML 1.1 does not read as the string a user usually means (issue #6, "Norway").
def yaml11_surprise(text: str) -> str | None:
    """A hint for a plain scalar whose YAML 1.1 reading is probably not what was meant, else None."""
    if text in _BOOL_TRUE or text in _BOOL_FALSE:
        if text.lower() not in ("true", "false"):
            return f'YAML 1.1 reads the unquoted {text} as a boolean; quote it ("{text}") if a string is meant'
        return None
    value = resolve_plain(text)
    if isinstance(value, int) and not isinstance(value, bool) and str(value) != text.lstrip("+"):
        return f'YAML 1.1 reads the unquoted {text} as the number {value}; quote it ("{text}") if a string is meant'
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f'the unquoted {text} is a number; quote it ("{text}") if a string is meant'
    return None

def key_string(value: Any) -> str:
    """sigs.k8s.io/yaml turns non-string mapping keys into strings when converting to JSON."""
    if isinstance(value, str):
        return value
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    return str(value)

def _explicit(tag: str, text: str) -> Any:
    kind = tag.rsplit(":", 1)[-1]
    if kind == "null":
        return None
    if kind == "bool":
        return text in _BOOL_TRUE
    if kind in ("int", "float"):
        value = resolve_plain(text)
        return value if isinstance(value, int | float) and not isinstance(value, bool) else text
    return text  # timestamps: the text as written (see module docstring)

