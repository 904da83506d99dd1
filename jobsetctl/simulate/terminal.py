"""``simulate`` default output: header, Gantt chart, log of notable events, summary (rich).

Width-aware: the chart takes what the terminal leaves after the label, state and note columns. Long runs
stay readable: at most :data:`MAX_ROWS` chart rows and :data:`MAX_LOG_LINES` log lines are shown, with
a line saying how many were left out (``-o json`` has everything).
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from jobsetctl.fakecluster.events import KubeEvent, SimEvent
from jobsetctl.kube.duration import format_duration
from jobsetctl.simulate.gantt import LEGEND, axis_line, row_cells
from jobsetctl.simulate.runner import SimulationResult
from jobsetctl.simulate.summary import Summary, WorkloadStats
from jobsetctl.simulate.timeline import Row, Timeline

MAX_ROWS = 200
MAX_LOG_LINES = 80
MAX_WORKLOAD_ROWS = 100
LABEL_WIDTH = 28
STATE_WIDTH = 10
NOTE_WIDTH = 36
#: SimEvents worth a log line (besides Rejected, always shown).
NOTABLE = {
    ("Pod", "Preempted"), ("Pod", "Failed"), ("Pod", "Unschedulable"),
    ("Job", "Failed"), ("Job", "Suspended"), ("Job", "Resumed"),
    ("JobSet", "Restarting"), ("JobSet", "Failed"), ("JobSet", "Completed"), ("JobSet", "Suspended"),
    ("JobSet", "Resumed"),
    ("TrainJob", "Failed"), ("TrainJob", "Completed"), ("TrainJob", "Suspended"), ("TrainJob", "Resumed"),
    ("Workload", "Preempted"), ("Workload", "Unschedulable"),
    ("PodGroup", "Preempted"), ("PodGroup", "Unschedulable"),
    ("CompositePodGroup", "Preempted"), ("CompositePodGroup", "Unschedulable"),
    ("Node", "Failed"),
}
#: Normal Kubernetes events of pods and Jobs that are worth a line (the rest is routine).
NOTABLE_POD_REASONS = frozenset({"Preempted", "TaintManagerEviction", "Evicted", "SuspendedJob", "Suspended",
                                 "Resumed"})
#: Kubernetes event reasons and the simulation event that tells the same news.
KUBE_REASON_EVENTS = {"FailedScheduling": "Unschedulable", "BackoffLimitExceeded": "Failed"}
_OUTCOME_TEXT = {
    "succeeded": ("done", "green"), "failed": ("failed", "red"), "preempted": ("preempted", "magenta"),
    "deleted": ("deleted", "bright_black"), "running": ("running", "cyan"), "waiting": ("waiting", "yellow"),
    "suspended": ("suspended", "blue"),
}


def _when(seconds: float) -> str:
    return format_duration(seconds) if seconds else "0s"


def render_terminal(
    console: Console, result: SimulationResult, timeline: Timeline, summary: Summary
) -> None:
    _header(console, result)
    _chart(console, timeline)
    _log(console, result)
    _summary(console, result, summary)


def _header(console: Console, result: SimulationResult) -> None:
    nodes = len(result.ledger.nodes)
    stop = {"until": "until", "done": "nothing left to happen", "idle": "only retries left",
            "horizon": "default horizon reached; give --until",
            "limit": f"stopped after {result.event_limit:,} events, the limit; give an earlier --until"}[result.stop_reason]
    console.print(Text.assemble(
        ("Scenario ", "bold"), (result.name, "bold cyan"),
        f" · Kubernetes {result.version.value} · {nodes} node{'s' * (nodes != 1)} · seed {result.seed}"
        f" · end {_when(result.end_time)} ({stop})",
    ))
    if result.enabled_gates:
        console.print(Text(
            "simulate turned on feature gates " + ", ".join(result.enabled_gates)
            + " because the inputs use them (set one to false to see a cluster without it)",
            style="dim",
        ))


def _chart(console: Console, timeline: Timeline) -> None:
    rows = timeline.rows
    if not rows:
        console.print(Text("no workloads ran", style="dim"))
        return
    shown = rows[:MAX_ROWS]
    # The note column is as wide as the longest note (up to NOTE_WIDTH): the chart gets the rest.
    note_width = max([4] + [min(len(_note(row)), NOTE_WIDTH) for row in shown])
    # Each of the three gaps between the four columns is two cells (padding right and left).
    columns = max(10, console.width - LABEL_WIDTH - STATE_WIDTH - note_width - 6)
    table = Table(box=None, pad_edge=False, show_edge=False, padding=(0, 1), header_style="bold")
    table.add_column("workload / job", width=LABEL_WIDTH, no_wrap=True, overflow="ellipsis")
    table.add_column(Text(axis_line(timeline.end_time, columns)), width=columns, no_wrap=True)
    table.add_column("state", width=STATE_WIDTH, no_wrap=True)
    table.add_column("note", width=note_width, no_wrap=True, overflow="ellipsis")
    for row in shown:
        table.add_row(*_chart_row(row, timeline.end_time, columns))
    console.print(table)
    if len(rows) > MAX_ROWS:
        console.print(Text(f"… {len(rows) - MAX_ROWS} more rows (see -o json or --svg)", style="dim"))
    console.print(Text(LEGEND, style="dim"))


def _chart_row(row: Row, end_time: float, columns: int) -> tuple[Text, Text, Text, Text]:
    label = Text("  " * row.depth + row.label, style="bold" if row.depth == 0 and row.kind == "header" else "")
    bar = Text()
    for cell in row_cells(row, end_time, columns):
        bar.append(cell.char, style=cell.style or None)
    word, style = _OUTCOME_TEXT.get(row.outcome, (row.outcome, ""))
    return label, bar, Text(word, style=style), Text(_note(row), style="dim")


def _note(row: Row) -> str:
    """Why a row waits, or where a gang runs; nothing once it is over."""
    return row.note if row.outcome in ("waiting", "running") else ""


def _log(console: Console, result: SimulationResult) -> None:
    lines = list(_log_lines(result))
    console.print()
    console.print(Text("Events", style="bold"))
    if not lines:
        console.print(Text("  nothing notable: no rejections, preemptions or failures", style="dim"))
    # soft_wrap: a long message stays one line (the terminal folds it), so it can be grepped whole.
    for time, text in lines[:MAX_LOG_LINES]:
        console.print(Text.assemble(f"  {_when(time):>8}  ", text), soft_wrap=True)
    if len(lines) > MAX_LOG_LINES:
        console.print(Text(f"  … {len(lines) - MAX_LOG_LINES} more (see -o json)", style="dim"))
    for diagnostic in result.rejections:
        console.print(Text(
            f"  {diagnostic.file}:{diagnostic.line}:{diagnostic.column}: {diagnostic.message} "
            f"[{diagnostic.layer}/{diagnostic.rule}]", style="red",
        ), soft_wrap=True)


def _log_lines(result: SimulationResult) -> list[tuple[float, Text]]:
    merged: list[tuple[float, int, int, Text]] = []
    waiting: set[tuple[str, str, str]] = set()
    said: set[tuple[float, str, str, str, str]] = set()
    ledger = result.ledger
    for index, event in enumerate(result.events):
        key = (event.kind, event.namespace, event.name)
        said.add((event.time, event.kind, event.namespace, event.name, event.message or ""))
        said.add((event.time, event.kind, event.namespace, event.name, event.event))
        if event.event == "Unschedulable":
            info = ledger.info(key) if event.kind == "Pod" else None
            # Once per waiting episode: a retry says it again, often with a new count ("gang 2/4
            # placeable"); the chart's note keeps the latest reason. A gang's pods echo their group.
            if key in waiting or (info is not None and info.group is not None):
                continue
            waiting.add(key)
        else:
            waiting.discard(key)
        if event.event != "Rejected" and (event.kind, event.event) not in NOTABLE:
            continue
        merged.append((event.time, 0, index, _sim_text(event)))
    for index, kube in enumerate(result.kube_events):
        if not _notable_kube_event(kube):
            continue
        where = (kube.time, kube.kind, kube.namespace, kube.name)
        # The same news twice (a simulation event and the Kubernetes event behind it): keep the first.
        if (*where, kube.message) in said or (*where, KUBE_REASON_EVENTS.get(kube.reason, kube.reason)) in said:
            continue
        merged.append((kube.time, 1, index, _kube_text(kube)))
    merged.sort(key=lambda item: (item[0], item[1], item[2]))
    return [(time, text) for time, _, _, text in merged]


def _notable_kube_event(event: KubeEvent) -> bool:
    """Warnings, and what workload-level objects report; not the per-pod routine the chart already shows
    (SuccessfulCreate, Scheduled, Started, Completed)."""
    if event.type == "Warning":
        return True
    if event.kind in ("Pod", "Job"):
        return event.reason in NOTABLE_POD_REASONS
    return True


def _object(kind: str, namespace: str, name: str) -> str:
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def _sim_text(event: SimEvent) -> Text:
    bad = event.event in ("Rejected", "Failed", "Preempted")
    text = Text.assemble(
        (_object(event.kind, event.namespace, event.name), "bold"), " ",
        (event.event, "red" if bad else ("yellow" if event.event == "Unschedulable" else "cyan")),
    )
    if event.node:
        text.append(f" on {event.node}")
    detail = ": ".join(part for part in (event.reason, event.message) if part)
    if detail:
        text.append(f"  {detail}", style="dim")
    return text


def _kube_text(event: KubeEvent) -> Text:
    return Text.assemble(
        (_object(event.kind, event.namespace, event.name), "bold"), " ",
        (event.reason, "yellow" if event.type == "Warning" else "green"),
        (f"  {event.message}", "dim"),
    )


def _summary(console: Console, result: SimulationResult, summary: Summary) -> None:
    console.print()
    console.print(Text("Summary", style="bold"))
    if summary.makespan is not None:
        makespan = _when(summary.makespan)
    elif not summary.workloads:
        makespan = "n/a (no workloads)"
    else:
        makespan = f"n/a ({summary.unfinished} workload{'s' * (summary.unfinished != 1)} unfinished)"
    used, idle, total = summary.gpu_used / 3600, summary.gpu_idle / 3600, summary.gpu_allocatable / 3600
    share = f" ({float(idle / total):.0%} idle)" if total else ""
    console.print(Text(
        f"  makespan {makespan} · GPU-hours used {float(used):.1f}, idle {float(idle):.1f} of {float(total):.1f}{share}"
        f" · preemptions {summary.preemptions} · restarts {summary.restarts} · pods {summary.pods}"
        f" ({summary.pods_failed} failed) · rejected {summary.rejected}",
    ))
    if not summary.workloads:
        return
    table = Table(box=None, padding=(0, 1), header_style="bold", pad_edge=False)
    for title in ("workload", "state", "submitted", "to admission", "queueing", "finished", "preempt.", "restarts",
                  "GPU-h"):
        table.add_column(title, justify="left" if title in ("workload", "state") else "right", no_wrap=True)
    for stats in summary.workloads[:MAX_WORKLOAD_ROWS]:
        table.add_row(*_workload_cells(stats))
    console.print(table)
    if len(summary.workloads) > MAX_WORKLOAD_ROWS:
        console.print(Text(f"  … {len(summary.workloads) - MAX_WORKLOAD_ROWS} more workloads (see -o json)",
                           style="dim"))


def _workload_cells(stats: WorkloadStats) -> tuple[Any, ...]:
    kind, namespace, name = stats.key

    def when(value: float | None) -> str:
        return _when(value) if value is not None else "-"

    state_style = {"Completed": "green", "Failed": "red", "Suspended": "blue", "Deleted": "bright_black"}.get(
        stats.state, "cyan")
    return (
        f"{kind} {namespace}/{name}", Text(stats.state, style=state_style), when(stats.submitted),
        when(stats.time_to_admission), when(stats.queueing), when(stats.finished), str(stats.preemptions),
        str(stats.restarts), f"{float(stats.gpu_seconds) / 3600:.1f}",
    )
