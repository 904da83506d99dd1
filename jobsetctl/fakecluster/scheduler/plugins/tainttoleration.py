"""TaintToleration: NoSchedule and NoExecute taints the pod does not tolerate filter the node;
PreferNoSchedule only affects scoring upstream and is ignored here (we do not score it).

Status ``UnschedulableAndUnresolvable`` with ``node(s) had untolerated taint(s)`` (the wording since
kubernetes#134740, see :mod:`..messages`)."""

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
from jobsetctl.fakecluster.scheduler.messages import UNTOLERATED_TAINT
from jobsetctl.fakecluster.scheduler.podinfo import PodInfo, tolerates_all
from jobsetctl.fakecluster.scheduler.snapshot import NodeInfo


class TaintToleration(FilterPlugin):
    name = "TaintToleration"
    stage = FilterStage.STATIC
    events: ClassVar[frozenset[ClusterEvent]] = frozenset({
        ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE, ClusterEvent.UNSCHEDULED_POD_UPDATE,
    })

    def hint(self, target: PodInfo, event: ClusterEvent, subject: PodInfo | None, group: tuple[str, ...] | None,
             detail: EventDetail | None = None) -> bool:
        """``isSchedulableAfterNodeChange`` (taint_toleration.go): Queue only when the new node's
        NoSchedule/NoExecute taints are all tolerated and the old node's were not (an added node counts as
        untolerated before). ``isSchedulableAfterPodChange``: the waiting pod's own tolerations changed."""
        if event is ClusterEvent.UNSCHEDULED_POD_UPDATE:
            return subject is not None and subject.uid == target.uid and (
                detail is None or detail.old_static is None or detail.old_static.tolerations != subject.static.tolerations)
        if detail is None or detail.new_node is None:
            return True
        tolerations = target.static.tolerations
        if tolerates_all(tolerations, detail.new_node.taints) is not None:
            return False
        return detail.old_node is None or tolerates_all(tolerations, detail.old_node.taints) is not None

    def filter(self, state: CycleState, node: NodeInfo) -> Status | None:
        if node.taints and tolerates_all(state.pod.static.tolerations, node.taints) is not None:
            return unresolvable(self.name, UNTOLERATED_TAINT)
        return None
