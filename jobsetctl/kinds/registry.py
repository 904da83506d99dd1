"""The kinds jobsetctl checks, keyed by (group, kind). Handlers are imported lazily to keep start-up fast."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jobsetctl.kinds.interface import KindHandler

#: (group, kind) -> "module:attribute" of the handler instance.
_HANDLERS: dict[tuple[str, str], str] = {
    ("jobset.x-k8s.io", "JobSet"): "jobsetctl.jobset.kind:HANDLER",
    ("trainer.kubeflow.org", "TrainJob"): "jobsetctl.trainer.kind:TRAINJOB",
    ("trainer.kubeflow.org", "TrainingRuntime"): "jobsetctl.trainer.kind:TRAINING_RUNTIME",
    ("trainer.kubeflow.org", "ClusterTrainingRuntime"): "jobsetctl.trainer.kind:CLUSTER_TRAINING_RUNTIME",
    ("batch", "Job"): "jobsetctl.kube.job:HANDLER",
    ("scheduling.k8s.io", "Workload"): "jobsetctl.kube.scheduling:WORKLOAD",
    ("scheduling.k8s.io", "PodGroup"): "jobsetctl.kube.scheduling:PODGROUP",
    ("scheduling.k8s.io", "CompositePodGroup"): "jobsetctl.kube.scheduling:COMPOSITE_PODGROUP",
    ("scheduling.k8s.io", "PriorityClass"): "jobsetctl.kube.priority:HANDLER",
}

#: Handlers added at run time (``--crd FILE``); they win over built-in ones.
_EXTRA: dict[tuple[str, str], KindHandler] = {}
_LOADED: dict[tuple[str, str], KindHandler] = {}


def handler_for(group: str, kind: str) -> KindHandler | None:
    key = (group, kind)
    if key in _EXTRA:
        return _EXTRA[key]
    if key in _LOADED:
        return _LOADED[key]
    target = _HANDLERS.get(key)
    if target is None:
        return None
    module_name, _, attribute = target.partition(":")
    handler: KindHandler = getattr(importlib.import_module(module_name), attribute)
    _LOADED[key] = handler
    return handler


def register_extra(handler: KindHandler) -> None:
    """Add a handler for the rest of the process (a CRD given with ``--crd``)."""
    _EXTRA[(handler.group, handler.kind)] = handler


def clear_extra() -> None:
    _EXTRA.clear()


def known_kinds() -> list[tuple[str, str]]:
    return sorted(set(_HANDLERS) | set(_EXTRA))
