"""``migrate --to kubernetes-1.36|kubernetes-1.37``: the ``scheduling.k8s.io`` Workload API across releases.

The API server converts none of this (kubernetes#140184): each release serves one shape only
(scheduling.md §1.1-§1.2; field names from the JSON Schemas of ``kubernetes-validate``, the authority):

* 1.35 ``v1alpha1``: ``Workload.spec.podGroups[{name, policy: {basic|gang}}]``; pods name their gang with
  ``spec.workloadRef {name, podGroup, podGroupReplicaKey}``.
* 1.36 ``v1alpha2``: ``Workload.spec.podGroupTemplates[{name, schedulingPolicy, ...}]`` and a standalone
  ``PodGroup`` per gang, ``spec.podGroupTemplateRef.workload {workloadName, podGroupTemplateName}``; pods
  name the PodGroup with ``spec.schedulingGroup {podGroupName}``; ``disruptionMode`` is ``Pod``/``PodGroup``.
* 1.37 ``v1beta1`` (Workload, PodGroup; ``v1alpha3`` the same shapes, alpha) and ``v1alpha3``
  CompositePodGroup: ``PodGroup.spec.workloadRef {workloadName, templateName}``; ``disruptionMode`` the union
  ``{single: {}}``/``{all: {}}``.

1.35 → 1.36 turns each (Workload, pod group, replica key) that a pod template uses into a PodGroup named
``<workload>-<pod group>[-<replica key>]``, written after its Workload, and each ``workloadRef`` into a
``schedulingGroup``. 1.36 → 1.37 renames the template reference and converts ``disruptionMode``; v1alpha3
Workloads and PodGroups become v1beta1 (CompositePodGroup has no beta and stays v1alpha3).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ruamel.yaml.comments import CommentedMap

from jobsetctl.fix.rewrite import FileEditor
from jobsetctl.fix.yamledit import flow_map, rename_key
from jobsetctl.migrate import ObjectAt, objects

GROUP = "scheduling.k8s.io"
RULE = "migrate-kubernetes"
#: 1.36 string disruption modes → the 1.37 union member.
_DISRUPTION = {"Pod": "single", "PodGroup": "all"}


#: (apiVersion, kind) of the scheduling objects a migration rewrites.
_OLD_SCHEDULING = frozenset({
    (f"{GROUP}/v1alpha1", "Workload"), (f"{GROUP}/v1alpha2", "Workload"), (f"{GROUP}/v1alpha3", "Workload"),
    (f"{GROUP}/v1alpha2", "PodGroup"), (f"{GROUP}/v1alpha3", "PodGroup"),
})


#: Text every candidate's document contains (its apiVersion, or the pod field that changes).
HINTS = (GROUP, "workloadRef")


def candidate(obj: Any) -> bool:
    """An old Workload/PodGroup, or an object with a pod spec that names a Workload (``workloadRef``)."""
    if not isinstance(obj, dict):
        return False
    version, kind = _api(obj)
    if version.startswith(f"{GROUP}/"):
        return (version, kind) in _OLD_SCHEDULING
    return any("workloadRef" in pod_spec for pod_spec in _pod_specs(obj))


def migrate(files: Sequence[FileEditor], target: str) -> None:
    found = list(objects(files, candidate, HINTS))
    _to_v1alpha2(found, target)
    if target == "kubernetes-1.37":
        _to_v1beta1(found)


def _api(obj: Any) -> tuple[str, str]:
    version = obj.get("apiVersion")
    kind = obj.get("kind")
    return (version if isinstance(version, str) else "", kind if isinstance(kind, str) else "")


def _namespace(obj: Any) -> str:
    meta = obj.get("metadata")
    namespace = meta.get("namespace") if isinstance(meta, dict) else None
    return namespace if isinstance(namespace, str) else "default"


def _name(obj: Any) -> str:
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else ""


def _pod_specs(node: Any) -> list[Any]:
    """Every pod spec inside an object (a mapping with ``containers``), wherever the kind keeps it."""
    found: list[Any] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            if "containers" in current:
                found.append(current)
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
    return found


# --- 1.35 -> 1.36 ---------------------------------------------------------------------------------


def _podgroup_name(workload: str, group: str, replica: str) -> str:
    return "-".join(part for part in (workload, group, replica) if part)


def _to_v1alpha2(found: list[ObjectAt], target: str) -> None:
    workloads: dict[tuple[str, str], ObjectAt] = {}
    for item in found:
        if _api(item.obj) == (f"{GROUP}/v1alpha1", "Workload"):
            workloads[(_namespace(item.obj), _name(item.obj))] = item
    # gangs the pod templates use: (namespace, workload) -> {(group, replica key)}
    used: dict[tuple[str, str], dict[tuple[str, str], None]] = {}
    for item in found:
        if _api(item.obj)[0].startswith(f"{GROUP}/"):
            continue
        for pod_spec in _pod_specs(item.obj):
            ref = pod_spec.get("workloadRef")
            if not isinstance(ref, dict):
                continue
            workload, group = str(ref.get("name", "")), str(ref.get("podGroup", ""))
            replica = str(ref.get("podGroupReplicaKey", "") or "")
            key = (_namespace(item.obj), workload)
            if key not in workloads:
                item.note(RULE, f"spec.workloadRef names Workload {workload!r}, which is not among the inputs: its "
                                "pod group's policy is unknown, so no PodGroup can be written for it", False)
                continue
            used.setdefault(key, {})[(group, replica)] = None
            name = _podgroup_name(workload, group, replica)
            rename_key(pod_spec, "workloadRef", "schedulingGroup", flow_map(podGroupName=name))
            item.changed()
            item.note(RULE, f"spec.workloadRef → spec.schedulingGroup.podGroupName {name}", True)
    for key, item in workloads.items():
        _workload_v1alpha2(item, used.get(key, {}), target)


def _workload_v1alpha2(item: ObjectAt, used: dict[tuple[str, str], None], target: str) -> None:
    obj = item.obj
    spec = obj.get("spec")
    groups = spec.get("podGroups") if isinstance(spec, dict) else None
    if not isinstance(groups, list):
        item.note(RULE, "Workload without spec.podGroups: nothing to convert", False)
        return
    document = item.editor.document(item.segment)
    if used and document is not None and document.json_indent is not None:
        item.note(RULE, "the Workload's pod groups become PodGroup objects, which a JSON file cannot hold "
                        "next to it: convert this file to YAML first", False)
        return
    policies: dict[str, Any] = {}
    for group in groups:
        if isinstance(group, CommentedMap):
            policies[str(group.get("name", ""))] = group.get("policy")
            if "policy" in group:
                rename_key(group, "policy", "schedulingPolicy")
    rename_key(spec, "podGroups", "podGroupTemplates")
    obj["apiVersion"] = f"{GROUP}/v1alpha2"
    item.changed()
    item.note(RULE, "Workload scheduling.k8s.io/v1alpha1 → v1alpha2 (podGroups → podGroupTemplates)", True)
    workload = _name(obj)
    for group, replica in used:
        if group not in policies:
            item.note(RULE, f"pods name pod group {group!r}, which Workload {workload!r} does not have", False)
            continue
        meta = CommentedMap(name=_podgroup_name(workload, group, replica))
        namespace = obj.get("metadata", {}).get("namespace")
        if isinstance(namespace, str):
            meta["namespace"] = namespace
        pg_spec = CommentedMap()
        # Written directly in the target's shape (the 1.37 step below only sees the objects read from files).
        if target == "kubernetes-1.37":
            pg_spec["workloadRef"] = flow_map(workloadName=workload, templateName=group)
        else:
            pg_spec["podGroupTemplateRef"] = CommentedMap(
                workload=flow_map(workloadName=workload, podGroupTemplateName=group))
        pg_spec["schedulingPolicy"] = fresh(policies[group])
        version = "v1beta1" if target == "kubernetes-1.37" else "v1alpha2"
        podgroup = CommentedMap(apiVersion=f"{GROUP}/{version}", kind="PodGroup", metadata=meta, spec=pg_spec)
        item.editor.add_document(item.segment, podgroup)
        item.note(RULE, f"new PodGroup {meta['name']} for pod group {group!r} of Workload {workload!r}", True)


def fresh(value: Any) -> Any:
    """A copy without the comments of the original (they belong where they were written); mappings of
    scalars only are written in flow style."""
    if isinstance(value, dict):
        items = {str(k): fresh(v) for k, v in value.items()}
        leaf = all(not isinstance(v, dict | list) or not v for v in items.values())
        return flow_map(**items) if leaf else CommentedMap(items)
    if isinstance(value, list):
        return [fresh(v) for v in value]
    return value


# --- 1.36 -> 1.37 ---------------------------------------------------------------------------------


def _disruption(holder: Any, item: ObjectAt, where: str) -> None:
    mode = holder.get("disruptionMode") if isinstance(holder, dict) else None
    if isinstance(mode, str):
        member = _DISRUPTION.get(mode)
        if member is None:
            item.note(RULE, f"{where}disruptionMode {mode!r} has no 1.37 equivalent", False)
            return
        holder["disruptionMode"] = flow_map(**{member: CommentedMap()})


def _to_v1beta1(found: list[ObjectAt]) -> None:
    for item in found:
        version, kind = _api(item.obj)
        if kind not in ("Workload", "PodGroup") or version not in (f"{GROUP}/v1alpha2", f"{GROUP}/v1alpha3"):
            continue
        spec = item.obj.get("spec")
        if not isinstance(spec, dict):
            continue
        if kind == "Workload" and version.endswith("v1alpha2"):
            for template in spec.get("podGroupTemplates") or []:
                _disruption(template, item, f"template {template.get('name')!r}: ")
        if kind == "PodGroup" and version.endswith("v1alpha2"):
            ref = spec.get("podGroupTemplateRef")
            if isinstance(ref, dict) and isinstance(spec, CommentedMap):
                workload_ref = ref.get("workload")
                workload_ref = workload_ref if isinstance(workload_ref, dict) else {}
                new_ref = flow_map(workloadName=workload_ref.get("workloadName"),
                                   templateName=workload_ref.get("podGroupTemplateName"))
                rename_key(spec, "podGroupTemplateRef", "workloadRef", new_ref)
            _disruption(spec, item, "")
        item.obj["apiVersion"] = f"{GROUP}/v1beta1"
        item.changed()
        item.note(RULE, f"{kind} {version} → {GROUP}/v1beta1", True)


