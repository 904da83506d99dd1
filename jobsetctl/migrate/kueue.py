"""``migrate --to kueue-v1beta2``: Kueue objects written against ``kueue.x-k8s.io/v1beta1``.

Kueue's conversion webhook converts stored objects only; manifests in Git stay v1beta1 until someone edits
them. The table below is Kueue's own conversion (kubernetes-sigs/kueue @ ff69552e, read from
``apis/kueue/v1beta1/*_conversion.go`` and the ``WARNING: ... requires manual conversion`` lines of
``apis/kueue/v1beta1/zz_generated.conversion.go``), restricted to what users write (spec, not status):

* every kind: ``apiVersion`` ``kueue.x-k8s.io/v1beta1`` → ``v1beta2``;
* ClusterQueue (``clusterqueue_conversion.go``): ``spec.cohort`` → ``spec.cohortName``;
  ``spec.admissionChecks: [name]`` → ``spec.admissionChecksStrategy.admissionChecks: [{name}]``;
  ``flavorFungibility.whenCanPreempt: Preempt`` and ``whenCanBorrow: Borrow`` → ``MayStopSearch``;
* Workload (``workload_conversion.go``): ``spec.priorityClassSource`` + ``spec.priorityClassName`` →
  ``spec.priorityClassRef {group, kind, name}`` (``kueue.x-k8s.io/workloadpriorityclass`` →
  kueue.x-k8s.io WorkloadPriorityClass; ``scheduling.k8s.io/priorityclass`` → scheduling.k8s.io
  PriorityClass);
* MultiKueueCluster (``multikueue_conversion.go``): ``spec.kubeConfig`` and ``spec.clusterProfileRef`` →
  under ``spec.clusterSource``;
* AdmissionCheck: ``spec.retryDelayMinutes`` has no v1beta2 field (the generated conversion drops it): the
  object is reported, not converted, so that the setting is not lost without the user knowing.

This module keeps its own table (issue #14's Kueue API work may share one later).
"""

from __future__ import annotations

from collections.abc import Sequence

from ruamel.yaml.comments import CommentedMap

from jobsetctl.fix.rewrite import FileEditor
from jobsetctl.fix.yamledit import flow_map, rename_key
from jobsetctl.migrate import ObjectAt, objects

GROUP = "kueue.x-k8s.io"
RULE = "migrate-kueue"
#: v1beta1 ``priorityClassSource`` → v1beta2 ``priorityClassRef`` (group, kind).
PRIORITY_SOURCES: dict[str, tuple[str, str]] = {
    "kueue.x-k8s.io/workloadpriorityclass": ("kueue.x-k8s.io", "WorkloadPriorityClass"),
    "scheduling.k8s.io/priorityclass": ("scheduling.k8s.io", "PriorityClass"),
}
#: v1beta1 flavorFungibility values that v1beta2 spells ``MayStopSearch``.
FUNGIBILITY: dict[str, str] = {"whenCanPreempt": "Preempt", "whenCanBorrow": "Borrow"}


def migrate(files: Sequence[FileEditor], target: str) -> None:
    for item in objects(files):
        if item.obj.get("apiVersion") == f"{GROUP}/v1beta1":
            _convert(item)


def _convert(item: ObjectAt) -> None:
    kind = str(item.obj.get("kind", ""))
    spec = item.obj.get("spec")
    spec = spec if isinstance(spec, CommentedMap) else CommentedMap()
    done: list[str] = []
    if kind == "AdmissionCheck" and "retryDelayMinutes" in spec:
        item.note(RULE, "AdmissionCheck spec.retryDelayMinutes has no v1beta2 field (Kueue's conversion drops it): "
                        "remove it, then migrate", False)
        return
    if kind == "ClusterQueue":
        if "cohort" in spec:
            rename_key(spec, "cohort", "cohortName")
            done.append("spec.cohort → spec.cohortName")
        if "admissionChecks" in spec:
            if "admissionChecksStrategy" in spec:
                item.note(RULE, "spec.admissionChecks and spec.admissionChecksStrategy are both set", False)
                return
            checks = spec["admissionChecks"]
            rules = [flow_map(name=name) for name in (checks if isinstance(checks, list) else [])]
            rename_key(spec, "admissionChecks", "admissionChecksStrategy", CommentedMap(admissionChecks=rules))
            done.append("spec.admissionChecks → spec.admissionChecksStrategy.admissionChecks")
        fungibility = spec.get("flavorFungibility")
        if isinstance(fungibility, dict):
            for key, old in FUNGIBILITY.items():
                if fungibility.get(key) == old:
                    fungibility[key] = "MayStopSearch"
                    done.append(f"flavorFungibility.{key} {old} → MayStopSearch")
    if kind == "Workload" and "priorityClassSource" in spec:
        source = str(spec.get("priorityClassSource"))
        name = spec.get("priorityClassName")
        if source not in PRIORITY_SOURCES or not isinstance(name, str):
            item.note(RULE, f"spec.priorityClassSource {source!r} has no v1beta2 priorityClassRef", False)
            return
        group, ref_kind = PRIORITY_SOURCES[source]
        rename_key(spec, "priorityClassSource", "priorityClassRef", flow_map(group=group, kind=ref_kind, name=name))
        del spec["priorityClassName"]
        done.append("spec.priorityClassSource/priorityClassName → spec.priorityClassRef")
    if kind == "MultiKueueCluster":
        moved = CommentedMap()
        for key in ("kubeConfig", "clusterProfileRef"):
            if key in spec:
                moved[key] = spec[key]
        if moved:
            first = min(list(spec.keys()).index(k) for k in moved)
            for key in moved:
                del spec[key]
            spec.insert(first, "clusterSource", moved)
            done.append("spec.kubeConfig/clusterProfileRef → spec.clusterSource")
    item.obj["apiVersion"] = f"{GROUP}/v1beta2"
    item.changed()
    item.note(RULE, f"{kind} {GROUP}/v1beta1 → v1beta2" + (f" ({'; '.join(done)})" if done else ""), True)
