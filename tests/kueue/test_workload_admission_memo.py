"""The Workload create shortcut (:mod:`jobsetctl.kueue.workload_admission`) against the full admission chain:
on generated Workloads that share shapes under different names (valid and not), with findings from every
stage, the fake API server's create admits exactly what the full chain admits: the same stored object
(key order included), the same findings. And the content key the memos use
(:func:`jobsetctl.kube.jsontree.tree_key`), with the per-pod requests shared between equal templates and
the scheduling hashes remembered per content."""

from __future__ import annotations

import copy
import enum
import json
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobsetctl.admission.chain import admit
from jobsetctl.fakecluster.apiserver import APIServer
from jobsetctl.fakecluster.clock import VirtualClock
from jobsetctl.kinds.interface import Operation
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.jsontree import NotPlain, copy_tree, shape_bytes, tree_key
from jobsetctl.kube.versions import DEFAULT_KUBE_VERSION
from jobsetctl.kueue.config import SHIPPED
from jobsetctl.kueue.engine.workload import _PER_POD_BY_CONTENT, WorkloadInfo, _podset_per_pod, plain_key
from jobsetctl.kueue.kind import WORKLOAD
from jobsetctl.kueue.workload_admission import (
    _MEMOS,
    QUEUE_NAME_MAX_LENGTH,
    QUEUE_NAME_PATTERN,
    _frozen,
    _thawed,
)

K = "kueue.x-k8s.io/v1beta2"

names = st.sampled_from(["wl", "wl-1", "a.b", "Bad_Name", "x" * 254, "-lead", "ok-" + "y" * 60])
namespaces = st.sampled_from(["ns", "team-a", "Bad_NS", "z" * 64])
#: Per create (masked in the shape as the names are): valid, invalid for the schema, absent, not a string.
queue_names = st.sampled_from(["q", "other", "a.b", "Bad_Q", "q" * 254, "-lead", "", "q\n", None, 7])
quantities = st.sampled_from(["1", "500m", "-1", "2Gi", 1, 0.5, -0.0, "bogus"])
resource_names = st.sampled_from(["cpu", "memory", "pods", "example.com/gpu"])
label_values = st.sampled_from(["small", "x" * 64, "bad value", ""])
priorities = st.sampled_from([None, 0, 50, -1, "high", 1.5, True])


@st.composite
def workloads(draw: Any) -> dict[str, Any]:
    pod_sets = []
    for i in range(draw(st.integers(1, 2))):
        requests = draw(st.dictionaries(resource_names, quantities, max_size=2))
        pod_set: dict[str, Any] = {"name": f"ps{i}" if i else "main", "count": draw(st.sampled_from([1, 2, 8, 0, -1])),
                                   "template": {"spec": {"restartPolicy": "Never", "containers": [
                                       {"name": "c", "resources": {"requests": requests}}]}}}
        if draw(st.booleans()):
            pod_set["minCount"] = draw(st.sampled_from([1, 3, 100]))
        if draw(st.booleans()):
            request: dict[str, Any] = draw(st.sampled_from([
                {"required": "rack"}, {"preferred": "rack"}, {"podSetSliceRequiredTopology": "rack"},
                {"podSetSliceRequiredTopology": "rack", "podSetSliceSize": 2}, {"podSetSliceSize": 0}]))
            pod_set["topologyRequest"] = request
        if draw(st.booleans()):
            pod_set["unknownField"] = 1
        pod_sets.append(pod_set)
    spec: dict[str, Any] = {"queueName": draw(st.sampled_from(["q", "other"])), "podSets": pod_sets}
    priority = draw(priorities)
    if priority is not None:
        spec["priority"] = priority
    metadata: dict[str, Any] = {"name": "placeholder", "namespace": "placeholder"}
    if draw(st.booleans()):
        metadata["labels"] = {"kueue.x-k8s.io/performance-scheduler-class": draw(label_values)}
    if draw(st.booleans()):
        metadata["annotations"] = {draw(st.sampled_from(["jobsetctl.dev/duration", "kueue.x-k8s.io/priority-boost",
                                                         "bad key!"])): draw(st.sampled_from(["200ms", "", "7"]))}
    obj: dict[str, Any] = {"apiVersion": K, "kind": "Workload", "metadata": metadata, "spec": spec}
    if draw(st.booleans()):
        obj["status"] = {"conditions": [{"type": "QuotaReserved", "status": "True", "reason": "R", "message": "",
                                         "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    return obj


def _canonical(value: Any) -> str:
    """Equality with key order: the JSON text without sorting."""
    return json.dumps(value, default=repr)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(workloads(), st.lists(st.tuples(names, namespaces, queue_names), min_size=1, max_size=4)),
                min_size=1, max_size=3),
       st.sampled_from([SHIPPED, None]))
def test_the_create_shortcut_admits_what_the_full_chain_admits(cases: list[Any], kueue: Any) -> None:
    api = APIServer(VirtualClock(), DEFAULT_KUBE_VERSION, parse_feature_gates({}, DEFAULT_KUBE_VERSION), kueue=kueue)
    serial = 0
    clean = False
    for template, identities in cases:
        for name, namespace, queue in identities:
            serial += 1
            obj = copy.deepcopy(template)
            obj["metadata"].update(name=name, namespace=namespace, uid=f"uid-{serial}",
                                   creationTimestamp=f"2026-01-01T00:00:{serial % 60:02d}Z")
            if queue is None:
                obj["spec"].pop("queueName", None)
            else:
                obj["spec"]["queueName"] = queue
            ctx = api.context(Operation.CREATE)
            # The reference: the full chain (no cluster view, so no memo; Workloads have no in-cluster checks).
            assert list(WORKLOAD.validate_in_cluster(obj, ctx)) == []
            expected = admit(copy.deepcopy(obj), replace(ctx, cluster=None))
            got = admit(obj, ctx)
            assert got.handler is expected.handler and got.typed == expected.typed
            assert got.findings == expected.findings
            assert _canonical(got.obj) == _canonical(expected.obj) and got.obj == expected.obj
            assert got.obj is not obj
            clean = clean or (got.obj is not None and not got.findings)
            if got.obj is not None:
                # The caller owns what it got: changing it must not change what the next create gets.
                got.obj["spec"]["podSets"][0]["count"] = 12345
                got.obj["metadata"]["labels"] = {"changed": "yes"}
    # A create admitted without findings left its shape in the memo, which served the later ones.
    assert bool(clean) == bool(api in _MEMOS and _MEMOS[api].results)


@pytest.mark.parametrize("api_version", ["kueue.x-k8s.io/v1beta2", "kueue.x-k8s.io/v1beta1"])
def test_the_queue_name_checks_are_the_schemas(api_version: str) -> None:
    """The premise of masking ``spec.queueName``: the schema checks it with exactly the constraints
    :func:`_queue_name_passes` applies (and nothing else looks at it on a create)."""
    node = WORKLOAD.schema(api_version, DEFAULT_KUBE_VERSION).root.properties["spec"].properties["queueName"]
    assert node.types == frozenset({"string"}) and node.enum is None and node.format is None
    assert node.max_length == QUEUE_NAME_MAX_LENGTH and node.min_length is None
    assert node.pattern == QUEUE_NAME_PATTERN.pattern and not node.validations


def test_a_remembered_shape_serves_other_queue_names() -> None:
    api = APIServer(VirtualClock(), DEFAULT_KUBE_VERSION, parse_feature_gates({}, DEFAULT_KUBE_VERSION), kueue=SHIPPED)
    template = {"apiVersion": K, "kind": "Workload", "metadata": {"name": "a", "namespace": "ns"},
                "spec": {"queueName": "q", "podSets": [{"name": "main", "count": 1, "template": {"spec": {
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}]}}
    for i, queue in enumerate(["q", "other", "team-a.q", "Bad_Q", "q" * 254, "q\n", "x"]):
        obj = copy.deepcopy(template)
        obj["metadata"].update(name=f"wl-{i}", uid=f"uid-{i}", creationTimestamp="2026-01-01T00:00:00Z")
        obj["spec"]["queueName"] = queue
        ctx = api.context(Operation.CREATE)
        expected = admit(copy.deepcopy(obj), replace(ctx, cluster=None))
        got = admit(obj, ctx)
        assert got.findings == expected.findings
        assert _canonical(got.obj) == _canonical(expected.obj) and got.obj == expected.obj
        # ("q\n": Go's ``$`` is the end of the text, so the schema pattern rejects it, as the API server does.)
        assert bool(got.findings) == (queue in ("Bad_Q", "q" * 254, "q\n"))
    assert len(_MEMOS[api].results) == 1  # one shape for all the queue names


def test_repeated_creates_are_served_from_the_memo() -> None:
    api = APIServer(VirtualClock(), DEFAULT_KUBE_VERSION, parse_feature_gates({}, DEFAULT_KUBE_VERSION), kueue=SHIPPED)
    template = {"apiVersion": K, "kind": "Workload", "metadata": {"name": "a", "namespace": "ns"},
                "spec": {"queueName": "q", "podSets": [{"name": "main", "count": 1, "template": {"spec": {
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}]}}
    stored = []
    for i in range(3):
        obj = copy.deepcopy(template)
        obj["metadata"]["name"] = f"wl-{i}"
        result = api.create(obj)
        assert result.ok
        stored.append(result.obj)
    assert len(_MEMOS[api].results) == 1
    assert [s["metadata"]["name"] for s in stored] == ["wl-0", "wl-1", "wl-2"]
    assert stored[1]["spec"] == stored[2]["spec"] and stored[1]["spec"] is not stored[2]["spec"]
    # A bad name on a remembered shape goes through the full chain and is refused with its message.
    obj = copy.deepcopy(template)
    obj["metadata"]["name"] = "Bad_Name"
    refused = api.create(obj)
    assert not refused.ok and "metadata.name" in refused.message()


json_trees = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False) | st.text(max_size=3),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=2), children, max_size=3),
    max_leaves=12)


def _typed(value: Any) -> Any:
    """Equality that sees types and key order (what tree_key must agree with)."""
    if isinstance(value, dict):
        return ("d", [(k, _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("l", [_typed(v) for v in value])
    return (type(value).__name__, repr(value))


@settings(max_examples=300, deadline=None)
@given(json_trees, json_trees)
def test_tree_key_is_equal_exactly_for_equal_typed_trees(left: Any, right: Any) -> None:
    assert (tree_key(left) == tree_key(right)) == (_typed(left) == _typed(right))
    assert tree_key(left) == tree_key(copy.deepcopy(left))


def test_tree_key_tells_types_apart_and_refuses_what_is_not_json() -> None:
    assert len({tree_key(v) for v in (1, 1.0, True, "1", 0.0, -0.0, None, [], {})}) == 9
    assert tree_key({"a": 1, "b": 2}) != tree_key({"b": 2, "a": 1})
    for bad in ((1,), {1: "a"}, {"a": {"b": (1,)}}, type("D", (dict,), {})()):
        with pytest.raises(NotPlain):
            tree_key(bad)


@settings(max_examples=300, deadline=None)
@given(json_trees, json_trees)
def test_shape_bytes_are_equal_exactly_for_equal_typed_trees(left: Any, right: Any) -> None:
    """The Workload memo's key (:func:`shape_bytes`) agrees with :func:`tree_key` on plain trees."""
    assert (shape_bytes(left) == shape_bytes(right)) == (_typed(left) == _typed(right))
    assert shape_bytes(left) == shape_bytes(copy.deepcopy(left))
    # Equal strings that are the same object or not, interned or not, give the same bytes (format 2 writes
    # no back-references).
    shared = "".join(["sha", "red"])
    assert shape_bytes([shared, shared]) == shape_bytes(["shared", "".join(["sha", "red"])])


def _containers(value: Any) -> list[int]:
    if isinstance(value, dict):
        return [id(value), *[i for item in value.values() for i in _containers(item)]]
    if isinstance(value, list):
        return [id(value), *[i for item in value for i in _containers(item)]]
    return []


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=2), json_trees, max_size=4))
def test_a_thawed_copy_is_what_copy_tree_gives(tree: dict[str, Any]) -> None:
    """The create memo keeps the admitted object as marshal bytes and thaws a copy per hit: equal to
    ``copy_tree`` type for type and key order included, and sharing no container with the original or with
    another thawed copy (each create owns and changes its stored object)."""
    frozen = _frozen(tree)
    assert frozen is not None
    first, second = _thawed(frozen), _thawed(frozen)
    assert _typed(first) == _typed(copy_tree(tree)) == _typed(second)
    assert not set(_containers(first)) & (set(_containers(tree)) | set(_containers(second)))
    assert len(set(_containers(first))) == len(_containers(first))  # nothing shared within a copy either
    # A container that occurs twice in the remembered tree comes out as two (as copy_tree makes it).
    inner: dict[str, Any] = {"k": [1]}
    twice = _thawed(_frozen({"a": inner, "b": inner}) or b"")
    assert twice == {"a": {"k": [1]}, "b": {"k": [1]}} and twice["a"] is not twice["b"]
    assert twice["a"]["k"] is not twice["b"]["k"]


def test_only_a_plain_tree_is_frozen() -> None:
    """What marshal would not give back type for type is not kept: a dict subclass, a tuple, a bytearray, a key
    that is not a string. A ``_frozen`` that skipped its plainness check fails here."""
    subclass = type("D", (dict,), {})
    for refused in ({"a": subclass()}, {"a": (1,)}, {"a": bytearray(b"x")}, {1: "a"}):
        assert _frozen(refused) is None


def test_shape_bytes_tell_apart_what_a_json_text_would_not() -> None:
    assert len({shape_bytes(v) for v in (1, 1.0, True, "1", 0.0, -0.0, None, [], {}, (), "true")}) == 11
    assert shape_bytes({"a": 1, "b": 2}) != shape_bytes({"b": 2, "a": 1})
    assert shape_bytes({1: "a"}) != shape_bytes({"1": "a"}) and shape_bytes([1]) != shape_bytes((1,))

    class Label(str):
        pass

    class Count(enum.IntEnum):
        ONE = 1

    deep: list[Any] = []
    for _ in range(3000):
        deep = [deep]
    for refused in (Label("a"), {"a": [Count.ONE]}, type("D", (dict,), {})(), object(), deep):
        assert shape_bytes(refused) is None


def test_a_shape_is_remembered_for_a_plain_tree_only_and_serves_that_tree_only() -> None:
    """The memo's key argument: ``{1: "1"}`` (which the chain admits without a finding, and marshal accepts)
    is not remembered, and a remembered ``{"1": "1"}`` does not answer for it (nor for its tuple twin). A key
    that conflated them (a JSON text, say) fails here: the create would come back with the string key."""
    api = APIServer(VirtualClock(), DEFAULT_KUBE_VERSION, parse_feature_gates({}, DEFAULT_KUBE_VERSION), kueue=SHIPPED)

    def workload(name: str, requests: Any, containers: Any = list) -> dict[str, Any]:
        return {"apiVersion": K, "kind": "Workload", "metadata": {
            "name": name, "namespace": "ns", "uid": f"uid-{name}", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"queueName": "q", "podSets": [{"name": "main", "count": 1, "template": {"spec": {
                "containers": containers([{"name": "c", "resources": {"requests": requests}}])}}}]}}

    for obj, remembered in ((workload("int-key", {1: "1"}), 0), (workload("str-key", {"1": "1"}), 1),
                            (workload("int-key-2", {1: "1"}), 1), (workload("tuple", {"1": "1"}, tuple), 1),
                            (workload("str-key-2", {"1": "1"}), 1)):
        ctx = api.context(Operation.CREATE)
        expected = admit(copy.deepcopy(obj), replace(ctx, cluster=None))
        got = admit(obj, ctx)
        assert got.findings == expected.findings and got.typed == expected.typed
        assert _canonical(got.obj) == _canonical(expected.obj) and got.obj == expected.obj
        assert len(_MEMOS[api].results) == remembered


def test_per_pod_requests_are_shared_between_equal_templates_only() -> None:
    def podset(cpu: Any) -> dict[str, Any]:
        return {"name": "main", "count": 1, "template": {"spec": {"containers": [
            {"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}}

    first, second, other = podset("1"), podset("1"), podset("2")
    assert _podset_per_pod(first, {}) is _podset_per_pod(second, {})
    assert _podset_per_pod(other, {}) == {"cpu": 2000} and _podset_per_pod(first, {}) == {"cpu": 1000}


def test_the_per_pod_memo_keys_are_the_pod_specs_bytes_and_only_plain_ones_are_kept() -> None:
    """The per-pod memo's key argument: ``PodRequests`` reads the pod spec only, keyed by its marshal bytes
    (:func:`plain_key`): a value of another type (``"1"`` against ``1``) or another key order is another
    key, and a pod spec that is no plain tree (a tuple of containers) is not remembered. A ``_podset_per_pod``
    that kept what ``content_key`` refuses fails here."""
    def podset(containers: Any) -> dict[str, Any]:
        return {"name": "main", "count": 1, "template": {"spec": {"containers": containers}}}

    container = {"name": "c", "resources": {"requests": {"cpu": "1"}}}
    _PER_POD_BY_CONTENT.clear()
    plain = podset([dict(container)])
    assert _podset_per_pod(plain, {}) == {"cpu": 1000}
    assert plain_key(plain["template"]["spec"]) in _PER_POD_BY_CONTENT
    as_tuple = podset((dict(container),))
    memo: dict[int, Any] = {}
    _podset_per_pod(as_tuple, memo)
    assert shape_bytes(as_tuple["template"]["spec"]) not in _PER_POD_BY_CONTENT
    assert plain_key(as_tuple["template"]["spec"]) is None and memo[id(as_tuple["template"]["spec"])][2] is None
    reordered = podset([{"resources": {"requests": {"cpu": "1"}}, "name": "c"}])
    typed = podset([{"name": "c", "resources": {"requests": {"cpu": 1}}}])
    assert len({plain_key(p["template"]["spec"]) for p in (plain, reordered, typed)}) == 3
    assert _podset_per_pod(podset([{"name": "c", "resources": {"requests": {"cpu": "2"}}}]), {}) == {"cpu": 2000}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(workloads(), min_size=1, max_size=6))
def test_scheduling_hashes_from_the_content_memo_are_the_hashes_of_the_text(objs: list[dict[str, Any]]) -> None:
    # Twice each, as copies: the second of equal contents comes from the memo.
    for obj in objs + [copy.deepcopy(o) for o in objs]:
        info = WorkloadInfo(obj)
        assert info.compute_scheduling_hash() == info._hash_text_digest()
