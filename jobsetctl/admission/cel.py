"""CEL ``x-kubernetes-validations`` (STUB: to be completed)."""

from __future__ import annotations

from typing import Any

from jobsetctl.admission.schema import StructuralSchema
from jobsetctl.diagnostics import Finding


def validate_cel(schema: StructuralSchema, obj: Any, old: Any = None) -> list[Finding]:
    return []
