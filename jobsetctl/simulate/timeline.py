"""From the event log to spans: what each pod did and when, and one Gantt row per Job or gang.

Every output (terminal chart, SVG, Chrome trace, summary) reads this one interpretation of the events,
so they cannot disagree. Rows (anchors.md §3, "Gantt-style terminal views"):

* a **header** row per TrainJob or JobSet (a TrainJob's JobSet is folded into it);
* a **Job** row per Job, under its header, one incarnation per creation (a JobSet restart recreates Jobs
  under the same name: the row goes on, with a restart mark);
* a **gang** row per Workload or PodGroup whose pods have no Job (when its pods belong to Jobs, as with a
  PodGroup shared by a JobSet's Jobs or created by the Job controller, its marks and notes go to those
  Job rows);
* a **pod** row per pod that has neither a Job nor a group.

A row's life is split into segments: ``wait`` (created, none of its pods bound), ``run`` (at least one
pod bound), ``suspended``. Marks: ``preempted`` (a pod or the gang), ``failed`` (a pod failed),
``restart`` (a JobSet restart, or a Job created again).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from itertools import groupby
from typing import Any

from jobsetctl.fakecluster.events import SimEvent
from jobsetctl.simulate.ledger import GROUP_KINDS, Ledger, ObjectKey

POD_TERMINAL = {"Succeeded": "succeeded", "Failed": "failed", "Preempted": "preempted"}
ROW_TERMINAL = {"Completed": "succeeded", "Failed": "failed"}


@dataclass(slots=True)
class PodSpan:
    key: ObjectKey
    created: float
    row: ObjectKey
    workload: ObjectKey | None
    gpus: Fraction = Fraction(0)
    node: str | None = None
    scheduled: float | None = None
    started: float | None = None
    end: float | None = None
    #: succeeded, failed, preempted, deleted; None while it lives.
    outcome: str | None = None
    waiting_reason: str | None = None


@dataclass(frozen=True, slots=True)
class Segment:
    start: float
    end: float
    state: str  # wait, run, suspended


@dataclass(frozen=True, slots=True)
class Mark:
    time: float
    kind: str  # preempted, failed, restart


@dataclass(slots=True)
class Row:
    key: ObjectKey
    kind: str  # header, job, gang, pod
    depth: int
    workload: ObjectKey | None
    order: int
    segments: list[Segment] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    #: succeeded, failed, deleted, preempted; or running, waiting, suspended at the end of the run.
    outcome: str = "waiting"
    note: str = ""
    # sweep state
    _state: str | None = None
    _since: float = 0.0
    _bound: set[ObjectKey] = field(default_factory=set)
    _members: set[ObjectKey] = field(default_factory=set)
    _incarnations: int = 0
    _last_member_end: float | None = None
    _member_failed: bool = False

    @property
    def label(self) -> str:
        kind, namespace, name = self.key
        return f"{kind} {namespace}/{name}" if namespace and self.kind == "header" else name

    @property
    def open(self) -> bool:
        return self._state is not None

    def start(self, time: float, suspended: bool = False) -> None:
        if self._state is not None:
            return
        if self._incarnations:
            self.marks.append(Mark(time, "restart"))
        self._incarnations += 1
        self._state, self._since = ("suspended" if suspended else "wait"), time
        self._bound.clear()

    def switch(self, time: float, state: str | None) -> None:
        if state == self._state:
            return
        if self._state is not None and time > self._since:
            self.segments.append(Segment(self._since, time, self._state))
        self._state, self._since = state, time

    def finish(self, time: float, outcome: str) -> None:
        if self._state is None:
            return
        self.switch(time, None)
        self.outcome = outcome

    def bound(self, pod: ObjectKey, time: float) -> None:
        if self._state is None:
            self.start(time)
        self._bound.add(pod)
        if self._state == "wait":
            self.switch(time, "run")

    def released(self, pod: ObjectKey, time: float, outcome: str) -> None:
        self._members.discard(pod)
        self._last_member_end = time
        self._member_failed = self._member_failed or outcome == "failed"
        if pod in self._bound:
            self._bound.discard(pod)
            if not self._bound and self._state == "run":
                self.switch(time, "wait")

    def close_at_end(self, end_time: float) -> None:
        if self._state is None:
            return
        if self.kind in ("gang",) and not self._members and self._last_member_end is not None:
            self.finish(self._last_member_end, "failed" if self._member_failed else "succeeded")
            return
        state = self._state
        self.switch(end_time, None)
        self.outcome = {"run": "running", "wait": "waiting", "suspended": "suspended"}[state]


@dataclass(slots=True)
class Timeline:
    end_time: float
    pods: list[PodSpan]
    rows: list[Row]
    #: Node name → (up since, down at or None), for allocatable GPU-hours.
    node_life: dict[str, tuple[float, float | None]]


def build_timeline(events: list[SimEvent], ledger: Ledger, end_time: float) -> Timeline:
    builder = _Builder(ledger)
    for _, group in groupby(events, key=lambda e: e.time):
        for event in group:
            builder.apply(event)
    for row in builder.rows.values():
        row.close_at_end(end_time)
    pods = builder.pods
    rows = sorted(builder.rows.values(), key=builder.row_sort_key)
    return Timeline(end_time, pods, rows, builder.node_life)


class _Builder:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.rows: dict[ObjectKey, Row] = {}
        self.pods: list[PodSpan] = []
        self.live_pods: dict[ObjectKey, PodSpan] = {}
        self.node_life: dict[str, tuple[float, float | None]] = {}
        #: Rows of the pods that belong to each Workload or PodGroup.
        self.member_rows: dict[ObjectKey, set[ObjectKey]] = {}

    # ---- row lookup --------------------------------------------------------------------------------
    def header_key(self, key: ObjectKey) -> ObjectKey | None:
        workload = self.ledger.workload_of(key)
        return workload if workload is not None and workload[0] in ("TrainJob", "JobSet") else None

    def row_key_of_pod(self, key: ObjectKey) -> ObjectKey:
        job = self.ledger.job_of(key)
        if job is not None:
            return job
        info = self.ledger.info(key)
        if info is not None and info.group is not None:
            return self.ledger.job_of(info.group) or info.group
        return key

    def row(self, key: ObjectKey, kind: str) -> Row:
        row = self.rows.get(key)
        if row is None:
            header = self.header_key(key) if kind != "header" else key
            depth = 1 if kind != "header" and header is not None else 0
            workload = self.ledger.workload_of(key)
            row = Row(key, kind, depth, workload, self.ledger.order_of(key))
            self.rows[key] = row
        return row

    def row_sort_key(self, row: Row) -> tuple[int, int, int]:
        top = self.header_key(row.key) or row.key
        return (self.ledger.order_of(top), 0 if row.kind == "header" else 1, row.order)

    # ---- events ------------------------------------------------------------------------------------
    def apply(self, event: SimEvent) -> None:
        key: ObjectKey = (event.kind, event.namespace, event.name)
        if event.event == "Rejected":
            return  # nothing was created (or the action found nothing): the log tells it
        if event.kind == "Pod":
            self.pod_event(key, event)
        elif event.kind == "Job":
            self.owner_event(self.row(key, "job"), event, own=True)
        elif event.kind in ("JobSet", "TrainJob"):
            header = self.header_key(key) or key
            self.owner_event(self.row(header, "header"), event, own=header == key)
        elif event.kind in GROUP_KINDS:
            self.group_event(key, event)
        elif event.kind == "Node":
            self.node_event(event)

    def owner_event(self, row: Row, event: SimEvent, *, own: bool) -> None:
        info = self.ledger.info(row.key)
        if event.event == "Restarting":
            row.marks.append(Mark(event.time, "restart"))
        if not own:
            return
        if event.event == "Created":
            row.start(event.time, suspended=bool(info and info.suspended))
        elif event.event == "Suspended" and row.open:
            row.switch(event.time, "suspended")
        elif event.event == "Resumed" and row.open:
            row.switch(event.time, "run" if row._bound else "wait")
        elif event.event in ROW_TERMINAL:
            row.finish(event.time, ROW_TERMINAL[event.event])
        elif event.event == "Deleted":
            row.finish(event.time, "deleted")

    def group_event(self, key: ObjectKey, event: SimEvent) -> None:
        """A Workload or PodGroup: its own row when pods without a Job belong to it; else its story goes to
        the rows of its member pods (the Job that created it, or the Jobs whose pods name it)."""
        owner_job = self.ledger.job_of(key)
        if owner_job is not None:
            targets = [self.row(owner_job, "job")]
        elif key in self.rows:
            targets = [self.rows[key]]
        else:
            targets = [self.rows[k] for k in sorted(self.member_rows.get(key, ()), key=self.ledger.order_of)]
        for row in targets:
            if event.event == "Preempted" and Mark(event.time, "preempted") not in row.marks:
                row.marks.append(Mark(event.time, "preempted"))
            elif event.event == "Unschedulable":
                row.note = event.message or event.reason or "unschedulable"
            elif event.event == "Scheduled":
                row.note = ""
            elif event.event == "Deleted" and row.key == key:
                row.finish(event.time, "deleted")

    def pod_event(self, key: ObjectKey, event: SimEvent) -> None:
        if event.event == "Created":
            info = self.ledger.info(key)
            row_key = self.row_key_of_pod(key)
            kind = "job" if row_key[0] == "Job" else ("gang" if row_key[0] in GROUP_KINDS else "pod")
            row = self.row(row_key, kind)
            span = PodSpan(key, event.time, row_key, self.ledger.workload_of(key), info.gpus if info else Fraction(0))
            self.pods.append(span)
            self.live_pods[key] = span
            row._members.add(key)
            if info is not None and info.group is not None:
                self.member_rows.setdefault(info.group, set()).add(row_key)
            if kind == "pod" or (kind == "gang" and not row.open):
                row.start(event.time)
            return
        live = self.live_pods.get(key)
        if live is None:
            return
        span = live
        row = self.rows[span.row]
        header = self.rows.get(self.header_key(key) or ("", "", ""))
        if event.event == "Scheduled":
            span.scheduled, span.node, span.waiting_reason = event.time, event.node, None
            for target in (row, header):
                if target is not None:
                    target.bound(key, event.time)
            row.note = ""
        elif event.event == "Unschedulable":
            span.waiting_reason = event.message or event.reason
            row.note = span.waiting_reason or "unschedulable"
        elif event.event == "Started":
            span.started = event.time
        elif event.event in POD_TERMINAL or event.event == "Deleted":
            outcome = POD_TERMINAL.get(event.event, "deleted")
            span.end, span.outcome = event.time, outcome
            del self.live_pods[key]
            if outcome in ("preempted", "failed"):
                row.marks.append(Mark(event.time, outcome))
            for target in (row, header):
                if target is not None:
                    target.released(key, event.time, outcome)
            if row.kind == "pod":
                row.finish(event.time, outcome)

    def node_event(self, event: SimEvent) -> None:
        if event.event == "Created":
            self.node_life[event.name] = (event.time, None)
        elif event.event in ("Failed", "Deleted") and event.name in self.node_life:
            since, down = self.node_life[event.name]
            if down is None:
                self.node_life[event.name] = (since, event.time)


def annotate_groups(timeline: Timeline, ledger: Ledger, records: Any) -> None:
    """Put the scheduler's per-group story on the rows (scheduler ``group_records``: admission time, chosen
    topology domains, why it waits; scheduling.md §1.3, §1.7): a gang that still waits says why, an
    admitted gang names its domain. Records are read by attribute, so any object with ``kind``,
    ``namespace``, ``name``, ``admitted_at``, ``domains`` and ``waiting`` works."""
    if not isinstance(records, dict):
        return
    rows = {row.key: row for row in timeline.rows}
    # A group no Job owns (a PodGroup written beside the Job or JobSet whose pods name it) has no row of
    # its own: its story goes to the rows of its member pods, as group_event does with its events.
    member_rows: dict[ObjectKey, list[Row]] = {}
    for span in timeline.pods:
        info = ledger.info(span.key)
        row = rows.get(span.row)
        if info is not None and info.group is not None and row is not None:
            listed = member_rows.setdefault(info.group, [])
            if row not in listed:
                listed.append(row)
    for record in records.values():
        key: ObjectKey = (str(getattr(record, "kind", "")), str(getattr(record, "namespace", "")),
                          str(getattr(record, "name", "")))
        own = rows.get(ledger.job_of(key) or key)
        targets = [own] if own is not None else member_rows.get(key, [])
        waiting = getattr(record, "waiting", None)
        domains = [str(d) for d in getattr(record, "domains", None) or []]
        for row in targets:
            if row.outcome == "waiting" and waiting:
                row.note = str(waiting)
            elif row.outcome == "running" and domains and not row.note:
                row.note = "in " + ", ".join(domains)
