"""Property tests: random clusters, pods, gangs and priorities keep every invariant, and the run ends.

Each example builds a small cluster (nodes with racks and taints), random plain pods and gangs with
random priorities, sizes, topology constraints and disruption modes, arriving over time and finishing
after random durations, on a random Kubernetes version; the invariant checker raises on any violation.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from tests.scheduler.harness import ALL_GANG_GATES, Sim

PRIORITIES = ("low", "mid", "high")


@dataclass(frozen=True)
class Workload:
    gang: bool
    size: int
    min_count: int
    cpu: int
    priority: str
    at: int
    duration: int | None
    topology: bool
    all_mode: bool


workloads = st.builds(
    Workload,
    gang=st.booleans(),
    size=st.integers(1, 4),
    min_count=st.integers(1, 4),
    cpu=st.integers(1, 3),
    priority=st.sampled_from(PRIORITIES),
    at=st.integers(0, 40),
    duration=st.one_of(st.none(), st.integers(5, 60)),
    topology=st.booleans(),
    all_mode=st.booleans(),
)


@given(
    version=st.sampled_from(("1.35", "1.36", "1.37")),
    wap=st.booleans(),
    nodes=st.lists(st.tuples(st.integers(1, 4), st.sampled_from(("r1", "r2")), st.booleans()), min_size=1, max_size=5),
    items=st.lists(workloads, min_size=1, max_size=6),
)
def test_random_scenarios_keep_the_invariants_and_end(
    version: str, wap: bool, nodes: list[tuple[int, str, bool]], items: list[Workload],
) -> None:
    gates = ALL_GANG_GATES[version] + (",WorkloadAwarePreemption=true" if wap and version == "1.36" else "")
    sim = Sim(version, gates)
    for name, value in zip(PRIORITIES, (1, 50, 100), strict=True):
        sim.priority_class(name, value)
    for i, (cpu, rack, tainted) in enumerate(nodes):
        taints = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}] if tainted else None
        sim.node(f"n{i}", cpu=str(cpu), labels={"rack": rack}, taints=taints)

    def submit(index: int, item: Workload) -> None:
        annotations = {"jobsetctl.dev/duration": f"{item.duration}s"} if item.duration else {}
        if not item.gang:
            sim.pod(f"p{index}", cpu=str(item.cpu), priority=item.priority, annotations=annotations)
            return
        min_count = min(item.min_count, item.size)
        group = f"g{index}"
        if version == "1.35":
            sim.workload_135(group, {"workers": min_count})
            member = f"{group}:workers"
        else:
            sim.podgroup(group, min_count, priority=item.priority, topology="rack" if item.topology else None,
                         disruption_all=item.all_mode)
            member = group
        for i in range(item.size):
            sim.member(f"{group}-{i}", member, cpu=str(item.cpu), priority=item.priority, annotations=annotations)

    for index, item in enumerate(items):
        sim.at(item.at, submit, index, item)
    sim.run(900)
    nodes_now = {n["metadata"]["name"] for n in sim.api.list("", "Node")}
    for pod in sim.api.list("", "Pod"):
        bound = (pod.get("spec") or {}).get("nodeName")
        assert bound is None or bound in nodes_now
    assert sim.checker.checks > 0
