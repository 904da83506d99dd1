"""The kinds jobsetctl checks, keyed by (group, kind). Handlers are imported lazily to keep start-up fast."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jobsetctl.kinds.interface import AdmissionWebhook, KindHandler

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
    ("kueue.x-k8s.io", "ClusterQueue"): "jobsetctl.kueue.kind:CLUSTER_QUEUE",
    ("kueue.x-k8s.io", "LocalQueue"): "jobsetctl.kueue.kind:LOCAL_QUEUE",
    ("kueue.x-k8s.io", "Cohort"): "jobsetctl.kueue.kind:COHORT",
    ("kueue.x-k8s.io", "ResourceFlavor"): "jobsetctl.kueue.kind:RESOURCE_FLAVOR",
    ("kueue.x-k8s.io", "WorkloadPriorityClass"): "jobsetctl.kueue.kind:WORKLOAD_PRIORITY_CLASS",
    ("kueue.x-k8s.io", "Topology"): "jobsetctl.kueue.kind:TOPOLOGY",
    ("kueue.x-k8s.io", "AdmissionCheck"): "jobsetctl.kueue.kind:ADMISSION_CHECK",
    ("kueue.x-k8s.io", "Workload"): "jobsetctl.kueue.kind:WORKLOAD",
}

#: Webhooks of other components on a kind, after its own handler, in the order the API server calls them:
#: (group, kind) -> "module:attribute" of each :class:`~jobsetctl.kinds.interface.AdmissionWebhook`.
_WEBHOOKS: dict[tuple[str, str], tuple[str, ...]] = {
    ("jobset.x-k8s.io", "JobSet"): ("jobsetctl.kueue.jobs:JOB_WEBHOOK",),
    ("trainer.kubeflow.org", "TrainJob"): ("jobsetctl.kueue.jobs:JOB_WEBHOOK",),
    ("batch", "Job"): ("jobsetctl.kueue.jobs:JOB_WEBHOOK",),
}
_LOADED_WEBHOOKS: dict[tuple[str, str], tuple[AdmissionWebhook, ...]] = {}

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


def webhooks_for(group: str, kind: str) -> tuple[AdmissionWebhook, ...]:
    """Other components' webhooks on a kind (empty for most kinds)."""
    key = (group, kind)
    loaded = _LOADED_WEBHOOKS.get(key)
    if loaded is None:
        hooks = []
        for target in _WEBHOOKS.get(key, ()):
            module_name, _, attribute = target.partition(":")
            hooks.append(getattr(importlib.import_module(module_name), attribute))
        loaded = _LOADED_WEBHOOKS[key] = tuple(hooks)
    return loaded


def register_extra(handler: KindHandler) -> None:
    """Add a handler for the rest of the process (a CRD given with ``--crd``)."""
    _EXTRA[(handler.group, handler.kind)] = handler


def clear_extra() -> None:
    _EXTRA.clear()


def known_kinds() -> list[tuple[str, str]]:
    return sorted(set(_HANDLERS) | set(_EXTRA))
