"""The scheduler's cache: one :class:`NodeInfo` per node, updated incrementally from watch events.

kube-scheduler snapshots its cache at the start of every cycle; our scheduler is single-threaded and
runs each cycle at one virtual instant, so the live cache *is* the snapshot (assumed pods included).

Indexes that keep per-pod work independent of the cluster size (issue #5):

* :class:`BucketIndex` groups the nodes of a node set by (capacity class, usage): nodes with the same
  allocatable and the same requested amounts fit and score identically for any pod, so a pod is
  checked once per bucket, not once per node. The best node is the lowest-index member of the
  best-scoring fitting bucket (ties: the node created first, our deterministic stand-in for
  kube-scheduler's random pick among equal scores).
* topology domains: for a label key, the nodes per label value (TAS placements, affinity domains);
* a label index of nodes (``nodeSelector`` candidates without scanning every node);
* a lazily built label index of bound pods, and the set of pods with required anti-affinity (inter-pod
  affinity pre-filtering without scanning every pod).
"""

from __future__ import annotations

import contextlib
import itertools
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from jobsetctl.fakecluster.scheduler.buckets import BucketIndex, BucketKey, NodeSet
from jobsetctl.fakecluster.scheduler.podinfo import (
    CPU,
    MEMORY,
    PODS,
    UNSCHEDULABLE_TAINT_KEY,
    PodInfo,
    Resources,
    Taint,
    mapping,
    parse_taints,
    resource_list,
)

#: Node sets at least this big get a bucket index; smaller ones are scanned node by node.
INDEX_THRESHOLD = 48
#: ... but a node set other than the whole cluster (whose index is kept anyway) needs its own index, which
#: every pod added to or removed from one of its nodes moves in: below this size (a rack of the contended
#: day: 50 nodes, a hundred of them at 5,000 nodes, more than :data:`MAX_EXTRA_INDEXES`) that upkeep
#: costs more than the scan it saves.
EXTRA_INDEX_THRESHOLD = 128
#: Usage bucket keys by number (:meth:`NodeInfo.current_id`), process-wide; ids come from one counter.
_KEY_IDS: dict[Any, int] = {}
_KEY_ID_SERIAL = itertools.count()
_MAX_KEY_IDS = 100_000
#: Extra bucket indexes (static masks, large domains) kept at once.
MAX_EXTRA_INDEXES = 64
DEFAULT_MAX_PODS = 110
NOT_READY_TAINT = Taint("node.kubernetes.io/not-ready", "", "NoSchedule")

class NodeInfo:
    """A node plus what is running (or assumed) on it."""

    __slots__ = (
        "allocatable", "allowed_pods", "anti_affinity_pods", "bucket_id", "bucket_key", "class_key", "index",
        "indexes", "labels", "name", "nominated", "nonzero_cpu", "nonzero_memory", "obj", "pod_count",
        "pods", "requested", "taints", "unschedulable", "version",
    )

    def __init__(self, name: str, index: int) -> None:
        self.name = name
        self.index = index
        self.obj: dict[str, Any] = {}
        self.labels: dict[str, str] = {}
        self.taints: tuple[Taint, ...] = ()
        self.unschedulable = False
        self.allocatable: Resources = {}
        self.allowed_pods = 0
        self.requested: Resources = {}
        self.nonzero_cpu = 0
        self.nonzero_memory = 0
        self.pod_count = 0
        self.pods: dict[str, PodInfo] = {}
        self.anti_affinity_pods: dict[str, PodInfo] = {}
        #: Pods nominated to this node (``status.nominatedNodeName``) and not bound yet.
        self.nominated: dict[str, PodInfo] = {}
        self.indexes: list[BucketIndex] = []
        self.class_key: tuple[Any, ...] = ()
        #: :meth:`usage_key` as of the last change, or None: a node no index holds gets it worked out only
        #: when asked (:meth:`current_key`), not at every pod added or removed. A node in an index always
        #: has it (its bucket there).
        self.bucket_key: BucketKey | None = None
        #: A small number standing for :attr:`bucket_key` (:meth:`current_id`), or None until asked.
        self.bucket_id: int | None = None
        #: Bumped whenever pods, usage or the node spec change.
        self.version = 0

    def set_node(self, obj: dict[str, Any]) -> bool:
        """Take a Node object; True when anything the static filters or capacity read changed."""
        self.obj = obj
        md = mapping(obj.get("metadata"))
        spec = mapping(obj.get("spec"))
        status = mapping(obj.get("status"))
        raw_labels = md.get("labels") if isinstance(md, dict) else None
        labels = {k: v for k, v in raw_labels.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(
            raw_labels, dict) else {}
        taints = parse_taints(spec)
        if not _is_ready(status) and not any(t.key == NOT_READY_TAINT.key for t in taints):
            # The node lifecycle controller taints NotReady nodes (TaintNodesByCondition); we add the
            # taint it would add, in case no component of the fake cluster does.
            taints += (NOT_READY_TAINT,)
        unschedulable = bool(spec.get("unschedulable"))
        allocatable = resource_list(status.get("allocatable") or status.get("capacity"))
        # A Node written without a ``pods`` entry gets the kubelet's default ``maxPods`` (110): hand-written
        # simulate inputs often omit it, and 0 would make every node "Too many pods".
        allowed_pods = allocatable.pop(PODS, DEFAULT_MAX_PODS)
        changed = (labels != self.labels or taints != self.taints or unschedulable != self.unschedulable
                   or allocatable != self.allocatable or allowed_pods != self.allowed_pods)
        self.labels, self.taints, self.unschedulable = labels, taints, unschedulable
        self.allocatable, self.allowed_pods = allocatable, allowed_pods
        self.class_key = (tuple(sorted(allocatable.items())), allowed_pods)
        return changed

    def usage_key(self) -> BucketKey:
        return (self.class_key, tuple(sorted(self.requested.items())), self.pod_count, self.nonzero_cpu,
                self.nonzero_memory)

    def current_key(self) -> BucketKey:
        """The usage bucket key (capacity class and usage): nodes with equal keys fit and score alike."""
        key = self.bucket_key
        if key is None:
            key = self.bucket_key = self.usage_key()
        return key

    def current_id(self) -> int:
        """A number equal for two nodes exactly when their :meth:`current_key` is: a cheap dict key for the
        memos of one placement pass (a key is a nested tuple, hashed anew at every lookup)."""
        found = self.bucket_id
        if found is None:
            key = self.current_key()
            found = _KEY_IDS.get(key)
            if found is None:
                if len(_KEY_IDS) >= _MAX_KEY_IDS:
                    _KEY_IDS.clear()  # ids are never reused: a key seen again gets a new one
                found = _KEY_IDS[key] = next(_KEY_ID_SERIAL)
            self.bucket_id = found
        return found

    def free(self, resource: str) -> int:
        return self.allocatable.get(resource, 0) - self.requested.get(resource, 0)

    @property
    def flagged(self) -> bool:
        """Tainted or cordoned: a node whose static-filter reason must be computed one by one."""
        return self.unschedulable or any(t.blocks_scheduling for t in self.taints)


def _is_ready(status: dict[str, Any]) -> bool:
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        return True  # a node without conditions is taken as Ready (hand-written test nodes)
    for condition in conditions:
        if isinstance(condition, dict) and condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return True


_SNAPSHOT_SERIAL = itertools.count()


class Snapshot:
    def __init__(self) -> None:
        #: Unique per instance: signature caches are process-wide and must not mix two clusters.
        self.serial = next(_SNAPSHOT_SERIAL)
        self.nodes: dict[str, NodeInfo] = {}
        self._ordered: list[NodeInfo] | None = None
        self._next_index = 0
        #: Bumped when nodes come or go or their labels, taints, cordon or capacity change.
        self.spec_generation = 0
        #: Bumped on every change that could make a pending pod schedulable (usage or spec).
        self.change_counter = 0
        self.pods: dict[str, PodInfo] = {}
        self.anti_affinity_pods: dict[str, PodInfo] = {}
        self.nominated: dict[str, PodInfo] = {}
        self.nominated_on: dict[str, str] = {}
        #: Nominations set aside while their pod is assumed (see :meth:`add_pod`).
        self._set_aside: dict[str, str] = {}
        self._pod_labels: dict[tuple[str, str], dict[str, PodInfo]] | None = None
        #: The whole cluster's bucket index, built when a node set of every node first asks for it (the rack
        #: day never does: every gang is placed in a rack) and kept up to date from then on.
        self._all_nodes: BucketIndex | None = None
        self._extra: OrderedDict[Any, NodeSet] = OrderedDict()
        self._domains: dict[str, tuple[int, dict[str, list[NodeInfo]]]] = {}
        self._node_labels: tuple[int, dict[tuple[str, str], list[NodeInfo]]] | None = None
        #: Listeners told (pod, node, +1/-1) when a pod is added to or removed from a node.
        self.pod_listeners: list[Callable[[PodInfo, NodeInfo, int], None]] = []
        #: Nesting depth of :meth:`dry_run`: pods removed and added back within it leave the cache as it was,
        #: so indexes kept only between cycles (bound pods' units, free room per domain) ignore them.
        self.dry_runs = 0
        #: Pods bound to a node the cache does not have (deleted, or not created yet), by node name. They
        #: count on that node as soon as it (re)appears, as upstream's cache keeps them on a "ghost"
        #: NodeInfo (``cache.RemoveNode`` keeps a node's pods): otherwise a node deleted and created again
        #: under its name would look empty while its pods still run there, and be over-committed.
        self.absent: dict[str, dict[str, PodInfo]] = {}

    # ---- nodes -------------------------------------------------------------------------------------
    def ordered_nodes(self) -> list[NodeInfo]:
        if self._ordered is None:
            self._ordered = sorted(self.nodes.values(), key=lambda n: n.index)
        return self._ordered

    def upsert_node(self, obj: dict[str, Any]) -> tuple[NodeInfo, bool, bool]:
        """Add or update a node; returns (node, added, spec_changed)."""
        md = mapping(obj.get("metadata"))
        name = str(md.get("name") or "")
        node = self.nodes.get(name)
        added = node is None
        if node is None:
            node = NodeInfo(name, self._next_index)
            self._next_index += 1
            self.nodes[name] = node
            self._ordered = None
        changed = node.set_node(obj)
        if added or changed:
            self.spec_generation += 1
            self.change_counter += 1
            self._reindex(node)
            if added and self._all_nodes is not None:
                self._all_nodes.add(node)
            self._drop_extra_indexes()
        if added:
            for pod in self.absent.pop(name, {}).values():
                self._account(pod, node)
        return node, added, changed

    def remove_node(self, name: str) -> NodeInfo | None:
        node = self.nodes.pop(name, None)
        if node is None:
            return None
        for index in list(node.indexes):
            index.discard(node)
        bound = {uid: pod for uid, pod in node.pods.items() if _bound_to(pod, name)}
        if bound:
            self.absent.setdefault(name, {}).update(bound)
        self._ordered = None
        self.spec_generation += 1
        self.change_counter += 1
        self._drop_extra_indexes()
        return node

    def _drop_extra_indexes(self) -> None:
        # Static masks and domains depend on node labels/taints: rebuild them lazily.
        for node_set in self._extra.values():
            if node_set.index is not None:
                node_set.index.detach()
        self._extra.clear()

    def _reindex(self, node: NodeInfo) -> None:
        node.version += 1
        node.bucket_id = None
        if not node.indexes:
            node.bucket_key = None  # worked out when asked (NodeInfo.current_key)
            return
        old = node.bucket_key
        new = node.bucket_key = node.usage_key()
        if old != new:
            for index in node.indexes:
                index.move(node, old, new)  # type: ignore[arg-type]  # a node in an index has its key

    @contextlib.contextmanager
    def dry_run(self) -> Iterator[None]:
        """A what-if (preemption's victims removed and put back): the caller restores every pod it moves
        before the block ends. Measured on bench_contended.py --week: the listeners of those moves were a
        fifth of the run."""
        self.dry_runs += 1
        try:
            yield
        finally:
            self.dry_runs -= 1

    def count_what_if(self) -> None:
        """A what-if answered from a node's sums stands for pods moved out and back: bump
        :attr:`change_counter` as those moves would have. The counter is compared for equality only
        ("nothing changed since an item was parked"), so one bump keeps every such answer as it was."""
        self.change_counter += 1

    def has_set_aside(self) -> bool:
        return bool(self._set_aside)

    def nomination_set_aside(self, uid: str) -> bool:
        """Whether an assumed pod's nomination is set aside (removing the pod would nominate it again)."""
        return uid in self._set_aside

    # ---- pods on nodes -----------------------------------------------------------------------------
    def add_pod(self, pod: PodInfo, node_name: str) -> bool:
        """Account a bound or assumed pod on a node (a second add is a no-op).

        Assuming a nominated pod sets its nomination aside, as upstream's ``assume`` does
        (``schedule_one.go``: ``DeleteNominatedPodIfExists``): otherwise the pod would count twice, on
        the node it is assumed on and as a reservation on its nominated node, and a gang's own assumed
        pods would block their nominated siblings. Forgetting the assumed pod (:meth:`remove_pod`) puts
        the nomination back, as the scheduler re-reads ``status.nominatedNodeName`` after a failure."""
        node = self.nodes.get(node_name)
        if pod.uid in self.pods:
            return False
        nominated = self.nominated_on.get(pod.uid)
        if nominated is not None:
            self._unnominate(pod)
            self._set_aside[pod.uid] = nominated
        if node is None:
            if _bound_to(pod, node_name):
                pod.node_name = node_name
                self.absent.setdefault(node_name, {})[pod.uid] = pod
            return False
        self._account(pod, node)
        return True

    def _account(self, pod: PodInfo, node: NodeInfo) -> None:
        pod.node_name = node.name
        self.pods[pod.uid] = pod
        node.pods[pod.uid] = pod
        node.pod_count += 1
        requested = node.requested
        for resource, amount in pod.static.requests.items():
            requested[resource] = requested.get(resource, 0) + amount
        node.nonzero_cpu += pod.static.nonzero_cpu
        node.nonzero_memory += pod.static.nonzero_memory
        if pod.anti_affinity:
            node.anti_affinity_pods[pod.uid] = pod
            self.anti_affinity_pods[pod.uid] = pod
        if self._pod_labels is not None:
            for pair in pod.labels.items():
                self._pod_labels.setdefault(pair, {})[pod.uid] = pod
        self.change_counter += 1
        self._reindex(node)
        for listener in self.pod_listeners:
            listener(pod, node, 1)

    def remove_pod(self, pod: PodInfo) -> bool:
        aside = self._set_aside.pop(pod.uid, None)
        if aside is not None and not pod.terminating and not pod.obj.get("spec", {}).get("nodeName"):
            self._nominate(pod, aside)
        parked = self.absent.get(pod.node_name or "")
        if parked is not None and parked.pop(pod.uid, None) is not None and not parked:
            del self.absent[pod.node_name or ""]
        if self.pods.pop(pod.uid, None) is None:
            return False
        node = self.nodes.get(pod.node_name or "")
        if not pod.obj.get("spec", {}).get("nodeName"):
            pod.node_name = None  # an assumed pod forgotten (a bound pod keeps its node for the record)
        if node is None or node.pods.pop(pod.uid, None) is None:
            return True
        node.pod_count -= 1
        requested = node.requested
        for resource, amount in pod.static.requests.items():
            left = requested.get(resource, 0) - amount
            if left:
                requested[resource] = left
            else:
                requested.pop(resource, None)
        node.nonzero_cpu -= pod.static.nonzero_cpu
        node.nonzero_memory -= pod.static.nonzero_memory
        node.anti_affinity_pods.pop(pod.uid, None)
        self.anti_affinity_pods.pop(pod.uid, None)
        if self._pod_labels is not None:
            for pair in pod.labels.items():
                holders = self._pod_labels.get(pair)
                if holders is not None:
                    holders.pop(pod.uid, None)
        self.change_counter += 1
        self._reindex(node)
        for listener in self.pod_listeners:
            listener(pod, node, -1)
        return True

    def relabel_pod(self, pod: PodInfo, labels: dict[str, str]) -> None:
        """A bound pod's labels changed (inter-pod affinity sees the new ones)."""
        if pod.uid in self.pods and self._pod_labels is not None:
            for pair in pod.labels.items():
                self._pod_labels.get(pair, {}).pop(pod.uid, None)
            for pair in labels.items():
                self._pod_labels.setdefault(pair, {})[pod.uid] = pod
        pod.labels = labels
        self.change_counter += 1

    def pods_with_label(self, key: str, value: str | None) -> Iterator[PodInfo]:
        """Bound/assumed pods carrying ``key`` (= ``value`` unless None), from a lazily built index."""
        if self._pod_labels is None:
            self._pod_labels = {}
            for pod in self.pods.values():
                for pair in pod.labels.items():
                    self._pod_labels.setdefault(pair, {})[pod.uid] = pod
        if value is not None:
            yield from list(self._pod_labels.get((key, value), {}).values())
            return
        for (k, _), holders in list(self._pod_labels.items()):
            if k == key:
                yield from list(holders.values())

    # ---- nomination --------------------------------------------------------------------------------
    def nominate(self, pod: PodInfo, node_name: str | None) -> None:
        """Record (or clear, with None) a pod's ``status.nominatedNodeName``."""
        self._set_aside.pop(pod.uid, None)
        before = self.nominated_on.get(pod.uid)
        if before == (node_name or None):
            return
        self._unnominate(pod)
        if node_name:
            self._nominate(pod, node_name)
        self.change_counter += 1

    def _unnominate(self, pod: PodInfo) -> None:
        old = self.nominated_on.pop(pod.uid, None)
        if old is not None and old in self.nodes:
            self.nodes[old].nominated.pop(pod.uid, None)
        self.nominated.pop(pod.uid, None)

    def _nominate(self, pod: PodInfo, node_name: str) -> None:
        if node_name in self.nodes:
            self.nominated[pod.uid] = pod
            self.nominated_on[pod.uid] = node_name
            self.nodes[node_name].nominated[pod.uid] = pod

    def nominated_node_of(self, pod: PodInfo) -> NodeInfo | None:
        name = self.nominated_on.get(pod.uid)
        return self.nodes.get(name) if name else None

    # ---- node sets ---------------------------------------------------------------------------------
    def domains(self, key: str) -> dict[str, list[NodeInfo]]:
        """Nodes per value of label ``key`` (nodes without the label are in no domain), values sorted."""
        cached = self._domains.get(key)
        if cached is not None and cached[0] == self.spec_generation:
            return cached[1]
        grouped: dict[str, list[NodeInfo]] = {}
        for node in self.ordered_nodes():
            value = node.labels.get(key)
            if value is not None:
                grouped.setdefault(value, []).append(node)
        result = {value: grouped[value] for value in sorted(grouped)}
        self._domains[key] = (self.spec_generation, result)
        return result

    def nodes_with_labels(self, pairs: Iterable[tuple[str, str]]) -> list[NodeInfo]:
        """Nodes carrying every (key, value) pair, in index order."""
        if self._node_labels is None or self._node_labels[0] != self.spec_generation:
            table: dict[tuple[str, str], list[NodeInfo]] = {}
            for node in self.ordered_nodes():
                for pair in node.labels.items():
                    table.setdefault(pair, []).append(node)
            self._node_labels = (self.spec_generation, table)
        table = self._node_labels[1]
        result: list[NodeInfo] | None = None
        for pair in pairs:
            members = table.get(pair, [])
            if result is None:
                result = list(members)
            else:
                allowed = {n.name for n in members}
                result = [n for n in result if n.name in allowed]
        return result if result is not None else list(self.ordered_nodes())

    def node_set(self, key: Any, build: Callable[[], list[NodeInfo]]) -> NodeSet:
        """A cached node set (valid until the next node spec change) with an index when large."""
        found = self._extra.get(key)
        if found is not None:
            self._extra.move_to_end(key)
            return found
        nodes = build()
        index: BucketIndex | None = None
        if len(nodes) == len(self.nodes) and len(nodes) >= INDEX_THRESHOLD:
            index = self.all_nodes
        elif len(nodes) >= EXTRA_INDEX_THRESHOLD:
            index = BucketIndex(key, nodes)
        node_set = NodeSet(key, nodes, index)
        self._extra[key] = node_set
        while len(self._extra) > MAX_EXTRA_INDEXES:
            _, evicted = self._extra.popitem(last=False)
            if evicted.index is not None and evicted.index is not self._all_nodes:
                evicted.index.detach()
        return node_set

    @property
    def all_nodes(self) -> BucketIndex:
        if self._all_nodes is None:
            self._all_nodes = BucketIndex("all", self.ordered_nodes())
        return self._all_nodes

    def everything(self) -> NodeSet:
        return self.node_set("all", lambda: list(self.ordered_nodes()))


def untolerated_unschedulable(node: NodeInfo, tolerates_unschedulable: bool) -> bool:
    return node.unschedulable and not tolerates_unschedulable


def resource_names_in_order(requests: Resources) -> list[str]:
    """NodeResourcesFit checks cpu, memory, ephemeral-storage, then scalar resources."""
    fixed = [r for r in (CPU, MEMORY, "ephemeral-storage") if r in requests]
    return fixed + sorted(r for r in requests if r not in (CPU, MEMORY, "ephemeral-storage"))


__all__ = ["UNSCHEDULABLE_TAINT_KEY", "BucketIndex", "NodeInfo", "NodeSet", "Snapshot"]


def _bound_to(pod: PodInfo, node_name: str) -> bool:
    """Whether the pod object names the node (a binding, not an assumption of a scheduling cycle)."""
    spec = pod.obj.get("spec")
    return isinstance(spec, dict) and spec.get("nodeName") == node_name
