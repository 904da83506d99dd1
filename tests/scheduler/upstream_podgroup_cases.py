"""Upstream's ``TestPodGroupScheduling`` (test/integration/scheduler/podgroup/podgroup_test.go) in its 1.35 shape
(Workload ``v1alpha1`` with ``podGroups``, pods with ``spec.workloadRef``; the version read has no commit in
our notes: file id 3885023338 of the index) and its 1.36 shape (``v1alpha2`` PodGroups, commit 008b3652), as
Scenarios (see :mod:`tests.scheduler.upstream`).

Upstream's steps become times: blockers at 0 s, then 1 s, 2 s, ... one per step that creates or deletes
something; its "wait for" steps are what the test asserts. Upstream shortens the 1.35 Permit timeout to
5 s (``workloadmanager.DefaultSchedulingTimeoutDuration``); a Scenario cannot, so the 1.35 entries that
wait for that timeout delete their blocker after our default 5 minutes instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tests.scheduler.upstream import Case

PODS = ("p1", "p2", "p3", "p4")


@dataclass(frozen=True)
class Steps:
    """What upstream waits for: pods scheduled, pods unschedulable, and at the end."""

    scheduled: frozenset[str]
    pending: frozenset[str] = frozenset()
    #: Pods that must get an Unschedulable event before they are scheduled (upstream's waitForPodsUnschedulable).
    unschedulable_first: frozenset[str] = frozenset()
    #: (pods, how many scheduled) at the end of the first scheduling instant (waitForAnyPodsScheduled).
    some_scheduled: tuple[frozenset[str], int] | None = None
    #: Deleted pods (blockers preempted or deleted by the test).
    gone: frozenset[str] = frozenset()


def _n(*names: str) -> frozenset[str]:
    return frozenset(names)


# ---- 1.35: Workload v1alpha1 -----------------------------------------------------------------------------


def _p135(case: Case, *names: str, at: int = 1, workload: str = "workload") -> None:
    for name in names:
        case.pod(name, "1", 100, workload_ref=(workload, "pg"), at=at)


def _node135(case: Case) -> None:
    case.node("node", "4")


def a_available(case: Case) -> Steps:
    _node135(case)
    case.workload_135("workload", {"pg": 3})
    _p135(case, "p1", "p2", "p3")
    return Steps(_n("p1", "p2", "p3"))


def a_quorum(case: Case) -> Steps:
    _node135(case)
    case.workload_135("workload", {"pg": 3})
    _p135(case, "p1", "p2")
    _p135(case, "p3", at=2)
    return Steps(_n("p1", "p2", "p3"))


def a_workload_then_resources(case: Case) -> Steps:
    _node135(case)
    case.pod("blocker", "2", 100, at=0)
    _p135(case, "p1", "p2", "p3")
    case.workload_135("workload", {"pg": 3}, at=2)
    case.delete("Pod", "blocker", at=400)
    return Steps(_n("p1", "p2", "p3"), unschedulable_first=_n("p1", "p2", "p3"), gone=_n("blocker"))


def a_min_count_then_rest(case: Case) -> Steps:
    _node135(case)
    case.pod("small-blocker", "1", 100, at=0)
    _p135(case, *PODS)
    case.workload_135("workload", {"pg": 3}, at=2)
    case.delete("Pod", "small-blocker", at=400)
    return Steps(frozenset(PODS), some_scheduled=(frozenset(PODS), 3), gone=_n("small-blocker"))


def a_two_gangs(case: Case) -> Steps:
    _node135(case)
    case.workload_135("workload", {"pg": 3})
    case.workload_135("other-workload", {"pg": 3})
    for mine, other in (("p1", "other-p1"), ("p2", "other-p2"), ("p3", "other-p3")):
        _p135(case, mine)
        _p135(case, other, workload="other-workload")
    return Steps(_n("p1", "p2", "p3"), _n("other-p1", "other-p2", "other-p3"),
                 unschedulable_first=_n("other-p1", "other-p2", "other-p3"))


def a_preemption(case: Case) -> Steps:
    _node135(case)
    case.pod("low-priority-blocker", "2", 10, at=0)
    case.workload_135("workload", {"pg": 3})
    _p135(case, *PODS)
    return Steps(frozenset(PODS), gone=_n("low-priority-blocker"))


def a_basic(case: Case) -> Steps:
    _node135(case)
    case.workload_135("workload", {"pg": None})
    _p135(case, "p1")
    _p135(case, "p2", "p3", at=2)
    return Steps(_n("p1", "p2", "p3"))


def a_basic_part_waits(case: Case) -> Steps:
    _node135(case)
    case.pod("blocker", "2", 100, at=0)
    _p135(case, "p1", "p2", "p3")
    case.workload_135("workload", {"pg": None}, at=2)
    case.delete("Pod", "blocker", at=3)
    return Steps(_n("p1", "p2", "p3"), some_scheduled=(_n("p1", "p2", "p3"), 2), gone=_n("blocker"))


def a_basic_preemption(case: Case) -> Steps:
    _node135(case)
    case.pod("low-priority-blocker", "2", 10, at=0)
    case.workload_135("workload", {"pg": None})
    _p135(case, *PODS)
    return Steps(frozenset(PODS), gone=_n("low-priority-blocker"))


V135: dict[str, Callable[[Case], Steps]] = {
    "gang schedules when workload and resources are available": a_available,
    "gang waits for quorum to start, then schedules": a_quorum,
    "gang waits for workload, then for resources, then schedules": a_workload_then_resources,
    "minCount is scheduled, but one pod from a gang remain unschedulable until the blocked resources are released":
        a_min_count_then_rest,
    "two gangs competing for the same resources shouldn't deadlock": a_two_gangs,
    "gang schedules with preemption": a_preemption,
    "basic group schedules when workload and resources are available, without gang enforcement": a_basic,
    "basic group waits for workload, part of it waits for resources, then schedules": a_basic_part_waits,
    "basic group schedules with preemption": a_basic_preemption,
}


# ---- 1.36: PodGroup v1alpha2 -------------------------------------------------------------------------------


def _node136(case: Case) -> None:
    case.node("node", "4", {"topology.kubernetes.io/zone": "zone1"})


def _group_priority(case: Case, value: int) -> int | None:
    """A 1.36 PodGroup's priority is a WorkloadAwarePreemption field: without the gate the API server drops
    it (and simulate, seeing it, would turn the gate on), so it is set only where upstream enables WAP."""
    return value if case.gates.get("WorkloadAwarePreemption") else None


def _pg1(case: Case, at: int = 1, basic: bool = False) -> None:
    case.podgroup("pg1", None if basic else 3, priority=_group_priority(case, 100), at=at)


def _p136(case: Case, *names: str, at: int = 1, group: str = "pg1") -> None:
    for name in names:
        case.pod(name, "1", 100, group=group, at=at)


def b_available(case: Case) -> Steps:
    _node136(case)
    _pg1(case)
    _p136(case, "p1", "p2", "p3")
    return Steps(_n("p1", "p2", "p3"))


def b_quorum(case: Case) -> Steps:
    _node136(case)
    _pg1(case)
    _p136(case, "p1", "p2")
    _p136(case, "p3", at=2)
    return Steps(_n("p1", "p2", "p3"))


def b_group_then_resources(case: Case) -> Steps:
    _node136(case)
    case.pod("blocker", "2", 100, at=0)
    _p136(case, "p1", "p2", "p3")
    _pg1(case, at=2)
    case.delete("Pod", "blocker", at=3)
    return Steps(_n("p1", "p2", "p3"), unschedulable_first=_n("p1", "p2", "p3"), gone=_n("blocker"))


def b_min_count_then_rest(case: Case) -> Steps:
    _node136(case)
    case.pod("small-blocker", "1", 100, at=0)
    _p136(case, *PODS)
    _pg1(case, at=2)
    case.delete("Pod", "small-blocker", at=3)
    return Steps(frozenset(PODS), some_scheduled=(frozenset(PODS), 3), gone=_n("small-blocker"))


def b_two_gangs(case: Case, reversed_order: bool) -> Steps:
    _node136(case)
    _pg1(case)
    case.podgroup("pg2", 3, priority=_group_priority(case, 100))
    order = [("p1", "pg1"), ("other-p1", "pg2"), ("p2", "pg1"), ("other-p2", "pg2"), ("p3", "pg1"), ("other-p3", "pg2")]
    if reversed_order:
        order = [("other-p3", "pg2"), ("p3", "pg1"), ("other-p2", "pg2"), ("p2", "pg1"), ("other-p1", "pg2"),
                 ("p1", "pg1")]
    for name, group in order:
        _p136(case, name, group=group)
    winners, losers = _n("p1", "p2", "p3"), _n("other-p1", "other-p2", "other-p3")
    if reversed_order:
        winners, losers = losers, winners
    return Steps(winners, losers, unschedulable_first=losers)


def b_preemption(case: Case) -> Steps:
    _node136(case)
    case.pod("low-priority-blocker", "2", 10, at=0)
    _pg1(case)
    _p136(case, *PODS)
    return Steps(frozenset(PODS), gone=_n("low-priority-blocker"))


def b_basic(case: Case) -> Steps:
    _node136(case)
    _pg1(case, basic=True)
    _p136(case, "p1")
    _p136(case, "p2", "p3", at=2)
    return Steps(_n("p1", "p2", "p3"))


def b_basic_part_waits(case: Case) -> Steps:
    _node136(case)
    case.pod("blocker", "2", 100, at=0)
    _p136(case, "p1", "p2", "p3")
    _pg1(case, at=2, basic=True)
    case.delete("Pod", "blocker", at=3)
    return Steps(_n("p1", "p2", "p3"), some_scheduled=(_n("p1", "p2", "p3"), 2), gone=_n("blocker"))


def b_basic_preemption(case: Case) -> Steps:
    _node136(case)
    case.pod("low-priority-blocker", "2", 10, at=0)
    _pg1(case, basic=True)
    _p136(case, *PODS)
    return Steps(frozenset(PODS), gone=_n("low-priority-blocker"))


def b_wap(case: Case) -> Steps:
    _node136(case)
    for i in (1, 2, 3, 4):
        case.pod(f"low-p{i}", "1", 10, at=0)
    _pg1(case)
    _p136(case, *PODS)
    return Steps(frozenset(PODS), gone=_n("low-p1", "low-p2", "low-p3", "low-p4"))


def _mid(case: Case, topology: str | None) -> None:
    _node136(case)
    case.pod("very-low-p1", "1", 5, at=0)
    case.pod("very-low-p2", "1", 5, at=0)
    case.pod("low-p1", "1", 10, at=0)
    case.pod("low-p2", "1", 10, at=0)
    case.podgroup("mid-pg", 2, priority=_group_priority(case, 50), topology=topology)
    case.pod("mid-p1", "1", 50, group="mid-pg")
    case.pod("mid-p2", "1", 50, group="mid-pg")


def b_partial_wap(case: Case) -> Steps:
    _mid(case, None)
    return Steps(_n("mid-p1", "mid-p2", "low-p1", "low-p2"), gone=_n("very-low-p1", "very-low-p2"))


def b_tas_no_preemption(case: Case) -> Steps:
    _mid(case, "topology.kubernetes.io/zone")
    return Steps(_n("very-low-p1", "very-low-p2", "low-p1", "low-p2"), _n("mid-p1", "mid-p2"),
                 unschedulable_first=_n("mid-p1", "mid-p2"))


WAP = {"WorkloadAwarePreemption": True}
TAS = {"TopologyAwareWorkloadScheduling": True}

#: entry -> (builder, extra gates, requires TopologyAwareWorkloadScheduling)
V136: dict[str, tuple[Callable[[Case], Steps], dict[str, bool], bool]] = {
    "gang schedules when pod group and resources are available": (b_available, {}, False),
    "gang waits for quorum to start, then schedules": (b_quorum, {}, False),
    "gang waits for pod group, then for resources, then schedules": (b_group_then_resources, {}, False),
    "minCount is scheduled, but one pod from a gang remain unschedulable until the blocked resources are released":
        (b_min_count_then_rest, {}, False),
    "two gangs competing for the same resources shouldn't deadlock, reversed order":
        (lambda c: b_two_gangs(c, True), {}, False),
    "two gangs competing for the same resources shouldn't deadlock": (lambda c: b_two_gangs(c, False), {}, False),
    "gang schedules with preemption": (b_preemption, {}, False),
    "basic group schedules when pod group and resources are available, without gang enforcement":
        (b_basic, {}, False),
    "basic group waits for pod group, part of it waits for resources, then schedules":
        (b_basic_part_waits, {}, False),
    "basic group schedules with preemption": (b_basic_preemption, {}, False),
    "basic group schedules with workload-aware preemption": (b_basic_preemption, {}, False),
    "gang schedules with workload-aware preemption": (b_wap, WAP, False),
    "gang schedules with partial workload-aware preemption": (b_partial_wap, WAP, False),
    "tas gang with constraint does not use pod by pod preemption": (b_tas_no_preemption, {}, True),
    "tas gang with constraint does not use workload preemption": (b_tas_no_preemption, WAP, True),
}
