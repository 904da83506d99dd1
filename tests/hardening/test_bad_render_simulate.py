"""Bad input given to ``render`` and ``simulate`` (issue #6, phase 2), one class per test.

Part 1: every class of unreadable input ``validate`` already handles (tests/hardening/test_bad_input.py)
gets the same diagnostics from ``render`` (on stderr, exactly validate's text; nothing on stdout) and from
``simulate`` (its pre-run report, validate's JSON), exit 1, and nothing is written where
``--output-dir``, ``--trace``, ``--svg`` or ``--html`` point.

Part 2: what only a simulation can get wrong, in a Scenario: files that are not there or that are the
Scenario itself, times that are negative, unparseable, infinite or beyond a year, and, by the numbers,
inputs too big to model (tests/hardening/test_render_simulate_safety.py runs the ones that need a
subprocess to show they are bounded). Each has its exact rule, position and message, or exit status 2
and one line on stderr for a command-line option.

Part 3 (simulated outcomes that explain themselves) is in test_bad_scenario_outcomes.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jobsetctl.simulate import limits
from jobsetctl.status import ExitStatus
from tests.hardening.cli_runs import JOB, cli
from tests.hardening.harness import SEEDS, Outcome, assert_sane, run_subprocess
from tests.helpers import dedent

Capsys = pytest.CaptureFixture[str]


def _billion_laughs(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\ndata:\n" + "\n".join("  " + x for x in lines) + "\n"


def _jobset_with_duplicate_name() -> bytes:
    return (SEEDS / "jobset.yaml").read_text().replace("  name: seed-jobset\n", "  name: seed-jobset\n  name: again\n").encode()


#: (id, file content, the errors validate reports as (rule, line, column)). None: the path is missing.
BAD_FILES: list[tuple[str, bytes | None, list[tuple[str, int, int]]]] = [
    ("yaml-syntax", b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n", [("yaml-syntax", 4, 1)]),
    ("duplicate-key", _jobset_with_duplicate_name(), [("yaml-duplicate-key", 6, 3)]),
    ("scalar-document", b"just a string\n", [("not-an-object", 1, 1)]),
    # A list of objects (a list of plain data is someone else's file, passed over with a note).
    ("list-document", b"- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n", [("not-an-object", 1, 1)]),
    ("list-items-not-a-list", b"apiVersion: v1\nkind: List\nitems: abc\n", [("not-an-object", 3, 1)]),
    ("missing-api-version", b"kind: JobSet\nmetadata: {name: a}\n", [("missing-api-version-or-kind", 1, 1)]),
    ("missing-kind", b"apiVersion: jobset.x-k8s.io/v1alpha2\nmetadata: {name: a}\n", [("missing-api-version-or-kind", 1, 1)]),
    ("binary", b"\x00\x01\x02\x03binary\xff", [("input-encoding", 1, 11)]),
    ("not-utf8", b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caf\xe9}\n", [("input-encoding", 3, 21)]),
    ("control-character", "a: 1\nb: caf\u00e9\x07\n".encode(), [("yaml-syntax", 2, 8)]),
    ("billion-laughs", _billion_laughs().encode(), [("yaml-aliases", 5, 7)]),
    ("recursive-alias", b"a: &a [*a]\n", [("yaml-aliases", 1, 4)]),
    ("python-tag", b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: !!python/object/apply:os.system [true]\n",
     [("yaml-tag", 4, 7)]),
    ("missing-path", None, [("input-unreadable", 1, 1)]),
]


def _bad_file(tmp_path: Path, data: bytes | None) -> Path:
    path = tmp_path / "bad.yaml"
    if data is not None:
        path.write_bytes(data)
    return path


def _validate(args: list[str], capsys: Capsys) -> tuple[Outcome, Outcome]:
    """validate's JSON and text outcomes for ``args``."""
    as_json = cli(["validate", "-o", "json", *args], capsys)
    as_text = cli(["validate", *args], capsys)
    return as_json, as_text


def _errors(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [d for d in report["diagnostics"] if d["severity"] == "error"]


def _render_and_simulate_agree_with_validate(tmp_path: Path, capsys: Capsys, paths: list[str]) -> list[tuple[str, int, int]]:
    """Run the three commands on ``paths``; check render and simulate against validate; return validate's errors."""
    checked, text = _validate(paths, capsys)
    assert_sane(checked)
    assert checked.status == text.status == ExitStatus.FINDINGS

    out_dir = tmp_path / "rendered"
    rendered = cli(["render", "--pods", "--output-dir", str(out_dir), *paths], capsys)
    assert rendered.status == ExitStatus.FINDINGS, rendered.stderr
    assert rendered.stdout == ""
    assert rendered.stderr == text.stdout  # the same report, word for word
    assert not out_dir.exists()

    outputs = {name: tmp_path / name for name in ("run.trace.json", "run.svg", "run.html")}
    simulated = cli(["simulate", "-o", "json", *paths, "--trace", str(outputs["run.trace.json"]),
                     "--svg", str(outputs["run.svg"]), "--html", str(outputs["run.html"])], capsys)
    assert_sane(simulated)
    assert simulated.status == ExitStatus.FINDINGS and simulated.stderr == ""
    assert _errors(simulated.report) == _errors(checked.report)
    assert not any(path.exists() for path in outputs.values())
    return [(d["rule"], d["line"], d["column"]) for d in _errors(checked.report)]


# --- part 1: what validate refuses, render and simulate refuse the same way ----------------------------


@pytest.mark.parametrize(("data", "expected"), [(d, e) for _, d, e in BAD_FILES], ids=[i for i, _, _ in BAD_FILES])
def test_unreadable_input_is_refused_by_render_and_simulate_as_by_validate(
    tmp_path: Path, capsys: Capsys, data: bytes | None, expected: list[tuple[str, int, int]]
) -> None:
    path = _bad_file(tmp_path, data)
    assert _render_and_simulate_agree_with_validate(tmp_path, capsys, [str(path)]) == expected


def test_a_directory_with_symbolic_link_loops(tmp_path: Path, capsys: Capsys) -> None:
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "bad.yaml").write_text("a: [\n")
    (tree / "sub" / "up").symlink_to(tree)
    (tree / "sub" / "self").symlink_to(tree / "sub")
    found = _render_and_simulate_agree_with_validate(tmp_path, capsys, [str(tree)])
    assert sorted(found) == [("input-unreadable", 1, 1), ("input-unreadable", 1, 1), ("yaml-syntax", 2, 1)]


def test_a_file_over_the_input_limit(tmp_path: Path, capsys: Capsys) -> None:
    path = tmp_path / "huge.yaml"
    with path.open("wb") as handle:
        handle.truncate(64 * 1024 * 1024 + 1)  # sparse: no disk used
    assert _render_and_simulate_agree_with_validate(tmp_path, capsys, [str(path)]) == [("input-too-large", 1, 1)]


@pytest.mark.parametrize("command", ["render", "simulate"])
def test_100000_levels_of_nesting_through_the_entry_point(tmp_path: Path, command: str) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text("[" * 100_000 + "]" * 100_000)
    outcome = run_subprocess([command, str(path)], cwd=tmp_path)
    assert_sane(outcome)
    assert outcome.status == ExitStatus.FINDINGS
    report = outcome.stderr if command == "render" else outcome.stdout
    assert "  1:513  error   document is nested more than 512 levels deep  [input/yaml-depth]" in report.splitlines()
    assert (outcome.stdout if command == "render" else outcome.stderr) == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep.yaml"]


@pytest.mark.parametrize(
    "data", [b"\xef\xbb\xbf- [unclosed", bytes(range(256)) * 4, b"a: &a [*a]\n"], ids=["syntax", "binary", "alias"])
def test_garbage_on_standard_input(data: bytes) -> None:
    """Read once by each command (render reads its input twice: a replay of the bytes it read)."""
    checked = run_subprocess(["validate", "-"], stdin=data)
    assert checked.status == ExitStatus.FINDINGS and checked.stdout.startswith("<stdin>\n")
    rendered = run_subprocess(["render", "-"], stdin=data)
    assert (rendered.status, rendered.stdout, rendered.stderr) == (ExitStatus.FINDINGS, "", checked.stdout)
    simulated = run_subprocess(["simulate", "-"], stdin=data)
    assert (simulated.status, simulated.stdout, simulated.stderr) == (ExitStatus.FINDINGS, checked.stdout, "")


# --- part 2: a Scenario's own mistakes -----------------------------------------------------------------

SCENARIO = """\
apiVersion: jobsetctl.dev/v1alpha1
kind: Scenario
metadata: {name: s}
spec:
  until: 2h
  nodes:
  - {name: node, count: 2, capacity: {cpu: "4"}}
  submit:
  - {at: 0s, files: [job.yaml]}
  actions:
  - {at: 30m, failNode: node-0}
"""


def scenario(tmp_path: Path, *replacements: tuple[str, str], name: str = "scenario.yaml", text: str = SCENARIO) -> Path:
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new)
    (tmp_path / "job.yaml").write_text(JOB)
    path = tmp_path / name
    path.write_text(dedent(text))
    return path


def simulate_rows(capsys: Capsys, path: Path, *extra: str) -> list[tuple[str, int, int, str]]:
    """``simulate -o json PATH``, which must refuse the input before running: its errors as (rule, line,
    column, message), checked sane, with nothing written."""
    outcome = cli(["simulate", "-o", "json", str(path), *extra], capsys)
    assert_sane(outcome)
    assert outcome.status == ExitStatus.FINDINGS, (outcome.stdout, outcome.stderr)
    assert outcome.stderr == ""
    assert "events" not in outcome.report  # the report of inputs, not a timeline: nothing ran
    return [(d["rule"], d["line"], d["column"], d["message"]) for d in _errors(outcome.report)]


def test_a_submitted_file_that_does_not_exist(tmp_path: Path, capsys: Capsys) -> None:
    path = scenario(tmp_path, ("files: [job.yaml]", "files: [job.yaml, gone.yaml]"))
    gone = tmp_path / "gone.yaml"
    assert simulate_rows(capsys, path) == [
        ("scenario-missing-file", 9, 32, f"spec.submit[0].files[1]: {gone}: no such file or directory"),
    ]


def test_a_submitted_directory_without_manifests(tmp_path: Path, capsys: Capsys) -> None:
    (tmp_path / "empty").mkdir()
    path = scenario(tmp_path, ("files: [job.yaml]", "files: [empty]"))
    assert simulate_rows(capsys, path) == [
        ("scenario-missing-file", 9, 22, "spec.submit[0].files[0]: empty: no manifests (*.yaml, *.yml, *.json) found"),
    ]


def test_a_submitted_file_with_a_yaml_error_is_reported_in_that_file(tmp_path: Path, capsys: Capsys) -> None:
    path = scenario(tmp_path)
    (tmp_path / "job.yaml").write_text("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j\n")
    outcome = cli(["simulate", "-o", "json", str(path)], capsys)
    assert outcome.status == ExitStatus.FINDINGS
    assert [(d["file"], d["rule"], d["line"], d["column"]) for d in _errors(outcome.report)] == [
        (str(tmp_path / "job.yaml"), "yaml-syntax", 4, 1)]


def test_a_scenario_that_submits_itself(tmp_path: Path, capsys: Capsys) -> None:
    # Regression: the Scenario document of the file was skipped in silence and the run submitted nothing
    # (or its inline manifests a second time, each then refused as AlreadyExists).
    path = scenario(tmp_path, ("files: [job.yaml]", "files: [scenario.yaml]"))
    assert simulate_rows(capsys, path) == [
        ("scenario-invalid-value", 9, 22,
         'spec.submit[0].files[0]: "scenario.yaml" is this Scenario\'s own file; submit the manifests, not the Scenario'),
    ]


def test_a_scenario_that_submits_another_scenario(tmp_path: Path, capsys: Capsys) -> None:
    other = scenario(tmp_path, name="other.yaml")
    path = scenario(tmp_path, ("files: [job.yaml]", "files: [job.yaml, other.yaml]"))
    assert simulate_rows(capsys, path) == [
        ("scenario-multiple", 9, 32, f'spec.submit[0].files[1]: "other.yaml" holds a Scenario ({other}); a Scenario '
                                     "submits manifests, and Scenarios do not nest"),
    ]


@pytest.mark.parametrize(
    ("old", "new", "line", "column", "message"),
    [
        ("until: 2h", "until: -2h", 5, 3, 'spec.until: invalid duration "-2h": must not be negative'),
        ("until: 2h", "until: -7", 5, 3, "spec.until: invalid duration -7: must not be negative"),
        ("until: 2h", "until: soon", 5, 3,
         'spec.until: invalid duration "soon": expected a number and a unit, such as 90s, 30m, 2h or 1h30m'),
        ("until: 2h", "until: 2 hours", 5, 3,
         'spec.until: invalid duration "2 hours": expected a number and a unit, such as 90s, 30m, 2h or 1h30m'),
        ("until: 2h", "until: true", 5, 3, "spec.until: invalid duration True"),
        ("until: 2h", "until: [2h]", 5, 3, "spec.until: invalid duration ['2h']: expected a string such as 90s, 30m or 2h"),
        # Regressions: a YAML float is seconds to the duration parser, and these crashed the run
        # (OverflowError in the summary or in RFC 3339 timestamps, exit 3).
        ("until: 2h", "until: .inf", 5, 3, 'spec.until: invalid duration ".inf": must be a finite duration'),
        ("until: 2h", "until: .nan", 5, 3, 'spec.until: invalid duration ".nan": must be a finite duration'),
        ("until: 2h", "until: 8761h", 5, 3,
         'spec.until: invalid duration "8761h": must be at most 8760h (365 days), the longest run simulate models'),
        ("{at: 0s,", "{at: -1s,", 9, 6, 'spec.submit[0].at: invalid duration "-1s": must not be negative'),
        ("{at: 0s,", "{at: 1.0e+300,", 9, 6,
         'spec.submit[0].at: invalid duration "1.0e+300": must be at most 8760h (365 days), the longest run simulate models'),
        ("{at: 0s,", "{at: 100000000000000000000,", 9, 6,
         'spec.submit[0].at: invalid duration "100000000000000000000": must be at most 8760h (365 days), '
         "the longest run simulate models"),
        ("{at: 30m,", "{at: 30 m,", 11, 6,
         'spec.actions[0].at: invalid duration "30 m": expected a number and a unit, such as 90s, 30m, 2h or 1h30m'),
        ("{at: 30m,", "{at: -.inf,", 11, 6, "spec.actions[0].at: invalid duration -inf: must not be negative"),
        ("{at: 30m,", "{at: 1e999h,", 11, 6,
         'spec.actions[0].at: invalid duration "1e999h": expected a number and a unit, such as 90s, 30m, 2h or 1h30m'),
        ("{at: 30m,", "{at: " + "9" * 400 + "h,", 11, 6,
         f'spec.actions[0].at: invalid duration "{"9" * 400}h": must be a finite duration'),
    ],
    ids=lambda value: value if isinstance(value, str) and len(value) < 30 else None,
)
def test_bad_times_in_a_scenario(
    tmp_path: Path, capsys: Capsys, old: str, new: str, line: int, column: int, message: str
) -> None:
    path = scenario(tmp_path, (old, new))
    assert simulate_rows(capsys, path) == [("scenario-invalid-duration", line, column, message)]


@pytest.mark.parametrize(
    ("until", "message"),
    [
        ("-5m", '--until: invalid duration "-5m": must not be negative'),
        ("9" * 400 + "h", f'--until: invalid duration "{"9" * 400}h": must be a finite duration'),
        ("366d", '--until: invalid duration "366d": must be at most 8760h (365 days), the longest run simulate models'),
    ],
    ids=["negative", "infinite", "over-a-year"],
)
def test_bad_until_on_the_command_line(tmp_path: Path, capsys: Capsys, until: str, message: str) -> None:
    outcome = cli(["simulate", str(scenario(tmp_path)), "--until", until, "--trace", str(tmp_path / "t.json")], capsys)
    assert outcome.status == ExitStatus.USAGE and outcome.stdout == ""
    assert outcome.stderr == f"jobsetctl: error: {message}\n"
    assert not (tmp_path / "t.json").exists()


def test_a_million_nodes_is_refused_before_any_is_built(tmp_path: Path, capsys: Capsys) -> None:
    # Regression: a pool of 1,000,000 nodes ran out of memory (4 GiB) after two minutes.
    path = scenario(tmp_path, ("count: 2,", "count: 1000000,"))
    assert simulate_rows(capsys, path) == [
        ("simulation-too-large", 7, 18,
         "spec.nodes[0].count: Invalid value: 1000000: 1,000,000 nodes in all; simulate models at most 10,000 nodes"),
    ]


def test_pools_count_together_and_the_limit_itself_is_allowed(tmp_path: Path, capsys: Capsys) -> None:
    pools = (f'- {{name: node, count: 2, capacity: {{cpu: "4"}}}}\n'
             f'  - {{name: more, count: {limits.MAX_NODES - 2}, capacity: {{cpu: "1"}}}}\n'
             '  - {name: last, count: 1}')
    path = scenario(tmp_path, ('- {name: node, count: 2, capacity: {cpu: "4"}}', pools))
    assert simulate_rows(capsys, path) == [
        ("simulation-too-large", 9, 18,
         "spec.nodes[2].count: Invalid value: 1: 10,001 nodes in all; simulate models at most 10,000 nodes"),
    ]


def test_nodes_of_a_nodes_file_count_with_the_pools(tmp_path: Path, capsys: Capsys) -> None:
    path = scenario(tmp_path, ("count: 2,", f"count: {limits.MAX_NODES},"))
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: extra}\nstatus: {capacity: {cpu: '1'}}\n")
    assert simulate_rows(capsys, path, "--nodes", str(nodes)) == [
        ("simulation-too-large", 1, 1, "Node extra: 10,001 nodes in all; simulate models at most 10,000 nodes"),
    ]


JOBSET = """\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: everything}
spec:
  replicatedJobs:
  - name: small
    template:
      spec:
        template:
          spec: {restartPolicy: Never, containers: [{name: c, image: x}]}
  - name: huge
    replicas: REPLICAS
    template:
      spec:
        parallelism: PARALLELISM
        completions: COMPLETIONS
        template:
          spec: {restartPolicy: Never, containers: [{name: c, image: x}]}
"""


@pytest.mark.parametrize(
    ("replicas", "parallelism", "completions", "render_at", "render_what", "simulate_at", "simulate_what", "needed"),
    [
        # Regression: render and simulate of a billion replicas ran until killed (2.5 GB after a minute).
        (1_000_000_000, 1, 1, (12, 5), "1,000,000,001 Jobs", (12, 5), "1,000,000,001 Jobs and 1,000,000,001 pods",
         ("2,000,000,004", "1,000,000,003")),
        (1, 1, 60_000, None, None, (16, 9), "2 Jobs and 60,001 pods", ("60,005", None)),
        (10_000, 4, 4, None, None, (12, 5), "10,001 Jobs and 40,001 pods", ("50,004", None)),
    ],
    ids=["billion-replicas", "many-completions", "just-over"],
)
def test_a_jobset_that_would_make_too_many_objects(
    tmp_path: Path, capsys: Capsys, replicas: int, parallelism: int, completions: int,
    render_at: tuple[int, int] | None, render_what: str | None, simulate_at: tuple[int, int], simulate_what: str,
    needed: tuple[str, str | None],
) -> None:
    """The refusal names the --max-objects value that lets the input run (issue 12): the JobSet, its headless
    Service, its Jobs and (simulate, render --pods) their pods."""
    path = tmp_path / "jobset.yaml"
    path.write_text(JOBSET.replace("REPLICAS", str(replicas)).replace("PARALLELISM", str(parallelism))
                    .replace("COMPLETIONS", str(completions)))
    field = "replicas" if simulate_at[0] == 12 else "template.spec.completions"
    assert simulate_rows(capsys, path) == [
        ("simulation-too-large", *simulate_at,
         f"spec.replicatedJobs[1].{field}: JobSet everything would make the controllers create {simulate_what}; "
         f"simulate models at most 50,000 objects: --max-objects {needed[0]} lets these inputs run"),
    ]
    rendered = cli(["render", str(path)], capsys)  # no --pods: only the Jobs count
    if render_at is None:
        assert rendered.status == ExitStatus.SUCCESS, rendered.stderr
        return
    assert rendered.status == ExitStatus.FINDINGS and rendered.stdout == ""
    assert rendered.stderr.splitlines()[:2] == [
        str(path),
        f"  {render_at[0]}:{render_at[1]}  error   spec.replicatedJobs[1].replicas: JobSet everything would make the "
        f"controllers create {render_what}; render models at most 50,000 objects: --max-objects {needed[1]} lets "
        "these inputs run  [input/simulation-too-large]",
    ]


def test_max_objects_moves_the_limit_both_ways(tmp_path: Path, capsys: Capsys) -> None:
    """``--max-objects``: a larger run is legitimate when asked for; a smaller guard bites earlier."""
    path = tmp_path / "jobset.yaml"
    path.write_text(JOBSET.replace("REPLICAS", "100").replace("PARALLELISM", "1").replace("COMPLETIONS", "1"))
    # The JobSet, its Service, 101 Jobs and 101 pods: within the default, beyond a limit of 150; exactly 204
    # lets it run, 203 does not (issue 12: the refusal says the value).
    assert cli(["simulate", "-o", "json", str(path)], capsys).status == ExitStatus.SUCCESS
    refusal = ("spec.replicatedJobs[1].replicas: JobSet everything would make the controllers create 101 Jobs and "
               "101 pods; simulate models at most {limit} objects: --max-objects 204 lets these inputs run")
    assert simulate_rows(capsys, path, "--max-objects", "150") == [
        ("simulation-too-large", 12, 5, refusal.format(limit=150)),
    ]
    assert simulate_rows(capsys, path, "--max-objects", "203") == [
        ("simulation-too-large", 12, 5, refusal.format(limit=203)),
    ]
    assert cli(["simulate", "-o", "json", "--max-objects", "204", str(path)], capsys).status == ExitStatus.SUCCESS
    rendered = cli(["render", "--pods", "--max-objects", "150", str(path)], capsys)
    assert rendered.status == ExitStatus.FINDINGS and rendered.stdout == ""
    assert "render models at most 150 objects: --max-objects 204 lets these inputs run  [input/simulation-too-large]" \
        in rendered.stderr
    assert cli(["render", "--pods", "--max-objects", "250", str(path)], capsys).status == ExitStatus.SUCCESS
    bad = cli(["simulate", "--max-objects", "0", str(path)], capsys)
    assert bad.status == ExitStatus.USAGE and "--max-objects" in bad.stderr


def test_a_trainjob_of_too_many_nodes(tmp_path: Path, capsys: Capsys) -> None:
    path = tmp_path / "trainjob.yaml"
    text = (SEEDS / "trainjob.yaml").read_text()
    assert "    numNodes: 2\n" in text
    path.write_text(text.replace("    numNodes: 2\n", "    numNodes: 60000\n"))
    assert simulate_rows(capsys, path) == [
        ("simulation-too-large", 16, 5, "spec.trainer.numNodes: TrainJob seed-trainjob would make the controllers "
                                        "create 60,000 pods; simulate models at most 50,000 objects: these inputs "
                                        "need --max-objects 60,003 at least (their runtimes or claims may add more)"),
    ]
    rendered = cli(["render", "--pods", str(path)], capsys)
    assert rendered.status == ExitStatus.FINDINGS and rendered.stdout == ""
    assert rendered.stderr.splitlines()[1] == (
        "  16:5  error   spec.trainer.numNodes: TrainJob seed-trainjob would make the controllers create 60,000 pods; "
        "render models at most 50,000 objects: these inputs need --max-objects 60,003 at least (their runtimes or "
        "claims may add more)  [input/simulation-too-large]")


def test_max_objects_help_names_the_default_the_guard_uses() -> None:
    # The option is declared where --version must stay light (jobsetctl/cli/app.py), so its help text
    # spells the default out instead of importing it: this keeps the two the same.
    from jobsetctl.cli.app import MaxObjectsOption

    option = MaxObjectsOption.__metadata__[0]
    assert f"(default {limits.MAX_OBJECTS:,})" in option.help
