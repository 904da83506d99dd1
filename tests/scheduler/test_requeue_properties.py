"""Property tests of issue 12's indexes: on random clusters and workloads they answer what a scan of every
node and every pod answers.

* the room gate never leaves behind a waiting item whose gang fits now (at the end of every scheduling
  run, a class with waiting items has no place left), and its count of places is the count a scan of the
  nodes makes;
* the index of bound pods gives every preemption attempt the units a scan of every bound pod gives (the
  algorithm before issue 12, kept here as the reference).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from jobsetctl.fakecluster.scheduler.interface import CycleState
from jobsetctl.fakecluster.scheduler.queue import UNSCHEDULABLE
from jobsetctl.fakecluster.scheduler.requeue import FitClass
from jobsetctl.fakecluster.scheduler.scheduler import Scheduler
from jobsetctl.fakecluster.scheduler.victims import Units, VictimUnit
from tests.scheduler.harness import ALL_GANG_GATES, Sim

PRIORITIES = ("low", "high")


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


workloads = st.builds(
    Workload, gang=st.booleans(), size=st.integers(1, 4), min_count=st.integers(1, 4), cpu=st.integers(1, 2),
    priority=st.sampled_from(PRIORITIES), at=st.integers(0, 40), duration=st.one_of(st.none(), st.integers(5, 90)),
    topology=st.booleans(),
)


def places_by_scan(scheduler: Scheduler, cls: FitClass, example: Any) -> int:
    """Whole gangs of ``cls`` that fit now, from every node."""
    framework = scheduler.framework_for(example)
    passing = framework.static_result(CycleState(example)).passing_names
    per_domain: dict[str | None, int] = {}
    for node in scheduler.snapshot.ordered_nodes():
        if node.name not in passing:
            continue
        domain = node.labels.get(cls.topology) if cls.topology else None
        if cls.topology and domain is None:
            continue
        per_domain[domain] = per_domain.get(domain, 0) + framework.fit.fit_count(example, node)
    return sum(copies // cls.need for copies in per_domain.values())


def units_by_scan(units: Units, below: int, exclude: set[Any]) -> list[VictimUnit]:
    """``all_units`` as it was before issue 12: every bound pod resolved anew."""
    found: dict[str, VictimUnit] = {}
    for pod in units.s.snapshot.pods.values():
        if pod.uid in found or (pod.group is not None and pod.group in exclude):
            continue
        unit = units.unit_of(pod)
        if unit.priority >= below or (unit.group is not None and unit.group in exclude):
            continue
        for member in unit.pods:
            found[member.uid] = unit
    return sorted({id(u): u for u in found.values()}.values(), key=VictimUnit.importance)


@settings(max_examples=1500, deadline=None)
@given(
    nodes=st.lists(st.tuples(st.integers(1, 4), st.sampled_from(("r1", "r2"))), min_size=1, max_size=5),
    items=st.lists(workloads, min_size=1, max_size=7),
    version=st.sampled_from(("1.36", "1.37")),
)
def test_the_indexes_answer_what_a_scan_answers(nodes: list[tuple[int, str]], items: list[Workload],
                                                version: str) -> None:
    sim = Sim(version, ALL_GANG_GATES[version] + (",WorkloadAwarePreemption=true" if version == "1.36" else ""))
    for name, value in zip(PRIORITIES, (1, 100), strict=True):
        sim.priority_class(name, value)
    for i, (cpu, rack) in enumerate(nodes):
        sim.node(f"n{i}", cpu=str(cpu), labels={"rack": rack})
    scheduler = sim.scheduler
    requeue = scheduler.requeue

    def check_classes() -> None:
        if not requeue.gate_holds():
            return
        for cls, members in list(requeue._classes.items()):
            waiting = [it for it in members.values()
                       if it.where == UNSCHEDULABLE and it.fit_class == cls and scheduler.queue.get(it.key) is it
                       and it.frozen_at != scheduler.clock.now]
            if not waiting:
                continue
            example = requeue._examples[cls]
            places = requeue.capacity.places(cls, example)
            assert places == places_by_scan(scheduler, cls, example)
            assert places == 0, f"{cls} has {places} place(s) and {len(waiting)} waiting item(s)"

    original_reconcile = scheduler.reconcile

    def reconcile(key: Any) -> float | None:
        result = original_reconcile(key)
        if key != "schedule-request":
            check_classes()
        return result

    scheduler.reconcile = reconcile  # type: ignore[method-assign]
    units = scheduler.group_cycle.units
    original_all_units = units.all_units

    def all_units(below: int, exclude: set[Any]) -> list[VictimUnit]:
        found = original_all_units(below, exclude)
        reference = units_by_scan(units, below, exclude)
        assert [(u.priority, u.kind, u.group, [p.uid for p in u.pods]) for u in found] == \
            [(u.priority, u.kind, u.group, [p.uid for p in u.pods]) for u in reference]
        return found

    units.all_units = all_units  # type: ignore[method-assign]

    _submit_and_run(sim, items)


def _submit_and_run(sim: Sim, items: list[Workload]) -> None:
    """Submit each item at its time (a pod, or a PodGroup and its members) and run to 900 s."""

    def submit(index: int, item: Workload) -> None:
        annotations = {"jobsetctl.dev/duration": f"{item.duration}s"} if item.duration else {}
        if not item.gang:
            sim.pod(f"p{index}", cpu=str(item.cpu), priority=item.priority, annotations=annotations)
            return
        group = f"g{index}"
        sim.podgroup(group, min(item.min_count, item.size), priority=item.priority,
                     topology="rack" if item.topology else None)
        for i in range(item.size):
            sim.member(f"{group}-{i}", group, cpu=str(item.cpu), priority=item.priority, annotations=annotations)

    for index, item in enumerate(items):
        sim.at(item.at, submit, index, item)
    sim.run(900)


def _bindings(version: str, hints: bool, nodes: list[tuple[int, str]], items: list[Workload]) -> list[tuple[Any, ...]]:
    """(time, pod, node) of every binding of a run, with the hinted queue or the reference that retries every
    pooled item on every event its rejecting plugins registered for."""
    sim = Sim(version, ALL_GANG_GATES[version] + (",WorkloadAwarePreemption=true" if version == "1.36" else ""),
              scheduler={"queueingHints": hints})
    for name, value in zip(PRIORITIES, (1, 100), strict=True):
        sim.priority_class(name, value)
    for i, (cpu, rack) in enumerate(nodes):
        sim.node(f"n{i}", cpu=str(cpu), labels={"rack": rack})

    _submit_and_run(sim, items)
    return [(e.time, e.name, e.node) for e in sim.recorder.events if e.kind == "Pod" and e.event == "Scheduled"]


arrivals = st.lists(st.integers(0, 40), min_size=1, max_size=8)


@settings(max_examples=600, deadline=None)
@given(
    nodes=st.lists(st.tuples(st.integers(1, 4), st.sampled_from(("r1", "r2"))), min_size=1, max_size=5),
    shape=st.tuples(st.booleans(), st.integers(1, 4), st.integers(1, 2), st.booleans(),
                    st.one_of(st.none(), st.integers(5, 90))),
    times=arrivals,
    version=st.sampled_from(("1.36", "1.37")),
)
def test_the_hinted_queue_binds_what_retrying_everything_binds(
    nodes: list[tuple[int, str]], shape: tuple[bool, int, int, bool, int | None], times: list[int],
    version: str,
) -> None:
    """Issue 12: the hints and the room gate retry fewer items, never one that would bind: with work of one
    shape (gang or not, size = minCount, cpu, rack constraint, duration) arriving at random, as many pods
    bind at every instant as when every pooled item is retried on every event its rejecting plugins
    registered for. Only for one shape: which of several different waiting items binds first depends on
    their queue order, and a retry that fails refreshes an item's timestamp (upstream's
    ``AddUnschedulableIfNotPresent``), so the items the gate did not retry keep their older place and the
    two queues may pick different ones (a legitimate difference, as upstream's own hints make it too)."""
    gang, size, cpu, topology, duration = shape
    items = [Workload(gang, size, size, cpu, "low", at, duration, topology) for at in times]
    hinted = Counter(time for time, _pod, _node in _bindings(version, True, nodes, items))
    everything = Counter(time for time, _pod, _node in _bindings(version, False, nodes, items))
    assert hinted == everything
