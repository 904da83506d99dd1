"""Success policy (jobset.md §4.5) and the terminal Completed state (§4.8, §4.9)."""

from __future__ import annotations

from tests.jobset_controller.harness import (
    advance,
    conditions,
    fail,
    get_jobset,
    job_names,
    jobset,
    kube_events,
    make_cluster,
    rjob,
    submit,
    succeed,
    timeline,
)

COMPLETED_EVENT = (
    "Normal", "AllJobsCompleted", "jobset completed successfully",
)


def test_all_without_targets_completes_when_every_job_succeeded() -> None:
    cluster = make_cluster()
    submit(cluster, jobset(rjob("a", 2), rjob("b", 1)))
    advance(cluster, 10)
    succeed(cluster, "js-a-0", "js-b-0")
    assert conditions(cluster) == []
    advance(cluster, 10)
    succeed(cluster, "js-a-1")
    assert timeline(cluster, ("JobSet",)) == [
        (0.0, "JobSet", "js", "Created", None),
        (20.0, "JobSet", "js", "Completed", "AllJobsCompleted"),
    ]
    assert kube_events(cluster) == [(20.0, *COMPLETED_EVENT)]
    js = get_jobset(cluster)
    assert js["status"]["terminalState"] == "Completed"
    assert conditions(cluster) == [("Completed", "True", "AllJobsCompleted", "2026-01-01T00:00:20Z")]
    assert js["status"]["replicatedJobsStatus"] == [
        {"name": "b", "ready": 0, "succeeded": 1, "failed": 0, "active": 0, "suspended": 0},
        {"name": "a", "ready": 0, "succeeded": 2, "failed": 0, "active": 0, "suspended": 0},
    ]


def test_replicated_jobs_status_sorted_by_name_descending_quirk() -> None:
    """Upstream sorts old and new ``replicatedJobsStatus`` in place (name, descending) to compare
    them, and writes the sorted slice: the stored order is not spec order (derived from code)."""
    cluster = make_cluster()
    submit(cluster, jobset(rjob("alpha"), rjob("zulu"), rjob("mike")))
    assert [e["name"] for e in get_jobset(cluster)["status"]["replicatedJobsStatus"]] == ["zulu", "mike", "alpha"]


def test_all_with_targets_completes_and_deletes_remaining_active_jobs() -> None:
    cluster = make_cluster()
    submit(cluster, jobset(
        rjob("driver", 1), rjob("workers", 2),
        successPolicy={"operator": "All", "targetReplicatedJobs": ["workers"]},
    ))
    advance(cluster, 30)
    succeed(cluster, "js-workers-0", "js-workers-1")
    assert timeline(cluster) == [
        (0.0, "JobSet", "js", "Created", None),
        (0.0, "Job", "js-driver-0", "Created", None),
        (0.0, "Job", "js-workers-0", "Created", None),
        (0.0, "Job", "js-workers-1", "Created", None),
        (30.0, "JobSet", "js", "Completed", "AllJobsCompleted"),
        # The next pass sees the JobSet finished and deletes the active Job (foreground).
        (30.0, "Job", "js-driver-0", "Deleted", None),
    ]
    assert job_names(cluster) == ["js-workers-0", "js-workers-1"], "succeeded Jobs are kept"


def test_any_completes_on_first_success() -> None:
    cluster = make_cluster()
    submit(cluster, jobset(rjob("a", 3), successPolicy={"operator": "Any"}))
    advance(cluster, 7)
    succeed(cluster, "js-a-1")
    assert timeline(cluster, ("JobSet", "Job"), since=1.0) == [
        (7.0, "JobSet", "js", "Completed", "AllJobsCompleted"),
        (7.0, "Job", "js-a-0", "Deleted", None),
        (7.0, "Job", "js-a-2", "Deleted", None),
    ]


def test_any_with_depends_on_completes_after_first_stage_quirk() -> None:
    """§4.5 quirk (derived from code): ``Any`` without targets plus dependsOn completes the JobSet as
    soon as the first stage succeeds; the later stages are never created."""
    cluster = make_cluster()
    submit(cluster, jobset(
        rjob("prepare", 1), rjob("train", 2, depends_on=[{"name": "prepare", "status": "Complete"}]),
        successPolicy={"operator": "Any"},
    ))
    advance(cluster, 3)
    succeed(cluster, "js-prepare-0")
    advance(cluster, 600)
    assert job_names(cluster) == ["js-prepare-0"]
    assert get_jobset(cluster)["status"]["terminalState"] == "Completed"


def test_all_counts_replicated_jobs_not_yet_created() -> None:
    """``All`` needs Σ replicas including stages dependsOn has not created yet."""
    cluster = make_cluster()
    submit(cluster, jobset(rjob("prepare", 1), rjob("train", 1, depends_on=[{"name": "prepare", "status": "Complete"}])))
    succeed(cluster, "js-prepare-0")
    assert conditions(cluster) == []
    assert job_names(cluster) == ["js-prepare-0", "js-train-0"]
    advance(cluster, 1)
    succeed(cluster, "js-train-0")
    assert get_jobset(cluster)["status"]["terminalState"] == "Completed"


def test_all_targeting_only_zero_replica_jobs_completes_on_any_success_quirk() -> None:
    """§4.5 quirk: ``All`` over targets with replicas 0 needs 0 successes, so the first success of
    any Job completes the JobSet."""
    cluster = make_cluster()
    submit(cluster, jobset(
        rjob("main", 2), rjob("spare", 0),
        successPolicy={"operator": "All", "targetReplicatedJobs": ["spare"]},
    ))
    assert job_names(cluster) == ["js-main-0", "js-main-1"]
    succeed(cluster, "js-main-0")
    assert get_jobset(cluster)["status"]["terminalState"] == "Completed"


def test_failure_in_same_pass_wins_over_success_quirk() -> None:
    """jobset.md §6 #8: a failed Job takes precedence: the JobSet restarts although the success
    policy (Any) would have been met in the same pass."""
    cluster = make_cluster()
    submit(cluster, jobset(rjob("a", 2), successPolicy={"operator": "Any"}, failurePolicy={"maxRestarts": 1}))
    advance(cluster, 5)
    succeed(cluster, "js-a-0", settle_after=False)
    fail(cluster, "js-a-1")
    assert [(e, r) for _, _, _, e, r in timeline(cluster, ("JobSet",), since=1.0)] == [
        ("Restarting", "DefaultFailurePolicy"),
    ]
    assert get_jobset(cluster)["status"]["restarts"] == 1
    assert "terminalState" not in get_jobset(cluster)["status"]
