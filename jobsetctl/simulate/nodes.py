"""Nodes of a simulated cluster: generated from Scenario pools, or read from Node manifests.

Topology generator (a contract, tested exactly). A pool of ``count`` nodes named ``<pool>-<i>`` with
topology levels ``[(key_1, count_1), ..., (key_L, count_L)]``, coarse to fine:

* level ``l`` has ``D_l = count_1 × … × count_l`` domains;
* node ``i`` (0-based) is in domain ``j = floor(i × D_l / count)`` of level ``l`` (nodes are spread evenly,
  and consecutive nodes share the finest domain, so a rack is a run of consecutive nodes);
* its label is ``key_l: <key_l after its last '/'>-<j + topologyOffset>`` (``topology.example.com/rack``
  → ``rack-5``);
* every node also gets ``kubernetes.io/hostname: <node name>``.

Pools that share a key restart their domain numbers at 0 (two pools of one rack each are both in
``rack-0``, i.e. the *same* domain to a scheduler) unless a pool sets ``topologyOffset``. This matches
what the scheduler reads (scheduling.md §1.7: one placement per distinct label value).

Nodes are ``v1`` Node objects: ``status.capacity`` and ``status.allocatable`` (= capacity), condition
``Ready=True``, labels, ``spec.taints``. Node manifests given as input (``--nodes FILE``, e.g. the output of
``kubectl get nodes -o yaml``, or Node objects among the submitted manifests) keep their labels, taints,
``spec.unschedulable``, capacity and allocatable; server-set metadata and live status are dropped, and
they start Ready.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from jobsetctl.kube.jsontree import copy_tree
from jobsetctl.kube.quantity import QuantityError, parse_quantity
from jobsetctl.simulate import access
from jobsetctl.simulate.scenario import NodePool, TopologyLevel

HOSTNAME_LABEL = "kubernetes.io/hostname"
#: Extended resources counted as GPUs in the summary (GPU-hours used and idle).
GPU_RESOURCE_SUFFIX = "/gpu"


def domain_index(node_index: int, node_count: int, domains: int) -> int:
    """``floor(i × D / count)``: the domain of node ``i`` among ``domains`` at one level."""
    return node_index * domains // node_count


def topology_labels(
    node_index: int, node_count: int, levels: Iterable[TopologyLevel], offset: int = 0
) -> dict[str, str]:
    """The topology labels of node ``node_index`` of a pool (see the module docstring)."""
    labels: dict[str, str] = {}
    domains = 1
    for level in levels:
        domains *= level.count
        short = level.key.rsplit("/", 1)[-1]
        labels[level.key] = f"{short}-{domain_index(node_index, node_count, domains) + offset}"
    return labels


def node_object(
    name: str,
    capacity: dict[str, Any],
    labels: dict[str, str],
    taints: Iterable[dict[str, Any]] = (),
    *,
    allocatable: dict[str, Any] | None = None,
    unschedulable: bool = False,
) -> dict[str, Any]:
    """A Ready v1 Node. Quantities are written as strings, as the API server serialises them."""
    spec: dict[str, Any] = {}
    taint_list = [dict(t) for t in taints]
    if taint_list:
        spec["taints"] = taint_list
    if unschedulable:
        spec["unschedulable"] = True
    capacity_text = {k: str(v) for k, v in capacity.items()}
    allocatable_text = {k: str(v) for k, v in (allocatable if allocatable is not None else capacity).items()}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {**labels, HOSTNAME_LABEL: name}},
        "spec": spec,
        "status": {
            "capacity": capacity_text,
            "allocatable": allocatable_text,
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status"}
            ],
        },
    }


def pool_node_names(pool: NodePool) -> list[str]:
    """The names of one pool's nodes, in index order (what the input checks need, without the objects)."""
    return [f"{pool.name}-{index}" for index in range(pool.count)]


def pool_nodes(pool: NodePool) -> list[dict[str, Any]]:
    """The nodes of one pool, in index order."""
    nodes: list[dict[str, Any]] = []
    for index, name in enumerate(pool_node_names(pool)):
        labels = dict(pool.labels)
        labels.update(topology_labels(index, pool.count, pool.topology, pool.topology_offset))
        nodes.append(node_object(name, dict(pool.capacity), labels, pool.taints))
    return nodes


def normalize_node(obj: dict[str, Any]) -> dict[str, Any]:
    """A Node manifest as the simulated cluster starts it: identity, labels, annotations, taints,
    unschedulable, capacity and allocatable (capacity when missing, and the reverse); Ready."""
    metadata = access.metadata(obj)
    spec = access.spec(obj)
    status = access.status(obj)
    name = str(metadata.get("name", ""))
    labels = {str(k): str(v) for k, v in (metadata.get("labels") or {}).items()} if isinstance(
        metadata.get("labels"), dict) else {}
    capacity = status.get("capacity") if isinstance(status.get("capacity"), dict) else None
    allocatable = status.get("allocatable") if isinstance(status.get("allocatable"), dict) else None
    capacity = dict(capacity or allocatable or {})
    allocatable = dict(allocatable or capacity)
    taints = [copy_tree(t) for t in spec.get("taints") or [] if isinstance(t, dict)]
    node = node_object(name, capacity, labels, taints, allocatable=allocatable,
                       unschedulable=bool(spec.get("unschedulable")))
    annotations = metadata.get("annotations")
    if isinstance(annotations, dict) and annotations:
        node["metadata"]["annotations"] = {str(k): str(v) for k, v in annotations.items()}
    return node


def is_node(obj: dict[str, Any]) -> bool:
    return obj.get("kind") == "Node" and obj.get("apiVersion") == "v1"


@dataclass(frozen=True, slots=True)
class NodeInfo:
    """What the reports need of a node: its pool (trace process) and its allocatable GPUs."""

    name: str
    pool: str
    gpus: Fraction


def gpu_amount(resources: Any) -> Fraction:
    """The GPUs in a ResourceList: every ``<vendor>/gpu`` resource (nvidia.com/gpu, amd.com/gpu ...)."""
    total = Fraction(0)
    if not isinstance(resources, dict):
        return total
    for name, amount in resources.items():
        if not isinstance(name, str) or not name.endswith(GPU_RESOURCE_SUFFIX):
            continue
        if isinstance(amount, Fraction):  # already parsed (pod_requests)
            total += amount
            continue
        try:
            total += parse_quantity(amount)
        except QuantityError:
            continue
    return total


def node_info(node: dict[str, Any], pool: str) -> NodeInfo:
    status = access.status(node)
    return NodeInfo(str(access.metadata(node).get("name", "")), pool, gpu_amount(status.get("allocatable")))
