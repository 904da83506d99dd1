"""The topology tree of a TAS flavor: nodes, domains per level, and the per-placement state
(``pkg/cache/scheduler/tas_topology_tree.go``, ``tas_flavor_snapshot.go``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jobsetctl.fakecluster.scheduler.podinfo import parse_taints
from jobsetctl.kueue.engine import names
from jobsetctl.kueue.engine.amounts import (
    Requests,
    requests_from_resource_list,
)

if TYPE_CHECKING:
    pass

MAX_INT32 = 2**31 - 1
_SCHEDULING_EFFECTS = ("NoSchedule", "NoExecute")



def as_mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


_mapping = as_mapping


def is_gated(spec: dict[str, Any]) -> bool:
    """Whether a pod spec still carries Kueue's topology scheduling gate."""
    return any(as_mapping(g).get("name") == names.TOPOLOGY_SCHEDULING_GATE for g in spec.get("schedulingGates") or [])


# ---- nodes ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class NodeView:
    name: str
    labels: dict[str, str]
    allocatable: Requests
    taints: tuple[Any, ...]
    usable: bool  # Ready and not unschedulable


def node_view(obj: dict[str, Any]) -> NodeView:
    md = _mapping(obj.get("metadata"))
    spec = _mapping(obj.get("spec"))
    status = _mapping(obj.get("status"))
    ready = any(isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") == "True"
                for c in status.get("conditions") or [])
    return NodeView(str(md.get("name", "")), {str(k): str(v) for k, v in _mapping(md.get("labels")).items()},
                    requests_from_resource_list(status.get("allocatable")), parse_taints(spec),
                    ready and not spec.get("unschedulable"))


# ---- the topology tree ---------------------------------------------------------------------------------


class Domain:
    __slots__ = ("capacity", "children", "id", "idx", "leaf_idx", "node", "parent", "rank", "values")

    def __init__(self, domain_id: str, values: list[str]) -> None:
        self.id = domain_id
        self.idx = 0
        self.parent: Domain | None = None
        self.children: list[Domain] = []
        self.values = values
        self.leaf_idx = -1
        self.node: NodeView | None = None
        self.capacity: Requests = {}
        #: Dense rank of ``values`` among the domains of its level (equal values, equal rank): sorting
        #: domains of one level by rank is sorting them by values, with integer comparisons.
        self.rank = 0


class Tree:
    """``topologyTree`` for a flavor's nodes."""

    def __init__(self, levels: tuple[str, ...], nodes: list[NodeView]) -> None:
        self.levels = list(levels)
        self.lowest_is_node = bool(levels) and levels[-1] == names.HOSTNAME_LABEL
        self.leaves: dict[str, Domain] = {}
        self.roots: dict[str, Domain] = {}
        self.per_level: list[dict[str, Domain]] = [{} for _ in levels]
        self.node_to_domain: dict[str, str] = {}
        self.count = 0
        for node in nodes:
            values = [node.labels.get(level, "") for level in levels]
            leaf_id = node.labels.get(names.HOSTNAME_LABEL, "") if self.lowest_is_node else ",".join(values)
            leaf = self.leaves.get(leaf_id)
            if leaf is None:
                leaf = Domain(leaf_id, values)
                leaf.leaf_idx = len(self.leaves)
                if self.lowest_is_node:
                    leaf.node = node
                self.leaves[leaf_id] = leaf
            for name, value in node.allocatable.items():
                leaf.capacity[name] = leaf.capacity.get(name, 0) + value
            self.node_to_domain[node.name] = leaf_id
        for leaf in self.leaves.values():
            leaf.idx = self.count
            self.count += 1
            self.per_level[len(leaf.values) - 1][leaf.id] = leaf
            self._link(leaf)
        self.leaf_list = sorted(self.leaves.values(), key=lambda d: d.leaf_idx)
        #: Per level, its domains by rank, when no two domains of a level share their values (ranks are then
        #: unique and name a domain); else None (see :mod:`jobsetctl.kueue.engine.tas_order`).
        self.by_rank: list[list[Domain]] | None = None
        by_rank: list[list[Domain]] = []
        for level in self.per_level:
            rank, previous = -1, None
            ranked: list[Domain] = []
            for domain in sorted(level.values(), key=lambda d: d.values):
                if domain.values != previous:
                    rank, previous = rank + 1, domain.values
                domain.rank = rank
                ranked.append(domain)
            by_rank.append(ranked)
        if all(not ranked or ranked[-1].rank + 1 == len(ranked) for ranked in by_rank):
            self.by_rank = by_rank

    def _link(self, domain: Domain) -> None:
        if len(domain.values) == 1:
            self.roots[domain.id] = domain
            return
        parent_values = domain.values[:-1]
        parent_id = ",".join(parent_values)
        level = self.per_level[len(parent_values) - 1]
        parent = level.get(parent_id)
        if parent is None:
            parent = Domain(parent_id, parent_values)
            parent.idx = self.count
            self.count += 1
            level[parent_id] = parent
            self._link(parent)
        domain.parent = parent
        parent.children.append(domain)


# ---- requests -------------------------------------------------------------------------------------------


@dataclass(slots=True)
class PodSetRequest:
    """``TASPodSetRequests``."""

    podset: dict[str, Any]
    name: str
    per_pod: Requests
    count: int
    flavor: str
    implied: bool = False
    group: str | None = None


@dataclass(slots=True)
class DomainState:
    pod_count: int = 0
    slice_count: int = 0
    pod_count_with_leader: int = 0
    slice_count_with_leader: int = 0
    leader_count: int = 0


@dataclass(slots=True)
class Stats:
    """``tasExclusionStats``."""

    total: int = 0
    node_selector: int = 0
    affinity: int = 0
    topology_domain: int = 0
    taints: dict[str, int] = field(default_factory=dict)
    resources: dict[str, int] = field(default_factory=dict)

    def has_exclusions(self) -> bool:
        return bool(self.node_selector or self.affinity or self.taints or self.topology_domain or self.resources)

    def reasons(self) -> str:
        out = []
        if self.node_selector:
            out.append(f"nodeSelector: {self.node_selector}")
        if self.affinity:
            out.append(f"affinity: {self.affinity}")
        if self.topology_domain:
            out.append(f"topologyDomain: {self.topology_domain}")
        out.extend(f'taint "{k}": {v}' for k, v in sorted(self.taints.items()))
        out.extend(f'resource "{k}": {v}' for k, v in sorted(self.resources.items()))
        return ", ".join(sorted(out))


def slice_constraints(request: dict[str, Any] | None) -> list[tuple[str, int]]:
    """``PodSetSliceRequiredTopologyConstraints``: multi-layer constraints, or the single slice layer."""
    if not request:
        return []
    layers = request.get("podsetSliceRequiredTopologyConstraints")
    if isinstance(layers, list) and layers:
        return [(str(_mapping(layer).get("topology", "")), int(_mapping(layer).get("size") or 0)) for layer in layers]
    topology = request.get("podSetSliceRequiredTopology")
    if not topology:
        return []
    size = request.get("podSetSliceSize")
    return [(str(topology), size if isinstance(size, int) else 0)]


def explicitly_requests_tas(podset: dict[str, Any]) -> bool:
    """``IsExplicitlyRequestingTAS``."""
    request = _mapping(podset.get("topologyRequest"))
    return bool(request) and (request.get("required") is not None or request.get("preferred") is not None
                              or request.get("unconstrained") is True or bool(slice_constraints(request)))


# ---- a TAS flavor ---------------------------------------------------------------------------------------
