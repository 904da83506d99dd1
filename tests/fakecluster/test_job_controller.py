"""The Job controller on the real fake cluster: exact timelines of Job and Pod events.

Behaviour cited from kubernetes ``pkg/controller/job`` (see the controller modules' docstrings);
jobset.md §3.1 lists what the Job controller adds to pods.
"""

from __future__ import annotations

import pytest

from jobsetctl.fakecluster.controllers.job_spec import JOB_TRACKING_FINALIZER
from tests.fakecluster.harness import (
    ClusterFactory,
    Timeline,
    add_node,
    conditions,
    job,
    kube_events,
    status_of,
    submit,
    update_spec,
)

JOB_AND_PODS = {"Job", "Pod"}


def test_indexed_job_of_three_pods_completes(make_cluster: ClusterFactory) -> None:
    fake = make_cluster()
    add_node(fake, "node-a")
    submit(fake, job(parallelism=3, completions=3, indexed=True,
                     annotations={"jobsetctl.dev/duration": "60s", "jobsetctl.dev/ready-after": "5s"}))
    fake.run(4)
    assert (status_of(fake)["active"], status_of(fake)["ready"]) == (3, 0)
    fake.run(5)
    # status.ready is what JobSet counts a Job as ready by (jobset.md §1.7).
    assert (status_of(fake)["active"], status_of(fake)["ready"]) == (3, 3)
    fake.run(1000)
    assert Timeline(fake).events(kinds=JOB_AND_PODS) == [
        (0, "Job", "pi", "Created", None),
        (0, "Pod", "pi-0-*1", "Created", None),
        (0, "Pod", "pi-1-*1", "Created", None),
        (0, "Pod", "pi-2-*1", "Created", None),
        (0, "Pod", "pi-0-*1", "Started", None),
        (0, "Pod", "pi-1-*1", "Started", None),
        (0, "Pod", "pi-2-*1", "Started", None),
        (5, "Pod", "pi-0-*1", "Ready", None),
        (5, "Pod", "pi-1-*1", "Ready", None),
        (5, "Pod", "pi-2-*1", "Ready", None),
        (60, "Pod", "pi-0-*1", "Succeeded", None),
        (60, "Pod", "pi-1-*1", "Succeeded", None),
        (60, "Pod", "pi-2-*1", "Succeeded", None),
        (60, "Job", "pi", "Completed", "CompletionsReached"),
    ]
    status = status_of(fake)
    # JobStatus field order and values as the 1.31+ controller writes them (interim condition first).
    assert list(status) == ["conditions", "startTime", "completionTime", "succeeded", "terminating",
                            "completedIndexes", "uncountedTerminatedPods", "ready"]
    assert conditions(fake) == [("SuccessCriteriaMet", "True", "CompletionsReached"),
                                ("Complete", "True", "CompletionsReached")]
    assert status["conditions"][1]["message"] == "Reached expected number of succeeded pods"
    assert (status["startTime"], status["completionTime"]) == ("2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z")
    assert (status["succeeded"], status["completedIndexes"], status["ready"], status["terminating"]) == (3, "0-2", 0, 0)
    assert [e[3:] for e in kube_events(fake, "Job")] == [
        ("Normal", "SuccessfulCreate", f"Created pod: {name}") for name in sorted(
            p["metadata"]["name"] for p in fake.api.list("", "Pod"))
    ] + [("Normal", "Completed", "Job completed")]
    # Counted pods lose the tracking finalizer and stay (no PodGC below its threshold).
    assert all(not p["metadata"].get("finalizers") for p in fake.api.list("", "Pod"))


def test_indexed_pods_carry_what_the_job_controller_adds(make_cluster: ClusterFactory) -> None:
    """jobset.md §3.1 and trainer.md §3.15: completion-index annotation and label, JOB_COMPLETION_INDEX,
    hostname ``<job>-<index>`` (what makes ``<jobset>-<rjob>-<jobIdx>-<podIdx>.<subdomain>`` resolve)."""
    fake = make_cluster(simulate=False)
    spec = {"initContainers": [{"name": "init", "image": "busybox"}],
            "containers": [{"name": "main", "image": "busybox",
                            "env": [{"name": "A", "value": "1"}]}],
            "hostname": "ignored", "subdomain": "svc"}
    created = submit(fake, job(parallelism=2, completions=2, indexed=True, pod_spec=spec,
                               labels={"app": "pi"}, annotations={"note": "x"}))
    fake.run(0)
    pods = sorted(fake.api.list("", "Pod"), key=lambda p: p["metadata"]["name"])
    assert [p["metadata"]["generateName"] for p in pods] == ["pi-0-", "pi-1-"]
    first = pods[0]
    uid = created["metadata"]["uid"]
    assert first["metadata"]["labels"] == {
        "app": "pi", "batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "pi",
        "controller-uid": uid, "job-name": "pi", "batch.kubernetes.io/job-completion-index": "0"}
    assert first["metadata"]["annotations"] == {"note": "x", "batch.kubernetes.io/job-completion-index": "0"}
    assert first["metadata"]["finalizers"] == [JOB_TRACKING_FINALIZER]
    assert first["metadata"]["ownerReferences"] == [{
        "apiVersion": "batch/v1", "kind": "Job", "name": "pi", "uid": uid, "controller": True,
        "blockOwnerDeletion": True}]
    # The hostname is set whatever the template says (manageJob overwrites it).
    assert first["spec"]["hostname"] == "pi-0"
    index_env = {"name": "JOB_COMPLETION_INDEX", "valueFrom": {
        "fieldRef": {"fieldPath": "metadata.labels['batch.kubernetes.io/job-completion-index']"}}}
    assert first["spec"]["initContainers"][0]["env"] == [index_env]
    assert first["spec"]["containers"][0]["env"] == [{"name": "A", "value": "1"}, index_env]
    assert first["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    assert status_of(fake)["active"] == 2


def test_non_indexed_pods_are_named_after_the_job(make_cluster: ClusterFactory) -> None:
    fake = make_cluster(simulate=False)
    submit(fake, job(parallelism=2))
    fake.run(0)
    pods = fake.api.list("", "Pod")
    assert [p["metadata"]["generateName"] for p in pods] == ["pi-", "pi-"]
    assert all("hostname" not in p["spec"] and "annotations" not in p["metadata"] for p in pods)


def test_render_pod_names_are_deterministic_for_a_seed(make_cluster: ClusterFactory) -> None:
    def names(seed: int) -> list[str]:
        fake = make_cluster(simulate=False, seed=seed)
        submit(fake, job(parallelism=3, completions=3, indexed=True))
        fake.run(0)
        return [p["metadata"]["name"] for p in fake.api.list("", "Pod")]

    assert names(0) == names(0) == ["pi-0-q7rcl", "pi-1-vtq89", "pi-2-mtpxj"]
    assert names(1) != names(0)


def test_backoff_limit_with_restart_policy_never(make_cluster: ClusterFactory) -> None:
    """Replacements wait 10 s, then 20 s after the last failure; the third failure exceeds 2."""
    fake = make_cluster()
    add_node(fake, "node-a")
    submit(fake, job(backoffLimit=2, annotations={"jobsetctl.dev/fail-after": "5s"}))
    fake.run(1000)
    assert Timeline(fake).events(kinds=JOB_AND_PODS, skip={"Ready", "Started"}) == [
        (0, "Job", "pi", "Created", None),
        (0, "Pod", "pi-*1", "Created", None),
        (5, "Pod", "pi-*1", "Failed", "Error"),
        (15, "Pod", "pi-*2", "Created", None),
        (20, "Pod", "pi-*2", "Failed", "Error"),
        (40, "Pod", "pi-*3", "Created", None),
        (45, "Pod", "pi-*3", "Failed", "Error"),
        (45, "Job", "pi", "Failed", "BackoffLimitExceeded"),
    ]
    status = status_of(fake)
    assert conditions(fake) == [("FailureTarget", "True", "BackoffLimitExceeded"),
                                ("Failed", "True", "BackoffLimitExceeded")]
    assert status["conditions"][1]["message"] == "Job has reached the specified backoff limit"
    assert status["failed"] == 3 and "active" not in status
    assert kube_events(fake, "Job")[-1][3:] == ("Warning", "BackoffLimitExceeded",
                                                "Job has reached the specified backoff limit")


def test_backoff_limit_with_restart_policy_on_failure_counts_container_restarts(make_cluster: ClusterFactory) -> None:
    """The kubelet restarts in place after 10 s, then 20 s; at two restarts the Job fails, deletes the
    pod, and writes Failed once the pod has terminated (30 s grace)."""
    fake = make_cluster()
    add_node(fake, "node-a")
    submit(fake, job(backoffLimit=2, restart="OnFailure", annotations={"jobsetctl.dev/fail-after": "5s"}))
    fake.run(1000)
    assert Timeline(fake).events(kinds=JOB_AND_PODS) == [
        (0, "Job", "pi", "Created", None),
        (0, "Pod", "pi-*1", "Created", None),
        (0, "Pod", "pi-*1", "Started", None),
        (0, "Pod", "pi-*1", "Ready", None),
        (15, "Pod", "pi-*1", "Ready", None),
        # The second restart (40 s) reaches the limit: the Job deletes the pod before it is Ready.
        (70, "Pod", "pi-*1", "Deleted", None),
        (70, "Job", "pi", "Failed", "BackoffLimitExceeded"),
    ]
    status = status_of(fake)
    assert status["conditions"][0]["lastTransitionTime"] == "2026-01-01T00:00:40Z"  # FailureTarget
    # The pod deleted because the Job failed counts as failed (trackJobStatusAndRemoveFinalizers).
    assert status["failed"] == 1
    reasons = [e[4] for e in kube_events(fake, "Pod")]
    assert reasons.count("BackOff") == 2 and reasons.count("Killing") == 1


def test_backoff_limit_per_index_retries_each_index_once(make_cluster: ClusterFactory) -> None:
    fake = make_cluster()
    add_node(fake, "node-a")
    submit(fake, job(parallelism=2, completions=2, indexed=True, backoffLimitPerIndex=1,
                     annotations={"jobsetctl.dev/fail-after": "5s", "jobsetctl.dev/fail-attempts": "1",
                                  "jobsetctl.dev/duration": "30s"}))
    fake.run(1000)
    assert Timeline(fake).events(kinds=JOB_AND_PODS, skip={"Ready", "Started"}) == [
        (0, "Job", "pi", "Created", None),
        (0, "Pod", "pi-0-*1", "Created", None),
        (0, "Pod", "pi-1-*1", "Created", None),
        (5, "Pod", "pi-0-*1", "Failed", "Error"),
        (5, "Pod", "pi-1-*1", "Failed", "Error"),
        (15, "Pod", "pi-0-*2", "Created", None),
        (15, "Pod", "pi-1-*2", "Created", None),
        (45, "Pod", "pi-0-*2", "Succeeded", None),
        (45, "Pod", "pi-1-*2", "Succeeded", None),
        (45, "Job", "pi", "Completed", "CompletionsReached"),
    ]
    status = status_of(fake)
    assert (status["failed"], status["failedIndexes"], status["completedIndexes"]) == (2, "", "0,1")
    replacements = [p for p in fake.api.list("", "Pod") if p["status"]["phase"] == "Succeeded"]
    assert {p["metadata"]["annotations"]["batch.kubernetes.io/job-index-failure-count"] for p in replacements} == {"1"}


def test_backoff_limit_per_index_fails_the_indexes_then_the_job(make_cluster: ClusterFactory) -> None:
    fake = make_cluster()
    add_node(fake, "node-a")
    submit(fake, job(parallelism=2, completions=2, indexed=True, backoffLimitPerIndex=1,
                     annotations={"jobsetctl.dev/fail-after": "5s"}))
    fake.run(1000)
    assert Timeline(fake).events(kinds={"Job"}) == [
        (0, "Job", "pi", "Created", None),
        (20, "Job", "pi", "Failed", "FailedIndexes"),
    ]
    status = status_of(fake)
    assert (status["failed"], status["failedIndexes"]) == (4, "0,1")
    assert status["conditions"][-1]["message"] == "Job has failed indexes"


def test_max_failed_indexes_exceeded(make_cluster: ClusterFactory) -> None:
    fake = make_cluster()
    add_node(fake, "node-a")
    submit(fake, job(parallelism=3, completions=3, indexed=True, backoffLimitPerIndex=0, maxFailedIndexes=1,
                     annotations={"jobsetctl.dev/fail-after": "5s"}))
    fake.run(100)
    assert conditions(fake)[-1] == ("Failed", "True", "MaxFailedIndexesExceeded")
    assert status_of(fake)["conditions"][-1]["message"] == "Job has exceeded the specified maximal number of failed indexes"


def test_pod_failure_policy_fail_job_on_exit_code(make_cluster: ClusterFactory) -> None:
    fake = make_cluster()
    add_node(fake, "node-a")
    policy = {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1]}}]}
    submit(fake, job(backoffLimit=6, podFailurePolicy=policy, annotations={"jobsetctl.dev/fail-after": "5s"}))
    fake.run(1000)
    pod = fake.api.list("", "Pod")[0]["metadata"]["name"]
    assert Timeline(fake).events(kinds={"Job"}) == [
        (0, "Job", "pi", "Created", None),
        (5, "Job", "pi", "Failed", "PodFailurePolicy"),
    ]
    assert conditions(fake) == [("FailureTarget", "True", "PodFailurePolicy"), ("Failed", "True", "PodFailurePolicy")]
    assert status_of(fake)["conditions"][1]["message"] == (
        f"Container main for pod default/{pod} failed with exit code 1 matching FailJob rule at index 0")


@pytest.mark.parametrize("ignore_disruption", [True, False])
def test_pod_failure_policy_ignores_taint_eviction(make_cluster: ClusterFactory, ignore_disruption: bool) -> None:
    """A node fails at 100 s; its pod is evicted at 400 s (300 s toleration) and collected at 430 s.

    With ``Ignore`` on DisruptionTarget the eviction does not count and, because a pod failure policy
    implies ``podReplacementPolicy: Failed``, the replacement waits for the pod to fail (430 s). Without
    any policy the deleted pod counts at once (TerminatingOrFailed) and exceeds ``backoffLimit: 0``.
    """
    fake = make_cluster()
    add_node(fake, "node-a")
    add_node(fake, "node-b")
    extra = {"podFailurePolicy": {"rules": [
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}} if ignore_disruption else {}
    submit(fake, job(backoffLimit=0, annotations={"jobsetctl.dev/duration": "1000s"}, **extra))
    fake.run(100)
    fake.components["kubelet"].fail_node("node-a")
    fake.run(3000)
    events = Timeline(fake).events(kinds=JOB_AND_PODS, skip={"Ready", "Started"})
    if ignore_disruption:
        assert events == [
            (0, "Job", "pi", "Created", None),
            (0, "Pod", "pi-*1", "Created", None),
            (430, "Pod", "pi-*1", "Failed", "DeletionByTaintManager"),
            (430, "Pod", "pi-*2", "Created", None),
            (430, "Pod", "pi-*1", "Deleted", None),
            (1430, "Pod", "pi-*2", "Succeeded", None),
            (1430, "Job", "pi", "Completed", "CompletionsReached"),
        ]
        assert "failed" not in status_of(fake)
    else:
        assert events == [
            (0, "Job", "pi", "Created", None),
            (0, "Pod", "pi-*1", "Created", None),
            (430, "Pod", "pi-*1", "Failed", "DeletionByTaintManager"),
            (430, "Pod", "pi-*1", "Deleted", None),
            (430, "Job", "pi", "Failed", "BackoffLimitExceeded"),
        ]
        assert conditions(fake)[0] == ("FailureTarget", "True", "BackoffLimitExceeded")
        assert status_of(fake)["conditions"][0]["lastTransitionTime"] == "2026-01-01T00:06:40Z"  # 400 s


def test_active_deadline_seconds(make_cluster: ClusterFactory) -> None:
    fake = make_cluster()
    add_node(fake, "node-a")
    submit(fake, job(activeDeadlineSeconds=30, annotations={"jobsetctl.dev/duration": "100s"}))
    fake.run(1000)
    assert Timeline(fake).events(kinds=JOB_AND_PODS, skip={"Ready", "Started"}) == [
        (0, "Job", "pi", "Created", None),
        (0, "Pod", "pi-*1", "Created", None),
        (60, "Pod", "pi-*1", "Deleted", None),
        (60, "Job", "pi", "Failed", "DeadlineExceeded"),
    ]
    assert conditions(fake) == [("FailureTarget", "True", "DeadlineExceeded"), ("Failed", "True", "DeadlineExceeded")]
    status = status_of(fake)
    assert status["conditions"][0]["lastTransitionTime"] == "2026-01-01T00:00:30Z"
    assert status["conditions"][1]["message"] == "Job was active longer than specified deadline"
    assert status["failed"] == 1


def _suspend_resume_scenario(make_cluster: ClusterFactory, clear_start_time: bool) -> list[tuple[object, ...]]:
    """Created suspended with a 40 s deadline; resumed at 50 s, suspended at 70 s, resumed at 200 s."""
    fake = make_cluster()
    add_node(fake, "node-a")
    created = submit(fake, job(parallelism=2, suspend=True, activeDeadlineSeconds=40,
                               annotations={"jobsetctl.dev/duration": "1000s"}))
    fake.run(50)
    assert "startTime" not in status_of(fake)
    update_spec(fake, created, suspend=False)
    fake.run(70)
    assert status_of(fake)["startTime"] == "2026-01-01T00:00:50Z"
    update_spec(fake, created, suspend=True)
    fake.run(200)
    # Suspended for 130 s, far past the deadline counted from 50 s, yet nothing fired; the pods the
    # suspension removed were not counted as failures.
    assert ("Failed", "True", "DeadlineExceeded") not in conditions(fake)
    assert "failed" not in status_of(fake)
    if clear_start_time:
        stored = fake.api.get("batch", "Job", "default", "pi")
        assert stored is not None
        del stored["status"]["startTime"]  # what JobSet (jobset.md §4.8) and Kueue do before resuming
        fake.api.update_status(stored)
    update_spec(fake, created, suspend=False)
    fake.run(1000)
    return Timeline(fake).events(kinds=JOB_AND_PODS, skip={"Ready", "Started"})


PREFIX = [
    (0, "Job", "pi", "Created", None),
    (0, "Job", "pi", "Suspended", "JobSuspended"),
    # manageJob runs before the Suspended condition is updated, so the pods come first.
    (50, "Pod", "pi-*1", "Created", None),
    (50, "Pod", "pi-*2", "Created", None),
    (50, "Job", "pi", "Resumed", "JobResumed"),
    (70, "Job", "pi", "Suspended", "JobSuspended"),
    (100, "Pod", "pi-*1", "Deleted", None),
    (100, "Pod", "pi-*2", "Deleted", None),
]


def test_suspend_pauses_the_deadline_and_a_cleared_start_time_restarts_it(make_cluster: ClusterFactory) -> None:
    assert _suspend_resume_scenario(make_cluster, clear_start_time=True) == [
        *PREFIX,
        (200, "Pod", "pi-*3", "Created", None),
        (200, "Pod", "pi-*4", "Created", None),
        (200, "Job", "pi", "Resumed", "JobResumed"),
        (270, "Pod", "pi-*3", "Deleted", None),
        (270, "Pod", "pi-*4", "Deleted", None),
        (270, "Job", "pi", "Failed", "DeadlineExceeded"),
    ]


def test_quirk_resume_without_clearing_start_time_hits_the_deadline_at_once(make_cluster: ClusterFactory) -> None:
    """syncJob checks ``pastActiveDeadline`` with the old ``startTime`` before the resume resets it,
    which is why JobSet and Kueue clear ``startTime`` before they resume a Job."""
    assert _suspend_resume_scenario(make_cluster, clear_start_time=False) == [
        *PREFIX,
        (200, "Job", "pi", "Failed", "DeadlineExceeded"),
    ]


def test_suspending_reports_terminating_pods(make_cluster: ClusterFactory) -> None:
    fake = make_cluster()
    add_node(fake, "node-a")
    created = submit(fake, job(parallelism=2, annotations={"jobsetctl.dev/duration": "1000s"}))
    fake.run(10)
    update_spec(fake, created, suspend=True)
    fake.run(20)
    status = status_of(fake)
    assert (status.get("active", 0), status["terminating"], status["ready"]) == (0, 2, 0)
    fake.run(40)
    assert status_of(fake)["terminating"] == 0
    # Pods removed for suspension were released first (deleteJobPods): never counted as failures.
    assert "failed" not in status_of(fake)


def test_quirk_active_reported_zero_during_pod_failure_backoff(make_cluster: ClusterFactory) -> None:
    """manageJob returns 0 while the pod-failure back-off holds creation back, so ``status.active``
    reads 0 although one pod still runs (kubernetes job_controller.go, kept as upstream does)."""
    fake = make_cluster()
    add_node(fake, "node-a")
    # NonIndexed: both pods share one attempt counter; the first attempt fails, the second runs.
    submit(fake, job(parallelism=2, completions=2, annotations={
        "jobsetctl.dev/fail-after": "5s", "jobsetctl.dev/fail-attempts": "1", "jobsetctl.dev/duration": "100s"}))
    fake.run(6)
    running = [p for p in fake.api.list("", "Pod") if p["status"]["phase"] == "Running"]
    assert len(running) == 1
    assert "active" not in status_of(fake)  # 0 is omitted
    fake.run(15)
    assert status_of(fake)["active"] == 2


def test_rejected_pod_creates_are_retried_with_the_api_backoff(make_cluster: ClusterFactory) -> None:
    """An unknown PriorityClass: every create is Forbidden; retries at 1, 3, 7, 15, 31, 63 s (1 s
    doubling), and the first retry after the class exists (123 s) succeeds."""
    fake = make_cluster()
    add_node(fake, "node-a")
    submit(fake, job(pod_spec={"priorityClassName": "missing"}))
    fake.run(100)
    submit(fake, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                  "metadata": {"name": "missing"}, "value": 10})
    fake.run(130)
    failures = [e for e in kube_events(fake, "Job") if e[4] == "FailedCreate"]
    assert [e[0] for e in failures] == [0, 1, 3, 7, 15, 31, 63]
    assert failures[0][5] == 'Error creating: pods "pi-" is forbidden: no PriorityClass with name missing was found'
    created = [e for e in kube_events(fake, "Job") if e[4] == "SuccessfulCreate"]
    assert [e[0] for e in created] == [123]
    assert fake.api.list("", "Pod")[0]["spec"]["priority"] == 10


def test_deleting_a_job_releases_its_pods(make_cluster: ClusterFactory) -> None:
    fake = make_cluster(simulate=False)
    created = submit(fake, job(parallelism=2))
    fake.run(0)
    fake.api.delete(created)
    fake.run(0)
    assert fake.api.list("", "Pod") == []


def test_job_managed_by_another_controller_is_left_alone(make_cluster: ClusterFactory) -> None:
    fake = make_cluster(simulate=False)
    submit(fake, job(managedBy="example.com/other"))
    fake.run(0)
    assert fake.api.list("", "Pod") == [] and status_of(fake) == {}


def test_render_without_pods_creates_none(make_cluster: ClusterFactory) -> None:
    fake = make_cluster(simulate=False, create_pods=False)
    submit(fake, job(parallelism=2))
    fake.run(0)
    assert fake.api.list("", "Pod") == []


def test_pod_failure_policy_fail_index_stops_retrying_the_index(make_cluster: ClusterFactory) -> None:
    """FailIndex marks each index failed at its first failure, although ``backoffLimitPerIndex`` allows
    three retries and a retry would have succeeded (only the first attempt of each index fails)."""
    fake = make_cluster()
    add_node(fake, "node-a")
    policy = {"rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [1]}}]}
    submit(fake, job(parallelism=2, completions=2, indexed=True, backoffLimitPerIndex=3, podFailurePolicy=policy,
                     annotations={"jobsetctl.dev/fail-after": "5s", "jobsetctl.dev/fail-attempts": "1",
                                  "jobsetctl.dev/duration": "30s"}))
    fake.run(1000)
    status = status_of(fake)
    assert (status["failedIndexes"], status["failed"]) == ("0,1", 2)
    assert conditions(fake)[-1] == ("Failed", "True", "FailedIndexes")
    assert Timeline(fake).events(kinds={"Job"})[-1] == (5, "Job", "pi", "Failed", "FailedIndexes")


@pytest.mark.parametrize(("policy", "replaced_at"), [("TerminatingOrFailed", 400), ("Failed", 430)])
def test_pod_replacement_policy_decides_when_an_evicted_pod_is_replaced(make_cluster: ClusterFactory, policy: str, replaced_at: int) -> None:
    """The evicted pod terminates from 400 s (taint eviction) to 430 s (grace period, then PodGC)."""
    fake = make_cluster()
    add_node(fake, "node-a")
    add_node(fake, "node-b")
    submit(fake, job(podReplacementPolicy=policy, annotations={"jobsetctl.dev/duration": "1000s"}))
    fake.run(100)
    fake.components["kubelet"].fail_node("node-a")
    fake.run(500)
    created = [e[0] for e in Timeline(fake).events(kinds={"Pod"}) if e[3] == "Created"]
    assert created == [0, replaced_at]
    assert status_of(fake)["failed"] == 1
