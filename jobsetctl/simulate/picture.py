"""``simulate --svg FILE`` / ``--html FILE``: the Gantt chart as a picture for a README or a pull request.

The SVG is self-contained (no scripts, no external fonts or stylesheets: GitHub renders it inline in
Markdown) and deterministic (same run, same bytes). Rows and colours are those of the terminal chart
(:mod:`.timeline`, :mod:`.gantt`): waiting in amber, running coloured by the row's outcome, suspended in
light blue, marks as small triangles with a ``<title>`` tooltip. The HTML page embeds the SVG and adds
the summary as a table.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape

from jobsetctl.kube.duration import format_duration
from jobsetctl.simulate.gantt import tick_times
from jobsetctl.simulate.summary import Summary
from jobsetctl.simulate.timeline import Row, Timeline

WIDTH = 1100
LABEL_X = 8
CHART_X = 300
STATE_WIDTH = 90
ROW_HEIGHT = 18
TOP = 48
BAR_HEIGHT = 12
FONT = "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace"
RUN_COLOURS = {
    "succeeded": "#2e9e5b", "failed": "#d64545", "preempted": "#8e44ad", "deleted": "#9a9a9a",
    "running": "#2d8fd5", "waiting": "#2d8fd5", "suspended": "#2d8fd5",
}
WAIT_COLOUR = "#f2c14e"
SUSPENDED_COLOUR = "#a9d6f5"
MARK_COLOURS = {"preempted": "#8e44ad", "restart": "#222222", "failed": "#d64545"}
MARK_WORDS = {"preempted": "preempted", "restart": "restart", "failed": "pod failed"}
MAX_LABEL = 40


def _text(value: str) -> str:
    return escape(value, quote=True)


def _number(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _when(seconds: float) -> str:
    return format_duration(seconds) if seconds else "0s"


def render_svg(timeline: Timeline, title: str) -> str:
    rows = timeline.rows
    chart_width = WIDTH - CHART_X - STATE_WIDTH - 10
    end = timeline.end_time if timeline.end_time > 0 else 1.0
    height = TOP + ROW_HEIGHT * max(len(rows), 1) + 40

    def x_of(time: float) -> float:
        return CHART_X + min(max(time, 0.0), end) / end * chart_width

    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="{FONT}" font-size="11">',
        f"<title>{_text(title)}</title>",
        f'<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="#ffffff"/>',
        f'<text x="{LABEL_X}" y="18" font-size="13" font-weight="bold">{_text(title)}</text>',
    ]
    grid_bottom = TOP + ROW_HEIGHT * max(len(rows), 1)
    for tick in tick_times(timeline.end_time, 8):
        x = _number(x_of(tick))
        out.append(f'<line x1="{x}" y1="{TOP - 6}" x2="{x}" y2="{grid_bottom}" stroke="#e3e3e3"/>')
        out.append(f'<text x="{x}" y="{TOP - 10}" text-anchor="middle" fill="#555">{_text(_when(tick))}</text>')
    for index, row in enumerate(rows):
        out.extend(_row(row, index, x_of))
    if not rows:
        out.append(f'<text x="{CHART_X}" y="{TOP + 12}" fill="#777">no workloads ran</text>')
    out.extend(_legend(height - 14))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _row(row: Row, index: int, x_of: Callable[[float], float]) -> list[str]:
    y = TOP + index * ROW_HEIGHT
    bar_y = y + (ROW_HEIGHT - BAR_HEIGHT) / 2
    parts: list[str] = []
    if index % 2 == 0:
        parts.append(f'<rect x="0" y="{y}" width="{WIDTH}" height="{ROW_HEIGHT}" fill="#f7f7f9"/>')
    label = ("  " * row.depth + row.label)
    if len(label) > MAX_LABEL:
        label = label[: MAX_LABEL - 1] + "…"
    weight = ' font-weight="bold"' if row.kind == "header" else ""
    parts.append(f'<text x="{LABEL_X}" y="{y + 13}" xml:space="preserve"{weight}>{_text(label)}</text>')
    for segment in row.segments:
        x0, x1 = x_of(segment.start), x_of(segment.end)
        if segment.state == "run":
            colour = RUN_COLOURS.get(row.outcome, "#2d8fd5")
        else:
            colour = WAIT_COLOUR if segment.state == "wait" else SUSPENDED_COLOUR
        width = max(x1 - x0, 1.0)
        word = {"run": "running", "wait": "waiting", "suspended": "suspended"}[segment.state]
        tooltip = f"{row.label}: {word} {_when(segment.start)}–{_when(segment.end)}"
        parts.append(
            f'<rect x="{_number(x0)}" y="{_number(bar_y)}" width="{_number(width)}" height="{BAR_HEIGHT}" '
            f'fill="{colour}"><title>{_text(tooltip)}</title></rect>'
        )
    for mark in row.marks:
        x = x_of(mark.time)
        top = bar_y - 3
        points = f"{_number(x - 4)},{_number(top)} {_number(x + 4)},{_number(top)} {_number(x)},{_number(top + 7)}"
        tooltip = f"{row.label}: {MARK_WORDS[mark.kind]} at {_when(mark.time)}"
        parts.append(f'<polygon points="{points}" fill="{MARK_COLOURS[mark.kind]}"><title>{_text(tooltip)}</title></polygon>')
    state_x = WIDTH - STATE_WIDTH
    colour = RUN_COLOURS.get(row.outcome, "#555") if row.outcome not in ("waiting",) else "#b07d00"
    parts.append(f'<text x="{state_x}" y="{y + 13}" fill="{colour}">{_text(row.outcome)}</text>')
    return parts


def _legend(y: float) -> list[str]:
    items = [
        ("rect", WAIT_COLOUR, "waiting"), ("rect", RUN_COLOURS["succeeded"], "succeeded"),
        ("rect", RUN_COLOURS["running"], "running"), ("rect", RUN_COLOURS["failed"], "failed"),
        ("rect", SUSPENDED_COLOUR, "suspended"), ("mark", MARK_COLOURS["preempted"], "preempted"),
        ("mark", MARK_COLOURS["restart"], "restart"), ("mark", MARK_COLOURS["failed"], "pod failed"),
    ]
    parts: list[str] = []
    x = LABEL_X
    for shape, colour, word in items:
        if shape == "rect":
            parts.append(f'<rect x="{x}" y="{y - 9}" width="12" height="10" fill="{colour}"/>')
        else:
            parts.append(f'<polygon points="{x + 2},{y - 9} {x + 10},{y - 9} {x + 6},{y - 2}" fill="{colour}"/>')
        parts.append(f'<text x="{x + 16}" y="{y}">{_text(word)}</text>')
        x += 28 + 7 * len(word)
    return parts


def render_html(timeline: Timeline, summary: Summary, title: str, subtitle: str) -> str:
    svg = render_svg(timeline, title)
    rows = []
    for stats in summary.workloads:
        kind, namespace, name = stats.key

        def when(value: float | None) -> str:
            return _when(value) if value is not None else "–"

        cells = [f"{kind} {namespace}/{name}", stats.state, when(stats.submitted), when(stats.time_to_admission),
                 when(stats.queueing), when(stats.finished), str(stats.preemptions), str(stats.restarts),
                 f"{float(stats.gpu_seconds) / 3600:.1f}"]
        rows.append("<tr>" + "".join(f"<td>{_text(c)}</td>" for c in cells) + "</tr>")
    headers = ["workload", "state", "submitted", "time to admission", "queueing", "finished", "preemptions",
               "restarts", "GPU-hours"]
    used, allocatable = float(summary.gpu_used) / 3600, float(summary.gpu_allocatable) / 3600
    makespan = _when(summary.makespan) if summary.makespan is not None else "n/a"
    totals = (f"makespan {makespan} · GPU-hours used {used:.1f} of {allocatable:.1f} · "
              f"preemptions {summary.preemptions} · restarts {summary.restarts} · rejected {summary.rejected}")
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{_text(title)}</title>",
        "<style>body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}"
        "table{border-collapse:collapse;font-size:13px}td,th{padding:2px 8px;text-align:right}"
        "td:first-child,th:first-child,td:nth-child(2),th:nth-child(2){text-align:left}"
        "tr:nth-child(even){background:#f4f4f6}svg{max-width:100%;height:auto}</style>",
        "</head>",
        "<body>",
        f"<h1>{_text(title)}</h1>",
        f"<p>{_text(subtitle)}</p>",
        svg.rstrip("\n"),
        f"<p>{_text(totals)}</p>",
        "<table>",
        "<tr>" + "".join(f"<th>{_text(h)}</th>" for h in headers) + "</tr>",
        *rows,
        "</table>",
        "</body>",
        "</html>",
    ]) + "\n"
