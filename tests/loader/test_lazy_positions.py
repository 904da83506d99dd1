"""Lazy positions: the fast path (values only; a document's position tree built when first asked for, by
re-parsing its text alone) against the positioned path (value and positions in one pass, as every document was
loaded before). Both must read any text alike: the same values (types, key order and NaN included), the same
problems at the same places, the same stream errors, and the same position for every path."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from jobsetctl.loader import yamlload
from jobsetctl.loader.yamldoc import Document, PosMapping, PosNode, PosScalar, PosSequence
from jobsetctl.loader.yamlload import load_documents

#: Plain scalars whose YAML 1.1 reading is a trap (booleans, octal, underscores, sexagesimal, timestamps,
#: special floats, int64 edges), and a few characters that matter to the scanner.
AWKWARD = [
    "y", "n", "yes", "No", "on", "OFF", "true", "False", "~", "null", "Null", "012", "08", "0o17", "0x1F", "0b101",
    "1_000", "+7", "-12", "1.0", "1e3", "2.5", ".inf", "-.Inf", ".nan", "1e400", "1:20", "2024-01-01",
    "2001-12-14t21:59:43.10-05:00", "9223372036854775807", "9223372036854775808", "18446744073709551616",
    "0x8000000000000000", "500m", "16Gi", "a b", "x-y_z.w", "<<", "=", "é", "😀",
]
TAGS = ["!!str", "!!int", "!!float", "!!bool", "!!null", "!!timestamp", "!!binary", "!custom", "!"]
WORDS = st.text(alphabet="abcxyz019_-. ", min_size=1, max_size=6).map(str.strip).filter(bool)
SCALARS = st.one_of(
    st.sampled_from(AWKWARD), WORDS, st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=5)
)

Tree = Any  # ("scalar", text) | ("seq", [Tree]) | ("map", [(text, Tree)])
TREES: st.SearchStrategy[Tree] = st.recursive(
    SCALARS.map(lambda s: ("scalar", s)),
    lambda children: st.one_of(
        st.lists(children, max_size=4).map(lambda items: ("seq", items)),
        st.lists(st.tuples(SCALARS, children), max_size=4).map(lambda entries: ("map", entries)),
    ),
    max_leaves=14,
)


class _Writer:
    """Renders a tree as YAML in random styles: block and flow, every quoting, tags, anchors and aliases (to
    any node already written in the document), merge keys, duplicate keys, comments."""

    def __init__(self, rnd: random.Random) -> None:
        self.rnd = rnd
        self.anchors: list[tuple[str, str]] = []  # (name, kind)
        self.count = 0

    def scalar(self, text: str) -> str:
        pick = self.rnd.random()
        if pick < 0.45 and text and text == text.strip() and not any(c in text for c in "#:{}[],&*!|>'\"%@`\n"):
            out = text
        elif pick < 0.7:
            out = "'" + text.replace("'", "''") + "'"
        else:
            out = '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
        if self.rnd.random() < 0.1:
            out = f"{self.rnd.choice(TAGS)} {out}"
        return out

    def prefix(self, kind: str) -> tuple[str, tuple[str, str] | None]:
        """An anchor before a node, to remember (:meth:`done`) once the node is written: an alias inside
        the node it names would be a recursive one."""
        if self.rnd.random() < 0.25:
            self.count += 1
            return f"&a{self.count} ", (f"a{self.count}", kind)
        return "", None

    def done(self, anchor: tuple[str, str] | None) -> None:
        if anchor is not None:
            self.anchors.append(anchor)

    def alias(self, kind: str | None = None) -> str | None:
        names = [name for name, k in self.anchors if kind is None or k == kind]
        return f"*{self.rnd.choice(names)}" if names and self.rnd.random() < 0.3 else None

    def flow(self, tree: Tree) -> str:
        kind = tree[0]
        alias = self.alias()
        if alias is not None:
            return alias
        anchor, name = self.prefix(kind)
        if kind == "scalar":
            out = anchor + self.scalar(tree[1])
        elif kind == "seq":
            out = anchor + "[" + ", ".join(self.flow(item) for item in tree[1]) + "]"
        else:
            out = anchor + "{" + ", ".join(f"{self.scalar(key)}: {self.flow(value)}" for key, value in tree[1]) + "}"
        self.done(name)
        return out

    def block(self, tree: Tree, indent: int) -> list[str]:
        """Lines of a block node that starts on a line of its own at ``indent``."""
        pad = " " * indent
        kind = tree[0]
        if kind == "scalar" or not tree[1] or self.rnd.random() < 0.15:
            return [pad + self.flow(tree)]
        lines: list[str] = []
        anchor, name = self.prefix(kind)
        if anchor:
            lines.append(pad + anchor.strip())
        if kind == "seq":
            for item in tree[1]:
                lines.append(pad + "-")
                lines.extend(self.block(item, indent + 2))
            self.done(name)
            return lines
        entries = list(tree[1])
        if entries and self.rnd.random() < 0.2:
            entries.append(entries[0])  # a duplicate key
        for key, value in entries:
            merge = self.alias("map")
            if merge is not None and self.rnd.random() < 0.5:
                lines.append(f"{pad}<<: {merge}")
            if self.rnd.random() < 0.1:
                lines.append(f"{pad}# a comment")
            if value[0] == "scalar" or self.rnd.random() < 0.3:
                lines.append(f"{pad}{self.scalar(key)}: {self.flow(value)}")
            else:
                lines.append(f"{pad}{self.scalar(key)}:")
                lines.extend(self.block(value, indent + 2))
        self.done(name)
        return lines

    def document(self, tree: Tree) -> str:
        self.anchors = []  # anchors do not cross documents
        lines = self.block(tree, self.rnd.choice([0, 0, 2]))
        return "\n".join(lines) + "\n"


def stream(trees: list[Tree], rnd: random.Random) -> str:
    writer = _Writer(rnd)
    parts: list[str] = []
    for index, tree in enumerate(trees):
        start = rnd.random()
        if index and start < 0.1:
            parts.append("...\n---\n")  # an explicit end
        elif index or start < 0.5:
            parts.append(rnd.choice(["---\n", "--- # doc\n", "---\n\n"]))
        if rnd.random() < 0.05:
            parts.append("--- \n")  # an empty document
        parts.append(writer.document(tree))
    text = "".join(parts)
    if rnd.random() < 0.05:
        text = "%TAG !e! tag:example.com,2000:\n---\n" + text.replace("!custom", "!e!custom")
    return text


def shape(node: PosNode | None) -> Any:
    """A position tree as comparable data."""
    if node is None or isinstance(node, int):
        return node
    if isinstance(node, PosScalar):
        return ("scalar", node.at, node.text)
    if isinstance(node, PosSequence):
        return ("seq", node.at, [shape(item) for item in node.items])
    assert isinstance(node, PosMapping)
    return ("map", node.at, node.keys, node.key_at, [shape(value) for value in node.values])


def paths(value: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every path into a value, and one past each end (a key or an index the value lacks)."""
    found = [prefix, (*prefix, "absent"), (*prefix, 99)]
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(paths(item, (*prefix, index)))
    return found


def assert_same_reading(text: str) -> list[Document]:
    lazy, lazy_problems = load_documents(text, "f.yaml")
    eager, eager_problems = load_documents(text, "f.yaml", positions=True)
    assert lazy_problems == eager_problems
    assert len(lazy) == len(eager)
    for fast, positioned in zip(lazy, eager, strict=True):
        # repr is strict: 1, 1.0 and True differ, key order counts, nan equals nan.
        assert repr(fast.value) == repr(positioned.value)
        assert (fast.index, fast.size, fast.problems) == (positioned.index, positioned.size, positioned.problems)
        for at in paths(positioned.value):
            assert fast.position(at) == positioned.position(at), at
            assert shape(fast.node_at(at)) == shape(positioned.node_at(at)), at
        assert shape(fast.node) == shape(positioned.node)
    return lazy


@settings(max_examples=300)
@given(st.lists(TREES, min_size=1, max_size=4), st.randoms(use_true_random=False))
def test_fast_and_positioned_paths_read_any_stream_alike(trees: list[Tree], rnd: random.Random) -> None:
    assert_same_reading(stream(trees, rnd))


@given(st.text(alphabet="ab:-[]{},'\"&*!#\n ?|>.%~0", max_size=40))
def test_fast_and_positioned_paths_agree_on_arbitrary_text(text: str) -> None:
    """Garbage too: the same syntax errors, at the same places, and the same documents before them."""
    assert_same_reading(text)


def test_one_document_is_reparsed_alone_not_the_stream(monkeypatch: Any) -> None:
    """Asking for a position re-parses that document's text only; the stream's other documents stay without
    a tree, and the whole stream is never parsed again when each document reads the same on its own."""
    text = "".join(f"---\nkind: Pod\nmetadata:\n  name: p{i}\n  labels: {{a: '1', b: on}}\n" for i in range(50))
    whole: list[int] = []
    real_tree = yamlload._Stream.tree
    monkeypatch.setattr(yamlload._Stream, "tree", lambda self, index: whole.append(index) or real_tree(self, index))
    documents = assert_same_reading(text)
    assert whole == []
    assert documents[37].position(("metadata", "labels", "b")) == (5 + 5 * 37, 20)


def test_a_document_that_reads_differently_alone_falls_back_to_the_stream() -> None:
    """A %TAG directive belongs to the document after it: re-parsed alone, ``!e!x`` has no handle. The
    position tree then comes from the whole stream parsed with positions."""
    text = "a: 1\n...\n%TAG !e! tag:example.com,2000:\n---\nb: !e!x 2\nc: 3\n"
    documents = assert_same_reading(text)
    span = documents[1]
    assert span.problems and span.problems[0].code == "yaml-tag"
    assert span.position(("c",)) == (6, 1)


def test_a_value_changed_after_loading_still_gets_the_original_positions() -> None:
    """Callers may change a loaded value before asking where something is: the re-parse then no longer
    proves the same document and the stream's own positions are used."""
    documents, _ = load_documents("a: 1\n---\nx:\n  z: [1, 2]\n", "f.yaml")
    documents[1].value["x"]["z"].append(3)
    assert documents[1].position(("x", "z", 1)) == (4, 10)


def test_a_document_without_a_tree_stays_without() -> None:
    """A detached copy (validate's worker results) has no tree and no source: (1, 1), as before."""
    document = Document("f.yaml", 0, {"a": 1}, None)
    assert document.node is None and document.position(("a",)) == (1, 1)
