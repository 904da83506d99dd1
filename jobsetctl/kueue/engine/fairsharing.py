"""Fair sharing (``fairSharing`` in Kueue's Configuration): dominant resource shares, the admission
tournament and fair-sharing preemption (``pkg/cache/scheduler/fair_sharing.go``,
``pkg/scheduler/fair_sharing_iterator.go``, ``pkg/scheduler/preemption/fairsharing``, KEP-1714).

A node's dominant resource share (DRS) is, over the resources it borrows (usage above its subtree
quota), the largest ratio borrowed x 1000 / lendable (what the parent subtree could lend it, summed over
flavors), divided by its fair weight; a zero weight that borrows is +Inf.

Admission: within a Cohort tree the next workload is chosen by a tournament from the root: at each
Cohort the child whose DRS (with its candidate workload admitted) is lowest wins; with
FairSharingPrioritizeNonBorrowing (beta, on) a child not borrowing on the workload's resources beats
one that is; then priority, then FIFO.

Preemption: ClusterQueues are visited from the one with the highest DRS (``TargetClusterQueueOrdering``);
a candidate of another ClusterQueue is preempted when the preemptor's share after admission is at most
the target's share after removal (``LessThanOrEqualToFinalShare``), else kept for the second strategy
(``LessThanInitialShare``); a preemptor within its nominal quota may reclaim regardless
(FairSharingPreemptWithinNominal, beta, on).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jobsetctl.kueue.engine import names
from jobsetctl.kueue.engine.amounts import FRQuantities
from jobsetctl.kueue.engine.candidates import satisfies_policy
from jobsetctl.kueue.engine.preemption import Target, uses_resources
from jobsetctl.kueue.engine.quota import ResourceNode, add_usage_map, potential_available, remove_usage_map

if TYPE_CHECKING:
    from jobsetctl.kueue.engine.core import Engine
    from jobsetctl.kueue.engine.preemption import Preemptor, _Context
    from jobsetctl.kueue.engine.scheduler import Entry
    from jobsetctl.kueue.engine.workload import WorkloadInfo

LESS_THAN_OR_EQUAL_TO_FINAL_SHARE = "LessThanOrEqualToFinalShare"
LESS_THAN_INITIAL_SHARE = "LessThanInitialShare"


@dataclass(frozen=True, slots=True)
class DRS:
    weight: float
    ratio: float
    dominant: str
    borrowing: bool = False
    borrowed: tuple[tuple[str, str], ...] = ()

    @property
    def zero(self) -> bool:
        return self.ratio == 0

    def zero_weight_borrows(self) -> bool:
        return self.weight == 0 and not self.zero

    def share(self) -> float:
        """``PreciseWeightedShare``."""
        if self.zero:
            return 0.0
        if self.weight == 0:
            return math.inf
        return self.ratio / self.weight

    def borrowing_on(self, requested: FRQuantities) -> bool:
        return any(requested.get(fr, 0) > 0 for fr in self.borrowed)


NEGATIVE = DRS(1.0, -1.0, "")


def compare(a: DRS, b: DRS) -> int:
    """``CompareDRS``."""
    az, bz = a.zero_weight_borrows(), b.zero_weight_borrows()
    if az and bz:
        return (a.ratio > b.ratio) - (a.ratio < b.ratio)
    if az:
        return 1
    if bz:
        return -1
    sa, sb = a.share(), b.share()
    return (sa > sb) - (sa < sb)


def dominant_resource_share(node: ResourceNode, request: FRQuantities | None = None) -> DRS:
    """``dominantResourceShare``."""
    if node.parent is None:
        return DRS(node.fair_weight, 0.0, "")
    request = request or {}
    borrowed: list[tuple[str, str]] = []
    per_resource: dict[str, int] = {}
    for fr, quota in node.subtree_quota.items():
        amount = request.get(fr, 0) + node.usage.get(fr, 0) - quota
        if amount > 0:
            per_resource[fr[1]] = per_resource.get(fr[1], 0) + amount
            borrowed.append(fr)
    if not per_resource:
        return DRS(node.fair_weight, 0.0, "")
    lendable = _lendable(node.parent)
    ratio, dominant = 0.0, ""
    for resource, amount in per_resource.items():
        capacity = lendable.get(resource, 0)
        if capacity > 0:
            value = amount * 1000.0 / capacity
            if value > ratio or (value == ratio and resource < dominant):
                ratio, dominant = value, resource
    return DRS(node.fair_weight, ratio, dominant, True, tuple(borrowed))


def _lendable(node: ResourceNode) -> dict[str, int]:
    """``calculateLendable``: what ``node`` could lend, per resource name over flavors."""
    root = node.root()
    out: dict[str, int] = {}
    for fr in root.subtree_quota:
        out[fr[1]] = out.get(fr[1], 0) + potential_available(node, fr)
    return out


class FairSharing:
    def __init__(self, engine: Engine, strategies: tuple[str, ...]) -> None:
        self.engine = engine
        self.strategies = strategies or (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE)

    # ---- admission order -------------------------------------------------------------------------------
    def order_entries(self, entries: list[Entry]) -> list[Entry]:
        """``fairSharingIterator``: pop order of the entries, one tournament per pop."""
        remaining = {id(e.cq): e for e in entries if e.cq is not None}
        out: list[Entry] = []
        while remaining:
            entry = next(iter(remaining.values()))
            cq = entry.cq
            assert cq is not None
            if cq.node.parent is None:
                out.append(entry)
                del remaining[id(cq)]
                continue
            root = cq.node.root()
            drs, requested = self._compute(root, remaining)
            winner = self._tournament(root, remaining, drs, requested)
            if winner is None:
                winner = entry
            out.append(winner)
            del remaining[id(winner.cq)]
        return out

    def _compute(self, root: ResourceNode, remaining: dict[int, Entry]) -> tuple[dict[tuple[str, str], DRS],
                                                                                dict[str, FRQuantities]]:
        drs: dict[tuple[str, str], DRS] = {}
        requested: dict[str, FRQuantities] = {}
        by_node = {id(e.cq.node): e for e in remaining.values() if e.cq is not None}
        for cq_node in root.subtree_cluster_queues():
            entry = by_node.get(id(cq_node))
            if entry is None:
                continue
            usage = entry.assignment.usage
            add_usage_map(cq_node, usage)
            try:
                requested[entry.info.key] = usage
                value = dominant_resource_share(cq_node)
                for ancestor in cq_node.ancestors():
                    drs[(ancestor.name, entry.info.key)] = value
                    value = dominant_resource_share(ancestor)
            finally:
                remove_usage_map(cq_node, usage)
        return drs, requested

    def _tournament(self, cohort: ResourceNode, remaining: dict[int, Entry], drs: dict[tuple[str, str], DRS],
                    requested: dict[str, FRQuantities]) -> Entry | None:
        candidates: list[Entry] = []
        for child in cohort.child_cohorts.values():
            winner = self._tournament(child, remaining, drs, requested)
            if winner is not None:
                candidates.append(winner)
        by_node = {id(e.cq.node): e for e in remaining.values() if e.cq is not None}
        for child_cq in cohort.child_cqs.values():
            entry = by_node.get(id(child_cq))
            if entry is not None:
                candidates.append(entry)
        if not candidates:
            return None
        best = candidates[0]
        for current in candidates[1:]:
            if self._less(current, best, cohort.name, drs, requested):
                best = current
        return best

    def _less(self, a: Entry, b: Entry, parent: str, drs: dict[tuple[str, str], DRS],
              requested: dict[str, FRQuantities]) -> bool:
        engine = self.engine
        a_drs = drs.get((parent, a.info.key), NEGATIVE)
        b_drs = drs.get((parent, b.info.key), NEGATIVE)
        if engine.settings.gate("FairSharingPrioritizeNonBorrowing"):
            a_b = a_drs.borrowing_on(requested.get(a.info.key, {}))
            b_b = b_drs.borrowing_on(requested.get(b.info.key, {}))
            if a_b != b_b:
                return not a_b
        c = compare(a_drs, b_drs)
        if c != 0:
            return c == -1
        if engine.settings.gate("PrioritySortingWithinCohort") and a.info.priority != b.info.priority:
            return a.info.priority > b.info.priority
        return engine.queues.queue_order_timestamp(a.info) < engine.queues.queue_order_timestamp(b.info)

    # ---- preemption --------------------------------------------------------------------------------------
    def preemptions(self, preemptor: Preemptor, ctx: _Context) -> list[Target]:
        """``fairPreemptions``."""
        candidates = self._candidates(preemptor, ctx)
        if not candidates:
            return []
        key = preemptor.candidates_key(ctx.cq.name)
        candidates.sort(key=key)
        add_usage_map(ctx.cq.node, ctx.usage)
        try:
            fits, targets, retry = self._first(preemptor, ctx, candidates, self.strategies[0])
            if not fits and len(self.strategies) > 1:
                fits, targets = self._second(preemptor, ctx, retry, targets)
        finally:
            remove_usage_map(ctx.cq.node, ctx.usage)
        if not fits:
            for target in targets:
                preemptor.add(target.info)
            return []
        targets = preemptor.fill_back(ctx, targets, True)
        for target in targets:
            preemptor.add(target.info)
        return targets

    def _fits(self, preemptor: Preemptor, ctx: _Context) -> bool:
        remove_usage_map(ctx.cq.node, ctx.usage)
        try:
            return preemptor.fits(ctx, True)
        finally:
            add_usage_map(ctx.cq.node, ctx.usage)

    def _candidates(self, preemptor: Preemptor, ctx: _Context) -> list[WorkloadInfo]:
        """``findCandidates``."""
        out: list[WorkloadInfo] = []
        policy = ctx.cq.spec.preemption
        cache = preemptor.cache
        if policy.within_cluster_queue != names.NEVER:
            out.extend(w for w in ctx.cq.workloads.values()
                       if satisfies_policy(ctx.info, w, policy.within_cluster_queue, preemptor.order_ts)
                       and uses_resources(w, ctx.frs))
        if ctx.cq.node.parent is not None and policy.reclaim_within_cohort != names.NEVER:
            for node in ctx.cq.node.root().subtree_cluster_queues():
                if node is ctx.cq.node or node.parent is None or not any(node.borrowing(fr) for fr in ctx.frs):
                    continue
                state = cache.cluster_queues.get(node.name)
                if state is None:
                    continue
                out.extend(w for w in state.workloads.values()
                           if satisfies_policy(ctx.info, w, policy.reclaim_within_cohort, preemptor.order_ts)
                           and uses_resources(w, ctx.frs))
        return out

    def _first(self, preemptor: Preemptor, ctx: _Context, candidates: list[WorkloadInfo],
               strategy: str) -> tuple[bool, list[Target], list[WorkloadInfo]]:
        ordering = _Ordering(self, preemptor, ctx, candidates)
        targets: list[Target] = []
        retry: list[WorkloadInfo] = []
        within_nominal = (self.engine.settings.gate("FairSharingPreemptWithinNominal")
                          and not any(ctx.cq.node.borrowing(fr) for fr in ctx.frs))
        for target_cq in ordering.iterate():
            if target_cq is ctx.cq.node:
                candidate = ordering.pop(target_cq)
                preemptor.remove(candidate)
                targets.append(Target(candidate, names.IN_CLUSTER_QUEUE, candidate.cluster_queue))
                if self._fits(preemptor, ctx):
                    return True, targets, []
                continue
            if within_nominal:
                candidate = ordering.pop(target_cq)
                preemptor.remove(candidate)
                targets.append(Target(candidate, names.IN_COHORT_RECLAMATION, candidate.cluster_queue))
                if self._fits(preemptor, ctx):
                    return True, targets, []
                continue
            preemptor_new, target_old = ordering.shares(target_cq)
            if math.isinf(preemptor_new.share()) and not math.isinf(target_old.share()):
                while ordering.has(target_cq):
                    retry.append(ordering.pop(target_cq))
                continue
            while ordering.has(target_cq):
                candidate = ordering.pop(target_cq)
                target_new = ordering.share_after_removal(target_cq, candidate)
                if _passes(strategy, preemptor_new, target_old, target_new):
                    preemptor.remove(candidate)
                    targets.append(Target(candidate, names.IN_COHORT_FAIR_SHARING, candidate.cluster_queue))
                    if self._fits(preemptor, ctx):
                        return True, targets, []
                    break
                retry.append(candidate)
        return False, targets, retry

    def _second(self, preemptor: Preemptor, ctx: _Context, retry: list[WorkloadInfo],
                targets: list[Target]) -> tuple[bool, list[Target]]:
        """Rule S2-b (``runSecondFsStrategy``)."""
        ordering = _Ordering(self, preemptor, ctx, retry)
        for target_cq in ordering.iterate():
            preemptor_new, target_old = ordering.shares(target_cq)
            passed = compare(preemptor_new, target_old) < 0
            candidate = ordering.pop(target_cq)
            if passed:
                preemptor.remove(candidate)
                targets.append(Target(candidate, names.IN_COHORT_FAIR_SHARING, candidate.cluster_queue))
                if self._fits(preemptor, ctx):
                    return True, targets
            ordering.drop(target_cq)
        return False, targets


def _passes(strategy: str, preemptor_new: DRS, target_old: DRS, target_new: DRS) -> bool:
    if strategy == LESS_THAN_INITIAL_SHARE:
        return compare(preemptor_new, target_old) < 0
    return compare(preemptor_new, target_new) <= 0


class _Ordering:
    """``TargetClusterQueueOrdering``: from the root, the child with the highest DRS that still has
    candidates, down to a ClusterQueue."""

    def __init__(self, fair: FairSharing, preemptor: Preemptor, ctx: _Context, candidates: list[WorkloadInfo]) -> None:
        self.fair = fair
        self.preemptor = preemptor
        self.ctx = ctx
        self.by_cq: dict[str, list[WorkloadInfo]] = {}
        for candidate in candidates:
            self.by_cq.setdefault(candidate.cluster_queue, []).append(candidate)
        self.ancestors = {id(a) for a in ctx.cq.node.ancestors()}
        self.pruned_cqs: set[int] = set()
        self.pruned_cohorts: set[int] = set()

    def has(self, node: ResourceNode) -> bool:
        return bool(self.by_cq.get(node.name))

    def pop(self, node: ResourceNode) -> WorkloadInfo:
        return self.by_cq[node.name].pop(0)

    def drop(self, node: ResourceNode) -> None:
        self.pruned_cqs.add(id(node))

    def iterate(self) -> Any:
        cq = self.ctx.cq.node
        if cq.parent is None:
            while id(cq) not in self.pruned_cqs and self.has(cq):
                yield cq
            return
        root = cq.root()
        while id(root) not in self.pruned_cohorts:
            target = self._next(root)
            if target is not None:
                yield target

    def _next(self, cohort: ResourceNode) -> ResourceNode | None:
        key = self.preemptor.candidates_key(self.ctx.cq.name)
        highest: ResourceNode | None = None
        highest_drs = NEGATIVE
        for cq in cohort.child_cqs.values():
            if id(cq) in self.pruned_cqs:
                continue
            drs = dominant_resource_share(cq)
            if (not drs.borrowing and cq is not self.ctx.cq.node) or not self.has(cq):
                self.pruned_cqs.add(id(cq))
                continue
            c = compare(drs, highest_drs)
            if c == 0 and highest is not None:
                if key(self.by_cq[cq.name][0]) < key(self.by_cq[highest.name][0]):
                    highest = cq
            elif c == 1:
                highest, highest_drs = cq, drs
        highest_cohort: ResourceNode | None = None
        highest_cohort_drs = NEGATIVE
        for child in cohort.child_cohorts.values():
            if id(child) in self.pruned_cohorts:
                continue
            drs = dominant_resource_share(child)
            if not drs.borrowing and id(child) not in self.ancestors:
                self.pruned_cohorts.add(id(child))
            elif compare(drs, highest_cohort_drs) >= 0:
                highest_cohort, highest_cohort_drs = child, drs
        if highest_cohort is None and highest is None:
            self.pruned_cohorts.add(id(cohort))
            return None
        if highest_cohort is not None and compare(highest_cohort_drs, highest_drs) >= 0:
            return self._next(highest_cohort)
        return highest

    def _lca(self, target: ResourceNode) -> ResourceNode:
        for ancestor in target.ancestors():
            if id(ancestor) in self.ancestors:
                return ancestor
        raise AssertionError("no least common ancestor")

    @staticmethod
    def _almost(node: ResourceNode, lca: ResourceNode) -> ResourceNode:
        current = node
        for ancestor in node.ancestors():
            if ancestor is lca:
                return current
            current = ancestor
        raise AssertionError("no almost-least common ancestor")

    def shares(self, target: ResourceNode) -> tuple[DRS, DRS]:
        lca = self._lca(target)
        return (dominant_resource_share(self._almost(self.ctx.cq.node, lca)),
                dominant_resource_share(self._almost(target, lca)))

    def share_after_removal(self, target: ResourceNode, candidate: WorkloadInfo) -> DRS:
        remove_usage_map(target, candidate.usage())
        try:
            lca = self._lca(target)
            return dominant_resource_share(self._almost(target, lca))
        finally:
            add_usage_map(target, candidate.usage())
