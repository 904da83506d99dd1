"""Pod-spec helpers: Kubernetes PodRequests semantics (trainer.md §3.7) and tolerant accessors."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jobsetctl.kube.podspec import (
    add_resources,
    container_requests,
    default_pod_spec,
    env_value,
    find_container,
    label_selector_matches,
    node_selector,
    pod_affinity_terms,
    pod_requests,
    required_node_selector_terms,
    scale,
    scheduler_name,
    scheduling_group_name,
    tolerations,
    volume,
    workload_reference,
)

F = Fraction


def container(name: str, requests: dict[str, Any] | None = None, limits: dict[str, Any] | None = None,
              restart: str | None = None) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    out: dict[str, Any] = {"name": name, "image": "busybox", "resources": resources}
    if restart is not None:
        out["restartPolicy"] = restart
    return out


@pytest.mark.parametrize(
    ("pod_spec", "expected"),
    [
        # App containers are summed.
        ({"containers": [container("a", {"cpu": "500m"}), container("b", {"cpu": "1", "memory": "1Gi"})]},
         {"cpu": F(3, 2), "memory": F(2**30)}),
        # A limit without a request counts as the request (Pod defaulting copies it).
        ({"containers": [container("a", limits={"nvidia.com/gpu": 8, "cpu": "2"}, requests={"cpu": "1"})]},
         {"cpu": F(1), "nvidia.com/gpu": F(8)}),
        # A regular init container only raises the peak.
        ({"containers": [container("a", {"cpu": "1"})], "initContainers": [container("i", {"cpu": "4"})]},
         {"cpu": F(4)}),
        ({"containers": [container("a", {"cpu": "3"})], "initContainers": [container("i", {"cpu": "2"})]},
         {"cpu": F(3)}),
        # A sidecar is added to the app containers and runs beside later init containers.
        ({"containers": [container("a", {"cpu": "1"})],
          "initContainers": [container("s", {"cpu": "1"}, restart="Always"), container("i", {"cpu": "3"})]},
         {"cpu": F(4)}),
        ({"containers": [container("a", {"cpu": "2"})],
          "initContainers": [container("s", {"cpu": "500m"}, restart="Always"), container("i", {"cpu": "1"})]},
         {"cpu": F(5, 2)}),
        # Overhead is added last.
        ({"containers": [container("a", {"cpu": "1"})], "overhead": {"cpu": "250m"}}, {"cpu": F(5, 4)}),
        # Pod-level requests replace the aggregate for cpu/memory only.
        ({"containers": [container("a", {"cpu": "1", "example.com/x": 2})], "resources": {"requests": {"cpu": "3"}}},
         {"cpu": F(3), "example.com/x": F(2)}),
        # Malformed input reads as absent.
        ({"containers": ["oops", {"name": "b", "resources": {"requests": {"cpu": "lots", "memory": "-1"}}}]}, {}),
        (None, {}),
    ],
)
def test_pod_requests_table(pod_spec: Any, expected: dict[str, Fraction]) -> None:
    assert pod_requests(pod_spec) == expected


def test_pod_slot_is_opt_in_and_overhead_can_be_left_out() -> None:
    spec = {"containers": [container("a", {"cpu": "1"})], "overhead": {"cpu": "1"}}
    assert "pods" not in pod_requests(spec)
    assert pod_requests(spec, include_pod_slot=True)["pods"] == 1
    assert pod_requests(spec, include_overhead=False) == {"cpu": F(1)}


def test_container_requests_prefers_requests_over_limits() -> None:
    assert container_requests(container("a", {"memory": "1Gi"}, {"memory": "2Gi"})) == {"memory": F(2**30)}


def test_scale_and_add() -> None:
    assert add_resources(scale({"cpu": F(1, 2)}, 4), {"cpu": F(1), "memory": F(3)}) == {"cpu": F(3), "memory": F(3)}


quantity = st.one_of(
    st.integers(min_value=0, max_value=64).map(str),
    st.integers(min_value=0, max_value=64000).map(lambda n: f"{n}m"),
    st.integers(min_value=0, max_value=64).map(lambda n: f"{n}Gi"),
)
resource_names = st.sampled_from(["cpu", "memory", "nvidia.com/gpu"])
resource_list = st.dictionaries(resource_names, quantity, max_size=3)
containers = st.builds(
    lambda name, requests, limits, sidecar: container(name, requests, limits, "Always" if sidecar else None),
    st.sampled_from(["a", "b", "c"]), resource_list, resource_list, st.booleans(),
)
pod_specs = st.builds(
    lambda app, init: {"containers": app, "initContainers": init},
    st.lists(containers, max_size=3), st.lists(containers, max_size=3),
)


@settings(max_examples=200)
@given(pod_specs)
def test_property_requests_are_never_negative(pod_spec: dict[str, Any]) -> None:
    assert all(amount >= 0 for amount in pod_requests(pod_spec).values())


@settings(max_examples=200)
@given(pod_specs, containers, st.booleans())
def test_property_adding_a_container_never_decreases_requests(pod_spec: dict[str, Any], extra: dict[str, Any],
                                                              as_init: bool) -> None:
    before = pod_requests(pod_spec)
    grown = {"containers": list(pod_spec["containers"]), "initContainers": list(pod_spec["initContainers"])}
    grown["initContainers" if as_init else "containers"].append(extra)
    after = pod_requests(grown)
    assert all(after.get(name, 0) >= amount for name, amount in before.items())


@settings(max_examples=200)
@given(pod_specs)
def test_property_requests_cover_every_single_app_container(pod_spec: dict[str, Any]) -> None:
    total = pod_requests(pod_spec)
    for item in pod_spec["containers"]:
        assert all(total.get(name, 0) >= amount for name, amount in container_requests(item).items())


def test_accessors_tolerate_any_shape_and_read_values() -> None:
    spec: dict[str, Any] = {
        "containers": [{"name": "main", "env": [{"name": "A", "value": "1"}, {"name": "A", "value": "2"},
                                                {"name": "B"}, {"name": "C", "valueFrom": {}}]}],
        "volumes": [{"name": "data", "emptyDir": {}}, "bad"],
        "tolerations": [{"key": "k", "operator": "Exists"}, 3],
        "nodeSelector": {"zone": "a", "bad": 1},
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"x": 1}]}},
            "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "podAffinityTerm": {"topologyKey": "rack"}}]},
        },
        "schedulingGroup": {"podGroupName": "pg"},
        "workloadRef": {"name": "w", "podGroup": "g", "podGroupReplicaKey": "r1"},
    }
    main = find_container(spec, "main")
    assert main is not None and not main.is_init
    assert env_value(main.container, "A") == "2"  # the later duplicate wins
    assert env_value(main.container, "B") == ""
    assert env_value(main.container, "C") is None
    assert volume(spec, "data") == {"name": "data", "emptyDir": {}}
    assert tolerations(spec) == [{"key": "k", "operator": "Exists"}]
    assert node_selector(spec) == {"zone": "a"}
    assert required_node_selector_terms(spec) == [{"x": 1}]
    assert pod_affinity_terms(spec, "podAntiAffinity", required=False) == [{"topologyKey": "rack"}]
    assert scheduling_group_name(spec) == "pg"
    ref = workload_reference(spec)
    assert ref is not None and (ref.name, ref.pod_group, ref.replica_key) == ("w", "g", "r1")
    for junk in (None, 3, "x", []):
        assert scheduling_group_name(junk) is None
        assert workload_reference(junk) is None
        assert tolerations(junk) == []


def test_default_pod_spec_sets_only_what_the_simulator_reads() -> None:
    spec: dict[str, Any] = {"restartPolicy": "", "schedulerName": "custom", "containers": []}
    default_pod_spec(spec)
    assert spec == {"restartPolicy": "Always", "schedulerName": "custom", "containers": [],
                    "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst"}
    assert scheduler_name({}) == "default-scheduler"
    default_pod_spec(None)  # tolerated


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        ({}, {"a": "1"}, True),
        ({"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"}, True),
        ({"matchLabels": {"a": "1"}}, {"a": "2"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]}]}, {"a": "2"}, True),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {}, True),
        ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {}, False),
        ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"a": "x"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "Bogus"}]}, {"a": "x"}, False),
    ],
)
def test_label_selector_matches(selector: dict[str, Any], labels: dict[str, str], matches: bool) -> None:
    assert label_selector_matches(selector, labels) is matches
