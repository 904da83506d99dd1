"""Loader fixes of the hardening campaign (issue #6), pinned below the command line.

The position tree: documents keep compact positions instead of PyYAML's nodes (a 50 MB input held
2.5 GiB of them). Positions through merge keys, aliases, duplicates and odd keys must not change.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest
from yaml.nodes import Node

from jobsetctl.loader import sources
from jobsetctl.loader.objects import load_file
from jobsetctl.loader.sources import Source, source_line
from jobsetctl.loader.yamlload import (
    MAX_DEPTH,
    Document,
    PosMapping,
    PosScalar,
    PosSequence,
    _structure_bound,
    load_documents,
    resolve_plain,
)


def one(text: str) -> Document:
    documents, problems = load_documents(text, "t.yaml")
    assert not problems, problems
    [document] = documents
    return document


def test_documents_keep_no_pyyaml_nodes() -> None:
    document = one("a: {b: [1, two, 'three']}\nc: &x {d: on}\ne: *x\n")
    stack = [document.node]
    seen = 0
    while stack:
        node = stack.pop()
        seen += 1
        assert not isinstance(node, Node)
        if isinstance(node, PosMapping):
            stack.extend(node.values)
        elif isinstance(node, PosSequence):
            stack.extend(node.items)
    assert seen == 10


POSITIONS_TEXT = (
    "base: &b {a: 1, b: 2}\n"
    "merged:\n"
    "  <<: *b\n"
    "  b: 3\n"
    "alias: *b\n"
    "dup: 1\n"
    "dup: 2\n"
    "list:\n"
    "- a\n"
    "- {k: v}\n"
    "1: one\n"
    "true: yes\n"
    "~: nothing\n"
)


@pytest.mark.parametrize(
    ("path", "position"),
    [
        (("base", "a"), (1, 11)),
        (("merged", "a"), (1, 11)),  # from the anchor, through <<
        (("merged", "b"), (4, 3)),  # overridden locally
        (("alias", "a"), (1, 11)),  # an alias points where its anchor was written
        (("dup",), (7, 1)),  # the last duplicate wins, as in the value
        (("list", 1, "k"), (10, 4)),
        (("list", 5), (8, 1)),  # past the end: the deepest part that exists
        (("1",), (11, 1)),  # non-string keys, as JSON has them
        (("true",), (12, 1)),
        (("null",), (13, 1)),
        (("nope", "deeper"), (1, 1)),
    ],
)
def test_positions_through_merges_aliases_duplicates_and_odd_keys(
    path: tuple[str | int, ...], position: tuple[int, int]
) -> None:
    documents, problems = load_documents(POSITIONS_TEXT, "t.yaml")
    assert not problems
    assert [p.code for p in documents[0].problems] == ["yaml-duplicate-key"]
    assert documents[0].position(path) == position


def test_only_scalars_yaml_reads_as_non_strings_keep_their_text() -> None:
    root = one("a: on\nb: '012'\nc: 012\nd: text\ne: 1e3\n").node
    assert isinstance(root, PosMapping)
    kept = {key: node.text for key, node in zip(root.keys, root.values, strict=True) if isinstance(node, PosScalar)}
    assert kept == {"a": "on", "c": "012", "e": "1e3"}


def test_positions_survive_a_collection_as_a_key() -> None:
    documents, _ = load_documents("? [a]\n: 1\nb: 2\n", "t.yaml")
    assert documents[0].value == {"b": 2}
    assert documents[0].position(("b",)) == (3, 1)


@pytest.mark.parametrize("text", ["a: [\n", "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5), "a: &a [*a]\n", "a: 1\n"])
def test_the_garbage_collector_is_back_on_after_loading(text: str) -> None:
    # The loader pauses the collector while it builds (the collector walked every value again and again).
    assert gc.isenabled()
    load_documents(text, "t.yaml")
    assert gc.isenabled()
    gc.disable()
    try:
        load_documents(text, "t.yaml")
        assert not gc.isenabled()  # left as the caller had it
    finally:
        gc.enable()


def test_the_depth_bound_is_counted_per_document() -> None:
    # Counted over a whole file, every large multi-document input needed the slow exact walk.
    document = "a: {b: [c, d]}\nlist:\n- x: 1\n- y: 2\n"
    text = "---\n".join([document] * 10_000)
    # (each stretch holds its own marker: three more dashes)
    assert _structure_bound(text) == _structure_bound(document) + 3 < 20
    assert _structure_bound("...\n".join([document] * 3)) < 20
    # A marker only counts at the start of a line.
    assert _structure_bound(" --- ".join([document] * 100)) > 1_000


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("9223372036854775807", 9223372036854775807),  # int64 max stays an int
        ("9223372036854775808", 9.223372036854776e18),  # uint64 in go-yaml, a float64 at the API server
        ("99999999999999999999999999999999", 1e32),  # strconv.ParseFloat
        ("-9223372036854775809", -9.223372036854776e18),
        ("0x8000000000000000", 9.223372036854776e18),
        ("0xFFFFFFFFFFFFFFFFFF", "0xFFFFFFFFFFFFFFFFFF"),  # no int, no float: go-yaml keeps the string
        ("1e400", "1e400"),  # ParseFloat fails with ErrRange: a string
        ("1e30", 1e30),
    ],
)
def test_numbers_beyond_int64_resolve_as_the_api_server_decodes_them(text: str, expected: object) -> None:
    value = resolve_plain(text)
    assert value == expected and type(value) is type(expected)


def test_source_lines_follow_a_rewritten_file(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text("one\ntwo\n")
    assert source_line(str(path), 2) == "two"
    path.write_text("uno\r\ndos\rtres\u2028cuatro\n")
    os.utime(path, ns=(1, 1))  # a different modification time, whatever the clock's resolution
    assert [source_line(str(path), n) for n in range(1, 6)] == ["uno", "dos", "tres", "cuatro", None]
    assert source_line(str(path), 0) is None


def test_source_lines_of_standard_input(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources, "_stdin_text", "first\nsecond\n")
    assert source_line(sources.STDIN_NAME, 2) == "second"
    monkeypatch.setattr(sources, "_stdin_text", "other\n")
    assert source_line(sources.STDIN_NAME, 1) == "other"
    assert source_line(sources.STDIN_NAME, 2) is None


def test_line_numbers_of_diagnostics_and_source_lines_agree_on_unusual_line_breaks(tmp_path: Path) -> None:
    # libyaml counts CR, LF, CR LF, NEL, LS and PS as line breaks; the excerpt under a diagnostic must too.
    path = tmp_path / "breaks.yaml"
    path.write_bytes("a: 1\r\nb: 2\rc: 3\u0085d: 4\u2029e: [\n".encode())
    loaded = load_file(Source(str(path), str(path)))
    [diagnostic] = loaded.diagnostics
    assert diagnostic.line == 6
    assert source_line(str(path), 5) == "e: ["


def test_an_object_over_the_request_limit_is_refused_as_the_api_server_does(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """kube-apiserver refuses request bodies over 3 MiB before decoding them; later documents still load."""
    from jobsetctl.validate import ValidateOptions, check

    path = tmp_path / "big.yaml"
    with open(path, "w") as handle:
        handle.write("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n")
        for i in range(40_000):
            handle.write(f"  k{i}: {'x' * 80}\n")
        handle.write("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: small}\n")
    diagnostics = check(ValidateOptions(paths=[str(path)])).report.diagnostics
    assert [(d.rule, d.line, d.column, d.message) for d in diagnostics] == [
        ("object-too-large", 1, 1, "Request entity too large: limit is 3145728"),
        ("unknown-kind", 40_007, 1, "ConfigMap (v1) is not a kind jobsetctl checks; passed over"),
    ]


def _scenario_with_configmaps(path: Path, sizes: list[int]) -> None:
    """A Scenario submitting, at time zero, one ConfigMap per entry of ``sizes`` (data keys of 80 bytes)."""
    with open(path, "w") as handle:
        handle.write("apiVersion: jobsetctl.dev/v1alpha1\nkind: Scenario\nmetadata: {name: big}\nspec:\n"
                     "  nodes: [{name: pool, count: 1, capacity: {cpu: '4', memory: 16Gi}}]\n"
                     "  submit:\n  - at: 0s\n    objects:\n")
        for index, keys in enumerate(sizes):
            handle.write(f"    - apiVersion: v1\n      kind: ConfigMap\n      metadata: {{name: c{index}}}\n      data:\n")
            for i in range(keys):
                handle.write(f"        k{i}: {'x' * 80}\n")


def test_a_scenario_is_no_api_object_but_each_object_it_submits_is(tmp_path: Path) -> None:
    """Issue 12: the request limit applies to each object a Scenario submits, not to the Scenario file: a
    4 MB Scenario of small objects runs; an inline object over 3 MiB is refused at its position."""
    from jobsetctl.simulate.inputs import load_inputs

    fine = tmp_path / "fine.yaml"
    _scenario_with_configmaps(fine, [1_000] * 45)
    assert os.path.getsize(fine) > 4_000_000
    assert [d.rule for d in load_inputs([str(fine)], None).diagnostics if d.severity.name == "ERROR"] == []
    big = tmp_path / "big.yaml"
    _scenario_with_configmaps(big, [10, 40_000])  # the second object starts at line 23
    found = [(d.rule, d.line, d.message) for d in load_inputs([str(big)], None).diagnostics]
    assert found == [("object-too-large", 23, "Request entity too large: limit is 3145728")]
