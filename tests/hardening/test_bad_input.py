"""Bad input, one class per test (issue #6, part 1): each gets one clear diagnostic with its position, the
documented exit status (0 nothing wrong, 1 findings, 2 usage or configuration; never 3), bounded time and
memory, and no traceback.

Most run the real command line in-process; those that could take the interpreter down (deep nesting),
need a resource measurement (the 50 MB file), read standard input, or send signals run the installed
entry point in a subprocess with a timeout. Classes already pinned elsewhere are not repeated: the loader's
own cases live in tests/loader/, the CLI's usage errors in tests/cli/.
"""

from __future__ import annotations

import copy
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from jobsetctl.status import ExitStatus
from tests.hardening.harness import (
    SEEDS,
    Outcome,
    assert_sane,
    children_peak_rss_bytes,
    jobsetctl_executable,
    run_subprocess,
    validate_cli,
)
from tests.jobset.builders import jobset, rjob, to_yaml

Capsys = pytest.CaptureFixture[str]


def write(tmp_path: Path, text: str, name: str = "input.yaml") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def errors(outcome: Outcome) -> list[dict[str, Any]]:
    return [d for d in outcome.diagnostics if d["severity"] == "error"]


def only_error(outcome: Outcome) -> dict[str, Any]:
    found = errors(outcome)
    assert len(found) == 1, found
    return found[0]


def expect(outcome: Outcome, rule: str, line: int, column: int, fragment: str, status: int = ExitStatus.FINDINGS) -> None:
    """The outcome has a diagnostic ``rule`` at ``line:column`` whose message contains ``fragment``."""
    assert_sane(outcome)
    assert outcome.status == status, (outcome.status, outcome.stdout, outcome.stderr)
    hits = [d for d in outcome.diagnostics if (d["rule"], d["line"], d["column"]) == (rule, line, column)]
    assert hits, outcome.rows()
    assert any(fragment in d["message"] for d in hits), [d["message"] for d in hits]


JOBSET_HEAD = "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata:\n  name: js\n"


def jobset_text(pod_spec: str = "containers: [{name: c, image: busybox}]", labels: str = "") -> str:
    meta_labels = f"  labels:\n    {labels}\n" if labels else ""
    return (
        JOBSET_HEAD + meta_labels
        + "spec:\n  replicatedJobs:\n  - name: rj\n    template:\n      spec:\n        template:\n          spec:\n"
        + f"            {pod_spec}\n"
    )


# --- YAML syntax -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "column", "fragment"),
    [
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n", 4, 1, "did not find expected ',' or '}'"),
        ("a: b: c\n", 1, 5, "mapping values are not allowed in this context"),
        ("a:\n  - b\n c: d\n", 3, 2, "did not find expected key"),
        ('a: "unterminated\n', 2, 1, "found unexpected end of stream"),
        ("a: *undefined\n", 1, 4, "found undefined alias"),
        ("%YAML 2.0\n---\na: 1\n", 1, 1, "found incompatible YAML document"),
    ],
)
def test_yaml_syntax_errors_have_one_line_and_a_position(
    tmp_path: Path, capsys: Capsys, text: str, line: int, column: int, fragment: str
) -> None:
    outcome = validate_cli([str(write(tmp_path, text))], capsys)
    expect(outcome, "yaml-syntax", line, column, fragment)
    assert only_error(outcome)["message"].startswith(f"yaml: line {line}: ")


@pytest.mark.parametrize(("char", "column"), [("\x07", 8), ("\x00", 8), ("\x1b", 8)])
def test_control_characters_are_one_line_with_their_position(tmp_path: Path, capsys: Capsys, char: str, column: int) -> None:
    # Regression: PyYAML's reader error printed two lines ('in "<unicode string>", position 12') at 1:1.
    path = tmp_path / "ctrl.yaml"
    path.write_bytes(f"a: 1\nb: caf\u00e9{char}\n".encode())
    outcome = validate_cli([str(path)], capsys)
    expect(outcome, "yaml-syntax", 2, column, "control characters are not allowed")
    assert only_error(outcome)["message"] == (
        f"yaml: line 2: unacceptable character #x{ord(char):04x}: control characters are not allowed"
    )


def test_duplicate_keys_are_reported_at_the_second_key(tmp_path: Path, capsys: Capsys) -> None:
    text = jobset_text().replace("  name: js\n", "  name: js\n  name: js2\n")
    outcome = validate_cli([str(write(tmp_path, text))], capsys)
    expect(outcome, "yaml-duplicate-key", 5, 3, 'key "name" already set in map')


# --- YAML 1.1 surprises ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("labels", "pod_spec", "line", "column", "hint"),
    [
        ("enabled: on", None, 6, 5, "YAML 1.1 reads the unquoted on as a boolean"),
        ("country: no", None, 6, 5, "YAML 1.1 reads the unquoted no as a boolean"),
        ("answer: y", None, 6, 5, "YAML 1.1 reads the unquoted y as a boolean"),
        ("build: 012", None, 6, 5, "YAML 1.1 reads the unquoted 012 as the number 10"),
        ("replicas: 8", None, 6, 5, 'the unquoted 8 is a number; quote it ("8")'),
        (None, "containers: [{name: 012, image: busybox}]", 12, 27, "YAML 1.1 reads the unquoted 012 as the number 10"),
        (None, "containers: [{name: c, image: busybox, env: [{name: A, value: off}]}]",
         12, 68, "YAML 1.1 reads the unquoted off as a boolean"),
        (None, "containers: [{name: c, image: busybox, env: [{name: A, value: 1e3}]}]",
         12, 68, "YAML 1.1 reads the unquoted 1e3 as the number 1000"),
    ],
)
def test_yaml11_scalars_in_string_fields_say_what_happened(
    tmp_path: Path, capsys: Capsys, labels: str | None, pod_spec: str | None, line: int, column: int, hint: str
) -> None:
    text = jobset_text(pod_spec or "containers: [{name: c, image: busybox}]", labels or "")
    outcome = validate_cli([str(write(tmp_path, text))], capsys)
    expect(outcome, "schema-type", line, column, "must be of type string")
    [typed] = [d for d in outcome.diagnostics if d["rule"] == "schema-type"]
    assert hint in typed["hint"]


def test_timestamps_keep_the_text_written(tmp_path: Path, capsys: Capsys) -> None:
    # go-yaml would make a time of it; a label value must stay the string the user wrote.
    outcome = validate_cli([str(write(tmp_path, jobset_text(labels="date: 2024-01-01")))], capsys)
    assert_sane(outcome)
    assert outcome.status == ExitStatus.SUCCESS and errors(outcome) == []


# --- documents that are not objects ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "rule", "line", "column", "fragment"),
    [
        ("just a string\n", "not-an-object", 1, 1, "document 1 is a scalar, not an object"),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n- a\n- b\n", "not-an-object", 5, 1,
         "document 2 is a list, not an object"),
        ("apiVersion: v1\nkind: List\nitems: [1]\n", "not-an-object", 3, 9, "item 0 of the List is not an object"),
        ("kind: JobSet\nmetadata: {name: a}\n", "missing-api-version-or-kind", 1, 1, "document is missing apiVersion"),
        ("apiVersion: jobset.x-k8s.io/v1alpha2\nmetadata: {name: a}\n", "missing-api-version-or-kind", 1, 1,
         "Object 'Kind' is missing in"),
        ("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: [JobSet]\n", "missing-api-version-or-kind", 2, 1,
         "Object 'Kind' is missing in"),
        ("metadata: {name: a}\n", "missing-api-version-or-kind", 1, 1, "document is missing apiVersion and kind"),
    ],
)
def test_documents_that_are_not_objects(
    tmp_path: Path, capsys: Capsys, text: str, rule: str, line: int, column: int, fragment: str
) -> None:
    expect(validate_cli([str(write(tmp_path, text))], capsys), rule, line, column, fragment)


def test_a_list_whose_items_are_not_a_list_is_not_passed_in_silence(tmp_path: Path, capsys: Capsys) -> None:
    # Regression: `items: abc` made a file with nothing checked and exit 0.
    outcome = validate_cli([str(write(tmp_path, "apiVersion: v1\nkind: List\nitems: abc\n"))], capsys)
    expect(outcome, "not-an-object", 3, 1, "the items of a List must be a list of objects")


def test_unknown_kinds_are_an_info_note_and_exit_0(tmp_path: Path, capsys: Capsys) -> None:
    text = "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\nspec: {anything: [1, 2]}\n"
    outcome = validate_cli([str(write(tmp_path, text))], capsys)
    expect(outcome, "unknown-kind", 2, 1, "Gadget (example.com/v1) is not a kind jobsetctl checks", ExitStatus.SUCCESS)
    assert [d["severity"] for d in outcome.diagnostics] == ["info"]


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "file holds no YAML documents"), ("# a comment\n", "file holds no YAML documents"),
     ("---\n", "file holds only empty YAML documents"), ("---\n---\n...\n", "file holds only empty YAML documents")],
)
def test_empty_files_and_files_of_empty_documents_are_a_note(tmp_path: Path, capsys: Capsys, text: str, message: str) -> None:
    # Regression: a file that is only `---` was checked in silence (0 objects and no word about it).
    outcome = validate_cli([str(write(tmp_path, text))], capsys)
    assert outcome.status == ExitStatus.SUCCESS
    assert [(d["rule"], d["line"], d["column"], d["message"]) for d in outcome.diagnostics] == [
        ("empty-file", 1, 1, message)
    ]


# --- wrong types at every level ------------------------------------------------------------------------


def _paths(value: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _paths(child, (*prefix, index))
    return found


def _retyped(obj: dict[str, Any], path: tuple[str | int, ...]) -> dict[str, Any]:
    """A copy with the value at ``path`` replaced by one of a type no field of the seed can take."""
    changed = copy.deepcopy(obj)
    parent: Any = changed
    for seg in path[:-1]:
        parent = parent[seg]
    current = parent[path[-1]]
    parent[path[-1]] = "x" if isinstance(current, dict | list) else [1]
    return changed


def _seed(name: str) -> dict[str, Any]:
    [document] = [d for d in yaml.safe_load_all((SEEDS / name).read_text()) if d]
    return document


@pytest.mark.parametrize("seed", ["jobset.yaml", "trainjob.yaml"])
def test_a_wrong_type_at_any_field_is_an_error_at_that_field(tmp_path: Path, capsys: Capsys, seed: str) -> None:
    """Every field of a JobSet and a TrainJob, one at a time, given a type it cannot take: the error is
    at that field's key (or list item), in one file per case so that positions are checked exactly."""
    obj = _seed(seed)
    paths = [p for p in _paths(obj) if p and p[0] not in ("apiVersion", "kind")]
    assert len(paths) >= 25
    files: dict[Path, tuple[str | int, ...]] = {}
    for index, path in enumerate(paths):
        files[write(tmp_path, to_yaml(_retyped(obj, path)), f"case{index:03}.yaml")] = path
    outcome = validate_cli([str(tmp_path)], capsys)
    assert_sane(outcome)
    assert outcome.status == ExitStatus.FINDINGS
    from jobsetctl.loader.objects import load_file
    from jobsetctl.loader.sources import Source

    by_file: dict[str, list[dict[str, Any]]] = {}
    for d in errors(outcome):
        by_file.setdefault(d["file"], []).append(d)
    for file, path in files.items():
        [record] = load_file(Source(str(file), str(file))).records
        line, column = record.position(path)
        found = by_file.get(str(file), [])
        assert any((d["line"], d["column"]) == (line, column) for d in found), (path, found)


# --- values at and beyond limits ---------------------------------------------------------------------


def _validate_obj(tmp_path: Path, capsys: Capsys, obj: dict[str, Any]) -> Outcome:
    outcome = validate_cli([str(write(tmp_path, to_yaml(obj)))], capsys)
    assert_sane(outcome)
    return outcome


def test_name_lengths_at_and_beyond_63(tmp_path: Path, capsys: Capsys) -> None:
    # Child Jobs are named <jobset>-<replicatedJob>-<index>; that name must fit in 63 characters.
    at_limit = "a" * (63 - len("-rj-0"))
    assert _validate_obj(tmp_path, capsys, jobset(rjob(name="rj"), name=at_limit)).status == ExitStatus.SUCCESS
    beyond = _validate_obj(tmp_path, capsys, jobset(rjob(name="rj"), name=at_limit + "a"))
    expect(beyond, "jobset-job-name", 7, 5, "will exceed 63 characters")
    label_ok = jobset(rjob())
    label_ok["metadata"]["labels"] = {"k": "v" * 63}
    assert _validate_obj(tmp_path, capsys, label_ok).status == ExitStatus.SUCCESS
    label_long = copy.deepcopy(label_ok)
    label_long["metadata"]["labels"]["k"] = "v" * 64
    expect(_validate_obj(tmp_path, capsys, label_long), "meta-labels", 6, 5, "must be no more than 63 characters")


@pytest.mark.parametrize(("replicas", "parallelism"), [(2**31, None), (2**16, 2**16), (2**31 - 1, 2)])
def test_int32_overflow_of_replicas_and_replicas_times_parallelism(
    tmp_path: Path, capsys: Capsys, replicas: int, parallelism: int | None
) -> None:
    outcome = _validate_obj(tmp_path, capsys, jobset(rjob(replicas=replicas, parallelism=parallelism)))
    expect(outcome, "jobset-replicas-parallelism-overflow", 8, 5,
           "the product of replicas and parallelism must not exceed 2147483647 for replicatedJob 'rj'")


def test_one_thousand_replicated_jobs_and_100000_replicas_are_accepted(tmp_path: Path, capsys: Capsys) -> None:
    many = jobset(*[rjob(name=f"r{i}") for i in range(1000)])
    assert _validate_obj(tmp_path, capsys, many).status == ExitStatus.SUCCESS
    assert _validate_obj(tmp_path, capsys, jobset(rjob(replicas=100_000))).status == ExitStatus.SUCCESS


def test_six_depends_on_is_one_too_many(tmp_path: Path, capsys: Capsys) -> None:
    upstream = [rjob(name=f"u{i}") for i in range(6)]
    five = jobset(*upstream, rjob(name="last", dependsOn=[{"name": f"u{i}", "status": "Ready"} for i in range(5)]))
    assert _validate_obj(tmp_path, capsys, five).status == ExitStatus.SUCCESS
    six = jobset(*upstream, rjob(name="last", dependsOn=[{"name": f"u{i}", "status": "Ready"} for i in range(6)]))
    outcome = _validate_obj(tmp_path, capsys, six)
    depends_on = [d for d in outcome.diagnostics if d["rule"] == "schema-items"]
    assert [d["message"] for d in depends_on] == [
        "spec.replicatedJobs[6].dependsOn: Too many: 6: must have at most 5 items"
    ]


def _claim(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}


def test_fifty_one_volume_claim_templates_are_one_too_many(tmp_path: Path, capsys: Capsys) -> None:
    policies = [{"templates": [_claim(f"v{i}") for i in range(51)]}]
    outcome = _validate_obj(tmp_path, capsys, jobset(rjob(), volumeClaimPolicies=policies))
    expect(outcome, "schema-items", 7, 5, "spec.volumeClaimPolicies[0].templates: Too many: 51: must have at most 50 items")


def test_cyclic_depends_on_reports_what_upstream_reports(tmp_path: Path, capsys: Capsys) -> None:
    cycle = jobset(rjob(name="a", dependsOn=[{"name": "b", "status": "Ready"}]),
                   rjob(name="b", dependsOn=[{"name": "a", "status": "Ready"}]))
    outcome = _validate_obj(tmp_path, capsys, cycle)
    assert outcome.status == ExitStatus.FINDINGS
    assert [(d["rule"], d["message"]) for d in errors(outcome)] == [
        ("jobset-depends-on-first", "<nil>: Internal error: DependsOn can't be set for the first ReplicatedJob"),
        ("jobset-depends-on-order", "<nil>: Internal error: replicatedJob: a cannot depend on replicatedJob: b"),
    ]


# --- hostile YAML ------------------------------------------------------------------------------------


def billion_laughs(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\ndata:\n" + "\n".join("  " + x for x in lines) + "\n"


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [(billion_laughs(), 5, 7), ("a: &a [*a]\n", 1, 4), ("&a {b: [*a, *a]}\n", 1, 1)],
    ids=["billion-laughs", "self-alias", "recursive-map"],
)
def test_alias_bombs_and_recursive_aliases_are_refused(
    tmp_path: Path, capsys: Capsys, text: str, line: int, column: int
) -> None:
    outcome = validate_cli([str(write(tmp_path, text))], capsys)
    expect(outcome, "yaml-aliases", line, column, "yaml: document contains excessive aliasing")


@pytest.mark.parametrize("shape", ["flow", "block-sequence", "block-mapping"])
def test_100000_levels_of_nesting_do_not_crash_the_interpreter(tmp_path: Path, shape: str) -> None:
    depth = 100_000
    if shape == "flow":
        text = "[" * depth + "]" * depth
    elif shape == "block-sequence":
        text = "- " * depth + "x\n"
    else:  # indentation-based: 2,000 levels already makes a 4 MB file
        text = "".join(" " * i + "a:\n" for i in range(2_000))
    path = write(tmp_path, text, "deep.yaml")
    outcome = run_subprocess(["validate", "-o", "json", str(path)])
    assert_sane(outcome)
    assert outcome.status == ExitStatus.FINDINGS
    [error] = errors(outcome)
    assert error["rule"] == "yaml-depth" and error["message"] == "document is nested more than 512 levels deep"
    assert error["line"] == (513 if shape == "block-mapping" else 1)


def test_a_50_mb_file_of_many_documents_finishes_with_bounded_memory(tmp_path: Path) -> None:
    """50 MB, 100,000+ documents, one diagnostic each, through the text reporter (source lines and carets).

    Regressions: the loader kept PyYAML's node trees (2.5 GiB for such a file, most of the run in the
    garbage collector), and the text reporter read the file from the top again for every diagnostic.
    """
    document = (
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\n  labels: {{app: demo, tier: web}}\n"
        "data:\n  key: value-{i}\n  other: \"{pad}\"\n"
    )
    path = tmp_path / "big.yaml"
    size = count = 0
    with path.open("w", encoding="utf-8") as handle:
        while size < 50 * 1024 * 1024:
            text = document.format(i=count, pad="x" * 300)
            handle.write(text)
            size += len(text)
            count += 1
    assert count > 100_000
    outcome = run_subprocess(["validate", "--jobs", "1", str(path)])
    assert_sane(outcome)
    assert outcome.status == ExitStatus.SUCCESS, outcome.stderr
    assert outcome.stdout.count("is not a kind jobsetctl checks") == count
    assert outcome.stdout.rstrip().endswith(f"ok: {count} objects in 1 file checked, no problems (0 errors, 0 warnings, {count} notes)")
    assert children_peak_rss_bytes() < 2 * 1024**3


def test_a_file_over_the_64_mib_limit_is_refused_without_reading_it_all(tmp_path: Path, capsys: Capsys) -> None:
    path = tmp_path / "huge.yaml"
    with path.open("wb") as handle:
        handle.truncate(64 * 1024 * 1024 + 1)  # sparse: no disk used
    outcome = validate_cli([str(path)], capsys)
    expect(outcome, "input-too-large", 1, 1, "larger than the 64 MiB input limit")


def test_a_minified_line_is_shown_as_an_excerpt_around_the_column(tmp_path: Path, capsys: Capsys) -> None:
    # Regression: the text reporter printed the whole source line under each diagnostic; a minified JSON
    # file is one line, so the output grew with (file size) x (diagnostics).
    items = ", ".join(f'{{"name": "c{i}", "image": 5}}' for i in range(200))
    text = ('{"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "js"}, "spec": '
            '{"replicatedJobs": [{"name": "rj", "template": {"spec": {"template": {"spec": {"containers": [' + items + ']}}}}}]}}')
    outcome = validate_cli([str(write(tmp_path, text, "min.json"))], capsys, json_output=False)
    assert outcome.status == ExitStatus.FINDINGS
    lines = outcome.stdout.splitlines()
    assert max(len(line) for line in lines) < 500
    assert sum("must be of type string" in line for line in lines) == 200
    # The caret still points at the field: the excerpt line and the caret line agree.
    source, caret = lines[2], lines[3]
    assert source[caret.index("^"):].startswith('"image": 5')


# --- files that cannot be read -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "line", "column", "message"),
    [
        (b"\x00\x01\x02\x03binary\xff", 1, 11, "binary file: invalid byte 0xff at offset 10"),
        (b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caf\xe9}\n", 3, 21, "not valid UTF-8: invalid byte 0xe9 at offset 51"),
        (b"\xff\xfeA\x00", 1, 1, "binary file: invalid byte 0xff at offset 0"),
    ],
)
def test_binary_and_non_utf8_files(tmp_path: Path, capsys: Capsys, data: bytes, line: int, column: int, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(data)
    outcome = validate_cli([str(path)], capsys)
    expect(outcome, "input-encoding", line, column, message)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file_and_directory(tmp_path: Path, capsys: Capsys) -> None:
    secret = write(tmp_path, "a: 1\n", "secret.yaml")
    secret.chmod(0)
    closed = tmp_path / "closed"
    closed.mkdir()
    closed.chmod(0)
    try:
        outcome = validate_cli([str(secret), str(closed)], capsys)
    finally:
        closed.chmod(0o755)
    assert outcome.status == ExitStatus.FINDINGS
    assert sorted((d["rule"], d["message"]) for d in outcome.diagnostics) == sorted([
        ("input-unreadable", f"{secret}: permission denied"), ("input-unreadable", f"{closed}: permission denied"),
    ])


def test_missing_paths_and_directory_loops(tmp_path: Path, capsys: Capsys) -> None:
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    write(tree / "sub", (SEEDS / "jobset.yaml").read_text(), "js.yaml")
    (tree / "sub" / "up").symlink_to(tree)
    (tree / "sub" / "self").symlink_to(tree / "sub")
    missing = tmp_path / "nope.yaml"
    outcome = validate_cli([str(tree), str(missing)], capsys)
    assert_sane(outcome)
    assert outcome.status == ExitStatus.FINDINGS
    assert sorted(d["message"] for d in errors(outcome)) == [
        f"{missing}: no such file or directory",
        f"{tree / 'sub' / 'self'}: directory loop through a symbolic link, not followed",
        f"{tree / 'sub' / 'up'}: directory loop through a symbolic link, not followed",
    ]
    assert outcome.report["summary"]["objects"] == 1


# --- standard input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "rule", "line", "column", "fragment"),
    [
        (bytes(range(256)) * 4, "input-encoding", 2, 118, "binary file: invalid byte 0x80 at offset 128"),
        (b"}}}{{{ not yaml", "yaml-syntax", 1, 1, "did not find expected node content"),
        (b"\xef\xbb\xbf- [unclosed", "yaml-syntax", 2, 1, "did not find expected ',' or ']'"),
        (b"", "empty-file", 1, 1, "file holds no YAML documents"),
    ],
)
def test_garbage_on_standard_input(data: bytes, rule: str, line: int, column: int, fragment: str) -> None:
    outcome = run_subprocess(["validate", "-o", "json", "-"], stdin=data)
    expected_status = ExitStatus.SUCCESS if rule == "empty-file" else ExitStatus.FINDINGS
    expect(outcome, rule, line, column, fragment, expected_status)
    assert {d["file"] for d in outcome.diagnostics} == {"<stdin>"}


def test_standard_input_in_text_output_shows_the_line(tmp_path: Path) -> None:
    outcome = run_subprocess(["validate", "-"], stdin=b"apiVersion: v1\nkind: List\nitems: [7]\n")
    assert outcome.status == ExitStatus.FINDINGS and outcome.stderr == ""
    assert "       3 | items: [7]" in outcome.stdout


# --- broken configuration ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "position", "fragment"),
    [
        ("strict: [\n", "2:1", "did not find expected node content"),
        ("strict: true\nstrict: false\n", "2:1", 'key "strict" already set in map'),
        ("- strict\n", "1:1", "configuration must be a mapping"),
        ("strict: maybe\n", "1:1", "strict must be true or false"),
        ("unknownKey: 1\n", "1:1", "unknown configuration key 'unknownKey'"),
        ("kubernetesVersion: 1.30\n", "1:1", 'YAML reads the unquoted 1.30 as the number 1.3; quote it: "1.30"'),
        ("kubernetesVersion: \"1.20\"\n", "1:1", "unsupported Kubernetes version '1.20'"),
        ("strict: true\nfeatureGates: {NoSuchGate: true}\n", "2:1", "unrecognized feature gate: NoSuchGate"),
        ("featureGates: {InPlaceRestart: maybe}\n", "1:1", "invalid value of InPlaceRestart=maybe"),
        ("featureGates: InPlaceRestart\n", "1:1", "invalid feature gate 'InPlaceRestart': expected Name=true|false"),
        ("featureGates: [a]\n", "1:1", "featureGates must be a mapping"),
        ("\nignore: [no-such-rule]\n", "2:1", "unknown rule id 'no-such-rule' in ignore"),
        ("ignore: 5\n", "1:1", "ignore must be a list of strings"),
        ("x: !!python/object/apply:os.system [true]\n", "1:4", "unsupported YAML tag"),
        ("a: &a [*a]\n", "1:4", "excessive aliasing"),
    ],
)
def test_a_broken_config_file_is_exit_2_with_its_position(
    tmp_path: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch, config: str, position: str, fragment: str
) -> None:
    write(tmp_path, config, ".jobsetctl.yaml")
    manifest = write(tmp_path, (SEEDS / "jobset.yaml").read_text(), "js.yaml")
    monkeypatch.chdir(tmp_path)
    outcome = validate_cli([str(manifest)], capsys)
    assert outcome.status == ExitStatus.USAGE, (outcome.stdout, outcome.stderr)
    assert outcome.stdout == ""
    [line] = outcome.stderr.splitlines()
    assert line.startswith(f"jobsetctl: error: {tmp_path / '.jobsetctl.yaml'}:{position}: "), line
    assert fragment in line


def test_a_config_file_that_is_not_utf8_or_not_a_file(tmp_path: Path, capsys: Capsys) -> None:
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe\x00")
    outcome = validate_cli(["--config", str(binary), str(SEEDS)], capsys)
    assert outcome.status == ExitStatus.USAGE
    assert outcome.stderr == f"jobsetctl: error: {binary}: configuration is not UTF-8 text\n"
    outcome = validate_cli(["--config", str(tmp_path), str(SEEDS)], capsys)
    assert outcome.status == ExitStatus.USAGE
    assert outcome.stderr == f"jobsetctl: error: {tmp_path}: cannot read configuration: is a directory\n"


# --- the installed entry point: no traceback, ever ---------------------------------------------------


@pytest.mark.parametrize(
    "text",
    # A list of objects, not of data: a list of numbers is someone else's file, passed over (not-a-manifest).
    ["a: [\n", "- {kind: ConfigMap}\n", billion_laughs(), "\t\x07", "apiVersion: v1\nkind: List\nitems: {a: 1}\n"],
    ids=["syntax", "list", "bomb", "control", "list-items"],
)
def test_the_entry_point_reports_without_a_traceback(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, text)
    outcome = run_subprocess(["validate", str(path)])
    assert_sane(outcome)
    assert outcome.status == ExitStatus.FINDINGS and outcome.stderr == ""
    assert outcome.stdout.splitlines()[0] == str(path)


# --- Ctrl-C ------------------------------------------------------------------------------------------


def _children(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []


def _cpu_ticks(pid: str) -> int:
    """User plus system CPU time of a process, in clock ticks (fields 14 and 15 of /proc/PID/stat)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


def _wait_for_busy_workers(pid: int, workers: int, timeout: float = 120.0) -> None:
    """Until ``workers`` child processes have each spent CPU time on files: the pool is running (so the parent,
    which ignores SIGINT only while it forks them, has its handler back) and the input is far from done."""
    enough = max(1, os.sysconf("SC_CLK_TCK") // 10)  # 0.1 s of CPU each
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        busy = [child for child in _children(pid) if _cpu_ticks(child) >= enough]
        if len(busy) >= workers:
            return
        time.sleep(0.05)
    raise AssertionError(f"{workers} busy worker processes did not appear within {timeout} s")


def _interrupt(
    args: list[str], *, whole_group: bool, cwd: Path, stdin: bytes | None = None, workers: int = 0
) -> subprocess.CompletedProcess[bytes]:
    """Start ``jobsetctl ARGS``, wait until it has reached an observable stage, send SIGINT (to the process
    group: what a terminal's Ctrl-C does, reaching worker processes too), collect what it said.

    The stages, instead of a guessed start-up time (a fixed 3 s once fired during the imports on a loaded
    machine): with ``stdin``, the child has read all but the last pipe buffer of it (our write returns only
    then: past start-up and into an input that takes far longer to check than to read); with ``workers``,
    that many worker processes are busy with files (:func:`_wait_for_busy_workers`).
    """
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("JOBSETCTL_DEBUG", None)
    reader, writer = os.pipe() if stdin is not None else (None, None)
    process = subprocess.Popen(
        [*jobsetctl_executable(), *args], stdin=reader if reader is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env, start_new_session=True,
    )
    try:
        if reader is not None and writer is not None and stdin is not None:
            os.close(reader)
            with os.fdopen(writer, "wb") as pipe:
                pipe.write(stdin)
        if workers:
            _wait_for_busy_workers(process.pid, workers)
        assert process.poll() is None, "finished before the interrupt: make the input bigger"
        if whole_group:
            os.killpg(process.pid, signal.SIGINT)
        else:
            process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def _many_documents(path: Path, count: int) -> None:
    text = (SEEDS / "jobset.yaml").read_text()
    with path.open("w", encoding="utf-8") as handle:
        for i in range(count):
            handle.write("---\n" + text.replace("name: seed-jobset", f"name: seed-jobset-{i}"))


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("whole_group", [False, True], ids=["process", "group"])
def test_ctrl_c_on_a_big_input_exits_130_without_a_traceback(tmp_path: Path, whole_group: bool) -> None:
    path = tmp_path / "big.yaml"
    _many_documents(path, 20_000)
    data = path.read_bytes()
    assert len(data) > 1024 * 1024  # far beyond a pipe buffer (64 KiB on Linux)
    done = _interrupt(["validate", "--jobs", "1", "-"], whole_group=whole_group, cwd=tmp_path, stdin=data)
    assert done.returncode == ExitStatus.INTERRUPTED, done.stderr
    assert done.stderr.decode() == "jobsetctl: interrupted\n"


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="watches the worker processes in /proc")
def test_ctrl_c_with_worker_processes_running_exits_130_and_workers_stay_quiet(tmp_path: Path) -> None:
    # Regression: each worker died of its own KeyboardInterrupt and printed "Process ForkPoolWorker-1:" and
    # a traceback (cut short when the parent terminated it).
    text = (SEEDS / "jobset.yaml").read_text()
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(4_000):  # 20,000 documents: far more than a few seconds of work for two workers
        documents = [text.replace("name: seed-jobset", f"name: js-{i}-{j}") for j in range(5)]
        (corpus / f"f{i:05}.yaml").write_text("---\n".join(documents))
    done = _interrupt(["validate", "--jobs", "2", str(corpus)], whole_group=True, cwd=tmp_path, workers=2)
    assert done.returncode == ExitStatus.INTERRUPTED, done.stderr
    assert done.stderr.decode() == "jobsetctl: interrupted\n"


# --- broken files given to --runtimes and --old ------------------------------------------------------


@pytest.mark.parametrize("option", ["--runtimes", "--old"])
@pytest.mark.parametrize(
    ("data", "position", "fragment"),
    [
        (b"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nspec: {template: [\n", "4:1",
         "did not find expected node content"),
        (b"\xff\xfe", "1:1", "not valid UTF-8"),
        (b"a: 1\na: 2\n", "2:1", 'key "a" already set in map'),
    ],
)
def test_a_broken_runtimes_or_old_file_is_exit_2_with_its_position(
    tmp_path: Path, capsys: Capsys, option: str, data: bytes, position: str, fragment: str
) -> None:
    # Regression (--runtimes): a runtimes file that could not be read was passed over in silence, and the
    # TrainJobs using its runtimes then reported them "not found".
    broken = tmp_path / "broken.yaml"
    broken.write_bytes(data)
    trainjob = write(tmp_path, (SEEDS / "trainjob.yaml").read_text(), "tj.yaml")
    outcome = validate_cli([option, str(broken), str(trainjob)], capsys)
    assert outcome.status == ExitStatus.USAGE and outcome.stdout == ""
    assert outcome.stderr.startswith(f"jobsetctl: error: {option}: {broken}:{position}: "), outcome.stderr
    assert fragment in outcome.stderr and len(outcome.stderr.splitlines()) == 1
