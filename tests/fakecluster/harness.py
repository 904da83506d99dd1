"""Test scaffolding for fake-cluster tests: build the real :class:`FakeCluster`, nodes, and read the timeline.

While a component another engineer is writing (e.g. the TrainJob controller) is not in the tree yet,
:func:`make_cluster` assembles the cluster from the components that exist, exactly as
:class:`FakeCluster` does; once all exist it is :class:`FakeCluster` itself. The JobSet pod
controller is added until ``cluster.CONTROLLERS`` lists it. Scheduler events (``Scheduled`` …) are
left out of the timelines the tests compare: those belong to the scheduler's own tests.
"""

from __future__ import annotations

import re
from typing import Any

from jobsetctl.fakecluster import cluster as cluster_module
from jobsetctl.fakecluster.apiserver import APIServer
from jobsetctl.fakecluster.clock import VirtualClock
from jobsetctl.fakecluster.cluster import ClusterOptions, FakeCluster
from jobsetctl.fakecluster.events import Recorder
from jobsetctl.fakecluster.manager import Manager
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import KubeVersion

JOBSET_PODS = "jobsetctl.fakecluster.controllers.jobsetpods:JobSetPodController"
#: Events the scheduler (real or stand-in) records; timelines under test leave them out.
SCHEDULER_EVENTS = {"Scheduled", "Unschedulable", "Preempted", "Nominated"}


def _module_exists(target: str) -> bool:
    """Whether ``module:attribute`` can be loaded (components under construction may be half there)."""
    import importlib

    module, _, attribute = target.partition(":")
    try:
        return hasattr(importlib.import_module(module), attribute)
    except Exception:  # a missing or half-written module of another engineer
        return False


def _assemble(options: ClusterOptions) -> FakeCluster:
    """What :class:`FakeCluster` does, with the components that exist so far."""
    from jobsetctl.fakecluster.podadmission import admit_pod

    fake = FakeCluster.__new__(FakeCluster)
    fake.options = options
    fake.clock = VirtualClock()
    fake.api = APIServer(fake.clock, options.version, options.gates, seed=options.seed,
                         default_namespace=options.default_namespace, pod_admission=admit_pod)
    fake.recorder = Recorder(fake.clock)
    fake.api.subscribe(fake._record_lifecycle)
    fake.api.on_rejected.append(fake._record_rejection)
    fake.manager = Manager(fake.api, fake.clock, fake.recorder)
    fake.components = {}
    targets = cluster_module.CONTROLLERS + (cluster_module.SIMULATION_COMPONENTS if options.simulate else ())
    for target in targets:
        if not _module_exists(target):
            continue
        controller = cluster_module._load(target)(options)  # type: ignore[call-arg]
        fake.manager.add(controller)
        fake.components[controller.name] = controller
    return fake


def make_cluster(version: str = "1.37", gates: str = "", *, simulate: bool = True, seed: int = 0,
                 create_pods: bool = True) -> FakeCluster:
    kube = KubeVersion.parse(version)
    options = ClusterOptions(kube, parse_feature_gates(gates, kube), seed=seed, simulate=simulate,
                             create_pods=create_pods)
    targets = cluster_module.CONTROLLERS + (cluster_module.SIMULATION_COMPONENTS if options.simulate else ())
    fake = FakeCluster(options) if all(_module_exists(t) for t in targets) else _assemble(options)
    if JOBSET_PODS not in cluster_module.CONTROLLERS:
        controller = cluster_module._load(JOBSET_PODS)(options)  # type: ignore[call-arg]
        fake.manager.add(controller)
        fake.components[controller.name] = controller
    return fake


def add_node(fake: FakeCluster, name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    node: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"},
                   "capacity": {"cpu": "64", "memory": "256Gi", "pods": "110"},
                   "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]},
    }
    result = fake.api.create(node)
    assert result.ok, result.message()
    assert result.obj is not None
    return result.obj


_SUFFIX = re.compile(r"^(?P<base>.*-)[bcdfghjklmnpqrstvwxz2456789]{5}$")


class Timeline:
    """Simulation events as (time, kind, name, event, reason) with pod names made readable: the
    random suffix becomes ``*<n>``, n counting the pods created from the same generateName."""

    def __init__(self, fake: FakeCluster) -> None:
        self.fake = fake
        self._aliases: dict[str, str] = {}
        self._counts: dict[str, int] = {}

    def alias(self, kind: str, name: str) -> str:
        if kind != "Pod":
            return name
        if name not in self._aliases:
            match = _SUFFIX.match(name)
            if match is None:
                return name
            base = match.group("base")
            self._counts[base] = self._counts.get(base, 0) + 1
            self._aliases[name] = f"{base}*{self._counts[base]}"
        return self._aliases[name]

    def events(self, *, kinds: set[str] | None = None, skip: set[str] | None = None) -> list[tuple[Any, ...]]:
        out: list[tuple[Any, ...]] = []
        skipped = SCHEDULER_EVENTS | (skip or set())
        for e in self.fake.recorder.events:
            alias = self.alias(e.kind, e.name)  # assign aliases in event order, even for skipped events
            if e.event in skipped or (kinds is not None and e.kind not in kinds):
                continue
            out.append((e.time, e.kind, alias, e.event, e.reason))
        return out


def kube_events(fake: FakeCluster, kind: str | None = None) -> list[tuple[Any, ...]]:
    return [(e.time, e.kind, e.name, e.type, e.reason, e.message) for e in fake.recorder.kube_events
            if kind is None or e.kind == kind]


def run(fake: FakeCluster, until: float) -> None:
    fake.run(until)


def job(name: str = "pi", *, parallelism: int | None = None, completions: int | None = None,
        indexed: bool = False, restart: str = "Never", annotations: dict[str, str] | None = None,
        labels: dict[str, str] | None = None, pod_spec: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    """A ``batch/v1`` Job with one container ``main``; pod behaviour through ``annotations``."""
    body: dict[str, Any] = {}
    if parallelism is not None:
        body["parallelism"] = parallelism
    if completions is not None:
        body["completions"] = completions
    if indexed:
        body["completionMode"] = "Indexed"
    body.update(spec)
    template_meta: dict[str, Any] = {}
    if annotations:
        template_meta["annotations"] = dict(annotations)
    if labels:
        template_meta["labels"] = dict(labels)
    body["template"] = {"metadata": template_meta, "spec": {
        "restartPolicy": restart, "containers": [{"name": "main", "image": "busybox"}], **(pod_spec or {})}}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, **(metadata or {})}, "spec": body}


def submit(fake: FakeCluster, obj: dict[str, Any]) -> dict[str, Any]:
    result = fake.submit(obj)
    assert result.ok, result.message()
    assert result.obj is not None
    return result.obj


def update_spec(fake: FakeCluster, obj: dict[str, Any], **spec: Any) -> None:
    """A user's edit of ``spec`` fields (``kubectl patch``) of the object as stored now (admission of
    an update stores a new dict, so a reference taken earlier may be stale)."""
    import copy

    from jobsetctl.fakecluster.apiserver import key_of

    current = fake.api.get(*key_of(obj))
    assert current is not None
    old = copy.deepcopy(current)
    current["spec"].update(spec)
    result = fake.api.update(current, old=old)
    assert result.ok, result.message()


def status_of(fake: FakeCluster, name: str = "pi", namespace: str = "default") -> dict[str, Any]:
    found = fake.api.get("batch", "Job", namespace, name)
    assert found is not None
    return dict(found.get("status") or {})


def conditions(fake: FakeCluster, name: str = "pi") -> list[tuple[str, str, str]]:
    return [(c["type"], c["status"], c.get("reason", "")) for c in status_of(fake, name).get("conditions", [])]
