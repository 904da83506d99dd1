"""The Gantt chart, as character cells: one row per Job or gang (see :mod:`.timeline`), time across.

Shared by the terminal output (rich) and, through :func:`tick_times`, the SVG picture. A cell is one
``end_time / columns`` slice of virtual time; a segment covers the cells its interval touches (at least
one, so a short wait stays visible); running wins over suspended over waiting in a shared cell; marks
are drawn over everything: ``P`` preemption, ``R`` restart, ``x`` a pod failed (anchors.md §3: rich's
``Bar`` draws one span only, so rows are drawn here).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from jobsetctl.kube.duration import format_duration
from jobsetctl.simulate.timeline import Row

WAIT_CHAR, RUN_CHAR, SUSPENDED_CHAR = "░", "█", "▒"
MARK_CHARS = {"preempted": "P", "restart": "R", "failed": "x"}
#: Style of running cells by the row's outcome.
OUTCOME_STYLES = {
    "succeeded": "green",
    "failed": "red",
    "preempted": "magenta",
    "deleted": "bright_black",
    "running": "cyan",
    "waiting": "cyan",
    "suspended": "cyan",
}
STATE_STYLES = {"wait": "yellow", "suspended": "blue"}
MARK_STYLES = {"preempted": "bold magenta", "restart": "bold bright_white", "failed": "bold red"}
_PRIORITY = {"wait": 1, "suspended": 2, "run": 3}


@dataclass(frozen=True, slots=True)
class Cell:
    char: str
    style: str


BLANK = Cell(" ", "")


def column_of(time: float, end_time: float, columns: int) -> int:
    """The cell of an instant (the last cell for the end time)."""
    if end_time <= 0:
        return 0
    return min(int(time * columns / end_time), columns - 1)


def row_cells(row: Row, end_time: float, columns: int) -> list[Cell]:
    cells = [BLANK] * columns
    ranks = [0] * columns
    span = end_time if end_time > 0 else 1.0
    for segment in row.segments:
        first = min(int(segment.start * columns / span), columns - 1)
        last = max(first + 1, min(math.ceil(segment.end * columns / span), columns))
        rank = _PRIORITY[segment.state]
        if segment.state == "run":
            cell = Cell(RUN_CHAR, OUTCOME_STYLES.get(row.outcome, "cyan"))
        else:
            cell = Cell(WAIT_CHAR if segment.state == "wait" else SUSPENDED_CHAR, STATE_STYLES[segment.state])
        for column in range(first, last):
            if rank >= ranks[column]:
                cells[column], ranks[column] = cell, rank
    for mark in row.marks:
        column = column_of(mark.time, span, columns)
        cells[column] = Cell(MARK_CHARS[mark.kind], MARK_STYLES[mark.kind])
    return cells


def tick_times(end_time: float, count: int = 4) -> list[float]:
    """Round instants for axis labels: ``count`` + 1 of them from 0 to ``end_time``, on a friendly step."""
    if end_time <= 0:
        return [0.0]
    raw = end_time / count
    steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400]
    step = next((s for s in steps if s >= raw), 86400 * math.ceil(raw / 86400))
    ticks = [i * step for i in range(int(end_time // step) + 1)]
    return [float(t) for t in ticks]


def axis_line(end_time: float, columns: int) -> str:
    """A line of ``columns`` characters with time labels at their cells, never overlapping."""
    line = [" "] * columns
    taken_until = -1
    for tick in tick_times(end_time, max(1, min(6, columns // 12))):
        label = format_duration(tick) if tick else "0"
        column = column_of(tick, end_time, columns) if end_time > 0 else 0
        if column + len(label) > columns:
            column = columns - len(label)
        if column <= taken_until or column < 0:
            continue
        line[column:column + len(label)] = list(label)
        taken_until = column + len(label)
    return "".join(line)


LEGEND = (
    f"{WAIT_CHAR} waiting  {RUN_CHAR} running  {SUSPENDED_CHAR} suspended  "
    "P preempted  R restart  x pod failed"
)
