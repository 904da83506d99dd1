"""Tolerant read access to manifests: a missing or mistyped part reads as empty, never raises.

Objects in the simulated cluster went through admission, but Node manifests from ``--nodes`` and the
objects a report looks at may be partial; these helpers keep every reader total and mypy-clean.
"""

from __future__ import annotations

from typing import Any


def mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def sequence(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def metadata(obj: Any) -> dict[str, Any]:
    return mapping(mapping(obj).get("metadata"))


def spec(obj: Any) -> dict[str, Any]:
    return mapping(mapping(obj).get("spec"))


def status(obj: Any) -> dict[str, Any]:
    return mapping(mapping(obj).get("status"))


def name_of(obj: Any) -> str:
    return str(metadata(obj).get("name", "") or "")


def namespace_of(obj: Any) -> str:
    return str(metadata(obj).get("namespace", "") or "")
