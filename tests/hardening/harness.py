"""Running ``jobsetctl validate`` the way users do, for the hardening campaign (issue #6).

In-process through :func:`jobsetctl.cli.app.run` (the real command line, typer included), or as the
installed entry point in a subprocess with a timeout, so that a hang fails the test instead of blocking
it, and so that a crash of the interpreter or a traceback on stderr shows.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from jobsetctl.cli.app import run
from jobsetctl.rules import all_rules

HERE = Path(__file__).resolve().parent
SEEDS = HERE / "seeds"
CORPUS = HERE.parent / "corpus"
#: Generous: a hang fails after this, a slow machine does not.
SUBPROCESS_TIMEOUT = 600


@dataclass(frozen=True)
class Outcome:
    status: int
    stdout: str
    stderr: str

    @property
    def report(self) -> dict[str, Any]:
        return json.loads(self.stdout)

    @property
    def diagnostics(self) -> list[dict[str, Any]]:
        return list(self.report["diagnostics"])

    def rows(self) -> list[tuple[str, int, int]]:
        """(rule, line, column) of each diagnostic, infos included."""
        return [(d["rule"], d["line"], d["column"]) for d in self.diagnostics]


def validate_cli(args: list[str], capsys: pytest.CaptureFixture[str], *, json_output: bool = True) -> Outcome:
    """``jobsetctl validate ARGS`` in-process, with JSON output unless asked otherwise."""
    capsys.readouterr()
    status = run(["validate", *(["-o", "json"] if json_output else []), *args])
    out, err = capsys.readouterr()
    return Outcome(status, out, err)


def jobsetctl_executable() -> list[str]:
    """The installed console script, else the module (same code, same entry point)."""
    script = shutil.which("jobsetctl", path=os.path.dirname(sys.executable))
    return [script] if script else [sys.executable, "-m", "jobsetctl"]


def run_subprocess(
    args: list[str],
    *,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = SUBPROCESS_TIMEOUT,
) -> Outcome:
    merged = {**os.environ, "NO_COLOR": "1", **(env or {})}
    merged.pop("JOBSETCTL_DEBUG", None)
    merged.pop("GITHUB_ACTIONS", None)
    done = subprocess.run(
        [*jobsetctl_executable(), *args], input=stdin if stdin is not None else b"", capture_output=True,
        env=merged, cwd=cwd, timeout=timeout, check=False,
    )
    return Outcome(done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace"))


def children_peak_rss_bytes() -> int:
    """Peak resident set of the largest child waited for so far (Linux reports KiB)."""
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return peak * 1024 if sys.platform.startswith("linux") else peak


def known_rule_ids() -> set[str]:
    return {rule.id for rule in all_rules()}


def assert_sane(outcome: Outcome) -> None:
    """What every run must satisfy, whatever the input: a documented status, no traceback, sane diagnostics."""
    assert outcome.status in (0, 1, 2), (outcome.status, outcome.stderr)
    assert "Traceback" not in outcome.stderr, outcome.stderr
    assert "internal error" not in outcome.stderr, outcome.stderr
    if outcome.status == 2 or not outcome.stdout.startswith("{"):
        return
    report = outcome.report
    if "diagnostics" not in report:
        return  # SARIF
    known = known_rule_ids()
    for d in report["diagnostics"]:
        assert d["line"] >= 1 and d["column"] >= 1, d
        assert d["rule"] in known and not d["rule"].startswith("internal"), d
        assert d["message"].strip() and "\n" not in d["message"], d
