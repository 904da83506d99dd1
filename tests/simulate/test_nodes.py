"""The topology generator formula, exactly, and Node objects from pools and from manifests."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from jobsetctl.simulate.nodes import gpu_amount, normalize_node, pool_nodes, topology_labels
from jobsetctl.simulate.scenario import NodePool, TopologyLevel

BLOCK = "topology.example.com/block"
RACK = "topology.example.com/rack"


def _labels(pool: NodePool, key: str) -> list[str]:
    return [node["metadata"]["labels"][key] for node in pool_nodes(pool)]


def test_even_pool_of_the_contract_example() -> None:
    pool = NodePool("gpu", 16, {"nvidia.com/gpu": "8"}, {}, (), (TopologyLevel(BLOCK, 2), TopologyLevel(RACK, 4)))
    nodes = pool_nodes(pool)
    assert [n["metadata"]["name"] for n in nodes] == [f"gpu-{i}" for i in range(16)]
    assert _labels(pool, BLOCK) == ["block-0"] * 8 + ["block-1"] * 8
    assert _labels(pool, RACK) == [f"rack-{i // 2}" for i in range(16)]
    assert nodes[10]["metadata"]["labels"] == {BLOCK: "block-1", RACK: "rack-5", "kubernetes.io/hostname": "gpu-10"}


def test_uneven_counts_follow_floor_of_i_times_domains_over_count() -> None:
    pool = NodePool("n", 5, {}, {}, (), (TopologyLevel(BLOCK, 2), TopologyLevel(RACK, 2)))
    # D1 = 2: floor(i*2/5) = 0 0 0 1 1; D2 = 4: floor(i*4/5) = 0 0 1 2 3
    assert _labels(pool, BLOCK) == ["block-0", "block-0", "block-0", "block-1", "block-1"]
    assert _labels(pool, RACK) == ["rack-0", "rack-0", "rack-1", "rack-2", "rack-3"]


def test_more_domains_than_nodes_skips_domain_numbers() -> None:
    pool = NodePool("n", 3, {}, {}, (), (TopologyLevel("zone", 2), TopologyLevel(RACK, 3)))
    # D2 = 6: floor(i*6/3) = 0 2 4; the key without a prefix is its own short name.
    assert _labels(pool, "zone") == ["zone-0", "zone-0", "zone-1"]
    assert _labels(pool, RACK) == ["rack-0", "rack-2", "rack-4"]


def test_topology_offset_is_added_at_every_level() -> None:
    first = NodePool("a", 4, {}, {}, (), (TopologyLevel(BLOCK, 1), TopologyLevel(RACK, 2)))
    second = NodePool("b", 4, {}, {}, (), (TopologyLevel(BLOCK, 1), TopologyLevel(RACK, 2)), topology_offset=2)
    assert _labels(first, RACK) == ["rack-0", "rack-0", "rack-1", "rack-1"]
    assert _labels(second, RACK) == ["rack-2", "rack-2", "rack-3", "rack-3"]
    assert _labels(second, BLOCK) == ["block-2"] * 4
    # Without the offset, two pools sharing a key share domain numbers (the same domain to a scheduler).
    third = NodePool("c", 4, {}, {}, (), (TopologyLevel(BLOCK, 1), TopologyLevel(RACK, 2)))
    assert _labels(third, RACK) == _labels(first, RACK)


def test_node_object_shape() -> None:
    pool = NodePool("gpu", 1, {"cpu": "64", "nvidia.com/gpu": 8}, {"pool": "gpu"},
                    ({"key": "gpu", "effect": "NoSchedule"},))
    (node,) = pool_nodes(pool)
    assert node == {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "gpu-0", "labels": {"pool": "gpu", "kubernetes.io/hostname": "gpu-0"}},
        "spec": {"taints": [{"key": "gpu", "effect": "NoSchedule"}]},
        "status": {
            "capacity": {"cpu": "64", "nvidia.com/gpu": "8"},
            "allocatable": {"cpu": "64", "nvidia.com/gpu": "8"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "message": "kubelet is posting ready status"}],
        },
    }


def test_real_node_manifest_keeps_labels_taints_allocatable_and_drops_live_state() -> None:
    real = {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "ip-10-0-0-1", "uid": "abc", "resourceVersion": "42", "managedFields": [{}],
                     "labels": {"node.kubernetes.io/instance-type": "p5.48xlarge"}},
        "spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}], "unschedulable": True,
                 "providerID": "aws:///x"},
        "status": {"capacity": {"cpu": "192", "nvidia.com/gpu": "8"},
                   "allocatable": {"cpu": "191500m", "nvidia.com/gpu": "8"},
                   "conditions": [{"type": "Ready", "status": "False"}], "images": [{}]},
    }
    node = normalize_node(real)
    assert node["metadata"] == {"name": "ip-10-0-0-1", "labels": {
        "node.kubernetes.io/instance-type": "p5.48xlarge", "kubernetes.io/hostname": "ip-10-0-0-1"}}
    assert node["spec"] == {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}], "unschedulable": True}
    assert node["status"]["allocatable"] == {"cpu": "191500m", "nvidia.com/gpu": "8"}
    assert node["status"]["capacity"] == {"cpu": "192", "nvidia.com/gpu": "8"}
    assert node["status"]["conditions"][0]["status"] == "True"
    # Only capacity given: allocatable is the same.
    assert normalize_node({"kind": "Node", "metadata": {"name": "x"}, "status": {"capacity": {"cpu": "4"}}})[
        "status"]["allocatable"] == {"cpu": "4"}


def test_gpu_amount_counts_every_vendor() -> None:
    assert gpu_amount({"nvidia.com/gpu": "8", "amd.com/gpu": 2, "cpu": "64", "bad/gpu": "x"}) == Fraction(10)


@given(
    count=st.integers(min_value=1, max_value=200),
    levels=st.lists(st.integers(min_value=1, max_value=6), min_size=1, max_size=3),
    offset=st.integers(min_value=0, max_value=5),
)
def test_generator_properties(count: int, levels: list[int], offset: int) -> None:
    topology = [TopologyLevel(f"l{depth}", n) for depth, n in enumerate(levels)]
    labels = [topology_labels(i, count, topology, offset) for i in range(count)]
    domains = 1
    for depth, n in enumerate(levels):
        domains *= n
        key = f"l{depth}"
        indexes = [int(node[key].rsplit("-", 1)[1]) - offset for node in labels]
        # Every node is in a domain of its level, in order (a domain is a run of consecutive nodes) ...
        assert all(0 <= j < domains for j in indexes)
        assert indexes == sorted(indexes)
        # ... domains are as even as possible ...
        sizes = Counter(indexes).values()
        assert max(sizes) - min(sizes) <= 1 or domains > count
        # ... and each one lies inside one domain of the level above (the hierarchy nests).
        if depth:
            parent = f"l{depth - 1}"
            owners: dict[str, set[str]] = {}
            for node in labels:
                owners.setdefault(node[key], set()).add(node[parent])
            assert all(len(parents) == 1 for parents in owners.values())
