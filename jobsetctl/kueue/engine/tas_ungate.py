"""The topology ungater (``pkg/controller/tas/topology_ungater.go``): pods of an admitted TAS
workload are given their node selector for the assigned domain and their scheduling gate removed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jobsetctl.kube.jsontree import copy_tree
from jobsetctl.kueue.engine import names
from jobsetctl.kueue.engine.tas_encoding import TopologyAssignment, from_api
from jobsetctl.kueue.engine.tas_tree import as_mapping as _mapping
from jobsetctl.kueue.engine.tas_tree import is_gated

if TYPE_CHECKING:
    from jobsetctl.kueue.engine.core import Engine


def ungate(engine: Engine, namespace: str, workload_name: str) -> None:
    """``topologyUngater.Reconcile``: remove the topology gate from as many pods of each podset as its
    domains hold, adding the domain's level labels as nodeSelector (by pod rank when the pods carry their
    index labels, else greedily)."""
    api = engine.api
    workload = api.get(names.GROUP, "Workload", namespace, workload_name)
    if workload is None:
        return
    status = _mapping(workload.get("status"))
    if not any(c.get("type") == names.ADMITTED and c.get("status") == "True" for c in status.get("conditions") or []
               if isinstance(c, dict)):
        return
    admission = _mapping(status.get("admission"))
    podsets = {str(_mapping(p).get("name", "")): _mapping(p) for p in _mapping(workload.get("spec")).get("podSets") or []}
    pods = [p for p in api.list("", "Pod", namespace)
            if _mapping(_mapping(p.get("metadata")).get("annotations")).get(names.WORKLOAD_ANNOTATION) == workload_name
            and _mapping(p.get("status")).get("phase") not in ("Succeeded", "Failed")]
    for psa in admission.get("podSetAssignments") or []:
        psa = _mapping(psa)
        ta = from_api(psa.get("topologyAssignment"))
        if ta is None:
            continue
        name = str(psa.get("name", ""))
        members = [p for p in pods if _mapping(_mapping(p.get("metadata")).get("labels")).get(names.POD_SET_LABEL) == name]
        request = _mapping(podsets.get(name, {}).get("topologyRequest"))
        raw_count = psa.get("count")
        count = raw_count if isinstance(raw_count, int) else ta.total()
        plan = _by_rank(ta, members, request, count) or _greedy(ta, members)
        for pod, values in plan:
            old = copy_tree(pod)
            spec = pod.setdefault("spec", {})
            gates = [g for g in spec.get("schedulingGates") or [] if _mapping(g).get("name") != names.TOPOLOGY_SCHEDULING_GATE]
            if gates:
                spec["schedulingGates"] = gates
            else:
                spec.pop("schedulingGates", None)
            selector = spec.setdefault("nodeSelector", {})
            selector.update(dict(zip(ta.levels, values, strict=False)))
            # A spec update (KEP-3838: a gated pod's node selector may be added to as its last gate goes),
            # so the scheduler sees the gate go.
            api.update(pod, old=old, skip_admission=True)


def _rank_domains(ta: TopologyAssignment) -> list[list[str]]:
    out: list[list[str]] = []
    for values, count in ta.domains:
        out.extend([values] * count)
    return out


def _by_rank(ta: TopologyAssignment, pods: list[dict[str, Any]], request: dict[str, Any],
             count: int) -> list[tuple[dict[str, Any], list[str]]] | None:
    """``readRanksIfAvailable``: rank = pod index (+ job index x pods per job for JobSets)."""
    index_label = request.get("podIndexLabel")
    if not index_label:
        return None
    group_label = request.get("subGroupIndexLabel")
    group_count = request.get("subGroupCount")
    per_group = count
    if group_label:
        if not isinstance(group_count, int) or group_count <= 0:
            return None
        per_group = count // group_count
    ranks: dict[int, dict[str, Any]] = {}
    for pod in pods:
        labels = _mapping(_mapping(pod.get("metadata")).get("labels"))
        try:
            index = int(str(labels.get(index_label)))
            rank = index
            if group_label:
                job = int(str(labels.get(group_label)))
                if index >= per_group or job >= group_count:  # type: ignore[operator]
                    return None
                rank = index + job * per_group
        except ValueError:
            return None
        if rank < 0 or rank >= count or rank in ranks:
            return None
        ranks[rank] = pod
    domains = _rank_domains(ta)
    plan = []
    for rank, pod in sorted(ranks.items()):
        if rank >= len(domains):
            return None
        spec = _mapping(pod.get("spec"))
        if not is_gated(spec):
            actual = [_mapping(spec.get("nodeSelector")).get(level, "") for level in ta.levels]
            if actual != domains[rank]:
                return None
            continue
        plan.append((pod, domains[rank]))
    return plan


def _greedy(ta: TopologyAssignment, pods: list[dict[str, Any]]) -> list[tuple[dict[str, Any], list[str]]]:
    """``assignGatedPodsToDomainsGreedy``."""
    gated = []
    ungated: dict[tuple[str, ...], int] = {}
    for pod in pods:
        spec = _mapping(pod.get("spec"))
        if is_gated(spec):
            gated.append(pod)
        else:
            selected = tuple(_mapping(spec.get("nodeSelector")).get(level, "") for level in ta.levels)
            ungated[selected] = ungated.get(selected, 0) + 1
    plan: list[tuple[dict[str, Any], list[str]]] = []
    for values, count in ta.domains:
        remaining = max(count - ungated.get(tuple(values), 0), 0)
        take = min(remaining, max(len(gated) - len(plan), 0))
        for pod in gated[len(plan):len(plan) + take]:
            plan.append((pod, values))
    return plan
