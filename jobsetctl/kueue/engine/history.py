"""What the reports need from the engine after a run: when each workload held quota where, and the
ClusterQueues' quotas.

The cache calls :meth:`History.quota_changed` whenever a workload starts holding quota, stops, or its
usage changes (``reclaimablePods``); each call closes the workload's open span and opens the next one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jobsetctl.kueue.engine.amounts import FlavorResource
from jobsetctl.kueue.engine.objects import Quota

if TYPE_CHECKING:
    from jobsetctl.kueue.engine.workload import PodSetResources


@dataclass(slots=True)
class QuotaSpan:
    key: str
    cluster_queue: str
    start: float
    usage: dict[FlavorResource, int]
    #: Podset name -> resource -> flavor.
    flavors: dict[str, dict[str, str]]
    end: float | None = None


@dataclass(frozen=True, slots=True)
class PreemptionRecord:
    time: float
    victim: str
    victim_cluster_queue: str
    preemptor: str
    preemptor_cluster_queue: str
    reason: str


@dataclass(slots=True)
class ClusterQueueInfo:
    name: str
    cohort: str
    #: Root of the Cohort tree ("" without a Cohort).
    root: str
    flavors: list[str]
    quotas: dict[FlavorResource, Quota]
    strategy: str
    preemption: dict[str, Any]


@dataclass(slots=True)
class History:
    spans: list[QuotaSpan] = field(default_factory=list)
    open: dict[str, QuotaSpan] = field(default_factory=dict)
    cluster_queues: dict[str, ClusterQueueInfo] = field(default_factory=dict)
    #: LocalQueue key -> ClusterQueue name.
    local_queues: dict[str, str] = field(default_factory=dict)
    #: Workload key -> LocalQueue key, for every workload seen.
    workload_queues: dict[str, str] = field(default_factory=dict)
    preemptions: list[PreemptionRecord] = field(default_factory=list)

    def quota_changed(self, key: str, now: float, cluster_queue: str | None, usage: dict[FlavorResource, int] | None,
                      podsets: Iterable[PodSetResources] = ()) -> None:
        """``podsets``: the workload's, for the flavors of a new span (read only when one opens: the cache
        re-adds each admitted workload at each version it observes, mostly with the span unchanged)."""
        current = self.open.get(key)
        if current is not None:
            if cluster_queue == current.cluster_queue and usage == current.usage:
                return
            current.end = now
            del self.open[key]
        if cluster_queue is None or usage is None:
            return
        flavors = {p.name: dict(p.flavors) for p in podsets if p.flavors}
        span = QuotaSpan(key, cluster_queue, now, dict(usage), flavors)
        self.spans.append(span)
        self.open[key] = span
