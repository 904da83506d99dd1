"""Go ``time.ParseDuration`` syntax (``90s``, ``1h30m``, ``500ms``), used by scenarios and pod annotations."""

from __future__ import annotations

import functools
import re

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h|d)")


class DurationError(ValueError):
    pass


def parse_duration(text: object) -> float:
    """Seconds in a duration. Plain numbers are seconds. ``d`` (days) is accepted for scenario comfort.

    Negative durations are errors: nothing in a scenario can happen before time zero or last less than nothing.
    """
    if isinstance(text, bool):
        raise DurationError(f"invalid duration {text!r}")
    if isinstance(text, int | float):
        if text < 0:
            raise DurationError(f"invalid duration {text!r}: must not be negative")
        return float(text)
    if not isinstance(text, str):
        raise DurationError(f"invalid duration {text!r}: expected a string such as 90s, 30m or 2h")
    return _parse_text(text)


# A pure function of an immutable string, asked for every pod the kubelet starts (its annotations):
# memoised. Errors are not cached (``lru_cache`` does not keep exceptions), so each call raises anew.
@functools.lru_cache(maxsize=1024)
def _parse_text(text: str) -> float:
    value = text.strip()
    if value.startswith("-"):
        raise DurationError(f'invalid duration "{text}": must not be negative')
    if value in ("0", "+0"):
        return 0.0
    body = value.lstrip("+")
    total = 0.0
    pos = 0
    for match in _PART.finditer(body):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if pos != len(body) or not body:
        raise DurationError(f'invalid duration "{text}": expected a number and a unit, such as 90s, 30m, 2h or 1h30m')
    return total


def format_duration(seconds: float) -> str:
    """Compact human form: ``1h30m``, ``45s``, ``2.5s``."""
    if seconds < 0:
        return "-" + format_duration(-seconds)
    if seconds < 60:
        return f"{seconds:g}s"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    out = ""
    if hours:
        out += f"{hours}h"
    if minutes:
        out += f"{minutes}m"
    if secs:
        out += f"{secs}s"
    return out or "0s"
