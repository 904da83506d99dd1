"""The queue manager (``pkg/cache/queue``): pending workloads per ClusterQueue.

Each ClusterQueue keeps an *active* heap ordered by priority (highest first), then queue-order
timestamp (creation, or the eviction for PodsReady-timeout requeues), then UID; and an *inadmissible*
set of workloads that failed and wait for something to change. ``heads`` pops one workload per active
ClusterQueue for a scheduling cycle; the scheduler puts back each one it did not admit
(``RequeueWorkload``):

* StrictFIFO: back into the heap (except on a namespace mismatch), so the head blocks the queue;
* BestEffortFIFO: back into the heap only after a failure past nomination or while preemptions it
  issued complete (it then stays *sticky* at the head); otherwise into the inadmissible set, so the
  next workload gets its turn. With SchedulingEquivalenceHashing (beta, on) the workloads of the same
  shape in the heap follow it there (bulk move).

Inadmissible workloads return to their heap when quota may have freed up: a workload of the same
ClusterQueue or Cohort tree finishes, is evicted or is deleted (``QueueAssociatedInadmissibleWorkloadsAfter``),
or a ClusterQueue, Cohort or ResourceFlavor changes. Like upstream's requeuer, the move happens one
``requeueBatchPeriod`` (1 s) after the first notification, once per Cohort tree.

Upstream moves each workload; here the pending workloads of a ClusterQueue sit in buckets per scheduling
hash and side (:class:`~jobsetctl.kueue.engine.pending_queue.PendingClusterQueue`), each with its own heap, so that a bulk move and a retry move whole
buckets (a BestEffortFIFO queue of the performance test sends hundreds back and forth per retry). The
queue order is total (priority, timestamp, UID), so which bucket an entry waits in changes no pop; a
workload's queue-order key and backoff state are still read when it turns active, as upstream reads them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from jobsetctl.fakecluster.scheduler.selectors import LabelSelector
from jobsetctl.kueue.engine import names
from jobsetctl.kueue.engine.conditions import find_condition
from jobsetctl.kueue.engine.pending_queue import NO_BACKOFF, PendingClusterQueue
from jobsetctl.kueue.engine.workload import WorkloadInfo

#: ``requeueBatchPeriod`` (inadmissible_workloads.go).
REQUEUE_BATCH_PERIOD = 1.0

# Requeue reasons (cluster_queue.go).
REASON_GENERIC = ""
REASON_FAILED_AFTER_NOMINATION = "FailedAfterNomination"
REASON_NAMESPACE_MISMATCH = "NamespaceMismatch"
REASON_PENDING_PREEMPTION = "PendingPreemption"
REASON_PREEMPTION_FAILED = "PreemptionFailed"
REASON_NO_FIT = "NoFit"
REASON_PREEMPTION_NO_CANDIDATES = "PreemptionNoCandidates"


@dataclass(slots=True)
class Head:
    """``queue.Head``: a workload popped for a scheduling cycle, with its ClusterQueue."""

    info: WorkloadInfo
    cluster_queue: str
    is_preemptor: bool = False


class QueueManager:
    def __init__(self, *, now: Callable[[], float], seconds_of: Callable[[str], float],
                 pods_ready_eviction_timestamp: bool = True, equivalence_hashing: bool = True,
                 namespace_labels: Callable[[str], dict[str, str] | None] | None = None) -> None:
        self.cluster_queues: dict[str, PendingClusterQueue] = {}
        #: LocalQueue key -> ClusterQueue name.
        self.local_queues: dict[str, str] = {}
        #: LocalQueue key -> pending workloads of it (``LocalQueue.items``).
        self.lq_items: dict[str, dict[str, WorkloadInfo]] = {}
        #: Workload key -> the LocalQueue key it was assigned to.
        self.assigned: dict[str, str] = {}
        self.now = now
        self.seconds_of = seconds_of
        self.pods_ready_eviction_timestamp = pods_ready_eviction_timestamp
        self.equivalence_hashing = equivalence_hashing
        self.namespace_labels = namespace_labels or (lambda namespace: {})
        self._seq = itertools.count()
        #: ClusterQueues whose inadmissible workloads should be retried (see :meth:`notify_retry_inadmissible`).
        self.requests: set[str] = set()
        #: Off (tests only, ``EngineSettings.engine_shortcuts``): a pop takes its head as any key
        #: (``PendingClusterQueue.take``); a requeue with a bulk move puts the workload into a bucket of its own,
        #: then merges the moved one with it.
        self.shortcuts = True
        #: Off (tests only, ``EngineSettings.engine_shortcuts``): a retry moves a bucket with members of unknown
        #: backoff member by member even when every member passes.
        self.bucket_retry = True
        #: Called when a heap gained workloads (the scheduler has work).
        self.on_broadcast: Callable[[], None] = lambda: None

    # ---- ordering ----------------------------------------------------------------------------------
    def queue_order_timestamp(self, info: WorkloadInfo) -> float:
        """``Ordering.GetQueueOrderTimestamp``: the eviction time for PodsReady-timeout (with
        ``requeuingStrategy.timestamp: Eviction``) and admission-check evictions, else creation."""
        cond = find_condition(info.obj, names.EVICTED)
        if cond is not None and cond.get("status") == "True":
            reason = cond.get("reason")
            if (reason == names.EVICTED_BY_PODS_READY_TIMEOUT and self.pods_ready_eviction_timestamp) or \
                    reason == names.EVICTED_BY_ADMISSION_CHECK:
                return self.seconds_of(str(cond.get("lastTransitionTime", "")))
        return self.seconds_of(info.creation_ts) if info.creation_ts else 0.0

    def _sort_key(self, info: WorkloadInfo) -> tuple[int, float, str]:
        key = info._order_key
        if key is None:
            key = info._order_key = (-info.priority, self.queue_order_timestamp(info), info.uid)
        return key

    # ---- queues ------------------------------------------------------------------------------------
    def add_cluster_queue(self, name: str, strategy: str, selector: LabelSelector | None) -> None:
        cq = self.cluster_queues.get(name)
        if cq is None:
            cq = PendingClusterQueue(name, strategy, selector, self._sort_key, self._seq)
            self.cluster_queues[name] = cq
            for lq_key, cq_name in self.local_queues.items():
                if cq_name == name:
                    for info in self.lq_items.get(lq_key, {}).values():
                        cq.push_active_if_not_present(info)
        else:
            cq.strategy, cq.namespace_selector = strategy, selector
        self.notify_retry_inadmissible({name})
        if cq.has_active():
            self.on_broadcast()

    def delete_cluster_queue(self, name: str) -> None:
        self.cluster_queues.pop(name, None)

    def add_or_update_local_queue(self, key: str, cluster_queue: str) -> None:
        previous = self.local_queues.get(key)
        self.local_queues[key] = cluster_queue
        items = self.lq_items.setdefault(key, {})
        if previous is not None and previous != cluster_queue:
            old = self.cluster_queues.get(previous)
            if old is not None:
                for wl_key in list(items):
                    old.delete(wl_key)
        cq = self.cluster_queues.get(cluster_queue)
        if cq is not None:
            added = False
            for info in items.values():
                added = cq.push_active_if_not_present(info) or added
            if added:
                self.on_broadcast()

    def delete_local_queue(self, key: str) -> None:
        cq = self.cluster_queues.get(self.local_queues.pop(key, ""))
        for wl_key in list(self.lq_items.pop(key, {})):
            if cq is not None:
                cq.delete(wl_key)
            self.assigned.pop(wl_key, None)

    def cluster_queue_for(self, info: WorkloadInfo) -> str | None:
        lq = f"{info.namespace}/{info.queue_name}"
        return self.local_queues.get(lq)

    def local_queue_exists(self, namespace: str, name: str) -> bool:
        return f"{namespace}/{name}" in self.local_queues

    # ---- workloads ---------------------------------------------------------------------------------
    def backoff_expired(self, info: WorkloadInfo) -> bool:
        """``backoffWaitingTimeExpired``."""
        backoff = info._backoff
        if backoff is None:
            requeued = find_condition(info.obj, names.REQUEUED)
            state = (info.obj.get("status") or {}).get("requeueState")
            requeue_at = state.get("requeueAt") if isinstance(state, dict) else None
            backoff = info._backoff = (requeued is not None and requeued.get("status") == "False",
                                       self.seconds_of(str(requeue_at)) if requeue_at else None)
        if backoff[0]:
            return False
        return backoff[1] is None or self.now() >= backoff[1]

    def add_or_update_workload(self, info: WorkloadInfo) -> bool:
        """``AddOrUpdateWorkload``: a pending, admissible workload enters (or updates in) its queues.
        Returns False when its LocalQueue or ClusterQueue does not exist."""
        lq_key = f"{info.namespace}/{info.queue_name}"
        assigned = self.assigned.get(info.key)
        if assigned is not None and assigned != lq_key:
            self.delete_workload(info.key)
        if lq_key not in self.local_queues:
            return False
        previous = self._tracked(info.key)
        if previous is not None and previous is not info:
            info.last_assignment = previous.last_assignment
        self.assigned[info.key] = lq_key
        items = self.lq_items.get(lq_key)
        if items is None:
            items = self.lq_items[lq_key] = {}
        items[info.key] = info
        info.scheduling_hash = info.compute_scheduling_hash() if self.equivalence_hashing else ""
        cq = self.cluster_queues.get(self.local_queues[lq_key])
        if cq is None:
            return False
        self._push_or_update(cq, info)
        self.on_broadcast()
        return True

    def _tracked(self, key: str) -> WorkloadInfo | None:
        lq_key = self.assigned.get(key)
        if lq_key is None:
            return None
        cq = self.cluster_queues.get(self.local_queues.get(lq_key, ""))
        if cq is None:
            return None
        bucket = cq.where.get(key)
        return bucket.infos.get(key) if bucket is not None else None

    def _push_or_update(self, cq: PendingClusterQueue, info: WorkloadInfo) -> None:
        """``ClusterQueue.PushOrUpdate``."""
        key = info.key
        if cq.inflight == key:
            return
        bucket = cq.where.get(key)
        if bucket is not None and not bucket.active:
            old = cq.take(key)
            assert old is not None
            if _same_for_queueing(old, info):
                cq.set_inadmissible(info)
                return
            bucket = None
        is_active = bucket is not None
        if not is_active and not self.backoff_expired(info):
            cq.set_inadmissible(info)
            return
        if (cq.strategy == names.BEST_EFFORT_FIFO and not is_active and info.scheduling_hash
                and info.scheduling_hash in cq.bulk_moved):
            cq.set_inadmissible(info)
            return
        if is_active:
            cq.remove_active(key)
            cq.push(info)
        else:
            # Pending nowhere (an inadmissible version was taken above): ``push`` without its look-up.
            cq.add(cq.bucket(info.scheduling_hash, True), info, cq.entry(info))

    def delete_workload(self, key: str) -> None:
        lq_key = self.assigned.get(key)
        if lq_key is None:
            return
        items = self.lq_items.get(lq_key)
        if items is not None:
            items.pop(key, None)
        cq = self.cluster_queues.get(self.local_queues.get(lq_key, ""))
        if cq is not None:
            cq.delete(key)

    def forget_workload(self, key: str) -> None:
        self.delete_workload(key)
        self.assigned.pop(key, None)

    def heads(self, active: Callable[[str], bool]) -> list[Head]:
        """``Manager.heads``: one workload per active ClusterQueue, removed from its queues."""
        out: list[Head] = []
        shortcuts, assigned, lq_items = self.shortcuts, self.assigned, self.lq_items
        for name, cq in self.cluster_queues.items():
            if not active(name):
                continue
            cq.pop_cycle += 1
            preemptor = cq.preemptor
            # Without a preemptor, a queue whose pop order holds nothing pops nothing.
            info = cq.pop(shortcuts) if cq.top or preemptor is not None else None
            if info is None:
                cq.inflight = None
                continue
            key = info.key
            cq.inflight = key
            info.last_evaluated_generation = generation = info.generation
            out.append(Head(info, name, preemptor is not None and preemptor[0] == key and preemptor[2] == generation))
            lq_key = assigned.get(key)
            if lq_key is not None:
                items = lq_items.get(lq_key)
                if items is not None:
                    items.pop(key, None)
        return out

    def requeue_workload(self, info: WorkloadInfo, reason: str, quota_reserved_reason: str,
                         current: WorkloadInfo | None) -> str | None:
        """``Manager.RequeueWorkload``: put back a head the cycle did not admit. ``current`` is the
        latest version of the workload (None when it was deleted or is no longer admissible). Returns None when
        it was not added, else where the ClusterQueue of ``info``'s LocalQueue now holds it: "inadmissible" or
        "active" (also when that ClusterQueue does not hold it)."""
        asked = info
        if current is None:
            lq_key = self.assigned.get(info.key)
            cq = self.cluster_queues.get(self.local_queues.get(lq_key or "", ""))
            if cq is not None and cq.inflight == info.key:
                cq.inflight = None
            return None
        if current is not info:
            current.last_assignment = info.last_assignment
            current.scheduling_hash = info.scheduling_hash
            current.last_evaluated_generation = info.last_evaluated_generation
            info = current
        lq_key = f"{info.namespace}/{info.queue_name}"
        cq_name = self.local_queues.get(lq_key)
        if cq_name is None:
            return None
        self.assigned[info.key] = lq_key
        items = self.lq_items.get(lq_key)
        if items is None:
            items = self.lq_items[lq_key] = {}
        items[info.key] = info
        cq = self.cluster_queues.get(cq_name)
        if cq is None:
            return None
        if cq.strategy == names.STRICT_FIFO:
            immediate = reason != REASON_NAMESPACE_MISMATCH
        else:
            immediate = reason in (REASON_FAILED_AFTER_NOMINATION, REASON_PENDING_PREEMPTION,
                                   REASON_PREEMPTION_FAILED)
        if not self._requeue_if_not_present(cq, info, immediate, reason, quota_reserved_reason):
            return None
        self.on_broadcast()
        if asked.queue_name != info.queue_name:
            # The version asked about names another LocalQueue (same key, so same namespace).
            other = self.cluster_queues.get(self.cluster_queue_for(asked) or "")
            if other is None:
                return "active"
            cq = other
        bucket = cq.where.get(info.key)
        return "inadmissible" if bucket is not None and not bucket.active else "active"

    def _requeue_if_not_present(self, cq: PendingClusterQueue, info: WorkloadInfo, immediate: bool,
                                reason: str, quota_reserved_reason: str) -> bool:
        key = info.key
        if reason == REASON_PENDING_PREEMPTION:
            cq.preemptor = (key, cq.strategy == names.BEST_EFFORT_FIFO, info.last_evaluated_generation)
        if cq.inflight == key:
            cq.inflight = None
        pending_flavors = info.last_assignment is not None and info.last_assignment.pending_flavors()
        if self.backoff_expired(info) and (immediate or cq.queue_inadmissible_cycle >= cq.pop_cycle or pending_flavors):
            bucket = cq.where.get(key)
            if bucket is not None and not bucket.active:
                return cq.move_to_active(key)
            return cq.push_active_if_not_present(info)
        if key in cq.where:
            return False
        digest = info.scheduling_hash
        if (self.equivalence_hashing and digest and cq.strategy == names.BEST_EFFORT_FIFO
                and reason in (REASON_NO_FIT, REASON_PREEMPTION_NO_CANDIDATES)):
            cq.bulk_moved[digest] = quota_reserved_reason or names.PENDING_EVALUATION
            if self.shortcuts and cq.join_moved_hash(info):
                return True
            cq.set_inadmissible(info)
            self._move_equivalent_to_inadmissible(cq, digest)
            return True
        cq.set_inadmissible(info)
        return True

    def _move_equivalent_to_inadmissible(self, cq: PendingClusterQueue, digest: str) -> None:
        """``handleInadmissibleHash``: every active workload with this scheduling hash becomes inadmissible,
        as one bucket."""
        bucket = cq.act.pop(digest, None)
        if bucket is None:
            return
        bucket.active = False
        cq.merge(bucket, cq.inad)

    def no_fit_reason(self, info: WorkloadInfo) -> str | None:
        """``GetNoFitReason``: the reason an equivalent workload was bulk-moved for."""
        cq = self.cluster_queues.get(self.local_queues.get(f"{info.namespace}/{info.queue_name}", ""))
        if cq is None or info.key not in cq.inadmissible:
            return None
        return cq.bulk_moved.get(cq.inadmissible[info.key].scheduling_hash)

    def clear_preemptor(self, key: str) -> None:
        lq_key = self.assigned.get(key)
        own = self.cluster_queues.get(self.local_queues.get(lq_key, "")) if lq_key is not None else None
        for cq in (own,) if own is not None else self.cluster_queues.values():
            if cq.preemptor is not None and cq.preemptor[0] == key:
                cq.preemptor = None

    # ---- inadmissible requeue ----------------------------------------------------------------------
    def notify_retry_inadmissible(self, cq_names: Iterable[str]) -> None:
        """Ask for the inadmissible workloads of these ClusterQueues (and their Cohort trees) to be
        retried; the owner batches the requests (``requeueBatchPeriod``) and calls
        :meth:`queue_inadmissible`."""
        self.requests.update(cq_names)

    def _namespace_check(self, selector: LabelSelector | None) -> Callable[[str], bool]:
        """Whether a namespace matches a ClusterQueue's selector, each namespace looked up once."""
        eligible: dict[str, bool] = {}

        def namespace_ok(namespace: str) -> bool:
            ok = eligible.get(namespace)
            if ok is None:
                labels = self.namespace_labels(namespace)
                ok = eligible[namespace] = labels is not None and selector is not None and selector.matches(labels)
            return ok
        return namespace_ok

    def queue_inadmissible(self, cq_names: Iterable[str]) -> int:
        """``queueInadmissibleWorkloads`` for each ClusterQueue; returns how many moved.

        A bucket whose members all pass (namespace selector, no backoff) moves as a whole; otherwise each
        member is looked at, as upstream does."""
        moved = 0
        for name in cq_names:
            cq = self.cluster_queues.get(name)
            if cq is None:
                continue
            cq.queue_inadmissible_cycle = cq.pop_cycle
            cq.bulk_moved.clear()
            if not cq.inad:
                continue
            namespace_ok = self._namespace_check(cq.namespace_selector)
            for bucket in list(cq.inad.values()):
                # A member's backoff is read once (it is remembered on its Info): when every member passes,
                # the bucket moves as a whole, as the members one by one would.
                namespaces_ok = True
                for namespace in bucket.namespaces:
                    if not namespace_ok(namespace):
                        namespaces_ok = False
                        break
                if namespaces_ok and (not bucket.slow or (
                        self.bucket_retry and all(self.backoff_expired(bucket.infos[key]) for key in bucket.slow))):
                    if bucket.slow:
                        # Their backoff states are read now (as after a move member by member).
                        bucket.slow = {key for key in bucket.slow if bucket.infos[key]._backoff != NO_BACKOFF}
                    del cq.inad[bucket.digest]
                    moved += len(bucket.infos)
                    cq.activate(bucket)
                    continue
                for key, info in list(bucket.infos.items()):
                    if not namespace_ok(info.namespace) or not self.backoff_expired(info):
                        continue
                    cq.take(key)
                    cq.push(info)
                    moved += 1
                # What stays has had its backoff state read now.
                bucket.slow = {key for key, info in bucket.infos.items() if info._backoff != NO_BACKOFF}
        if moved:
            self.on_broadcast()
        return moved

    # ---- inspection --------------------------------------------------------------------------------
    def pending(self, cq_name: str) -> list[WorkloadInfo]:
        """Every pending workload of a ClusterQueue (heap, inadmissible, in flight), in queue order."""
        cq = self.cluster_queues.get(cq_name)
        if cq is None:
            return []
        infos = [info for side in (cq.act, cq.inad) for bucket in side.values() for info in bucket.infos.values()]
        return sorted(infos, key=self._sort_key)

    def dump(self) -> dict[str, list[str]]:
        return {name: sorted(cq.active) for name, cq in self.cluster_queues.items() if cq.has_active()}

    def dump_inadmissible(self) -> dict[str, list[str]]:
        return {name: sorted(cq.inadmissible) for name, cq in self.cluster_queues.items() if cq.inad}

    def position(self, info: WorkloadInfo) -> tuple[int, int] | None:
        """Position (1-based) of a pending workload among its ClusterQueue's pending workloads."""
        cq_name = self.cluster_queue_for(info)
        if cq_name is None:
            return None
        pending = self.pending(cq_name)
        for index, other in enumerate(pending):
            if other.key == info.key:
                return index + 1, len(pending)
        return None


def _same_for_queueing(old: WorkloadInfo, new: WorkloadInfo) -> bool:
    """``PushOrUpdate``'s test for updating an inadmissible workload in place: nothing that could make
    it admissible changed (spec, reclaimable pods, Evicted and Requeued conditions), as recorded when
    each version was read (stored objects change in place)."""
    return old.queue_signature == new.queue_signature
