"""Upstream's ``TestPodGroupScheduling`` (test/integration/scheduler/podgroup/podgroup_test.go) in its 1.35 and
1.36 shapes, translated entry by entry and run as Scenarios through ``simulate`` (issue 11 item 7: on 1.36
without WorkloadAwarePreemption a failing member runs per-pod preemption inside the group's cycle), plus
``TestWorkloadAwarePreemptionInvocation``.

Each 1.36 entry runs with TopologyAwareWorkloadScheduling off and on, as upstream does (the two "tas" entries
only on). Asserted: upstream's waits (pods scheduled, pods unschedulable first, "any N of these scheduled",
the blockers gone), then our exact events (:mod:`tests.scheduler.upstream_podgroup_events`).

Left out: ``TestPostFilterInvocationCount`` (it counts the calls of a mock PostFilter plugin; the behaviour
it pins, per-pod PostFilter for every failing member, is what the 1.36 entries show).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scheduler.upstream import Case, Run
from tests.scheduler.upstream_podgroup_cases import V135, V136, Steps
from tests.scheduler.upstream_podgroup_events import EVENTS

GANG = {"GenericWorkload": True, "GangScheduling": True}


def _check(run: Run, steps: Steps) -> None:
    assert (run.final("Running"), run.final("Pending")) == (steps.scheduled, steps.pending)
    events = run.document["events"]
    for name in steps.unschedulable_first:
        outcomes = [e["event"] for e in events
                    if e["kind"] == "Pod" and e["name"] == name and e["event"] in ("Scheduled", "Unschedulable")]
        assert outcomes[0] == "Unschedulable", name
    if steps.some_scheduled is not None:
        pods, count = steps.some_scheduled
        first = min(e["time"] for e in events if e["name"] in pods and e["event"] == "Scheduled")
        scheduled = {e["name"] for e in events if e["name"] in pods and e["event"] == "Scheduled" and e["time"] == first}
        unschedulable = {e["name"] for e in events
                         if e["name"] in pods and e["event"] == "Unschedulable" and e["time"] <= first}
        assert (len(scheduled), len(unschedulable)) == (count, len(pods) - count)
    assert {e["name"] for e in events if e["kind"] == "Pod" and e["event"] == "Deleted"} == steps.gone
    assert not run.outcome.failed


@pytest.mark.parametrize("entry", list(V135))
def test_pod_group_scheduling_1_35(tmp_path: Path, entry: str) -> None:
    """TestPodGroupScheduling, 1.35 (Workload v1alpha1): one entry."""
    case = Case(version="1.35", gates=dict(GANG))
    steps = V135[entry](case)
    run = case.run(tmp_path, until=600)
    _check(run, steps)
    assert run.events() == EVENTS[f"1.35 {entry}"]


@pytest.mark.parametrize("tas", [False, True], ids=["tas-off", "tas-on"])
@pytest.mark.parametrize("entry", list(V136))
def test_pod_group_scheduling_1_36(tmp_path: Path, entry: str, tas: bool) -> None:
    """TestPodGroupScheduling, 1.36 (PodGroup v1alpha2): one entry."""
    build, gates, needs_tas = V136[entry]
    if needs_tas and not tas:
        pytest.skip("upstream runs this entry with TopologyAwareWorkloadScheduling only")
    case = Case(version="1.36", gates={**GANG, **gates, "TopologyAwareWorkloadScheduling": tas})
    steps = build(case)
    run = case.run(tmp_path, until=600)
    _check(run, steps)
    assert run.events() == EVENTS[f"1.36 {entry}"]


def test_workload_aware_preemption_invocation(tmp_path: Path) -> None:
    """TestWorkloadAwarePreemptionInvocation (1.36, WorkloadAwarePreemption on): a gang whose PodGroup has
    disruptionMode PodGroup preempts lower-priority pods (default 30 s grace); their Kubernetes Event says
    they were preempted by a pod group."""
    case = Case(version="1.36", gates={**GANG, "WorkloadAwarePreemption": True})
    case.node("node", "4")
    for i in (1, 2, 3, 4):
        case.pod(f"low-{i}", "1", 10, grace=30, at=0)
    case.podgroup("pg1", 3, priority=100, all_mode=True)
    for i in (1, 2, 3):
        case.pod(f"high-{i}", "1", 100, group="pg1")
    run = case.run(tmp_path, until=60)
    assert run.kube_preempted_by() and set(run.kube_preempted_by()) == {"podgroup"}
    assert run.final("Running") >= {"high-1", "high-2", "high-3"}
