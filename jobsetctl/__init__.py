"""jobsetctl: offline validate, render and simulate for JobSet and Kubeflow Trainer v2 manifests."""

from __future__ import annotations

__version__ = "0.1.0"
