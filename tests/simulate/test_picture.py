"""The SVG chart checked as a picture: every row labelled (distinctly), every mark present and clear of the
others, no two labels overlapping, everything inside the picture. Geometry is read back from the SVG
(monospace text: 0.6 em a character, as :mod:`jobsetctl.simulate.picture` lays it out); the browser test
(``test_html_browser.py``) measures the same things with a real renderer when one is installed."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

import pytest

from jobsetctl.simulate.chartstyle import MARKS
from jobsetctl.simulate.inputs import load_inputs
from jobsetctl.simulate.picture import CHAR_WIDTH, FONT_SIZE, render_svg
from jobsetctl.simulate.runner import SimulateOptions, plan, run_plan
from jobsetctl.simulate.timeline import Timeline, annotate_groups, build_timeline, chart_end
from tests.helpers import SAMPLES
from tests.simulate.harness import write_scenario
from tests.simulate.test_truthful_outputs import NEVER_FITS

NS = "{http://www.w3.org/2000/svg}"
MARK_WORDS = {style.word for style in MARKS.values()}


@dataclass(frozen=True)
class Box:
    x0: float
    y0: float
    x1: float
    y1: float
    what: str

    def overlaps(self, other: Box) -> bool:
        return self.x0 < other.x1 and other.x0 < self.x1 and self.y0 < other.y1 and other.y0 < self.y1


def _timeline(path: Path) -> tuple[Timeline, float]:
    inputs = load_inputs([str(path)], None)
    assert not inputs.errors
    result = run_plan(plan(inputs, SimulateOptions([str(path)])), 0)
    timeline = build_timeline(result.events, result.ledger, result.end_time)
    annotate_groups(timeline, result.ledger, result.group_records)
    return timeline, chart_end(timeline, until_asked=False)


def _text_boxes(root: ElementTree.Element) -> list[Box]:
    boxes = []
    for element in root.iter(f"{NS}text"):
        text = element.text or ""
        size = float(element.get("font-size", FONT_SIZE))
        width = len(text.rstrip()) * CHAR_WIDTH * size / FONT_SIZE
        x, y = float(element.get("x", 0)), float(element.get("y", 0))
        if element.get("text-anchor") == "middle":
            x -= width / 2
        indent = (len(text) - len(text.lstrip())) * CHAR_WIDTH * size / FONT_SIZE
        boxes.append(Box(x + indent, y - 0.8 * size, x + width, y + 0.2 * size, text))
    return boxes


def _mark_boxes(root: ElementTree.Element) -> list[Box]:
    """Every mark with a tooltip (``<row>: <mark word> at <time>``): its extent."""
    boxes = []
    for element in root.iter():
        title = element.find(f"{NS}title")
        if title is None or not re.search(r": (" + "|".join(MARK_WORDS) + r") at ", title.text or ""):
            continue
        if element.tag == f"{NS}polygon":
            points = [tuple(map(float, p.split(","))) for p in (element.get("points") or "").split()]
            xs, ys = [p[0] for p in points], [p[1] for p in points]
        elif element.tag == f"{NS}circle":
            cx, cy, r = (float(element.get(k, 0)) for k in ("cx", "cy", "r"))
            xs, ys = [cx - r, cx + r], [cy - r, cy + r]
        elif element.tag == f"{NS}rect":
            x, y = float(element.get("x", 0)), float(element.get("y", 0))
            xs, ys = [x, x + float(element.get("width", 0))], [y, y + float(element.get("height", 0))]
        else:
            numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", element.get("d", ""))]
            xs, ys = numbers[0::2], numbers[1::2]
        boxes.append(Box(min(xs), min(ys), max(xs), max(ys), title.text or ""))
    return boxes


CASES = [*(SAMPLES / "scenarios").glob("*.yaml")]


@pytest.fixture(params=[*sorted(p.stem for p in CASES), "never-fits"])
def picture(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Timeline, float, ElementTree.Element]:
    name = request.param
    path = SAMPLES / "scenarios" / f"{name}.yaml" if name != "never-fits" else write_scenario(tmp_path, NEVER_FITS)
    timeline, end = _timeline(path)
    return timeline, end, ElementTree.fromstring(render_svg(timeline, f"jobsetctl simulate: {name}", end))


def test_every_row_has_a_distinct_label(picture: tuple[Timeline, float, ElementTree.Element]) -> None:
    timeline, _, root = picture
    labels = [t.text for t in root.iter(f"{NS}text") if t.get("{http://www.w3.org/XML/1998/namespace}space")]
    assert len(labels) == len(timeline.rows) and len(set(labels)) == len(labels)


def test_every_mark_is_drawn(picture: tuple[Timeline, float, ElementTree.Element]) -> None:
    timeline, end, root = picture
    expected = sorted(f"{row.label}: {MARKS[m.kind].word} at" for row in timeline.rows for m in row.all_marks()
                      if m.time <= end)
    drawn = sorted(box.what.rsplit(" at ", 1)[0] + " at" for box in _mark_boxes(root))
    assert drawn == expected


def test_no_two_labels_overlap(picture: tuple[Timeline, float, ElementTree.Element]) -> None:
    _, _, root = picture
    boxes = _text_boxes(root)
    clashes = [(a.what, b.what) for a, b in itertools.combinations(boxes, 2) if a.overlaps(b)]
    assert clashes == []


def test_no_two_marks_overlap(picture: tuple[Timeline, float, ElementTree.Element]) -> None:
    _, _, root = picture
    boxes = _mark_boxes(root)
    clashes = [(a.what, b.what) for a, b in itertools.combinations(boxes, 2) if a.overlaps(b)]
    assert clashes == []


def test_everything_is_inside_the_picture(picture: tuple[Timeline, float, ElementTree.Element]) -> None:
    _, _, root = picture
    width, height = float(root.get("width", 0)), float(root.get("height", 0))
    for box in [*_text_boxes(root), *_mark_boxes(root)]:
        assert box.x0 >= 0 and box.x1 <= width and box.y0 >= 0 and box.y1 <= height, box
