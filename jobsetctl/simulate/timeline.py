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

A row's life is split into spans of named states (drawn as :mod:`.chartstyle` says): ``wait`` (none of
its live pods bound: queued, or a gang still incomplete), ``partial`` (some bound, some waiting: partly
running), ``run`` (every live pod bound), ``suspended``. Marks: ``preempted`` (a pod or the gang),
``pod-failed``, ``restart`` (a JobSet restart, or a Job created again); the outcome (``succeeded``,
``failed``, ``deleted``, ``preempted``) is the row's end mark, at the time it was reached. A node that
fails gets a row of its own (state ``down`` from the failure on, mark ``node-failed``), after the
workload rows.

Other row sources (Kueue workloads, ClusterQueue usage) add :class:`Row` objects with states and marks
they register in :mod:`.chartstyle`; nothing here or in the renderers needs to know them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
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
    state: str  # a state of chartstyle.STATES: wait, partial, run, suspended, down


@dataclass(frozen=True, slots=True)
class Mark:
    time: float
    kind: str  # a mark of chartstyle.MARKS: preempted, pod-failed, restart, node-failed


NODE_ROW = "node"
#: Kinds of rows that describe the cluster rather than work (a failed node; later a ClusterQueue's usage):
#: they never hold the time axis open (:func:`chart_end`). Other row sources add their kinds here.
CONTEXT_ROW_KINDS: set[str] = {NODE_ROW}


@dataclass(slots=True)
class Row:
    key: ObjectKey
    kind: str  # header, job, gang, pod, node
    depth: int
    workload: ObjectKey | None
    order: int
    segments: list[Segment] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    #: succeeded, failed, deleted, preempted; or running, waiting, suspended (down: a node) at the end of the run.
    outcome: str = "waiting"
    note: str = ""
    #: When the outcome was reached (the end mark's time); None while the row is open.
    finished_at: float | None = None
    #: The row this one is drawn under (its label may drop the parent's name).
    parent: ObjectKey | None = None
    # sweep state
    _state: str | None = None
    _since: float = 0.0
    _suspended: bool = False
    _live: set[ObjectKey] = field(default_factory=set)
    _bound: set[ObjectKey] = field(default_factory=set)
    _incarnations: int = 0
    _last_member_end: float | None = None
    _member_failed: bool = False
    _mark_keys: set[Mark] = field(default_factory=set)

    @property
    def title(self) -> str:
        """``Kind namespace/name`` (``Kind name`` when cluster-scoped)."""
        kind, namespace, name = self.key
        return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"

    @property
    def label(self) -> str:
        """The full label: the title for a top-level row, the name for a row under a parent."""
        return self.key[2] if self.parent is not None else self.title

    @property
    def open(self) -> bool:
        return self._state is not None

    @property
    def end_mark(self) -> Mark | None:
        """The outcome as a mark where the row ended (rows still open at the end have none)."""
        from jobsetctl.simulate.chartstyle import END_MARKS

        if self.finished_at is None or self.outcome not in END_MARKS:
            return None
        return Mark(self.finished_at, END_MARKS[self.outcome])

    def add_mark(self, mark: Mark) -> None:
        """A mark, once: pods that fail together, or a gang preempted as a whole, make one mark."""
        if mark not in self._mark_keys:
            self._mark_keys.add(mark)
            self.marks.append(mark)

    def all_marks(self) -> list[Mark]:
        end = self.end_mark
        return [*self.marks, end] if end is not None else list(self.marks)

    def _wanted(self) -> str:
        if self._suspended:
            return "suspended"
        if self._bound:
            # Bound pods are live pods (bound() adds to both, released() removes from both): comparing the
            # counts is comparing the sets, without a pass over a 5,000-pod header's members per event.
            return "run" if len(self._bound) >= len(self._live) else "partial"
        return "wait"

    def start(self, time: float, suspended: bool = False) -> None:
        if self._state is not None:
            return
        if self._incarnations:
            self.add_mark(Mark(time, "restart"))
        self._incarnations += 1
        self._suspended = suspended
        self._live.clear()
        self._bound.clear()
        self.outcome, self.finished_at = "waiting", None
        self._state, self._since = self._wanted(), time

    def open_as(self, time: float, state: str) -> None:
        """Open a row in a fixed state (a node row: ``down`` from its failure on)."""
        if self._state is None:
            self._state, self._since = state, time

    def switch(self, time: float, state: str | None) -> None:
        if state == self._state:
            return
        if self._state is not None and time > self._since:
            self.segments.append(Segment(self._since, time, self._state))
        self._state, self._since = state, time
        last = self.segments[-1] if self.segments else None
        if state is not None and last is not None and last.end == time and last.state == state:
            # Left and taken again within one instant (a finished pod replaced at once): one span, not two.
            self.segments.pop()
            self._since = last.start

    def refresh(self, time: float) -> None:
        if self._state is not None:
            self.switch(time, self._wanted())

    def finish(self, time: float, outcome: str) -> None:
        if self._state is None:
            return
        self.switch(time, None)
        self.outcome, self.finished_at = outcome, time

    def suspend(self, time: float, suspended: bool) -> None:
        self._suspended = suspended
        self.refresh(time)

    def member_created(self, pod: ObjectKey, time: float) -> None:
        if self._state is None:
            self.start(time)
        self._live.add(pod)
        self.refresh(time)

    def bound(self, pod: ObjectKey, time: float) -> None:
        if self._state is None:
            self.start(time)
        self._live.add(pod)
        self._bound.add(pod)
        self.refresh(time)

    def released(self, pod: ObjectKey, time: float, outcome: str) -> None:
        self._live.discard(pod)
        self._bound.discard(pod)
        self._last_member_end = time
        self._member_failed = self._member_failed or outcome == "failed"
        self.refresh(time)

    def close_at_end(self, end_time: float) -> None:
        if self._state is None:
            return
        if self.kind == "gang" and not self._live and self._last_member_end is not None:
            self.finish(self._last_member_end, "failed" if self._member_failed else "succeeded")
            return
        state = self._state
        self.switch(end_time, None)
        self.outcome = {"run": "running", "partial": "running", "wait": "waiting"}.get(state, state)


@dataclass(slots=True)
class Timeline:
    end_time: float
    pods: list[PodSpan]
    rows: list[Row]
    #: Node name → (up since, down at or None), for allocatable GPU-hours.
    node_life: dict[str, tuple[float, float | None]]


def build_timeline(events: list[SimEvent], ledger: Ledger, end_time: float) -> Timeline:
    builder = _Builder(ledger)
    apply = builder.apply
    for event in events:
        apply(event)
    for row in [*builder.rows.values(), *builder.node_rows.values()]:
        row.close_at_end(end_time)
    pods = builder.pods
    rows = sorted(builder.rows.values(), key=builder.row_sort_key)
    return Timeline(end_time, pods, [*rows, *builder.node_rows.values()], builder.node_life)


def chart_end(timeline: Timeline, *, until_asked: bool) -> float:
    """Where the chart's time axis ends: at the run's end when the user asked for ``--until``, or when a
    row is still open at the end (something was unfinished); else when the last row ended (the makespan:
    an axis that runs on to a Scenario's ``until`` long after everything finished draws nothing)."""
    if until_asked or not timeline.rows:
        return timeline.end_time
    ends: list[float] = []
    for row in timeline.rows:
        if row.kind in CONTEXT_ROW_KINDS:
            ends.extend(mark.time for mark in row.marks)
        elif row.finished_at is None:
            return timeline.end_time
        else:
            ends.append(row.finished_at)
    return min(max(ends), timeline.end_time) if ends else timeline.end_time


#: Workload kinds that get a header row above their Jobs' rows.
HEADER_KINDS = ("TrainJob", "JobSet")


class _Builder:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.rows: dict[ObjectKey, Row] = {}
        self.pods: list[PodSpan] = []
        self.live_pods: dict[ObjectKey, PodSpan] = {}
        self.node_life: dict[str, tuple[float, float | None]] = {}
        #: A row per node that failed, in order of failure.
        self.node_rows: dict[str, Row] = {}
        #: Rows of the pods that belong to each Workload or PodGroup.
        self.member_rows: dict[ObjectKey, set[ObjectKey]] = {}

    # ---- row lookup --------------------------------------------------------------------------------
    def header_key(self, key: ObjectKey) -> ObjectKey | None:
        workload = self.ledger.workload_of(key)
        return workload if workload is not None and workload[0] in HEADER_KINDS else None

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
            row = Row(key, kind, depth, workload, self.ledger.order_of(key),
                      parent=header if depth else None)
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
            row.add_mark(Mark(event.time, "restart"))
        if not own:
            return
        if event.event == "Created":
            row.start(event.time, suspended=bool(info and info.suspended))
        elif event.event == "Suspended" and row.open:
            row.suspend(event.time, True)
        elif event.event == "Resumed" and row.open:
            row.suspend(event.time, False)
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
            if event.event == "Preempted":
                row.add_mark(Mark(event.time, "preempted"))
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
            if info is not None and info.group is not None:
                self.member_rows.setdefault(info.group, set()).add(row_key)
            if kind == "pod" or (kind == "gang" and not row.open):
                row.start(event.time)
            header = self.rows.get(self.header_key(key) or ("", "", ""))
            for target in (row, header):
                if target is not None and target.open:
                    target.member_created(key, event.time)
            return
        live = self.live_pods.get(key)
        if live is None:
            return
        span = live
        row = self.rows[span.row]
        # The pod's workload was looked up (and cached by the ledger) when it was created: header_key's answer.
        workload = span.workload
        header = self.rows.get(workload) if workload is not None and workload[0] in HEADER_KINDS else None
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
            mark = Mark(event.time, "pod-failed" if outcome == "failed" else outcome)
            # A pod row shows its own end as its end mark; pods that end together make one mark.
            if outcome in ("preempted", "failed") and row.kind != "pod":
                row.add_mark(mark)
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
        if event.event == "Failed" and event.name not in self.node_rows:
            row = Row(("Node", "", event.name), NODE_ROW, 0, None, len(self.node_rows))
            row.open_as(event.time, "down")
            row.add_mark(Mark(event.time, "node-failed"))
            self.node_rows[event.name] = row


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
