"""The scheduling queue: activeQ, backoffQ, unschedulable pods, and PreEnqueue-gated pods.

Faithful to kube-scheduler's ``PriorityQueue`` (pkg/scheduler/backend/queue) where it is observable:

* activeQ is ordered by the QueueSort key (PrioritySort: higher priority first, then earlier
  ``Timestamp``; the timestamp is refreshed when a pod comes back after a failure);
* a pod that fails with Unschedulable is parked in the unschedulable pool until a cluster event that
  one of its rejecting plugins registered for (``EventsToRegister``), or until it has been there longer
  than ``podMaxInUnschedulablePodsDuration`` (5 min; the flush runs every 30 s from scheduler start, so
  it moves at the first 30 s tick strictly after 5 min). A pod whose cycle overlapped a move request
  goes straight to backoff (``moveRequestCycle``);
* moving out of the pool respects the pod backoff: 1 s doubled per attempt, at most 10 s, counted from
  the last failure; a pod still backing off waits in backoffQ;
* KEP-5142 ``SchedulerPopFromBackoffQ`` (beta, on by default since 1.33): when activeQ is empty the
  scheduler pops the backoffQ head even before its backoff ends — except pods that failed with an
  *error*, which always serve their whole backoff. ``pop_from_backoff=False`` restores the classic queue;
* PreEnqueue rejections (scheduling gates, gang quorum) keep the pod out of every queue, silently;
* the scheduler's loop guard may *freeze* an item that was attempted too often at one instant (see
  :meth:`SchedulingQueue.freeze`): it waits in the unschedulable pool, keeping the status of its last
  attempt, and no move or activation of that same instant takes it out.

Entries are pods or, on Kubernetes 1.37, whole pod groups (``QueuedPodGroupInfo``, scheduling.md §1.3).
Expiry times are exact (the real backoffQ flush runs every second; we do not round).
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from jobsetctl.fakecluster.scheduler.interface import ClusterEvent

INITIAL_BACKOFF = 1.0
MAX_BACKOFF = 10.0
MAX_IN_UNSCHEDULABLE = 300.0
UNSCHEDULABLE_FLUSH_PERIOD = 30.0

ACTIVE, BACKOFF, UNSCHEDULABLE, GATED, IN_FLIGHT = "active", "backoff", "unschedulable", "gated", "inflight"


@dataclass(slots=True, eq=False)
class QueuedItem:
    """A pod (``key`` = pod uid) or a pod group (``key`` = group key) waiting to be scheduled."""

    key: Any
    priority: int
    #: When the item entered the queue or last failed (ordering and backoff base).
    timestamp: float
    initial_attempt: float | None = None
    attempts: int = 0
    unschedulable_plugins: frozenset[str] = frozenset()
    where: str = ""
    error: bool = False
    #: Scheduling cycle number of the item's last attempt.
    cycle: int = 0
    #: ``Snapshot.change_counter`` when the item was parked (a leftover flush with no change since
    #: would only repeat the same failure; see :meth:`SchedulingQueue.flush`).
    parked_at_change: int = -1
    token: int = 0
    #: Extra ordering data the QueueSort plugin reads (e.g. a coscheduling group's creation time).
    sort_hint: tuple[Any, ...] = ()
    payload: Any = None
    #: The instant the loop guard froze the item at (see :meth:`SchedulingQueue.freeze`), else -1.
    frozen_at: float = -1.0
    #: The watch event that let the item into activeQ, straight or released by PreEnqueue
    #: (see :meth:`SchedulingQueue.ungate`).
    released: int = 0
    #: Order of entry into the unschedulable pool (the pool's iteration order).
    pool_seq: int = 0
    #: What the item's last failure lacked, when it was room alone (:class:`.requeue.FitClass`): events that
    #: free room release it only when enough is free for it (:mod:`.requeue`).
    fit_class: Any = None

    def backoff_duration(self) -> float:
        duration = INITIAL_BACKOFF
        for _ in range(max(self.attempts - 1, 0)):
            duration *= 2
            if duration >= MAX_BACKOFF:
                return MAX_BACKOFF
        return duration

    def backoff_expiry(self) -> float:
        return self.timestamp + self.backoff_duration()


SortKey = Callable[[QueuedItem], tuple[Any, ...]]


def priority_sort(item: QueuedItem) -> tuple[Any, ...]:
    """PrioritySort ``Less``, extended for coscheduling members (``sort_hint``, see the plugin)."""
    if item.sort_hint:
        return (-item.priority, *item.sort_hint)
    return (-item.priority, item.timestamp, "")


@dataclass(slots=True)
class SchedulingQueue:
    sort_key: SortKey = priority_sort
    pop_from_backoff: bool = True
    items: dict[Any, QueuedItem] = field(default_factory=dict)
    _active: list[tuple[tuple[Any, ...], int, int, QueuedItem]] = field(default_factory=list)
    _backoff: list[tuple[float, int, int, QueuedItem]] = field(default_factory=list)
    _seq: Iterator[int] = field(default_factory=itertools.count)
    #: The watch event being handled: pods entering activeQ because of it share this batch number.
    release_batch: int = 0
    #: The cycle of the last move request (an event that moved unschedulable pods).
    move_request_cycle: int = -1
    scheduling_cycle: int = 0
    #: The unschedulable pool, by key (only it is scanned on cluster events).
    pool: dict[Any, QueuedItem] = field(default_factory=dict)
    #: (leftover flush due time, pool_seq, token, item) of pooled items: the flush and the next wake-up
    #: look at the earliest ones only, not at the whole pool on every cycle.
    _leftover: list[tuple[float, int, int, QueuedItem]] = field(default_factory=list)
    _pool_seq: Iterator[int] = field(default_factory=itertools.count)
    #: Called before an item enters activeQ; returning True means the caller took it (1.37 group members).
    on_activate: Callable[[QueuedItem], bool] | None = None
    #: Called with (item, True) when an item enters the unschedulable pool and (item, False) when it
    #: leaves it: the scheduler indexes pooled items by the events that may help them (:mod:`.requeue`).
    on_pool: Callable[[QueuedItem, bool], None] | None = None

    # ---- membership --------------------------------------------------------------------------------
    def __contains__(self, key: Any) -> bool:
        return key in self.items

    def get(self, key: Any) -> QueuedItem | None:
        return self.items.get(key)

    def add(self, item: QueuedItem, *, gated: bool) -> None:
        self.items[item.key] = item
        if gated:
            self._set(item, GATED)
        else:
            item.released = self.release_batch
            self._push_active(item)

    def remove(self, key: Any) -> QueuedItem | None:
        item = self.items.pop(key, None)
        pooled = self.pool.pop(key, None)
        if pooled is not None and self.on_pool is not None:
            self.on_pool(pooled, False)
        if item is not None:
            item.where = ""
            item.token += 1
        return item

    def _set(self, item: QueuedItem, where: str) -> None:
        pooled = item.where == UNSCHEDULABLE
        if pooled:
            if where != UNSCHEDULABLE:
                self.pool.pop(item.key, None)
            if self.on_pool is not None:
                self.on_pool(item, False)
        item.where = where
        item.token += 1
        if where == UNSCHEDULABLE:
            if item.key not in self.pool:
                item.pool_seq = next(self._pool_seq)
            self.pool[item.key] = item
            self._schedule_leftover(item)
            if self.on_pool is not None:
                self.on_pool(item, True)

    def _schedule_leftover(self, item: QueuedItem) -> None:
        heapq.heappush(self._leftover, (self.leftover_due(item), item.pool_seq, item.token, item))

    def _leftover_valid(self, entry: tuple[float, int, int, QueuedItem]) -> bool:
        due, _, token, item = entry
        return item.where == UNSCHEDULABLE and item.token == token and self.leftover_due(item) == due

    def in_state(self, where: str) -> list[QueuedItem]:
        return [item for item in self.items.values() if item.where == where]

    # ---- activeQ / backoffQ ------------------------------------------------------------------------
    def _push_active(self, item: QueuedItem) -> None:
        if self.on_activate is not None and self.on_activate(item):
            return
        self._set(item, ACTIVE)
        heapq.heappush(self._active, (self.sort_key(item), next(self._seq), item.token, item))

    def _push_backoff(self, item: QueuedItem) -> None:
        self._set(item, BACKOFF)
        heapq.heappush(self._backoff, (item.backoff_expiry(), next(self._seq), item.token, item))

    def pop(self, now: float) -> QueuedItem | None:
        """The next item to schedule (attempts incremented), or None when nothing is ready now."""
        self.flush_backoff(now)
        while self._active:
            _, _, token, item = heapq.heappop(self._active)
            if item.where == ACTIVE and item.token == token:
                return self._start(item)
        if self.pop_from_backoff:
            skipped: list[tuple[float, int, int, QueuedItem]] = []
            chosen: QueuedItem | None = None
            while self._backoff:
                entry = heapq.heappop(self._backoff)
                item = entry[3]
                if item.where != BACKOFF or item.token != entry[2]:
                    continue
                if item.error:
                    skipped.append(entry)
                    continue
                chosen = item
                break
            for entry in skipped:
                heapq.heappush(self._backoff, entry)
            if chosen is not None:
                return self._start(chosen)
        return None

    def _start(self, item: QueuedItem) -> QueuedItem:
        self._set(item, IN_FLIGHT)
        item.fit_class = None  # set again by a failure that leaves the item waiting for room
        item.attempts += 1
        self.scheduling_cycle += 1
        item.cycle = self.scheduling_cycle
        if item.initial_attempt is None:
            item.initial_attempt = item.timestamp
        return item

    def flush_backoff(self, now: float) -> None:
        while self._backoff:
            expiry, _, token, item = self._backoff[0]
            if item.where != BACKOFF or item.token != token:
                heapq.heappop(self._backoff)
                continue
            if expiry > now:
                break
            heapq.heappop(self._backoff)
            self._push_active(item)

    # ---- outcomes ----------------------------------------------------------------------------------
    def done(self, key: Any) -> None:
        """The item was scheduled: forget it."""
        self.remove(key)

    def requeue(self, item: QueuedItem, now: float, plugins: frozenset[str], *, error: bool = False,
                change_counter: int = -1) -> None:
        """After a failed attempt: unschedulable pool, or backoffQ for errors and for items whose cycle
        overlapped a move request."""
        if item.key not in self.items:
            return
        item.timestamp = now
        item.unschedulable_plugins = plugins
        item.error = error
        item.parked_at_change = change_counter
        if error or self.move_request_cycle >= item.cycle:
            self._push_backoff(item)
        else:
            self._set(item, UNSCHEDULABLE)

    def requeue_immediately(self, item: QueuedItem) -> None:
        """Back to activeQ keeping the old timestamp (1.37: unplaced pods of an initial attempt)."""
        if item.key in self.items:
            self._push_active(item)

    def gate(self, item: QueuedItem) -> None:
        self._set(item, GATED)

    def hold(self, item: QueuedItem, where: str) -> None:
        """Park an item in a scheduler-specific state (e.g. waiting at Permit, member of a queued group)."""
        self._set(item, where)

    def ungate(self, item: QueuedItem, now: float) -> None:
        """PreEnqueue lets a held item in. Items that enter activeQ at the same instant come in the order of
        the events that let them in (the pod that completes a gang's quorum releases its siblings with it),
        then in creation order: upstream's scheduler, running while the pods are still being created,
        would already have taken the first complete gang before the next one formed."""
        if item.where == GATED:
            item.timestamp = now if item.attempts == 0 else item.timestamp
            item.released = self.release_batch
            self._push_active(item)

    # ---- moves -------------------------------------------------------------------------------------
    def move(self, event: ClusterEvent, interested: Callable[[QueuedItem, ClusterEvent], bool], now: float,
             candidates: Iterable[QueuedItem] | None = None) -> int:
        """Move unschedulable items whose rejecting plugins care about ``event``; returns how many.
        ``candidates``: the pooled items that may care (an index's answer), else the whole pool; they are
        looked at in the pool's order either way."""
        self.move_request_cycle = self.scheduling_cycle
        if candidates is None:
            items = list(self.pool.values())
        else:
            items = sorted((it for it in candidates if it.where == UNSCHEDULABLE), key=lambda it: it.pool_seq)
        moved = 0
        for item in items:
            if item.where == UNSCHEDULABLE and item.frozen_at != now and interested(item, event):
                self._leave_unschedulable(item, now)
                moved += 1
        return moved

    def release(self, item: QueuedItem, now: float) -> None:
        """Out of the pool as a move would take it (to activeQ, or backoffQ while it backs off)."""
        if item.where == UNSCHEDULABLE and item.frozen_at != now:
            self._leave_unschedulable(item, now)

    def activate(self, key: Any, now: float | None = None) -> None:
        """``Handle.Activate``: straight to activeQ from the pool or backoffQ (not from the gate)."""
        item = self.items.get(key)
        if item is not None and item.where in (UNSCHEDULABLE, BACKOFF) and (now is None or item.frozen_at != now):
            self._push_active(item)

    def freeze(self, item: QueuedItem, now: float, change_counter: int) -> None:
        """Park an item the loop guard stopped: in the unschedulable pool, out of reach of this instant's
        moves and activations. Real time would pass between its attempts (upstream spins with every
        attempt taking real milliseconds, and backoffQ pops at once when activeQ is empty); simulated
        time does not, so the item waits for the next change or the leftover flush, with its status."""
        if item.key not in self.items:
            return
        item.frozen_at = now
        item.timestamp = now
        item.parked_at_change = change_counter
        self._set(item, UNSCHEDULABLE)

    def _leave_unschedulable(self, item: QueuedItem, now: float) -> None:
        if item.backoff_expiry() > now:
            self._push_backoff(item)
        else:
            self._push_active(item)

    def flush_unschedulable(self, now: float, change_counter: int) -> None:
        """``flushUnschedulablePodsLeftover``. Items parked with no cluster change since are left alone:
        with the same state a retry would fail the same way (the scheduler is deterministic), and
        skipping it lets a quiet simulation end instead of retrying forever every five minutes. Due items
        go in the pool's order."""
        heap = self._leftover
        due: list[QueuedItem] = []
        while heap and heap[0][0] <= now:
            entry = heapq.heappop(heap)
            if self._leftover_valid(entry):
                due.append(entry[3])
        for item in sorted(due, key=lambda it: it.pool_seq):
            if item.parked_at_change == change_counter:
                item.timestamp = now  # restart the clock without an attempt
                self._schedule_leftover(item)
                continue
            self._leave_unschedulable(item, now)

    @staticmethod
    def leftover_due(item: QueuedItem) -> float:
        ticks = math.floor((item.timestamp + MAX_IN_UNSCHEDULABLE) / UNSCHEDULABLE_FLUSH_PERIOD) + 1
        return ticks * UNSCHEDULABLE_FLUSH_PERIOD

    def next_wake(self, change_counter: int) -> float | None:
        """The earliest future instant at which the queue has something to do on its own."""
        times: list[float] = []
        for expiry, _, token, item in self._backoff:
            if item.where == BACKOFF and item.token == token:
                times.append(expiry)
        heap = self._leftover
        quiet: list[tuple[float, int, int, QueuedItem]] = []
        while heap:
            entry = heap[0]
            if not self._leftover_valid(entry):
                heapq.heappop(heap)
                continue
            if entry[3].parked_at_change == change_counter:
                quiet.append(heapq.heappop(heap))  # not due for a retry until something changes
                continue
            times.append(entry[0])
            break
        for entry in quiet:
            heapq.heappush(heap, entry)
        return min(times) if times else None

    def has_active(self) -> bool:
        return any(item.where == ACTIVE and item.token == token for _, _, token, item in self._active)
