"""Quota arithmetic (:mod:`jobsetctl.kueue.engine.quota`) against its definitions: the functions write the
local quota out for speed; here each is compared, on random Cohort trees with lending and borrowing
limits and random usage, with the formula as ``resource_node.go`` states it in terms of ``local_quota``
(``available``, ``potentialAvailable``, ``addUsage``, ``removeUsage``, ``QuantitiesFitInQuota``,
``FindHeightOfLowestSubtreeThatFits``, ``getNodeHeight``), and the scheduler's quota-only fit check with nothing
removed (``available_after_removal``) with ``ClusterQueueSnapshot.Available``."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from jobsetctl.kueue.engine.objects import Quota
from jobsetctl.kueue.engine.quota import (
    ResourceNode,
    add_usage,
    available,
    available_after_removal,
    cq_available,
    lowest_subtree_that_fits,
    node_height,
    potential_available,
    quantities_fit_in_quota,
    remove_usage,
    update_tree,
)

FR = ("f", "cpu")
OTHER = ("f", "memory")
limits = st.one_of(st.none(), st.integers(0, 30))
quotas = st.one_of(st.none(), st.builds(Quota, st.integers(0, 30), limits, limits))


def _local_quota(node: ResourceNode, fr: tuple[str, str]) -> int:
    quota = node.quotas.get(fr)
    if quota is None or quota.lending_limit is None:
        return 0
    return max(0, node.subtree_quota.get(fr, 0) - quota.lending_limit)


def _local_available(node: ResourceNode, fr: tuple[str, str]) -> int:
    return max(0, _local_quota(node, fr) - node.usage.get(fr, 0))


def _available(node: ResourceNode, fr: tuple[str, str]) -> int:
    usage = node.usage.get(fr, 0)
    if node.parent is None:
        return node.subtree_quota.get(fr, 0) - usage
    parent_available = _available(node.parent, fr)
    quota = node.quotas.get(fr)
    if quota is not None and quota.borrowing_limit is not None:
        lq = _local_quota(node, fr)
        parent_available = min(node.subtree_quota.get(fr, 0) - lq - max(0, usage - lq) + quota.borrowing_limit,
                               parent_available)
    return _local_available(node, fr) + parent_available


def _potential(node: ResourceNode, fr: tuple[str, str]) -> int:
    if node.parent is None:
        return node.subtree_quota.get(fr, 0)
    value = _local_quota(node, fr) + _potential(node.parent, fr)
    quota = node.quotas.get(fr)
    if quota is not None and quota.borrowing_limit is not None:
        value = min(node.subtree_quota.get(fr, 0) + quota.borrowing_limit, value)
    return value


def _add(node: ResourceNode, fr: tuple[str, str], value: int) -> None:
    while True:
        local_available = _local_available(node, fr)
        node.usage[fr] = node.usage.get(fr, 0) + value
        if node.parent is None or value <= local_available:
            return
        value -= local_available
        node = node.parent


def _remove(node: ResourceNode, fr: tuple[str, str], value: int) -> None:
    while True:
        stored_in_parent = node.usage.get(fr, 0) - _local_quota(node, fr)
        node.usage[fr] = node.usage.get(fr, 0) - value
        if stored_in_parent <= 0 or node.parent is None:
            return
        value = min(value, stored_in_parent)
        node = node.parent


def _lowest(cq: ResourceNode, fr: tuple[str, str], value: int) -> tuple[int, bool]:
    def borrowing(node: ResourceNode, amount: int) -> bool:
        if node.is_cq:
            return node.quotas.get(fr, Quota()).nominal < node.usage.get(fr, 0) + amount
        return node.subtree_quota.get(fr, 0) < node.usage.get(fr, 0) + amount
    if not borrowing(cq, value) or cq.parent is None:
        return 0, cq.parent is not None
    remaining = value - _local_available(cq, fr)
    node = cq.parent
    while node is not None:
        if not borrowing(node, remaining):
            return node_height(node), node.parent is not None
        remaining -= _local_available(node, fr)
        node = node.parent
    return node_height(cq.root()), False


def _height(node: ResourceNode) -> int:
    """``getNodeHeight``: 0 for a leaf, else one more than the tallest child (a ClusterQueue's height is 0)."""
    children = [*node.child_cohorts.values(), *node.child_cqs.values()]
    return max((_height(child) + 1 for child in children), default=0)


@st.composite
def trees(draw: st.DrawFn) -> tuple[ResourceNode, list[ResourceNode]]:
    """A root Cohort, an optional child Cohort, and one to four ClusterQueues under either."""
    root = ResourceNode("root", is_cq=False)
    parents = [root]
    if draw(st.booleans()):
        child = ResourceNode("child", is_cq=False)
        child.parent = root
        root.child_cohorts["child"] = child
        parents.append(child)
    cqs = []
    for i in range(draw(st.integers(1, 4))):
        cq = ResourceNode(f"cq{i}", is_cq=True)
        parent = parents[draw(st.integers(0, len(parents) - 1))]
        cq.parent = parent
        parent.child_cqs[cq.name] = cq
        cqs.append(cq)
    for node in [*parents, *cqs]:
        for fr in (FR, OTHER):
            quota = draw(quotas)
            if quota is not None:
                node.quotas[fr] = quota
    update_tree(root)
    return root, cqs


@settings(max_examples=300, deadline=None)
@given(trees(), st.lists(st.tuples(st.integers(0, 3), st.integers(1, 25), st.booleans()), max_size=8),
       st.integers(0, 40))
def test_quota_arithmetic_agrees_with_its_definitions(tree: tuple[ResourceNode, list[ResourceNode]],
                                                      ops: list[tuple[int, int, bool]], request: int) -> None:
    root, cqs = tree
    twin_root = copy.deepcopy(root)
    twins = {n.name: n for n in _walk(twin_root)}
    twin_cqs = [twins[cq.name] for cq in cqs]
    for index, value, remove in ops:
        cq, twin = cqs[index % len(cqs)], twin_cqs[index % len(cqs)]
        fr = FR if value % 2 else OTHER
        if remove:
            remove_usage(cq, fr, value)
            _remove(twin, fr, value)
        else:
            add_usage(cq, fr, value)
            _add(twin, fr, value)
        assert [n.usage for n in _walk(root)] == [n.usage for n in _walk(twin_root)]
    for cq in cqs:
        for fr in (FR, OTHER, ("g", "cpu")):
            assert available(cq, fr) == _available(cq, fr)
            assert potential_available(cq, fr) == _potential(cq, fr)
            assert lowest_subtree_that_fits(cq, fr, request) == _lowest(cq, fr, request)
            assert cq.local_available(fr) == _local_available(cq, fr)
            assert cq_available(cq, fr) == available_after_removal(cq, fr, {}) == max(0, _available(cq, fr))
        requests = {FR: request, OTHER: request // 2}
        fits = all(cq.subtree_quota.get(fr, 0) >= cq.usage.get(fr, 0) + v for fr, v in requests.items())
        assert quantities_fit_in_quota(cq, requests) == (
            fits, {fr: max(0, v - _local_available(cq, fr)) for fr, v in requests.items()})
    for node in _walk(root):
        assert node_height(node) == _height(node)


def _walk(node: ResourceNode) -> list[ResourceNode]:
    out = [node]
    for child in [*node.child_cohorts.values(), *node.child_cqs.values()]:
        out.extend(_walk(child))
    return out
