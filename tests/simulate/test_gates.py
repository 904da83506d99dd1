"""Gates simulate turns on for the kinds and fields the inputs use, never over an explicit setting."""

from __future__ import annotations

from typing import Any

import pytest

from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import KubeVersion
from jobsetctl.simulate.gates import needed_gates, turned_on

POD_TEMPLATE_WITH_GROUP = {"spec": {"schedulingGroup": {"podGroupName": "pg"}, "containers": [{"name": "c"}]}}

CASES: list[tuple[str, dict[str, Any], str, list[str]]] = [
    ("PodGroup object", {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "spec": {}}, "1.36",
     ["GenericWorkload", "GangScheduling"]),
    ("Workload object", {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload", "spec": {}}, "1.37",
     ["GenericWorkload", "GangScheduling"]),
    ("coscheduling PodGroup is not the in-tree API", {"apiVersion": "scheduling.x-k8s.io/v1alpha1",
                                                        "kind": "PodGroup", "spec": {}}, "1.37", []),
    ("pods of a JobSet that reference a group",
     {"kind": "JobSet", "spec": {"replicatedJobs": [{"template": {"spec": {"template": POD_TEMPLATE_WITH_GROUP}}}]}},
     "1.36", ["GenericWorkload", "GangScheduling"]),
    ("topology constraint",
     {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
      "spec": {"schedulingConstraints": {"topology": [{"key": "rack"}]}}}, "1.36",
     ["GenericWorkload", "GangScheduling", "TopologyAwareWorkloadScheduling"]),
    ("disruptionMode and priority on 1.36",
     {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
      "spec": {"disruptionMode": "PodGroup", "priorityClassName": "high"}}, "1.36",
     ["GenericWorkload", "GangScheduling", "WorkloadAwarePreemption"]),
    ("disruptionMode on 1.37 is part of GenericWorkload",
     {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "spec": {"disruptionMode": {"all": {}}}},
     "1.37", ["GenericWorkload", "GangScheduling"]),
    ("a pod's priorityClassName is not a PodGroup priority",
     {"kind": "Job", "spec": {"template": {"spec": {"priorityClassName": "high", "containers": []}}}}, "1.36", []),
    ("CompositePodGroup", {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup", "spec": {}},
     "1.37", ["GenericWorkload", "GangScheduling", "CompositePodGroup"]),
    ("Job spec.scheduling", {"apiVersion": "batch/v1", "kind": "Job",
                             "spec": {"parallelism": 2, "scheduling": {"schedulingPolicy": {"gang": {}}},
                                      "template": {"spec": {"containers": []}}}}, "1.37", ["WorkloadWithJob"]),
    ("Job spec.scheduling inside a JobSet",
     {"kind": "JobSet", "spec": {"replicatedJobs": [{"template": {"spec": {
         "scheduling": {"schedulingPolicy": {"basic": {}}}, "template": {"spec": {"containers": []}}}}}]}},
     "1.37", ["WorkloadWithJob"]),
    ("plain Job", {"apiVersion": "batch/v1", "kind": "Job", "spec": {"template": {"spec": {"containers": []}}}},
     "1.37", []),
]


@pytest.mark.parametrize(("obj", "version", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_needed_gates(obj: dict[str, Any], version: str, expected: list[str]) -> None:
    assert needed_gates([obj], KubeVersion(version)) == expected


def test_explicit_settings_win_and_only_changes_are_reported() -> None:
    version = KubeVersion.V1_36
    explicit = parse_feature_gates("GangScheduling=false,TopologyAwareWorkloadScheduling=true", version)
    effective, changed = turned_on(explicit, ["GenericWorkload", "GangScheduling", "TopologyAwareWorkloadScheduling"])
    assert changed == ["GenericWorkload"]
    assert (effective.enabled("GenericWorkload"), effective.enabled("GangScheduling"),
            effective.enabled("TopologyAwareWorkloadScheduling")) == (True, False, True)


def test_a_gate_the_release_lacks_is_not_turned_on() -> None:
    effective, changed = turned_on(parse_feature_gates(None, KubeVersion.V1_35), ["CompositePodGroup"])
    assert changed == [] and "CompositePodGroup" not in effective.explicit
