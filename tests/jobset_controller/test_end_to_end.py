"""End to end: the JobSet controller with the real Job controller, scheduler, kubelet and pods on the
virtual clock (``simulate``). Pod behaviour comes from the kubelet's annotations
``jobsetctl.dev/duration``, ``jobsetctl.dev/ready-after``, ``jobsetctl.dev/fail-after`` and
``jobsetctl.dev/fail-attempts``."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import requires_upstream
from tests.jobset_controller.harness import (
    advance,
    conditions,
    jobs_by_restart_attempt,
    jobset,
    kube_events,
    make_cluster,
    rjob,
    submit,
    timeline,
    update_jobset,
)
from tests.jobset_controller.test_upstream_examples import load

DURATION = "jobsetctl.dev/duration"
READY_AFTER = "jobsetctl.dev/ready-after"
FAIL_AFTER = "jobsetctl.dev/fail-after"
FAIL_ATTEMPTS = "jobsetctl.dev/fail-attempts"


def simulated(nodes: int = 2, cpu: str = "8", gates: str = "") -> Any:
    """A simulated cluster (scheduler, kubelet) with ``nodes`` Ready nodes."""
    cluster = make_cluster(gates, simulate=True, create_pods=True)
    for index in range(nodes):
        name = f"node-{index}"
        cluster.api.create({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {
                "allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"},
                "capacity": {"cpu": cpu, "memory": "32Gi", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        }, skip_admission=True)
    return cluster


def pod_rjob(
    name: str,
    replicas: int = 1,
    *,
    annotations: dict[str, str],
    grace: int | None = None,
    restart_policy: str = "Never",
    **fields: Any,
) -> dict[str, Any]:
    pod_spec: dict[str, Any] = {
        "restartPolicy": restart_policy,
        "containers": [{"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}],
    }
    if grace is not None:
        pod_spec["terminationGracePeriodSeconds"] = grace
    return rjob(name, replicas, driven=False, job_spec={"backoffLimit": 0}, pod_metadata={"annotations": annotations},
                pod_spec=pod_spec, **fields)


def flaky_leader() -> dict[str, Any]:
    return pod_rjob("leader", annotations={DURATION: "60s", FAIL_AFTER: "10s", FAIL_ATTEMPTS: "1"})


def slow_to_stop_workers() -> dict[str, Any]:
    return pod_rjob("workers", annotations={DURATION: "60s"}, grace=5)


START = [
    (0.0, "JobSet", "js", "Created", None),
    (0.0, "Job", "js-leader-0", "Created", None),
    (0.0, "Job", "js-workers-0", "Created", None),
    (10.0, "Job", "js-leader-0", "Failed", "BackoffLimitExceeded"),
    (10.0, "JobSet", "js", "Restarting", "DefaultFailurePolicy"),
    (10.0, "Job", "js-leader-0", "Deleted", None),
]
RECREATE = [
    *START,
    (10.0, "Job", "js-leader-0", "Created", None),  # its name is free again: recreated at once
    (15.0, "Job", "js-workers-0", "Deleted", None),
    (15.0, "Job", "js-workers-0", "Created", None),
    (70.0, "Job", "js-leader-0", "Completed", "CompletionsReached"),
    (75.0, "Job", "js-workers-0", "Completed", "CompletionsReached"),
    (75.0, "JobSet", "js", "Completed", "AllJobsCompleted"),
]
BLOCKING_RECREATE = [
    *START,
    (15.0, "Job", "js-workers-0", "Deleted", None),
    (15.0, "Job", "js-leader-0", "Created", None),  # only once every old Job is gone, in spec order
    (15.0, "Job", "js-workers-0", "Created", None),
    (75.0, "Job", "js-leader-0", "Completed", "CompletionsReached"),
    (75.0, "Job", "js-workers-0", "Completed", "CompletionsReached"),
    (75.0, "JobSet", "js", "Completed", "AllJobsCompleted"),
]


@pytest.mark.parametrize(("strategy", "expected"), [("Recreate", RECREATE), ("BlockingRecreate", BLOCKING_RECREATE)])
def test_restart_recreate_vs_blocking_recreate_with_pods(strategy: str, expected: list[Any]) -> None:
    """The leader fails at 10 s; the workers' pod takes its 5 s grace period to stop. Recreate brings
    the leader back at once; BlockingRecreate waits until every old Job is gone (jobset.md §4.7)."""
    cluster = simulated()
    submit(cluster, jobset(flaky_leader(), slow_to_stop_workers(),
                           failurePolicy={"maxRestarts": 1, "restartStrategy": strategy}))
    cluster.run(until=300)
    assert timeline(cluster) == expected
    assert jobs_by_restart_attempt(cluster) == {1: 2}
    assert kube_events(cluster) == [
        (10.0, "Warning", "DefaultFailurePolicy",
         "applying RestartJobSet failure policy action (first failed job: js-leader-0)"),
        (10.0, "Warning", "RestartJobSetFailurePolicyAction",
         "applying RestartJobSet failure policy action (first failed job: js-leader-0)"),
        (15.0, "Normal", "JobsReady", "all jobs are ready"),
        (75.0, "Normal", "AllJobsCompleted", "jobset completed successfully"),
        (75.0, "Normal", "JobSetCompleted", "jobset completed successfully"),
    ]


def test_depends_on_complete_and_ready_stages_with_pods() -> None:
    cluster = simulated()
    submit(cluster, jobset(
        pod_rjob("init", annotations={DURATION: "30s"}),
        pod_rjob("server", annotations={DURATION: "200s", READY_AFTER: "20s"},
                 depends_on=[{"name": "init", "status": "Complete"}]),
        pod_rjob("client", 2, annotations={DURATION: "60s"}, depends_on=[{"name": "server", "status": "Ready"}]),
        successPolicy={"operator": "All", "targetReplicatedJobs": ["client"]},
    ))
    cluster.run(until=600)
    assert timeline(cluster) == [
        (0.0, "JobSet", "js", "Created", None),
        (0.0, "Job", "js-init-0", "Created", None),
        (30.0, "Job", "js-init-0", "Completed", "CompletionsReached"),
        (30.0, "Job", "js-server-0", "Created", None),
        (50.0, "Job", "js-client-0", "Created", None),
        (50.0, "Job", "js-client-1", "Created", None),
        (110.0, "Job", "js-client-0", "Completed", "CompletionsReached"),
        (110.0, "Job", "js-client-1", "Completed", "CompletionsReached"),
        (110.0, "JobSet", "js", "Completed", "AllJobsCompleted"),
        # Deleted in the foreground at 110 s: gone once its pod's 30 s grace period is over.
        (140.0, "Job", "js-server-0", "Deleted", None),
    ]


def test_in_order_startup_with_pods() -> None:
    cluster = simulated()
    submit(cluster, jobset(
        pod_rjob("driver", annotations={DURATION: "100s", READY_AFTER: "15s"}),
        pod_rjob("workers", 2, annotations={DURATION: "50s"}),
        startupPolicy={"startupPolicyOrder": "InOrder"},
    ))
    cluster.run(until=300)
    assert timeline(cluster, ("JobSet", "Job")) == [
        (0.0, "JobSet", "js", "Created", None),
        (0.0, "Job", "js-driver-0", "Created", None),
        (15.0, "Job", "js-workers-0", "Created", None),
        (15.0, "Job", "js-workers-1", "Created", None),
        (65.0, "Job", "js-workers-0", "Completed", "CompletionsReached"),
        (65.0, "Job", "js-workers-1", "Completed", "CompletionsReached"),
        (100.0, "Job", "js-driver-0", "Completed", "CompletionsReached"),
        (100.0, "JobSet", "js", "Completed", "AllJobsCompleted"),
    ]
    assert [r for _, _, r, _ in kube_events(cluster)] == [
        "InOrderStartupPolicyInProgress", "InOrderStartupPolicyCompleted", "AllJobsCompleted",
    ]


def test_suspend_and_resume_with_pods() -> None:
    cluster = simulated()
    submit(cluster, jobset(pod_rjob("a", 2, annotations={DURATION: "60s"})))
    advance(cluster, 20)
    update_jobset(cluster, suspend=True)
    advance(cluster, 30)
    update_jobset(cluster, suspend=False)
    cluster.run(until=400)
    assert timeline(cluster, ("JobSet", "Job")) == [
        (0.0, "JobSet", "js", "Created", None),
        (0.0, "Job", "js-a-0", "Created", None),
        (0.0, "Job", "js-a-1", "Created", None),
        (20.0, "JobSet", "js", "Suspended", "SuspendedJobs"),
        (20.0, "Job", "js-a-0", "Suspended", "JobSuspended"),
        (20.0, "Job", "js-a-1", "Suspended", "JobSuspended"),
        (50.0, "JobSet", "js", "Resumed", "ResumeJobs"),
        (50.0, "Job", "js-a-0", "Resumed", "JobResumed"),
        (50.0, "Job", "js-a-1", "Resumed", "JobResumed"),
        (110.0, "Job", "js-a-0", "Completed", "CompletionsReached"),
        (110.0, "Job", "js-a-1", "Completed", "CompletionsReached"),
        (110.0, "JobSet", "js", "Completed", "AllJobsCompleted"),
    ]
    assert [c[:3] for c in conditions(cluster)] == [
        ("Suspended", "False", "ResumeJobs"),
        ("Completed", "True", "AllJobsCompleted"),
    ]


def test_ttl_with_pods() -> None:
    cluster = simulated()
    submit(cluster, jobset(pod_rjob("a", 1, annotations={DURATION: "30s"}), ttlSecondsAfterFinished=90))
    cluster.run(until=500)
    assert [(t, k, e) for t, k, _, e, _ in timeline(cluster, ("JobSet",))] == [
        (0.0, "JobSet", "Created"), (30.0, "JobSet", "Completed"), (120.0, "JobSet", "Deleted"),
    ]


@requires_upstream
def test_restartjob_action_example_with_pods() -> None:
    """examples/failure-policy/restartjob-action.yaml: the worker's first pod fails → only the worker
    Job is recreated (RestartJob gate); afterwards everything completes."""
    obj = load("failure-policy/restartjob-action.yaml")
    for rj in obj["spec"]["replicatedJobs"]:
        annotations = {DURATION: "40s"}
        if rj["name"] == "rj-worker":
            annotations.update({FAIL_AFTER: "5s", FAIL_ATTEMPTS: "1"})
        rj["template"]["spec"]["template"]["metadata"] = {"annotations": annotations}
    cluster = simulated(gates="RestartJob=true")
    submit(cluster, obj)
    cluster.run(until=300)
    assert timeline(cluster, ("JobSet", "Job")) == [
        (0.0, "JobSet", "js", "Created", None),
        (0.0, "Job", "js-rj-leader-0", "Created", None),
        (0.0, "Job", "js-rj-worker-0", "Created", None),
        (5.0, "Job", "js-rj-worker-0", "Failed", "BackoffLimitExceeded"),
        (5.0, "JobSet", "js", "Restarting", "RestartJobFailurePolicyAction"),
        (5.0, "Job", "js-rj-worker-0", "Deleted", None),
        (5.0, "Job", "js-rj-worker-0", "Created", None),
        (40.0, "Job", "js-rj-leader-0", "Completed", "CompletionsReached"),
        (45.0, "Job", "js-rj-worker-0", "Completed", "CompletionsReached"),
        (45.0, "JobSet", "js", "Completed", "AllJobsCompleted"),
    ]
