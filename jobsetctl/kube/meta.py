"""ObjectMeta validation every kind gets from the API server (STUB: to be completed)."""

from __future__ import annotations

from typing import Any

from jobsetctl.diagnostics import Finding


def validate_object_meta(obj: dict[str, Any], namespaced: bool) -> list[Finding]:
    return []
