"""The rule registry: every check jobsetctl can report has one entry here (see :mod:`.registry`)."""

from __future__ import annotations

from jobsetctl.rules.interface import Rule
from jobsetctl.rules.registry import all_rules, define, get

__all__ = ["Rule", "all_rules", "define", "get"]
