"""Topology-aware workload scheduling (KEP-5732, scheduling.md §1.7) and CompositePodGroup trees
(KEP-6012, §1.6)."""

from __future__ import annotations

from tests.scheduler.harness import ALL_GANG_GATES, Sim, SimFactory

CPG = ",CompositePodGroup=true"


def _racks(sim: Sim, layout: dict[str, int], *, cpu: str = "4", zone: dict[str, str] | None = None) -> None:
    for rack, count in layout.items():
        for i in range(count):
            labels = {"rack": rack}
            if zone:
                labels["zone"] = zone[rack]
            sim.node(f"{rack}-n{i}", cpu=cpu, labels=labels)


def test_gang_goes_to_the_fullest_feasible_domain(make_sim: SimFactory) -> None:
    for version in ("1.36", "1.37"):
        sim = make_sim(version, ALL_GANG_GATES[version])
        _racks(sim, {"rack-1": 4, "rack-2": 4, "rack-3": 2})
        sim.pod("used-1", cpu="2", nodeName="rack-1-n0")
        sim.pod("used-2", cpu="2", nodeName="rack-1-n1")
        sim.run(0)
        sim.podgroup("train", 4, topology="rack")
        for i in range(4):
            sim.member(f"t-{i}", "train", cpu="2")
        sim.run(1)
        # rack-3 ends 8/8 cpu used (1.0), rack-1 12/16 (0.75), rack-2 8/16 (0.5): rack-3 wins.
        nodes = {e[2]: e[4] for e in sim.timeline() if e[3] == "Scheduled" and e[1] == "Pod"}
        assert nodes == {"t-0": "rack-3-n0", "t-1": "rack-3-n1", "t-2": "rack-3-n0", "t-3": "rack-3-n1"}, version
        assert sim.group("train").domains == ["rack=rack-3"]
        assert sim.timeline(kinds={"PodGroup"}) == [(0, "PodGroup", "train", "Scheduled", "domain rack=rack-3")]


def test_more_pods_placed_beats_a_fuller_domain(make_sim: SimFactory) -> None:
    sim = make_sim("1.36", ALL_GANG_GATES["1.36"])
    _racks(sim, {"big": 3, "small": 1})
    sim.podgroup("pg", 2, topology="rack")
    for i in range(3):
        sim.member(f"w-{i}", "pg", cpu="4")
    sim.run(1)
    assert sim.group("pg").domains == ["rack=big"]


def test_nodes_without_the_label_are_in_no_domain(make_sim: SimFactory) -> None:
    sim = make_sim("1.36", ALL_GANG_GATES["1.36"])
    sim.node("unlabelled", cpu="64", gpu=8)  # could hold the whole gang, but belongs to no rack
    for i in range(2):
        sim.node(f"rack-2-n{i}", cpu="8", gpu=3, labels={"rack": "rack-2"})
    sim.podgroup("train", 8, topology="rack")
    for i in range(8):
        sim.member(f"t-{i}", "train", gpu=1)
    sim.run(1)
    assert sim.timeline(kinds={"PodGroup"}) == [(0, "PodGroup", "train", "Unschedulable", "pod group is unschedulable")]
    assert sim.group("train").waiting == "gang 6/8 placeable: 2 pods Insufficient nvidia.com/gpu in rack-2"


def test_why_it_waits_names_the_closest_domain_and_the_dominant_reason(make_sim: SimFactory) -> None:
    """The timeline note explains (closest domain, dominant reason); the condition carries upstream's
    status: 1.36 ``pod group is unschedulable``, 1.37 the placement algorithm's first placement
    (domains in value order) ended by PlacementFeasible, then the preemption status appended (1.37 runs
    workload-aware preemption for topology groups too; nothing here has a lower priority)."""
    for version, condition in (
        ("1.36", "pod group is unschedulable"),
        ("1.37", "0/2 placements are available, first placement status: "
                 "minCount (8) cannot be satisfied: 2 scheduled, 5 remaining, "
                 "pod group preemption: No preemption victims found for incoming preemptor"),
    ):
        sim = make_sim(version, ALL_GANG_GATES[version])
        for i in range(2):
            sim.node(f"rack-2-n{i}", cpu="8", gpu=2, labels={"rack": "rack-2"})
        sim.node("rack-2-n2", cpu="8", gpu=1, labels={"rack": "rack-2"})
        sim.node("rack-1-n0", cpu="8", gpu=2, labels={"rack": "rack-1"})
        sim.podgroup("train", 8, topology="rack")
        for i in range(8):
            sim.member(f"t-{i}", "train", gpu=1)
        sim.run(1)
        note = "gang 5/8 placeable: 3 pods Insufficient nvidia.com/gpu in rack-2"
        assert sim.timeline(kinds={"PodGroup"}) == [(0, "PodGroup", "train", "Unschedulable", condition)], version
        pg = sim.api.get("scheduling.k8s.io", "PodGroup", "default", "train")
        kind = "PodGroupScheduled" if version == "1.36" else "PodGroupInitiallyScheduled"
        assert sim.condition(pg, kind)["message"] == condition  # type: ignore[arg-type,index]
        record = sim.group("train")
        assert (record.waiting, record.placeable, record.min_count, record.admitted_at) == (note, 5, 8, None)
        assert not any(e[3] == "Scheduled" for e in sim.timeline())


def test_bound_members_force_the_domain_of_later_pods(make_sim: SimFactory) -> None:
    sim = make_sim("1.36", ALL_GANG_GATES["1.36"])
    _racks(sim, {"r1": 1, "r2": 2})
    sim.podgroup("pg", 2, topology="rack")
    sim.member("w-0", "pg", cpu="2")
    sim.member("w-1", "pg", cpu="2")
    sim.run(1)
    assert sim.group("pg").domains == ["rack=r1"]
    sim.member("w-2", "pg", cpu="4")  # r1 is full now: the pod may not spill into r2
    sim.run(2)
    assert sim.timeline()[-1][2:4] == ("w-2", "Unschedulable")
    assert sim.node_of("w-2") is None


def test_quirk_basic_group_picks_its_domain_from_the_first_pod_seen(make_sim: SimFactory) -> None:
    """scheduling.md §1.7 basic-policy caveat: the cycle scores the pods it sees (here the first one
    alone), so the group lands in the fullest rack that fits that pod and later pods cannot follow."""
    sim = make_sim("1.36", ALL_GANG_GATES["1.36"])
    _racks(sim, {"small": 1, "large": 3})
    sim.podgroup("pg", None, topology="rack")
    sim.member("w-0", "pg", cpu="4")
    sim.run(1)
    sim.member("w-1", "pg", cpu="4")
    sim.run(2)
    assert sim.node_of("w-0") == "small-n0"
    assert sim.node_of("w-1") is None


def test_1_36_topology_constraint_does_not_trigger_workload_preemption(make_sim: SimFactory) -> None:
    sim = make_sim("1.36", ALL_GANG_GATES["1.36"] + ",WorkloadAwarePreemption=true")
    sim.priority_class("low", 1)
    sim.priority_class("high", 100)
    _racks(sim, {"r1": 2})
    for i in range(2):
        sim.pod(f"low-{i}", cpu="4", priority="low", nodeName=f"r1-n{i}")
    sim.run(0)
    sim.podgroup("pg", 2, topology="rack", priority="high")
    for i in range(2):
        sim.member(f"w-{i}", "pg", cpu="4", priority="high")
    sim.run(5)
    assert not [e for e in sim.timeline() if e[3] == "Preempted"]


def test_composite_pod_group_places_top_down_coarse_to_fine(make_sim: SimFactory) -> None:
    sim = make_sim("1.37", ALL_GANG_GATES["1.37"] + CPG)
    layout = {"a1": 2, "a2": 1, "b1": 1}
    _racks(sim, layout, cpu="1", zone={"a1": "zone-a", "a2": "zone-a", "b1": "zone-b"})
    sim.create({"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup", "metadata": {"name": "job"},
                "spec": {"workloadRef": {"workloadName": "wl", "templateName": "job"},
                         "schedulingPolicy": {"gang": {"minGroupCount": 2}},
                         "schedulingConstraints": {"topology": [{"key": "zone"}]}}})
    sim.podgroup("leader", 1, topology="rack", parent="job")
    sim.podgroup("workers", 2, topology="rack", parent="job")
    sim.member("leader-0", "leader", cpu="1")
    sim.member("worker-0", "workers", cpu="1")
    sim.member("worker-1", "workers", cpu="1")
    sim.run(1)
    # zone-b (one node) cannot hold both children; in zone-a the leader takes the fullest rack that
    # fits it (a2, 1/1), the workers the only rack left that fits both (a1).
    assert {p: sim.node_of(p) for p in ("leader-0", "worker-0", "worker-1")} == {
        "leader-0": "a2-n0", "worker-0": "a1-n0", "worker-1": "a1-n1"}
    assert sim.group("job").domains[0] == "zone=zone-a"
    cpg = sim.api.get("scheduling.k8s.io", "CompositePodGroup", "default", "job")
    assert sim.condition(cpg, "CompositePodGroupInitiallyScheduled")["status"] == "True"  # type: ignore[arg-type,index]


def test_composite_tree_waits_for_the_root_quorum(make_sim: SimFactory) -> None:
    sim = make_sim("1.37", ALL_GANG_GATES["1.37"] + CPG)
    _racks(sim, {"r": 4}, cpu="1", zone={"r": "z"})
    sim.create({"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup", "metadata": {"name": "job"},
                "spec": {"workloadRef": {"workloadName": "wl", "templateName": "job"},
                         "schedulingPolicy": {"gang": {"minGroupCount": 2}}}})
    sim.podgroup("a", 2, parent="job")
    sim.podgroup("b", 2, parent="job")
    sim.member("a-0", "a", cpu="1")
    sim.member("a-1", "a", cpu="1")
    sim.member("b-0", "b", cpu="1")
    sim.run(1)
    assert sim.timeline() == []  # a is ready, b is not: the root has 1 of 2 ready children
    sim.member("b-1", "b", cpu="1")
    sim.run(2)
    assert sorted(e[2] for e in sim.timeline() if e[3] == "Scheduled" and e[1] == "Pod") == ["a-0", "a-1", "b-0", "b-1"]


def test_invalid_composite_trees_are_marked_and_never_scheduled(make_sim: SimFactory) -> None:
    sim = make_sim("1.37", ALL_GANG_GATES["1.37"] + CPG)
    sim.node("n", cpu="8")
    sim.create({"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup", "metadata": {"name": "job"},
                "spec": {"workloadRef": {"workloadName": "wl", "templateName": "job"},
                         "schedulingPolicy": {"basic": {}}}})
    sim.podgroup("mine", 1, parent="job")
    sim.podgroup("stranger", 1, parent="job", workload="other-workload")
    sim.member("m-0", "mine", cpu="1")
    sim.member("s-0", "stranger", cpu="1")
    sim.run(1)
    cpg = sim.api.get("scheduling.k8s.io", "CompositePodGroup", "default", "job")
    condition = sim.condition(cpg, "CompositePodGroupInitiallyScheduled")  # type: ignore[arg-type]
    assert condition is not None and (condition["status"], condition["reason"]) == ("False", "Invalid")
    assert condition["message"] == 'composite pod group tree "job" spans more than one workload'
    assert not any(e[3] == "Scheduled" for e in sim.timeline())


def test_composite_tree_deeper_than_four_levels_is_invalid(make_sim: SimFactory) -> None:
    sim = make_sim("1.37", ALL_GANG_GATES["1.37"] + CPG)
    sim.node("n", cpu="8")
    parent = None
    for level in range(4):  # four CompositePodGroups plus the leaf PodGroup: five levels
        spec = {"workloadRef": {"workloadName": "wl", "templateName": f"c{level}"}, "schedulingPolicy": {"basic": {}}}
        if parent:
            spec["parentCompositePodGroupName"] = parent
        sim.create({"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup",
                    "metadata": {"name": f"c{level}"}, "spec": spec})
        parent = f"c{level}"
    sim.podgroup("leaf", 1, parent=parent)
    sim.member("p", "leaf", cpu="1")
    sim.run(1)
    assert sim.timeline() == [(0, "CompositePodGroup", "c0", "Unschedulable",
                               'composite pod group tree "c0" is deeper than 4 levels')]
