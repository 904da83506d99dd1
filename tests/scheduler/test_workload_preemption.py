"""Workload-aware preemption (KEP-5710, scheduling.md §1.8) and per-pod preemption of gang members."""

from __future__ import annotations

from tests.scheduler.harness import ALL_GANG_GATES, Sim, SimFactory

WAP_136 = ALL_GANG_GATES["1.36"] + ",WorkloadAwarePreemption=true"


def _cluster(make_sim: SimFactory, version: str, gates: str, nodes: int, cpu: str = "4") -> Sim:
    sim = make_sim(version, gates)
    sim.priority_class("low", 1)
    sim.priority_class("low2", 2)
    sim.priority_class("high", 100)
    for i in range(nodes):
        sim.node(f"n{i}", cpu=cpu)
    return sim


def _gang(sim: Sim, name: str, size: int, *, priority: str, cpu: str = "3", all_mode: bool = False,
          min_count: int | None = None) -> None:
    sim.podgroup(name, min_count or size, priority=priority, disruption_all=all_mode)
    for i in range(size):
        sim.member(f"{name}-{i}", name, cpu=cpu, priority=priority)


def test_low_priority_gang_is_preempted_as_a_whole_exact_sequence(make_sim: SimFactory) -> None:
    sim = _cluster(make_sim, "1.36", WAP_136, 4)
    _gang(sim, "lp", 4, priority="low", all_mode=True)
    sim.run(1)
    _gang(sim, "hp", 4, priority="high", all_mode=True)
    sim.run(10)
    by = "Preempted by PodGroup default/hp"
    assert sim.timeline()[5:] == [
        (1, "PodGroup", "lp", "Preempted", by),
        *[(1, "Pod", f"lp-{i}", "Preempted", f"{by} on node n{i}") for i in range(4)],
        # 1.36: a successful preemption leaves the group's status as it was (waitingOnPreemption).
        (1, "PodGroup", "hp", "Unschedulable", "pod group is unschedulable"),
        *[(1, "Pod", f"hp-{i}", "Unschedulable", "0/4 nodes are available: 4 Insufficient cpu.") for i in range(4)],
        *[(1, "Pod", f"lp-{i}", "Deleted", None) for i in range(4)],
        (1, "PodGroup", "hp", "Scheduled", None),
        *[(1, "Pod", f"hp-{i}", "Scheduled", f"n{i}") for i in range(4)],
    ]
    lp = sim.api.get("scheduling.k8s.io", "PodGroup", "default", "lp")
    target = sim.condition(lp, "DisruptionTarget")  # type: ignore[arg-type]
    assert target is not None and (target["status"], target["reason"]) == ("True", "PreemptionByScheduler")
    assert sim.group("lp").preempted_at == [1]


def test_disruption_mode_pod_evicts_only_what_is_needed(make_sim: SimFactory) -> None:
    sim = _cluster(make_sim, "1.36", WAP_136, 4)
    _gang(sim, "lp", 4, priority="low", all_mode=False)
    sim.run(1)
    _gang(sim, "hp", 2, priority="high")
    sim.run(10)
    # Every unit is one pod of equal priority: the earliest (most important) ones are reprieved first.
    assert [e[2] for e in sim.timeline() if e[3] == "Preempted"] == ["lp-2", "lp-3"]
    assert not [e for e in sim.timeline() if e[1] == "PodGroup" and e[3] == "Preempted"]


def test_disruption_mode_pod_group_evicts_the_whole_group_even_when_less_would_do(make_sim: SimFactory) -> None:
    sim = _cluster(make_sim, "1.36", WAP_136, 4)
    _gang(sim, "lp", 4, priority="low", all_mode=True)
    sim.run(1)
    _gang(sim, "hp", 2, priority="high")
    sim.run(10)
    assert [e[2] for e in sim.timeline() if e[3] == "Preempted"] == ["lp", "lp-0", "lp-1", "lp-2", "lp-3"]


def test_victims_are_the_lowest_priority_units(make_sim: SimFactory) -> None:
    sim = _cluster(make_sim, "1.36", WAP_136, 4)
    _gang(sim, "a", 2, priority="low", all_mode=True)
    _gang(sim, "b", 2, priority="low2", all_mode=True)
    sim.run(1)
    _gang(sim, "hp", 2, priority="high")
    sim.run(10)
    assert [e[2] for e in sim.timeline() if e[3] == "Preempted"] == ["a", "a-0", "a-1"]


def test_reprieve_keeps_a_pod_group_before_a_single_pod_of_equal_priority(make_sim: SimFactory) -> None:
    sim = _cluster(make_sim, "1.36", WAP_136, 2)
    sim.pod("single", cpu="3", priority="low", nodeName="n0")
    sim.podgroup("grouped", 1, priority="low", disruption_all=True)
    sim.member("grouped-0", "grouped", cpu="3", priority="low", nodeName="n1")
    sim.run(1)
    _gang(sim, "hp", 1, priority="high")
    sim.run(10)
    assert [e[2] for e in sim.timeline() if e[3] == "Preempted"] == ["single"]


def test_workload_preemption_does_not_preempt_for_a_never_policy_group(make_sim: SimFactory) -> None:
    sim = _cluster(make_sim, "1.36", WAP_136, 2)
    sim.priority_class("polite", 100, never=True)
    _gang(sim, "lp", 2, priority="low")
    sim.run(1)
    _gang(sim, "hp", 2, priority="polite")
    sim.run(10)
    assert not [e for e in sim.timeline() if e[3] == "Preempted"]


def test_gang_uses_per_pod_preemption_when_the_gate_is_off(make_sim: SimFactory) -> None:
    """1.36 test "gang schedules with preemption": without WorkloadAwarePreemption each member preempts."""
    sim = _cluster(make_sim, "1.36", ALL_GANG_GATES["1.36"], 2)
    sim.pod("blocker", cpu="3", priority="low", nodeName="n0")
    sim.run(1)
    _gang(sim, "hp", 2, priority="high")
    sim.run(10)
    assert [e[2:4] for e in sim.timeline() if e[0] == 1] == [
        ("blocker", "Preempted"),
        ("hp", "Unschedulable"), ("hp-0", "Unschedulable"), ("hp-1", "Unschedulable"),
        ("blocker", "Deleted"),
        ("hp", "Scheduled"), ("hp-0", "Scheduled"), ("hp-1", "Scheduled"),
    ]


def test_1_37_workload_preemption_is_on_with_generic_workload(make_sim: SimFactory) -> None:
    sim = _cluster(make_sim, "1.37", ALL_GANG_GATES["1.37"], 2)
    _gang(sim, "lp", 2, priority="low", all_mode=True)
    sim.run(1)
    _gang(sim, "hp", 2, priority="high")
    sim.run(10)
    assert [e[2] for e in sim.timeline() if e[3] == "Preempted"] == ["lp", "lp-0", "lp-1"]
    assert [e[2] for e in sim.timeline() if e[3] == "Scheduled" and e[0] == 1] == ["hp", "hp-0", "hp-1"]


def test_provisional_1_37_per_pod_preemption_takes_an_all_mode_group_as_a_unit(make_sim: SimFactory) -> None:
    """U9 (provisional): a single pod preempting one member of an ``all`` PodGroup evicts the whole group,
    on every node; 1.36 would evict only the member on the chosen node."""
    for version, expected in (("1.37", ["lp-0", "lp-1", "lp"]), ("1.36", ["lp-0"])):
        gates = ALL_GANG_GATES[version] + (",WorkloadAwarePreemption=true" if version == "1.36" else "")
        sim = _cluster(make_sim, version, gates, 2)
        _gang(sim, "lp", 2, priority="low", all_mode=True)
        sim.run(1)
        sim.pod("single", cpu="3", priority="high")
        sim.run(10)
        assert [e[2] for e in sim.timeline() if e[3] == "Preempted"] == expected, version
