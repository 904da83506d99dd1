"""``simulate`` default output: header, Gantt chart, log of notable events, summary (rich).

Width-aware (the width comes from ``--width``, ``COLUMNS``, the terminal, or 120 columns in a pipe: see
:func:`jobsetctl.simulate.command.output_width`): the chart takes what is left after the label, state
and note columns; labels are shortened in the middle (:mod:`.labels`), headings never. Long runs stay
readable: at most :data:`MAX_ROWS` chart rows and :data:`MAX_LOG_LINES` log lines are shown, with
a line saying how many were left out (``-o json`` has everything).
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from jobsetctl.kube.duration import format_duration
from jobsetctl.simulate.chartstyle import OUTCOME_STYLES, OUTCOME_WORDS
from jobsetctl.simulate.eventlog import LogLine, log_lines
from jobsetctl.simulate.gantt import axis_line, legend, row_cells
from jobsetctl.simulate.labels import fit_labels, object_source, row_label_sources
from jobsetctl.simulate.runner import SimulationResult
from jobsetctl.simulate.summary import Summary, WorkloadStats
from jobsetctl.simulate.timeline import Row, Timeline

MAX_ROWS = 200
MAX_LOG_LINES = 80
MAX_WORKLOAD_ROWS = 100
#: The label column takes what its longest label needs, up to this share of the width (at least MIN_LABEL).
LABEL_SHARE = 0.27
MIN_LABEL = 16
#: The bars get at least this share of the width (at least MIN_BARS columns); the note column gives way.
BAR_SHARE = 0.35
MIN_BARS = 10
NOTE_WIDTH = 60
#: The workload column of the summary table is never narrower than this (names are shortened in the middle).
MIN_WORKLOAD = 16
_TONES = {"bad": "red", "waiting": "yellow", "warning": "yellow", "good": "green", "news": "cyan"}
_STATE_STYLES = {"Completed": "green", "Failed": "red", "Suspended": "blue", "Deleted": "bright_black",
                 "Pending": "yellow"}


def _when(seconds: float) -> str:
    return format_duration(seconds) if seconds else "0s"


def render_terminal(
    console: Console, result: SimulationResult, timeline: Timeline, summary: Summary,
    axis_end: float | None = None,
) -> None:
    from jobsetctl.simulate.kueue_terminal import render_kueue_chart, render_kueue_summary

    _header(console, result)
    _chart(console, timeline, timeline.end_time if axis_end is None else axis_end)
    render_kueue_chart(console, result)
    _log(console, result)
    _summary(console, result, summary)
    render_kueue_summary(console, result)


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


def _chart(console: Console, timeline: Timeline, axis_end: float) -> None:
    rows = timeline.rows
    if not rows:
        console.print(Text("no workloads ran", style="dim"))
        return
    shown = rows[:MAX_ROWS]
    width = console.width
    sources = row_label_sources(shown)
    longest = max(len("  " * s.depth + s.text) for s in sources)
    label_width = max(min(longest, int(width * LABEL_SHARE)), min(longest, MIN_LABEL), len("workload / job"))
    words = [_outcome(row)[0] for row in shown]
    state_width = max(len("state"), *(len(w) for w in words))
    notes = [_note(row) for row in shown]
    note_wanted = min(max(len(n) for n in notes), NOTE_WIDTH)
    gaps = 6 if note_wanted else 4  # two cells between columns
    bars_wanted = max(MIN_BARS, int(width * BAR_SHARE))
    note_width = max(0, min(note_wanted, width - label_width - state_width - gaps - bars_wanted))
    if note_wanted and note_width < len("note"):
        note_width, gaps = 0, 4
    columns = max(MIN_BARS, width - label_width - state_width - note_width - gaps)
    labels = fit_labels(sources, label_width)
    table = Table(box=None, pad_edge=False, show_edge=False, padding=(0, 1), header_style="bold")
    table.add_column("workload / job", width=label_width, no_wrap=True, overflow="ellipsis")
    table.add_column(Text(axis_line(axis_end, columns)), width=columns, no_wrap=True)
    table.add_column("state", width=state_width, no_wrap=True)
    if note_width:
        table.add_column("note", width=note_width, no_wrap=True, overflow="ellipsis")
    for row, label, note in zip(shown, labels, notes, strict=True):
        cells = _chart_row(row, label, axis_end, columns)
        table.add_row(*cells, *([Text(note, style="dim")] if note_width else []))
    console.print(table)
    if len(rows) > MAX_ROWS:
        console.print(Text(f"… {len(rows) - MAX_ROWS} more rows (see -o json or --svg)", style="dim"))
    key = legend(shown)
    if key:
        console.print(Text(key, style="dim"))
    if axis_end < timeline.end_time:
        console.print(Text(f"the chart ends at {_when(axis_end)}, when the last workload ended; the run went on "
                           f"to {_when(timeline.end_time)} (give --until to draw it all)", style="dim"))


def _outcome(row: Row) -> tuple[str, str]:
    style, _ = OUTCOME_STYLES.get(row.outcome, ("", ""))
    return OUTCOME_WORDS.get(row.outcome, row.outcome), style


def _chart_row(row: Row, label: str, axis_end: float, columns: int) -> tuple[Text, Text, Text]:
    bar = Text()
    for cell in row_cells(row, axis_end, columns):
        bar.append(cell.char, style=cell.style or None)
    word, style = _outcome(row)
    return Text(label, style="bold" if row.kind == "header" else ""), bar, Text(word, style=style)


def _note(row: Row) -> str:
    """Why a row waits, or where a gang runs; nothing once it is over."""
    return row.note if row.outcome in ("waiting", "running") else ""


def _log(console: Console, result: SimulationResult) -> None:
    lines = log_lines(result)
    console.print()
    console.print(Text("Events", style="bold"))
    if not lines:
        console.print(Text("  nothing notable: no rejections, preemptions or failures", style="dim"))
    # soft_wrap: a long message stays one line (the terminal folds it), so it can be grepped whole.
    for line in lines[:MAX_LOG_LINES]:
        console.print(Text.assemble(f"  {_when(line.time):>8}  ", _log_text(line)), soft_wrap=True)
    if len(lines) > MAX_LOG_LINES:
        console.print(Text(f"  … {len(lines) - MAX_LOG_LINES} more (see -o json)", style="dim"))
    for diagnostic in result.rejections:
        console.print(Text(
            f"  {diagnostic.file}:{diagnostic.line}:{diagnostic.column}: {diagnostic.message} "
            f"[{diagnostic.layer}/{diagnostic.rule}]", style="red",
        ), soft_wrap=True)


def _log_text(line: LogLine) -> Text:
    text = Text.assemble((line.subject, "bold"), " ", (line.word, _TONES[line.tone]))
    if line.node:
        text.append(f" on {line.node}")
    if line.detail:
        text.append(f"  {line.detail}", style="dim")
    return text


def _summary(console: Console, result: SimulationResult, summary: Summary) -> None:
    del result
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
    ), soft_wrap=True)
    if not summary.workloads:
        return
    shown = summary.workloads[:MAX_WORKLOAD_ROWS]
    titles = ("workload", "state", "submitted", "to admission", "queueing", "finished", "preempt.", "restarts",
              "GPU-h")
    cells = [_workload_cells(stats) for stats in shown]
    # Headings are never cut: every column but the workload's is as wide as its heading or widest value,
    # and the workload names give way (shortened in the middle) down to MIN_WORKLOAD.
    widths = [max(len(title), *(len(str(row[i])) for row in cells)) for i, title in enumerate(titles)]
    others = sum(widths[1:]) + 2 * (len(titles) - 1)
    name_width = max(min(widths[0], console.width - others), min(widths[0], MIN_WORKLOAD), len(titles[0]))
    labels = fit_labels([object_source(*stats.key) for stats in shown], name_width)
    table = Table(box=None, padding=(0, 1), header_style="bold", pad_edge=False)
    for index, title in enumerate(titles):
        table.add_column(title, justify="left" if index < 2 else "right", no_wrap=True,
                         min_width=name_width if index == 0 else widths[index])
    for label, row, stats in zip(labels, cells, shown, strict=True):
        state = Text(stats.state, style=_STATE_STYLES.get(stats.state, "cyan"))
        table.add_row(label, state, *row[2:])
    # Wider than the terminal only when even shortened names do not fit: then lines fold, nothing is cut.
    console.print(table, width=max(console.width, name_width + others))
    if len(summary.workloads) > MAX_WORKLOAD_ROWS:
        console.print(Text(f"  … {len(summary.workloads) - MAX_WORKLOAD_ROWS} more workloads (see -o json)",
                           style="dim"))
    never = [stats for stats in summary.workloads if stats.verdict is not None]
    if never:
        console.print()
        console.print(Text(f"Never started ({len(never)})", style="bold yellow"))
        for stats in never:
            kind, namespace, name = stats.key
            console.print(Text.assemble("  ", (f"{kind} {namespace}/{name}", "bold"), "  ", stats.verdict.reason),
                          soft_wrap=True)


def _workload_cells(stats: WorkloadStats) -> tuple[str, ...]:
    kind, namespace, name = stats.key

    def when(value: float | None) -> str:
        return _when(value) if value is not None else "-"

    return (
        f"{kind} {namespace}/{name}", stats.state, when(stats.submitted),
        when(stats.time_to_admission), when(stats.queueing), when(stats.finished), str(stats.preemptions),
        str(stats.restarts), f"{float(stats.gpu_seconds) / 3600:.1f}",
    )
