"""Quotas and usage of ClusterQueues and Cohorts (``pkg/cache/scheduler/resource_node.go``).

Every node (ClusterQueue or Cohort) has its own ``quotas`` (nominal, borrowing and lending limits per
flavor-resource), a ``subtree_quota`` (its nominal plus what its children lend it) and a ``usage``. A
ClusterQueue's usage is what its admitted workloads use; a Cohort's usage is what its children use
beyond the capacity their lending limits keep local. Usage is kept incrementally: admitting a workload
adds to its ClusterQueue and bubbles the part past the local quota up the tree (``addUsage``), so no
operation rescans workloads. The tree's subtree quotas are recomputed only when quotas or the tree
change (``updateCohortTreeResources``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from jobsetctl.kueue.engine.amounts import FlavorResource, FRQuantities
from jobsetctl.kueue.engine.objects import Quota

NO_QUOTA = Quota()


class ResourceNode:
    """A ClusterQueue or a Cohort in the quota tree."""

    __slots__ = (
        "child_cohorts",
        "child_cqs",
        "fair_weight",
        "is_cq",
        "name",
        "parent",
        "quotas",
        "subtree_quota",
        "usage",
    )

    def __init__(self, name: str, *, is_cq: bool) -> None:
        self.name = name
        self.parent: ResourceNode | None = None
        self.quotas: dict[FlavorResource, Quota] = {}
        self.subtree_quota: dict[FlavorResource, int] = {}
        self.usage: dict[FlavorResource, int] = {}
        self.fair_weight = 1.0
        self.is_cq = is_cq
        #: Children in insertion order (dicts keep it): iteration is deterministic, where upstream's sets
        #: are not.
        self.child_cohorts: dict[str, ResourceNode] = {}
        self.child_cqs: dict[str, ResourceNode] = {}

    def __repr__(self) -> str:
        return f"<{'ClusterQueue' if self.is_cq else 'Cohort'} {self.name}>"

    # ---- tree ----------------------------------------------------------------------------------------
    @property
    def has_parent(self) -> bool:
        return self.parent is not None

    def root(self) -> ResourceNode:
        node = self
        while node.parent is not None:
            node = node.parent
        return node

    def ancestors(self) -> Iterator[ResourceNode]:
        """``PathParentToRoot``: the parent first, the root last."""
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def child_count(self) -> int:
        return len(self.child_cohorts) + len(self.child_cqs)

    def subtree_cluster_queues(self) -> list[ResourceNode]:
        out = list(self.child_cqs.values())
        for cohort in self.child_cohorts.values():
            out.extend(cohort.subtree_cluster_queues())
        return out

    # ---- quota arithmetic ----------------------------------------------------------------------------
    def quota(self, fr: FlavorResource) -> Quota:
        return self.quotas.get(fr, NO_QUOTA)

    def local_quota(self, fr: FlavorResource) -> int:
        """Capacity kept in this subtree by the lending limit (never lent to the parent)."""
        quota = self.quotas.get(fr)
        if quota is None or quota.lending_limit is None:
            return 0
        return max(0, self.subtree_quota.get(fr, 0) - quota.lending_limit)

    def local_available(self, fr: FlavorResource) -> int:
        quota = self.quotas.get(fr)  # local_quota written out
        if quota is None or quota.lending_limit is None:
            return max(0, -self.usage.get(fr, 0))
        return max(0, max(0, self.subtree_quota.get(fr, 0) - quota.lending_limit) - self.usage.get(fr, 0))

    def borrowing_with(self, fr: FlavorResource, value: int) -> bool:
        """ClusterQueue: usage + value above nominal; Cohort: above its subtree quota."""
        if self.is_cq:
            return self.quota(fr).nominal < self.usage.get(fr, 0) + value
        return self.subtree_quota.get(fr, 0) < self.usage.get(fr, 0) + value

    def borrowing(self, fr: FlavorResource) -> bool:
        return self.borrowing_with(fr, 0)


def available(node: ResourceNode, fr: FlavorResource) -> int:
    """``available``: what remains for ``node``, using local capacity and the parent's (within the
    borrowing limit). Negative after over-admission."""
    usage = node.usage.get(fr, 0)
    parent = node.parent
    if parent is None:
        return node.subtree_quota.get(fr, 0) - usage
    if parent.parent is None:  # the parent is the root: its answer written out (the usual Cohort tree)
        parent_available = parent.subtree_quota.get(fr, 0) - parent.usage.get(fr, 0)
    else:
        parent_available = available(parent, fr)
    # local_quota and local_available written out (asked per flavor-resource per assignment attempt).
    quota = node.quotas.get(fr)
    if quota is None:
        return max(0, -usage) + parent_available
    lending_limit = quota.lending_limit
    lq = 0 if lending_limit is None else max(0, node.subtree_quota.get(fr, 0) - lending_limit)
    borrowing_limit = quota.borrowing_limit
    if borrowing_limit is not None:
        stored_in_parent = node.subtree_quota.get(fr, 0) - lq
        used_in_parent = max(0, usage - lq)
        parent_available = min(stored_in_parent - used_in_parent + borrowing_limit, parent_available)
    return max(0, lq - usage) + parent_available


def cq_available(node: ResourceNode, fr: FlavorResource) -> int:
    """``ClusterQueueSnapshot.Available``: never negative."""
    return max(0, available(node, fr))


def potential_available(node: ResourceNode, fr: FlavorResource) -> int:
    """``potentialAvailable``: the most this node could use with no usage anywhere."""
    parent = node.parent
    if parent is None:
        return node.subtree_quota.get(fr, 0)
    # The parent's answer (the root's written out: the usual Cohort tree).
    parent_value = parent.subtree_quota.get(fr, 0) if parent.parent is None else potential_available(parent, fr)
    quota = node.quotas.get(fr)
    if quota is None:
        return parent_value
    lending_limit = quota.lending_limit
    lq = 0 if lending_limit is None else max(0, node.subtree_quota.get(fr, 0) - lending_limit)
    value = lq + parent_value
    if quota.borrowing_limit is not None:
        value = min(node.subtree_quota.get(fr, 0) + quota.borrowing_limit, value)
    return value


def add_usage(node: ResourceNode, fr: FlavorResource, value: int) -> None:
    """``addUsage``: add to the node; the part beyond the local quota also counts in the parent."""
    while True:
        usage = node.usage
        current = usage.get(fr, 0)
        # node.local_available(fr), written out (every admission, release and preemption simulation).
        quota = node.quotas.get(fr)
        if quota is None or quota.lending_limit is None:
            local_available = max(0, -current)
        else:
            local_available = max(0, max(0, node.subtree_quota.get(fr, 0) - quota.lending_limit) - current)
        usage[fr] = current + value
        parent = node.parent
        if parent is None or value <= local_available:
            return
        value -= local_available
        node = parent


def remove_usage(node: ResourceNode, fr: FlavorResource, value: int) -> None:
    """``removeUsage``: remove from the node and the part it was storing in its parent."""
    while True:
        usage = node.usage
        current = usage.get(fr, 0)
        quota = node.quotas.get(fr)
        if quota is None or quota.lending_limit is None:
            stored_in_parent = current
        else:
            stored_in_parent = current - max(0, node.subtree_quota.get(fr, 0) - quota.lending_limit)
        usage[fr] = current - value
        parent = node.parent
        if stored_in_parent <= 0 or parent is None:
            return
        value = min(value, stored_in_parent)
        node = parent


def add_usage_map(node: ResourceNode, usage: Mapping[FlavorResource, int]) -> None:
    for fr, value in usage.items():
        add_usage(node, fr, value)


def remove_usage_map(node: ResourceNode, usage: Mapping[FlavorResource, int]) -> None:
    for fr, value in usage.items():
        remove_usage(node, fr, value)


def update_tree(root: ResourceNode) -> None:
    """``updateCohortResourceNode`` from the root: subtree quotas and Cohort usage from the children.
    ClusterQueue usage is kept as is (it is the sum of its workloads)."""
    if root.is_cq:
        root.subtree_quota = {fr: q.nominal for fr, q in root.quotas.items()}
        return
    root.subtree_quota = {fr: q.nominal for fr, q in root.quotas.items()}
    root.usage = {}
    for child in list(root.child_cohorts.values()) + list(root.child_cqs.values()):
        update_tree(child)
        for fr, child_quota in child.subtree_quota.items():
            root.subtree_quota[fr] = root.subtree_quota.get(fr, 0) + child_quota - child.local_quota(fr)
        for fr, child_usage in child.usage.items():
            root.usage[fr] = root.usage.get(fr, 0) + max(0, child_usage - child.local_quota(fr))


def quantities_fit_in_quota(node: ResourceNode, requests: Mapping[FlavorResource, int]) -> tuple[bool, FRQuantities]:
    """``QuantitiesFitInQuota``: whether the requests fit this node's subtree quota, and what is left to
    find higher up (the part beyond the node's local capacity)."""
    fits = True
    remaining: FRQuantities = {}
    subtree_quota, usage, quotas = node.subtree_quota, node.usage, node.quotas
    for fr, value in requests.items():
        used = usage.get(fr, 0)
        if subtree_quota.get(fr, 0) < used + value:
            fits = False
        quota = quotas.get(fr)  # node.local_available(fr) written out (asked per candidate in preemption)
        if quota is None or quota.lending_limit is None:
            local_available = max(0, -used)
        else:
            local_available = max(0, max(0, subtree_quota.get(fr, 0) - quota.lending_limit) - used)
        remaining[fr] = max(0, value - local_available)
    return fits, remaining


def is_within_nominal(node: ResourceNode, frs: Iterable[FlavorResource]) -> bool:
    """``IsWithinNominalInResources``: usage at or below the subtree quota for every given resource."""
    subtree_quota, usage = node.subtree_quota, node.usage
    for fr in frs:  # noqa: SIM110 (a loop, not all(generator): asked per ClusterQueue of a Cohort per candidate)
        if subtree_quota.get(fr, 0) < usage.get(fr, 0):
            return False
    return True


def node_height(node: ResourceNode) -> int:
    """``getNodeHeight``: distance to the furthest leaf (a Cohort with only ClusterQueues has height 1)."""
    cohorts = node.child_cohorts
    if not cohorts:
        return 1 if node.child_cqs else 0
    # At least one child: the tallest child Cohort's height + 1 is at least 1.
    return max(node_height(cohort) for cohort in cohorts.values()) + 1


def lowest_subtree_that_fits(cq: ResourceNode, fr: FlavorResource, value: int) -> tuple[int, bool]:
    """``FindHeightOfLowestSubtreeThatFits``: the height of the lowest subtree fitting ``value`` more of
    ``fr``, and whether that subtree is smaller than the whole tree. (``borrowing_with`` and
    ``local_available`` written out: asked per flavor-resource per assignment attempt.)"""
    node = cq.parent
    if node is None:
        return 0, False
    usage = cq.usage.get(fr, 0)
    quota = cq.quotas.get(fr)
    if cq.is_cq:
        if (NO_QUOTA if quota is None else quota).nominal >= usage + value:
            return 0, True
    elif cq.subtree_quota.get(fr, 0) >= usage + value:
        return 0, True
    if quota is None or quota.lending_limit is None:
        remaining = value - max(0, -usage)
    else:
        remaining = value - max(0, max(0, cq.subtree_quota.get(fr, 0) - quota.lending_limit) - usage)
    while True:
        # An ancestor is a Cohort: borrowing means usage above its subtree quota.
        usage = node.usage.get(fr, 0)
        subtree = node.subtree_quota.get(fr, 0)
        parent = node.parent
        if subtree >= usage + remaining:
            return node_height(node), parent is not None
        quota = node.quotas.get(fr)
        if quota is None or quota.lending_limit is None:
            remaining -= max(0, -usage)
        else:
            remaining -= max(0, max(0, subtree - quota.lending_limit) - usage)
        if parent is None:
            return node_height(node), False
        node = parent


def available_after_removal(node: ResourceNode, fr: FlavorResource,
                            removed_at: Mapping[ResourceNode, FRQuantities]) -> int:
    """``ClusterQueueSnapshot.Available`` as if ``removed_at[cq][fr]`` were removed from each ClusterQueue
    (bubbling up as :func:`remove_usage` would)."""
    removed: dict[ResourceNode, int] = {}
    # Bottom-up, one depth at a time (a node's parent is one level up, so each node is reached once, with
    # everything its children pass it): a node passes min(removed, what it stored in its parent) up.
    levels: dict[int, dict[ResourceNode, int]] = {}
    for cq_node, values in removed_at.items():
        value = values.get(fr, 0)
        if value:
            level = levels.setdefault(_depth(cq_node), {})
            level[cq_node] = level.get(cq_node, 0) + value
    depth = max(levels, default=-1)
    while depth >= 0:
        for current, value in levels.pop(depth, {}).items():
            removed[current] = value
            parent = current.parent
            if parent is None:
                continue
            stored = current.usage.get(fr, 0) - current.local_quota(fr)
            if stored > 0:
                level = levels.setdefault(depth - 1, {})
                level[parent] = level.get(parent, 0) + min(value, stored)
        depth -= 1

    def usage_of(n: ResourceNode) -> int:
        return n.usage.get(fr, 0) - removed.get(n, 0)

    def avail(n: ResourceNode) -> int:
        usage = usage_of(n)
        if n.parent is None:
            return n.subtree_quota.get(fr, 0) - usage
        parent_available = avail(n.parent)
        quota = n.quotas.get(fr)
        lq = n.local_quota(fr)
        if quota is not None and quota.borrowing_limit is not None:
            stored_in_parent = n.subtree_quota.get(fr, 0) - lq
            used_in_parent = max(0, usage - lq)
            parent_available = min(stored_in_parent - used_in_parent + quota.borrowing_limit, parent_available)
        return max(0, lq - usage) + parent_available
    return max(0, avail(node))


def _depth(node: ResourceNode) -> int:
    depth = 0
    while node.parent is not None:
        depth += 1
        node = node.parent
    return depth
