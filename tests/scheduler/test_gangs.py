"""Gang admission per Kubernetes version (scheduling.md §1.3, §1.4): PreEnqueue quorum, the 1.35 Permit
barrier, the 1.36 PodGroup cycle and the 1.37 workload cycle."""

from __future__ import annotations

from tests.scheduler.harness import ALL_GANG_GATES, Sim, SimFactory

WAP = ",WorkloadAwarePreemption=true"


def _sim(make_sim: SimFactory, version: str, extra: str = "", **kwargs: object) -> Sim:
    return make_sim(version, ALL_GANG_GATES[version] + extra, **kwargs)  # type: ignore[arg-type]


def test_quorum_gating_holds_pods_silently_until_min_count_pods_exist_1_36(make_sim: SimFactory) -> None:
    sim = _sim(make_sim, "1.36")
    for i in range(3):
        sim.node(f"n{i}", cpu="2")
    sim.member("w-0", "pg", cpu="1")  # before its PodGroup exists
    sim.at(2, lambda: sim.podgroup("pg", 3))
    sim.at(3, lambda: sim.member("w-1", "pg", cpu="1"))
    sim.at(4, lambda: sim.member("w-2", "pg", cpu="1"))
    sim.run(10)
    assert sim.timeline() == [
        (4, "PodGroup", "pg", "Scheduled", None),
        (4, "Pod", "w-0", "Scheduled", "n0"),
        (4, "Pod", "w-1", "Scheduled", "n1"),
        (4, "Pod", "w-2", "Scheduled", "n2"),
    ]
    record = sim.group("pg")
    assert (record.quorum_at, record.admitted_at) == (4, 4)
    condition = sim.condition(sim.api.get("scheduling.k8s.io", "PodGroup", "default", "pg"), "PodGroupScheduled")
    assert condition is not None and (condition["status"], condition["reason"]) == ("True", "Scheduled")


def test_min_count_below_the_pod_count_binds_min_count_and_extras_stay_pending_1_36(make_sim: SimFactory) -> None:
    sim = _sim(make_sim, "1.36")
    for i in range(4):
        sim.node(f"n{i}", cpu="1")
    sim.podgroup("pg", 4)
    for i in range(6):
        sim.member(f"w-{i}", "pg", cpu="1")
    sim.run(5)
    scheduled = [e[2] for e in sim.timeline() if e[3] == "Scheduled" and e[1] == "Pod"]
    assert scheduled == ["w-0", "w-1", "w-2", "w-3"]
    pending = [e[2:4] for e in sim.timeline() if e[3] == "Unschedulable"]
    assert pending == [("w-4", "Unschedulable"), ("w-5", "Unschedulable")]


def test_gang_that_does_not_fit_binds_nothing_and_waits_then_schedules_whole_1_36(make_sim: SimFactory) -> None:
    """The PodGroup and the pods that found a node carry upstream's status (``errPodGroupUnschedulable``,
    schedule_one_podgroup.go); the pod that found none its FitError; the timeline note keeps ours."""
    sim = _sim(make_sim, "1.36")
    for i in range(4):
        sim.node(f"n{i}", cpu="4", gpu=2, labels={"rack": "rack-1"})
    sim.pod("blocker", gpu=2, nodeName="n0", annotations={"jobsetctl.dev/duration": "30s"})
    sim.run(0)
    sim.podgroup("train", 4)
    for i in range(4):
        sim.member(f"t-{i}", "train", gpu=2)
    sim.run(1)
    assert sim.group("train").waiting == "gang 3/4 placeable: 1 pods Insufficient nvidia.com/gpu"
    sim.run(60)
    group = "pod group is unschedulable"
    timeline = [e for e in sim.timeline() if e[2] != "blocker"]
    assert timeline == [
        (0, "PodGroup", "train", "Unschedulable", group),
        *[(0, "Pod", f"t-{i}", "Unschedulable", group) for i in range(3)],
        (0, "Pod", "t-3", "Unschedulable", "0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: "
                                           "0/4 nodes are available: 4 No preemption victims found for incoming pod."),
        (30, "PodGroup", "train", "Scheduled", None),
        *[(30, "Pod", f"t-{i}", "Scheduled", f"n{i}") for i in range(4)],
    ]
    pg = sim.api.get("scheduling.k8s.io", "PodGroup", "default", "train")
    assert pg is not None
    assert sim.condition(pg, "PodGroupScheduled")["status"] == "True"  # type: ignore[index]
    assert sim.group("train").waiting is None and sim.group("train").admitted_at == 30


def test_two_gangs_never_deadlock_half_placed_1_36(make_sim: SimFactory) -> None:
    sim = _sim(make_sim, "1.36")
    for i in range(4):
        sim.node(f"n{i}", cpu="1")
    sim.podgroup("a", 4)
    sim.podgroup("b", 4)
    for i in range(4):  # interleaved creation: a pod-by-pod scheduler would split the nodes 2/2
        sim.member(f"a-{i}", "a", cpu="1", annotations={"jobsetctl.dev/duration": "10s"})
        sim.member(f"b-{i}", "b", cpu="1", annotations={"jobsetctl.dev/duration": "10s"})
    sim.run(30)
    groups = [e[:4] for e in sim.timeline(kinds={"PodGroup"})]
    assert groups == [(0, "PodGroup", "a", "Scheduled"), (0, "PodGroup", "b", "Unschedulable"),
                      (10, "PodGroup", "b", "Scheduled")]


def test_1_35_permit_barrier_waits_and_times_out_after_300_seconds(make_sim: SimFactory) -> None:
    sim = _sim(make_sim, "1.35")
    sim.node("n1", cpu="2")
    sim.workload_135("wl", {"workers": 3})
    for i in range(3):
        sim.member(f"w-{i}", "wl:workers", cpu="1")
    sim.run(320)
    timeout = ("0/1 nodes are available: 1 rejected due to timeout after waiting 5m0s at plugin GangScheduling.")
    insufficient = ("0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No "
                    "preemption victims found for incoming pod.")
    assert sim.timeline() == [
        (0, "Pod", "w-2", "Unschedulable", insufficient),
        (0, "Workload", "wl", "Unschedulable", "gang 2/3 placeable: 1 pods Insufficient cpu"),
        (300, "Pod", "w-0", "Unschedulable", timeout),
        (300, "Pod", "w-1", "Unschedulable", timeout),
    ]
    assert not sim.scheduler.snapshot.pods  # reservations released
    # The cluster changed at 300 (reservations released), so the leftover flush retries the pods at the
    # first 30 s tick after 5 minutes: a new attempt starts a new 300 s deadline.
    sim.run(1000)
    assert next(e[0] for e in sim.timeline() if e[0] > 320 and e[4] == timeout) == 630


def test_1_35_gang_binds_together_once_the_quorum_waits_at_permit(make_sim: SimFactory) -> None:
    sim = _sim(make_sim, "1.35")
    sim.node("n1", cpu="2")
    sim.node("n2", cpu="1")
    sim.workload_135("wl", {"workers": 3})
    for i in range(3):
        sim.member(f"w-{i}", "wl:workers", cpu="1")
    sim.run(10)
    assert [e[:4] for e in sim.timeline()] == [
        (0, "Workload", "wl", "Scheduled"),
        (0, "Pod", "w-0", "Scheduled"), (0, "Pod", "w-1", "Scheduled"), (0, "Pod", "w-2", "Scheduled"),
    ]


def test_quirk_1_35_per_pod_preemption_evicts_victims_although_the_gang_fails(make_sim: SimFactory) -> None:
    """scheduling.md §1.3 v1.35 point 5: preemption runs per pod in PostFilter, so a gang that can never
    reach its quorum still evicts lower-priority pods (fixed later by workload-aware preemption)."""
    sim = _sim(make_sim, "1.35")
    sim.priority_class("low", 1)
    sim.priority_class("high", 100)
    sim.node("n1", cpu="1")
    sim.node("n2", cpu="1")
    sim.pod("victim-1", cpu="1", priority="low", nodeName="n1")
    sim.pod("victim-2", cpu="1", priority="low", nodeName="n2")
    sim.run(0)
    sim.workload_135("wl", {"workers": 3})
    for i in range(3):
        sim.member(f"w-{i}", "wl:workers", cpu="1", priority="high")
    sim.run(1000)
    preempted = [e[2] for e in sim.timeline() if e[3] == "Preempted"]
    assert preempted == ["victim-1", "victim-2"]
    assert not any(e[3] == "Scheduled" and e[2].startswith("w-") for e in sim.timeline())


def test_1_37_initial_attempt_binds_min_count_and_requeues_the_rest_at_once(make_sim: SimFactory) -> None:
    sim = _sim(make_sim, "1.37")
    sim.node("n1", cpu="2")
    sim.podgroup("pg", 2)
    for i in range(3):
        sim.member(f"w-{i}", "pg", cpu="1")
    sim.run(5)
    assert [e[:4] for e in sim.timeline()] == [
        (0, "PodGroup", "pg", "Scheduled"),
        (0, "Pod", "w-0", "Scheduled"), (0, "Pod", "w-1", "Scheduled"),
        (0, "Pod", "w-2", "Unschedulable"),
    ]
    pg = sim.api.get("scheduling.k8s.io", "PodGroup", "default", "pg")
    assert pg is not None
    condition = sim.condition(pg, "PodGroupInitiallyScheduled")
    assert condition is not None and condition["status"] == "True"
    # The requeued remainder was tried again in the same instant (subsequent attempt).
    assert [t for t, subject, _ in sim.scheduler.attempt_log if subject == "group default/pg"] == [0, 0]


def test_1_37_priority_mismatch_is_a_scheduler_error_with_full_backoff(make_sim: SimFactory) -> None:
    sim = _sim(make_sim, "1.37")
    sim.priority_class("high", 100)
    sim.node("n1", cpu="4")
    sim.podgroup("pg", 2)  # priority 0 (no class)
    sim.member("w-0", "pg", cpu="1")
    sim.member("w-1", "pg", cpu="1", priority="high")
    sim.run(40)
    message = "all pods in a single pod group should match the priority of the pod group"
    assert sim.timeline(kinds={"PodGroup"}) == [(0, "PodGroup", "pg", "Unschedulable", message)]
    attempts = [t for t, subject, _ in sim.scheduler.attempt_log if subject == "group default/pg"]
    assert attempts == [0, 1, 3, 7, 15, 25, 35]
    pg = sim.api.get("scheduling.k8s.io", "PodGroup", "default", "pg")
    assert sim.condition(pg, "PodGroupInitiallyScheduled")["reason"] == "SchedulerError"  # type: ignore[arg-type,index]


def test_1_37_min_count_decrease_releases_a_waiting_gang(make_sim: SimFactory) -> None:
    sim = _sim(make_sim, "1.37")
    sim.node("n1", cpu="4")
    sim.podgroup("pg", 4)
    for i in range(3):
        sim.member(f"w-{i}", "pg", cpu="1")

    def shrink() -> None:
        import copy

        pg = sim.api.get("scheduling.k8s.io", "PodGroup", "default", "pg")
        assert pg is not None
        old = copy.deepcopy(pg)
        pg["spec"]["schedulingPolicy"]["gang"]["minCount"] = 3
        result = sim.api.update(pg, old=old)
        assert result.ok, result.message()

    sim.at(7, shrink)
    sim.run(10)
    assert [e[:4] for e in sim.timeline()] == [
        (7, "PodGroup", "pg", "Scheduled"),
        (7, "Pod", "w-0", "Scheduled"), (7, "Pod", "w-1", "Scheduled"), (7, "Pod", "w-2", "Scheduled"),
    ]


def test_basic_policy_groups_bind_what_fits(make_sim: SimFactory) -> None:
    for version in ("1.36", "1.37"):
        sim = _sim(make_sim, version)
        sim.node("n1", cpu="2")
        sim.podgroup("pg")
        for i in range(3):
            sim.member(f"w-{i}", "pg", cpu="1")
        sim.run(5)
        scheduled = [e[2] for e in sim.timeline() if e[3] == "Scheduled" and e[1] == "Pod"]
        assert scheduled == ["w-0", "w-1"], version


def test_1_37_binds_first_then_preempts_for_the_rest_of_the_gang(make_sim: SimFactory) -> None:
    """``podGroupCycle``: workload-aware preemption runs only when the cycle is Unschedulable; the pods
    that fit bind first, the rest get their own cycle at once, which preempts (upstream
    preemption/podgroup/podgrouppreemption_test.go "Binding first before preemption for gang policy")."""
    sim = _sim(make_sim, "1.37")
    sim.priority_class("low", 1)
    sim.priority_class("high", 100)
    for i in range(3):
        sim.node(f"n{i}", cpu="1")
    sim.pod("low", cpu="1", priority="low", nodeName="n2")
    sim.run(0)
    sim.podgroup("pg", 2, priority="high")
    for i in range(3):
        sim.member(f"w-{i}", "pg", cpu="1", priority="high")
    sim.run(5)
    assert sim.timeline() == [
        (0, "PodGroup", "pg", "Scheduled", None),
        (0, "Pod", "w-0", "Scheduled", "n0"), (0, "Pod", "w-1", "Scheduled", "n1"),
        (0, "Pod", "w-2", "Unschedulable", "0/3 nodes are available: 3 Insufficient cpu."),
        (0, "Pod", "low", "Preempted", "Preempted by PodGroup default/pg on node n2"),
        (0, "Pod", "low", "Deleted", None),
        (0, "Pod", "w-2", "Scheduled", "n2"),
    ]
