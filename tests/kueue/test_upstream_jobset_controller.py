"""Kueue's JobSet integration, the admission half (jobsetctl/kueue/engine/jobs.py ``JobAdapter``).

Translated from kueue @ff69552e ``pkg/controller/jobs/jobset/jobset_controller_test.go``: ``TestPodsReady``
(2/2), ``TestReclaimablePods`` (5/5), ``TestRestorePodSetsInfo`` (3/3), each case by its upstream name.
``TestPodSets`` and ``TestReconciler`` are in tests/kueue/test_workload.py. The JobSets are testingjobset's
wrappers (``ReplicatedJobs`` with replicas, parallelism, completions; ``JobsStatus``) written out.
"""

from __future__ import annotations

from typing import Any

import pytest

from jobsetctl.kueue.engine.jobs import JobAdapter, restore_podsets
from tests.kueue.upstream.harness import Harness


def _jobset(*replicated: tuple[str, int, int, int], status: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """testingjobset.MakeJobSet("jobset", "ns").ReplicatedJobs(...).JobsStatus(...)."""
    obj: dict[str, Any] = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
        "metadata": {"name": "jobset", "namespace": "ns"},
        "spec": {"replicatedJobs": [
            {"name": name, "replicas": replicas, "template": {"spec": {
                "parallelism": parallelism, "completions": completions,
                "template": {"spec": {"containers": [{"name": "c", "image": "pause"}]}}}}}
            for name, replicas, parallelism, completions in replicated]}}
    if status is not None:
        obj["status"] = {"replicatedJobsStatus": status}
    return obj


def _adapter(job: dict[str, Any]) -> JobAdapter:
    return JobAdapter(Harness().engine, job)


TWO_BY_ONE = (("replicated-job-1", 2, 1, 1), ("replicated-job-2", 3, 1, 1))


@pytest.mark.parametrize(("status", "want"), [
    pytest.param([{"name": "replicated-job-1", "ready": 1, "succeeded": 1},
                  {"name": "replicated-job-2", "ready": 3, "succeeded": 0}], True, id="all jobs are ready"),
    pytest.param([{"name": "replicated-job-1", "ready": 1, "succeeded": 0},
                  {"name": "replicated-job-2", "ready": 1, "succeeded": 2}], False, id="not all jobs are ready"),
])
def test_pods_ready(status: list[dict[str, Any]], want: bool) -> None:
    """TestPodsReady."""
    assert _adapter(_jobset(*TWO_BY_ONE, status=status)).pods_ready() is want


BASE = (("replicated-job-1", 1, 2, 2), ("replicated-job-2", 2, 3, 6))


@pytest.mark.parametrize(("status", "want"), [
    pytest.param(None, [], id="no status"),
    pytest.param([], [], id="empty jobs status"),
    pytest.param([{"name": "replicated-job-1", "succeeded": 1}], [{"name": "replicated-job-1", "count": 2}],
                 id="single job done"),
    # replicated-job-2: parallelism 3, completions 6, so 3 pods per replica (PodsCountPerReplica).
    pytest.param([{"name": "replicated-job-2", "succeeded": 1}], [{"name": "replicated-job-2", "count": 3}],
                 id="single job partial done"),
    pytest.param([{"name": "replicated-job-1", "succeeded": 1}, {"name": "replicated-job-2", "succeeded": 2}],
                 [{"name": "replicated-job-1", "count": 2}, {"name": "replicated-job-2", "count": 6}], id="all done"),
])
def test_reclaimable_pods(status: list[dict[str, Any]] | None, want: list[dict[str, Any]]) -> None:
    """TestReclaimablePods (upstream's nil is our empty list)."""
    assert _adapter(_jobset(*BASE, status=status)).reclaimable_pods() == want


def _podset(node_selector: dict[str, str] | None = None) -> dict[str, Any]:
    """A Workload podset whose template holds what podset.PodSetInfo would restore."""
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "pause"}]}
    if node_selector:
        spec["nodeSelector"] = node_selector
    return {"name": "main", "count": 1, "template": {"spec": spec}}


@pytest.mark.parametrize(("podsets", "changed"), [
    pytest.param([_podset()], False, id="fewer podSetsInfo than replicated jobs is a no-op"),
    pytest.param([_podset(), _podset(), _podset()], False, id="more podSetsInfo than replicated jobs is a no-op"),
    pytest.param([_podset({"restored": "true"}), _podset({"restored": "true"})], True,
                 id="matching length restores pod sets"),
])
def test_restore_pod_sets_info(podsets: list[dict[str, Any]], changed: bool) -> None:
    """TestRestorePodSetsInfo: what stopJob does to the templates of an evicted JobSet."""
    job = _jobset(("job1", 1, 1, 1), ("job2", 1, 1, 1))
    assert restore_podsets(_adapter(job), podsets) is changed
    selectors = [rj["template"]["spec"]["template"]["spec"].get("nodeSelector") for rj in job["spec"]["replicatedJobs"]]
    assert selectors == ([{"restored": "true"}] * 2 if changed else [None, None])
