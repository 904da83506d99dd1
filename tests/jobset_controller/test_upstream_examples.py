"""The upstream examples (``../shared/upstream/jobset/examples``, read at test time, skipped when absent)
run through the real FakeCluster. Each example's Jobs are driven by the test (``managedBy`` is set
on the in-memory copy, see :mod:`tests.jobset_controller.harness`), so each failure-policy rule is hit
with the reason its example is about (jobset.md §4.6)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import UPSTREAM, requires_upstream
from tests.jobset_controller.harness import (
    DRIVER,
    fail,
    get_jobset,
    job_names,
    kube_events,
    make_cluster,
    set_ready,
    submit,
    succeed,
    timeline,
)

EXAMPLES = UPSTREAM / "jobset" / "examples"

pytestmark = requires_upstream


def load(relative: str) -> dict[str, Any]:
    path: Path = EXAMPLES / relative
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    documents = [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict) and d.get("kind") == "JobSet"]
    assert len(documents) == 1
    return documents[0]


def driven(obj: dict[str, Any]) -> dict[str, Any]:
    """Let the test drive the example's Jobs: ``managedBy`` on every replicated job's Job template."""
    for rj in obj["spec"]["replicatedJobs"]:
        rj["template"]["spec"]["managedBy"] = DRIVER
    return obj


PFP = "PodFailurePolicy"
BLE = "BackoffLimitExceeded"

# (example file, gates, [(replicated job to fail, reason)], JobSet simulation events after t=0
#  as (event, reason), (restarts, restartsCountTowardsMax))
FAILURE_POLICY_CASES = [
    ("failjobset-action.yaml", "", [("leader", BLE)],
     [("Failed", "FailJobSetFailurePolicyAction")], (0, 0)),
    ("failjobset-action.yaml", "", [("workers", BLE)],
     [("Restarting", "DefaultFailurePolicy")], (1, 1)),
    ("host-maintenance-event-model.yaml", "", [("leader", PFP), ("workers", PFP), ("leader", BLE)],
     [("Restarting", "FailurePolicy_failurePolicyRule0"), ("Restarting", "FailurePolicy_failurePolicyRule0"),
      ("Failed", "ReachedMaxRestarts")], (2, 0)),
    ("host-maintenance-event-model.yaml", "", [("workers", BLE)],
     [("Failed", "ReachedMaxRestarts")], (0, 0)),
    ("onjobfailurereasons-present-podfailurepolicy.yaml", "", [("leader", PFP), ("leader", BLE), ("workers", PFP)],
     [("Restarting", "FailurePolicy_failurePolicyRule0"), ("Restarting", "DefaultFailurePolicy"),
      ("Restarting", "DefaultFailurePolicy")], (3, 2)),
    ("onjobfailurereasons-present.yaml", "", [("leader", BLE), ("leader", PFP)],
     [("Restarting", "FailurePolicy_failurePolicyRule0"), ("Restarting", "DefaultFailurePolicy")], (2, 1)),
    ("restartjobset-action.yaml", "", [("leader", BLE)] * 4,
     [("Restarting", "FailurePolicy_failurePolicyRule0")] * 3 + [("Failed", "ReachedMaxRestarts")], (3, 3)),
    ("restartjobsetandignoremaxrestarts-action.yaml", "", [("leader", BLE)] * 5 + [("workers", BLE)] * 4,
     [("Restarting", "FailurePolicy_failurePolicyRule0")] * 5 + [("Restarting", "DefaultFailurePolicy")] * 3
     + [("Failed", "ReachedMaxRestarts")], (8, 3)),
    ("restartjob-action.yaml", "RestartJob=true", [("rj-worker", BLE), ("rj-leader", BLE), ("rj-worker", BLE)],
     [("Restarting", "RestartJobFailurePolicyAction"), ("Restarting", "FailurePolicy_r_leader"),
      ("Failed", "ReachedMaxRestarts")], (1, 1)),
    ("restartjobandignoremaxrestarts-action.yaml", "RestartJob=true",
     [("rj-worker", BLE)] * 3 + [("rj-leader", BLE)] * 2,
     [("Restarting", "RestartJobAndIgnoreMaxRestartsFailurePolicyAction")] * 3
     + [("Restarting", "FailurePolicy_r_leader")] * 2, (2, 0)),
]


@pytest.mark.parametrize(("example", "gates", "failures", "expected", "restarts"), FAILURE_POLICY_CASES)
def test_failure_policy_example(
    example: str, gates: str, failures: list[tuple[str, str]], expected: list[tuple[str, str]], restarts: tuple[int, int]
) -> None:
    obj = driven(load(f"failure-policy/{example}"))
    name = obj["metadata"]["name"]
    cluster = make_cluster(gates)
    submit(cluster, obj)
    for rjob_name, reason in failures:
        fail(cluster, f"{name}-{rjob_name}-0", reason=reason)
    events = [(event, reason) for _, _, _, event, reason in timeline(cluster, ("JobSet",))]
    assert events == [("Created", None), *expected]
    status = get_jobset(cluster, name)["status"]
    assert (status["restarts"], status.get("restartsCountTowardsMax", 0)) == restarts


def test_simple_failure_policy_example_blocking_recreate() -> None:
    obj = driven(load("simple/failure-policy.yaml"))
    name = obj["metadata"]["name"]
    cluster = make_cluster()
    submit(cluster, obj)
    before = job_names(cluster)
    fail(cluster, f"{name}-leader-0")
    assert job_names(cluster) == before, "recreated under the same names once all old Jobs are gone"
    assert get_jobset(cluster, name)["status"]["restarts"] == 1


def test_simple_success_policy_example() -> None:
    obj = driven(load("simple/success-policy.yaml"))
    name = obj["metadata"]["name"]
    cluster = make_cluster()
    submit(cluster, obj)
    workers = [n for n in job_names(cluster) if "-workers-" in n]
    succeed(cluster, *workers)
    assert get_jobset(cluster, name)["status"]["terminalState"] == "Completed"
    assert [n for n in job_names(cluster) if "-leader-" in n] == [], "the leader is deleted once completed"


def test_multiple_depends_on_example() -> None:
    obj = driven(load("depends-on/multiple-depends-on.yaml"))
    name = obj["metadata"]["name"]
    cluster = make_cluster()
    submit(cluster, obj)
    assert job_names(cluster) == [f"{name}-dataset-initializer-0", f"{name}-model-initializer-0"]
    succeed(cluster, f"{name}-dataset-initializer-0")
    assert len(job_names(cluster)) == 2
    succeed(cluster, f"{name}-model-initializer-0")
    assert job_names(cluster)[-1] == f"{name}-worker-0"


def test_startup_driver_ready_example() -> None:
    obj = driven(load("startup-policy/startup-driver-ready.yaml"))
    name = obj["metadata"]["name"]
    cluster = make_cluster()
    submit(cluster, obj)
    assert job_names(cluster) == [f"{name}-driver-0"]
    set_ready(cluster, f"{name}-driver-0")
    assert [n for n in job_names(cluster) if "-workers-" in n]
    assert [r for _, _, r, _ in kube_events(cluster, name)] == ["InOrderStartupPolicyInProgress"]
