"""Upstream's unit tests of the Job controller's Workload/PodGroup management, entry by entry, on 1.37.

Source: kubernetes/kubernetes ``pkg/controller/job/job_scheduling_manager_test.go`` (read at commit
0040ecbe, v1beta1 shape; the controller at 06aef7c6). Each test names the upstream test function and
case. Upstream calls the manager's functions on a fake client; we call :class:`SchedulingObjects` on our
API server (admission included), with the pre-existing objects created through it.

Not translated: the synthetic API errors of "Workload create error propagates" and "PodGroup create
error propagates" are expressed with a name conflict (AlreadyExists), the one create error our API
server can produce for these objects.
"""

from __future__ import annotations

from typing import Any

import pytest

from jobsetctl.fakecluster.apiserver import APIServer
from jobsetctl.fakecluster.controllers.job_scheduling import (
    MANAGE_BOTH,
    MANAGE_NONE,
    MANAGE_POD_GROUP_ONLY,
    SchedulingObjects,
    build_template,
    build_workload,
    desired_gang_min_count,
    management_mode,
    pod_group_name,
    workload_name,
)
from jobsetctl.fakecluster.controllers.job_spec import JobView
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import KubeVersion
from tests.fakecluster.harness import ClusterFactory

V137 = KubeVersion.parse("1.37")
GATES = "WorkloadWithJob=true,GenericWorkload=true"
SOURCE = "job_scheduling_manager_test.go"
GROUP = "scheduling.k8s.io"
JOBSET_OWNER = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "name": "parent-js",
                "uid": "parent-js-uid", "controller": True}


def gang_job(name: str = "test-job", parallelism: int = 4, **meta: Any) -> dict[str, Any]:
    """``newGangSchedulingJob``: Indexed, completions = parallelism, gang minCount = parallelism."""
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": "default", "uid": f"{name}-uid", **meta},
            "spec": {"parallelism": parallelism, "completions": parallelism, "completionMode": "Indexed",
                     "scheduling": {"schedulingPolicy": {"gang": {"minCount": parallelism}}},
                     "template": {"spec": {"containers": [{"name": "c", "image": "test"}]}}},
            "status": {}}


def job_owner(job: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "name": job["metadata"]["name"],
            "uid": job["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}


# ---- TestShouldManageWorkloadForJob -------------------------------------------------------------------


def _mode_job(parallelism: int, *, owner: dict[str, Any] | None = None, annotation: bool = False,
              scheduling_group: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "j"}
    if owner is not None:
        meta["ownerReferences"] = [owner]
    if annotation:
        meta["annotations"] = {"scheduling.k8s.io/group-template-name": "workers"}
    pod_spec: dict[str, Any] = {"schedulingGroup": {"podGroupName": "existing-pg"}} if scheduling_group else {}
    return {"metadata": meta, "spec": {"parallelism": parallelism, "template": {"spec": pod_spec}}}


CRONJOB_OWNER = {"apiVersion": "batch/v1", "kind": "CronJob", "name": "cj", "controller": True}


@pytest.mark.parametrize(("case", "gate", "job", "mode"), [
    ("gate enabled, standalone Job -> managed (Universal Representation)", True, _mode_job(4), MANAGE_BOTH),
    ("gate enabled, basic single-pod Job -> still managed", True, _mode_job(1), MANAGE_BOTH),
    ("feature gate disabled -> not managed", False, _mode_job(4), MANAGE_NONE),
    ("BYO PodGroup via pod template schedulingGroup -> not managed", True, _mode_job(4, scheduling_group=True),
     MANAGE_NONE),
    ("BYO schedulingGroup takes precedence over delegation annotation -> not managed", True,
     _mode_job(4, owner=JOBSET_OWNER, annotation=True, scheduling_group=True), MANAGE_NONE),
    ("parent-owned Workload without delegation annotation -> not managed", True, _mode_job(4, owner=JOBSET_OWNER),
     MANAGE_NONE),
    ("parent-owned Workload with delegation annotation -> managed (delegated PodGroup)", True,
     _mode_job(4, owner=JOBSET_OWNER, annotation=True), MANAGE_POD_GROUP_ONLY),
    ("CronJob-owned Job is treated as parent-owned (not managed)", True, _mode_job(4, owner=CRONJOB_OWNER),
     MANAGE_NONE),
])
def test_should_manage_workload_for_job(case: str, gate: bool, job: dict[str, Any], mode: str) -> None:
    """TestShouldManageWorkloadForJob, every case."""
    gates = parse_feature_gates(GATES if gate else "", V137)
    assert management_mode(JobView(job), V137, gates) == mode, case


# ---- TestGenerateWorkload ----------------------------------------------------------------------------


def _generate_job(name: str, parallelism: int, scheduling: dict[str, Any] | None,
                  priority_class: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"parallelism": parallelism, "template": {"spec": {}}}
    if scheduling is not None:
        spec["scheduling"] = scheduling
    if priority_class:
        spec["template"]["spec"]["priorityClassName"] = priority_class
    return {"metadata": {"name": name, "namespace": "default", "uid": f"{name}-uid"}, "spec": spec}


FULL = {"schedulingPolicy": {"gang": {"minCount": 4}},
        "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]},
        "disruptionMode": {"all": {}}, "resourceClaims": [{"name": "gpu", "resourceClaimName": "my-claim"}]}


@pytest.mark.parametrize(("case", "job", "expected"), [
    ("nil scheduling defaults to Basic", _generate_job("basic-default", 4, None),
     {"schedulingPolicy": {"basic": {}}}),
    ("scheduling set but policy nil defaults to Basic", _generate_job("basic-nil-policy", 4, {}),
     {"schedulingPolicy": {"basic": {}}}),
    ("explicit basic policy", _generate_job("basic-explicit", 4, {"schedulingPolicy": {"basic": {}}}),
     {"schedulingPolicy": {"basic": {}}}),
    ("gang with explicit minCount", _generate_job("gang", 4, {"schedulingPolicy": {"gang": {"minCount": 3}}}),
     {"schedulingPolicy": {"gang": {"minCount": 3}}}),
    ("gang without minCount defaults to parallelism", _generate_job("gang-zero", 4, {"schedulingPolicy": {"gang": {}}}),
     {"schedulingPolicy": {"gang": {"minCount": 4}}}),
    ("gang without minCount and zero parallelism clamps to 1",
     _generate_job("gang-zero-parallelism", 0, {"schedulingPolicy": {"gang": {}}}),
     {"schedulingPolicy": {"gang": {"minCount": 1}}}),
    ("gang, topology, disruption, and claims passthrough", _generate_job("full", 4, FULL), FULL),
    ("priorityClassName copied from pod template", _generate_job("prio", 4, None, "high-priority"),
     {"priorityClassName": "high-priority", "schedulingPolicy": {"basic": {}}}),
])
def test_generate_workload(case: str, job: dict[str, Any], expected: dict[str, Any]) -> None:
    """TestGenerateWorkload, every case: one template ``<job>-pgt-0`` and a controllerRef to the Job."""
    view = JobView(job)
    workload = build_workload(view, V137, "scheduling.k8s.io/v1beta1")
    [template] = workload["spec"]["podGroupTemplates"]
    assert template == {"name": f"{job['metadata']['name']}-pgt-0", **expected}, case
    assert template == build_template(view, V137)
    assert workload["spec"]["controllerRef"]["name"] == job["metadata"]["name"]


# ---- TestComputeWorkloadName, TestComputePodGroupName ---------------------------------------------------


@pytest.mark.parametrize(("case", "job_name", "uid"), [
    ("short name", "my-job", "uid-123"), ("very long name exceeding DNS limit", "a" * 300, "uid-long")])
def test_compute_workload_name(case: str, job_name: str, uid: str) -> None:
    """TestComputeWorkloadName: fits a DNS subdomain, prefix-hash, deterministic, UID-dependent."""
    name = workload_name(job_name, uid)
    assert len(name) <= 253 and len(name.split("-")) >= 2, case
    assert name == workload_name(job_name, uid) != workload_name(job_name, "different-uid")


@pytest.mark.parametrize(("case", "workload", "template"), [
    ("short names", "my-workload", "my-template"), ("long workload name", "w" * 250, "tpl"),
    ("long template name", "wl", "t" * 250), ("both long names", "w" * 200, "t" * 200)])
def test_compute_pod_group_name(case: str, workload: str, template: str) -> None:
    """TestComputePodGroupName: fits, wl-tpl-hash, deterministic, template-dependent."""
    name = pod_group_name(workload, template)
    assert len(name) <= 253 and len(name.split("-")) >= 3, case
    assert name == pod_group_name(workload, template) != pod_group_name(workload, "other-template")


def test_compute_pod_group_name_truncation() -> None:
    """TestComputePodGroupName, "truncation preserves both parts" and "short workload name is not truncated"."""
    prefix = pod_group_name("w" * 200, "t" * 200).rsplit("-", 1)[0]
    assert "www" in prefix and "ttt" in prefix
    assert pod_group_name("wl", "t" * 250).startswith("wl-")


# ---- TestEnsureWorkloadAndPodGroup ---------------------------------------------------------------------


class Manager:
    """The Job controller's scheduling manager on an API server holding the case's existing objects."""

    def __init__(self, make_cluster: ClusterFactory) -> None:
        self.fake = make_cluster("1.37", GATES, simulate=False)
        self.api: APIServer = self.fake.api
        self.events: list[tuple[str, str, str]] = []
        self.objects = SchedulingObjects(self.api, lambda *event: self.events.append(event))

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        result = self.api.create(obj)
        assert result.ok and result.obj is not None, result.message()
        return result.obj

    def workload(self, name: str, job: dict[str, Any], *, owned: bool = True, templates: Any = None,
                 min_count: int = 4) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": name, "namespace": "default"}
        if owned:
            meta["ownerReferences"] = [job_owner(job)]
        return self.create({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload", "metadata": meta, "spec": {
            "controllerRef": {"apiGroup": "batch", "kind": "Job", "name": job["metadata"]["name"]},
            "podGroupTemplates": templates or [
                {"name": "test-job-pgt-0", "schedulingPolicy": {"gang": {"minCount": min_count}}}]}})

    def pod_group(self, name: str, workload: str, job: dict[str, Any] | None, *, template: str = "test-job-pgt-0",
                  min_count: int = 4) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": name, "namespace": "default"}
        if job is not None:
            meta["ownerReferences"] = [job_owner(job)]
        return self.create({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": meta, "spec": {
            "workloadRef": {"workloadName": workload, "templateName": template},
            "schedulingPolicy": {"gang": {"minCount": min_count}}}})

    def ensure(self, job: dict[str, Any], pods: list[dict[str, Any]] | None = None) -> tuple[str | None, str | None]:
        result = self.objects.ensure(JobView(job), pods or [])
        group = result.pod_group
        return (group["metadata"]["name"] if group is not None else None), result.error

    def min_count(self, name: str) -> int:
        group = self.api.get(GROUP, "PodGroup", "default", name)
        assert group is not None
        return int(group["spec"]["schedulingPolicy"]["gang"]["minCount"])


BASE = gang_job()
WL_NAME = workload_name("test-job", "test-job-uid")
PG_NAME = pod_group_name(WL_NAME, "test-job-pgt-0")
POD = {"metadata": {"name": "pod-0", "namespace": "default"}}


def _with_status(**status: Any) -> dict[str, Any]:
    job = gang_job()
    job["status"] = status
    return job


@pytest.mark.parametrize(("case", "job", "pods"), [
    ("skips creation when Job has pods but no Workload", BASE, [POD]),
    ("skips creation when Job has StartTime set", _with_status(startTime="2026-01-01T00:00:00Z"), []),
    ("skips creation when Job has succeeded pods", _with_status(succeeded=1), []),
    ("skips creation when Job has failed pods", _with_status(failed=1), []),
    ("skips creating Workload/PodGroup when Job was previously suspended",
     _with_status(conditions=[{"type": "Suspended", "status": "True"}]), []),
])
def test_ensure_skips_creation_for_a_job_that_started(make_cluster: ClusterFactory, case: str,
                                                      job: dict[str, Any], pods: list[dict[str, Any]]) -> None:
    """TestEnsureWorkloadAndPodGroup: objects are created only for a Job that never started."""
    manager = Manager(make_cluster)
    assert manager.ensure(job, pods) == (None, None), case
    assert manager.api.list(GROUP, "Workload") == [] and manager.api.list(GROUP, "PodGroup") == []


def test_ensure_creates_both_when_no_pods_exist(make_cluster: ClusterFactory) -> None:
    """TestEnsureWorkloadAndPodGroup, "creates both Workload and PodGroup when no pods exist"."""
    manager = Manager(make_cluster)
    assert manager.ensure(BASE) == (PG_NAME, None)
    assert [w["metadata"]["name"] for w in manager.api.list(GROUP, "Workload")] == [WL_NAME]
    assert [reason for _, reason, _ in manager.events] == ["WorkloadCreated", "PodGroupCreated"]


@pytest.mark.parametrize(("case", "pods"), [
    ("discovers existing Workload and PodGroup", []), ("discovers existing objects even when pods exist", [POD])])
def test_ensure_discovers_existing_objects(make_cluster: ClusterFactory, case: str, pods: list[dict[str, Any]]) -> None:
    """TestEnsureWorkloadAndPodGroup: discovery works before and after the pods exist."""
    manager = Manager(make_cluster)
    manager.workload(WL_NAME, BASE)
    manager.pod_group(PG_NAME, WL_NAME, BASE)
    assert manager.ensure(BASE, pods) == (PG_NAME, None), case
    assert manager.events == []


def test_ensure_workload_found_but_no_pod_group_creates_one(make_cluster: ClusterFactory) -> None:
    """TestEnsureWorkloadAndPodGroup, "workload found but no PodGroup creates one"."""
    manager = Manager(make_cluster)
    manager.workload("user-workload", BASE)
    assert manager.ensure(BASE) == (pod_group_name("user-workload", "test-job-pgt-0"), None)


def test_ensure_ignores_a_byo_workload(make_cluster: ClusterFactory) -> None:
    """TestEnsureWorkloadAndPodGroup, "BYO Workload (no controller ownerRef) is ignored; controller creates its own"."""
    manager = Manager(make_cluster)
    manager.workload("user-created-workload", BASE, owned=False)
    assert manager.ensure(BASE) == (PG_NAME, None)
    assert sorted(w["metadata"]["name"] for w in manager.api.list(GROUP, "Workload")) == sorted(
        ["user-created-workload", WL_NAME])


def test_ensure_ambiguous_workloads_fall_back(make_cluster: ClusterFactory) -> None:
    """TestEnsureWorkloadAndPodGroup, "ambiguous Workloads fall back"."""
    manager = Manager(make_cluster)
    manager.workload("workload-1", BASE)
    manager.workload("workload-2", BASE)
    assert manager.ensure(BASE) == (None, None)


def test_ensure_ignores_a_byo_pod_group(make_cluster: ClusterFactory) -> None:
    """TestEnsureWorkloadAndPodGroup, "BYO PodGroup (no controller ownerRef) is ignored; controller creates its own"."""
    manager = Manager(make_cluster)
    manager.workload(WL_NAME, BASE)
    manager.pod_group("external-pg", WL_NAME, None)
    assert manager.ensure(BASE) == (PG_NAME, None)


def test_ensure_ambiguous_pod_groups_fall_back(make_cluster: ClusterFactory) -> None:
    """TestEnsureWorkloadAndPodGroup, "ambiguous PodGroups fall back"."""
    manager = Manager(make_cluster)
    manager.workload(WL_NAME, BASE)
    manager.pod_group("pg-1", WL_NAME, BASE)
    manager.pod_group("pg-2", WL_NAME, BASE)
    assert manager.ensure(BASE) == (None, None)


def test_ensure_unsupported_template_count_is_an_error(make_cluster: ClusterFactory) -> None:
    """TestEnsureWorkloadAndPodGroup, "unsupported PodGroupTemplate count returns an error"."""
    manager = Manager(make_cluster)
    manager.workload(WL_NAME, BASE, templates=[{"name": "group-a", "schedulingPolicy": {"basic": {}}},
                                               {"name": "group-b", "schedulingPolicy": {"basic": {}}}])
    name, error = manager.ensure(BASE)
    assert name is None and error == f"Workload default/{WL_NAME} has 2 PodGroupTemplates, want 1"


def test_ensure_create_errors_propagate(make_cluster: ClusterFactory) -> None:
    """TestEnsureWorkloadAndPodGroup, "Workload create error propagates" and "PodGroup create error
    propagates", each with a name conflict standing for the synthetic API error."""
    manager = Manager(make_cluster)
    other = gang_job("other-job")
    manager.create({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload",
                    "metadata": {"name": WL_NAME, "namespace": "default"},
                    "spec": {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "other-job"},
                             "podGroupTemplates": [{"name": "t", "schedulingPolicy": {"basic": {}}}]}})
    assert manager.ensure(BASE) == (None, f'workloads.scheduling.k8s.io "{WL_NAME}" already exists')
    manager = Manager(make_cluster)
    manager.workload(WL_NAME, BASE)
    manager.pod_group(PG_NAME, "someone-else", other)
    assert manager.ensure(BASE) == (None, f'podgroups.scheduling.k8s.io "{PG_NAME}" already exists')


DELEGATED = gang_job(ownerReferences=[JOBSET_OWNER], annotations={"scheduling.k8s.io/group-template-name": "workers"})
DELEGATED_PG = pod_group_name("parent-workload", "workers")


def _parent_workload(manager: Manager, min_count: int) -> None:
    manager.create({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload",
                    "metadata": {"name": "parent-workload", "namespace": "default"},
                    "spec": {"controllerRef": {"apiGroup": "jobset.x-k8s.io", "kind": "JobSet", "name": "parent-js"},
                             "podGroupTemplates": [{"name": "workers",
                                                    "schedulingPolicy": {"gang": {"minCount": min_count}}}]}})


@pytest.mark.parametrize(("case", "parent_min", "existing_min", "expected_min"), [
    ("delegated Job creates the PodGroup from the parent's template", 4, None, 4),
    ("delegated PodGroup follows a parent Workload minCount change", 7, 4, 7),
    ("delegated PodGroup already matching the parent template is left unchanged", 4, 4, 4),
])
def test_ensure_delegated_pod_group(make_cluster: ClusterFactory, case: str, parent_min: int,
                                    existing_min: int | None, expected_min: int) -> None:
    """TestEnsureWorkloadAndPodGroup, the delegated cases: the PodGroup is named
    ``computePodGroupName(parentWorkload, template)`` and follows the parent template's minCount."""
    manager = Manager(make_cluster)
    _parent_workload(manager, parent_min)
    if existing_min is not None:
        manager.pod_group(DELEGATED_PG, "parent-workload", DELEGATED, template="workers", min_count=existing_min)
    assert manager.ensure(DELEGATED) == (DELEGATED_PG, None), case
    assert manager.min_count(DELEGATED_PG) == expected_min
    group = manager.api.get(GROUP, "PodGroup", "default", DELEGATED_PG)
    assert group is not None and group["metadata"]["ownerReferences"] == [job_owner(DELEGATED)]


# ---- TestCreateWorkloadForJob, TestCreatePodGroup ---------------------------------------------------------


def test_create_workload_for_job(make_cluster: ClusterFactory) -> None:
    """TestCreateWorkloadForJob: name, namespace, controllerRef, one gang template, one owner."""
    manager = Manager(make_cluster)
    job = gang_job("my-job", 8)
    manager.ensure(job)
    [workload] = manager.api.list(GROUP, "Workload")
    assert workload["metadata"]["name"] == workload_name("my-job", "my-job-uid")
    assert workload["metadata"]["namespace"] == "default"
    assert workload["spec"]["controllerRef"] == {"apiGroup": "batch", "kind": "Job", "name": "my-job"}
    assert [t["schedulingPolicy"] for t in workload["spec"]["podGroupTemplates"]] == [{"gang": {"minCount": 8}}]
    assert [ref["name"] for ref in workload["metadata"]["ownerReferences"]] == ["my-job"]


@pytest.mark.parametrize(("case", "delegated"), [
    ("root Job links the Workload as a non-controller owner", False),
    ("delegated Job does not link the parent-owned Workload", True)])
def test_create_pod_group(make_cluster: ClusterFactory, case: str, delegated: bool) -> None:
    """TestCreatePodGroup: the owners, and the spec copied from the template (priority included)."""
    manager = Manager(make_cluster)
    manager.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                    "metadata": {"name": "high-priority"}, "value": 1000})
    job = gang_job("my-job")
    template = {"name": "my-job-pgt-0", "schedulingPolicy": {"gang": {"minCount": 4}},
                "priorityClassName": "high-priority", "priority": 1000}
    if delegated:
        job = gang_job("my-job", ownerReferences=[JOBSET_OWNER],
                       annotations={"scheduling.k8s.io/group-template-name": "my-job-pgt-0"})
        workload = "delegated-workload"
        manager.create({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload",
                        "metadata": {"name": workload, "namespace": "default"},
                        "spec": {"controllerRef": {"apiGroup": "jobset.x-k8s.io", "kind": "JobSet",
                                                   "name": "parent-js"}, "podGroupTemplates": [template]}})
    else:
        workload = "root-workload"
        manager.workload(workload, job, templates=[template])
    name, _ = manager.ensure(job)
    assert name == pod_group_name(workload, "my-job-pgt-0"), case
    group = manager.api.get(GROUP, "PodGroup", "default", name)
    assert group is not None
    assert len(group["metadata"]["ownerReferences"]) == (1 if delegated else 2)
    # Upstream's fake client stores what the controller sent; our API server also defaults disruptionMode.
    assert group["spec"] == {"workloadRef": {"workloadName": workload, "templateName": "my-job-pgt-0"},
                             "schedulingPolicy": {"gang": {"minCount": 4}}, "priorityClassName": "high-priority",
                             "priority": 1000, "disruptionMode": {"single": {}}}


# ---- TestSyncGangMinCount, TestDesiredGangMinCount ------------------------------------------------------


@pytest.mark.parametrize(("case", "current"), [
    ("controller-owned objects are resized to the Job's minCount", 2),
    ("already at desired minCount is left unchanged", 5)])
def test_sync_gang_min_count(make_cluster: ClusterFactory, case: str, current: int) -> None:
    """TestSyncGangMinCount: the Job's own Workload and PodGroup take the Job's minCount (5)."""
    manager = Manager(make_cluster)
    job = gang_job("scale-job", 5)
    wl = workload_name("scale-job", "scale-job-uid")
    pg = pod_group_name(wl, "scale-job-pgt-0")
    manager.workload(wl, job, templates=[{"name": "scale-job-pgt-0", "schedulingPolicy": {"gang": {"minCount": current}}}])
    manager.pod_group(pg, wl, job, template="scale-job-pgt-0", min_count=current)
    assert manager.ensure(job) == (pg, None), case
    workload = manager.api.get(GROUP, "Workload", "default", wl)
    assert workload is not None and workload["spec"]["podGroupTemplates"][0]["schedulingPolicy"] == {
        "gang": {"minCount": 5}}
    assert manager.min_count(pg) == 5


@pytest.mark.parametrize(("case", "parallelism", "completions", "indexed", "explicit", "succeeded", "failed", "want"), [
    ("preserves the initial gang size while enough indexed work remains", 10, 100, True, None, 9, None, 10),
    ("shrinks an indexed gang in the tail", 10, 100, True, None, 95, None, 5),
    ("excludes permanently failed indexes", 3, 3, True, None, 1, "2", 1),
    ("counts compressed failed index ranges", 5, 10, True, None, 4, "1-2,7", 3),
    ("shrinks a non-indexed gang in the tail", 4, 4, False, None, 2, None, 2),
    ("clamps the threshold to one after all work is accounted for", 3, 3, True, None, 2, "2", 1),
    ("leaves an explicit minCount unchanged", 4, 4, True, 3, 3, None, 3),
    ("leaves a work-queue Job unchanged", 4, None, False, None, 0, None, 4),
])
def test_desired_gang_min_count(case: str, parallelism: int, completions: int | None, indexed: bool,
                                explicit: int | None, succeeded: int, failed: str | None, want: int) -> None:
    """TestDesiredGangMinCount, every case."""
    job = gang_job("test", parallelism)
    spec = job["spec"]
    spec["completions"] = completions
    if not indexed:
        spec["completionMode"] = "NonIndexed"
    spec["scheduling"]["schedulingPolicy"]["gang"] = {} if explicit is None else {"minCount": explicit}
    job["status"] = {"succeeded": succeeded, **({"failedIndexes": failed} if failed else {})}
    resolved = parallelism if explicit is None else explicit
    assert desired_gang_min_count(JobView(job), resolved) == want, case
