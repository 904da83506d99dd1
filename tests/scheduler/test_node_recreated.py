"""A node deleted and created again under its name (issue #6 hardening: a Scenario's ``delete: {kind:
Node}`` followed by a Node manifest), and pods bound to a node before it exists.

Regression: the scheduler's cache dropped a deleted node together with the requests of the pods still
bound to it, so the node created again looked empty while those pods ran on (within PodGC's quarantine)
and was over-committed; the invariant checker forgot them as well, so nothing noticed. Upstream's cache
keeps such pods on a "ghost" NodeInfo (``cache.RemoveNode``).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from jobsetctl.fakecluster.invariants import InvariantViolation
from tests.scheduler.harness import Sim, SimFactory


def recreate(sim: Sim, node: dict[str, Any]) -> None:
    again = copy.deepcopy(node)
    for key in ("uid", "resourceVersion", "creationTimestamp"):
        again["metadata"].pop(key, None)
    sim.create(again)


def phase(sim: Sim, name: str) -> tuple[str | None, str]:
    pod = sim.get_pod(name)
    return pod["spec"].get("nodeName"), pod["status"].get("phase", "Pending")


def test_a_node_created_again_counts_the_pods_still_bound_to_it(make_sim: SimFactory) -> None:
    sim = make_sim()
    node = copy.deepcopy(sim.node("n1", cpu="4"))
    sim.pod("old", cpu="3")
    sim.run(5)
    sim.at(10, lambda: sim.api.delete(sim.api.get("", "Node", "", "n1")))
    sim.at(20, recreate, sim, node)
    sim.at(25, lambda: sim.pod("new", cpu="3"))
    sim.run(35)  # within PodGC's quarantine: "old" still holds 3 of the 4 CPUs
    assert phase(sim, "old") == ("n1", "Running")
    assert phase(sim, "new") == (None, "Pending")


def test_pods_bound_before_their_node_exists_count_when_it_appears(make_sim: SimFactory) -> None:
    sim = make_sim()
    sim.pod("early", cpu="3", nodeName="n1")
    sim.run(1)
    sim.at(5, lambda: sim.node("n1", cpu="4"))
    sim.at(6, lambda: sim.pod("new", cpu="3"))
    sim.run(20)
    assert phase(sim, "early") == ("n1", "Running")
    assert phase(sim, "new") == (None, "Pending")


def test_the_checker_counts_pods_across_a_node_deleted_and_created_again(make_sim: SimFactory) -> None:
    sim = make_sim()
    node = copy.deepcopy(sim.node("n1", cpu="4"))
    sim.pod("old", cpu="3")
    sim.run(5)
    sim.api.delete(sim.api.get("", "Node", "", "n1"))
    recreate(sim, node)
    with pytest.raises(InvariantViolation, match=r"node n1 over-committed on cpu: requested 6000 > allocatable 4000"):
        sim.pod("forced", cpu="3", nodeName="n1")
