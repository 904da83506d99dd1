"""Row labels that stay distinguishable, and marks that stay visible (issue 10, "Outputs that tell the truth")."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from jobsetctl.simulate.gantt import place_marks, row_cells
from jobsetctl.simulate.labels import LabelSource, fit_labels, object_source, shorten_middle
from jobsetctl.simulate.timeline import Mark, Row, Segment

LLAMA = "llama3-70b-lora-exp-0042-trainer"


def test_shorten_middle_keeps_the_end() -> None:
    assert shorten_middle("short", 10) == "short"
    label = shorten_middle(f"{LLAMA}-worker-1", 20)
    assert len(label) == 20 and label.startswith("llama3-") and label.endswith("worker-1") and "…" in label
    assert shorten_middle("abcdef", 1) == "…" and shorten_middle("abcdef", 0) == ""


def test_names_cut_from_the_end_would_collide_and_do_not() -> None:
    """The trap: two rows both read ``llama3-70b-lora-exp-0042-trainer-work…``."""
    names = [f"{LLAMA}-worker-0", f"{LLAMA}-worker-1", f"{LLAMA}-launcher-0"]
    labels = fit_labels([LabelSource(n) for n in names], 28)
    assert len(set(labels)) == 3 and all(len(label) <= 28 for label in labels)
    assert [label.endswith(n[-8:]) for label, n in zip(labels, names, strict=True)] == [True, True, True]


def test_a_child_drops_its_parents_name_first() -> None:
    sources = [LabelSource(f"JobSet default/{LLAMA}", keep=len("JobSet default/")),
               LabelSource(f"{LLAMA}-worker-a-0", LLAMA, 1), LabelSource(f"{LLAMA}-worker-b-0", LLAMA, 1)]
    assert fit_labels(sources, 30) == ["JobSet default/llama…2-trainer", "  …-worker-a-0", "  …-worker-b-0"]
    # Room enough: the whole name.
    assert fit_labels(sources, 60)[1] == f"  {LLAMA}-worker-a-0"


def test_names_that_differ_in_the_middle_are_cut_where_they_differ() -> None:
    names = ["team-a/llama3-70b-lora-exp-0042-trainer-worker", "team-a/llama3-70b-lora-exp-0043-trainer-worker"]
    labels = fit_labels([LabelSource(n) for n in names], 24)
    assert labels[0] != labels[1] and "0042" in labels[0] and "0043" in labels[1]


def test_object_source_keeps_kind_and_namespace() -> None:
    assert fit_labels([object_source("TrainJob", "team-b", "team-b-finetune-with-a-long-name")], 34) == [
        "TrainJob team-b/team-b…a-long-name"]


@given(st.lists(st.text(alphabet="ab-0", min_size=1, max_size=40), min_size=1, max_size=8, unique=True),
       st.integers(min_value=6, max_value=40))
def test_fit_labels_are_short_and_distinct(names: list[str], width: int) -> None:
    labels = fit_labels([LabelSource(n) for n in names], width)
    assert all(len(label) <= width for label in labels)
    assert len(set(labels)) == len(labels)


def _row(marks: list[Mark], finished: float | None = None, outcome: str = "waiting") -> Row:
    row = Row(("Job", "default", "j"), "job", 0, None, 0, segments=[Segment(0, 100, "run")], marks=marks)
    row.outcome, row.finished_at = outcome, finished
    return row


def test_two_marks_of_one_instant_both_show() -> None:
    """The trap: a pod failed and the JobSet restarted at the same instant; one mark hid the other."""
    row = _row([Mark(50, "pod-failed"), Mark(50, "restart")])
    text = "".join(cell.char for cell in row_cells(row, 100, 20))
    assert text == "█" * 10 + "xR" + "█" * 8
    # In the last cell, the later mark moves left: still visible.
    text = "".join(cell.char for cell in row_cells(_row([Mark(100, "pod-failed")], 100, "failed"), 100, 10))
    assert text == "█" * 8 + "x✗"


def test_end_mark_is_drawn_where_the_row_ended() -> None:
    assert "".join(c.char for c in row_cells(_row([], 50, "succeeded"), 100, 10)) == "█████✓████"
    assert "".join(c.char for c in row_cells(_row([], 100, "deleted"), 100, 10)) == "█████████D"
    assert "".join(c.char for c in row_cells(_row([]), 100, 10)) == "█" * 10  # still running: no end mark


def test_marks_never_share_a_cell_while_cells_are_free() -> None:
    marks = [Mark(10, "preempted")] * 3 + [Mark(11, "restart")]
    cells = [column for column, _ in place_marks(marks, 100, 10)]
    assert sorted(cells) == [0, 1, 2, 3] and len(set(cells)) == 4
    assert place_marks([Mark(150, "restart")], 100, 10) == []  # after the axis ends: not drawn


def test_svg_marks_stop_when_the_row_is_full() -> None:
    """A JobSet restarting every second: far more restarts than a row has room for. The end mark comes
    first and stays; the others fill the row without overlapping, and the rest are left out."""
    from jobsetctl.simulate.picture import MARK_GAP, MARK_SIZE
    from jobsetctl.simulate.picture import place_marks as svg_place_marks

    def x_of(time: float) -> float:
        return 100 + time / 3600 * 450  # a 450-pixel row for an hour

    marks = [Mark(3600, "done"), *(Mark(float(t), "restart") for t in range(3600))]
    placed = svg_place_marks(marks, x_of, 3600)
    xs = sorted(x for x, _ in placed)
    assert placed[0] == (550, Mark(3600, "done"))
    assert len(placed) == int(450 / (MARK_SIZE + MARK_GAP)) + 1
    assert all(b - a >= MARK_SIZE + MARK_GAP - 1e-9 for a, b in itertools.pairwise(xs))
