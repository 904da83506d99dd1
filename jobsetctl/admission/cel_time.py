"""CEL timestamps and durations, as Kubernetes produces them from ``format: date-time``, ``date`` and
``duration`` strings (``k8s.io/apiserver/pkg/cel/common/values.go``) and as ``timestamp()`` and
``duration()`` parse them.

Timestamps are aware ``datetime`` values in UTC and durations ``timedelta`` values. Known precision
difference: Python keeps microseconds where Go keeps nanoseconds, so digits past the sixth fractional
digit are dropped.
"""

from __future__ import annotations

import base64
import re
from datetime import UTC, datetime, timedelta
from typing import Final

from jobsetctl.admission.cel_values import CelError, format_double

_MIN_TIME: Final = datetime(1, 1, 1, tzinfo=UTC)
_MAX_TIME: Final = datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
_DATE_TIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})"
)
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_DURATION_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h|d|w)")
_DURATION_UNITS: Final = {
    "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0,
    "d": 86400.0, "w": 604800.0,
}
#: cel-go bounds durations to about ±10000 years (the protobuf Duration range).
_MAX_DURATION: Final = timedelta(seconds=315576000000)


def time_result(value: datetime) -> datetime:
    if value < _MIN_TIME or value > _MAX_TIME:
        raise CelError("timestamp overflow")
    return value


def duration_result(value: timedelta) -> timedelta:
    if abs(value) > _MAX_DURATION:
        raise CelError("integer overflow")
    return value


def parse_timestamp(text: str) -> datetime:
    """RFC 3339 ``date-time`` (Kubernetes' strfmt also accepts a space separator)."""
    match = _DATE_TIME.fullmatch(text)
    if not match:
        raise CelError(f"Invalid date-time formatted string {text}")
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    micro = int((fraction or "0")[:6].ljust(6, "0"))
    try:
        moment = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), micro, tzinfo=UTC)
    except ValueError as exc:
        raise CelError(f"Invalid date-time formatted string {text}") from exc
    if zone not in ("Z", "z"):
        sign = 1 if zone[0] == "+" else -1
        moment -= sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
    return moment


def parse_date(text: str) -> datetime:
    match = _DATE.fullmatch(text)
    if not match:
        raise CelError(f"Invalid date formatted string {text}")
    try:
        return datetime(int(match[1]), int(match[2]), int(match[3]), tzinfo=UTC)
    except ValueError as exc:
        raise CelError(f"Invalid date formatted string {text}") from exc


def parse_duration(text: str) -> timedelta:
    """Go ``time.ParseDuration`` syntax (plus ``d`` and ``w``, which Kubernetes' strfmt accepts)."""
    body = text.replace(" ", "")
    sign = 1
    if body[:1] in "+-" and body:
        sign = -1 if body[0] == "-" else 1
        body = body[1:]
    if body == "0":
        return timedelta(0)
    position = 0
    seconds = 0.0
    while position < len(body):
        match = _DURATION_PART.match(body, position)
        if not match or match.group(1) in ("", "."):
            raise CelError(f"Invalid duration {text}")
        seconds += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        position = match.end()
    if not body:
        raise CelError(f"Invalid duration {text}")
    return duration_result(timedelta(seconds=sign * seconds))


def format_timestamp(value: datetime) -> str:
    text = value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")
    if value.microsecond:
        text += "." + f"{value.microsecond:06d}".rstrip("0")
    return text + "Z"


def format_duration(value: timedelta) -> str:
    """cel-go prints a duration as its seconds with ``s`` (``1.5s``)."""
    seconds = value.total_seconds()
    return (format_double(seconds) if not seconds.is_integer() else str(int(seconds))) + "s"


def decode_base64(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except ValueError as exc:
        raise CelError(f"Invalid byte formatted string {text}") from exc
