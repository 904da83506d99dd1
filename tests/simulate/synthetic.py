"""Build a ledger and an event log by hand, as a run would, to test the reports without a cluster."""

from __future__ import annotations

from typing import Any

from jobsetctl.fakecluster.apiserver import WatchEvent, WatchType
from jobsetctl.fakecluster.events import SimEvent
from jobsetctl.simulate.ledger import Ledger

API_VERSIONS = {"JobSet": "jobset.x-k8s.io/v1alpha2", "TrainJob": "trainer.kubeflow.org/v1alpha1", "Job": "batch/v1",
                "Pod": "v1", "Node": "v1", "PodGroup": "scheduling.k8s.io/v1alpha2"}


class Script:
    """``create`` adds an object to the ledger (as the watch would) and records ``Created``; ``event``
    records any other event. Times must not decrease."""

    def __init__(self) -> None:
        self.ledger = Ledger()
        self.events: list[SimEvent] = []

    def node(self, time: float, name: str, gpus: int, pool: str = "gpu") -> None:
        self.ledger.pools[name] = pool
        obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
               "status": {"allocatable": {"nvidia.com/gpu": str(gpus)}}}
        self.ledger.on_event(WatchEvent(WatchType.ADDED, ("", "Node", "", name), obj))
        self.events.append(SimEvent(time, "Node", "", name, "Created"))

    def create(self, time: float, kind: str, name: str, *, owner: tuple[str, str] | None = None, gpus: int = 0,
               group: str | None = None, suspended: bool = False, namespace: str = "default") -> None:
        metadata: dict[str, Any] = {"name": name, "namespace": namespace}
        if owner is not None:
            metadata["ownerReferences"] = [{"kind": owner[0], "name": owner[1], "controller": True, "uid": "x"}]
        spec: dict[str, Any] = {}
        if kind == "Pod":
            spec["containers"] = [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}} if gpus else {}}]
            if group is not None:
                spec["schedulingGroup"] = {"podGroupName": group}
        if suspended:
            spec["suspend"] = True
        obj = {"apiVersion": API_VERSIONS.get(kind, "v1"), "kind": kind, "metadata": metadata, "spec": spec}
        self.ledger.on_event(WatchEvent(WatchType.ADDED, ("", kind, namespace, name), obj))
        self.events.append(SimEvent(time, kind, namespace, name, "Created"))

    def event(self, time: float, kind: str, name: str, event: str, *, node: str | None = None,
              reason: str | None = None, message: str | None = None, namespace: str = "default") -> None:
        self.events.append(SimEvent(time, kind, namespace if kind != "Node" else "", name, event, node, reason, message))


def two_job_jobset() -> Script:
    """A JobSet of two 1-pod Jobs (8 GPUs each) on two 8-GPU nodes; the second pod waits a minute."""
    s = Script()
    s.node(0, "gpu-0", 8)
    s.node(0, "gpu-1", 8)
    s.create(0, "JobSet", "js")
    s.create(0, "Job", "js-w-0", owner=("JobSet", "js"))
    s.create(0, "Pod", "js-w-0-0-abcde", owner=("Job", "js-w-0"), gpus=8)
    s.create(0, "Job", "js-w-1", owner=("JobSet", "js"))
    s.create(0, "Pod", "js-w-1-0-fghij", owner=("Job", "js-w-1"), gpus=8)
    s.event(0, "Pod", "js-w-0-0-abcde", "Scheduled", node="gpu-0")
    s.event(0, "Pod", "js-w-1-0-fghij", "Unschedulable", reason="Unschedulable",
            message="0/2 nodes are available: 2 Insufficient nvidia.com/gpu.")
    s.event(0, "Pod", "js-w-0-0-abcde", "Started", node="gpu-0")
    s.event(60, "Pod", "js-w-1-0-fghij", "Scheduled", node="gpu-1")
    s.event(60, "Pod", "js-w-1-0-fghij", "Started", node="gpu-1")
    s.event(3600, "Pod", "js-w-0-0-abcde", "Succeeded", node="gpu-0")
    s.event(3600, "Job", "js-w-0", "Completed")
    s.event(3660, "Pod", "js-w-1-0-fghij", "Succeeded", node="gpu-1")
    s.event(3660, "Job", "js-w-1", "Completed")
    s.event(3660, "JobSet", "js", "Completed")
    return s
