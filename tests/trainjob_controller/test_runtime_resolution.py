"""Resolving the runtime at reconcile time (trainer.md §2.6, §3.2, §1.4): the snapshot ConfigMap and
its errors, a missing runtime, an unregistered runtime kind. Errors are Warning events
``TrainJobResourcesCreationFailed`` and retries with controller-runtime's back-off, no condition."""

from __future__ import annotations

from typing import Any

import pytest

from jobsetctl.fakecluster.apiserver import controller_ref
from jobsetctl.fakecluster.cluster import FakeCluster
from jobsetctl.trainer import api
from jobsetctl.trainer.expand import runtime_snapshot
from tests.trainjob_controller.harness import (
    advance_to,
    conditions,
    create,
    get_jobset,
    get_trainjob,
    install_builtin,
    kube_events,
    make_cluster,
    submit,
    timeline,
    torch_runtime,
    trainjob,
    trainjob_events,
)

PREFIX = "TrainJob resources reconciliation failed: "
WARNING = ("Warning", api.EVENT_RESOURCES_CREATION_FAILED)
#: Both kinds (trainer.md §2.4), with the wrapper upstream puts around snapshot errors of each —
#: quirk: ``unable to get runtime snapshot`` vs ``getting runtime snapshot``.
KINDS = [
    pytest.param(api.TRAINING_RUNTIME, "unable to get runtime snapshot: ", id="TrainingRuntime"),
    pytest.param(api.CLUSTER_TRAINING_RUNTIME, "getting runtime snapshot: ", id="ClusterTrainingRuntime"),
]


def backoff_times(failures: int) -> list[float]:
    """When a key failing ``failures`` times in a row is reconciled: 0, then 5 ms doubling each time."""
    times, now = [], 0.0
    for attempt in range(failures):
        times.append(now)
        now += 0.005 * 2**attempt
    return times


# ---------------------------------------------------------------------------------------------------
# Runtime not found


@pytest.mark.parametrize(("kind", "message"), [
    (api.TRAINING_RUNTIME, 'TrainingRuntime specified in TrainJob is not found: '
                           'trainingruntimes.trainer.kubeflow.org "torch" not found'),
    (api.CLUSTER_TRAINING_RUNTIME, 'not found ClusterTrainingRuntime specified in TrainJob: '
                                   'clustertrainingruntimes.trainer.kubeflow.org "torch" not found'),
])
def test_runtime_deleted_before_the_first_reconcile(kind: str, message: str) -> None:
    """trainer.md §2.6: admitted while the runtime existed, reconciled after it went: a Warning event per
    attempt, no condition, no snapshot, no objects."""
    cluster = make_cluster()
    runtime = create(cluster, torch_runtime(kind=kind))
    create(cluster, trainjob(runtime="torch", kind=kind))
    cluster.api.delete(runtime)
    cluster.manager.settle()

    assert kube_events(cluster) == [(0.0, *WARNING, PREFIX + message)]
    assert timeline(cluster) == [(0.0, "TrainJob", "tj", "Created", None)]
    assert "status" not in get_trainjob(cluster)


def test_quirk_runtime_created_later_is_found_at_the_next_backoff_retry_not_at_its_creation() -> None:
    """Upstream watches no runtime on behalf of TrainJobs (``pkg/controller/trainjob_controller.go``
    ``SetupWithManager`` and the plugins' ``ReconcilerBuilders``): a TrainJob waiting for its runtime
    finds it at the next retry of the per-item back-off (5 ms doubling), here the 16th attempt at
    163.835 s for a runtime created at 100 s."""
    cluster = make_cluster()
    runtime = create(cluster, torch_runtime())
    create(cluster, trainjob(runtime="torch", kind=api.TRAINING_RUNTIME))
    cluster.api.delete(runtime)
    advance_to(cluster, 100.0)
    create(cluster, torch_runtime())
    advance_to(cluster, 200.0)

    attempts = backoff_times(16)
    message = (PREFIX + 'TrainingRuntime specified in TrainJob is not found: '
               'trainingruntimes.trainer.kubeflow.org "torch" not found')
    events = kube_events(cluster)
    assert [e[1:] for e in events] == [(*WARNING, message)] * 15
    assert [e[0] for e in events] == pytest.approx(attempts[:15])
    found_at = attempts[15]
    assert found_at == pytest.approx(163.835)
    after = timeline(cluster, since=100.0)
    assert [e[1:] for e in after] == [
        ("ConfigMap", "tj-runtime-snapshot", "Created", None),
        ("JobSet", "tj", "Created", None),
        ("Service", "tj", "Created", None),
        ("Job", "tj-node-0", "Created", None),
    ]
    assert [e[0] for e in after] == pytest.approx([found_at] * 4)
    assert get_jobset(cluster) is not None


def test_unsupported_runtime_kind_fails_the_trainjob() -> None:
    """trainer.md §1.4, §2.6: ``Failed``/``TrainingRuntimeNotSupported``; no event, no objects. The
    TrainJob webhook rejects such a reference, so the TrainJob is created past admission."""
    cluster = make_cluster()
    reference = trainjob(runtime="torch", kind="Runtime")
    assert not cluster.submit(reference).ok
    cluster.recorder.events.clear()
    result = cluster.api.create(reference, skip_admission=True)
    assert result.ok
    cluster.manager.settle()
    advance_to(cluster, 60.0)

    message = "unsupported runtime: Runtime.trainer.kubeflow.org"
    assert conditions(cluster) == [("Failed", "True", "TrainingRuntimeNotSupported", message, "2026-01-01T00:00:00Z")]
    assert trainjob_events(cluster) == [
        (0.0, "Created", None, None),
        (0.0, "Failed", "TrainingRuntimeNotSupported", message),
    ]
    assert kube_events(cluster) == []
    assert timeline(cluster, ("JobSet", "ConfigMap")) == []


# ---------------------------------------------------------------------------------------------------
# The snapshot ConfigMap


def snapshot_config_map(owner: dict[str, Any] | None, data: dict[str, str]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "tj-runtime-snapshot", "namespace": "default"}
    if owner is not None:
        metadata["ownerReferences"] = [controller_ref(owner)]
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data}


def reconcile_with_snapshot(kind: str, data: dict[str, str], *, owned: bool = True) -> FakeCluster:
    """The runtime exists, the TrainJob too, and a snapshot ConfigMap is there before the first reconcile."""
    cluster = make_cluster()
    create(cluster, torch_runtime(kind=kind))
    stored = create(cluster, trainjob(runtime="torch", kind=kind))
    assert cluster.api.create(snapshot_config_map(stored if owned else None, data)).ok
    cluster.manager.settle()
    return cluster


def only_warning(cluster: FakeCluster) -> str:
    """The single Warning event (the failing reconcile at 0; later retries are not run), without prefix."""
    events = kube_events(cluster)
    assert len(events) == 1
    assert events[0][:3] == (0.0, *WARNING)
    assert events[0][3].startswith(PREFIX)
    assert get_jobset(cluster) is None
    return events[0][3][len(PREFIX):]


@pytest.mark.parametrize(("kind", "prefix"), KINDS)
def test_quirk_snapshot_owned_by_another_object(kind: str, prefix: str) -> None:
    cluster = reconcile_with_snapshot(kind, {"runtime": "{}"}, owned=False)
    assert only_warning(cluster) == (
        prefix + "invalid runtime snapshot: a snapshot configmap exists but is owned by another object"
    )


@pytest.mark.parametrize(("kind", "prefix"), KINDS)
def test_snapshot_without_the_runtime_key(kind: str, prefix: str) -> None:
    cluster = reconcile_with_snapshot(kind, {"other": "x"})
    assert only_warning(cluster) == prefix + 'invalid runtime snapshot: snapshot ConfigMap missing "runtime" data key'


@pytest.mark.parametrize(("text", "error"), [
    # The problem text after "line N:" is PyYAML's wording (go-yaml says "… in this context").
    ("a: b: c\n", "error converting YAML to JSON: yaml: line 1: mapping values are not allowed here"),
    ("just text\n", "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go value "
                    "of type v1alpha1.ClusterTrainingRuntime"),
    ("[1, 2]\n", "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value "
                 "of type v1alpha1.ClusterTrainingRuntime"),
])
def test_snapshot_that_does_not_decode(text: str, error: str) -> None:
    cluster = reconcile_with_snapshot(api.CLUSTER_TRAINING_RUNTIME, {"runtime": text})
    assert only_warning(cluster) == (
        "getting runtime snapshot: invalid runtime snapshot: unable to unmarshal the snapshot: " + error
    )


def test_snapshot_of_another_runtime() -> None:
    cluster = make_cluster()
    other = install_builtin(cluster, "jax-distributed")
    install_builtin(cluster, "torch-distributed")
    stored = create(cluster, trainjob())
    assert cluster.api.create(runtime_snapshot(stored, other)).ok
    cluster.manager.settle()
    assert only_warning(cluster) == (
        "getting runtime snapshot: invalid runtime snapshot: the snapshot refers to the wrong runtime: "
        'expecting a runtime with name, api group and kind of "torch-distributed", "trainer.kubeflow.org", '
        '"ClusterTrainingRuntime" but found runtime with name, api group and kind of "jax-distributed", '
        '"trainer.kubeflow.org", "ClusterTrainingRuntime"'
    )


def test_quirk_empty_snapshot_decodes_to_a_nameless_runtime() -> None:
    """YAML ``null`` is JSON ``null``, which Go decodes into a struct without error: the check that
    follows reports the wrong runtime, with empty name, group and kind."""
    cluster = reconcile_with_snapshot(api.TRAINING_RUNTIME, {"runtime": ""})
    assert only_warning(cluster) == (
        "unable to get runtime snapshot: invalid runtime snapshot: the snapshot refers to the wrong runtime: "
        'expecting a runtime with name, api group and kind of "torch", "trainer.kubeflow.org", "TrainingRuntime" '
        'but found runtime with name, api group and kind of "", "", ""'
    )


def test_valid_snapshot_written_by_someone_else_is_used() -> None:
    """A snapshot the controller did not write (restored from a backup, say) is used as is when it is
    owned by the TrainJob and names the right runtime: no second snapshot, the JobSet from its content."""
    cluster = make_cluster()
    runtime = create(cluster, torch_runtime())
    stored = create(cluster, trainjob(runtime="torch", kind=api.TRAINING_RUNTIME))
    snapshot = runtime_snapshot(stored, runtime)
    snapshot["data"]["runtime"] = snapshot["data"]["runtime"].replace("pytorch/pytorch:2", "pytorch/pytorch:1")
    assert cluster.api.create(snapshot).ok
    cluster.manager.settle()

    assert kube_events(cluster) == []
    jobset = get_jobset(cluster)
    assert jobset is not None
    container = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "pytorch/pytorch:1"
    assert [e[1:4] for e in timeline(cluster, ("ConfigMap",))] == [("ConfigMap", "tj-runtime-snapshot", "Created")]


def test_deleted_snapshot_sends_the_controller_back_to_the_live_runtime() -> None:
    """Without its snapshot the TrainJob depends on the live runtime again: here it is gone too."""
    cluster = make_cluster()
    install_builtin(cluster, "torch-distributed")
    submit(cluster, trainjob(suspend=True))
    snapshot = cluster.api.get("", "ConfigMap", "default", "tj-runtime-snapshot")
    runtime = cluster.api.get(api.GROUP, api.CLUSTER_TRAINING_RUNTIME, "", "torch-distributed")
    assert snapshot is not None and runtime is not None
    cluster.api.delete(runtime)
    cluster.api.delete(snapshot)
    cluster.manager.settle()

    assert [e[1:] for e in kube_events(cluster)] == [(
        *WARNING,
        PREFIX + 'not found ClusterTrainingRuntime specified in TrainJob: '
                 'clustertrainingruntimes.trainer.kubeflow.org "torch-distributed" not found',
    )]
