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
    """Resolves units and priorities against the scheduler's current view of groups and pods.

    Every preemption attempt looks at every bound pod (:meth:`all_units`); a contended cluster has
    tens of thousands of them and fails many attempts. The priority and unit group of each bound pod
    are therefore kept (:attr:`_bound`, filled as pods land on nodes), with a count of bound pods per
    priority: an attempt whose preemptor is not above the lowest of them has no victim at all and is
    answered without a scan. A pod's entry depends only on its group hierarchy, so a group object
    that appears, changes or goes forgets its members' entries (a CompositePodGroup: every entry).
    """

    def __init__(self, scheduler: Scheduler) -> None:
        self.s = scheduler
        #: uid -> (``priority_of``, ``unit_group``) of every pod on a node, when :attr:`_valid`.
        self._bound: dict[str, tuple[int, GroupKey | None]] = {}
        #: priority -> how many bound pods have it (entries of :attr:`_bound`).
        self._priorities: dict[int, int] = {}
        self._valid = False
        scheduler.snapshot.pod_listeners.append(self._on_pod)

    # ---- the index of bound pods -----------------------------------------------------------------
    def _on_pod(self, pod: PodInfo, _node: object, delta: int) -> None:
        if not self._valid or self.s.snapshot.dry_runs:
            return  # a dry run puts back every pod it moves (:meth:`Snapshot.dry_run`)
        if delta > 0:
            self._remember(pod)
        else:
            self._forget(pod.uid)

    def _remember(self, pod: PodInfo) -> tuple[int, GroupKey | None]:
        entry = self.entry_of(pod)
        old = self._bound.get(pod.uid)
        if old is not None:
            self._count(old[0], -1)
        self._bound[pod.uid] = entry
        self._count(entry[0], 1)
        return entry

    def _forget(self, uid: str) -> None:
        old = self._bound.pop(uid, None)
        if old is not None:
            self._count(old[0], -1)

    def _count(self, priority: int, delta: int) -> None:
        left = self._priorities.get(priority, 0) + delta
        if left:
            self._priorities[priority] = left
        else:
            self._priorities.pop(priority, None)

    def _ensure(self) -> None:
        if self._valid:
            return
        self._bound.clear()
        self._priorities.clear()
        for pod in self.s.snapshot.pods.values():
            self._remember(pod)
        # Made inside a dry run, the index holds the what-if: used once, not kept.
        self._valid = not self.s.snapshot.dry_runs

    def lowest_priority(self) -> int | None:
        """The lowest priority of a bound pod (``getPodPriority``), None when no pod is bound."""
        self._ensure()
        return min(self._priorities) if self._priorities else None

    def group_changed(self, key: GroupKey) -> None:
        """A group object appeared, changed or went: its members' priorities and units may differ."""
        if not self._valid or key[0] not in (POD_GROUP, COMPOSITE):
            return  # other kinds of group are never part of a hierarchy (:meth:`ancestry`)
        if key[0] == COMPOSITE:
            self._valid = False  # a CompositePodGroup reaches every PodGroup below it: recompute lazily
            return
        state = self.s.groups.states.get(key)
        snapshot_pods = self.s.snapshot.pods
        for uid, pod in (state.members.items() if state is not None else ()):
            if uid in snapshot_pods:
                self._remember(pod)

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

    def entry_of(self, pod: PodInfo) -> tuple[int, GroupKey | None]:
        """(:meth:`priority_of`, :meth:`unit_group`) from one walk up the hierarchy (every pod that
        lands on a node is indexed)."""
        chain = self.ancestry(pod)
        if not chain:
            return pod.priority, None
        groups = self.s.groups
        priority = pod.priority
        root = groups.spec(groups.states[chain[-1]])
        if root is not None and root.priority is not None:
            priority = root.priority
        highest: GroupKey | None = None
        for key in chain:
            spec = groups.spec(groups.states[key])
            if spec is not None and spec.disruption_all:
                highest = key
        return priority, highest

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
        self._ensure()
        if not self._priorities or min(self._priorities) >= below:
            return []  # every unit's priority is the priority of one of its bound pods
        found: dict[str, VictimUnit] = {}
        bound = self._bound
        for pod in self.s.snapshot.pods.values():
            if pod.uid in found:
                continue
            if pod.group is not None and pod.group in exclude:
                continue
            entry = bound.get(pod.uid)
            priority, group = entry if entry is not None else self._remember(pod)
            if priority >= below or (group is not None and group in exclude):
                continue
            if group is None:
                unit = VictimUnit([pod], priority)
            else:
                members = self.members(group)
                if pod not in members:
                    members = [pod, *members]
                unit = VictimUnit(members, priority, COMPOSITEPODGROUP if group[0] == COMPOSITE else PODGROUP, group)
            for member in unit.pods:
                found[member.uid] = unit
        unique = {id(u): u for u in found.values()}
        return sorted(unique.values(), key=VictimUnit.importance)
