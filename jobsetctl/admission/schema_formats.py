"""Formats the API server enforces on strings, and Go's float formatting for messages.

Format checks follow kube-openapi's strfmt registry (``pkg/validation/strfmt``), which apiextensions uses
for the formats it keeps in CRD schemas (``date-time`` is ``IsDateTime``, ``byte`` is govalidator's
``IsBase64``, ``uuid*`` are the strfmt patterns). Formats we do not implement are accepted.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import functools
import re

_DATE_TIME = re.compile(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")
_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_BASE64 = re.compile(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$")
_UUID = {
    "uuid": re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"),
    "uuid3": re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$"),
    "uuid4": re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"),
    "uuid5": re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"),
}


def _is_date(text: str) -> bool:
    # Go time.Parse("2006-01-02"): exact digits and a real calendar day.
    m = _DATE.match(text)
    if m is None:
        return False
    try:
        datetime.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return False
    return True


def is_date_time(text: str) -> bool:
    """kube-openapi strfmt ``IsDateTime``: a date, a "t", and a time matched loosely (23:59:59 at most)."""
    if len(text) < 4:
        return False
    parts = text.lower().split("t")
    if len(parts) < 2 or not _is_date(parts[0]):
        return False
    m = _DATE_TIME.search(parts[1])
    if m is None:
        return False
    return m.group(1) <= "23" and m.group(2) <= "59" and m.group(3) <= "59"


def _is_byte(text: str) -> bool:
    if not _BASE64.match(text):
        return False
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


@functools.lru_cache(maxsize=4096)
def format_ok(fmt: str, text: str) -> bool:
    """Whether ``text`` passes ``fmt``; formats we do not implement are accepted (documented in schema.py).
    A pure function of two strings, kept per pair: the objects of a simulation share their timestamps
    (every object created at one virtual instant has the same ``creationTimestamp``)."""
    name = fmt.replace("-", "")
    if name == "datetime":
        return is_date_time(text)
    if name == "date":
        return _is_date(text)
    if name == "byte":
        return _is_byte(text)
    pattern = _UUID.get(name)
    if pattern is not None:
        return pattern.match(text) is not None
    return True


def go_float(value: float) -> str:
    """Go's ``%v`` of a float64 (strconv 'g', shortest digits): exponent form below 1e-4 and from 1e6."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    mantissa, _, exp_text = repr(abs(value)).partition("e")
    whole, _, frac = mantissa.partition(".")
    all_digits = whole + frac
    stripped = all_digits.lstrip("0")
    point = len(whole) + (int(exp_text) if exp_text else 0) - (len(all_digits) - len(stripped))
    digits = stripped.rstrip("0") or "0"
    exp10 = point - 1
    if exp10 < -4 or exp10 >= 6:
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{body}e{'+' if exp10 >= 0 else '-'}{abs(exp10):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * (-point)}{digits}"
    if point >= len(digits):
        return f"{sign}{digits}{'0' * (point - len(digits))}"
    return f"{sign}{digits[:point]}.{digits[point:]}"
