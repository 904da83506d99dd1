"""Expansion: JobSet metadata, patches, resources, initializers, counts, gang scheduling, snapshot
(trainer.md §3.2, §3.4–§3.7, §3.9, §3.10, §3.12, §3.13)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from jobsetctl.trainer.expand import runtime_snapshot
from tests.trainer.util import (
    catalog,
    container,
    ctr,
    env_map,
    job,
    obj,
    pod_patch,
    pod_spec,
    rjob,
    run,
    runtime,
    torch_runtime,
    trainjob,
)

OWNER = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "TrainJob",
    "name": "tj",
    "uid": "u-1",
    "controller": True,
    "blockOwnerDeletion": True,
}


def test_jobset_metadata_comes_from_template_and_patches_only() -> None:
    rt = torch_runtime(template_metadata={"labels": {"a": "rt", "b": "rt"}, "annotations": {"n": "rt"}},
                       labels={"runtime-own": "x"})
    tj = trainjob("tj", uid="u-1", namespace="ml", patches=[
        {"manager": "a.io/one", "trainingRuntimeSpec": {"template": {"metadata": {"labels": {"b": "p1", "c": "p1"}}}}},
        {"manager": "a.io/two", "trainingRuntimeSpec": {"template": {"metadata": {"labels": {"c": "p2"}}}}},
    ])
    tj["metadata"]["labels"] = {"trainjob-own": "y"}
    jobset = run(tj, rt).jobset
    assert jobset["apiVersion"] == "jobset.x-k8s.io/v1alpha2"
    assert jobset["kind"] == "JobSet"
    assert jobset["metadata"] == {
        "name": "tj",
        "namespace": "ml",
        "labels": {"a": "rt", "b": "p1", "c": "p2"},
        "annotations": {"n": "rt"},
        "ownerReferences": [OWNER],
    }


def test_owner_reference_without_uid_has_an_empty_uid() -> None:
    jobset = run(trainjob("tj"), torch_runtime()).jobset
    assert jobset["metadata"]["ownerReferences"] == [OWNER | {"uid": ""}]
    assert jobset["metadata"]["namespace"] == "default"
    assert "labels" not in jobset["metadata"]


@pytest.mark.parametrize(("suspend", "expected"), [(True, True), (False, False), (None, False)])
def test_suspend_propagates_with_crd_default(suspend: bool | None, expected: bool) -> None:
    extra = {} if suspend is None else {"suspend": suspend}
    rt = torch_runtime(jobset={"suspend": True})
    assert run(trainjob(**extra), rt).jobset["spec"]["suspend"] is expected


def test_runtime_patches_example_02_predictions() -> None:
    """trainer.md §3.5 on the 02-runtime-patches shape: JobSet labels/annotations, nodeSelector merged,
    tolerations replaced, serviceAccountName set, replicated-job order kept."""
    rt = torch_runtime(jobs=[
        job("init", None, [container("init")]),
        job(pod={"nodeSelector": {"zone": "a"}, "tolerations": [{"key": "old", "operator": "Exists"}]}),
    ])
    patch = pod_patch("node", serviceAccountName="training-sa", nodeSelector={"node-type": "training"},
                      tolerations=[{"key": "training-workload", "operator": "Equal", "value": "true",
                                    "effect": "NoSchedule"}])
    patch["trainingRuntimeSpec"]["template"]["metadata"] = {
        "labels": {"team": "ml-platform"}, "annotations": {"prometheus.io/scrape": "true"},
    }
    expansion = run(trainjob(trainer={}, patches=[patch]), rt)
    spec = pod_spec(expansion, "node")
    assert spec["serviceAccountName"] == "training-sa"
    assert spec["nodeSelector"] == {"zone": "a", "node-type": "training"}
    assert spec["tolerations"] == [
        {"key": "training-workload", "operator": "Equal", "value": "true", "effect": "NoSchedule"},
    ]
    assert [j["name"] for j in expansion.jobset["spec"]["replicatedJobs"]] == ["init", "node"]
    assert expansion.jobset["metadata"]["labels"] == {"team": "ml-platform"}
    assert expansion.jobset["metadata"]["annotations"] == {"prometheus.io/scrape": "true"}


def test_later_patch_wins_on_the_same_key() -> None:
    """trainer.md §3.5: two patches on the same job/key, the later in the list wins."""
    patches = [
        pod_patch("node", "a.io/one", nodeSelector={"instance": "p4d.24xlarge"}),
        pod_patch("node", "a.io/two", nodeSelector={"instance": "p5en.48xlarge"}),
    ]
    assert pod_spec(run(trainjob(patches=patches), torch_runtime()), "node")["nodeSelector"] == {
        "instance": "p5en.48xlarge"
    }


def test_patch_job_and_pod_template_metadata_are_merged() -> None:
    patch = {"manager": "a.io/x", "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [{
        "name": "node",
        "template": {"metadata": {"labels": {"job": "l"}},
                     "spec": {"template": {"metadata": {"annotations": {"pod": "a"}}}}},
    }]}}}}
    node = rjob(run(trainjob(patches=[patch]), torch_runtime()), "node")
    assert node["template"]["metadata"]["labels"] == {
        "trainer.kubeflow.org/trainjob-ancestor-step": "trainer", "job": "l",
    }
    assert node["template"]["spec"]["template"]["metadata"] == {"annotations": {"pod": "a"}}


def test_resources_per_node_merged_into_node_container() -> None:
    """trainer.md §3.6 example: runtime requests{cpu:1} + TrainJob limits{gpu:4}."""
    rt = torch_runtime(jobs=[job(containers=[container(resources={"requests": {"cpu": "1"}})])])
    tj = trainjob(trainer={"resourcesPerNode": {"limits": {"nvidia.com/gpu": 4}}})
    assert ctr(run(tj, rt), "node")["resources"] == {"limits": {"nvidia.com/gpu": "4"}, "requests": {"cpu": "1"}}


def test_quirk_resource_claims_are_dropped_by_the_merge() -> None:
    """[derived] newRuntimeInfo only writes merged limits/requests back: claims disappear."""
    rt = torch_runtime(jobs=[job(containers=[container(resources={"claims": [{"name": "gpu"}],
                                                                   "requests": {"cpu": "0.5"}})])])
    tj = trainjob(trainer={"resourcesPerNode": {"claims": [{"name": "other"}], "requests": {"memory": "1Gi"}}})
    assert ctr(run(tj, rt), "node")["resources"] == {"requests": {"cpu": "500m", "memory": "1Gi"}}


def test_quirk_10_resources_per_node_ignored_without_ml_policy() -> None:
    rt = runtime(jobs=[job(containers=[container(resources={"requests": {"cpu": "1"}})])])
    tj = trainjob(trainer={"resourcesPerNode": {"requests": {"cpu": "8"}}})
    assert ctr(run(tj, rt), "node")["resources"] == {"requests": {"cpu": "1"}}
    rt["spec"]["mlPolicy"] = {"numNodes": 1}
    assert ctr(run(tj, rt), "node")["resources"] == {"requests": {"cpu": "8"}}


def test_quirk_12_no_node_container_means_trainer_fields_are_not_applied() -> None:
    rt = torch_runtime(jobs=[job(containers=[container("main", resources={"requests": {"cpu": "1"}})])])
    tj = trainjob(trainer={"image": "mine", "command": ["x"], "env": [{"name": "E", "value": "1"}],
                           "resourcesPerNode": {"requests": {"cpu": "4"}}, "numNodes": 2})
    expansion = run(tj, rt)
    assert pod_spec(expansion, "node")["containers"] == [
        {"name": "main", "image": "img", "resources": {"requests": {"cpu": "1"}}},
    ]
    # The count still follows numNodes: the PodSet exists, only its node container is missing.
    assert rjob(expansion, "node")["template"]["spec"]["parallelism"] == 2


def test_runtime_args_kept_when_only_command_replaced() -> None:
    rt = torch_runtime(jobs=[job(containers=[container(command=["a"], args=["--x"])])])
    assert ctr(run(trainjob(trainer={"command": ["b"]}), rt), "node")["args"] == ["--x"]
    assert ctr(run(trainjob(trainer={"command": ["b"], "args": ["--y"]}), rt), "node")["args"] == ["--y"]


def test_replicas_forced_to_one_for_ancestor_jobs_only() -> None:
    rt = torch_runtime(jobs=[
        job("dataset-initializer", "dataset-initializer", [container("dataset-initializer")], replicas=3),
        job("aux", None, [container("aux")], replicas=2),
        job(replicas=4),
    ])
    jobs = {j["name"]: j["replicas"] for j in run(trainjob(), rt).jobset["spec"]["replicatedJobs"]}
    assert jobs == {"dataset-initializer": 1, "aux": 2, "node": 1}


def test_parallelism_and_completions_for_every_replicated_job() -> None:
    rt = torch_runtime(ml_policy={"numNodes": 4, "torch": {}},
                       jobs=[job("aux", None, [container("aux")], job_spec={"parallelism": 0}), job()])
    expansion = run(trainjob(trainer={}), rt)
    # Counts are clamped to >= 1 at creation (aux's parallelism 0), then numNodes-less trainer keeps 4.
    assert rjob(expansion, "aux")["template"]["spec"]["parallelism"] == 1
    assert rjob(expansion, "node")["template"]["spec"]["completions"] == 4


def test_quirk_5_num_nodes_zero_passes_through() -> None:
    expansion = run(trainjob(trainer={"numNodes": 0}), torch_runtime())
    assert rjob(expansion, "node")["template"]["spec"]["parallelism"] == 0
    assert rjob(expansion, "node")["template"]["spec"]["completions"] == 0
    assert env_map(ctr(expansion, "node"))["PET_NNODES"] == "0"


def test_everything_else_in_the_template_is_copied_unchanged() -> None:
    extras = {"network": {"subdomain": "s"}, "successPolicy": {"operator": "Any"}, "ttlSecondsAfterFinished": 5,
              "failurePolicy": {"maxRestarts": 2}, "startupPolicy": {"startupPolicyOrder": "AnyOrder"}}
    spec = run(trainjob(), torch_runtime(jobset=extras)).jobset["spec"]
    assert {k: spec[k] for k in extras} == extras


# --- initializers (§3.9) -----------------------------------------------------------------------


def _init_runtime() -> dict[str, Any]:
    return catalog("torchtune-llama3.2-1b")


def test_initializer_storage_uri_env_and_secret() -> None:
    tj = trainjob("ft", "torchtune-llama3.2-1b", initializer={
        "dataset": {"storageUri": "s3://bucket/data", "env": [{"name": "X", "value": "1"}], "secretRef": {"name": "creds"}},
        "model": {"storageUri": ""},
    })
    expansion = run(tj, _init_runtime())
    dataset = ctr(expansion, "dataset-initializer", "dataset-initializer")
    assert dataset["env"] == [{"name": "STORAGE_URI", "value": "s3://bucket/data"}, {"name": "X", "value": "1"}]
    assert dataset["envFrom"] == [{"secretRef": {"name": "creds"}}]
    model = ctr(expansion, "model-initializer", "model-initializer")
    # An empty storageUri is injected as empty.
    assert model["env"] == [{"name": "STORAGE_URI", "value": ""}]


def test_initializer_left_alone_without_spec_initializer() -> None:
    expansion = run(trainjob("ft", "torchtune-llama3.2-1b"), _init_runtime())
    assert ctr(expansion, "dataset-initializer", "dataset-initializer")["env"] == [
        {"name": "STORAGE_URI", "value": "hf://tatsu-lab/alpaca"},
    ]
    depends = rjob(expansion, "node")["dependsOn"]
    assert depends == [{"name": "dataset-initializer", "status": "Complete"},
                       {"name": "model-initializer", "status": "Complete"}]


def test_quirk_1_builder_finds_initializers_by_ancestor_label() -> None:
    """The builder uses the ancestor label (validation uses the job name)."""
    rt = torch_runtime(jobs=[job("fetch", "dataset-initializer", [container("dataset-initializer")]), job()])
    tj = trainjob(initializer={"dataset": {"storageUri": "hf://x/y"}})
    assert env_map(ctr(run(tj, rt), "fetch", "dataset-initializer")) == {"STORAGE_URI": "hf://x/y"}


# --- gang scheduling (§3.10) -------------------------------------------------------------------


def _gang_runtime(policy: dict[str, Any]) -> dict[str, Any]:
    return torch_runtime(pod_group_policy=policy, jobs=[
        job("dataset-initializer", "dataset-initializer",
            [container("dataset-initializer", resources={"requests": {"cpu": "250m", "memory": "512Mi"}})]),
        job(containers=[container(resources={"requests": {"cpu": "1", "memory": "1Gi"},
                                             "limits": {"nvidia.com/gpu": 1}})],
            pod={"priorityClassName": "high"}),
    ])


def test_coscheduling_pod_group_and_pod_labels() -> None:
    expansion = run(trainjob("tj", trainer={"numNodes": 3}, uid="u-1"), _gang_runtime({"coscheduling": {}}))
    group = obj(expansion, "PodGroup", "tj")
    assert group["apiVersion"] == "scheduling.x-k8s.io/v1alpha1"
    # minMember counts the initializer too; limits (the GPU) are not requests.
    assert group["spec"] == {"minMember": 4, "minResources": {"cpu": "3250m", "memory": "3584Mi"},
                             "scheduleTimeoutSeconds": 60}
    assert group["metadata"]["ownerReferences"] == [OWNER]
    for name in ("dataset-initializer", "node"):
        labels = rjob(expansion, name)["template"]["spec"]["template"]["metadata"]["labels"]
        assert labels == {"scheduling.x-k8s.io/pod-group": "tj"}


def test_volcano_pod_group_queue_priority_topology_and_annotations() -> None:
    rt = _gang_runtime({"volcano": {"networkTopology": {"mode": "soft"}}})
    rt["spec"]["template"]["metadata"] = {"annotations": {"scheduling.volcano.sh/queue-name": "q1"}}
    expansion = run(trainjob("tj", trainer={"numNodes": 2}), rt)
    group = obj(expansion, "PodGroup", "tj")
    assert group["apiVersion"] == "scheduling.volcano.sh/v1beta1"
    assert group["spec"] == {
        "minMember": 3,
        "minResources": {"cpu": "2250m", "memory": "2560Mi"},
        "queue": "q1",
        "priorityClassName": "high",
        "networkTopology": {"mode": "soft", "highestTierAllowed": 1},
    }
    annotations = rjob(expansion, "node")["template"]["spec"]["template"]["metadata"]["annotations"]
    assert annotations == {"scheduling.k8s.io/group-name": "tj"}


def test_quirk_7_both_gang_policies_emit_both_pod_groups() -> None:
    expansion = run(trainjob("tj"), _gang_runtime({"coscheduling": {"scheduleTimeoutSeconds": 5}, "volcano": {}}))
    assert [o["apiVersion"] for o in expansion.objects] == ["scheduling.x-k8s.io/v1alpha1", "scheduling.volcano.sh/v1beta1"]
    assert expansion.objects[0]["spec"]["scheduleTimeoutSeconds"] == 5
    assert "minResources" in expansion.objects[1]["spec"]


def test_gang_with_no_requests_has_empty_min_resources() -> None:
    expansion = run(trainjob("tj"), torch_runtime(pod_group_policy={"coscheduling": {}}))
    assert obj(expansion, "PodGroup", "tj")["spec"]["minResources"] == {}


def test_single_pod_requests_follow_kubernetes_pod_requests() -> None:
    """Init containers max'ed, sidecars added, overhead added (trainer.md §3.7)."""
    pod = {
        "initContainers": [
            {"name": "big-init", "image": "i", "resources": {"requests": {"cpu": "4"}}},
            {"name": "sidecar", "image": "i", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}},
        ],
        "overhead": {"cpu": "100m"},
    }
    rt = torch_runtime(pod_group_policy={"coscheduling": {}},
                       jobs=[job(containers=[container(resources={"requests": {"cpu": "2"}})], pod=pod)])
    spec = obj(run(trainjob("tj"), rt), "PodGroup", "tj")["spec"]
    # max(2 + 1 sidecar, 4 init) + 0.1 overhead
    assert spec["minResources"] == {"cpu": "4100m"}


# --- snapshot and determinism ------------------------------------------------------------------


def test_runtime_snapshot_config_map() -> None:
    rt = catalog("torch-distributed")
    snapshot = runtime_snapshot(trainjob("tj", uid="u-1"), rt)
    assert snapshot["apiVersion"] == "v1" and snapshot["kind"] == "ConfigMap"
    assert snapshot["metadata"] == {"name": "tj-runtime-snapshot", "namespace": "default", "ownerReferences": [OWNER]}
    assert yaml.safe_load(snapshot["data"]["runtime"]) == rt


def test_expansion_is_deterministic_and_pure() -> None:
    rt = _gang_runtime({"coscheduling": {}, "volcano": {}})
    tj = trainjob("tj", trainer={"numNodes": 2, "env": [{"name": "A", "value": "1"}]},
                  patches=[pod_patch("node", nodeSelector={"a": "b"})])
    before = copy.deepcopy((tj, rt))
    first, second = run(tj, rt), run(tj, rt)
    assert (tj, rt) == before
    assert first.jobset == second.jobset
    assert first.objects == second.objects


def test_managed_by_another_controller_is_skipped() -> None:
    expansion = run(trainjob(managedBy="kueue.x-k8s.io/multikueue"), torch_runtime())
    assert expansion.skipped is not None and "multikueue" in expansion.skipped
    assert not expansion.applied


@pytest.mark.parametrize(
    "odd",
    [
        {"spec": {"runtimeRef": {"name": "rt"}, "trainer": {"numNodes": 0, "env": "not-a-list"}}},
        {"spec": {"runtimeRef": {"name": "rt"}, "trainer": None, "runtimePatches": [None, {"manager": "a/b"}]}},
        {"spec": None},
        {},
    ],
)
def test_expand_never_raises_on_odd_input(odd: dict[str, Any]) -> None:
    tj = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": "x"}, **odd}
    for rt in (torch_runtime(jobs=[job(containers=[])]), catalog("deepspeed-distributed"),
               runtime(jobs=[{"name": "bare"}]), {"spec": {"template": {"spec": {"replicatedJobs": "x"}}}}):
        expansion = run(tj, rt)
        assert expansion.jobset["kind"] == "JobSet"


@pytest.mark.parametrize(
    ("kind", "name", "trainjob_suspend", "existing_suspend", "expected"),
    [
        ("JobSet", "tj", False, None, True),
        ("JobSet", "tj", False, False, False),
        ("JobSet", "tj", True, False, True),
        ("JobSet", "tj", False, True, True),
        ("PodGroup", "tj", False, False, False),
        ("PodGroup", "tj", True, False, True),
        ("Secret", "tj-mpi-ssh-auth", True, False, False),
        ("ConfigMap", "tj-mpi-hostfile", False, False, True),
    ],
)
def test_reapply_rules(kind: str, name: str, trainjob_suspend: bool, existing_suspend: bool | None, expected: bool) -> None:
    """trainer.md §3.13 step 7, §3.10, §3.8.4: what the controller re-applies over existing objects."""
    from jobsetctl.trainer.expand.apply import should_apply

    obj_ = {"kind": kind, "metadata": {"name": name}, "spec": {}}
    existing = None if existing_suspend is None else {"kind": kind, "spec": {"suspend": existing_suspend}}
    assert should_apply(obj_, trainjob(suspend=trainjob_suspend), existing) is expected
