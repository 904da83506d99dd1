"""The scheduler cache (``pkg/cache/scheduler/cache.go``, ``clusterqueue.go``, ``hierarchy``).

ClusterQueues and Cohorts form the quota tree of :mod:`.quota`; each ClusterQueue keeps the workloads
holding quota in it and their usage. Kueue takes a snapshot of this cache every scheduling cycle and
mutates the copy; the engine works on the live cache instead and undoes every simulated change before
the cycle ends (the scheduler's :class:`UsageJournal`), which keeps a cycle's cost proportional to what
it looks at rather than to the size of the cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from jobsetctl.kueue.engine import names
from jobsetctl.kueue.engine.amounts import FRQuantities
from jobsetctl.kueue.engine.conditions import is_true
from jobsetctl.kueue.engine.history import History
from jobsetctl.kueue.engine.objects import (
    ClusterQueueSpec,
    CohortSpec,
    FlavorSpec,
    LocalQueueSpec,
    cluster_queue_spec,
    cohort_spec,
    flavor_spec,
)
from jobsetctl.kueue.engine.quota import ResourceNode, add_usage_map, remove_usage_map, update_tree
from jobsetctl.kueue.engine.workload import WorkloadInfo


@dataclass(slots=True)
class ClusterQueueState:
    """A ClusterQueue in the cache: its spec, its quota node, and the workloads holding quota in it."""

    spec: ClusterQueueSpec
    node: ResourceNode
    workloads: dict[str, WorkloadInfo] = field(default_factory=dict)
    #: Workloads holding quota without PodsReady (waitForPodsReady.blockAdmission).
    not_ready: set[str] = field(default_factory=set)
    #: ``AllocatableResourceGeneration``: bumped when quota or admitted usage shrinks.
    generation: int = 0
    #: Inactive reason and message (``inactiveReason``), None when active.
    inactive: tuple[str, str] | None = None
    #: TAS flavor caches of the flavors this ClusterQueue uses (filled by :mod:`.tas`).
    tas_flavors: dict[str, Any] = field(default_factory=dict)
    #: Whether its Cohort chain has a cycle (kept by :meth:`Cache._refresh_activeness`).
    in_cycle: bool = False

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def active(self) -> bool:
        return self.inactive is None

    def is_tas_only(self) -> bool:
        """``isTASOnly``: every flavor of every resource group is a TAS flavor."""
        flavors = self.spec.flavors()
        return bool(flavors) and all(f in self.tas_flavors for f in flavors)


class Cache:
    def __init__(self, *, pods_ready_tracking: bool = False) -> None:
        self.cluster_queues: dict[str, ClusterQueueState] = {}
        #: Cohort nodes by name, explicit (a Cohort object) or implicit (named by a ClusterQueue).
        self.cohorts: dict[str, ResourceNode] = {}
        self.cohort_specs: dict[str, CohortSpec] = {}
        self.flavors: dict[str, FlavorSpec] = {}
        self.topologies: dict[str, tuple[str, ...]] = {}
        self.admission_checks: dict[str, dict[str, Any]] = {}
        self.local_queues: dict[str, LocalQueueSpec] = {}
        self.pods_ready_tracking = pods_ready_tracking
        #: Workload key -> the ClusterQueue whose usage holds it.
        self._assumed: dict[str, str] = {}
        #: Called with a ClusterQueue name when its spec or activeness changes (TAS caches rebuild).
        self.on_cluster_queue_change: list[Any] = []
        #: Records quota spans for the reports (set by the engine).
        self.history: History | None = None
        self.now: Callable[[], float] = lambda: 0.0
        #: Tests only: False turns off the re-add shortcut (:meth:`_replace`), so that a test can compare it
        #: with the delete-and-add it stands for.
        self.replace_shortcut = True

    # ---- configuration objects -----------------------------------------------------------------------
    def add_or_update_flavor(self, obj: dict[str, Any]) -> None:
        spec = flavor_spec(obj)
        self.flavors[spec.name] = spec
        self._refresh_activeness()

    def delete_flavor(self, name: str) -> None:
        self.flavors.pop(name, None)
        self._refresh_activeness()

    def add_or_update_topology(self, name: str, levels: tuple[str, ...]) -> None:
        self.topologies[name] = levels
        self._refresh_activeness()

    def delete_topology(self, name: str) -> None:
        self.topologies.pop(name, None)
        self._refresh_activeness()

    def add_or_update_admission_check(self, obj: dict[str, Any]) -> None:
        name = str((obj.get("metadata") or {}).get("name", ""))
        self.admission_checks[name] = obj
        self._refresh_activeness()

    def delete_admission_check(self, name: str) -> None:
        self.admission_checks.pop(name, None)
        self._refresh_activeness()

    def add_or_update_local_queue(self, spec: LocalQueueSpec) -> None:
        self.local_queues[spec.key] = spec

    def delete_local_queue(self, key: str) -> None:
        self.local_queues.pop(key, None)

    # ---- ClusterQueues and Cohorts -----------------------------------------------------------------
    def add_or_update_cluster_queue(self, obj: dict[str, Any]) -> ClusterQueueState:
        spec = cluster_queue_spec(obj)
        state = self.cluster_queues.get(spec.name)
        if state is None:
            state = ClusterQueueState(spec, ResourceNode(spec.name, is_cq=True))
            self.cluster_queues[spec.name] = state
        old_root = state.node.root()
        state.spec = spec
        state.node.quotas = dict(spec.quotas)
        state.node.fair_weight = spec.fair_weight
        state.generation += 1
        self._set_cq_parent(state.node, spec.cohort)
        self._update_roots(old_root, state.node.root())
        # A ClusterQueue's change affects only its own activeness (cycles are made by Cohorts).
        self._refresh_activeness([state])
        return state

    def delete_cluster_queue(self, name: str) -> None:
        state = self.cluster_queues.pop(name, None)
        if state is None:
            return
        old_root = state.node.root()
        self._set_cq_parent(state.node, "")
        self._update_roots(old_root)

    def add_or_update_cohort(self, obj: dict[str, Any]) -> None:
        spec = cohort_spec(obj)
        self.cohort_specs[spec.name] = spec
        node = self._cohort(spec.name)
        old_root = node.root() if not self._has_cycle(node) else node
        node.quotas = dict(spec.quotas)
        node.fair_weight = spec.fair_weight
        self._set_cohort_parent(node, spec.parent)
        self._update_roots(old_root, node)
        self._refresh_activeness()

    def delete_cohort(self, name: str) -> None:
        self.cohort_specs.pop(name, None)
        node = self.cohorts.get(name)
        if node is None:
            return
        old_root = node.root() if not self._has_cycle(node) else node
        node.quotas = {}
        node.fair_weight = 1.0
        self._set_cohort_parent(node, "")
        self._drop_if_unused(node)
        self._update_roots(old_root, node)
        self._refresh_activeness()

    def _cohort(self, name: str) -> ResourceNode:
        node = self.cohorts.get(name)
        if node is None:
            node = ResourceNode(name, is_cq=False)
            self.cohorts[name] = node
        return node

    def _set_cq_parent(self, node: ResourceNode, cohort: str) -> None:
        old = node.parent
        if old is not None and old.name == cohort:
            return
        if old is not None:
            old.child_cqs.pop(node.name, None)
            node.parent = None
            self._drop_if_unused(old)
        if cohort:
            parent = self._cohort(cohort)
            parent.child_cqs[node.name] = node
            node.parent = parent

    def _set_cohort_parent(self, node: ResourceNode, parent_name: str) -> None:
        old = node.parent
        if old is not None and old.name == parent_name:
            return
        if old is not None:
            old.child_cohorts.pop(node.name, None)
            node.parent = None
            self._drop_if_unused(old)
        if parent_name:
            parent = self._cohort(parent_name)
            parent.child_cohorts[node.name] = node
            node.parent = parent

    def _drop_if_unused(self, node: ResourceNode) -> None:
        """An implicit Cohort (no object) disappears with its last child."""
        if node.name in self.cohort_specs or node.child_count():
            return
        self.cohorts.pop(node.name, None)
        parent = node.parent
        if parent is not None:
            parent.child_cohorts.pop(node.name, None)
            node.parent = None
            self._drop_if_unused(parent)

    def _has_cycle(self, node: ResourceNode) -> bool:
        seen: set[int] = set()
        current: ResourceNode | None = node
        while current is not None:
            if id(current) in seen:
                return True
            seen.add(id(current))
            current = current.parent
        return False

    def _update_roots(self, *nodes: ResourceNode) -> None:
        done: set[int] = set()
        for node in nodes:
            if self._has_cycle(node):
                continue
            root = node.root()
            if id(root) in done:
                continue
            done.add(id(root))
            update_tree(root)

    def cluster_queue_in_cycle(self, state: ClusterQueueState) -> bool:
        return state.in_cycle

    def _refresh_activeness(self, states: Iterable[ClusterQueueState] | None = None) -> None:
        for state in (self.cluster_queues.values() if states is None else states):
            state.in_cycle = state.node.parent is not None and self._has_cycle(state.node.parent)
            before = state.inactive
            state.inactive = self._inactive_reason(state)
            if before != state.inactive:
                for callback in self.on_cluster_queue_change:
                    callback(state.name)

    def _inactive_reason(self, state: ClusterQueueState) -> tuple[str, str] | None:
        """``clusterQueue.inactiveReason``."""
        reasons: list[str] = []
        messages: list[str] = []
        if state.spec.stop_policy not in ("", "None"):
            reasons.append("Stopped")
            messages.append("is stopped")
        missing = [f for f in state.spec.flavors() if f not in self.flavors]
        if missing:
            reasons.append("FlavorNotFound")
            messages.append(f"references missing ResourceFlavor(s): {','.join(missing)}")
        missing_checks = sorted({c.name for c in state.spec.admission_checks if c.name not in self.admission_checks})
        if missing_checks:
            reasons.append("AdmissionCheckNotFound")
            messages.append(f"references missing AdmissionCheck(s): {','.join(missing_checks)}")
        for flavor_name in state.spec.flavors():
            flavor = self.flavors.get(flavor_name)
            if flavor is not None and flavor.topology_name is not None and flavor.topology_name not in self.topologies:
                reasons.append("TopologyNotFound")
                messages.append(f'there is no Topology "{flavor.topology_name}" for TAS flavor "{flavor_name}"')
        if self.cluster_queue_in_cycle(state):
            reasons.append("Unknown")
        if not reasons:
            return None
        if not messages:
            return reasons[0], "Can't admit new workloads."
        return reasons[0], f"Can't admit new workloads: {', '.join(messages)}."

    # ---- workloads ---------------------------------------------------------------------------------
    def cluster_queue_of(self, info: WorkloadInfo) -> ClusterQueueState | None:
        return self.cluster_queues.get(info.cluster_queue)

    def is_added(self, key: str) -> bool:
        return key in self._assumed

    def add_or_update_workload(self, info: WorkloadInfo) -> bool:
        """``AddOrUpdateWorkload``: count the workload's usage in its ClusterQueue (it holds quota)."""
        if self.replace_shortcut and self._replace(info):
            return True
        self._delete(info.key)
        state = self.cluster_queues.get(info.cluster_queue)
        if state is None:
            if self.history is not None:
                self.history.quota_changed(info.key, self.now(), None, None)
            return False
        state.workloads[info.key] = info
        self._assumed[info.key] = state.name
        add_usage_map(state.node, info.usage())
        for tas in self._tas_of(state, info):
            tas.add_workload(info)
        if self.pods_ready_tracking and not is_true(info.obj, names.PODS_READY):
            state.not_ready.add(info.key)
        if self.history is not None:
            self.history.quota_changed(info.key, self.now(), state.name, info.usage(), info.podsets)
        return True

    def _replace(self, info: WorkloadInfo) -> bool:
        """A new version of a workload counted already in the same ClusterQueue with the same usage (the
        engine re-adds each admitted workload as it observes its writes; with TAS, when its podsets are the
        same objects): what :meth:`_delete` then the add would do, the usage taken out and put
        back aside (``removeUsage`` then ``addUsage`` of one amount leave every node of the tree as it was).
        False when it does not apply."""
        key = info.key
        cq_name = self._assumed.get(key)
        if cq_name is None or cq_name != info.cluster_queue:
            return False
        state = self.cluster_queues.get(cq_name)
        if state is None:
            return False
        old = state.workloads.get(key)
        if old is None:
            return False
        tas_flavors = None
        if state.tas_flavors:
            # TAS: only the same podsets (the same topology assignments and requests objects, see
            # ``WorkloadInfo.update``), whose TAS entries are the ones applied already.
            if old.podsets is not info.podsets:
                return False
            tas_flavors = self._tas_of(state, old)
        elif old.usage() != info.usage():
            return False
        # The same order of entries as a delete and an add leave (both dicts put the key last).
        del self._assumed[key]
        del state.workloads[key]
        state.not_ready.discard(key)
        state.generation += 1
        state.workloads[key] = info
        self._assumed[key] = state.name
        if tas_flavors:
            for tas in tas_flavors:
                tas.readd_workload(key)
        if self.pods_ready_tracking and not is_true(info.obj, names.PODS_READY):
            state.not_ready.add(key)
        # No ``history.quota_changed`` here: the quota span open for the key is the one the add of an Info of
        # this ClusterQueue with an equal usage opened (the checks above: the same ClusterQueue, and an equal
        # usage or, with TAS, the same podsets), and only the cache calls it, with a delete closing the span as
        # it takes the Info out; the call would return at once (test_cache_replace compares the spans).
        return True

    def delete_workload(self, key: str) -> WorkloadInfo | None:
        info = self._delete(key)
        if self.history is not None:
            self.history.quota_changed(key, self.now(), None, None)
        return info

    def _delete(self, key: str) -> WorkloadInfo | None:
        cq_name = self._assumed.pop(key, None)
        if cq_name is None:
            return None
        state = self.cluster_queues.get(cq_name)
        if state is None:
            return None
        info = state.workloads.pop(key, None)
        if info is None:
            return None
        remove_usage_map(state.node, info.usage())
        for tas in self._tas_of(state, info):
            tas.remove_workload(info)
        state.not_ready.discard(key)
        state.generation += 1
        return info

    def workload(self, key: str) -> WorkloadInfo | None:
        cq_name = self._assumed.get(key)
        if cq_name is None:
            return None
        state = self.cluster_queues.get(cq_name)
        return state.workloads.get(key) if state else None

    def set_pods_ready(self, key: str, ready: bool) -> None:
        cq_name = self._assumed.get(key)
        state = self.cluster_queues.get(cq_name) if cq_name else None
        if state is None or not self.pods_ready_tracking:
            return
        if ready:
            state.not_ready.discard(key)
        else:
            state.not_ready.add(key)

    def pods_ready_for_all(self) -> bool:
        """``PodsReadyForAllAdmittedWorkloads``."""
        if not self.pods_ready_tracking:
            return True
        return not any(state.not_ready for state in self.cluster_queues.values())

    def _tas_of(self, state: ClusterQueueState, info: WorkloadInfo) -> list[Any]:
        """The TAS flavor caches of the flavors of ``info``'s podsets with a topology assignment, each once, in
        order (a list, not a generator: this runs for every add, re-add and removal of a TAS workload)."""
        tas_flavors = state.tas_flavors
        if not tas_flavors:
            return []
        podsets = info.podsets
        if len(podsets) == 1:
            # One podset with one resource flavored (the common case): the loop below, without its list of
            # flavors seen.
            flavors = podsets[0].flavors
            if podsets[0].topology_assignment is None or not flavors:
                return []
            if len(flavors) == 1:
                for flavor in flavors.values():
                    tas = tas_flavors.get(flavor)
                    return [] if tas is None else [tas]
        out: list[Any] = []
        seen: list[str] = []
        for podset in info.podsets:
            flavors = podset.flavors
            if podset.topology_assignment is None or not flavors:
                continue
            for flavor in flavors.values():
                tas = tas_flavors.get(flavor)
                if tas is not None and flavor not in seen:
                    seen.append(flavor)
                    out.append(tas)
        return out

    # ---- usage reports -----------------------------------------------------------------------------
    def usage_of(self, cq_name: str) -> FRQuantities:
        state = self.cluster_queues.get(cq_name)
        return dict(state.node.usage) if state else {}
