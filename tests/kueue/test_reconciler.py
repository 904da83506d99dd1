"""Kueue's job reconciler and job webhooks in the fake cluster (creation side): which jobs get a Workload,
what the webhooks default, children of managed jobs, v1beta1 storage."""

from __future__ import annotations

from jobsetctl.kube.jsontree import copy_tree
from tests.helpers import load_one
from tests.kueue.harness import jobset, kube_events, kueue_config, make_cluster, objects, submit, workloads

QUEUED = {"kueue.x-k8s.io/queue-name": "user-queue"}


def get(cluster, group: str, kind: str, namespace: str, name: str):  # type: ignore[no-untyped-def]
    found = cluster.api.get(group, kind, namespace, name)
    assert found is not None
    return found


def test_a_job_without_queue_name_is_left_alone() -> None:
    cluster = make_cluster()
    submit(cluster, jobset())
    assert workloads(cluster) == []
    assert "suspend" not in get(cluster, "jobset.x-k8s.io", "JobSet", "ns", "jobset")["spec"]
    assert [j["spec"]["suspend"] for j in objects(cluster, "batch", "Job")] == [False]


def test_without_kueue_a_queue_name_does_nothing() -> None:
    cluster = make_cluster(None)
    submit(cluster, jobset(labels=QUEUED))
    assert workloads(cluster) == []
    assert [j["spec"]["suspend"] for j in objects(cluster, "batch", "Job")] == [False]


def test_queued_jobset_is_suspended_with_its_jobs_and_gets_one_workload() -> None:
    cluster = make_cluster()
    submit(cluster, jobset(labels=QUEUED))
    assert get(cluster, "jobset.x-k8s.io", "JobSet", "ns", "jobset")["spec"]["suspend"] is True
    # The JobSet's Jobs are children of a managed job: no Workload of their own, created suspended.
    assert [j["spec"]["suspend"] for j in objects(cluster, "batch", "Job")] == [True]
    assert len(workloads(cluster)) == 1
    cluster.run(until=10)
    assert len(workloads(cluster)) == 1  # ensureOneWorkload: no second one


def test_manage_jobs_without_queue_name_follows_the_namespace_selector() -> None:
    config = kueue_config(manageJobsWithoutQueueName=True)
    cluster = make_cluster(config)
    submit(cluster, jobset(namespace="ns"), jobset(name="system", namespace="kube-system"))
    assert [w["metadata"]["ownerReferences"][0]["name"] for w in workloads(cluster)] == ["jobset"]
    assert get(cluster, "jobset.x-k8s.io", "JobSet", "ns", "jobset")["spec"]["suspend"] is True
    assert "suspend" not in get(cluster, "jobset.x-k8s.io", "JobSet", "kube-system", "system")["spec"]


def test_default_local_queue_and_workload_priority_class() -> None:
    cluster = make_cluster()
    submit(cluster, """
        apiVersion: kueue.x-k8s.io/v1beta2
        kind: LocalQueue
        metadata: {name: default, namespace: ns}
        spec: {clusterQueue: cq}
    """, """
        apiVersion: kueue.x-k8s.io/v1beta2
        kind: WorkloadPriorityClass
        metadata: {name: default}
        value: 7
    """, jobset())
    js = get(cluster, "jobset.x-k8s.io", "JobSet", "ns", "jobset")
    assert js["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "default", "kueue.x-k8s.io/priority-class": "default"}
    assert js["spec"]["suspend"] is True
    [workload] = workloads(cluster)
    assert (workload["spec"]["queueName"], workload["spec"]["priority"]) == ("default", 7)


def test_integration_not_enabled_means_no_webhook_and_no_workload() -> None:
    cluster = make_cluster(kueue_config(integrations={"frameworks": ["batch/job"]}))
    submit(cluster, jobset(labels=QUEUED))
    assert workloads(cluster) == []
    assert "suspend" not in get(cluster, "jobset.x-k8s.io", "JobSet", "ns", "jobset")["spec"]


def test_running_job_without_admission_is_stopped() -> None:
    # A queued JobSet created around the webhook (stored as running): ensureOneWorkload stops it first.
    cluster = make_cluster()
    obj = load_one(jobset(labels=QUEUED))
    obj["spec"]["suspend"] = False
    cluster.api.create(copy_tree(obj), skip_admission=True)
    cluster.run(until=0)
    assert get(cluster, "jobset.x-k8s.io", "JobSet", "ns", "jobset")["spec"]["suspend"] is True
    assert ("JobSet", "Normal", "Stopped", "Missing Workload; unable to restore pod templates") in kube_events(cluster)
    assert len(workloads(cluster)) == 1


def test_unsuspended_by_hand_without_admission_is_stopped_again() -> None:
    cluster = make_cluster()
    submit(cluster, jobset(labels=QUEUED))
    js = get(cluster, "jobset.x-k8s.io", "JobSet", "ns", "jobset")
    old = copy_tree(js)
    js["spec"]["suspend"] = False
    assert cluster.api.update(js, old=old).ok
    cluster.run(until=cluster.clock.now)
    assert get(cluster, "jobset.x-k8s.io", "JobSet", "ns", "jobset")["spec"]["suspend"] is True
    assert ("JobSet", "Normal", "Stopped", "Not admitted by cluster queue") in kube_events(cluster)


def test_trainjob_gets_the_runtime_patch_and_a_workload_from_its_runtime() -> None:
    from jobsetctl.trainer.catalog import builtin_runtimes

    cluster = make_cluster()
    for runtime in builtin_runtimes():
        cluster.api.create(copy_tree(runtime), skip_admission=True)
    submit(cluster, """
        apiVersion: trainer.kubeflow.org/v1alpha1
        kind: TrainJob
        metadata: {name: tj, namespace: ns, labels: {kueue.x-k8s.io/queue-name: user-queue}}
        spec:
          runtimeRef: {name: torch-distributed}
          trainer: {numNodes: 2, resourcesPerNode: {requests: {cpu: "1"}}}
    """)
    tj = get(cluster, "trainer.kubeflow.org", "TrainJob", "ns", "tj")
    assert tj["spec"]["suspend"] is True
    assert tj["spec"]["runtimePatches"][-1] == {"manager": "kueue.x-k8s.io/manager",
                                                "trainingRuntimeSpec": {"template": {"spec": {}}}}
    [workload] = workloads(cluster)
    assert workload["metadata"]["name"].startswith("trainjob-tj-")
    assert [(p["name"], p["count"]) for p in workload["spec"]["podSets"]] == [("node", 2)]
    container = workload["spec"]["podSets"][0]["template"]["spec"]["containers"][0]
    assert container["resources"]["requests"] == {"cpu": "1"}
    # The TrainJob's JobSet is a child of a managed job: suspended, no Workload of its own.
    assert get(cluster, "jobset.x-k8s.io", "JobSet", "ns", "tj")["spec"]["suspend"] is True


def test_v1beta1_objects_are_stored_as_v1beta2() -> None:
    cluster = make_cluster()
    submit(cluster, """
        apiVersion: kueue.x-k8s.io/v1beta1
        kind: ClusterQueue
        metadata: {name: cq}
        spec:
          cohort: team
          admissionChecks: [check-a]
          flavorFungibility: {whenCanBorrow: Borrow}
          resourceGroups:
          - coveredResources: [cpu]
            flavors: [{name: default, resources: [{name: cpu, nominalQuota: 4}]}]
    """)
    [cq] = objects(cluster, "kueue.x-k8s.io", "ClusterQueue")
    assert cq["apiVersion"] == "kueue.x-k8s.io/v1beta2"
    assert cq["spec"]["cohortName"] == "team" and "cohort" not in cq["spec"]
    assert cq["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": "check-a"}]}
    assert cq["spec"]["flavorFungibility"]["whenCanBorrow"] == "MayStopSearch"
    assert cq["metadata"]["finalizers"] == ["kueue.x-k8s.io/resource-in-use"]
