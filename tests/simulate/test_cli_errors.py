"""``jobsetctl simulate`` exit codes for problems found before anything runs (no cluster needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jobsetctl.cli.app import run
from tests.helpers import dedent

SCENARIO = """\
apiVersion: jobsetctl.dev/v1alpha1
kind: Scenario
metadata: {name: s}
spec:
  featureGates: {GangScheduling: true}
  until: 1h
  nodes:
  - {name: node, count: 1, capacity: {cpu: "4"}}
"""


def _scenario(tmp_path: Path, text: str = SCENARIO) -> str:
    path = tmp_path / "scenario.yaml"
    path.write_text(dedent(text))
    return str(path)


def test_scenario_error_is_reported_like_validate_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _scenario(tmp_path, SCENARIO.replace("until: 1h", "until: -1h"))
    trace = tmp_path / "trace.json"
    assert run(["simulate", path, "--trace", str(trace)]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[:2] == [
        path,
        '  6:3  error   spec.until: invalid duration "-1h": must not be negative  [input/scenario-invalid-duration]',
    ]
    assert not trace.exists()  # nothing ran, nothing written


def test_scenario_error_as_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _scenario(tmp_path, SCENARIO.replace("count: 1", "cnt: 1"))
    assert run(["simulate", path, "-o", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [(d["line"], d["column"], d["rule"]) for d in report["diagnostics"]] == [(8, 18, "scenario-unknown-field")]


def test_unknown_gate_on_the_command_line_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["simulate", _scenario(tmp_path), "--feature-gates", "Nope=true"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("jobsetctl: error: unrecognized feature gate: Nope; known gates: CompositePodGroup, ")


def test_unknown_gate_in_the_scenario_is_a_scenario_error_with_its_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _scenario(tmp_path, SCENARIO.replace("GangScheduling: true", "Gang: true"))
    assert run(["simulate", path]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[1].startswith(
        "  5:3  error   spec.featureGates: unrecognized feature gate: Gang; known gates: CompositePodGroup, ")
    assert out.splitlines()[1].endswith("[input/scenario-invalid-value]")


def test_unsupported_version_on_the_command_line_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["simulate", _scenario(tmp_path), "--kubernetes-version", "1.20"]) == 2
    assert "unsupported Kubernetes version '1.20'" in capsys.readouterr().err


def test_unsupported_version_in_the_scenario_is_a_scenario_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _scenario(tmp_path, SCENARIO.replace("  until: 1h\n", '  until: 1h\n  kubernetesVersion: "1.20"\n'))
    assert run(["simulate", path]) == 1
    assert ("  7:3  error   spec.kubernetesVersion: unsupported Kubernetes version '1.20': choose one of 1.35, "
            "1.36, 1.37  [input/scenario-invalid-value]") in capsys.readouterr().out
    # The command line's version wins: the Scenario's is not used, and not an error then.
    assert run(["simulate", path, "--kubernetes-version", "1.37", "-o", "json"]) == 0
    capsys.readouterr()
    # validate reads the Scenario as simulate does, and says the same.
    assert run(["validate", path, "-o", "json"]) == 1
    found = json.loads(capsys.readouterr().out)["diagnostics"]
    assert [(d["line"], d["column"], d["rule"], d["message"]) for d in found] == [
        (7, 3, "scenario-invalid-value", "spec.kubernetesVersion: unsupported Kubernetes version '1.20': choose one "
         "of 1.35, 1.36, 1.37")]


def test_every_scenario_problem_is_reported_in_one_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 10: problems of every stage (parsing, settings, submitted files) at once, not one per run."""
    path = _scenario(tmp_path, """\
        apiVersion: jobsetctl.dev/v1alpha1
        kind: Scenario
        metadata: {name: s}
        spec:
          kubernetesVersion: "1.20"
          featureGates: {Gang: true}
          nodes:
          - {name: node, count: 1, capacity: {cpu: "4"}, colour: red}
          submit:
          - {at: soon, files: [missing.yaml]}
          - {at: 1m, files: [also-missing.yaml]}
        """)
    trace = tmp_path / "trace.json"
    assert run(["simulate", path, "-o", "json", "--trace", str(trace)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [(d["line"], d["column"], d["rule"]) for d in report["diagnostics"]] == [
        (5, 3, "scenario-invalid-value"),
        (6, 3, "scenario-invalid-value"),
        (8, 50, "scenario-unknown-field"),
        (10, 6, "scenario-invalid-duration"),
        (10, 24, "scenario-missing-file"),
        (11, 22, "scenario-missing-file"),
    ]
    assert not trace.exists()


@pytest.mark.parametrize("until", ["-5m", "soon", "5 minutes"])
def test_bad_until_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], until: str) -> None:
    assert run(["simulate", _scenario(tmp_path), "--until", until]) == 2
    assert "--until: invalid duration" in capsys.readouterr().err


def test_output_in_a_missing_directory_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["simulate", _scenario(tmp_path), "--svg", str(tmp_path / "no" / "x.svg")]) == 2
    assert "--svg" in capsys.readouterr().err


def test_no_input_and_bad_format_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["simulate"]) == 2
    assert "no input" in capsys.readouterr().err
    assert run(["simulate", _scenario(tmp_path), "-o", "sarif"]) == 2


def test_missing_nodes_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["simulate", _scenario(tmp_path), "--nodes", str(tmp_path / "nodes.yaml")]) == 2
    assert "--nodes:" in capsys.readouterr().err
