"""scheduler-plugins Coscheduling (scheduling.md §4.1) and Volcano PodGroups (§4.2)."""

from __future__ import annotations

from typing import Any

from tests.scheduler.harness import Sim, SimFactory

LABEL = "scheduling.x-k8s.io/pod-group"


def _cosched_group(sim: Sim, name: str, min_member: int, **spec: Any) -> dict[str, Any]:
    return sim.create({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {"name": name},
                       "spec": {"minMember": min_member, **spec}})


def test_coscheduling_permit_timeout_rejects_every_waiting_member(make_sim: SimFactory) -> None:
    sim = make_sim()
    sim.node("n1", cpu="2")
    _cosched_group(sim, "pg", 3, scheduleTimeoutSeconds=10)
    sim.pod("c-0", cpu="1", labels={LABEL: "pg"})
    sim.pod("c-1", cpu="1", labels={LABEL: "pg"})
    sim.pod("c-2", cpu="1", labels={LABEL: "pg"}, schedulingGates=[{"name": "hold"}])  # counted, never tried
    sim.run(20)
    assert sim.timeline() == [
        (10, "Pod", "c-0", "Unschedulable",
         "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin Coscheduling."),
        (10, "Pod", "c-1", "Unschedulable", "0/1 nodes are available: 1 rejection in Unreserve."),
    ]
    pg = sim.api.get("scheduling.x-k8s.io", "PodGroup", "default", "pg")
    assert pg is not None and pg["status"]["phase"] == "Scheduling"
    assert not sim.scheduler.snapshot.pods


def test_coscheduling_default_wait_is_sixty_seconds(make_sim: SimFactory) -> None:
    sim = make_sim()
    sim.node("n1", cpu="2")
    _cosched_group(sim, "pg", 2)
    sim.pod("c-0", cpu="1", labels={LABEL: "pg"})
    sim.pod("c-1", cpu="1", labels={LABEL: "pg"}, schedulingGates=[{"name": "hold"}])
    sim.run(100)
    assert sim.timeline() == [
        (60, "Pod", "c-0", "Unschedulable",
         "0/1 nodes are available: 1 rejected due to timeout after waiting 1m0s at plugin Coscheduling.")]


def test_coscheduling_binds_the_whole_group_together_and_tracks_the_phase(make_sim: SimFactory) -> None:
    sim = make_sim()
    sim.node("n1", cpu="3")
    _cosched_group(sim, "pg", 3)
    for i in range(3):
        sim.pod(f"c-{i}", cpu="1", labels={LABEL: "pg"})
    sim.run(5)
    assert [e[:4] for e in sim.timeline()] == [
        (0, "PodGroup", "pg", "Scheduled"),
        (0, "Pod", "c-0", "Scheduled"), (0, "Pod", "c-1", "Scheduled"), (0, "Pod", "c-2", "Scheduled"),
    ]
    pg = sim.api.get("scheduling.x-k8s.io", "PodGroup", "default", "pg")
    assert pg is not None
    # Scheduled at bind (scheduler), Running once the kubelet runs minMember pods (PodGroup controller).
    assert (pg["status"]["phase"], pg["status"]["scheduled"], pg["status"]["running"]) == ("Running", 3, 3)
    assert pg["status"]["scheduleStartTime"] == "2026-01-01T00:00:00Z"


def test_coscheduling_post_filter_rejects_the_waiting_siblings(make_sim: SimFactory) -> None:
    sim = make_sim()
    sim.node("n1", cpu="2")
    _cosched_group(sim, "pg", 3)
    for i in range(3):
        sim.pod(f"c-{i}", cpu="1", labels={LABEL: "pg"})
    sim.run(5)
    assert sim.timeline() == [
        (0, "Pod", "c-2", "Unschedulable",
         "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims "
         "found for incoming pod., PodGroup default/pg gets rejected due to Pod c-2 is unschedulable even after "
         "PostFilter"),
        (0, "PodGroup", "pg", "Unschedulable", "gang 2/3 placeable: 1 pods Insufficient cpu"),
        (0, "Pod", "c-0", "Unschedulable", "0/1 nodes are available: 1 optimistic rejection in PostFilter."),
        (0, "Pod", "c-1", "Unschedulable", "0/1 nodes are available: 1 optimistic rejection in PostFilter."),
    ]


def test_coscheduling_livelock_ends_in_an_explained_wait_not_an_internal_error(make_sim: SimFactory) -> None:
    """Issue 11 item 11: minMember 3, four members, one node that holds one. Each failing member's
    PostFilter rejects the one waiting at Permit, which comes straight back from backoffQ (upstream spins
    the same way, with real time passing); the loop guard freezes the members with the status of their
    last attempt until the next change, here two nodes added at 30 s."""
    sim = make_sim()
    sim.node("n1", cpu="2")
    _cosched_group(sim, "pg", 3)
    for i in range(4):
        sim.pod(f"c-{i}", cpu="2", labels={LABEL: "pg"})
    sim.run(29)
    rejected = ("0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption "
                "victims found for incoming pod., PodGroup default/pg gets rejected due to Pod {} is unschedulable "
                "even after PostFilter")
    optimistic = "0/1 nodes are available: 1 optimistic rejection in PostFilter."
    last = {name: (event, extra) for _, _, name, event, extra in sim.timeline()}
    assert last.pop("pg") == ("Unschedulable", "gang 1/3 placeable: 1 pods Insufficient cpu")
    # Where the guard cuts decides which of the two explained states each member is frozen in.
    assert sorted(last) == ["c-0", "c-1", "c-2", "c-3"]
    assert all(last[name] in {("Unschedulable", rejected.format(name)), ("Unschedulable", optimistic)}
               for name in last), last
    assert [subject for _, subject, outcome in sim.scheduler.attempt_log if outcome == "livelock"]
    assert not sim.scheduler.snapshot.pods
    sim.at(30, lambda: [sim.node(f"n{i}", cpu="2") for i in (2, 3)])
    sim.run(40)
    assert sorted(e[2:] for e in sim.timeline() if e[0] == 30 and e[3] == "Scheduled") == [
        ("c-0", "Scheduled", "n1"), ("c-1", "Scheduled", "n2"), ("c-2", "Scheduled", "n3"), ("pg", "Scheduled", None)]


def test_coscheduling_pre_filter_min_member_and_min_resources(make_sim: SimFactory) -> None:
    sim = make_sim()
    sim.node("n1", cpu="4")
    _cosched_group(sim, "small", 3)
    sim.pod("s-0", cpu="1", labels={LABEL: "small"})
    _cosched_group(sim, "greedy", 1, minResources={"cpu": "10"})
    sim.pod("g-0", cpu="1", labels={LABEL: "greedy"})
    sim.run(1)
    not_helpful = "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    # Coscheduling QueueSort: equal priority and PodGroup creation time, then the group name.
    assert sim.timeline(kinds={"PodGroup"}) == [
        (0, "PodGroup", "greedy", "Unschedulable", "gang 0/1 placeable: 1 pods resource gap: map[cpu:6]"),
        (0, "PodGroup", "small", "Unschedulable", "gang 0/3 placeable: 1 pods pre-filter pod s-0 cannot find enough "
         "sibling pods, current pods number: 1, minMember of group: 3"),
    ]
    assert sim.timeline(kinds={"Pod"}) == [
        (0, "Pod", "g-0", "Unschedulable",
         f"0/1 nodes are available: resource gap: map[cpu:6]. {not_helpful}, PodGroup default/greedy gets rejected "
         "due to Pod g-0 is unschedulable even after PostFilter"),
        (0, "Pod", "s-0", "Unschedulable",
         "0/1 nodes are available: pre-filter pod s-0 cannot find enough sibling pods, current pods number: 1, "
         f"minMember of group: 3. {not_helpful}, PodGroup default/small gets rejected due to Pod s-0 is "
         "unschedulable even after PostFilter"),
    ]


def _volcano_group(sim: Sim, name: str, min_member: int, **spec: Any) -> dict[str, Any]:
    return sim.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": name},
                       "spec": {"minMember": min_member, **spec}})


def _volcano_pod(sim: Sim, name: str, group: str, **kwargs: Any) -> None:
    sim.pod(name, cpu="1", schedulerName="volcano", annotations={"scheduling.k8s.io/group-name": group}, **kwargs)


def test_volcano_gang_is_all_or_nothing_and_goes_inqueue_then_running(make_sim: SimFactory) -> None:
    sim = make_sim()
    sim.node("n1", cpu="2")
    _volcano_group(sim, "vpg", 2)
    _volcano_pod(sim, "v-0", "vpg")
    sim.run(1)
    pg = sim.api.get("scheduling.volcano.sh", "PodGroup", "default", "vpg")
    assert pg is not None and pg["status"]["phase"] == "Pending"
    _volcano_pod(sim, "v-1", "vpg")
    sim.run(2)
    assert [e[:4] for e in sim.timeline()] == [
        (1, "PodGroup", "vpg", "Scheduled"), (1, "Pod", "v-0", "Scheduled"), (1, "Pod", "v-1", "Scheduled")]
    assert pg["status"]["phase"] == "Running"


def test_volcano_unknown_queue_never_schedules_until_it_exists(make_sim: SimFactory) -> None:
    sim = make_sim()
    sim.node("n1", cpu="2")
    _volcano_group(sim, "vpg", 1, queue="research")
    _volcano_pod(sim, "v-0", "vpg")
    sim.run(5)
    pg = sim.api.get("scheduling.volcano.sh", "PodGroup", "default", "vpg")
    assert pg is not None and pg["status"]["phase"] == "Pending"
    assert sim.condition(pg, "Unschedulable")["message"] == "queue research not found"  # type: ignore[index]
    assert sim.timeline() == []
    sim.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "research"},
                "spec": {"weight": 1}})
    sim.run(6)
    assert [e[:4] for e in sim.timeline()] == [(5, "PodGroup", "vpg", "Scheduled"), (5, "Pod", "v-0", "Scheduled")]


def test_volcano_min_task_member_counts_per_task(make_sim: SimFactory) -> None:
    sim = make_sim()
    sim.node("n1", cpu="2", labels={"kind": "cpu"})
    _volcano_group(sim, "vpg", 2, minTaskMember={"ps": 1, "worker": 2})
    task = "volcano.sh/task-spec"
    sim.pod("ps-0", cpu="1", schedulerName="volcano",
            annotations={"scheduling.k8s.io/group-name": "vpg", task: "ps"})
    for i in range(2):
        sim.pod(f"worker-{i}", cpu="1", schedulerName="volcano",
                annotations={"scheduling.k8s.io/group-name": "vpg", task: "worker"})
    sim.run(1)
    # Two of the three pods fit (minMember 2 is met) but not 1 ps + 2 workers: nothing binds.
    assert not [e for e in sim.timeline() if e[3] == "Scheduled"]
