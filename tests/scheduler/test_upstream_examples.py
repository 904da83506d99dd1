"""The upstream JobSet workload-aware-scheduling examples (Apache-2.0 data, read from ../shared/upstream
and never copied), run through the real JobSet and Job controllers, the scheduler and the kubelet on
Kubernetes 1.36 with the example's kind feature gates (scheduling.md §1.3, §1.7, §1.8)."""

from __future__ import annotations

import re
from typing import Any

import yaml

from tests.helpers import UPSTREAM, requires_upstream
from tests.scheduler.harness import Sim, SimFactory

EXAMPLES = UPSTREAM / "jobset" / "examples" / "workload-aware-scheduling"
#: the gates of the examples' kind.yaml
GATES = "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true,WorkloadAwarePreemption=true"
_SUFFIX = re.compile(r"-[bcdfghjklmnpqrstvwxz2456789]{5}$")

pytestmark = requires_upstream


def _apply(sim: Sim, *files: str) -> None:
    for name in files:
        for doc in yaml.safe_load_all((EXAMPLES / name).read_text()):
            if doc:
                sim.create(doc)


def _timeline(sim: Sim) -> list[tuple[Any, ...]]:
    """Scheduler events with the pods' random name suffixes dropped (``js-rj-0-0``)."""
    return [(t, kind, _SUFFIX.sub("", name), event, extra) for t, kind, name, event, extra in sim.timeline()]


def test_gang_of_six_waits_for_room(make_sim: SimFactory) -> None:
    sim = make_sim("1.36", GATES)
    for i in range(4):
        sim.node(f"worker-{i}", cpu="6")  # one 4-cpu pod per node: 4 of 6
    _apply(sim, "workload.yaml", "podgroup.yaml", "jobset.yaml")
    sim.at(30, lambda: [sim.node(f"worker-{i}", cpu="6") for i in (4, 5)])
    sim.run(1)
    assert sim.group("js-abc-workers-def").waiting == "gang 4/6 placeable: 2 pods Insufficient cpu"
    sim.run(60)
    # The events carry upstream's status (``errPodGroupUnschedulable``, then workload-aware preemption's
    # status appended); our explanation is the group's timeline note.
    status = "pod group is unschedulable, No preemption victims found for incoming preemptor"
    assert _timeline(sim) == [
        (0, "PodGroup", "js-abc-workers-def", "Unschedulable", status),
        *[(0, "Pod", f"js-rj-{j}-{i}", "Unschedulable", status) for j in (0, 1) for i in (0, 1)],
        *[(0, "Pod", f"js-rj-2-{i}", "Unschedulable", "0/4 nodes are available: 4 Insufficient cpu.") for i in (0, 1)],
        (30, "PodGroup", "js-abc-workers-def", "Scheduled", None),
        *[(30, "Pod", f"js-rj-{j}-{i}", "Scheduled", f"worker-{2 * j + i}") for j in range(3) for i in (0, 1)],
    ]
    assert sim.group("js-abc-workers-def").admitted_at == 30


def test_tas_puts_all_four_pods_on_one_rack(make_sim: SimFactory) -> None:
    sim = make_sim("1.36", GATES)
    key = "topology.example.com/rack"
    for rack, count in (("rack-a", 3), ("rack-b", 2)):
        for i in range(count):
            sim.node(f"{rack}-{i}", cpu="1", labels={key: rack})  # two 500m pods per node
    sim.node("unlabelled", cpu="8")
    _apply(sim, "tas/workload.yaml", "tas/podgroup.yaml", "tas/jobset.yaml")
    sim.run(10)
    # rack-b ends 4/4 cpus used (fraction 1.0), rack-a 4/6: the fuller rack wins.
    assert _timeline(sim) == [
        (0, "PodGroup", "js-abc-workers-def", "Scheduled", f"domain {key}=rack-b"),
        (0, "Pod", "js-rj-0-0", "Scheduled", "rack-b-0"),
        (0, "Pod", "js-rj-0-1", "Scheduled", "rack-b-1"),
        (0, "Pod", "js-rj-1-0", "Scheduled", "rack-b-0"),
        (0, "Pod", "js-rj-1-1", "Scheduled", "rack-b-1"),
    ]


def test_low_priority_gang_is_preempted_as_a_whole_by_the_high_priority_one(make_sim: SimFactory) -> None:
    sim = make_sim("1.36", GATES)
    for i in range(4):
        sim.node(f"worker-{i}", cpu="4")  # one 3-cpu pod per node
    _apply(sim, "preemption/low-priority.yaml", "preemption/high-priority.yaml", "preemption/low-priority-jobset.yaml")
    sim.run(10)
    _apply(sim, "preemption/high-priority-jobset.yaml")
    sim.run(20)
    by = "Preempted by PodGroup default/hp-abc-workers-def"
    timeline = _timeline(sim)
    assert timeline[:5] == [
        (0, "PodGroup", "lp-abc-workers-def", "Scheduled", None),
        *[(0, "Pod", f"lp-js-rj-{j}-{i}", "Scheduled", f"worker-{2 * j + i}") for j in (0, 1) for i in (0, 1)],
    ]
    at_ten = [e for e in timeline if e[0] == 10]
    assert at_ten[:5] == [
        (10, "PodGroup", "lp-abc-workers-def", "Preempted", by),
        *[(10, "Pod", f"lp-js-rj-{j}-{i}", "Preempted", f"{by} on node worker-{2 * j + i}")
          for j in (0, 1) for i in (0, 1)],
    ]
    hp_scheduled = [e for e in at_ten if e[3] == "Scheduled"]
    assert hp_scheduled == [
        (10, "PodGroup", "hp-abc-workers-def", "Scheduled", None),
        *[(10, "Pod", f"hp-js-rj-{j}-{i}", "Scheduled", f"worker-{2 * j + i}") for j in (0, 1) for i in (0, 1)],
    ]
    lp = sim.api.get("scheduling.k8s.io", "PodGroup", "default", "lp-abc-workers-def")
    assert sim.condition(lp, "DisruptionTarget")["reason"] == "PreemptionByScheduler"  # type: ignore[arg-type,index]
