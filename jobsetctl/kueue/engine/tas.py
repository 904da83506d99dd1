"""Topology-aware scheduling (scheduling.md §2.5; ``pkg/cache/scheduler/tas_flavor_snapshot.go``,
``tas_topology_tree.go``, ``flavorassigner/tas_flavorassigner.go``, ``controller/tas/topology_ungater.go``).

A TAS flavor (a ResourceFlavor with ``topologyName``) sees the nodes that carry its node labels and
every level label of its Topology (Ready and schedulable ones). They form a tree of domains, one level
per Topology level; a leaf is a node when the lowest level is ``kubernetes.io/hostname``. Each leaf's
free capacity is its allocatable minus the requests of running pods that are not TAS pods; admitted TAS
workloads add their per-domain usage on top.

Placement of one podset (``findTopologyAssignment``):

1. count how many pods (and slices) of the podset fit each leaf, and sum up the tree;
2. at the requested level (required / preferred; the top level for slice-only requests, the lowest for
   unconstrained ones) pick the domain: BestFit (required, preferred) takes the tightest domain that
   holds everything, LeastFreeCapacity (unconstrained, implied) the first that does in ascending order;
   if none does, ``required`` fails, ``preferred`` retries one level up, and at the top the domains are
   taken greedily (BestFit replacing the last one by the tightest that covers the remainder);
3. descend level by level to the leaves the same way;
4. the assignment lists the leaves (hostnames only for hostname topologies) in lexicographic order.

Leader/worker podsets (``podSetGroupName``) are placed together, the leader first. Multi-layer slice
constraints are honoured. Balanced placement (TASBalancedPlacement, alpha and off) and the node
replacement of failed nodes are not modelled.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jobsetctl.fakecluster.scheduler.podinfo import Toleration, parse_taints, parse_tolerations
from jobsetctl.fakecluster.scheduler.selectors import compile_required_node_affinity
from jobsetctl.kube.podspec import pod_requests
from jobsetctl.kueue.engine import names
from jobsetctl.kueue.engine.amounts import (
    PODS,
    Requests,
    count_in,
    count_in_with_limiting,
    requests_from_fractions,
    requests_from_resource_list,
)
from jobsetctl.kueue.engine.tas_encoding import TopologyAssignment, from_api, to_api

if TYPE_CHECKING:
    from jobsetctl.fakecluster.apiserver import WatchEvent
    from jobsetctl.kueue.engine.cache import ClusterQueueState
    from jobsetctl.kueue.engine.core import Engine
    from jobsetctl.kueue.engine.flavors import Assignment, FlavorAssigner
    from jobsetctl.kueue.engine.objects import FlavorSpec, ResourceGroup
    from jobsetctl.kueue.engine.workload import WorkloadInfo

MAX_INT32 = 2**31 - 1
_SCHEDULING_EFFECTS = ("NoSchedule", "NoExecute")


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


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
    __slots__ = ("capacity", "children", "id", "idx", "leaf_idx", "node", "parent", "values")

    def __init__(self, domain_id: str, values: list[str]) -> None:
        self.id = domain_id
        self.idx = 0
        self.parent: Domain | None = None
        self.children: list[Domain] = []
        self.values = values
        self.leaf_idx = -1
        self.node: NodeView | None = None
        self.capacity: Requests = {}


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


class TASFlavor:
    """One TAS flavor: its tree, free capacity, admitted TAS usage, and the placement algorithm."""

    def __init__(self, manager: TASManager, flavor: FlavorSpec, levels: tuple[str, ...]) -> None:
        self.manager = manager
        self.flavor = flavor
        self.name = flavor.name
        self.topology_name = flavor.topology_name or ""
        self.levels = levels
        self.tolerations: tuple[Toleration, ...] = flavor.tolerations
        self.tree: Tree | None = None
        self.generation = -1
        #: Admitted TAS usage per leaf id (requests of the pods, plus one ``pods`` each).
        self.usage: dict[str, Requests] = {}
        #: Per workload key: the (leaf id, requests) it added, to remove exactly that.
        self.workload_usage: dict[str, list[tuple[str, Requests]]] = {}
        self.states: list[DomainState] = []

    # ---- tree and capacity ---------------------------------------------------------------------------
    def current_tree(self) -> Tree:
        manager = self.manager
        if self.tree is None or self.generation != manager.node_generation:
            labels = self.flavor.labels
            nodes = [n for n in manager.sorted_nodes() if n.usable
                     and all(n.labels.get(k) == v for k, v in labels.items())
                     and all(level in n.labels for level in self.levels)]
            self.tree = Tree(self.levels, nodes)
            self.generation = manager.node_generation
        return self.tree

    def free_capacity(self, leaf: Domain) -> Requests:
        """Allocatable minus the non-TAS pods on the leaf's nodes."""
        free = dict(leaf.capacity)
        tree = self.tree
        assert tree is not None
        for node_name, usage in self.manager.non_tas_usage_of(leaf.id, tree):
            del node_name
            for name, value in usage.items():
                free[name] = free.get(name, 0) - value
        return free

    def remaining(self, leaf: Domain, simulate_empty: bool) -> Requests:
        free = self.free_capacity(leaf)
        if simulate_empty:
            return free
        for name, value in self.usage.get(leaf.id, {}).items():
            free[name] = free.get(name, 0) - value
        return free

    # ---- usage ---------------------------------------------------------------------------------------
    def add_workload(self, info: WorkloadInfo) -> None:
        self.remove_workload(info)
        entries: list[tuple[str, Requests]] = []
        for podset in info.podsets:
            if podset.topology_assignment is None or not podset.flavors or self.name not in podset.flavors.values():
                continue
            ta = from_api(podset.topology_assignment)
            if ta is None:
                continue
            per_pod = self.manager.full_per_pod(info, podset.name)
            tree = self.current_tree()
            for values, count in ta.domains:
                leaf_id = values[-1] if tree.lowest_is_node else ",".join(values)
                requests = {name: value * count for name, value in per_pod.items()}
                requests[PODS] = requests.get(PODS, 0) + count
                entries.append((leaf_id, requests))
        if not entries:
            return
        self.workload_usage[info.key] = entries
        for leaf_id, requests in entries:
            usage = self.usage.setdefault(leaf_id, {})
            for name, value in requests.items():
                usage[name] = usage.get(name, 0) + value

    def remove_workload(self, info: WorkloadInfo | str) -> None:
        key = info if isinstance(info, str) else info.key
        entries = self.workload_usage.pop(key, None)
        for leaf_id, requests in entries or ():
            usage = self.usage.setdefault(leaf_id, {})
            for name, value in requests.items():
                usage[name] = usage.get(name, 0) - value

    def fits(self, domains: list[tuple[str, Requests, int]]) -> bool:
        """``TASFlavorSnapshot.Fits``: every domain still holds its pods."""
        tree = self.current_tree()
        for leaf_id, per_pod, count in domains:
            leaf = tree.leaves.get(leaf_id)
            if leaf is None:
                return False
            need = dict(per_pod)
            need[PODS] = need.get(PODS, 0) + 1
            if count_in(need, self.remaining(leaf, False)) < count:
                return False
        return True

    # ---- placement -------------------------------------------------------------------------------------
    def find_assignments(self, requests: list[PodSetRequest], *, simulate_empty: bool = False,
                         assumed: dict[str, Requests] | None = None) -> dict[str, tuple[TopologyAssignment | None, str]]:
        """``FindTopologyAssignmentsForFlavor``: per podset, the assignment or the failure reason."""
        result: dict[str, tuple[TopologyAssignment | None, str]] = {}
        assumed = {} if assumed is None else assumed
        groups: dict[str, list[PodSetRequest]] = {}
        for index, request in enumerate(requests):
            groups.setdefault(request.group if request.group is not None else str(index), []).append(request)
        for members in groups.values():
            leader: PodSetRequest | None = None
            workers = members[0]
            if len(members) > 1:
                leader = members[1]
                if leader.count > workers.count:
                    leader, workers = members[0], members[1]
            assignments, reason = self._find(workers, leader, assumed, simulate_empty)
            for member in members:
                result[member.name] = (assignments.get(member.name), reason)
            if reason:
                return result
            for member in members:
                assignment = assignments.get(member.name)
                if assignment is None:
                    continue
                tree = self.current_tree()
                for values, count in assignment.domains:
                    leaf_id = values[-1] if tree.lowest_is_node else ",".join(values)
                    usage = assumed.setdefault(leaf_id, {})
                    for name, value in member.per_pod.items():
                        usage[name] = usage.get(name, 0) + value * count
                    usage[PODS] = usage.get(PODS, 0) + count
        return result

    def level_index(self, key: str) -> int | None:
        try:
            return self.levels.index(key)
        except ValueError:
            return None

    def has_level(self, request: dict[str, Any] | None) -> bool:
        """``HasLevel``."""
        main = self._level_key(request)
        if main is None:
            return False
        layers = slice_constraints(request)
        slice_key = layers[0][0] if layers else self.levels[-1]
        if self.level_index(main) is None or self.level_index(slice_key) is None:
            return False
        return all(self.level_index(topology) is not None for topology, _ in layers)

    def _level_key(self, request: dict[str, Any] | None) -> str | None:
        """``levelKey``."""
        if not request:
            return None
        if request.get("required") is not None:
            return str(request["required"])
        if request.get("preferred") is not None:
            return str(request["preferred"])
        if slice_constraints(request):
            return self.levels[0]
        if request.get("unconstrained") is True:
            return self.levels[-1]
        return None

    def _find(self, workers: PodSetRequest, leader: PodSetRequest | None, assumed: dict[str, Requests],
              simulate_empty: bool) -> tuple[dict[str, TopologyAssignment], str]:
        """``findTopologyAssignment``."""
        request = _mapping(workers.podset.get("topologyRequest")) or None
        tree = self.current_tree()
        self.states = [DomainState() for _ in range(tree.count)]
        stats = Stats()
        per_pod = dict(workers.per_pod)
        per_pod[PODS] = per_pod.get(PODS, 0) + 1
        leader_pod: Requests | None = None
        leader_count = 0
        if leader is not None:
            leader_pod = dict(leader.per_pod)
            leader_pod[PODS] = leader_pod.get(PODS, 0) + 1
            leader_count = 1
        layers = slice_constraints(request)
        slice_size = 1
        if layers:
            slice_size = layers[0][1]
            if slice_size <= 0:
                return {}, "slice topology requested, but slice size not provided"
        required = bool(request) and request.get("required") is not None  # type: ignore[union-attr]
        unconstrained = (bool(request) and request.get("unconstrained") is True) or workers.implied or (  # type: ignore[union-attr]
            bool(layers) and request.get("required") is None and request.get("preferred") is None)  # type: ignore[union-attr]
        key = self._level_key(request)
        if key is None and workers.implied:
            key = self.levels[-1]
        if key is None:
            return {}, "topology level not specified"
        level_idx = self.level_index(key)
        if level_idx is None:
            return {}, f"no requested topology level: {key}"
        slice_key = layers[0][0] if layers else self.levels[-1]
        slice_idx = self.level_index(slice_key)
        if slice_idx is None:
            return {}, f"no requested topology level for slices: {slice_key}"
        if level_idx > slice_idx:
            return {}, f"podset slice topology {slice_key} is above the podset topology {key}"
        size_at_level: dict[int, int] = {}
        previous_size, previous_idx = slice_size, slice_idx
        for topology, size in layers[1:]:
            inner = self.level_index(topology)
            if inner is None:
                return {}, f"no requested topology level for additional slice layer: {topology}"
            if inner <= previous_idx:
                return {}, f"additional slice layer topology {topology} must be at a lower level than {self.levels[previous_idx]}"
            if size <= 0 or previous_size % size != 0:
                return {}, f"additional slice layer size {size} must evenly divide parent layer size {previous_size}"
            for lvl in range(previous_idx + 1, inner + 1):
                size_at_level[lvl] = size
            previous_size, previous_idx = size, inner

        spec = _mapping(_mapping(workers.podset.get("template")).get("spec"))
        tolerations = parse_tolerations(spec) + self.tolerations
        selector = {str(k): str(v) for k, v in _mapping(spec.get("nodeSelector")).items()} if tree.lowest_is_node else {}
        affinity = compile_required_node_affinity({}, spec.get("affinity"))

        # phase 1: counts per leaf, then up the tree
        for leaf in tree.leaf_list:
            stats.total += 1
            node = leaf.node
            if node is not None:
                blocking = next((t for t in node.taints if t.effect in _SCHEDULING_EFFECTS
                                 and not any(tol.tolerates(t) for tol in tolerations)), None)
                if blocking is not None:
                    text = f"{blocking.key}={blocking.value}:{blocking.effect}" if blocking.value else \
                        f"{blocking.key}:{blocking.effect}"
                    stats.taints[text] = stats.taints.get(text, 0) + 1
                    continue
                if any(node.labels.get(k) != v for k, v in selector.items()):
                    stats.node_selector += 1
                    continue
                if affinity.terms is not None and not affinity.matches(node.labels, node.name):
                    stats.affinity += 1
                    continue
            remaining = self.remaining(leaf, simulate_empty)
            extra = assumed.get(leaf.id)
            if extra:
                for name, value in extra.items():
                    remaining[name] = remaining.get(name, 0) - value
            state = self.states[leaf.idx]
            state.pod_count, limiting = count_in_with_limiting(per_pod, remaining)
            if state.pod_count == 0 and limiting:
                stats.resources[limiting] = stats.resources.get(limiting, 0) + 1
            state.leader_count = 0
            if leader_pod is not None and count_in(leader_pod, remaining) > 0:
                state.leader_count = 1
                for name, value in leader_pod.items():
                    remaining[name] = remaining.get(name, 0) - value
            state.pod_count_with_leader = count_in(per_pod, remaining)
        for root in tree.roots.values():
            self._fill(root, slice_size, slice_idx, 0, size_at_level, leader_count > 0)

        # phase 2a: the level and the domains that hold everything
        fit_level, fit, reason = self._find_level(level_idx, workers.count, slice_size, leader_count, required,
                                                  unconstrained, layers, stats)
        if reason:
            return {}, reason
        # phase 2b: down to the leaves
        fit = self._minimum(fit, workers.count, leader_count, slice_size, unconstrained, True)
        current = fit_level
        while current < min(len(tree.per_level) - 1, slice_idx):
            lower = self._sorted([c for d in fit for c in d.children], unconstrained)
            fit = self._minimum(lower, workers.count, leader_count, slice_size, unconstrained, True)
            current += 1
        while current < len(tree.per_level) - 1:
            size_on_level = slice_size
            if current >= slice_idx:
                size_on_level = size_at_level.get(current + 1, 1)
            new_fit: list[Domain] = []
            for domain in fit:
                children = self._sorted(domain.children, unconstrained)
                if size_on_level > 1:
                    for child in children:
                        state = self.states[child.idx]
                        state.slice_count = state.pod_count // size_on_level
                        state.slice_count_with_leader = state.pod_count_with_leader // size_on_level
                state = self.states[domain.idx]
                new_fit.extend(self._minimum(children, state.pod_count, state.leader_count, size_on_level,
                                             unconstrained, size_on_level > 1))
            fit = new_fit
            current += 1
        out: dict[str, TopologyAssignment] = {}
        if leader is not None:
            leader_domains: list[tuple[Domain, int]] = []
            worker_domains: list[Domain] = []
            for domain in fit:
                state = self.states[domain.idx]
                if state.leader_count > 0:
                    leader_domains.append((domain, state.leader_count))
                if state.pod_count > 0:
                    worker_domains.append(domain)
            out[leader.name] = self._build([(d, c) for d, c in leader_domains])
            fit = worker_domains
        out[workers.name] = self._build([(d, self.states[d.idx].pod_count) for d in fit])
        return out, ""

    def _fill(self, domain: Domain, slice_size: int, slice_idx: int, level: int, size_at_level: dict[int, int],
              leader_required: bool) -> None:
        """``fillInCountsHelper``."""
        state = self.states[domain.idx]
        if not domain.children:
            if level == slice_idx:
                state.slice_count = state.pod_count // slice_size
                state.slice_count_with_leader = state.pod_count_with_leader // slice_size
            return
        children_capacity = slice_capacity = 0
        contributor = False
        min_pod_diff = min_slice_diff = MAX_INT32
        leader_count = 0
        inner = size_at_level.get(level + 1)
        for child in domain.children:
            self._fill(child, slice_size, slice_idx, level + 1, size_at_level, leader_required)
            child_state = self.states[child.idx]
            pods = child_state.pod_count
            pods_leader = child_state.pod_count_with_leader
            if inner:
                pods = (pods // inner) * inner
                pods_leader = (pods_leader // inner) * inner
            children_capacity += pods
            slice_capacity += child_state.slice_count
            if not leader_required or child_state.leader_count > 0:
                contributor = True
                min_pod_diff = min(pods - pods_leader, min_pod_diff)
                min_slice_diff = min(child_state.slice_count - child_state.slice_count_with_leader, min_slice_diff)
            leader_count = max(child_state.leader_count, leader_count)
        state.pod_count = children_capacity
        slice_with_leader = 0
        if contributor:
            state.pod_count_with_leader = children_capacity - min_pod_diff
            slice_with_leader = slice_capacity - min_slice_diff
        else:
            state.pod_count_with_leader = 0
        state.leader_count = leader_count
        if level == slice_idx:
            slice_capacity = state.pod_count // slice_size
            slice_with_leader = state.pod_count_with_leader // slice_size
        state.slice_count = slice_capacity
        state.slice_count_with_leader = slice_with_leader

    def _least_free(self, unconstrained: bool) -> bool:
        return unconstrained and self.manager.engine.settings.gate("TASProfileMixed")

    def _sorted(self, domains: list[Domain], unconstrained: bool) -> list[Domain]:
        """``sortedDomains``: BestFit slices desc, LeastFreeCapacity slices asc; then pods asc; values."""
        states = self.states
        ascending = self._least_free(unconstrained)
        return sorted(domains, key=lambda d: (states[d.idx].slice_count if ascending else -states[d.idx].slice_count,
                                              states[d.idx].pod_count, self._value_key(d)))

    def _sorted_with_leader(self, domains: list[Domain], unconstrained: bool) -> list[Domain]:
        states = self.states
        ascending = self._least_free(unconstrained)
        return sorted(domains, key=lambda d: (
            -states[d.idx].leader_count,
            states[d.idx].slice_count_with_leader if ascending else -states[d.idx].slice_count_with_leader,
            states[d.idx].pod_count_with_leader, self._value_key(d)))

    def _value_key(self, domain: Domain) -> Any:
        return domain.values

    def _best_fit(self, domains: list[Domain], needed: int, leader_count: int, slices: bool) -> Domain:
        """``findBestFitDomainBy``: the first domain with the smallest count that is enough."""
        states = self.states

        def count_of(d: Domain) -> int:
            state = states[d.idx]
            if slices:
                return state.slice_count_with_leader if leader_count > 0 else state.slice_count
            return state.pod_count_with_leader if leader_count > 0 else state.pod_count
        best = domains[0]
        best_count = MAX_INT32
        found = False
        for domain in domains:
            if states[domain.idx].leader_count < leader_count:
                continue
            count = count_of(domain)
            if needed <= count < best_count:
                best, best_count, found = domain, count, True
        return best if found else domains[0]

    def _find_level(self, level_idx: int, count: int, slice_size: int, leader_count: int, required: bool,
                    unconstrained: bool, layers: list[tuple[str, int]], stats: Stats) -> tuple[int, list[Domain], str]:
        """``findLevelWithFitDomains``."""
        tree = self.current_tree()
        states = self.states
        domains = list(tree.per_level[level_idx].values())
        if not domains:
            return 0, [], f"no topology domains at level: {self.levels[level_idx]}"
        ordered = self._sorted_with_leader(domains, unconstrained)
        top = ordered[0]
        slice_count = count // slice_size
        best_fit = not self._least_free(unconstrained)

        def not_fit(fit_count: int, total: int) -> str:
            if len(layers) > 1:
                return self._multi_layer_message(level_idx, count, layers, stats)
            return self._not_fit_message(fit_count, total, slice_size, stats)

        if best_fit and states[top.idx].slice_count_with_leader >= slice_count and states[top.idx].leader_count >= leader_count:
            top = self._best_fit(ordered, slice_count, leader_count, True)
        if not best_fit:
            for candidate in ordered:
                state = states[candidate.idx]
                capacity = state.slice_count
                if leader_count > 0:
                    if state.leader_count < leader_count:
                        continue
                    capacity = state.slice_count_with_leader
                if capacity >= slice_count:
                    return level_idx, [candidate], ""
            if required:
                return 0, [], not_fit(states[ordered[-1].idx].pod_count, slice_count)
        if states[top.idx].slice_count_with_leader < slice_count or states[top.idx].leader_count < leader_count:
            if required:
                return 0, [], not_fit(states[top.idx].slice_count, slice_count)
            if level_idx > 0 and not unconstrained:
                return self._find_level(level_idx - 1, count, slice_size, leader_count, required, unconstrained,
                                        layers, stats)
            results: list[Domain] = []
            remaining = slice_count
            remaining_leaders = leader_count
            ordered = self._prioritize_leader(ordered, count, leader_count, slice_size, True)
            idx = 0
            while remaining_leaders > 0 and idx < len(ordered) and states[ordered[idx].idx].leader_count > 0:
                domain = ordered[idx]
                if best_fit and states[domain.idx].slice_count_with_leader >= remaining:
                    domain = self._best_fit(ordered[idx:], remaining, remaining_leaders, True)
                results.append(domain)
                remaining_leaders -= states[domain.idx].leader_count
                remaining -= states[domain.idx].slice_count_with_leader
                idx += 1
            if remaining_leaders > 0:
                return 0, [], not_fit(leader_count - remaining_leaders, slice_count)
            rest = self._sorted(ordered[idx:], unconstrained)
            i = 0
            while remaining > 0 and i < len(rest):
                domain = rest[i]
                if best_fit and states[domain.idx].slice_count >= remaining:
                    domain = self._best_fit(rest[i:], remaining, 0, True)
                results.append(domain)
                remaining -= states[domain.idx].slice_count
                i += 1
            if remaining > 0:
                return 0, [], not_fit(slice_count - remaining, slice_count)
            return level_idx, results, ""
        return level_idx, [top], ""

    def _prioritize_leader(self, domains: list[Domain], count: int, leader_count: int, slice_size: int,
                           slices: bool) -> list[Domain]:
        """``prioritizeLeaderDomain``."""
        if leader_count == 0 or len(domains) < 2:
            return domains
        states = self.states
        required = count // slice_size if slices else count
        available = sum(states[d.idx].slice_count if slices else states[d.idx].pod_count for d in domains)
        for i, domain in enumerate(domains):
            state = states[domain.idx]
            if state.leader_count < leader_count:
                continue
            penalty = (state.slice_count - state.slice_count_with_leader) if slices else \
                (state.pod_count - state.pod_count_with_leader)
            if available - penalty < required:
                continue
            if i == 0:
                return domains
            return [domain, *domains[:i], *domains[i + 1:]]
        return domains

    def _minimum(self, domains: list[Domain], count: int, leader_count: int, slice_size: int, unconstrained: bool,
                 slices: bool) -> list[Domain]:
        """``updateCountsToMinimumGeneric``: take domains in order until ``count`` pods (or slices) and the
        leaders are placed, replacing the last by the tightest that is enough (BestFit)."""
        states = self.states
        best_fit = not self._least_free(unconstrained)
        domains = self._prioritize_leader(domains, count, leader_count, slice_size, slices)
        result: list[Domain] = []
        remaining = count // slice_size if slices else count
        remaining_leaders = leader_count
        for i, dom in enumerate(domains):
            if remaining_leaders > 0:
                state = states[dom.idx]
                with_leader = state.slice_count_with_leader if slices else state.pod_count_with_leader
                if best_fit and with_leader >= remaining and state.leader_count >= remaining_leaders:
                    dom = self._best_fit(domains[i:], remaining, remaining_leaders, slices)
                    state = states[dom.idx]
                    with_leader = state.slice_count_with_leader if slices else state.pod_count_with_leader
                factor = slice_size if slices else 1
                if with_leader >= remaining and state.leader_count >= remaining_leaders:
                    if slices:
                        state.slice_count = remaining
                    else:
                        state.pod_count = remaining
                    state.leader_count = remaining_leaders
                    state.pod_count = remaining * factor
                    result.append(dom)
                    return result
                if with_leader > remaining:
                    with_leader = remaining
                if state.leader_count > remaining_leaders:
                    state.leader_count = remaining_leaders
                if slices:
                    state.slice_count_with_leader = with_leader
                    state.slice_count = with_leader
                else:
                    state.pod_count_with_leader = with_leader
                state.pod_count = with_leader * factor
                remaining_leaders -= state.leader_count
                remaining -= with_leader
                result.append(dom)
                continue
            if slices:
                if best_fit and states[dom.idx].slice_count >= remaining:
                    dom = self._best_fit(domains[i:], remaining, 0, True)
                state = states[dom.idx]
                state.leader_count = 0
                if state.slice_count >= remaining:
                    state.pod_count = remaining * slice_size
                    state.slice_count = remaining
                    result.append(dom)
                    return result
                state.pod_count = state.slice_count * slice_size
                remaining -= state.slice_count
                result.append(dom)
                continue
            if best_fit and states[dom.idx].pod_count >= remaining:
                dom = self._best_fit(domains[i:], remaining, 0, False)
            state = states[dom.idx]
            state.leader_count = 0
            if state.pod_count >= remaining:
                state.pod_count = remaining
                result.append(dom)
                return result
            remaining -= state.pod_count
            result.append(dom)
        return result

    def _build(self, domains: list[tuple[Domain, int]]) -> TopologyAssignment:
        """``buildAssignment``: lexicographic by level values; hostnames only for hostname topologies."""
        tree = self.current_tree()
        level = len(self.levels) - 1 if tree.lowest_is_node else 0
        ordered = sorted(domains, key=lambda item: item[0].values)
        return TopologyAssignment(list(self.levels[level:]),
                                  [(list(d.values[level:]), c) for d, c in ordered if c != 0])

    def _not_fit_message(self, fit: int, total: int, slice_size: int, stats: Stats) -> str:
        unit = "pod" if slice_size == 1 else "slice"
        if fit == 0:
            text = f'topology "{self.topology_name}" doesn\'t allow to fit any of {total} {unit}(s)'
        else:
            text = f'topology "{self.topology_name}" allows to fit only {fit} out of {total} {unit}(s)'
        if stats.has_exclusions():
            text += f". Total nodes: {stats.total}; excluded: {stats.reasons()}"
        return text

    def _multi_layer_message(self, level_idx: int, count: int, layers: list[tuple[str, int]], stats: Stats) -> str:
        text = f'topology "{self.topology_name}" doesn\'t allow to fit'
        tree = self.current_tree()
        best: Domain | None = None
        for domain in tree.per_level[level_idx].values():
            state, best_state = self.states[domain.idx], (self.states[best.idx] if best else None)
            if best is None or state.slice_count > best_state.slice_count or (  # type: ignore[union-attr]
                    state.slice_count == best_state.slice_count and domain.id < best.id):  # type: ignore[union-attr]
                best = domain
        if best is None:
            return text
        for topology, size in layers:
            target = self.level_index(topology)
            if target is None or size <= 0:
                continue
            text += f"; {self._slices_in(best, level_idx, target, size)}/{count // size} slice(s) fit on level {topology}"
        if stats.has_exclusions():
            text += f". Total nodes: {stats.total}; excluded: {stats.reasons()}"
        return text

    def _slices_in(self, domain: Domain, level: int, target: int, size: int) -> int:
        if level == target:
            return self.states[domain.idx].pod_count // size
        return sum(self._slices_in(child, level + 1, target, size) for child in domain.children)


# ---- the manager: caches and the flavor-assigner side ----------------------------------------------------


class TASManager:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.nodes: dict[str, NodeView] = {}
        self.node_generation = 0
        self._sorted_nodes: list[NodeView] | None = None
        #: Non-TAS pods on nodes: pod key -> (node, requests).
        self.non_tas_pods: dict[str, tuple[str, Requests]] = {}
        self.non_tas_by_node: dict[str, Requests] = {}
        self.flavors: dict[str, TASFlavor] = {}
        self._per_pod: dict[tuple[str, str], tuple[Any, Requests]] = {}

    # ---- flavors ---------------------------------------------------------------------------------------
    def on_flavors_changed(self) -> None:
        cache = self.engine.cache
        current: dict[str, TASFlavor] = {}
        for name, flavor in cache.flavors.items():
            if flavor.topology_name is None or flavor.topology_name not in cache.topologies:
                continue
            levels = cache.topologies[flavor.topology_name]
            existing = self.flavors.get(name)
            if existing is not None and existing.flavor == flavor and existing.levels == levels:
                current[name] = existing
                continue
            tas = TASFlavor(self, flavor, levels)
            if existing is not None:
                tas.usage, tas.workload_usage = existing.usage, existing.workload_usage
            current[name] = tas
        self.flavors = current
        for state in cache.cluster_queues.values():
            self.on_cluster_queue(state)

    def on_cluster_queue(self, state: ClusterQueueState) -> None:
        state.tas_flavors = {f: self.flavors[f] for f in state.spec.flavors() if f in self.flavors}

    def forget_workload(self, key: str) -> None:
        for flavor in self.flavors.values():
            flavor.remove_workload(key)

    def full_per_pod(self, info: WorkloadInfo, podset_name: str) -> Requests:
        """``NewRequestsFromPodSpec`` of a podset's template (TAS counts the whole pod, not only the
        resources the ClusterQueue covers)."""
        for podset in info.spec_podsets():
            if str(podset.get("name") or "main") == podset_name:
                spec = _mapping(podset.get("template")).get("spec")
                hit = self._per_pod.get((info.key, podset_name))
                if hit is not None and hit[0] is spec:
                    return hit[1]
                value = requests_from_fractions(pod_requests(spec))
                self._per_pod[(info.key, podset_name)] = (spec, value)
                return value
        return {}

    # ---- nodes and pods --------------------------------------------------------------------------------
    def sorted_nodes(self) -> list[NodeView]:
        if self._sorted_nodes is None:
            self._sorted_nodes = [self.nodes[n] for n in sorted(self.nodes)]
        return self._sorted_nodes

    def non_tas_usage_of(self, leaf_id: str, tree: Tree) -> Iterator[tuple[str, Requests]]:
        if tree.lowest_is_node:
            usage = self.non_tas_by_node.get(leaf_id)
            if usage:
                yield leaf_id, usage
            return
        for node_name, domain_id in tree.node_to_domain.items():
            if domain_id == leaf_id:
                usage = self.non_tas_by_node.get(node_name)
                if usage:
                    yield node_name, usage

    def keys_for(self, event: WatchEvent) -> Iterable[Hashable]:
        from jobsetctl.fakecluster.apiserver import WatchType

        _, kind, namespace, name = event.key
        if kind == "Node":
            if event.type == WatchType.DELETED:
                self.nodes.pop(name, None)
            else:
                view = node_view(event.obj)
                old = self.nodes.get(name)
                if old is not None and old == view:
                    return
                self.nodes[name] = view
            self.node_generation += 1
            self._sorted_nodes = None
            self.engine.request_requeue(self.engine.cache.cluster_queues.keys())
            return
        if kind != "Pod":
            return
        pod = event.obj
        key = f"{namespace}/{name}"
        spec = _mapping(pod.get("spec"))
        status = _mapping(pod.get("status"))
        annotations = _mapping(_mapping(pod.get("metadata")).get("annotations"))
        node_name = spec.get("nodeName")
        terminated = status.get("phase") in ("Succeeded", "Failed")
        live = event.type != WatchType.DELETED and node_name and not terminated and not is_tas_pod(annotations)
        previous = self.non_tas_pods.pop(key, None)
        if previous is not None:
            usage = self.non_tas_by_node.setdefault(previous[0], {})
            for res, value in previous[1].items():
                usage[res] = usage.get(res, 0) - value
        if live:
            requests = requests_from_fractions(pod_requests(spec))
            self.non_tas_pods[key] = (str(node_name), requests)
            usage = self.non_tas_by_node.setdefault(str(node_name), {})
            for res, value in requests.items():
                usage[res] = usage.get(res, 0) + value
        if event.type != WatchType.DELETED and names.WORKLOAD_ANNOTATION in annotations and _gated(spec):
            yield ("ungate", namespace, str(annotations[names.WORKLOAD_ANNOTATION]))

    def reconcile(self, key: Hashable) -> float | None:
        if isinstance(key, tuple) and key and key[0] == "ungate":
            _, namespace, workload = key
            ungate(self.engine, str(namespace), str(workload))
        return None

    # ---- scheduler side --------------------------------------------------------------------------------
    def assigner_for(self, cq: ClusterQueueState) -> TASAssigner:
        return TASAssigner(self)

    def requests_for(self, info: WorkloadInfo, cq: ClusterQueueState, assignment: Assignment) -> Any:
        return TASAssigner(self).workload_requests(info, cq, assignment)

    def preemption_fits(self, info: WorkloadInfo, requests: Any, cq: ClusterQueueState) -> bool:
        if not requests:
            return True
        result = TASAssigner(self).find_all(cq, requests)
        return all(not reason for _, reason in result.values())


def is_tas_pod(annotations: dict[str, Any]) -> bool:
    """``utiltas.IsTAS``."""
    return any(k in annotations for k in (names.PREFERRED_TOPOLOGY_ANNOTATION, names.REQUIRED_TOPOLOGY_ANNOTATION,
                                          names.SLICE_REQUIRED_TOPOLOGY_ANNOTATION,
                                          names.UNCONSTRAINED_TOPOLOGY_ANNOTATION))


def _gated(spec: dict[str, Any]) -> bool:
    return any(_mapping(g).get("name") == names.TOPOLOGY_SCHEDULING_GATE for g in spec.get("schedulingGates") or [])


class TASAssigner:
    """The flavor assigner's TAS side (``tas_flavorassigner.go`` and the TAS parts of ``assignFlavors``)."""

    def __init__(self, manager: TASManager) -> None:
        self.manager = manager

    def is_tas_only(self, cq: ClusterQueueState) -> bool:
        return cq.is_tas_only()

    def implied(self, podset: dict[str, Any], cq: ClusterQueueState) -> bool:
        return not explicitly_requests_tas(podset) and self.is_tas_only(cq)

    def requested(self, podset: dict[str, Any], cq: ClusterQueueState) -> bool:
        return explicitly_requests_tas(podset) or self.is_tas_only(cq)

    def check_podset_and_flavor(self, assigner: FlavorAssigner, podset: dict[str, Any], flavor: FlavorSpec,
                                group: ResourceGroup) -> str | None:
        """``checkPodSetAndFlavorMatchForTAS``."""
        cq = assigner.cq
        if self.requested(podset, cq):
            if self.implied(podset, cq):
                return None
            if flavor.topology_name is None:
                spec = _mapping(_mapping(podset.get("template")).get("spec"))
                requests = requests_from_fractions(pod_requests(spec))
                if not any(r in group.covered_resources for r in requests):
                    return None
                return f'Flavor "{flavor.name}" does not support TopologyAwareScheduling'
            tas = cq.tas_flavors.get(flavor.name)
            if tas is None:
                return f'Flavor "{flavor.name}" information missing in TAS cache'
            if not tas.has_level(_mapping(podset.get("topologyRequest")) or None):
                return f'Flavor "{flavor.name}" does not contain the requested level'
            return None
        if flavor.topology_name is not None:
            return f'Flavor "{flavor.name}" supports only TopologyAwareScheduling'
        return None

    def group_flavors_for_empty_podset(self, assigner: FlavorAssigner, index: int, group_flavors: dict[str, Any]) -> dict[str, Any]:
        podsets = assigner.info.spec_podsets()
        request = _mapping(podsets[index].get("topologyRequest")) if index < len(podsets) else {}
        if request.get("podSetGroupName"):
            return {r: f for r, f in group_flavors.items() if f.name in assigner.cq.tas_flavors}
        return {}

    def workload_requests(self, info: WorkloadInfo, cq: ClusterQueueState, assignment: Assignment,
                          errors: dict[str, str] | None = None) -> dict[str, list[PodSetRequest]]:
        """``WorkloadsTopologyRequests``: per TAS flavor, the podsets to place."""
        out: dict[str, list[PodSetRequest]] = {}
        for _index, podset in enumerate(info.spec_podsets()):
            if not self.requested(podset, cq):
                continue
            name = str(podset.get("name") or "main")
            psa = assignment.podset(name)
            if psa is None or psa.status.is_error() or psa.count == 0:
                continue
            if psa.topology_assignment is not None:
                continue
            if not cq.tas_flavors:
                if errors is not None:
                    errors[name] = "workload requires Topology, but there is no TAS cache information"
                continue
            tas_flavors = sorted({f.name for f in psa.flavors.values() if f.name in cq.tas_flavors})
            if not tas_flavors:
                if errors is not None:
                    errors[name] = "no TAS flavor assigned"
                continue
            if len(tas_flavors) > 1:
                if errors is not None:
                    errors[name] = f"more than one TAS flavor assigned: {', '.join(tas_flavors)}"
                continue
            request = _mapping(podset.get("topologyRequest"))
            out.setdefault(tas_flavors[0], []).append(PodSetRequest(
                podset, name, self.manager.full_per_pod(info, name), psa.count, tas_flavors[0],
                self.implied(podset, cq), str(request["podSetGroupName"]) if request.get("podSetGroupName") else None))
        return out

    def find_all(self, cq: ClusterQueueState, requests: dict[str, list[PodSetRequest]], *,
                 simulate_empty: bool = False) -> dict[str, tuple[TopologyAssignment | None, str]]:
        """``FindTopologyAssignmentsForWorkload``: flavors in name order."""
        result: dict[str, tuple[TopologyAssignment | None, str]] = {}
        assumed: dict[str, Requests] = {}
        for flavor_name in sorted(requests):
            tas = cq.tas_flavors.get(flavor_name)
            if tas is None:
                continue
            flavor_assumed = assumed if tas.current_tree().lowest_is_node else {}
            result.update(tas.find_assignments(requests[flavor_name], simulate_empty=simulate_empty,
                                               assumed=flavor_assumed))
        return result

    def after_quota(self, assigner: FlavorAssigner, assignment: Assignment) -> None:
        """The TAS step of ``assignFlavors`` once quota is assigned."""
        from jobsetctl.kueue.engine.flavors import FIT, NO_FIT, PREEMPT

        cq = assigner.cq
        errors: dict[str, str] = {}
        requests = self.workload_requests(assigner.info, cq, assignment, errors)
        for name, error in errors.items():
            psa = assignment.podset(name)
            if psa is not None:
                psa.status.err = error
                assignment._mode = None
        flavor_of = {r.name: r.flavor for rs in requests.values() for r in rs}
        if assignment.representative_mode() == FIT:
            result = self.find_all(cq, requests)
            failure = _failure(result, flavor_of)
            if failure is not None:
                psa = assignment.podset(failure[0])
                if psa is not None:
                    psa.status.reasons.append(failure[1])
                assignment.update_mode(failure[0], PREEMPT)
            else:
                self._apply(assignment, result)
        if assignment.representative_mode() == PREEMPT:
            result = self.find_all(cq, requests, simulate_empty=True)
            failure = _failure(result, flavor_of)
            if failure is not None:
                psa = assignment.podset(failure[0])
                if psa is not None:
                    for attempt in psa.attempts:
                        if attempt.flavor == failure[2]:
                            attempt.mode = NO_FIT
                            attempt.no_fit_reason = names.TOPOLOGY_PLACEMENT_FAILED
                assignment.update_mode(failure[0], NO_FIT)
            else:
                for flavor_requests in requests.values():
                    for request in flavor_requests:
                        assignment.update_mode(request.name, PREEMPT)

    def _apply(self, assignment: Assignment, result: dict[str, tuple[TopologyAssignment | None, str]]) -> None:
        by_hostname = self.manager.engine.settings.gate("TASAssignmentsEncodingByHostnamePrefix")
        for name, (ta, _) in result.items():
            psa = assignment.podset(name)
            if psa is not None:
                psa.topology_assignment = to_api(ta, by_hostname)

    def update_assignment_for_preemption(self, info: WorkloadInfo, cq: ClusterQueueState, assignment: Assignment,
                                         targets: list[Any]) -> None:
        """``updateAssignmentForTAS``: a Preempt assignment gets the TAS placement it will have after its
        targets are gone (or, without targets, on an empty cluster, to hold the place)."""
        from jobsetctl.kueue.engine.flavors import PREEMPT

        if assignment.representative_mode() != PREEMPT:
            return
        if not any(explicitly_requests_tas(p) for p in info.spec_podsets()) and not cq.is_tas_only():
            return
        requests = self.workload_requests(info, cq, assignment)
        if targets:
            preemptor = self.manager.engine.preemptor
            for target in targets:
                preemptor.remove(target.info)
            try:
                result = self.find_all(cq, requests)
            finally:
                for target in targets:
                    preemptor.add(target.info)
        else:
            result = self.find_all(cq, requests, simulate_empty=True)
        self._apply(assignment, result)

    def fits(self, info: WorkloadInfo, assignment: Assignment, cq: ClusterQueueState) -> bool:
        """``ClusterQueueSnapshot.Fits`` for the TAS part: each assigned domain still holds its pods."""
        for psa in assignment.podsets:
            if psa.topology_assignment is None:
                continue
            flavor = next((f.name for f in psa.flavors.values() if f.name in cq.tas_flavors), None)
            tas = cq.tas_flavors.get(flavor) if flavor else None
            ta = from_api(psa.topology_assignment)
            if tas is None or ta is None:
                continue
            per_pod = self.manager.full_per_pod(info, psa.name)
            tree = tas.current_tree()
            domains = [(values[-1] if tree.lowest_is_node else ",".join(values), per_pod, count)
                       for values, count in ta.domains]
            if not tas.fits(domains):
                return False
        return True


def _failure(result: dict[str, tuple[TopologyAssignment | None, str]],
             flavor_of: dict[str, str]) -> tuple[str, str, str] | None:
    for name, (_, reason) in result.items():
        if reason:
            return name, reason, flavor_of.get(name, "")
    return None


# ---- the topology ungater --------------------------------------------------------------------------------


def ungate(engine: Engine, namespace: str, workload_name: str) -> None:
    """``topologyUngater.Reconcile``: remove the topology gate from as many pods of each podset as its
    domains hold, adding the domain's level labels as nodeSelector (by pod rank when the pods carry their
    index labels, else greedily)."""
    api = engine.api
    workload = api.get(names.GROUP, "Workload", namespace, workload_name)
    if workload is None:
        return
    status = _mapping(workload.get("status"))
    if not any(c.get("type") == names.ADMITTED and c.get("status") == "True" for c in status.get("conditions") or []
               if isinstance(c, dict)):
        return
    admission = _mapping(status.get("admission"))
    podsets = {str(_mapping(p).get("name", "")): _mapping(p) for p in _mapping(workload.get("spec")).get("podSets") or []}
    pods = [p for p in api.list("", "Pod", namespace)
            if _mapping(_mapping(p.get("metadata")).get("annotations")).get(names.WORKLOAD_ANNOTATION) == workload_name
            and _mapping(p.get("status")).get("phase") not in ("Succeeded", "Failed")]
    for psa in admission.get("podSetAssignments") or []:
        psa = _mapping(psa)
        ta = from_api(psa.get("topologyAssignment"))
        if ta is None:
            continue
        name = str(psa.get("name", ""))
        members = [p for p in pods if _mapping(_mapping(p.get("metadata")).get("labels")).get(names.POD_SET_LABEL) == name]
        request = _mapping(podsets.get(name, {}).get("topologyRequest"))
        raw_count = psa.get("count")
        count = raw_count if isinstance(raw_count, int) else ta.total()
        plan = _by_rank(ta, members, request, count) or _greedy(ta, members)
        for pod, values in plan:
            spec = pod.setdefault("spec", {})
            gates = [g for g in spec.get("schedulingGates") or [] if _mapping(g).get("name") != names.TOPOLOGY_SCHEDULING_GATE]
            if gates:
                spec["schedulingGates"] = gates
            else:
                spec.pop("schedulingGates", None)
            selector = spec.setdefault("nodeSelector", {})
            selector.update(dict(zip(ta.levels, values, strict=False)))
            api.update_status(pod)


def _rank_domains(ta: TopologyAssignment) -> list[list[str]]:
    out: list[list[str]] = []
    for values, count in ta.domains:
        out.extend([values] * count)
    return out


def _by_rank(ta: TopologyAssignment, pods: list[dict[str, Any]], request: dict[str, Any],
             count: int) -> list[tuple[dict[str, Any], list[str]]] | None:
    """``readRanksIfAvailable``: rank = pod index (+ job index x pods per job for JobSets)."""
    index_label = request.get("podIndexLabel")
    if not index_label:
        return None
    group_label = request.get("subGroupIndexLabel")
    group_count = request.get("subGroupCount")
    per_group = count
    if group_label:
        if not isinstance(group_count, int) or group_count <= 0:
            return None
        per_group = count // group_count
    ranks: dict[int, dict[str, Any]] = {}
    for pod in pods:
        labels = _mapping(_mapping(pod.get("metadata")).get("labels"))
        try:
            index = int(str(labels.get(index_label)))
            rank = index
            if group_label:
                job = int(str(labels.get(group_label)))
                if index >= per_group or job >= group_count:  # type: ignore[operator]
                    return None
                rank = index + job * per_group
        except ValueError:
            return None
        if rank < 0 or rank >= count or rank in ranks:
            return None
        ranks[rank] = pod
    domains = _rank_domains(ta)
    plan = []
    for rank, pod in sorted(ranks.items()):
        if rank >= len(domains):
            return None
        spec = _mapping(pod.get("spec"))
        if not _gated(spec):
            actual = [_mapping(spec.get("nodeSelector")).get(level, "") for level in ta.levels]
            if actual != domains[rank]:
                return None
            continue
        plan.append((pod, domains[rank]))
    return plan


def _greedy(ta: TopologyAssignment, pods: list[dict[str, Any]]) -> list[tuple[dict[str, Any], list[str]]]:
    """``assignGatedPodsToDomainsGreedy``."""
    gated = []
    ungated: dict[tuple[str, ...], int] = {}
    for pod in pods:
        spec = _mapping(pod.get("spec"))
        if _gated(spec):
            gated.append(pod)
        else:
            selected = tuple(_mapping(spec.get("nodeSelector")).get(level, "") for level in ta.levels)
            ungated[selected] = ungated.get(selected, 0) + 1
    plan: list[tuple[dict[str, Any], list[str]]] = []
    for values, count in ta.domains:
        remaining = max(count - ungated.get(tuple(values), 0), 0)
        take = min(remaining, max(len(gated) - len(plan), 0))
        for pod in gated[len(plan):len(plan) + take]:
            plan.append((pod, values))
    return plan
