"""Issue 12: which cluster events retry a waiting pod or gang (queueing hints and the room gate of
:mod:`jobsetctl.fakecluster.scheduler.requeue`), read from each item's scheduling attempts.

Upstream's hints are cited where they are modelled (kubernetes, read through the file index):
``gangscheduling.go`` ``EventsToRegister`` (pod added of the same hierarchy, PodGroup added or its minCount
decreased), ``interpodaffinity/plugin.go`` ``isSchedulableAfterPodChange``, ``noderesources/fit.go``
``isSchedulableAfterPodEvent`` (any deletion of a bound pod: Queue). The room gate is ours: a gang that
waits for room alone is retried when a whole gang fits somewhere, one gang per place.
"""

from __future__ import annotations

from typing import Any

from tests.scheduler.harness import ALL_GANG_GATES, Sim, SimFactory


def _attempts(sim: Sim, subject: str) -> list[float]:
    return [t for t, who, _ in sim.scheduler.attempt_log if who == subject]


def _gang_sim(make_sim: SimFactory) -> Sim:
    return make_sim("1.37", ALL_GANG_GATES["1.37"])


def _gang(sim: Sim, name: str, size: int, *, topology: str | None = None, **pod: Any) -> None:
    sim.podgroup(name, size, topology=topology, priority=pod.get("priority"))
    for i in range(size):
        sim.member(f"{name}-{i}", name, cpu="1", **pod)


def _delete(sim: Sim, *names: str) -> Any:
    def action() -> None:
        for name in names:
            pod = sim.api.get("", "Pod", "default", name)
            assert pod is not None
            sim.api.delete(pod)
    return action


def test_a_waiting_gang_is_retried_when_a_whole_gang_fits_not_before(make_sim: SimFactory) -> None:
    sim = _gang_sim(make_sim)
    sim.node("n0", cpu="4")
    sim.node("n1", cpu="4")
    _gang(sim, "a", 4)
    _gang(sim, "b", 4)
    _gang(sim, "c", 4)
    sim.at(10, _delete(sim, "a-0"))  # one free cpu: c cannot fit, no retry (upstream would retry and fail)
    sim.at(20, _delete(sim, "a-1", "a-2", "a-3"))  # room for four: c is retried and binds
    sim.run(60)
    assert _attempts(sim, "group default/c") == [0, 20]
    assert sim.timeline(events={"Scheduled"}, kinds={"PodGroup"}) == [
        (0, "PodGroup", "a", "Scheduled", None), (0, "PodGroup", "b", "Scheduled", None),
        (20, "PodGroup", "c", "Scheduled", None),
    ]


def test_room_for_one_gang_retries_one_waiting_gang_in_queue_order(make_sim: SimFactory) -> None:
    sim = _gang_sim(make_sim)
    sim.node("n0", cpu="4")
    _gang(sim, "a", 4)
    for name in ("c", "d", "e"):
        _gang(sim, name, 4)
    sim.at(20, _delete(sim, "a-0", "a-1", "a-2", "a-3"))
    sim.run(60)
    # Upstream moves all three and two fail again; one place, one retry, the first in the queue's order.
    assert [_attempts(sim, f"group default/{name}") for name in ("c", "d", "e")] == [[0, 20], [0], [0]]


def test_room_is_counted_per_topology_domain(make_sim: SimFactory) -> None:
    sim = _gang_sim(make_sim)
    for i, rack in enumerate(("r0", "r0", "r1", "r1")):
        sim.node(f"n{i}", cpu="2", labels={"rack": rack})
    _gang(sim, "a", 4, topology="rack")
    _gang(sim, "b", 4, topology="rack")
    _gang(sim, "c", 4, topology="rack")
    sim.at(10, _delete(sim, "a-0", "a-1", "b-0", "b-1"))  # four free cpus, but two per rack: no retry
    sim.at(20, _delete(sim, "a-2", "a-3"))  # a whole rack free
    sim.run(60)
    assert _attempts(sim, "group default/c") == [0, 20]
    record = sim.group("c")
    assert (record.admitted_at, record.domains) == (20, ["rack=r0"])


def test_a_gang_that_may_preempt_is_retried_on_every_freed_room(make_sim: SimFactory) -> None:
    """A lower-priority pod is bound somewhere: a retry may find victims, so the room gate lets the gang go
    at every deletion, as upstream's NodeResourcesFit hint does (here preemption cannot help either: the
    low pod holds one cpu of the two the gang lacks)."""
    sim = _gang_sim(make_sim)
    sim.priority_class("high", 100)
    sim.node("n0", cpu="4")
    sim.node("n1", cpu="2")
    sim.pod("low", cpu="1", nodeName="n1")
    _gang(sim, "a", 4, priority="high")  # n0
    _gang(sim, "c", 4, priority="high")  # n1 has one cpu free: 3 short, "low" frees only one
    sim.at(10, _delete(sim, "a-0"))
    sim.run(30)
    assert _attempts(sim, "group default/c") == [0, 10]


def test_a_gang_that_may_preempt_but_finds_no_victim_waits_for_room(make_sim: SimFactory) -> None:
    sim = _gang_sim(make_sim)
    sim.priority_class("high", 100)
    sim.node("n0", cpu="4")
    _gang(sim, "a", 4, priority="high")
    _gang(sim, "c", 4, priority="high")  # no lower-priority pod anywhere: nothing to preempt
    sim.at(10, _delete(sim, "a-0"))
    sim.at(20, _delete(sim, "a-1", "a-2", "a-3"))
    sim.run(60)
    assert _attempts(sim, "group default/c") == [0, 20]


def test_another_podgroup_and_its_pods_do_not_retry_a_waiting_gang(make_sim: SimFactory) -> None:
    """GangScheduling's hints: only a pod or a PodGroup of the waiting gang's own hierarchy helps it."""
    sim = _gang_sim(make_sim)
    sim.node("n0", cpu="4")
    _gang(sim, "a", 4)
    _gang(sim, "c", 4)
    sim.at(10, lambda: _gang(sim, "x", 2))
    sim.run(60)
    assert _attempts(sim, "group default/c") == [0]
    assert _attempts(sim, "group default/x") == [10]


def test_a_new_member_retries_its_own_waiting_gang(make_sim: SimFactory) -> None:
    """A pod of the gang's own group arriving (GangScheduling's ``isSchedulableAfterPodAdded``) moves the
    waiting entry, room or not; with a smaller minCount the bigger gang then fits."""
    sim = _gang_sim(make_sim)
    sim.node("n0", cpu="3")
    sim.podgroup("c", 2)
    sim.member("c-0", "c", cpu="2")
    sim.member("c-1", "c", cpu="2")
    sim.at(10, lambda: sim.member("c-2", "c", cpu="1"))
    sim.run(60)
    assert _attempts(sim, "group default/c")[:2] == [0, 10]
    assert sorted(name for _, kind, name, event, _ in sim.timeline(events={"Scheduled"}) if kind == "Pod") == \
        ["c-0", "c-2"]


def test_inter_pod_affinity_retries_only_for_a_pod_that_matches_the_terms(make_sim: SimFactory) -> None:
    """``isSchedulableAfterPodChange``: a bound pod added helps a pod whose affinity terms it matches. (The
    pods arrive bound, by another scheduler: a pod this scheduler binds itself moves nobody, as before issue
    12: the translated upstream PodGroup tests expect no retry of a gang's pods when a sibling binds.)"""
    sim = make_sim()
    sim.node("n0", cpu="4")
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    sim.pod("p", cpu="1", affinity=affinity)
    sim.at(10, lambda: sim.pod("other", cpu="1", labels={"app": "y"}, nodeName="n0"))
    sim.at(20, lambda: sim.pod("peer", cpu="1", labels={"app": "x"}, nodeName="n0"))
    sim.run(60)
    assert _attempts(sim, "default/p") == [0, 20]
    assert sim.node_of("p") == "n0"


def test_a_pod_refused_for_room_is_retried_once_a_copy_fits(make_sim: SimFactory) -> None:
    sim = make_sim()
    sim.node("n0", cpu="2")
    sim.pod("a", cpu="1")
    sim.pod("b", cpu="1")
    sim.pod("c", cpu="2")
    sim.at(10, _delete(sim, "a"))  # one cpu free: c (two) is not retried
    sim.at(20, _delete(sim, "b"))
    sim.run(60)
    assert _attempts(sim, "default/c") == [0, 20]
    assert sim.node_of("c") == "n0"
