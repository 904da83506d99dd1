"""The scheduling queue: priority order, backoff, KEP-5142 pop-from-backoffQ, the leftover flush."""

from __future__ import annotations

from typing import Any

from tests.scheduler.harness import Sim, SimFactory


def _attempts(sim: Sim, key: str) -> list[float]:
    return [t for t, subject, _ in sim.scheduler.attempt_log if subject == key]


def _pod_that_never_fits(sim: Sim) -> None:
    """Pod ``p`` fits no node: n1 is too small, n0 has a taint it does not tolerate. Refused for more than
    room alone, it is not held back by the room gate (:mod:`jobsetctl.fakecluster.scheduler.requeue`), so a
    node event moves it, as NodeResourcesFit registered node events; the queue mechanics show."""
    sim.node("n0", cpu="4", taints=[{"key": "dedicated", "value": "other", "effect": "NoSchedule"}])
    sim.node("n1", cpu="1")
    sim.pod("p", cpu="2")


def _touch_node(sim: Sim, name: str, label: str) -> Any:
    """A node update that raises the node's allocatable cpu by one millicpu (``label`` names the step): a
    NodeUpdate that NodeResourcesFit's hint answers Queue for p (p fits the node and a resource it requests
    grew, fit.go ``isSchedulableAfterNodeChange``), yet p still fails on the taint. (A label change, as this
    helper made before issue 12's hint tables, is QueueSkip upstream: fit.go registers only
    Add|UpdateNodeAllocatable with queueing hints on.)"""
    def action() -> None:
        node = sim.api.get("", "Node", "", name)
        assert node is not None
        node["metadata"]["labels"][label] = "x"
        for field in ("allocatable", "capacity"):
            cpu = str(node["status"][field]["cpu"])
            millis = int(cpu[:-1]) if cpu.endswith("m") else int(cpu) * 1000
            node["status"][field]["cpu"] = f"{millis + 1}m"
        sim.api.update_status(node)
    return action


def test_active_queue_orders_by_priority_then_time(make_sim: SimFactory) -> None:
    sim = make_sim()
    sim.priority_class("high", 100)
    sim.node("n1", cpu="1")
    sim.pod("early-low", cpu="1")
    sim.pod("late-high", cpu="1", priority="high")
    sim.run(1)
    assert sim.timeline(events={"Scheduled"}) == [(0, "Pod", "late-high", "Scheduled", "n1")]


def test_quirk_pop_from_backoff_q_retries_at_once_when_active_q_is_empty(make_sim: SimFactory) -> None:
    """KEP-5142 (SchedulerPopFromBackoffQ, beta and on since 1.33): a pod moved into backoffQ by an event
    is popped immediately when nothing else is active — its 1 s backoff does not delay it."""
    sim = make_sim()
    _pod_that_never_fits(sim)
    sim.at(0.5, _touch_node(sim, "n0", "a"))
    sim.run(5)
    assert _attempts(sim, "default/p") == [0, 0.5]


def test_classic_backoff_doubles_from_one_second_to_ten(make_sim: SimFactory) -> None:
    sim = make_sim(scheduler={"popFromBackoffQ": False})
    _pod_that_never_fits(sim)
    for i, when in enumerate((0.5, 1.5, 3.5, 7.5, 15.5, 25.5)):
        sim.at(when, _touch_node(sim, "n0", f"l{i}"))
    sim.run(60)
    # Failures at 0, 1, 3, 7, 15, 25: backoffs 1, 2, 4, 8, 10 (capped), 10; each event lands mid-backoff.
    assert _attempts(sim, "default/p") == [0, 1, 3, 7, 15, 25, 35]


def test_event_after_the_backoff_moves_straight_to_active(make_sim: SimFactory) -> None:
    sim = make_sim(scheduler={"popFromBackoffQ": False})
    _pod_that_never_fits(sim)
    sim.at(4, _touch_node(sim, "n0", "late"))
    sim.run(10)
    assert _attempts(sim, "default/p") == [0, 4]


def test_unschedulable_pods_wait_for_a_relevant_event_or_the_five_minute_flush(make_sim: SimFactory) -> None:
    sim = make_sim()
    sim.node("n1", cpu="1")
    sim.node("n2", cpu="1", labels={"other": "true"})
    sim.pod("p", cpu="2")
    # An unrelated pod binding: AssignedPodAdd does not concern NodeResourcesFit, so no move; but the
    # cluster changed, so the leftover flush (every 30 s, after 5 min in the pool) retries the pod.
    sim.at(100, lambda: sim.pod("other", cpu="1", nodeSelector={"other": "true"}))
    sim.run(1000)
    assert _attempts(sim, "default/p") == [0, 330]


def test_a_quiet_cluster_does_not_retry_forever(make_sim: SimFactory) -> None:
    """With nothing changed since a pod failed, the leftover flush would repeat the same failure: we skip
    that retry so that a simulation with a pod pending forever still ends (documented deviation)."""
    sim = make_sim()
    sim.node("n1", cpu="1")
    sim.pod("p", cpu="2")
    sim.run(10_000)
    assert _attempts(sim, "default/p") == [0]
    assert sim.clock.next_time() is None
