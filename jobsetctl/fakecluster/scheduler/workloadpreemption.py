"""Workload-aware preemption (KEP-5710, scheduling.md §1.8): a PodGroup or CompositePodGroup tree as
the preemptor. Read from kubernetes ``pkg/scheduler/framework/preemption/podgrouppreemption.go``
(``Preempt``, ``selectVictimsOnDomain``) and ``executor.go``:

* Enabled: 1.36 with gate ``WorkloadAwarePreemption``; 1.37 as part of ``GenericWorkload`` (beta, merged)
  unless ``WorkloadAwarePreemption=false`` is set explicitly. It runs only when the group's cycle ended
  ``Unschedulable`` (``podGroupCycle``): pods that fit bind first, preemption comes in a later cycle.
* Eligibility: ``preemptionPolicy: Never`` (group or any member) → ``not eligible due to
  preemptionPolicy=Never.``; a member nominated to a node where a lower-priority pod is still terminating
  because of preemption → 1.36: ``not eligible due to a terminating pod on the nominated node.``; 1.37:
  success ``ongoing preemption on nominated nodes``, keeping the nominations (the group waits, it does
  not preempt anew).
* Potential victims: every unit (:mod:`.victims`) of lower priority than the preemptor, cluster-wide;
  none → ``No preemption victims found for incoming preemptor`` (UnschedulableAndUnresolvable).
* All of them are removed and the group's own algorithm runs once (without preemption); if it still
  fails, its status is the answer. Otherwise every pod it placed keeps its node (not only ``minCount``
  of them) and victims are reprieved in importance order, most important first: a unit goes back when
  every one of those placements still passes the filters with it back (``reprieveVictim``). No
  PodDisruptionBudgets exist in our world, so the PDB-violating pass is empty.
* Node choice while victims are removed is victim-aware [DERIVED: the behaviour the upstream tests
  "Victim-aware scoring: ..." and "Partial Preemption with basic policy" assert; the scoring code is not
  in the snapshot we read]: a node where the pod fits without evicting anything new wins; else the
  node whose newly needed victims are the least important; then the default score.
* Success: status ``found a placement for podgroup, preempting <n> victims`` (n pods); the executor marks
  each victim ``DisruptionTarget=True``/``PreemptionByScheduler`` with ``<scheduler>: preempting to
  accommodate a higher priority <podgroup|compositepodgroup>``, records the Event ``Preempted``
  ``Preempted by <podgroup|compositepodgroup> <uid> on node cluster`` (the group candidate is named
  "cluster": an upstream quirk, reproduced) and deletes it; pods already terminating are left alone.
  Every placed pod is nominated to its node.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from jobsetctl.fakecluster.scheduler.groups import GroupKey, display_name
from jobsetctl.fakecluster.scheduler.interface import CycleState
from jobsetctl.fakecluster.scheduler.plugins.defaultpreemption import terminating_by_preemption
from jobsetctl.fakecluster.scheduler.podinfo import PodInfo
from jobsetctl.fakecluster.scheduler.snapshot import NodeInfo
from jobsetctl.fakecluster.scheduler.victims import Units, VictimUnit
from jobsetctl.kube.versions import KubeVersion

if TYPE_CHECKING:
    from jobsetctl.fakecluster.scheduler.framework import Framework
    from jobsetctl.fakecluster.scheduler.scheduler import Scheduler

NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
ONGOING = "ongoing preemption on nominated nodes"
NO_VICTIMS = "No preemption victims found for incoming preemptor"
#: The candidate name of a group preemption (``actuatePodGroupPreemption``): events say "on node cluster".
GROUP_CANDIDATE = "cluster"


def found_message(victim_pods: int) -> str:
    return f"found a placement for podgroup, preempting {victim_pods} victims"


def wap_enabled(scheduler: Scheduler) -> bool:
    gates = scheduler.gates
    if scheduler.version is KubeVersion.V1_37:
        if "WorkloadAwarePreemption" in gates.explicit:
            return gates.enabled("WorkloadAwarePreemption")
        return gates.enabled("GenericWorkload") or gates.enabled("WorkloadAwarePreemption")
    return scheduler.version is KubeVersion.V1_36 and gates.enabled("WorkloadAwarePreemption")


@dataclass(slots=True)
class Attempt:
    """One run of a group's algorithm: the pods it placed (assumed in the cache until ``rollback``)."""

    assignments: list[tuple[PodInfo, NodeInfo]]
    feasible: bool
    message: str
    rollback: Callable[[], None]


@dataclass(slots=True)
class PreemptionResult:
    #: A placement was found (victims evicted, or an earlier preemption is still under way).
    ok: bool
    message: str
    victims: list[VictimUnit] = field(default_factory=list)
    nominations: list[tuple[PodInfo, str]] = field(default_factory=list)
    #: UnschedulableAndUnresolvable (no potential victim at all).
    unresolvable: bool = False

    @property
    def victim_pods(self) -> int:
        return sum(len(u.pods) for u in self.victims)


class VictimAwareChooser:
    """Picks a node for each pod placed while all potential victims are removed (see the module text).

    Each pod takes the node with the least (cost, -score, index) among those it passes, where the cost
    says which units still on that node it needs gone (:meth:`_newly_needed`). A 64-pod gang on a full
    cluster asked that of every node for every pod (on bench_contended.py --week: a third of the run).
    When no dynamic filter applies to the pod and the victims hold no anti-affinity and no nomination
    (:attr:`by_sums`), a node's answer depends only on that node (its sums, its nominations, which of its
    units are needed already) and on the pod's signature and priority, so the answers are kept in a heap
    (:meth:`_choose_by_sums`) and only the nodes that changed since the previous pod are asked again:
    the one that took that pod, those whose units it made needed, and those with nominations."""

    def __init__(self, scheduler: Scheduler, units: list[VictimUnit], homes: dict[str, str]) -> None:
        self.s = scheduler
        self.homes = homes
        self.position = {id(u): i for i, u in enumerate(units)}
        self.on_node: dict[str, list[VictimUnit]] = {}
        for unit in units:
            for name in dict.fromkeys(homes[p.uid] for p in unit.pods):
                self.on_node.setdefault(name, []).append(unit)
        #: Units some earlier pod of this placement already needs gone.
        self.needed: set[int] = set()
        nominated = scheduler.snapshot.nominated_on
        self.by_sums = scheduler.preemption_shortcuts and not any(p.anti_affinity or p.uid in nominated for unit in units for p in unit.pods)
        #: The heap's context (framework, node set, pod signature and priority, node specs), entries
        #: (cost, -score, index, token, name) valid while their token is the node's, and each entry's units.
        self._context: tuple[object, ...] | None = None
        self._members: set[str] = set()
        self._heap: list[tuple[tuple[int, int, int], int, int, int, str]] = []
        self._tokens: dict[str, int] = {}
        self._needs: dict[str, list[VictimUnit]] = {}
        #: Nodes to ask again: pods moved on them, units on them became needed, nominations (last pod's).
        self._touched: set[str] = set()
        self._nominated: set[str] = set()

    def watch(self, pod: PodInfo, node: NodeInfo, delta: int) -> None:
        """A pod listener of the cache while the chooser is in use."""
        self._touched.add(node.name)

    def choose(self, framework: Framework, state: CycleState) -> NodeInfo | None:
        dynamic = framework.dynamic_filters(state.pod)
        if not dynamic and self.by_sums and framework.profile.scorers == [framework.fit]:
            return self._choose_by_sums(framework, state)
        best: tuple[tuple[int, int, int], int, int, NodeInfo, list[VictimUnit]] | None = None
        for node in framework.candidates(state).nodes:
            if not framework.passes(state, node, dynamic):
                continue
            needed = self._newly_needed(framework, state, node, local=not dynamic)
            candidate = (self._cost(needed), -framework.score(state, node), node.index, node, needed)
            if best is None or candidate[:3] < best[:3]:
                best = candidate
        if best is None:
            return None
        self._take(best[4])
        return best[3]

    def _cost(self, needed: list[VictimUnit]) -> tuple[int, int, int]:
        if needed:
            return (1, -min(self.position[id(u)] for u in needed), len(needed))
        return (0, 0, 0)

    def _take(self, needed: list[VictimUnit]) -> None:
        homes = self.homes
        for unit in needed:
            self.needed.add(id(unit))
            self._touched.update(homes[p.uid] for p in unit.pods)

    def _choose_by_sums(self, framework: Framework, state: CycleState) -> NodeInfo | None:
        pod = state.pod
        snapshot = self.s.snapshot
        node_set = framework.candidates(state)
        context = (framework.serial, id(node_set), node_set.key, pod.static.key, pod.priority,
                   snapshot.spec_generation)
        nominated = set(snapshot.nominated_on.values())
        if context != self._context:
            self._context = context
            self._members = {n.name for n in node_set.nodes}
            self._heap = []
            self._tokens.clear()
            self._needs.clear()
            stale: list[NodeInfo] = list(node_set.nodes)
        else:
            names = self._touched | self._nominated | nominated
            stale = [snapshot.nodes[name] for name in names if name in self._members and name in snapshot.nodes]
        self._touched.clear()
        self._nominated = nominated
        heap = self._heap
        tokens = self._tokens
        fit = framework.fit
        for node in stale:
            name = node.name
            token = tokens[name] = tokens.get(name, 0) + 1
            if node.nominated:
                if fit.filter(state, node) is not None:
                    continue
            elif not fit.fits(pod, node):
                continue
            needed = self._needed_by_sums(framework, state, node)
            self._needs[name] = needed
            heapq.heappush(heap, (self._cost(needed), -framework.score(state, node), node.index, token, name))
        while heap and tokens.get(heap[0][4]) != heap[0][3]:
            heapq.heappop(heap)
        if not heap:
            return None
        name = heap[0][4]
        self._take(self._needs[name])
        return snapshot.nodes[name]

    def _needed_by_sums(self, framework: Framework, state: CycleState, node: NodeInfo) -> list[VictimUnit]:
        """:meth:`_newly_needed` (local) from the node's sums: the same units, no pod moved."""
        pods = self.s.snapshot.pods
        homes = self.homes
        name = node.name
        more: dict[str, int] = {}
        count = 0
        needed: list[VictimUnit] = []
        for unit in self.on_node.get(name, []):
            if id(unit) in self.needed:
                continue
            trial = dict(more)
            back = 0
            for pod in unit.pods:
                if homes[pod.uid] == name and pod.uid not in pods:
                    back += 1
                    for resource, amount in pod.static.requests.items():
                        trial[resource] = trial.get(resource, 0) + amount
            if framework.filter_node_with(state, node, trial, count + back) is None:
                more, count = trial, count + back
            else:
                needed.append(unit)
        return needed

    def _newly_needed(self, framework: Framework, state: CycleState, node: NodeInfo, *,
                      local: bool = False) -> list[VictimUnit]:
        """Units on ``node`` that must stay away for the pod to fit there, trying the most important
        first (each goes back when the pod still fits with it). ``local``: no inter-pod filter applies to
        the pod, so only what is on ``node`` decides and a unit's pods elsewhere need not go back for the
        check (unless one has anti-affinity terms, which would make the filter apply). The same answer
        for a fraction of the moves: a 64-pod gang unit spans 64 nodes."""
        snapshot = self.s.snapshot
        added: list[PodInfo] = []
        needed: list[VictimUnit] = []
        homes = self.homes
        for unit in self.on_node.get(node.name, []):
            if id(unit) in self.needed:
                continue
            if local and not any(p.anti_affinity for p in unit.pods):
                back = [p for p in unit.pods if homes[p.uid] == node.name and p.uid not in snapshot.pods]
            else:
                back = [p for p in unit.pods if p.uid not in snapshot.pods]
            for pod in back:
                snapshot.add_pod(pod, self.homes[pod.uid])
            if framework.filter_node(state, node) is None:
                added.extend(back)
            else:
                for pod in back:
                    snapshot.remove_pod(pod)
                needed.append(unit)
        for pod in reversed(added):
            snapshot.remove_pod(pod)
        return needed


class WorkloadPreemption:
    def __init__(self, scheduler: Scheduler) -> None:
        self.s = scheduler

    @property
    def units(self) -> Units:
        return self.s.group_cycle.units

    def ongoing(self, pods: list[PodInfo], priority: int) -> bool:
        """A member is nominated to a node where a lower-priority pod still terminates by preemption."""
        snapshot = self.s.snapshot
        for pod in pods:
            node = snapshot.nominated_node_of(pod)
            if node is not None and any(self.units.priority_of(other) < priority and terminating_by_preemption(other)
                                        for other in node.pods.values()):
                return True
        return False

    def preempt(self, *, priority: int, preempt_never: bool, pods: list[PodInfo], exclude: set[GroupKey],
                schedule: Callable[[], Attempt]) -> PreemptionResult:
        """``Preempt`` minus the actuation (see :meth:`actuate`)."""
        s = self.s
        if preempt_never:
            return PreemptionResult(False, NOT_ELIGIBLE_NEVER)
        if self.ongoing(pods, priority):
            if s.version is KubeVersion.V1_37:
                current = [(p, n.name) for p in pods if (n := s.snapshot.nominated_node_of(p)) is not None]
                return PreemptionResult(True, ONGOING, nominations=current)
            return PreemptionResult(False, NOT_ELIGIBLE_TERMINATING)
        units = self.units.all_units(priority, exclude)
        if not units:
            return PreemptionResult(False, NO_VICTIMS, unresolvable=True)
        snapshot = s.snapshot
        placer = s.group_cycle.placer
        homes = {p.uid: p.node_name or "" for unit in units for p in unit.pods}
        with snapshot.dry_run():
            for unit in units:
                for pod in unit.pods:
                    snapshot.remove_pod(pod)
            try:
                chooser = VictimAwareChooser(s, units, homes)
                placer.chooser = chooser.choose
                snapshot.pod_listeners.append(chooser.watch)
                try:
                    attempt = schedule()
                finally:
                    placer.chooser = None
                    snapshot.pod_listeners.remove(chooser.watch)
                assignments = list(attempt.assignments)
                attempt.rollback()
                if not attempt.feasible:
                    return PreemptionResult(False, attempt.message)
                victims: list[VictimUnit] = []
                placement_nodes = {node.name for _pod, node in assignments}
                dynamic: dict[bool, bool] = {}
                for unit in units:
                    for pod in unit.pods:
                        snapshot.add_pod(pod, homes[pod.uid])
                    if self._elsewhere(unit, homes, placement_nodes, assignments, dynamic):
                        continue  # reprieved: it cannot change what the placements' nodes hold
                    if not self._placements_pass(self._affected(unit, homes, assignments, dynamic)):
                        for pod in unit.pods:
                            snapshot.remove_pod(pod)
                        victims.append(unit)
            finally:
                for unit in units:
                    for pod in unit.pods:
                        if pod.uid not in snapshot.pods:
                            snapshot.add_pod(pod, homes[pod.uid])
        result = PreemptionResult(True, "", victims, [(pod, node.name) for pod, node in assignments])
        result.message = found_message(result.victim_pods)
        return result

    def _elsewhere(self, unit: VictimUnit, homes: dict[str, str], placement_nodes: set[str],
                   assignments: list[tuple[PodInfo, NodeInfo]], dynamic: dict[bool, bool]) -> bool:
        """The unit (just put back) has no pod on a node of the placements and no inter-pod filter applies
        to a placed pod: each placement's filters read only its own node, which the unit does not touch,
        and every placement passed before it came back, so :meth:`_placements_pass` would say True. (On
        the week of bench_contended.py, most units of a 64-pod preemptor are elsewhere: the full check
        moved millions of pods in and out of the cache.) ``dynamic`` keeps whether an inter-pod filter
        applies to a placed pod, by whether the cache holds a pod with anti-affinity: the only thing
        besides the pod's own terms that InterPodAffinity's ``applies_to`` reads."""
        if any(homes[pod.uid] in placement_nodes for pod in unit.pods):
            return False
        return not self._dynamic(assignments, dynamic)

    def _dynamic(self, assignments: list[tuple[PodInfo, NodeInfo]], dynamic: dict[bool, bool]) -> bool:
        anti = bool(self.s.snapshot.anti_affinity_pods)
        applies = dynamic.get(anti)
        if applies is None:
            framework_for = self.s.framework_for
            applies = dynamic[anti] = any(framework_for(pod).dynamic_filters(pod) for pod, _node in assignments)
        return applies

    def _affected(self, unit: VictimUnit, homes: dict[str, str], assignments: list[tuple[PodInfo, NodeInfo]],
                  dynamic: dict[bool, bool]) -> list[tuple[PodInfo, NodeInfo]]:
        """The placements :meth:`_placements_pass` must check once ``unit`` is back. With no inter-pod
        filter on a placed pod, a placement's filters read its own node only: those on nodes the unit
        does not touch passed in the state they are in now (every step of the reprieve ends with all of
        them passing) and pass again. Kept besides: the placements of pods with a nomination, whose
        assumption takes the reservation off their nominated node, which later placements there see. The
        subsequence keeps the order, so each check sees the same earlier placements on its node."""
        if not self.s.preemption_shortcuts or self._dynamic(assignments, dynamic):
            return assignments
        touched = {homes[pod.uid] for pod in unit.pods}
        nominated = self.s.snapshot.nominated_on
        return [(pod, node) for pod, node in assignments if node.name in touched or pod.uid in nominated]

    def _placements_pass(self, assignments: list[tuple[PodInfo, NodeInfo]]) -> bool:
        """``reprieveVictim``: every placement passes the filters, the earlier ones assumed."""
        snapshot = self.s.snapshot
        assumed: list[PodInfo] = []
        try:
            for pod, node in assignments:
                if self.s.framework_for(pod).filter_node(CycleState(pod), node) is not None:
                    return False
                snapshot.add_pod(pod, node.name)
                assumed.append(pod)
            return True
        finally:
            for pod in reversed(assumed):
                snapshot.remove_pod(pod)

    def actuate(self, preemptor: GroupKey, kind: str, result: PreemptionResult) -> None:
        s = self.s
        state = s.groups.state(preemptor)
        state.preempted_in_cycle = s.queue.scheduling_cycle
        uid = str(((state.obj or {}).get("metadata") or {}).get("uid") or display_name(preemptor))
        who = f"{'CompositePodGroup' if kind == 'compositepodgroup' else 'PodGroup'} {display_name(preemptor)}"
        for unit in result.victims:
            if unit.group is not None:
                s.actuator.group_preempted(s.groups.state(unit.group), who)
            for pod in unit.pods:
                if pod.terminating:
                    continue  # ``prepareCandidate``: graceful deletion already under way
                s.actuator.preempt_pod(pod, who, uid, GROUP_CANDIDATE, pod.scheduler_name, kind=kind)
        for pod, node_name in result.nominations:
            s.actuator.nominate(pod, node_name)
