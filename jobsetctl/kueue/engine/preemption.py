"""Preemption (``pkg/scheduler/preemption``): which admitted workloads to evict for a pending one.

Candidates (``preemption/common/ordering.go`` ``CandidatesOrdering``, first preempted first): workloads
already being evicted; workloads of other ClusterQueues before the preemptor's own; lower priority
first; the most recently admitted (QuotaReserved transition) first; UID.

Classic preemption (``classicalPreemptions`` with ``classical/hierarchical_preemption.go``) walks the
preemptor's ClusterQueue and, when it may reclaim, the Cohort tree: candidates in subtrees the preemptor
has a hierarchical advantage over (it is closer to the quota they use) are taken regardless of priority;
others obey ``reclaimWithinCohort`` and ``borrowWithinCohort``. Candidates are removed greedily until the
preemptor fits (borrowing allowed or not, as the policies decide), then added back in reverse order while
it still fits (minimisation).

Fair sharing (``fairPreemptions``) picks ClusterQueues by dominant resource share (:mod:`.fairsharing`).

All simulations change the live cache's usage and undo their changes before returning.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jobsetctl.kueue.engine import names
from jobsetctl.kueue.engine.amounts import FlavorResource, FRQuantities
from jobsetctl.kueue.engine.assignment import NO_CANDIDATES, POSSIBLE_PREEMPT, POSSIBLE_RECLAIM
from jobsetctl.kueue.engine.candidates import Candidate, CandidateIterator
from jobsetctl.kueue.engine.conditions import find_condition, is_evicted
from jobsetctl.kueue.engine.quota import (
    ResourceNode,
    add_usage_map,
    cq_available,
    lowest_subtree_that_fits,
    remove_usage_map,
)
from jobsetctl.kueue.engine.workload import WorkloadInfo

if TYPE_CHECKING:
    from jobsetctl.kueue.engine.cache import Cache, ClusterQueueState
    from jobsetctl.kueue.engine.fairsharing import FairSharing


#: :meth:`Preemptor.static`: (ordering key, evicted, flavor-resources used).
_Static = tuple[tuple[Any, ...], bool, frozenset[FlavorResource]]


@dataclass(slots=True)
class Target:
    info: WorkloadInfo
    reason: str
    cluster_queue: str


def preemption_message(preemptor: WorkloadInfo, reason: str, preemptor_path: str, preemptee_path: str) -> str:
    """``preemptionMessage`` (the Evicted and Preempted conditions and the Preempted event)."""
    job_uid = ((preemptor.obj.get("metadata") or {}).get("labels") or {}).get(names.JOB_UID_LABEL) or "UNKNOWN"
    return (f"Preempted to accommodate a workload (UID: {preemptor.uid or 'UNKNOWN'}, JobUID: {job_uid}) due to "
            f"{names.HUMAN_READABLE_PREEMPTION_REASONS.get(reason, 'UNKNOWN')}; preemptor path: {preemptor_path or 'UNKNOWN'}; "
            f"preemptee path: {preemptee_path or 'UNKNOWN'}")


def cq_path(node: ResourceNode) -> str:
    """``buildCQPath``: ``/root/.../cq``."""
    parts = [node.name] + [a.name for a in node.ancestors()]
    return "/" + "/".join(reversed(parts))


def uses_resources(info: WorkloadInfo, frs: Iterable[FlavorResource]) -> bool:
    """``WorkloadUsesResources``."""
    wanted = set(frs)
    for podset in info.podsets:
        if podset.flavors:
            for resource, flavor in podset.flavors.items():
                if (flavor, resource) in wanted:
                    return True
    return False


class Preemptor:
    def __init__(self, cache: Cache, *, order_ts: Callable[[WorkloadInfo], float], seconds_of: Callable[[str], float],
                 now: Callable[[], float], fair_sharing: FairSharing | None = None,
                 tas_fits: Callable[[WorkloadInfo, Any, ClusterQueueState], bool] | None = None,
                 shortcuts: bool = True) -> None:
        self.cache = cache
        #: Off (tests only): every search runs in full (see ``EngineSettings.preemption_shortcuts``).
        self.shortcuts = shortcuts
        self.order_ts = order_ts
        self.seconds_of = seconds_of
        self.now = now
        self.fair_sharing = fair_sharing
        #: TAS check of the preemptor's topology requests against the simulated state (None: no TAS).
        self.tas_fits = tas_fits
        #: Workloads whose usage the running simulation removed, for nested undo.
        self._removed: list[WorkloadInfo] = []
        #: During a scheduling cycle: each candidate's ordering key, evicted flag and flavor-resources, by
        #: Info (see :meth:`static`), and which Infos read each object (for :meth:`forget_object`).
        self._static: dict[int, tuple[WorkloadInfo, _Static]] | None = None
        self._static_by_obj: dict[int, list[int]] = {}
        #: While nothing changes (:meth:`freeze`): classic preemption's targets per (preemptor, ClusterQueue,
        #: usage, resources), as the flavor assigner's oracle and the nomination that follows ask the same
        #: question of the same state; and another ClusterQueue's candidates for preemptors that classify
        #: them alike (:meth:`CandidateIterator._from_other_cq`).
        self._frozen = False
        self._targets: dict[tuple[Any, ...], tuple[WorkloadInfo, list[Target]]] = {}
        self._others: dict[tuple[Any, ...], list[Candidate]] = {}

    # ---- per-cycle memo ----------------------------------------------------------------------------
    def begin_cycle(self) -> None:
        """A scheduling cycle starts: :meth:`static` keeps what it reads until :meth:`end_cycle`. Within a
        cycle the clock stands still, and an admitted workload's conditions change only where the engine
        evicts or admits it, which calls :meth:`forget_object`."""
        self._static = {}
        self._static_by_obj = {}

    def end_cycle(self) -> None:
        self._static = None
        self._static_by_obj = {}

    def forget_object(self, obj: Any) -> None:
        """``obj``'s conditions are about to change: what :meth:`static` read of it is stale."""
        if self._static is not None:
            for info_id in self._static_by_obj.pop(id(obj), ()):
                self._static.pop(info_id, None)

    def freeze(self) -> None:
        """Neither usage nor workloads change until :meth:`thaw` (the scheduler's nominate phase, which
        writes nothing, or the search for an assignment): preemption answers are kept until then."""
        self._frozen = True
        self._targets = {}
        self._others = {}

    def thaw(self) -> None:
        self._frozen = False
        self._targets = {}
        self._others = {}

    def static(self, info: WorkloadInfo) -> _Static:
        """What a candidate's ordering needs and no preemptor changes: ``CandidatesOrdering``'s key without
        its "same ClusterQueue" part (constant within each group of candidates), whether it is being
        evicted, and the flavor-resources it uses."""
        memo = self._static
        if memo is not None:
            hit = memo.get(id(info))
            if hit is not None and hit[0] is info:
                return hit[1]
        evicted = is_evicted(info.obj)
        data = ((not evicted, info.priority, -self.quota_reservation_time(info), info.uid), evicted,
                frozenset((flavor, resource) for podset in info.podsets if podset.flavors
                          for resource, flavor in podset.flavors.items()))
        if memo is not None:
            memo[id(info)] = (info, data)
            self._static_by_obj.setdefault(id(info.obj), []).append(id(info))
        return data

    # ---- simulated removal -------------------------------------------------------------------------
    def remove(self, info: WorkloadInfo, with_tas: bool = True) -> None:
        """The workload's usage leaves its ClusterQueue: quota, and (``with_tas``) its TAS usage."""
        state = self.cache.cluster_queues.get(info.cluster_queue)
        if state is not None:
            remove_usage_map(state.node, info.usage())
            if with_tas and state.tas_flavors:
                for tas in self.cache._tas_of(state, info):
                    tas.remove_workload(info)

    def add(self, info: WorkloadInfo, with_tas: bool = True) -> None:
        state = self.cache.cluster_queues.get(info.cluster_queue)
        if state is not None:
            add_usage_map(state.node, info.usage())
            if with_tas and state.tas_flavors:
                for tas in self.cache._tas_of(state, info):
                    tas.add_workload(info)

    def remove_quota(self, info: WorkloadInfo) -> None:
        """:meth:`remove` for a search that reads quota alone (no topology check): the TAS books stay as they
        are, since nothing of the search reads them, and :meth:`add_quota` puts the usage back."""
        self.remove(info, False)

    def add_quota(self, info: WorkloadInfo) -> None:
        self.add(info, False)

    def simulate_removal(self, infos: list[WorkloadInfo]) -> Callable[[], None]:
        """``Snapshot.SimulateWorkloadRemoval``: the workloads leave their ClusterQueues (usage and
        membership, so they are no candidates either) until the returned function puts them back.

        With the shortcuts on, the usage of a ClusterQueue's leaving workloads is summed and taken out (and
        put back) at once: removing amounts one after the other moves, at every node, the part above its
        local quota (what it stores in its parent) by ``max(0, usage - local) before - after``, whatever the
        steps, so the sum of non-negative amounts leaves every usage exactly where the steps leave it."""
        saved: dict[str, dict[str, WorkloadInfo]] = {}
        # (Amounts are never negative in practice; with one that is, the steps are taken one by one.)
        summed: dict[str, FRQuantities] | None = {} if self.shortcuts and all(
            value >= 0 for info in infos for value in info.usage().values()) else None
        for info in infos:
            state = self.cache.cluster_queues.get(info.cluster_queue)
            if state is None or info.key not in state.workloads:
                continue
            if state.name not in saved:
                saved[state.name] = dict(state.workloads)
            if summed is None:
                self.remove(info)
            else:
                _add_amounts(summed.setdefault(state.name, {}), info.usage())
                if state.tas_flavors:
                    for tas in self.cache._tas_of(state, info):
                        tas.remove_workload(info)
            del state.workloads[info.key]
        if summed:
            for name, usage in summed.items():
                remove_usage_map(self.cache.cluster_queues[name].node, usage)

        def revert() -> None:
            back: dict[str, FRQuantities] | None = {} if summed is not None else None
            for info in infos:
                state = self.cache.cluster_queues.get(info.cluster_queue)
                if state is not None and state.name in saved and info.key in saved[state.name]:
                    if back is None:
                        self.add(info)
                        continue
                    _add_amounts(back.setdefault(state.name, {}), info.usage())
                    if state.tas_flavors:
                        for tas in self.cache._tas_of(state, info):
                            tas.add_workload(info)
            if back:
                for name, usage in back.items():
                    add_usage_map(self.cache.cluster_queues[name].node, usage)
            for name, workloads in saved.items():
                state = self.cache.cluster_queues[name]
                state.workloads.clear()
                state.workloads.update(workloads)
        return revert

    # ---- ordering ----------------------------------------------------------------------------------
    def quota_reservation_time(self, info: WorkloadInfo) -> float:
        cond = find_condition(info.obj, names.QUOTA_RESERVED)
        if cond is None or cond.get("status") != "True":
            return self.now()
        text = str(cond.get("lastTransitionTime", ""))
        cached = info._reserved_at
        if cached is not None and cached[0] == text:
            return cached[1]
        value = self.seconds_of(text)
        info._reserved_at = (text, value)
        return value

    def candidates_key(self, preemptor_cq: str) -> Callable[[WorkloadInfo], tuple[Any, ...]]:
        """``CandidatesOrdering`` as a sort key."""
        def key(info: WorkloadInfo) -> tuple[Any, ...]:
            return (not is_evicted(info.obj), info.cluster_queue == preemptor_cq, info.priority,
                    -self.quota_reservation_time(info), info.uid)
        return key

    # ---- entry points ------------------------------------------------------------------------------
    def get_targets(self, info: WorkloadInfo, cq: ClusterQueueState, usage: FRQuantities,
                    frs_need_preemption: set[FlavorResource], tas_requests: Any = None) -> list[Target]:
        """``GetTargets`` / ``getTargets``: the workloads to evict so that ``info`` fits."""
        ctx = _Context(info, cq, usage, frs_need_preemption, tas_requests)
        if self.fair_sharing is not None:
            return self.fair_sharing.preemptions(self, ctx)
        if not self._frozen or not self.shortcuts:
            return self._classical(ctx)
        key = (id(info), cq.name, frozenset(usage.items()), frozenset(frs_need_preemption))
        hit = self._targets.get(key)
        if tas_requests:
            # The TAS check only adds a condition to each fit test and changes neither the candidates nor
            # the order they are removed in: where quota alone never fit, quota and topology never fit.
            # (Without requests, :meth:`fits` checks quota alone: the answer is the quota-only one.)
            if hit is not None and hit[0] is info and not hit[1]:
                return []
            return self._classical(ctx)
        if hit is not None and hit[0] is info:
            return list(hit[1])
        targets = self._classical(ctx)
        self._targets[key] = (info, list(targets))
        return targets

    def known_without_targets(self, info: WorkloadInfo, cq: ClusterQueueState, usage: FRQuantities,
                              frs_need_preemption: set[FlavorResource]) -> bool:
        """Whether :meth:`get_targets` answers no targets here, whatever its ``tas_requests``: its memo holds
        an empty answer to this quota-only question (the flavor assigner's oracle asks it first)."""
        if self.fair_sharing is not None or not self._frozen or not self.shortcuts:
            return False
        hit = self._targets.get((id(info), cq.name, frozenset(usage.items()), frozenset(frs_need_preemption)))
        return hit is not None and hit[0] is info and not hit[1]

    def simulate(self, info: WorkloadInfo, cq: ClusterQueueState, fr: FlavorResource, quantity: int) -> tuple[int, int]:
        """``PreemptionOracle.SimulatePreemption``: (NoCandidates|Preempt|Reclaim, borrowing level after)."""
        targets = self.get_targets(info, cq, {fr: quantity}, {fr})
        if not targets:
            borrow, _ = lowest_subtree_that_fits(cq.node, fr, quantity)
            return NO_CANDIDATES, borrow
        # The borrowing height reads quota alone: with the shortcuts on, the TAS books are left as they are.
        remove, add = (self.remove_quota, self.add_quota) if self.shortcuts else (self.remove, self.add)
        for target in targets:
            remove(target.info)
        borrow, _ = lowest_subtree_that_fits(cq.node, fr, quantity)
        for target in targets:
            add(target.info)
        if any(t.info.cluster_queue == cq.name for t in targets):
            return POSSIBLE_PREEMPT, borrow
        return POSSIBLE_RECLAIM, borrow

    # ---- fit checks --------------------------------------------------------------------------------
    def fits(self, ctx: _Context, allow_borrowing: bool) -> bool:
        """``workloadFits``."""
        node = ctx.cq.node
        for fr, value in ctx.usage.items():
            if not allow_borrowing and node.borrowing_with(fr, value):
                return False
            if value > cq_available(node, fr):
                return False
        if ctx.tas_requests and self.tas_fits is not None:
            return self.tas_fits(ctx.info, ctx.tas_requests, ctx.cq)
        return True

    def fill_back(self, ctx: _Context, targets: list[Target], allow_borrowing: bool,
                  quota_only: bool = False) -> list[Target]:
        """``fillBackWorkloads``: in reverse order, keep a target out only if it is needed (``quota_only``: the
        targets left through :meth:`remove_quota`, and go back through :meth:`add_quota`).

        With the shortcuts on (and no topology in play), targets are put back in growing runs, with one fit
        check per run instead of one per target. Exact: quota usage depends only on which workloads are in
        (see :meth:`simulate_removal`) and the fit only improves as workloads leave (every ``available`` is
        non-increasing in every usage on its path), so when a run put back at once still fits, each of its
        targets, put back one by one, fit too; when it does not, its last ones are taken out again one at a
        time until it fits, which finds the target the step-by-step loop keeps, from the same states."""
        if not quota_only and (not self.shortcuts or (ctx.tas_requests and self.tas_fits is not None) or any(
                self._has_tas(target.info) for target in targets)):
            return self._fill_back_steps(ctx, targets, allow_borrowing)
        add, remove = (self.add_quota, self.remove_quota) if quota_only else (self.add, self.remove)
        fits = self.fits
        i = len(targets) - 2
        run = 1
        # At the start of each round the current state fits (the search's, or one a step left fitting).
        while i >= 0:
            low = max(0, i - run + 1)
            for j in range(i, low - 1, -1):
                add(targets[j].info)
            if fits(ctx, allow_borrowing):
                first_kept = low - 1  # every target of the run goes back
            else:
                # The state with targets[k..i] back, for k = low + 1, ...: the first that fits tells the
                # target the steps keep (k - 1); the state with none of them back fits.
                k = low
                while True:
                    remove(targets[k].info)
                    k += 1
                    if k > i or fits(ctx, allow_borrowing):
                        break
                first_kept = k - 1
            for j in range(i, first_kept, -1):
                targets[j] = targets[-1]
                targets.pop()
            if first_kept < low:
                run *= 2
                i = low - 1
            else:
                run = 1
                i = first_kept - 1  # targets[low..first_kept - 1] are out again, as before their steps
        return targets

    def _has_tas(self, info: WorkloadInfo) -> bool:
        state = self.cache.cluster_queues.get(info.cluster_queue)
        return state is not None and bool(state.tas_flavors)

    def _fill_back_steps(self, ctx: _Context, targets: list[Target], allow_borrowing: bool) -> list[Target]:
        for i in range(len(targets) - 2, -1, -1):
            self.add(targets[i].info)
            if self.fits(ctx, allow_borrowing):
                targets[i] = targets[-1]
                targets.pop()
            else:
                self.remove(targets[i].info)
        return targets

    # ---- classic -----------------------------------------------------------------------------------
    def _classical(self, ctx: _Context) -> list[Target]:
        forbidden = ctx.cq.spec.preemption.borrow_within_cohort == names.NEVER
        # With borrowWithinCohort Never and the preemptor's ClusterQueue at or over nominal, the only
        # attempt allows borrowing, which skips every reclaim-without-borrowing candidate: the candidates
        # of other ClusterQueues without a hierarchical advantage are all of that variant (see
        # :meth:`CandidateIterator._variant`), so they are not collected at all.
        borrowing_only = forbidden and not _queue_under_nominal(ctx)
        candidates = CandidateIterator(self, ctx, with_priority_group=not borrowing_only or not self.shortcuts)
        if borrowing_only or candidates.no_candidate_from_other_queues:
            attempts = [True]
        elif forbidden and candidates.no_candidate_for_hierarchical_reclaim:
            attempts = [False, True]
        else:
            attempts = [True, False]
        # Without a topology check (the flavor assigner's oracle asks about quota alone) nothing of the search
        # reads the TAS books: with the shortcuts on, the candidates leave the quota tree only.
        quota_only = self.shortcuts and not (ctx.tas_requests and self.tas_fits is not None)
        remove, add = (self.remove_quota, self.add_quota) if quota_only else (self.remove, self.add)
        for borrowing in attempts:
            targets: list[Target] = []
            candidates.reset()
            while True:
                item = candidates.next(borrowing)
                if item is None:
                    break
                candidate, reason = item
                remove(candidate)
                targets.append(Target(candidate, reason, candidate.cluster_queue))
                if self.fits(ctx, borrowing):
                    targets = self.fill_back(ctx, targets, borrowing, quota_only)
                    for target in targets:
                        add(target.info)
                    return targets
            for target in targets:
                add(target.info)
        return []


def _add_amounts(total: FRQuantities, usage: FRQuantities) -> None:
    for fr, value in usage.items():
        total[fr] = total.get(fr, 0) + value


@dataclass(slots=True)
class _Context:
    info: WorkloadInfo
    cq: ClusterQueueState
    usage: FRQuantities
    frs: set[FlavorResource]
    tas_requests: Any = None


def _queue_under_nominal(ctx: _Context) -> bool:
    """``queueUnderNominalInResourcesNeedingPreemption``: usage strictly below nominal."""
    node = ctx.cq.node
    quotas, usage = node.quotas, node.usage
    for fr in ctx.frs:  # a loop, not all(generator): asked per preemption search
        quota = quotas.get(fr)  # node.quota(fr) written out
        if (0 if quota is None else quota.nominal) <= usage.get(fr, 0):
            return False
    return True
