"""The texts a group's scheduling status carries (the PodGroup/CompositePodGroup condition message and
the message of member pods that found a node but whose group did not), worded as kube-scheduler words
them. Each is cited where it was read (kubernetes, through the file index):

* ``errPodGroupUnschedulable`` (``schedule_one_podgroup.go``): ``pod group is unschedulable``; a group
  that would fit only after preemption: ``pod group is waiting for preemption to complete``. A
  ``Status`` built with an error lists the error first (``Reasons``), reasons are joined with ", ".
* 1.37 GangScheduling ``PlacementFeasible``: ``minCount (N) cannot be satisfied: S scheduled, R
  remaining`` (a basic group counts as minCount 1); a CompositePodGroup: ``minGroupCount (N) ...``
  (test ``TestCPGStatusConditions_HierarchicalDiagnostics``, podgroup/cpg_test.go).
* With ``TopologyAwareWorkloadScheduling`` the placement algorithm wraps it: ``0/P placements are
  available, first placement status: <status>`` (same test: the text a child quotes from its parent).
* Descendants of a failed CompositePodGroup: ``parent composite pod group "X" is unschedulable: <X's
  status>`` when X is the direct parent, ``ancestor composite pod group "X" ...`` otherwise (same test).
* Workload-aware preemption appends its own status to the group's, prefixed ``pod group preemption: ``
  (``podgrouppreemption_test.go`` ``TestPodGroupPreemptionStatus``; the prefix is added by the plugin
  runner of 1.37; 1.36 calls the plugin directly and appends failures only, unprefixed).

[UNCONFIRMED] The separator between the group's status and the preemption status: upstream joins reasons
with ", " (``Status.Message``); a third-party summary quotes "; ". The tests only check both parts.
"""

from __future__ import annotations

POD_GROUP_UNSCHEDULABLE = "pod group is unschedulable"
WAITING_FOR_PREEMPTION = "pod group is waiting for preemption to complete"
PREEMPTION_PREFIX = "pod group preemption: "
SEPARATOR = ", "


def join(*parts: str) -> str:
    return SEPARATOR.join(p for p in parts if p)


def min_count(need: int, scheduled: int, remaining: int) -> str:
    return f"minCount ({need}) cannot be satisfied: {scheduled} scheduled, {remaining} remaining"


def min_group_count(need: int, scheduled: int, remaining: int) -> str:
    return f"minGroupCount ({need}) cannot be satisfied: {scheduled} scheduled, {remaining} remaining"


def placements(total: int, first: str) -> str:
    return f"0/{total} placements are available, first placement status: {first}"


def inherited(ancestor: str, message: str, *, direct: bool) -> str:
    relation = "parent" if direct else "ancestor"
    return f'{relation} composite pod group "{ancestor}" is unschedulable: {message}'
