"""The command line: exit statuses, the JSON contract, and reporters, run in-process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jobsetctl.cli.app import run
from jobsetctl.cli.reporters.github import GithubReporter
from jobsetctl.cli.reporters.text import TextReporter
from jobsetctl.diagnostics import Diagnostic, Layer, ObjectRef, Report, Severity
from jobsetctl.status import ExitStatus

BROKEN = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: [\n"


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = run(args)
    out, err = capsys.readouterr()
    return status, out, err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from jobsetctl import __version__

    status, out, _ = cli(["--version"], capsys)
    assert status == 0 and out.strip() == f"jobsetctl {__version__}"


def test_unknown_option_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = cli(["validate", "--bogus"], capsys)
    assert status == ExitStatus.USAGE and "--bogus" in err


def test_bad_kubernetes_version_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = cli(["validate", "--kubernetes-version", "1.20", str(tmp_path)], capsys)
    assert status == ExitStatus.USAGE
    assert err.strip() == "jobsetctl: error: unsupported Kubernetes version '1.20': choose one of 1.35, 1.36, 1.37"


def test_unknown_feature_gate_lists_known_ones(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = cli(["validate", "--feature-gates", "NoSuchGate=true", str(tmp_path)], capsys)
    assert status == ExitStatus.USAGE
    assert "unrecognized feature gate: NoSuchGate" in err and "InPlaceRestart" in err


def test_unknown_ignored_rule_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = cli(["validate", "--ignore", "no-such-rule", str(tmp_path)], capsys)
    assert status == ExitStatus.USAGE and "no-such-rule" in err


def test_yaml_error_exits_1_with_position_in_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(BROKEN)
    status, out, err = cli(["validate", "-o", "json", str(path)], capsys)
    assert status == ExitStatus.FINDINGS and err == ""
    report = json.loads(out)
    assert report["version"] == 1
    assert report["summary"] == {"files": 1, "objects": 0, "errors": 1, "warnings": 0}
    [diagnostic] = report["diagnostics"]
    assert set(diagnostic) >= {"file", "line", "column", "severity", "layer", "rule", "message", "path", "object"}
    assert (diagnostic["line"], diagnostic["rule"], diagnostic["layer"]) == (5, "yaml-syntax", "input")


def test_missing_path_is_a_finding_not_a_crash(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(["validate", "-o", "json", str(tmp_path / "nope.yaml")], capsys)
    assert status == ExitStatus.FINDINGS
    assert json.loads(out)["diagnostics"][0]["rule"] == "input-unreadable"


def test_other_kinds_are_passed_over_with_an_info_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cm.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    status, out, _ = cli(["validate", "-o", "json", str(path)], capsys)
    assert status == ExitStatus.SUCCESS
    [note] = json.loads(out)["diagnostics"]
    assert (note["severity"], note["rule"], note["line"], note["column"]) == ("info", "unknown-kind", 2, 1)


def test_github_output_is_the_default_under_actions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    path = tmp_path / "bad.yaml"
    path.write_text(BROKEN)
    _, out, _ = cli(["validate", str(path)], capsys)
    assert out.splitlines()[1].startswith(f"::error file={path},line=5,col=")


def _diagnostic(message: str, severity: Severity = Severity.ERROR) -> Diagnostic:
    return Diagnostic("dir/a,b.yaml", 3, 7, severity, Layer.WEBHOOK, "jobset-job-name", message, "spec.x",
                      ObjectRef("jobset.x-k8s.io/v1alpha2", "JobSet", "default", "js"), "a hint")


def test_github_reporter_escapes_data_and_properties() -> None:
    out = GithubReporter().render(Report([_diagnostic("50% done\nsecond line")], files=1, objects=1))
    assert out.splitlines() == [
        "::group::dir/a,b.yaml",
        "::error file=dir/a%2Cb.yaml,line=3,col=7,title=jobset-job-name::50%25 done%0Asecond line (hint: a hint)",
        "::endgroup::",
    ]


def test_text_reporter_shows_source_line_and_caret(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text("one\ntwo\n  three: 3\n")
    diagnostic = Diagnostic(str(path), 3, 3, Severity.WARNING, Layer.LINT, "some-rule", "message here")
    lines = TextReporter().render(Report([diagnostic], files=1, objects=1)).splitlines()
    assert lines[0] == str(path)
    assert lines[1] == "  3:3  warning message here  [lint/some-rule]"
    assert lines[2] == "       3 |   three: 3"
    assert lines[3].index("^") == lines[2].index("three")
    assert lines[-1] == "0 errors, 1 warning in 1 file (1 object in 1 file checked)"


def test_rules_command_lists_the_registry(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(["rules", "-o", "json"], capsys)
    assert status == 0
    rules = json.loads(out)
    ids = [r["id"] for r in rules]
    assert len(ids) == len(set(ids))
    assert {"yaml-syntax", "schema-type"} <= set(ids)
    assert all(r["severity"] in ("error", "warning", "info") and r["summary"] for r in rules)
