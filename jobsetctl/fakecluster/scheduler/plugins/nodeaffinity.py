"""NodeAffinity: ``spec.nodeSelector`` and required node affinity (terms ORed, requirements ANDed,
``In``/``NotIn``/``Exists``/``DoesNotExist``/``Gt``/``Lt``, ``matchFields`` on ``metadata.name``).

Status ``UnschedulableAndUnresolvable`` with ``node(s) didn't match Pod's node affinity/selector``
(``ErrReasonPod`` in plugins/nodeaffinity upstream)."""

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
from jobsetctl.fakecluster.scheduler.messages import NODE_AFFINITY
from jobsetctl.fakecluster.scheduler.podinfo import PodInfo
from jobsetctl.fakecluster.scheduler.snapshot import NodeInfo


class NodeAffinity(FilterPlugin):
    name = "NodeAffinity"
    stage = FilterStage.STATIC
    events: ClassVar[frozenset[ClusterEvent]] = frozenset({ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE})

    def hint(self, target: PodInfo, event: ClusterEvent, subject: PodInfo | None, group: tuple[str, ...] | None,
             detail: EventDetail | None = None) -> bool:
        """``isSchedulableAfterNodeChange`` (node_affinity.go): Queue when the new node matches the pod's
        nodeSelector and required node affinity and the old one (if any) did not."""
        if detail is None or detail.new_node is None:
            return True
        affinity = target.static.node_affinity
        if not affinity.is_empty and not affinity.matches(detail.new_node.labels, detail.new_node.name):
            return False
        old = detail.old_node
        return old is None or not (affinity.is_empty or affinity.matches(old.labels, old.name))

    def filter(self, state: CycleState, node: NodeInfo) -> Status | None:
        affinity = state.pod.static.node_affinity
        if affinity.is_empty or affinity.matches(node.labels, node.name):
            return None
        return unresolvable(self.name, NODE_AFFINITY)
