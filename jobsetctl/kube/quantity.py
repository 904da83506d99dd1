"""Kubernetes resource quantities (``500m``, ``16Gi``, ``1e3``) as exact fractions.

Arithmetic is exact (sums and products for PodGroup ``minResources``, scheduler fit), comparison is
semantic (``1250m == 1.25``), ``value`` rounds up like Go's ``Quantity.Value()`` (trainer.md §3.6).
"""

from __future__ import annotations

import functools
import re
from fractions import Fraction
from typing import Any

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
            "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
            "P": Fraction(10**15), "E": Fraction(10**18)}
_QUANTITY = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))((?:[eE][+-]?\d+)|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?")

QUANTITY_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


class QuantityError(ValueError):
    pass


@functools.lru_cache(maxsize=4096)
def _parse_text(text: str) -> Fraction:
    m = _QUANTITY.fullmatch(text.strip())
    if not m:
        raise QuantityError(QUANTITY_ERROR)
    number, suffix = m.groups()
    value = Fraction(number)
    if suffix is None:
        return value
    if suffix in _BINARY:
        return value * _BINARY[suffix]
    if suffix in _DECIMAL:
        return value * _DECIMAL[suffix]
    return value * Fraction(10) ** int(suffix[1:])  # exponent form


def parse_quantity(value: Any) -> Fraction:
    """A quantity from a manifest value (string or number). Raises :class:`QuantityError`."""
    if isinstance(value, bool):
        raise QuantityError(QUANTITY_ERROR)
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        return Fraction(str(value))
    if isinstance(value, str):
        return _parse_text(value)
    raise QuantityError(QUANTITY_ERROR)


def is_quantity(value: Any) -> bool:
    try:
        parse_quantity(value)
    except QuantityError:
        return False
    return True


def ceil_value(q: Fraction) -> int:
    """Go ``Quantity.Value()``: the integer value, rounded up (``2500m`` is 3)."""
    return -((-q.numerator) // q.denominator)


def milli_value(q: Fraction) -> int:
    """Go ``Quantity.MilliValue()``, rounded up."""
    return ceil_value(q * 1000)


def format_quantity(q: Fraction, binary: bool = False) -> str:
    """Canonical text for a quantity: the largest suffix that keeps an integer mantissa.

    ``binary`` selects Ki/Mi/Gi suffixes (BinarySI) for byte amounts written that way; values that are not
    a whole number of bytes fall back to decimal suffixes, as apimachinery does.
    """
    if q == 0:
        return "0"
    sign = "-" if q < 0 else ""
    q = abs(q)
    if binary and q.denominator == 1:
        for suffix, factor in sorted(_BINARY.items(), key=lambda item: -item[1]):
            if q % factor == 0 and q >= factor:
                return f"{sign}{q // factor}{suffix}"
        return f"{sign}{q}"
    for suffix, factor in (("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if q.denominator == 1 and q % factor == 0:
            return f"{sign}{q // factor}{suffix}"
    if q.denominator == 1:
        return f"{sign}{q.numerator}"
    for suffix, fraction in (("m", Fraction(1, 1000)), ("u", Fraction(1, 10**6)), ("n", Fraction(1, 10**9))):
        scaled = q / fraction
        if scaled.denominator == 1:
            return f"{sign}{scaled.numerator}{suffix}"
    # Below a nano: round up to nanos, as apimachinery cannot represent it either.
    return f"{sign}{ceil_value(q * 10**9)}n"


def is_binary_text(value: Any) -> bool:
    return isinstance(value, str) and value.strip().endswith(tuple(_BINARY))
