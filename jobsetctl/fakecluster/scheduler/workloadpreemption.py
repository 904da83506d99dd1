"""Workload-aware preemption (KEP-5710, scheduling.md §1.8): a PodGroup as the preemptor.

* Enabled: 1.36 with gate ``WorkloadAwarePreemption``; 1.37 as part of ``GenericWorkload`` (beta, merged)
  unless ``WorkloadAwarePreemption=false`` is set explicitly.
* Preemptor priority: the PodGroup's ``priority`` (falling back to its highest member's).
  ``preemptionPolicy: Never`` (group or any member) never preempts.
* Victim units: a bound pod, or all bound pods of a PodGroup whose ``disruptionMode`` is ``PodGroup``
  (1.36) / ``all`` (1.37); a unit's priority is its PodGroup's priority when set, else the pod's. Only
  units of strictly lower priority than the preemptor; the search domain is the whole cluster.
* Algorithm: remove every potential victim; if the group still does not fit, give up. Otherwise
  reprieve units in importance order — higher priority, then a PodGroup before a single pod, then the
  larger group, then the earlier start — putting a unit back whenever the group still fits without it
  (an ``all`` unit all or nothing; no PodDisruptionBudgets in our world). The group is placed once more
  with the final victims removed; its pods are nominated to those nodes.
* A group whose nominated pods still wait for lower-priority victims to terminate does not preempt
  again (the group form of ``not eligible due to a terminating pod on the nominated node.``).
* Actuation: victim PodGroups (``all`` mode) get ``DisruptionTarget=True``/``PreemptionByScheduler`` and a
  ``Preempted`` event; every victim pod is marked and deleted; the message names ``PodGroup <ns>/<name>``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from jobsetctl.fakecluster.scheduler.groups import GroupKey, GroupSpec, display_name
from jobsetctl.fakecluster.scheduler.placement import Placement
from jobsetctl.fakecluster.scheduler.plugins.defaultpreemption import start_time, terminating_by_preemption
from jobsetctl.fakecluster.scheduler.podinfo import PodInfo
from jobsetctl.kube.versions import KubeVersion

if TYPE_CHECKING:
    from jobsetctl.fakecluster.scheduler.scheduler import Scheduler


@dataclass(slots=True)
class VictimUnit:
    pods: list[PodInfo]
    priority: int
    group: GroupKey | None = None

    @property
    def start(self) -> float:
        return min(start_time(p) for p in self.pods)

    def importance(self) -> tuple[int, int, int, float, int]:
        """Most important first: priority, PodGroup before pod, larger group, earlier start."""
        return (-self.priority, 0 if self.group is not None else 1, -len(self.pods), self.start,
                min(p.seq for p in self.pods))


@dataclass(slots=True)
class PreemptionPlan:
    victims: list[VictimUnit] = field(default_factory=list)
    nominations: list[tuple[PodInfo, str]] = field(default_factory=list)


def wap_enabled(scheduler: Scheduler) -> bool:
    gates = scheduler.gates
    if scheduler.version is KubeVersion.V1_37:
        if "WorkloadAwarePreemption" in gates.explicit:
            return gates.enabled("WorkloadAwarePreemption")
        return gates.enabled("GenericWorkload") or gates.enabled("WorkloadAwarePreemption")
    return scheduler.version is KubeVersion.V1_36 and gates.enabled("WorkloadAwarePreemption")


class WorkloadPreemption:
    def __init__(self, scheduler: Scheduler) -> None:
        self.s = scheduler

    def group_priority(self, key: GroupKey | None, pod: PodInfo) -> int:
        """A pod's priority as a preemption victim: its PodGroup's priority when WAP applies."""
        if key is None or not wap_enabled(self.s):
            return pod.priority
        state = self.s.groups.states.get(key)
        spec = self.s.groups.spec(state) if state is not None else None
        return spec.priority if spec is not None and spec.priority is not None else pod.priority

    def unit_of(self, pod: PodInfo) -> list[PodInfo]:
        """The pods evicted together with ``pod`` (its ``all``-mode PodGroup's bound members)."""
        if pod.group is None or not wap_enabled(self.s):
            return [pod]
        state = self.s.groups.states.get(pod.group)
        spec = self.s.groups.spec(state) if state is not None else None
        if state is None or spec is None or not spec.disruption_all:
            return [pod]
        members = [state.members[uid] for uid in sorted(state.bound) if uid in state.members]
        members = [m for m in members if m.uid in self.s.snapshot.pods]
        return sorted(members, key=lambda p: p.seq) if pod in members else [pod]

    def waiting_for_victims(self, pods: list[PodInfo]) -> bool:
        snapshot = self.s.snapshot
        for pod in pods:
            node = snapshot.nominated_node_of(pod)
            if node is not None and any(other.priority < pod.priority and terminating_by_preemption(other)
                                        for other in node.pods.values()):
                return True
        return False

    def units(self, preemptor_priority: int, exclude: GroupKey) -> list[VictimUnit]:
        found: dict[str, VictimUnit] = {}
        for pod in self.s.snapshot.pods.values():
            if pod.group == exclude or pod.uid in found or pod.terminating:
                continue
            priority = self.group_priority(pod.group, pod)
            if priority >= preemptor_priority:
                continue
            members = self.unit_of(pod)
            group = pod.group if len(members) > 1 or members[0] is not pod else None
            if group is None and pod.group is not None:
                state = self.s.groups.states.get(pod.group)
                spec = self.s.groups.spec(state) if state is not None else None
                group = pod.group if spec is not None and spec.disruption_all else None
            unit = VictimUnit(members, priority, group)
            for member in members:
                found[member.uid] = unit
        unique: dict[int, VictimUnit] = {id(u): u for u in found.values()}
        return list(unique.values())

    def plan(self, key: GroupKey, spec: GroupSpec, pods: list[PodInfo],
             place: Callable[[], Placement], feasible: Callable[[Placement], bool]) -> PreemptionPlan | None:
        """Victims and nominations that make the group fit, or None when preemption cannot help."""
        if spec.preempt_never or any(p.preempt_never for p in pods):
            return None
        priority = spec.priority if spec.priority is not None else max(p.priority for p in pods)
        units = self.units(priority, key)
        if not units:
            return None
        snapshot = self.s.snapshot
        placer = self.s.group_cycle.placer
        homes = {p.uid: p.node_name or "" for unit in units for p in unit.pods}
        for unit in units:
            for pod in unit.pods:
                snapshot.remove_pod(pod)
        try:
            trial = place()
            ok = feasible(trial)
            placer.rollback(trial)
            if not ok:
                return None
            plan = PreemptionPlan()
            for unit in sorted(units, key=VictimUnit.importance):
                for pod in unit.pods:
                    snapshot.add_pod(pod, homes[pod.uid])
                trial = place()
                ok = feasible(trial)
                placer.rollback(trial)
                if not ok:
                    for pod in unit.pods:
                        snapshot.remove_pod(pod)
                    plan.victims.append(unit)
            final = place()
            plan.nominations = [(pod, node.name) for pod, node in final.placed]
            placer.rollback(final)
            return plan
        finally:
            for unit in units:
                for pod in unit.pods:
                    if pod.uid not in snapshot.pods:
                        snapshot.add_pod(pod, homes[pod.uid])

    def actuate(self, key: GroupKey, plan: PreemptionPlan) -> None:
        s = self.s
        preemptor = f"PodGroup {display_name(key)}"
        preemptor_uid = str(((s.groups.state(key).obj or {}).get("metadata") or {}).get("uid") or display_name(key))
        for unit in plan.victims:
            if unit.group is not None:
                s.actuator.group_preempted(s.groups.state(unit.group), preemptor)
            for pod in unit.pods:
                s.actuator.preempt_pod(pod, preemptor, preemptor_uid, pod.node_name, pod.scheduler_name)
        for pod, node_name in plan.nominations:
            s.actuator.nominate(pod, node_name)
