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

from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

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


def _run(version: str, gates: str, nodes: list[int], items: list[Item], shortcuts: bool) -> tuple[list[Any], list[Any]]:
    """Events and Kubernetes Events of a run; without ``shortcuts`` every preemption what-if moves pods out of
    the snapshot and back (``preemptionShortcuts: false``), as before the shortcuts."""
    sim = Sim(version, gates, scheduler={"preemptionShortcuts": shortcuts})
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
    fast = _run(version, gates, nodes, items, shortcuts=True)
    reference = _run(version, gates, nodes, items, shortcuts=False)
    assert fast == reference
