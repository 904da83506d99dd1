"""Upstream's workload-aware preemption integration tests, translated entry by entry and run as Scenarios
through ``simulate`` on Kubernetes 1.37 (test/integration/scheduler/preemption/podgrouppreemption_test.go,
read at commit 00a3e521; issue 11).

* ``TestPodGroupPreemption``: every expressible entry (:mod:`tests.scheduler.upstream_pgp_cases`), each with
  the CompositePodGroup gate off and on, as upstream runs them: the scheduled, preempted and pending pods
  and the number of victims preempted by a pod group are upstream's; the exact event sequence is ours
  (:mod:`tests.scheduler.upstream_pgp_events`), the same with the gate off and on.
* ``TestPodGroupPreemptionStatus``: the PodGroup's condition while its victim terminates.

Left out (see ``LEFT_OUT``): entries with a custom Score or Reserve plugin, a PodDisruptionBudget, host
ports or topology spread constraints, and "preemption with pod level resources" (setup not read);
``TestPodGroupPreemption_NominatedNodeNameRespected`` (a custom Score plugin makes the nominations);
``TestPodGroupCycleStatePreserved`` (custom PreFilter/PostFilter plugins); ``TestPodGroupAsyncPreemption``
(asynchronous API calls; our preemption is synchronous).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scheduler.upstream import Case
from tests.scheduler.upstream_pgp_cases import ENTRIES, LEFT_OUT
from tests.scheduler.upstream_pgp_events import EVENTS


@pytest.mark.parametrize("composite", [False, True], ids=["cpg-off", "cpg-on"])
@pytest.mark.parametrize("entry", list(ENTRIES))
def test_pod_group_preemption(tmp_path: Path, entry: str, composite: bool) -> None:
    """TestPodGroupPreemption: one entry (test id = upstream's case name)."""
    build, expected = ENTRIES[entry]
    case = Case()
    case.gates.update(expected.gates)
    case.gates["CompositePodGroup"] = composite
    build(case)
    run = case.run(tmp_path)
    expected.check(run.final("Running"), run.preempted(), run.final("Pending"),
                   run.kube_preempted_by().count("podgroup"))
    assert run.events() == EVENTS[entry]
    assert not run.outcome.failed


def test_every_entry_is_translated_or_left_out_with_a_reason() -> None:
    assert not set(ENTRIES) & set(LEFT_OUT)
    assert len(ENTRIES) + len(LEFT_OUT) == 41  # the entries of TestPodGroupPreemption at 00a3e521
    assert set(EVENTS) == set(ENTRIES)


def test_pod_group_preemption_status(tmp_path: Path) -> None:
    """TestPodGroupPreemptionStatus: the victim has a 30 s grace period; meanwhile the PodGroup's
    PodGroupInitiallyScheduled condition is False/Unschedulable and says both that minCount (1) cannot be
    satisfied and that the preemption found a placement; the group binds when the victim is gone."""
    case = Case()
    case.node("node-1", "1")
    case.pod("low-1", "1", 10, grace=30, at=0)
    case.podgroup("pg1", 1, priority=100)
    case.pod("high-1", "1", 100, group="pg1")
    run = case.run(tmp_path, until=60)
    status = ("0/1 placements are available, first placement status: minCount (1) cannot be satisfied: 0 scheduled, "
              "0 remaining, pod group preemption: found a placement for podgroup, preempting 1 victims")
    assert run.events() == [
        "0 Pod low-1 Scheduled node-1",
        "1 Pod low-1 Preempted [PreemptionByScheduler]: Preempted by PodGroup default/pg1 on node node-1",
        f"1 PodGroup pg1 Unschedulable: {status}",
        "1 Pod high-1 Unschedulable: 0/1 nodes are available: 1 Insufficient cpu.",
        "31 Pod low-1 Deleted",
        "31 PodGroup pg1 Scheduled",
        "31 Pod high-1 Scheduled node-1",
    ]
    assert run.kube_preempted_by() == ["podgroup"]
