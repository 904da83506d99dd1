"""``APIServer.create(..., shared=True)``: the caller keeps the values below the object and its metadata.

The runner submits its inputs this way (one copy per create instead of two); whatever path the create
takes (admission's own copy, the Workload create memo, a Pod, a kind without rules, a skipped admission,
a rejection), the stored object must share no container with the caller's and the caller's values must
come out unchanged, and the stored object must be what a create of a private copy stores.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from jobsetctl.fakecluster.cluster import ClusterOptions, FakeCluster
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import KubeVersion

K = "kueue.x-k8s.io/v1beta2"


def _cluster() -> FakeCluster:
    version = KubeVersion.V1_37
    return FakeCluster(ClusterOptions(version, parse_feature_gates(None, version), simulate=True))


def _containers(value: Any) -> list[int]:
    """The ids of every dict and list in a tree."""
    out: list[int] = []
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            out.append(id(current))
            stack.extend(current.values())
        elif isinstance(current, list):
            out.append(id(current))
            stack.extend(current)
    return out


def _workload(name: str, cpu: str = "1") -> dict[str, Any]:
    return {"apiVersion": K, "kind": "Workload",
            "metadata": {"name": name, "namespace": "default", "labels": {"a": "b"}},
            "spec": {"queueName": "q", "podSets": [{"name": "main", "count": 1, "template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}}]}}


OBJECTS: list[tuple[str, dict[str, Any], bool]] = [
    ("workload", _workload("w1"), False),
    ("workload-same-shape", _workload("w2"), False),  # the create memo answers
    ("workload-rejected", _workload("w3", cpu="not-a-quantity"), False),
    ("pod", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
             "spec": {"containers": [{"name": "c", "image": "x", "env": [{"name": "A", "value": "1"}]}]}}, False),
    ("configmap", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "default"},
                   "data": {"k": "v"}, "extra": [{"x": [1]}]}, False),
    ("skip-admission", _workload("w4"), True),
]


@pytest.mark.parametrize(("label", "obj", "skip"), OBJECTS, ids=[o[0] for o in OBJECTS])
def test_a_shared_create_stores_what_a_private_create_stores(label: str, obj: dict[str, Any], skip: bool) -> None:
    private_cluster, shared_cluster = _cluster(), _cluster()
    for cluster in (private_cluster, shared_cluster):  # the same history: the memo has seen w1's shape
        cluster.api.create(_workload("w0"))
    original = copy.deepcopy(obj)
    private = private_cluster.api.create(copy.deepcopy(obj), skip_admission=skip)
    submitted = {**obj, "metadata": dict(obj["metadata"])}
    shared = shared_cluster.api.create(submitted, skip_admission=skip, shared=True)
    assert obj == original  # the caller's values are untouched
    assert shared.ok == private.ok
    assert [f.message for f in shared.findings] == [f.message for f in private.findings]
    if private.obj is None:
        assert shared.obj is None
        return
    assert shared.obj is not None
    # Equal but for the uid the API server draws (both clusters draw the same sequence).
    assert shared.obj == private.obj
    below = set(_containers(obj)) - {id(obj), id(obj["metadata"])}
    assert below.isdisjoint(_containers(shared.obj))
