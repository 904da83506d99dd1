"""The YAML loader: Kubernetes (go-yaml v2) scalar semantics, positions, and hostile input."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jobsetctl.loader.yamlload import MAX_DEPTH, load_documents, resolve_plain, yaml11_surprise


def values(text: str) -> list[object]:
    documents, problems = load_documents(text, "t.yaml")
    assert not problems
    return [d.value for d in documents]


@pytest.mark.parametrize(
    ("plain", "expected"),
    [
        ("yes", True), ("on", True), ("y", True), ("Y", True), ("TRUE", True),
        ("no", False), ("off", False), ("n", False), ("False", False),
        ("~", None), ("null", None), ("", None),
        ("012", 10),  # YAML 1.1 octal, as go-yaml v2 reads it
        ("0x1F", 31), ("0b101", 5), ("1_000", 1000), ("-12", -12), ("+7", 7),
        ("08", 8),  # not octal: go-yaml falls back to a float, an integral one
        ("1.0", 1), ("1e3", 1000), ("2.5", 2.5),
        ("1:20", "1:20"),  # sexagesimal is YAML 1.1 in PyYAML, but go-yaml v2 keeps the string
        ("2024-01-01", "2024-01-01"),  # timestamps keep their text (module docstring explains)
        ("hello", "hello"), ("500m", "500m"), ("16Gi", "16Gi"),
    ],
)
def test_plain_scalars_resolve_like_go_yaml_v2(plain: str, expected: object) -> None:
    assert resolve_plain(plain) == expected
    assert type(resolve_plain(plain)) is type(expected)


def test_infinity_and_nan() -> None:
    assert resolve_plain(".inf") == math.inf
    assert math.isnan(resolve_plain(".nan"))  # type: ignore[arg-type]


def test_quoted_scalars_stay_strings() -> None:
    assert values('a: "yes"\nb: \'012\'\nc: !!str 5\n') == [{"a": "yes", "b": "012", "c": "5"}]


def test_non_string_keys_become_strings_as_in_json() -> None:
    # `on:` in a GitHub workflow is the classic surprise: the key is the boolean true.
    assert values("on: push\n1: one\n") == [{"true": "push", "1": "one"}]


@pytest.mark.parametrize(
    ("text", "hint_fragment"),
    [("on", "as a boolean"), ("no", "as a boolean"), ("012", "as the number 10"), ("123", "is a number")],
)
def test_yaml11_surprise_hints(text: str, hint_fragment: str) -> None:
    hint = yaml11_surprise(text)
    assert hint is not None and hint_fragment in hint


def test_no_hint_for_ordinary_booleans_and_strings() -> None:
    assert yaml11_surprise("true") is None
    assert yaml11_surprise("worker") is None


def test_duplicate_key_is_reported_at_the_second_key() -> None:
    documents, problems = load_documents("a: 1\nb: 2\na: 3\n", "t.yaml")
    assert not problems
    [problem] = documents[0].problems
    assert (problem.code, problem.line + 1, problem.column + 1) == ("yaml-duplicate-key", 3, 1)
    assert problem.message == 'key "a" already set in map'


def test_unsafe_tags_are_never_constructed() -> None:
    documents, _ = load_documents("x: !!python/object/apply:os.system [echo hi]\n", "t.yaml")
    codes = [p.code for p in documents[0].problems]
    assert codes == ["yaml-tag"]


def test_merge_keys_are_supported() -> None:
    assert values("base: &b {a: 1, b: 2}\nd:\n  <<: *b\n  b: 3\n") == [
        {"base": {"a": 1, "b": 2}, "d": {"a": 1, "b": 3}}
    ]


def test_aliases_are_copies_not_shared_objects() -> None:
    [doc] = values("a: &x {k: 1}\nb: *x\n")
    assert isinstance(doc, dict)
    assert doc["a"] == doc["b"] and doc["a"] is not doc["b"]


def test_billion_laughs_is_refused() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        refs = ", ".join([f"*a{i - 1}"] * 10)
        lines.append(f"a{i}: &a{i} [{refs}]")
    _documents, problems = load_documents("\n".join(lines) + "\n", "bomb.yaml")
    assert [p.code for p in problems] == ["yaml-aliases"]
    assert problems[0].message == "yaml: document contains excessive aliasing"


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 1_500, 3_000, 100_000])
def test_deep_nesting_is_refused_without_crashing(depth: int) -> None:
    # libyaml's composer recurses on the C stack: 100,000 levels would crash the interpreter. libyaml 0.2.6
    # (PyYAML 6.0.4's wheels) refuses more than 1,000 levels itself ("exceeded maximum nesting depth");
    # 1,500 and 3,000 levels pass the cheap structure bound and reach that limit in the composer. Whatever
    # libyaml the wheel carries, the user sees our rule at the 513th level.
    documents, problems = load_documents("[" * depth + "]" * depth, "deep.yaml")
    assert documents == []
    assert [(p.code, p.line, p.column) for p in problems] == [("yaml-depth", 0, MAX_DEPTH)]


def test_deep_block_nesting_after_a_good_document_keeps_the_good_one() -> None:
    deep = "".join(" " * i + "a:\n" for i in range(1_200))
    documents, problems = load_documents("ok: 1\n---\n" + deep, "deep.yaml")
    assert [d.value for d in documents] == [{"ok": 1}]
    assert [(p.code, p.line) for p in problems] == [("yaml-depth", 2 + MAX_DEPTH)]


def test_moderate_nesting_is_fine() -> None:
    [value] = values("[" * 50 + "]" * 50)
    depth = 0
    while isinstance(value, list) and value:
        value = value[0]
        depth += 1
    assert depth == 49


def test_syntax_error_keeps_earlier_documents_and_reports_position() -> None:
    documents, problems = load_documents("a: 1\n---\nb: [\n", "t.yaml")
    assert [d.value for d in documents] == [{"a": 1}]
    [problem] = problems
    assert problem.code == "yaml-syntax"
    assert problem.line + 1 == 4


def test_tab_indentation_is_a_syntax_error() -> None:
    _, problems = load_documents("a:\n\tb: 1\n", "t.yaml")
    assert [p.code for p in problems] == ["yaml-syntax"]
    assert (problems[0].line + 1, problems[0].column + 1) == (2, 1)


def test_positions_point_at_keys_and_items() -> None:
    text = "spec:\n  replicatedJobs:\n  - name: a\n    replicas: 2\n  - name: b\n"
    documents, _ = load_documents(text, "t.yaml")
    document = documents[0]
    assert document.position(("spec", "replicatedJobs", 0, "replicas")) == (4, 5)
    assert document.position(("spec", "replicatedJobs", 1)) == (5, 5)
    # A path that does not exist points at its deepest existing part.
    assert document.position(("spec", "replicatedJobs", 1, "template", "spec")) == (5, 5)
    assert document.position(("spec", "nope")) == (1, 1)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=12),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(min_size=1, max_size=8), children, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_json_documents_load_to_the_same_value(value: object) -> None:
    import json

    documents, problems = load_documents(json.dumps(value), "t.json")
    assert not problems
    loaded = documents[0].value if documents else None
    assert loaded == value


def test_type_errors_on_unquoted_yaml11_scalars_carry_a_hint(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests.helpers import validate_text

    diagnostics = validate_text(tmp_path, """
        apiVersion: jobset.x-k8s.io/v1alpha2
        kind: JobSet
        metadata:
          name: js
          labels:
            enabled: on
        spec:
          replicatedJobs:
          - name: rj
            template:
              spec:
                template:
                  spec:
                    containers: [{name: c, image: busybox}]
    """)
    [typed] = [d for d in diagnostics if d.rule == "schema-type"]
    assert (typed.line, typed.column) == (6, 5)
    assert typed.hint is not None and "YAML 1.1 reads the unquoted on as a boolean" in typed.hint


def _event_depth(text: str) -> int:
    """The deepest nesting libyaml's event stream reaches (the walk the column bound lets us skip)."""
    import yaml

    depth = deepest = 0
    for event in yaml.parse(text, Loader=yaml.CSafeLoader):
        if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            depth += 1
            deepest = max(deepest, depth)
        elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            depth -= 1
    return deepest


_TREES = st.recursive(
    st.sampled_from(["x", "a-b", "k: v", "", "1"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b-c", "?d"]), inner, max_size=3),
    max_leaves=40,
)


@given(_TREES, st.sampled_from([None, True, False]), st.sampled_from([2, 3, 4]), st.booleans())
def test_the_column_bound_is_never_below_the_real_depth(tree: object, flow: bool | None, indent: int,
                                                        compact: bool) -> None:
    # Block style with every indentation and sequence layout (indentless "- " under a key, or indented),
    # compact "- - x" and "- a: b" lines, flow style and mixed: the bound that lets the loader skip its
    # exact depth walk must hold for all of them.
    import yaml

    from jobsetctl.loader.yamlload import _indentation_bound

    class Dumper(yaml.SafeDumper):
        def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
            super().increase_indent(flow, indentless and compact)

    text = yaml.dump(tree, Dumper=Dumper, default_flow_style=flow, indent=indent)
    assert _indentation_bound(text) >= _event_depth(text)


@pytest.mark.parametrize("text", [
    "- - - - - - x\n", "a:\n- b:\n  - c:\n    - d\n", "? - - a\n: - - b\n", "- ? a\n  : - b\n",
    "a: &x\n  b: !!map\n    c: [[[1]]]\n", "a:\r  b:\r    c: 1\r",
])
def test_the_column_bound_on_hand_written_layouts(text: str) -> None:
    from jobsetctl.loader.yamlload import _indentation_bound

    assert _indentation_bound(text) >= _event_depth(text)


def test_a_block_style_scenario_skips_the_exact_walk_and_keeps_the_rule() -> None:
    from jobsetctl.loader.yamlload import _SAFE_STRUCTURE_BOUND, _indentation_bound, _structure_bound

    # One large block-style document (a Scenario with its JobSets inline) passes the structure-character
    # bound, but its short lines bound its depth far below MAX_DEPTH: no walk is needed.
    big = "items:\n" + "".join(f"- name: n{i}\n  labels:\n    a: b\n  list:\n  - x: 1\n" for i in range(2_000))
    assert _structure_bound(big) > _SAFE_STRUCTURE_BOUND
    assert _indentation_bound(big) == 2 * len("- name: n1999")  # its longest line, no brackets
    assert len(values(big)[0]["items"]) == 2_000
    # Deep block nesting still gets the rule at the 513th level.
    deep = big + "deep:\n" + "".join(" " * (i + 1) + "a:\n" for i in range(1_200))
    assert _indentation_bound(deep) > MAX_DEPTH
    documents, problems = load_documents(deep, "deep.yaml")
    assert documents == []
    assert [(p.code, p.line) for p in problems] == [("yaml-depth", 10_001 + MAX_DEPTH)]


@given(st.text(alphabet="-.\n\r\t ab:[{?", max_size=80), st.integers(0, 30))
def test_the_structure_bound_with_a_floor_decides_as_the_whole_count(text: str, floor: int) -> None:
    """The loader compares the bound with its threshold only: stretches no longer than the floor are not
    counted, and the answer is still the bound whenever it exceeds the floor (else the floor itself)."""
    from jobsetctl.loader.yamldepth import _structure_bound

    whole = _structure_bound(text)
    assert _structure_bound(text, floor) == (whole if whole > floor else floor)


def test_a_file_of_small_manifests_is_not_counted_against_the_threshold() -> None:
    from jobsetctl.loader.yamldepth import _SAFE_STRUCTURE_BOUND, _structure_bound

    # 1,000 documents of 50 structure characters (53 with the marker's dashes), 194,000 characters in all.
    many = "---\n".join("a: [1, {b: c}]\n- x\n" * 10 for _ in range(1_000))
    assert _structure_bound(many) == 53 < _SAFE_STRUCTURE_BOUND < len(many)
    assert _structure_bound(many, _SAFE_STRUCTURE_BOUND) == _SAFE_STRUCTURE_BOUND


@given(st.text(alphabet="-.\n\r\t ab:", max_size=60))
def test_document_markers_are_found_where_the_regular_expression_finds_them(text: str) -> None:
    from jobsetctl.loader.yamldepth import _DOCUMENT_MARKER, _document_markers

    assert _document_markers(text) == [m.start() for m in _DOCUMENT_MARKER.finditer(text)]
