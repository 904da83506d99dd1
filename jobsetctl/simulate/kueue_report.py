"""Kueue in the reports: each workload's spans, each ClusterQueue's usage, the summary, ``--explain``.

Everything is read from the run's events (``kind: Workload``, ``group: kueue.x-k8s.io``) and the engine's
:class:`~jobsetctl.kueue.engine.history.History` (quota spans, preemptions, quotas), so the chart, the
JSON summary and the explanation cannot disagree.

A workload's spans: ``queued`` (created, waiting for quota), ``reserved`` (quota reserved, admission
checks pending), ``admitted``, ``evicted`` (evicted, its job stopping, quota still held), ``requeued``
(waiting again after an eviction); it ends ``finished``, ``deleted`` or still in its last span.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jobsetctl.kueue.engine.amounts import CPU, quantity_string
from jobsetctl.kueue.engine.names import GROUP

if TYPE_CHECKING:
    from jobsetctl.fakecluster.events import SimEvent
    from jobsetctl.kueue.engine.history import History
    from jobsetctl.simulate.runner import SimulationResult


@dataclass(slots=True)
class Span:
    start: float
    end: float
    state: str  # queued, reserved, admitted, evicted, requeued


@dataclass(slots=True)
class WorkloadStory:
    key: str
    namespace: str
    name: str
    order: int
    created: float | None = None
    first_admitted: float | None = None
    spans: list[Span] = field(default_factory=list)
    #: (time, kind): preempted, evicted, requeued, deactivated, finished.
    marks: list[tuple[float, str]] = field(default_factory=list)
    note: str = ""
    outcome: str = "queued"
    evictions: int = 0
    _state: str | None = None
    _since: float = 0.0

    def switch(self, time: float, state: str | None) -> None:
        if state == self._state:
            return
        if self._state is not None and time > self._since:
            self.spans.append(Span(self._since, time, self._state))
        self._state, self._since = state, time

    def close(self, end: float) -> None:
        if self._state is not None:
            self.outcome = self._state
        self.switch(end, None)


def kueue_events(events: list[SimEvent]) -> list[SimEvent]:
    return [e for e in events if e.kind == "Workload" and e.group == GROUP]


def stories(result: SimulationResult) -> list[WorkloadStory]:
    """Each Kueue workload's spans and marks, in creation order."""
    history: History | None = getattr(result.kueue, "history", None)
    preemptors = {}
    if history is not None:
        for record in history.preemptions:
            preemptors[(record.time, record.victim)] = record
    out: dict[str, WorkloadStory] = {}
    for event in kueue_events(result.events):
        key = f"{event.namespace}/{event.name}"
        story = out.get(key)
        if story is None:
            story = out[key] = WorkloadStory(key, event.namespace, event.name, len(out))
        t = event.time
        kind = event.event
        if kind == "Created":
            story.created = t
            story.switch(t, "queued")
        elif kind == "Pending":
            story.note = event.message or event.reason or ""
            if story._state in ("admitted", "reserved", "evicted"):
                story.switch(t, "requeued")
        elif kind == "QuotaReserved":
            story.switch(t, "reserved")
            story.note = ""
        elif kind == "Admitted":
            story.switch(t, "admitted")
            if story.first_admitted is None:
                story.first_admitted = t
            story.note = ""
        elif kind == "Evicted":
            story.evictions += 1
            story.marks.append((t, "evicted"))
            story.switch(t, "evicted")
            if event.reason != "Preempted":
                story.note = f"evicted: {event.reason}"
        elif kind == "Preempted":
            story.marks.append((t, "preempted"))
            found = preemptors.get((t, key))
            by = f" by {found.preemptor}" if found is not None else ""
            story.note = f"preempted{by} ({event.reason})"
        elif kind == "Requeued":
            story.marks.append((t, "requeued"))
        elif kind == "Deactivated":
            story.marks.append((t, "deactivated"))
            story.note = f"deactivated: {event.reason}"
        elif kind == "Finished":
            story.marks.append((t, "finished"))
            story.switch(t, None)
            story.outcome = "finished"
        elif kind == "Deleted":
            story.switch(t, None)
            story.outcome = "deleted"
    for story in out.values():
        story.close(result.end_time)
    return sorted(out.values(), key=lambda s: s.order)


# ---- usage over time ----------------------------------------------------------------------------------


@dataclass(slots=True)
class UsageSeries:
    """A ClusterQueue's usage of one flavor-resource over the run: a step function."""

    cluster_queue: str
    flavor: str
    resource: str
    nominal: int
    borrowing_limit: int | None
    #: (time, usage from then on), in time order.
    steps: list[tuple[float, int]] = field(default_factory=list)

    def at(self, time: float) -> int:
        value = 0
        for t, v in self.steps:
            if t > time:
                break
            value = v
        return value

    def integral(self, start: float, end: float) -> float:
        total = 0.0
        for i, (t, v) in enumerate(self.steps):
            t_end = self.steps[i + 1][0] if i + 1 < len(self.steps) else end
            lo, hi = max(t, start), min(t_end, end)
            if hi > lo:
                total += v * (hi - lo)
        return total

    def peak(self) -> int:
        return max((v for _, v in self.steps), default=0)

    def borrowed_integral(self, start: float, end: float) -> float:
        total = 0.0
        for i, (t, v) in enumerate(self.steps):
            t_end = self.steps[i + 1][0] if i + 1 < len(self.steps) else end
            lo, hi = max(t, start), min(t_end, end)
            if hi > lo and v > self.nominal:
                total += (v - self.nominal) * (hi - lo)
        return total


def usage_series(history: History, end_time: float) -> list[UsageSeries]:
    """One series per ClusterQueue and flavor-resource it has quota for (or used)."""
    deltas: dict[tuple[str, str, str], list[tuple[float, int]]] = {}
    for span in history.spans:
        end = span.end if span.end is not None else end_time
        if end <= span.start:
            continue
        for (flavor, resource), value in span.usage.items():
            items = deltas.setdefault((span.cluster_queue, flavor, resource), [])
            items.append((span.start, value))
            items.append((end, -value))
    keys: set[tuple[str, str, str]] = set(deltas)
    for name, info in history.cluster_queues.items():
        for flavor, resource in info.quotas:
            keys.add((name, flavor, resource))
    out: list[UsageSeries] = []
    for cq, flavor, resource in sorted(keys):
        cq_info = history.cluster_queues.get(cq)
        quota = cq_info.quotas.get((flavor, resource)) if cq_info is not None else None
        series = UsageSeries(cq, flavor, resource, quota.nominal if quota else 0,
                             quota.borrowing_limit if quota else None)
        value = 0
        points: dict[float, int] = {}
        for t, delta in sorted(deltas.get((cq, flavor, resource), [])):
            points[t] = points.get(t, 0) + delta
        series.steps.append((0.0, 0))
        for t in sorted(points):
            value += points[t]
            if series.steps and series.steps[-1][0] == t:
                series.steps[-1] = (t, value)
            else:
                series.steps.append((t, value))
        out.append(series)
    return out


def display_amount(resource: str, value: float) -> float:
    """A usage in the resource's own unit (cores for CPU), for JSON numbers."""
    number = value / 1000 if resource == CPU else value
    return round(number, 3)


def _percentile(values: list[float], fraction: float) -> float | None:
    """Nearest-rank percentile."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def _waits(values: list[float]) -> dict[str, Any]:
    from jobsetctl.simulate.summary import json_number

    return {"p50": json_number(_percentile(values, 0.5)), "p95": json_number(_percentile(values, 0.95)),
            "max": json_number(max(values) if values else None)}


def kueue_summary(result: SimulationResult) -> dict[str, Any]:
    """``summary.kueue`` of the JSON report: per ClusterQueue and LocalQueue, the admission wait
    (p50/p95/max of created -> first admitted), usage against nominal quota per flavor-resource
    (time-weighted average and peak, and the borrowed part), and preemptions by reason."""
    history: History = result.kueue.history
    end = result.end_time
    all_stories = stories(result)
    by_cq: dict[str, list[WorkloadStory]] = {}
    by_lq: dict[str, list[WorkloadStory]] = {}
    for story in all_stories:
        lq = history.workload_queues.get(story.key, "")
        cq = history.local_queues.get(lq, "")
        by_lq.setdefault(lq, []).append(story)
        by_cq.setdefault(cq, []).append(story)
    series = usage_series(history, end)
    cluster_queues = []
    for name in sorted(history.cluster_queues):
        info = history.cluster_queues[name]
        members = by_cq.get(name, [])
        usage = []
        for s in series:
            if s.cluster_queue != name:
                continue
            average = s.integral(0.0, end) / end if end > 0 else 0.0
            usage.append({
                "flavor": s.flavor, "resource": s.resource,
                "nominal": display_amount(s.resource, s.nominal),
                "borrowingLimit": display_amount(s.resource, s.borrowing_limit) if s.borrowing_limit is not None else None,
                "average": display_amount(s.resource, average), "peak": display_amount(s.resource, s.peak()),
                "borrowedAverage": display_amount(s.resource, s.borrowed_integral(0.0, end) / end if end > 0 else 0.0),
                "borrowedPeak": display_amount(s.resource, max(0, s.peak() - s.nominal)),
            })
        preempted: dict[str, int] = {}
        preempting: dict[str, int] = {}
        for record in history.preemptions:
            if record.victim_cluster_queue == name:
                preempted[record.reason] = preempted.get(record.reason, 0) + 1
            if record.preemptor_cluster_queue == name:
                preempting[record.reason] = preempting.get(record.reason, 0) + 1
        cluster_queues.append({
            "name": name, "cohort": info.cohort or None, **_counts(members),
            "admissionWait": _waits(_admission_waits(members)),
            "usage": usage,
            "preemptedByReason": dict(sorted(preempted.items())),
            "preemptingByReason": dict(sorted(preempting.items())),
        })
    local_queues = []
    for key in sorted(history.local_queues):
        members = by_lq.get(key, [])
        namespace, _, lq_name = key.partition("/")
        local_queues.append({"namespace": namespace, "name": lq_name, "clusterQueue": history.local_queues[key],
                             **_counts(members), "admissionWait": _waits(_admission_waits(members))})
    return {"clusterQueues": cluster_queues, "localQueues": local_queues}


def _admission_waits(members: list[WorkloadStory]) -> list[float]:
    return [s.first_admitted - s.created for s in members if s.first_admitted is not None and s.created is not None]


def _counts(members: list[WorkloadStory]) -> dict[str, int]:
    return {
        "workloads": len(members),
        "admitted": sum(1 for s in members if s.first_admitted is not None),
        "finished": sum(1 for s in members if s.outcome == "finished"),
        "pending": sum(1 for s in members if s.outcome in ("queued", "requeued")),
        "evictions": sum(s.evictions for s in members),
    }


def usage_label(series: UsageSeries) -> str:
    return (f"{series.cluster_queue} {series.flavor}/{series.resource} "
            f"{quantity_string(series.resource, series.nominal)}")
