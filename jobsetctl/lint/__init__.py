"""Lints (STUB: to be completed)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jobsetctl.diagnostics import Finding
from jobsetctl.kinds.interface import AdmissionContext
from jobsetctl.loader.objects import ObjectRecord


def run_lints(
    admitted: list[tuple[ObjectRecord, dict[str, Any]]], ctx: AdmissionContext
) -> Iterator[tuple[ObjectRecord, Finding]]:
    return iter(())
