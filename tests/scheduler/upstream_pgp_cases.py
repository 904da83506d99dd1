"""The entries of upstream's ``TestPodGroupPreemption`` (test/integration/scheduler/preemption/
podgrouppreemption_test.go, read at commit 00a3e521) as Scenarios (see :mod:`tests.scheduler.upstream`).

Each builder adds the entry's objects to a :class:`Case`; :data:`EXPECTED` holds what upstream asserts
(``expectedScheduled``, ``expectedCandidatesForPreemption``, ``expectedUnschedulable``,
``expectedPodsPreemptedByWAP``). Entries upstream writes with a custom Score/Reserve plugin, a
PodDisruptionBudget, a host port or a topology spread constraint are in :data:`LEFT_OUT` with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tests.scheduler.upstream import Case


@dataclass(frozen=True)
class Expected:
    scheduled: frozenset[str]
    preempted: frozenset[str] = frozenset()
    unschedulable: frozenset[str] = frozenset()
    #: Victims whose Kubernetes Event says ``Preempted by podgroup ...`` (expectedPodsPreemptedByWAP).
    by_podgroup: int = 0
    gates: dict[str, bool] = field(default_factory=dict)
    #: Entries that only count the victims: they are ``by_podgroup`` of these (the others keep running).
    victim_of: frozenset[str] = frozenset()

    def check(self, running: set[str], preempted: set[str], pending: set[str], by_podgroup: int) -> None:
        if self.victim_of:
            assert preempted <= self.victim_of and len(preempted) == self.by_podgroup, preempted
            assert running == self.scheduled | (self.victim_of - preempted), running
        else:
            assert (running, preempted) == (self.scheduled, self.preempted)
        assert pending == self.unschedulable
        assert by_podgroup == self.by_podgroup


def _names(*names: str) -> frozenset[str]:
    return frozenset(names)


def full(case: Case, basic: bool = False) -> None:
    case.node("node1", "3")
    for i in (1, 2, 3):
        case.pod(f"low-{i}", "1", 10, at=0)
    case.podgroup("pg1", None if basic else 3, priority=100)
    for i in (1, 2, 3):
        case.pod(f"high-{i}", "1", 100, group="pg1")


def multi_node(case: Case) -> None:
    case.node("node1", "2")
    case.node("node2", "2")
    for i, node in ((1, "node1"), (2, "node1"), (3, "node2"), (4, "node2")):
        case.pod(f"low-{i}", "1", 10, node=node, at=0)
    case.podgroup("pg1", 4, priority=100)
    for i in (1, 2, 3, 4):
        case.pod(f"high-{i}", "1", 100, group="pg1")


def insufficient(case: Case) -> None:
    case.node("node1", "3")
    case.pod("mid-1", "1", 500, at=0)
    case.pod("low-1", "1", 10, at=0)
    case.pod("low-2", "1", 10, at=0)
    case.podgroup("pg1", 3, priority=100)
    for i in (1, 2, 3):
        case.pod(f"high-{i}", "1", 100, group="pg1")


def priority_based(case: Case) -> None:
    case.node("node1", "3")
    case.pod("mid-1", "1", 50, at=0)
    case.pod("low-1", "1", 10, at=0)
    case.pod("low-2", "1", 10, at=0)
    case.podgroup("pg1", 2, priority=100)
    for i in (1, 2):
        case.pod(f"high-{i}", "1", 100, group="pg1")


def whole_group(case: Case, victim_basic: bool = False) -> None:
    case.node("node1", "3")
    case.podgroup("pg2", None if victim_basic else 3, priority=10, all_mode=True, at=0)
    for i in (1, 2, 3):
        case.pod(f"low-{i}", "1", 10, group="pg2", at=0)
    case.podgroup("pg1", 1, priority=100)
    case.pod("high-1", "1", 100, group="pg1")


def single_victims(case: Case, preemptor_basic: bool, victim_min: int | None) -> None:
    case.node("node1", "3")
    case.podgroup("victim-pg", victim_min, priority=10, at=0)
    for i in (1, 2, 3):
        case.pod(f"low-{i}", "1", 10, group="victim-pg", at=0)
    case.podgroup("preemptor-pg", None if preemptor_basic else 1, priority=100)
    case.pod("high-1", "1", 100, group="preemptor-pg")


def as_many_as_possible(case: Case, basic: bool = False) -> None:
    for i in (1, 2, 3, 4):
        case.node(f"node{i}", "1")
    case.pod("p1", "1", 10, node="node1", at=0)
    case.pod("p2", "1", 10, node="node2", at=0)
    case.pod("p3", "1", 200, node="node3", at=0)
    case.pod("p4", "1", 200, node="node4", at=0)
    case.podgroup("preemptor-pg", None if basic else 1, priority=100)
    for name in ("p-a", "p-b", "p-c"):
        case.pod(name, "1", 100, group="preemptor-pg")


def no_reprieve(case: Case, basic: bool = False) -> None:
    for i in (1, 2, 3):
        case.node(f"node{i}", "1")
    case.podgroup("victim-pg", 1, priority=50, all_mode=True, at=0)
    case.pod("v1", "1", 50, group="victim-pg", node="node1", at=0)
    case.pod("v2", "1", 50, group="victim-pg", node="node2", at=0)
    case.pod("v3", "1", 10, node="node3", at=0)
    case.podgroup("preemptor-pg", None if basic else 3, priority=100)
    for name in ("p-a", "p-b", "p-c"):
        case.pod(name, "1", 100, group="preemptor-pg")


def partial_victim(case: Case, basic: bool = False) -> None:
    for i in (1, 2, 3, 4):
        case.node(f"node{i}", "1")
    case.podgroup("victim-pg", 2, priority=50, all_mode=True, at=0)
    case.pod("v1", "1", 50, group="victim-pg", node="node1", at=0)
    case.pod("v2", "1", 50, group="victim-pg", node="node2", at=0)
    case.podgroup("victim-pg2", 2, priority=200, all_mode=True, at=0)
    case.pod("v3", "1", 200, group="victim-pg2", node="node3", at=0)
    case.pod("v4", "1", 200, group="victim-pg2", node="node4", at=0)
    case.podgroup("preemptor-pg", None if basic else 1, priority=100, all_mode=True)
    for name in ("p-a", "p-b", "p-c"):
        case.pod(name, "1", 100, group="preemptor-pg")


def policy(case: Case, group_never: bool | None, pods_never: bool) -> None:
    case.node("node1", "3")
    for i in (1, 2, 3):
        case.pod(f"low-{i}", "1", 10, at=0)
    case.podgroup("pg1", 3, priority=100, never=group_never)
    for i in (1, 2, 3):
        case.pod(f"high-{i}", "1", 100, group="pg1", never=pods_never)


def node_resources(case: Case) -> None:
    case.node("node1", "2")
    case.node("node2", "2")
    case.pod("initial-pod", "2", 10, node="node1", labels={"app": "initial"}, at=0)
    case.podgroup("preemptor-pg", 2, priority=100)
    case.pod("preemptor-1", "2", 100, group="preemptor-pg")
    case.pod("preemptor-2", "2", 100, group="preemptor-pg")


def reprieve_higher(case: Case) -> None:
    case.node("node1", "2")
    case.node("node2", "2")
    case.pod("initial-pod-1", "1", 5, node="node1", at=0)
    case.pod("initial-pod-2", "1", 10, node="node1", at=0)
    case.podgroup("preemptor-pg", 2, priority=100)
    case.pod("preemptor-1", "1", 100, group="preemptor-pg", on="node1")
    case.pod("preemptor-2", "1", 100, group="preemptor-pg", on="node2")


def anti_affinity(case: Case) -> None:
    case.node("node1", "2")
    case.node("node2", "2")
    case.pod("initial-pod", "250m", 10, node="node1", labels={"app": "initial"}, at=0)
    case.podgroup("preemptor-pg", 2, priority=100)
    case.pod("preemptor-1", "1500m", 100, group="preemptor-pg", anti="app")
    case.pod("preemptor-2", "1500m", 100, group="preemptor-pg", anti="app")


def bind_first(case: Case, basic: bool = False) -> None:
    case.node("node1", "4")
    case.podgroup("pg1", None if basic else 2, priority=100, at=0)
    case.pod("pg-pod-1", "1", 100, group="pg1", at=0)
    case.pod("pg-pod-2", "1", 100, group="pg1", at=0)
    case.pod("low-1", "1", 10, at=0)
    case.pod("high-1", "1", 100, group="pg1")
    case.pod("high-2", "1", 100, group="pg1")


def topology_single(case: Case, second_zone: bool = False) -> None:
    case.node("node1", "1", {"topology-key": "zone1"})
    case.node("node2", "1", {"topology-key": "zone1"})
    case.pod("low-1", "1", 10, node="node1", at=0)
    case.pod("low-2", "1", 10, node="node2", at=0)
    if second_zone:
        case.node("node3", "1", {"topology-key": "zone2"})
        case.node("node4", "1", {"topology-key": "zone2"})
        case.pod("high-priority-initial-1", "1", 200, node="node3", at=0)
        case.pod("high-priority-initial-2", "1", 200, node="node4", at=0)
    case.podgroup("pg1", 2, priority=100, topology="topology-key")
    case.pod("high-1", "1", 100, group="pg1")
    case.pod("high-2", "1", 100, group="pg1")


def topology_insufficient(case: Case) -> None:
    case.node("node1", "1", {"topology-key": "zone1"})
    case.node("node2", "1", {"topology-key": "zone1"})
    case.node("node3", "1", {"topology-key": "zone2"})
    case.node("node4", "1", {"topology-key": "zone2"})
    case.pod("low-1", "1", 10, node="node1", at=0)
    case.pod("high-priority-initial-1", "1", 200, node="node2", at=0)
    case.pod("low-2", "1", 10, node="node3", at=0)
    case.pod("high-priority-initial-2", "1", 200, node="node4", at=0)
    case.podgroup("pg1", 2, priority=100, topology="topology-key")
    case.pod("high-1", "1", 100, group="pg1")
    case.pod("high-2", "1", 100, group="pg1")


def victim_aware_across_nodes(case: Case) -> None:
    for i in (1, 2, 3):
        case.node(f"node{i}", "2")
    case.podgroup("pg-victim", 2, priority=10, all_mode=True, at=0)
    case.pod("v-pg1-1", "2", 10, group="pg-victim", node="node1", at=0)
    case.pod("v-pg1-2", "2", 10, group="pg-victim", node="node2", at=0)
    case.pod("v-high", "2", 20, node="node3", at=0)
    case.podgroup("pg-preemptor", 2, priority=100)
    case.pod("p1", "2", 100, group="pg-preemptor")
    case.pod("p2", "2", 100, group="pg-preemptor")


def victim_aware_large(case: Case) -> None:
    case.node("node1", "4")
    case.node("node2", "4")
    case.pod("v-large", "4", 10, node="node1", at=0)
    case.podgroup("pg-victim", 2, priority=10, all_mode=True, at=0)
    case.pod("v-med-1", "2", 10, group="pg-victim", node="node2", at=0)
    case.pod("v-med-2", "2", 10, group="pg-victim", node="node2", at=0)
    case.podgroup("pg-preemptor", 2, priority=100)
    case.pod("p1", "2", 100, group="pg-preemptor")
    case.pod("p2", "2", 100, group="pg-preemptor")


POLICY_GATE = {"PodGroupPreemptionPolicy": True}
HIGHS3 = _names("high-1", "high-2", "high-3")
LOWS3 = _names("low-1", "low-2", "low-3")

#: upstream entry name -> (builder, what upstream expects)
ENTRIES: dict[str, tuple[Callable[[Case], None], Expected]] = {
    "Full PodGroup Preemption": (full, Expected(HIGHS3, LOWS3, by_podgroup=3)),
    "Full PodGroup Preemption for basic policy": (lambda c: full(c, basic=True), Expected(HIGHS3, LOWS3, by_podgroup=3)),
    "Multi-node Preemption": (multi_node, Expected(_names("high-1", "high-2", "high-3", "high-4"),
                                                   _names("low-1", "low-2", "low-3", "low-4"), by_podgroup=4)),
    "Insufficient Resources (No Preemption)": (insufficient, Expected(_names("mid-1", "low-1", "low-2"),
                                                                      unschedulable=HIGHS3)),
    "Priority-based Victim Selection": (priority_based, Expected(_names("high-1", "high-2", "mid-1"),
                                                                 _names("low-1", "low-2"), by_podgroup=2)),
    "Preempt the whole PodGroup even if preempting a single Pod would suffice": (
        whole_group, Expected(_names("high-1"), LOWS3, by_podgroup=3)),
    "Preempt the whole basic PodGroup with a PodGroup disruption mode": (
        lambda c: whole_group(c, victim_basic=True), Expected(_names("high-1"), LOWS3, by_podgroup=3)),
    "Preempt a single Pod from a PodGroup with DisruptionModeSingle by the higher priority gang PodGroup": (
        lambda c: single_victims(c, False, 2), Expected(_names("high-1"), by_podgroup=1, victim_of=LOWS3)),
    "Preempt a single Pod from a PodGroup with DisruptionModeSingle even below mincount": (
        lambda c: single_victims(c, False, 3), Expected(_names("high-1"), by_podgroup=1, victim_of=LOWS3)),
    "Preempt a single Pod from a PodGroup with DisruptionModeSingle by higher priority basic PodGroup": (
        lambda c: single_victims(c, True, 2), Expected(_names("high-1"), by_podgroup=1, victim_of=LOWS3)),
    "Preempt a single Pod from a basic PodGroup with DisruptionModeSingle by gang PodGroup": (
        lambda c: single_victims(c, False, None), Expected(_names("high-1"), by_podgroup=1, victim_of=LOWS3)),
    "Preempt a single Pod from a basic PodGroup with DisruptionModeSingle by basic PodGroup": (
        lambda c: single_victims(c, True, None), Expected(_names("high-1"), by_podgroup=1, victim_of=LOWS3)),
    "Gang scheduling: schedule as many pods as possible without preempting higher priority pods, but still more "
    "than minCount": (as_many_as_possible, Expected(_names("p-a", "p-b", "p3", "p4"), _names("p1", "p2"),
                                                     _names("p-c"), by_podgroup=2)),
    "Gang scheduling: do not reprieve victim pod group of lower priority": (
        no_reprieve, Expected(_names("p-a", "p-b", "p-c"), _names("v1", "v2", "v3"), by_podgroup=3)),
    "Gang scheduling: preempt a pod group victim but do not schedule full pod group": (
        partial_victim, Expected(_names("p-a", "p-b", "v3", "v4"), _names("v1", "v2"), _names("p-c"), by_podgroup=2)),
    "Basic scheduling: schedule as many pods as possible without preempting higher priority pods": (
        lambda c: as_many_as_possible(c, basic=True),
        Expected(_names("p-a", "p-b", "p3", "p4"), _names("p1", "p2"), _names("p-c"), by_podgroup=2)),
    "Basic scheduling: do not reprieve victim pod group of lower priority": (
        lambda c: no_reprieve(c, basic=True), Expected(_names("p-a", "p-b", "p-c"), _names("v1", "v2", "v3"),
                                                       by_podgroup=3)),
    "Basic scheduling: preempt a pod group victim but do not schedule full pod group": (
        lambda c: partial_victim(c, basic=True),
        Expected(_names("p-a", "p-b", "v3", "v4"), _names("v1", "v2"), _names("p-c"), by_podgroup=2)),
    "PodGroup with PreemptNever preemption policy does not perform preemption, with PodGroupPreemptionPolicy "
    "enabled": (lambda c: policy(c, True, True), Expected(LOWS3, unschedulable=HIGHS3, gates=POLICY_GATE)),
    "PodGroup with PreemptLowerPriority preemption policy performs preemption, with PodGroupPreemptionPolicy "
    "enabled": (lambda c: policy(c, False, False), Expected(HIGHS3, LOWS3, by_podgroup=3, gates=POLICY_GATE)),
    "PodGroup with default preemption policy performs preemption, with PodGroupPreemptionPolicy enabled": (
        lambda c: policy(c, None, False), Expected(HIGHS3, LOWS3, by_podgroup=3, gates=POLICY_GATE)),
    "PodGroup with PreemptNever preemption policy in all pods does not perform preemption, with "
    "PodGroupPreemptionPolicy disabled": (lambda c: policy(c, None, True), Expected(LOWS3, unschedulable=HIGHS3)),
    "Gang scheduling: preemption with node resources": (
        node_resources, Expected(_names("preemptor-1", "preemptor-2"), _names("initial-pod"), by_podgroup=1)),
    "Gang scheduling: preemption with node resources, prioritizes reprieval of higher priority pods": (
        reprieve_higher, Expected(_names("preemptor-1", "preemptor-2", "initial-pod-2"), _names("initial-pod-1"),
                                  by_podgroup=1)),
    "Gang scheduling: preemption with pod anti-affinity constraints": (
        anti_affinity, Expected(_names("preemptor-1", "preemptor-2"), _names("initial-pod"), by_podgroup=1)),
    "Binding first before preemption for gang policy": (
        bind_first, Expected(_names("pg-pod-1", "pg-pod-2", "high-1", "high-2"), _names("low-1"), by_podgroup=1)),
    "Binding first before preemption for basic policy": (
        lambda c: bind_first(c, basic=True),
        Expected(_names("pg-pod-1", "pg-pod-2", "high-1", "high-2"), _names("low-1"), by_podgroup=1)),
    "Topology-Aware Preemption: single topology domain": (
        topology_single, Expected(_names("high-1", "high-2"), _names("low-1", "low-2"), by_podgroup=2)),
    "Topology-Aware Preemption: two topologies, only one eligible": (
        lambda c: topology_single(c, second_zone=True),
        Expected(_names("high-1", "high-2", "high-priority-initial-1", "high-priority-initial-2"),
                 _names("low-1", "low-2"), by_podgroup=2)),
    "Topology-Aware Preemption: insufficient capacity across all topologies, no preemption performed": (
        topology_insufficient, Expected(_names("low-1", "low-2", "high-priority-initial-1", "high-priority-initial-2"),
                                        unschedulable=_names("high-1", "high-2"))),
    "Victim-aware scoring: reuse capacity freed across nodes by DisruptionModeAll PodGroup victim": (
        victim_aware_across_nodes, Expected(_names("p1", "p2", "v-high"), _names("v-pg1-1", "v-pg1-2"),
                                            by_podgroup=2)),
    "Victim-aware scoring: reuse leftover capacity from large victim on same node": (
        victim_aware_large, Expected(_names("p1", "p2", "v-med-1", "v-med-2"), _names("v-large"), by_podgroup=1)),
}

#: upstream entry name -> why the Scenario format cannot express it.
LEFT_OUT: dict[str, str] = {
    "Partial Preemption": "a custom Score plugin favours node1",
    "Partial Preemption with basic policy": "a custom Score plugin favours node1",
    "PDB Violation Handling (Reprieve)": "PodDisruptionBudgets are not modelled",
    "Gang scheduling: preemption with pod level resources": "the entry's setup was not read within the look-up "
                                                              "budget (pod-level resources themselves are modelled)",
    "Gang scheduling: preemption with pod node port": "host ports (the NodePorts plugin) are not modelled",
    "Gang scheduling: preemption with pod topology spread constraints": "PodTopologySpread is not modelled",
    "Gang scheduling: preemption with pod topology spread constraints, single reprieve":
        "PodTopologySpread is not modelled",
    "Reserve plugins are called during preemption simulation, so second pod fails": "a custom Reserve plugin",
    "Topology-Aware Preemption: two topologies, both eligible, selects higher scored topology":
        "a custom Score plugin favours zone2",
}
