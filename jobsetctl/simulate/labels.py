"""Row labels that fit their column and stay distinguishable (terminal chart, SVG, HTML).

Object names of batch workloads are long and share long prefixes (``llama3-70b-lora-exp-0042-trainer``,
``llama3-70b-lora-exp-0042-trainer-worker-1``): cut from the end, two rows read the same. So:

* a top-level row reads ``Kind namespace/name`` (kind and namespace kept whole while the name has room);
  a row under a parent row reads its own name, and when
  that is too long it drops the parent's name, which the row above shows (``…-worker-1``);
* what is still too long is shortened **in the middle**, keeping more of the end, where generated names
  put their indexes;
* labels that still collide are cut again around the first character where their names differ, so
  that every row keeps a label of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jobsetctl.simulate.timeline import Row

ELLIPSIS = "…"
#: A kept prefix stays whole only if this many characters remain for the name after it.
MIN_REST = 10


@dataclass(frozen=True, slots=True)
class LabelSource:
    """What a label is made from: the full text, the parent's name it may drop, and its indentation."""

    text: str
    parent_name: str | None = None
    depth: int = 0
    #: Characters at the start that stay whole while there is room for the rest (``TrainJob team-b/``).
    keep: int = 0


def shorten_middle(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, cut in the middle (two fifths head, the rest tail)."""
    if len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    keep = width - 1
    head = keep * 2 // 5
    tail = keep - head
    return text[:head] + ELLIPSIS + text[len(text) - tail:]


def _window(text: str, start: int, width: int) -> str:
    """``width`` characters of ``text`` around index ``start`` (which stays visible), ellipses where cut."""
    if len(text) <= width:
        return text
    # Leave a little context before the differing character, and keep as much of the end as fits.
    left = max(0, min(start - 3, len(text) - (width - 1)))
    if left == 0:
        return text[: width - 1] + ELLIPSIS
    room = width - 1
    if left + room >= len(text):
        return ELLIPSIS + text[len(text) - room:]
    return ELLIPSIS + text[left:left + room - 1] + ELLIPSIS


def _common_prefix(texts: Sequence[str]) -> int:
    first = min(texts)
    last = max(texts)
    length = 0
    for a, b in zip(first, last, strict=False):
        if a != b:
            break
        length += 1
    return length


def _short(source: LabelSource, width: int) -> str:
    text = source.text
    if len(text) <= width:
        return text
    parent = source.parent_name
    if parent and text.startswith(parent) and len(text) > len(parent):
        text = ELLIPSIS + text[len(parent):]
        if len(text) <= width:
            return text
    if source.keep > 0 and width - source.keep >= MIN_REST:
        return text[:source.keep] + shorten_middle(text[source.keep:], width - source.keep)
    return shorten_middle(text, width)


def fit_labels(sources: Sequence[LabelSource], width: int, indent: str = "  ") -> list[str]:
    """One label per source, each at most ``width`` characters including its indentation, all
    different from each other when the sources' texts are (see the module docstring)."""
    room = [max(1, width - len(indent) * s.depth) for s in sources]
    labels = [_short(s, r) for s, r in zip(sources, room, strict=True)]
    for _ in range(4):
        groups: dict[str, list[int]] = {}
        for index, label in enumerate(labels):
            groups.setdefault(label, []).append(index)
        collided = [ids for ids in groups.values() if len({sources[i].text for i in ids}) > 1]
        if not collided:
            break
        for ids in collided:
            differ = _common_prefix([sources[i].text for i in ids])
            for i in ids:
                labels[i] = _window(sources[i].text, differ, room[i])
    return [indent * s.depth + label for s, label in zip(sources, labels, strict=True)]


def row_label_sources(rows: Sequence[Row]) -> list[LabelSource]:
    """What each chart row's label is made of: its label, its parent's name, its depth."""
    return [LabelSource(row.label, row.parent[2] if row.parent is not None else None, row.depth,
                        0 if row.parent is not None else len(row.label) - len(row.key[2]))
            for row in rows]


def object_source(kind: str, namespace: str, name: str) -> LabelSource:
    """``Kind namespace/name``, the kind and namespace kept whole."""
    text = f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"
    return LabelSource(text, keep=len(text) - len(name))
