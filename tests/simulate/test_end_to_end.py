"""Small scenarios through the whole fake cluster, with exact event sequences and golden JSON."""

from __future__ import annotations

from pathlib import Path

from jobsetctl.simulate.report import is_allowed
from tests.simulate.harness import assert_golden, events_of, load, run_json, write_scenario

JOBSET_2_PODS = """\
apiVersion: jobsetctl.dev/v1alpha1
kind: Scenario
metadata: {name: jobset-completes}
spec:
  nodes:
  - {name: node, count: 2, capacity: {cpu: "4", memory: 16Gi}}
  submit:
  - at: 0s
    objects:
    - apiVersion: jobset.x-k8s.io/v1alpha2
      kind: JobSet
      metadata: {name: js}
      spec:
        FAILURE_POLICY
        replicatedJobs:
        - name: w
          replicas: 2
          template:
            spec:
              BACKOFF
              template:
                metadata:
                  annotations: {jobsetctl.dev/duration: 10m}
                spec:
                  restartPolicy: Never
                  containers:
                  - {name: c, image: busybox, resources: {requests: {cpu: "3"}}}
ACTIONS
"""


def _jobset_scenario(failure_policy: str = "", actions: str = "", nodes: int = 2, backoff_limit: int = 6) -> str:
    text = JOBSET_2_PODS.replace("        FAILURE_POLICY\n", failure_policy).replace("ACTIONS\n", actions)
    text = text.replace("BACKOFF", f"backoffLimit: {backoff_limit}")
    return text.replace("count: 2,", f"count: {nodes},")


def test_one_jobset_of_two_pods_on_two_nodes_completes(tmp_path: Path) -> None:
    text, outcome = run_json(write_scenario(tmp_path, _jobset_scenario()))
    assert not outcome.failed
    document = load(text)
    assert events_of(document) == [
        (0, "Node", "node-0", "Created", None),
        (0, "Node", "node-1", "Created", None),
        (0, "JobSet", "js", "Created", None),
        (0, "Service", "js", "Created", None),
        (0, "Job", "js-w-0", "Created", None),
        (0, "Job", "js-w-1", "Created", None),
        (0, "Pod", "js-w-0-0-XXXXX", "Created", None),
        (0, "Pod", "js-w-1-0-XXXXX", "Created", None),
        (0, "Pod", "js-w-0-0-XXXXX", "Scheduled", "node-0"),
        (0, "Pod", "js-w-1-0-XXXXX", "Scheduled", "node-1"),
        (0, "Pod", "js-w-0-0-XXXXX", "Started", "node-0"),
        (0, "Pod", "js-w-0-0-XXXXX", "Ready", "node-0"),
        (0, "Pod", "js-w-1-0-XXXXX", "Started", "node-1"),
        (0, "Pod", "js-w-1-0-XXXXX", "Ready", "node-1"),
        # Both pods end at 600 s; every timer of an instant fires before the controllers run, so the
        # Job controller sees both pods finished before it completes either Job.
        (600, "Pod", "js-w-0-0-XXXXX", "Succeeded", "node-0"),
        (600, "Pod", "js-w-1-0-XXXXX", "Succeeded", "node-1"),
        (600, "Job", "js-w-0", "Completed", None),
        (600, "Job", "js-w-1", "Completed", None),
        (600, "JobSet", "js", "Completed", None),
    ]
    assert document["endTime"] == 600
    assert [(f["kind"], f["state"], f.get("node")) for f in document["final"]] == [
        ("JobSet", "Completed", None), ("Job", "Complete", None), ("Job", "Complete", None),
        ("Pod", "Succeeded", "node-0"), ("Pod", "Succeeded", "node-1")]
    summary = document["summary"]
    assert (summary["stopReason"], summary["makespan"], summary["enabledGates"]) == ("done", 600, [])
    assert summary["workloads"] == [{
        "kind": "JobSet", "namespace": "default", "name": "js", "state": "Completed", "submitted": 0, "admitted": 0,
        "timeToAdmission": 0, "queueingDelay": 0, "finished": 600, "preemptions": 0, "restarts": 0, "gpuHours": 0.0}]
    assert_golden("jobset-completes.json", text)


def test_one_node_makes_the_second_pod_wait(tmp_path: Path) -> None:
    text, _ = run_json(write_scenario(tmp_path, _jobset_scenario(nodes=1)))
    document = load(text)
    second = [e for e in events_of(document) if e[2] == "js-w-1-0-XXXXX"]
    assert [(e[0], e[3]) for e in second] == [
        (0, "Created"), (0, "Unschedulable"), (600, "Scheduled"), (600, "Started"), (600, "Ready"),
        (1200, "Succeeded")]
    unschedulable = next(e for e in document["events"] if e["event"] == "Unschedulable")
    assert unschedulable["message"] == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.")
    (stats,) = document["summary"]["workloads"]
    assert (stats["admitted"], stats["queueingDelay"], stats["finished"]) == (600, 600, 1200)


def test_node_failure_restarts_the_jobset_on_the_spare_node(tmp_path: Path) -> None:
    scenario = _jobset_scenario(
        failure_policy="        failurePolicy: {maxRestarts: 1}\n",
        actions="  actions:\n  - {at: 5m, failNode: node-0}\n", nodes=3, backoff_limit=0,
    ).replace("{name: jobset-completes}", "{name: node-failure}")
    text, outcome = run_json(write_scenario(tmp_path, scenario))
    assert not outcome.failed
    document = load(text)
    # The node stops reporting at 5m; its pod tolerates the unreachable taint for 300 s (the default
    # toleration), is evicted at 10m, killed after its 30 s grace period; backoffLimit 0 fails its Job and
    # the JobSet restarts every Job, on the nodes still up.
    assert [e for e in events_of(document) if e[0] >= 300] == [
        (300, "Node", "node-0", "Failed", None),
        (600, "Pod", "js-w-1-0-XXXXX", "Succeeded", "node-1"),
        (600, "Job", "js-w-1", "Completed", None),
        (630, "Pod", "js-w-0-0-XXXXX", "Failed", "node-0"),
        (630, "Pod", "js-w-0-0-XXXXX", "Deleted", None),
        (630, "Job", "js-w-0", "Failed", None),
        (630, "JobSet", "js", "Restarting", None),
        (630, "Job", "js-w-0", "Deleted", None),
        (630, "Pod", "js-w-1-0-XXXXX", "Deleted", None),
        (630, "Job", "js-w-1", "Deleted", None),
        (630, "Job", "js-w-0", "Created", None),
        (630, "Job", "js-w-1", "Created", None),
        (630, "Pod", "js-w-1-0-XXXXX", "Created", None),
        (630, "Pod", "js-w-0-0-XXXXX", "Created", None),
        (630, "Pod", "js-w-1-0-XXXXX", "Scheduled", "node-1"),
        (630, "Pod", "js-w-0-0-XXXXX", "Scheduled", "node-2"),
        (630, "Pod", "js-w-1-0-XXXXX", "Started", "node-1"),
        (630, "Pod", "js-w-1-0-XXXXX", "Ready", "node-1"),
        (630, "Pod", "js-w-0-0-XXXXX", "Started", "node-2"),
        (630, "Pod", "js-w-0-0-XXXXX", "Ready", "node-2"),
        (1230, "Pod", "js-w-1-0-XXXXX", "Succeeded", "node-1"),
        (1230, "Pod", "js-w-0-0-XXXXX", "Succeeded", "node-2"),
        (1230, "Job", "js-w-1", "Completed", None),
        (1230, "Job", "js-w-0", "Completed", None),
        (1230, "JobSet", "js", "Completed", None),
    ]
    restarting = next(e for e in document["events"] if e["event"] == "Restarting")
    assert (restarting["reason"], restarting["message"]) == (
        "DefaultFailurePolicy", "applying RestartJobSet failure policy action (first failed job: js-w-0)")
    summary = document["summary"]
    assert (summary["restarts"], summary["nodesFailed"], summary["workloads"][0]["state"]) == (1, 1, "Completed")
    assert all(is_allowed(e["kind"], e["event"]) for e in document["events"])
    assert_golden("node-failure.json", text)


REJECTED = """\
apiVersion: jobsetctl.dev/v1alpha1
kind: Scenario
metadata: {name: rejected}
spec:
  nodes:
  - {name: node, count: 2, capacity: {cpu: "4", memory: 16Gi}}
  submit:
  - at: 1m
    objects:
    - apiVersion: jobset.x-k8s.io/v1alpha2
      kind: JobSet
      metadata: {name: Bad_Name}
      spec:
        replicatedJobs:
        - name: w
          template: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: x}]}}}}
    - apiVersion: batch/v1
      kind: Job
      metadata: {name: fine}
      spec:
        template:
          metadata: {annotations: {jobsetctl.dev/duration: 1m}}
          spec: {restartPolicy: Never, containers: [{name: c, image: x}]}
"""


def test_rejected_submission_runs_on_and_fails_the_exit_status(tmp_path: Path) -> None:
    scenario = REJECTED
    text, outcome = run_json(write_scenario(tmp_path, scenario))
    assert outcome.failed
    document = load(text)
    rejected = [e for e in document["events"] if e["event"] == "Rejected"]
    assert len(rejected) == 1
    assert (rejected[0]["time"], rejected[0]["kind"], rejected[0]["name"], rejected[0]["reason"]) == (
        60, "JobSet", "Bad_Name", "Invalid")
    assert "metadata.name" in rejected[0]["message"]
    assert document["summary"]["rejected"] == 1
    assert [w["name"] for w in document["summary"]["workloads"]] == ["fine"]
    assert outcome.result is not None
    # The refusal is placed in the Scenario file, like validate's diagnostics.
    assert [(d.line, d.column, d.rule) for d in outcome.result.rejections] == [
        (12, 18, "meta-name"), (15, 11, "jobset-job-name")]


def test_action_on_an_object_that_never_exists_explains_itself(tmp_path: Path) -> None:
    scenario = _jobset_scenario(actions=(
        "  actions:\n"
        "  - {at: 1m, suspend: {kind: JobSet, name: nope}}\n"
        "  - {at: 20m, delete: {kind: Job, name: js-w-0}}\n"
        "  - {at: 21m, delete: {kind: Job, name: js-w-0}}\n"))
    text, outcome = run_json(write_scenario(tmp_path, scenario))
    assert outcome.failed
    rejected = [(e["time"], e["kind"], e["name"], e["reason"], e["message"])
                for e in load(text)["events"] if e["event"] == "Rejected"]
    assert rejected == [
        (60, "JobSet", "nope", "NotFound",
         "suspend JobSet default/nope at 1m: JobSet default/nope never existed; the action was skipped"),
        (1260, "Job", "js-w-0", "NotFound",
         "delete Job default/js-w-0 at 21m: Job default/js-w-0 was already deleted; the action was skipped"),
    ]


def test_suspend_and_resume(tmp_path: Path) -> None:
    scenario = _jobset_scenario(actions=(
        "  actions:\n"
        "  - {at: 2m, suspend: {kind: JobSet, name: js}}\n"
        "  - {at: 5m, resume: {kind: JobSet, name: js}}\n"))
    text, outcome = run_json(write_scenario(tmp_path, scenario))
    assert not outcome.failed
    jobset = [(e[0], e[3]) for e in events_of(load(text)) if e[1] == "JobSet"]
    assert jobset[:3] == [(0, "Created"), (120, "Suspended"), (300, "Resumed")]
    assert jobset[-1][1] == "Completed"


def test_zero_nodes_leaves_pods_unschedulable_and_says_why(tmp_path: Path) -> None:
    manifest = tmp_path / "job.yaml"
    manifest.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: lonely}\nspec:\n  template:\n"
        "    spec: {restartPolicy: Never, containers: [{name: c, image: x}]}\n")
    text, outcome = run_json(manifest)
    assert not outcome.failed
    document = load(text)
    assert document["scenario"] == "job"
    unschedulable = [e for e in document["events"] if e["event"] == "Unschedulable"]
    # kube-scheduler's ErrNoNodesAvailable.
    assert unschedulable and unschedulable[0]["message"] == "no nodes available to schedule pods"
    assert document["summary"]["stopReason"] == "done"  # no timer left: the scheduler waits for events
    assert [(f["kind"], f["state"]) for f in document["final"]] == [("Job", "Active"), ("Pod", "Pending")]


def test_submitting_an_object_twice_is_rejected_as_already_existing(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: twice}\nspec:\n  template:\n"
        "    metadata: {annotations: {jobsetctl.dev/duration: 1h}}\n"
        "    spec: {restartPolicy: Never, containers: [{name: c, image: x}]}\n")
    scenario = write_scenario(tmp_path, """\
        apiVersion: jobsetctl.dev/v1alpha1
        kind: Scenario
        spec:
          submit:
          - {at: 0s, files: [job.yaml]}
          - {at: 10m, files: [job.yaml]}
        """)
    text, outcome = run_json(scenario)
    assert outcome.failed
    document = load(text)
    assert document["scenario"] == "scenario"  # no metadata.name: the file's stem
    rejected = [(e["time"], e["name"], e["reason"], e["message"]) for e in document["events"] if e["event"] == "Rejected"]
    assert rejected == [(600, "twice", "AlreadyExists", 'jobs.batch "twice" already exists')]


GANG = """\
apiVersion: jobsetctl.dev/v1alpha1
kind: Scenario
metadata: {name: gang}
spec:
  kubernetesVersion: "1.36"
  nodes:
  - name: node
    count: 4
    capacity: {cpu: "4", memory: 16Gi}
    topology: [{key: example.com/rack, count: 2}]
  submit:
  - at: 0s
    objects:
    - apiVersion: scheduling.k8s.io/v1alpha2
      kind: PodGroup
      metadata: {name: pg}
      spec:
        schedulingPolicy: {gang: {minCount: 2}}
        schedulingConstraints: {topology: [{key: example.com/rack}]}
    - apiVersion: batch/v1
      kind: Job
      metadata: {name: g}
      spec:
        parallelism: 2
        completions: 2
        completionMode: Indexed
        template:
          metadata: {annotations: {jobsetctl.dev/duration: 5m}}
          spec:
            restartPolicy: Never
            schedulingGroup: {podGroupName: pg}
            containers: [{name: c, image: x, resources: {requests: {cpu: "3"}}}]
"""


def test_gang_with_topology_turns_its_gates_on_and_lands_in_one_rack(tmp_path: Path) -> None:
    text, outcome = run_json(write_scenario(tmp_path, GANG))
    assert not outcome.failed
    document = load(text)
    summary = document["summary"]
    assert summary["enabledGates"] == ["GenericWorkload", "GangScheduling", "TopologyAwareWorkloadScheduling"]
    (gang,) = summary["gangs"]
    assert (gang["name"], gang["admittedAt"], gang["minCount"]) == ("pg", 0, 2)
    (domain,) = gang["domains"]
    rack = domain.split("=")[1]
    nodes = {e["node"] for e in document["events"] if e["kind"] == "Pod" and e["event"] == "Scheduled"}
    racks = {"rack-0": {"node-0", "node-1"}, "rack-1": {"node-2", "node-3"}}
    assert len(nodes) == 2 and nodes <= racks[rack]
    assert [w["state"] for w in summary["workloads"]] == ["Completed"]
    assert [(f["kind"], f["state"]) for f in document["final"] if f["kind"] != "Pod"] == [
        ("Job", "Complete"), ("PodGroup", "Scheduled")]
