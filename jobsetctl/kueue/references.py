"""Kueue's checks across objects (the ``consequence`` layer): filled in by the cross-object work."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jobsetctl.diagnostics import Finding
from jobsetctl.kinds.interface import AdmissionContext
from jobsetctl.loader.objects import ObjectRecord


def check_kueue_references(
    admitted: list[tuple[ObjectRecord, dict[str, Any]]], ctx: AdmissionContext
) -> Iterator[tuple[ObjectRecord, Finding]]:
    return iter(())
