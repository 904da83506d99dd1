"""Property test of issue 12's preemption shortcuts: answered from a node's sums, the what-ifs of
preemption give the timeline the dry runs give.

The shortcuts (per-pod victim search from the node's sums, the victim-aware node choice kept in a heap,
the reprieve re-checking only the placements a returning unit can touch) must never change which
victims or nodes are chosen. The reference is the dry-run code they skip, still in the package for the
cases they do not cover: here it is forced for every attempt, and on random clusters and workloads (pods
and gangs, two priorities, gangs evicted as a unit or pod by pod, 1.36 with and without workload-aware
preemption, 1.37) both runs must record the same events, to the message and the instant.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from jobsetctl.fakecluster.scheduler.plugins.defaultpreemption import DefaultPreemption
from jobsetctl.fakecluster.scheduler.workloadpreemption import VictimAwareChooser, WorkloadPreemption
from tests.scheduler.harness import ALL_GANG_GATES, Sim

PRIORITIES = ("low", "high")


@dataclass(frozen=True)
class Item:
    size: int
    gang: bool
    whole_unit: bool
    cpu: int
    priority: str
    at: int
    duration: int


items_strategy = st.builds(
    Item, size=st.integers(1, 4), gang=st.booleans(), whole_unit=st.booleans(), cpu=st.integers(1, 2),
    priority=st.sampled_from(PRIORITIES), at=st.integers(0, 60), duration=st.integers(5, 120),
)


@contextmanager
def dry_runs_only() -> Iterator[None]:
    """Every what-if done by moving pods out of the cache and back, as before the shortcuts."""
    original_init = VictimAwareChooser.__init__

    def init(self: VictimAwareChooser, *args: Any) -> None:
        original_init(self, *args)
        self.by_sums = False

    with mock.patch.object(DefaultPreemption, "_local_victims", lambda *_args: None), \
            mock.patch.object(WorkloadPreemption, "_affected", lambda _self, _unit, _homes, assignments, _dyn: assignments), \
            mock.patch.object(VictimAwareChooser, "__init__", init):
        yield


def _run(version: str, gates: str, nodes: list[int], items: list[Item]) -> tuple[list[Any], list[Any]]:
    sim = Sim(version, gates)
    for name, value in zip(PRIORITIES, (1, 100), strict=True):
        sim.priority_class(name, value)
    for i, cpu in enumerate(nodes):
        sim.node(f"n{i}", cpu=str(cpu), labels={"rack": f"r{i % 2}"})

    def submit(index: int, item: Item) -> None:
        annotations = {"jobsetctl.dev/duration": f"{item.duration}s"}
        if not item.gang:
            sim.pod(f"p{index}", cpu=str(item.cpu), priority=item.priority, annotations=annotations)
            return
        group = f"g{index}"
        sim.podgroup(group, item.size, priority=item.priority, disruption_all=item.whole_unit)
        for i in range(item.size):
            sim.member(f"{group}-{i}", group, cpu=str(item.cpu), priority=item.priority, annotations=annotations)

    for index, item in enumerate(items):
        sim.at(item.at, submit, index, item)
    sim.run(600)
    return list(sim.recorder.events), list(sim.recorder.kube_events)


@settings(max_examples=300, deadline=None)
@given(
    nodes=st.lists(st.integers(1, 4), min_size=1, max_size=5),
    items=st.lists(items_strategy, min_size=1, max_size=8),
    setup=st.sampled_from(("1.36", "1.36-wap", "1.37")),
)
def test_preemption_from_sums_records_what_the_dry_runs_record(nodes: list[int], items: list[Item],
                                                                setup: str) -> None:
    version = setup.split("-")[0]
    gates = ALL_GANG_GATES[version] + (",WorkloadAwarePreemption=true" if setup.endswith("wap") else "")
    fast = _run(version, gates, nodes, items)
    with dry_runs_only():
        reference = _run(version, gates, nodes, items)
    assert fast == reference
