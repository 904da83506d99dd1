"""Fast, safe YAML loading with positions, with the scalar semantics of Kubernetes' YAML decoder.

Why not ``yaml.safe_load``: the issue's speed target leaves no room for PyYAML's pure-Python
constructor, and we need the node tree anyway to turn a field path into ``line:column``. So we let
libyaml (``yaml._yaml.CParser``) compose the node tree, and build plain Python values from it
ourselves, in one pass, with:

* Kubernetes' scalar rules, which are go-yaml v2's YAML 1.1 rules (sigs.k8s.io/yaml), not PyYAML's:
  ``y``/``n``/``yes``/``no``/``on``/``off`` are booleans, ``012`` is octal, ``1_000`` is 1000,
  sexagesimal ``1:20`` stays a string. Timestamps stay the string the user wrote (go-yaml would turn
  an unquoted ``2024-01-01`` into a time and sigs.k8s.io/yaml would print it back in RFC 3339 form;
  we keep the text and say so here, since no upstream test pins that conversion).
* no tags beyond the standard ones (nothing is ever constructed from a tag: safe loading);
* duplicate keys reported (go-yaml v2: ``key "x" already set in map``);
* merge keys (``<<``) supported, as go-yaml v2 supports them;
* a bound on alias expansion (billion laughs) and on nesting depth. libyaml's composer recurses on the
  C stack and crashes the interpreter on very deep documents, so before handing it a file whose
  nesting *could* be deep we measure the real depth from the event stream first.

Positions: a document keeps a compact position tree (:data:`PosNode`: packed line and column, children,
the text of scalars a hint may need) instead of the composer's nodes. PyYAML's nodes carry a ``__dict__`` and two ``Mark`` objects each (about 1 KiB per
scalar); on a 50 MB input of small documents that was 2.5 GiB, most of the run spent in the garbage
collector walking them (issue #6).
"""

from __future__ import annotations

import gc
import math
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml._yaml import CParser  # the libyaml binding; PyYAML is always built with it in our wheels
from yaml.events import (
    MappingEndEvent,
    MappingStartEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from jobsetctl.kube.field import Path

#: Deepest nesting we build. Real manifests stay under 30 levels; Kubernetes' JSON decoder allows 10,000,
#: but nothing legitimate needs more than this and the builder recurses.
MAX_DEPTH = 512
#: Values that aliases may add to one document beyond its own nodes (go-yaml: "excessive aliasing").
MAX_ALIAS_EXPANSION = 100_000
# Any document with fewer structure characters than this cannot be nested deeper than it, and libyaml's
# recursive composer handles that depth safely.
_SAFE_STRUCTURE_BOUND = 4_000

_TAG_PLAIN = "jobsetctl:plain"
_STR = "tag:yaml.org,2002:str"
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"
_STANDARD_SCALAR_TAGS = {
    _STR,
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:timestamp",
    "tag:yaml.org,2002:binary",
}
_MERGE = "<<"


class _Parser(CParser):
    """libyaml composer whose resolver only says *plain* or *quoted*; values are resolved by us."""

    def __init__(self, text: str) -> None:
        CParser.__init__(self, text)

    # The composer calls these two around every collection; we resolve nothing by path.
    def descend_resolver(self, parent: Any, index: Any) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None

    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is ScalarNode:
            return _TAG_PLAIN if implicit[0] else _STR
        return _SEQ if kind is SequenceNode else _MAP


# go-yaml v2 resolve table (resolve.go): the YAML 1.1 booleans and nulls Kubernetes accepts.
_BOOL_TRUE = {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"}
_BOOL_FALSE = {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"}
_NULLS = {"", "~", "null", "Null", "NULL"}
_INFS = {".inf": math.inf, ".Inf": math.inf, ".INF": math.inf, "+.inf": math.inf, "+.Inf": math.inf,
         "+.INF": math.inf, "-.inf": -math.inf, "-.Inf": -math.inf, "-.INF": -math.inf}
_NANS = {".nan", ".NaN", ".NAN"}
_INT_RE = re.compile(r"[-+]?(0b[01_]+|0x[0-9a-fA-F_]+|0o?[0-7_]+|[0-9][0-9_]*)")
_FLOAT_RE = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")

_plain_cache: dict[str, Any] = {}


def resolve_plain(text: str) -> Any:
    """The value go-yaml v2 gives a plain (unquoted) scalar, as sigs.k8s.io/yaml hands it to JSON."""
    try:
        return _plain_cache[text]
    except KeyError:
        pass
    value = _resolve_plain(text)
    if len(_plain_cache) < 50_000:
        _plain_cache[text] = value
    return value


def _resolve_plain(text: str) -> Any:
    if text in _NULLS:
        return None
    if text in _BOOL_TRUE:
        return True
    if text in _BOOL_FALSE:
        return False
    first = text[0]
    if first in "+-.0123456789":
        if _INT_RE.fullmatch(text):
            digits = text.replace("_", "")
            sign = -1 if digits[0] == "-" else 1
            body = digits.lstrip("+-")
            try:
                if body.startswith(("0b", "0B")):
                    return _fits_int64(sign * int(body[2:], 2), text)
                if body.startswith(("0x", "0X")):
                    return _fits_int64(sign * int(body[2:], 16), text)
                if body.startswith(("0o", "0O")):
                    return _fits_int64(sign * int(body[2:], 8), text)
                if len(body) > 1 and body[0] == "0":
                    return _fits_int64(sign * int(body, 8), text)
                value = sign * int(body)
                if _INT64_MIN <= value <= _INT64_MAX:
                    return value
                # Beyond int64 Go parses the digits as a float64 (strconv.ParseFloat), below.
            except ValueError:
                pass  # "08": not octal; go-yaml then tries it as a float
        if _FLOAT_RE.fullmatch(text.replace("_", "")):
            number = float(text.replace("_", ""))
            if math.isinf(number):
                return text  # strconv.ParseFloat fails with ErrRange ("1e400"): go-yaml keeps the string
            # Go's JSON encoder prints an integral float64 without a fraction, so the API server sees an integer.
            if number.is_integer() and abs(number) < 2**53:
                return int(number)
            return number
        if text in _INFS:
            return _INFS[text]
        if text in _NANS:
            return math.nan
    return text


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _fits_int64(value: int, text: str) -> int | float | str:
    """What reaches the API server for a hex, octal or binary integer: itself within int64; beyond, go-yaml
    finds no int and strconv.ParseFloat rejects the prefix, so the text stays a string. (Values between
    2^63 and 2^64 decode as uint64 in go-yaml and reach the API server as a float64.)"""
    if _INT64_MIN <= value <= _INT64_MAX:
        return value
    if 0 < value < 2**64:
        return float(value)
    return text


#: Plain scalars that YAML 1.1 does not read as the string a user usually means (issue #6, "Norway").
def yaml11_surprise(text: str) -> str | None:
    """A hint for a plain scalar whose YAML 1.1 reading is probably not what was meant, else None."""
    if text in _BOOL_TRUE or text in _BOOL_FALSE:
        if text.lower() not in ("true", "false"):
            return f'YAML 1.1 reads the unquoted {text} as a boolean; quote it ("{text}") if a string is meant'
        return None
    value = resolve_plain(text)
    if isinstance(value, int) and not isinstance(value, bool) and str(value) != text.lstrip("+"):
        return f'YAML 1.1 reads the unquoted {text} as the number {value}; quote it ("{text}") if a string is meant'
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f'the unquoted {text} is a number; quote it ("{text}") if a string is meant'
    return None


#: A position packed into one int: 0-based line in the high bits, 0-based column in the low ones (exact for
#: lines shorter than 4 Gi characters; inputs are at most 64 MiB).
_COLUMN_BITS = 32
_COLUMN_MASK = (1 << _COLUMN_BITS) - 1


def unpack(at: int) -> tuple[int, int]:
    """0-based ``(line, column)`` of a packed position."""
    return at >> _COLUMN_BITS, at & _COLUMN_MASK


class PosScalar:
    """An unquoted scalar that YAML 1.1 did not read as a string: its text is kept for the hint of a type
    error (``on`` read as true). Every other scalar is only its packed position."""

    __slots__ = ("at", "text")

    def __init__(self, at: int, text: str) -> None:
        self.at = at
        self.text = text


class PosSequence:
    __slots__ = ("at", "items")

    def __init__(self, at: int, items: tuple[PosNode, ...]) -> None:
        self.at = at
        self.items = items


class PosMapping:
    """A mapping's entries in source order, duplicates and merge keys (``<<``) included: each key as the
    string it became (None for a key that is not a scalar), where the key is, and the value."""

    __slots__ = ("at", "key_at", "keys", "values")

    def __init__(
        self, at: int, keys: tuple[str | None, ...], key_at: tuple[int, ...], values: tuple[PosNode, ...]
    ) -> None:
        self.at = at
        self.keys = keys
        self.key_at = key_at
        self.values = values


#: A node of a document's position tree: a packed position for a plain value, or one of the classes above.
PosNode = int | PosScalar | PosSequence | PosMapping


def node_position(node: PosNode) -> tuple[int, int]:
    """0-based ``(line, column)`` where a node starts."""
    return unpack(node if isinstance(node, int) else node.at)


def key_string(value: Any) -> str:
    """sigs.k8s.io/yaml turns non-string mapping keys into strings when converting to JSON."""
    if isinstance(value, str):
        return value
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    return str(value)


@dataclass(slots=True)
class LoadProblem:
    """Something wrong in the YAML itself, with its 0-based position. ``code`` names the core rule."""

    code: str
    message: str
    line: int
    column: int


@dataclass(slots=True)
class Document:
    """One YAML document of a file: the built value and the node tree that positions come from."""

    file: str
    index: int
    value: Any
    node: PosNode | None
    problems: list[LoadProblem] = field(default_factory=list)
    #: Characters the document spans in the source (the size of the request ``kubectl apply`` would send).
    size: int = 0

    def position(self, at: Path) -> tuple[int, int]:
        """1-based ``(line, column)`` of the deepest part of ``at`` that exists in the source.

        The last segment points at the *key* of a mapping entry (what an editor should highlight for
        a wrong field), or at the item of a list.
        """
        node = self.node
        if node is None:
            return (1, 1)
        line, column = node_position(node)
        for seg in at:
            if isinstance(node, PosMapping) and isinstance(seg, str):
                hit = _mapping_entry(node, seg)
                if hit is None:
                    break
                key_at, node = hit
                line, column = unpack(key_at)
            elif isinstance(node, PosSequence) and isinstance(seg, int) and 0 <= seg < len(node.items):
                node = node.items[seg]
                line, column = node_position(node)
            else:
                break
        return (line + 1, column + 1)

    def node_at(self, at: Path) -> PosNode | None:
        """The node at exactly ``at``, or None."""
        node = self.node
        for seg in at:
            if isinstance(node, PosMapping) and isinstance(seg, str):
                hit = _mapping_entry(node, seg)
                if hit is None:
                    return None
                node = hit[1]
            elif isinstance(node, PosSequence) and isinstance(seg, int) and 0 <= seg < len(node.items):
                node = node.items[seg]
            else:
                return None
        return node


def _mapping_entry(node: PosMapping, key: str) -> tuple[int, PosNode] | None:
    found: tuple[int, PosNode] | None = None
    for index, name in enumerate(node.keys):
        value = node.values[index]
        if name == key:
            found = (node.key_at[index], value)  # the last duplicate wins, as in the built value
        if name == _MERGE and found is None and isinstance(value, PosMapping):
            nested = _mapping_entry(value, key)
            if nested is not None:
                found = nested
    return found


class _Abort(Exception):
    def __init__(self, problem: LoadProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def _problem(code: str, message: str, node: Node) -> LoadProblem:
    return LoadProblem(code, message, node.start_mark.line, node.start_mark.column)


def _build_document(root: Node) -> tuple[Any, PosNode, list[LoadProblem]]:
    """Build the value of one composed document and its position tree, in one pass. Written as closures
    over locals because this is the hottest loop of ``validate`` (every scalar of every input passes here)."""
    problems: list[LoadProblem] = []
    seen: set[int] = set()
    expansion = [0]
    plain = _TAG_PLAIN
    string_tag = _STR
    resolve = resolve_plain
    shift = _COLUMN_BITS
    str_class = str

    def build(node: Node, depth: int) -> tuple[Any, PosNode]:
        cls = node.__class__
        mark = node.start_mark
        at = (mark.line << shift) | mark.column
        if cls is ScalarNode:
            tag = node.tag
            if tag is plain:
                text = node.value
                value = resolve(text)
                # Only a scalar YAML 1.1 did not read as a string keeps its text (for the hint).
                return value, (at if value.__class__ is str_class else PosScalar(at, text))
            if tag == string_tag:
                return node.value, at
            return _other_scalar(node, problems), at
        if depth >= MAX_DEPTH:
            raise _Abort(_problem("yaml-depth", f"document is nested more than {MAX_DEPTH} levels deep", node))
        node_id = id(node)
        if node_id in seen:
            # The same node again is an alias: count what it expands to before copying it.
            expansion[0] += _expanded_size(node, MAX_ALIAS_EXPANSION - expansion[0] + 1)
            if expansion[0] > MAX_ALIAS_EXPANSION:
                raise _Abort(_problem("yaml-aliases", "yaml: document contains excessive aliasing", node))
        else:
            seen.add(node_id)
        depth += 1
        if cls is SequenceNode:
            if node.tag != _SEQ:
                problems.append(_problem("yaml-tag", f"unsupported YAML tag {node.tag!s}: only standard tags are accepted", node))
            items: list[Any] = []
            item_positions: list[PosNode] = []
            for item in node.value:
                value, position = build(item, depth)
                items.append(value)
                item_positions.append(position)
            return items, PosSequence(at, tuple(item_positions))
        if node.tag != _MAP and node.tag != "tag:yaml.org,2002:omap":
            problems.append(_problem("yaml-tag", f"unsupported YAML tag {node.tag!s}: only standard tags are accepted", node))
        out: dict[str, Any] = {}
        merged: dict[str, Any] | None = None
        keys: list[str | None] = []
        key_at: list[int] = []
        values: list[PosNode] = []
        for key_node, value_node in node.value:
            key_mark = key_node.start_mark
            key_at.append((key_mark.line << shift) | key_mark.column)
            if key_node.__class__ is not ScalarNode:
                problems.append(_problem("yaml-syntax", "a mapping key must be a scalar, not a collection", key_node))
                keys.append(None)
                values.append((value_node.start_mark.line << shift) | value_node.start_mark.column)
                continue
            text = key_node.value
            if key_node.tag is plain:
                if text == _MERGE:
                    merged = merged if merged is not None else {}
                    merge_position: PosNode = (value_node.start_mark.line << shift) | value_node.start_mark.column
                    for source in _merge_sources(value_node):
                        built, position = build(source, depth)
                        if source is value_node:
                            merge_position = position
                        for k, v in built.items():
                            merged.setdefault(k, v)
                    keys.append(_MERGE)
                    values.append(merge_position)
                    continue
                key = resolve(text)
                if key.__class__ is not str_class:
                    key = key_string(key)
            elif key_node.tag == string_tag:
                key = text
            else:
                key = key_string(_other_scalar(key_node, problems))
            if key in out:
                problems.append(_problem("yaml-duplicate-key", f'key "{key}" already set in map', key_node))
            value, position = build(value_node, depth)
            out[key] = value
            keys.append(key)
            values.append(position)
        if merged:
            for k, v in merged.items():
                out.setdefault(k, v)
        return out, PosMapping(at, tuple(keys), tuple(key_at), tuple(values))

    value, position = build(root, 0)
    return value, position, problems


def _other_scalar(node: Node, problems: list[LoadProblem]) -> Any:
    tag = node.tag
    if tag in _STANDARD_SCALAR_TAGS:
        if tag == "tag:yaml.org,2002:binary":
            return "".join(node.value.split())  # base64 text, as JSON carries []byte
        return _explicit(tag, node.value)
    problems.append(_problem("yaml-tag", f"unsupported YAML tag {tag!s}: only standard tags are accepted", node))
    return node.value


def _expanded_size(node: Node, budget: int) -> int:
    """How many values ``node`` expands to, counting at most ``budget`` (iterative: no recursion)."""
    count = 0
    stack = [node]
    while stack and count < budget:
        current = stack.pop()
        count += 1
        if current.__class__ is SequenceNode:
            stack.extend(current.value)
        elif current.__class__ is MappingNode:
            for _key, value in current.value:
                stack.append(value)
    return count


def _merge_sources(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [node]
    if isinstance(node, SequenceNode):
        return [n for n in node.value if isinstance(n, MappingNode)]
    return []


def _explicit(tag: str, text: str) -> Any:
    kind = tag.rsplit(":", 1)[-1]
    if kind == "null":
        return None
    if kind == "bool":
        return text in _BOOL_TRUE
    if kind in ("int", "float"):
        value = resolve_plain(text)
        return value if isinstance(value, int | float) and not isinstance(value, bool) else text
    return text  # timestamps: the text as written (see module docstring)


#: A document marker at the start of a line. Nesting cannot continue across one (libyaml ends the document
#: there or fails), so each stretch between markers can be bounded on its own.
_DOCUMENT_MARKER = re.compile(r"^(?:---|\.\.\.)(?=[ \t\r\n]|$)", re.MULTILINE)


def _structure_bound(text: str) -> int:
    """An upper bound on nesting depth: every level needs one of these characters in its document.

    Counted per document (the stretches between markers): counted over a whole multi-document file the
    bound passed the threshold for every large input, and the exact walk then cost as much as parsing.
    """
    bound = 0
    start = 0
    ends = [m.start() for m in _DOCUMENT_MARKER.finditer(text)]
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


def syntax_problem(exc: yaml.YAMLError) -> LoadProblem:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    message = f"{context}: {problem}" if context and problem else str(problem)
    line = mark.line if mark is not None else 0
    column = mark.column if mark is not None else 0
    return LoadProblem("yaml-syntax", f"yaml: line {line + 1}: {message}", line, column)


def _reader_problem(exc: yaml.reader.ReaderError, text: str) -> LoadProblem:
    """A character YAML does not allow (a control character, say). libyaml gives only a byte offset, and
    PyYAML's own rendering spans two lines ("in <unicode string>, position 3"); say it in one, at its place."""
    before = text.encode("utf-8", errors="surrogatepass")[: exc.position].decode("utf-8", errors="ignore")
    line = before.count("\n")
    column = len(before) - (before.rfind("\n") + 1)
    character = exc.character if isinstance(exc.character, int) else ord(exc.character or "?")
    return LoadProblem(
        "yaml-syntax", f"yaml: line {line + 1}: unacceptable character #x{character:04x}: {exc.reason}", line, column
    )


_SURROGATE_PAIR = re.compile(r"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})")


def _join_surrogates(match: re.Match[str]) -> str:
    high, low = int(match.group(1), 16), int(match.group(2), 16)
    return f"\\U{0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00):08X}"


def load_documents(text: str, file: str) -> tuple[list[Document], list[LoadProblem]]:
    """Parse a YAML stream into documents. Problems that stop the stream are returned separately;
    problems inside one document (duplicate keys, tags) are attached to it.
    """
    if "\\u" in text:
        # JSON writes characters outside the BMP as surrogate pairs; YAML spells them \U0001xxxx.
        text = _SURROGATE_PAIR.sub(_join_surrogates, text)
    if _structure_bound(text) > _SAFE_STRUCTURE_BOUND and _indentation_bound(text) > MAX_DEPTH:
        deep = _depth_violation(text)
        if deep is not None:
            return [], [deep]
    documents: list[Document] = []
    # The builder recurses two frames per level; make room for MAX_DEPTH levels.
    if sys.getrecursionlimit() < 4 * MAX_DEPTH + 500:
        sys.setrecursionlimit(4 * MAX_DEPTH + 500)
    parser = _Parser(text)
    index = 0
    # The collector would walk every value and position built so far again and again while a large file
    # loads (half the time of a 50 MB input). What we build holds no reference cycles; the cyclic node tree
    # libyaml composes for a recursive alias is freed once the collector is back on.
    collecting = gc.isenabled()
    gc.disable()
    try:
        for node in _nodes(parser):
            if node is None:
                index += 1
                continue
            try:
                value, position, problems = _build_document(node)
            except _Abort as abort:
                return documents, [abort.problem]
            except RecursionError:
                mark = node.start_mark
                return documents, [LoadProblem(
                    "yaml-depth", f"document is nested more than {MAX_DEPTH} levels deep", mark.line, mark.column
                )]
            size = (node.end_mark.index - node.start_mark.index) if node.end_mark and node.start_mark else 0
            documents.append(Document(file, index, value, position, problems, size))
            index += 1
    except yaml.reader.ReaderError as exc:
        return documents, [_reader_problem(exc, text)]
    except yaml.YAMLError as exc:
        if _is_nesting_limit(exc):
            # Depth between the structure bound and libyaml's limit: report our rule, at our level.
            deep = _depth_violation(text)
            if deep is not None:
                return documents, [deep]
        return documents, [syntax_problem(exc)]
    finally:
        parser.dispose()
        if collecting:
            gc.enable()
    return documents, []


def _nodes(parser: _Parser) -> Iterator[Node | None]:
    while parser.check_node():
        yield parser.get_node()


def load_settings(path: str, prefix: str, unreadable: str, not_text: str) -> list[Document]:
    """A settings file read whole (``.jobsetctl.yaml``, ``--kueue-config``): its documents, or a one-line
    :class:`~jobsetctl.status.UsageError`: ``prefix`` + ``unreadable`` + the OS's reason, ``prefix`` +
    ``not_text``, or ``file:line:column`` of the first YAML problem, those inside a document (a duplicate key,
    a language tag) included: ``strict: yes`` then ``strict: no`` must not pass in silence."""
    from jobsetctl.status import UsageError

    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        raise UsageError(f"{prefix}{unreadable}{(exc.strerror or str(exc)).lower()}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{prefix}{not_text}") from None
    documents, problems = load_documents(text, path)
    problems = problems + [p for d in documents for p in d.problems]
    if problems:
        first = min(problems, key=lambda p: (p.line, p.column))
        raise UsageError(f"{path}:{first.line + 1}:{first.column + 1}: {first.message}")
    return documents
