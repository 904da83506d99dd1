"""Shared pytest configuration: a fixed hypothesis budget so the suite's time is bounded and repeatable."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=int(os.environ.get("JOBSETCTL_HYPOTHESIS_EXAMPLES", "60")),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("long", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Every simulated cluster the suite builds checks the scheduling invariants at every step (issue #4/#5:
# "invariant checks run in every test"); a violation raises InvariantViolation in the test that caused it.
os.environ.setdefault("JOBSETCTL_CHECK_INVARIANTS", "1")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line for every skip for want of the upstream conformance data (a fresh clone has none), so that a
    green run says what it did not check and where to get the data. And, when render goldens of upstream
    examples were regenerated, what changed in them (only their digests are committed)."""
    from tests.helpers import UPSTREAM_ABSENT
    from tests.render.support import GOLDEN_DIFF

    changes = [value for reports in terminalreporter.stats.values() for r in reports
               for key, value in getattr(r, "user_properties", ()) if key == GOLDEN_DIFF]
    if changes:
        terminalreporter.section(f"{len(changes)} upstream render goldens changed (JOBSETCTL_UPDATE_GOLDEN=1)")
        for change in sorted(changes):
            terminalreporter.write(change if change.endswith("\n") else change + "\n")

    skipped = [r for r in terminalreporter.stats.get("skipped", []) if UPSTREAM_ABSENT in _skip_reason(r)]
    if skipped:
        terminalreporter.write_line(
            f"{len(skipped)} tests skipped: {UPSTREAM_ABSENT} — see README.md, \"Conformance data\", how to get it "
            "(scripts/fetch-upstream, or JOBSETCTL_UPSTREAM=DIR)",
            yellow=True,
        )


def _skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr or "")
