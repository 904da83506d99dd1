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
from typing import TYPE_CHECKING, Any

from jobsetctl.fakecluster.scheduler.podinfo import Toleration
from jobsetctl.kube.jsontree import copy_tree
from jobsetctl.kube.podspec import pod_requests
from jobsetctl.kueue.engine import names
from jobsetctl.kueue.engine.amounts import (
    PODS,
    Requests,
    count_in,
    requests_from_fractions,
)
from jobsetctl.kueue.engine.tas_assigner import TASAssigner
from jobsetctl.kueue.engine.tas_encoding import TopologyAssignment, from_api, to_api
from jobsetctl.kueue.engine.tas_placement import Placement
from jobsetctl.kueue.engine.tas_tree import (
    Domain,
    NodeView,
    Tree,
    explicitly_requests_tas,
    is_gated,
    node_view,
)
from jobsetctl.kueue.engine.tas_tree import as_mapping as _mapping
from jobsetctl.kueue.engine.tas_ungate import ungate
from jobsetctl.kueue.engine.workload import _podset_per_pod

if TYPE_CHECKING:
    from jobsetctl.fakecluster.apiserver import WatchEvent
    from jobsetctl.kueue.engine.assignment import Assignment
    from jobsetctl.kueue.engine.cache import ClusterQueueState
    from jobsetctl.kueue.engine.core import Engine
    from jobsetctl.kueue.engine.objects import FlavorSpec
    from jobsetctl.kueue.engine.workload import WorkloadInfo


class TASFlavor(Placement):
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
        #: Admitted TAS usage per leaf id (requests of the pods, plus one ``pods`` each). With
        #: TASHandleOverlappingFlavors, flavors whose lowest level is the hostname share one table keyed
        #: by node, so flavors over the same nodes see each other's usage.
        self.usage: dict[str, Requests] = manager.node_usage if (
            levels and levels[-1] == names.HOSTNAME_LABEL and manager.engine.settings.gate("TASHandleOverlappingFlavors")) else {}
        #: Per workload key: the (leaf id, requests) it added, to remove exactly that.
        self.workload_usage: dict[str, list[tuple[str, Requests]]] = {}
        #: Per workload key: the inputs of its last :meth:`add_workload` (the podsets list and per-pod
        #: requests memo entry it read, and the topology assignment and per-pod requests objects per podset)
        #: and the entries they gave (see :meth:`_remembered`).
        self._entries_memo: dict[str, tuple[Any, Any, list[tuple[Any, Requests]], list[tuple[str, Requests]]]] = {}
        self.states: Any = []
        self._placement_cache = {}
        self._shape_memo = {}
        self._shape_by_content = {}
        self._has_level_memo = {}

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
        tree = self.tree
        if tree is not None and tree.lowest_is_node:
            # free_capacity for a node leaf: its non-TAS pods are the node's own (non_tas_usage_of).
            free = dict(leaf.capacity)
            non_tas = self.manager.non_tas_by_node.get(leaf.id)
            if non_tas:
                for name, value in non_tas.items():
                    free[name] = free.get(name, 0) - value
        else:
            free = self.free_capacity(leaf)
        if simulate_empty:
            return free
        usage = self.usage.get(leaf.id)
        if usage:
            for name, value in usage.items():
                free[name] = free.get(name, 0) - value
        return free

    # ---- usage ---------------------------------------------------------------------------------------
    def _inputs(self, info: WorkloadInfo) -> list[tuple[Any, Requests]]:
        """What :meth:`add_workload` reads: per podset placed in this flavor, its topology assignment and
        per-pod requests objects."""
        inputs: list[tuple[Any, Requests]] = []
        for podset in info.podsets:
            if podset.topology_assignment is None or not podset.flavors or self.name not in podset.flavors.values():
                continue
            inputs.append((podset.topology_assignment, self.manager.full_per_pod(info, podset.name)))
        return inputs

    def _remembered(self, info: WorkloadInfo) -> tuple[Any, ...] | None:
        """The remembered entries of this version's inputs, if they are remembered. Fast when the version
        carries the podsets list of the one remembered (``WorkloadInfo.update`` keeps it while the inputs
        are the same objects; the list and its podsets are not edited) and the per-pod requests are those
        remembered for the same ``spec.podSets`` (:meth:`TASManager.full_per_pod`)."""
        memo = self._entries_memo.get(info.key)
        if memo is None:
            return None
        if memo[0] is info.podsets:
            per_pod = self.manager._per_pod.get(info.key)
            if per_pod is memo[1] and per_pod is not None and \
                    per_pod[0] is _mapping(info.obj.get("spec")).get("podSets"):
                return memo
        inputs = self._inputs(info)
        if len(memo[2]) == len(inputs) and all(
                a is b and p is q for (a, p), (b, q) in zip(memo[2], inputs, strict=True)):
            return memo
        return None

    def add_workload(self, info: WorkloadInfo) -> None:
        # Every version of an admitted workload passes here (and the preemption simulation takes workloads
        # out and puts them back): while its topology assignments and pod requests are the same objects
        # (writers replace them, never edit them in place), its entries are the same, and when they are
        # already applied nothing changes, so the placement caches stay valid.
        memo = self._remembered(info) if self.manager.shortcuts else None
        if memo is not None:
            entries = memo[3]
            if self.workload_usage.get(info.key) is entries:
                return
        else:
            inputs = self._inputs(info)
            entries = []
            tree = self.current_tree()
            for assignment, per_pod in inputs:
                ta = self.manager.parsed(assignment)
                if ta is None:
                    continue
                for values, count in ta.domains:
                    leaf_id = values[-1] if tree.lowest_is_node else ",".join(values)
                    requests = {name: value * count for name, value in per_pod.items()}
                    requests[PODS] = requests.get(PODS, 0) + count
                    entries.append((leaf_id, requests))
            self._entries_memo[info.key] = (info.podsets, self.manager._per_pod.get(info.key), inputs, entries)
        self.remove_workload(info)
        if not entries:
            return
        self.workload_usage[info.key] = entries
        for leaf_id, requests in entries:
            usage = self.usage.setdefault(leaf_id, {})
            for name, value in requests.items():
                usage[name] = usage.get(name, 0) + value
        self.manager.touched(entries)

    def readd_workload(self, key: str) -> None:
        """:meth:`remove_workload` then :meth:`add_workload` of a workload whose entries are applied already
        and unchanged (the cache's re-add shortcut): the same usage, the key moved last. No leaf is touched
        (:meth:`TASManager.touched`): the usage of none moved, and the touched leaves only tell the
        placement caches what to count again."""
        entries = self.workload_usage.pop(key, None)
        if not entries:
            return
        self.workload_usage[key] = entries

    def remove_workload(self, info: WorkloadInfo | str) -> None:
        key = info if isinstance(info, str) else info.key
        entries = self.workload_usage.pop(key, None)
        if not entries:
            return
        for leaf_id, requests in entries:
            usage = self.usage.setdefault(leaf_id, {})
            for name, value in requests.items():
                usage[name] = usage.get(name, 0) - value
        self.manager.touched(entries)

    def holds(self, ta: TopologyAssignment, per_pod: Requests) -> bool:
        """:meth:`fits` for the domains of one podset's assignment: each still holds its pods. For a node
        leaf, the free amounts of the resources a pod requests only (``count_in`` reads no other)."""
        tree = self.current_tree()
        leaves = tree.leaves
        if not tree.lowest_is_node:
            return self.fits([(",".join(values), per_pod, count) for values, count in ta.domains])
        need = dict(per_pod)
        need[PODS] = need.get(PODS, 0) + 1
        # ``count_in(need, free) < count`` without building ``free``: count_in is the least, over the
        # resources needed, of ``max(0, free // amount)`` (0 for a negative amount; a zero amount does not
        # limit, and ``need`` is never empty, it holds ``pods``), and for count >= 1 ``max(0, free // amount)
        # < count`` is ``free < amount * count``; for count <= 0 nothing is below it (the all-zero case gives
        # MAX_COUNT, never below a count).
        needed = [(name, amount) for name, amount in need.items() if amount != 0]
        non_tas_by_node = self.manager.non_tas_by_node
        usage_of = self.usage
        empty: Requests = {}
        for values, count in ta.domains:
            leaf = leaves.get(values[-1])
            if leaf is None:
                return False
            if count <= 0:
                continue
            capacity = leaf.capacity
            non_tas = non_tas_by_node.get(leaf.id) or empty
            usage = usage_of.get(leaf.id) or empty
            for name, amount in needed:
                if amount < 0 or capacity.get(name, 0) - non_tas.get(name, 0) - usage.get(name, 0) < amount * count:
                    return False
        return True

    def fits(self, domains: list[tuple[str, Requests, int]]) -> bool:
        """``TASFlavorSnapshot.Fits``: every domain still holds its pods."""
        leaves = self.current_tree().leaves
        need: Requests = {}
        last: Requests | None = None
        for leaf_id, per_pod, count in domains:
            leaf = leaves.get(leaf_id)
            if leaf is None:
                return False
            if per_pod is not last:  # the domains of one podset share its per-pod requests
                need = dict(per_pod)
                need[PODS] = need.get(PODS, 0) + 1
                last = per_pod
            if count_in(need, self.remaining(leaf, False)) < count:
                return False
        return True


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
        #: TAS usage per node shared by the flavors whose lowest topology level is the hostname.
        self.node_usage: dict[str, Requests] = {}
        #: Leaf ids whose TAS usage changed, in order; placements cache per-leaf counts and recount only
        #: the leaves logged since (:meth:`Placement._cached_counts`). ``usage_epoch`` moves when
        #: everything must be recounted (nodes or non-TAS pods changed, the log was trimmed).
        self.usage_log: list[str] = []
        self.usage_epoch = 0
        self.placement_cache_enabled = True
        #: ``EngineSettings.tas_shortcuts`` (off only in tests that compare the shortcuts with the full work).
        self.shortcuts = engine.settings.tas_shortcuts
        #: Per workload key: (its ``spec.podSets`` list, the full per-pod requests per podset name).
        self._per_pod: dict[str, tuple[Any, dict[str, Requests]]] = {}
        #: Per workload key: its podsets to place and what they were computed from
        #: (:meth:`TASAssigner.requests_for_signature`).
        self.requests_memo: dict[str, tuple[Any, ...]] = {}
        #: Per ClusterQueue name, ``spec.podSets`` bytes and assignment signature: the podsets to place and
        #: what they were computed from (:meth:`TASAssigner._requests_by_content`).
        self.requests_by_content: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        #: Per ClusterQueue name: ``isTASOnly`` and what it was computed from (:meth:`TASAssigner.is_tas_only`).
        self.tas_only_memo: dict[str, tuple[Any, Any, Any, bool]] = {}
        #: Per API topology assignment object (by identity, the object kept alive here): its internal form.
        self._parsed: dict[int, tuple[dict[str, Any], TopologyAssignment]] = {}
        #: Per podset object (kept alive here): whether it explicitly requests TAS.
        self._explicit: dict[int, tuple[dict[str, Any], bool]] = {}
        #: Per assignment object (kept alive here): its API encoding, never handed out (copies are).
        self._encodings: dict[int, tuple[TopologyAssignment, bool, dict[str, Any]]] = {}
        #: Per content of an assignment (see :meth:`encoded`): its API encoding, shared as above.
        self._encodings_by_content: dict[tuple[Any, ...], dict[str, Any]] = {}
        #: Empty-cluster placements per requests' shapes (:meth:`TASAssigner.find_all`).
        self.empty_placements: dict[tuple[Any, ...], tuple[int, int, list[tuple[TASFlavor, Any]], list[Any],
                                                           dict[str, Any]]] = {}
        #: Placements on the cluster as it is, per requests' shapes, while the TAS usage has not moved
        #: (:meth:`TASAssigner.find_all`).
        self.live_placements: dict[tuple[Any, ...], tuple[int, int, list[tuple[TASFlavor, Any]], list[Any],
                                                          dict[str, Any]]] = {}
        #: Per requests object (kept alive here): the key of its placements (:meth:`TASAssigner._placement_key`).
        self.placement_keys: dict[int, tuple[Any, Any, tuple[tuple[Any, ...], list[Any], list[Any]]]] = {}
        #: The flavor assigner's TAS side (it keeps nothing of its own: one serves every ClusterQueue).
        self.assigner = TASAssigner(self)

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
                tas.workload_usage = existing.workload_usage
                if tas.usage is not existing.usage:
                    # The flavor moved between a private usage table and the shared per-node one.
                    entries = [e for es in existing.workload_usage.values() for e in es]
                    if existing.usage is self.node_usage:
                        _apply_usage(self.node_usage, entries, -1)
                    _apply_usage(tas.usage, entries, 1)
                else:
                    tas.usage = existing.usage
            current[name] = tas
        self.flavors = current
        self.usage_epoch += 1
        for state in cache.cluster_queues.values():
            self.on_cluster_queue(state)

    def touched(self, entries: Iterable[tuple[str, Any]]) -> None:
        """TAS usage of these leaves changed (see :attr:`usage_log`)."""
        log = self.usage_log
        log.extend([leaf_id for leaf_id, _ in entries])
        if len(log) > 100_000:
            log.clear()
            self.usage_epoch += 1

    def on_cluster_queue(self, state: ClusterQueueState) -> None:
        state.tas_flavors = {f: self.flavors[f] for f in state.spec.flavors() if f in self.flavors}

    def forget_workload(self, key: str) -> None:
        for flavor in self.flavors.values():
            flavor.remove_workload(key)
            flavor._entries_memo.pop(key, None)
        self._per_pod.pop(key, None)
        self.requests_memo.pop(key, None)

    def full_per_pod(self, info: WorkloadInfo, podset_name: str) -> Requests:
        """``NewRequestsFromPodSpec`` of a podset's template (TAS counts the whole pod, not only the
        resources the ClusterQueue covers)."""
        # Writers replace ``spec.podSets`` as a whole, never edit it in place (see ``WorkloadInfo.update``):
        # the per-pod requests of every podset are remembered per workload while that list is the same.
        podsets = _mapping(info.obj.get("spec")).get("podSets")
        hit = self._per_pod.get(info.key)
        if hit is None or hit[0] is not podsets:
            by_name: dict[str, Requests] = {}
            for podset in info.spec_podsets():
                name = str(podset.get("name") or "main")
                if name not in by_name:
                    # The same computation as the Info's own per-pod requests, and its memo (per template).
                    by_name[name] = _podset_per_pod(podset, info._per_pod_memo)
            hit = self._per_pod[info.key] = (podsets, by_name)
        return hit[1].get(podset_name, {})

    def explicit(self, podset: dict[str, Any]) -> bool:
        """``IsExplicitlyRequestingTAS``, remembered per podset object (podsets are replaced, never edited
        in place; each is asked at every flavor check and placement of its workload)."""
        hit = self._explicit.get(id(podset))
        if hit is not None and hit[0] is podset:
            return hit[1]
        value = explicitly_requests_tas(podset)
        if len(self._explicit) > 16384:
            self._explicit.clear()
        self._explicit[id(podset)] = (podset, value)
        return value

    # ---- topology assignments ----------------------------------------------------------------------------
    def encoded(self, ta: TopologyAssignment | None, by_hostname_prefix: bool) -> dict[str, Any] | None:
        """``to_api``, remembered per assignment object (placements on an empty cluster hand the same ones
        to every workload of a class) and shared: an assignment's encoding is only read (parsed, compared)
        until the admission is written, and :meth:`written` copies it then (most assignments are never
        written). The internal form of the object is remembered for :meth:`parsed`."""
        if ta is None:
            return None
        hit = self._encodings.get(id(ta))
        if hit is not None and hit[0] is ta and hit[1] == by_hostname_prefix:
            return hit[2]
        # Placements on the cluster as it is make a new assignment object each, but few contents (a full
        # run: 7,187 objects, 57 contents): the encoding is shared per content too. to_api reads the levels
        # and the domains' values and counts (strings and integers, the placement's), and the flag.
        content = (by_hostname_prefix, tuple(ta.levels), tuple([(tuple(values), count) for values, count in ta.domains]))
        value = self._encodings_by_content.get(content) if self.shortcuts else None
        if value is None:
            value = to_api(ta, by_hostname_prefix)
            if value is None:
                return None
            if len(self._encodings_by_content) > 4096:
                self._encodings_by_content.clear()
            self._encodings_by_content[content] = value
        if len(self._encodings) > 4096:
            self._encodings.clear()
        self._encodings[id(ta)] = (ta, by_hostname_prefix, value)
        self._remember(value, ta)
        return value

    def written(self, value: dict[str, Any]) -> dict[str, Any]:
        """A private copy of a shared encoding from :meth:`encoded`, for an admission being written (the
        written object may be edited by later writers); its internal form carries over to the copy."""
        copied: dict[str, Any] = copy_tree(value)
        hit = self._parsed.get(id(value))
        if hit is not None and hit[0] is value:
            self._remember(copied, hit[1])
        return copied

    def parsed(self, value: Any) -> TopologyAssignment | None:
        """``from_api`` of an API topology assignment, remembered per object: an assignment is written
        once and then read at every fit check, reservation and cache update. Writers replace these
        objects, never edit them in place; the internal form is only read."""
        hit = self._parsed.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
        ta = from_api(value)
        if ta is not None:
            self._remember(value, ta)
        return ta

    def _remember(self, value: dict[str, Any], ta: TopologyAssignment) -> None:
        if len(self._parsed) > 16384:
            self._parsed.clear()
        self._parsed[id(value)] = (value, ta)

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
            self.usage_epoch += 1
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
        current = (str(node_name), requests_from_fractions(pod_requests(spec))) if live else None
        previous = self.non_tas_pods.pop(key, None)
        if previous is not None:
            usage = self.non_tas_by_node.setdefault(previous[0], {})
            for res, value in previous[1].items():
                usage[res] = usage.get(res, 0) - value
        if previous != current:
            self.usage_epoch += 1
        if current is not None:
            self.non_tas_pods[key] = current
            usage = self.non_tas_by_node.setdefault(current[0], {})
            for res, value in current[1].items():
                usage[res] = usage.get(res, 0) + value
        if event.type != WatchType.DELETED and names.WORKLOAD_ANNOTATION in annotations and is_gated(spec):
            yield ("ungate", namespace, str(annotations[names.WORKLOAD_ANNOTATION]))

    def reconcile(self, key: Hashable) -> float | None:
        if isinstance(key, tuple) and key and key[0] == "ungate":
            _, namespace, workload = key
            ungate(self.engine, str(namespace), str(workload))
        return None

    # ---- scheduler side --------------------------------------------------------------------------------
    def reserve(self, key: str, info: WorkloadInfo, assignment: Assignment) -> list[TASFlavor]:
        """``ComputeTASNetUsage`` added to the cycle's view: the TAS usage of an assignment not (yet)
        admitted, under ``key``; :meth:`TASFlavor.remove_workload` takes it back."""
        used: list[TASFlavor] = []
        for psa in assignment.podsets:
            if psa.topology_assignment is None:
                continue
            flavor = next((self.flavors[f.name] for f in psa.flavors.values() if f.name in self.flavors), None)
            ta = self.parsed(psa.topology_assignment)
            if flavor is None or ta is None:
                continue
            per_pod = self.full_per_pod(info, psa.name)
            tree = flavor.current_tree()
            entries = flavor.workload_usage.setdefault(key, [])
            added: list[tuple[str, Requests]] = []
            for values, count in ta.domains:
                leaf_id = values[-1] if tree.lowest_is_node else ",".join(values)
                requests = {name: value * count for name, value in per_pod.items()}
                requests[PODS] = requests.get(PODS, 0) + count
                added.append((leaf_id, requests))
            entries.extend(added)
            _apply_usage(flavor.usage, added, 1)
            self.touched(added)
            if flavor not in used:
                used.append(flavor)
        return used

    def assigner_for(self, cq: ClusterQueueState) -> TASAssigner:
        return self.assigner

    def requests_for(self, info: WorkloadInfo, cq: ClusterQueueState, assignment: Assignment) -> Any:
        assigner = self.assigner
        stashed = assigner.stashed_requests(info, cq, assignment)
        return stashed if stashed is not None else assigner.workload_requests(info, cq, assignment)

    def preemption_fits(self, info: WorkloadInfo, requests: Any, cq: ClusterQueueState) -> bool:
        if not requests:
            return True
        result = self.assigner.find_all(cq, requests)
        return all(not reason for _, reason in result.values())


def _apply_usage(table: dict[str, Requests], entries: list[tuple[str, Requests]], sign: int) -> None:
    for leaf_id, requests in entries:
        usage = table.setdefault(leaf_id, {})
        for name, value in requests.items():
            usage[name] = usage.get(name, 0) + sign * value


def is_tas_pod(annotations: dict[str, Any]) -> bool:
    """``utiltas.IsTAS``."""
    return any(k in annotations for k in (names.PREFERRED_TOPOLOGY_ANNOTATION, names.REQUIRED_TOPOLOGY_ANNOTATION,
                                          names.SLICE_REQUIRED_TOPOLOGY_ANNOTATION,
                                          names.UNCONSTRAINED_TOPOLOGY_ANNOTATION))


# ---- the topology ungater --------------------------------------------------------------------------------
