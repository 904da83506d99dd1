"""Preemption with CompositePodGroups, from upstream's integration tests, as Scenarios
(see :mod:`tests.scheduler.upstream` and :class:`tests.scheduler.upstream_pgp_cases.Expected`):

* ``TestCompositePodGroupPreemption`` (test/integration/scheduler/preemption/podgrouppreemption_test.go,
  commit 00a3e521): :data:`COMPOSITE`;
* preemption/podgroup/multitier_gang_preemption_test.go (commit 6eb7e283):
  ``TestMultiTierCompositePodGroupPreemption_NestedDisruptionModes``,
  ``TestPartialGangPreemption_PodGroupAndCompositePodGroup`` and
  ``TestCompositePodGroupPreemption_CyclicReferencesAndEdgeCases``: :data:`MULTITIER`.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.scheduler.upstream import Case
from tests.scheduler.upstream_pgp_cases import Expected, _names


def _victim_tree(case: Case, root_all: bool, child_all: bool) -> None:
    """cpg1 over pg1 (low-1 on node1, low-2 on node2) and pg2 (low-3 on node2)."""
    case.node("node1", "2")
    case.node("node2", "2")
    case.cpg("cpg1", priority=10, all_mode=root_all, at=0)
    case.podgroup("pg1", 2, priority=10, parent="cpg1", all_mode=child_all, at=0)
    case.podgroup("pg2", 1, priority=10, parent="cpg1", all_mode=child_all, at=0)
    case.pod("low-1", "1", 10, group="pg1", node="node1", at=0)
    case.pod("low-2", "1", 10, group="pg1", node="node2", at=0)
    case.pod("low-3", "1", 10, group="pg2", node="node2", at=0)
    case.pod("high-1", "2", 100, on="node1")


def aborted(case: Case) -> None:
    case.node("node1", "2")
    case.cpg("cpg-victim", priority=10, at=0)
    case.podgroup("pg-victim", 1, priority=10, parent="cpg-victim", at=0)
    case.pod("low-pod", "1", 10, group="pg-victim", node="node1", at=0)
    case.pod("high-preemptor", "3", 100)


def tie_breaking(case: Case) -> None:
    case.node("node1", "2")
    case.cpg("cpg-victim", priority=10, all_mode=True, workload="wl1", at=0)
    case.podgroup("pg-victim-standalone", 1, priority=10, workload="wl2", at=0)
    case.podgroup("pg-victim-child", 1, priority=10, parent="cpg-victim", workload="wl1", at=0)
    case.pod("low-pg", "1", 10, group="pg-victim-standalone", node="node1", at=0)
    case.pod("low-cpg", "1", 10, group="pg-victim-child", node="node1", at=0)
    case.podgroup("pg-preemptor", 1, priority=100, workload="wl3")
    case.pod("high-preemptor", "1", 100, group="pg-preemptor")


def lower_cpg(case: Case) -> None:
    case.node("node1", "3")
    case.cpg("cpg-lower", priority=10, workload="wl1", at=0)
    case.cpg("cpg-higher", priority=20, workload="wl2", at=0)
    case.podgroup("pg-lower", 1, priority=10, parent="cpg-lower", workload="wl1", at=0)
    case.podgroup("pg-higher", 1, priority=20, parent="cpg-higher", workload="wl2", at=0)
    case.pod("lower-pod", "1", 10, group="pg-lower", node="node1", at=0)
    case.pod("higher-pod", "1", 20, group="pg-higher", node="node1", at=0)
    case.pod("high-preemptor", "2", 100)


def nested_modes(case: Case, grandparent_all: bool) -> None:
    case.node("node1", "2")
    case.node("node2", "2")
    case.cpg("cpg-grandparent", priority=10, all_mode=grandparent_all, at=0)
    case.cpg("cpg-parent", priority=10, all_mode=not grandparent_all, parent="cpg-grandparent", at=0)
    case.podgroup("pg1", 2, priority=10, parent="cpg-parent", at=0)
    case.podgroup("pg2", 1, priority=10, parent="cpg-parent" if grandparent_all else "cpg-grandparent", at=0)
    case.pod("low-1", "1", 10, group="pg1", node="node1", at=0)
    case.pod("low-2", "1", 10, group="pg1", node="node2", at=0)
    case.pod("low-3", "1", 10, group="pg2", node="node2", at=0)
    case.pod("high-1", "2", 100, on="node1")


def composite_policy(case: Case, never: bool | None, pods_never: bool) -> None:
    case.node("node1", "3")
    for i in (1, 2, 3):
        case.pod(f"low-{i}", "1", 10, at=0)
    case.cpg("cpg1", priority=100, never=never)
    case.podgroup("pg1", 2 if never is not None else 3, priority=100, parent="cpg1", never=never)
    if never is not None:
        case.podgroup("pg2", 1, priority=100, parent="cpg1", never=never)
    for i, group in ((1, "pg1"), (2, "pg1"), (3, "pg2" if never is not None else "pg1")):
        case.pod(f"high-{i}", "1", 100, group=group, never=pods_never)


def composite_policy_sizes(case: Case, never: bool) -> None:
    case.node("node1", "3")
    for i in (1, 2, 3):
        case.pod(f"low-{i}", "1", 10, node="node1", at=0)
    case.cpg("cpg1", priority=100, never=never)
    case.podgroup("pg1", 2, priority=100, parent="cpg1", never=never)
    case.pod("high-1", "2", 100, group="pg1", never=never)
    case.pod("high-2", "1", 100, group="pg1", never=never)


def composite_anti_affinity(case: Case) -> None:
    case.node("node1", "2")
    case.node("node2", "2")
    case.pod("initial-pod", "250m", 10, node="node1", labels={"app": "initial"}, at=0)
    case.cpg("preemptor-cpg", priority=100)
    case.podgroup("preemptor-pg", 2, priority=100, parent="preemptor-cpg")
    case.pod("preemptor-1", "1500m", 100, group="preemptor-pg", anti="app")
    case.pod("preemptor-2", "1500m", 100, group="preemptor-pg", anti="app")


def composite_bind_first(case: Case, gang: bool) -> None:
    case.node("node1", "2")
    case.node("node2", "2")
    case.cpg("cpg-victim", 1 if gang else None, priority=10, workload="wl1", at=0)
    case.podgroup("pg-victim", 4, priority=10, parent="cpg-victim", workload="wl1", at=0)
    case.pod("low-1", "1", 10, group="pg-victim", node="node1", at=0)
    case.pod("low-2", "1", 10, group="pg-victim", node="node2", at=0)
    case.cpg("cpg-preemptor", 1 if gang else None, priority=100, workload="wl2")
    case.podgroup("pg-preemptor", 4, priority=100, parent="cpg-preemptor", workload="wl2")
    for i in (1, 2, 3, 4):
        case.pod(f"high-{i}", "1", 100, group="pg-preemptor")


def missing_parent(case: Case) -> None:
    case.node("node1", "2")
    case.cpg("cpg-victim", priority=10, workload="wl1", at=0)
    case.podgroup("pg-victim", 2, priority=10, parent="cpg-victim", workload="wl1", at=0)
    case.pod("low-1", "1", 10, group="pg-victim", node="node1", at=0)
    case.pod("low-2", "1", 10, group="pg-victim", node="node1", at=0)
    case.delete("CompositePodGroup", "cpg-victim", at=1)
    case.cpg("cpg-preemptor", priority=100, workload="wl2", at=2)
    case.podgroup("pg-preemptor", 2, priority=100, parent="cpg-preemptor", workload="wl2", at=2)
    case.pod("high-1", "1", 100, group="pg-preemptor", at=2)
    case.pod("high-2", "1", 100, group="pg-preemptor", at=2)


POLICY = {"PodGroupPreemptionPolicy": True}
HIGHS3 = _names("high-1", "high-2", "high-3")
LOWS3 = _names("low-1", "low-2", "low-3")

COMPOSITE: dict[str, tuple[Callable[[Case], None], Expected]] = {
    "CPG Victim Across Multiple Nodes, CPG DisruptionModeAll": (
        lambda c: _victim_tree(c, True, False), Expected(_names("high-1"), LOWS3)),
    "CPG Victim Across Multiple Nodes, CPG DisruptionModeSingle": (
        lambda c: _victim_tree(c, False, False), Expected(_names("high-1", "low-2", "low-3"), _names("low-1"))),
    "CPG Preemption aborted if victim yields insufficient resources": (
        aborted, Expected(_names("low-pod"), unschedulable=_names("high-preemptor"))),
    "CPG Tie-Breaking: PodGroup chosen over CompositePodGroup": (
        tie_breaking, Expected(_names("high-preemptor", "low-cpg"), _names("low-pg"), by_podgroup=1)),
    "Scheduler targets lower-priority CPG over higher-priority CPG": (
        lower_cpg, Expected(_names("high-preemptor", "higher-pod"), _names("lower-pod"))),
    "3-Level Nested CPG resolves DisruptionMode up to the grandparent": (
        lambda c: nested_modes(c, True), Expected(_names("high-1"), LOWS3)),
    "Hierarchical DisruptionMode - Grandparent Single, Parent All": (
        lambda c: nested_modes(c, False), Expected(_names("high-1", "low-3"), _names("low-1", "low-2"))),
    "CPG with default preemption policy performs preemption, with PodGroupPreemptionPolicy enabled": (
        lambda c: composite_policy(c, None, False), Expected(HIGHS3, LOWS3, gates=POLICY)),
    "CPG with PreemptNever Policy": (
        lambda c: composite_policy(c, True, True), Expected(LOWS3, unschedulable=HIGHS3, gates=POLICY)),
    "CPG with PreemptLowerPriority Policy": (
        lambda c: composite_policy(c, False, False), Expected(HIGHS3, LOWS3, gates=POLICY)),
    "CPG PreemptionPolicy PreemptNever prevents preemption": (
        lambda c: composite_policy_sizes(c, True), Expected(LOWS3, unschedulable=_names("high-1", "high-2"),
                                                            gates=POLICY)),
    "CPG PreemptionPolicy PreemptLowerPriority allows preemption": (
        lambda c: composite_policy_sizes(c, False), Expected(_names("high-1", "high-2"), LOWS3, gates=POLICY)),
    "CPG with PreemptNever preemption policy in all pods does not perform preemption, with "
    "PodGroupPreemptionPolicy disabled": (lambda c: composite_policy(c, None, True),
                                          Expected(LOWS3, unschedulable=HIGHS3)),
    "CPG Gang scheduling: preemption with pod anti-affinity constraints": (
        composite_anti_affinity, Expected(_names("preemptor-1", "preemptor-2"), _names("initial-pod"))),
    "Binding first before preemption for gang policy (CompositePodGroup)": (
        lambda c: composite_bind_first(c, True),
        Expected(_names("high-1", "high-2", "high-3", "high-4"), _names("low-1", "low-2"))),
    "Binding first before preemption for CompositePodGroup": (
        lambda c: composite_bind_first(c, False),
        Expected(_names("high-1", "high-2", "high-3", "high-4"), _names("low-1", "low-2"))),
    "CPG Missing Parent Reference Fallback": (
        missing_parent, Expected(_names("high-1", "high-2"), _names("low-1", "low-2"))),
}

COMPOSITE_LEFT_OUT: dict[str, str] = {
    "CPG Partial Preemption": "a custom Score plugin favours node1",
    "PDB Violation reprieves the entire CPG victim (DisruptionModeAll)": "PodDisruptionBudgets are not modelled",
    "PDB Violation reprieves only the child PG (DisruptionModeSingle)": "PodDisruptionBudgets are not modelled",
    "CPG Gang scheduling: preemption with pod node port": "host ports (the NodePorts plugin) are not modelled",
    "Reserve plugins are called during preemption simulation, so second pod fails (CompositePodGroup)":
        "a custom Reserve plugin",
}


# ---- multitier_gang_preemption_test.go -----------------------------------------------------------------


def _preemptor_tree(case: Case) -> None:
    case.cpg("cpg-preemptor", priority=100, workload="wl-preemptor")
    case.podgroup("pg-preemptor", 1, priority=100, parent="cpg-preemptor", workload="wl-preemptor")
    case.pod("preemptor-1", "2", 100, group="pg-preemptor", on="node1")


def three_tier_mid_all(case: Case) -> None:
    for i in (1, 2, 3):
        case.node(f"node{i}", "2")
    case.cpg("cpg-root", priority=10, at=0)
    case.cpg("cpg-mid-a", priority=10, all_mode=True, parent="cpg-root", at=0)
    case.cpg("cpg-mid-b", priority=10, parent="cpg-root", at=0)
    case.podgroup("pg-a1", 1, priority=10, parent="cpg-mid-a", at=0)
    case.podgroup("pg-a2", 1, priority=10, parent="cpg-mid-a", at=0)
    case.podgroup("pg-b1", 1, priority=10, parent="cpg-mid-b", at=0)
    case.pod("victim-a1", "2", 10, group="pg-a1", node="node1", at=0)
    case.pod("victim-a2", "2", 10, group="pg-a2", node="node2", at=0)
    case.pod("victim-b1", "2", 10, group="pg-b1", node="node3", at=0)
    _preemptor_tree(case)


def three_tier_leaf_all(case: Case) -> None:
    for i in (1, 2, 3):
        case.node(f"node{i}", "2")
    case.cpg("cpg-root", priority=10, at=0)
    case.cpg("cpg-mid-a", priority=10, parent="cpg-root", at=0)
    case.cpg("cpg-mid-b", priority=10, parent="cpg-root", at=0)
    case.podgroup("pg-a1", 2, priority=10, all_mode=True, parent="cpg-mid-a", at=0)
    case.podgroup("pg-a2", 1, priority=10, parent="cpg-mid-a", at=0)
    case.podgroup("pg-b1", 1, priority=10, parent="cpg-mid-b", at=0)
    case.pod("victim-a1-1", "1", 10, group="pg-a1", node="node1", at=0)
    case.pod("victim-a1-2", "1", 10, group="pg-a1", node="node2", at=0)
    case.pod("victim-a2-1", "1", 10, group="pg-a2", node="node2", at=0)
    case.pod("victim-filler-1", "1", 10, node="node1", at=0)
    case.pod("victim-b1", "2", 10, group="pg-b1", node="node3", at=0)
    _preemptor_tree(case)


def three_tier_root_all(case: Case) -> None:
    case.node("node1", "2")
    case.node("node2", "2")
    case.cpg("cpg-root", priority=10, all_mode=True, at=0)
    case.cpg("cpg-mid-a", priority=10, parent="cpg-root", at=0)
    case.cpg("cpg-mid-b", priority=10, parent="cpg-root", at=0)
    case.podgroup("pg-a1", 1, priority=10, parent="cpg-mid-a", at=0)
    case.podgroup("pg-b1", 1, priority=10, parent="cpg-mid-b", at=0)
    case.pod("victim-a1", "2", 10, group="pg-a1", node="node1", at=0)
    case.pod("victim-b1", "2", 10, group="pg-b1", node="node2", at=0)
    _preemptor_tree(case)


def partial_gang(case: Case) -> None:
    for i in (1, 2, 3):
        case.node(f"node{i}", "2")
        case.podgroup(f"pg-victim-{i}", 1, priority=10, at=0)
        case.pod(f"victim-{i}", "2", 10, group=f"pg-victim-{i}", node=f"node{i}", at=0)
    case.podgroup("pg-preemptor-gang", 2, priority=100)
    case.pod("preemptor-1", "2", 100, group="pg-preemptor-gang", on="node1")
    case.pod("preemptor-2", "2", 100, group="pg-preemptor-gang", on="node2")
    case.pod("preemptor-3", "2", 100, group="pg-preemptor-gang", on="node1")


def partial_composite_gang(case: Case) -> None:
    for i in (1, 2):
        case.node(f"node{i}", "2")
        case.podgroup(f"pg-victim-{i}", 1, priority=10, at=0)
        case.pod(f"victim-{i}", "2", 10, group=f"pg-victim-{i}", node=f"node{i}", at=0)
    case.cpg("cpg-preemptor-cgang", 1, priority=100)
    case.podgroup("pg-child-1", 1, priority=100, parent="cpg-preemptor-cgang")
    case.podgroup("pg-child-2", 2, priority=100, parent="cpg-preemptor-cgang")
    case.pod("c-preemptor-1", "2", 100, group="pg-child-1", on="node1")
    case.pod("c-preemptor-2a", "2", 100, group="pg-child-2", on="node2")
    case.pod("c-preemptor-2b", "2", 100, group="pg-child-2", on="node2")


def cyclic(case: Case, parents: dict[str, str], group_parent: str | None) -> None:
    case.node("node1", "2")
    for name, parent in parents.items():
        case.cpg(name, priority=10, parent=parent, at=0)
    case.podgroup("pg-edge", 1, priority=10, parent=group_parent, workload="wl", at=0)
    case.pod("victim", "2", 10, group="pg-edge", node="node1", at=0)
    case.pod("preemptor", "2", 100)
    case.pod("independent-pod", "0", 50, at=2)


MULTITIER: dict[str, tuple[Callable[[Case], None], Expected]] = {
    "3-Tier Hierarchy: Intermediate CPG has DisruptionModeAll, Root CPG and Leaf PGs have DisruptionModeSingle - "
    "only intermediate subtree is evicted": (
        three_tier_mid_all, Expected(_names("preemptor-1", "victim-b1"), _names("victim-a1", "victim-a2"))),
    "3-Tier Hierarchy: Leaf PG has DisruptionModeAll, Root CPG and Mid CPG have DisruptionModeSingle - only leaf "
    "PG pods are evicted": (
        three_tier_leaf_all, Expected(_names("preemptor-1", "victim-a2-1", "victim-b1"),
                                      _names("victim-a1-1", "victim-a1-2", "victim-filler-1"))),
    "3-Tier Hierarchy: Root CPG has DisruptionModeAll, Mid CPGs and Leaf PGs have DisruptionModeSingle - entire "
    "3-tier tree is evicted atomically": (
        three_tier_root_all, Expected(_names("preemptor-1"), _names("victim-a1", "victim-b1"))),
    "Partial PodGroup Gang Preemption: MinCount=2 with 3 preemptor pods, 3rd pod cannot fit - only victims for "
    "MinCount are evicted": (
        partial_gang, Expected(_names("preemptor-1", "preemptor-2", "victim-3"), _names("victim-1", "victim-2"),
                               _names("preemptor-3"))),
    "Partial CompositePodGroup Gang Preemption: MinGroupCount=1 with 2 child PGs, 2nd child PG cannot fit": (
        partial_composite_gang, Expected(_names("c-preemptor-1", "victim-2"), _names("victim-1"),
                                         _names("c-preemptor-2a", "c-preemptor-2b"))),
    "Cyclic CompositePodGroup references during preemption dry-run ancestor traversal": (
        lambda c: cyclic(c, {"cpg-cycle-a": "cpg-cycle-b", "cpg-cycle-b": "cpg-cycle-a"}, "cpg-cycle-a"),
        Expected(_names("preemptor", "independent-pod"), _names("victim"))),
    "Multi-level loop reference in CompositePodGroup hierarchy": (
        lambda c: cyclic(c, {"cpg-loop-1": "cpg-loop-2", "cpg-loop-2": "cpg-loop-3", "cpg-loop-3": "cpg-loop-1"},
                         "cpg-loop-1"),
        Expected(_names("preemptor", "independent-pod"), _names("victim"))),
    "Self-referencing CompositePodGroup handling": (
        lambda c: cyclic(c, {"cpg-self": "cpg-self"}, "cpg-self"),
        Expected(_names("preemptor", "independent-pod"), _names("victim"))),
    "Dangling non-existent parent reference during preemption dry-run": (
        lambda c: cyclic(c, {}, "cpg-nonexistent"), Expected(_names("preemptor", "independent-pod"), _names("victim"))),
}
