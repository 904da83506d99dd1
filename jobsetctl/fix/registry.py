"""Which rules ``jobsetctl fix`` can repair, and how: one :class:`Fix` per rule id.

A fix never looks for problems itself. ``validate`` finds them (one code path); a fix gets one of its
findings, located in a round-trip document (:class:`FixTarget`), and either edits the document in place and
says what it did, or raises :class:`Unfixable` with the reason, which ``fix`` reports instead of guessing.

Adding a fix is a function plus a decorator line::

    @fix("some-rule-id", "what the fix does, in one line")
    def _some_rule(target: FixTarget) -> str:
        ...
        return "what was changed"

The modules listed in :data:`FIX_MODULES` are imported on first use. A fix registered for a rule id that no
module defines (yet) is listed nowhere and never runs: ``jobsetctl rules`` shows rules, and validate never
reports the id.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jobsetctl.kube.field import Path

#: Modules that register fixes.
FIX_MODULES: tuple[str, ...] = ("jobsetctl.fix.fixes",)


class Unfixable(Exception):
    """A finding that cannot be repaired without guessing what the user meant; the message says why."""


@dataclass(slots=True)
class FixTarget:
    """One finding of validate inside the round-trip document it came from."""

    #: The document's root (a ``v1`` List's items are reached through ``prefix``).
    document: Any
    #: The object's path inside the document: ``()``, or ``("items", i)`` for an item of a List.
    prefix: Path
    #: Where the finding points, inside the object.
    at: Path
    message: str
    rule: str

    @property
    def obj(self) -> Any:
        from jobsetctl.fix.yamledit import find

        return find(self.document, self.prefix)


@dataclass(frozen=True, slots=True)
class Fix:
    rule: str
    summary: str
    apply: Callable[[FixTarget], str]


_FIXES: dict[str, Fix] = {}
_loaded = False


def fix(rule_id: str, summary: str) -> Callable[[Callable[[FixTarget], str]], Callable[[FixTarget], str]]:
    """Register the decorated function as the fix of ``rule_id``."""

    def register(function: Callable[[FixTarget], str]) -> Callable[[FixTarget], str]:
        if rule_id in _FIXES:
            raise ValueError(f"fix for {rule_id!r} defined twice")
        _FIXES[rule_id] = Fix(rule_id, summary, function)
        return function

    return register


def _load() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for module in FIX_MODULES:
            importlib.import_module(module)


def get_fix(rule_id: str) -> Fix | None:
    _load()
    return _FIXES.get(rule_id)


def fix_summary(rule_id: str) -> str | None:
    found = get_fix(rule_id)
    return found.summary if found is not None else None


def all_fixes() -> list[Fix]:
    _load()
    return sorted(_FIXES.values(), key=lambda f: f.rule)


def as_int(value: Any) -> int | None:
    """A YAML integer as an int (never a bool)."""
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None
