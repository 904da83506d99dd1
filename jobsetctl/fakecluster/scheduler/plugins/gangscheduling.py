"""GangScheduling (in-tree, gates ``GenericWorkload`` + ``GangScheduling``), scheduling.md §1.3.

PreEnqueue, all versions: a member pod stays out of the queue until its group exists and, for ``gang``
policy, at least ``minCount`` member pods have been observed. Messages (kubernetes
``pkg/scheduler/framework/plugins/gangscheduling/gangscheduling.go``; the 1.35 text really says "pods's"):

* 1.35: ``waiting for pods's workload "<name>" to appear in scheduling queue``,
  ``pod group "<pg>" doesn't exist for a workload "<name>"``;
* 1.36/1.37: ``waiting for pod's pod group "<name>" to appear in scheduling queue``;
* gang quorum: ``waiting for minCount pods from a gang to appear in scheduling queue``;
* 1.37 CompositePodGroup trees: ``waiting for composite pod group "<root>" tree to meet quorum`` (quorum of
  the root: ``minGroupCount`` ready children, recursively).

Re-checked on a new member pod (unscheduled or assigned), on group creation and (1.37) on a ``minCount``
decrease. These pods emit no events while held (issue #4).

Reserve/Unreserve/Permit are the 1.35 barrier: a reserved pod waits at Permit until assumed + bound
members reach ``minCount``; the wait ends at a per-group deadline of 300 s set when the first pod starts
waiting (a new one after it passed), then every waiting pod is rejected and its reservation released.
Waiting pods' unscheduled siblings are activated. On 1.36+ the PodGroup/workload cycle
(:mod:`..groupcycle`) replaces the barrier.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from jobsetctl.fakecluster.scheduler.groups import (
    POD_GROUP,
    WORKLOAD_GROUP,
    GroupState,
    gang_gates_on,
)
from jobsetctl.fakecluster.scheduler.interface import (
    ClusterEvent,
    Code,
    CycleState,
    PermitPlugin,
    PreEnqueuePlugin,
    ReservePlugin,
    Status,
    unresolvable,
)
from jobsetctl.fakecluster.scheduler.podinfo import PodInfo
from jobsetctl.fakecluster.scheduler.snapshot import NodeInfo
from jobsetctl.kube.versions import KubeVersion

if TYPE_CHECKING:
    from jobsetctl.fakecluster.scheduler.scheduler import Scheduler

#: ``DefaultSchedulingTimeoutDuration`` of the 1.35 workload manager.
PERMIT_TIMEOUT = 300.0
QUORUM_MESSAGE = "waiting for minCount pods from a gang to appear in scheduling queue"


class GangScheduling(PreEnqueuePlugin, ReservePlugin, PermitPlugin):
    name = "GangScheduling"
    events: ClassVar[frozenset[ClusterEvent]] = frozenset({
        ClusterEvent.UNSCHEDULED_POD_ADD, ClusterEvent.ASSIGNED_POD_ADD, ClusterEvent.GROUP_ADD,
        ClusterEvent.GROUP_UPDATE,
    })
    #: Events whose hint only ever says Queue for the target's own hierarchy (:mod:`..requeue` indexes
    #: waiting groups by it).
    scoped_events: ClassVar[frozenset[ClusterEvent]] = frozenset({
        ClusterEvent.UNSCHEDULED_POD_ADD, ClusterEvent.ASSIGNED_POD_ADD, ClusterEvent.GROUP_ADD,
        ClusterEvent.GROUP_UPDATE,
    })

    def __init__(self, handle: Scheduler) -> None:
        super().__init__(handle)
        self.scheduler = handle
        #: The quorum gate's status (immutable): made once, not for every gated member of every gang.
        self._waiting_for_quorum = unresolvable(self.name, QUORUM_MESSAGE)

    def applies_to(self, pod: PodInfo) -> bool:
        return pod.group is not None and pod.group[0] in (WORKLOAD_GROUP, POD_GROUP) and gang_gates_on(
            self.scheduler.gates)

    def hint(self, target: PodInfo, event: ClusterEvent, subject: PodInfo | None, group: tuple[str, ...] | None,
             detail: object = None) -> bool:
        """``isSchedulableAfterPodAdded`` / ``isSchedulableAfterPodGroupAdded`` / ``...Updated`` /
        ``...CompositePodGroupAdded`` (gangscheduling.go): only a pod or a group of the target's own
        hierarchy helps (a minCount decrease is filtered before the event is sent)."""
        gc = self.scheduler.group_cycle
        if event in (ClusterEvent.UNSCHEDULED_POD_ADD, ClusterEvent.ASSIGNED_POD_ADD):
            if subject is None:
                return True
            return subject.group is not None and gc.same_hierarchy(target.group, subject.group)
        if event in (ClusterEvent.GROUP_ADD, ClusterEvent.GROUP_UPDATE) and group is not None:
            return gc.same_hierarchy(target.group, group)
        return True

    # ---- PreEnqueue --------------------------------------------------------------------------------
    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        assert pod.group is not None
        s = self.scheduler
        state = s.groups.state(pod.group)
        if pod.group[0] == WORKLOAD_GROUP:
            workload = s.groups.workloads.get((pod.group[1], pod.group[2]))
            if workload is None:
                return unresolvable(self.name, f'waiting for pods\'s workload "{pod.group[2]}" to appear in '
                                               "scheduling queue")
            names = [e.get("name") for e in (workload.get("spec") or {}).get("podGroups") or [] if isinstance(e, dict)]
            if pod.group[3] not in names:
                return unresolvable(self.name, f'pod group "{pod.group[3]}" doesn\'t exist for a workload '
                                               f'"{pod.group[2]}"')
        elif state.obj is None:
            return unresolvable(self.name, f'waiting for pod\'s pod group "{pod.group[2]}" to appear in '
                                           "scheduling queue")
        spec = s.groups.spec(state)
        if spec is not None and spec.parent and s.version is KubeVersion.V1_37 and s.gates.enabled("CompositePodGroup"):
            _, waiting = s.group_cycle.tree_quorum(pod.group[1], spec.parent)
            if waiting is not None:
                return unresolvable(self.name, waiting)
        elif spec is not None and spec.gang and len(state.members) < spec.min_count:
            return self._waiting_for_quorum
        record = s.groups.record(pod.group)
        if record.quorum_at is None:
            record.quorum_at = s.clock.now
        return None

    # ---- 1.35 barrier ------------------------------------------------------------------------------
    def _barrier(self, pod: PodInfo) -> GroupState | None:
        s = self.scheduler
        if s.version is not KubeVersion.V1_35 or pod.group is None or pod.group[0] != WORKLOAD_GROUP:
            return None
        state = s.groups.states.get(pod.group)
        spec = s.groups.spec(state) if state is not None else None
        return state if spec is not None and spec.gang else None

    def reserve(self, state: CycleState, node: NodeInfo) -> Status | None:
        group = self._barrier(state.pod)
        if group is not None:
            group.assumed.add(state.pod.uid)
        return None

    def unreserve(self, state: CycleState, node: NodeInfo) -> None:
        group = self._barrier(state.pod)
        if group is not None:
            group.assumed.discard(state.pod.uid)

    def permit(self, state: CycleState, node: NodeInfo) -> tuple[Status | None, float]:
        group = self._barrier(state.pod)
        if group is None:
            return None, 0.0
        s = self.scheduler
        spec = s.groups.spec(group)
        assert spec is not None
        if len(group.assumed | group.bound) < spec.min_count:
            unscheduled = [p for uid, p in group.members.items() if uid not in group.assumed and uid not in group.bound]
            s.activate(unscheduled)
            now = s.clock.now
            if group.deadline is None or now >= group.deadline:
                group.deadline = now + PERMIT_TIMEOUT
            record = s.groups.record(group.key)
            record.placeable, record.min_count = len(group.assumed | group.bound), spec.min_count
            return Status(Code.WAIT, ("waiting for minCount pods from a gang to be waiting on permit",),
                          self.name), group.deadline - now
        group.deadline = None
        s.actuator.group_scheduled(group, [])
        for waiting in s.pod_cycle.waiting_of(set(group.assumed)):
            s.pod_cycle.allow(waiting.state.pod.uid, self.name)
        return None, 0.0
