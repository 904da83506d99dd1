"""v1beta1 <-> v1beta2 (jobsetctl/kueue/versions.py), translated from apis/kueue/v1beta1/*_conversion_test.go:
``TestClusterQueueConvertTo``/``ConvertFrom``/``RoundTrip``, ``TestWorkloadConvertTo``/``ConvertFrom``/``RoundTrip``,
``TestLocalQueueConvertTo``/``ConvertFrom`` (the cases on fields whose spelling differs; the others copy
fields through and are covered by the round trips), multikueue_conversion_test.go (every entry), and the
``FairSharingStatus`` conversion (admissionFairSharingStatus dropped for ClusterQueues and Cohorts)."""

from __future__ import annotations

from typing import Any

import pytest

from jobsetctl.kueue.versions import field_path_in, to_v1beta1, to_v1beta2, topology_domains

B1, B2 = "kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1beta2"


def obj(api_version: str, kind: str, spec: dict[str, Any] | None = None, status: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}}
    if spec is not None:
        out["spec"] = spec
    if status is not None:
        out["status"] = status
    return out


# TestClusterQueueConvertTo
@pytest.mark.parametrize(("case", "spec", "want"), [
    ("nil cohort", {}, {}),
    ("cohort to cohortName conversion", {"cohort": "my-cohort"}, {"cohortName": "my-cohort"}),
    ("AdmissionChecks to AdmissionChecksStrategy conversion", {"admissionChecks": ["check1", "check2"]},
     {"admissionChecksStrategy": {"admissionChecks": [{"name": "check1"}, {"name": "check2"}]}}),
    ("AdmissionChecksStrategy preserved", {"admissionChecksStrategy": {"admissionChecks": [
        {"name": "check1", "onFlavors": ["flavor1"]}]}},
     {"admissionChecksStrategy": {"admissionChecks": [{"name": "check1", "onFlavors": ["flavor1"]}]}}),
    ("empty AdmissionChecks", {"admissionChecks": []}, {}),
    ("FlavorFungibility Preempt to MayStopSearch", {"flavorFungibility": {"whenCanPreempt": "Preempt"}},
     {"flavorFungibility": {"whenCanPreempt": "MayStopSearch"}}),
    ("FlavorFungibility Borrow to MayStopSearch", {"flavorFungibility": {"whenCanBorrow": "Borrow"}},
     {"flavorFungibility": {"whenCanBorrow": "MayStopSearch"}}),
    ("FlavorFungibility MayStopSearch preserved", {"flavorFungibility": {"whenCanBorrow": "MayStopSearch"}},
     {"flavorFungibility": {"whenCanBorrow": "MayStopSearch"}}),
    ("FlavorFungibility TryNextFlavor preserved", {"flavorFungibility": {"whenCanPreempt": "TryNextFlavor"}},
     {"flavorFungibility": {"whenCanPreempt": "TryNextFlavor"}}),
])
def test_cluster_queue_convert_to(case: str, spec: dict[str, Any], want: dict[str, Any]) -> None:
    assert to_v1beta2(obj(B1, "ClusterQueue", spec)) == obj(B2, "ClusterQueue", want)


# TestClusterQueueConvertFrom
@pytest.mark.parametrize(("case", "spec", "want"), [
    ("nil cohortName", {}, {}),
    ("cohortName to cohort conversion", {"cohortName": "my-cohort"}, {"cohort": "my-cohort"}),
    ("FlavorFungibility MayStopSearch preserved", {"flavorFungibility": {"whenCanBorrow": "MayStopSearch"}},
     {"flavorFungibility": {"whenCanBorrow": "MayStopSearch"}}),
])
def test_cluster_queue_convert_from(case: str, spec: dict[str, Any], want: dict[str, Any]) -> None:
    assert to_v1beta1(obj(B2, "ClusterQueue", spec)) == obj(B1, "ClusterQueue", want)


def test_cluster_queue_round_trip() -> None:
    # "complete ClusterQueue with cohort and FlavorFungibility"
    original = obj(B1, "ClusterQueue", {"cohort": "c", "queueingStrategy": "StrictFIFO",
                                        "flavorFungibility": {"whenCanBorrow": "TryNextFlavor"}})
    assert to_v1beta1(to_v1beta2(original)) == original


# TestWorkloadConvertTo
@pytest.mark.parametrize(("case", "spec", "status", "want_spec", "want_status"), [
    ("nil AccumulatedPastExexcutionTimeSeconds", None, {}, None, {}),
    ("zero AccumulatedPastExexcutionTimeSeconds", None, {"accumulatedPastExexcutionTimeSeconds": 0}, None,
     {"accumulatedPastExecutionTimeSeconds": 0}),
    ("non-zero AccumulatedPastExexcutionTimeSeconds", None, {"accumulatedPastExexcutionTimeSeconds": 3600}, None,
     {"accumulatedPastExecutionTimeSeconds": 3600}),
    ("with PodPriorityClassSource", {"priority": 100, "priorityClassSource": "scheduling.k8s.io/priorityclass",
                                     "priorityClassName": "low"}, None,
     {"priority": 100, "priorityClassRef": {"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": "low"}}, None),
    ("with WorkloadPriorityClassSource", {"priority": 100, "priorityClassSource": "kueue.x-k8s.io/workloadpriorityclass",
                                         "priorityClassName": "high"}, None,
     {"priority": 100, "priorityClassRef": {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "high"}},
     None),
    ("with TopologyAssignment", None, {"admission": {"podSetAssignments": [{"topologyAssignment": {
        "levels": ["a", "b"], "domains": [{"values": ["a1", "b1"], "count": 10}, {"values": ["a1", "b2"], "count": 20}]}}]}},
     None, {"admission": {"podSetAssignments": [{"topologyAssignment": {"levels": ["a", "b"], "slices": [{
         "domainCount": 2, "valuesPerLevel": [{"universal": "a1"}, {"individual": {"prefix": "b", "roots": ["1", "2"]}}],
         "podCounts": {"individual": [10, 20]}}]}}]}}),
])
def test_workload_convert_to(case: str, spec: Any, status: Any, want_spec: Any, want_status: Any) -> None:
    assert to_v1beta2(obj(B1, "Workload", spec, status)) == obj(B2, "Workload", want_spec, want_status)


# TestWorkloadConvertFrom "with TopologyAssignment, multiple slices"
def test_workload_convert_from_multiple_slices() -> None:
    topology = {"levels": ["a", "b"], "slices": [
        {"domainCount": 2, "valuesPerLevel": [{"universal": "a1"}, {"individual": {"prefix": "b", "roots": ["1", "2"]}}],
         "podCounts": {"individual": [10, 20]}},
        {"domainCount": 2, "valuesPerLevel": [{"universal": "a2"},
                                              {"individual": {"roots": ["first", "second"], "suffix": "-in-a2"}}],
         "podCounts": {"universal": 50}}]}
    converted = to_v1beta1(obj(B2, "Workload", None, {"admission": {"podSetAssignments": [{"topologyAssignment": topology}]}}))
    assert converted["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"] == {"levels": ["a", "b"], "domains": [
        {"values": ["a1", "b1"], "count": 10}, {"values": ["a1", "b2"], "count": 20},
        {"values": ["a2", "first-in-a2"], "count": 50}, {"values": ["a2", "second-in-a2"], "count": 50}]}
    assert topology_domains(topology)[2] == (["a2", "first-in-a2"], 50)


@pytest.mark.parametrize(("case", "spec", "status"), [
    ("complete Workload with AccumulatedPastExexcutionTimeSeconds", {"queueName": "q"},
     {"accumulatedPastExexcutionTimeSeconds": 100}),
    ("Workload with PodPriorityClassSource", {"priority": 1, "priorityClassSource": "scheduling.k8s.io/priorityclass",
                                              "priorityClassName": "p"}, None),
    ("Workload with WorkloadPriorityClassSource", {"priority": 1, "priorityClassName": "w",
                                                   "priorityClassSource": "kueue.x-k8s.io/workloadpriorityclass"}, None),
    ("Workload with TopologyAssignment", None, {"admission": {"podSetAssignments": [{"topologyAssignment": {
        "levels": ["a"], "domains": [{"values": ["x1"], "count": 1}, {"values": ["x2"], "count": 2}]}}]}}),
])
def test_workload_round_trip(case: str, spec: Any, status: Any) -> None:
    original = obj(B1, "Workload", spec, status)
    assert to_v1beta1(to_v1beta2(original)) == original


# TestLocalQueueConvertTo / ConvertFrom "single FlavorUsage"
def test_local_queue_flavor_usage() -> None:
    usage = [{"name": "f", "resources": [{"name": "cpu", "total": "1"}]}]
    assert to_v1beta2(obj(B1, "LocalQueue", {}, {"flavorUsage": usage, "flavors": [{"name": "f"}]})) == \
        obj(B2, "LocalQueue", {}, {"flavorsUsage": usage})
    assert to_v1beta1(obj(B2, "LocalQueue", {}, {"flavorsUsage": usage})) == obj(B1, "LocalQueue", {}, {"flavorUsage": usage})


def test_v1beta2_paths_point_at_v1beta1_fields() -> None:
    cq = obj(B1, "ClusterQueue", {"cohort": "c", "admissionChecks": ["a", "b"]})
    assert field_path_in(cq, ("spec", "cohortName")) == ("spec", "cohort")
    assert field_path_in(cq, ("spec", "admissionChecksStrategy", "admissionChecks", 1, "name")) == (
        "spec", "admissionChecks", 1)
    assert field_path_in(obj(B2, "ClusterQueue", {}), ("spec", "cohortName")) == ("spec", "cohortName")


# ---- FairSharingStatus (fairsharing_conversion.go; zz_generated autoConvert_v1beta1_FairSharingStatus_To_v1beta2):
# v1beta2's FairSharingStatus has weightedShare only. clusterqueue_conversion_test.go TestClusterQueueConvertTo
# "complete ClusterQueue with all fields" writes an admissionFairSharingStatus and expects none after conversion.
ADMISSION_FS = {"consumedResources": {"cpu": "10"}, "lastUpdate": "2026-08-22T00:00:00Z"}


@pytest.mark.parametrize(("kind", "kept"), [
    ("ClusterQueue", False),  # TestClusterQueueConvertTo "complete ClusterQueue with all fields"
    ("Cohort", False),  # autoConvert_v1beta1_CohortStatus_To_v1beta2_CohortStatus: the same FairSharingStatus conversion
    ("LocalQueue", True),  # autoConvert_v1beta1_LocalQueueStatus_To_v1beta2: cast to LocalQueueFairSharingStatus, kept
])
def test_admission_fair_sharing_status(kind: str, kept: bool) -> None:
    status = {"fairSharing": {"weightedShare": 100, "admissionFairSharingStatus": ADMISSION_FS}, "pendingWorkloads": 5}
    converted = to_v1beta2(obj(B1, kind, {}, status))
    want = {"weightedShare": 100, "admissionFairSharingStatus": ADMISSION_FS} if kept else {"weightedShare": 100}
    assert converted["status"] == {"fairSharing": want, "pendingWorkloads": 5}
    assert status["fairSharing"]["admissionFairSharingStatus"] == ADMISSION_FS  # the input is not changed


# ---- multikueue_conversion_test.go (every entry) ---------------------------------------------------------------
CONDITIONS = [{"type": "Active", "status": "True", "reason": "Active", "message": "Connected",
               "lastTransitionTime": "2026-08-22T00:00:00Z"}]
SECRET = {"location": "test-location", "locationType": "Secret"}
PATH = {"location": "test-location", "locationType": "Path"}
PROFILE = {"name": "foobar"}


# TestMultiKueueClusterConvertTo
@pytest.mark.parametrize(("case", "spec", "status", "want"), [
    ("KubeConfig conversion", {"kubeConfig": SECRET}, None, {"clusterSource": {"kubeConfig": SECRET}}),
    ("empty KubeConfig", {"kubeConfig": {"location": "", "locationType": ""}}, None, {}),  # Go's zero struct as JSON
    ("complete MultiKueueCluster with status", {"kubeConfig": PATH}, {"conditions": CONDITIONS},
     {"clusterSource": {"kubeConfig": PATH}}),
])
def test_multikueue_cluster_convert_to(case: str, spec: dict[str, Any], status: Any, want: dict[str, Any]) -> None:
    assert to_v1beta2(obj(B1, "MultiKueueCluster", spec, status)) == obj(B2, "MultiKueueCluster", want, status)


# TestMultiKueueClusterConvertFrom. "nil KubeConfig": Go writes v1beta1's non-pointer kubeConfig as an empty
# struct ({location: "", locationType: ""}); the plain object leaves the key out (no value is lost).
@pytest.mark.parametrize(("case", "spec", "status", "want"), [
    ("KubeConfig conversion", {"clusterSource": {"kubeConfig": SECRET}}, None, {"kubeConfig": SECRET}),
    ("nil KubeConfig", {"clusterSource": {}}, None, {}),
    ("ClusterProfileRef conversion", {"clusterSource": {"clusterProfileRef": PROFILE}}, None,
     {"clusterProfileRef": PROFILE}),
    ("complete MultiKueueCluster with status", {"clusterSource": {"kubeConfig": PATH}}, {"conditions": CONDITIONS},
     {"kubeConfig": PATH}),
])
def test_multikueue_cluster_convert_from(case: str, spec: dict[str, Any], status: Any, want: dict[str, Any]) -> None:
    assert to_v1beta1(obj(B2, "MultiKueueCluster", spec, status)) == obj(B1, "MultiKueueCluster", want, status)


# TestMultiKueueClusterConversion_RoundTrip (v1beta1 -> v1beta2 -> v1beta1) and _Reverse (v1beta2 -> v1beta1 -> v1beta2)
@pytest.mark.parametrize(("case", "api_version", "spec", "status"), [
    ("RoundTrip/complete MultiKueueCluster with KubeConfig and status", B1, {"kubeConfig": SECRET},
     {"conditions": CONDITIONS}),
    ("RoundTrip/minimal MultiKueueCluster", B1, {}, None),
    ("RoundTrip_Reverse/complete MultiKueueCluster with ClusterProfile and status", B2,
     {"clusterSource": {"clusterProfileRef": PROFILE}}, {"conditions": CONDITIONS}),
    ("RoundTrip_Reverse/complete MultiKueueCluster with KubeConfig and status", B2,
     {"clusterSource": {"kubeConfig": SECRET}}, {"conditions": CONDITIONS}),
    ("RoundTrip_Reverse/minimal MultiKueueCluster", B2, {}, None),
])
def test_multikueue_cluster_round_trip(case: str, api_version: str, spec: dict[str, Any], status: Any) -> None:
    original = obj(api_version, "MultiKueueCluster", spec, status)
    there = to_v1beta2(original) if api_version == B1 else to_v1beta1(original)
    back = to_v1beta1(there) if api_version == B1 else to_v1beta2(there)
    assert back == original


def test_multikueue_config_quota_management_has_no_v1beta1_field() -> None:
    # autoConvert_v1beta2_MultiKueueConfigSpec_To_v1beta1: "in.QuotaManagement requires manual conversion: does not
    # exist in peer-type", and Convert_v1beta2_MultiKueueConfigSpec_To_v1beta1 copies everything else.
    spec = {"clusters": ["worker1"], "quotaManagement": "Manual"}
    assert to_v1beta1(obj(B2, "MultiKueueConfig", spec)) == obj(B1, "MultiKueueConfig", {"clusters": ["worker1"]})
