"""Upstream's CompositePodGroup scheduling and queueing tests, translated entry by entry and run as Scenarios
through ``simulate`` on Kubernetes 1.37 with CompositePodGroup on (issue 11 items 5 and 9):
test/integration/scheduler/podgroup/cpg_test.go (all 9 test functions, commit 16457a8a) and
test/integration/scheduler/podgroup/queueing_test.go ``TestCPGQueueing`` (all 10 entries, commit 06e67ba2;
the in-place minCount/minGroupCount updates use the Scenario ``patch`` action).

Asserted: upstream's scheduled and unschedulable pods, the condition every group ends with
(``PodGroupInitiallyScheduled``/``CompositePodGroupInitiallyScheduled``: a ``Scheduled`` or ``Unschedulable``
event carries it), the texts upstream checks with ``contains``, then our exact events
(:mod:`tests.scheduler.upstream_tree_events`). Not translated: cpg_test.go's
``TestPodGroupDependentRequiredValidation`` (API validation, not scheduling: validate's area).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.scheduler.upstream import Case
from tests.scheduler.upstream_tree_cases import CPG, QUEUEING, Outcome, tree_case
from tests.scheduler.upstream_tree_events import CPG_EVENTS, QUEUEING_EVENTS


def _run(tmp_path: Path, build: Callable[[Case], Outcome]) -> list[str]:
    case = tree_case()
    expected = build(case)
    run = case.run(tmp_path)
    assert (run.final("Running"), run.final("Pending")) == (expected.scheduled, expected.pending)
    last: dict[str, tuple[str, str]] = {}
    for e in run.document["events"]:
        if e["kind"] in ("PodGroup", "CompositePodGroup") and e["event"] in ("Scheduled", "Unschedulable"):
            last[e["name"]] = (e["event"], e.get("message", ""))
    assert {g: last[g][0] for g in expected.groups} == expected.groups
    for group, text in expected.messages.items():
        assert text in last[group][1], (group, last[group][1])
    assert not run.outcome.failed
    return run.events()


@pytest.mark.parametrize("test", list(CPG))
def test_cpg_scheduling(tmp_path: Path, test: str) -> None:
    """cpg_test.go: one test function (test id = upstream's name)."""
    assert _run(tmp_path, CPG[test]) == CPG_EVENTS[test]


@pytest.mark.parametrize("entry", list(QUEUEING))
def test_cpg_queueing(tmp_path: Path, entry: str) -> None:
    """TestCPGQueueing: one entry (test id = upstream's case name)."""
    assert _run(tmp_path, QUEUEING[entry]) == QUEUEING_EVENTS[entry]
