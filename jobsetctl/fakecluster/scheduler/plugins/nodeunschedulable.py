"""NodeUnschedulable: cordoned nodes (``spec.unschedulable``) unless the pod tolerates the
``node.kubernetes.io/unschedulable:NoSchedule`` taint (plugins/nodeunschedulable upstream)."""

from __future__ import annotations

from typing import ClassVar

from jobsetctl.fakecluster.scheduler.interface import (
    ClusterEvent,
    CycleState,
    EventDetail,
    FilterPlugin,
    FilterStage,
    Status,
    unresolvable,
)
from jobsetctl.fakecluster.scheduler.messages import NODE_UNSCHEDULABLE
from jobsetctl.fakecluster.scheduler.podinfo import PodInfo
from jobsetctl.fakecluster.scheduler.snapshot import NodeInfo


class NodeUnschedulable(FilterPlugin):
    name = "NodeUnschedulable"
    stage = FilterStage.STATIC
    events: ClassVar[frozenset[ClusterEvent]] = frozenset({
        ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE, ClusterEvent.UNSCHEDULED_POD_UPDATE,
    })

    def hint(self, target: PodInfo, event: ClusterEvent, subject: PodInfo | None, group: tuple[str, ...] | None,
             detail: EventDetail | None = None) -> bool:
        """``isSchedulableAfterNodeChange`` (node_unschedulable.go): Queue when the node is schedulable now
        and was not before (an added node was not). ``isSchedulableAfterPodTolerationChange``: the waiting pod
        itself now tolerates the ``node.kubernetes.io/unschedulable`` taint and did not."""
        if event is ClusterEvent.UNSCHEDULED_POD_UPDATE:
            if subject is None or subject.uid != target.uid or not subject.static.tolerates_unschedulable:
                return False
            return detail is None or detail.old_static is None or not detail.old_static.tolerates_unschedulable
        if detail is None or detail.new_node is None:
            return True
        return not detail.new_node.unschedulable and (detail.old_node is None or detail.old_node.unschedulable)

    def filter(self, state: CycleState, node: NodeInfo) -> Status | None:
        if node.unschedulable and not state.pod.static.tolerates_unschedulable:
            return unresolvable(self.name, NODE_UNSCHEDULABLE)
        return None
