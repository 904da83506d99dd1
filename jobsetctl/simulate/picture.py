"""``simulate --svg FILE``: the Gantt chart as a picture for a README or a pull request.

The SVG is self-contained (no scripts, no external fonts or stylesheets: GitHub renders it inline in
Markdown) and deterministic (same run, same bytes). Rows, states and marks are those of the terminal
chart (:mod:`.timeline`, :mod:`.chartstyle`): waiting in amber, partly running as a half bar, running in
blue, suspended in light blue, a failed node's row in grey; event marks are small triangles above the
bar, the outcome a circle (done), cross (failed) or square (deleted) where the row ended, each with a
``<title>`` tooltip. Marks that would overlap are moved apart; axis labels that would overlap are left
out; row labels use the terminal's shortening (:mod:`.labels`). The HTML page (:mod:`.htmlpage`) embeds
the same picture without its heading.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from html import escape

from jobsetctl.kube.duration import format_duration
from jobsetctl.simulate.chartstyle import MARKS, OUTCOME_STYLES, OUTCOME_WORDS, STATES, legend_items
from jobsetctl.simulate.gantt import ordered_marks, tick_times, used_styles
from jobsetctl.simulate.labels import fit_labels, row_label_sources
from jobsetctl.simulate.timeline import Mark, Row, Timeline

WIDTH = 1100
LABEL_X = 8
CHART_X = 300
STATE_WIDTH = 90
ROW_HEIGHT = 18
BAR_HEIGHT = 12
FONT_SIZE = 11
FONT = "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace"
#: Advance of one character of the monospace font at FONT_SIZE (0.6 em), for the layout.
CHAR_WIDTH = 0.6 * FONT_SIZE
#: Characters of a row label that fit left of the chart.
MAX_LABEL = int((CHART_X - LABEL_X - 12) / CHAR_WIDTH)
#: A mark is this wide; marks closer than this are moved apart.
MARK_SIZE = 8.0
MARK_GAP = 1.0
LEGEND_LINE = 16


def _text(value: str) -> str:
    return escape(value, quote=True)


def _number(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _when(seconds: float) -> str:
    return format_duration(seconds) if seconds else "0s"


def render_svg(timeline: Timeline, title: str, axis_end: float | None = None, *, heading: bool = True) -> str:
    """The chart; ``axis_end`` (default: the run's end) is where the time axis stops. ``heading=False``
    leaves the title out of the picture (the HTML page has it as its heading)."""
    rows = timeline.rows
    end_time = timeline.end_time if axis_end is None else axis_end
    chart_width = WIDTH - CHART_X - STATE_WIDTH - 10
    end = end_time if end_time > 0 else 1.0
    top = 48 if heading else 24
    legend = _legend_lines(rows)
    height = top + ROW_HEIGHT * max(len(rows), 1) + 20 + LEGEND_LINE * len(legend)

    def x_of(time: float) -> float:
        return CHART_X + min(max(time, 0.0), end) / end * chart_width

    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="{FONT}" font-size="{FONT_SIZE}" role="img" '
        f'aria-label="{_text(title)}">',
    ]
    if heading:
        out.append(f"<title>{_text(title)}</title>")
    out.append(f'<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="#ffffff"/>')
    if heading:
        out.append(f'<text x="{LABEL_X}" y="18" font-size="13" font-weight="bold">{_text(title)}</text>')
    grid_bottom = top + ROW_HEIGHT * max(len(rows), 1)
    taken_until = float("-inf")
    for tick in tick_times(end_time, 8):
        x = x_of(tick)
        label = _when(tick)
        half = len(label) * CHAR_WIDTH / 2
        out.append(f'<line x1="{_number(x)}" y1="{top - 6}" x2="{_number(x)}" y2="{grid_bottom}" stroke="#e3e3e3"/>')
        if x - half <= taken_until + 4:
            continue  # its label would overlap the previous one
        taken_until = x + half
        out.append(f'<text x="{_number(x)}" y="{top - 10}" text-anchor="middle" fill="#555">{_text(label)}</text>')
    labels = fit_labels(row_label_sources(rows), MAX_LABEL, indent="  ")
    for index, (row, label) in enumerate(zip(rows, labels, strict=True)):
        out.extend(_row(row, label, index, top, end, x_of))
    if not rows:
        out.append(f'<text x="{CHART_X}" y="{top + 12}" fill="#777">no workloads ran</text>')
    for line, items in enumerate(legend):
        out.extend(_legend(items, grid_bottom + 24 + LEGEND_LINE * line))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _row(row: Row, label: str, index: int, top: float, end: float, x_of: Callable[[float], float]) -> list[str]:
    y = top + index * ROW_HEIGHT
    bar_y = y + (ROW_HEIGHT - BAR_HEIGHT) / 2
    parts: list[str] = []
    if index % 2 == 0:
        parts.append(f'<rect x="0" y="{y}" width="{WIDTH}" height="{ROW_HEIGHT}" fill="#f7f7f9"/>')
    weight = ' font-weight="bold"' if row.kind == "header" else ""
    parts.append(f'<text x="{LABEL_X}" y="{y + 13}" xml:space="preserve"{weight}>{_text(label)}</text>')
    for segment in row.segments:
        if segment.start >= end and segment.start > 0:
            continue
        style = STATES[segment.state]
        x0, x1 = x_of(segment.start), x_of(min(segment.end, end))
        width = max(x1 - x0, 1.0)
        tooltip = _text(f"{row.label}: {style.word} {_when(segment.start)}–{_when(segment.end)}")
        if style.half:
            parts.append(f'<rect x="{_number(x0)}" y="{_number(bar_y)}" width="{_number(width)}" '
                         f'height="{BAR_HEIGHT}" fill="{style.under}"><title>{tooltip}</title></rect>')
            parts.append(f'<rect x="{_number(x0)}" y="{_number(bar_y + BAR_HEIGHT / 2)}" width="{_number(width)}" '
                         f'height="{_number(BAR_HEIGHT / 2)}" fill="{style.colour}"><title>{tooltip}</title></rect>')
        else:
            parts.append(f'<rect x="{_number(x0)}" y="{_number(bar_y)}" width="{_number(width)}" '
                         f'height="{BAR_HEIGHT}" fill="{style.colour}"><title>{tooltip}</title></rect>')
    for x, mark in place_marks(ordered_marks(row), x_of, end):
        parts.append(_mark(mark, x, bar_y, f"{row.label}: {MARKS[mark.kind].word} at {_when(mark.time)}"))
    _, colour = OUTCOME_STYLES.get(row.outcome, ("", "#555"))
    word = OUTCOME_WORDS.get(row.outcome, row.outcome)
    parts.append(f'<text x="{WIDTH - STATE_WIDTH}" y="{y + 13}" fill="{colour}">{_text(word)}</text>')
    return parts


def place_marks(marks: list[Mark], x_of: Callable[[float], float], end: float) -> list[tuple[float, Mark]]:
    """The x of each mark's centre, moved right (or, past the right edge, left) until it overlaps none
    placed before it: two marks of one instant both stay visible. Once the row has no room left the rest
    are left out (a JobSet restarting every second has more restarts than a row has room for marks)."""
    left, right = x_of(0.0), x_of(end)
    step = MARK_SIZE + MARK_GAP
    room = int((right - left) / step) + 1
    xs: list[float] = []  # placed centres, sorted
    placed: list[tuple[float, Mark]] = []
    for mark in marks:
        if len(placed) >= room:
            break
        if mark.time > end:
            continue
        x = _free_x(x_of(mark.time), xs, step, left - MARK_SIZE / 2, right + MARK_SIZE / 2)
        if x is not None:
            bisect.insort(xs, x)
            placed.append((x, mark))
    return placed


def _clashes(x: float, xs: list[float], step: float) -> list[float]:
    index = bisect.bisect_left(xs, x)
    return [xs[i] for i in (index - 1, index) if 0 <= i < len(xs) and abs(xs[i] - x) < step]


def _free_x(wanted: float, xs: list[float], step: float, low: float, high: float) -> float | None:
    """The nearest position right of ``wanted`` (else left of it) at least ``step`` from every placed one;
    each move passes one placed mark, so the search is bounded by the marks placed."""
    for direction in (1, -1):
        x = wanted
        while (near := _clashes(x, xs, step)) and low <= x <= high:
            x = (max(near) if direction > 0 else min(near)) + direction * step
        if low <= x <= high and not near:
            return x
    return None


def _mark(mark: Mark, x: float, bar_y: float, tooltip: str) -> str:
    style = MARKS[mark.kind]
    half = MARK_SIZE / 2
    title = f"<title>{_text(tooltip)}</title>"
    middle = bar_y + BAR_HEIGHT / 2
    if style.shape == "triangle":
        top = bar_y - 3
        points = f"{_number(x - half)},{_number(top)} {_number(x + half)},{_number(top)} {_number(x)},{_number(top + 7)}"
        return f'<polygon points="{points}" fill="{style.colour}">{title}</polygon>'
    if style.shape == "circle":
        return (f'<circle cx="{_number(x)}" cy="{_number(middle)}" r="{_number(half)}" fill="{style.colour}" '
                f'stroke="#ffffff" stroke-width="1">{title}</circle>')
    if style.shape == "square":
        return (f'<rect x="{_number(x - half)}" y="{_number(middle - half)}" width="{_number(MARK_SIZE)}" '
                f'height="{_number(MARK_SIZE)}" fill="{style.colour}" stroke="#ffffff" stroke-width="1">{title}</rect>')
    # cross
    a, b = half - 0.5, half - 0.5
    path = (f"M{_number(x - a)},{_number(middle - b)} L{_number(x + a)},{_number(middle + b)} "
            f"M{_number(x + a)},{_number(middle - b)} L{_number(x - a)},{_number(middle + b)}")
    return f'<path d="{path}" stroke="{style.colour}" stroke-width="2.5" fill="none">{title}</path>'


def _legend_lines(rows: list[Row]) -> list[list[tuple[str, str]]]:
    """The legend items the rows use, in lines that fit the picture's width."""
    lines: list[list[tuple[str, str]]] = [[]]
    x = float(LABEL_X)
    for kind, name in legend_items(*used_styles(rows)):
        word = STATES[name].word if kind == "state" else MARKS[name].word
        advance = 28 + CHAR_WIDTH * len(word)
        if x + advance > WIDTH and lines[-1]:
            lines.append([])
            x = float(LABEL_X)
        lines[-1].append((kind, name))
        x += advance
    return lines if lines[0] else []


def _legend(items: list[tuple[str, str]], y: float) -> list[str]:
    parts: list[str] = []
    x = float(LABEL_X)
    for kind, name in items:
        if kind == "state":
            style = STATES[name]
            if style.half:
                parts.append(f'<rect x="{_number(x)}" y="{y - 9}" width="12" height="10" fill="{style.under}"/>')
                parts.append(f'<rect x="{_number(x)}" y="{y - 4}" width="12" height="5" fill="{style.colour}"/>')
            else:
                parts.append(f'<rect x="{_number(x)}" y="{y - 9}" width="12" height="10" fill="{style.colour}"/>')
            word = style.word
        else:
            mark = MARKS[name]
            bar_y = y - 6 if mark.shape == "triangle" else y - 10
            parts.append(_mark(Mark(0, name), x + 6, bar_y, "").replace("<title></title>", ""))
            word = mark.word
        parts.append(f'<text x="{_number(x + 16)}" y="{y}">{_text(word)}</text>')
        x += 28 + CHAR_WIDTH * len(word)
    return parts
