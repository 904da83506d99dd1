"""How the chart draws each state and mark, in the terminal and in the SVG picture: one table for both.

A chart row (:mod:`.timeline`) is a list of spans of *named states* and a list of *named marks*; this
module is the only place that says what a name looks like. The workload rows use the states ``wait``
(created, none of its pods bound: queued, or a gang still incomplete), ``partial`` (some of its pods
bound, others waiting: partly running), ``run`` (every live pod bound) and ``suspended``; node rows use
``down``. Marks are events (``preempted``, ``restart``, ``pod-failed``, ``node-failed``) or the row's
outcome, drawn where it ended (``done``, ``failed``, ``deleted``, ``preempted``).

Another source of rows (Kueue workloads, ClusterQueue usage) registers its own states and marks with
:func:`register_state` and :func:`register_mark`; the renderers draw whatever is registered.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class StateStyle:
    name: str
    #: Terminal: the character of a cell in this state, and its rich style.
    char: str
    style: str
    #: SVG: the bar's fill; ``half`` draws the lower half in ``colour`` over ``under`` (partly running).
    colour: str
    word: str
    #: Which state wins a terminal cell that two states share (the higher rank).
    rank: int
    half: bool = False
    under: str = ""


@dataclass(frozen=True, slots=True)
class MarkStyle:
    name: str
    char: str
    style: str
    colour: str
    word: str
    #: SVG shape: triangle (an event above the bar), circle, cross or square (an outcome at the bar's end).
    shape: str


STATES: dict[str, StateStyle] = {}
MARKS: dict[str, MarkStyle] = {}
#: Row outcomes and the word the state column prints for them.
OUTCOME_WORDS: dict[str, str] = {}
OUTCOME_STYLES: dict[str, tuple[str, str]] = {}


def register_state(style: StateStyle) -> None:
    STATES[style.name] = style


def register_mark(style: MarkStyle) -> None:
    MARKS[style.name] = style


def register_outcome(name: str, word: str, style: str, colour: str) -> None:
    """An outcome a row can end with (or be in at the end of the run): its word, terminal style, SVG colour."""
    OUTCOME_WORDS[name] = word
    OUTCOME_STYLES[name] = (style, colour)


WAIT_COLOUR = "#f2c14e"
RUN_COLOUR = "#2d8fd5"

for _state in (
    StateStyle("wait", "░", "yellow", WAIT_COLOUR, "waiting", 1),
    StateStyle("partial", "▄", "cyan", RUN_COLOUR, "partly running", 3, half=True, under=WAIT_COLOUR),
    StateStyle("run", "█", "cyan", RUN_COLOUR, "running", 4),
    StateStyle("suspended", "▒", "blue", "#a9d6f5", "suspended", 2),
    StateStyle("down", "▚", "red", "#b8b8b8", "node down", 5),
):
    register_state(_state)

for _mark in (
    MarkStyle("preempted", "P", "bold magenta", "#8e44ad", "preempted", "triangle"),
    MarkStyle("restart", "R", "bold", "#222222", "restart", "triangle"),
    MarkStyle("pod-failed", "x", "bold red", "#d64545", "pod failed", "triangle"),
    MarkStyle("node-failed", "N", "bold dark_orange", "#e67e22", "node failed", "triangle"),
    MarkStyle("done", "✓", "bold green", "#2e9e5b", "done", "circle"),
    MarkStyle("failed", "✗", "bold red", "#d64545", "failed", "cross"),
    MarkStyle("deleted", "D", "bold bright_black", "#777777", "deleted", "square"),
):
    register_mark(_mark)

for _name, _word, _style, _colour in (
    ("succeeded", "done", "green", "#2e9e5b"),
    ("failed", "failed", "red", "#d64545"),
    ("preempted", "preempted", "magenta", "#8e44ad"),
    ("deleted", "deleted", "bright_black", "#777777"),
    ("running", "running", "cyan", RUN_COLOUR),
    ("waiting", "waiting", "yellow", "#b07d00"),
    ("suspended", "suspended", "blue", "#4a90c2"),
    ("down", "down", "red", "#d64545"),
):
    register_outcome(_name, _word, _style, _colour)

#: The end mark of each final outcome (rows still open at the end of the run have none).
END_MARKS = {"succeeded": "done", "failed": "failed", "deleted": "deleted", "preempted": "preempted"}


def legend_items(states: set[str], marks: set[str]) -> list[tuple[str, str]]:
    """(kind, name) of the states and marks a chart uses, in registration order: the legend lists only those."""
    items = [("state", name) for name in STATES if name in states]
    items.extend(("mark", name) for name in MARKS if name in marks)
    return items
