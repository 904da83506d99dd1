"""The ``final`` section of the JSON report: the state of every workload object alive at the end.

One entry ``{"kind", "namespace", "name", "state", "node"?}`` per TrainJob, JobSet, Job, Pod, PodGroup and
CompositePodGroup still stored, sorted by kind (outermost first), namespace and name. States:

* JobSet, TrainJob: ``Completed``, ``Failed``, ``Suspended`` or ``Running`` (jobset.md §4.8-4.9; a TrainJob's
  terminal condition is ``Complete``, trainer.md §1.4);
* Job: ``Complete``, ``Failed``, ``Suspended`` or ``Active``;
* Pod: its ``status.phase`` (``Pending`` when unset), with ``node`` when bound;
* PodGroup, CompositePodGroup: ``Scheduled`` once a ``*Scheduled``/``*InitiallyScheduled`` condition is True
  (scheduling.md §1.4), else ``Pending``;
* Kueue's Workload (``"group": "kueue.x-k8s.io"``): ``Finished``, ``Inactive`` (``spec.active: false``),
  ``Admitted``, ``QuotaReserved`` or ``Pending``, with ``clusterQueue`` and the flavors assigned to each
  podSet (``flavors``: podSet -> resource -> flavor) while it holds quota.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import itemgetter
from typing import Any

from jobsetctl.simulate import access

#: Kinds listed in ``final``, in output order.
FINAL_KINDS = ("TrainJob", "JobSet", "Job", "Workload", "PodGroup", "CompositePodGroup", "Pod")
KUEUE_GROUP = "kueue.x-k8s.io"
_KIND_RANK = {kind: rank for rank, kind in enumerate(FINAL_KINDS)}
_SCHEDULED_CONDITIONS = frozenset({
    "PodGroupScheduled", "PodGroupInitiallyScheduled", "CompositePodGroupInitiallyScheduled",
    "CompositePodGroupScheduled",
})


def _true_conditions(obj: dict[str, Any]) -> set[str]:
    status = access.status(obj)
    return {
        str(c.get("type")) for c in status.get("conditions") or []
        if isinstance(c, dict) and c.get("status") == "True"
    }


def _suspended(obj: dict[str, Any]) -> bool:
    spec = access.spec(obj)
    return spec.get("suspend") is True


def state_of(obj: dict[str, Any]) -> str:
    kind = obj.get("kind")
    conditions = _true_conditions(obj)
    if kind in ("JobSet", "TrainJob"):
        if conditions & {"Completed", "Complete"}:
            return "Completed"
        if "Failed" in conditions:
            return "Failed"
        return "Suspended" if _suspended(obj) else "Running"
    if kind == "Job":
        if "Complete" in conditions:
            return "Complete"
        if "Failed" in conditions:
            return "Failed"
        return "Suspended" if _suspended(obj) else "Active"
    if kind == "Pod":
        status = access.status(obj)
        return str(status.get("phase") or "Pending")
    return "Scheduled" if conditions & _SCHEDULED_CONDITIONS else "Pending"


def final_states(objects: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    # Pods are most of a large run's objects (50,000 at 5,000 nodes): their state is the phase alone, so
    # they skip ``state_of``'s condition set; entries are sorted by a key built once, with the entry.
    keyed: list[tuple[tuple[int, str, str], dict[str, Any]]] = []
    rank_of = _KIND_RANK
    for obj in objects:
        kind = obj.get("kind")
        if kind not in rank_of:
            continue
        md = access.metadata(obj)
        if kind == "Workload":
            # Kueue's Workloads only: the in-tree scheduling.k8s.io Workload never had a final state.
            if str(obj.get("apiVersion", "")).partition("/")[0] != KUEUE_GROUP:
                continue
            entry = _kueue_workload(obj, md)
        elif kind == "Pod":
            namespace, name = str(md.get("namespace", "") or ""), str(md.get("name", ""))
            status = obj.get("status")
            phase = status.get("phase") if isinstance(status, dict) else None
            entry = {"kind": kind, "namespace": namespace, "name": name, "state": str(phase or "Pending")}
            spec = obj.get("spec")
            node = spec.get("nodeName") if isinstance(spec, dict) else None
            if node:
                entry["node"] = str(node)
        else:
            entry = {
                "kind": kind,
                "namespace": str(md.get("namespace", "") or ""),
                "name": str(md.get("name", "")),
                "state": state_of(obj),
            }
        keyed.append(((rank_of[kind], entry["namespace"], entry["name"]), entry))
    keyed.sort(key=itemgetter(0))
    return [entry for _, entry in keyed]


def kueue_state(obj: dict[str, Any]) -> str:
    conditions = _true_conditions(obj)
    if "Finished" in conditions:
        return "Finished"
    if access.spec(obj).get("active") is False:
        return "Inactive"
    if "Admitted" in conditions:
        return "Admitted"
    if "QuotaReserved" in conditions:
        return "QuotaReserved"
    return "Pending"


def _kueue_workload(obj: dict[str, Any], md: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "kind": "Workload",
        "group": KUEUE_GROUP,
        "namespace": str(md.get("namespace", "") or ""),
        "name": str(md.get("name", "")),
        "state": kueue_state(obj),
    }
    admission = access.status(obj).get("admission")
    if isinstance(admission, dict):
        entry["clusterQueue"] = str(admission.get("clusterQueue", ""))
        entry["flavors"] = {
            str(psa.get("name", "")): {str(r): str(f) for r, f in sorted((psa.get("flavors") or {}).items())}
            for psa in admission.get("podSetAssignments") or [] if isinstance(psa, dict)
        }
    return entry
