"""Suspend / resume (jobset.md §4.8, Kueue's path), TTL after finished, managedBy, Job creation
failures and back-off (§4.1 steps 2, 13, 16), the headless Service's re-creation (§3.3) and
ElasticJobSet patching (§4.1 step 12)."""

from __future__ import annotations

import copy
from typing import Any

from jobsetctl.fakecluster.controllers.jobset import BACKOFF_BASE_SECONDS
from tests.jobset_controller.harness import (
    advance,
    conditions,
    edit_pod_template,
    fail,
    get_job,
    get_jobset,
    hold,
    job_names,
    jobset,
    kube_events,
    make_cluster,
    rjob,
    set_ready,
    settle,
    submit,
    succeed,
    timeline,
    update_jobset,
)


def test_suspend_running_jobset_suspends_every_active_job() -> None:
    cluster = make_cluster()
    submit(cluster, jobset(rjob("a", 2), failurePolicy={"maxRestarts": 3}))
    fail(cluster, "js-a-0")  # a restart, so that RestartingJobSet exists
    advance(cluster, 10)
    update_jobset(cluster, suspend=True)
    assert [get_job(cluster, n)["spec"]["suspend"] for n in job_names(cluster)] == [True, True]
    assert conditions(cluster) == [
        ("RestartingJobSet", "False", "JobSetSuspended", "2026-01-01T00:00:10Z"),
        ("Suspended", "True", "SuspendedJobs", "2026-01-01T00:00:10Z"),
    ]
    assert kube_events(cluster, since=1) == [
        (10.0, "Normal", "SuspendedJobs", "jobset is suspended"),
        (10.0, "Normal", "JobSetSuspended", "jobset is suspended"),
    ]
    assert timeline(cluster, ("JobSet",), since=1) == [(10.0, "JobSet", "js", "Suspended", "SuspendedJobs")]
    status = get_jobset(cluster)["status"]["replicatedJobsStatus"]
    assert status == [{"name": "a", "ready": 0, "succeeded": 0, "failed": 0, "active": 0, "suspended": 2}]


def test_resume_merges_kueue_edits_into_jobs_quirk_tolerations() -> None:
    """§4.8: resume clears ``startTime`` first, then merges labels, annotations, nodeSelector (maps,
    JobSet wins), tolerations and schedulingGates (set union) and un-suspends. A toleration with
    ``tolerationSeconds`` compares by pointer in Go, so it is added again (quirk, derived from code)."""
    cluster = make_cluster()
    submit(cluster, jobset(
        rjob("a", 1,
             pod_metadata={"labels": {"keep": "job", "shared": "old"}},
             pod_spec={"nodeSelector": {"zone": "a"},
                       "tolerations": [{"key": "t", "operator": "Exists", "tolerationSeconds": 30}],
                       "schedulingGates": [{"name": "example.com/gate"}]}),
        suspend=True,
    ))
    job = get_job(cluster, "js-a-0")
    job.setdefault("status", {})["startTime"] = "2026-01-01T00:00:00Z"  # as if it had run before
    cluster.api.update_status(job)
    settle(cluster)

    def kueue_admits(template: dict[str, Any]) -> None:
        template["metadata"]["labels"]["shared"] = "new"
        template["metadata"]["annotations"] = {"kueue.x-k8s.io/admission": "flavor-a"}
        template["spec"]["nodeSelector"] = {"pool": "gpu"}
        template["spec"]["tolerations"].append({"key": "gpu", "operator": "Exists"})
        template["spec"]["schedulingGates"] = [{"name": "example.com/gate"}, {"name": "kueue.x-k8s.io/topology"}]

    edit_pod_template(cluster, 0, kueue_admits)
    assert get_job(cluster, "js-a-0")["spec"]["template"]["spec"]["nodeSelector"] == {"zone": "a"}, "not yet"
    update_jobset(cluster, suspend=False)
    job = get_job(cluster, "js-a-0")
    template = job["spec"]["template"]
    assert job["spec"]["suspend"] is False
    assert "startTime" not in job["status"]
    assert template["metadata"]["labels"]["keep"] == "job"
    assert template["metadata"]["labels"]["shared"] == "new"
    assert template["metadata"]["labels"]["jobset.sigs.k8s.io/job-index"] == "0", "controller keys survive"
    assert template["metadata"]["annotations"]["kueue.x-k8s.io/admission"] == "flavor-a"
    assert template["spec"]["nodeSelector"] == {"pool": "gpu", "zone": "a"}
    assert template["spec"]["tolerations"] == [
        {"key": "t", "operator": "Exists", "tolerationSeconds": 30},
        {"key": "t", "operator": "Exists", "tolerationSeconds": 30},
        {"key": "gpu", "operator": "Exists"},
    ]
    assert template["spec"]["schedulingGates"] == [{"name": "example.com/gate"}, {"name": "kueue.x-k8s.io/topology"}]
    assert conditions(cluster) == [("Suspended", "False", "ResumeJobs", "2026-01-01T00:00:00Z")]
    assert [e for _, _, _, e, _ in timeline(cluster, ("JobSet",))] == ["Created", "Suspended", "Resumed"]


def test_never_suspended_jobset_has_no_suspended_condition() -> None:
    cluster = make_cluster()
    submit(cluster, jobset(rjob("a", 1)))
    set_ready(cluster, "js-a-0")
    assert conditions(cluster) == []
    assert kube_events(cluster) == []


def test_ttl_deletes_jobset_after_finish() -> None:
    cluster = make_cluster()
    submit(cluster, jobset(rjob("a", 1), ttlSecondsAfterFinished=60))
    advance(cluster, 10)
    succeed(cluster, "js-a-0")
    advance(cluster, 59)
    assert get_jobset(cluster)["status"]["terminalState"] == "Completed"
    advance(cluster, 1)
    assert cluster.api.get("jobset.x-k8s.io", "JobSet", "default", "js") is None
    assert timeline(cluster, ("JobSet", "Job", "Service"), since=1) == [
        (10.0, "JobSet", "js", "Completed", "AllJobsCompleted"),
        # Foreground deletion: the garbage collector removes the children first (in its order).
        (70.0, "Service", "js", "Deleted", None),
        (70.0, "Job", "js-a-0", "Deleted", None),
        (70.0, "JobSet", "js", "Deleted", None),
    ]


def test_ttl_zero_deletes_at_once_after_failure() -> None:
    cluster = make_cluster()
    submit(cluster, jobset(rjob("a", 1), ttlSecondsAfterFinished=0))
    advance(cluster, 3)
    fail(cluster, "js-a-0")
    assert cluster.api.get("jobset.x-k8s.io", "JobSet", "default", "js") is None
    assert [(t, e) for t, _, _, e, _ in timeline(cluster, ("JobSet",))] == [(0.0, "Created"), (3.0, "Failed"), (3.0, "Deleted")]


def test_managed_by_external_controller_is_left_alone() -> None:
    cluster = make_cluster()
    submit(cluster, jobset(rjob("a", 2), managedBy="kueue.x-k8s.io/multikueue"))
    js = get_jobset(cluster)
    js["status"] = {"restarts": 7, "terminalState": "Completed"}  # written by the external controller
    cluster.api.update_status(js)
    settle(cluster)
    advance(cluster, 3600)
    assert job_names(cluster) == []
    assert cluster.api.get("", "Service", "default", "js") is None
    assert get_jobset(cluster)["status"] == {"restarts": 7, "terminalState": "Completed"}


def test_managed_by_builtin_name_is_reconciled() -> None:
    cluster = make_cluster()
    submit(cluster, jobset(rjob("a", 1), managedBy="jobset.sigs.k8s.io/jobset-controller"))
    assert job_names(cluster) == ["js-a-0"]


def test_job_creation_failed_event_and_back_off() -> None:
    """An invalid pod template passes JobSet admission and fails at Job creation: a
    ``JobCreationFailed`` event per attempt, with controller-runtime's per-item back-off."""
    cluster = make_cluster()
    bad = rjob("bad", 2, pod_spec={"containers": [{"name": "main", "image": ""}]})
    submit(cluster, jobset(rjob("good", 1), bad))
    advance(cluster, 0.1)
    message = (
        'job "js-bad-0" creation failed with error: Job.batch "js-bad-0" is invalid: '
        "spec.template.spec.containers[0].image: Required value\n"
        'job "js-bad-1" creation failed with error: Job.batch "js-bad-1" is invalid: '
        "spec.template.spec.containers[0].image: Required value"
    )
    # t=0: the first pass fails; the good Job's creation event runs a second pass at once (failure 2,
    # its 10 ms retry loses to the pending 5 ms one); then 5 ms · 2^n after each failure: 20, 40 ms.
    times = [0.0, 0.0, 0.005, 0.025, 0.065]
    assert [(round(t, 6), ty, r, m) for t, ty, r, m in kube_events(cluster)] == [
        (t, "Warning", "JobCreationFailed", message) for t in times
    ]
    assert BACKOFF_BASE_SECONDS == 0.005
    assert job_names(cluster) == ["js-good-0"], "the valid Job is created; the pass then stops"
    rejected = [e for e in cluster.recorder.events if e.event == "Rejected"]
    assert [(e.kind, e.name) for e in rejected[:2]] == [("Job", "js-bad-0"), ("Job", "js-bad-1")]
    assert "replicatedJobsStatus" not in get_jobset(cluster).get("status", {}), "no status write on error"


def test_deleted_headless_service_is_recreated() -> None:
    cluster = make_cluster()
    submit(cluster, jobset(rjob("a", 1)))
    advance(cluster, 5)
    service = cluster.api.get("", "Service", "default", "js")
    assert service is not None
    cluster.api.delete(service)
    settle(cluster)
    assert timeline(cluster, ("Service",)) == [
        (0.0, "Service", "js", "Created", None),
        (5.0, "Service", "js", "Deleted", None),
        (5.0, "Service", "js", "Created", None),
    ]


def test_elastic_jobset_patches_active_jobs() -> None:
    cluster = make_cluster("ElasticJobSet=true")
    submit(cluster, jobset(rjob("w", 2, completions=2, parallelism=2)))
    updated = copy.deepcopy(get_jobset(cluster))
    updated["spec"]["replicatedJobs"][0]["template"]["spec"].update({"parallelism": 4, "completions": 4})
    result = cluster.api.update(updated)
    assert result.ok, result.message()
    settle(cluster)
    assert [(get_job(cluster, n)["spec"]["parallelism"], get_job(cluster, n)["spec"]["completions"])
            for n in job_names(cluster)] == [(4, 4), (4, 4)]


def test_finished_jobset_status_still_tracks_children() -> None:
    """Step 5 runs after the status recompute: a finished JobSet's counters keep being updated."""
    cluster = make_cluster()
    submit(cluster, jobset(rjob("a", 2), successPolicy={"operator": "Any"}))
    succeed(cluster, "js-a-0")
    assert get_jobset(cluster)["status"]["replicatedJobsStatus"] == [
        {"name": "a", "ready": 0, "succeeded": 1, "failed": 0, "active": 0, "suspended": 0},
    ]


def test_job_without_restart_attempt_label_stops_every_pass() -> None:
    """§4.2: a missing ``restart-attempt`` label on an owned Job is a reconcile error, so the pass
    ends before its status write, however the other Jobs change."""
    cluster = make_cluster()
    submit(cluster, jobset(rjob("a", 2)))
    job = get_job(cluster, "js-a-0")
    del job["metadata"]["labels"]["jobset.sigs.k8s.io/restart-attempt"]
    cluster.api.update_status(job)  # e.g. a user's ``kubectl label ... restart-attempt-``
    settle(cluster)
    set_ready(cluster, "js-a-1")
    advance(cluster, 60)
    assert get_jobset(cluster)["status"]["replicatedJobsStatus"][0]["ready"] == 0


def test_stored_objects_are_plain_yaml() -> None:
    """Conditions and status hold plain strings (not enum members): ``yaml.safe_dump`` can print them."""
    import yaml

    cluster = make_cluster()
    submit(cluster, jobset(rjob("a", 1), failurePolicy={"maxRestarts": 1}))
    fail(cluster, "js-a-0")
    set_ready(cluster, "js-a-0")
    fail(cluster, "js-a-0")
    text = yaml.safe_dump(cluster.api.all_objects())
    assert "type: RestartingJobSet" in text and "terminalState: Failed" in text


def test_jobset_being_deleted_is_not_reconciled() -> None:
    cluster = make_cluster()
    submit(cluster, jobset(rjob("a", 2)))
    hold(cluster, "js-a-0")  # keeps the foreground deletion of the JobSet pending
    cluster.api.delete(get_jobset(cluster), propagation="Foreground")
    settle(cluster)
    assert get_jobset(cluster)["metadata"]["deletionTimestamp"]
    fail(cluster, "js-a-0")
    assert conditions(cluster) == []
    assert kube_events(cluster) == []


def test_deleted_owned_pvc_is_recreated() -> None:
    """PVC events trigger a pass here (upstream watches only Jobs and Services; see the module doc)."""
    cluster = make_cluster()
    claim = {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
                                                    "resources": {"requests": {"storage": "1Gi"}}}}
    mount = {"containers": [{"name": "main", "image": "busybox", "volumeMounts": [{"name": "data", "mountPath": "/d"}]}]}
    submit(cluster, jobset(rjob("a", 1, pod_spec=mount), volumeClaimPolicies=[{"templates": [claim]}]))
    advance(cluster, 3)
    pvc = cluster.api.get("", "PersistentVolumeClaim", "default", "data-js")
    assert pvc is not None
    cluster.api.delete(pvc)
    settle(cluster)
    assert timeline(cluster, ("PersistentVolumeClaim",)) == [
        (0.0, "PersistentVolumeClaim", "data-js", "Created", None),
        (3.0, "PersistentVolumeClaim", "data-js", "Deleted", None),
        (3.0, "PersistentVolumeClaim", "data-js", "Created", None),
    ]
