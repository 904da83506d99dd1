"""PrioritySort (QueueSort) and SchedulingGates (PreEnqueue).

PrioritySort: higher ``spec.priority`` first, then the earlier queue timestamp. Coscheduling members
carry a ``sort_hint`` (group creation time, group name), the scheduler-plugins Coscheduling ``Less``
(scheduling.md §4.1); a cluster using both keeps kube-scheduler's order for every other pod.

SchedulingGates: a pod with ``spec.schedulingGates`` waits outside the queues until they are removed
(the API server already set ``PodScheduled=False/SchedulingGated``; the scheduler says nothing).
"""

from __future__ import annotations

from typing import Any

from jobsetctl.fakecluster.scheduler.interface import PreEnqueuePlugin, QueueSortPlugin, Status, unresolvable
from jobsetctl.fakecluster.scheduler.podinfo import PodInfo


class PrioritySort(QueueSortPlugin):
    name = "PrioritySort"

    def sort_key(self, pod: PodInfo, timestamp: float) -> tuple[Any, ...]:
        return (-pod.priority, timestamp)


class SchedulingGates(PreEnqueuePlugin):
    name = "SchedulingGates"

    def applies_to(self, pod: PodInfo) -> bool:
        spec = pod.obj.get("spec")
        return isinstance(spec, dict) and bool(spec.get("schedulingGates"))

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        spec = pod.obj.get("spec")
        gates = spec.get("schedulingGates") if isinstance(spec, dict) else None
        if gates:
            names = [g.get("name") for g in gates if isinstance(g, dict)]
            return unresolvable(self.name, f"waiting for scheduling gates: {names}")
        return None
