"""The ClusterTrainingRuntimes Kubeflow Trainer ships (STUB: to be completed)."""

from __future__ import annotations

from typing import Any


def builtin_runtimes() -> list[dict[str, Any]]:
    return []
