"""The Workload Kueue builds for a job (jobsetctl/kueue/workload.py).

Translated: pkg/controller/jobs/jobset/jobset_controller_test.go ``TestPodSets`` (every case) and
``TestReconciler`` (every case, through the fake cluster's reconciler); the Job integration's
``PodSets`` (pkg/controller/jobs/job/job_controller.go) and the TrainJob integration's
(pkg/controller/jobs/trainjob) are checked against what the code does.
"""

from __future__ import annotations

from typing import Any

import pytest

from jobsetctl.kinds.index import ObjectIndex
from jobsetctl.kinds.interface import AdmissionContext
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kueue.workload import build_workload, job_pod_sets, jobset_pod_sets, sanitize_pod_set
from tests.helpers import load_one
from tests.kueue.harness import V137, jobset, kube_events, kueue_config, make_cluster, submit, workloads

INDEX = {"podIndexLabel": "batch.kubernetes.io/job-completion-index",
         "subGroupIndexLabel": "jobset.sigs.k8s.io/job-index"}


def two_jobs(annotations1: dict[str, str] | None = None, annotations2: dict[str, str] | None = None) -> dict[str, Any]:
    """testingjobset ReplicatedJobs(job1: 2 replicas x 1/1, job2: 3 replicas x parallelism 2, completions 3)."""
    def rjob(name: str, replicas: int, parallelism: int, completions: int, annotations: dict[str, str] | None) -> Any:
        template: dict[str, Any] = {"spec": {"containers": [{"name": "c", "image": "pause"}]}}
        if annotations:
            template["metadata"] = {"annotations": annotations}
        return {"name": name, "replicas": replicas,
                "template": {"spec": {"parallelism": parallelism, "completions": completions, "template": template}}}
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "jobset", "namespace": "ns"},
            "spec": {"replicatedJobs": [rjob("job1", 2, 1, 1, annotations1), rjob("job2", 3, 2, 3, annotations2)]}}


def summary(pod_sets: list[dict[str, Any]]) -> list[tuple[str, int, dict[str, Any] | None]]:
    return [(p["name"], p["count"], p.get("topologyRequest")) for p in pod_sets]


REQUIRED = {"kueue.x-k8s.io/podset-required-topology": "cloud.com/block"}
PREFERRED = {"kueue.x-k8s.io/podset-preferred-topology": "cloud.com/block"}


# TestPodSets
@pytest.mark.parametrize(("case", "jobset_obj", "gates", "want"), [
    ("no annotations", two_jobs(), {"TopologyAwareScheduling": False, "TASProfileMixed": False,
                                     "TASFailedNodeReplacement": False, "TASFailedNodeReplacementFailFast": False,
                                     "TASReplaceNodeOnPodTermination": False, "TASReplaceNodeOnNodeTaints": False,
                                     "TASMultiLayerTopology": False, "TASHandleOverlappingFlavors": False,
                                     "TASRecomputeAssignmentWithinSchedulingCycle": False},
     [("job1", 2, None), ("job2", 6, None)]),
    ("with required topology annotation", two_jobs(REQUIRED), {},
     [("job1", 2, {"required": "cloud.com/block", **INDEX, "subGroupCount": 2}),
      ("job2", 6, {**INDEX, "subGroupCount": 3})]),
    ("with preferred topology annotation", two_jobs(None, PREFERRED), {},
     [("job1", 2, {**INDEX, "subGroupCount": 2}),
      ("job2", 6, {"preferred": "cloud.com/block", **INDEX, "subGroupCount": 3})]),
])
def test_pod_sets(case: str, jobset_obj: dict[str, Any], gates: dict[str, bool], want: list[Any]) -> None:
    config = kueue_config(featureGates=gates) if gates else kueue_config()
    pod_sets = jobset_pod_sets(jobset_obj, config)
    assert summary(pod_sets) == want
    for pod_set, rjob in zip(pod_sets, jobset_obj["spec"]["replicatedJobs"], strict=True):
        assert pod_set["template"] == rjob["template"]["spec"]["template"]  # PodSpec(...).Annotations(...)


def test_pod_sets_without_topology_requests_if_tas_is_disabled() -> None:
    # "without required and preferred topology annotation if TAS is disabled": annotations stay, no requests.
    obj = two_jobs(REQUIRED, PREFERRED)
    config = kueue_config(featureGates={
        "TopologyAwareScheduling": False, "TASProfileMixed": False, "TASFailedNodeReplacement": False,
        "TASFailedNodeReplacementFailFast": False, "TASReplaceNodeOnPodTermination": False,
        "TASReplaceNodeOnNodeTaints": False, "TASMultiLayerTopology": False, "TASHandleOverlappingFlavors": False,
        "TASRecomputeAssignmentWithinSchedulingCycle": False})
    pod_sets = jobset_pod_sets(obj, config)
    assert summary(pod_sets) == [("job1", 2, None), ("job2", 6, None)]
    assert pod_sets[0]["template"]["metadata"]["annotations"] == REQUIRED


def test_pod_set_names_are_lower_case_and_slices_come_through() -> None:
    obj = two_jobs({"kueue.x-k8s.io/podset-required-topology": "cloud.com/block",
                    "kueue.x-k8s.io/podset-slice-required-topology": "cloud.com/rack",
                    "kueue.x-k8s.io/podset-slice-size": "1"})
    obj["spec"]["replicatedJobs"][0]["name"] = "Job1"
    [first, _] = jobset_pod_sets(obj, kueue_config())
    assert first["name"] == "job1"
    assert first["topologyRequest"] == {"required": "cloud.com/block", "podSetSliceRequiredTopology": "cloud.com/rack",
                                        "podSetSliceSize": 1, **INDEX, "subGroupCount": 2}


def test_job_pod_set() -> None:
    job = load_one("""
        apiVersion: batch/v1
        kind: Job
        metadata: {name: j, annotations: {kueue.x-k8s.io/job-min-parallelism: "2"}}
        spec:
          parallelism: 5
          completions: 3
          template:
            metadata: {labels: {job-name: j, controller-uid: u, batch.kubernetes.io/controller-uid: u,
                                batch.kubernetes.io/job-name: j, app: x}}
            spec: {restartPolicy: Never, containers: [{name: c, image: i}]}
    """)
    [pod_set] = job_pod_sets(job, kueue_config())
    assert pod_set["name"] == "main" and pod_set["count"] == 3 and pod_set["minCount"] == 2
    # cleanLabels: the Job controller's labels go, but batch.kubernetes.io/job-name stays.
    assert pod_set["template"]["metadata"]["labels"] == {"batch.kubernetes.io/job-name": "j", "app": "x"}
    assert pod_set["topologyRequest"] == {"podIndexLabel": "batch.kubernetes.io/job-completion-index"}


def test_sanitize_pod_set_keeps_the_last_duplicate_env_at_the_first_place() -> None:
    pod_set = {"template": {"spec": {"containers": [{"name": "c", "env": [
        {"name": "A", "value": "1"}, {"name": "B", "value": "2"}, {"name": "A", "value": "3"}]}]}}}
    sanitize_pod_set(pod_set)
    assert pod_set["template"]["spec"]["containers"][0]["env"] == [{"name": "A", "value": "3"}, {"name": "B", "value": "2"}]


# --- TestReconciler, through the fake cluster ---------------------------------------------------------

MANAGE_ALL = {"manageJobsWithoutQueueName": True, "managedJobsNamespaceSelector": {}}
WPC = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: test-wpc}\nvalue: 100\n"
PC = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: test-pc}\nvalue: 200\n"
TWO_RJOBS = """
  - name: replicated-job-1
    replicas: 1
    template: {spec: {parallelism: 1, completions: 1, template: {spec: {containers: [{name: c, image: i}]}}}}
  - name: replicated-job-2
    replicas: 2
    template: {spec: {parallelism: 2, completions: 2, template: {spec: {containers: [{name: c, image: i}]}}}}"""


def test_reconciler_workload_with_podsets_and_a_provreq_annotation() -> None:
    cluster = make_cluster(kueue_config(**MANAGE_ALL))
    submit(cluster, jobset(replicated=TWO_RJOBS).replace(
        "labels: {}", "labels: {}, annotations: {provreq.kueue.x-k8s.io/test-annotation: test-val, "
                      "invalid-provreq-prefix/test-annotation-2: test-val-2}"))
    [workload] = workloads(cluster)
    assert workload["metadata"]["annotations"] == {"provreq.kueue.x-k8s.io/test-annotation": "test-val"}
    assert summary(workload["spec"]["podSets"]) == [
        ("replicated-job-1", 1, {**INDEX, "subGroupCount": 1}), ("replicated-job-2", 4, {**INDEX, "subGroupCount": 2})]
    assert "queueName" not in workload["spec"] and "priorityClassRef" not in workload["spec"]


@pytest.mark.parametrize(("case", "labels", "pod_class", "ref", "priority"), [
    ("workload is created with podsets and workloadPriorityClass", {"kueue.x-k8s.io/priority-class": "test-wpc"}, None,
     {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "test-wpc"}, 100),
    ("workload is created with podsets and PriorityClass", {}, "test-pc",
     {"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": "test-pc"}, 200),
    ("workload is created with podsets, workloadPriorityClass and PriorityClass",
     {"kueue.x-k8s.io/priority-class": "test-wpc"}, "test-pc",
     {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "test-wpc"}, 100),
])
def test_reconciler_priorities(case: str, labels: dict[str, str], pod_class: str | None, ref: dict[str, str],
                               priority: int) -> None:
    cluster = make_cluster(kueue_config(**MANAGE_ALL))
    pod_spec = f"{{priorityClassName: {pod_class}, containers: [{{name: c, image: i}}]}}" if pod_class else \
        "{containers: [{name: c, image: i}]}"
    rjob = f"""
  - name: replicated-job-1
    replicas: 1
    template: {{spec: {{parallelism: 1, completions: 1, template: {{spec: {pod_spec}}}}}}}"""
    submit(cluster, WPC, PC, jobset(labels=labels, replicated=rjob))
    [workload] = workloads(cluster)
    assert workload["spec"]["priorityClassRef"] == ref
    assert workload["spec"]["priority"] == priority


def test_workload_priority_class_not_found_means_no_workload() -> None:
    # ExtractPriority: the label names a class that does not exist; the event, no Workload, a retry.
    cluster = make_cluster()
    submit(cluster, jobset(labels={"kueue.x-k8s.io/queue-name": "q", "kueue.x-k8s.io/priority-class": "missing"}))
    assert workloads(cluster) == []
    assert ("JobSet", "Warning", "WorkloadPriorityClassNotFound", 'WorkloadPriorityClass "missing" not found') in \
        kube_events(cluster)


def test_workload_metadata_owner_and_queue() -> None:
    cluster = make_cluster()
    submit(cluster, jobset(labels={"kueue.x-k8s.io/queue-name": "user-queue", "team": "a",
                                   "kueue.x-k8s.io/max-exec-time-seconds": "3600"}))
    js = cluster.api.get("jobset.x-k8s.io", "JobSet", "ns", "jobset")
    assert js is not None and js["spec"]["suspend"] is True  # the webhook suspended it
    [workload] = workloads(cluster)
    uid = js["metadata"]["uid"]
    assert workload["metadata"]["name"].startswith("jobset-jobset-") and len(workload["metadata"]["name"]) == 19
    assert workload["metadata"]["labels"] == {"kueue.x-k8s.io/job-uid": uid}  # labelKeysToCopy is empty
    assert workload["metadata"]["finalizers"] == ["kueue.x-k8s.io/resource-in-use"]
    assert workload["metadata"]["ownerReferences"] == [{
        "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "name": "jobset", "uid": uid,
        "controller": True, "blockOwnerDeletion": True}]
    assert workload["spec"]["queueName"] == "user-queue"
    assert workload["spec"]["maximumExecutionTimeSeconds"] == 3600
    assert workload["spec"]["active"] is True  # the CRD default
    assert ("JobSet", "Normal", "CreatedWorkload",
            f"Created Workload: ns/{workload['metadata']['name']}") in kube_events(cluster)


def test_build_without_a_cluster_view_for_validate() -> None:
    ctx = AdmissionContext(V137, parse_feature_gates(None, V137), cluster=ObjectIndex(), kueue=kueue_config())
    built = build_workload(load_one(jobset(labels={"kueue.x-k8s.io/queue-name": "q"})), ctx)
    assert built.workload is not None and built.error is None
    built = build_workload(load_one(jobset(labels={"kueue.x-k8s.io/priority-class": "nope"})), ctx)
    assert built.workload is None
    assert built.error == 'workloadpriorityclasses.kueue.x-k8s.io "nope" not found'
    assert built.at == ("metadata", "labels", "kueue.x-k8s.io/priority-class")
