"""Placing a group of pods in one consistent pass: the core of the PodGroup (1.36) and workload (1.37)
scheduling cycles, with topology-aware placement (KEP-5732, scheduling.md §1.7).

Without a topology constraint the group's pods are filtered, scored and *assumed* one after another
against one cache, so later pods see earlier ones (scheduling.md §1.3). With a constraint
``schedulingConstraints.topology[0].key``:

1. placements: one per distinct value of the label (nodes without it are in none); if members are
   already bound, only the placement holding all of them;
2. feasibility: the default algorithm restricted to the placement; feasible when ≥ ``minCount`` pods
   (gang) or ≥ 1 pod (basic) fit, counting members already bound there;
3. scoring: more pods placed first (PodGroupPodsCount), then the highest allocation fraction
   (existing usage + the group's usage) / capacity of the placement, averaged over the resources the
   group requests (our reading of the KEP's NodeResourcesFit placement score). Ties (U7, unspecified
   upstream): the smallest label value in string order.

Fast path (issue #5, "feasibility per signature once per cycle"): when every pod shares one signature
and nothing dynamic applies (no inter-pod affinity anywhere, no nominated pods in the domain), a
domain's capacity for the group is the sum over its nodes of how many copies fit, cached per domain
version, so a gang costs a lookup per domain, not a simulation. The chosen domain is then placed pod
by pod for real.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jobsetctl.fakecluster.scheduler.domainindex import DomainIndex
from jobsetctl.fakecluster.scheduler.interface import CycleState, Status
from jobsetctl.fakecluster.scheduler.plugins.noderesources import least_allocated
from jobsetctl.fakecluster.scheduler.podinfo import PodInfo
from jobsetctl.fakecluster.scheduler.snapshot import NodeInfo, NodeSet

if TYPE_CHECKING:
    from jobsetctl.fakecluster.scheduler.framework import Framework
    from jobsetctl.fakecluster.scheduler.scheduler import Scheduler


@dataclass(slots=True)
class Placement:
    placed: list[tuple[PodInfo, NodeInfo]] = field(default_factory=list)
    failed: list[tuple[PodInfo, CycleState, Status | None]] = field(default_factory=list)
    #: Chosen topology domains as ``key=value``.
    domains: list[str] = field(default_factory=list)
    #: The domain the "why it waits" text refers to (the best infeasible one), a label value.
    focus: str | None = None
    aborted: bool = False
    #: Scope (node set) the failures were evaluated in, for diagnosis.
    scope: NodeSet | None = None
    #: Pods evaluated before the pass ended (PlacementFeasible may end it early).
    evaluated: int = 0
    #: With a topology constraint: how many placements (domains) were tried, and the first one's outcome
    #: as (pods placed, pods evaluated) for the "first placement status" of the failure message.
    placements: int = 1
    first: tuple[int, int] | None = None
    #: 1.36 without workload-aware preemption: pods placed on a node their own preemption freed.
    preempting: set[str] = field(default_factory=set)

    @property
    def count(self) -> int:
        return len(self.placed)


class DomainVersions:
    """Per (label key, value) counters bumped whenever a pod lands on or leaves a node of the domain."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.s = scheduler
        self.keys: set[str] = set()
        self.versions: dict[tuple[str, str], int] = {}
        #: Called with (key, value) whenever a tracked domain changes (the domain index marks it dirty).
        self.listeners: list[Callable[[str, str], None]] = []
        scheduler.snapshot.pod_listeners.append(self._on_pod)

    def track(self, key: str) -> None:
        self.keys.add(key)

    def _on_pod(self, pod: PodInfo, node: NodeInfo, delta: int) -> None:
        for key in self.keys:
            value = node.labels.get(key)
            if value is not None:
                pair = (key, value)
                self.versions[pair] = self.versions.get(pair, 0) + 1
                for listener in self.listeners:
                    listener(key, value)

    def version(self, key: str, value: str) -> int:
        return self.versions.get((key, value), 0)


#: Picks a node for a pod instead of the default filter/score (the victim-aware choice of preemption).
Chooser = Callable[["Framework", CycleState], "NodeInfo | None"]
#: Called for a pod that found no node; returns a node to assume it on (1.36 per-pod preemption), or None.
OnFail = Callable[[PodInfo, CycleState, "Status | None", Placement], "NodeInfo | None"]


class Placer:
    def __init__(self, scheduler: Scheduler) -> None:
        self.s = scheduler
        self.domain_versions = DomainVersions(scheduler)
        self.domain_index = DomainIndex(self)
        self._estimates: dict[tuple[str, str, str], tuple[int, int, int, dict[str, int], dict[str, int]]] = {}
        #: pod signature key -> node name -> (node, its version, copies that fit, requested and allocatable
        #: amounts of the signature's resources): :meth:`domain_stats`'s per-node parts.
        self._node_stats: dict[str, dict[str, tuple[NodeInfo, int, int, tuple[int, ...], tuple[int, ...]]]] = {}
        #: Set while workload-aware preemption places a group with its victims removed.
        self.chooser: Chooser | None = None

    # ---- sequential placement ----------------------------------------------------------------------
    def place(self, pods: list[PodInfo], restrict: NodeSet | None, stop: Callable[[int, int], bool] | None = None,
              on_fail: OnFail | None = None) -> Placement:
        """Assume pods one by one (kept in the cache: call :meth:`rollback` or bind them).
        ``stop(placed, remaining)`` ends the pass early (1.37 PlacementFeasible ``Unschedulable``)."""
        s = self.s
        if (restrict is not None and restrict.index is None and len(pods) > 1 and on_fail is None
                and self.fast_path(pods)):
            quick = self._place_identical(pods, restrict, stop)
            if quick is not None:
                return quick
        result = Placement(scope=restrict)
        chooser = self.chooser
        # Pods of one signature, scored by resource fit alone, no nominations: a usage bucket's fit and
        # score hold for every pod of the run (see ``Framework.find_node``).
        memo_framework = s.framework_for(pods[0]) if pods and on_fail is None and len(pods) > 1 else None
        if memo_framework is not None and (memo_framework.profile.scorers != [memo_framework.fit]
                                           or not self.fast_path(pods)):
            memo_framework = None
        bucket_memo: dict[Any, tuple[bool, int]] = {}
        for index, pod in enumerate(pods):
            framework = s.framework_for(pod)
            state = CycleState(pod, restrict=restrict, in_group_cycle=True)
            prefilter = framework.run_pre_filter(state)
            node = None
            if prefilter is None:
                if chooser is not None:
                    node = chooser(framework, state)
                else:
                    node = framework.find_node(state, bucket_memo if framework is memo_framework else None)
            if node is None and on_fail is not None:
                node = on_fail(pod, state, prefilter, result)
                if node is not None:
                    result.preempting.add(pod.uid)
            if node is None:
                result.failed.append((pod, state, prefilter))
            else:
                s.snapshot.add_pod(pod, node.name)
                result.placed.append((pod, node))
            result.evaluated = index + 1
            if stop is not None and stop(result.count, len(pods) - index - 1):
                result.aborted = index < len(pods) - 1
                break
        return result

    def _place_identical(self, pods: list[PodInfo], restrict: NodeSet, stop: Callable[[int, int], bool] | None,
                         ) -> Placement | None:
        """Identical pods on a small node set: score every node once, then re-score only the node that
        took a pod — the same choices as filtering and scoring the whole set for each pod (nothing else
        changes between two pods), at a fraction of the work. A node's fit and score depend only on its
        usage bucket key (capacity class and usage; no nominated pods on the fast path), so each key is
        worked out once (by its number: hashing the key itself cost more than the scoring it saved); the
        best node (highest score, then lowest index) is the top of a heap."""
        s = self.s
        first = pods[0]
        framework = s.framework_for(first)
        if framework.profile.scorers != [framework.fit]:
            return None
        probe = CycleState(first, restrict=restrict, in_group_cycle=True)
        if framework.run_pre_filter(probe) is not None:
            return None
        fits = framework.fit.fits
        # usage bucket key (its number) -> the negated score of a node with that key, or None where the pod
        # does not fit
        by_key: dict[int, int | None] = {}
        heap: list[tuple[int, int, NodeInfo]] = []
        for node in framework.candidates(probe).nodes:
            key = node.bucket_id
            if key is None:
                key = node.current_id()
            if key in by_key:
                score = by_key[key]
            else:
                score = by_key[key] = -least_allocated(first, node) if fits(first, node) else None
            if score is not None:
                heap.append((score, node.index, node))
        heapq.heapify(heap)
        add_pod = s.snapshot.add_pod
        result = Placement(scope=restrict)
        for index, pod in enumerate(pods):
            if heap:
                node = heap[0][2]
                add_pod(pod, node.name)
                result.placed.append((pod, node))
                # The node that took the pod is scored again directly: its new key would cost more to
                # work out than the fit and the score.
                score = -least_allocated(first, node) if fits(first, node) else None
                if score is not None:
                    heapq.heapreplace(heap, (score, node.index, node))
                else:
                    heapq.heappop(heap)
            else:
                result.failed.append((pod, CycleState(pod, restrict=restrict, in_group_cycle=True), None))
            result.evaluated = index + 1
            if stop is not None and stop(result.count, len(pods) - index - 1):
                result.aborted = index < len(pods) - 1
                break
        return result

    def rollback(self, result: Placement) -> None:
        for pod, _ in reversed(result.placed):
            self.s.snapshot.remove_pod(pod)

    # ---- topology ----------------------------------------------------------------------------------
    def fast_path(self, pods: list[PodInfo]) -> bool:
        """Whether a domain's capacity for ``pods`` can be computed without simulating them: one shared
        signature, no inter-pod affinity anywhere, no nominated pods (their reservations are per pod)."""
        s = self.s
        first = pods[0]
        if s.snapshot.anti_affinity_pods or s.snapshot.nominated:
            return False
        if self.chooser is not None:
            return False
        return all(p.static is first.static and not p.has_affinity_terms for p in pods)

    def place_in_domains(
        self, pods: list[PodInfo], key: str, need: int, bound_nodes: list[str], stop: Callable[[int, int], bool] | None,
        scope: set[str] | None = None,
    ) -> Placement:
        s = self.s
        self.domain_versions.track(key)
        domains = s.snapshot.domains(key)
        required: str | None = None
        if bound_nodes:
            values = {s.snapshot.nodes[n].labels.get(key) for n in bound_nodes if n in s.snapshot.nodes}
            if len(values) != 1 or None in values:
                return Placement(failed=[(p, CycleState(p), None) for p in pods])
            required = next(iter(values))
        fast = self.fast_path(pods)
        if fast and scope is None and required is None:
            chosen = self.domain_index.best(key, pods, domains)
            if chosen is not None:
                return self._commit(pods, key, chosen, domains[chosen], scope, stop)
        best: tuple[int, float, str] | None = None
        closest: tuple[int, str] | None = None
        bound_set = set(bound_nodes)
        tried = 0
        first: tuple[int, int] | None = None
        for value, nodes in domains.items():
            if required is not None and value != required:
                continue
            if scope is not None:
                nodes = [n for n in nodes if n.name in scope]
                if not nodes:
                    continue
            if fast:
                # The fraction only ranks feasible domains and the evaluated count only describes the
                # first one: a failing gang's scan over every domain (a fifth of the day's gangs wait,
                # each retry scans) works out neither for the others.
                count = self._estimate_count(pods, key, value, nodes)
                fraction = None
                evaluated = _evaluated(len(pods), count, stop) if first is None else 0
            else:
                trial = self.place(pods, self._node_set(key, value, nodes, scope), stop)
                count, fraction, evaluated = trial.count, self._fraction(pods[: trial.count], nodes), trial.evaluated
                self.rollback(trial)
            tried += 1
            if first is None:
                first = (count, evaluated)
            bound_here = sum(1 for n in nodes if n.name in bound_set) if bound_set else 0
            if closest is None or count + bound_here > closest[0]:
                closest = (count + bound_here, value)
            if count + bound_here >= need and count > 0:
                if fraction is None:
                    fraction = self._estimate_fraction(pods, key, value, count)
                candidate = (count, fraction, value)
                if best is None or (candidate[0], candidate[1]) > (best[0], best[1]):
                    best = candidate
        if best is None:
            focus = closest[1] if closest is not None else None
            if focus is None:
                return Placement(failed=[(p, CycleState(p), None) for p in pods], placements=0)
            nodes = [n for n in domains[focus] if scope is None or n.name in scope]
            # The closest infeasible domain, placed for real so the caller can explain the failure; the
            # caller rolls it back.
            trial = self.place(pods, self._node_set(key, focus, nodes, scope), stop)
            trial.focus = focus
            trial.placements, trial.first = tried, first
            return trial
        committed = self._commit(pods, key, best[2], domains[best[2]], scope, stop)
        committed.placements, committed.first = tried, first
        return committed

    def _commit(self, pods: list[PodInfo], key: str, value: str, nodes: list[NodeInfo], scope: set[str] | None,
                stop: Callable[[int, int], bool] | None) -> Placement:
        nodes = [n for n in nodes if scope is None or n.name in scope]
        result = self.place(pods, self._node_set(key, value, nodes, scope), stop)
        result.domains = [f"{key}={value}"]
        result.focus = value
        return result

    def _node_set(self, key: str, value: str, nodes: list[NodeInfo], scope: set[str] | None) -> NodeSet:
        scope_key = None if scope is None else hash(frozenset(scope))
        return self.s.snapshot.node_set(("domain", key, value, scope_key), lambda: list(nodes))

    def domain_stats(self, pod: PodInfo, nodes: list[NodeInfo]) -> tuple[int, dict[str, int], dict[str, int]]:
        """(copies of ``pod`` that fit, requested sums, allocatable sums) over a domain's nodes."""
        s = self.s
        framework = s.framework_for(pod)
        passing = framework.static_result(CycleState(pod)).passing_names
        fit_count = framework.fit.fit_count
        resources = tuple(pod.requests)
        # A domain is recomputed whenever one of its nodes changed, but most of its nodes did not: each
        # node's part is kept per pod signature until the node's ``version`` moves (every pod added or
        # removed, every spec change bumps it; a re-added node is a new NodeInfo).
        memo = self._node_stats.get(pod.static.key)
        if memo is None:
            memo = self._node_stats[pod.static.key] = {}
        capacity = 0
        requested_rows: list[tuple[int, ...]] = []
        allocatable_rows: list[tuple[int, ...]] = []
        for node in nodes:
            entry = memo.get(node.name)
            if entry is None or entry[0] is not node or entry[1] != node.version:
                requested, node_allocatable = node.requested, node.allocatable
                entry = memo[node.name] = (
                    node, node.version, fit_count(pod, node),
                    tuple([requested.get(resource, 0) for resource in resources]),
                    tuple([node_allocatable.get(resource, 0) for resource in resources]),
                )
            if node.name in passing:
                capacity += entry[2]
            requested_rows.append(entry[3])
            allocatable_rows.append(entry[4])
        used = dict(zip(resources, map(sum, zip(*requested_rows, strict=True)), strict=True)) if requested_rows else {}
        allocatable = dict(zip(resources, map(sum, zip(*allocatable_rows, strict=True)), strict=True)) if allocatable_rows else {}
        return capacity, used, allocatable

    def _estimate_count(self, pods: list[PodInfo], key: str, value: str, nodes: list[NodeInfo]) -> int:
        """How many of ``pods`` fit in the domain, without simulating (the fast path applies); the
        domain's sums stay cached for :meth:`_estimate_fraction`."""
        first = pods[0]
        cache_key = (key, value, first.static.key)
        generation = self.s.snapshot.spec_generation
        version = self.domain_versions.versions.get((key, value), 0)
        cached = self._estimates.get(cache_key)
        if cached is None or cached[0] != generation or cached[1] != version:
            capacity, used, allocatable = self.domain_stats(first, nodes)
            cached = self._estimates[cache_key] = (generation, version, capacity, used, allocatable)
        return min(len(pods), cached[2])

    def _estimate_fraction(self, pods: list[PodInfo], key: str, value: str, count: int) -> float:
        """The allocation fraction of the domain with ``count`` of ``pods`` placed, from the sums
        :meth:`_estimate_count` just cached."""
        first = pods[0]
        _, _, _, used, allocatable = self._estimates[(key, value, first.static.key)]
        return _fraction(first.requests, count, used, allocatable)

    def _fraction(self, pods: list[PodInfo], nodes: list[NodeInfo]) -> float:
        """Allocation fraction of a domain whose nodes already hold the trial's assumed pods."""
        if not pods:
            return 0.0
        resources = {r for p in pods for r in p.requests}
        used = {r: sum(n.requested.get(r, 0) for n in nodes) for r in resources}
        allocatable = {r: sum(n.allocatable.get(r, 0) for n in nodes) for r in resources}
        return _fraction({}, 0, used, allocatable)


def _evaluated(pods: int, fit: int, stop: Callable[[int, int], bool] | None) -> int:
    """How many of ``pods`` identical pods a pass evaluates when ``fit`` of them fit: the point where
    ``stop`` (PlacementFeasible) ends it, else all."""
    placed = 0
    for index in range(pods):
        placed = min(placed + 1, fit)
        if stop is not None and stop(placed, pods - index - 1):
            return index + 1
    return pods


def _fraction(requests: dict[str, int], count: int, used: dict[str, int], allocatable: dict[str, int]) -> float:
    fractions = [
        (used.get(r, 0) + requests.get(r, 0) * count) / allocatable[r]
        for r in sorted(allocatable) if allocatable[r] > 0
    ]
    return sum(fractions) / len(fractions) if fractions else 0.0
