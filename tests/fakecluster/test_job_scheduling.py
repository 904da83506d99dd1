"""KEP-5547: the Job controller's Workload and PodGroup (scheduling.md §1.5), on 1.36 and 1.37."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jobsetctl.fakecluster.cluster import FakeCluster
from jobsetctl.fakecluster.controllers.job_scheduling import (
    fnv32a,
    pod_group_name,
    safe_encode,
    workload_name,
)
from tests.fakecluster.harness import ClusterFactory, Timeline, job, kube_events, submit, update_spec

GATES = "WorkloadWithJob=true,GenericWorkload=true"


def objects(fake: FakeCluster, kind: str) -> list[dict[str, Any]]:
    return fake.api.list("scheduling.k8s.io", kind)


def gang_job(**fields: Any) -> dict[str, Any]:
    return job("train", parallelism=4, completions=4, indexed=True, **fields)


def test_fnv32a_matches_the_reference_vectors() -> None:
    assert fnv32a(b"") == 0x811C9DC5
    assert fnv32a(b"a") == 0xE40C292C
    assert fnv32a(b"foobar") == 0xBF9CF968


def test_safe_encode_maps_decimal_digits() -> None:
    assert safe_encode("0123456789") == "456789bcdf"


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=300), st.uuids())
def test_workload_names_fit_a_dns_subdomain(job_name: str, uid: object) -> None:
    name = workload_name(job_name, str(uid))
    assert len(name) <= 253
    assert name.startswith(job_name[:200])


@given(st.text(alphabet="abc", min_size=1, max_size=300), st.text(alphabet="xyz", min_size=1, max_size=300))
def test_pod_group_names_fit_and_keep_a_short_part_whole(workload: str, template: str) -> None:
    name = pod_group_name(workload, template)
    assert len(name) <= 253
    if len(workload) <= 120:
        assert name.startswith(workload + "-")


def test_1_36_gang_job_gets_a_v1alpha2_workload_and_pod_group_before_its_pods(make_cluster: ClusterFactory) -> None:
    """Creation order Workload → PodGroup → Pods (scheduling.md §1.4, §1.5), so that the scheduler's
    PreEnqueue (§1.3) finds the group of the first pod."""
    fake = make_cluster("1.36", GATES, simulate=False)
    created = submit(fake, gang_job())
    fake.run(0)
    uid = created["metadata"]["uid"]
    wl_name = workload_name("train", uid)
    pg_name = pod_group_name(wl_name, "train-pgt-0")
    assert Timeline(fake).events() == [
        (0, "Job", "train", "Created", None),
        (0, "Workload", wl_name, "Created", None),
        (0, "PodGroup", pg_name, "Created", None),
    ] + [(0, "Pod", f"train-{i}-*1", "Created", None) for i in range(4)]
    job_owner = {"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": uid, "controller": True,
                 "blockOwnerDeletion": True}
    (workload,) = objects(fake, "Workload")
    assert workload["apiVersion"] == "scheduling.k8s.io/v1alpha2"
    assert workload["metadata"]["ownerReferences"] == [job_owner]
    assert workload["spec"]["controllerRef"] == {"apiGroup": "batch", "kind": "Job", "name": "train"}
    assert workload["spec"]["podGroupTemplates"][0]["name"] == "train-pgt-0"
    assert workload["spec"]["podGroupTemplates"][0]["schedulingPolicy"] == {"gang": {"minCount": 4}}
    (group,) = objects(fake, "PodGroup")
    wl_uid = workload["metadata"]["uid"]
    assert group["metadata"]["ownerReferences"] == [job_owner, {
        "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload", "name": wl_name, "uid": wl_uid}]
    assert group["spec"]["podGroupTemplateRef"] == {"workload": {"workloadName": wl_name,
                                                                 "podGroupTemplateName": "train-pgt-0"}}
    assert group["spec"]["schedulingPolicy"] == {"gang": {"minCount": 4}}
    for pod in fake.api.list("", "Pod"):
        assert pod["spec"]["schedulingGroup"] == {"podGroupName": pg_name}
        assert pod["metadata"]["ownerReferences"][1] == {
            "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "name": pg_name,
            "uid": group["metadata"]["uid"]}
    assert [e[4] for e in kube_events(fake, "Job")][:1] == ["WorkloadCreated"]


@pytest.mark.parametrize("fields", [
    {"parallelism": 1, "completions": 1, "completionMode": "Indexed"},
    {"parallelism": 4, "completions": 4},
    {"parallelism": 4, "completions": 8, "completionMode": "Indexed"},
])
def test_1_36_only_gang_candidates_get_objects(make_cluster: ClusterFactory, fields: dict[str, Any]) -> None:
    fake = make_cluster("1.36", GATES, simulate=False)
    manifest = job("train")
    manifest["spec"].update(fields)
    submit(fake, manifest)
    fake.run(0)
    assert objects(fake, "Workload") == [] and objects(fake, "PodGroup") == []
    assert all("schedulingGroup" not in p["spec"] for p in fake.api.list("", "Pod"))


def test_no_objects_without_the_gate_or_with_a_template_scheduling_group(make_cluster: ClusterFactory) -> None:
    fake = make_cluster("1.36", "GenericWorkload=true", simulate=False)
    submit(fake, gang_job())
    fake.run(0)
    assert objects(fake, "Workload") == []
    fake = make_cluster("1.37", GATES, simulate=False)
    submit(fake, {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "mine"},
                  "spec": {"schedulingPolicy": {"basic": {}}}})
    submit(fake, gang_job(pod_spec={"schedulingGroup": {"podGroupName": "mine"}}))
    fake.run(0)
    assert objects(fake, "Workload") == []
    assert [p["spec"]["schedulingGroup"] for p in fake.api.list("", "Pod")] == [{"podGroupName": "mine"}] * 4


def test_1_37_workload_is_basic_unless_the_job_asks_for_a_gang(make_cluster: ClusterFactory) -> None:
    # Without TopologyAwareWorkloadScheduling the API server would drop the topology constraint.
    fake = make_cluster("1.37", GATES + ",TopologyAwareWorkloadScheduling=true", simulate=False)
    submit(fake, job("plain", parallelism=2))
    submit(fake, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                  "value": 100})
    submit(fake, gang_job(scheduling={"schedulingPolicy": {"gang": {}},
                                      "schedulingConstraints": {"topology": [{"key": "rack"}]}},
                          pod_spec={"priorityClassName": "high"}))
    fake.run(0)
    by_job = {w["spec"]["controllerRef"]["name"]: w for w in objects(fake, "Workload")}
    assert by_job["plain"]["apiVersion"] == "scheduling.k8s.io/v1beta1"
    assert by_job["plain"]["spec"]["podGroupTemplates"][0]["schedulingPolicy"] == {"basic": {}}
    template = by_job["train"]["spec"]["podGroupTemplates"][0]
    assert (template["name"], template["priorityClassName"], template["schedulingPolicy"],
            template["schedulingConstraints"]) == (
        "train-pgt-0", "high", {"gang": {"minCount": 4}}, {"topology": [{"key": "rack"}]})
    groups = {g["spec"]["workloadRef"]["workloadName"]: g for g in objects(fake, "PodGroup")}
    train_group = groups[by_job["train"]["metadata"]["name"]]
    assert train_group["spec"]["workloadRef"] == {"workloadName": by_job["train"]["metadata"]["name"],
                                                  "templateName": "train-pgt-0"}
    assert train_group["spec"]["schedulingPolicy"] == {"gang": {"minCount": 4}}
    assert train_group["spec"]["priorityClassName"] == "high"
    assert [e[4] for e in kube_events(fake, "Job") if e[2] == "train"][:2] == ["WorkloadCreated", "PodGroupCreated"]


def test_1_37_owned_job_defers_to_its_parent(make_cluster: ClusterFactory) -> None:
    """A Job with a controller owner gets nothing, unless the parent delegated its PodGroup with
    ``scheduling.k8s.io/group-template-name``; then the PodGroup comes from the parent's Workload
    template and is owned by the Job only."""
    fake = make_cluster("1.37", GATES, simulate=False)
    parent = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "name": "js", "uid": "js-uid",
              "controller": True, "blockOwnerDeletion": True}
    submit(fake, job("js-a-0", parallelism=2, completions=2, indexed=True,
                     metadata={"ownerReferences": [parent]}))
    fake.run(0)
    assert objects(fake, "Workload") == [] and objects(fake, "PodGroup") == []
    submit(fake, {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload", "metadata": {"name": "js-wl"},
                  "spec": {"controllerRef": {"apiGroup": "jobset.x-k8s.io", "kind": "JobSet", "name": "js"},
                           "podGroupTemplates": [{"name": "b", "schedulingPolicy": {"gang": {"minCount": 2}}}]}})
    created = submit(fake, job("js-b-0", parallelism=2, completions=2, indexed=True, metadata={
        "ownerReferences": [parent], "annotations": {"scheduling.k8s.io/group-template-name": "b"}}))
    fake.run(0)
    (group,) = objects(fake, "PodGroup")
    # computePodGroupName(parent Workload, template) (job_scheduling_manager_test.go,
    # TestEnsureWorkloadAndPodGroup "delegated Job creates the PodGroup from the parent's template").
    assert group["metadata"]["name"] == pod_group_name("js-wl", "b")
    assert group["metadata"]["ownerReferences"] == [{
        "apiVersion": "batch/v1", "kind": "Job", "name": "js-b-0", "uid": created["metadata"]["uid"],
        "controller": True, "blockOwnerDeletion": True}]
    assert group["spec"]["workloadRef"] == {"workloadName": "js-wl", "templateName": "b"}
    assert len(objects(fake, "Workload")) == 1
    pods = [p for p in fake.api.list("", "Pod") if p["metadata"]["generateName"].startswith("js-b-0")]
    assert [p["spec"]["schedulingGroup"]["podGroupName"] for p in pods] == [group["metadata"]["name"]] * 2


@pytest.mark.parametrize("version", ["1.36", "1.37"])
def test_suspend_keeps_workload_and_pod_group(make_cluster: ClusterFactory, version: str) -> None:
    fake = make_cluster(version, GATES, simulate=False)
    created = submit(fake, gang_job(suspend=True))
    fake.run(0)
    assert len(objects(fake, "Workload")) == len(objects(fake, "PodGroup")) == 1
    assert fake.api.list("", "Pod") == []
    update_spec(fake, created, suspend=False)
    fake.run(1)
    (group,) = objects(fake, "PodGroup")
    pods = fake.api.list("", "Pod")
    assert len(pods) == 4 and {p["spec"]["schedulingGroup"]["podGroupName"] for p in pods} == {
        group["metadata"]["name"]}
    update_spec(fake, created, suspend=True)
    fake.run(2)
    assert fake.api.list("", "Pod") == []
    assert len(objects(fake, "Workload")) == len(objects(fake, "PodGroup")) == 1
