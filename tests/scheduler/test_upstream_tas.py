"""Upstream's topology-aware workload scheduling tests on Kubernetes 1.36, translated entry by entry and run as
Scenarios through ``simulate`` (test/integration/scheduler/topology_aware_scheduling/tas_test.go, commit
008b3652): every entry of ``TestTopologyAwareSchedulingWithGangPolicy`` (12) and
``TestTopologyAwareSchedulingWithBasicPolicy`` (13, with GangScheduling off and on, as upstream runs them).

Asserted: upstream's scheduled and pending pods, the nodes (or the one domain) each set of pods must end on,
then our exact events (:mod:`tests.scheduler.upstream_tas_events`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.scheduler.upstream import Case
from tests.scheduler.upstream_tas_cases import BASIC, GANG, Placed
from tests.scheduler.upstream_tas_events import BASIC_EVENTS, GANG_EVENTS


def _run(tmp_path: Path, build: Callable[[Case], Placed], gang: bool) -> list[str]:
    case = Case(version="1.36", gates={"GenericWorkload": True, "GangScheduling": gang,
                                        "TopologyAwareWorkloadScheduling": True})
    expected = build(case)
    run = case.run(tmp_path, until=60)
    assert (run.final("Running"), run.final("Pending")) == (expected.scheduled, expected.pending)
    for pods, nodes in expected.within.items():
        assert {run.node_of(p) for p in pods} <= nodes, pods
    labels: dict[str, Any] = {o["metadata"]["name"]: o["metadata"]["labels"]
                              for objects in case.at.values() for o in objects if o["kind"] == "Node"}
    for pods, key in expected.one_domain.items():
        assert len({labels[run.node_of(p)][key] for p in pods}) == 1, pods
    assert {e["name"] for e in run.document["events"] if e["kind"] == "Pod" and e["event"] == "Deleted"} == (
        expected.gone)
    assert not run.outcome.failed
    return run.events()


@pytest.mark.parametrize("entry", list(GANG))
def test_topology_aware_scheduling_with_gang_policy(tmp_path: Path, entry: str) -> None:
    """TestTopologyAwareSchedulingWithGangPolicy: one entry."""
    assert _run(tmp_path, GANG[entry], True) == GANG_EVENTS[entry]


@pytest.mark.parametrize("gang", [True, False], ids=["gang-on", "gang-off"])
@pytest.mark.parametrize("entry", list(BASIC))
def test_topology_aware_scheduling_with_basic_policy(tmp_path: Path, entry: str, gang: bool) -> None:
    """TestTopologyAwareSchedulingWithBasicPolicy: one entry, GangScheduling on and off."""
    assert _run(tmp_path, BASIC[entry], gang) == BASIC_EVENTS[entry]
