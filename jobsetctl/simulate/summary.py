"""The summary of a run: makespan, per-workload queueing, GPU-hours, preemptions, restarts (anchors.md §3,
"a summary block ... time-to-admission, makespan, utilisation", after Kueue's ``rangespec`` metrics).

Definitions (seconds of virtual time; ``null`` when it did not happen):

* a **workload** is a TrainJob, JobSet or Job that no other of those owns; its pods are all pods below it;
* ``submitted``: its ``Created`` event;
* ``admitted``: the first instant at which at least one of its pods is bound and none waits unbound, so the
  whole gang (or the first stage of a ``dependsOn`` chain) is placed; ``timeToAdmission = admitted - submitted``;
* ``queueingDelay``: total time during which at least one of its pods existed unbound (waits after a
  preemption or a restart count too; a suspended workload has no pods, so suspension does not);
* ``finished``: its ``Completed``, ``Failed`` or ``Deleted`` event; ``state`` as in the ``final`` section, or
  ``Deleted``, or ``Pending`` for a workload none of whose pods was ever bound (not ``Running``);
* ``neverStarted`` (only on a workload that never started and did not finish): ``{"reason": TEXT,
  "fitsCluster": true|false|null}``, why it waited and whether it could start alone on the cluster as it
  was at the end (:mod:`jobsetctl.simulate.verdict`);
* ``preemptions``: its pods' ``Preempted`` events; ``restarts``: ``Restarting`` events of its JobSet;
* ``gpuHours``: GPUs requested × time bound to a node (while that node is up), over its pods;
* **makespan**: last ``finished`` minus first ``submitted``, when every workload finished (else null);
* cluster **GPU-hours**: ``allocatable`` = Σ node allocatable GPUs × time the node was up within the run;
  ``used`` = Σ pod GPUs × time bound within the run and while its node is up; ``idle = allocatable - used``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from itertools import groupby
from typing import Any

from jobsetctl.fakecluster.events import SimEvent
from jobsetctl.simulate.ledger import Ledger, ObjectKey
from jobsetctl.simulate.timeline import Timeline

_TERMINAL = {"Completed": "Completed", "Failed": "Failed"}


@dataclass(slots=True)
class WorkloadStats:
    key: ObjectKey
    order: int
    submitted: float | None = None
    admitted: float | None = None
    finished: float | None = None
    state: str = "Running"
    queueing: float = 0.0
    preemptions: int = 0
    restarts: int = 0
    gpu_seconds: Fraction = Fraction(0)
    #: Why it never started, and whether it ever could here (:mod:`.verdict`); None when it started.
    verdict: Any = None
    # sweep state
    _pending: set[ObjectKey] = field(default_factory=set)
    _pending_since: float | None = None
    _bound_once: bool = False

    def settle(self, time: float) -> None:
        """End of an instant: admission and the start or end of a wait."""
        if not self._pending and self._bound_once and self.admitted is None:
            self.admitted = time
        if self._pending and self._pending_since is None:
            self._pending_since = time
        elif not self._pending and self._pending_since is not None:
            self.queueing += time - self._pending_since
            self._pending_since = None

    @property
    def started(self) -> bool:
        """Whether a pod of it was ever bound to a node."""
        return self._bound_once

    @property
    def time_to_admission(self) -> float | None:
        if self.admitted is None or self.submitted is None:
            return None
        return self.admitted - self.submitted

    def as_dict(self) -> dict[str, Any]:
        kind, namespace, name = self.key
        return {
            "kind": kind,
            "namespace": namespace,
            "name": name,
            "state": self.state,
            "submitted": json_number(self.submitted),
            "admitted": json_number(self.admitted),
            "timeToAdmission": json_number(self.time_to_admission),
            "queueingDelay": json_number(self.queueing),
            "finished": json_number(self.finished),
            "preemptions": self.preemptions,
            "restarts": self.restarts,
            "gpuHours": _hours(self.gpu_seconds),
            **({"neverStarted": self.verdict.as_dict()} if self.verdict is not None else {}),
        }


@dataclass(slots=True)
class Summary:
    workloads: list[WorkloadStats]
    makespan: float | None
    unfinished: int
    gpu_allocatable: Fraction
    gpu_used: Fraction
    preemptions: int
    restarts: int
    rejected: int
    pods: int
    pods_failed: int
    nodes: int
    nodes_failed: int

    @property
    def gpu_idle(self) -> Fraction:
        return max(self.gpu_allocatable - self.gpu_used, Fraction(0))

    def as_dict(self) -> dict[str, Any]:
        return {
            "makespan": json_number(self.makespan),
            "unfinishedWorkloads": self.unfinished,
            "gpuHours": {
                "allocatable": _hours(self.gpu_allocatable),
                "used": _hours(self.gpu_used),
                "idle": _hours(self.gpu_idle),
            },
            "preemptions": self.preemptions,
            "restarts": self.restarts,
            "rejected": self.rejected,
            "pods": self.pods,
            "podsFailed": self.pods_failed,
            "nodes": self.nodes,
            "nodesFailed": self.nodes_failed,
            "workloads": [w.as_dict() for w in self.workloads],
        }


def json_number(value: float | None) -> float | int | None:
    if value is None:
        return None
    rounded = round(value, 3)
    return int(rounded) if rounded == int(rounded) else rounded


class _ExactSum:
    """The exact sum of floats (each a binary fraction ``n / 2**k``), kept as one integer over a power of two:
    what adding a ``Fraction`` per term gives, without a ``Fraction`` (and its gcd) per term."""

    __slots__ = ("numerator", "shift")

    def __init__(self) -> None:
        self.numerator = 0
        self.shift = 0

    def add(self, value: float) -> None:
        numerator, denominator = value.as_integer_ratio()
        shift = denominator.bit_length() - 1  # the denominator is a power of two
        if shift > self.shift:
            self.numerator <<= shift - self.shift
            self.shift = shift
        self.numerator += numerator << (self.shift - shift)

    def value(self) -> Fraction:
        return Fraction(self.numerator, 1 << self.shift)


def _hours(seconds: Fraction) -> float:
    return round(float(seconds) / 3600.0, 3)


def summarize(events: list[SimEvent], ledger: Ledger, timeline: Timeline) -> Summary:
    end = timeline.end_time
    stats: dict[ObjectKey, WorkloadStats] = {}

    def workload(key: ObjectKey) -> WorkloadStats | None:
        top = ledger.workload_of(key)
        if top is None or top not in ledger.objects:
            return None  # never created (a rejected submission, an action on nothing)
        found = stats.get(top)
        if found is None:
            found = stats[top] = WorkloadStats(top, ledger.order_of(top))
        return found

    preemptions = restarts = rejected = pods_failed = 0
    for time, group in groupby(events, key=lambda e: e.time):
        touched: dict[ObjectKey, WorkloadStats] = {}
        for event in group:
            key: ObjectKey = (event.kind, event.namespace, event.name)
            if event.event == "Rejected":
                rejected += not event.transient
            elif event.kind == "Pod" and event.event == "Preempted":
                preemptions += 1
            elif event.kind == "Pod" and event.event == "Failed":
                pods_failed += 1
            elif event.kind == "JobSet" and event.event == "Restarting":
                restarts += 1
            owner = workload(key) if event.kind in ("Pod", "Job", "JobSet", "TrainJob") else None
            if owner is not None:
                touched[owner.key] = owner
                _apply(owner, key, event)
        # Judge pending only once the instant is over: a gang's pods are created and bound in one instant.
        for owner in touched.values():
            owner.settle(time)
    for owner in stats.values():
        if owner._pending_since is not None:
            owner.queueing += max(end - owner._pending_since, 0.0)

    # GPU-seconds are exact (Fractions); the pods' seconds are summed per GPU count (and per workload)
    # first, exactly, and multiplied once: the same values as a Fraction product per pod, much sooner.
    used_by_gpus: dict[Fraction, _ExactSum] = {}
    owned: dict[tuple[ObjectKey, Fraction], _ExactSum] = {}
    for span in timeline.pods:
        if span.scheduled is None or span.gpus == 0:
            continue
        # A pod holds GPUs only while its node is up: a failed node's capacity is gone, and so is its use.
        down = timeline.node_life.get(span.node or "", (0.0, None))[1]
        stop = min(span.end if span.end is not None else end, end, down if down is not None else end)
        seconds = max(stop - span.scheduled, 0.0)
        total = used_by_gpus.get(span.gpus)
        if total is None:
            total = used_by_gpus[span.gpus] = _ExactSum()
        total.add(seconds)
        if span.workload is not None and span.workload in stats:
            total = owned.get((span.workload, span.gpus))
            if total is None:
                total = owned[(span.workload, span.gpus)] = _ExactSum()
            total.add(seconds)
    used = Fraction(0)
    for gpus, total in used_by_gpus.items():
        used += gpus * total.value()
    for (key, gpus), total in owned.items():
        stats[key].gpu_seconds += gpus * total.value()
    allocatable = Fraction(0)
    nodes_failed = 0
    for name, (since, down) in timeline.node_life.items():
        info = ledger.nodes.get(name)
        if down is not None:
            nodes_failed += 1
        if info is None or info.gpus == 0:
            continue
        stop = min(down if down is not None else end, end)
        allocatable += info.gpus * Fraction(max(stop - since, 0.0))

    workloads = sorted(stats.values(), key=lambda w: (w.order, w.key))
    for owner in workloads:
        if owner.state == "Running" and not owner._bound_once:
            owner.state = "Pending"  # created, never ran: not "Running"
    finished = [w.finished for w in workloads if w.finished is not None]
    submitted = [w.submitted for w in workloads if w.submitted is not None]
    unfinished = sum(1 for w in workloads if w.finished is None)
    makespan = (max(finished) - min(submitted)) if workloads and not unfinished and submitted else None
    return Summary(
        workloads, makespan, unfinished, allocatable, used, preemptions, restarts, rejected,
        len(timeline.pods), pods_failed, len(timeline.node_life), nodes_failed,
    )


def _apply(owner: WorkloadStats, key: ObjectKey, event: SimEvent) -> None:
    if key[0] == "JobSet" and event.event == "Restarting":
        owner.restarts += 1
    if key == owner.key:
        if event.event == "Created" and owner.submitted is None:
            owner.submitted = event.time
        elif event.event in _TERMINAL and owner.finished is None:
            owner.finished = event.time
            owner.state = _TERMINAL[event.event]
        elif event.event == "Deleted" and owner.finished is None:
            owner.finished = event.time
            owner.state = "Deleted"
        elif event.event == "Suspended":
            owner.state = "Suspended"
        elif event.event == "Resumed":
            owner.state = "Running"
        return
    if key[0] != "Pod":
        return
    if event.event == "Created":
        owner._pending.add(key)
    elif event.event == "Scheduled":
        owner._pending.discard(key)
        owner._bound_once = True
    elif event.event in ("Succeeded", "Failed", "Preempted", "Deleted"):
        owner._pending.discard(key)
        if event.event == "Preempted":
            owner.preemptions += 1
