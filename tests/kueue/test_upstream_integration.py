"""Kueue's job integration tests, as Scenarios run through ``simulate`` (engine, job reconciler, JobSet and
Trainer controllers, kube-scheduler, kubelet), checked on the cluster the run leaves.

Translated from kueue @ff69552e ``test/integration/singlecluster/controller/jobs/``:

* ``jobset/jobset_controller_test.go``, "JobSet controller interacting with scheduler": "Should schedule
  JobSets as they fit in their ClusterQueue"; "Should allow reclaim of resources that are no longer
  needed" (adapted: upstream writes the first JobSet's status by hand, replicated-job-1 2/2 and
  replicated-job-2 1/3 succeeded; a Scenario cannot finish one replica of a replicated job before the
  others, since they share one template and so one duration: here replicated-job-1 finishes and
  replicated-job-2 keeps running, and its 8 reclaimable pods make room for the second JobSet).
* ``jobset/jobset_controller_test.go``, "JobSet controller with TopologyAwareScheduling": "should admit
  workload which fits in a required topology domain".
* ``trainjob/trainjob_controller_test.go``, "TrainJob controller interacting with scheduler": "Should
  schedule TrainJobs as they fit in their ClusterQueue" (the flavors land in Kueue's runtime patch).

Both Describe blocks share their setup: ResourceFlavors on-demand and spot-untainted (node label
``instance-type``), ClusterQueue dev-clusterqueue with cpu 1 of spot-untainted and 5 of on-demand, one
LocalQueue. Nodes of each flavor are added so that admitted pods run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from jobsetctl.simulate.inputs import load_inputs
from jobsetctl.simulate.runner import SimulateOptions, SimulationResult, plan, run_plan

K = "kueue.x-k8s.io/v1beta2"
INSTANCE = "instance-type"  # instanceKey in the upstream suites
NS = "jobset-ns"
FRAMEWORKS = ["batch/job", "jobset.x-k8s.io/jobset", "trainer.kubeflow.org/trainjob"]


def _setup() -> list[dict[str, Any]]:
    def flavor(name: str) -> dict[str, Any]:
        return {"apiVersion": K, "kind": "ResourceFlavor", "metadata": {"name": name},
                "spec": {"nodeLabels": {INSTANCE: name}}}
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
        flavor("on-demand"), flavor("spot-untainted"),
        {"apiVersion": K, "kind": "ClusterQueue", "metadata": {"name": "dev-clusterqueue"}, "spec": {
            "namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                {"name": "spot-untainted", "resources": [{"name": "cpu", "nominalQuota": "1"}]},
                {"name": "on-demand", "resources": [{"name": "cpu", "nominalQuota": "5"}]}]}]}},
        {"apiVersion": K, "kind": "LocalQueue", "metadata": {"name": "local-queue", "namespace": NS},
         "spec": {"clusterQueue": "dev-clusterqueue"}},
    ]


def _replicated(name: str, replicas: int, parallelism: int, completions: int, cpu: str,
                duration: str) -> dict[str, Any]:
    """testingjobset.ReplicatedJobRequirements with Request(name, cpu, ...)."""
    return {"name": name, "replicas": replicas, "template": {"spec": {
        "parallelism": parallelism, "completions": completions, "template": {
            "metadata": {"annotations": {"jobsetctl.dev/duration": duration}},
            "spec": {"restartPolicy": "Never", "containers": [
                {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}]}}}}}


def _jobset(name: str, *replicated: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": name, "namespace": NS, "labels": {"kueue.x-k8s.io/queue-name": "local-queue"}},
            "spec": {"replicatedJobs": list(replicated)}}


def _run(tmp_path: Path, submit: list[dict[str, Any]], until: str) -> SimulationResult:
    scenario = {"apiVersion": "jobsetctl.dev/v1alpha1", "kind": "Scenario", "metadata": {"name": "integration"},
                "spec": {"until": until, "nodes": [
                    {"name": "spot", "count": 1, "capacity": {"cpu": "2", "memory": "8Gi", "pods": "110"},
                     "labels": {INSTANCE: "spot-untainted"}},
                    {"name": "od", "count": 1, "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                     "labels": {INSTANCE: "on-demand"}}],
                    "submit": submit,
                    "kueue": {"configuration": {"integrations": {"frameworks": FRAMEWORKS}}}}}
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(scenario, sort_keys=False))
    inputs = load_inputs([str(path)], None)
    assert not inputs.errors, inputs.diagnostics
    result = run_plan(plan(inputs, SimulateOptions([str(path)])), 0)
    assert not result.rejections, result.rejections
    return result


def _get(result: SimulationResult, group: str, kind: str, name: str) -> dict[str, Any]:
    assert result.cluster is not None
    obj = result.cluster.api.get(group, kind, NS, name)
    assert obj is not None, name
    return obj


def _selectors(replicated_jobs: list[dict[str, Any]]) -> list[str | None]:
    return [(rj["template"]["spec"]["template"]["spec"].get("nodeSelector") or {}).get(INSTANCE)
            for rj in replicated_jobs]


def _workload_events(result: SimulationResult, event: str) -> list[tuple[float, str]]:
    return [(e.time, e.name) for e in result.events
            if e.kind == "Workload" and e.group == "kueue.x-k8s.io" and e.event == event]


def test_should_schedule_jobsets_as_they_fit_in_their_cluster_queue(tmp_path: Path) -> None:
    js = _jobset("dev-job", _replicated("replicated-job-1", 1, 1, 1, "1", "1h"),
                 _replicated("replicated-job-2", 3, 1, 1, "1", "1h"))
    result = _run(tmp_path, [{"at": "0s", "objects": [*_setup(), js]}], "10m")
    created = _get(result, "jobset.x-k8s.io", "JobSet", "dev-job")
    assert created["spec"]["suspend"] is False
    # replicated-job-1 (1 cpu) fits the first flavor, spot-untainted; replicated-job-2 (3 cpu) only on-demand.
    assert _selectors(created["spec"]["replicatedJobs"]) == ["spot-untainted", "on-demand"]
    # ExpectPendingWorkloadsMetric(cq, 0, 0), ExpectAdmittedWorkloadsTotalMetric(cq, "", 1)
    assert len(_workload_events(result, "Admitted")) == 1
    assert _workload_events(result, "Pending") == []


def test_should_allow_reclaim_of_resources_that_are_no_longer_needed(tmp_path: Path) -> None:
    first = _jobset("dev-jobset1", _replicated("replicated-job-1", 2, 4, 8, "250m", "1m"),
                    _replicated("replicated-job-2", 3, 4, 4, "250m", "1h"))
    second = _jobset("dev-jobset2", _replicated("replicated-job-1", 2, 1, 1, "1", "1h"),
                     _replicated("replicated-job-2", 1, 1, 1, "1", "1h"))
    result = _run(tmp_path, [{"at": "0s", "objects": [*_setup(), first]}, {"at": "30s", "objects": [second]}], "10m")
    admitted = _workload_events(result, "Admitted")
    # The first starts; the second does not fit (2 cpu of replicated-job-1 exceed spot-untainted, on-demand
    # is full) and waits; replicated-job-1 of the first finishes (2 waves of 1 minute), its 8 pods become
    # reclaimable, and the second starts.
    assert [name.rsplit("-", 1)[0] for _, name in admitted] == ["jobset-dev-jobset1", "jobset-dev-jobset2"]
    assert admitted[0][0] == 0
    # Pending from its creation (the message grows once, when the second cycle scans on from the flavors
    # already tried: FlavorFungibilityPreserveScanProgress), admitted one requeue batch period after the
    # first JobSet's replicated-job-1 completes (2 waves of 1 minute).
    assert {(time, name.rsplit("-", 1)[0]) for time, name in _workload_events(result, "Pending")} == {
        (30, "jobset-dev-jobset2")}
    assert admitted[1][0] == 121
    [workload1] = [w for w in result.cluster.api.list("kueue.x-k8s.io", "Workload")  # type: ignore[union-attr]
                   if w["metadata"]["name"].startswith("jobset-dev-jobset1-")]
    assert workload1["status"]["reclaimablePods"] == [{"name": "replicated-job-1", "count": 8}]
    assert _get(result, "jobset.x-k8s.io", "JobSet", "dev-jobset2")["spec"]["suspend"] is False


def test_should_schedule_trainjobs_as_they_fit_in_their_cluster_queue(tmp_path: Path) -> None:
    runtime = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime",
               "metadata": {"name": "test", "namespace": NS},
               "spec": {"template": {"spec": {"replicatedJobs": [
                   _replicated("node-1", 1, 1, 1, "1", "1h"), _replicated("node-2", 3, 1, 1, "1", "1h")]}}}}
    trainjob = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                "metadata": {"name": "trainjob-test", "namespace": NS,
                             "labels": {"kueue.x-k8s.io/queue-name": "local-queue"}},
                "spec": {"runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "TrainingRuntime", "name": "test"}}}
    result = _run(tmp_path, [{"at": "0s", "objects": [*_setup(), runtime, trainjob]}], "10m")
    created = _get(result, "trainer.kubeflow.org", "TrainJob", "trainjob-test")
    assert created["spec"]["suspend"] is False
    [patch] = [p for p in created["spec"]["runtimePatches"] if p["manager"] == "kueue.x-k8s.io/manager"]
    replicated = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    assert [rj["name"] for rj in replicated] == ["node-1", "node-2"]
    assert [rj["template"]["spec"]["template"]["spec"]["nodeSelector"][INSTANCE] for rj in replicated] == [
        "spot-untainted", "on-demand"]
    assert len(_workload_events(result, "Admitted")) == 1


BLOCK, RACK = "cloud.provider.com/topology-block", "cloud.provider.com/topology-rack"  # testing/defaults.go


def test_should_admit_workload_which_fits_in_a_required_topology_domain(tmp_path: Path) -> None:
    setup = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
        # MakeDefaultTwoLevelTopology("default")
        {"apiVersion": K, "kind": "Topology", "metadata": {"name": "default"},
         "spec": {"levels": [{"nodeLabel": BLOCK}, {"nodeLabel": RACK}]}},
        {"apiVersion": K, "kind": "ResourceFlavor", "metadata": {"name": "tas-flavor"},
         "spec": {"nodeLabels": {"node-group": "tas"}, "topologyName": "default"}},
        {"apiVersion": K, "kind": "ClusterQueue", "metadata": {"name": "cluster-queue"}, "spec": {
            "namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                {"name": "tas-flavor", "resources": [{"name": "cpu", "nominalQuota": "5"}]}]}]}},
        {"apiVersion": K, "kind": "LocalQueue", "metadata": {"name": "local-queue", "namespace": NS},
         "spec": {"clusterQueue": "cluster-queue"}},
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "b1r1", "labels": {
            "node-group": "tas", BLOCK: "b1", RACK: "r1"}}, "status": {
            "allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"},
            "capacity": {"cpu": "1", "memory": "1Gi", "pods": "10"}, "conditions": [{"type": "Ready", "status": "True"}]}},
    ]
    rj1 = _replicated("rj1", 1, 1, 1, "100m", "1m")
    rj1["template"]["spec"]["template"]["metadata"]["annotations"]["kueue.x-k8s.io/podset-required-topology"] = BLOCK
    rj2 = _replicated("rj2", 1, 1, 1, "100m", "1m")
    rj2["template"]["spec"]["template"]["metadata"]["annotations"]["kueue.x-k8s.io/podset-preferred-topology"] = RACK
    result = _run(tmp_path, [{"at": "0s", "objects": [*setup, _jobset("jobset", rj1, rj2)]}], "30s")
    assert result.cluster is not None
    [workload] = result.cluster.api.list("kueue.x-k8s.io", "Workload")
    index = {"podIndexLabel": "batch.kubernetes.io/job-completion-index", "subGroupCount": 1,
             "subGroupIndexLabel": "jobset.sigs.k8s.io/job-index"}
    assert [(p["name"], p["count"], p["topologyRequest"]) for p in workload["spec"]["podSets"]] == [
        ("rj1", 1, {"required": BLOCK, **index}), ("rj2", 1, {"preferred": RACK, **index})]
    assert len(_workload_events(result, "Admitted")) == 1
    # tas.V1Beta2From(Levels [block, rack], Domains [{Count 1, Values [b1, r1]}]) for both podsets.
    b1r1 = {"levels": [BLOCK, RACK], "slices": [{"domainCount": 1, "valuesPerLevel": [
        {"universal": "b1"}, {"universal": "r1"}], "podCounts": {"universal": 1}}]}
    assignments = workload["status"]["admission"]["podSetAssignments"]
    assert [a["topologyAssignment"] for a in assignments] == [b1r1, b1r1]
    # The ungater lifts the topology gate and the kube-scheduler binds both pods there.
    assert sorted((e.name.rsplit("-", 1)[0], e.node) for e in result.events if e.kind == "Pod" and e.event == "Scheduled") == [
        ("jobset-rj1-0-0", "b1r1"), ("jobset-rj2-0-0", "b1r1")]
