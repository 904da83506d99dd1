"""One run of a PodGroup's scheduling algorithm: place its queued pods against one cache and say whether
the group may bind (kubernetes ``schedule_one_podgroup.go``: ``podGroupSchedulingDefaultAlgorithm``,
``podGroupPodSchedulingAlgorithm``; the placement algorithm when TopologyAwareWorkloadScheduling is on).

* Pods go in the cycle's order (priority, then first observation), each filtered, scored and assumed,
  so later pods see earlier ones.
* 1.37: after every pod GangScheduling's ``PlacementFeasible`` asks whether ``minCount`` can still be
  met (a basic group counts as 1): placed (assumed + already bound) + not yet evaluated < minCount ends
  the pass, ``minCount (N) cannot be satisfied: S scheduled, R remaining``. The group is feasible once
  placed + bound ≥ minCount with at least one pod placed in this cycle.
* 1.36 without ``WorkloadAwarePreemption``: a pod that finds no node runs the PostFilter plugins at once
  (``schedulingAlgorithm`` includes them; TestPostFilterInvocationCount), so DefaultPreemption preempts
  for it and nominates a node; the pod is then assumed there, as if its victims were gone, and later pods
  see it. A group that reaches minCount only that way is ``waiting for preemption to complete``: nothing
  binds, every pod returns to the queue. No such preemption for a group with a topology constraint
  (test "tas gang with constraint does not use pod by pod preemption").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from jobsetctl.fakecluster.scheduler import groupstatus, messages
from jobsetctl.fakecluster.scheduler.groups import GroupKey, GroupSpec
from jobsetctl.fakecluster.scheduler.interface import CycleState, Status
from jobsetctl.fakecluster.scheduler.placement import Placement
from jobsetctl.fakecluster.scheduler.podinfo import PodInfo
from jobsetctl.fakecluster.scheduler.snapshot import NodeInfo
from jobsetctl.kube.versions import KubeVersion

if TYPE_CHECKING:
    from jobsetctl.fakecluster.scheduler.groupcycle import GroupCycle


@dataclass(slots=True)
class GroupAttempt:
    placement: Placement
    #: The group may bind what it placed (minCount met, at least one pod placed now).
    feasible: bool
    #: The group's status text when it may not (see :mod:`.groupstatus`).
    message: str
    #: 1.36 per-pod preemption: feasible only thanks to preemption.
    waiting: bool = False
    #: Failure texts of pods whose own preemption failed (1.36), by uid.
    per_pod: dict[str, str] = field(default_factory=dict)
    #: Nominations the pods' own preemption set or cleared (1.36), by uid.
    nominations: dict[str, str | None] = field(default_factory=dict)
    #: Victims still terminating that the cycle took out of the cache (1.36), to put back.
    set_aside: list[PodInfo] = field(default_factory=list)


class GroupAlgorithm:
    def __init__(self, cycle: GroupCycle) -> None:
        self.gc = cycle
        self.s = cycle.s

    def attempt(self, key: GroupKey, spec: GroupSpec, pods: list[PodInfo], bound_nodes: list[str], need: int, *,
                per_pod_preemption: bool = False, scope: set[str] | None = None) -> GroupAttempt:
        s = self.s
        feasible_check = s.version is KubeVersion.V1_37
        stop = None
        if feasible_check:
            bound = len(bound_nodes)

            def stop(placed: int, remaining: int) -> bool:
                return placed + bound + remaining < need
        result = GroupAttempt(Placement(), False, "")
        on_fail = None
        if per_pod_preemption:
            def on_fail(pod: PodInfo, state: CycleState, prefilter: Status | None, progress: Placement) -> NodeInfo | None:
                return self._preempt_for(pod, state, prefilter, result)
        if spec.topology_key:
            placement = self.gc.placer.place_in_domains(pods, spec.topology_key, need, bound_nodes, stop, scope)
        else:
            restrict = None
            if scope is not None:
                restrict = s.snapshot.node_set(("scope", hash(frozenset(scope))),
                                               lambda: [n for n in s.snapshot.ordered_nodes() if n.name in scope])
            placement = self.gc.placer.place(pods, restrict, stop, on_fail)
        result.placement = placement
        placed = placement.count
        enough = placed + len(bound_nodes) >= need
        result.feasible = placed > 0 and enough and self.gc.tasks_met(spec, placement)
        result.waiting = result.feasible and bool(placement.preempting)
        if not result.feasible:
            result.message = self.message(spec, placement, len(pods), len(bound_nodes), need)
        elif result.waiting:
            result.message = groupstatus.join(groupstatus.POD_GROUP_UNSCHEDULABLE, groupstatus.WAITING_FOR_PREEMPTION)
        return result

    def message(self, spec: GroupSpec, placement: Placement, pods: int, bound: int, need: int) -> str:
        """The group's status after a failed pass."""
        s = self.s
        if s.version is not KubeVersion.V1_37:
            return groupstatus.POD_GROUP_UNSCHEDULABLE
        if spec.topology_key:
            placed, evaluated = placement.first if placement.first is not None else (0, pods)
        else:
            placed, evaluated = placement.count, placement.evaluated
        scheduled = placed + bound
        remaining = pods - evaluated
        if scheduled + remaining >= need:
            # Enough pods could be placed, yet none of the queued ones was (extras of a group already
            # scheduled): the algorithm's status is the bare unschedulable one.
            text = groupstatus.POD_GROUP_UNSCHEDULABLE
        else:
            text = groupstatus.min_count(need, scheduled, remaining)
        if s.gates.enabled("TopologyAwareWorkloadScheduling"):
            text = groupstatus.placements(max(placement.placements, 1) if spec.topology_key else 1, text)
        return text

    # ---- 1.36 per-pod preemption inside the cycle ------------------------------------------------------
    def _preempt_for(self, pod: PodInfo, state: CycleState, prefilter: Status | None,
                     result: GroupAttempt) -> NodeInfo | None:
        s = self.s
        framework = s.framework_for(pod)
        plugin = framework.plugin("DefaultPreemption")
        if plugin is None:
            return None
        diagnosis = framework.diagnose(state, prefilter)
        outcome = plugin.post_filter(state, diagnosis)  # type: ignore[attr-defined]
        if outcome is None:
            return None
        if not outcome.status.ok:
            diagnosis.postfilter_msg = outcome.status.message
            result.per_pod[pod.uid] = messages.fit_error(diagnosis)
            if outcome.nominated_node == "":
                result.nominations[pod.uid] = None
            return None
        node = s.snapshot.nodes.get(outcome.nominated_node or "")
        if node is None:
            return None
        # "Subsequent pods treat that pod as already scheduled on that node with victims being already
        # removed in memory": victims still terminating leave the cache until the cycle ends.
        for other in list(node.pods.values()):
            if other.terminating and other.priority < pod.priority and other.uid not in {p.uid for p in result.set_aside}:
                s.snapshot.remove_pod(other)
                result.set_aside.append(other)
        if framework.filter_node(state, node) is not None:
            return None
        result.nominations[pod.uid] = node.name
        return node

    def restore(self, result: GroupAttempt) -> None:
        """Put back the terminating victims a 1.36 cycle took out of the cache (if they still exist)."""
        s = self.s
        for victim in result.set_aside:
            if s.pods.get(victim.uid) is victim and victim.uid not in s.snapshot.pods and victim.node_name:
                s.snapshot.add_pod(victim, victim.node_name)
        result.set_aside.clear()
