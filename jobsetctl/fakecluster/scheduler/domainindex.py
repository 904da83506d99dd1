"""The best topology domain for a gang without scanning every domain (issue #5).

For one label key, one pod signature and one gang size ``n``, a lazy max-heap holds the domains that can
take all ``n`` pods, keyed by the allocation fraction they would end with (scheduling.md §1.7 phase 3:
PodGroupPodsCount is then maximal for all of them, so the fraction decides; ties go to the smallest
label value, the heap's natural order — U7). Domains touched since the last query (a pod landed or
left on one of their nodes) are recomputed on the next query; node changes rebuild the heap. A gang
then costs O(log domains) instead of a pass over every rack.

When no domain can take all ``n`` pods (a gang that accepts fewer, or none fits), the caller falls back
to the full scan, which also explains failures.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from jobsetctl.fakecluster.scheduler.podinfo import PodInfo
from jobsetctl.fakecluster.scheduler.snapshot import NodeInfo

if TYPE_CHECKING:
    from jobsetctl.fakecluster.scheduler.placement import Placer

_STAMPS = itertools.count()


@dataclass(slots=True)
class _Heap:
    generation: int = -1
    entries: list[tuple[float, str, int]] = field(default_factory=list)
    #: value -> stamp of its valid entry (absent: the domain cannot take the gang)
    current: dict[str, int] = field(default_factory=dict)
    dirty: set[str] = field(default_factory=set)
    rebuild: bool = True


class DomainIndex:
    def __init__(self, placer: Placer) -> None:
        self.placer = placer
        self.heaps: dict[tuple[str, str, int], _Heap] = {}
        placer.domain_versions.listeners.append(self._changed)

    def _changed(self, key: str, value: str) -> None:
        for (heap_key, _, _), heap in self.heaps.items():
            if heap_key == key:
                heap.dirty.add(value)

    def best(self, key: str, pods: list[PodInfo], domains: dict[str, list[NodeInfo]]) -> str | None:
        from jobsetctl.fakecluster.scheduler.placement import _fraction

        first = pods[0]
        size = len(pods)
        heap = self.heaps.setdefault((key, first.static.key, size), _Heap())
        generation = self.placer.s.snapshot.spec_generation
        if heap.generation != generation or heap.rebuild or len(heap.entries) > 4 * len(heap.current) + 64:
            heap.generation, heap.rebuild = generation, False
            heap.entries.clear()
            heap.current.clear()
            heap.dirty = set(domains)
        for value in heap.dirty:
            nodes = domains.get(value)
            heap.current.pop(value, None)
            if nodes is None:
                continue
            capacity, used, allocatable = self.placer.domain_stats(first, nodes)
            if capacity >= size:
                stamp = next(_STAMPS)
                heap.current[value] = stamp
                heapq.heappush(heap.entries, (-_fraction(first.requests, size, used, allocatable), value, stamp))
        heap.dirty.clear()
        entries = heap.entries
        while entries:
            _, value, stamp = entries[0]
            if heap.current.get(value) == stamp:
                return value
            heapq.heappop(entries)
        return None
