"""CEL runtime values and operators, with cel-go's semantics (the library the API server embeds).

Values are plain Python data so that manifests need no conversion on the hot path:

=============  =====================================================================
CEL type       Python
=============  =====================================================================
bool           ``bool``
int            ``int`` (never a ``bool``; always checked with ``type(x) is int``)
uint           :class:`Uint` (an ``int`` subclass)
double         ``float``
string         ``str``
bytes          ``bytes``
null           ``None``
list           ``list``
map            ``dict``
timestamp      ``datetime.datetime`` (aware, UTC; microsecond precision: :mod:`.cel_time`)
duration       ``datetime.timedelta``
optional       :class:`Optional`
type           :class:`CelType`
=============  =====================================================================

Errors are CEL values, not exceptions escaping to the user: evaluation raises :class:`CelError`
internally and the logical operators and ``all``/``exists`` absorb it where CEL says the other
operand decides. :class:`CostExceeded` is deliberately *not* a :class:`CelError`: like cel-go's
cancellation panic it must never be absorbed.

Error texts are cel-go's (``common/types/err.go``, ``overflow.go``) and Kubernetes' for values that
come from objects (``k8s.io/apiserver/pkg/cel/common/values.go``: ``no such key: x``,
``index out of bounds: 3``).

Timestamps and durations are in :mod:`.cel_time`.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta
from typing import Any, Final

INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1
UINT64_MAX: Final = 2**64 - 1


class CelError(Exception):
    """A CEL error value (``types.Err``); ``str(err)`` is the text the API server prints."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class NoSuchOverload(CelError):
    """An operator or function applied to arguments it has no overload for."""

    def __init__(self, detail: str = "") -> None:
        super().__init__("no such overload" + (f": {detail}" if detail else ""))


class CostExceeded(Exception):
    """The runtime cost limit was reached (cel-go ``EvalCancelledError``); never absorbed."""

    MESSAGE: Final = "operation cancelled: actual cost limit exceeded"

    def __str__(self) -> str:
        return self.MESSAGE


class Uint(int):
    """A CEL ``uint``. Arithmetic on it is done by the operators below, never by ``int``'s."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{int(self)}u"


class CelType:
    """A CEL type value, as ``type(x)`` returns and ``int``, ``string``... name."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CelType) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("CelType", self.name))

    def __repr__(self) -> str:
        return self.name


TYPE_NAMES: Final = ("bool", "int", "uint", "double", "string", "bytes", "list", "map", "null_type", "type")
TYPES: Final = {name: CelType(name) for name in (*TYPE_NAMES, "google.protobuf.Timestamp",
                                                    "google.protobuf.Duration", "optional_type")}


class Optional:
    """``optional(T)``: a value or none (Kubernetes enables CEL optionals for CRD rules)."""

    __slots__ = ("has", "value")

    def __init__(self, has: bool, value: Any = None) -> None:
        self.has = has
        self.value = value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Optional):
            return False
        if not self.has or not other.has:
            return self.has == other.has
        return equal(self.value, other.value)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"optional.of({self.value!r})" if self.has else "optional.none()"


NONE_OPTIONAL: Final = Optional(False)


def type_name(value: Any) -> str:
    """The CEL type name of a runtime value (what ``type(x)`` reports)."""
    kind = type(value)
    if kind is bool:
        return "bool"
    if kind is int:
        return "int"
    if kind is Uint:
        return "uint"
    if kind is float:
        return "double"
    if kind is str:
        return "string"
    if kind is bytes:
        return "bytes"
    if value is None:
        return "null_type"
    if kind is list:
        return "list"
    if kind is dict:
        return "map"
    if kind is datetime:
        return "google.protobuf.Timestamp"
    if kind is timedelta:
        return "google.protobuf.Duration"
    if kind is Optional:
        return "optional_type"
    if kind is CelType:
        return "type"
    return kind.__name__


# ----------------------------------------------------------------------------------------- equality

def _is_number(value: Any) -> bool:
    kind = type(value)
    return kind is int or kind is float or kind is Uint


def equal(left: Any, right: Any) -> bool:
    """CEL heterogeneous equality (cel-spec "Equality"; cel-go ``Equal``).

    Numbers compare by value across int, uint and double; values of different kinds are unequal
    (never an error); NaN equals nothing; lists and maps compare element-wise with this same rule.
    """
    lk = type(left)
    rk = type(right)
    if lk is rk:
        if lk is list:
            if len(left) != len(right):
                return False
            return all(equal(a, b) for a, b in zip(left, right, strict=True))
        if lk is dict:
            return _map_equal(left, right)
        if lk is float:
            return left == right  # NaN != NaN, as in Go
        return bool(left == right)
    if (lk is int or lk is float or lk is Uint) and (rk is int or rk is float or rk is Uint):
        return bool(left == right)  # Python compares int and float exactly, like cel-go
    if lk is Optional and rk is Optional:
        return left == right
    return False


def _map_equal(left: dict[Any, Any], right: dict[Any, Any]) -> bool:
    if len(left) != len(right):
        return False
    for key, value in left.items():
        other = map_lookup(right, key)
        if other is _ABSENT or not equal(value, other):
            return False
    return True


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


#: Marker for "no such key" in lookups (``None`` is CEL null, a real value).
_ABSENT: Final[Any] = _Absent()
ABSENT: Final[Any] = _ABSENT


def map_lookup(mapping: dict[Any, Any], key: Any) -> Any:
    """A map entry by CEL key semantics, or :data:`ABSENT`.

    CEL map keys are int, uint, bool or string; a double key is looked up as the int it equals.
    Python's ``True == 1`` must not make ``{1: x}[true]`` succeed, so bool keys are checked apart.
    """
    kind = type(key)
    if kind is str:
        return mapping.get(key, _ABSENT)
    if kind is bool:
        for stored, value in mapping.items():
            if type(stored) is bool and stored is key:
                return value
        return _ABSENT
    if kind is int or kind is Uint or (kind is float and key.is_integer()):
        for stored, value in mapping.items():
            if type(stored) is not bool and _is_number(stored) and stored == key:
                return value
        return _ABSENT
    raise NoSuchOverload()


# -------------------------------------------------------------------------------------- comparison

def compare(left: Any, right: Any) -> int:
    """-1, 0 or 1 (cel-go ``Compare``): numbers across kinds, strings, bytes, bools, times."""
    lk = type(left)
    rk = type(right)
    if (lk is int or lk is float or lk is Uint) and (rk is int or rk is float or rk is Uint):
        if (lk is float and math.isnan(left)) or (rk is float and math.isnan(right)):
            raise CelError("NaN values cannot be ordered")
        return -1 if left < right else (1 if left > right else 0)
    if lk is rk and lk in (str, bytes, bool, datetime, timedelta):
        return -1 if left < right else (1 if left > right else 0)
    raise NoSuchOverload()


# -------------------------------------------------------------------------------------- arithmetic

def _int_result(value: int) -> int:
    if value < INT64_MIN or value > INT64_MAX:
        raise CelError("integer overflow")
    return value


def _uint_result(value: int) -> Uint:
    if value < 0 or value > UINT64_MAX:
        raise CelError("unsigned integer overflow")
    return Uint(value)


def add(left: Any, right: Any) -> Any:
    lk = type(left)
    if lk is not type(right):
        if lk is datetime and type(right) is timedelta:
            return _time().time_result(left + right)
        if lk is timedelta and type(right) is datetime:
            return _time().time_result(right + left)
        raise NoSuchOverload()
    if lk is int:
        return _int_result(left + right)
    if lk is float:
        return left + right
    if lk is str or lk is bytes:
        return left + right
    if lk is list:
        return left + right
    if lk is Uint:
        return _uint_result(left + right)
    if lk is timedelta:
        return _time().duration_result(left + right)
    raise NoSuchOverload()


def subtract(left: Any, right: Any) -> Any:
    lk = type(left)
    if lk is datetime and type(right) is datetime:
        return _time().duration_result(left - right)
    if lk is datetime and type(right) is timedelta:
        return _time().time_result(left - right)
    if lk is not type(right):
        raise NoSuchOverload()
    if lk is int:
        return _int_result(left - right)
    if lk is float:
        return left - right
    if lk is Uint:
        return _uint_result(left - right)
    if lk is timedelta:
        return _time().duration_result(left - right)
    raise NoSuchOverload()


def multiply(left: Any, right: Any) -> Any:
    lk = type(left)
    if lk is not type(right):
        raise NoSuchOverload()
    if lk is int:
        return _int_result(left * right)
    if lk is float:
        return left * right
    if lk is Uint:
        return _uint_result(left * right)
    raise NoSuchOverload()


def divide(left: Any, right: Any) -> Any:
    lk = type(left)
    if lk is not type(right):
        raise NoSuchOverload()
    if lk is int or lk is Uint:
        if right == 0:
            raise CelError("division by zero")
        quotient = abs(left) // abs(right)  # Go truncates toward zero
        if (left < 0) != (right < 0):
            quotient = -quotient
        return _int_result(quotient) if lk is int else Uint(quotient)
    if lk is float:
        if right == 0.0:
            # IEEE 754, as Go: x/±0 is ±Inf, 0/0 is NaN (Python raises instead).
            if left == 0.0 or math.isnan(left):
                return math.nan
            return math.copysign(math.inf, left) * math.copysign(1.0, right)
        return left / right
    raise NoSuchOverload()


def modulo(left: Any, right: Any) -> Any:
    lk = type(left)
    if lk is not type(right) or lk is float:
        raise NoSuchOverload()
    if lk is int or lk is Uint:
        if right == 0:
            raise CelError("modulus by zero")
        remainder = abs(left) % abs(right)  # Go: the sign follows the dividend
        if left < 0:
            remainder = -remainder
        if lk is int and left == INT64_MIN and right == -1:
            raise CelError("integer overflow")
        return remainder if lk is int else Uint(remainder)
    raise NoSuchOverload()


def negate(value: Any) -> Any:
    kind = type(value)
    if kind is int:
        return _int_result(-value)
    if kind is float:
        return -value
    if kind is timedelta:
        return _time().duration_result(-value)
    raise NoSuchOverload()


def logical_not(value: Any) -> bool:
    if value is True:
        return False
    if value is False:
        return True
    raise NoSuchOverload()


# ------------------------------------------------------------------------------------- conversions

_INT_TEXT = re.compile(r"[+-]?[0-9]+")
_UINT_TEXT = re.compile(r"\+?[0-9]+")
_FLOAT_TEXT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?"
                         r"|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN])")
_BOOL_TEXT: Final = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
                     "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}


def to_int(value: Any) -> int:
    kind = type(value)
    if kind is int:
        return value
    if kind is Uint:
        if value > INT64_MAX:
            raise CelError("integer overflow")
        return int(value)
    if kind is float:
        # cel-go doubleToInt64Checked: the bounds themselves overflow (float64 cannot hold MaxInt64).
        if math.isnan(value) or math.isinf(value) or value <= INT64_MIN or value >= INT64_MAX:
            raise CelError("integer overflow")
        return int(value)  # truncation toward zero
    if kind is str:
        if not _INT_TEXT.fullmatch(value):
            raise CelError(f'strconv.ParseInt: parsing "{value}": invalid syntax')
        number = int(value)
        if number < INT64_MIN or number > INT64_MAX:
            raise CelError(f'strconv.ParseInt: parsing "{value}": value out of range')
        return number
    if kind is datetime:
        return int(value.timestamp() // 1)
    raise NoSuchOverload()


def to_uint(value: Any) -> Uint:
    kind = type(value)
    if kind is Uint:
        return value
    if kind is int:
        if value < 0:
            raise CelError("unsigned integer overflow")
        return Uint(value)
    if kind is float:
        if math.isnan(value) or math.isinf(value) or value < 0 or value >= 2.0**64:
            raise CelError("unsigned integer overflow")
        return Uint(int(value))
    if kind is str:
        if not _UINT_TEXT.fullmatch(value):
            raise CelError(f'strconv.ParseUint: parsing "{value}": invalid syntax')
        number = int(value)
        if number > UINT64_MAX:
            raise CelError(f'strconv.ParseUint: parsing "{value}": value out of range')
        return Uint(number)
    raise NoSuchOverload()


def to_double(value: Any) -> float:
    kind = type(value)
    if kind is float:
        return value
    if kind is int or kind is Uint:
        return float(value)
    if kind is str:
        if not _FLOAT_TEXT.fullmatch(value):
            raise CelError(f'strconv.ParseFloat: parsing "{value}": invalid syntax')
        return float(value)
    raise NoSuchOverload()


def to_string(value: Any) -> str:
    kind = type(value)
    if kind is str:
        return value
    if kind is bool:
        return "true" if value else "false"
    if kind is int or kind is Uint:
        return str(int(value))
    if kind is float:
        return format_double(value)
    if kind is bytes:
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CelError("invalid UTF-8 in bytes, cannot convert to string") from exc
    if kind is datetime:
        return _time().format_timestamp(value)
    if kind is timedelta:
        return _time().format_duration(value)
    raise NoSuchOverload()


def to_bytes(value: Any) -> bytes:
    if type(value) is bytes:
        return value
    if type(value) is str:
        return value.encode("utf-8")
    raise NoSuchOverload()


def to_bool(value: Any) -> bool:
    if type(value) is bool:
        return value
    if type(value) is str:
        if value in _BOOL_TEXT:
            return _BOOL_TEXT[value]
        raise CelError(f'strconv.ParseBool: parsing "{value}": invalid syntax')
    raise NoSuchOverload()


def format_double(value: float) -> str:
    """cel-go's ``string(double)``: Go's ``fmt.Sprintf("%g", v)`` (shortest digits; exponent form
    when the decimal exponent is below -4 or at least 6, with at least two exponent digits)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0.0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign = "-" if value < 0 else ""
    # repr() gives the shortest round-trip digits, as Go's precision -1 does.
    digits, exponent = _shortest_digits(repr(abs(value)))
    exp10 = exponent + len(digits) - 1
    if exp10 < -4 or exp10 >= _G_SHORTEST_EXPONENT_LIMIT:
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{body}e{'-' if exp10 < 0 else '+'}{abs(exp10):02d}"
    point = exp10 + 1  # digits before the decimal point
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{sign}{digits}{'0' * (point - len(digits))}"
    return f"{sign}{digits[:point]}.{digits[point:]}"


def _shortest_digits(text: str) -> tuple[str, int]:
    """``repr`` of a positive finite float as (significant digits, exponent of the last digit)."""
    mantissa, _, exp_text = text.partition("e")
    exponent = int(exp_text) if exp_text else 0
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    exponent -= len(fraction)
    stripped = digits.lstrip("0")
    stripped_right = stripped.rstrip("0")
    exponent += len(stripped) - len(stripped_right)
    return stripped_right or "0", exponent


#: strconv's %g with the shortest precision uses %e from a decimal exponent of 6 on (eprec = 6).
_G_SHORTEST_EXPONENT_LIMIT: Final = 6


def _time() -> Any:
    # Timestamps and durations live in cel_time (which needs this module); they are rare in rules.
    from jobsetctl.admission import cel_time

    return cel_time


# ------------------------------------------------------------------------------------------ sizes

def size(value: Any) -> int:
    kind = type(value)
    if kind is str or kind is list or kind is dict or kind is bytes:
        return len(value)
    raise NoSuchOverload()

