"""Test scaffolding for fake-cluster tests: build the real :class:`FakeCluster` (the ``make_cluster``
fixture of ``conftest.py``), nodes, and read the timeline. Scheduler events (``Scheduled`` …) are
left out of the timelines the tests compare: those belong to the scheduler's own tests.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from jobsetctl.fakecluster.cluster import ClusterOptions, FakeCluster
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import KubeVersion

#: Events the scheduler (real or stand-in) records; timelines under test leave them out.
SCHEDULER_EVENTS = {"Scheduled", "Unschedulable", "Preempted", "Nominated"}


class ClusterFactory(Protocol):
    """The ``make_cluster`` fixture (``conftest.py``): a :class:`FakeCluster` built with these options."""

    def __call__(self, version: str = "1.37", gates: str = "", *, simulate: bool = True, seed: int = 0,
                 create_pods: bool = True) -> FakeCluster: ...


def build_cluster(version: str = "1.37", gates: str = "", *, simulate: bool = True, seed: int = 0,
                  create_pods: bool = True) -> FakeCluster:
    """The real :class:`FakeCluster`, invariants checked in simulated ones. Tests use the ``make_cluster``
    fixture, which calls this and runs the end-of-run invariants when the test ends; hypothesis tests
    (no function-scoped fixtures) call it directly."""
    kube = KubeVersion.parse(version)
    options = ClusterOptions(kube, parse_feature_gates(gates, kube), seed=seed, simulate=simulate,
                             create_pods=create_pods, extra={"check_invariants": True})
    return FakeCluster(options)


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
