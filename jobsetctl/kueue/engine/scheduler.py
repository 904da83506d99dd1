"""One scheduling cycle (``pkg/scheduler/scheduler.go`` ``schedule``).

1. pop one head per active ClusterQueue (:meth:`QueueManager.heads`);
2. nominate: find flavors (and preemption targets) for each head (``nominate``, ``getAssignments``,
   partial admission by ``PodSetReducer``);
3. order the entries: workloads already holding quota first, then those within nominal quota before
   borrowing ones, then priority, then FIFO (``classicalIterator``), or the fair-sharing tournament;
4. process each entry (``processEntry``): NoFit and Preempt-without-targets are requeued; preemptions
   whose targets overlap another entry's in the cycle are skipped; an entry that no longer fits after
   earlier admissions is skipped; otherwise preemptions are issued, or the workload is admitted
   (QuotaReserved, then Admitted when it has no admission checks);
5. requeue every head that was not admitted, with the Pending condition and event.

Unlike upstream's snapshot, the cycle works on the live cache: usage it reserves only for the cycle
(a workload waiting for its preemptions, ``DeferredFit``) is recorded in a journal and released when the
cycle ends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jobsetctl.kueue.engine import names
from jobsetctl.kueue.engine.amounts import FRQuantities
from jobsetctl.kueue.engine.assignment import DEFERRED_FIT, FIT, NO_FIT, PREEMPT, Assignment, format_attempts
from jobsetctl.kueue.engine.conditions import has_failed_checks, has_quota_reservation
from jobsetctl.kueue.engine.flavors import FlavorAssigner
from jobsetctl.kueue.engine.preemption import Target
from jobsetctl.kueue.engine.queues import (
    REASON_FAILED_AFTER_NOMINATION,
    REASON_GENERIC,
    REASON_NAMESPACE_MISMATCH,
    REASON_NO_FIT,
    REASON_PENDING_PREEMPTION,
    REASON_PREEMPTION_NO_CANDIDATES,
    Head,
)
from jobsetctl.kueue.engine.quota import (
    add_usage_map,
    available_after_removal,
    cq_available,
    remove_usage_map,
)
from jobsetctl.kueue.engine.workload import WorkloadInfo

if TYPE_CHECKING:
    from jobsetctl.kueue.engine.cache import ClusterQueueState
    from jobsetctl.kueue.engine.core import Engine

# Entry status.
NOT_NOMINATED, NOMINATED, SKIPPED, EVICTED, ASSUMED = "", "nominated", "skipped", "evicted", "assumed"


@dataclass(slots=True)
class Entry:
    head: Head
    cq: ClusterQueueState | None = None
    assignment: Assignment = field(default_factory=Assignment)
    status: str = NOT_NOMINATED
    inadmissible_msg: str = ""
    requeue_reason: str = REASON_GENERIC
    quota_reserved_reason: str = ""
    targets: list[Target] = field(default_factory=list)

    @property
    def info(self) -> WorkloadInfo:
        return self.head.info


@dataclass(slots=True)
class CycleResult:
    """What one cycle did, for the engine's progress test and for ``--explain``."""

    admitted: list[str] = field(default_factory=list)
    preempting: list[str] = field(default_factory=list)
    requeued: dict[str, str] = field(default_factory=dict)
    progress: bool = False


class Scheduler:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.cycle_count = 0
        #: Usage added only for the running cycle: (ClusterQueue, usage), undone when it ends.
        self._journal: list[tuple[ClusterQueueState, FRQuantities]] = []
        #: TAS usage added only for the running cycle: (key, flavors holding it).
        self._tas_journal: list[tuple[str, list[Any]]] = []
        #: The cycle's preempted workloads' usage per Cohort root and ClusterQueue node.
        self._victim_usage: dict[Any, dict[Any, FRQuantities]] = {}
        #: The cycle's preempted workloads' keys per Cohort root, in the order they were preempted.
        self._victim_keys: dict[Any, list[str]] = {}
        #: A cycle blocked by waitForPodsReady.blockAdmission: the entries it has yet to process.
        self.blocked: list[Entry] | None = None
        settings = engine.settings
        # The gates read per nomination (the engine's settings are fixed when it is made).
        self._fungibility = settings.gate("FlavorFungibility")
        self._partial_admission = settings.gate("PartialAdmission")
        self._preserve_scan_progress = settings.gate("FlavorFungibilityPreserveScanProgress")
        self._recompute_on_overlap = settings.gate("RecomputeAssignmentUponPreemptionTargetsOverlap")
        self._tas_recompute = settings.gate("TASRecomputeAssignmentWithinSchedulingCycle")
        #: The flavor assigner's preemption oracle per ClusterQueue (it reads nothing but the state it is for).
        self._oracles: dict[str, tuple[ClusterQueueState, Any]] = {}

    # ---- the cycle ---------------------------------------------------------------------------------
    def schedule(self) -> CycleResult:
        self.engine.preemptor.begin_cycle()
        try:
            return self._schedule()
        finally:
            self.engine.preemptor.end_cycle()

    def _schedule(self) -> CycleResult:
        engine = self.engine
        result = CycleResult()
        if self.blocked is not None:
            if not engine.cache.pods_ready_for_all():
                return result
            entries, self.blocked = self.blocked, None
            self._process_entries(entries, [], result, resumed=True)
            return result
        heads = engine.queues.heads(lambda name: engine.cluster_queue_schedulable(name))
        if not heads:
            return result
        self.cycle_count += 1
        # Nominating writes nothing: the preemption candidates' ordering data holds for the whole phase.
        engine.preemptor.freeze()
        try:
            entries, inadmissible = self._nominate(heads)
        finally:
            engine.preemptor.thaw()
        entries = self._order(entries)
        self._process_entries(entries, inadmissible, result)
        return result

    def _process_entries(self, entries: list[Entry], inadmissible: list[Entry], result: CycleResult,
                         resumed: bool = False) -> None:
        preempted: dict[str, WorkloadInfo] = {}
        self._victim_usage = {}
        self._victim_keys = {}
        try:
            for index, entry in enumerate(entries):
                blocked = self._process(entry, preempted, result)
                if blocked:
                    # waitForPodsReady.blockAdmission: the scheduler waits inside processEntry until every
                    # admitted workload is ready; the rest of the cycle runs then.
                    self.blocked = entries[index:]
                    result.progress = True
                    for other in inadmissible:
                        self._requeue_and_update(other, result)
                    return
        finally:
            self._release_journal()
        for entry in entries:
            if entry.status not in (ASSUMED, EVICTED):
                self._requeue_and_update(entry, result)
        for entry in inadmissible:
            self._requeue_and_update(entry, result)

    def _release_journal(self) -> None:
        for cq, usage in reversed(self._journal):
            remove_usage_map(cq.node, usage)
        self._journal.clear()
        for key, flavors in reversed(self._tas_journal):
            for flavor in flavors:
                flavor.remove_workload(key)
        self._tas_journal.clear()

    def _reserve_for_cycle(self, cq: ClusterQueueState, usage: FRQuantities, entry: Entry) -> None:
        """``cq.AddUsage``: quota (unless the workload already holds it) and TAS usage (``netUsage``)."""
        if not has_quota_reservation(entry.info.obj):
            add_usage_map(cq.node, usage)
            self._journal.append((cq, usage))
        tas = self.engine.tas
        if tas is not None:
            key = f"cycle:{self.cycle_count}:{entry.info.key}"
            flavors = tas.reserve(key, entry.info, entry.assignment)
            if flavors:
                self._tas_journal.append((key, flavors))

    # ---- nominate ----------------------------------------------------------------------------------
    def _nominate(self, heads: list[Head]) -> tuple[list[Entry], list[Entry]]:
        engine = self.engine
        entries: list[Entry] = []
        inadmissible: list[Entry] = []
        cache = engine.cache
        for head in heads:
            info = head.info
            if cache.is_added(info.key):
                continue
            cq = cache.cluster_queues.get(head.cluster_queue)
            requeue_reason = REASON_GENERIC
            if has_failed_checks(info.obj):
                message, reason = "The workload has failed admission checks", names.PENDING_EVALUATION
            elif cq is None:
                message, reason = f"ClusterQueue {head.cluster_queue} not found", names.MISCONFIGURED
            elif not cq.active or cache.cluster_queue_in_cycle(cq):
                message, reason = f"ClusterQueue {head.cluster_queue} is inactive", names.SUSPENDED
            elif (error := engine.admissibility_error(info, cq)) is not None:
                message, reason = error, names.MISCONFIGURED
                if error == NAMESPACE_MISMATCH:
                    requeue_reason = REASON_NAMESPACE_MISMATCH
            else:
                # The Entry is made with its assignment (not an empty one replaced at once).
                assignment, targets = self.get_assignments(info, cq)
                entries.append(Entry(head, cq, assignment, NOT_NOMINATED, assignment.message(), REASON_GENERIC, "",
                                     targets))
                info.last_assignment = assignment.last_state
                continue
            inadmissible.append(Entry(head, cq, inadmissible_msg=message, requeue_reason=requeue_reason,
                                      quota_reserved_reason=reason))
        return entries, inadmissible

    def get_assignments(self, info: WorkloadInfo, cq: ClusterQueueState) -> tuple[Assignment, list[Target]]:
        """``getAssignments``: the flavor assignment and, when it needs preemption, the targets."""
        engine = self.engine
        last = info.last_assignment
        if last is not None and self._outdated(last, cq, info.scheduling_hash):
            info.last_assignment = None
        tas = engine.tas_assigner(cq)
        oracle = self._oracles.get(cq.name)
        if oracle is None or oracle[0] is not cq:
            oracle = self._oracles[cq.name] = (cq, engine.oracle(cq))
        assigner = FlavorAssigner(info, cq, engine.cache.flavors, oracle[1], fair_sharing=engine.fair is not None,
                                  fungibility_enabled=self._fungibility, scheduling_cycle=self.cycle_count, tas=tas)
        full = assigner.assign()
        mode = full.representative_mode()
        targets: list[Target] = []
        if mode == FIT:
            return full, targets
        if mode == PREEMPT:
            # Most Preempt assignments are those the oracle found no targets for: the same question is not
            # asked again (nor its topology requests built).
            if not engine.preemptor.known_without_targets(info, cq, full.total_requests(info),
                                                          full.flavors_needing_preemption()):
                targets = engine.targets_for(info, cq, full)
            if targets:
                return self._after_tas(tas, info, cq, full, targets)
        if self._partial_admission and info.can_be_partially_admitted():
            found = _reduce(info, lambda counts: self._try_counts(assigner, info, cq, counts))
            if found is not None:
                return self._after_tas(tas, info, cq, found[0], found[1])
        return self._after_tas(tas, info, cq, full, [])

    @staticmethod
    def _after_tas(tas: Any, info: WorkloadInfo, cq: ClusterQueueState, assignment: Assignment,
                   targets: list[Target]) -> tuple[Assignment, list[Target]]:
        """The TAS step for preemption (``tas``: the ClusterQueue's TAS side, None without TAS)."""
        if tas is not None:
            tas.update_assignment_for_preemption(info, cq, assignment, targets)
        return assignment, targets

    def _try_counts(self, assigner: FlavorAssigner, info: WorkloadInfo, cq: ClusterQueueState,
                    counts: list[int]) -> tuple[Assignment, list[Target]] | None:
        assignment = assigner.assign(counts)
        mode = assignment.representative_mode()
        if mode == FIT:
            return assignment, []
        if mode == PREEMPT:
            targets = self.engine.targets_for(info, cq, assignment)
            if targets:
                return assignment, targets
        return None

    def _outdated(self, last: Any, cq: ClusterQueueState, scheduling_hash: str = "") -> bool:
        """``lastAssignmentOutdated`` with FlavorFungibilityPreserveScanProgress (beta, on): a changed
        workload shape (scheduling hash) starts over, an assignment of this or the previous cycle is kept."""
        if self._preserve_scan_progress:
            if last.scheduling_hash and scheduling_hash and last.scheduling_hash != scheduling_hash:
                return True
            if self.cycle_count - last.scheduling_cycle <= 1:
                return False
        return cq.generation > last.cluster_queue_generation

    # ---- ordering ----------------------------------------------------------------------------------
    def _order(self, entries: list[Entry]) -> list[Entry]:
        engine = self.engine
        if engine.fair is not None:
            return engine.fair.order_entries(entries)
        priority_sorting = engine.settings.gate("PrioritySortingWithinCohort")

        def key(entry: Entry) -> tuple[Any, ...]:
            info = entry.info
            return (not has_quota_reservation(info.obj), entry.assignment.borrowing,
                    -info.priority if priority_sorting else 0, engine.queues.queue_order_timestamp(info))
        return sorted(entries, key=key)

    # ---- process -----------------------------------------------------------------------------------
    def _process(self, entry: Entry, preempted: dict[str, WorkloadInfo], result: CycleResult) -> bool:
        """``processEntry``; returns True when admission blocks on waitForPodsReady."""
        engine = self.engine
        cq = entry.cq
        assert cq is not None
        info = entry.info
        usage, fits = self._update_assignment_if_needed(entry, cq, preempted)
        mode = entry.assignment.representative_mode()
        if mode == NO_FIT:
            entry.requeue_reason = REASON_NO_FIT
            entry.quota_reserved_reason = entry.assignment.no_fit_reason
            return False
        if mode == PREEMPT and not entry.targets:
            entry.requeue_reason = REASON_PREEMPTION_NO_CANDIDATES
            entry.quota_reserved_reason = names.WAITING_FOR_QUOTA
            if cq.spec.preemption.reclaim_within_cohort != names.ANY:
                # reserveCapacityForUnreclaimablePreempt: hold what this ClusterQueue could use so that
                # lower-priority workloads of another Cohort member do not take it this cycle.
                self._reserve_for_cycle(cq, self._resources_to_reserve(entry, cq), entry)
            return False
        if mode == DEFERRED_FIT:
            entry.inadmissible_msg = ("Workload has overlapping preemption targets with another workload, "
                                      "but will fit after these preemptions complete")
            entry.quota_reserved_reason = names.WAITING_FOR_PREEMPTED_WORKLOADS
            entry.requeue_reason = REASON_PENDING_PREEMPTION
            info.last_assignment = None
            self._reserve_for_cycle(cq, usage, entry)
            return False
        if any(t.info.key in preempted for t in entry.targets):
            self._skip(entry, "Workload has overlapping preemption targets with another workload")
            entry.quota_reserved_reason = names.WAITING_FOR_QUOTA
            return False
        if not fits:
            self._skip(entry, "Workload no longer fits after processing another workload")
            entry.quota_reserved_reason = names.WAITING_FOR_QUOTA
            return False
        for target in entry.targets:
            if target.info.key not in preempted:
                self._note_victim(target.info)
            preempted[target.info.key] = target.info
        if mode == PREEMPT:
            entry.quota_reserved_reason = names.WAITING_FOR_PREEMPTED_WORKLOADS
            self._reserve_for_cycle(cq, usage, entry)
            count = engine.issue_preemptions(info, cq, entry.targets)
            info.last_assignment = None
            if count:
                entry.inadmissible_msg += f". Pending the preemption of {count} workload(s)"
                entry.requeue_reason = REASON_PENDING_PREEMPTION
            result.preempting.append(info.key)
            result.progress = True
            return False
        if not engine.cache.pods_ready_for_all():
            engine.wait_for_pods_ready(info)
            return True
        entry.status = NOMINATED
        self._admit(entry, cq)
        result.admitted.append(info.key)
        result.progress = True
        return False

    def _skip(self, entry: Entry, message: str) -> None:
        """``markSkipped``: with FlavorFungibilityPreserveScanProgress the flavor progress is kept."""
        entry.status = SKIPPED
        entry.inadmissible_msg = message
        if not self._preserve_scan_progress:
            entry.info.last_assignment = None

    def _update_assignment_if_needed(self, entry: Entry, cq: ClusterQueueState,
                                     preempted: dict[str, WorkloadInfo]) -> tuple[FRQuantities, bool]:
        """``updateAssignmentIfNeeded``: recompute when the targets overlap those of an earlier entry
        (RecomputeAssignmentUponPreemptionTargetsOverlap) or TAS no longer fits
        (TASRecomputeAssignmentWithinSchedulingCycle), keeping the nominated flavors."""
        engine = self.engine
        usage = dict(entry.assignment.usage)
        check = self._fits(cq, entry, usage, preempted, entry.targets)
        targets = entry.targets
        overlap = (bool(targets) and bool(preempted) and any(t.info.key in preempted for t in targets)
                   and self._recompute_on_overlap)
        tas_recompute = check == FITS_NO_TAS and self._tas_recompute
        if not overlap and not tas_recompute:
            return usage, check == FITS_OK
        info = entry.info
        info.last_assignment = None
        info.nomination_mapping = {
            p.name: {r: f.name for r, f in p.flavors.items()} for p in entry.assignment.podsets}
        revert = None
        if overlap:
            if cq.tas_flavors:
                victims = list(preempted.values())
            else:
                # Quota only: the victims of other Cohort trees change nothing for this one.
                victims = [preempted[key] for key in self._victim_keys.get(cq.node.root(), ())]
            revert = engine.preemptor.simulate_removal(victims)
        engine.preemptor.freeze()  # nothing is written until the assignment is found
        try:
            entry.assignment, entry.targets = self.get_assignments(info, cq)
        finally:
            engine.preemptor.thaw()
            if revert is not None:
                revert()
        entry.inadmissible_msg = entry.assignment.message()
        info.last_assignment = entry.assignment.last_state  # recordAssignment
        if overlap and entry.assignment.representative_mode() == FIT:
            entry.assignment.set_representative_mode(DEFERRED_FIT)
        usage = dict(entry.assignment.usage)
        check = self._fits(cq, entry, usage, preempted, entry.targets)
        info.nomination_mapping = None
        return usage, check == FITS_OK

    def _note_victim(self, info: WorkloadInfo) -> None:
        """Add a preempted workload's usage to the cycle's totals per ClusterQueue (for :meth:`_fits`)."""
        state = self.engine.cache.cluster_queues.get(info.cluster_queue)
        if state is None:
            return
        root = state.node.root()
        self._victim_keys.setdefault(root, []).append(info.key)
        totals = self._victim_usage.setdefault(root, {}).setdefault(state.node, {})
        for fr, value in info.usage().items():
            totals[fr] = totals.get(fr, 0) + value

    def _fits(self, cq: ClusterQueueState, entry: Entry, usage: FRQuantities, preempted: dict[str, WorkloadInfo],
              targets: list[Target]) -> int:
        """``fits``: with the usage of all preemption targets so far removed."""
        engine = self.engine
        if not cq.tas_flavors:
            return self._quota_fits(cq, usage, preempted, targets)
        if not preempted and not targets:
            # Nothing to take out (the common case): the checks on the state as it is.
            return self._fits_now(cq, entry, usage)
        preemptor = engine.preemptor
        if preemptor.shortcuts and self._quota_fits(cq, usage, preempted, targets) != FITS_OK:
            # The quota half first, on paper (as for a ClusterQueue without TAS flavors): where it does not fit,
            # :meth:`_fits_now` would answer FITS_NO_QUOTA after the removals below, before reading the TAS books.
            return FITS_NO_QUOTA
        victims = dict(preempted)
        for target in targets:
            victims[target.info.key] = target.info
        for victim in victims.values():
            preemptor.remove(victim)
        try:
            return self._fits_now(cq, entry, usage)
        finally:
            for victim in victims.values():
                preemptor.add(victim)

    def _fits_now(self, cq: ClusterQueueState, entry: Entry, usage: FRQuantities) -> int:
        node = cq.node
        for fr, value in usage.items():
            if cq_available(node, fr) < value:
                return FITS_NO_QUOTA
        tas = self.engine.tas_assigner(cq)
        if tas is not None and not tas.fits(entry.info, entry.assignment, cq):
            return FITS_NO_TAS
        return FITS_OK

    def _quota_fits(self, cq: ClusterQueueState, usage: FRQuantities, preempted: dict[str, WorkloadInfo],
                    targets: list[Target]) -> int:
        """The quota half of ``fits`` without touching the tree: the victims' usage is removed on paper.

        Removals from one node compose (removing a then b passes ``min(a + b, stored)`` up, as removing
        a + b at once), so the cycle's victims are kept as totals per ClusterQueue (:meth:`_note_victim`)
        and each entry costs one pass over the ClusterQueues that lost workloads in its Cohort tree."""
        root = cq.node.root()
        victim_usage = self._victim_usage.get(root)
        if not victim_usage and not targets:
            # Nothing removed: ``available_after_removal`` with no removals is ``cq_available`` (the same formula).
            node = cq.node
            for fr, value in usage.items():
                if cq_available(node, fr) < value:
                    return FITS_NO_QUOTA
            return FITS_OK
        totals: dict[Any, FRQuantities] = {node: dict(values) for node, values in (victim_usage or {}).items()}
        cache = self.engine.cache
        for target in targets:
            if target.info.key in preempted:
                continue
            state = cache.cluster_queues.get(target.info.cluster_queue)
            if state is None or state.node.root() is not root:
                continue
            values = totals.setdefault(state.node, {})
            for fr, value in target.info.usage().items():
                values[fr] = values.get(fr, 0) + value
        for fr, value in usage.items():
            if available_after_removal(cq.node, fr, totals) < value:
                return FITS_NO_QUOTA
        return FITS_OK

    def _resources_to_reserve(self, entry: Entry, cq: ClusterQueueState) -> FRQuantities:
        """``quotaResourcesToReserve`` for a Preempt entry without candidates."""
        reserved: FRQuantities = {}
        node = cq.node
        for fr, value in entry.assignment.usage.items():
            quota = node.quota(fr)
            used = node.usage.get(fr, 0)
            if entry.assignment.borrowing > 0:
                if quota.borrowing_limit is None:
                    reserved[fr] = value
                else:
                    reserved[fr] = min(value, quota.nominal + quota.borrowing_limit - used)
            else:
                reserved[fr] = max(0, min(value, quota.nominal - used))
        return reserved

    def _admit(self, entry: Entry, cq: ClusterQueueState) -> None:
        """``admit``: assume the workload in the cache, then write QuotaReserved (and Admitted)."""
        engine = self.engine
        admission = {"clusterQueue": cq.name, "podSetAssignments": entry.assignment.to_api()}
        considered = format_attempts(entry.assignment)
        entry.status = ASSUMED
        engine.admit(entry.info, cq, admission, considered)

    # ---- requeue -----------------------------------------------------------------------------------
    def _requeue_and_update(self, entry: Entry, result: CycleResult) -> None:
        """``requeueAndUpdate``: back to the queues, and (not nominated or skipped) the Pending condition."""
        engine = self.engine
        if entry.status != NOT_NOMINATED and entry.requeue_reason == REASON_GENERIC:
            entry.requeue_reason = REASON_FAILED_AFTER_NOMINATION
        moved = engine.requeue(entry.info, entry.requeue_reason, entry.quota_reserved_reason)
        result.requeued[entry.info.key] = entry.inadmissible_msg
        if moved == "inadmissible":
            result.progress = True
        if entry.status in (NOT_NOMINATED, SKIPPED):
            reason = entry.quota_reserved_reason or names.PENDING_EVALUATION
            if not engine.settings.gate("UnadmittedWorkloadsObservability"):
                reason = "Pending"
            engine.set_pending(entry.info, reason, entry.inadmissible_msg)


FITS_OK, FITS_NO_QUOTA, FITS_NO_TAS = 0, 1, 2
NAMESPACE_MISMATCH = "workload namespace doesn't match ClusterQueue selector"


def _reduce(info: WorkloadInfo, fits: Any) -> Any:
    """``PodSetReducer.Search``: the largest counts between ``count`` and ``minCount`` that fit, by a
    binary search over the total reduction."""
    podsets = info.spec_podsets()
    full: list[int] = []
    deltas: list[int] = []
    for podset in podsets:
        count = podset.get("count", 1)
        count = count if isinstance(count, int) else 1
        min_count = podset.get("minCount")
        min_count = min_count if isinstance(min_count, int) else count
        full.append(count)
        deltas.append(count - min_count)
    total = sum(deltas)
    if total == 0:
        return None
    last_good: int | None = None
    last_result = None

    def counts_for(i: int) -> list[int]:
        return [f - (d * i // total) for f, d in zip(full, deltas, strict=False)]

    lo, hi = 0, total + 1
    while lo < hi:  # sort.Search: the smallest i in [0, total] with fits(i)
        mid = (lo + hi) // 2
        found = fits(counts_for(mid))
        if found is not None:
            last_good, last_result = mid, found
            hi = mid
        else:
            lo = mid + 1
    if last_good is not None and lo == last_good:
        return last_result
    return None
