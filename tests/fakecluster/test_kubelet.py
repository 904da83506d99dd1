"""The kubelet and node lifecycle of ``simulate``: pod behaviour annotations, restarts, deletion, node failure."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jobsetctl.fakecluster.kubelet import Behaviour, attempt_identity, behaviour_of, crash_backoff
from jobsetctl.fakecluster.nodelifecycle import toleration_seconds
from tests.fakecluster.harness import (
    ClusterFactory,
    Timeline,
    add_node,
    conditions,
    job,
    kube_events,
    status_of,
    submit,
)


def pod(name: str = "p", annotations: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "annotations": dict(annotations or {})},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}], **spec}}


def test_a_started_pod_has_running_status(make_cluster: ClusterFactory) -> None:
    fake = make_cluster()
    add_node(fake, "node-a")
    submit(fake, pod(annotations={"jobsetctl.dev/ready-after": "3s"},
                     initContainers=[{"name": "init", "image": "busybox"},
                                     {"name": "side", "image": "busybox", "restartPolicy": "Always"}]))
    fake.run(1)
    stored = fake.api.get("", "Pod", "default", "p")
    assert stored is not None
    status = stored["status"]
    assert (status["phase"], status["startTime"]) == ("Running", "2026-01-01T00:00:00Z")
    assert [(c["type"], c["status"]) for c in status["conditions"]] == [
        ("PodScheduled", "True"), ("Initialized", "True"), ("Ready", "False"), ("ContainersReady", "False")]
    assert status["containerStatuses"] == [{"name": "main", "image": "busybox", "ready": False, "restartCount": 0,
                                            "started": True, "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}]
    assert [list(s["state"]) for s in status["initContainerStatuses"]] == [["terminated"], ["running"]]
    fake.run(3)
    assert [(c["type"], c["status"]) for c in stored["status"]["conditions"]][2:] == [
        ("Ready", "True"), ("ContainersReady", "True")]
    assert Timeline(fake).events(kinds={"Pod"}) == [
        (0, "Pod", "p", "Created", None), (0, "Pod", "p", "Started", None), (3, "Pod", "p", "Ready", None)]


def test_a_pod_bound_to_a_missing_node_never_starts_and_pod_gc_collects_it(make_cluster: ClusterFactory) -> None:
    """PodGC's gcOrphaned (pkg/controller/podgc/gc_controller.go): a pod whose node the informer does not
    know is collected once the node has been missing for the 40 s quarantine, Failed with
    DisruptionTarget DeletionByPodGC, whether the node was deleted or never existed."""
    fake = make_cluster()
    created = submit(fake, pod(nodeName="ghost", annotations={"jobsetctl.dev/duration": "1s"}))
    fake.run(39)
    stored = fake.api.get("", "Pod", "default", "p")
    assert stored is not None and stored["status"].get("phase", "Pending") == "Pending"
    fake.run(100)
    assert fake.api.get("", "Pod", "default", "p") is None
    assert created["status"]["phase"] == "Failed"
    assert Timeline(fake).events(kinds={"Pod"}) == [
        (0, "Pod", "p", "Created", None), (40, "Pod", "p", "Failed", "DeletionByPodGC"), (40, "Pod", "p", "Deleted", None)]


def test_a_missing_node_created_within_the_quarantine_runs_its_pod(make_cluster: ClusterFactory) -> None:
    fake = make_cluster()
    submit(fake, pod(nodeName="ghost", annotations={"jobsetctl.dev/duration": "1s"}))
    fake.clock.call_at(30, add_node, fake, "ghost")
    fake.run(100)
    assert [e[:4] for e in Timeline(fake).events(kinds={"Pod"})] == [
        (0, "Pod", "p", "Created"), (30, "Pod", "p", "Started"), (30, "Pod", "p", "Ready"), (31, "Pod", "p", "Succeeded")]


def test_fail_attempts_recover_within_a_job(make_cluster: ClusterFactory) -> None:
    """Attempts count per (Job, completion index): the third pod of the index succeeds."""
    fake = make_cluster()
    add_node(fake, "node-a")
    submit(fake, job(completions=1, indexed=True, annotations={
        "jobsetctl.dev/fail-after": "5s", "jobsetctl.dev/fail-attempts": "2", "jobsetctl.dev/duration": "30s"}))
    fake.run(1000)
    assert Timeline(fake).events(kinds={"Job", "Pod"}, skip={"Ready", "Started", "Created"}) == [
        (5, "Pod", "pi-0-*1", "Failed", "Error"),
        (20, "Pod", "pi-0-*2", "Failed", "Error"),
        (70, "Pod", "pi-0-*3", "Succeeded", None),
        (70, "Job", "pi", "Completed", "CompletionsReached"),
    ]
    assert fake.components["kubelet"].attempts[("job", "default", "pi", "0")] == 3


def test_fail_attempts_survive_a_jobset_restart(make_cluster: ClusterFactory) -> None:
    """The identity of a JobSet pod is (JobSet, replicated job, job index, completion index): a Job
    recreated under the same name (a JobSet restart) continues the count, so it can recover."""
    labels = {"jobset.sigs.k8s.io/jobset-name": "js", "jobset.sigs.k8s.io/replicatedjob-name": "w",
              "jobset.sigs.k8s.io/job-index": "0"}
    behaviour = {"jobsetctl.dev/fail-after": "5s", "jobsetctl.dev/fail-attempts": "1",
                 "jobsetctl.dev/duration": "30s"}
    fake = make_cluster()
    add_node(fake, "node-a")
    first = submit(fake, job("js-w-0", completions=1, indexed=True, backoffLimit=0, labels=labels,
                             annotations=behaviour))
    fake.run(100)
    assert conditions(fake, "js-w-0")[-1] == ("Failed", "True", "BackoffLimitExceeded")
    fake.api.delete(first)
    fake.run(100)
    submit(fake, job("js-w-0", completions=1, indexed=True, backoffLimit=0, labels=labels, annotations=behaviour))
    fake.run(1000)
    assert conditions(fake, "js-w-0")[-1] == ("Complete", "True", "CompletionsReached")
    assert fake.components["kubelet"].attempts[("jobset", "default", "js", "w", "0", "0")] == 2


def test_crash_loop_backoff_doubles_and_is_capped(make_cluster: ClusterFactory) -> None:
    fake = make_cluster()
    add_node(fake, "node-a")
    submit(fake, job(backoffLimit=100, restart="OnFailure", annotations={"jobsetctl.dev/fail-after": "1s"}))
    fake.run(700)
    starts = [e[0] for e in kube_events(fake, "Pod") if e[4] == "Started"]
    # Crash 1 s after each start; wait 10, 20, 40, 80, 160, then 300 (cap).
    assert starts == [0, 11, 32, 73, 154, 315, 616]
    stored = fake.api.list("", "Pod")[0]
    container = stored["status"]["containerStatuses"][0]
    assert container["restartCount"] == 6
    assert container["lastState"]["terminated"]["exitCode"] == 1
    assert status_of(fake)["active"] == 1 and "failed" not in status_of(fake)
    backoff = [e[5] for e in kube_events(fake, "Pod") if e[4] == "BackOff"]
    assert backoff[0].startswith("Back-off restarting failed container main in pod pi-")


def test_fail_pod_fails_a_running_pod_now(make_cluster: ClusterFactory) -> None:
    fake = make_cluster()
    add_node(fake, "node-a")
    submit(fake, pod(annotations={"jobsetctl.dev/duration": "100s"}))
    fake.run(10)
    kubelet = fake.components["kubelet"]
    stored = fake.api.get("", "Pod", "default", "p")
    assert stored is not None
    assert kubelet.fail_pod(stored) is True
    fake.run(20)
    assert stored["status"]["phase"] == "Failed"
    assert stored["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 1
    assert kubelet.fail_pod(stored) is False
    assert Timeline(fake).events(kinds={"Pod"})[-1] == (10, "Pod", "p", "Failed", "Error")


def test_deleted_pod_is_killed_after_its_grace_period(make_cluster: ClusterFactory) -> None:
    fake = make_cluster()
    add_node(fake, "node-a")
    submit(fake, pod(terminationGracePeriodSeconds=10, annotations={"jobsetctl.dev/duration": "100s"}))
    fake.run(5)
    stored = fake.api.get("", "Pod", "default", "p")
    assert stored is not None
    fake.api.delete(stored)
    assert stored["metadata"]["deletionGracePeriodSeconds"] == 10
    fake.run(14)
    assert fake.api.get("", "Pod", "default", "p") is not None
    fake.run(15)
    assert fake.api.get("", "Pod", "default", "p") is None
    assert stored["status"]["phase"] == "Failed"
    assert stored["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 143
    # The 100 s duration never completes: the kill came first, and no Failed event is recorded for it.
    assert Timeline(fake).events(kinds={"Pod"})[-1] == (15, "Pod", "p", "Deleted", None)
    assert ("Pod", "p", "Normal", "Killing", "Stopping container main") in [e[1:] for e in kube_events(fake, "Pod")]


def test_node_failure_evicts_pods_after_their_toleration(make_cluster: ClusterFactory) -> None:
    """Node fails at 100 s: NotReady, unreachable taints; default pods are evicted after 300 s, one
    tolerating 60 s after 60 s, one tolerating forever never; PodGC takes them after the 30 s grace."""
    fake = make_cluster()
    add_node(fake, "node-a")
    forever = [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}]
    short = [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
              "tolerationSeconds": 60}]
    submit(fake, pod("default-300"))
    submit(fake, pod("short-60", tolerations=short))
    submit(fake, pod("forever", tolerations=forever))
    fake.run(100)
    assert fake.components["kubelet"].fail_node("node-a") is True
    fake.run(2000)
    assert Timeline(fake).events(kinds={"Node", "Pod"}, skip={"Created", "Started", "Ready"}) == [
        (100, "Node", "node-a", "Failed", "NodeStatusUnknown"),
        (190, "Pod", "short-60", "Failed", "DeletionByTaintManager"),
        (190, "Pod", "short-60", "Deleted", None),
        (430, "Pod", "default-300", "Failed", "DeletionByTaintManager"),
        (430, "Pod", "default-300", "Deleted", None),
    ]
    node = fake.api.get("", "Node", "", "node-a")
    assert node is not None
    assert node["spec"]["taints"] == [
        {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": "2026-01-01T00:01:40Z"}]
    ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.")
    survivor = fake.api.get("", "Pod", "default", "forever")
    assert survivor is not None
    assert [(c["type"], c["status"]) for c in survivor["status"]["conditions"] if c["type"] == "Ready"] == [
        ("Ready", "False")]
    evictions = [e for e in kube_events(fake, "Pod") if e[4] == "TaintManagerEviction"]
    assert [(e[0], e[5]) for e in evictions] == [(160, "Marking for deletion Pod default/short-60"),
                                                  (400, "Marking for deletion Pod default/default-300")]
    assert fake.components["kubelet"].fail_node("nowhere") is False


def test_evicted_pod_carries_the_disruption_target_condition(make_cluster: ClusterFactory) -> None:
    fake = make_cluster()
    add_node(fake, "node-a")
    submit(fake, pod())
    fake.run(10)
    stored = fake.api.get("", "Pod", "default", "p")
    assert stored is not None
    stored["metadata"]["finalizers"] = ["example.com/hold"]  # keep it around to look at
    fake.components["kubelet"].fail_node("node-a")
    fake.run(400)
    target = next(c for c in stored["status"]["conditions"] if c["type"] == "DisruptionTarget")
    assert (target["status"], target["reason"], target["message"]) == (
        "True", "DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint")
    fake.run(500)
    assert stored["status"]["phase"] == "Failed"
    assert fake.api.get("", "Pod", "default", "p") is stored  # the finalizer holds it


def test_invalid_behaviour_annotations_are_reported_and_ignored(make_cluster: ClusterFactory) -> None:
    fake = make_cluster()
    add_node(fake, "node-a")
    submit(fake, pod(annotations={"jobsetctl.dev/duration": "soon", "jobsetctl.dev/fail-attempts": "two"}))
    fake.run(10)
    messages = [e[5] for e in kube_events(fake, "Pod") if e[4] == "InvalidBehaviour"]
    assert len(messages) == 2 and messages[1] == (
        'jobsetctl.dev/fail-attempts: invalid count "two": expected a whole number')


def test_behaviour_of_reads_the_annotations() -> None:
    assert behaviour_of(pod(annotations={"jobsetctl.dev/duration": "2h", "jobsetctl.dev/ready-after": "90s",
                                         "jobsetctl.dev/fail-after": "1m", "jobsetctl.dev/fail-attempts": "3"})) == (
        Behaviour(duration=7200.0, ready_after=90.0, fail_after=60.0, fail_attempts=3))
    assert behaviour_of(pod()) == Behaviour()


def test_attempt_identity_prefers_the_jobset_labels() -> None:
    jobset_pod = pod(annotations={"batch.kubernetes.io/job-completion-index": "2"})
    jobset_pod["metadata"]["namespace"] = "ns"
    jobset_pod["metadata"]["labels"] = {"jobset.sigs.k8s.io/jobset-name": "js",
                                        "jobset.sigs.k8s.io/replicatedjob-name": "w",
                                        "jobset.sigs.k8s.io/job-index": "1"}
    assert attempt_identity(jobset_pod) == ("jobset", "ns", "js", "w", "1", "2")
    plain = pod()
    plain["metadata"]["ownerReferences"] = [{"kind": "Job", "name": "pi", "controller": True, "uid": "u"}]
    assert attempt_identity(plain) == ("job", "", "pi", "")


@pytest.mark.parametrize(("tolerations", "expected"), [
    ([], 0.0),
    ([{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
       "tolerationSeconds": 300}], 300.0),
    ([{"operator": "Exists"}], None),
    ([{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 20},
      {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
       "tolerationSeconds": 50}], 20.0),
    ([{"key": "node.kubernetes.io/unreachable", "operator": "Equal", "value": "x", "effect": "NoExecute"}], 0.0),
    ([{"key": "other", "operator": "Exists", "effect": "NoExecute"}], 0.0),
])
def test_toleration_seconds(tolerations: list[dict[str, Any]], expected: float | None) -> None:
    assert toleration_seconds({"spec": {"tolerations": tolerations}}, "node.kubernetes.io/unreachable",
                              "NoExecute") == expected


@given(st.integers(min_value=1, max_value=60))
def test_crash_backoff_doubles_up_to_five_minutes(crashes: int) -> None:
    delay = crash_backoff(crashes)
    assert delay == min(10 * 2 ** (crashes - 1), 300)
    assert crash_backoff(crashes + 1) >= delay


def test_a_pod_deleted_before_it_started_goes_at_once(make_cluster: ClusterFactory) -> None:
    fake = make_cluster()
    add_node(fake, "node-a")
    created = submit(fake, pod(nodeName="node-a", annotations={"jobsetctl.dev/duration": "100s"}))
    fake.api.delete(created)  # before any controller ran: bound, not started, graceful deletion pending
    assert created["metadata"]["deletionTimestamp"]
    fake.run(0)
    assert fake.api.get("", "Pod", "default", "p") is None
    assert created["status"]["phase"] == "Failed"
    assert [e[3] for e in Timeline(fake).events(kinds={"Pod"})] == ["Created", "Deleted"]


def test_a_pod_bound_to_a_missing_node_and_deleted_is_removed(make_cluster: ClusterFactory) -> None:
    """Regression (issue #6 hardening): a pod bound to a node that does not exist never starts; deleting it
    left it Terminating forever (the kubelet looked for the node before it looked at the deletion), so a
    run with one never became idle. Nothing runs it, so it goes at once, as an unstarted pod does."""
    fake = make_cluster()
    created = submit(fake, pod(nodeName="ghost", annotations={"jobsetctl.dev/duration": "1s"}))
    fake.run(10)
    assert created["status"].get("phase", "Pending") == "Pending"
    fake.api.delete(created)
    fake.run(100)
    assert fake.api.get("", "Pod", "default", "p") is None
    assert created["status"]["phase"] == "Failed"


def test_a_job_whose_pod_is_bound_to_a_missing_node_can_still_fail(make_cluster: ClusterFactory) -> None:
    """The same with the Job controller's tracking finalizer: the Job fails on its deadline (10 s, before
    PodGC's 40 s quarantine), deletes its pod (bound to a node that does not exist) and must then see it
    go, counted, to write ``Failed``."""
    fake = make_cluster()
    submit(fake, job(activeDeadlineSeconds=10, pod_spec={"nodeName": "ghost"},
                     annotations={"jobsetctl.dev/duration": "1s"}))
    fake.run(100)
    assert fake.api.list("", "Pod", "default") == []
    assert conditions(fake)[-1] == ("Failed", "True", "DeadlineExceeded")
    assert status_of(fake)["failed"] == 1


def _delete_node(fake: Any, name: str) -> dict[str, Any]:
    node = fake.api.get("", "Node", "", name)
    assert node is not None
    fake.api.delete(node)
    return node


def _create_node_again(fake: Any, node: dict[str, Any]) -> None:
    again = {key: value for key, value in node.items() if key != "status"}
    again["metadata"] = {k: v for k, v in node["metadata"].items()
                         if k not in ("uid", "resourceVersion", "creationTimestamp")}
    again["status"] = node["status"]
    result = fake.api.create(again)
    assert result.ok, result.message()


def test_pods_of_a_deleted_node_stop_and_podgc_collects_them(make_cluster: ClusterFactory) -> None:
    """Regression (issue #6 hardening, ``delete: {kind: Node}`` in a Scenario): the pods of a deleted node
    ran on to completion as if nothing happened. Nobody runs them; after PodGC's 40 s quarantine they are
    marked Failed (DisruptionTarget / DeletionByPodGC) and force deleted."""
    fake = make_cluster()
    add_node(fake, "node-a")
    created = submit(fake, pod(annotations={"jobsetctl.dev/duration": "30s"}))
    fake.run(10)
    _delete_node(fake, "node-a")
    fake.run(49)
    assert created["status"]["phase"] == "Running"  # frozen: its 30 s would have ended at t=30
    fake.run(100)
    assert fake.api.get("", "Pod", "default", "p") is None
    assert created["status"]["phase"] == "Failed"
    assert next(c for c in created["status"]["conditions"] if c["type"] == "DisruptionTarget")["reason"] == \
        "DeletionByPodGC"
    assert Timeline(fake).events(kinds={"Pod"}) == [
        (0, "Pod", "p", "Created", None), (0, "Pod", "p", "Started", None), (0, "Pod", "p", "Ready", None),
        (50, "Pod", "p", "Failed", "DeletionByPodGC"), (50, "Pod", "p", "Deleted", None)]


def test_a_job_replaces_the_pod_of_a_deleted_node(make_cluster: ClusterFactory) -> None:
    """With the tracking finalizer: the Job counts the collected pod as failed and replaces it."""
    fake = make_cluster()
    add_node(fake, "node-a")
    submit(fake, job(backoffLimit=2, annotations={"jobsetctl.dev/duration": "100s"}))
    fake.run(10)
    node = _delete_node(fake, "node-a")
    fake.run(60)
    _create_node_again(fake, node)
    fake.run(1000)
    assert conditions(fake)[-1] == ("Complete", "True", "CompletionsReached")
    assert (status_of(fake)["failed"], status_of(fake)["succeeded"]) == (1, 1)


def test_a_node_created_again_within_the_quarantine_keeps_its_pods(make_cluster: ClusterFactory) -> None:
    fake = make_cluster()
    add_node(fake, "node-a")
    created = submit(fake, pod(annotations={"jobsetctl.dev/duration": "100s"}))
    fake.run(10)
    node = _delete_node(fake, "node-a")
    fake.run(20)
    _create_node_again(fake, node)
    fake.run(200)
    assert created["status"]["phase"] == "Succeeded"
    assert [e[3] for e in Timeline(fake).events(kinds={"Pod"})] == ["Created", "Started", "Ready", "Succeeded"]


def test_a_pod_bound_to_a_node_starts_when_the_node_is_created(make_cluster: ClusterFactory) -> None:
    fake = make_cluster()
    created = submit(fake, pod(nodeName="late", annotations={"jobsetctl.dev/duration": "10s"}))
    fake.run(5)
    add_node(fake, "late")
    fake.run(100)
    assert created["status"]["phase"] == "Succeeded"
    assert Timeline(fake).events(kinds={"Pod"})[-1] == (15, "Pod", "p", "Succeeded", None)
