"""Bucket indexes of the scheduler's cache: nodes of one node set grouped by capacity class and usage.

Nodes with the same allocatable and the same requested amounts fit and score identically for any pod, so
a pod is checked once per :class:`Bucket`, not once per node (see :mod:`.snapshot`, which keeps them up to
date as pods come and go).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jobsetctl.fakecluster.scheduler.snapshot import NodeInfo

BucketKey = tuple[Any, ...]


class Bucket:
    __slots__ = ("heap", "key", "members")

    def __init__(self, key: BucketKey) -> None:
        self.key = key
        self.members: dict[int, NodeInfo] = {}
        self.heap: list[int] = []

    def add(self, node: NodeInfo) -> None:
        self.members[node.index] = node
        heapq.heappush(self.heap, node.index)
        if len(self.heap) > 2 * len(self.members) + 16:
            self.heap = sorted(self.members)  # drop stale entries (a sorted list is a heap)

    def remove(self, node: NodeInfo) -> None:
        self.members.pop(node.index, None)

    def first(self) -> NodeInfo | None:
        heap, members = self.heap, self.members
        while heap:
            node = members.get(heap[0])
            if node is not None:
                return node
            heapq.heappop(heap)
        return None

    def sample(self) -> NodeInfo:
        return next(iter(self.members.values()))

    def ordered(self) -> list[NodeInfo]:
        return [self.members[i] for i in sorted(self.members)]


class BucketIndex:
    """Nodes of one node set grouped by capacity class and usage."""

    __slots__ = ("buckets", "key", "names")

    def __init__(self, key: Any, nodes: Iterable[NodeInfo]) -> None:
        self.key = key
        self.buckets: dict[BucketKey, Bucket] = {}
        self.names: set[str] = set()
        for node in nodes:
            self.add(node)

    def add(self, node: NodeInfo) -> None:
        if node.name in self.names:
            return
        self.names.add(node.name)
        self._put(node, node.current_key())
        node.indexes.append(self)

    def discard(self, node: NodeInfo) -> None:
        if node.name not in self.names:
            return
        self.names.discard(node.name)
        self._take(node, node.current_key())
        if self in node.indexes:
            node.indexes.remove(self)

    def move(self, node: NodeInfo, old: BucketKey, new: BucketKey) -> None:
        self._take(node, old)
        self._put(node, new)

    def _put(self, node: NodeInfo, key: BucketKey) -> None:
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = self.buckets[key] = Bucket(key)
        bucket.add(node)

    def _take(self, node: NodeInfo, key: BucketKey) -> None:
        bucket = self.buckets.get(key)
        if bucket is not None:
            bucket.remove(node)
            if not bucket.members:
                del self.buckets[key]

    def detach(self) -> None:
        for bucket in self.buckets.values():
            for node in bucket.members.values():
                if self in node.indexes:
                    node.indexes.remove(self)
        self.buckets.clear()
        self.names.clear()

    def __len__(self) -> int:
        return len(self.names)


class NodeSet:
    """An ordered set of candidate nodes, with a bucket index when it is large enough to pay off."""

    __slots__ = ("index", "key", "nodes")

    def __init__(self, key: Any, nodes: list[NodeInfo], index: BucketIndex | None) -> None:
        self.key = key
        self.nodes = nodes
        self.index = index

    def __len__(self) -> int:
        return len(self.nodes)
