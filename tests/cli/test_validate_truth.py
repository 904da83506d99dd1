"""``validate`` says what it checked (issue #10, "Outputs that tell the truth"): a Scenario is our own kind,
and a directory without manifests is worth a warning on stderr."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jobsetctl.cli.app import run
from jobsetctl.status import ExitStatus
from tests.helpers import SAMPLES, dedent


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, object]], str]:
    status = run(["validate", "-o", "json", *args])
    out, err = capsys.readouterr()
    return status, json.loads(out)["diagnostics"], err


@pytest.mark.parametrize("name", ["two-teams.yaml", "node-failure.yaml", "gang-topology.yaml"])
def test_a_valid_scenario_is_checked_not_passed_over(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, found, err = cli([str(SAMPLES / "scenarios" / name)], capsys)
    # Notes only: a Node submitted inline is a kind validate passes over (simulate adds it as a node).
    assert (status, [d for d in found if d["severity"] != "info"], err) == (ExitStatus.SUCCESS, [], "")
    assert "Scenario" not in json.dumps(found)


def test_a_broken_scenario_reports_its_own_rules(capsys: pytest.CaptureFixture[str]) -> None:
    status, found, _ = cli([str(SAMPLES / "invalid" / "scenario-invalid-action.yaml")], capsys)
    assert status == ExitStatus.FINDINGS
    assert [(d["line"], d["column"], d["rule"]) for d in found] == [(14, 5, "scenario-invalid-action")]


def test_objects_a_scenario_submits_inline_are_admitted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(dedent("""
        apiVersion: jobsetctl.dev/v1alpha1
        kind: Scenario
        metadata: {name: inline}
        spec:
          nodes: [{name: cpu, count: 1, capacity: {cpu: "8", memory: 32Gi}}]
          submit:
          - at: 0s
            objects:
            - apiVersion: scheduling.k8s.io/v1
              kind: PriorityClass
              metadata: {name: system-mine}
              value: 10
        """))
    status, found, _ = cli([str(scenario)], capsys)
    assert status == ExitStatus.FINDINGS
    assert [(d["line"], d["column"], d["rule"]) for d in found] == [(11, 18, "priorityclass-reserved-name")]


def test_another_kind_named_scenario_is_still_passed_over(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other.yaml"
    other.write_text("apiVersion: example.com/v1\nkind: Scenario\nmetadata: {name: x}\n")
    status, found, _ = cli([str(other)], capsys)
    assert (status, [d["rule"] for d in found]) == (ExitStatus.SUCCESS, ["unknown-kind"])


def test_a_directory_without_manifests_warns_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty, foreign, full = tmp_path / "empty", tmp_path / "foreign", tmp_path / "full"
    for directory in (empty, foreign, full):
        directory.mkdir()
    (empty / "README.md").write_text("# not a manifest\n")
    (foreign / "package.json").write_text('{"name": "web"}\n')
    (full / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    status, _, err = cli([str(empty), str(foreign), str(full)], capsys)
    assert status == ExitStatus.SUCCESS
    assert err == (f"jobsetctl: warning: no manifests found under {empty}\n"
                   f"jobsetctl: warning: no manifests found under {foreign}\n")


def test_a_directory_of_broken_files_gets_its_errors_not_the_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "broken.yaml").write_text("a: [\n")
    status, found, err = cli([str(tmp_path)], capsys)
    assert (status, [d["rule"] for d in found], err) == (ExitStatus.FINDINGS, ["yaml-syntax"], "")
