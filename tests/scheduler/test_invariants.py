"""The invariant checker (``jobsetctl/fakecluster/invariants.py``) catches each kind of violation, and counts
its checks. Violations are produced by writing to the API server directly, as a buggy component would."""

from __future__ import annotations

import pytest

from jobsetctl.fakecluster.apiserver import WatchEvent, WatchType
from jobsetctl.fakecluster.invariants import InvariantViolation
from tests.scheduler.harness import ALL_GANG_GATES, Sim


def test_over_commit_is_caught() -> None:
    sim = Sim()
    sim.node("n1", cpu="2")
    sim.pod("a", cpu="1", nodeName="n1")
    with pytest.raises(InvariantViolation, match=r"node n1 over-committed on cpu: requested 3000 > allocatable 2000"):
        sim.pod("b", cpu="2", nodeName="n1")


def test_pods_slot_counts_as_a_resource() -> None:
    sim = Sim()
    sim.node("n1", pods=1)
    sim.pod("a", nodeName="n1")
    with pytest.raises(InvariantViolation, match="over-committed on pods"):
        sim.pod("b", nodeName="n1")


def test_terminal_pods_release_their_resources() -> None:
    sim = Sim()
    sim.node("n1", cpu="2")
    sim.pod("a", cpu="2", annotations={"jobsetctl.dev/duration": "5s"})
    sim.at(10, lambda: sim.pod("b", cpu="2", nodeName="n1"))
    sim.run(20)
    assert sim.checker.checks > 0


def test_untolerated_taint_at_bind_is_caught() -> None:
    sim = Sim()
    sim.node("n1", taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}])
    pod = sim.pod("p", schedulingGates=[{"name": "hold"}])  # the scheduler leaves it alone
    pod["spec"]["nodeName"] = "n1"
    with pytest.raises(InvariantViolation, match="untolerated taint gpu=true:NoSchedule"):
        sim.api.update_status(pod)


def test_half_bound_gang_is_caught_when_the_instant_ends() -> None:
    sim = Sim("1.36", ALL_GANG_GATES["1.36"])
    sim.node("n1", cpu="8")
    sim.podgroup("pg", 3)
    pods = [sim.member(f"w-{i}", "pg", cpu="1", schedulingGates=[{"name": "hold"}]) for i in range(3)]
    pods[0]["spec"]["nodeName"] = "n1"
    sim.api.update_status(pods[0])
    with pytest.raises(InvariantViolation, match=r"gang default/pg started with 1 bound member\(s\), below minCount 3"):
        sim.run(1)


def test_preemption_of_an_equal_priority_pod_is_caught() -> None:
    sim = Sim()
    sim.priority_class("same", 5)
    sim.node("n1")
    sim.pod("victim", priority="same")
    sim.pod("preemptor", priority="same", schedulingGates=[{"name": "hold"}])
    sim.run(0)
    victim = sim.get_pod("victim")
    sim.recorder.record_for(victim, "Preempted", message="Preempted by default/preemptor on node n1")
    with pytest.raises(InvariantViolation, match=r"preempted by default/preemptor \(priority 5\), not lower priority"):
        sim.api.update_status(victim)


def test_checks_are_counted_in_a_normal_run() -> None:
    sim = Sim("1.36", ALL_GANG_GATES["1.36"])
    for i in range(4):
        sim.node(f"n{i}", cpu="2")
    sim.podgroup("pg", 4)
    for i in range(4):
        sim.member(f"w-{i}", "pg", cpu="2")
    sim.run(5)
    # 4 node creations, 4 binds (node + gang bookkeeping), 1 gang check at the end of the instant.
    assert sim.checker.checks >= 13


def _preempted_by_a_gang(sim: Sim) -> None:
    """A gang ``pg`` (held by a scheduling gate, so the scheduler never binds it) 'preempts' ``victim``."""
    sim.priority_class("low", 1)
    sim.priority_class("high", 100)
    sim.node("n1", cpu="2")
    sim.pod("victim", cpu="2", priority="low")
    sim.podgroup("pg", 2, priority="high")
    for i in range(2):
        sim.member(f"w-{i}", "pg", cpu="1", priority="high", schedulingGates=[{"name": "hold"}])
    sim.run(0)
    victim = sim.get_pod("victim")
    sim.recorder.record_for(victim, "Preempted", message="Preempted by PodGroup default/pg on node n1")
    sim.at(1, lambda: sim.api.delete(sim.get_pod("victim")))


def test_a_gang_whose_victims_are_gone_but_that_neither_binds_nor_says_why_is_caught() -> None:
    """Rule 7 (issue 11): the victims went at 1 s; by the end of that instant the gang had to bind or
    record why it still waits."""
    sim = Sim("1.37", ALL_GANG_GATES["1.37"])
    _preempted_by_a_gang(sim)
    with pytest.raises(InvariantViolation, match=r"t=1s PodGroup default/pg preempted and its victims are gone, "
                                                  r"but it neither bound nor recorded why it still waits"):
        sim.run(2)


def test_a_gang_that_says_why_it_still_waits_after_its_victims_are_gone_is_fine() -> None:
    sim = Sim("1.37", ALL_GANG_GATES["1.37"])
    _preempted_by_a_gang(sim)
    pg = sim.api.get("scheduling.k8s.io", "PodGroup", "default", "pg")
    assert pg is not None

    def explain(event: WatchEvent) -> None:  # right after the victim's Deleted event
        if event.type == WatchType.DELETED and event.key[3] == "victim":
            sim.recorder.record_for(pg, "Unschedulable", message="still waiting")

    sim.api.subscribe(explain)
    sim.run(2)
    assert sim.checker.checks > 0
