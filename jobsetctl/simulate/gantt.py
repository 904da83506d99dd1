"""The Gantt chart, as character cells: one row per Job or gang (see :mod:`.timeline`), time across.

Shared by the terminal output (rich) and, through :func:`tick_times`, the SVG picture. A cell is one
``end_time / columns`` slice of virtual time; a span covers the cells its interval touches (at least
one, so a short wait stays visible); in a shared cell the state of higher rank wins (running over
partly running over suspended over waiting, :mod:`.chartstyle`). Marks are drawn over the bars, the
row's end mark first: a mark whose cell is taken moves to the nearest free cell (later marks to the
right), so that two marks of one instant (a pod failed, the JobSet restarts) both stay visible
(anchors.md §3: rich's ``Bar`` draws one span only, so rows are drawn here).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from jobsetctl.kube.duration import format_duration
from jobsetctl.simulate.chartstyle import MARKS, STATES, legend_items
from jobsetctl.simulate.timeline import Mark, Row


@dataclass(frozen=True, slots=True)
class Cell:
    char: str
    style: str


BLANK = Cell(" ", "")


def column_of(time: float, end_time: float, columns: int) -> int:
    """The cell of an instant (the last cell for the end time)."""
    if end_time <= 0:
        return 0
    return max(0, min(int(time * columns / end_time), columns - 1))


def _free_column(wanted: int, taken: set[int], columns: int) -> int | None:
    for distance in range(columns):
        for column in (wanted + distance, wanted - distance):
            if 0 <= column < columns and column not in taken:
                return column
    return None  # pragma: no cover (place_marks stops once every cell is taken)


def place_marks(marks: list[Mark], end_time: float, columns: int) -> list[tuple[int, Mark]]:
    """The cell of each mark, none sharing a cell while there are free cells (see the module docstring).
    Marks after the end of the chart are left out."""
    span = end_time if end_time > 0 else 1.0
    taken: set[int] = set()
    placed: list[tuple[int, Mark]] = []
    for mark in marks:
        if len(taken) >= columns:
            break  # every cell holds a mark: the rest cannot be drawn apart
        if mark.time > span:
            continue
        column = _free_column(column_of(mark.time, span, columns), taken, columns)
        if column is not None:
            taken.add(column)
            placed.append((column, mark))
    return placed


def ordered_marks(row: Row) -> list[Mark]:
    """The end mark first (it says how the row ended), then the events in time order."""
    end = row.end_mark
    events = sorted(row.marks, key=lambda m: m.time)
    return [end, *events] if end is not None else events


def row_cells(row: Row, end_time: float, columns: int) -> list[Cell]:
    cells = [BLANK] * columns
    ranks = [0] * columns
    span = end_time if end_time > 0 else 1.0
    for segment in row.segments:
        if segment.start >= span and segment.start > 0:
            continue
        style = STATES[segment.state]
        first = min(int(segment.start * columns / span), columns - 1)
        last = max(first + 1, min(math.ceil(min(segment.end, span) * columns / span), columns))
        cell = Cell(style.char, style.style)
        for column in range(first, last):
            if style.rank >= ranks[column]:
                cells[column], ranks[column] = cell, style.rank
    for column, mark in place_marks(ordered_marks(row), span, columns):
        mark_style = MARKS[mark.kind]
        cells[column] = Cell(mark_style.char, mark_style.style)
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


def used_styles(rows: list[Row]) -> tuple[set[str], set[str]]:
    """The states and marks the rows use (the legend lists only those)."""
    states = {segment.state for row in rows for segment in row.segments}
    marks = {mark.kind for row in rows for mark in row.all_marks()}
    return states, marks


def legend(rows: list[Row]) -> str:
    parts = []
    for kind, name in legend_items(*used_styles(rows)):
        if kind == "state":
            parts.append(f"{STATES[name].char} {STATES[name].word}")
        else:
            parts.append(f"{MARKS[name].char} {MARKS[name].word}")
    return "  ".join(parts)
