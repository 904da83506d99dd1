"""What the TrainJob controller creates and re-applies (trainer.md §3.1, §3.2, §3.10, §3.13 step 7, §3.13b,
§3.14), with the real FakeCluster (TrainJob, JobSet and Job controllers; no pods)."""

from __future__ import annotations

import copy
from typing import Any

from jobsetctl.admission.chain import admit
from jobsetctl.fakecluster.cluster import FakeCluster
from jobsetctl.kinds.interface import Operation
from jobsetctl.trainer import api
from jobsetctl.trainer.catalog import builtin_runtime
from jobsetctl.trainer.expand import expand, runtime_snapshot
from tests.trainjob_controller.harness import (
    create,
    edit_trainjob,
    get_config_map,
    get_jobset,
    get_trainjob,
    install_builtin,
    kube_events,
    make_cluster,
    pod_patch,
    runtime_patch,
    submit,
    timeline,
    torch_runtime,
    trainjob,
)

SERVER_FIELDS = ("uid", "creationTimestamp", "resourceVersion", "generation")


def without_server_fields(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    for field in SERVER_FIELDS:
        out["metadata"].pop(field, None)
    out.pop("status", None)
    return out


def admitted(cluster: FakeCluster, obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` as the API server's admission would store it (defaults of the JobSet webhook and CRD)."""
    result = admit(copy.deepcopy(obj), cluster.api.context(Operation.CREATE))
    assert result.accepted and result.obj is not None, result.findings
    return result.obj


def owner_of(trainjob_obj: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": api.API_VERSION, "kind": api.TRAINJOB, "name": trainjob_obj["metadata"]["name"],
        "uid": trainjob_obj["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True,
    }


def test_trainjob_against_builtin_torch_distributed_creates_snapshot_then_jobset() -> None:
    """trainer.md §3.1: snapshot first (§3.2), then the JobSet (§3.13), which the JobSet controller
    expands into its Service and Jobs (§3.15); no Warning event, no condition."""
    cluster = make_cluster()
    runtime = install_builtin(cluster, "torch-distributed")
    submit(cluster, trainjob(trainer={"numNodes": 2}))

    assert timeline(cluster) == [
        (0.0, "TrainJob", "tj", "Created", None),
        (0.0, "ConfigMap", "tj-runtime-snapshot", "Created", None),
        (0.0, "JobSet", "tj", "Created", None),
        (0.0, "Service", "tj", "Created", None),
        (0.0, "Job", "tj-node-0", "Created", None),
    ]
    stored_trainjob = get_trainjob(cluster)
    expected = expand(stored_trainjob, runtime, gates=cluster.options.gates).jobset
    assert expected["metadata"]["ownerReferences"] == [owner_of(stored_trainjob)]
    jobset = get_jobset(cluster)
    assert jobset is not None
    assert without_server_fields(jobset) == admitted(cluster, expected)

    snapshot = get_config_map(cluster, "tj-runtime-snapshot")
    assert snapshot is not None
    assert without_server_fields(snapshot) == runtime_snapshot(stored_trainjob, runtime)
    assert kube_events(cluster) == []
    assert stored_trainjob["status"] == {
        "jobsStatus": [{"name": "node", "ready": 0, "succeeded": 0, "failed": 0, "active": 0, "suspended": 0}],
    }


def test_a_second_reconcile_writes_nothing() -> None:
    """Applying unchanged objects is no write (server-side apply); otherwise the controller would wake
    itself forever. Every stored object keeps its resourceVersion."""
    cluster = make_cluster()
    install_builtin(cluster, "deepspeed-distributed")  # JobSet, MPI Secret and hostfile ConfigMap
    submit(cluster, trainjob(runtime="deepspeed-distributed", trainer={"numNodes": 2}))
    versions = {id(obj): obj["metadata"]["resourceVersion"] for obj in cluster.api.all_objects()}
    events = len(cluster.recorder.events)

    cluster.components["trainjob-controller"].reconcile(("default", "tj"))
    cluster.manager.settle()

    assert {id(obj): obj["metadata"]["resourceVersion"] for obj in cluster.api.all_objects()} == versions
    assert len(cluster.recorder.events) == events


def test_snapshot_is_used_once_the_runtime_is_deleted() -> None:
    """trainer.md §2.6, §3.2: after the first reconcile the runtime may go; a JobSet deleted by hand is
    built again, identically, from the snapshot."""
    cluster = make_cluster()
    create(cluster, torch_runtime())
    submit(cluster, trainjob(runtime="torch", kind=api.TRAINING_RUNTIME))
    before = get_jobset(cluster)
    assert before is not None
    runtime = cluster.api.get(api.GROUP, api.TRAINING_RUNTIME, "default", "torch")
    assert runtime is not None
    cluster.api.delete(runtime)
    cluster.api.delete(before)
    cluster.manager.settle()

    assert timeline(cluster, since=0.0)[-6:] == [
        (0.0, "JobSet", "tj", "Deleted", None),
        (0.0, "Service", "tj", "Deleted", None),
        (0.0, "Job", "tj-node-0", "Deleted", None),
        (0.0, "JobSet", "tj", "Created", None),
        (0.0, "Service", "tj", "Created", None),
        (0.0, "Job", "tj-node-0", "Created", None),
    ]
    after = get_jobset(cluster)
    assert after is not None
    assert after["spec"] == before["spec"]
    assert kube_events(cluster) == []


def test_runtime_edits_do_not_reach_a_trainjob_that_has_its_snapshot() -> None:
    """trainer.md §3.2: while suspended the JobSet is re-applied on every reconcile, from the snapshot,
    so a new runtime image is ignored while a new runtimePatches entry is applied."""
    cluster = make_cluster()
    create(cluster, torch_runtime())
    submit(cluster, trainjob(runtime="torch", kind=api.TRAINING_RUNTIME, suspend=True))
    runtime = cluster.api.get(api.GROUP, api.TRAINING_RUNTIME, "default", "torch")
    assert runtime is not None
    edited = copy.deepcopy(runtime)
    edited["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "containers"][0]["image"] = "pytorch/pytorch:3"
    assert cluster.api.update(edited).ok

    edit_trainjob(cluster, runtimePatches=[runtime_patch(pod_patch("node", pod_spec={"nodeSelector": {"pool": "a"}}))])

    jobset = get_jobset(cluster)
    assert jobset is not None
    pod_spec = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod_spec["containers"][0]["image"] == "pytorch/pytorch:2"
    assert pod_spec["nodeSelector"] == {"pool": "a"}


def test_runtime_patches_edited_while_suspended_reach_the_jobset_then_freeze() -> None:
    """trainer.md §3.14: re-applied while suspended (Kueue's way of injecting node selectors), applied
    once more on resume, then never again: a running JobSet is not mutated (§3.13 step 7)."""
    cluster = make_cluster()
    install_builtin(cluster, "torch-distributed")
    submit(cluster, trainjob(suspend=True))
    jobset = get_jobset(cluster)
    assert jobset is not None
    assert jobset["spec"]["suspend"] is True
    assert jobset["metadata"]["generation"] == 1

    patch = runtime_patch(pod_patch("node", pod_spec={"nodeSelector": {"pool": "a"}}), jobset_labels={"team": "a"})
    edit_trainjob(cluster, runtimePatches=[patch])
    jobset = get_jobset(cluster)
    assert jobset is not None
    assert jobset["metadata"]["generation"] == 2
    assert jobset["metadata"]["labels"] == {"team": "a"}
    assert jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["nodeSelector"] == {"pool": "a"}

    # While suspended, server-side apply with force ownership takes back a field another writer changed.
    jobset["metadata"]["labels"]["team"] = "b"
    cluster.api.update_status(jobset)
    cluster.manager.settle()
    jobset = get_jobset(cluster)  # the apply stored a new object
    assert jobset is not None
    assert jobset["metadata"]["labels"] == {"team": "a"}

    edit_trainjob(cluster, suspend=False)
    jobset = get_jobset(cluster)
    assert jobset is not None
    assert jobset["spec"]["suspend"] is False
    assert jobset["metadata"]["generation"] == 3

    # Running: the JobSet is frozen, the same change now stays.
    jobset["metadata"]["labels"]["team"] = "b"
    cluster.api.update_status(jobset)
    cluster.manager.settle()
    assert jobset["metadata"]["labels"] == {"team": "b"}
    assert jobset["metadata"]["generation"] == 3


def test_jobset_labels_the_trainjob_no_longer_applies_are_removed() -> None:
    """Server-side apply drops fields its manager stops applying; labels others wrote stay."""
    cluster = make_cluster()
    install_builtin(cluster, "torch-distributed")
    submit(cluster, trainjob(suspend=True, runtimePatches=[runtime_patch(jobset_labels={"team": "a"})]))
    jobset = get_jobset(cluster)
    assert jobset is not None
    jobset["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "q"
    cluster.api.update_status(jobset)

    edit_trainjob(cluster, runtimePatches=[runtime_patch(jobset_labels={"owner": "b"})])

    jobset = get_jobset(cluster)
    assert jobset is not None
    assert jobset["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "q", "owner": "b"}


def coscheduling_runtime() -> dict[str, Any]:
    return torch_runtime(podGroupPolicy={"coscheduling": {"scheduleTimeoutSeconds": 120}})


def pod_group(cluster: FakeCluster) -> dict[str, Any]:
    obj = cluster.api.get("scheduling.x-k8s.io", "PodGroup", "default", "tj")
    assert obj is not None
    return obj


def test_pod_group_is_reapplied_only_while_suspended() -> None:
    """trainer.md §3.10: the PodGroup is applied when absent or while the TrainJob is suspended."""
    cluster = make_cluster()
    create(cluster, coscheduling_runtime())
    submit(cluster, trainjob(runtime="torch", kind=api.TRAINING_RUNTIME, suspend=True, trainer={"numNodes": 3}))
    assert [e[1:4] for e in timeline(cluster)[:4]] == [
        ("TrainJob", "tj", "Created"),
        ("ConfigMap", "tj-runtime-snapshot", "Created"),
        ("JobSet", "tj", "Created"),
        ("PodGroup", "tj", "Created"),
    ]
    group = pod_group(cluster)
    assert group["spec"]["minMember"] == 3

    changed = copy.deepcopy(group)
    changed["spec"]["minMember"] = 1
    assert cluster.api.update(changed).ok
    cluster.manager.settle()
    assert pod_group(cluster)["spec"]["minMember"] == 3  # taken back: suspended

    edit_trainjob(cluster, suspend=False)
    changed = copy.deepcopy(pod_group(cluster))
    changed["spec"]["minMember"] = 1
    assert cluster.api.update(changed).ok
    cluster.manager.settle()
    assert pod_group(cluster)["spec"]["minMember"] == 1  # running: left alone


def test_mpi_secret_is_created_only_when_absent() -> None:
    """trainer.md §3.13b: the SSH Secret is immutable; an existing one is never applied over, even
    while suspended, while the hostfile ConfigMap is applied on every reconcile."""
    cluster = make_cluster()
    install_builtin(cluster, "deepspeed-distributed")
    submit(cluster, trainjob(runtime="deepspeed-distributed", suspend=True, trainer={"numNodes": 2}))
    secret = cluster.api.get("", "Secret", "default", "tj-mpi-ssh-auth")
    hostfile = get_config_map(cluster, "tj-mpi-hostfile")
    assert secret is not None and hostfile is not None
    original_hostfile = copy.deepcopy(hostfile["data"])

    secret_edit = copy.deepcopy(secret)
    secret_edit["data"] = {"ssh-privatekey": "b3RoZXI="}
    assert cluster.api.update(secret_edit).ok
    hostfile_edit = copy.deepcopy(hostfile)
    hostfile_edit["data"] = {"hostfile": "edited\n"}
    assert cluster.api.update(hostfile_edit).ok
    cluster.manager.settle()

    secret = cluster.api.get("", "Secret", "default", "tj-mpi-ssh-auth")
    hostfile = get_config_map(cluster, "tj-mpi-hostfile")
    assert secret is not None and hostfile is not None
    assert secret["data"] == {"ssh-privatekey": "b3RoZXI="}
    assert hostfile["data"] == original_hostfile

    cluster.api.delete(secret)
    cluster.manager.settle()
    assert timeline(cluster, ("Secret",))[-2:] == [
        (0.0, "Secret", "tj-mpi-ssh-auth", "Deleted", None),
        (0.0, "Secret", "tj-mpi-ssh-auth", "Created", None),
    ]


def test_trainjob_managed_by_multikueue_is_left_alone() -> None:
    """trainer.md §3.1 step 0: no objects, no status, no event."""
    cluster = make_cluster()
    install_builtin(cluster, "torch-distributed")
    submit(cluster, trainjob(managedBy=api.MANAGED_BY_MULTIKUEUE, suspend=True))

    assert timeline(cluster) == [(0.0, "TrainJob", "tj", "Created", None)]
    assert "status" not in get_trainjob(cluster)
    assert kube_events(cluster) == []


def test_quirk_11_expansion_error_applies_nothing_but_the_snapshot_stays() -> None:
    """trainer.md §3.16 quirk 11: ``mpiImplementation: ""`` passes the CRD enum, fails the MPI plugin.
    The snapshot is written before the build, so it stays; the JobSet never comes. The snapshot's
    own creation event wakes the controller once more at the same instant: two Warning events at 0."""
    cluster = make_cluster()
    runtime = builtin_runtime("deepspeed-distributed")
    assert runtime is not None
    runtime["metadata"]["name"] = "no-mpi"
    runtime["spec"]["mlPolicy"]["mpi"]["mpiImplementation"] = ""
    create(cluster, runtime)
    submit(cluster, trainjob(runtime="no-mpi"))

    message = "TrainJob resources reconciliation failed: MPI implementation for  doesn't supported"
    assert timeline(cluster) == [
        (0.0, "TrainJob", "tj", "Created", None),
        (0.0, "ConfigMap", "tj-runtime-snapshot", "Created", None),
    ]
    assert kube_events(cluster) == [
        (0.0, "Warning", api.EVENT_RESOURCES_CREATION_FAILED, message),
        (0.0, "Warning", api.EVENT_RESOURCES_CREATION_FAILED, message),
    ]
    assert "status" not in get_trainjob(cluster)


def test_jobset_rejected_by_its_webhook_is_a_reconcile_error() -> None:
    """trainer.md §2.7: a TrainJob name of 34 characters with a dataset-initializer job is admitted by
    Trainer, but the generated pod names exceed 63 characters and the JobSet webhook rejects the
    JobSet: a Warning event on the TrainJob (and the JobSet's ``Rejected``), no condition.

    ``validate`` predicts this (``trainjob-jobset-rejected``, a consequence check), but admission in the
    fake API server lets the TrainJob through, as the real Trainer webhook does."""
    cluster = make_cluster()
    install_builtin(cluster, "torch-distributed-with-cache")
    name = "a" * 34
    cluster.recorder.events.clear()
    result = cluster.submit(trainjob(name, runtime="torch-distributed-with-cache"))
    assert result.ok, result.message()
    cluster.manager.settle()

    message = (
        'TrainJob resources reconciliation failed: spec.replicatedJobs[0].name: Invalid value: '
        f'"{name}-dataset-initializer-0": JobSet name is too long, pod names generated for this JobSet will '
        "exceed 63 characters"
    )
    # The snapshot's creation wakes the controller once more at the same instant.
    assert kube_events(cluster, name) == [(0.0, "Warning", api.EVENT_RESOURCES_CREATION_FAILED, message)] * 2
    assert timeline(cluster) == [
        (0.0, "TrainJob", name, "Created", None),
        (0.0, "ConfigMap", f"{name}-runtime-snapshot", "Created", None),
        (0.0, "JobSet", name, "Rejected", "Invalid"),
        (0.0, "JobSet", name, "Rejected", "Invalid"),
    ]
    assert "status" not in get_trainjob(cluster, name)
