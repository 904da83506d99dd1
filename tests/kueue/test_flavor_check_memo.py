"""The flavor assigner's remembered flavor checks (``flavors._CHECK_MEMO``) follow what the checks read:
a ClusterQueue or Topology replaced by a new version is checked afresh for the same podset object."""

from __future__ import annotations

import copy
from typing import Any

from jobsetctl.kueue.engine.assignment import FIT, NO_FIT
from jobsetctl.kueue.engine.flavors import FlavorAssigner
from jobsetctl.kueue.engine.workload import WorkloadInfo
from tests.kueue.upstream.harness import Harness

K = "kueue.x-k8s.io/v1beta2"
BLOCK, RACK, HOST = "cloud.com/block", "cloud.com/rack", "kubernetes.io/hostname"


def _topology(*levels: str) -> dict[str, Any]:
    return {"apiVersion": K, "kind": "Topology", "metadata": {"name": "topo"},
            "spec": {"levels": [{"nodeLabel": level} for level in levels]}}


def _cluster_queue(flavor: str) -> dict[str, Any]:
    return {"apiVersion": K, "kind": "ClusterQueue", "metadata": {"name": "cq"},
            "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                {"name": flavor, "resources": [{"name": "cpu", "nominalQuota": "10"}]}]}]}}


def _harness() -> Harness:
    h = Harness()
    h.add(_topology(BLOCK, RACK, HOST))
    h.add({"apiVersion": K, "kind": "ResourceFlavor", "metadata": {"name": "tas"},
           "spec": {"nodeLabels": {"pool": "tas"}, "topologyName": "topo"}})
    h.add({"apiVersion": K, "kind": "ResourceFlavor", "metadata": {"name": "plain"}, "spec": {}})
    h.add({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {
        "pool": "tas", BLOCK: "b1", RACK: "r1", HOST: "n1"}},
        "status": {"allocatable": {"cpu": "8", "pods": "110"}, "conditions": [{"type": "Ready", "status": "True"}]}})
    h.add(_cluster_queue("tas"))
    return h


def _info() -> WorkloadInfo:
    return WorkloadInfo({"apiVersion": K, "kind": "Workload", "metadata": {"name": "w", "namespace": ""},
                         "spec": {"podSets": [{"name": "main", "count": 1, "topologyRequest": {"required": BLOCK},
                                               "template": {"spec": {"containers": [{"name": "c", "resources": {
                                                   "requests": {"cpu": "1"}}}]}}}]}, "status": {}})


def _assign(h: Harness, info: WorkloadInfo) -> tuple[int, str]:
    engine = h.engine
    cq = engine.cache.cluster_queues["cq"]
    assignment = FlavorAssigner(info, cq, engine.cache.flavors, lambda *_: (0, 0),
                                tas=engine.tas_assigner(cq)).assign()
    return assignment.representative_mode(), assignment.message()


def test_a_topology_without_the_requested_level_is_checked_afresh() -> None:
    h = _harness()
    info = _info()
    assert _assign(h, info) == (FIT, "")
    assert _assign(h, info) == (FIT, "")
    h.add(_topology(RACK, HOST))  # the block level is gone: a new TAS flavor cache for the ClusterQueue
    assert _assign(h, info) == (NO_FIT, 'couldn\'t assign flavors to pod set main: '
                                        'Flavor "tas" does not contain the requested level')


def test_a_cluster_queue_moved_to_a_flavor_without_topology_is_checked_afresh() -> None:
    h = _harness()
    info = _info()
    assert _assign(h, info) == (FIT, "")
    h.add(_cluster_queue("plain"))
    assert _assign(h, info) == (NO_FIT, 'couldn\'t assign flavors to pod set main: '
                                        'Flavor "plain" does not support TopologyAwareScheduling')
    h.add(copy.deepcopy(_cluster_queue("tas")))
    assert _assign(h, info) == (FIT, "")
