"""The nesting-depth guard: libyaml's composer recurses on the C stack, so before a document that *could* be
deep is composed, its real depth is measured from the event stream (cheap bounds first)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import yaml
from yaml._yaml import CParser
from yaml.events import (
    MappingEndEvent,
    MappingStartEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)

from jobsetctl.loader.yamldoc import LoadProblem

#: Deepest nesting we build. Real manifests stay under 30 levels; Kubernetes' JSON decoder allows 10,000,
#: but nothing legitimate needs more than this and the builder recurses.
MAX_DEPTH = 512
# Any document with fewer structure characters than this cannot be nested deeper than it, and libyaml's
# recursive composer handles that depth safely.
_SAFE_STRUCTURE_BOUND = 4_000

#: A document marker at the start of a line. Nesting cannot continue across one (libyaml ends the document
#: there or fails), so each stretch between markers can be bounded on its own.
_DOCUMENT_MARKER = re.compile(r"^(?:---|\.\.\.)(?=[ \t\r\n]|$)", re.MULTILINE)


def _document_markers(text: str) -> list[int]:
    """Where :data:`_DOCUMENT_MARKER` matches, found with ``str.find`` (a fifth of the regular expression's
    time, which tries every position of the text; tests/loader/test_yamlload.py compares the two)."""
    found: list[int] = []
    size = len(text)
    for marker in ("---", "..."):
        if text.startswith(marker) and (size == 3 or text[3] in " \t\r\n"):
            found.append(0)
        needle = "\n" + marker
        at = text.find(needle)
        while at != -1:
            after = at + 4
            if after == size or text[after] in " \t\r\n":
                found.append(at + 1)
            at = text.find(needle, after)
    found.sort()
    return found


def _structure_bound(text: str, floor: int = 0) -> int:
    """An upper bound on nesting depth: every level needs one of these characters in its document.

    Counted per document (the stretches between markers): counted over a whole multi-document file the
    bound passed the threshold for every large input, and the exact walk then cost as much as parsing.

    ``floor``: the answer is only compared with it, so a stretch no longer than it is not counted (it cannot
    hold more structure characters than it has characters): the answer is the bound when that exceeds
    ``floor``, and ``floor`` otherwise. A file of many small manifests is then not counted at all.
    """
    bound = floor
    start = 0
    ends = _document_markers(text)
    ends.append(len(text))
    count = text.count
    for end in ends:
        if end - start > bound:  # a stretch shorter than the bound so far cannot raise it
            stretch = (count("[", start, end) + count("{", start, end) + count("-", start, end)
                       + count(":", start, end) + count("?", start, end))
            bound = max(bound, stretch)
        start = end
    return bound


def _indentation_bound(text: str) -> int:
    """An upper bound on nesting depth from columns: ``2 * (C + 1) + F``, where C is the largest column of a
    ``-``, ``?`` or ``:`` and F the number of ``[`` and ``{`` in the text.

    Why it holds (libyaml's scanner and parser, as PyYAML's pure-Python port spells them): a block collection
    opens either where the scanner rolls its indentation (``roll_indent``: at the column of a ``-`` or a
    ``?``, or of a simple key, which starts before its ``:`` on the same line), each open one at a strictly
    greater column than the one it is in, so at most C + 1 of them are open at once; or as an indentless
    sequence, which only a block mapping's key or value can be, at most one per open mapping. Flow
    collections hold no block ones and each opens at a ``[`` or ``{``. Columns are counted from the last
    ``\n``, never less than libyaml's (which also breaks lines at ``\r``, NEL, LS and PS). Block-style
    manifests, however long, have short lines and no brackets: a Scenario with 5,000 nodes' JobSets inline has
    a structure-character bound in the hundreds of thousands and this bound under a hundred.
    """
    flows = text.count("[") + text.count("{")
    lines = text.split("\n")
    widest = max(map(len, lines))
    if 2 * widest + flows <= MAX_DEPTH:
        return 2 * widest + flows  # C + 1 <= the longest line's length
    column = -1
    for line in lines:
        if len(line) > column + 1:  # a structure character past ``column`` needs a longer line
            column = max(column, line.rfind("-"), line.rfind("?"), line.rfind(":"))
    return 2 * (column + 1) + flows


#: libyaml 0.2.6 (bundled with PyYAML 6.0.3+ wheels) refuses nesting beyond 1,000 levels in its scanner, which
#: may scan a whole flow collection ahead of the first event; older libyaml has no such limit. The user-facing
#: rule must not depend on which libyaml the wheel carries.
_LIBYAML_NESTING_LIMIT = "exceeded maximum nesting depth"


def _is_nesting_limit(exc: yaml.YAMLError) -> bool:
    return _LIBYAML_NESTING_LIMIT in (getattr(exc, "problem", None) or str(exc))


def _walk_depth(events: Iterator[Any]) -> LoadProblem | None:
    """Report the first start event deeper than MAX_DEPTH in an event stream (no recursion)."""
    depth = 0
    for event in events:
        cls = event.__class__
        if cls is MappingStartEvent or cls is SequenceStartEvent:
            depth += 1
            if depth > MAX_DEPTH:
                mark = event.start_mark
                return LoadProblem(
                    "yaml-depth", f"document is nested more than {MAX_DEPTH} levels deep",
                    mark.line if mark else 0, mark.column if mark else 0,
                )
        elif cls is MappingEndEvent or cls is SequenceEndEvent:
            depth -= 1
    return None


def _c_events(parser: CParser) -> Iterator[Any]:
    while (event := parser.get_event()) is not None:
        yield event
        if event.__class__.__name__ == "StreamEndEvent":
            return


def _depth_violation(text: str) -> LoadProblem | None:
    """Walk the event stream (no recursion) and report the first point deeper than MAX_DEPTH.

    When libyaml stops at its own nesting limit before we reach ours, the pure-Python parser (no limit,
    lazy) walks the same text; it stops at level MAX_DEPTH + 1, so its cost is bounded by that prefix.
    """
    parser = CParser(text)
    try:
        return _walk_depth(_c_events(parser))
    except yaml.YAMLError as exc:
        if not _is_nesting_limit(exc):
            return None  # the composer will report the syntax error with its position
    finally:
        parser.dispose()
    try:
        return _walk_depth(yaml.parse(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        return None


