"""Which feature gates the submitted objects need, so that ``simulate`` shows what they are written for.

Defaults are upstream's for the chosen release (``jobsetctl.kube.featuregates``), but a user who submits
a PodGroup wants to see gang scheduling, not a cluster that ignores the object. So simulate turns on
what the inputs use, through :meth:`FeatureGates.with_enabled`, which never overrides an explicit
setting: ``GangScheduling=false`` shows what a cluster without the gate does. The rules (scheduling.md
§1.1 version map, §1.5 to §1.8):

* Workload, PodGroup objects, or pods (templates) that reference a group → ``GenericWorkload``, ``GangScheduling``;
* a ``schedulingConstraints.topology`` anywhere → ``TopologyAwareWorkloadScheduling``;
* ``disruptionMode`` or a PodGroup (template) ``priority``/``priorityClassName`` → ``WorkloadAwarePreemption``
  on 1.36 (1.37 folds workload-aware preemption into ``GenericWorkload``, scheduling.md §1.1);
* CompositePodGroup objects or ``compositePodGroupTemplates`` → ``CompositePodGroup``;
* a Job ``spec.scheduling`` (also inside JobSet and TrainingRuntime templates) → ``WorkloadWithJob``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from jobsetctl.kube.featuregates import FeatureGates
from jobsetctl.kube.versions import KubeVersion

GROUP_KINDS = ("Workload", "PodGroup")
#: The order in which needed gates are listed (dependencies first).
#: Exact types that are neither mapping nor sequence (skipped without an isinstance test).
_SCALARS = frozenset({str, int, float, bool, type(None)})
GATE_ORDER = (
    "GenericWorkload",
    "GangScheduling",
    "TopologyAwareWorkloadScheduling",
    "WorkloadAwarePreemption",
    "CompositePodGroup",
    "WorkloadWithJob",
)


#: The keys :func:`needed_gates` looks at; any other entry is only walked through.
_KEYS = frozenset({"schedulingGroup", "workloadRef", "schedulingConstraints", "compositePodGroupTemplates",
                   "scheduling", "disruptionMode", "priority", "priorityClassName"})


def _walk(value: Any) -> Iterator[tuple[str, Any, dict[str, Any]]]:
    """Every (key, value, parent mapping) in a nested value whose key is one of :data:`_KEYS`, iteratively.
    (Simulate asks this of every submitted object: one loop, containers recognised by their exact type
    first, as loaded values are plain ``dict`` and ``list``.)"""
    stack = [value]
    pop, push, keys = stack.pop, stack.append, _KEYS
    while stack:
        current = pop()
        cls = current.__class__
        if cls is dict or (cls is not list and isinstance(current, dict)):
            for key, item in current.items():
                if key in keys:
                    yield key, item, current
                item_cls = item.__class__
                if item_cls is dict or item_cls is list or (item_cls not in _SCALARS and isinstance(item, dict | list)):
                    push(item)
        elif cls is list or isinstance(current, list):
            for item in current:
                item_cls = item.__class__
                if item_cls is dict or item_cls is list or (item_cls not in _SCALARS and isinstance(item, dict | list)):
                    push(item)


def _is_scheduling_group(obj: dict[str, Any]) -> bool:
    api_version = obj.get("apiVersion")
    return isinstance(api_version, str) and api_version.startswith("scheduling.k8s.io/")


def needed_gates(objects: Iterable[dict[str, Any]], version: KubeVersion) -> list[str]:
    """The gates the objects use, in :data:`GATE_ORDER`."""
    needed: set[str] = set()
    for obj in objects:
        kind = obj.get("kind")
        if kind in GROUP_KINDS and _is_scheduling_group(obj):
            needed.update(("GenericWorkload", "GangScheduling"))
        if kind == "CompositePodGroup" and _is_scheduling_group(obj):
            needed.update(("GenericWorkload", "GangScheduling", "CompositePodGroup"))
        for key, value, parent in _walk(obj.get("spec")):
            if key in ("schedulingGroup", "workloadRef") and isinstance(value, dict) and "containers" in parent:
                needed.update(("GenericWorkload", "GangScheduling"))
            elif key == "schedulingConstraints" and isinstance(value, dict) and value.get("topology"):
                needed.add("TopologyAwareWorkloadScheduling")
            elif key == "compositePodGroupTemplates" and value:
                needed.update(("GenericWorkload", "GangScheduling", "CompositePodGroup"))
            elif key == "scheduling" and isinstance(value, dict) and ("template" in parent or "parallelism" in parent
                                                                      or "completions" in parent):
                needed.add("WorkloadWithJob")
            elif (key == "disruptionMode" and version is KubeVersion.V1_36) or (key in ("priority", "priorityClassName") and version is KubeVersion.V1_36
                  and ("schedulingPolicy" in parent or (kind in GROUP_KINDS and parent is obj.get("spec")))):
                needed.add("WorkloadAwarePreemption")
    return [gate for gate in GATE_ORDER if gate in needed]


def turned_on(explicit: FeatureGates, needed: Iterable[str]) -> tuple[FeatureGates, list[str]]:
    """The effective gates, and those simulate actually changed (off by default, not set by the user)."""
    wanted = [name for name in needed if name in explicit.known()]
    effective = explicit.with_enabled(wanted)
    changed = [name for name in wanted if effective.enabled(name) and not explicit.enabled(name)]
    return effective, changed
