"""Phase 1 of TAS placement (``tas_flavor_snapshot.go`` ``fillInCounts``): how many pods (and slices) of
a podset fit each domain of a flavor's tree, and the cache of those counts kept per podset shape, which
only the leaves whose usage moved since are counted again for. :class:`Counting` is the half of
:class:`~jobsetctl.kueue.engine.tas_placement.Placement` that counts; phase 2 (choosing the domains) reads
the counts through a :class:`StateOverlay`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from jobsetctl.kueue.engine.amounts import (
    Requests,
    count_in,
    count_in_with_limiting,
)
from jobsetctl.kueue.engine.tas_encoding import TopologyAssignment
from jobsetctl.kueue.engine.tas_order import DomainOrder, domain_key
from jobsetctl.kueue.engine.tas_tree import (
    _SCHEDULING_EFFECTS,
    MAX_INT32,
    Domain,
    DomainState,
    Stats,
    Tree,
)


class Counting:
    manager: Any
    #: Per-domain counts of the placement in progress: a list while phase 1 fills it, then a
    #: :class:`StateOverlay` over it.
    states: Any
    _placement_cache: dict[Any, CacheEntry]
    #: The cache entry the last :meth:`_cached_counts` used.
    _current_entry: CacheEntry

    def remaining(self, leaf: Domain, simulate_empty: bool) -> Requests:
        raise NotImplementedError

    def _fill(self, domain: Domain, slice_size: int, slice_idx: int, level: int, size_at_level: dict[int, int],
              leader_required: bool) -> None:
        """``fillInCountsHelper``."""
        if not domain.children:
            if level == slice_idx:
                state = self.states[domain.idx]
                state.slice_count = state.pod_count // slice_size
                state.slice_count_with_leader = state.pod_count_with_leader // slice_size
            return
        for child in domain.children:
            self._fill(child, slice_size, slice_idx, level + 1, size_at_level, leader_required)
        self._combine(domain, slice_size, slice_idx, level, size_at_level, leader_required)

    def _combine(self, domain: Domain, slice_size: int, slice_idx: int, level: int, size_at_level: dict[int, int],
                 leader_required: bool) -> None:
        """One inner domain of ``fillInCountsHelper``, from its children's counts."""
        states = self.states
        state = states[domain.idx]
        if not leader_required and not size_at_level.get(level + 1) and domain.children:
            # The common case (no leader, no inner slice layer below): every child contributes, and the
            # loop below reduces to sums, minima and a maximum over the children's states.
            children = [states[child.idx] for child in domain.children]
            state.pod_count = children_capacity = sum([c.pod_count for c in children])
            slice_capacity = sum([c.slice_count for c in children])
            state.pod_count_with_leader = children_capacity - min(
                MAX_INT32, min([c.pod_count - c.pod_count_with_leader for c in children]))
            slice_with_leader = slice_capacity - min(
                MAX_INT32, min([c.slice_count - c.slice_count_with_leader for c in children]))
            state.leader_count = max(0, max([c.leader_count for c in children]))
            if level == slice_idx:
                slice_capacity = children_capacity // slice_size
                slice_with_leader = state.pod_count_with_leader // slice_size
            state.slice_count = slice_capacity
            state.slice_count_with_leader = slice_with_leader
            return
        children_capacity = slice_capacity = 0
        contributor = False
        min_pod_diff = min_slice_diff = MAX_INT32
        leader_count = 0
        inner = size_at_level.get(level + 1)
        for child in domain.children:
            child_state = states[child.idx]
            pods = child_state.pod_count
            pods_leader = child_state.pod_count_with_leader
            if inner:
                pods = (pods // inner) * inner
                pods_leader = (pods_leader // inner) * inner
            children_capacity += pods
            slice_capacity += child_state.slice_count
            if not leader_required or child_state.leader_count > 0:
                contributor = True
                if pods - pods_leader < min_pod_diff:
                    min_pod_diff = pods - pods_leader
                diff = child_state.slice_count - child_state.slice_count_with_leader
                if diff < min_slice_diff:
                    min_slice_diff = diff
            if child_state.leader_count > leader_count:
                leader_count = child_state.leader_count
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

    def _exclusion(self, leaf: Domain, tolerations: Any, selector: dict[str, str], affinity: Any) -> str | None:
        """Why a leaf's node cannot take the podset at all (a taint, nodeSelector, affinity), or None."""
        node = leaf.node
        if node is None:
            return None
        blocking = next((t for t in node.taints if t.effect in _SCHEDULING_EFFECTS
                         and not any(tol.tolerates(t) for tol in tolerations)), None)
        if blocking is not None:
            return "taint:" + (f"{blocking.key}={blocking.value}:{blocking.effect}" if blocking.value else
                               f"{blocking.key}:{blocking.effect}")
        if any(node.labels.get(k) != v for k, v in selector.items()):
            return "selector"
        if affinity.terms is not None and not affinity.matches(node.labels, node.name):
            return "affinity"
        return None

    def _count_leaf(self, leaf: Domain, stats: Stats, tolerations: Any, selector: dict[str, str], affinity: Any,
                    per_pod: Requests, leader_pod: Requests | None, assumed: dict[str, Requests],
                    simulate_empty: bool) -> None:
        stats.total += 1
        excluded = self._exclusion(leaf, tolerations, selector, affinity)
        if excluded is not None:
            count_exclusion(stats, excluded)
            return
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
        else:
            state.pod_count_with_leader = state.pod_count

    def _cached_counts(self, tree: Tree, shape: Shape, simulate_empty: bool) -> Stats:
        """Phase 1 from a cache kept per podset shape: only the leaves whose usage changed since the last
        placement of the same shape are counted again, and only their ancestors refilled. Phase 2 works on
        copies of the states it touches (:class:`StateOverlay`)."""
        manager = self.manager
        per_pod = shape.per_pod
        slice_size, slice_idx, size_at_level = shape.slice_size, shape.slice_idx, shape.size_at_level
        key = (shape.counts_key, simulate_empty)
        entry = self._placement_cache.get(key)
        log = manager.usage_log
        if entry is None or entry.tree is not tree or entry.epoch != manager.usage_epoch:
            states = [DomainState() for _ in range(tree.count)]
            self.states = states
            stats = Stats()
            limiting_of: list[str | None] = [None] * len(tree.leaf_list)
            excluded_of: list[bool] = [False] * len(tree.leaf_list)
            for leaf in tree.leaf_list:
                stats.total += 1
                excluded = self._exclusion(leaf, shape.tolerations, shape.selector, shape.affinity)
                if excluded is not None:
                    count_exclusion(stats, excluded)
                    excluded_of[leaf.leaf_idx] = True
                    continue
                limiting_of[leaf.leaf_idx] = self._count_cached_leaf(leaf, states, stats, per_pod, simulate_empty)
            for root in tree.roots.values():
                self._fill(root, slice_size, slice_idx, 0, size_at_level, False)
            entry = CacheEntry(tree, manager.usage_epoch, len(log), states, stats, limiting_of, excluded_of)
            if manager.shortcuts:
                entry.order = DomainOrder.build(tree, states)
            if len(self._placement_cache) > 64:
                self._placement_cache.clear()
            self._placement_cache[key] = entry
        elif entry.log_pos < len(log):
            dirty = set(log[entry.log_pos:])
            entry.log_pos = len(log)
            if not simulate_empty:
                # (On an empty cluster the counts do not depend on the TAS usage at all.)
                if manager.shortcuts:
                    self._recount_moving(entry, tree, dirty, per_pod, slice_size, slice_idx, size_at_level)
                else:
                    self._recount(entry, tree, dirty, per_pod, slice_size, slice_idx, size_at_level)
        self.states = StateOverlay(entry.states)
        self._current_entry = entry
        return entry.stats  # phase 2 only reads it

    def _recount(self, entry: CacheEntry, tree: Tree, dirty: set[str], per_pod: Requests, slice_size: int,
                 slice_idx: int, size_at_level: dict[int, int]) -> None:
        """Count the leaves whose usage moved again, then refill their ancestors. Usage often moves and
        comes back (a cycle's reservations, the preemption simulation): when no leaf's count changed, the
        states and phase 2's answers stay as they are."""
        states = entry.states
        by_level: dict[int, set[Domain]] = {}
        moved = False
        for changed, state, count in self._moved_leaves(entry, tree, dirty, per_pod):
            moved = True
            state.pod_count = state.pod_count_with_leader = count
            state.leader_count = 0
            level = len(changed.values) - 1
            if level == slice_idx:
                state.slice_count = state.pod_count // slice_size
                state.slice_count_with_leader = state.pod_count_with_leader // slice_size
            parent = changed.parent
            while parent is not None:
                by_level.setdefault(len(parent.values) - 1, set()).add(parent)
                parent = parent.parent
        if not moved:
            return
        entry.results.clear()
        self.states = states  # what _combine reads and writes
        for level in sorted(by_level, reverse=True):
            for domain in by_level[level]:
                self._combine(domain, slice_size, slice_idx, level, size_at_level, False)

    def _recount_moving(self, entry: CacheEntry, tree: Tree, dirty: set[str], per_pod: Requests, slice_size: int,
                        slice_idx: int, size_at_level: dict[int, int]) -> None:
        """:meth:`_recount` with each ancestor's counts moved by its child's change instead of combined
        again from all its children (``EngineSettings.tas_shortcuts``), and the domains' order
        (``CacheEntry.order``) kept. Without a leader a domain's counts are sums of its children's: its pods
        are the sum of theirs (each rounded down to a multiple of the inner slice layer below it, if any),
        its slices the sum of theirs, or its pods over the slice size at the slice level; the counts with
        a leader equal those without and the leader counts are 0 (see :meth:`_combine`). A sum moves by
        what one term moved, and an ancestor whose counts did not move leaves those above it as they are."""
        states = entry.states
        order = entry.order
        moved = False
        for leaf, state, count in self._moved_leaves(entry, tree, dirty, per_pod):
            moved = True
            level = len(leaf.values) - 1
            old_pods, old_slices = state.pod_count, state.slice_count
            old_key = domain_key(state, leaf) if order is not None else 0
            state.pod_count = state.pod_count_with_leader = count
            state.leader_count = 0
            if level == slice_idx:
                state.slice_count = state.slice_count_with_leader = count // slice_size
            domain = leaf
            while True:
                if order is not None and not order.move(domain, level, old_key, state):
                    order = entry.order = None
                parent = domain.parent
                if parent is None:
                    break
                inner = size_at_level.get(level)
                if inner:
                    pods_moved = state.pod_count // inner * inner - old_pods // inner * inner
                else:
                    pods_moved = state.pod_count - old_pods
                slices_moved = state.slice_count - old_slices
                level -= 1
                state = states[parent.idx]
                old_pods, old_slices = state.pod_count, state.slice_count
                pods = old_pods + pods_moved
                slices = pods // slice_size if level == slice_idx else old_slices + slices_moved
                if pods == old_pods and slices == old_slices:
                    break
                old_key = domain_key(state, parent) if order is not None else 0
                state.pod_count = state.pod_count_with_leader = pods
                state.slice_count = state.slice_count_with_leader = slices
                domain = parent
        if moved:
            entry.results.clear()

    def _moved_leaves(self, entry: CacheEntry, tree: Tree, dirty: set[str],
                      per_pod: Requests) -> Iterator[tuple[Domain, DomainState, int]]:
        """The dirty leaves (not excluded) whose count or limiting resource moved, each with its cached state
        and new count (:meth:`_count_again`)."""
        states = entry.states
        for leaf_id in dirty:
            leaf = tree.leaves.get(leaf_id)
            if leaf is None or entry.excluded[leaf.leaf_idx]:
                continue
            state = states[leaf.idx]
            count = self._count_again(entry, leaf, state, per_pod)
            if count is not None:
                yield leaf, state, count

    def _count_again(self, entry: CacheEntry, leaf: Domain, state: DomainState, per_pod: Requests) -> int | None:
        """A leaf whose usage moved, counted again: None when neither its pod count nor its limiting resource
        changed; otherwise its new count, with the limiting-resource statistics moved as
        :meth:`_count_cached_leaf` would have left them (the caller writes the count)."""
        count, limiting = count_in_with_limiting(per_pod, self.remaining(leaf, False))
        new_limiting = limiting if count == 0 and limiting else None
        previous = entry.limiting[leaf.leaf_idx]
        if count == state.pod_count and new_limiting == previous:
            return None
        resources = entry.stats.resources
        if previous is not None:
            resources[previous] -= 1
            if not resources[previous]:
                del resources[previous]
        if new_limiting is not None:
            resources[new_limiting] = resources.get(new_limiting, 0) + 1
        entry.limiting[leaf.leaf_idx] = new_limiting
        return count

    def _count_cached_leaf(self, leaf: Domain, states: list[DomainState], stats: Stats, per_pod: Requests,
                           simulate_empty: bool) -> str | None:
        remaining = self.remaining(leaf, simulate_empty)
        state = states[leaf.idx]
        count, limiting = count_in_with_limiting(per_pod, remaining)
        state.pod_count = state.pod_count_with_leader = count
        state.leader_count = 0
        if count == 0 and limiting:
            stats.resources[limiting] = stats.resources.get(limiting, 0) + 1
            return limiting
        return None


def count_exclusion(stats: Stats, excluded: str) -> None:
    if excluded.startswith("taint:"):
        text = excluded[6:]
        stats.taints[text] = stats.taints.get(text, 0) + 1
    elif excluded == "selector":
        stats.node_selector += 1
    else:
        stats.affinity += 1


@dataclass(slots=True)
class Shape:
    """A worker podset as ``Placement._find`` reads it (see ``Placement._shape``)."""

    #: One pod's requests plus one ``pods``.
    per_pod: Requests
    error: str = ""
    spec: dict[str, Any] = field(default_factory=dict)
    tolerations: Any = ()
    selector: dict[str, str] = field(default_factory=dict)
    affinity: Any = None
    layers: list[tuple[str, int]] = field(default_factory=list)
    slice_size: int = 1
    required: bool = False
    unconstrained: bool = False
    level_idx: int = 0
    slice_idx: int = 0
    size_at_level: dict[int, int] = field(default_factory=dict)
    #: The phase 1 cache key (without ``simulate_empty``) and the phase 2 answer key (without the podset
    #: name and count).
    counts_key: tuple[Any, ...] = ()
    result_key: tuple[Any, ...] = ()


@dataclass(slots=True)
class CacheEntry:
    tree: Tree
    epoch: int
    log_pos: int
    states: list[DomainState]
    stats: Stats
    limiting: list[str | None]
    excluded: list[bool]
    #: Phase 2's answers on these states, per request (see ``Placement._find``); emptied when the
    #: states change.
    results: dict[Any, tuple[dict[str, TopologyAssignment], str]] = field(default_factory=dict)
    #: The domains in the order of these counts (``EngineSettings.tas_shortcuts``), or None.
    order: DomainOrder | None = None


class StateOverlay:
    """The cached states, copied on first access: phase 2 of a placement rewrites the counts of the
    domains it walks, and the cache must not see that."""

    __slots__ = ("base", "copies")

    def __init__(self, base: list[DomainState]) -> None:
        self.base = base
        self.copies: dict[int, DomainState] = {}

    def peek(self, idx: int) -> DomainState:
        """The state to read (the copy if phase 2 already wrote it, else the cached one)."""
        state = self.copies.get(idx)
        return state if state is not None else self.base[idx]

    def __getitem__(self, idx: int) -> DomainState:
        state = self.copies.get(idx)
        if state is None:
            b = self.base[idx]
            state = self.copies[idx] = DomainState(b.pod_count, b.slice_count, b.pod_count_with_leader,
                                                   b.slice_count_with_leader, b.leader_count)
        return state
