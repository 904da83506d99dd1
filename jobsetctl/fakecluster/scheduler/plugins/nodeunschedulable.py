"""NodeUnschedulable: cordoned nodes (``spec.unschedulable``) unless the pod tolerates the
``node.kubernetes.io/unschedulable:NoSchedule`` taint (plugins/nodeunschedulable upstream)."""

from __future__ import annotations

from typing import ClassVar

from jobsetctl.fakecluster.scheduler.interface import (
    ClusterEvent,
    CycleState,
    FilterPlugin,
    FilterStage,
    Status,
    unresolvable,
)
from jobsetctl.fakecluster.scheduler.messages import NODE_UNSCHEDULABLE
from jobsetctl.fakecluster.scheduler.snapshot import NodeInfo


class NodeUnschedulable(FilterPlugin):
    name = "NodeUnschedulable"
    stage = FilterStage.STATIC
    events: ClassVar[frozenset[ClusterEvent]] = frozenset({ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE})

    def filter(self, state: CycleState, node: NodeInfo) -> Status | None:
        if node.unschedulable and not state.pod.static.tolerates_unschedulable:
            return unresolvable(self.name, NODE_UNSCHEDULABLE)
        return None
