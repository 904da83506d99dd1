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
"""

from __future__ import annotations

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
                    return sign * int(body[2:], 2)
                if body.startswith(("0x", "0X")):
                    return sign * int(body[2:], 16)
                if body.startswith(("0o", "0O")):
                    return sign * int(body[2:], 8)
                if len(body) > 1 and body[0] == "0":
                    return sign * int(body, 8)
                return sign * int(body)
            except ValueError:
                pass  # "08": not octal; go-yaml then tries it as a float
        if _FLOAT_RE.fullmatch(text.replace("_", "")):
            number = float(text.replace("_", ""))
            # Go's JSON encoder prints an integral float64 without a fraction, so the API server sees an integer.
            if number.is_integer() and abs(number) < 2**53:
                return int(number)
            return number
        if text in _INFS:
            return _INFS[text]
        if text in _NANS:
            return math.nan
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


def is_plain(node: ScalarNode) -> bool:
    """Whether a scalar was written unquoted (its value then went through :func:`resolve_plain`)."""
    return node.tag == _TAG_PLAIN


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
    node: Node | None
    problems: list[LoadProblem] = field(default_factory=list)

    def position(self, at: Path) -> tuple[int, int]:
        """1-based ``(line, column)`` of the deepest part of ``at`` that exists in the source.

        The last segment points at the *key* of a mapping entry (what an editor should highlight for
        a wrong field), or at the item of a list.
        """
        node = self.node
        if node is None:
            return (1, 1)
        mark = node.start_mark
        for seg in at:
            if isinstance(node, MappingNode) and isinstance(seg, str):
                hit = _mapping_entry(node, seg)
                if hit is None:
                    break
                key_node, value_node = hit
                mark = key_node.start_mark
                node = value_node
            elif isinstance(node, SequenceNode) and isinstance(seg, int) and 0 <= seg < len(node.value):
                node = node.value[seg]
                mark = node.start_mark
            else:
                break
        return (mark.line + 1, mark.column + 1)

    def node_at(self, at: Path) -> Node | None:
        """The node at exactly ``at``, or None."""
        node = self.node
        for seg in at:
            if isinstance(node, MappingNode) and isinstance(seg, str):
                hit = _mapping_entry(node, seg)
                if hit is None:
                    return None
                node = hit[1]
            elif isinstance(node, SequenceNode) and isinstance(seg, int) and 0 <= seg < len(node.value):
                node = node.value[seg]
            else:
                return None
        return node


def _mapping_entry(node: MappingNode, key: str) -> tuple[Node, Node] | None:
    found: tuple[Node, Node] | None = None
    for key_node, value_node in node.value:
        if isinstance(key_node, ScalarNode):
            text = key_node.value
            if key_node.tag == _TAG_PLAIN:
                text = key_string(resolve_plain(text)) if text else "null"
            if text == key:
                found = (key_node, value_node)  # the last duplicate wins, as in the built value
        if key_node.value == _MERGE and found is None and isinstance(value_node, MappingNode):
            nested = _mapping_entry(value_node, key)
            if nested is not None:
                found = nested
    return found


class _Abort(Exception):
    def __init__(self, problem: LoadProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def _problem(code: str, message: str, node: Node) -> LoadProblem:
    return LoadProblem(code, message, node.start_mark.line, node.start_mark.column)


def _build_document(root: Node) -> tuple[Any, list[LoadProblem]]:
    """Build the value of one composed document. Written as closures over locals because this is
    the hottest loop of ``validate`` (every scalar of every input passes here)."""
    problems: list[LoadProblem] = []
    seen: set[int] = set()
    expansion = [0]
    plain = _TAG_PLAIN
    string_tag = _STR
    resolve = resolve_plain

    def build(node: Node, depth: int) -> Any:
        cls = node.__class__
        if cls is ScalarNode:
            tag = node.tag
            if tag is plain:
                return resolve(node.value)
            if tag == string_tag:
                return node.value
            return _other_scalar(node, problems)
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
            return [build(item, depth) for item in node.value]
        if node.tag != _MAP and node.tag != "tag:yaml.org,2002:omap":
            problems.append(_problem("yaml-tag", f"unsupported YAML tag {node.tag!s}: only standard tags are accepted", node))
        out: dict[str, Any] = {}
        merged: dict[str, Any] | None = None
        for key_node, value_node in node.value:
            if key_node.__class__ is not ScalarNode:
                problems.append(_problem("yaml-syntax", "a mapping key must be a scalar, not a collection", key_node))
                continue
            text = key_node.value
            if key_node.tag is plain:
                if text == _MERGE:
                    merged = merged if merged is not None else {}
                    for source in _merge_sources(value_node):
                        built = build(source, depth)
                        for k, v in built.items():
                            merged.setdefault(k, v)
                    continue
                key = resolve(text)
                if key.__class__ is not str:
                    key = key_string(key)
            elif key_node.tag == string_tag:
                key = text
            else:
                key = key_string(_other_scalar(key_node, problems))
            if key in out:
                problems.append(_problem("yaml-duplicate-key", f'key "{key}" already set in map', key_node))
            out[key] = build(value_node, depth)
        if merged:
            for k, v in merged.items():
                out.setdefault(k, v)
        return out

    return build(root, 0), problems


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


def _structure_bound(text: str) -> int:
    """An upper bound on nesting depth: every level needs one of these characters."""
    return text.count("[") + text.count("{") + text.count("-") + text.count(":") + text.count("?")


def _depth_violation(text: str) -> LoadProblem | None:
    """Walk the event stream (no recursion) and report the first point deeper than MAX_DEPTH."""
    parser = CParser(text)
    depth = 0
    try:
        while True:
            event = parser.get_event()
            if event is None:
                return None
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
            elif event.__class__.__name__ == "StreamEndEvent":
                return None
    except yaml.YAMLError:
        return None  # the composer will report the syntax error with its position
    finally:
        parser.dispose()


def syntax_problem(exc: yaml.YAMLError) -> LoadProblem:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    message = f"{context}: {problem}" if context and problem else str(problem)
    line = mark.line if mark is not None else 0
    column = mark.column if mark is not None else 0
    return LoadProblem("yaml-syntax", f"yaml: line {line + 1}: {message}", line, column)


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
    if _structure_bound(text) > _SAFE_STRUCTURE_BOUND:
        deep = _depth_violation(text)
        if deep is not None:
            return [], [deep]
    documents: list[Document] = []
    # The builder recurses two frames per level; make room for MAX_DEPTH levels.
    if sys.getrecursionlimit() < 4 * MAX_DEPTH + 500:
        sys.setrecursionlimit(4 * MAX_DEPTH + 500)
    parser = _Parser(text)
    index = 0
    try:
        for node in _nodes(parser):
            if node is None:
                index += 1
                continue
            try:
                value, problems = _build_document(node)
            except _Abort as abort:
                return documents, [abort.problem]
            except RecursionError:
                mark = node.start_mark
                return documents, [LoadProblem(
                    "yaml-depth", f"document is nested more than {MAX_DEPTH} levels deep", mark.line, mark.column
                )]
            documents.append(Document(file, index, value, node, problems))
            index += 1
    except yaml.YAMLError as exc:
        return documents, [syntax_problem(exc)]
    finally:
        parser.dispose()
    return documents, []


def _nodes(parser: _Parser) -> Iterator[Node | None]:
    while parser.check_node():
        yield parser.get_node()
