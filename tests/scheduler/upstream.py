"""Upstream scheduler integration tests as Scenarios: a builder for the documents and a runner.

Each translated entry builds a Scenario (``apiVersion: jobsetctl.dev/v1alpha1``) out of what the upstream
entry creates, runs it through ``simulate`` itself (the cluster's invariant checker on, as in every
test run), and compares the scheduler's events exactly. Conventions shared by the translations:

* nodes are Node manifests submitted at 0 s, so they keep upstream's names (``node1``); memory 4Gi and
  32 pods, as upstream's ``st.MakeNode().Capacity(...)`` helpers give them;
* a pod's numeric priority becomes a PriorityClass ``p<value>`` (``p<value>-never`` with
  ``preemptionPolicy: Never``), created at 0 s: our API server runs the Priority admission plugin, which
  refuses a bare ``spec.priority``; every pod has ``terminationGracePeriodSeconds: 0`` unless the entry says;
* "initial pods" (upstream creates them and waits until they are scheduled) are submitted at 0 s, the
  objects under test at 1 s; upstream's steps after that (delete a pod, create a PodGroup, update a
  minCount) are actions or submissions at later seconds;
* events are compared as ``"<t> <Kind> <name> <Event>[ [<reason>]][ <node>][: <message>]"``, leaving out
  ``Created``, ``Started`` and ``Ready``.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from jobsetctl.simulate.command import OutputOptions, SimulateOutcome, execute
from jobsetctl.simulate.runner import SimulateOptions

PODGROUP_PREEMPTION = "test/integration/scheduler/preemption/podgrouppreemption_test.go"
MULTITIER = "test/integration/scheduler/preemption/podgroup/multitier_gang_preemption_test.go"
CPG_TEST = "test/integration/scheduler/podgroup/cpg_test.go"
QUEUEING = "test/integration/scheduler/podgroup/queueing_test.go"
PODGROUP_TEST = "test/integration/scheduler/podgroup/podgroup_test.go"
TAS = "test/integration/scheduler/topology_aware_scheduling/tas_test.go"

QUIET = frozenset({"Created", "Started", "Ready"})
GATES_137 = {"GenericWorkload": True, "GangScheduling": True, "TopologyAwareWorkloadScheduling": True}


@dataclass
class Case:
    """One upstream entry as a Scenario."""

    version: str = "1.37"
    gates: dict[str, bool] = field(default_factory=lambda: dict(GATES_137))
    at: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    actions: list[dict[str, Any]] = field(default_factory=list)
    priorities: dict[str, dict[str, Any]] = field(default_factory=dict)

    # ---- objects ---------------------------------------------------------------------------------------
    def submit(self, obj: dict[str, Any], at: int) -> dict[str, Any]:
        self.at.setdefault(at, []).append(obj)
        return obj

    def node(self, name: str, cpu: str, labels: dict[str, str] | None = None, at: int = 0) -> None:
        allocatable = {"cpu": cpu, "memory": "4Gi", "pods": "32"}
        self.submit({"apiVersion": "v1", "kind": "Node",
                     "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
                     "status": {"allocatable": allocatable, "capacity": dict(allocatable),
                                "conditions": [{"type": "Ready", "status": "True"}]}}, at)

    def priority(self, value: int, never: bool = False) -> str:
        name = f"p{value}" + ("-never" if never else "")
        if name not in self.priorities:
            body: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                    "metadata": {"name": name}, "value": value}
            if never:
                body["preemptionPolicy"] = "Never"
            self.priorities[name] = body
        return name

    def pod(self, name: str, cpu: str, priority: int, *, group: str | None = None, node: str | None = None,
            at: int = 1, never: bool = False, grace: int = 0, on: str | None = None,
            labels: dict[str, str] | None = None, anti: str | None = None,
            workload_ref: tuple[str, str] | None = None) -> None:
        """A pod; ``node`` binds it (``spec.nodeName``), ``on`` selects a node by hostname, ``anti`` is a
        required anti-affinity to pods with that label key, per hostname; ``workload_ref`` is 1.35's
        ``spec.workloadRef`` (Workload name, podGroup)."""
        requests: dict[str, Any] = {"cpu": cpu} if cpu != "0" else {}
        spec: dict[str, Any] = {"priorityClassName": self.priority(priority, never),
                                "terminationGracePeriodSeconds": grace,
                                "containers": [{"name": "c", "image": "x", "resources": {"requests": requests}}]}
        if group is not None:
            spec["schedulingGroup"] = {"podGroupName": group}
        if workload_ref is not None:
            spec["workloadRef"] = {"name": workload_ref[0], "podGroup": workload_ref[1]}
        if node is not None:
            spec["nodeName"] = node
        if on is not None:
            spec["nodeSelector"] = {"kubernetes.io/hostname": on}
        if anti is not None:
            spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {"matchExpressions": [{"key": anti, "operator": "Exists"}]},
                "topologyKey": "kubernetes.io/hostname"}]}}
        self.submit({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": dict(labels or {})},
                     "spec": spec}, at)

    def podgroup(self, name: str, min_count: int | None = None, *, priority: int | None = None,
                 all_mode: bool = False, parent: str | None = None, topology: str | None = None,
                 never: bool | None = None, workload: str | None = None, at: int = 1) -> None:
        """A PodGroup (``min_count`` None: basic). 1.36 ``v1alpha2``; 1.37 ``v1beta1``, ``v1alpha3`` with a parent."""
        spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": min_count}} if min_count else {"basic": {}}}
        if priority is not None:
            spec["priorityClassName"] = self.priority(priority)
        if topology:
            spec["schedulingConstraints"] = {"topology": [{"key": topology}]}
        api_version = "scheduling.k8s.io/v1beta1"
        if self.version == "1.36":
            api_version = "scheduling.k8s.io/v1alpha2"
            if all_mode:
                spec["disruptionMode"] = "PodGroup"
        else:
            if all_mode:
                spec["disruptionMode"] = {"all": {}}
            if never is not None:
                spec["preemptionPolicy"] = "Never" if never else "PreemptLowerPriority"
            if parent:
                spec["parentCompositePodGroupName"] = parent
                api_version = "scheduling.k8s.io/v1alpha3"
            if parent or workload:
                spec["workloadRef"] = {"workloadName": workload or "wl", "templateName": name}
        self.submit({"apiVersion": api_version, "kind": "PodGroup", "metadata": {"name": name}, "spec": spec}, at)

    def cpg(self, name: str, min_groups: int | None = None, *, priority: int | None = None, all_mode: bool = False,
            parent: str | None = None, never: bool | None = None, workload: str = "wl", at: int = 1) -> None:
        """A CompositePodGroup (``min_groups`` None: basic)."""
        spec: dict[str, Any] = {"workloadRef": {"workloadName": workload, "templateName": name},
                                "schedulingPolicy": {"gang": {"minGroupCount": min_groups}} if min_groups
                                else {"basic": {}}}
        if priority is not None:
            spec["priorityClassName"] = self.priority(priority)
        if all_mode:
            spec["disruptionMode"] = {"all": {}}
        if parent:
            spec["parentCompositePodGroupName"] = parent
        if never is not None:
            spec["preemptionPolicy"] = "Never" if never else "PreemptLowerPriority"
        self.submit({"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup",
                     "metadata": {"name": name}, "spec": spec}, at)

    def workload_135(self, name: str, groups: dict[str, int | None], at: int = 1) -> None:
        """A 1.35 ``v1alpha1`` Workload with ``podGroups`` (a count: gang ``minCount``; None: basic)."""
        self.submit({"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": {"name": name},
                     "spec": {"podGroups": [{"name": group, "policy": {"gang": {"minCount": count}} if count
                                             else {"basic": {}}} for group, count in groups.items()]}}, at)

    # ---- actions ----------------------------------------------------------------------------------------
    def delete(self, kind: str, name: str, at: int) -> None:
        self.actions.append({"at": f"{at}s", "delete": {"kind": kind, "name": name}})

    def patch(self, kind: str, name: str, merge: dict[str, Any], at: int) -> None:
        self.actions.append({"at": f"{at}s", "patch": {"kind": kind, "name": name, "merge": merge}})

    # ---- running ----------------------------------------------------------------------------------------
    def document(self, until: int) -> dict[str, Any]:
        submit = []
        for when in sorted(self.at):
            objects = list(self.at[when])
            if when == 0:
                objects = [*self.priorities.values(), *objects]
            submit.append({"at": f"{when}s", "objects": objects})
        if 0 not in self.at and self.priorities:
            submit.insert(0, {"at": "0s", "objects": list(self.priorities.values())})
        spec: dict[str, Any] = {"kubernetesVersion": self.version, "featureGates": self.gates, "until": f"{until}s",
                                "submit": submit}
        if self.actions:
            spec["actions"] = self.actions
        return {"apiVersion": "jobsetctl.dev/v1alpha1", "kind": "Scenario", "metadata": {"name": "upstream"},
                "spec": spec}

    def run(self, tmp_path: Path, until: int = 30) -> Run:
        path = tmp_path / "scenario.yaml"
        path.write_text(yaml.safe_dump(self.document(until), sort_keys=False))
        out = io.StringIO()
        outcome = execute(SimulateOptions([str(path)]), OutputOptions("json"), out)
        assert outcome.report is None, outcome.report
        return Run(json.loads(out.getvalue()), outcome)


@dataclass
class Run:
    document: dict[str, Any]
    outcome: SimulateOutcome

    def events(self, *, since: float = 0, kinds: frozenset[str] | None = None) -> list[str]:
        lines = []
        for e in self.document["events"]:
            if e["event"] in QUIET or e["time"] < since or (kinds is not None and e["kind"] not in kinds):
                continue
            if e["kind"] in ("Node", "PriorityClass") and e["event"] == "Created":
                continue
            text = f"{e['time']} {e['kind']} {e['name']} {e['event']}"
            if e.get("reason") and e["reason"] != e["event"]:
                text += f" [{e['reason']}]"
            if e["event"] == "Scheduled" and e.get("node"):
                text += f" {e['node']}"
            if e.get("message"):
                text += f": {e['message']}"
            lines.append(text)
        return lines

    def final(self, state: str, kind: str = "Pod") -> set[str]:
        """Names of the objects of ``kind`` in ``state`` at the end (``Running``, ``Pending``, ...)."""
        return {f["name"] for f in self.document["final"] if f["kind"] == kind and f["state"] == state}

    def node_of(self, name: str) -> str | None:
        for f in self.document["final"]:
            if f["kind"] == "Pod" and f["name"] == name:
                return f.get("node")
        return None

    def preempted(self) -> set[str]:
        return {e["name"] for e in self.document["events"] if e["kind"] == "Pod" and e["event"] == "Preempted"}

    def kube_preempted_by(self) -> list[str]:
        """The preemptor type of every victim's ``Preempted`` Kubernetes Event (``pod``, ``podgroup``, ...)."""
        result = self.outcome.result
        assert result is not None
        return [e.message.split()[2] for e in result.kube_events if e.reason == "Preempted"]
