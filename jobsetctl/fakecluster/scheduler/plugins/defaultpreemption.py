"""DefaultPreemption: per-node preemption in PostFilter, scheduling.md §3.2.

1. Eligibility: ``preemptionPolicy: Never`` never preempts (``not eligible due to
   preemptionPolicy=Never.``); a pod whose nominated node still has a lower-priority pod terminating
   because of preemption waits instead (``not eligible due to a terminating pod on the nominated node.``).
2. Candidates: only nodes whose filter failure is resolvable (``Unschedulable``); nodes that failed with
   ``UnschedulableAndUnresolvable`` report ``Preemption is not helpful for scheduling``.
3. Per node, dry run: remove every pod of strictly lower priority; if the pod still does not fit, the node
   is out (its filter reason is reported; ``No preemption victims found for incoming pod`` when there was
   nothing to remove). Otherwise reprieve the removed pods in importance order (higher priority first,
   then earlier start) — PDB-violating ones first in upstream, but our world has no PodDisruptionBudgets —
   keeping as victims only those whose return makes the pod not fit.
4. Node choice: zero victims wins at once; then lowest highest-victim priority, lowest sum of priorities
   (each offset by 2^31 as upstream), fewest victims, latest start among the highest-priority victims,
   then the node created first (upstream: effectively arbitrary).
5. Actuation: victims get ``DisruptionTarget=True``/``PreemptionByScheduler`` and are deleted (graceful);
   lower-priority pods nominated to that node lose their nomination; the preemptor is nominated there.

No cross-node preemption: a pod blocked by pods on *other* nodes (anti-affinity across a topology domain)
finds no candidate. Every node is dry-run (upstream samples at least 10% / 100 nodes from a random offset).

Kubernetes 1.37 (scheduling.md §1.8, U9): a victim is taken as its preemption unit (:mod:`..victims`:
the highest ``all``-mode group above it, PodGroup or CompositePodGroup, with all its pods on every node),
at the unit's priority (the hierarchy root's), and units are reprieved in ``MoreImportantVictim`` order;
1.36 compares and evicts single pods at their own priority (the documented 1.36 limitation).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from jobsetctl.fakecluster.scheduler import messages
from jobsetctl.fakecluster.scheduler.interface import (
    SUCCESS,
    Code,
    CycleState,
    Diagnosis,
    PostFilterPlugin,
    PostFilterResult,
    Status,
    unresolvable,
    unschedulable,
)
from jobsetctl.fakecluster.scheduler.podinfo import PodInfo
from jobsetctl.fakecluster.scheduler.snapshot import NodeInfo
from jobsetctl.fakecluster.scheduler.victims import PODGROUP, VictimUnit, start_time

if TYPE_CHECKING:
    from jobsetctl.fakecluster.scheduler.framework import Framework
    from jobsetctl.fakecluster.scheduler.scheduler import Scheduler

INT32_OFFSET = 2**31


def terminating_by_preemption(pod: PodInfo) -> bool:
    from jobsetctl.fakecluster.scheduler.actuator import PREEMPTION_BY_SCHEDULER, condition

    if not pod.terminating:
        return False
    found = condition(pod.obj, "DisruptionTarget")
    return found is not None and found.get("reason") == PREEMPTION_BY_SCHEDULER


class DefaultPreemption(PostFilterPlugin):
    name = "DefaultPreemption"
    events: ClassVar = frozenset()

    def __init__(self, handle: Scheduler) -> None:
        super().__init__(handle)
        self.scheduler = handle
        #: A victim pod's preemption unit (set by the group cycle for 1.37); the pod alone by default.
        self.unit_of: Callable[[PodInfo], VictimUnit] = lambda pod: VictimUnit([pod], pod.priority)

    def post_filter(self, state: CycleState, diagnosis: Diagnosis) -> PostFilterResult | None:
        pod = state.pod
        eligible, reason = self.eligible(pod, diagnosis)
        if not eligible:
            return PostFilterResult(unschedulable(self.name, messages.PREEMPTION_PREFIX + reason))
        snapshot = self.scheduler.snapshot
        statuses: dict[str, Status] = {}
        potential: list[NodeInfo] = []
        for node in snapshot.ordered_nodes():
            status = diagnosis.node_status.get(node.name)
            if status is None:
                continue
            if status.code == Code.UNRESOLVABLE:
                statuses[node.name] = unresolvable(self.name, messages.PREEMPTION_NOT_HELPFUL)
            else:
                potential.append(node)
        candidates: dict[str, tuple[NodeInfo, list[PodInfo]]] = {}
        known: dict[str, VictimUnit] = {}
        for node in potential:
            victims, status = self.select_victims(state, node, known)
            if status is not None:
                statuses[node.name] = status
            else:
                candidates[node.name] = (node, victims)
        if not candidates:
            failure = Diagnosis(len(snapshot.nodes))
            for name, status in statuses.items():
                failure.add(name, status)
            return PostFilterResult(unschedulable(self.name, messages.PREEMPTION_PREFIX + messages.fit_error(failure)),
                                    nominated_node="")
        node, victims = self.pick(list(candidates.values()))
        self.actuate(pod, node, victims)
        return PostFilterResult(SUCCESS, nominated_node=node.name)

    def eligible(self, pod: PodInfo, diagnosis: Diagnosis) -> tuple[bool, str]:
        if pod.preempt_never:
            return False, messages.NOT_ELIGIBLE_NEVER
        nominated = self.scheduler.snapshot.nominated_node_of(pod)
        if nominated is not None:
            status = diagnosis.node_status.get(nominated.name)
            if status is not None and status.code == Code.UNRESOLVABLE:
                return True, ""
            for other in nominated.pods.values():
                if other.priority < pod.priority and terminating_by_preemption(other):
                    return False, messages.NOT_ELIGIBLE_TERMINATING
        return True, ""

    def _unit(self, pod: PodInfo, known: dict[str, VictimUnit] | None) -> VictimUnit:
        """The pod's unit, shared through ``known`` (one preemption attempt: the cache is the same at the
        start of every node's dry run) with the members of the same PodGroup and priority, whose unit it also
        is (same group, hence the same hierarchy and member list; same priority if the root has none)."""
        if known is None:
            return self.unit_of(pod)
        unit = known.get(pod.uid)
        if unit is None:
            unit = self.unit_of(pod)
            known[pod.uid] = unit
            if unit.kind == PODGROUP and pod.group is not None:
                for member in unit.pods:
                    if member.group == pod.group and member.priority == pod.priority:
                        known.setdefault(member.uid, unit)
        return unit

    def select_victims(self, state: CycleState, node: NodeInfo, known: dict[str, VictimUnit] | None = None,
                       ) -> tuple[list[PodInfo], Status | None]:
        """``SelectVictimsOnNode``: (victims, None) or ([], why this node cannot help)."""
        pod = state.pod
        framework = self.scheduler.framework_for(pod)
        snapshot = self.scheduler.snapshot
        units: dict[str, VictimUnit] = {}
        for other in node.pods.values():
            unit = self._unit(other, known)
            if unit.priority < pod.priority:
                units.setdefault(unit.pods[0].uid, unit)
        if not units:
            return [], unresolvable(self.name, messages.NO_VICTIMS)
        ordered = [u.pods for u in sorted(units.values(), key=VictimUnit.importance)]
        if self.scheduler.preemption_shortcuts and not framework.dynamic_filters(pod):
            local = self._local_victims(state, node, framework, ordered)
            if local is not None:
                return local
        homes = {member.uid: member.node_name for members in ordered for member in members}
        removed: list[PodInfo] = []
        for members in ordered:
            for member in members:
                if snapshot.remove_pod(member):
                    removed.append(member)
        victims: list[PodInfo] = []
        try:
            status = framework.filter_node(state, node)
            if status is not None:
                return [], status
            for members in ordered:
                for member in members:
                    snapshot.add_pod(member, homes[member.uid] or node.name)
                if framework.filter_node(state, node) is not None:
                    for member in members:
                        snapshot.remove_pod(member)
                    victims.extend(members)
            return victims, None
        finally:
            for member in removed:
                if member.uid not in snapshot.pods:
                    snapshot.add_pod(member, homes[member.uid] or node.name)

    def _local_victims(self, state: CycleState, node: NodeInfo, framework: Framework, ordered: list[list[PodInfo]],
                       ) -> tuple[list[PodInfo], Status | None] | None:
        """:meth:`select_victims`'s dry run from the node's sums, for a pod no dynamic filter applies to:
        then only the node's own pods decide, so a unit's pods elsewhere (a 64-pod gang spans 64 nodes)
        need not move, and those on the node are subtracted rather than moved out and back. None (do the
        dry run) when a pod would count twice or removing one would give back a set-aside nomination."""
        snapshot = self.scheduler.snapshot
        name = node.name
        here: list[list[PodInfo]] = []
        seen: set[str] = set()
        total = 0
        for members in ordered:
            on_node = [m for m in members if m.node_name == name]
            here.append(on_node)
            total += len(members)
            seen.update(m.uid for m in members)
        if len(seen) != total or (snapshot.has_set_aside()
                                  and any(snapshot.nomination_set_aside(uid) for uid in seen)):
            return None
        snapshot.count_what_if()
        gone: dict[str, int] = {}
        count = 0
        for on_node in here:
            for member in on_node:
                count += 1
                for resource, amount in member.static.requests.items():
                    gone[resource] = gone.get(resource, 0) - amount
        status = framework.filter_node_with(state, node, gone, -count)
        if status is not None:
            return [], status
        victims: list[PodInfo] = []
        for members, on_node in zip(ordered, here, strict=True):
            trial = dict(gone)
            for member in on_node:
                for resource, amount in member.static.requests.items():
                    trial[resource] += amount
            if framework.filter_node_with(state, node, trial, len(on_node) - count) is not None:
                victims.extend(members)
            else:
                gone, count = trial, count - len(on_node)
        return victims, None

    @staticmethod
    def pick(candidates: list[tuple[NodeInfo, list[PodInfo]]]) -> tuple[NodeInfo, list[PodInfo]]:
        for node, victims in sorted(candidates, key=lambda c: c[0].index):
            if not victims:
                return node, victims

        def criteria(candidate: tuple[NodeInfo, list[PodInfo]]) -> tuple[int, int, int, float, int]:
            node, victims = candidate
            highest = max(v.priority for v in victims)
            earliest = min(start_time(v) for v in victims if v.priority == highest)
            return (highest, sum(v.priority + INT32_OFFSET for v in victims), len(victims), -earliest, node.index)

        return min(candidates, key=criteria)

    def actuate(self, pod: PodInfo, node: NodeInfo, victims: list[PodInfo]) -> None:
        actuator = self.scheduler.actuator
        for victim in victims:
            if not victim.terminating:  # ``prepareCandidate`` skips pods already being deleted
                actuator.preempt_pod(victim, pod.key, pod.uid, node.name, pod.scheduler_name)
        self.scheduler.after_pod_preemption(pod, victims)
        for other in list(node.nominated.values()):
            if other.priority < pod.priority and other.uid != pod.uid:
                actuator.nominate(other, None)
