"""Test harness for the JobSet controller: a real FakeCluster, manifest builders, and helpers that
drive child Jobs the way the Kubernetes Job controller would.

Driving Jobs: unit-style dynamics tests put ``spec.managedBy: example.com/test-driver`` into the
replicated job's Job template, so the built-in Job controller leaves those Jobs alone (Kubernetes
``JobManagedBy``), and the test writes Job status (``ready``, ``Complete``/``Failed`` conditions)
through ``api.update_status``, exactly as an external Job controller would. That is real input to
the real JobSet controller, not a mock. End-to-end tests leave ``managedBy`` out and run the Job
controller, scheduler and kubelet with pods.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from jobsetctl.fakecluster.cluster import ClusterOptions, FakeCluster
from jobsetctl.jobset import api
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import DEFAULT_KUBE_VERSION

#: A Job ``spec.managedBy`` the built-in Job controller ignores: the test drives those Jobs.
DRIVER = "example.com/test-driver"
CONTAINER: dict[str, Any] = {"name": "main", "image": "busybox"}
BACKOFF_MESSAGE = "Job has reached the specified backoff limit"


# ---------------------------------------------------------------------------------------------------
# Cluster


def make_cluster(gates: str = "", *, simulate: bool = False, create_pods: bool = False, seed: int = 0) -> FakeCluster:
    version = DEFAULT_KUBE_VERSION
    return FakeCluster(ClusterOptions(
        version, parse_feature_gates(gates, version), seed=seed, simulate=simulate, create_pods=create_pods,
    ))


def submit(cluster: FakeCluster, obj: dict[str, Any]) -> dict[str, Any]:
    """Create through admission (must be accepted) and let the controllers settle at this instant."""
    result = cluster.submit(copy.deepcopy(obj))
    assert result.ok, result.message()
    assert result.obj is not None
    cluster.manager.settle()
    return result.obj


def settle(cluster: FakeCluster) -> None:
    cluster.manager.settle()


def advance(cluster: FakeCluster, seconds: float) -> None:
    """Move the virtual clock forward, running every timer due on the way."""
    cluster.run(until=cluster.clock.now + seconds)


# ---------------------------------------------------------------------------------------------------
# Builders


def rjob(
    name: str = "rj",
    replicas: int = 1,
    *,
    driven: bool = True,
    completions: int | None = None,
    parallelism: int | None = None,
    depends_on: list[dict[str, str]] | None = None,
    pod_spec: dict[str, Any] | None = None,
    pod_metadata: dict[str, Any] | None = None,
    job_metadata: dict[str, Any] | None = None,
    job_spec: dict[str, Any] | None = None,
    group: str | None = None,
) -> dict[str, Any]:
    """A replicated job with one container; ``driven`` sets the Job ``managedBy`` the test drives."""
    spec: dict[str, Any] = {}
    if driven:
        spec["managedBy"] = DRIVER
    if completions is not None:
        spec["completions"] = completions
    if parallelism is not None:
        spec["parallelism"] = parallelism
    spec.update(job_spec or {})
    template: dict[str, Any] = {"spec": {"containers": [dict(CONTAINER)], **(pod_spec or {})}}
    if pod_metadata:
        template["metadata"] = pod_metadata
    spec["template"] = template
    item: dict[str, Any] = {"name": name, "replicas": replicas}
    if group is not None:
        item["groupName"] = group
    if depends_on is not None:
        item["dependsOn"] = depends_on
    job_template: dict[str, Any] = {"spec": spec}
    if job_metadata:
        job_template = {"metadata": job_metadata, "spec": spec}
    item["template"] = job_template
    return item


def jobset(
    *rjobs: dict[str, Any],
    name: str = "js",
    namespace: str = "default",
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if annotations:
        metadata["annotations"] = annotations
    return {
        "apiVersion": api.API_VERSION,
        "kind": api.KIND,
        "metadata": metadata,
        "spec": {**spec, "replicatedJobs": list(rjobs) if rjobs else [rjob()]},
    }


# ---------------------------------------------------------------------------------------------------
# Reading


def get_jobset(cluster: FakeCluster, name: str = "js", namespace: str = "default") -> dict[str, Any]:
    obj = cluster.api.get(api.GROUP, api.KIND, namespace, name)
    assert obj is not None, f"JobSet {name} not found"
    return obj


def get_job(cluster: FakeCluster, name: str, namespace: str = "default") -> dict[str, Any]:
    obj = cluster.api.get("batch", "Job", namespace, name)
    assert obj is not None, f"Job {name} not found"
    return obj


def job_names(cluster: FakeCluster, namespace: str = "default") -> list[str]:
    """Names of the stored Jobs, in creation order."""
    return [api.name(job) for job in cluster.api.list("batch", "Job", namespace)]


def jobs_by_restart_attempt(cluster: FakeCluster, namespace: str = "default") -> dict[int, int]:
    """How many Jobs exist per ``restart-attempt`` label (the integration tests' ``NumJobsByRestartAttempt``)."""
    counts: dict[int, int] = {}
    for job in cluster.api.list("batch", "Job", namespace):
        attempt = int(api.metadata(job)["labels"][api.RESTART_ATTEMPT_KEY])
        counts[attempt] = counts.get(attempt, 0) + 1
    return dict(sorted(counts.items()))


def conditions(cluster: FakeCluster, name: str = "js") -> list[tuple[str, str, str, str]]:
    """(type, status, reason, lastTransitionTime) of the JobSet's conditions, in stored order."""
    return [
        (c["type"], c["status"], c["reason"], c["lastTransitionTime"])
        for c in api.conditions(get_jobset(cluster, name))
    ]


def rjob_status(cluster: FakeCluster, name: str = "js") -> list[dict[str, Any]]:
    return list(api.status(get_jobset(cluster, name)).get("replicatedJobsStatus", []))


def timeline(
    cluster: FakeCluster, kinds: Iterable[str] = ("JobSet", "Job"), *, since: float = 0.0
) -> list[tuple[float, str, str, str, str | None]]:
    """Simulation events (time, kind, name, event, reason) of the given kinds, in order."""
    wanted = set(kinds)
    return [
        (e.time, e.kind, e.name, e.event, e.reason)
        for e in cluster.recorder.events
        if e.kind in wanted and e.time >= since
    ]


def kube_events(cluster: FakeCluster, name: str = "js", *, since: float = 0.0) -> list[tuple[float, str, str, str]]:
    """Kubernetes Events of one JobSet: (time, type, reason, message)."""
    return [
        (e.time, e.type, e.reason, e.message)
        for e in cluster.recorder.kube_events
        if e.kind == api.KIND and e.name == name and e.time >= since
    ]


# ---------------------------------------------------------------------------------------------------
# Driving Jobs (test input written as an external Job controller would)


def _status(job: dict[str, Any]) -> dict[str, Any]:
    status = job.get("status")
    if not isinstance(status, dict):
        status = job["status"] = {}
    return status


def set_ready(cluster: FakeCluster, name: str, ready: int = 1, *, settle_after: bool = True) -> None:
    job = get_job(cluster, name)
    status = _status(job)
    status["ready"] = ready
    status["active"] = ready
    cluster.api.update_status(job)
    if settle_after:
        settle(cluster)


def _finish(job: dict[str, Any], condition_type: str, reason: str, message: str, now: str) -> None:
    status = _status(job)
    status.setdefault("conditions", []).append({
        "type": condition_type, "status": "True", "lastTransitionTime": now, "reason": reason, "message": message,
    })
    status["active"] = 0
    status["ready"] = 0


def succeed(cluster: FakeCluster, *names: str, settle_after: bool = True) -> None:
    """Complete Jobs (``Complete=True``, succeeded = completions)."""
    for name in names:
        job = get_job(cluster, name)
        _finish(job, "Complete", "CompletionsReached", "Reached expected number of succeeded pods", cluster.clock.timestamp())
        _status(job)["succeeded"] = api.as_int(job["spec"].get("completions")) or 1
        cluster.api.update_status(job)
    if settle_after:
        settle(cluster)


def fail(
    cluster: FakeCluster,
    *names: str,
    reason: str = "BackoffLimitExceeded",
    message: str = BACKOFF_MESSAGE,
    at: float | None = None,
    settle_after: bool = True,
) -> None:
    """Fail Jobs (``Failed=True`` with this reason and message; its time is now, or ``at``)."""
    for name in names:
        job = get_job(cluster, name)
        _finish(job, "Failed", reason, message, cluster.clock.timestamp(at))
        _status(job)["failed"] = 1
        cluster.api.update_status(job)
    if settle_after:
        settle(cluster)


def hold(cluster: FakeCluster, *names: str, finalizer: str = "example.com/hold") -> None:
    """Add a finalizer (as another controller would) so that a deleted Job lingers until :func:`release`."""
    for name in names:
        job = get_job(cluster, name)
        job["metadata"].setdefault("finalizers", []).append(finalizer)
        cluster.api.update_status(job)
    settle(cluster)


def release(cluster: FakeCluster, *names: str, finalizer: str = "example.com/hold") -> None:
    for name in names:
        cluster.api.remove_finalizer(get_job(cluster, name), finalizer)
    settle(cluster)


def update_jobset(cluster: FakeCluster, name: str = "js", **spec_changes: Any) -> None:
    """A user's update of top-level spec fields (through admission; must be accepted)."""
    updated = copy.deepcopy(get_jobset(cluster, name))
    updated["spec"].update(spec_changes)
    result = cluster.api.update(updated)
    assert result.ok, result.message()
    settle(cluster)


def edit_pod_template(cluster: FakeCluster, rjob_index: int, edit: Any, name: str = "js") -> None:
    """A user's (or Kueue's) update of a replicated job's pod template (allowed while suspended)."""
    updated = copy.deepcopy(get_jobset(cluster, name))
    edit(updated["spec"]["replicatedJobs"][rjob_index]["template"]["spec"]["template"])
    result = cluster.api.update(updated)
    assert result.ok, result.message()
    settle(cluster)
