"""Phase 2 of TAS placement (``tas_flavor_snapshot.go`` ``findTopologyAssignment``) for the common
requests, read from domains kept in order instead of sorted at every placement.

A podset without a leader counts the same with and without one (``pod_count_with_leader`` is
``pod_count``, ``slice_count_with_leader`` is ``slice_count``, ``leader_count`` is 0 everywhere), and then
``sortedDomains``, ``sortedDomainsWithLeader`` and ``findBestFitDomainBy`` order the domains of one list by
(slices, pods, values) alone: BestFit by slices descending, LeastFreeCapacity ascending, then pods
ascending and the values (the index never decides: the values of the domains of one level differ, see
``Tree.by_rank``). :class:`DomainOrder` keeps, per level and per inner domain for its children, the
domains' keys (slices, pods, rank) packed in one integer each, in ascending order, next to the cached
counts of one podset shape (``CacheEntry.order``), and moves a domain's key when its counts move.

On that order, :func:`place_in_order` answers with one bisection where the full algorithm sorts a level
and scans it:

* ``findLevelWithFitDomains``: the first domain (ascending) with enough slices is both BestFit's tightest
  domain among those that hold everything and LeastFreeCapacity's first fit;
* going down with slices (``updateCountsToMinimumGeneric``): BestFit takes the tightest child that holds
  every slice when the largest does; LeastFreeCapacity takes children in ascending order;
* below the slice level the children carry no slices, so both profiles take them in ascending pods,
  BestFit's tightest being each time the first that holds the rest.

Whatever it does not answer this way (a leader, inner slice layers, no domain that holds everything, a
level where BestFit would take several domains) it leaves to :meth:`Placement._place`, which then starts
again from the cached counts. ``EngineSettings.tas_shortcuts`` off (tests only) never takes this path.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from typing import TYPE_CHECKING

from jobsetctl.kueue.engine.tas_encoding import TopologyAssignment
from jobsetctl.kueue.engine.tas_tree import Domain, DomainState, PodSetRequest, Tree

if TYPE_CHECKING:
    from jobsetctl.kueue.engine.tas_counts import Shape, StateOverlay
    from jobsetctl.kueue.engine.tas_placement import Placement

_LOW = (1 << 32) - 1


def domain_key(state: DomainState, domain: Domain) -> int:
    """(slices, pods, rank) in one integer: the three are below 2**32 (see :meth:`DomainOrder.build`)."""
    return (state.slice_count << 64) | (state.pod_count << 32) | domain.rank


class DomainOrder:
    """The domains of a tree in ascending (slices, pods, values) order of one podset shape's counts: per
    level (:attr:`by_level`) and per inner domain, its children (:attr:`by_parent`, by domain index)."""

    __slots__ = ("by_level", "by_parent")

    def __init__(self, by_level: list[list[int]], by_parent: dict[int, list[int]]) -> None:
        self.by_level = by_level
        self.by_parent = by_parent

    @staticmethod
    def build(tree: Tree, states: list[DomainState]) -> DomainOrder | None:
        """The order of these counts, or None when it cannot be kept: domains of one level with the same
        values, or a count that does not fit the packed key."""
        if tree.by_rank is None:
            return None
        by_level: list[list[int]] = []
        by_parent: dict[int, list[int]] = {}
        for level in tree.per_level:
            keys: list[int] = []
            for domain in level.values():
                state = states[domain.idx]
                if not (0 <= state.pod_count <= _LOW and 0 <= state.slice_count <= _LOW):
                    return None
                key = domain_key(state, domain)
                keys.append(key)
                if domain.parent is not None:
                    by_parent.setdefault(domain.parent.idx, []).append(key)
            keys.sort()
            by_level.append(keys)
        for keys in by_parent.values():
            keys.sort()
        return DomainOrder(by_level, by_parent)

    def move(self, domain: Domain, level: int, old: int, state: DomainState) -> bool:
        """The domain's counts moved (its key was ``old``); False when the new counts do not fit the packed
        key (the order must then be dropped)."""
        if not (0 <= state.pod_count <= _LOW and 0 <= state.slice_count <= _LOW):
            return False
        new = domain_key(state, domain)
        keys = self.by_level[level]
        del keys[bisect_left(keys, old)]
        insort(keys, new)
        if domain.parent is not None:
            keys = self.by_parent[domain.parent.idx]
            del keys[bisect_left(keys, old)]
            insort(keys, new)
        return True


def _holding_all(keys: list[int], ranked: list[Domain], states: StateOverlay, needed: int, slice_size: int) -> Domain | None:
    """The first domain in ascending order (``keys``) with at least ``needed`` slices, its counts lowered to
    exactly those (``updateCountsToMinimumGeneric`` on that one domain); None when none holds them all."""
    pos = bisect_left(keys, needed << 64)
    if pos == len(keys):
        return None
    domain = ranked[keys[pos] & _LOW]
    state = states[domain.idx]
    state.leader_count = 0
    state.pod_count = needed * slice_size
    state.slice_count = needed
    return domain


def place_in_order(placement: Placement, tree: Tree, order: DomainOrder, workers: PodSetRequest,
                   shape: Shape) -> tuple[dict[str, TopologyAssignment], str] | None:
    """Phase 2 of ``findTopologyAssignment`` for a podset without leader and without inner slice layers on
    the cached counts, or None when the full algorithm must answer (nothing written then: the caller
    drops the copies this made)."""
    by_rank = tree.by_rank
    assert by_rank is not None
    states = placement.states  # a StateOverlay over the cached counts, no copy made yet
    best_fit = not placement._least_free(shape.unconstrained)
    slice_size = shape.slice_size
    needed = workers.count // slice_size
    last = len(tree.per_level) - 1
    # findLevelWithFitDomains: the first domain (ascending) with enough slices.
    current = shape.level_idx
    top = _holding_all(order.by_level[current], by_rank[current], states, needed, slice_size)
    if top is None:
        return None  # no domain holds everything: fail, go a level up, or take several
    fit = [top]
    # Down to the slice level, slices of the whole podset in the children of the domains kept.
    while current < min(last, shape.slice_idx):
        if len(fit) != 1:
            return None  # children of several domains, sorted together
        level = current + 1
        keys = order.by_parent[fit[0].idx]
        remaining = needed
        if best_fit:
            dom = _holding_all(keys, by_rank[level], states, remaining, slice_size)
            if dom is None:
                return None  # the largest child does not hold everything: BestFit takes several
            fit = [dom]
        else:
            fit = []
            for key in keys:
                dom = by_rank[level][key & _LOW]
                slices = key >> 64
                state = states[dom.idx]
                state.leader_count = 0
                fit.append(dom)
                if slices >= remaining:
                    state.pod_count = remaining * slice_size
                    state.slice_count = remaining
                    break
                state.pod_count = slices * slice_size
                remaining -= slices
        current = level
    # Below the slice level: each kept domain's pods in its children, by ascending pods. A kept domain
    # without pods, and a child without room, end in no pod at all (buildAssignment drops them).
    peek = states.peek
    while current < last:
        level = current + 1
        ranked = by_rank[level]
        new_fit: list[Domain] = []
        for domain in fit:
            remaining = peek(domain.idx).pod_count
            if remaining == 0:
                continue
            keys = order.by_parent[domain.idx]
            if keys[-1] >> 64:
                # Children with slices, which the profiles order differently. Not reached: below the
                # slice level every domain counts 0 slices; the guard keeps the reasoning above honest.
                return None
            for key in keys:
                pods = (key >> 32) & _LOW
                if pods == 0:
                    continue
                dom = ranked[key & _LOW]
                new_fit.append(dom)
                if pods >= remaining:
                    state = states[dom.idx]
                    state.leader_count = 0
                    state.pod_count = remaining
                    break
                remaining -= pods
        fit = new_fit
        current = level
    return {workers.name: placement._build([(d, peek(d.idx).pod_count) for d in fit])}, ""
