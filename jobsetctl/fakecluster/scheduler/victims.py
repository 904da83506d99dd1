"""Preemption units: which pods are evicted together, at what priority, and in which order of importance
(scheduling.md §1.6, §1.8; kubernetes ``pkg/scheduler/framework/preemption/util.go``).

* **Unit.** A victim pod's unit is the highest group above it whose ``disruptionMode`` is ``all``
  (1.36: ``PodGroup``), found by walking up from its PodGroup through ``parentCompositePodGroupName``
  (``traverseHierarchyUp``: at most the tree depth, stopping at a missing parent or a loop; without the
  ``CompositePodGroup`` gate only the PodGroup itself is looked at). No such group: the pod alone. A
  unit holds every pod of that group's subtree that is bound (or assumed) now, on any node.
* **Priority** (``getPodPriority``): the priority of the last group reached going up (the root of the
  hierarchy; a PodGroup without ``priority`` falls back to the pod's own), else the pod's.
* **Importance** (``MoreImportantVictim``, most important first): higher priority; then the unit's type,
  CompositePodGroup over PodGroup over a single pod; then more pods; then the earlier start; then a
  stable identity (upstream compares pod UIDs; we use the order the scheduler first saw the pods, so that
  one seed gives one timeline).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from jobsetctl.fakecluster.scheduler.groups import COMPOSITE, POD_GROUP, GroupKey
from jobsetctl.fakecluster.scheduler.podinfo import PodInfo
from jobsetctl.kube.versions import KubeVersion

if TYPE_CHECKING:
    from jobsetctl.fakecluster.scheduler.scheduler import Scheduler

#: ``schedulingv1beta1.WorkloadMaxTreeDepth``: how far ``traverseHierarchyUp`` walks.
MAX_TREE_DEPTH = 4
POD, PODGROUP, COMPOSITEPODGROUP = "pod", "podgroup", "compositepodgroup"
_RANK = {POD: 1, PODGROUP: 2, COMPOSITEPODGROUP: 3}


def start_time(pod: PodInfo) -> float:
    return pod.started if pod.started is not None else pod.created


@dataclass(slots=True, eq=False)
class VictimUnit:
    pods: list[PodInfo]
    priority: int
    #: ``pod``, ``podgroup`` or ``compositepodgroup`` (the preemption executor's entity types).
    kind: str = POD
    #: The group that is the unit (None for a single pod).
    group: GroupKey | None = None

    @property
    def start(self) -> float:
        return min(start_time(p) for p in self.pods)

    def importance(self) -> tuple[int, int, int, float, int]:
        """``MoreImportantVictim`` as a sort key: most important first."""
        return (-self.priority, -_RANK[self.kind], -len(self.pods), self.start, min(p.seq for p in self.pods))


class Units:
    """Resolves units and priorities against the scheduler's current view of groups and pods."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.s = scheduler

    def _composites_on(self) -> bool:
        s = self.s
        return s.version is KubeVersion.V1_37 and s.gates.enabled("CompositePodGroup")

    def ancestry(self, pod: PodInfo) -> list[GroupKey]:
        """``traverseHierarchyUp`` from the pod's PodGroup: the groups that exist, bottom up."""
        s = self.s
        if pod.group is None or pod.group[0] != POD_GROUP:
            return []
        chain: list[GroupKey] = []
        current: GroupKey | None = pod.group
        composites = self._composites_on()
        while current is not None and len(chain) < MAX_TREE_DEPTH and current not in chain:
            state = s.groups.states.get(current)
            if state is None or state.obj is None:
                break
            chain.append(current)
            if not composites:
                break
            spec = s.groups.spec(state)
            current = (COMPOSITE, current[1], spec.parent) if spec is not None and spec.parent else None
        return chain

    def priority_of(self, pod: PodInfo) -> int:
        """``getPodPriority``: the hierarchy root's priority, else the pod's own."""
        chain = self.ancestry(pod)
        if chain:
            spec = self.s.groups.spec(self.s.groups.states[chain[-1]])
            if spec is not None and spec.priority is not None:
                return spec.priority
        return pod.priority

    def unit_group(self, pod: PodInfo) -> GroupKey | None:
        """The highest ``all``-mode group above the pod, or None (the pod is its own unit)."""
        highest: GroupKey | None = None
        for key in self.ancestry(pod):
            spec = self.s.groups.spec(self.s.groups.states[key])
            if spec is not None and spec.disruption_all:
                highest = key
        return highest

    def members(self, group: GroupKey) -> list[PodInfo]:
        """Bound or assumed pods of a group's subtree."""
        s = self.s
        if group[0] == POD_GROUP:
            state = s.groups.states.get(group)
            pods = list(state.members.values()) if state is not None else []
        else:
            leaves = s.group_cycle.trees.leaves(group)
            pods = [p for leaf in leaves for p in s.groups.state(leaf).members.values()]
        return sorted((p for p in pods if p.uid in s.snapshot.pods), key=lambda p: p.seq)

    def unit_of(self, pod: PodInfo) -> VictimUnit:
        group = self.unit_group(pod)
        priority = self.priority_of(pod)
        if group is None:
            return VictimUnit([pod], priority)
        members = self.members(group)
        if pod not in members:
            members = [pod, *members]
        kind = COMPOSITEPODGROUP if group[0] == COMPOSITE else PODGROUP
        return VictimUnit(members, priority, kind, group)

    def all_units(self, below: int, exclude: set[GroupKey]) -> list[VictimUnit]:
        """Every unit of bound pods with priority below ``below``, outside the preemptor's own groups, in
        importance order. Pods already terminating are units too, as they are still on their nodes
        upstream: counting them is what keeps a second round from evicting others (their eviction is a
        no-op, ``prepareCandidate`` skips pods with a ``deletionTimestamp``)."""
        found: dict[str, VictimUnit] = {}
        for pod in self.s.snapshot.pods.values():
            if pod.uid in found:
                continue
            if pod.group is not None and pod.group in exclude:
                continue
            unit = self.unit_of(pod)
            if unit.priority >= below or (unit.group is not None and unit.group in exclude):
                continue
            for member in unit.pods:
                found[member.uid] = unit
        unique = {id(u): u for u in found.values()}
        return sorted(unique.values(), key=VictimUnit.importance)
