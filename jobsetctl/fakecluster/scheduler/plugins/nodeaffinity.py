"""NodeAffinity: ``spec.nodeSelector`` and required node affinity (terms ORed, requirements ANDed,
``In``/``NotIn``/``Exists``/``DoesNotExist``/``Gt``/``Lt``, ``matchFields`` on ``metadata.name``).

Status ``UnschedulableAndUnresolvable`` with ``node(s) didn't match Pod's node affinity/selector``
(``ErrReasonPod`` in plugins/nodeaffinity upstream)."""

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
from jobsetctl.fakecluster.scheduler.messages import NODE_AFFINITY
from jobsetctl.fakecluster.scheduler.snapshot import NodeInfo


class NodeAffinity(FilterPlugin):
    name = "NodeAffinity"
    stage = FilterStage.STATIC
    events: ClassVar[frozenset[ClusterEvent]] = frozenset({ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE})

    def filter(self, state: CycleState, node: NodeInfo) -> Status | None:
        affinity = state.pod.static.node_affinity
        if affinity.is_empty or affinity.matches(node.labels, node.name):
            return None
        return unresolvable(self.name, NODE_AFFINITY)
