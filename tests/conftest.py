"""Shared pytest configuration: a fixed hypothesis budget so the suite's time is bounded and repeatable."""

from __future__ import annotations

import os

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
