"""``migrate --to kueue-v1beta2``: Kueue objects written against ``kueue.x-k8s.io/v1beta1``.

Kueue's conversion webhook converts stored objects only; manifests in Git stay v1beta1 until someone edits
them. The table below is Kueue's own conversion (kubernetes-sigs/kueue @ ff69552e, read from
``apis/kueue/v1beta1/*_conversion.go`` and the ``WARNING: ... requires manual conversion`` lines of
``apis/kueue/v1beta1/zz_generated.conversion.go``); its unit tests (``*_conversion_test.go``) are translated
entry by entry in ``tests/fix/test_migrate_kueue.py``:

* every kind: ``apiVersion`` ``kueue.x-k8s.io/v1beta1`` → ``v1beta2``;
* ClusterQueue (``clusterqueue_conversion.go``): ``spec.cohort`` → ``spec.cohortName``; a non-empty
  ``spec.admissionChecks: [name]`` → ``spec.admissionChecksStrategy.admissionChecks: [{name}]`` (an empty
  list is dropped); ``flavorFungibility.whenCanPreempt: Preempt`` and ``whenCanBorrow: Borrow`` →
  ``MayStopSearch``; status: ``pendingWorkloadsStatus`` and ``fairSharing.admissionFairSharingStatus`` dropped
  (no v1beta2 field; Kueue writes status anew);
* Cohort: status ``fairSharing.admissionFairSharingStatus`` dropped (the same ``FairSharingStatus`` conversion);
* LocalQueue (``localqueue_conversion.go``): status ``flavorUsage`` → ``flavorsUsage``, ``flavors`` dropped;
* Workload (``workload_conversion.go``): ``spec.priorityClassSource`` + ``spec.priorityClassName`` →
  ``spec.priorityClassRef {group, kind, name}``; status ``accumulatedPastExexcutionTimeSeconds`` (sic) →
  ``accumulatedPastExecutionTimeSeconds``; ``admission.podSetAssignments[].topologyAssignment.domains`` →
  ``slices`` (:func:`topology_slices`);
* MultiKueueCluster (``multikueue_conversion.go``): ``spec.kubeConfig`` (when its ``location`` is set) and
  ``spec.clusterProfileRef`` → under ``spec.clusterSource``; a kubeConfig without location is dropped, as
  Kueue drops it.

Where Kueue's conversion would lose what the user wrote, the object is reported and left as it is instead
(a setting is never dropped without the user knowing): AdmissionCheck ``spec.retryDelayMinutes`` (no v1beta2
field); a ClusterQueue with both ``admissionChecks`` and ``admissionChecksStrategy`` (Kueue keeps the first
and drops the strategy); a Workload ``priorityClassName`` without a ``priorityClassSource`` (Kueue drops
the name).

``jobsetctl.kueue.versions`` (issue #14) converts plain objects for validate with the same facts; this
module edits round-trip trees in place (comments kept) and takes the shared pieces from there (the priority
sources, the topology encoding). ``tests/fix/test_migrate_kueue.py`` checks the two agree entry by entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ruamel.yaml.comments import CommentedMap

from jobsetctl.fix.rewrite import FileEditor
from jobsetctl.fix.yamledit import flow_map, rename_key
from jobsetctl.kueue import api as kueue_api
from jobsetctl.kueue import versions
from jobsetctl.migrate import objects
from jobsetctl.migrate.kubernetes import fresh

GROUP = kueue_api.GROUP
RULE = "migrate-kueue"
#: v1beta1 ``priorityClassSource`` → v1beta2 ``priorityClassRef`` (group, kind).
PRIORITY_SOURCES: dict[str, tuple[str, str]] = {
    versions.WORKLOAD_PRIORITY_CLASS_SOURCE: (kueue_api.GROUP, kueue_api.WORKLOAD_PRIORITY_CLASS),
    versions.POD_PRIORITY_CLASS_SOURCE: ("scheduling.k8s.io", "PriorityClass"),
}
#: v1beta1 flavorFungibility values that v1beta2 spells ``MayStopSearch``.
FUNGIBILITY: dict[str, str] = {"whenCanPreempt": "Preempt", "whenCanBorrow": "Borrow"}
#: Kinds whose status carries the v1beta1 ``FairSharingStatus`` (``admissionFairSharingStatus`` dropped).
FAIR_SHARING_STATUS_KINDS = versions.FAIR_SHARING_STATUS_KINDS

#: Text every candidate's document contains (its apiVersion).
HINTS = (GROUP,)


class Refused(Exception):
    pass


def candidate(obj: Any) -> bool:
    return isinstance(obj, dict) and obj.get("apiVersion") == f"{GROUP}/v1beta1"


def migrate(files: Sequence[FileEditor], target: str) -> None:
    for item in objects(files, candidate, HINTS):
        kind = str(item.obj.get("kind", ""))
        try:
            _refusals(kind, _mapping(item.obj, "spec"))  # before any edit: a refused object stays as it is
        except Refused as exc:
            item.note(RULE, f"{kind} left as it is: {exc}", False)
            continue
        done = _convert_spec(kind, _mapping(item.obj, "spec")) + _convert_status(kind, _mapping(item.obj, "status"))
        item.obj["apiVersion"] = f"{GROUP}/v1beta2"
        item.changed()
        item.note(RULE, f"{kind} {GROUP}/v1beta1 → v1beta2" + (f" ({'; '.join(done)})" if done else ""), True)


def _mapping(obj: Any, key: str) -> CommentedMap:
    value = obj.get(key)
    return value if isinstance(value, CommentedMap) else CommentedMap()


def _refusals(kind: str, spec: CommentedMap) -> None:
    if kind == "AdmissionCheck" and "retryDelayMinutes" in spec:
        raise Refused("spec.retryDelayMinutes has no v1beta2 field (Kueue's conversion drops it): remove it, then migrate")
    if kind == "ClusterQueue" and spec.get("admissionChecks") and "admissionChecksStrategy" in spec:
        raise Refused("spec.admissionChecks and spec.admissionChecksStrategy are both set (Kueue's conversion keeps "
                      "the first and drops the strategy): merge them into admissionChecksStrategy, then migrate")
    if kind == "Workload":
        source = spec.get("priorityClassSource", "")
        if source not in PRIORITY_SOURCES and source != "":
            raise Refused(f"spec.priorityClassSource {source!r} has no v1beta2 priorityClassRef")
        if source == "" and spec.get("priorityClassName"):
            raise Refused("spec.priorityClassName without a priorityClassSource (Kueue's conversion drops the name): "
                          "set priorityClassSource, then migrate")


def _convert_spec(kind: str, spec: CommentedMap) -> list[str]:
    done: list[str] = []
    if kind == "ClusterQueue":
        if "cohort" in spec:
            rename_key(spec, "cohort", "cohortName")
            done.append("spec.cohort → spec.cohortName")
        if "admissionChecks" in spec:
            checks = spec["admissionChecks"]
            if checks:
                rules = [flow_map(name=name) for name in (checks if isinstance(checks, list) else [])]
                rename_key(spec, "admissionChecks", "admissionChecksStrategy", CommentedMap(admissionChecks=rules))
                done.append("spec.admissionChecks → spec.admissionChecksStrategy.admissionChecks")
            else:
                del spec["admissionChecks"]
                done.append("empty spec.admissionChecks dropped")
        fungibility = spec.get("flavorFungibility")
        if isinstance(fungibility, dict):
            for key, old in FUNGIBILITY.items():
                if fungibility.get(key) == old:
                    fungibility[key] = "MayStopSearch"
                    done.append(f"flavorFungibility.{key} {old} → MayStopSearch")
    if kind == "Workload":
        source = spec.get("priorityClassSource")
        if source in PRIORITY_SOURCES:
            group, ref_kind = PRIORITY_SOURCES[source]
            name = spec.get("priorityClassName", "")
            rename_key(spec, "priorityClassSource", "priorityClassRef", flow_map(group=group, kind=ref_kind, name=name))
            done.append("spec.priorityClassSource/priorityClassName → spec.priorityClassRef")
        else:  # "" is v1beta1's default: no reference (a name with it was refused above)
            spec.pop("priorityClassSource", None)
        spec.pop("priorityClassName", None)
    if kind == "MultiKueueCluster":
        moved = CommentedMap()
        kube_config = spec.get("kubeConfig")
        if isinstance(kube_config, dict) and kube_config.get("location"):
            moved["kubeConfig"] = kube_config
        elif "kubeConfig" in spec:
            done.append("spec.kubeConfig without location dropped")
        if "clusterProfileRef" in spec:
            moved["clusterProfileRef"] = spec["clusterProfileRef"]
        present = [k for k in ("kubeConfig", "clusterProfileRef") if k in spec]
        if present:
            first = min(list(spec.keys()).index(k) for k in present)
            for key in present:
                del spec[key]
            if moved:
                spec.insert(first, "clusterSource", moved)
                done.append("spec.kubeConfig/clusterProfileRef → spec.clusterSource")
    return done


def _convert_status(kind: str, status: CommentedMap) -> list[str]:
    done: list[str] = []
    if kind == "ClusterQueue" and "pendingWorkloadsStatus" in status:
        del status["pendingWorkloadsStatus"]
        done.append("status.pendingWorkloadsStatus dropped")
    fair_sharing = status.get("fairSharing")
    if kind in FAIR_SHARING_STATUS_KINDS and isinstance(fair_sharing, dict) and "admissionFairSharingStatus" in fair_sharing:
        del fair_sharing["admissionFairSharingStatus"]
        done.append("status.fairSharing.admissionFairSharingStatus dropped")
    if kind == "LocalQueue":
        if "flavorUsage" in status:
            rename_key(status, "flavorUsage", "flavorsUsage")
            done.append("status.flavorUsage → status.flavorsUsage")
        if "flavors" in status:
            del status["flavors"]
            done.append("status.flavors dropped")
    if kind == "Workload":
        if "accumulatedPastExexcutionTimeSeconds" in status:
            rename_key(status, "accumulatedPastExexcutionTimeSeconds", "accumulatedPastExecutionTimeSeconds")
            done.append("status.accumulatedPastExexcutionTimeSeconds → accumulatedPastExecutionTimeSeconds")
        admission = status.get("admission")
        assignments = admission.get("podSetAssignments") if isinstance(admission, dict) else None
        for assignment in assignments if isinstance(assignments, list) else []:
            topology = assignment.get("topologyAssignment") if isinstance(assignment, dict) else None
            if isinstance(topology, CommentedMap) and "domains" in topology:
                domains = [(list(d.get("values") or []), int(d.get("count") or 0))
                           for d in topology["domains"] if isinstance(d, dict)]
                rename_key(topology, "domains", "slices", fresh(topology_slices(domains)))
                done.append("status topologyAssignment.domains → slices")
    return done


def topology_slices(domains: list[tuple[list[str], int]]) -> list[dict[str, Any]]:
    """The v1beta2 ``slices`` of a topology assignment's domains (values per level, pod count), as Kueue's
    ``V1Beta2From`` encodes them: one maximally compacted slice (:func:`jobsetctl.kueue.versions.
    encode_topology_assignment`, shared with validate). Kueue with ``TASAssignmentsEncodingByHostnamePrefix``
    (beta, on) may split a ``kubernetes.io/hostname`` level into runs of a common prefix when that is
    smaller; the upstream comment calls the encoding an implementation detail, and both decode to the same
    domains (``InternalSeqFrom``)."""
    levels = len(domains[0][0]) if domains else 0
    slices: list[dict[str, Any]] = versions.encode_topology_assignment([""] * levels, domains)["slices"]
    return slices
