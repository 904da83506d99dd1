"""Scheduling of CompositePodGroup trees, from upstream's integration tests, as Scenarios
(see :mod:`tests.scheduler.upstream`):

* test/integration/scheduler/podgroup/cpg_test.go (commit 16457a8a): :data:`CPG`;
* test/integration/scheduler/podgroup/queueing_test.go ``TestCPGQueueing`` (commit 06e67ba2): :data:`QUEUEING`.

Upstream's pods all have priority 100 in cpg_test.go (none in queueing_test.go); our groups carry the same
priority as their pods, as Kubernetes 1.37 requires. What upstream calls "held" (the pods wait in the
queue for an incomplete tree or for quorum) shows as pods with no scheduling event.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tests.scheduler.upstream import GATES_137, Case


@dataclass(frozen=True)
class Outcome:
    scheduled: frozenset[str]
    pending: frozenset[str] = frozenset()
    #: Group name -> the condition it ends with: ``Scheduled`` (True) or ``Unschedulable`` (False).
    groups: dict[str, str] = field(default_factory=dict)
    #: Group name -> a text its last Unschedulable message contains (upstream checks ``contains``).
    messages: dict[str, str] = field(default_factory=dict)


def tree_case() -> Case:
    case = Case()
    case.gates = {**GATES_137, "CompositePodGroup": True}
    return case


def pods(case: Case, group: str, *cpus: int, at: int = 1, priority: int = 100) -> list[str]:
    names = []
    for i, cpu in enumerate(cpus):
        name = f"{group}-pod-{i}"
        case.pod(name, str(cpu), priority, group=group, at=at)
        names.append(name)
    return names


def _names(*groups: list[str]) -> frozenset[str]:
    return frozenset(name for group in groups for name in group)


# ---- cpg_test.go -----------------------------------------------------------------------------------------


def hierarchical(case: Case) -> Outcome:
    case.node("node1", "20")
    case.cpg("cpg-root", 2, priority=100)
    case.cpg("cpg-sub1", 2, priority=100, parent="cpg-root")
    case.cpg("cpg-sub2", priority=100, parent="cpg-root")
    case.cpg("cpg-sub3", 2, priority=100, parent="cpg-root")
    for name, parent in (("pg1", "cpg-sub1"), ("pg2", "cpg-sub1"), ("pg3", "cpg-sub1"), ("pg5", "cpg-sub2"),
                         ("pg6", "cpg-sub3"), ("pg7", "cpg-sub3")):
        case.podgroup(name, 3, priority=100, parent=parent)
    case.podgroup("pg4", priority=100, parent="cpg-sub2")
    ok = [pods(case, g, 1, 1, 1) for g in ("pg1", "pg2", "pg4", "pg5")]
    bad = [pods(case, "pg3", 100, 100, 100), pods(case, "pg6", 1, 1, 1), pods(case, "pg7", 100, 100, 100)]
    return Outcome(_names(*ok), _names(*bad), {
        "cpg-root": "Scheduled", "cpg-sub1": "Scheduled", "cpg-sub2": "Scheduled", "cpg-sub3": "Unschedulable",
        "pg1": "Scheduled", "pg2": "Scheduled", "pg3": "Unschedulable", "pg4": "Scheduled", "pg5": "Scheduled",
        "pg6": "Unschedulable", "pg7": "Unschedulable"})


def min_group_count(case: Case) -> Outcome:
    case.node("node1", "20")
    case.cpg("cpg-root", 2, priority=100)
    for name in ("pg1", "pg2", "pg3"):
        case.podgroup(name, 3, priority=100, parent="cpg-root")
    ok = [pods(case, "pg1", 1, 1, 1), pods(case, "pg2", 1, 1, 1)]
    bad = pods(case, "pg3", 100, 1, 1)
    return Outcome(_names(*ok), _names(bad), {"cpg-root": "Scheduled", "pg1": "Scheduled", "pg2": "Scheduled",
                                              "pg3": "Unschedulable"})


def basic_with_gang_children(case: Case) -> Outcome:
    case.node("node1", "20")
    case.cpg("cpg-root", priority=100)
    case.podgroup("pg1", 3, priority=100, parent="cpg-root")
    case.podgroup("pg2", 3, priority=100, parent="cpg-root")
    ok = pods(case, "pg1", 1, 1, 1)
    bad = pods(case, "pg2", 100, 1, 1)
    return Outcome(_names(ok), _names(bad), {"cpg-root": "Scheduled", "pg1": "Scheduled", "pg2": "Unschedulable"})


def basic_with_basic_children(case: Case) -> Outcome:
    case.node("node1", "20")
    case.cpg("cpg-root", priority=100)
    case.podgroup("pg1", priority=100, parent="cpg-root")
    case.podgroup("pg2", priority=100, parent="cpg-root")
    ok = [pods(case, "pg1", 1, 1), pods(case, "pg2", 1, 1)]
    return Outcome(_names(*ok), groups={"cpg-root": "Scheduled", "pg1": "Scheduled", "pg2": "Scheduled"})


def gang_with_basic_children(case: Case) -> Outcome:
    case.node("node1", "8")
    case.cpg("cpg-root", 2, priority=100)
    for name in ("pg1", "pg2", "pg3"):
        case.podgroup(name, priority=100, parent="cpg-root")
    ok = [pods(case, "pg1", 1, 1, 1), pods(case, "pg2", 1, 1, 1)]
    bad = pods(case, "pg3", 10, 10, 10)
    return Outcome(_names(*ok), _names(bad), {"cpg-root": "Scheduled", "pg1": "Scheduled", "pg2": "Scheduled",
                                              "pg3": "Unschedulable"})


def basic_with_unschedulable_children(case: Case) -> Outcome:
    case.node("node1", "20")
    case.cpg("cpg-root", priority=100)
    case.podgroup("pg1", priority=100, parent="cpg-root")
    case.podgroup("pg2", priority=100, parent="cpg-root")
    bad = [pods(case, "pg1", 50, 50), pods(case, "pg2", 50, 50)]
    return Outcome(frozenset(), _names(*bad), {"cpg-root": "Unschedulable", "pg1": "Unschedulable",
                                               "pg2": "Unschedulable"})


def dynamic_child_addition(case: Case) -> Outcome:
    case.node("node1", "20")
    case.cpg("cpg-root", priority=100)
    case.podgroup("pg1", priority=100, parent="cpg-root")
    first = pods(case, "pg1", 1, 1)
    case.podgroup("pg2", priority=100, parent="cpg-root", at=2)
    second = pods(case, "pg2", 1, 1, at=2)
    case.cpg("cpg-sub", 2, priority=100, parent="cpg-root", at=3)
    case.podgroup("sub-pg1", priority=100, parent="cpg-sub", at=3)
    third = pods(case, "sub-pg1", 1, 1, at=3)
    case.podgroup("sub-pg2", priority=100, parent="cpg-sub", at=4)
    fourth = pods(case, "sub-pg2", 1, 1, at=4)
    return Outcome(_names(first, second, third, fourth), groups={
        "cpg-root": "Scheduled", "pg1": "Scheduled", "pg2": "Scheduled", "cpg-sub": "Scheduled",
        "sub-pg1": "Scheduled", "sub-pg2": "Scheduled"})


def blocked_then_scheduled(case: Case) -> Outcome:
    case.node("node1", "4")
    case.pod("blocker", "3", 100, at=0)
    case.cpg("cpg-root", 2, priority=100)
    case.podgroup("pg1", 2, priority=100, parent="cpg-root")
    case.podgroup("pg2", 2, priority=100, parent="cpg-root")
    ok = [pods(case, "pg1", 1, 1), pods(case, "pg2", 1, 1)]
    case.delete("Pod", "blocker", at=2)
    return Outcome(_names(*ok), groups={"cpg-root": "Scheduled", "pg1": "Scheduled", "pg2": "Scheduled"})


def hierarchical_diagnostics(case: Case) -> Outcome:
    case.node("node1", "4")
    case.cpg("cpg-root", 2, priority=100)
    case.cpg("cpg-sub1", 2, priority=100, parent="cpg-root")
    case.cpg("cpg-sub2", 2, priority=100, parent="cpg-root")
    for name, parent in (("pg1", "cpg-sub1"), ("pg2", "cpg-sub1"), ("pg3", "cpg-sub2"), ("pg4", "cpg-sub2")):
        case.podgroup(name, 2, priority=100, parent=parent)
    bad = [pods(case, "pg1", 1, 1), pods(case, "pg2", 100, 100), pods(case, "pg3", 1, 1), pods(case, "pg4", 1, 1)]
    root = ("0/1 placements are available, first placement status: minGroupCount (2) cannot be satisfied: "
            "0 scheduled, 1 remaining")
    sub1 = ("0/1 placements are available, first placement status: minGroupCount (2) cannot be satisfied: "
            "1 scheduled, 0 remaining")
    return Outcome(frozenset(), _names(*bad), {g: "Unschedulable" for g in (
        "cpg-root", "cpg-sub1", "cpg-sub2", "pg1", "pg2", "pg3", "pg4")}, {
        "cpg-root": "minGroupCount (2) cannot be satisfied: 0 scheduled, 1 remaining",
        "cpg-sub1": "minGroupCount (2) cannot be satisfied: 1 scheduled, 0 remaining",
        "pg1": f'parent composite pod group "cpg-sub1" is unschedulable: {sub1}',
        "pg2": "minCount (2) cannot be satisfied: 0 scheduled, 1 remaining",
        "cpg-sub2": f'parent composite pod group "cpg-root" is unschedulable: {root}',
        "pg3": f'ancestor composite pod group "cpg-root" is unschedulable: {root}',
        "pg4": f'ancestor composite pod group "cpg-root" is unschedulable: {root}'})


CPG: dict[str, Callable[[Case], Outcome]] = {
    "TestCPGHierarchicalScheduling": hierarchical,
    "TestCPGMinGroupCount": min_group_count,
    "TestCPGBasicWithGangChildren": basic_with_gang_children,
    "TestCPGBasicWithBasicChildren": basic_with_basic_children,
    "TestCPGGangWithBasicChildren": gang_with_basic_children,
    "TestCPGBasicWithUnschedulableBasicChildren": basic_with_unschedulable_children,
    "TestCPGDynamicChildAddition": dynamic_child_addition,
    "TestCPGStatusConditions_ResourceBlockedThenScheduled": blocked_then_scheduled,
    "TestCPGStatusConditions_HierarchicalDiagnostics": hierarchical_diagnostics,
}


# ---- queueing_test.go ---------------------------------------------------------------------------------


def _node(case: Case, at: int = 0) -> None:
    case.node("node", "8", at=at)


def _q_pods(case: Case, group: str, *names: str, at: int = 1) -> list[str]:
    for name in names:
        case.pod(name, "2", 0, group=group, at=at)
    return list(names)


def incomplete_tree(case: Case) -> Outcome:
    _node(case)
    case.podgroup("pg1", 2, parent="cpg-mid", priority=0)
    case.cpg("cpg-mid", 1, parent="cpg-root", priority=0)
    names = _q_pods(case, "pg1", "p1", "p2")
    case.cpg("cpg-root", 1, priority=0, at=2)
    return Outcome(frozenset(names))


def node_add(case: Case) -> Outcome:
    case.cpg("cpg-root", 1, priority=0)
    case.cpg("cpg-mid", 1, parent="cpg-root", priority=0)
    case.podgroup("pg1", 2, parent="cpg-mid", priority=0)
    names = _q_pods(case, "pg1", "p1", "p2")
    _node(case, at=2)
    return Outcome(frozenset(names))


def _root2(case: Case) -> None:
    case.cpg("cpg-root2", 2, priority=0)
    case.podgroup("pg2-1", 2, parent="cpg-root2", priority=0)


def podgroup_add(case: Case) -> Outcome:
    _node(case)
    _root2(case)
    names = _q_pods(case, "pg2-1", "p2-1", "p2-2") + _q_pods(case, "pg2-2", "p2-3", "p2-4")
    case.podgroup("pg2-2", 2, parent="cpg-root2", priority=0, at=2)
    return Outcome(frozenset(names))


def pod_add(case: Case) -> Outcome:
    _node(case)
    _root2(case)
    case.podgroup("pg2-2", 2, parent="cpg-root2", priority=0)
    names = _q_pods(case, "pg2-1", "p2-1", "p2-2") + _q_pods(case, "pg2-2", "p2-3")
    names += _q_pods(case, "pg2-2", "p2-4", at=2)
    return Outcome(frozenset(names))


def _gang(min_count: int) -> dict[str, object]:
    return {"spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}}}


def _cgang(min_groups: int) -> dict[str, object]:
    return {"spec": {"schedulingPolicy": {"gang": {"minGroupCount": min_groups}}}}


def podgroup_min_decrease(case: Case) -> Outcome:
    _node(case)
    case.cpg("cpg-root", 1, priority=0)
    case.cpg("cpg-mid", 1, parent="cpg-root", priority=0)
    case.podgroup("pg1", 2, parent="cpg-mid", priority=0)
    names = _q_pods(case, "pg1", "p1")
    case.patch("PodGroup", "pg1", _gang(1), at=2)
    return Outcome(frozenset(names))


def root_min_decrease(case: Case) -> Outcome:
    _node(case)
    _root2(case)
    names = _q_pods(case, "pg2-1", "p2-1", "p2-2")
    case.patch("CompositePodGroup", "cpg-root2", _cgang(1), at=2)
    return Outcome(frozenset(names))


def intermediate_min_decrease(case: Case) -> Outcome:
    _node(case)
    case.cpg("cpg-root3", 1, priority=0)
    case.cpg("cpg-mid3", 2, parent="cpg-root3", priority=0)
    case.podgroup("pg3-1", 2, parent="cpg-mid3", priority=0)
    names = _q_pods(case, "pg3-1", "p3-1", "p3-2")
    case.patch("CompositePodGroup", "cpg-mid3", _cgang(1), at=2)
    return Outcome(frozenset(names))


def siblings_unblocked(case: Case) -> Outcome:
    _node(case)
    case.cpg("cpg-root4", 3, priority=0)
    case.podgroup("pg4-1", 1, parent="cpg-root4", priority=0)
    case.podgroup("pg4-2", 1, parent="cpg-root4", priority=0)
    names = _q_pods(case, "pg4-1", "p4-1") + _q_pods(case, "pg4-2", "p4-2")
    case.patch("CompositePodGroup", "cpg-root4", _cgang(2), at=2)
    return Outcome(frozenset(names))


def cousin_branch(case: Case) -> Outcome:
    _node(case)
    case.cpg("cpg-root-cousin", 2, priority=0)
    case.cpg("cpg-branch1", 1, parent="cpg-root-cousin", priority=0)
    case.cpg("cpg-branch2", 1, parent="cpg-root-cousin", priority=0)
    case.podgroup("pg-b1", 1, parent="cpg-branch1", priority=0)
    case.podgroup("pg-b2", 2, parent="cpg-branch2", priority=0)
    names = _q_pods(case, "pg-b1", "p-b1") + _q_pods(case, "pg-b2", "p-b2")
    case.patch("PodGroup", "pg-b2", _gang(1), at=2)
    return Outcome(frozenset(names))


def ready_branch_first(case: Case) -> Outcome:
    _node(case)
    case.cpg("cpg-root-ptree", 1, priority=0)
    case.podgroup("pg-main-ptree", 1, parent="cpg-root-ptree", priority=0)
    case.cpg("cpg-sub-ptree", 2, parent="cpg-root-ptree", priority=0)
    case.podgroup("pg-sub-ptree-1", 1, parent="cpg-sub-ptree", priority=0)
    case.podgroup("pg-sub-ptree-2", 2, parent="cpg-sub-ptree", priority=0)
    names = (_q_pods(case, "pg-main-ptree", "p-main-ptree") + _q_pods(case, "pg-sub-ptree-1", "p-sub-ptree-1")
             + _q_pods(case, "pg-sub-ptree-2", "p-sub-ptree-2"))
    case.patch("PodGroup", "pg-sub-ptree-2", _gang(1), at=2)
    return Outcome(frozenset(names))


QUEUEING: dict[str, Callable[[Case], Outcome]] = {
    "Incomplete CPG tree buffers pods and missing root CPG wakes them up": incomplete_tree,
    "Node add triggers queueing hint for complete CPG tree from unschedulableQ": node_add,
    "PodGroup add triggers queueing hint for unschedulable CPG root": podgroup_add,
    "Pod add triggers queueing hint for unschedulable CPG root": pod_add,
    "PodGroup update (reduce minCount) triggers queueing hint for unschedulable CPG tree": podgroup_min_decrease,
    "CPG update (reduce minGroupCount) triggers queueing hint for unschedulable CPG tree": root_min_decrease,
    "Intermediate CPG update (reduce minGroupCount) triggers queueing hint for unschedulable CPG tree":
        intermediate_min_decrease,
    "CPG update (reduce minGroupCount) unblocks multiple sibling PodGroups simultaneously": siblings_unblocked,
    "PodGroup update (reduce minCount) in child branch unblocks entire CPG tree": cousin_branch,
    "CPG schedules ready branch while unready subtree waits, then reducing child minCount unblocks and schedules "
    "the subtree": ready_branch_first,
}
