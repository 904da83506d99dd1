"""The admission-check state readers in ``kueue/engine/conditions.py``: ``has_all_checks_ready`` (Admitted is
set only when every check is Ready, ``workload.SyncAdmittedCondition``) and ``has_failed_checks`` (the scheduler
does not nominate a workload with a check in Retry or Rejected, ``scheduler.go`` ``nominate``: "The workload
has failed admission checks"). Both read ``status.admissionChecks`` as :func:`admission_checks` lists them."""

from __future__ import annotations

from typing import Any

import pytest

from jobsetctl.kueue.engine.conditions import admission_checks, has_all_checks_ready, has_failed_checks


def _workload(checks: Any) -> dict[str, Any]:
    return {"status": {"admissionChecks": checks}}


@pytest.mark.parametrize(("obj", "all_ready", "failed"), [
    ({}, True, False),
    ({"status": None}, True, False),
    (_workload(None), True, False),
    (_workload([]), True, False),
    (_workload("not a list"), True, False),
    (_workload([{"name": "a", "state": "Ready"}]), True, False),
    (_workload([{"name": "a", "state": "Ready"}, {"name": "b", "state": "Pending"}]), False, False),
    (_workload([{"name": "a", "state": "Retry"}]), False, True),
    (_workload([{"name": "a", "state": "Ready"}, {"name": "b", "state": "Rejected"}]), False, True),
    (_workload([{"name": "a"}]), False, False),  # no state: not Ready, not failed
    (_workload([{"name": "a", "state": {"odd": 1}}]), False, False),  # any type, no hashing
    (_workload(["not a check", {"name": "a", "state": "Ready"}]), True, False),  # non-checks are skipped
])
def test_check_states(obj: dict[str, Any], all_ready: bool, failed: bool) -> None:
    assert has_all_checks_ready(obj) is all_ready
    assert has_failed_checks(obj) is failed
    # The same answers as reading the list admission_checks builds.
    states = [check.get("state") for check in admission_checks(obj)]
    assert all(state == "Ready" for state in states) is all_ready
    assert any(state in ("Retry", "Rejected") for state in states) is failed
