"""Golden tests of what the JobSet controller renders: child Jobs (jobset.md §3.1, §3.2, §3.5, §3.7),
the headless Service (§3.3) and PVCs (§3.4). Keys are spelled out literally here (not through
``jobsetctl.jobset.api``) so that a typo in a constant fails a test."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from jobsetctl.jobset import render
from tests.jobset_controller.harness import (
    get_job,
    get_jobset,
    jobset,
    make_cluster,
    rjob,
    submit,
    timeline,
)

UID = "0b5e0e5c-0000-4000-8000-000000000001"
OWNER = {
    "apiVersion": "jobset.x-k8s.io/v1alpha2",
    "kind": "JobSet",
    "name": "test-jobset",
    "uid": UID,
    "controller": True,
    "blockOwnerDeletion": True,
}


def admitted(obj: dict[str, Any], gates: str = "") -> dict[str, Any]:
    """The JobSet as the API server stores it (CRD and webhook defaults applied), with a fixed UID."""
    cluster = make_cluster(gates)
    result = cluster.submit(copy.deepcopy(obj))
    assert result.ok and result.obj is not None, result.message()
    stored = copy.deepcopy(result.obj)
    stored["metadata"]["uid"] = UID
    return stored


def default_example() -> dict[str, Any]:
    """jobset.md §3.5: ``test-jobset`` / ``replicated-job`` × 2, defaults applied."""
    return jobset(rjob("replicated-job", 2, driven=False), name="test-jobset")


def keys(index: int) -> dict[str, str]:
    return {
        "jobset.sigs.k8s.io/global-replicas": "2",
        "jobset.sigs.k8s.io/group-name": "default",
        "jobset.sigs.k8s.io/group-replicas": "2",
        "jobset.sigs.k8s.io/job-global-index": str(index),
        "jobset.sigs.k8s.io/job-group-index": str(index),
        "jobset.sigs.k8s.io/job-index": str(index),
        "jobset.sigs.k8s.io/job-key": {
            0: "027791c2c0a79daacbc05ab1512c28988581229f",
            1: "9cb00a8d9c038e5b48cf2bbb8ef93e14919303c0",
        }[index],
        "jobset.sigs.k8s.io/jobset-name": "test-jobset",
        "jobset.sigs.k8s.io/jobset-uid": UID,
        "jobset.sigs.k8s.io/replicatedjob-name": "replicated-job",
        "jobset.sigs.k8s.io/replicatedjob-replicas": "2",
        "jobset.sigs.k8s.io/restart-attempt": "0",
    }


@pytest.mark.parametrize("index", [0, 1])
def test_default_render_example_child_job_golden(index: int) -> None:
    """jobset.md §3.5, every field of the rendered Job (the job-key of index 0 is the §3.2 example)."""
    js = admitted(default_example())
    job = render.child_job(js, js["spec"]["replicatedJobs"][0], index, restart_attempt=0)
    assert job == {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": f"test-jobset-replicated-job-{index}",
            "namespace": "default",
            "labels": keys(index),
            "annotations": keys(index),
            "ownerReferences": [OWNER],
        },
        "spec": {
            "template": {
                "metadata": {"labels": keys(index), "annotations": keys(index)},
                "spec": {
                    "containers": [{"name": "main", "image": "busybox"}],
                    "restartPolicy": "OnFailure",
                    "subdomain": "test-jobset",
                },
            },
            "completionMode": "Indexed",
            "suspend": False,
        },
    }


def test_default_render_example_headless_service_golden() -> None:
    js = admitted(default_example())
    assert render.headless_service(js) == {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "test-jobset", "namespace": "default", "ownerReferences": [OWNER]},
        "spec": {
            "selector": {"jobset.sigs.k8s.io/jobset-name": "test-jobset"},
            "clusterIP": "None",
            "publishNotReadyAddresses": True,
        },
    }


def test_default_render_example_through_the_controller() -> None:
    """The controller creates the Service and both Jobs, with the rendered labels, at t=0."""
    cluster = make_cluster()
    submit(cluster, default_example())
    assert timeline(cluster, ("JobSet", "Job", "Service")) == [
        (0.0, "JobSet", "test-jobset", "Created", None),
        (0.0, "Service", "test-jobset", "Created", None),
        (0.0, "Job", "test-jobset-replicated-job-0", "Created", None),
        (0.0, "Job", "test-jobset-replicated-job-1", "Created", None),
    ]
    js = get_jobset(cluster, "test-jobset")
    uid = js["metadata"]["uid"]
    for index in (0, 1):
        job = get_job(cluster, f"test-jobset-replicated-job-{index}")
        expected = {**keys(index), "jobset.sigs.k8s.io/jobset-uid": uid}
        assert job["metadata"]["labels"] == expected
        assert job["metadata"]["annotations"] == expected
        # The API server adds the Job's selector labels (controller-uid, job-name) to the pod template.
        pod_labels = job["spec"]["template"]["metadata"]["labels"]
        assert {k: v for k, v in pod_labels.items() if k.startswith("jobset.sigs.k8s.io/")} == expected
        assert job["spec"]["template"]["metadata"]["annotations"] == expected
        assert job["spec"]["suspend"] is False
        assert job["spec"]["completionMode"] == "Indexed"
        assert job["spec"]["template"]["spec"]["restartPolicy"] == "OnFailure"
        assert job["spec"]["template"]["spec"]["subdomain"] == "test-jobset"
        assert job["metadata"]["ownerReferences"] == [{**OWNER, "uid": uid}]
    assert js["status"] == {
        "restarts": 0,
        "replicatedJobsStatus": [
            {"name": "replicated-job", "ready": 0, "succeeded": 0, "failed": 0, "active": 0, "suspended": 0},
        ],
    }


def test_group_and_global_indices_across_interleaved_groups() -> None:
    """global-index counts every earlier replicated job; group-index only the same group's (§3.2)."""
    js = admitted(jobset(
        rjob("a", 2, group="x"), rjob("b", 3, group="y"), rjob("c", 1, group="x"), name="test-jobset",
    ))
    rjobs = js["spec"]["replicatedJobs"]
    job = render.child_job(js, rjobs[2], 0, restart_attempt=4)
    labels = job["metadata"]["labels"]
    assert {k: labels[k] for k in (
        "jobset.sigs.k8s.io/global-replicas", "jobset.sigs.k8s.io/job-global-index",
        "jobset.sigs.k8s.io/group-name", "jobset.sigs.k8s.io/group-replicas",
        "jobset.sigs.k8s.io/job-group-index", "jobset.sigs.k8s.io/restart-attempt",
    )} == {
        "jobset.sigs.k8s.io/global-replicas": "6",
        "jobset.sigs.k8s.io/job-global-index": "5",
        "jobset.sigs.k8s.io/group-name": "x",
        "jobset.sigs.k8s.io/group-replicas": "3",
        "jobset.sigs.k8s.io/job-group-index": "2",
        "jobset.sigs.k8s.io/restart-attempt": "4",
    }
    b1 = render.child_job(js, rjobs[1], 1, restart_attempt=0)["metadata"]["labels"]
    assert (b1["jobset.sigs.k8s.io/job-global-index"], b1["jobset.sigs.k8s.io/job-group-index"]) == ("3", "1")


def test_template_labels_merge_and_jobset_keys_win() -> None:
    """Job metadata copies the Job template's labels; pods get only their own plus the JobSet keys."""
    js = admitted(jobset(
        rjob(
            "rj",
            job_metadata={"labels": {"team": "a", "jobset.sigs.k8s.io/job-index": "99"}, "annotations": {"note": "x"}},
            pod_metadata={"labels": {"app": "trainer"}},
        ),
        name="test-jobset",
    ))
    job = render.child_job(js, js["spec"]["replicatedJobs"][0], 0, restart_attempt=0)
    assert job["metadata"]["labels"]["team"] == "a"
    assert job["metadata"]["labels"]["jobset.sigs.k8s.io/job-index"] == "0"
    assert job["metadata"]["annotations"]["note"] == "x"
    pod_labels = job["spec"]["template"]["metadata"]["labels"]
    assert pod_labels["app"] == "trainer"
    assert "team" not in pod_labels
    assert list(pod_labels) == sorted(pod_labels), "maps are serialised sorted, as Go does"


def test_restart_job_gate_adds_job_restart_attempt_label() -> None:
    js = admitted(default_example(), gates="RestartJob=true")
    job = render.child_job(js, js["spec"]["replicatedJobs"][0], 1, restart_attempt=2, job_restart_attempt=3)
    assert job["metadata"]["labels"]["jobset.sigs.k8s.io/job-restart-attempt"] == "3"
    assert job["spec"]["template"]["metadata"]["annotations"]["jobset.sigs.k8s.io/job-restart-attempt"] == "3"
    plain = render.child_job(js, js["spec"]["replicatedJobs"][0], 1, restart_attempt=2)
    assert "jobset.sigs.k8s.io/job-restart-attempt" not in plain["metadata"]["labels"]


def test_coordinator_label_on_every_job_and_pod() -> None:
    js = admitted(jobset(
        rjob("driver", 1), rjob("workers", 2, completions=4, parallelism=4),
        name="test-jobset",
        coordinator={"replicatedJob": "workers", "jobIndex": 1, "podIndex": 3},
        network={"subdomain": "net"},
    ))
    for rj in js["spec"]["replicatedJobs"]:
        job = render.child_job(js, rj, 0, restart_attempt=0)
        assert job["metadata"]["labels"]["jobset.sigs.k8s.io/coordinator"] == "test-jobset-workers-1-3.net"
        assert job["spec"]["template"]["metadata"]["annotations"]["jobset.sigs.k8s.io/coordinator"] == (
            "test-jobset-workers-1-3.net"
        )
        assert job["spec"]["template"]["spec"]["subdomain"] == "net"
    assert render.headless_service(js)["metadata"]["name"] == "net"  # type: ignore[index]


def test_exclusive_topology_annotation_replicated_job_level_wins() -> None:
    js = admitted(jobset(
        rjob("rj", job_metadata={"annotations": {"alpha.jobset.sigs.k8s.io/exclusive-topology": "rack"}}),
        name="test-jobset",
        annotations={"alpha.jobset.sigs.k8s.io/exclusive-topology": "zone"},
    ))
    job = render.child_job(js, js["spec"]["replicatedJobs"][0], 0, restart_attempt=0)
    assert job["metadata"]["annotations"]["alpha.jobset.sigs.k8s.io/exclusive-topology"] == "rack"
    assert job["spec"]["template"]["metadata"]["annotations"]["alpha.jobset.sigs.k8s.io/exclusive-topology"] == "rack"
    assert "alpha.jobset.sigs.k8s.io/exclusive-topology" not in job["metadata"]["labels"], "annotation only"
    assert "nodeSelector" not in job["spec"]["template"]["spec"]


def test_node_selector_strategy_adds_namespaced_job_selector_and_toleration() -> None:
    """jobset.md §3.7: both annotations on the JobSet → nodeSelector ``<ns>_<job>`` and a toleration."""
    js = admitted(jobset(
        rjob("rj", pod_spec={"nodeSelector": {"pool": "a"}, "tolerations": [{"key": "gpu", "operator": "Exists"}]}),
        name="test-jobset",
        namespace="team",
        annotations={
            "alpha.jobset.sigs.k8s.io/exclusive-topology": "cloud.google.com/gke-nodepool",
            "alpha.jobset.sigs.k8s.io/node-selector": "true",
        },
    ))
    job = render.child_job(js, js["spec"]["replicatedJobs"][0], 0, restart_attempt=0)
    pod_spec = job["spec"]["template"]["spec"]
    assert pod_spec["nodeSelector"] == {
        "alpha.jobset.sigs.k8s.io/namespaced-job": "team_test-jobset-rj-0",
        "pool": "a",
    }
    assert pod_spec["tolerations"] == [
        {"key": "gpu", "operator": "Exists"},
        {"key": "alpha.jobset.sigs.k8s.io/no-schedule", "operator": "Exists", "effect": "NoSchedule"},
    ]
    pod_annotations = job["spec"]["template"]["metadata"]["annotations"]
    assert pod_annotations["alpha.jobset.sigs.k8s.io/node-selector"] == "true"


def test_node_selector_strategy_split_across_levels_quirk() -> None:
    """Quirk (derived from code): the strategy is decided on the *Job's* annotations, which include the
    replicated job's template annotations as written; a node-selector flag there plus a JobSet-level
    exclusive key turns the strategy on, though the pod template never gets the node-selector flag."""
    js = admitted(jobset(
        rjob("rj", job_metadata={"annotations": {"alpha.jobset.sigs.k8s.io/node-selector": "true"}}),
        name="test-jobset",
        annotations={"alpha.jobset.sigs.k8s.io/exclusive-topology": "rack"},
    ))
    job = render.child_job(js, js["spec"]["replicatedJobs"][0], 0, restart_attempt=0)
    pod_spec = job["spec"]["template"]["spec"]
    assert pod_spec["nodeSelector"] == {"alpha.jobset.sigs.k8s.io/namespaced-job": "default_test-jobset-rj-0"}
    pod_annotations = job["spec"]["template"]["metadata"]["annotations"]
    assert pod_annotations["alpha.jobset.sigs.k8s.io/exclusive-topology"] == "rack"
    assert "alpha.jobset.sigs.k8s.io/node-selector" not in pod_annotations


def test_dns_hostnames_disabled_no_subdomain_no_service_and_user_subdomain_overwritten() -> None:
    off = admitted(jobset(rjob("rj", pod_spec={"subdomain": "mine"}), name="test-jobset",
                          network={"enableDNSHostnames": False}))
    job = render.child_job(off, off["spec"]["replicatedJobs"][0], 0, restart_attempt=0)
    assert job["spec"]["template"]["spec"]["subdomain"] == "mine"
    assert render.headless_service(off) is None
    on = admitted(jobset(rjob("rj", pod_spec={"subdomain": "mine"}), name="test-jobset",
                         network={"publishNotReadyAddresses": False}))
    job = render.child_job(on, on["spec"]["replicatedJobs"][0], 0, restart_attempt=0)
    assert job["spec"]["template"]["spec"]["subdomain"] == "test-jobset"
    service = render.headless_service(on)
    assert service is not None and "publishNotReadyAddresses" not in service["spec"], "false is omitempty"


def test_suspended_jobset_renders_suspended_jobs() -> None:
    js = admitted(jobset(rjob("rj"), name="test-jobset", suspend=True))
    assert render.child_job(js, js["spec"]["replicatedJobs"][0], 0, restart_attempt=0)["spec"]["suspend"] is True


def vcp_jobset() -> dict[str, Any]:
    mount = {"volumeMounts": [{"name": "initializer", "mountPath": "/init"}]}
    ckpt = {"volumeMounts": [{"name": "checkpoints", "mountPath": "/ckpt"}]}
    return jobset(
        rjob("init", pod_spec={"containers": [{"name": "main", "image": "busybox", **mount}]}),
        rjob("node", 2, pod_spec={
            "containers": [{"name": "main", "image": "busybox", **ckpt}],
            "initContainers": [{"name": "pre", "image": "busybox", **mount}],
        }),
        name="test-jobset",
        volumeClaimPolicies=[
            {"templates": [{"metadata": {"name": "initializer", "labels": {"tier": "a"}, "annotations": {"n": "1"}},
                            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]},
            {"templates": [{"metadata": {"name": "checkpoints"},
                            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}],
             "retentionPolicy": {"whenDeleted": "Retain"}},
        ],
    )


def test_pvcs_delete_owned_retain_unowned_golden() -> None:
    js = admitted(vcp_jobset())
    assert render.volume_claims(js) == [
        [{
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {
                "name": "initializer-test-jobset",
                "namespace": "default",
                "labels": {"jobset.sigs.k8s.io/jobset-name": "test-jobset", "tier": "a"},
                "annotations": {"n": "1"},
                "ownerReferences": [OWNER],
            },
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        }],
        [{
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {
                "name": "checkpoints-test-jobset",
                "namespace": "default",
                "labels": {"jobset.sigs.k8s.io/jobset-name": "test-jobset"},
            },
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        }],
    ]


def test_pvc_volumes_only_for_jobs_that_mount_them() -> None:
    js = admitted(vcp_jobset())
    init, node = js["spec"]["replicatedJobs"]
    assert render.child_job(js, init, 0, restart_attempt=0)["spec"]["template"]["spec"]["volumes"] == [
        {"name": "initializer", "persistentVolumeClaim": {"claimName": "initializer-test-jobset"}},
    ]
    assert render.child_job(js, node, 1, restart_attempt=0)["spec"]["template"]["spec"]["volumes"] == [
        {"name": "initializer", "persistentVolumeClaim": {"claimName": "initializer-test-jobset"}},
        {"name": "checkpoints", "persistentVolumeClaim": {"claimName": "checkpoints-test-jobset"}},
    ]


def test_pvcs_created_before_jobs_even_when_suspended() -> None:
    cluster = make_cluster()
    obj = vcp_jobset()
    obj["spec"]["suspend"] = True
    submit(cluster, obj)
    assert timeline(cluster, ("Service", "PersistentVolumeClaim", "Job")) == [
        (0.0, "Service", "test-jobset", "Created", None),
        (0.0, "PersistentVolumeClaim", "initializer-test-jobset", "Created", None),
        (0.0, "PersistentVolumeClaim", "checkpoints-test-jobset", "Created", None),
        (0.0, "Job", "test-jobset-init-0", "Created", None),
        (0.0, "Job", "test-jobset-node-0", "Created", None),
        (0.0, "Job", "test-jobset-node-1", "Created", None),
    ]
    assert all(get_job(cluster, n)["spec"]["suspend"] is True for n in ("test-jobset-init-0", "test-jobset-node-1"))


def test_retained_pvc_survives_jobset_deletion() -> None:
    cluster = make_cluster()
    submit(cluster, vcp_jobset())
    cluster.api.delete(get_jobset(cluster, "test-jobset"), propagation="Background")
    cluster.manager.settle()
    remaining = [o["metadata"]["name"] for o in cluster.api.all_objects() if o.get("kind") == "PersistentVolumeClaim"]
    assert remaining == ["checkpoints-test-jobset"]


def test_existing_service_of_another_owner_is_not_adopted() -> None:
    cluster = make_cluster()
    foreign = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "test-jobset", "namespace": "default"},
               "spec": {"selector": {"app": "x"}}}
    submit(cluster, foreign)
    submit(cluster, default_example())
    service = cluster.api.get("", "Service", "default", "test-jobset")
    assert service is not None and service["spec"] == {"selector": {"app": "x"}}
    assert "ownerReferences" not in service["metadata"]
