"""Volcano PodGroups (``scheduling.volcano.sh/v1beta1``), scheduling.md §4.2: the part of Volcano's
session (enqueue + allocate actions, gang plugin) a timeline needs.

* A pod with ``schedulerName: volcano`` and annotation ``scheduling.k8s.io/group-name`` belongs to that
  PodGroup. It is not scheduled before the PodGroup exists, its ``spec.queue`` (default ``default``)
  names an existing Queue — ``default`` always exists, an unknown queue never schedules — and at least
  ``minMember`` pods exist.
* enqueue: the PodGroup goes ``Pending`` → ``Inqueue`` when its queue exists and ``minResources`` (if set)
  fits the cluster's free resources (Volcano's overcommit factor is not modelled);
* allocate: all-or-nothing through the group cycle of :mod:`..groupcycle` — at least ``minMember`` pods,
  and ``minTaskMember[task]`` pods per task (task name from the pod annotation ``volcano.sh/task-spec``,
  derivation **[UNCONFIRMED]** in the spec) must be placeable together, else nothing binds;
* ``Running`` once ``minMember`` pods are bound. Volcano's own preemption/reclaim actions and queue
  capacity (proportion plugin) are not modelled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from jobsetctl.fakecluster.scheduler.groups import VOLCANO, VOLCANO_GROUP, VOLCANO_TASK_ANNOTATION
from jobsetctl.fakecluster.scheduler.interface import ClusterEvent, PreEnqueuePlugin, Status, unresolvable
from jobsetctl.fakecluster.scheduler.podinfo import PODS, PodInfo

if TYPE_CHECKING:
    from jobsetctl.fakecluster.scheduler.groups import GroupState
    from jobsetctl.fakecluster.scheduler.scheduler import Scheduler

DEFAULT_QUEUE = "default"


def task_of(pod: PodInfo) -> str:
    md = pod.obj.get("metadata") or {}
    annotations = md.get("annotations") if isinstance(md, dict) else None
    task = annotations.get(VOLCANO_TASK_ANNOTATION) if isinstance(annotations, dict) else None
    return task if isinstance(task, str) else ""


class VolcanoGang(PreEnqueuePlugin):
    name = "VolcanoGang"
    events: ClassVar[frozenset[ClusterEvent]] = frozenset({
        ClusterEvent.UNSCHEDULED_POD_ADD, ClusterEvent.GROUP_ADD, ClusterEvent.GROUP_UPDATE,
        ClusterEvent.ASSIGNED_POD_DELETE, ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE,
    })

    def __init__(self, handle: Scheduler) -> None:
        super().__init__(handle)
        self.scheduler = handle

    def applies_to(self, pod: PodInfo) -> bool:
        return True

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        s = self.scheduler
        if pod.group is None or pod.group[0] != VOLCANO_GROUP:
            return unresolvable(self.name, "pod has no scheduling.k8s.io/group-name annotation")
        state = s.groups.states.get(pod.group)
        if state is None or state.obj is None:
            return unresolvable(self.name, f"podgroup {pod.group[1]}/{pod.group[2]} not found")
        spec = s.groups.spec(state)
        assert spec is not None
        if not self.queue_exists(spec.queue or DEFAULT_QUEUE):
            self.set_pending(state, f"queue {spec.queue} not found")
            return unresolvable(self.name, f"queue {spec.queue} not found")
        if len(state.members) < spec.min_count:
            return unresolvable(self.name, f"{len(state.members)}/{spec.min_count} pods of the podgroup exist")
        if spec.min_resources and not self._fits_cluster(state):
            self.set_pending(state, "resources are not enough for the podgroup's minResources")
            return unresolvable(self.name, "podgroup minResources do not fit the cluster")
        if state.obj is not None and (state.obj.get("status") or {}).get("phase") in (None, "", "Pending"):
            s.actuator.set_phase(state.obj, "Inqueue")
        record = s.groups.record(pod.group)
        if record.quorum_at is None:
            record.quorum_at = s.clock.now
        return None

    def queue_exists(self, name: str) -> bool:
        # Queues are cluster-scoped in Volcano; our API server may store the CRD under a namespace.
        return name == DEFAULT_QUEUE or any(
            (q.get("metadata") or {}).get("name") == name for q in self.scheduler.api.list(VOLCANO, "Queue"))

    def _fits_cluster(self, state: GroupState) -> bool:
        s = self.scheduler
        spec = s.groups.spec(state)
        assert spec is not None
        gap = dict(spec.min_resources)
        gap[PODS] = spec.min_count
        for node in s.snapshot.ordered_nodes():
            for resource in list(gap):
                free = node.allowed_pods - node.pod_count if resource == PODS else node.free(resource)
                gap[resource] -= free
                if gap[resource] <= 0:
                    del gap[resource]
            if not gap:
                return True
        return False

    def set_pending(self, state: GroupState, message: str) -> None:
        if state.obj is None:
            return
        from jobsetctl.fakecluster.scheduler.actuator import set_condition

        changed = set_condition(state.obj, "Unschedulable", "True", "NotEnoughResources", message,
                                self.scheduler.clock.timestamp(), metav1=True)
        status = state.obj.setdefault("status", {})
        if status.get("phase") != "Pending":
            status["phase"] = "Pending"
            changed = True
        if changed:
            self.scheduler.api.update_status(state.obj)
