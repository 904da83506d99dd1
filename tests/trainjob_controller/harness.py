"""Test harness for the TrainJob controller: a real FakeCluster, TrainJob and runtime builders, readers.

Driving JobSets: status tests use a runtime whose JobSet template sets ``spec.managedBy`` to
:data:`DRIVER`, so the built-in JobSet controller leaves the JobSet alone (jobset.md §4.1 step 2) and
the test writes the JobSet status through ``api.update_status``, exactly as an external JobSet
controller would: real input to the real TrainJob controller, not a mock. End-to-end tests run the
JobSet and Job controllers, the scheduler and the kubelet.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from jobsetctl.fakecluster.cluster import ClusterOptions, FakeCluster
from jobsetctl.jobset import api as jobset_api
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import DEFAULT_KUBE_VERSION
from jobsetctl.trainer import api
from jobsetctl.trainer.catalog import builtin_runtime

#: A JobSet ``spec.managedBy`` the built-in JobSet controller ignores: the test drives those JobSets.
DRIVER = "example.com/test-driver"
#: The ``runtimePatches[].manager`` tests use (the webhook wants a domain-prefixed path).
MANAGER = "example.com/test"
DURATION = "jobsetctl.dev/duration"
FAIL_AFTER = "jobsetctl.dev/fail-after"
#: Events the scheduler records; timelines under test leave them out.
SCHEDULER_EVENTS = frozenset({"Scheduled", "Unschedulable", "Preempted", "Nominated"})


# ---------------------------------------------------------------------------------------------------
# Cluster


def make_cluster(gates: str = "", *, simulate: bool = False, create_pods: bool = False, seed: int = 0) -> FakeCluster:
    version = DEFAULT_KUBE_VERSION
    return FakeCluster(ClusterOptions(
        version, parse_feature_gates(gates, version), seed=seed, simulate=simulate, create_pods=create_pods,
    ))


def install_builtin(cluster: FakeCluster, name: str) -> dict[str, Any]:
    """One shipped ClusterTrainingRuntime, installed as render and simulate install the catalog."""
    runtime = builtin_runtime(name)
    assert runtime is not None, name
    result = cluster.api.create(runtime, skip_admission=True)
    assert result.ok and result.obj is not None, result.message()
    return result.obj


def create(cluster: FakeCluster, obj: dict[str, Any]) -> dict[str, Any]:
    """Create through admission (must be accepted); controllers do not run yet."""
    result = cluster.submit(copy.deepcopy(obj))
    assert result.ok and result.obj is not None, result.message()
    return result.obj


def submit(cluster: FakeCluster, obj: dict[str, Any]) -> dict[str, Any]:
    """Create through admission (must be accepted) and let the controllers settle at this instant."""
    stored = create(cluster, obj)
    cluster.manager.settle()
    return stored


def advance_to(cluster: FakeCluster, when: float) -> None:
    """Move the virtual clock to ``when``, running every timer due on the way."""
    cluster.run(until=when)


def edit_trainjob(cluster: FakeCluster, name: str = "tj", **spec_changes: Any) -> None:
    """A user's ``kubectl edit`` of the TrainJob spec (through admission), then settle."""
    updated = copy.deepcopy(get_trainjob(cluster, name))
    updated["spec"].update(copy.deepcopy(spec_changes))
    result = cluster.api.update(updated)
    assert result.ok, result.message()
    cluster.manager.settle()


# ---------------------------------------------------------------------------------------------------
# Builders


def trainjob(name: str = "tj", runtime: str = "torch-distributed", *, kind: str | None = None,
             **spec: Any) -> dict[str, Any]:
    ref: dict[str, Any] = {"name": runtime}
    if kind is not None:
        ref["kind"] = kind
    return {
        "apiVersion": api.API_VERSION,
        "kind": api.TRAINJOB,
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"runtimeRef": ref, **spec},
    }


def torch_runtime(name: str = "torch", *, kind: str = api.TRAINING_RUNTIME, jobset_spec: dict[str, Any] | None = None,
                  pod_annotations: dict[str, str] | None = None, job_spec: dict[str, Any] | None = None,
                  pod_spec: dict[str, Any] | None = None, **runtime_spec: Any) -> dict[str, Any]:
    """A one-job torch runtime (``node`` → trainer) written inline, as users write their own."""
    template: dict[str, Any] = {"spec": {"containers": [{"name": "node", "image": "pytorch/pytorch:2"}], **(pod_spec or {})}}
    if pod_annotations:
        template["metadata"] = {"annotations": dict(pod_annotations)}
    metadata: dict[str, Any] = {"name": name}
    if kind == api.TRAINING_RUNTIME:
        metadata["namespace"] = "default"
    return {
        "apiVersion": api.API_VERSION,
        "kind": kind,
        "metadata": metadata,
        "spec": {
            "mlPolicy": {"numNodes": 1, "torch": {}},
            **runtime_spec,
            "template": {"spec": {
                **(jobset_spec or {}),
                "replicatedJobs": [{
                    "name": "node",
                    "template": {
                        "metadata": {"labels": {api.LABEL_ANCESTOR: api.ANCESTOR_TRAINER}},
                        "spec": {**(job_spec or {}), "template": template},
                    },
                }],
            }},
        },
    }


def driven_runtime(name: str = "driven", **kwargs: Any) -> dict[str, Any]:
    """A torch runtime whose JobSets the built-in JobSet controller leaves to the test."""
    return torch_runtime(name, jobset_spec={"managedBy": DRIVER}, **kwargs)


def pod_patch(job: str, *, annotations: dict[str, str] | None = None,
              pod_spec: dict[str, Any] | None = None) -> dict[str, Any]:
    """One ``runtimePatches[].trainingRuntimeSpec.template.spec.replicatedJobs[]`` item."""
    template: dict[str, Any] = {}
    if annotations:
        template["metadata"] = {"annotations": dict(annotations)}
    if pod_spec:
        template["spec"] = dict(pod_spec)
    return {"name": job, "template": {"spec": {"template": template}}}


def runtime_patch(*jobs: dict[str, Any], manager: str = MANAGER,
                  jobset_labels: dict[str, str] | None = None) -> dict[str, Any]:
    template: dict[str, Any] = {}
    if jobset_labels:
        template["metadata"] = {"labels": dict(jobset_labels)}
    if jobs:
        template["spec"] = {"replicatedJobs": list(jobs)}
    return {"manager": manager, "trainingRuntimeSpec": {"template": template}}


# ---------------------------------------------------------------------------------------------------
# Reading


def get_trainjob(cluster: FakeCluster, name: str = "tj") -> dict[str, Any]:
    obj = cluster.api.get(api.GROUP, api.TRAINJOB, "default", name)
    assert obj is not None, f"TrainJob {name} not found"
    return obj


def get_jobset(cluster: FakeCluster, name: str = "tj") -> dict[str, Any] | None:
    return cluster.api.get(jobset_api.GROUP, jobset_api.KIND, "default", name)


def get_config_map(cluster: FakeCluster, name: str) -> dict[str, Any] | None:
    return cluster.api.get("", "ConfigMap", "default", name)


def conditions(cluster: FakeCluster, name: str = "tj") -> list[tuple[str, str, str, str, str]]:
    """(type, status, reason, message, lastTransitionTime) of the TrainJob's conditions, in order."""
    status = get_trainjob(cluster, name).get("status") or {}
    return [
        (c["type"], c["status"], c["reason"], c["message"], c["lastTransitionTime"])
        for c in status.get("conditions") or []
    ]


def timeline(cluster: FakeCluster, kinds: tuple[str, ...] | None = None, *,
             since: float = 0.0) -> list[tuple[float, str, str, str, str | None]]:
    """Simulation events (time, kind, name, event, reason), in order; runtimes and nodes left out."""
    return [
        (e.time, e.kind, e.name, e.event, e.reason)
        for e in cluster.recorder.events
        if e.time >= since and (kinds is None or e.kind in kinds)
        and e.kind not in ("ClusterTrainingRuntime", "TrainingRuntime", "Node")
    ]


def trainjob_events(cluster: FakeCluster, name: str = "tj") -> list[tuple[float, str, str | None, str | None]]:
    """Simulation events of one TrainJob: (time, event, reason, message)."""
    return [
        (e.time, e.event, e.reason, e.message)
        for e in cluster.recorder.events
        if e.kind == api.TRAINJOB and e.name == name
    ]


def kube_events(cluster: FakeCluster, name: str = "tj") -> list[tuple[float, str, str, str]]:
    """Kubernetes Events of one TrainJob: (time, type, reason, message)."""
    return [
        (e.time, e.type, e.reason, e.message)
        for e in cluster.recorder.kube_events
        if e.kind == api.TRAINJOB and e.name == name
    ]


_GENERATED = re.compile(r"-[bcdfghjklmnpqrstvwxz2456789]{5}$")


def pod_timeline(cluster: FakeCluster, *, since: float = 0.0) -> list[tuple[float, str, str, str, str | None]]:
    """:func:`timeline` with the random suffix of pod names shown as ``*`` (one pod per base name in
    these tests) and the scheduler's events left out (they belong to the scheduler's tests)."""
    return [
        (time, kind, _GENERATED.sub("-*", name) if kind == "Pod" else name, event, reason)
        for time, kind, name, event, reason in timeline(cluster, since=since)
        if event not in SCHEDULER_EVENTS
    ]


def add_gpu_nodes(cluster: FakeCluster, count: int, gpus: int = 2) -> None:
    for index in range(count):
        name = f"gpu-{index}"
        resources = {"cpu": "32", "memory": "128Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
        result = cluster.api.create({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": resources, "capacity": dict(resources),
                       "conditions": [{"type": "Ready", "status": "True"}]},
        }, skip_admission=True)
        assert result.ok, result.message()


# ---------------------------------------------------------------------------------------------------
# Driving JobSets (test input written as an external JobSet controller would)


def set_jobset_status(cluster: FakeCluster, name: str = "tj", *, conditions: list[dict[str, Any]] | None = None,
                      replicated_jobs: list[dict[str, Any]] | None = None) -> None:
    js = get_jobset(cluster, name)
    assert js is not None
    status = js.setdefault("status", {})
    if conditions is not None:
        status["conditions"] = conditions
    if replicated_jobs is not None:
        status["replicatedJobsStatus"] = replicated_jobs
    cluster.api.update_status(js)
    cluster.manager.settle()


def rjob_status(name: str, **counters: int) -> dict[str, Any]:
    return {"name": name, **{k: counters.get(k, 0) for k in ("ready", "succeeded", "failed", "active", "suspended")}}


def jobset_condition(condition_type: str, reason: str, message: str, at: str) -> dict[str, Any]:
    return {"type": condition_type, "status": "True", "lastTransitionTime": at, "reason": reason, "message": message}
