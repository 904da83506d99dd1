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

The parts live beside this module: the scalar rules in :mod:`~jobsetctl.loader.yamlscalar`, the depth guard
in :mod:`~jobsetctl.loader.yamldepth`, a document and its position tree in :mod:`~jobsetctl.loader.yamldoc`.
"""

from __future__ import annotations

import operator
import re
import sys
from collections.abc import Iterator
from typing import Any

import yaml
from yaml._yaml import CParser  # the libyaml binding; PyYAML is always built with it in our wheels
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from jobsetctl.gctune import paused
from jobsetctl.loader.yamldepth import (
    _SAFE_STRUCTURE_BOUND,
    MAX_DEPTH,
    _depth_violation,
    _indentation_bound,
    _is_nesting_limit,
    _structure_bound,
)
from jobsetctl.loader.yamldoc import (
    _COLUMN_BITS,
    _MERGE,
    Document,
    LoadProblem,
    PosMapping,
    PosNode,
    PosScalar,
    PosSequence,
    node_position,
    unpack,
)
from jobsetctl.loader.yamlscalar import _explicit, _plain_cache, key_string, resolve_plain, yaml11_surprise

__all__ = [
    "MAX_ALIAS_EXPANSION", "MAX_DEPTH", "Document", "LoadProblem", "PosMapping", "PosNode", "PosScalar",
    "PosSequence", "key_string", "load_documents", "load_settings", "node_position", "resolve_plain",
    "syntax_problem", "unpack", "yaml11_surprise",
]

#: Values that aliases may add to one document beyond its own nodes (go-yaml: "excessive aliasing").
MAX_ALIAS_EXPANSION = 100_000

_TAG_PLAIN = "jobsetctl:plain"
_STR = "tag:yaml.org,2002:str"
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"
_OMAP = "tag:yaml.org,2002:omap"
#: What the resolved-scalar cache gives for a text it does not hold (None is a value: ``null``).
_MISS = object()
_STANDARD_SCALAR_TAGS = {
    _STR,
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:timestamp",
    "tag:yaml.org,2002:binary",
}



class _Parser(CParser):
    """libyaml composer whose resolver only says *plain* or *quoted*; values are resolved by us."""

    def __init__(self, text: str) -> None:
        CParser.__init__(self, text)

    # The composer calls these two around every node, and ignores what they return; we resolve nothing by
    # path. Functions written in C that do nothing (a comparison, clearing a list that stays empty) spare the
    # composer a Python frame per node, twice: 7 % of composing a manifest (callgrind instruction counts).
    descend_resolver = staticmethod(operator.is_)
    ascend_resolver = staticmethod([].clear)

    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is ScalarNode:
            return _TAG_PLAIN if implicit[0] else _STR
        return _SEQ if kind is SequenceNode else _MAP


class _Abort(Exception):
    def __init__(self, problem: LoadProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def _problem(code: str, message: str, node: Node) -> LoadProblem:
    return LoadProblem(code, message, node.start_mark.line, node.start_mark.column)


def _build_document(root: Node, first_line: int = 0) -> tuple[Any, PosNode, list[LoadProblem]]:
    """Build the value of one composed document and its position tree, in one pass (the positioned path:
    :func:`_build_values` is the same without positions). ``first_line``: the line of the source the parsed
    text starts at (a document re-parsed on its own); positions in the tree count from the source's start,
    problems' from the parsed text's."""
    problems: list[LoadProblem] = []
    seen: set[int] = set()
    expansion = [0]
    plain = _TAG_PLAIN
    string_tag = _STR
    resolve = resolve_plain
    shift = _COLUMN_BITS
    base = first_line << shift
    str_class = str

    def build(node: Node, depth: int) -> tuple[Any, PosNode]:
        cls = node.__class__
        mark = node.start_mark
        at = ((mark.line << shift) | mark.column) + base
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
        _enter_collection(node, depth, seen, expansion, problems)
        depth += 1
        if cls is SequenceNode:
            items: list[Any] = []
            item_positions: list[PosNode] = []
            for item in node.value:
                value, position = build(item, depth)
                items.append(value)
                item_positions.append(position)
            return items, PosSequence(at, tuple(item_positions))
        out: dict[str, Any] = {}
        merged: dict[str, Any] | None = None
        keys: list[str | None] = []
        key_at: list[int] = []
        values: list[PosNode] = []
        for key_node, value_node in node.value:
            key_mark = key_node.start_mark
            key_at.append(((key_mark.line << shift) | key_mark.column) + base)
            if key_node.__class__ is not ScalarNode:
                problems.append(_problem("yaml-syntax", "a mapping key must be a scalar, not a collection", key_node))
                keys.append(None)
                values.append(((value_node.start_mark.line << shift) | value_node.start_mark.column) + base)
                continue
            text = key_node.value
            if key_node.tag is plain:
                if text == _MERGE:
                    merged = merged if merged is not None else {}
                    merge_position: PosNode = (
                        ((value_node.start_mark.line << shift) | value_node.start_mark.column) + base
                    )
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


def _build_values(root: Node) -> tuple[Any, list[LoadProblem]]:
    """:func:`_build_document` without the position tree (the fast path: positions are built when asked for,
    :class:`_Span`): the same value, the same problems in the same order, the same limits. Kept in step with
    it; tests/loader/test_lazy_positions.py compares the two on random documents.

    Most nodes of a manifest are plain scalars and short strings inside a mapping: those are read where they
    stand (the resolved-scalar cache looked up in place, the checks of :func:`_enter_collection` made in line
    for a collection that is neither too deep nor met before) rather than through a call per node. What they
    do is what the calls did: a plain scalar is :func:`resolve_plain` of its text, a quoted one its text, and
    every other node still goes through ``build`` and ``_enter_collection``, so problems come in the same
    order."""
    problems: list[LoadProblem] = []
    seen: set[int] = set()
    expansion = [0]
    plain = _TAG_PLAIN
    string_tag = _STR
    seq_tag = _SEQ
    map_tags = (_MAP, _OMAP)
    resolve = resolve_plain
    cached = _plain_cache.get
    miss = _MISS
    str_class = str
    scalar_class = ScalarNode
    sequence_class = SequenceNode
    max_depth = MAX_DEPTH

    def build(node: Node, depth: int) -> Any:
        cls = node.__class__
        if cls is scalar_class:
            tag = node.tag
            if tag is plain:
                return resolve(node.value)
            if tag == string_tag:
                return node.value
            return _other_scalar(node, problems)
        node_id = id(node)
        if depth >= max_depth or node_id in seen:
            _enter_collection(node, depth, seen, expansion, problems)
        else:  # _enter_collection's checks, in line for the usual collection
            seen.add(node_id)
            if not (node.tag == seq_tag if cls is sequence_class else node.tag in map_tags):
                problems.append(_problem(
                    "yaml-tag", f"unsupported YAML tag {node.tag!s}: only standard tags are accepted", node))
        depth += 1
        if cls is sequence_class:
            items: list[Any] = []
            for item in node.value:
                if item.__class__ is scalar_class and item.tag is plain:
                    text = item.value
                    value = cached(text, miss)
                    items.append(resolve(text) if value is miss else value)
                else:
                    items.append(build(item, depth))
            return items
        out: dict[str, Any] = {}
        merged: dict[str, Any] | None = None
        for key_node, value_node in node.value:
            if key_node.__class__ is not scalar_class:
                problems.append(_problem("yaml-syntax", "a mapping key must be a scalar, not a collection", key_node))
                continue
            text = key_node.value
            if key_node.tag is plain:
                if text == _MERGE:
                    merged = merged if merged is not None else {}
                    for source in _merge_sources(value_node):
                        for k, v in build(source, depth).items():
                            merged.setdefault(k, v)
                    continue
                key = cached(text, miss)
                if key is miss:
                    key = resolve(text)
                if key.__class__ is not str_class:
                    key = key_string(key)
            elif key_node.tag == string_tag:
                key = text
            else:
                key = key_string(_other_scalar(key_node, problems))
            if key in out:
                problems.append(_problem("yaml-duplicate-key", f'key "{key}" already set in map', key_node))
            if value_node.__class__ is scalar_class:
                tag = value_node.tag
                if tag is plain:
                    text = value_node.value
                    value = cached(text, miss)
                    out[key] = resolve(text) if value is miss else value
                    continue
                if tag == string_tag:
                    out[key] = value_node.value
                    continue
            out[key] = build(value_node, depth)
        if merged:
            for k, v in merged.items():
                out.setdefault(k, v)
        return out

    return build(root, 0), problems


def _enter_collection(
    node: Node, depth: int, seen: set[int], expansion: list[int], problems: list[LoadProblem]
) -> None:
    """What both builders check as they enter a sequence or a mapping, in this order: the depth limit, the
    expansion an alias adds (the same node seen again is an alias: count what it expands to before copying
    it), the collection's tag."""
    if depth >= MAX_DEPTH:
        raise _Abort(_problem("yaml-depth", f"document is nested more than {MAX_DEPTH} levels deep", node))
    node_id = id(node)
    if node_id in seen:
        expansion[0] += _expanded_size(node, MAX_ALIAS_EXPANSION - expansion[0] + 1)
        if expansion[0] > MAX_ALIAS_EXPANSION:
            raise _Abort(_problem("yaml-aliases", "yaml: document contains excessive aliasing", node))
    else:
        seen.add(node_id)
    tag = node.tag
    standard = tag == _SEQ if node.__class__ is SequenceNode else tag in (_MAP, _OMAP)
    if not standard:
        problems.append(_problem("yaml-tag", f"unsupported YAML tag {tag!s}: only standard tags are accepted", node))


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


def load_documents(text: str, file: str, *, positions: bool = False) -> tuple[list[Document], list[LoadProblem]]:
    """Parse a YAML stream into documents. Problems that stop the stream are returned separately;
    problems inside one document (duplicate keys, tags) are attached to it, with their positions.

    Each document's position tree is built when first asked for (:class:`_Span`), unless ``positions``: then
    at once, in the same pass as the value (the path every lazy one falls back to).
    """
    if "\\u" in text:
        # JSON writes characters outside the BMP as surrogate pairs; YAML spells them \U0001xxxx.
        text = _SURROGATE_PAIR.sub(_join_surrogates, text)
    safe = _SAFE_STRUCTURE_BOUND
    if _structure_bound(text, safe) > safe and _indentation_bound(text) > MAX_DEPTH:
        deep = _depth_violation(text)
        if deep is not None:
            return [], [deep]
    documents: list[Document] = []
    # The builder recurses two frames per level; make room for MAX_DEPTH levels.
    if sys.getrecursionlimit() < 4 * MAX_DEPTH + 500:
        sys.setrecursionlimit(4 * MAX_DEPTH + 500)
    parser = _Parser(text)
    stream = None if positions else _Stream(text, file)
    index = 0
    # The collector would walk every value and position built so far again and again while a large file
    # loads (half the time of a 50 MB input). What we build holds no reference cycles. In a command
    # (gctune.tune_for_batch) what was loaded is also frozen as the collector comes back: a run that loads
    # many files otherwise walked every file's values again at each file's end (a third of loading Kueue's
    # large-scale configuration, 44 files). Elsewhere (tests, a library caller) the cyclic node tree libyaml
    # composes for a recursive alias is freed once the collector is back on; a command leaves it to its exit.
    with paused():
        try:
            for node in _nodes(parser):
                if node is None:
                    index += 1
                    continue
                try:
                    if stream is None:
                        value, position, problems = _build_document(node)
                        locate = None
                    else:
                        value, problems = _build_values(node)
                        position = None
                        locate = _Span(stream, index, node, value, problems).positions
                except _Abort as abort:
                    return documents, [abort.problem]
                except RecursionError:
                    mark = node.start_mark
                    return documents, [LoadProblem(
                        "yaml-depth", f"document is nested more than {MAX_DEPTH} levels deep", mark.line, mark.column
                    )]
                size = (node.end_mark.index - node.start_mark.index) if node.end_mark and node.start_mark else 0
                documents.append(Document(file, index, value, position, problems, size, locate))
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
    return documents, []


class _Stream:
    """The text of one loaded stream, for the documents' position trees; the whole stream parsed with
    positions (the fallback of :class:`_Span`), once, if one document cannot be re-parsed on its own."""

    __slots__ = ("_trees", "file", "text")

    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file
        self._trees: dict[int, PosNode | None] | None = None

    def tree(self, index: int) -> PosNode | None:
        if self._trees is None:
            documents, _ = load_documents(self.text, self.file, positions=True)
            self._trees = {document.index: document.node for document in documents}
        return self._trees.get(index)


class _Span:
    """Where one document's root lies in its stream, to build the document's position tree when asked for.

    The text from the start of the root's line to the root's end is parsed again on its own, with positions,
    counted from that line. That re-parse is used only when it provably read the same document: one
    document, rooted at the same place, ending at the same place, with a strictly equal value (types included)
    and the same problems at the same places. Otherwise (a ``%TAG`` directive the slice lacks, an empty
    document, a value changed since loading) the whole stream is parsed with positions (:class:`_Stream`).
    """

    __slots__ = ("column", "end", "index", "line", "problems", "start", "stream", "value")

    def __init__(self, stream: _Stream, index: int, root: Node, value: Any, problems: list[LoadProblem]) -> None:
        self.stream = stream
        self.index = index
        self.line = root.start_mark.line
        self.column = root.start_mark.column
        self.start = root.start_mark.index
        self.end = root.end_mark.index
        self.value = value
        self.problems = problems

    def positions(self) -> PosNode | None:
        with paused():  # as while loading: the collector would walk the tree as it grows
            tree = self._reparsed()
        return tree if tree is not None else self.stream.tree(self.index)

    def _reparsed(self) -> PosNode | None:
        line_start = self.start - self.column
        parser = _Parser(self.stream.text[line_start:self.end])
        try:
            if not parser.check_node():
                return None
            root = parser.get_node()
            if root is None or parser.check_node():
                return None
            start, end = root.start_mark, root.end_mark
            if (start.line, start.column, start.index + line_start, end.index + line_start) != (
                0, self.column, self.start, self.end,
            ):
                return None
            value, tree, problems = _build_document(root, self.line)
        except (yaml.YAMLError, _Abort, RecursionError):
            return None
        finally:
            parser.dispose()
        here = [(p.code, p.message, p.line + self.line, p.column) for p in problems]
        if here != [(p.code, p.message, p.line, p.column) for p in self.problems] or not _same(value, self.value):
            return None
        return tree


def _same(first: Any, second: Any) -> bool:
    """Strict equality of two loaded values: types too (``1``, ``1.0`` and ``True`` differ), key order, NaN."""
    cls = first.__class__
    if cls is not second.__class__:
        return False
    if cls is dict:
        return len(first) == len(second) and all(
            k1 == k2 and _same(v1, v2) for (k1, v1), (k2, v2) in zip(first.items(), second.items(), strict=True)
        )
    if cls is list:
        return len(first) == len(second) and all(_same(a, b) for a, b in zip(first, second, strict=True))
    if cls is float and first != first:
        return bool(second != second)
    return bool(first == second)


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
