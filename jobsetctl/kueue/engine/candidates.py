"""Classic preemption's candidates (``pkg/scheduler/preemption/classical/candidate_generator.go`` and the
variants of ``hierarchical_preemption.go``): which admitted workloads a preemptor may evict, in the order
they are tried, and why (the preemption variant). The search that removes them is
:meth:`jobsetctl.kueue.engine.preemption.Preemptor._classical`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from jobsetctl.kueue.engine import names
from jobsetctl.kueue.engine.quota import ResourceNode, is_within_nominal, quantities_fit_in_quota
from jobsetctl.kueue.engine.workload import WorkloadInfo

if TYPE_CHECKING:
    from jobsetctl.kueue.engine.cache import ClusterQueueState
    from jobsetctl.kueue.engine.preemption import Preemptor, _Context


# Preemption variants (hierarchical_preemption.go).
V_NEVER, V_WITHIN_CQ, V_HIERARCHICAL, V_RECLAIM_NO_BORROW, V_RECLAIM_WHILE_BORROWING = range(5)
_VARIANT_REASONS = {
    V_WITHIN_CQ: names.IN_CLUSTER_QUEUE,
    V_HIERARCHICAL: names.IN_COHORT_RECLAMATION,
    V_RECLAIM_WHILE_BORROWING: names.IN_COHORT_RECLAIM_WHILE_BORROWING,
    V_RECLAIM_NO_BORROW: names.IN_COHORT_RECLAMATION,
}


def satisfies_policy(preemptor: WorkloadInfo, candidate: WorkloadInfo, policy: str,
                     order_ts: Callable[[WorkloadInfo], float]) -> bool:
    """``SatisfiesPreemptionPolicy``."""
    lower = preemptor.priority > candidate.priority
    if policy == names.LOWER_PRIORITY:
        return lower
    if policy == names.LOWER_OR_NEWER_EQUAL_PRIORITY:
        newer_equal = preemptor.priority == candidate.priority and order_ts(preemptor) < order_ts(candidate)
        return lower or newer_equal
    return policy == names.ANY


@dataclass(slots=True)
class Candidate:
    info: WorkloadInfo
    lca: ResourceNode | None
    variant: int
    key: tuple[Any, ...]
    evicted: bool


#: A candidate's ordering key (a C-level getter: the groups are sorted at every search).
_by_key = attrgetter("key")


class CandidateIterator:
    """``classical/candidate_generator.go``."""

    def __init__(self, preemptor: Preemptor, ctx: _Context, with_priority_group: bool = True) -> None:
        self.preemptor = preemptor
        self.ctx = ctx
        self.static = preemptor.static
        same_queue = self._same_queue_candidates()
        hierarchy, priority = self._hierarchical_candidates(with_priority_group)
        # CandidatesOrdering within each group: its "same ClusterQueue" part is the same for all members.
        for group in (same_queue, hierarchy, priority):
            if len(group) > 1:
                group.sort(key=_by_key)
        ordered = hierarchy + priority + same_queue
        evicted = [c for c in ordered if c.evicted] if ordered else ordered
        # Evicted first, in a stable partition (none: the order as it is).
        self.candidates = evicted + [c for c in ordered if not c.evicted] if evicted else ordered
        self.no_candidate_from_other_queues = not hierarchy and not priority
        self.no_candidate_for_hierarchical_reclaim = not hierarchy
        self.index = 0

    def reset(self) -> None:
        self.index = 0

    def next(self, borrow: bool) -> tuple[WorkloadInfo, str] | None:
        while self.index < len(self.candidates):
            candidate = self.candidates[self.index]
            self.index += 1
            if self._valid(candidate, borrow):
                return candidate.info, _VARIANT_REASONS.get(candidate.variant, "Unknown")
        return None

    def _valid(self, candidate: Candidate, borrow: bool) -> bool:
        if candidate.info.cluster_queue == self.ctx.cq.name:
            return True
        if borrow and candidate.variant == V_RECLAIM_NO_BORROW:
            return False
        state = self.preemptor.cache.cluster_queues.get(candidate.info.cluster_queue)
        if state is None:
            return False
        frs = self.ctx.frs
        if is_within_nominal(state.node, frs):
            return False
        # Its ancestors up to (not including) the lowest common one.
        node, lca = state.node.parent, candidate.lca
        while node is not None and node is not lca:
            if is_within_nominal(node, frs):
                return False
            node = node.parent
        return True

    def _variant(self, info: WorkloadInfo, advantage: bool, uses: bool) -> int:
        """``classifyPreemptionVariant`` (``uses``: :func:`uses_resources`)."""
        ctx = self.ctx
        if not uses:
            return V_NEVER
        preemption = ctx.cq.spec.preemption
        policy = preemption.within_cluster_queue if info.cluster_queue == ctx.cq.name else preemption.reclaim_within_cohort
        if not satisfies_policy(ctx.info, info, policy, self.preemptor.order_ts):
            return V_NEVER
        if info.cluster_queue == ctx.cq.name:
            return V_WITHIN_CQ
        if advantage:
            return V_HIERARCHICAL
        if preemption.borrow_within_cohort == names.NEVER:
            return V_RECLAIM_NO_BORROW
        threshold = preemption.max_priority_threshold
        if info.priority >= ctx.info.priority or (threshold is not None and info.priority > threshold):
            return V_RECLAIM_NO_BORROW
        return V_RECLAIM_WHILE_BORROWING

    def _from_cq(self, state: ClusterQueueState, lca: ResourceNode | None, advantage: bool) -> list[Candidate]:
        out = []
        ctx = self.ctx
        frs, static = ctx.frs, self.static
        # LowerPriority (the default withinClusterQueue policy) rules out the others by priority alone:
        # checked before reading anything else of them (``_variant`` would answer V_NEVER).
        below = ctx.info.priority if (self.preemptor.shortcuts and ctx.cq.spec.preemption.within_cluster_queue
                                      == names.LOWER_PRIORITY) else None
        cq_name = ctx.cq.name
        for info in state.workloads.values():
            if below is not None and info.priority >= below and info.cluster_queue == cq_name:
                continue
            key, evicted, used = static(info)
            variant = self._variant(info, advantage, not frs.isdisjoint(used))
            if variant != V_NEVER:
                out.append(Candidate(info, lca, variant, key, evicted))
        return out

    def _same_queue_candidates(self) -> list[Candidate]:
        if self.ctx.cq.spec.preemption.within_cluster_queue == names.NEVER:
            return []
        return self._from_cq(self.ctx.cq, None, False)

    def _hierarchical_candidates(self, with_priority_group: bool = True) -> tuple[list[Candidate], list[Candidate]]:
        ctx = self.ctx
        hierarchy: list[Candidate] = []
        priority: list[Candidate] = []
        if ctx.cq.node.parent is None or ctx.cq.spec.preemption.reclaim_within_cohort == names.NEVER:
            return hierarchy, priority
        previous: ResourceNode | None = None
        advantage, remaining = quantities_fit_in_quota(ctx.cq.node, ctx.usage)
        root = ctx.cq.node.parent
        while root is not None:  # ctx.cq.node.ancestors(), walked in line
            out = hierarchy if advantage else priority
            if advantage or with_priority_group:
                self._collect(root, root, previous, advantage, out)
            if root.parent is None:
                break  # the whole tree is done: what fits at its root is read by nothing
            fits, remaining = quantities_fit_in_quota(root, remaining)
            advantage = advantage or fits
            previous = root
            root = root.parent
        return hierarchy, priority

    def _collect(self, current: ResourceNode, subtree_root: ResourceNode, skip: ResourceNode | None,
                 advantage: bool, out: list[Candidate]) -> None:
        """``collectCandidatesInSubtree``."""
        for child in current.child_cohorts.values():
            if child is skip or is_within_nominal(child, self.ctx.frs):
                continue
            self._collect(child, subtree_root, skip, advantage, out)
        for child in current.child_cqs.values():
            if child is self.ctx.cq.node:
                continue
            if not is_within_nominal(child, self.ctx.frs):
                state = self.preemptor.cache.cluster_queues.get(child.name)
                if state is not None:
                    out.extend(self._from_other_cq(state, subtree_root, advantage))

    def _from_other_cq(self, state: ClusterQueueState, lca: ResourceNode, advantage: bool) -> list[Candidate]:
        """:meth:`_from_cq` for a ClusterQueue other than the preemptor's: while the preemptor is frozen (no
        workload changes), preemptors with the same priority, resources and cohort policies get the same
        list (``classifyPreemptionVariant`` reads nothing else of them; the timestamp only for
        LowerOrNewerEqualPriority)."""
        preemptor = self.preemptor
        if not preemptor._frozen or not preemptor.shortcuts:
            return self._from_cq(state, lca, advantage)
        ctx = self.ctx
        preemption = ctx.cq.spec.preemption
        policy = preemption.reclaim_within_cohort
        key = (state.name, lca, advantage, frozenset(ctx.frs), ctx.info.priority, policy,
               preemptor.order_ts(ctx.info) if policy == names.LOWER_OR_NEWER_EQUAL_PRIORITY else None,
               preemption.borrow_within_cohort, preemption.max_priority_threshold,
               ctx.cq.name if state.name == ctx.cq.name else None)
        found = preemptor._others.get(key)
        if found is None:
            found = preemptor._others[key] = self._from_cq(state, lca, advantage)
        return found

