"""``vworkload.kb.io`` (jobsetctl/kueue/webhook_workload.py), translated from pkg/webhooks/workload_webhook_test.go
``TestValidateWorkload`` and ``TestValidateWorkloadUpdate`` (case names as upstream's)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.kueue.test_webhooks import ctx, messages

PS = "spec.podSets[0].template.spec"
RESERVED = [{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "m",
             "lastTransitionTime": "2026-01-01T00:00:00Z"}]
POD_KEY = "the key is reserved for internal kueue use"
NEG = "must be greater than or equal to 0"


def wl(*pod_sets: dict[str, Any], status: dict[str, Any] | None = None, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
                           "metadata": {"name": "wl", "namespace": "ns"},
                           "spec": {"podSets": list(pod_sets) or [pod_set("main")]}}
    if annotations:
        out["metadata"]["annotations"] = annotations
    if status is not None:
        out["status"] = status
    return out


def pod_set(name: str, count: int = 1, containers: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": containers or [{"name": "c", "image": "i"}]}
    spec.update(extra.pop("spec", {}))
    out: dict[str, Any] = {"name": name, "count": count, "template": {"spec": spec}}
    out.update(extra)
    return out


def container(requests: dict[str, str] | None = None, limits: dict[str, str] | None = None) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    return {"name": "c", "image": "i", "resources": resources}


def admission(*assignments: dict[str, Any]) -> dict[str, Any]:
    return {"conditions": RESERVED, "admission": {"clusterQueue": "cluster-queue", "podSetAssignments": list(assignments)}}


@pytest.mark.parametrize(("case", "workload", "gates", "want"), [
    ("valid", wl(pod_set("driver"), pod_set("workers", 100)), {}, []),
    ("quota reserved without an admission is refused, not a panic", wl(status={"conditions": RESERVED}), {},
     ["status.admission: Required value: must be set while the QuotaReserved condition is true"]),
    ("should have a valid podSet name in status assignment", wl(status=admission({"name": "invalid", "count": 1})), {},
     ['status.admission.podSetAssignments[0].name: Not found: "invalid"']),
    ("assignment usage should be divisible by count", wl(
        pod_set("main", 3, [container({"cpu": "1"})]),
        status=admission({"name": "main", "flavors": {"cpu": "flv"}, "resourceUsage": {"cpu": "1"}, "count": 3})), {},
     ['status.admission.podSetAssignments[0].resourceUsage[cpu]: Invalid value: "1": is not a multiple of 3']),
    ("should not request num-pods resource", wl(pod_set("bad", 1, [container({"pods": "1"})],
                                                        spec={"initContainers": [container({"pods": "1"})]})), {},
     [f'{PS}.initContainers[0].resources.requests[pods]: Invalid value: "pods": {POD_KEY}',
      f'{PS}.containers[0].resources.requests[pods]: Invalid value: "pods": {POD_KEY}']),
    ("should reject reserved pods resource key in limits", wl(pod_set("bad", 1, [container(limits={"pods": "1"})],
                                                                      spec={"initContainers": [container(limits={"pods": "1"})]})), {},
     [f'{PS}.initContainers[0].resources.limits[pods]: Invalid value: "pods": {POD_KEY}',
      f'{PS}.containers[0].resources.limits[pods]: Invalid value: "pods": {POD_KEY}']),
    ("should reject negative container resource request", wl(pod_set("bad", 1, [container({"cpu": "-1"})])), {},
     [f'{PS}.containers[0].resources.requests[cpu]: Invalid value: "-1": {NEG}']),
    ("should reject negative initContainer resource request", wl(pod_set("bad", 1, spec={
        "initContainers": [container({"cpu": "-1"})]})), {},
     [f'{PS}.initContainers[0].resources.requests[cpu]: Invalid value: "-1": {NEG}']),
    ("should accept invalid podSet template metadata when WorkloadValidationForPodSetMetadata is disabled", wl(
        {"name": "bad-metadata", "count": 1, "template": {"metadata": {
            "labels": {"valid": "invalid value with spaces, test-wec1"},
            "annotations": {"invalid/annotation/key/too/long/invalid": "val"}}, "spec": {"containers": [
                {"name": "c", "image": "i"}]}}}), {"WorkloadValidationForPodSetMetadata": False}, []),
    ("should reject negative container resource limit", wl(pod_set("bad", 1, [container(limits={"cpu": "-1"})])), {},
     [f'{PS}.containers[0].resources.limits[cpu]: Invalid value: "-1": {NEG}']),
    ("should reject negative resource among multiple valid requests and limits", wl(pod_set("bad", 1, [container(
        {"cpu": "1", "memory": "-1Gi"}, {"cpu": "2", "memory": "-2Gi"})])), {},
     [f'{PS}.containers[0].resources.requests[memory]: Invalid value: "-1Gi": {NEG}',
      f'{PS}.containers[0].resources.limits[memory]: Invalid value: "-2Gi": {NEG}']),
    ("should reject negative pod-level resource request", wl(pod_set("bad", 1, spec={"resources": {"requests": {"cpu": "-1"}}})),
     {}, [f'{PS}.resources.requests[cpu]: Invalid value: "-1": {NEG}']),
    ("should reject negative pod-level resource limit", wl(pod_set("bad", 1, spec={"resources": {"limits": {"memory": "-1Gi"}}})),
     {}, [f'{PS}.resources.limits[memory]: Invalid value: "-1Gi": {NEG}']),
    ("should accept negative container resource request when WorkloadValidateResourcesAreNonNegative is disabled",
     wl(pod_set("ok", 1, [container({"cpu": "-1"})])), {"WorkloadValidateResourcesAreNonNegative": False}, []),
    ("should accept zero container resource request", wl(pod_set("ok", 1, [container({"cpu": "0"})])), {}, []),
    ("should reject podSetSliceSize without podSetSliceRequiredTopology when TASValidateWorkloadSliceSize is enabled",
     wl(pod_set("main", 1, topologyRequest={"podSetSliceSize": 2})), {},
     ["spec.podSets[0].topologyRequest.podSetSliceSize: Forbidden: may not be set when podSetSliceRequiredTopology is "
      "not specified"]),
    ("mismatched names in podSetUpdates with names in podSets", wl(
        pod_set("first"), pod_set("second"),
        status={"admissionChecks": [{"name": "ac1", "state": "Ready", "message": "", "lastTransitionTime":
                                     "2026-01-01T00:00:00Z", "podSetUpdates": [{"name": "third"}]}]}), {},
     ['status.admissionChecks[0].podSetUpdates[0].name: Unsupported value: "third": supported values: "first", "second"']),
    ("invalid reclaimablePods", wl(pod_set("ps1", 3), status={"reclaimablePods": [
        {"name": "ps1", "count": 4}, {"name": "ps2", "count": 1}]}), {},
     ["status.reclaimablePods[ps1].count: Invalid value: 4: should be less or equal to 3",
      'status.reclaimablePods[ps2].name: Unsupported value: "ps2": supported values: "ps1"']),
    ("too many variable count podSets", wl(pod_set("ps1", 3, minCount=2), pod_set("ps2", 3, minCount=1)), {},
     ["spec.podSets: Invalid value: 2: at most one podSet can use minCount"]),
    ("valid priority-boost", wl(annotations={"kueue.x-k8s.io/priority-boost": "5"}), {"PriorityBoost": True}, []),
    ("invalid priority-boost", wl(annotations={"kueue.x-k8s.io/priority-boost": "abc"}), {"PriorityBoost": True},
     ['metadata.annotations[kueue.x-k8s.io/priority-boost]: Invalid value: "abc": must be a valid signed integer']),
    ("empty string priority-boost", wl(annotations={"kueue.x-k8s.io/priority-boost": ""}), {"PriorityBoost": True},
     ['metadata.annotations[kueue.x-k8s.io/priority-boost]: Invalid value: "": must be a valid signed integer; '
      'use "0" explicitly, empty string is not allowed']),
    ("invalid priority-boost when feature off", wl(annotations={"kueue.x-k8s.io/priority-boost": "abc"}), {}, []),
    ("valid AdmissionGatedBy annotation with multiple gates", wl(annotations={
        "kueue.x-k8s.io/admission-gated-by": "example.com/gate1,example.com/gate2"}), {}, []),
    ("invalid AdmissionGatedBy annotation - duplicate gates", wl(annotations={
        "kueue.x-k8s.io/admission-gated-by": "example.com/gate1,example.com/gate1"}), {},
     ['metadata.annotations[kueue.x-k8s.io/admission-gated-by]: Invalid value: "example.com/gate1,example.com/gate1": '
      "duplicate gate name: example.com/gate1"]),
])
def test_validate_workload(case: str, workload: dict[str, Any], gates: dict[str, bool], want: list[str]) -> None:
    assert messages(workload, ctx(**gates)) == want


def test_partial_admission_gate_off_drops_min_count() -> None:
    # mworkload.kb.io Default: minCount is dropped without PartialAdmission (so "too many" cannot happen).
    assert messages(wl(pod_set("ps1", 3, minCount=2), pod_set("ps2", 3, minCount=1)), ctx(PartialAdmission=False)) == []


def reserved(workload: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(workload)
    out["status"] = admission(*[{"name": p["name"], "count": p["count"]} for p in out["spec"]["podSets"]])
    return out


# TestValidateWorkloadUpdate
def test_reclaimable_pod_count_can_change_up_not_down() -> None:
    old = reserved(wl(pod_set("ps1", 3)))
    old["status"]["reclaimablePods"] = [{"name": "ps1", "count": 1}]
    up = copy.deepcopy(old)
    up["status"]["reclaimablePods"] = [{"name": "ps1", "count": 2}]
    assert messages(up, ctx(), old=old) == []
    down = copy.deepcopy(old)
    down["status"]["reclaimablePods"] = [{"name": "ps1", "count": 0}]
    assert messages(down, ctx(), old=old) == ["status.reclaimablePods[ps1].count: Invalid value: 0: cannot be less than 1"]


def test_pod_sets_are_immutable_while_quota_is_reserved() -> None:
    # "workload.podSets[].count is immutable" (and "...is mutable with ElasticJobs feature gate" on scale-down).
    old = reserved(wl(pod_set("main", 3)))
    new = copy.deepcopy(old)
    new["spec"]["podSets"][0]["count"] = 4
    new["status"]["admission"]["podSetAssignments"][0]["count"] = 3
    [message] = messages(new, ctx(), old=old)
    assert message.startswith("spec.podSets.0: Invalid value: ") and message.endswith(": field is immutable")
    new["spec"]["podSets"][0]["count"] = 2
    assert messages(new, ctx(), old=old) == []  # ElasticJobsViaWorkloadSlices (beta, on) allows a scale-down


def test_podsets_cannot_be_added_to_admission() -> None:
    old = reserved(wl(pod_set("a"), pod_set("b")))
    new = copy.deepcopy(old)
    new["status"]["admission"]["podSetAssignments"].append({"name": "c", "count": 1})
    found = messages(new, ctx(), old=old)
    assert any(m.startswith("status.admission: Invalid value: ") and m.endswith("field is immutable") for m in found)


def test_topology_assignment_can_be_mutated() -> None:
    old = reserved(wl(pod_set("main")))
    new = copy.deepcopy(old)
    new["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"] = {
        "levels": ["kubernetes.io/hostname"], "slices": [{"domainCount": 1, "valuesPerLevel": [{"universal": "n1"}],
                                                          "podCounts": {"universal": 1}}]}
    assert messages(new, ctx(), old=old) == []


GATED = "metadata.annotations[kueue.x-k8s.io/admission-gated-by]"


@pytest.mark.parametrize(("case", "before", "after", "want"), [
    ("reject adding AdmissionGatedBy annotation after workload creation", None, "example.com/gate",
     [f"{GATED}: Forbidden: cannot add admission gate after creation"]),
    ("allow removing AdmissionGatedBy annotation with single gate", "example.com/gate", None, []),
    ("allow removing one gate from AdmissionGatedBy annotation", "example.com/gate1,example.com/gate2",
     "example.com/gate1", []),
    ("reject injecting new gate in AdmissionGatedBy annotation", "example.com/gate1",
     "example.com/gate1,example.com/gate2", [f"{GATED}: Forbidden: can only remove gates, not add new ones"]),
    ("allow reordering gates in AdmissionGatedBy annotation", "example.com/gate1,example.com/gate2",
     "example.com/gate2,example.com/gate1", []),
])
def test_admission_gated_by_update(case: str, before: str | None, after: str | None, want: list[str]) -> None:
    def annotated(value: str | None) -> dict[str, Any]:
        return wl(annotations={"kueue.x-k8s.io/admission-gated-by": value} if value else None)

    assert messages(annotated(after), ctx(), old=annotated(before)) == want
