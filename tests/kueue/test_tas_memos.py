"""Key tests of the TAS memos that share work between the workloads of one class, and the TAS checks
rewritten for speed compared with the way they were written before.

Each memo says which inputs its answer reads; here, changing each of them must give the answer computed
afresh (``EngineSettings.tas_shortcuts`` off computes it at every call), and a memo whose key left one of
them out fails one of these tests.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jobsetctl.kueue.engine.amounts import PODS, count_in
from jobsetctl.kueue.engine.flavors import FlavorAssigner
from jobsetctl.kueue.engine.tas_encoding import TopologyAssignment
from jobsetctl.kueue.engine.workload import WorkloadInfo
from tests.kueue.test_tas_shortcuts import BLOCK, NODES, RACK, _engine

K = "kueue.x-k8s.io/v1beta2"


def _workload(name: str, podsets: list[dict[str, Any]], queue: str = "lq0") -> dict[str, Any]:
    return {"apiVersion": K, "kind": "Workload", "metadata": {"name": name, "namespace": "default"},
            "spec": {"queueName": queue, "podSets": podsets}}


def _podset(name: str = "main", count: int = 2, cpu: str = "1", request: dict[str, Any] | None = None,
            **extra: Any) -> dict[str, Any]:
    podset: dict[str, Any] = {"name": name, "count": count, "template": {"spec": {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}}
    if request is not None:
        podset["topologyRequest"] = request
    podset.update(extra)
    return podset


def _requests_of(engine: Any, obj: dict[str, Any], cq: str = "cq0", counts: list[int] | None = None) -> Any:
    """The podsets to place that the flavor assigner's TAS step worked with, as plain data (the podset
    objects by content)."""
    info = WorkloadInfo(copy.deepcopy(obj))
    state = engine.cache.cluster_queues[cq]
    assigner = FlavorAssigner(info, state, engine.cache.flavors, engine.oracle(state), tas=engine.tas_assigner(state))
    assignment = assigner.assign(counts)
    stash = assignment.tas_requests
    if stash is None:
        return None
    return {flavor: [(r.name, r.count, r.flavor, r.implied, r.group, dict(r.per_pod), r.podset) for r in rs]
            for flavor, rs in stash[3].items()}


VARIANTS: list[tuple[str, list[dict[str, Any]], str, list[int] | None]] = [
    ("required rack", [_podset(request={"required": RACK})], "cq0", None),
    ("preferred rack", [_podset(request={"preferred": RACK})], "cq0", None),
    ("required block", [_podset(request={"required": BLOCK})], "cq0", None),
    ("sliced", [_podset(count=4, request={"podSetSliceRequiredTopology": RACK, "podSetSliceSize": 2})], "cq0", None),
    ("implied (no request)", [_podset()], "cq0", None),
    ("another count", [_podset(count=3, request={"required": RACK})], "cq0", None),
    ("another cpu", [_podset(cpu="2", request={"required": RACK})], "cq0", None),
    ("another name", [_podset(name="workers", request={"required": RACK})], "cq0", None),
    ("another ClusterQueue", [_podset(request={"required": RACK})], "cq1", None),
    ("partially admitted (another assigned count, the same podsets)", [_podset(count=4, request={"required": RACK},
                                                                               minCount=1)], "cq0", [1]),
    ("the same podsets, all of them", [_podset(count=4, request={"required": RACK}, minCount=1)], "cq0", None),
    ("a leader and workers", [
        _podset(name="leader", count=1, request={"required": RACK, "podSetGroupName": "g"}),
        _podset(name="workers", count=2, request={"required": RACK, "podSetGroupName": "g"})], "cq0", None),
    ("two podsets, no group", [
        _podset(name="leader", count=1, request={"required": RACK}),
        _podset(name="workers", count=2, request={"required": RACK})], "cq0", None),
]


@pytest.mark.parametrize("order", ["forward", "backward"])
def test_the_podsets_to_place_are_those_of_each_workload_whatever_was_asked_before(order: str) -> None:
    """``TASAssigner._requests_by_content`` (shared per ClusterQueue, ``spec.podSets`` content and the
    assignment's signature): workloads that differ in one input each, asked in turn on one engine, get what
    the engine without shortcuts computes for each. Leaving the content of ``spec.podSets`` or the
    signature out of the key fails this."""
    fast, full = _engine(True), _engine(False)
    variants = VARIANTS if order == "forward" else VARIANTS[::-1]
    for index, (label, podsets, cq, counts) in enumerate(variants):
        obj = _workload(f"w{index}", podsets, "lq1" if cq == "cq1" else "lq0")
        expected = _requests_of(full, obj, cq, counts)
        assert expected is not None, label
        assert _requests_of(fast, obj, cq, counts) == expected, label
        # A second workload of the same class shares the first one's podsets to place.
        assert _requests_of(fast, {**obj, "metadata": {"name": f"again{index}", "namespace": "default"}},
                            cq, counts) == expected, label
    assert fast.tas.requests_by_content, "the memo was not used"


def test_workloads_of_one_class_share_their_podsets_to_place() -> None:
    """The memo is taken: the second workload of a class gets the very requests object of the first."""
    engine = _engine(True)
    shared = []
    for name in ("a", "b"):
        info = WorkloadInfo(_workload(name, [_podset(request={"required": RACK})]))
        state = engine.cache.cluster_queues["cq0"]
        assignment = FlavorAssigner(info, state, engine.cache.flavors, engine.oracle(state),
                                    tas=engine.tas_assigner(state)).assign()
        shared.append(assignment.tas_requests[3])
    assert shared[0] is shared[1]


# ---- TASFlavor.holds, against count_in as it was written -------------------------------------------------


def _holds_with_count_in(flavor: Any, ta: TopologyAssignment, per_pod: dict[str, int]) -> bool:
    """``TASFlavor.holds`` before it was written without ``count_in`` (node leaves)."""
    leaves = flavor.current_tree().leaves
    need = dict(per_pod)
    need[PODS] = need.get(PODS, 0) + 1
    for values, count in ta.domains:
        leaf = leaves.get(values[-1])
        if leaf is None:
            return False
        non_tas = flavor.manager.non_tas_by_node.get(leaf.id) or {}
        usage = flavor.usage.get(leaf.id) or {}
        free = {name: leaf.capacity.get(name, 0) - non_tas.get(name, 0) - usage.get(name, 0) for name in need}
        if count_in(need, free) < count:
            return False
    return True


_HOLDS_ENGINE: list[Any] = []


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_holds_answers_as_count_in_does(data: st.DataObject) -> None:
    """Free amounts drawn around what the pods of each domain need (exactly that, one less, one more, or
    anything), zero and negative requests, empty requests, counts of 0 and below, unknown nodes."""
    if not _HOLDS_ENGINE:
        _HOLDS_ENGINE.append(_engine(True))
    engine = _HOLDS_ENGINE[0]
    flavor = engine.tas.flavors["tas"]
    engine.tas.non_tas_by_node.clear()
    flavor.usage.clear()
    leaves = flavor.current_tree().leaves
    per_pod = data.draw(st.dictionaries(st.sampled_from(["cpu", "memory", "pods", "example.com/gpu"]),
                                        st.sampled_from([0, 500, 1000, 1500, -500, 2**30, 3]), max_size=3))
    need = dict(per_pod)
    need[PODS] = need.get(PODS, 0) + 1
    domains = data.draw(st.lists(st.tuples(st.sampled_from([*NODES, "no-such-node"]), st.integers(-1, 5)),
                                 max_size=3))
    for node, count in domains:
        leaf = leaves.get(node)
        if leaf is None:
            continue
        for name, amount in need.items():
            how = data.draw(st.sampled_from(["none", "exact", "less", "more", "any"]))
            if how == "none":
                continue
            taken = leaf.capacity.get(name, 0) - amount * max(count, 0)
            taken += {"exact": 0, "less": 1, "more": -1}.get(how, 0)
            if how == "any":
                taken = data.draw(st.integers(-1000, 5000))
            split = data.draw(st.integers(0, 2))  # in the non-TAS pods, the TAS usage, or both
            if split in (0, 2):
                engine.tas.non_tas_by_node.setdefault(node, {})[name] = taken // 2 if split == 2 else taken
            if split in (1, 2):
                flavor.usage.setdefault(node, {})[name] = taken - taken // 2 if split == 2 else taken
    ta = TopologyAssignment(["kubernetes.io/hostname"], [([node], count) for node, count in domains])
    assert flavor.holds(ta, per_pod) == _holds_with_count_in(flavor, ta, per_pod)


# ---- Cache._tas_of, against its general loop ----------------------------------------------------------


def _tas_of_general(tas_flavors: dict[str, Any], info: Any) -> list[Any]:
    """``Cache._tas_of`` without its one-podset way: every podset, every flavor once, in order."""
    out: list[Any] = []
    seen: list[str] = []
    for podset in info.podsets:
        if podset.topology_assignment is None or not podset.flavors:
            continue
        for flavor in podset.flavors.values():
            tas = tas_flavors.get(flavor)
            if tas is not None and flavor not in seen:
                seen.append(flavor)
                out.append(tas)
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.one_of(st.none(), st.dictionaries(
    st.sampled_from(["cpu", "memory", "pods"]), st.sampled_from(["tas", "other", "plain"]), max_size=3))),
    max_size=3))
def test_the_tas_flavors_of_a_workload_are_those_of_the_general_loop(
        podsets: list[tuple[bool, dict[str, str] | None]]) -> None:
    from jobsetctl.kueue.engine.workload import PodSetResources

    engine = _engine(True)
    state = engine.cache.cluster_queues["cq0"]
    state.tas_flavors = {"tas": "the tas flavor", "other": "another tas flavor"}
    info = WorkloadInfo(_workload("w", [_podset()]))
    info.podsets = [PodSetResources(f"p{i}", 1, {"cpu": 1000}, flavors, None, object() if placed else None)
                    for i, (placed, flavors) in enumerate(podsets)]
    assert engine.cache._tas_of(state, info) == _tas_of_general(state.tas_flavors, info)


# ---- TASManager.encoded, per content ---------------------------------------------------------------------


def test_encodings_are_shared_per_content_and_differ_with_each_input() -> None:
    """``TASManager.encoded`` remembers an encoding per assignment content (flag, levels, domains' values and
    counts): assignments that differ in one of them, encoded in turn, get ``to_api`` of each; a new object
    with the content of an earlier one gets the same encoding object. Leaving the counts, the values, the
    levels or the flag out of the key fails this."""
    from jobsetctl.kueue.engine.tas_encoding import to_api

    engine = _engine(True)
    manager = engine.tas
    host, rack = "kubernetes.io/hostname", RACK
    # Hostnames in two runs of long prefixes: encoded by prefix runs (the flag on) they take two slices, one
    # slice without the flag.
    runs = [([f"{prefix}-{i}"], 1) for prefix in ("another-long-prefix-two", "very-long-prefix-one")
            for i in range(1, 7)]
    variants = [
        (True, [host], [(["node-a"], 2), (["node-b"], 1)]),
        (True, [host], [(["node-a"], 1), (["node-b"], 2)]),       # other counts
        (True, [host], [(["node-a"], 2), (["node-c"], 1)]),       # other values
        (True, [rack], [(["node-a"], 2), (["node-b"], 1)]),       # another level
        (True, [host], [(["node-a"], 2)]),                        # fewer domains
        (True, [host], runs),
        (False, [host], runs),                                    # the flag
    ]
    assert to_api(TopologyAssignment([host], runs), True) != to_api(TopologyAssignment([host], runs), False)
    first: list[Any] = []
    for flag, levels, domains in variants:
        ta = TopologyAssignment(list(levels), [(list(v), c) for v, c in domains])
        value = manager.encoded(ta, flag)
        assert value == to_api(TopologyAssignment(list(levels), [(list(v), c) for v, c in domains]), flag)
        first.append(value)
    for (flag, levels, domains), value in zip(variants, first, strict=True):
        again = TopologyAssignment(list(levels), [(list(v), c) for v, c in domains])
        assert manager.encoded(again, flag) is value
        assert manager.parsed(value) == again
