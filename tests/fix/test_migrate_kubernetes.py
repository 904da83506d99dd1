"""``migrate --to kubernetes-1.36|kubernetes-1.37``: the ``scheduling.k8s.io`` Workload API across releases.

The API server converts none of this (kubernetes#140184): there is no upstream conversion, so no conversion
test to translate. The table below is written from scheduling.md §1.1-§1.2 (one entry per field that moves),
and the oracle is the JSON Schemas of ``kubernetes-validate`` per release (the authority for core and
``scheduling.k8s.io`` field names, strict: an unknown field fails): every input object must be valid for its
source release and every output object for the target release, besides the expected output itself.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from jobsetctl.cli.app import run

S = "scheduling.k8s.io"
CONTAINERS = [{"name": "c", "image": "busybox"}]


def workload(version: str, name: str, spec: dict[str, Any], namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name} | ({"namespace": namespace} if namespace else {})
    return {"apiVersion": f"{S}/{version}", "kind": "Workload", "metadata": meta, "spec": spec}


def podgroup(version: str, name: str, spec: dict[str, Any], namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name} | ({"namespace": namespace} if namespace else {})
    return {"apiVersion": f"{S}/{version}", "kind": "PodGroup", "metadata": meta, "spec": spec}


def pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {**spec, "containers": CONTAINERS}}


def job(name: str, **pod_spec: Any) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"completions": 2, "parallelism": 2, "completionMode": "Indexed",
                     "template": {"spec": {**pod_spec, "restartPolicy": "Never", "containers": CONTAINERS}}}}


GANG = {"gang": {"minCount": 2}}
BASIC: dict[str, Any] = {"basic": {}}

# (case, target, source release, input objects, expected output objects)
ENTRIES: list[tuple[str, str, str, list[dict[str, Any]], list[dict[str, Any]]]] = [
    ("§1.2 v1alpha1 podGroups[].policy basic -> v1alpha2 podGroupTemplates[].schedulingPolicy, PodGroup per gang, "
     "pod workloadRef -> schedulingGroup",
     "kubernetes-1.36", "1.35",
     [workload("v1alpha1", "w", {"podGroups": [{"name": "g", "policy": BASIC}]}),
      pod("p", workloadRef={"name": "w", "podGroup": "g"})],
     [workload("v1alpha2", "w", {"podGroupTemplates": [{"name": "g", "schedulingPolicy": BASIC}]}),
      podgroup("v1alpha2", "w-g", {"podGroupTemplateRef": {"workload": {"workloadName": "w", "podGroupTemplateName": "g"}},
                                   "schedulingPolicy": BASIC}),
      pod("p", schedulingGroup={"podGroupName": "w-g"})]),
    ("§1.2 v1alpha1 gang minCount and podGroupReplicaKey: one PodGroup per (workload, group, replica key)",
     "kubernetes-1.36", "1.35",
     [workload("v1alpha1", "w", {"podGroups": [{"name": "g", "policy": GANG}]}, "ml"),
      {**job("a", workloadRef={"name": "w", "podGroup": "g", "podGroupReplicaKey": "r0"}), "metadata": {"name": "a", "namespace": "ml"}},
      {**job("b", workloadRef={"name": "w", "podGroup": "g", "podGroupReplicaKey": "r1"}), "metadata": {"name": "b", "namespace": "ml"}}],
     [workload("v1alpha2", "w", {"podGroupTemplates": [{"name": "g", "schedulingPolicy": GANG}]}, "ml"),
      podgroup("v1alpha2", "w-g-r0", {"podGroupTemplateRef": {"workload": {"workloadName": "w", "podGroupTemplateName": "g"}},
                                      "schedulingPolicy": GANG}, "ml"),
      podgroup("v1alpha2", "w-g-r1", {"podGroupTemplateRef": {"workload": {"workloadName": "w", "podGroupTemplateName": "g"}},
                                      "schedulingPolicy": GANG}, "ml"),
      {**job("a", schedulingGroup={"podGroupName": "w-g-r0"}), "metadata": {"name": "a", "namespace": "ml"}},
      {**job("b", schedulingGroup={"podGroupName": "w-g-r1"}), "metadata": {"name": "b", "namespace": "ml"}}]),
    ("§1.2 v1alpha1 controllerRef kept; a pod group no pod uses gets no PodGroup",
     "kubernetes-1.36", "1.35",
     [workload("v1alpha1", "w", {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "j"},
                                 "podGroups": [{"name": "g", "policy": GANG}, {"name": "h", "policy": BASIC}]}),
      job("j", workloadRef={"name": "w", "podGroup": "g"})],
     [workload("v1alpha2", "w", {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "j"},
                                 "podGroupTemplates": [{"name": "g", "schedulingPolicy": GANG},
                                                       {"name": "h", "schedulingPolicy": BASIC}]}),
      podgroup("v1alpha2", "w-g", {"podGroupTemplateRef": {"workload": {"workloadName": "w", "podGroupTemplateName": "g"}},
                                   "schedulingPolicy": GANG}),
      job("j", schedulingGroup={"podGroupName": "w-g"})]),
    ("§1.2 v1alpha1 -> 1.37 v1beta1: PodGroup.spec.workloadRef {workloadName, templateName}",
     "kubernetes-1.37", "1.35",
     [workload("v1alpha1", "w", {"podGroups": [{"name": "g", "policy": GANG}]}),
      pod("p", workloadRef={"name": "w", "podGroup": "g"})],
     [workload("v1beta1", "w", {"podGroupTemplates": [{"name": "g", "schedulingPolicy": GANG}]}),
      podgroup("v1beta1", "w-g", {"workloadRef": {"workloadName": "w", "templateName": "g"}, "schedulingPolicy": GANG}),
      pod("p", schedulingGroup={"podGroupName": "w-g"})]),
    ("§1.2 v1alpha2 disruptionMode Pod/PodGroup -> v1beta1 union {single: {}}/{all: {}}; podGroupTemplateRef -> workloadRef",
     "kubernetes-1.37", "1.36",
     [workload("v1alpha2", "w", {"podGroupTemplates": [{"name": "g", "schedulingPolicy": GANG, "disruptionMode": "PodGroup"},
                                                       {"name": "h", "schedulingPolicy": BASIC, "disruptionMode": "Pod"}]}),
      podgroup("v1alpha2", "w-g", {"podGroupTemplateRef": {"workload": {"workloadName": "w", "podGroupTemplateName": "g"}},
                                   "schedulingPolicy": GANG, "disruptionMode": "PodGroup"}),
      pod("p", schedulingGroup={"podGroupName": "w-g"})],
     [workload("v1beta1", "w", {"podGroupTemplates": [{"name": "g", "schedulingPolicy": GANG, "disruptionMode": {"all": {}}},
                                                      {"name": "h", "schedulingPolicy": BASIC, "disruptionMode": {"single": {}}}]}),
      podgroup("v1beta1", "w-g", {"workloadRef": {"workloadName": "w", "templateName": "g"},
                                  "schedulingPolicy": GANG, "disruptionMode": {"all": {}}}),
      pod("p", schedulingGroup={"podGroupName": "w-g"})]),
    ("§1.2 v1alpha2 standalone PodGroup (no template reference), schedulingConstraints.topology and priorityClassName carried",
     "kubernetes-1.37", "1.36",
     [podgroup("v1alpha2", "solo", {"schedulingPolicy": GANG, "priorityClassName": "high",
                                    "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]}})],
     [podgroup("v1beta1", "solo", {"schedulingPolicy": GANG, "priorityClassName": "high",
                                   "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]}})]),
    ("§1.1 1.37 v1alpha3 Workload and PodGroup (the alpha copy of the same shapes) -> v1beta1",
     "kubernetes-1.37", "1.37",
     [workload("v1alpha3", "w", {"podGroupTemplates": [{"name": "g", "schedulingPolicy": GANG}]}),
      podgroup("v1alpha3", "w-g", {"workloadRef": {"workloadName": "w", "templateName": "g"}, "schedulingPolicy": GANG})],
     [workload("v1beta1", "w", {"podGroupTemplates": [{"name": "g", "schedulingPolicy": GANG}]}),
      podgroup("v1beta1", "w-g", {"workloadRef": {"workloadName": "w", "templateName": "g"}, "schedulingPolicy": GANG})]),
    ("§1.2 1.37 CompositePodGroup has no beta: it stays v1alpha3",
     "kubernetes-1.37", "1.37",
     [{"apiVersion": f"{S}/v1alpha3", "kind": "CompositePodGroup", "metadata": {"name": "c"},
       "spec": {"workloadRef": {"workloadName": "w", "templateName": "t"}, "schedulingPolicy": {"gang": {"minGroupCount": 2}}}}],
     [{"apiVersion": f"{S}/v1alpha3", "kind": "CompositePodGroup", "metadata": {"name": "c"},
       "spec": {"workloadRef": {"workloadName": "w", "templateName": "t"}, "schedulingPolicy": {"gang": {"minGroupCount": 2}}}}]),
    ("§1.2 objects already at the target are left alone",
     "kubernetes-1.37", "1.37",
     [workload("v1beta1", "w", {"podGroupTemplates": [{"name": "g", "schedulingPolicy": GANG}]}),
      pod("p", schedulingGroup={"podGroupName": "w-g"})],
     [workload("v1beta1", "w", {"podGroupTemplates": [{"name": "g", "schedulingPolicy": GANG}]}),
      pod("p", schedulingGroup={"podGroupName": "w-g"})]),
]


def _release(version: str) -> str:
    return f"{version}.0"


def _migrate(path: Path, target: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = run(["migrate", "--to", target, "--write", str(path)])
    return status, err.getvalue()


@pytest.mark.parametrize(("case", "target", "source", "inputs", "expected"), ENTRIES, ids=[e[0] for e in ENTRIES])
def test_workload_api_table(tmp_path: Path, case: str, target: str, source: str,
                            inputs: list[dict[str, Any]], expected: list[dict[str, Any]]) -> None:
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump_all(inputs, sort_keys=False))
    status, log = _migrate(path, target)
    assert status == 0 and "not migrated" not in log, log
    assert list(yaml.safe_load_all(path.read_text())) == expected


@pytest.mark.parametrize(("case", "target", "source", "inputs", "expected"), ENTRIES, ids=[e[0] for e in ENTRIES])
def test_kubernetes_validate_accepts_both_sides(case: str, target: str, source: str,
                                                inputs: list[dict[str, Any]], expected: list[dict[str, Any]]) -> None:
    """The oracle: kubernetes-validate's strict JSON Schemas of the source release accept every input object
    and those of the target release every output object."""
    for obj in inputs:
        kubernetes_validate.validate(obj, _release(source), strict=True)
    for obj in expected:
        kubernetes_validate.validate(obj, _release(target.removeprefix("kubernetes-")), strict=True)


def test_the_inputs_are_invalid_for_the_target() -> None:
    """The migration is needed: 1.36 serves no v1alpha1 Workload, and its Pod schema has no workloadRef."""
    [first] = [e for e in ENTRIES if e[2] == "1.35"][:1]
    workload_v1alpha1, pod_with_ref = first[3]
    with pytest.raises(kubernetes_validate.SchemaNotFoundError):
        kubernetes_validate.validate(workload_v1alpha1, "1.36.0", strict=True)
    with pytest.raises(kubernetes_validate.ValidationError, match="'workloadRef' was unexpected"):
        kubernetes_validate.validate(pod_with_ref, "1.36.0", strict=True)


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ([pod("p", workloadRef={"name": "absent", "podGroup": "g"})],
         "spec.workloadRef names Workload 'absent', which is not among the inputs"),
        ([workload("v1alpha1", "w", {"podGroups": [{"name": "g", "policy": GANG}]}),
          pod("p", workloadRef={"name": "w", "podGroup": "other"})],
         "pods name pod group 'other', which Workload 'w' does not have"),
    ],
)
def test_what_cannot_be_converted_is_reported(tmp_path: Path, inputs: list[dict[str, Any]], message: str) -> None:
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump_all(inputs, sort_keys=False))
    status, log = _migrate(path, "kubernetes-1.36")
    assert status == 0 and f"not migrated [migrate-kubernetes] {message}" in log, log
