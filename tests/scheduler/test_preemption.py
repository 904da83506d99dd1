"""DefaultPreemption (scheduling.md §3.2): per-node victims, reprieve, node choice, nomination."""

from __future__ import annotations

from tests.scheduler.harness import Sim, SimFactory, anti_affinity


def _classes(sim: Sim) -> None:
    for name, value in (("p1", 1), ("p2", 2), ("p3", 3), ("p5", 5), ("mid", 50), ("high", 100), ("top", 200)):
        sim.priority_class(name, value)


def test_per_node_preemption_of_a_single_pod_exact_sequence(make_sim: SimFactory) -> None:
    sim = make_sim()
    _classes(sim)
    sim.node("n1", cpu="4")
    sim.pod("low", cpu="3", priority="p1")
    sim.at(5, lambda: sim.pod("urgent", cpu="2", priority="high"))
    sim.run(10)
    assert sim.timeline() == [
        (0, "Pod", "low", "Scheduled", "n1"),
        (5, "Pod", "low", "Preempted", "Preempted by default/urgent on node n1"),
        (5, "Pod", "urgent", "Unschedulable",
         "0/1 nodes are available: 1 Insufficient cpu."),
        (5, "Pod", "low", "Deleted", None),
        (5, "Pod", "urgent", "Scheduled", "n1"),
    ]
    target = [e for e in sim.recorder.kube_events if e.reason == "Preempted"]
    urgent_uid = sim.get_pod("urgent")["metadata"]["uid"]
    assert [(e.name, e.message) for e in target] == [("low", f"Preempted by pod {urgent_uid} on node n1")]


def test_victims_are_the_lowest_priorities_after_reprieve(make_sim: SimFactory) -> None:
    sim = make_sim()
    _classes(sim)
    sim.node("n1", cpu="4")
    sim.pod("v1", cpu="1", priority="p1")
    sim.pod("v2", cpu="1", priority="p2")
    sim.pod("v3", cpu="1", priority="p3")
    sim.run(1)
    sim.pod("urgent", cpu="2", priority="high")
    sim.run(2)
    assert [e[2:4] for e in sim.timeline() if e[0] == 1] == [
        ("v1", "Preempted"), ("urgent", "Unschedulable"), ("v1", "Deleted"), ("urgent", "Scheduled")]
    victim = sim.api.get("", "Pod", "default", "v1")
    assert victim is None


def test_node_choice_prefers_the_lowest_highest_victim_priority(make_sim: SimFactory) -> None:
    sim = make_sim()
    _classes(sim)
    sim.node("n1", cpu="2")
    sim.node("n2", cpu="2")
    sim.pod("on-n1", cpu="2", priority="p5", nodeName="n1")
    sim.pod("on-n2", cpu="2", priority="p3", nodeName="n2")
    sim.run(0)  # the kubelets start the pods first
    sim.pod("urgent", cpu="2", priority="high")
    sim.run(1)
    assert [e[2:] for e in sim.timeline()] == [
        ("on-n2", "Preempted", "Preempted by default/urgent on node n2"),
        ("urgent", "Unschedulable", "0/2 nodes are available: 2 Insufficient cpu."),
        ("on-n2", "Deleted", None),
        ("urgent", "Scheduled", "n2"),
    ]


def test_preemption_policy_never_does_not_preempt(make_sim: SimFactory) -> None:
    sim = make_sim()
    sim.priority_class("polite", 100, never=True)
    sim.priority_class("p1", 1)
    sim.node("n1", cpu="2")
    sim.pod("low", cpu="2", priority="p1")
    sim.run(0)
    sim.pod("polite", cpu="2", priority="polite")
    sim.run(1)
    assert sim.timeline()[-1][2:] == (
        "polite", "Unschedulable",
        "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.")


def test_equal_priority_is_never_a_victim(make_sim: SimFactory) -> None:
    sim = make_sim()
    sim.priority_class("same", 5)
    sim.node("n1", cpu="2")
    sim.pod("first", cpu="2", priority="same")
    sim.pod("second", cpu="2", priority="same")
    sim.run(1)
    assert sim.timeline()[-1][2:] == (
        "second", "Unschedulable",
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption "
        "victims found for incoming pod.")


def test_no_cross_node_preemption_for_zone_anti_affinity(make_sim: SimFactory) -> None:
    """scheduling.md §3.2 limitation: the obstacle is a pod on another node of the zone."""
    sim = make_sim()
    _classes(sim)
    sim.node("n1", labels={"zone": "a"})
    sim.node("n2", labels={"zone": "a"})
    sim.pod("blocker-1", labels={"app": "db"}, priority="p1", nodeName="n1")
    sim.pod("blocker-2", labels={"app": "db"}, priority="p1", nodeName="n2")
    sim.run(0)
    sim.pod("urgent", priority="high", affinity=anti_affinity({"app": "db"}, "zone"))
    sim.run(5)
    assert sim.timeline() == [
        (0, "Pod", "urgent", "Unschedulable",
         "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules. preemption: 0/2 nodes are "
         "available: 2 node(s) didn't match pod anti-affinity rules."),
    ]


def test_nominated_resources_are_held_for_lower_or_equal_priority_pods_only(make_sim: SimFactory) -> None:
    sim = make_sim()
    _classes(sim)
    sim.node("n1", cpu="6")
    sim.pod("low", cpu="4", priority="p1", terminationGracePeriodSeconds=30)
    sim.at(1, lambda: sim.pod("urgent", cpu="4", priority="high"))
    # Same priority as the terminating victim: it cannot preempt, and the nomination blocks it.
    sim.at(10, lambda: sim.pod("middle", cpu="2", priority="p1"))
    sim.at(15, lambda: sim.pod("topmost", cpu="2", priority="top"))
    sim.run(60)
    assert sim.get_pod("urgent")["spec"].get("nodeName") == "n1"
    timeline = sim.timeline()
    assert timeline[:4] == [
        (0, "Pod", "low", "Scheduled", "n1"),
        (1, "Pod", "low", "Preempted", "Preempted by default/urgent on node n1"),
        (1, "Pod", "urgent", "Unschedulable", "0/1 nodes are available: 1 Insufficient cpu."),
        (10, "Pod", "middle", "Unschedulable",
         "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption "
         "victims found for incoming pod."),
    ]
    assert (15, "Pod", "topmost", "Scheduled", "n1") in timeline
    assert (31, "Pod", "low", "Deleted", None) in timeline
    assert (31, "Pod", "urgent", "Scheduled", "n1") in timeline


def test_terminating_victim_keeps_the_preemptor_from_preempting_again(make_sim: SimFactory) -> None:
    sim = make_sim()
    _classes(sim)
    sim.node("n1", cpu="4")
    sim.pod("low-a", cpu="2", priority="p1", terminationGracePeriodSeconds=30)
    sim.pod("low-b", cpu="2", priority="p2", terminationGracePeriodSeconds=30)
    sim.at(1, lambda: sim.pod("urgent", cpu="2", priority="high"))
    # A node change retries the preemptor while its victim still terminates: a new node the preemptor fits
    # when empty (NodeResourcesFit's hint says Queue, fit.go ``isSchedulableAfterNodeChange``), filled at
    # the same instant by a pod bound there (a node too small for it, as before issue 12, is QueueSkip).
    def add_full_node() -> None:
        sim.node("n2", cpu="2")
        sim.pod("filler", cpu="1", nodeName="n2")

    sim.at(5, add_full_node)
    sim.run(60)
    preempted = [e[2] for e in sim.timeline() if e[3] == "Preempted"]
    assert preempted == ["low-a"]
    assert (5, "Pod", "urgent", "Unschedulable",
            "0/2 nodes are available: 2 Insufficient cpu. preemption: not eligible due to a terminating pod on "
            "the nominated node.") in sim.timeline()
