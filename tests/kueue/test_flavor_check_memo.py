"""The flavor assigner's remembered flavor checks (``flavors._CHECK_MEMO``, per podset object, and
``flavors._CHECK_BY_CONTENT``, per podset content) follow what the checks read: a ClusterQueue or Topology
replaced by a new version is checked afresh for the same podset object, and a podset differing in a part the
check reads is checked afresh."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from jobsetctl.kueue.engine import flavors
from jobsetctl.kueue.engine.assignment import FIT, NO_FIT
from jobsetctl.kueue.engine.flavors import FlavorAssigner
from jobsetctl.kueue.engine.objects import ResourceGroup
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


# ---- the answers remembered per podset content (``flavors._CHECK_BY_CONTENT``) ---------------------------

def _tainted_harness() -> Harness:
    """The harness with the TAS flavor tainted (``k=v:NoSchedule``) and labelled ``pool: tas``."""
    h = _harness()
    h.add({"apiVersion": K, "kind": "ResourceFlavor", "metadata": {"name": "tas"},
           "spec": {"nodeLabels": {"pool": "tas"}, "topologyName": "topo",
                    "nodeTaints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}})
    return h


def _podset_info(name: str, **changes: Any) -> WorkloadInfo:
    """A workload whose one podset asks for the block level and tolerates the taint; ``changes`` replace
    the podset's ``topologyRequest`` or its pod spec's ``tolerations``, ``nodeSelector``, ``affinity``."""
    pod: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                           "tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}]}
    podset: dict[str, Any] = {"name": "main", "count": 1, "topologyRequest": {"required": BLOCK},
                              "template": {"spec": pod}}
    for key, value in changes.items():
        if key == "topologyRequest":
            podset[key] = value
        elif value is None:
            pod.pop(key, None)
        else:
            pod[key] = value
    return WorkloadInfo({"apiVersion": K, "kind": "Workload", "metadata": {"name": name, "namespace": ""},
                         "spec": {"podSets": [podset]}, "status": {}})


_NOT_AFFINE = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["other"]}]}]}}}


@pytest.mark.parametrize(("changes", "message"), [
    ({"topologyRequest": {"required": "cloud.com/missing"}}, 'Flavor "tas" does not contain the requested level'),
    ({"tolerations": None}, "untolerated taint {k v NoSchedule <nil>} in flavor tas"),
    ({"nodeSelector": {"pool": "other"}}, "flavor tas doesn't match node affinity"),
    ({"affinity": _NOT_AFFINE}, "flavor tas doesn't match node affinity"),
], ids=["topologyRequest", "tolerations", "nodeSelector", "affinity"])
def test_a_podset_differing_in_a_part_the_check_reads_is_checked_afresh(changes: dict[str, Any], message: str) -> None:
    h = _tainted_harness()
    assert _assign(h, _podset_info("first")) == (FIT, "")
    assert _assign(h, _podset_info("second", **changes)) == (
        NO_FIT, f"couldn't assign flavors to pod set main: {message}")


def test_podsets_alike_in_content_share_one_remembered_check() -> None:
    h = _tainted_harness()
    assert _assign(h, _podset_info("first")) == (FIT, "")
    remembered = len(flavors._CHECK_BY_CONTENT)
    # Another workload of the class: other objects, the same content (the pod's requests are not read).
    other = _podset_info("second")
    other.obj["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
    assert _assign(h, other) == (FIT, "")
    assert len(flavors._CHECK_BY_CONTENT) == remembered


# ---- the key of ``flavors._CHECK_MEMO``: each part on its own ---------------------------------------------

def _implied_info() -> WorkloadInfo:
    """A podset without a topologyRequest: on a TAS-only ClusterQueue TAS is implied and the TAS flavor fits;
    otherwise the TAS flavor "supports only TopologyAwareScheduling"."""
    return WorkloadInfo({"apiVersion": K, "kind": "Workload", "metadata": {"name": "w", "namespace": ""},
                         "spec": {"podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": [
                             {"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}]}, "status": {}})


def _check(h: Harness, info: WorkloadInfo, flavor_name: str = "tas", group: ResourceGroup | None = None) -> str | None:
    engine = h.engine
    cq = engine.cache.cluster_queues["cq"]
    assigner = FlavorAssigner(info, cq, engine.cache.flavors, lambda *_: (0, 0), tas=engine.tas_assigner(cq))
    return assigner._check_flavor(flavor_name, info.spec_podsets(), group or cq.spec.resource_groups[0])


def test_a_new_cluster_queue_spec_with_the_same_group_is_checked_afresh() -> None:
    """Only the spec changes (a second resource group with a plain flavor, the first group the same object):
    the ClusterQueue is no longer TAS-only, which the TAS check reads."""
    h = _harness()
    info = _implied_info()
    assert _check(h, info) is None
    cq = h.engine.cache.cluster_queues["cq"]
    other = ResourceGroup(("memory",), ("plain",))
    cq.spec = dataclasses.replace(cq.spec, resource_groups=(cq.spec.resource_groups[0], other))
    assert _check(h, info) == 'Flavor "tas" supports only TopologyAwareScheduling'


def test_one_flavor_object_under_two_names_is_checked_per_name() -> None:
    """The same podset, group and flavor object under another name: the message names the flavor asked for."""
    h = _tainted_harness()
    flavors_ = h.engine.cache.flavors
    flavors_["alias"] = flavors_["tas"]
    info = _podset_info("w", tolerations=None, topologyRequest=None)
    info.obj["spec"]["podSets"][0].pop("topologyRequest", None)
    assert _check(h, info) == "untolerated taint {k v NoSchedule <nil>} in flavor tas"
    assert _check(h, info, "alias") == "untolerated taint {k v NoSchedule <nil>} in flavor alias"


def test_a_new_flavor_object_is_checked_afresh() -> None:
    """The plain flavor replaced by a version with a taint, the same podset object: the new flavor is read."""
    h = _harness()
    h.add(_cluster_queue("plain"))
    info = _implied_info()
    assert _check(h, info, "plain") is None
    cq = h.engine.cache.cluster_queues["cq"]
    tas_flavors = cq.tas_flavors
    h.add({"apiVersion": K, "kind": "ResourceFlavor", "metadata": {"name": "plain"},
           "spec": {"nodeTaints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}})
    # The TAS flavor caches are made anew too; the plain flavor is none of them: the old mapping is kept, so that
    # only the flavor object differs.
    cq.tas_flavors = tas_flavors
    assert _check(h, info, "plain") == "untolerated taint {k v NoSchedule <nil>} in flavor plain"


def test_another_resource_group_is_checked_afresh() -> None:
    """A podset asking for TAS against a flavor without a topology: refused only where the group covers one of
    the pod's resources."""
    h = _harness()
    h.add(_cluster_queue("plain"))
    info = _info()
    assert _check(h, info, "plain") == 'Flavor "plain" does not support TopologyAwareScheduling'
    assert _check(h, info, "plain", ResourceGroup(("memory",), ("plain",))) is None
