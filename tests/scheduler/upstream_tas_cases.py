"""Upstream's topology-aware workload scheduling tests (test/integration/scheduler/topology_aware_scheduling/
tas_test.go at commit 008b3652, the 1.36 shape) as Scenarios (see :mod:`tests.scheduler.upstream`):
``TestTopologyAwareSchedulingWithGangPolicy`` (:data:`GANG`) and ``TestTopologyAwareSchedulingWithBasicPolicy``
(:data:`BASIC`).

Upstream's nodes have 2 CPUs and a rack and a zone label; its pods request 1 CPU (``makeLargePod``: 2,
``makeUnfittablePod``: 3), priority 100, grace 0; "existing" pods are created bound. Upstream's label keys
are not in our notes: ``rack`` and ``zone`` stand for them (only equality of values matters). A step that
creates pods later in upstream is a later second here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tests.scheduler.upstream import Case

RACK, ZONE = "rack", "zone"


@dataclass(frozen=True)
class Placed:
    scheduled: frozenset[str]
    pending: frozenset[str] = frozenset()
    #: Each group of pods must end on nodes of this set.
    within: dict[frozenset[str], frozenset[str]] = field(default_factory=dict)
    #: Each group of pods must end in one domain of this key.
    one_domain: dict[frozenset[str], str] = field(default_factory=dict)
    gone: frozenset[str] = frozenset()


def _n(*names: str) -> frozenset[str]:
    return frozenset(names)


def nodes(case: Case, *specs: tuple[str, str, str]) -> None:
    for name, rack, zone in specs:
        case.node(name, "2", {RACK: rack, ZONE: zone})


def racks(case: Case, layout: dict[str, list[str]], zone_of: dict[str, str] | None = None) -> None:
    """``layout``: rack -> node names; every rack in zone-1 unless ``zone_of`` says otherwise."""
    for rack, names in layout.items():
        for name in names:
            case.node(name, "2", {RACK: rack, ZONE: (zone_of or {}).get(rack, "zone-1")})


def pods(case: Case, group: str, names: list[str], cpu: str = "1", at: int = 1) -> list[str]:
    for name in names:
        case.pod(name, cpu, 100, group=group, at=at)
    return names


def existing(case: Case, name: str, node: str, cpu: str) -> None:
    case.pod(name, cpu, 100, node=node, at=0)


def gang(case: Case, name: str, min_count: int, key: str = RACK, at: int = 1) -> None:
    case.podgroup(name, min_count, topology=key, at=at)


def basic(case: Case, name: str, key: str = RACK, at: int = 1) -> None:
    case.podgroup(name, None, topology=key, at=at)


P123 = ["p1", "p2", "p3"]


# ---- TestTopologyAwareSchedulingWithGangPolicy ---------------------------------------------------------


def g_only_feasible_rack(case: Case) -> Placed:
    racks(case, {"rack-1": ["node1", "node2", "node3"], "rack-2": ["node4", "node5"], "rack-3": ["node6"]},
          {"rack-3": "zone-2"})
    existing(case, "existing1", "node4", "2")
    gang(case, "pg1", 3)
    pods(case, "pg1", P123)
    return Placed(_n("existing1", *P123), within={_n(*P123): _n("node1", "node2", "node3")})


def g_no_feasible(case: Case) -> Placed:
    racks(case, {"rack-1": ["node1", "node2"], "rack-2": ["node3"], "rack-3": ["node4"]}, {"rack-3": "zone-2"})
    gang(case, "pg1", 3)
    pods(case, "pg1", P123, cpu="2")
    return Placed(frozenset(), _n(*P123))


def g_consumed(case: Case) -> Placed:
    racks(case, {"rack-1": ["node1", "node2", "node3"]})
    existing(case, "existing1", "node1", "2")
    existing(case, "existing2", "node3", "2")
    gang(case, "pg1", 3)
    pods(case, "pg1", P123)
    case.delete("Pod", "existing1", at=2)
    return Placed(_n("existing2", *P123), gone=_n("existing1"))


def g_highest_score(case: Case) -> Placed:
    racks(case, {"rack-1": ["node1", "node2"], "rack-2": ["node3", "node4", "node5"], "rack-3": ["node6"]},
          {"rack-2": "zone-2", "rack-3": "zone-2"})
    gang(case, "pg1", 3)
    pods(case, "pg1", P123)
    return Placed(_n(*P123), within={_n(*P123): _n("node1", "node2")})


def g_allocation(case: Case) -> Placed:
    racks(case, {"rack-1": ["node1", "node2"], "rack-2": ["node3", "node4", "node5"],
                 "rack-3": ["node6", "node7", "node8"], "rack-4": ["node9"]})
    existing(case, "existing1", "node3", "2")
    existing(case, "existing2", "node8", "1")
    gang(case, "pg1", 3)
    pods(case, "pg1", P123)
    return Placed(_n("existing1", "existing2", *P123), within={_n(*P123): _n("node3", "node4", "node5")})


def g_two_racks(case: Case) -> Placed:
    racks(case, {"rack-1": ["node1", "node2", "node3"], "rack-2": ["node4", "node5"]})
    gang(case, "pg1", 3)
    pods(case, "pg1", P123, cpu="2")
    gang(case, "pg2", 2, at=2)
    pods(case, "pg2", ["p4", "p5"], at=2)
    return Placed(_n(*P123, "p4", "p5"), within={_n(*P123): _n("node1", "node2", "node3"),
                                                   _n("p4", "p5"): _n("node4", "node5")})


def g_same_rack(case: Case) -> Placed:
    racks(case, {"rack-1": ["node1", "node2", "node3"], "rack-2": ["node4"]})
    gang(case, "pg1", 2)
    pods(case, "pg1", ["p1"], cpu="2")
    pods(case, "pg1", ["p2"])
    gang(case, "pg2", 3, at=2)
    pods(case, "pg2", ["p3", "p4", "p5"], at=2)
    rack1 = _n("node1", "node2", "node3")
    return Placed(_n("p1", "p2", "p3", "p4", "p5"), within={_n("p1", "p2"): rack1, _n("p3", "p4", "p5"): rack1})


def g_different_keys(case: Case) -> Placed:
    nodes(case, ("node1", "rack-1", "zone-1"), ("node2", "rack-1", "zone-1"), ("node3", "rack-2", "zone-1"),
          ("node4", "rack-3", "zone-2"), ("node5", "rack-3", "zone-2"), ("node6", "rack-3", "zone-2"))
    gang(case, "pg1", 3)
    pods(case, "pg1", P123, cpu="2")
    gang(case, "pg2", 3, key=ZONE, at=2)
    pods(case, "pg2", ["p4", "p5", "p6"], cpu="2", at=2)
    return Placed(_n(*P123, "p4", "p5", "p6"), within={_n(*P123): _n("node4", "node5", "node6"),
                                                         _n("p4", "p5", "p6"): _n("node1", "node2", "node3")})


def g_only_one_fits(case: Case) -> Placed:
    racks(case, {"rack-1": ["node1", "node2"]})
    gang(case, "pg1", 3)
    pods(case, "pg1", P123)
    gang(case, "pg2", 2, at=2)
    pods(case, "pg2", ["p4", "p5"], at=2)
    return Placed(_n(*P123), _n("p4", "p5"), within={_n(*P123): _n("node1", "node2")})


def g_min_below_count(case: Case) -> Placed:
    racks(case, {"rack-1": ["node1", "node2"], "rack-2": ["node3", "node4"]})
    gang(case, "pg1", 2)
    pods(case, "pg1", P123)
    return Placed(_n(*P123), one_domain={_n(*P123): RACK})


def g_smaller_rack(case: Case) -> Placed:
    racks(case, {"rack-1": ["node1", "node2", "node3"], "rack-2": ["node4", "node5"], "rack-3": ["node6"]},
          {"rack-3": "zone-2"})
    gang(case, "pg1", 3)
    pods(case, "pg1", P123)
    pods(case, "pg1", ["p4"], at=2)
    pods(case, "pg1", ["p5"], at=3)
    return Placed(_n(*P123, "p4"), _n("p5"), within={_n(*P123, "p4"): _n("node4", "node5")})


def g_no_preemption(case: Case) -> Placed:
    racks(case, {"rack-1": ["node1", "node2"]})
    existing(case, "existing1", "node2", "2")
    gang(case, "pg1", 3)
    pods(case, "pg1", P123)
    return Placed(_n("existing1"), _n(*P123))


GANG: dict[str, Callable[[Case], Placed]] = {
    "gang schedules on a single rack, when only one feasible rack is available": g_only_feasible_rack,
    "gang remains pending when no feasible resources are found": g_no_feasible,
    "gang remains pending when resources are consumed by existing pods": g_consumed,
    "gang schedules on a single rack, choosing placement with the highest score in default placement scoring "
    "algorithm": g_highest_score,
    "gang schedules on a single rack, choosing placement with the highest allocation percentage with pre-existing "
    "pods": g_allocation,
    "two gangs schedule consecutively, each on a separate rack": g_two_racks,
    "two gangs schedule consecutively, both on the same rack": g_same_rack,
    "two gangs schedule consecutively, different topology keys": g_different_keys,
    "two gangs schedule consecutively, only one fits in the cluster": g_only_one_fits,
    "gang with minCount < pod count schedules on a single rack": g_min_below_count,
    "gang with minCount < pod count schedules on a single rack, choosing smaller rack": g_smaller_rack,
    "gang does not schedule on a single rack when preemption could free up enough resources": g_no_preemption,
}


# ---- TestTopologyAwareSchedulingWithBasicPolicy --------------------------------------------------------


def b_only_rack(case: Case) -> Placed:
    racks(case, {"rack-1": ["node1", "node2"]})
    basic(case, "pg1")
    pods(case, "pg1", P123)
    return Placed(_n(*P123), within={_n(*P123): _n("node1", "node2")})


def b_multiple_racks(case: Case) -> Placed:
    racks(case, {"rack-1": ["node1", "node2"], "rack-2": ["node3", "node4"], "rack-3": ["node5", "node6"]},
          {"rack-3": "zone-2"})
    basic(case, "pg1")
    pods(case, "pg1", P123)
    return Placed(_n(*P123), one_domain={_n(*P123): RACK})


def b_cannot_fit(case: Case) -> Placed:
    racks(case, {"rack-1": ["node1"], "rack-2": ["node2"]})
    basic(case, "pg1")
    pods(case, "pg1", P123)
    return Placed(_n("p1", "p2"), _n("p3"), one_domain={_n("p1", "p2"): RACK})


def b_no_pod_fits(case: Case) -> Placed:
    racks(case, {"rack-1": ["node1"], "rack-2": ["node2"]})
    basic(case, "pg1")
    pods(case, "pg1", ["p1", "p2"], cpu="3")
    return Placed(frozenset(), _n("p1", "p2"))


def b_some_fit(case: Case) -> Placed:
    racks(case, {"rack-1": ["node1"], "rack-2": ["node2"]})
    basic(case, "pg1")
    pods(case, "pg1", ["p1"], cpu="3")
    pods(case, "pg1", ["p2"])
    return Placed(_n("p2"), _n("p1"))


def b_allocation(case: Case) -> Placed:
    racks(case, {"rack-1": ["node1", "node2"], "rack-2": ["node3", "node4", "node5"]}, {"rack-2": "zone-2"})
    basic(case, "pg1")
    pods(case, "pg1", P123)
    return Placed(_n(*P123), within={_n(*P123): _n("node1", "node2")})


def b_allocation_existing(case: Case) -> Placed:
    racks(case, {"rack-1": ["node1", "node2", "node3"], "rack-2": ["node4", "node5", "node6"],
                 "rack-3": ["node7", "node8", "node9", "node10"]})
    existing(case, "existing1", "node1", "1")
    existing(case, "existing2", "node5", "1")
    existing(case, "existing3", "node6", "1")
    basic(case, "pg1")
    pods(case, "pg1", P123)
    return Placed(_n("existing1", "existing2", "existing3", *P123), within={_n(*P123): _n("node4", "node5", "node6")})


def b_best_not_fitting(case: Case) -> Placed:
    racks(case, {"rack-1": ["node1", "node2", "node3", "node4"], "rack-2": ["node5"]})
    existing(case, "existing1", "node1", "2")
    basic(case, "pg1")
    pods(case, "pg1", ["p1"])
    pods(case, "pg1", ["p2", "p3"], at=2)
    return Placed(_n("existing1", "p1", "p2"), _n("p3"), within={_n("p1", "p2"): _n("node5")})


def b_two_groups_each_rack(case: Case) -> Placed:
    racks(case, {"rack-1": ["node1", "node2", "node3"], "rack-2": ["node4"]})
    basic(case, "pg1")
    pods(case, "pg1", ["p1", "p2"])
    basic(case, "pg2", at=2)
    pods(case, "pg2", ["p3", "p4"], at=2)
    return Placed(_n("p1", "p2", "p3", "p4"), within={_n("p1", "p2"): _n("node4"),
                                                       _n("p3", "p4"): _n("node1", "node2", "node3")})


def b_two_groups_one_rack(case: Case) -> Placed:
    racks(case, {"rack-1": ["node1", "node2", "node3"]})
    basic(case, "pg1")
    pods(case, "pg1", ["p1", "p2"])
    basic(case, "pg2", at=2)
    pods(case, "pg2", ["p3", "p4", "p5"], at=2)
    return Placed(_n("p1", "p2", "p3", "p4", "p5"))


def b_two_groups_keys(case: Case) -> Placed:
    nodes(case, ("node1", "rack-1", "zone-1"), ("node2", "rack-2", "zone-2"), ("node3", "rack-2", "zone-2"),
          ("node4", "rack-3", "zone-2"), ("node5", "rack-3", "zone-2"))
    basic(case, "pg1")
    pods(case, "pg1", ["p1", "p2"])
    basic(case, "pg2", key=ZONE, at=2)
    pods(case, "pg2", ["p3", "p4", "p5"], cpu="2", at=2)
    return Placed(_n("p1", "p2", "p3", "p4", "p5"), within={
        _n("p1", "p2"): _n("node1"), _n("p3", "p4", "p5"): _n("node2", "node3", "node4", "node5")})


def b_one_does_not_fit(case: Case) -> Placed:
    racks(case, {"rack-1": ["node1", "node2"], "rack-2": ["node3"]})
    basic(case, "pg1")
    pods(case, "pg1", ["p1"])
    pods(case, "pg1", ["p2", "p3"], at=2)
    basic(case, "pg2", at=3)
    pods(case, "pg2", ["p4", "p5", "p6"], at=3)
    return Placed(_n("p1", "p2", "p4", "p5", "p6"), _n("p3"), within={
        _n("p1", "p2"): _n("node3"), _n("p4", "p5", "p6"): _n("node1", "node2")})


def b_more_resources(case: Case) -> Placed:
    racks(case, {"rack-1": ["node1"], "rack-2": ["node2"]})
    existing(case, "existing1", "node1", "1")
    basic(case, "pg1")
    pods(case, "pg1", ["p1"])
    pods(case, "pg1", ["p2"], at=2)
    case.delete("Pod", "existing1", at=3)
    return Placed(_n("p1", "p2"), within={_n("p1", "p2"): _n("node1")}, gone=_n("existing1"))


BASIC: dict[str, Callable[[Case], Placed]] = {
    "basic podgroup schedules on the only rack in the cluster": b_only_rack,
    "basic podgroup schedules all pods on a single rack, when there are multiple racks fitting": b_multiple_racks,
    "basic podgroup cannot fit on a single rack, no pods get scheduled on a different rack": b_cannot_fit,
    "basic podgroup does not schedule at all when no pods fit": b_no_pod_fits,
    "basic podgroup schedules only some pods when others don't fit on any node": b_some_fit,
    "basic podgroup schedules on a single rack, choosing placement with the highest allocation percentage":
        b_allocation,
    "basic podgroup schedules on a single rack, choosing placement with the highest allocation percentage with "
    "pre-existing pods": b_allocation_existing,
    "basic podgroup schedules on a single rack, choosing best scoring placement that will not fit all podgroup":
        b_best_not_fitting,
    "two basic podgroups schedule consecutively, each on a single rack": b_two_groups_each_rack,
    "two basic podgroups schedule consecutively on the only rack": b_two_groups_one_rack,
    "two basic podgroups schedule consecutively, different topology keys": b_two_groups_keys,
    "two basic podgroups schedule consecutively, one does not fit in the assigned rack": b_one_does_not_fit,
    "basic podgroup continues to schedule pods when more resources become available": b_more_resources,
}
