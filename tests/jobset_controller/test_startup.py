"""Startup gating: ``dependsOn`` (jobset.md §4.4) and the deprecated ``InOrder`` startup policy (§4.3).

Jobs are driven by the test (see :mod:`tests.jobset_controller.harness`)."""

from __future__ import annotations

from tests.jobset_controller.harness import (
    advance,
    conditions,
    get_job,
    job_names,
    jobset,
    kube_events,
    make_cluster,
    rjob,
    set_ready,
    submit,
    succeed,
    timeline,
    update_jobset,
)

T0 = "2026-01-01T00:00:00Z"


def staged() -> dict:
    return jobset(
        rjob("initializer", 1),
        rjob("trainer", 2, depends_on=[{"name": "initializer", "status": "Ready"}]),
        rjob("eval", 1, depends_on=[{"name": "trainer", "status": "Complete"}]),
    )


def test_depends_on_ready_then_complete_stages() -> None:
    cluster = make_cluster()
    submit(cluster, staged())
    assert job_names(cluster) == ["js-initializer-0"]
    advance(cluster, 5)
    set_ready(cluster, "js-initializer-0")
    assert job_names(cluster) == ["js-initializer-0", "js-trainer-0", "js-trainer-1"]
    advance(cluster, 5)
    succeed(cluster, "js-trainer-0")
    assert "js-eval-0" not in job_names(cluster), "Complete needs every replica to succeed"
    advance(cluster, 5)
    succeed(cluster, "js-trainer-1")
    assert timeline(cluster) == [
        (0.0, "JobSet", "js", "Created", None),
        (0.0, "Job", "js-initializer-0", "Created", None),
        (5.0, "Job", "js-trainer-0", "Created", None),
        (5.0, "Job", "js-trainer-1", "Created", None),
        (15.0, "Job", "js-eval-0", "Created", None),
    ]


def test_depends_on_ready_counts_failed_and_succeeded_jobs() -> None:
    """Ready: ready + succeeded + failed == replicas (per child Job). A succeeded predecessor counts."""
    cluster = make_cluster()
    submit(cluster, jobset(
        rjob("a", 2), rjob("b", 1, depends_on=[{"name": "a", "status": "Ready"}]),
        successPolicy={"operator": "All", "targetReplicatedJobs": ["b"]},
    ))
    set_ready(cluster, "js-a-0")
    assert job_names(cluster) == ["js-a-0", "js-a-1"]
    succeed(cluster, "js-a-1")
    assert job_names(cluster) == ["js-a-0", "js-a-1", "js-b-0"]


def test_depends_on_several_dependencies_all_must_be_met() -> None:
    cluster = make_cluster()
    submit(cluster, jobset(
        rjob("a", 1), rjob("b", 1),
        rjob("c", 1, depends_on=[{"name": "a", "status": "Complete"}, {"name": "b", "status": "Ready"}]),
    ))
    assert job_names(cluster) == ["js-a-0", "js-b-0"]
    set_ready(cluster, "js-b-0")
    assert "js-c-0" not in job_names(cluster)
    set_ready(cluster, "js-a-0")
    assert "js-c-0" not in job_names(cluster), "a is only Ready; c waits for Complete"
    succeed(cluster, "js-a-0")
    assert job_names(cluster)[-1] == "js-c-0"


def test_depends_on_self_dependency_deadlock_quirk() -> None:
    """jobset.md §6 #2: admission accepts a self-dependency (not on the first replicated job); the
    replicated job is never created, and an ``All`` success policy can then never be met."""
    cluster = make_cluster()
    submit(cluster, jobset(rjob("a", 1), rjob("b", 1, depends_on=[{"name": "b", "status": "Ready"}])))
    set_ready(cluster, "js-a-0")
    advance(cluster, 60)
    succeed(cluster, "js-a-0")
    advance(cluster, 3600)
    assert job_names(cluster) == ["js-a-0"]
    assert conditions(cluster) == []


def test_depends_on_created_suspended_creates_only_the_first_stage() -> None:
    """§4.4: unlike InOrder, a JobSet created suspended creates only the stages whose dependencies
    are met; on resume the sequence continues from there."""
    cluster = make_cluster()
    submit(cluster, jobset(rjob("a", 1), rjob("b", 1, depends_on=[{"name": "a", "status": "Ready"}]), suspend=True))
    assert job_names(cluster) == ["js-a-0"]
    assert get_job(cluster, "js-a-0")["spec"]["suspend"] is True
    advance(cluster, 10)
    update_jobset(cluster, suspend=False)
    assert get_job(cluster, "js-a-0")["spec"]["suspend"] is False
    assert job_names(cluster) == ["js-a-0"]
    set_ready(cluster, "js-a-0")
    assert job_names(cluster) == ["js-a-0", "js-b-0"]
    assert get_job(cluster, "js-b-0")["spec"]["suspend"] is False
    assert timeline(cluster, ("JobSet",)) == [
        (0.0, "JobSet", "js", "Created", None),
        (0.0, "JobSet", "js", "Suspended", "SuspendedJobs"),
        (10.0, "JobSet", "js", "Resumed", "ResumeJobs"),
    ]


def in_order() -> dict:
    return jobset(rjob("a", 2), rjob("b", 1), rjob("c", 1), startupPolicy={"startupPolicyOrder": "InOrder"})


def test_in_order_startup_creates_one_replicated_job_at_a_time() -> None:
    cluster = make_cluster()
    submit(cluster, in_order())
    assert job_names(cluster) == ["js-a-0", "js-a-1"]
    advance(cluster, 1)
    set_ready(cluster, "js-a-0")
    assert job_names(cluster) == ["js-a-0", "js-a-1"]
    advance(cluster, 1)
    set_ready(cluster, "js-a-1")
    assert job_names(cluster) == ["js-a-0", "js-a-1", "js-b-0"]
    advance(cluster, 1)
    set_ready(cluster, "js-b-0")
    assert job_names(cluster)[-1] == "js-c-0"
    advance(cluster, 1)
    set_ready(cluster, "js-c-0")
    # The InProgress condition is flipped to False in place: reason and time kept (quirk).
    assert conditions(cluster) == [
        ("StartupPolicyInProgress", "False", "InOrderStartupPolicyInProgress", T0),
        ("StartupPolicyCompleted", "True", "InOrderStartupPolicyCompleted", "2026-01-01T00:00:04Z"),
    ]
    assert kube_events(cluster) == [
        (0.0, "Normal", "InOrderStartupPolicyInProgress", "in order startup policy is in progress"),
        (4.0, "Normal", "InOrderStartupPolicyCompleted", "in order startup policy has completed"),
    ]


def test_in_order_suspended_creates_everything_and_resumes_in_order() -> None:
    """§4.3: suspended → every Job created (suspended), no startup condition. Resume un-suspends one
    replicated job at a time; ``Suspended=False`` is written only once all have started."""
    cluster = make_cluster()
    obj = in_order()
    obj["spec"]["suspend"] = True
    submit(cluster, obj)
    assert job_names(cluster) == ["js-a-0", "js-a-1", "js-b-0", "js-c-0"]
    assert conditions(cluster) == [("Suspended", "True", "SuspendedJobs", T0)]
    advance(cluster, 10)
    update_jobset(cluster, suspend=False)
    suspended = {name: get_job(cluster, name)["spec"]["suspend"] for name in job_names(cluster)}
    assert suspended == {"js-a-0": False, "js-a-1": False, "js-b-0": True, "js-c-0": True}
    set_ready(cluster, "js-a-0")
    set_ready(cluster, "js-a-1")
    assert get_job(cluster, "js-b-0")["spec"]["suspend"] is False
    assert get_job(cluster, "js-c-0")["spec"]["suspend"] is True
    set_ready(cluster, "js-b-0")
    set_ready(cluster, "js-c-0")
    assert conditions(cluster) == [
        ("Suspended", "False", "ResumeJobs", "2026-01-01T00:00:10Z"),
        ("StartupPolicyInProgress", "False", "InOrderStartupPolicyInProgress", "2026-01-01T00:00:10Z"),
        ("StartupPolicyCompleted", "True", "InOrderStartupPolicyCompleted", "2026-01-01T00:00:10Z"),
    ]
    assert [(t, e, r) for t, _, _, e, r in timeline(cluster, ("JobSet",))] == [
        (0.0, "Created", None),
        (0.0, "Suspended", "SuspendedJobs"),
        (10.0, "Resumed", "ResumeJobs"),
    ]
