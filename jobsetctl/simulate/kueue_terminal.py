"""``simulate``'s terminal output for Kueue: after the chart, a chart of Kueue's workloads and queues, and
after the summary, a table per ClusterQueue and LocalQueue (issue 14).

* one row per Workload: ``░`` queued (or requeued), ``▒`` quota reserved while admission checks run,
  ``█`` admitted, ``P`` preempted, ``E`` evicted for another reason; the state and, for a workload still
  waiting, why (Kueue's own message; for a preemption, who preempted it);
* one row per ClusterQueue and flavor-resource with quota: the usage in each slice of time against the
  nominal quota, ``▁`` to ``█`` up to nominal, magenta ``█`` where the ClusterQueue borrows; the average
  and peak beside it.

:mod:`.terminal` calls :func:`render_kueue_chart` and :func:`render_kueue_summary`; everything Kueue shows is
here, so the chart's own rows stay as they are.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from jobsetctl.kube.duration import format_duration
from jobsetctl.kueue.engine.amounts import quantity_string
from jobsetctl.simulate.gantt import axis_line, column_of
from jobsetctl.simulate.kueue_report import UsageSeries, WorkloadStory, kueue_summary, stories, usage_series
from jobsetctl.simulate.runner import SimulationResult

MAX_WORKLOAD_ROWS = 100
MAX_QUEUE_ROWS = 60
LABEL_WIDTH = 28
STATE_WIDTH = 10
NOTE_WIDTH = 40
LEVELS = " ▁▂▃▄▅▆▇█"
_SPAN_CELLS = {"queued": ("░", "yellow"), "requeued": ("░", "yellow"), "reserved": ("▒", "blue"),
               "admitted": ("█", "green"), "evicted": ("░", "magenta")}
_MARKS = {"preempted": ("P", "bold magenta"), "evicted": ("E", "bold red"), "deactivated": ("D", "bold red")}
_OUTCOMES = {"finished": ("finished", "green"), "admitted": ("admitted", "cyan"), "reserved": ("reserved", "blue"),
             "queued": ("pending", "yellow"), "requeued": ("pending", "yellow"), "evicted": ("evicted", "magenta"),
             "deleted": ("deleted", "bright_black")}
LEGEND = ("░ queued  ▒ quota reserved (checks pending)  █ admitted  P preempted  E evicted · "
          "queues: ▁…█ usage up to nominal, magenta █ borrowing")


def _when(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return format_duration(seconds) if seconds else "0s"


def render_kueue_chart(console: Console, result: SimulationResult) -> None:
    """Kueue's workloads and ClusterQueues over the run (nothing when Kueue did not run)."""
    if result.kueue is None:
        return
    end = result.end_time
    workloads = stories(result)
    series = [s for s in usage_series(result.kueue.history, end) if s.nominal or s.peak()]
    if not workloads and not series:
        return
    notes = [_note(s) for s in workloads[:MAX_WORKLOAD_ROWS]] + [_queue_note(s) for s in series[:MAX_QUEUE_ROWS]]
    note_width = max([4] + [min(len(note), NOTE_WIDTH) for note in notes])
    columns = max(10, console.width - LABEL_WIDTH - STATE_WIDTH - note_width - 6)
    console.print()
    console.print(Text("Kueue", style="bold"))
    table = Table(box=None, pad_edge=False, show_edge=False, padding=(0, 1), header_style="bold")
    table.add_column("workload / queue", width=LABEL_WIDTH, no_wrap=True, overflow="ellipsis")
    table.add_column(Text(axis_line(end, columns)), width=columns, no_wrap=True)
    table.add_column("state", width=STATE_WIDTH, no_wrap=True)
    table.add_column("note", width=note_width, no_wrap=True, overflow="ellipsis")
    for story in workloads[:MAX_WORKLOAD_ROWS]:
        word, style = _OUTCOMES.get(story.outcome, (story.outcome, ""))
        table.add_row(Text(story.key), workload_bar(story, end, columns), Text(word, style=style),
                      Text(_note(story), style="dim"))
    if len(workloads) > MAX_WORKLOAD_ROWS:
        table.add_row(Text(f"… {len(workloads) - MAX_WORKLOAD_ROWS} more", style="dim"), Text(), Text(), Text())
    for s in series[:MAX_QUEUE_ROWS]:
        average = s.integral(0.0, end) / end if end > 0 else 0.0
        table.add_row(Text(f"{s.cluster_queue} {s.flavor}/{s.resource}", style="bold"), usage_bar(s, end, columns),
                      Text(f"{_share(average, s.nominal)} avg", style="dim"),
                      Text(_queue_note(s), style="dim"))
    console.print(table)
    if len(series) > MAX_QUEUE_ROWS:
        console.print(Text(f"… {len(series) - MAX_QUEUE_ROWS} more queue rows (see -o json)", style="dim"))
    console.print(Text(LEGEND, style="dim"))


def _note(story: WorkloadStory) -> str:
    return story.note if story.outcome in ("queued", "requeued", "evicted", "reserved") else ""


def _queue_note(series: UsageSeries) -> str:
    return f"nominal {quantity_string(series.resource, series.nominal)}, peak {quantity_string(series.resource, series.peak())}"


def _share(value: float, nominal: int) -> str:
    return f"{value / nominal:.0%}" if nominal else "-"


def workload_bar(story: WorkloadStory, end: float, columns: int) -> Text:
    chars = [" "] * columns
    styles = [""] * columns
    span = end if end > 0 else 1.0
    for segment in story.spans:
        char, style = _SPAN_CELLS.get(segment.state, ("░", "yellow"))
        first = column_of(segment.start, span, columns)
        last = max(first + 1, min(columns, -(-int(segment.end * columns * 1000) // int(span * 1000))))
        for column in range(first, last):
            # Admitted wins a shared cell, then reserved, then waiting.
            if chars[column] == " " or char == "█" or (char == "▒" and chars[column] == "░"):
                chars[column], styles[column] = char, style
    for time, kind in story.marks:
        if kind in _MARKS:
            column = column_of(time, span, columns)
            chars[column], styles[column] = _MARKS[kind]
    text = Text()
    for char, style in zip(chars, styles, strict=True):
        text.append(char, style=style or None)
    return text


def usage_bar(series: UsageSeries, end: float, columns: int) -> Text:
    """Each cell: the time-average usage of its slice against nominal; magenta where above nominal."""
    text = Text()
    if end <= 0:
        return Text(" " * columns)
    slice_ = end / columns
    for column in range(columns):
        start = column * slice_
        average = series.integral(start, start + slice_) / slice_
        if series.nominal <= 0:
            level = len(LEVELS) - 1 if average > 0 else 0
            borrowing = average > 0
        else:
            fraction = average / series.nominal
            level = min(len(LEVELS) - 1, round(fraction * (len(LEVELS) - 1)))
            if average > 0 and level == 0:
                level = 1
            borrowing = fraction > 1.0 + 1e-9
        text.append(LEVELS[level], style="magenta" if borrowing else "cyan")
    return text


def render_kueue_summary(console: Console, result: SimulationResult) -> None:
    """Per ClusterQueue and LocalQueue: workloads, admission wait, usage, borrowing, preemptions."""
    if result.kueue is None:
        return
    data = kueue_summary(result)
    if not data["clusterQueues"]:
        return
    console.print()
    console.print(Text("Kueue queues", style="bold"))
    table = Table(box=None, padding=(0, 1), header_style="bold", pad_edge=False)
    for title in ("ClusterQueue", "cohort", "admitted", "pending", "wait p50/p95/max", "usage avg/peak of nominal",
                  "borrowed avg", "preempted / preempting"):
        wraps = title in ("usage avg/peak of nominal", "borrowed avg", "preempted / preempting")
        table.add_column(title, justify="right" if title in ("admitted", "pending") else "left", no_wrap=not wraps)
    for cq in data["clusterQueues"]:
        wait = cq["admissionWait"]
        table.add_row(cq["name"], cq["cohort"] or "-", f"{cq['admitted']}/{cq['workloads']}", str(cq["pending"]),
                      f"{_when(wait['p50'])}/{_when(wait['p95'])}/{_when(wait['max'])}", _usage_text(cq["usage"]),
                      _borrowed_text(cq["usage"]),
                      f"{_reasons(cq['preemptedByReason'])} / {_reasons(cq['preemptingByReason'])}")
    console.print(table)
    queues = Table(box=None, padding=(0, 1), header_style="bold", pad_edge=False)
    for title in ("LocalQueue", "ClusterQueue", "admitted", "pending", "wait p50/p95/max"):
        queues.add_column(title, justify="right" if title in ("admitted", "pending") else "left", no_wrap=True)
    for lq in data["localQueues"]:
        wait = lq["admissionWait"]
        queues.add_row(f"{lq['namespace']}/{lq['name']}", lq["clusterQueue"], f"{lq['admitted']}/{lq['workloads']}",
                       str(lq["pending"]), f"{_when(wait['p50'])}/{_when(wait['p95'])}/{_when(wait['max'])}")
    console.print(queues)


def _usage_text(usage: list[dict[str, Any]]) -> str:
    parts = []
    one_flavor = len({item["flavor"] for item in usage}) == 1
    for item in usage:
        nominal = item["nominal"] or 0
        if not nominal and not item["peak"]:
            continue
        average = f"{item['average'] / nominal:.0%}" if nominal else str(item["average"])
        peak = f"{item['peak'] / nominal:.0%}" if nominal else str(item["peak"])
        label = item["resource"] if one_flavor else f"{item['flavor']}/{item['resource']}"
        parts.append(f"{label} {average}/{peak}")
    return ", ".join(parts) or "-"


def _borrowed_text(usage: list[dict[str, Any]]) -> str:
    parts = [f"{item['resource']} {item['borrowedAverage']}" for item in usage if item["borrowedAverage"]]
    return ", ".join(parts) or "0"


def _reasons(counts: dict[str, int]) -> str:
    return ", ".join(f"{reason} {count}" for reason, count in counts.items()) or "-"
