"""TrainJob status (trainer.md §1.4, §3.14; jobset.md §4.9): ``Suspended``, ``Complete`` and ``Failed``
copied from the JobSet, ``jobsStatus``, ``activeDeadlineSeconds``, and the simulation events
``Suspended``, ``Resumed``, ``Completed``, ``Failed``."""

from __future__ import annotations

from jobsetctl.jobset import api as jobset_api
from jobsetctl.trainer import api
from tests.trainjob_controller.harness import (
    advance_to,
    conditions,
    create,
    driven_runtime,
    edit_trainjob,
    get_jobset,
    get_trainjob,
    install_builtin,
    jobset_condition,
    kube_events,
    make_cluster,
    rjob_status,
    set_jobset_status,
    submit,
    timeline,
    trainjob,
    trainjob_events,
)

SUSPENDED = ("Suspended", "True", "Suspended", "TrainJob is suspended")
RESUMED = ("Suspended", "False", "Resumed", "TrainJob is resumed")
DEADLINE = ("Failed", "True", "DeadlineExceeded", "TrainJob exceeded its active deadline")
COMPLETED_MESSAGE = "jobset completed successfully"
FAILED_MESSAGE = "jobset failed due to one or more job failures (first failed job: tj-node-0)"


def at(seconds: int) -> str:
    return f"2026-01-01T00:{seconds // 60:02d}:{seconds % 60:02d}Z"


# ---------------------------------------------------------------------------------------------------
# Suspend and resume


def test_suspend_resume_suspend() -> None:
    """trainer.md §1.4, §3.14: Suspended True → False/Resumed → True; the JobSet (and through it the
    Job) follows each time. Events exactly in write order."""
    cluster = make_cluster()
    install_builtin(cluster, "torch-distributed")
    submit(cluster, trainjob(suspend=True))
    advance_to(cluster, 20.0)
    edit_trainjob(cluster, suspend=False)
    assert get_jobset(cluster)["spec"]["suspend"] is False  # type: ignore[index]
    advance_to(cluster, 50.0)
    edit_trainjob(cluster, suspend=True)

    assert timeline(cluster, ("TrainJob", "JobSet", "Job")) == [
        (0.0, "TrainJob", "tj", "Created", None),
        (0.0, "JobSet", "tj", "Created", None),
        (0.0, "TrainJob", "tj", "Suspended", "Suspended"),
        (0.0, "Job", "tj-node-0", "Created", None),
        (0.0, "JobSet", "tj", "Suspended", "SuspendedJobs"),
        (0.0, "Job", "tj-node-0", "Suspended", "JobSuspended"),
        (20.0, "TrainJob", "tj", "Resumed", "Resumed"),
        (20.0, "JobSet", "tj", "Resumed", "ResumeJobs"),
        (20.0, "Job", "tj-node-0", "Resumed", "JobResumed"),
        (50.0, "TrainJob", "tj", "Suspended", "Suspended"),
        (50.0, "JobSet", "tj", "Suspended", "SuspendedJobs"),
        (50.0, "Job", "tj-node-0", "Suspended", "JobSuspended"),
    ]
    assert trainjob_events(cluster)[1:] == [
        (0.0, "Suspended", "Suspended", "TrainJob is suspended"),
        (20.0, "Resumed", "Resumed", "TrainJob is resumed"),
        (50.0, "Suspended", "Suspended", "TrainJob is suspended"),
    ]
    assert conditions(cluster) == [(*SUSPENDED, at(50))]
    assert get_jobset(cluster)["spec"]["suspend"] is True  # type: ignore[index]
    assert kube_events(cluster) == []


def test_resumed_needs_a_previous_suspension() -> None:
    """``Suspended=False`` is written only when the condition was True: a TrainJob that never was
    suspended has no condition at all."""
    cluster = make_cluster()
    install_builtin(cluster, "torch-distributed")
    submit(cluster, trainjob(suspend=False))
    assert conditions(cluster) == []
    assert trainjob_events(cluster) == [(0.0, "Created", None, None)]


# ---------------------------------------------------------------------------------------------------
# Complete and Failed, from a JobSet the test drives


def test_complete_is_copied_from_the_jobset_with_its_transition_time() -> None:
    """trainer.md §1.4: the JobSet's ``Completed`` becomes ``Complete`` with the JobSet's reason, message
    and ``lastTransitionTime``; ``jobsStatus`` mirrors ``replicatedJobsStatus`` in its order."""
    cluster = make_cluster()
    create(cluster, driven_runtime())
    submit(cluster, trainjob(runtime="driven", kind=api.TRAINING_RUNTIME))
    advance_to(cluster, 10.0)
    set_jobset_status(cluster, replicated_jobs=[rjob_status("node", ready=1, active=1)])
    assert get_trainjob(cluster)["status"] == {"jobsStatus": [rjob_status("node", ready=1, active=1)]}

    advance_to(cluster, 40.0)
    set_jobset_status(
        cluster,
        conditions=[jobset_condition("Completed", "AllJobsCompleted", COMPLETED_MESSAGE, at(30))],
        replicated_jobs=[rjob_status("node", succeeded=1)],
    )

    assert conditions(cluster) == [("Complete", "True", "AllJobsCompleted", COMPLETED_MESSAGE, at(30))]
    assert get_trainjob(cluster)["status"]["jobsStatus"] == [rjob_status("node", succeeded=1)]
    assert trainjob_events(cluster) == [
        (0.0, "Created", None, None),
        (40.0, "Completed", "AllJobsCompleted", COMPLETED_MESSAGE),
    ]


def test_failed_is_copied_from_the_jobset() -> None:
    cluster = make_cluster()
    create(cluster, driven_runtime())
    submit(cluster, trainjob(runtime="driven", kind=api.TRAINING_RUNTIME))
    advance_to(cluster, 5.0)
    set_jobset_status(
        cluster,
        conditions=[
            jobset_condition(jobset_api.ConditionType.RESTARTING.value, "DefaultFailurePolicy", "restarting", at(3)),
            jobset_condition("Failed", "FailedJobs", FAILED_MESSAGE, at(5)),
        ],
        replicated_jobs=[rjob_status("node", failed=1)],
    )

    assert conditions(cluster) == [("Failed", "True", "FailedJobs", FAILED_MESSAGE, at(5))]
    assert trainjob_events(cluster)[-1] == (5.0, "Failed", "FailedJobs", FAILED_MESSAGE)


def test_finished_trainjob_applies_nothing_more() -> None:
    """trainer.md §3.1 step 0: once Complete, a deleted JobSet is not recreated and its absence is no
    error (its TTL may have removed it): no retry, no event, the status stays."""
    cluster = make_cluster()
    create(cluster, driven_runtime())
    submit(cluster, trainjob(runtime="driven", kind=api.TRAINING_RUNTIME))
    set_jobset_status(cluster, conditions=[jobset_condition("Completed", "AllJobsCompleted", COMPLETED_MESSAGE, at(0))],
                      replicated_jobs=[rjob_status("node", succeeded=1)])
    status = get_trainjob(cluster)["status"]
    jobset = get_jobset(cluster)
    assert jobset is not None
    cluster.api.delete(jobset)
    advance_to(cluster, 3600.0)

    assert get_jobset(cluster) is None
    assert get_trainjob(cluster)["status"] == status
    assert kube_events(cluster) == []
    assert cluster.clock.next_time() is None  # nothing scheduled: no back-off retry


def test_deleting_the_trainjob_collects_everything_it_created() -> None:
    """trainer.md §3.13b: every object carries the TrainJob's controller ownerReference, so garbage
    collection removes the snapshot and the JobSet (and the JobSet's children) with the TrainJob."""
    cluster = make_cluster()
    install_builtin(cluster, "torch-distributed")
    submit(cluster, trainjob())
    cluster.api.delete(get_trainjob(cluster))
    cluster.manager.settle()

    assert timeline(cluster)[-5:] == [
        (0.0, "TrainJob", "tj", "Deleted", None),
        (0.0, "ConfigMap", "tj-runtime-snapshot", "Deleted", None),
        (0.0, "JobSet", "tj", "Deleted", None),
        (0.0, "Service", "tj", "Deleted", None),
        (0.0, "Job", "tj-node-0", "Deleted", None),
    ]
    assert kube_events(cluster) == []


# ---------------------------------------------------------------------------------------------------
# activeDeadlineSeconds


def test_active_deadline_counts_from_creation() -> None:
    """trainer.md §3.14: at the deadline, ``Failed/DeadlineExceeded`` and the JobSet is deleted (its
    Service and Jobs follow by garbage collection) before the status is written."""
    cluster = make_cluster()
    install_builtin(cluster, "torch-distributed")
    submit(cluster, trainjob(activeDeadlineSeconds=100))
    advance_to(cluster, 1000.0)

    assert timeline(cluster, since=1.0) == [
        (100.0, "JobSet", "tj", "Deleted", None),
        (100.0, "Service", "tj", "Deleted", None),
        (100.0, "Job", "tj-node-0", "Deleted", None),
        (100.0, "TrainJob", "tj", "Failed", "DeadlineExceeded"),
    ]
    assert conditions(cluster) == [(*DEADLINE, at(100))]
    assert trainjob_events(cluster)[-1] == (100.0, "Failed", "DeadlineExceeded", "TrainJob exceeded its active deadline")
    assert get_jobset(cluster) is None
    assert kube_events(cluster) == []


def test_active_deadline_does_not_run_while_suspended() -> None:
    """Created suspended, resumed at 30 s: the deadline counts from the resume."""
    cluster = make_cluster()
    install_builtin(cluster, "torch-distributed")
    submit(cluster, trainjob(suspend=True, activeDeadlineSeconds=100))
    advance_to(cluster, 30.0)
    edit_trainjob(cluster, suspend=False)
    advance_to(cluster, 1000.0)

    assert conditions(cluster) == [(*RESUMED, at(30)), (*DEADLINE, at(130))]
    assert [e[:2] for e in trainjob_events(cluster)] == [
        (0.0, "Created"), (0.0, "Suspended"), (30.0, "Resumed"), (130.0, "Failed"),
    ]


def test_quirk_resume_restarts_the_active_deadline() -> None:
    """The start is the resume's ``lastTransitionTime``: the 60 s run before the suspension are
    forgotten, so a 100 s deadline ends at 90 + 100 = 190 s, not at 130 s."""
    cluster = make_cluster()
    install_builtin(cluster, "torch-distributed")
    submit(cluster, trainjob(activeDeadlineSeconds=100))
    advance_to(cluster, 60.0)
    edit_trainjob(cluster, suspend=True)
    advance_to(cluster, 90.0)
    edit_trainjob(cluster, suspend=False)
    advance_to(cluster, 1000.0)

    assert [e[:3] for e in trainjob_events(cluster)] == [
        (0.0, "Created", None),
        (60.0, "Suspended", "Suspended"),
        (90.0, "Resumed", "Resumed"),
        (190.0, "Failed", "DeadlineExceeded"),
    ]


def test_deadline_after_completion_changes_nothing() -> None:
    cluster = make_cluster()
    create(cluster, driven_runtime())
    submit(cluster, trainjob(runtime="driven", kind=api.TRAINING_RUNTIME, activeDeadlineSeconds=100))
    advance_to(cluster, 50.0)
    set_jobset_status(cluster, conditions=[jobset_condition("Completed", "AllJobsCompleted", COMPLETED_MESSAGE, at(50))])
    advance_to(cluster, 1000.0)

    assert conditions(cluster) == [("Complete", "True", "AllJobsCompleted", COMPLETED_MESSAGE, at(50))]
    assert get_jobset(cluster) is not None


def test_deadline_failure_is_kept_over_a_later_jobset_failure() -> None:
    """``setTrainJobStatus`` puts a ``DeadlineExceeded`` condition back after copying the JobSet's
    ``Failed``: a JobSet that fails while it is being deleted cannot rewrite the reason."""
    cluster = make_cluster()
    create(cluster, driven_runtime())
    submit(cluster, trainjob(runtime="driven", kind=api.TRAINING_RUNTIME, activeDeadlineSeconds=100))
    jobset = get_jobset(cluster)
    assert jobset is not None
    jobset["metadata"]["finalizers"] = ["example.com/hold"]
    cluster.api.update_status(jobset)
    advance_to(cluster, 120.0)
    assert jobset["metadata"].get("deletionTimestamp") == at(100)

    set_jobset_status(cluster, conditions=[jobset_condition("Failed", "FailedJobs", FAILED_MESSAGE, at(120))],
                      replicated_jobs=[rjob_status("node", failed=1)])

    assert conditions(cluster) == [(*DEADLINE, at(100))]
    assert get_trainjob(cluster)["status"]["jobsStatus"] == [rjob_status("node", failed=1)]
    assert [e[1] for e in trainjob_events(cluster)] == ["Created", "Failed"]
