"""The TAS placement shortcuts of ``tas_order`` (``EngineSettings.tas_shortcuts``) answer as the full
algorithm does.

* Phase 2 read from the domains kept in (slices, pods, values) order (``place_in_order``) against
  ``Placement._place`` (``findTopologyAssignment`` phase 2, sorting and scanning every level), on generated
  trees, counts, requests and both profiles (BestFit, LeastFreeCapacity).
* The cached counts moved leaf by leaf up the tree (``Counting._recount_moving``) against the counts
  combined again from all children (``Counting._recount``), with inner slice layers, and the kept order
  against the order built afresh from the counts.

Whole generated runs with and without the shortcuts are compared in test_tas_shortcuts.py.
"""

from __future__ import annotations

from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from jobsetctl.fakecluster.apiserver import APIServer, WatchEvent, WatchType
from jobsetctl.fakecluster.clock import VirtualClock
from jobsetctl.fakecluster.events import Recorder
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import DEFAULT_KUBE_VERSION
from jobsetctl.kueue.engine.core import Engine
from jobsetctl.kueue.engine.settings import EngineSettings
from jobsetctl.kueue.engine.tas_counts import StateOverlay
from jobsetctl.kueue.engine.tas_order import DomainOrder, place_in_order
from jobsetctl.kueue.engine.tas_tree import DomainState, PodSetRequest, Stats
from jobsetctl.kueue.features import DEFAULT_GATES

K = "kueue.x-k8s.io/v1beta2"
BLOCK = "cloud.provider.com/topology-block"
RACK = "cloud.provider.com/topology-rack"
HOST = "kubernetes.io/hostname"


def _engine(shortcuts: bool, blocks: int, racks: int, nodes: int, hostname: bool, least_free: bool = True) -> Any:
    """An engine with one TAS flavor over ``blocks`` x ``racks`` x ``nodes`` nodes of 8 cpu; the lowest
    level is the hostname, or the rack (several nodes per leaf)."""
    clock = VirtualClock()
    api = APIServer(clock, DEFAULT_KUBE_VERSION, parse_feature_gates({}, DEFAULT_KUBE_VERSION))
    engine = Engine(api, clock, Recorder(clock), EngineSettings(
        gates={**DEFAULT_GATES.as_dict(), "TASProfileMixed": least_free}, tas_shortcuts=shortcuts))
    for b in range(blocks):
        for r in range(racks):
            for n in range(nodes):
                name = f"node-b{b}-r{r}-n{n}"
                node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
                    "group": "tas", BLOCK: f"b{b}", RACK: f"b{b}-r{r}", HOST: name}},
                    "status": {"allocatable": {"cpu": "8", "pods": "110"},
                               "conditions": [{"type": "Ready", "status": "True"}]}}
                list(engine.tas.keys_for(WatchEvent(WatchType.ADDED, ("", "Node", "", name), node)))
    levels = [BLOCK, RACK, HOST] if hostname else [BLOCK, RACK]
    for obj in [{"apiVersion": K, "kind": "Topology", "metadata": {"name": "topo"},
                 "spec": {"levels": [{"nodeLabel": level} for level in levels]}},
                {"apiVersion": K, "kind": "ResourceFlavor", "metadata": {"name": "tas"},
                 "spec": {"nodeLabels": {"group": "tas"}, "topologyName": "topo"}}]:
        engine.on_configuration(obj["kind"], obj, "", obj["metadata"]["name"])
    return engine


def _request(kind: str, level: str, slice_level: str, slice_size: int, layers: list[tuple[str, int]]) -> dict[str, Any]:
    if kind == "required":
        return {"required": level}
    if kind == "preferred":
        return {"preferred": level}
    if kind == "unconstrained":
        return {"unconstrained": True}
    if kind == "layers":
        return {"podsetSliceRequiredTopologyConstraints": [{"topology": t, "size": s} for t, s in layers]}
    request: dict[str, Any] = {"podSetSliceRequiredTopology": slice_level, "podSetSliceSize": slice_size}
    if kind == "sliced-required":
        request["required"] = level
    return request


def _podset(count: int, request: dict[str, Any]) -> PodSetRequest:
    podset = {"name": "main", "count": count, "topologyRequest": request,
              "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}
    return PodSetRequest(podset, "main", {"cpu": 1000}, count, "tas")


trees = st.fixed_dictionaries({"blocks": st.integers(1, 2), "racks": st.integers(1, 3), "nodes": st.integers(1, 4),
                               "hostname": st.booleans()})
requests = st.fixed_dictionaries({
    "kind": st.sampled_from(["required", "preferred", "unconstrained", "sliced", "sliced-required"]),
    "level": st.sampled_from([BLOCK, RACK, HOST]), "slice_level": st.sampled_from([BLOCK, RACK, HOST]),
    "slice_size": st.integers(1, 3), "count": st.integers(1, 12)})


@settings(max_examples=400, deadline=None)
@given(trees, requests, st.lists(st.integers(0, 6), min_size=24, max_size=24), st.booleans())
def test_placing_in_order_answers_as_the_full_algorithm(tree_setup: dict[str, Any], req: dict[str, Any],
                                                        pods: list[int], least_free: bool) -> None:
    engine = _engine(True, **tree_setup, least_free=least_free)
    flavor = engine.tas.flavors["tas"]
    tree = flavor.current_tree()
    workers = _podset(req["count"], _request(req["kind"], req["level"], req["slice_level"], req["slice_size"], []))
    shape = flavor._compute_shape(workers)
    assume(not shape.error and not shape.size_at_level)
    # Phase 1 as the cache leaves it for a podset without leader: free pods per leaf, summed up the tree.
    states = [DomainState() for _ in range(tree.count)]
    for leaf in tree.leaf_list:
        state = states[leaf.idx]
        state.pod_count = state.pod_count_with_leader = pods[leaf.leaf_idx]
    flavor.states = states
    for root in tree.roots.values():
        flavor._fill(root, shape.slice_size, shape.slice_idx, 0, shape.size_at_level, False)
    snapshot = [DomainState(s.pod_count, s.slice_count, s.pod_count_with_leader, s.slice_count_with_leader,
                            s.leader_count) for s in states]
    flavor.states = StateOverlay(states)
    expected = flavor._place(tree, workers, None, 0, shape.level_idx, shape.slice_idx, shape.slice_size,
                             shape.required, shape.unconstrained, shape.layers, shape.size_at_level, Stats())
    order = DomainOrder.build(tree, states)
    assert order is not None
    flavor.states = StateOverlay(states)
    got = place_in_order(flavor, tree, order, workers, shape)
    if got is not None:
        assert got == expected
        assert not expected[1]
    assert states == snapshot  # both wrote only copies


@settings(max_examples=150, deadline=None)
@given(trees, st.sampled_from(["sliced", "layers", "required"]), st.integers(1, 3),
       st.lists(st.tuples(st.integers(0, 23), st.integers(-3000, 9000)), min_size=1, max_size=25))
def test_counts_moved_leaf_by_leaf_equal_counts_combined_again(tree_setup: dict[str, Any], kind: str, slice_size: int,
                                                               moves: list[tuple[int, int]]) -> None:
    """Usage moving on leaves (and back), recounted after each move or after several."""
    engines = [_engine(True, **tree_setup), _engine(False, **tree_setup)]
    layers = [(BLOCK, 2 * slice_size), (RACK, slice_size), (HOST, 1)] if tree_setup["hostname"] else \
        [(BLOCK, 2 * slice_size), (RACK, slice_size)]
    workers = _podset(4, _request(kind, RACK, RACK, slice_size, layers))
    flavors = [engine.tas.flavors["tas"] for engine in engines]
    shapes = [flavor._compute_shape(workers) for flavor in flavors]
    assert not shapes[0].error
    for flavor, shape in zip(flavors, shapes, strict=True):
        flavor._cached_counts(flavor.current_tree(), shape, False)
    for step, (leaf_index, cpu) in enumerate(moves):
        for engine, flavor, shape in zip(engines, flavors, shapes, strict=True):
            tree = flavor.current_tree()
            leaf = tree.leaf_list[leaf_index % len(tree.leaf_list)]
            usage = flavor.usage.setdefault(leaf.id, {})
            usage["cpu"] = usage.get("cpu", 0) + cpu
            engine.tas.touched([(leaf.id, usage)])
            if step % 3 != 1:
                flavor._cached_counts(tree, shape, False)
        fast, full = (flavor._current_entry for flavor in flavors)
        assert fast.states == full.states
        assert fast.stats == full.stats
        assert fast.limiting == full.limiting
        kept = fast.order
        built = DomainOrder.build(flavors[0].current_tree(), fast.states)
        assert kept is not None and built is not None
        assert (kept.by_level, kept.by_parent) == (built.by_level, built.by_parent)


def test_the_order_is_taken_for_the_common_requests() -> None:
    """The comparison above is not vacuous: required, preferred and sliced (LeastFreeCapacity) requests
    that fit are answered from the order."""
    engine = _engine(True, 2, 3, 4, True)
    flavor = engine.tas.flavors["tas"]
    tree = flavor.current_tree()
    for request in ({"required": RACK}, {"preferred": RACK}, {"podSetSliceRequiredTopology": RACK, "podSetSliceSize": 2},
                    {"unconstrained": True}):
        workers = _podset(4, request)
        shape = flavor._compute_shape(workers)
        flavor._cached_counts(tree, shape, False)
        order = flavor._current_entry.order
        assert order is not None
        got = place_in_order(flavor, tree, order, workers, shape)
        assert got is not None and got[0]["main"].total() == 4, request


@settings(max_examples=150, deadline=None)
@given(trees, st.lists(st.tuples(st.integers(0, 23), st.integers(1, 9)), min_size=1, max_size=4),
       st.lists(st.tuples(st.integers(0, 23), st.integers(-2000, 9000), st.integers(-2000, 9000)), max_size=6),
       st.sampled_from([{"cpu": 1000}, {"cpu": 500, "memory": 2**30}, {}, {"cpu": 0}]))
def test_holds_answers_as_fits(tree_setup: dict[str, Any], domains: list[tuple[int, int]],
                               used: list[tuple[int, int, int]], per_pod: dict[str, int]) -> None:
    """``TASFlavor.holds`` (one podset's assignment, the free amounts of the requested resources only)
    against ``TASFlavor.fits`` (the leaves' whole remaining capacity), with TAS and non-TAS usage."""
    from jobsetctl.kueue.engine.tas_encoding import TopologyAssignment

    engine = _engine(True, **tree_setup)
    flavor = engine.tas.flavors["tas"]
    tree = flavor.current_tree()
    leaves = tree.leaf_list
    for index, tas_cpu, other_cpu in used:
        leaf = leaves[index % len(leaves)]
        flavor.usage.setdefault(leaf.id, {})["cpu"] = tas_cpu
        if leaf.node is not None:
            engine.tas.non_tas_by_node.setdefault(leaf.node.name, {})["cpu"] = other_cpu
    ta = TopologyAssignment(tree.levels[-1:] if tree.lowest_is_node else tree.levels,
                            [(leaves[i % len(leaves)].values[-1:] if tree.lowest_is_node else leaves[i % len(leaves)].values,
                              count) for i, count in domains])
    expected = flavor.fits([(values[-1] if tree.lowest_is_node else ",".join(values), per_pod, count)
                            for values, count in ta.domains])
    assert flavor.holds(ta, per_pod) == expected
