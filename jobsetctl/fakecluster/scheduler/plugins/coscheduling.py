"""scheduler-plugins Coscheduling (``scheduling.x-k8s.io/v1alpha1`` PodGroup), scheduling.md §4.1.

Read from kubernetes-sigs/scheduler-plugins ``pkg/coscheduling/coscheduling.go`` and ``core/core.go``:

* PreFilter: a pod whose PodGroup does not exist is scheduled like any pod; otherwise it is rejected
  (``UnschedulableAndUnresolvable``, no preemption) while fewer than ``minMember`` pods carry the label
  (``pre-filter pod <name> cannot find enough sibling pods, current pods number: <n>, minMember of group:
  <m>``), and, when ``minResources`` is set, while the cluster's free resources (summed over nodes, the
  group's own pods counted as free, plus ``pods: minMember``) are short (``resource gap: ...``); a
  passed check is remembered for the Permit window;
* Permit: assigned (assumed or bound) members + this one >= ``minMember`` → allow every waiting member;
  else wait ``scheduleTimeoutSeconds`` (plugin default ``permitWaitingTimeSeconds`` = 60 s), and the first
  waiting pod activates its siblings;
* Unreserve (after a rejection or a timeout): every waiting sibling is rejected (``rejection in
  Unreserve``);
* PostFilter (a member found no node and default preemption did not help): unless enough members are
  assigned or at most 10 % are missing, reject the waiting siblings (``optimistic rejection in
  PostFilter``) and report ``PodGroup <ns/name> gets rejected due to Pod <name> is unschedulable even
  after PostFilter``;
* QueueSort: priority, then PodGroup creation time, then name (see :mod:`.queuesort`);
* PostBind: ``status.scheduled`` and ``status.phase`` ``Scheduling`` → ``Scheduled`` (upstream keeps this
  in the scheduler, "TODO: move to the PodGroup controller"); ``Running``/``Finished``/``Failed`` and the
  ``running``/``succeeded``/``failed`` counters are the PodGroup controller's and are derived here from
  member pod phases.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from jobsetctl.fakecluster.scheduler.groups import COSCHED, GroupState
from jobsetctl.fakecluster.scheduler.interface import (
    ClusterEvent,
    Code,
    CycleState,
    Diagnosis,
    PermitPlugin,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreFilterPlugin,
    ReservePlugin,
    Status,
    unresolvable,
    unschedulable,
)
from jobsetctl.fakecluster.scheduler.podinfo import PODS, PodInfo
from jobsetctl.fakecluster.scheduler.snapshot import NodeInfo
from jobsetctl.kube.quantity import format_quantity

if TYPE_CHECKING:
    from jobsetctl.fakecluster.scheduler.scheduler import Scheduler

DEFAULT_PERMIT_WAIT = 60.0
REJECT_PERCENTAGE = 0.1


class Coscheduling(PreFilterPlugin, ReservePlugin, PermitPlugin, PostFilterPlugin, PostBindPlugin):
    name = "Coscheduling"
    events: ClassVar[frozenset[ClusterEvent]] = frozenset({
        ClusterEvent.UNSCHEDULED_POD_ADD, ClusterEvent.GROUP_ADD, ClusterEvent.GROUP_UPDATE,
        ClusterEvent.ASSIGNED_POD_DELETE, ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE,
    })

    def __init__(self, handle: Scheduler) -> None:
        super().__init__(handle)
        self.scheduler = handle
        #: PodGroups whose minResources check passed, until when (``permittedPG``).
        self.permitted: dict[tuple[str, ...], float] = {}

    def applies_to(self, pod: PodInfo) -> bool:
        return pod.group is not None and pod.group[0] == COSCHED

    def _group(self, pod: PodInfo) -> GroupState | None:
        assert pod.group is not None
        state = self.scheduler.groups.states.get(pod.group)
        return state if state is not None and state.obj is not None else None

    def _timeout(self, group: GroupState) -> float:
        spec = self.scheduler.groups.spec(group)
        return spec.timeout if spec is not None and spec.timeout is not None else DEFAULT_PERMIT_WAIT

    def pre_filter(self, state: CycleState) -> Status | None:
        pod = state.pod
        group = self._group(pod)
        if group is None:
            return None
        spec = self.scheduler.groups.spec(group)
        assert spec is not None
        if len(group.members) < spec.min_count:
            return unresolvable(self.name, f"pre-filter pod {pod.name} cannot find enough sibling pods, current pods "
                                           f"number: {len(group.members)}, minMember of group: {spec.min_count}")
        if not spec.min_resources or self.permitted.get(group.key, -1.0) > self.scheduler.clock.now:
            return None
        gap = dict(spec.min_resources)
        gap[PODS] = spec.min_count
        for node in self.scheduler.snapshot.ordered_nodes():
            own = [p for p in node.pods.values() if p.group == group.key]
            for resource in list(gap):
                if resource == PODS:
                    free = node.allowed_pods - node.pod_count + len(own)
                else:
                    free = node.free(resource) + sum(p.requests.get(resource, 0) for p in own)
                gap[resource] -= free
                if gap[resource] <= 0:
                    del gap[resource]
            if not gap:
                self.permitted[group.key] = self.scheduler.clock.now + self._timeout(group)
                return None
        shown = ", ".join(f"{name}:{_format(name, amount)}" for name, amount in sorted(gap.items()))
        return unresolvable(self.name, f"resource gap: map[{shown}]")

    def reserve(self, state: CycleState, node: NodeInfo) -> Status | None:
        return None

    def unreserve(self, state: CycleState, node: NodeInfo) -> None:
        group = self._group(state.pod)
        if group is None:
            return
        self._reject_siblings(group, state.pod, "rejection in Unreserve")
        self.permitted.pop(group.key, None)

    def _assigned(self, group: GroupState, exclude: str) -> int:
        snapshot = self.scheduler.snapshot
        return sum(1 for uid in group.members if uid != exclude and uid in snapshot.pods)

    def permit(self, state: CycleState, node: NodeInfo) -> tuple[Status | None, float]:
        pod = state.pod
        group = self._group(pod)
        if group is None:
            return unschedulable(self.name, "PodGroup not found"), 0.0
        spec = self.scheduler.groups.spec(group)
        assert spec is not None
        assigned = self._assigned(group, pod.uid)
        if assigned + 1 >= spec.min_count:
            self.scheduler.actuator.group_scheduled(group, [])
            for waiting in self.scheduler.pod_cycle.waiting_of(set(group.members)):
                self.scheduler.pod_cycle.allow(waiting.state.pod.uid, self.name)
            return None, 0.0
        if assigned == 0:
            siblings = [p for uid, p in group.members.items() if uid != pod.uid]
            self.scheduler.activate(siblings)
        self._set_phase(group, "Scheduling")
        return Status(Code.WAIT, (), self.name), self._timeout(group)

    def post_filter(self, state: CycleState, diagnosis: Diagnosis) -> PostFilterResult | None:
        pod = state.pod
        group = self._group(pod)
        if group is None:
            return PostFilterResult(unschedulable(self.name, "can not find pod group"))
        spec = self.scheduler.groups.spec(group)
        assert spec is not None
        assigned = self._assigned(group, pod.uid)
        if assigned >= spec.min_count or (spec.min_count - assigned) / spec.min_count <= REJECT_PERCENTAGE:
            return PostFilterResult(Status(Code.UNSCHEDULABLE, (), self.name))
        self._reject_siblings(group, pod, "optimistic rejection in PostFilter")
        self.permitted.pop(group.key, None)
        group.failed_at = self.scheduler.clock.now
        full_name = f"{group.namespace}/{group.name}"
        return PostFilterResult(unschedulable(
            self.name, f"PodGroup {full_name} gets rejected due to Pod {pod.name} is unschedulable even after PostFilter"))

    def _reject_siblings(self, group: GroupState, pod: PodInfo, reason: str) -> None:
        cycle = self.scheduler.pod_cycle
        for waiting in cycle.waiting_of(set(group.members)):
            if waiting.state.pod.uid != pod.uid:
                cycle.reject_later(waiting.state.pod.uid, self.name, reason)

    def post_bind(self, state: CycleState, node: NodeInfo) -> None:
        group = self._group(state.pod)
        if group is None:
            return
        spec = self.scheduler.groups.spec(group)
        assert spec is not None
        scheduled = sum(1 for uid in group.members if uid in group.bound)
        status = (group.obj or {}).get("status") or {}
        fields = {"scheduled": scheduled}
        if not status.get("scheduleStartTime"):
            fields["scheduleStartTime"] = self.scheduler.clock.timestamp()  # type: ignore[assignment]
        if scheduled >= spec.min_count:
            self._set_phase(group, "Scheduled", **fields)
        else:
            self._set_phase(group, "Scheduling", **fields)

    def _set_phase(self, group: GroupState, phase: str, **fields: object) -> None:
        if group.obj is not None:
            self.scheduler.actuator.set_phase(group.obj, phase, **fields)

    def refresh_counters(self, group: GroupState) -> None:
        """The PodGroup controller's part: running/succeeded/failed counters and Running/Finished/Failed."""
        if group.obj is None:
            return
        spec = self.scheduler.groups.spec(group)
        assert spec is not None
        phases = [str((p.obj.get("status") or {}).get("phase") or "") for p in group.members.values()]
        running = phases.count("Running")
        succeeded = group.finished.get("Succeeded", 0)
        failed = group.finished.get("Failed", 0) + phases.count("Failed")
        phase = str((group.obj.get("status") or {}).get("phase") or "Pending")
        if succeeded >= spec.min_count and running == 0:
            phase = "Finished"
        elif running + succeeded >= spec.min_count:
            phase = "Running"
        elif failed and phase in ("Running", "Scheduled"):
            phase = "Failed"
        self.scheduler.actuator.set_phase(group.obj, phase, running=running, succeeded=succeeded, failed=failed)


def _format(name: str, amount: int) -> str:
    from fractions import Fraction

    return format_quantity(Fraction(amount, 1000) if name == "cpu" else Fraction(amount))
