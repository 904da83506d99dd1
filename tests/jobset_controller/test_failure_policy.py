"""Failure policy (jobset.md §4.6), restart strategies (§4.7) and the conditions and events they write
(§4.9). Jobs are driven by the test (see :mod:`tests.jobset_controller.harness`)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.jobset_controller.harness import (
    advance,
    conditions,
    fail,
    get_job,
    get_jobset,
    hold,
    job_names,
    jobs_by_restart_attempt,
    jobset,
    kube_events,
    make_cluster,
    release,
    rjob,
    rjob_status,
    set_ready,
    submit,
    timeline,
)

PFP_MESSAGE = "Container main for pod default/js-a-0-0-abcde failed with exit code 137 matching FailJob rule at index 0"


def restart_message(job: str) -> str:
    return f"applying RestartJobSet failure policy action (first failed job: {job})"


def test_no_failure_policy_fails_on_first_failure_naming_the_earliest_failed_job() -> None:
    cluster = make_cluster()
    submit(cluster, jobset(rjob("a", 3)))
    advance(cluster, 10)
    # Two failures reach the controller in one pass; js-a-2 failed first (t=3) though listed later.
    fail(cluster, "js-a-0", at=8, settle_after=False)
    fail(cluster, "js-a-2", at=3)
    assert timeline(cluster, since=1) == [
        (10.0, "JobSet", "js", "Failed", "FailedJobs"),
        (10.0, "Job", "js-a-1", "Deleted", None),
    ]
    assert kube_events(cluster) == [
        (10.0, "Warning", "FailedJobs", "jobset failed due to one or more job failures (first failed job: js-a-2)"),
    ]
    assert get_jobset(cluster)["status"]["terminalState"] == "Failed"
    assert job_names(cluster) == ["js-a-0", "js-a-2"], "failed Jobs are kept"


def test_failure_time_tie_goes_to_the_first_listed_job() -> None:
    """Timestamps have second precision; Go's strict ``Before`` keeps the first Job listed on a tie."""
    cluster = make_cluster()
    submit(cluster, jobset(rjob("a", 2)))
    fail(cluster, "js-a-1", settle_after=False)
    fail(cluster, "js-a-0")
    assert kube_events(cluster)[0][3].endswith("(first failed job: js-a-0)")


def test_empty_failure_policy_first_failure_is_reached_max_restarts_quirk() -> None:
    """jobset.md §6 #7: ``failurePolicy: {}`` → maxRestarts 0 → ReachedMaxRestarts, not FailedJobs."""
    cluster = make_cluster()
    submit(cluster, jobset(rjob("a", 1), failurePolicy={}))
    fail(cluster, "js-a-0")
    assert conditions(cluster) == [("Failed", "True", "ReachedMaxRestarts", "2026-01-01T00:00:00Z")]
    assert kube_events(cluster) == [
        (0.0, "Warning", "ReachedMaxRestarts",
         "jobset failed due to reaching max number of restarts (first failed job: js-a-0)"),
    ]


def test_negative_max_restarts_makes_the_first_failure_terminal() -> None:
    cluster = make_cluster()
    submit(cluster, jobset(rjob("a", 1), failurePolicy={"maxRestarts": -1}))
    fail(cluster, "js-a-0")
    assert get_jobset(cluster)["status"]["terminalState"] == "Failed"
    assert conditions(cluster)[0][2] == "ReachedMaxRestarts"


def test_default_action_restarts_then_reaches_max_restarts() -> None:
    """maxRestarts 1: one counted restart (every Job recreated with restart-attempt 1), then the
    second failure is terminal. Exact simulation and Kubernetes event sequences."""
    cluster = make_cluster()
    submit(cluster, jobset(rjob("a", 2), failurePolicy={"maxRestarts": 1}))
    advance(cluster, 5)
    fail(cluster, "js-a-0")
    assert jobs_by_restart_attempt(cluster) == {1: 2}
    advance(cluster, 5)
    set_ready(cluster, "js-a-0", settle_after=False)
    set_ready(cluster, "js-a-1")
    advance(cluster, 5)
    fail(cluster, "js-a-1")
    assert timeline(cluster) == [
        (0.0, "JobSet", "js", "Created", None),
        (0.0, "Job", "js-a-0", "Created", None),
        (0.0, "Job", "js-a-1", "Created", None),
        (5.0, "JobSet", "js", "Restarting", "DefaultFailurePolicy"),
        (5.0, "Job", "js-a-0", "Deleted", None),
        (5.0, "Job", "js-a-1", "Deleted", None),
        (5.0, "Job", "js-a-0", "Created", None),
        (5.0, "Job", "js-a-1", "Created", None),
        (15.0, "JobSet", "js", "Failed", "ReachedMaxRestarts"),
        (15.0, "Job", "js-a-0", "Deleted", None),
    ]
    assert kube_events(cluster) == [
        (5.0, "Warning", "DefaultFailurePolicy", restart_message("js-a-0")),
        (5.0, "Warning", "RestartJobSetFailurePolicyAction", restart_message("js-a-0")),
        (10.0, "Normal", "JobsReady", "all jobs are ready"),
        (15.0, "Warning", "ReachedMaxRestarts",
         "jobset failed due to reaching max number of restarts (first failed job: js-a-1)"),
        (15.0, "Normal", "JobSetFailed", "jobset failed"),
    ]
    status = get_jobset(cluster)["status"]
    assert (status["restarts"], status["restartsCountTowardsMax"], status["terminalState"]) == (1, 1, "Failed")
    # RestartingJobSet went True → False/JobsReady (new time) → False/JobSetFailed (time kept).
    assert conditions(cluster) == [
        ("RestartingJobSet", "False", "JobSetFailed", "2026-01-01T00:00:10Z"),
        ("Failed", "True", "ReachedMaxRestarts", "2026-01-01T00:00:15Z"),
    ]


def test_restart_reruns_jobs_that_had_already_succeeded() -> None:
    """§4.6: a global restart re-runs all Jobs, including succeeded ones."""
    from tests.jobset_controller.harness import succeed

    cluster = make_cluster()
    submit(cluster, jobset(rjob("a", 1), rjob("b", 1), failurePolicy={"maxRestarts": 3}))
    succeed(cluster, "js-a-0")
    fail(cluster, "js-b-0")
    assert jobs_by_restart_attempt(cluster) == {1: 2}
    assert get_job(cluster, "js-a-0").get("status") is None


def rules_jobset(*rules: dict[str, Any], max_restarts: int = 3) -> dict[str, Any]:
    return jobset(
        rjob("driver", 1), rjob("workers", 2),
        failurePolicy={"maxRestarts": max_restarts, "rules": list(rules)},
    )


@pytest.mark.parametrize(
    ("failed_job", "reason", "expected"),
    [
        ("js-driver-0", "BackoffLimitExceeded", ("Failed", "FailJobSetFailurePolicyAction")),
        ("js-workers-1", "BackoffLimitExceeded", ("Restarting", "DefaultFailurePolicy")),
        ("js-workers-1", "PodFailurePolicy", ("Restarting", "FailurePolicy_ignore_pfp")),
        ("js-driver-0", "PodFailurePolicy", ("Failed", "FailJobSetFailurePolicyAction")),
    ],
)
def test_rules_match_by_target_and_reason_in_order(failed_job: str, reason: str, expected: tuple[str, str]) -> None:
    cluster = make_cluster()
    submit(cluster, rules_jobset(
        {"name": "driver_fails", "action": "FailJobSet", "targetReplicatedJobs": ["driver"]},
        {"name": "ignore_pfp", "action": "RestartJobSetAndIgnoreMaxRestarts", "onJobFailureReasons": ["PodFailurePolicy"]},
    ))
    fail(cluster, failed_job, reason=reason)
    assert [(e, r) for _, _, _, e, r in timeline(cluster, ("JobSet",))][1:] == [expected]


def test_ignore_max_restarts_action_does_not_count() -> None:
    cluster = make_cluster()
    submit(cluster, rules_jobset(
        {"name": "ignore_pfp", "action": "RestartJobSetAndIgnoreMaxRestarts", "onJobFailureReasons": ["PodFailurePolicy"]},
        max_restarts=0,
    ))
    for _ in range(3):
        fail(cluster, "js-workers-0", reason="PodFailurePolicy", message=PFP_MESSAGE)
    status = get_jobset(cluster)["status"]
    assert (status["restarts"], status.get("restartsCountTowardsMax", 0)) == (3, 0)
    reasons = [r for _, _, r, _ in kube_events(cluster)]
    assert reasons[:2] == ["FailurePolicy_ignore_pfp", "RestartJobSetAndIgnoreMaxRestartsFailurePolicyAction"]
    # The condition is already True with the same reason and message: later restarts queue only the
    # action event (no condition event).
    assert reasons[2:] == ["RestartJobSetAndIgnoreMaxRestartsFailurePolicyAction"] * 2
    fail(cluster, "js-workers-0")
    assert conditions(cluster)[-1][:3] == ("Failed", "True", "ReachedMaxRestarts")


@pytest.mark.parametrize(
    ("patterns", "matched"),
    [
        (["exit code 13[0-9]"], True),  # unanchored search
        (["^exit code"], False),
        (["nomatch", "FailJob rule"], True),  # any pattern
        (["("], False),  # invalid: never matches (quirk)
        (["exit code (?=137)"], False),  # look-ahead is not RE2: invalid, never matches (quirk)
        (["\\pN{3}"], True),  # RE2 Unicode class (Python's re has none)
    ],
)
def test_rules_match_message_patterns_re2_quirk(patterns: list[str], matched: bool) -> None:
    cluster = make_cluster()
    submit(cluster, rules_jobset({"name": "by_message", "action": "FailJobSet", "onJobFailureMessagePatterns": patterns}))
    fail(cluster, "js-workers-0", reason="PodFailurePolicy", message=PFP_MESSAGE)
    assert get_jobset(cluster)["status"].get("terminalState") == ("Failed" if matched else None)


def test_first_matching_rule_wins_with_its_earliest_matching_job() -> None:
    """Rule order beats failure time: rule 0 matches only the later failure, and wins with it."""
    cluster = make_cluster()
    submit(cluster, rules_jobset(
        {"name": "pfp", "action": "RestartJobSet", "onJobFailureReasons": ["PodFailurePolicy"]},
        {"name": "anything", "action": "FailJobSet"},
    ))
    advance(cluster, 20)
    fail(cluster, "js-workers-0", at=5, settle_after=False)
    fail(cluster, "js-workers-1", reason="PodFailurePolicy", message=PFP_MESSAGE, at=9, settle_after=False)
    fail(cluster, "js-driver-0", reason="PodFailurePolicy", message=PFP_MESSAGE, at=7)
    assert kube_events(cluster) == [
        (20.0, "Warning", "FailurePolicy_pfp", restart_message("js-driver-0")),
        (20.0, "Warning", "RestartJobSetFailurePolicyAction", restart_message("js-driver-0")),
    ]


# ---------------------------------------------------------------------------------------------------
# RestartJob gate actions


def per_job_jobset(action: str, max_restarts: int = 2) -> dict[str, Any]:
    return jobset(
        rjob("leader", 1), rjob("workers", 2),
        failurePolicy={"maxRestarts": max_restarts, "rules": [
            {"name": "r_leader", "action": "RestartJobSet", "targetReplicatedJobs": ["leader"]},
            {"name": "r_worker", "action": action, "targetReplicatedJobs": ["workers"]},
        ]},
    )


def test_restart_job_recreates_only_the_failed_job() -> None:
    cluster = make_cluster("RestartJob=true")
    submit(cluster, per_job_jobset("RestartJob"))
    advance(cluster, 4)
    fail(cluster, "js-workers-1")
    message = "applying RestartJob failure policy action (first failed job: js-workers-1)"
    assert timeline(cluster, since=1) == [
        (4.0, "JobSet", "js", "Restarting", "RestartJobFailurePolicyAction"),
        (4.0, "Job", "js-workers-1", "Deleted", None),
        (4.0, "Job", "js-workers-1", "Created", None),
    ]
    assert kube_events(cluster) == [(4.0, "Warning", "RestartJobFailurePolicyAction", message)]
    assert conditions(cluster) == [], "RestartJob writes no condition"
    labels = get_job(cluster, "js-workers-1")["metadata"]["labels"]
    assert (labels["jobset.sigs.k8s.io/restart-attempt"], labels["jobset.sigs.k8s.io/job-restart-attempt"]) == ("0", "1")
    assert get_job(cluster, "js-workers-0")["metadata"]["labels"]["jobset.sigs.k8s.io/job-restart-attempt"] == "0"
    status = get_jobset(cluster)["status"]
    assert status["restarts"] == 0
    workers = next(e for e in rjob_status(cluster) if e["name"] == "workers")
    assert (workers["jobRestarts"], workers["jobRestartsCountTowardsMax"]) == ([0, 1], [0, 1])


def test_restart_job_and_global_restarts_share_max_restarts() -> None:
    """maxRestarts 2: two per-job counted restarts use it up; then a leader failure is terminal."""
    cluster = make_cluster("RestartJob=true")
    submit(cluster, per_job_jobset("RestartJob"))
    fail(cluster, "js-workers-0")
    fail(cluster, "js-workers-0")
    fail(cluster, "js-leader-0")
    assert conditions(cluster)[-1][:3] == ("Failed", "True", "ReachedMaxRestarts")
    workers = next(e for e in rjob_status(cluster) if e["name"] == "workers")
    assert workers["jobRestarts"] == [2, 0]


def test_restart_job_and_ignore_max_restarts_counts_only_job_restarts() -> None:
    cluster = make_cluster("RestartJob=true")
    submit(cluster, per_job_jobset("RestartJobAndIgnoreMaxRestarts", max_restarts=0))
    for _ in range(3):
        fail(cluster, "js-workers-1")
    workers = next(e for e in rjob_status(cluster) if e["name"] == "workers")
    assert workers["jobRestarts"] == [0, 3]
    assert "jobRestartsCountTowardsMax" not in workers
    assert [r for _, _, r, _ in kube_events(cluster)] == ["RestartJobAndIgnoreMaxRestartsFailurePolicyAction"] * 3
    assert get_job(cluster, "js-workers-1")["metadata"]["labels"]["jobset.sigs.k8s.io/job-restart-attempt"] == "3"


def test_global_restart_keeps_job_restart_attempts() -> None:
    """After a global restart the Jobs are recreated with restart-attempt 1 and their per-job attempts."""
    cluster = make_cluster("RestartJob=true")
    submit(cluster, per_job_jobset("RestartJob", max_restarts=5))
    fail(cluster, "js-workers-1")
    fail(cluster, "js-leader-0")
    attempts = {
        name: (get_job(cluster, name)["metadata"]["labels"]["jobset.sigs.k8s.io/restart-attempt"],
               get_job(cluster, name)["metadata"]["labels"]["jobset.sigs.k8s.io/job-restart-attempt"])
        for name in job_names(cluster)
    }
    assert attempts == {"js-leader-0": ("1", "0"), "js-workers-0": ("1", "0"), "js-workers-1": ("1", "1")}


# ---------------------------------------------------------------------------------------------------
# Restart strategies (jobset.md §4.7, integration test counts)


@pytest.mark.parametrize(
    ("strategy", "after_three", "after_all"),
    [
        ("Recreate", {0: 1, 1: 3}, {1: 4}),
        ("BlockingRecreate", {0: 1}, {1: 4}),
    ],
)
def test_recreate_vs_blocking_recreate_integration_counts(
    strategy: str, after_three: dict[int, int], after_all: dict[int, int]
) -> None:
    cluster = make_cluster()
    submit(cluster, jobset(rjob("a", 2), rjob("b", 2), failurePolicy={"maxRestarts": 1, "restartStrategy": strategy}))
    names = job_names(cluster)
    hold(cluster, *names)  # the old Jobs linger after deletion until released
    fail(cluster, "js-a-0")
    assert get_jobset(cluster)["status"]["restarts"] == 1
    assert jobs_by_restart_attempt(cluster) == {0: 4}
    release(cluster, *names[1:])
    assert jobs_by_restart_attempt(cluster) == after_three
    release(cluster, names[0])
    assert jobs_by_restart_attempt(cluster) == after_all


def test_previous_attempt_job_blocks_recreation_of_its_name() -> None:
    """A previous-attempt Job still being deleted keeps its name taken (§3.1, §4.2); the others are
    recreated at once with Recreate."""
    cluster = make_cluster()
    submit(cluster, jobset(rjob("a", 2), failurePolicy={"maxRestarts": 2}))
    hold(cluster, "js-a-0")
    advance(cluster, 2)
    fail(cluster, "js-a-1")
    advance(cluster, 30)
    release(cluster, "js-a-0")
    assert timeline(cluster, ("Job",), since=1) == [
        (2.0, "Job", "js-a-1", "Deleted", None),
        (2.0, "Job", "js-a-1", "Created", None),
        (32.0, "Job", "js-a-0", "Deleted", None),
        (32.0, "Job", "js-a-0", "Created", None),
    ]
    assert jobs_by_restart_attempt(cluster) == {1: 2}


def test_job_of_another_jobset_uid_is_ignored() -> None:
    """Children are listed by controller-owner UID: a same-named owner with another UID is not ours,
    but its Job still holds the name, so creation fails with AlreadyExists (JobCreationFailed)."""
    cluster = make_cluster()
    stranger = {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "js-a-0", "namespace": "default", "ownerReferences": [{
            "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "name": "js",
            "uid": "00000000-0000-4000-8000-000000000000", "controller": True, "blockOwnerDeletion": True,
        }]},
        "spec": {"managedBy": "example.com/test-driver", "template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}],
        }}},
    }
    submit(cluster, stranger)
    submit(cluster, jobset(rjob("a", 1)))
    events = kube_events(cluster)
    assert events[0] == (
        0.0, "Warning", "JobCreationFailed",
        'job "js-a-0" creation failed with error: jobs.batch "js-a-0" already exists',
    )
    assert rjob_status(cluster) == [], "a failed pass writes no status"
