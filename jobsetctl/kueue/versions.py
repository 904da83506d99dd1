"""Every field that differs between ``kueue.x-k8s.io/v1beta1`` and ``v1beta2``, in one place.

Kueue serves both versions and stores ``v1beta2`` (the hub: ``Hub()`` on the v1beta2 types, ``ConvertTo``/
``ConvertFrom`` in apis/kueue/v1beta1/*_conversion.go). Its webhooks are registered for ``v1beta2`` only,
so a ``v1beta1`` object reaches them converted (the API server's ``matchPolicy: Equivalent``): their
messages name ``v1beta2`` fields (``spec.cohortName`` for a ``v1beta1`` ``spec.cohort``).
:func:`field_path_in` maps such a path back to where the user wrote it.

What differs (conversion functions, zz_generated.conversion.go "requires manual conversion" notes):

==================== ================================================ ===========================================
kind                 v1beta1                                          v1beta2
==================== ================================================ ===========================================
ClusterQueue         ``spec.cohort``                                  ``spec.cohortName``
ClusterQueue         ``spec.admissionChecks: [name]``                 ``spec.admissionChecksStrategy.admissionChecks:
                                                                      [{name}]`` (wins over a v1beta1 strategy)
ClusterQueue         flavorFungibility ``Borrow`` / ``Preempt``       ``MayStopSearch``
ClusterQueue         (none)                                           ``spec.concurrentAdmissionPolicy`` (dropped)
ClusterQueue status  ``pendingWorkloadsStatus``                       (dropped)
ClusterQueue, Cohort ``fairSharing.admissionFairSharingStatus``       (dropped: the v1beta2 ``FairSharingStatus``
status                                                                has ``weightedShare`` only; a LocalQueue's
                                                                      is kept, its v1beta2 type has the field)
LocalQueue status    ``flavorUsage``, ``flavors``                     ``flavorsUsage`` (``flavors`` dropped)
AdmissionCheck       ``spec.retryDelayMinutes``                       (dropped)
Workload             ``spec.priorityClassName`` +                     ``spec.priorityClassRef {group, kind, name}``
                     ``spec.priorityClassSource``
Workload             (none)                                           ``spec.preemptionGates``,
                                                                      ``topologyRequest.podsetSliceRequired
                                                                      TopologyConstraints`` (dropped)
Workload status      ``accumulatedPastExexcutionTimeSeconds`` (sic)   ``accumulatedPastExecutionTimeSeconds``
Workload status      ``topologyAssignment.domains [{values, count}]`` ``topologyAssignment.slices`` (compact form)
MultiKueueCluster    ``spec.kubeConfig`` (kept when ``location`` is   ``spec.clusterSource.kubeConfig``,
                     set), ``spec.clusterProfileRef``                 ``spec.clusterSource.clusterProfileRef``
MultiKueueConfig     (none)                                           ``spec.quotaManagement`` (dropped)
==================== ================================================ ===========================================

(``fairsharing_conversion.go``, ``multikueue_conversion.go`` and the ``autoConvert_*FairSharingStatus*``,
``autoConvert_*MultiKueue*`` functions of zz_generated.conversion.go for the last rows.)

LocalQueue and ResourceFlavor share one schema for both versions; WorkloadPriorityClass,
Topology and AdmissionCheck differ in bounds and CEL only (their schemas say how).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from jobsetctl.kube.field import Path
from jobsetctl.kube.jsontree import copy_tree
from jobsetctl.kueue import api
from jobsetctl.kueue.engine import tas_encoding

Object = dict[str, Any]

#: Kinds whose v1beta1 and v1beta2 schemas are the same (one schema file serves both).
SAME_SCHEMA: Final = frozenset({api.LOCAL_QUEUE, api.RESOURCE_FLAVOR})

WORKLOAD_PRIORITY_CLASS_SOURCE: Final = "kueue.x-k8s.io/workloadpriorityclass"
POD_PRIORITY_CLASS_SOURCE: Final = "scheduling.k8s.io/priorityclass"
_SOURCE_OF_REF: Final = {
    (api.GROUP, api.WORKLOAD_PRIORITY_CLASS): WORKLOAD_PRIORITY_CLASS_SOURCE,
    ("scheduling.k8s.io", "PriorityClass"): POD_PRIORITY_CLASS_SOURCE,
}
_REF_OF_SOURCE: Final = {source: ref for ref, source in _SOURCE_OF_REF.items()}
#: Kinds whose status holds the v1beta1 ``FairSharingStatus`` converted to the v1beta2 one, which has no
#: ``admissionFairSharingStatus`` (``autoConvert_v1beta1_FairSharingStatus_To_v1beta2_FairSharingStatus``). A
#: LocalQueue's ``fairSharing`` is cast as is to ``LocalQueueFairSharingStatus``, which keeps it.
FAIR_SHARING_STATUS_KINDS: Final = frozenset({api.CLUSTER_QUEUE, api.COHORT})
MULTIKUEUE_CLUSTER: Final = "MultiKueueCluster"
MULTIKUEUE_CONFIG: Final = "MultiKueueConfig"


def schema_name(kind: str, version: str) -> str:
    """The authored schema (``jobsetctl/schemas/<name>.json``) of a kind at a served version."""
    if kind in SAME_SCHEMA:
        version = api.V1BETA2
    return f"{api.GROUP}_{version}_{kind}"


def version_of(obj: Object) -> str:
    api_version = obj.get("apiVersion")
    return api_version.rpartition("/")[2] if isinstance(api_version, str) else ""


def _m(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def to_v1beta2(obj: Object) -> Object:
    """A copy of a ``v1beta1`` Kueue object as ``v1beta2`` (a ``v1beta2`` object is returned as is)."""
    if version_of(obj) != api.V1BETA1:
        return obj
    out = copy_tree(obj)
    out["apiVersion"] = api.API_VERSION
    kind = out.get("kind")
    spec = out.get("spec")
    status = out.get("status")
    if kind == api.CLUSTER_QUEUE and isinstance(spec, dict):
        if "cohort" in spec:
            spec["cohortName"] = spec.pop("cohort")
        checks = spec.pop("admissionChecks", None)
        if isinstance(checks, list) and checks:
            spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": name} for name in checks]}
        fungibility = spec.get("flavorFungibility")
        if isinstance(fungibility, dict):
            if fungibility.get("whenCanPreempt") == "Preempt":
                fungibility["whenCanPreempt"] = "MayStopSearch"
            if fungibility.get("whenCanBorrow") == "Borrow":
                fungibility["whenCanBorrow"] = "MayStopSearch"
        if isinstance(status, dict):
            status.pop("pendingWorkloadsStatus", None)
    elif kind == MULTIKUEUE_CLUSTER and isinstance(spec, dict):
        # Convert_v1beta1_MultiKueueClusterSpec_To_v1beta2_MultiKueueClusterSpec: a kubeConfig only when its
        # location is set (v1beta1's kubeConfig is a struct, never nil), then the clusterProfileRef.
        kube_config = _m(spec.pop("kubeConfig", None))
        profile = spec.pop("clusterProfileRef", None)
        cluster_source: dict[str, Any] = {}
        if kube_config.get("location"):
            # v1beta2's locationType is omitempty; v1beta1's has the CRD default Secret.
            cluster_source["kubeConfig"] = {k: kube_config[k] for k in ("location", "locationType") if kube_config.get(k)}
        if isinstance(profile, dict):
            cluster_source["clusterProfileRef"] = {k: v for k, v in profile.items() if k == "name"}
        if cluster_source:
            spec["clusterSource"] = cluster_source
    if kind in FAIR_SHARING_STATUS_KINDS and isinstance(status, dict):
        fair_sharing = status.get("fairSharing")
        if isinstance(fair_sharing, dict):
            fair_sharing.pop("admissionFairSharingStatus", None)
    if kind == api.LOCAL_QUEUE and isinstance(status, dict):
        usage = status.pop("flavorUsage", None)
        status.pop("flavors", None)
        if usage is not None:
            status["flavorsUsage"] = usage
    elif kind == api.ADMISSION_CHECK and isinstance(spec, dict):
        spec.pop("retryDelayMinutes", None)
    elif kind == api.WORKLOAD:
        if isinstance(spec, dict):
            name = spec.pop("priorityClassName", None)
            source = spec.pop("priorityClassSource", None)
            ref = _REF_OF_SOURCE.get(source) if isinstance(source, str) else None
            if ref is not None:
                spec["priorityClassRef"] = {"group": ref[0], "kind": ref[1], "name": name or ""}
        if isinstance(status, dict):
            if "accumulatedPastExexcutionTimeSeconds" in status:
                status["accumulatedPastExecutionTimeSeconds"] = status.pop("accumulatedPastExexcutionTimeSeconds")
            for assignment in _assignments(status):
                topology = assignment.get("topologyAssignment")
                if isinstance(topology, dict) and "domains" in topology:
                    assignment["topologyAssignment"] = encode_topology_assignment(
                        topology.get("levels") or [],
                        [(list(_m(d).get("values") or []), int(_m(d).get("count") or 0)) for d in topology["domains"]],
                    )
    return out


def to_v1beta1(obj: Object) -> Object:
    """A copy of a ``v1beta2`` Kueue object as ``v1beta1`` (fields without a v1beta1 counterpart are dropped)."""
    if version_of(obj) != api.V1BETA2:
        return obj
    out = copy_tree(obj)
    out["apiVersion"] = f"{api.GROUP}/{api.V1BETA1}"
    kind = out.get("kind")
    spec = out.get("spec")
    status = out.get("status")
    if kind == api.CLUSTER_QUEUE and isinstance(spec, dict):
        if "cohortName" in spec:
            spec["cohort"] = spec.pop("cohortName")
        spec.pop("concurrentAdmissionPolicy", None)
    elif kind == MULTIKUEUE_CLUSTER and isinstance(spec, dict):
        # Convert_v1beta2_MultiKueueClusterSpec_To_v1beta1_MultiKueueClusterSpec. (Go then writes v1beta1's
        # non-pointer kubeConfig with an empty location when there was none; a plain object leaves it out.)
        cluster_source = _m(spec.pop("clusterSource", None))
        kube_config = cluster_source.get("kubeConfig")
        if isinstance(kube_config, dict):
            spec["kubeConfig"] = {k: v for k, v in kube_config.items() if k in ("location", "locationType")}
        profile = cluster_source.get("clusterProfileRef")
        if isinstance(profile, dict):
            spec["clusterProfileRef"] = {k: v for k, v in profile.items() if k == "name"}
    elif kind == MULTIKUEUE_CONFIG and isinstance(spec, dict):
        spec.pop("quotaManagement", None)  # autoConvert_v1beta2_MultiKueueConfigSpec_To_v1beta1: no peer
    elif kind == api.LOCAL_QUEUE and isinstance(status, dict):
        if "flavorsUsage" in status:
            status["flavorUsage"] = status.pop("flavorsUsage")
    elif kind == api.WORKLOAD:
        if isinstance(spec, dict):
            ref = _m(spec.pop("priorityClassRef", None))
            source = _SOURCE_OF_REF.get((ref.get("group"), ref.get("kind")))  # type: ignore[arg-type]
            if source is not None:
                spec["priorityClassSource"] = source
                spec["priorityClassName"] = ref.get("name", "")
            spec.pop("preemptionGates", None)
            for pod_set in spec.get("podSets") or []:
                request = _m(pod_set).get("topologyRequest")
                if isinstance(request, dict):
                    request.pop("podsetSliceRequiredTopologyConstraints", None)
        if isinstance(status, dict):
            if "accumulatedPastExecutionTimeSeconds" in status:
                status["accumulatedPastExexcutionTimeSeconds"] = status.pop("accumulatedPastExecutionTimeSeconds")
            status.pop("preemptionGates", None)
            for assignment in _assignments(status):
                topology = assignment.get("topologyAssignment")
                if isinstance(topology, dict) and "slices" in topology:
                    assignment["topologyAssignment"] = {
                        "levels": topology.get("levels") or [],
                        "domains": [{"values": values, "count": count} for values, count in topology_domains(topology)],
                    }
    return out


def convert(obj: Object, version: str) -> Object:
    """A Kueue object at ``version`` (``v1beta1`` or ``v1beta2``)."""
    return to_v1beta2(obj) if version == api.V1BETA2 else to_v1beta1(to_v1beta2(obj))


def _assignments(status: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for assignment in _m(status.get("admission")).get("podSetAssignments") or []:
        if isinstance(assignment, dict):
            yield assignment


# ---- paths: where a v1beta2 field was written in a v1beta1 object --------------------------------

def field_path_in(obj: Object, path: Path) -> Path:
    """The path in ``obj`` (as the user wrote it, either version) of a ``v1beta2`` field path, for positions."""
    if version_of(obj) != api.V1BETA1 or len(path) < 2 or path[0] != "spec":
        return path
    kind = obj.get("kind")
    head = path[1]
    if kind == api.CLUSTER_QUEUE:
        if head == "cohortName":
            return ("spec", "cohort", *path[2:])
        spec = _m(obj.get("spec"))
        if head == "admissionChecksStrategy" and spec.get("admissionChecks") and len(path) >= 4:
            # admissionChecksStrategy.admissionChecks[i](.name) came from admissionChecks[i]
            return ("spec", "admissionChecks", *path[3:4])
    if kind == api.WORKLOAD and head == "priorityClassRef":
        return ("spec", "priorityClassName")
    return path


# ---- v1beta2 topology assignments ----------------------------------------------------------------

def topology_domains(assignment: Any) -> list[tuple[list[str], int]]:
    """The (values per level, pod count) of each domain of a ``v1beta2`` topologyAssignment, in order
    (pkg/util/tas ``InternalSeqFrom``): the engine's decoder, one place for the encoding."""
    decoded = tas_encoding.from_api(assignment)
    return decoded.domains if decoded is not None else []


def encode_topology_assignment(levels: list[str], domains: list[tuple[list[str], int]]) -> dict[str, Any]:
    """A ``v1beta2`` topologyAssignment for domains, as one compact slice (pkg/util/tas
    ``singleCompactTopologyAssignmentEncoding``: a level whose values are all equal is ``universal``,
    else ``individual`` roots with the common prefix and suffix factored out; equal pod counts are
    ``universal``). Kueue with ``TASAssignmentsEncodingByHostnamePrefix`` (beta, on) may instead split
    hostname runs into several slices when that is smaller; both decode to the same domains."""
    return tas_encoding.to_api(tas_encoding.TopologyAssignment(list(levels), domains), by_hostname_prefix=False) \
        or {"levels": list(levels), "slices": []}
