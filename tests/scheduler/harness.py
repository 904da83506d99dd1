"""Scaffolding for scheduler tests: a real fake cluster (API server with pod admission, the scheduler,
the kubelet and whatever controllers exist), the invariant checker on every cluster, object builders,
and timelines as exact tuples.

Pods are created directly through the API server (real admission: the Priority plugin resolves
``priorityClassName``) unless a test needs the Job/JobSet controllers.
"""

from __future__ import annotations

import copy
from typing import Any, Protocol

from jobsetctl.fakecluster.apiserver import APIServer
from jobsetctl.fakecluster.clock import VirtualClock
from jobsetctl.fakecluster.cluster import ClusterOptions, FakeCluster
from jobsetctl.fakecluster.events import Recorder
from jobsetctl.fakecluster.invariants import InvariantChecker
from jobsetctl.fakecluster.scheduler import Scheduler
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import KubeVersion

ALL_GANG_GATES = {
    "1.35": "GenericWorkload=true,GangScheduling=true",
    "1.36": "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true",
    "1.37": "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true",
}


class SimFactory(Protocol):
    """The ``make_sim`` fixture: a :class:`Sim` built with these options."""

    def __call__(self, version: str = "1.37", gates: str = "", *,
                 scheduler: dict[str, Any] | None = None) -> Sim: ...


class Sim:
    """A simulated cluster under test."""

    def __init__(self, version: str = "1.37", gates: str = "", *, scheduler: dict[str, Any] | None = None) -> None:
        """Built by :class:`FakeCluster` itself, every controller included (pods created directly have no
        owner, so the controllers leave them alone). The invariant checker is the cluster's own
        (``check_invariants``). Tests get one from the ``make_sim`` fixture (``conftest.py``), which also
        runs the end-of-run invariants when the test ends."""
        kube = KubeVersion.parse(version)
        options = ClusterOptions(kube, parse_feature_gates(gates, kube), simulate=True,
                                 extra={"scheduler": scheduler or {}, "check_invariants": True})
        self.fake = FakeCluster(options)
        self.api: APIServer = self.fake.api
        self.clock: VirtualClock = self.fake.clock
        self.recorder: Recorder = self.fake.recorder
        self.scheduler: Scheduler = self.fake.components["scheduler"]  # type: ignore[assignment]
        assert self.fake.invariants is not None
        self.checker: InvariantChecker = self.fake.invariants

    # ---- builders ----------------------------------------------------------------------------------
    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        result = self.api.create(obj)
        assert result.ok, result.message()
        assert result.obj is not None
        return result.obj

    def node(self, name: str, *, cpu: str = "4", memory: str = "16Gi", pods: int = 110, gpu: int | None = None,
             labels: dict[str, str] | None = None, taints: list[dict[str, str]] | None = None,
             unschedulable: bool = False) -> dict[str, Any]:
        allocatable: dict[str, Any] = {"cpu": cpu, "memory": memory, "pods": str(pods)}
        if gpu is not None:
            allocatable["nvidia.com/gpu"] = str(gpu)
        spec: dict[str, Any] = {}
        if taints:
            spec["taints"] = taints
        if unschedulable:
            spec["unschedulable"] = True
        return self.create({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "spec": spec,
            "status": {"allocatable": allocatable, "capacity": dict(allocatable),
                       "conditions": [{"type": "Ready", "status": "True"}]},
        })

    def priority_class(self, name: str, value: int, *, never: bool = False) -> dict[str, Any]:
        obj: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                               "metadata": {"name": name}, "value": value}
        if never:
            obj["preemptionPolicy"] = "Never"
        return self.create(obj)

    def pod(self, name: str, *, cpu: str | None = None, memory: str | None = None, gpu: int | None = None,
            priority: str | None = None, labels: dict[str, str] | None = None,
            annotations: dict[str, str] | None = None, namespace: str = "default", create: bool = True,
            **spec: Any) -> dict[str, Any]:
        requests: dict[str, Any] = {}
        if cpu is not None:
            requests["cpu"] = cpu
        if memory is not None:
            requests["memory"] = memory
        if gpu is not None:
            requests["nvidia.com/gpu"] = str(gpu)
        resources: dict[str, Any] = {"requests": requests} if requests else {}
        if gpu is not None:
            resources["limits"] = {"nvidia.com/gpu": str(gpu)}
        body: dict[str, Any] = {"terminationGracePeriodSeconds": 0,
                                "containers": [{"name": "main", "image": "busybox", "resources": resources}]}
        if priority is not None:
            body["priorityClassName"] = priority
        body.update(copy.deepcopy(spec))
        obj = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {}),
                            "annotations": dict(annotations or {})},
               "spec": body}
        return self.create(obj) if create else obj

    # ---- groups ------------------------------------------------------------------------------------
    @property
    def version(self) -> str:
        return self.api.version.value

    def podgroup(self, name: str, min_count: int | None = None, *, topology: str | None = None,
                 priority: str | None = None, disruption_all: bool = False, parent: str | None = None,
                 workload: str | None = None, **spec: Any) -> dict[str, Any]:
        """An in-tree PodGroup (1.36 ``v1alpha2``, 1.37 ``v1beta1``); ``min_count`` None means basic."""
        policy = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
        body: dict[str, Any] = {"schedulingPolicy": policy, **spec}
        if topology:
            body["schedulingConstraints"] = {"topology": [{"key": topology}]}
        if priority:
            body["priorityClassName"] = priority
        if self.version == "1.36":
            if disruption_all:
                body["disruptionMode"] = "PodGroup"
            api_version = "scheduling.k8s.io/v1alpha2"
        else:
            if disruption_all:
                body["disruptionMode"] = {"all": {}}
            if parent:
                body["parentCompositePodGroupName"] = parent
            if workload or parent:
                body["workloadRef"] = {"workloadName": workload or "wl", "templateName": name}
            api_version = "scheduling.k8s.io/v1beta1" if not parent else "scheduling.k8s.io/v1alpha3"
        return self.create({"apiVersion": api_version, "kind": "PodGroup", "metadata": {"name": name},
                            "spec": body})

    def workload_135(self, name: str, groups: dict[str, int | None]) -> dict[str, Any]:
        """A 1.35 ``v1alpha1`` Workload with ``podGroups`` (None: basic)."""
        entries = [{"name": group, "policy": {"gang": {"minCount": count}} if count else {"basic": {}}}
                   for group, count in groups.items()]
        return self.create({"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
                            "metadata": {"name": name}, "spec": {"podGroups": entries}})

    def member(self, name: str, group: str, **pod: Any) -> dict[str, Any]:
        """A pod of an in-tree group: ``schedulingGroup`` (1.36+) or ``workloadRef`` (1.35, ``wl:pg``)."""
        if self.version == "1.35":
            workload, _, pod_group = group.partition(":")
            return self.pod(name, workloadRef={"name": workload, "podGroup": pod_group}, **pod)
        return self.pod(name, schedulingGroup={"podGroupName": group}, **pod)

    def at(self, when: float, action: Any, *args: Any) -> None:
        """Run ``action(*args)`` at virtual time ``when`` (a user action in the scenario)."""
        self.clock.call_at(when, action, *args)

    # ---- running and reading -----------------------------------------------------------------------
    def run(self, until: float) -> None:
        self.fake.run(until)
        assert self.checker.finish() > 0

    def group(self, name: str) -> Any:
        """The scheduler's record of a group (``scheduler.group_records``) by group name."""
        for key, record in self.scheduler.group_records.items():
            if key[2] == name:
                return record
        raise KeyError(name)

    def timeline(self, *, events: set[str] | None = None, kinds: set[str] | None = None,
                 detail: bool = True) -> list[tuple[Any, ...]]:
        """(time, kind, name, event, node or message) tuples; default: the scheduler's vocabulary."""
        wanted = events if events is not None else {"Scheduled", "Unschedulable", "Preempted", "Deleted"}
        out: list[tuple[Any, ...]] = []
        for e in self.recorder.events:
            if e.event not in wanted or (kinds is not None and e.kind not in kinds):
                continue
            extra = e.node if e.event == "Scheduled" and e.kind == "Pod" else e.message
            out.append((e.time, e.kind, e.name, e.event, extra) if detail else (e.time, e.kind, e.name, e.event))
        return out

    def get_pod(self, name: str, namespace: str = "default") -> dict[str, Any]:
        pod = self.api.get("", "Pod", namespace, name)
        assert pod is not None, name
        return pod

    def node_of(self, name: str) -> str | None:
        pod = self.api.get("", "Pod", "default", name)
        return None if pod is None else (pod.get("spec") or {}).get("nodeName")

    def condition(self, obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
        for item in (obj.get("status") or {}).get("conditions") or []:
            if item.get("type") == kind:
                return item
        return None


def anti_affinity(selector: dict[str, str], key: str = "kubernetes.io/hostname") -> dict[str, Any]:
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": selector}, "topologyKey": key}]}}


def affinity(selector: dict[str, str], key: str = "kubernetes.io/hostname") -> dict[str, Any]:
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": selector}, "topologyKey": key}]}}
