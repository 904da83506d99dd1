"""The pending workloads of one ClusterQueue (``pkg/cache/queue/cluster_queue.go``): the active heap and the
inadmissible set, kept in buckets per scheduling hash (see :mod:`jobsetctl.kueue.engine.queues`, whose
manager decides *when* workloads move; this module only keeps *where* they wait and in which order)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from heapq import heapify, heappop, heappush
from typing import Any

from jobsetctl.fakecluster.scheduler.selectors import LabelSelector
from jobsetctl.kueue.engine.workload import WorkloadInfo

#: ``WorkloadInfo._backoff`` of a workload that is neither waiting for a requeue nor deactivated by one.
NO_BACKOFF = (False, None)


@dataclass(slots=True, eq=False)
class _Bucket:
    """The pending workloads of one ClusterQueue with one scheduling hash on one side (active or
    inadmissible), with their own heap: a bulk move of the hash (``handleInadmissibleHash``) or a retry of
    the inadmissible workloads (``QueueInadmissibleWorkloads``) moves the bucket, not its members, one
    by one. The queue order is total (priority, timestamp, UID), so where an entry waits changes no pop."""

    digest: str
    active: bool
    #: key -> heap entry (-priority, timestamp, uid, seq, key), for the members with a queue-order key.
    entries: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    infos: dict[str, WorkloadInfo] = field(default_factory=dict)
    heap: list[tuple[Any, ...]] = field(default_factory=list)
    #: Members whose backoff state was not known to be "none" when they came in: a retry looks at each of them.
    slow: set[str] = field(default_factory=set)
    #: Members without a queue-order key yet (inadmissible ones get theirs when they turn active).
    unkeyed: set[str] = field(default_factory=set)
    namespaces: dict[str, int] = field(default_factory=dict)

    def __lt__(self, other: _Bucket) -> bool:
        """Never: pairs in ``PendingClusterQueue.top`` with one entry (a merge moves entries between buckets, and
        the pair of the bucket it came from stays until popped) compare equal, not by their buckets (which of
        them pops first changes nothing: the entry is valid in one bucket at most)."""
        return False

    def head(self) -> tuple[Any, ...] | None:
        heap, entries = self.heap, self.entries
        while heap:
            entry = heap[0]
            if entries.get(entry[-1]) is entry:
                return entry
            heappop(heap)
        return None


class _SideView(Mapping[str, WorkloadInfo]):
    """The active or the inadmissible workloads of a ClusterQueue, as a read-only mapping."""

    __slots__ = ("_active", "_cq")

    def __init__(self, cq: PendingClusterQueue, active: bool) -> None:
        self._cq, self._active = cq, active

    def __getitem__(self, key: str) -> WorkloadInfo:
        bucket = self._cq.where.get(key)
        if bucket is None or bucket.active is not self._active:
            raise KeyError(key)
        return bucket.infos[key]

    def __contains__(self, key: object) -> bool:
        bucket = self._cq.where.get(key)  # type: ignore[call-overload]
        return bucket is not None and bucket.active is self._active

    def __iter__(self) -> Iterator[str]:
        side = self._cq.act if self._active else self._cq.inad
        for bucket in list(side.values()):
            yield from list(bucket.infos)

    def __len__(self) -> int:
        side = self._cq.act if self._active else self._cq.inad
        return sum(len(b.infos) for b in side.values())


@dataclass(slots=True)
class PendingClusterQueue:
    name: str
    strategy: str
    namespace_selector: LabelSelector | None
    #: The manager's queue-order key of a workload (priority, timestamp, UID), and its entry counter: the
    #: sequence number breaks no tie (the order is total) but keeps heap entries comparable without infos.
    sort_key: Callable[[WorkloadInfo], tuple[int, float, str]]
    seq: Iterator[int]
    #: Buckets by scheduling hash ("" for workloads without one), active and inadmissible; each pending key's bucket.
    act: dict[str, _Bucket] = field(default_factory=dict)
    inad: dict[str, _Bucket] = field(default_factory=dict)
    where: dict[str, _Bucket] = field(default_factory=dict)
    #: (head entry, bucket) of every active bucket (and stale pairs, dropped lazily): the pop order.
    top: list[tuple[tuple[Any, ...], _Bucket]] = field(default_factory=list)
    inflight: str | None = None
    pop_cycle: int = 0
    queue_inadmissible_cycle: int = -1
    bulk_moved: dict[str, str] = field(default_factory=dict)
    #: The workload whose preemptions are in progress: (key, sticky, generation).
    preemptor: tuple[str, bool, int] | None = None

    @property
    def active(self) -> _SideView:
        return _SideView(self, True)

    @property
    def inadmissible(self) -> _SideView:
        return _SideView(self, False)

    def has_active(self) -> bool:
        return any(b.entries for b in self.act.values())

    def has(self, key: str) -> bool:
        return key in self.where or key == self.inflight

    # ---- buckets -------------------------------------------------------------------------
    def entry(self, info: WorkloadInfo) -> tuple[Any, ...]:
        return (*self.sort_key(info), next(self.seq), info.key)

    def bucket(self, digest: str, active: bool) -> _Bucket:
        side = self.act if active else self.inad
        bucket = side.get(digest)
        if bucket is None:
            bucket = side[digest] = _Bucket(digest, active)
        return bucket

    def add(self, bucket: _Bucket, info: WorkloadInfo, entry: tuple[Any, ...] | None) -> None:
        """Put ``info`` (not pending here) into ``bucket``; an active bucket needs its entry."""
        key = info.key
        bucket.infos[key] = info
        self.where[key] = bucket
        if info._backoff != NO_BACKOFF:
            bucket.slow.add(key)
        bucket.namespaces[info.namespace] = bucket.namespaces.get(info.namespace, 0) + 1
        if entry is None and info._order_key is not None:
            entry = (*info._order_key, next(self.seq), key)
        if entry is None:
            bucket.unkeyed.add(key)
        else:
            bucket.entries[key] = entry
            heappush(bucket.heap, entry)
            if bucket.active and bucket.head() is entry:
                heappush(self.top, (entry, bucket))
                self.trim_top()

    def take(self, key: str) -> WorkloadInfo | None:
        """Remove a pending key from its bucket; returns its info."""
        bucket = self.where.pop(key, None)
        if bucket is None:
            return None
        info = bucket.infos.pop(key)
        bucket.slow.discard(key)
        bucket.unkeyed.discard(key)
        count = bucket.namespaces[info.namespace] - 1
        if count:
            bucket.namespaces[info.namespace] = count
        else:
            del bucket.namespaces[info.namespace]
        was_head = bucket.active and bucket.head() is bucket.entries.get(key)
        entry = bucket.entries.pop(key, None)
        if not bucket.infos:
            side = self.act if bucket.active else self.inad
            if side.get(bucket.digest) is bucket:
                del side[bucket.digest]
            bucket.heap.clear()
            bucket.entries.clear()
            return info
        if entry is not None:
            if len(bucket.heap) > 2 * len(bucket.entries) + 64:
                bucket.heap = list(bucket.entries.values())
                heapify(bucket.heap)
            if was_head:
                head = bucket.head()
                if head is not None:
                    heappush(self.top, (head, bucket))
                    self.trim_top()
        return info

    def trim_top(self) -> None:
        """The pop order drops stale pairs lazily; rebuild it when they outnumber the active buckets."""
        if len(self.top) > 2 * len(self.act) + 64:
            top = []
            for bucket in self.act.values():
                head = bucket.head()
                if head is not None:
                    top.append((head, bucket))
            heapify(top)
            self.top = top

    def activate(self, bucket: _Bucket) -> None:
        """An inadmissible bucket (already out of ``self.inad``) joins the active side: the members get their
        queue-order keys now (as moving each of them would), then it merges with the active bucket of its hash."""
        if bucket.unkeyed:
            entries, heap, infos = bucket.entries, bucket.heap, bucket.infos
            for key in bucket.unkeyed:
                entry = entries[key] = self.entry(infos[key])
                heappush(heap, entry)
            bucket.unkeyed = set()
        bucket.active = True
        joined = self.act.get(bucket.digest)
        if joined is None:
            self.act[bucket.digest] = joined = bucket  # what merge does then
        else:
            self.merge(bucket, self.act)
            joined = self.act[bucket.digest]
        head = joined.head()
        if head is not None:
            heappush(self.top, (head, joined))
            self.trim_top()

    def merge(self, bucket: _Bucket, side: dict[str, _Bucket]) -> None:
        """``bucket`` (in no side dict, flagged for ``side``) joins ``side``: the smaller bucket's members
        move into the larger one."""
        other = side.get(bucket.digest)
        if other is None:
            side[bucket.digest] = bucket
            return
        big, small = (bucket, other) if len(bucket.infos) >= len(other.infos) else (other, bucket)
        big.active = side is self.act
        side[bucket.digest] = big
        where, entries, infos, namespaces, heap = self.where, big.entries, big.infos, big.namespaces, big.heap
        for key, info in small.infos.items():
            infos[key] = info
            where[key] = big
            namespaces[info.namespace] = namespaces.get(info.namespace, 0) + 1
        entries.update(small.entries)
        if len(small.entries) * 8 > len(heap):
            heap.extend(small.entries.values())
            heapify(heap)
        else:
            for entry in small.entries.values():
                heappush(heap, entry)
        big.slow |= small.slow
        big.unkeyed |= small.unkeyed
        small.infos, small.entries, small.heap, small.namespaces, small.slow = {}, {}, [], {}, set()
        small.unkeyed = set()

    # ---- queue primitives --------------------------------------------------------------------------
    def push(self, info: WorkloadInfo) -> None:
        """Into the active side (replacing the key's active version)."""
        key = info.key
        bucket = self.where.get(key)
        if bucket is not None and bucket.active:
            self.take(key)
        self.add(self.bucket(info.scheduling_hash, True), info, self.entry(info))

    def push_active_if_not_present(self, info: WorkloadInfo) -> bool:
        if info.key == self.inflight or info.key in self.where:
            return False
        self.push(info)
        return True

    def remove_active(self, key: str) -> None:
        bucket = self.where.get(key)
        if bucket is not None and bucket.active:
            self.take(key)

    def set_inadmissible(self, info: WorkloadInfo) -> None:
        """``inadmissibleWorkloads[key] = info`` (the key is not pending in ``cq``)."""
        self.add(self.bucket(info.scheduling_hash, False), info, None)

    def join_moved_hash(self, info: WorkloadInfo) -> bool:
        """:meth:`set_inadmissible` of ``info`` followed by the bulk move of the active bucket of its hash
        (``handleInadmissibleHash``), done as one step when there is such a bucket and no inadmissible one: that
        bucket turns inadmissible and ``info`` joins it. The two steps would make a bucket holding ``info`` alone,
        then merge the moved bucket (the larger) with it, appending ``info`` to its members: the same members
        in the same order, the same entry (one sequence number taken), the same backoff and namespace counts.
        Returns False (nothing done) otherwise."""
        digest = info.scheduling_hash
        moved = self.act.get(digest)
        if moved is None or not moved.infos or digest in self.inad:
            return False
        del self.act[digest]
        moved.active = False
        self.inad[digest] = moved
        self.add(moved, info, None)
        return True

    def pop(self, shortcut: bool = True) -> WorkloadInfo | None:
        if self.preemptor is not None and self.preemptor[1]:
            bucket = self.where.get(self.preemptor[0])
            if bucket is not None and bucket.active:
                return self.take(self.preemptor[0])
        top = self.top
        while top:
            entry, bucket = heappop(top)
            key = entry[-1]
            if bucket.active and bucket.entries.get(key) is entry:
                return self._take_head(bucket, entry) if shortcut else self.take(key)
        return None

    def _take_head(self, bucket: _Bucket, entry: tuple[Any, ...]) -> WorkloadInfo:
        """:meth:`take` of the entry :meth:`pop` found, which is its bucket's head: every active bucket's head
        has a pair in ``top`` and the popped pair is the least valid one, so no valid entry of the bucket is
        smaller. What :meth:`take` would ask (is it the head? what is its entry?) is known already."""
        key = entry[-1]
        del self.where[key]
        infos = bucket.infos
        info = infos.pop(key)
        del bucket.entries[key]
        if bucket.slow:
            bucket.slow.discard(key)
        namespaces = bucket.namespaces
        count = namespaces[info.namespace] - 1
        if count:
            namespaces[info.namespace] = count
        else:
            del namespaces[info.namespace]
        if not infos:
            if self.act.get(bucket.digest) is bucket:
                del self.act[bucket.digest]
            bucket.heap.clear()
            bucket.entries.clear()
            return info
        heap = bucket.heap
        # The entries before it in the heap's order are stale ones (taken members).
        while heappop(heap) is not entry:
            pass
        if len(heap) > 2 * len(bucket.entries) + 64:
            bucket.heap = heap = list(bucket.entries.values())
            heapify(heap)
        head = bucket.head()
        if head is not None:
            heappush(self.top, (head, bucket))
            self.trim_top()
        return info

    def move_to_active(self, key: str) -> bool:
        bucket = self.where.get(key)
        if bucket is None or bucket.active:
            return False
        info = self.take(key)
        assert info is not None
        self.push(info)
        return True

    def delete(self, key: str) -> None:
        self.take(key)
        if self.inflight == key:
            self.inflight = None
        if self.preemptor is not None and self.preemptor[0] == key:
            self.preemptor = None
