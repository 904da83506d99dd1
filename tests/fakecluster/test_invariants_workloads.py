"""Rules 5 (``dependsOn``) and 6 (Job pod accounting) of the invariant checker
(``jobsetctl/fakecluster/invariants.py``, ``invariants_jobs.py``): each catches its violation, written to
the API server directly as a buggy controller would, and stays quiet on correct runs (counting checks)."""

from __future__ import annotations

from typing import Any

import pytest

from jobsetctl.fakecluster.cluster import FakeCluster
from jobsetctl.fakecluster.invariants import InvariantChecker, InvariantViolation
from jobsetctl.jobset import api, render
from tests.fakecluster.harness import add_node, build_cluster, job, submit

FINALIZER = "batch.kubernetes.io/job-tracking"


def checker(fake: FakeCluster) -> InvariantChecker:
    assert fake.invariants is not None, "tests/conftest.py turns the invariants on for every simulated cluster"
    return fake.invariants


def staged(dependency: str, *, first: dict[str, str]) -> dict[str, Any]:
    """A JobSet: ``first`` (2 Jobs, pod annotations ``first``) then ``second`` depending on it."""
    def rjob(name: str, annotations: dict[str, str], **extra: Any) -> dict[str, Any]:
        return {"name": name, "replicas": 2, **extra, "template": {"spec": {
            "template": {"metadata": {"annotations": annotations}, "spec": {
                "restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}}}}}

    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "js"},
            "spec": {"replicatedJobs": [
                rjob("first", first),
                rjob("second", {"jobsetctl.dev/duration": "10s"},
                     dependsOn=[{"name": "first", "status": dependency}])]}}


def forged_child(fake: FakeCluster, rjob: str, index: int) -> dict[str, Any]:
    """Job ``index`` of ``rjob`` as the JobSet controller builds it, for a test that plays a controller
    which ignored dependsOn."""
    js = fake.api.get("jobset.x-k8s.io", "JobSet", "default", "js")
    assert js is not None
    found = api.find_replicated_job(js, rjob)
    assert found is not None
    return render.child_job(js, found[1], index, restart_attempt=0)


def jobs(fake: FakeCluster) -> list[str]:
    return sorted(j["metadata"]["name"] for j in fake.api.list("batch", "Job", "default"))


# ---- rule 5 -----------------------------------------------------------------------------------------


def test_complete_dependency_gates_creation_and_is_checked() -> None:
    fake = build_cluster()
    add_node(fake, "n")
    submit(fake, staged("Complete", first={"jobsetctl.dev/duration": "30s"}))
    fake.run(29)
    assert jobs(fake) == ["js-first-0", "js-first-1"]
    before = checker(fake).checks
    fake.run(100)
    assert jobs(fake) == ["js-first-0", "js-first-1", "js-second-0", "js-second-1"]
    assert checker(fake).checks - before >= 4  # 2 second-stage Jobs x 1 dependency, plus accounting


def test_ready_dependency_is_met_by_ready_pods() -> None:
    fake = build_cluster()
    add_node(fake, "n")
    submit(fake, staged("Ready", first={"jobsetctl.dev/ready-after": "20s", "jobsetctl.dev/duration": "1h"}))
    fake.run(19)
    assert jobs(fake) == ["js-first-0", "js-first-1"]
    fake.run(21)
    assert jobs(fake) == ["js-first-0", "js-first-1", "js-second-0", "js-second-1"]


@pytest.mark.parametrize("dependency", ["Complete", "Ready"])
def test_a_stage_created_before_its_dependency_is_caught(dependency: str) -> None:
    fake = build_cluster()
    add_node(fake, "n")
    submit(fake, staged(dependency, first={"jobsetctl.dev/ready-after": "20s", "jobsetctl.dev/duration": "1h"}))
    fake.run(5)
    with pytest.raises(InvariantViolation, match=rf"Job default/js-second-0 of replicated job second created "
                                                 rf"while its dependency first is not {dependency}: 0 of 2"):
        fake.api.create(forged_child(fake, "second", 0))


# ---- rule 6 -----------------------------------------------------------------------------------------


def test_a_pod_removed_while_its_job_still_tracks_it_is_caught() -> None:
    fake = build_cluster()
    add_node(fake, "n")
    submit(fake, job(annotations={"jobsetctl.dev/duration": "100s"}))
    fake.run(1)
    pod = fake.api.list("", "Pod", "default")[0]
    assert FINALIZER in pod["metadata"]["finalizers"]
    with pytest.raises(InvariantViolation, match=r"removed while it still held batch.kubernetes.io/job-tracking"):
        fake.api.remove(pod)


def test_a_job_completed_without_succeeded_pods_is_caught() -> None:
    fake = build_cluster()
    add_node(fake, "n")
    stored = submit(fake, job(annotations={"jobsetctl.dev/duration": "100s"}))
    fake.run(1)
    stored["status"] = {**stored.get("status", {}), "succeeded": 1, "conditions": [
        {"type": "Complete", "status": "True", "reason": "CompletionsReached", "message": "forged"}]}
    with pytest.raises(InvariantViolation, match=r"Job default/pi does not account for its pods: succeeded 1 but "
                                                 r"0 pod\(s\) succeeded while tracked"):
        fake.api.update_status(stored)


def test_counters_that_drift_from_the_pods_are_caught_at_the_end() -> None:
    fake = build_cluster()
    add_node(fake, "n")
    stored = submit(fake, job(parallelism=2, completions=4, annotations={"jobsetctl.dev/duration": "100s"}))
    fake.run(150)
    assert checker(fake).finish() > 0  # consistent as the controller left it
    stored["status"]["ready"] = 7  # a controller that miscounts, at rest
    with pytest.raises(InvariantViolation, match=r"active/terminating/ready \(2, 0, 7\) but its pods give \(2, 0, 2\)"):
        checker(fake).finish()


def test_indexed_completed_indexes_must_match_the_pods() -> None:
    fake = build_cluster()
    add_node(fake, "n")
    stored = submit(fake, job(parallelism=2, completions=3, indexed=True,
                              annotations={"jobsetctl.dev/duration": "100s"}))
    fake.run(150)
    assert stored["status"]["completedIndexes"] == "0,1"
    stored["status"]["completedIndexes"] = "0-2"
    with pytest.raises(InvariantViolation, match=r"completedIndexes '0-2' \(succeeded 2\) but the pods that succeeded "
                                                 r"while tracked have indexes \[0, 1\]"):
        checker(fake).finish()


def test_failures_are_bounded_by_the_released_pods() -> None:
    fake = build_cluster()
    add_node(fake, "n")
    stored = submit(fake, job(backoffLimit=1, annotations={"jobsetctl.dev/fail-after": "5s"}))
    fake.run(1000)
    assert stored["status"]["failed"] == 2  # two pods failed, the Job with them
    stored["status"]["failed"] = 3
    with pytest.raises(InvariantViolation, match=r"failed 3 outside \[2, 2\]"):
        checker(fake).finish()
