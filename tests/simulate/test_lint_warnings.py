"""simulate prints validate's lint findings on the submitted objects before the run (issue 11): a replicated
job that depends on itself must not only wait silently in the chart."""

from __future__ import annotations

import io
from pathlib import Path

from jobsetctl.lint.jobset_depends_on_self import FAILING, PASSING
from jobsetctl.simulate.command import OutputOptions, execute
from jobsetctl.simulate.runner import SimulateOptions

SCENARIO = """\
apiVersion: jobsetctl.dev/v1alpha1
kind: Scenario
metadata: {name: self}
spec:
  until: 1m
  nodes:
  - {name: node, count: 1, capacity: {cpu: "8", memory: 16Gi}}
  submit:
  - {at: 0s, files: [jobset.yaml]}
"""


def _run(tmp_path: Path, jobset: str) -> tuple[str, str, bool]:
    (tmp_path / "jobset.yaml").write_text(jobset.lstrip("\n"))
    (tmp_path / "scenario.yaml").write_text(SCENARIO)
    out, err = io.StringIO(), io.StringIO()
    outcome = execute(SimulateOptions([str(tmp_path / "scenario.yaml")]), OutputOptions("json"), out, err)
    return out.getvalue(), err.getvalue(), outcome.failed


def test_a_lint_warning_is_shown_before_the_run_and_the_run_goes_on(tmp_path: Path) -> None:
    stdout, stderr, failed = _run(tmp_path, FAILING)
    lines = stderr.splitlines()
    assert lines[0].endswith("jobset.yaml")
    assert lines[1] == ('  14:18  warning replicated job "train" depends on itself: the dependency is never met, so '
                        "its Jobs are never created  [lint/jobset-depends-on-self]")
    assert stdout.startswith("{") and not failed


def test_clean_inputs_print_nothing(tmp_path: Path) -> None:
    _, stderr, _ = _run(tmp_path, PASSING)
    assert stderr == ""
