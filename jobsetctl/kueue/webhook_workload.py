"""Kueue's validating webhook on Workloads, ``vworkload.kb.io`` (pkg/webhooks/workload_webhook.go), on the
``v1beta2`` form: ``ValidateWorkload`` (podSets: template metadata, resources without the ``pods`` key and
not negative, TAS slice sizes, at most one podSet with minCount; the admission while quota is reserved;
reclaimable pods; admission-check podSetUpdates; the AdmissionGatedBy and priority-boost annotations) and
``ValidateWorkloadUpdate`` (podSets immutable while quota is reserved, admission set or unset but not
changed except its TAS fields, reclaimable counts that only grow, ready podSetUpdates, clusterName among
the nominated ones).

Not modelled: ``ValidateConditions`` on ``status.conditions`` (the schema's enums and patterns cover most
of it) and the elastic-workload exceptions of the reclaimable-pod checks (kueue#12670).
"""

from __future__ import annotations

from typing import Any

from jobsetctl.diagnostics import Finding
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube import field as kfield
from jobsetctl.kube.field import Path, path_string
from jobsetctl.kube.names import is_qualified_name
from jobsetctl.kueue.config import SHIPPED
from jobsetctl.kueue.webhooks import (
    IS_NEGATIVE,
    _f,
    _l,
    _m,
    _not_supported,
    _quantity,
    _quantity_text,
    _rule,
    _tolerations,
    label_problems,
)

WORKLOAD_POD_SETS = _rule(
    "kueue-workload-pod-sets",
    "A Workload's podSets: template labels and annotations, resources (no 'pods', not negative), slice sizes, "
    "at most one podSet with minCount.",
)
WORKLOAD_STATUS = _rule(
    "kueue-workload-status",
    "A Workload's status: admission while quota is reserved, reclaimable pods, admission-check podSetUpdates, "
    "clusterName.",
)
WORKLOAD_UPDATE = _rule(
    "kueue-workload-update",
    "A Workload update changes what is immutable while quota is reserved (podSets, admission, reclaimable counts, "
    "ready podSetUpdates).",
)


# ---- Workload -----------------------------------------------------------------------------------------

def _has_quota_reservation(workload: Object) -> bool:
    return any(_m(c).get("type") == "QuotaReserved" and _m(c).get("status") == "True"
               for c in _l(_m(workload.get("status")).get("conditions")))


def _resource_list(resources: Any, at: Path, non_negative: bool) -> list[Finding]:
    """``validateResourceList``."""
    out: list[Finding] = []
    for name, quantity in _m(resources).items():
        where: Path = (*at, str(name))
        if name == "pods":
            out.append(WORKLOAD_POD_SETS.finding(kfield.invalid(f"{path_string(at)}[pods]", "pods",
                                                                "the key is reserved for internal kueue use"), at=where))
        if non_negative:
            q = _quantity(quantity)
            if q is not None and q < 0:
                out.append(WORKLOAD_POD_SETS.finding(kfield.invalid(f"{path_string(at)}[{name}]", _quantity_text(quantity),
                                                                    IS_NEGATIVE), at=where))
    return out


def _pod_set(pod_set: dict[str, Any], at: Path, ctx: AdmissionContext) -> list[Finding]:
    """``validatePodSet``."""
    config = ctx.kueue or SHIPPED
    out: list[Finding] = []
    template = _m(pod_set.get("template"))
    meta = _m(template.get("metadata"))
    if config.gate("WorkloadValidationForPodSetMetadata"):
        labels_at: Path = (*at, "template", "metadata", "labels")
        out.extend(WORKLOAD_POD_SETS.finding(m, path=path_string(labels_at), at=labels_at)
                   for m in label_problems(meta.get("labels"), labels_at))
        annotations_at: Path = (*at, "template", "metadata", "annotations")
        for key in _m(meta.get("annotations")):
            for m in is_qualified_name(str(key).lower()):
                out.append(WORKLOAD_POD_SETS.finding(kfield.invalid(annotations_at, key, m), path=path_string(annotations_at),
                                                     at=(*annotations_at, str(key))))
    non_negative = config.gate("WorkloadValidateResourcesAreNonNegative")
    spec = _m(template.get("spec"))
    for key in ("initContainers", "containers"):
        for i, raw in enumerate(_l(spec.get(key))):
            resources = _m(_m(raw).get("resources"))
            base: Path = (*at, "template", "spec", key, i, "resources")
            out.extend(_resource_list(resources.get("requests"), (*base, "requests"), non_negative))
            out.extend(_resource_list(resources.get("limits"), (*base, "limits"), non_negative))
    if isinstance(spec.get("resources"), dict):
        base = (*at, "template", "spec", "resources")
        out.extend(_resource_list(spec["resources"].get("requests"), (*base, "requests"), non_negative))
        out.extend(_resource_list(spec["resources"].get("limits"), (*base, "limits"), non_negative))
    if config.gate("TASValidateWorkloadSliceSize"):
        out.extend(_tas_slice_size(pod_set.get("topologyRequest"), (*at, "topologyRequest")))
    return out


def _tas_slice_size(request: Any, at: Path) -> list[Finding]:
    """``validateTASSliceSize``."""
    if not isinstance(request, dict):
        return []
    out: list[Finding] = []
    size = request.get("podSetSliceSize")
    where: Path = (*at, "podSetSliceSize")
    if request.get("podSetSliceRequiredTopology") is not None:
        if size is None:
            out.append(_f(WORKLOAD_POD_SETS, where, kfield.required(
                where, "must be set when podSetSliceRequiredTopology is specified")))
        elif isinstance(size, int) and size <= 0:
            out.append(_f(WORKLOAD_POD_SETS, where, kfield.invalid(where, size, "must be greater than 0")))
    elif size is not None:
        out.append(_f(WORKLOAD_POD_SETS, where, kfield.forbidden(
            where, "may not be set when podSetSliceRequiredTopology is not specified")))
    for i, raw in enumerate(_l(request.get("podsetSliceRequiredTopologyConstraints"))):
        layer_size = _m(raw).get("size")
        if isinstance(layer_size, int) and layer_size <= 0:
            size_at: Path = (*at, "podsetSliceRequiredTopologyConstraints", i, "size")
            out.append(_f(WORKLOAD_POD_SETS, size_at, kfield.invalid(size_at, layer_size, "must be greater than 0")))
    return out


def validate_workload(obj: Object, old: Object | None, ctx: AdmissionContext) -> list[Finding]:
    """``ValidateWorkload``."""
    from jobsetctl.kueue.job_rules import elastic

    spec = _m(obj.get("spec"))
    out: list[Finding] = []
    variable = 0
    for i, raw in enumerate(_l(spec.get("podSets"))):
        pod_set = _m(raw)
        out.extend(_pod_set(pod_set, ("spec", "podSets", i), ctx))
        if pod_set.get("minCount") is not None:
            variable += 1
    where: Path = ("spec", "podSets")
    if variable > 1:
        out.append(_f(WORKLOAD_POD_SETS, where, kfield.invalid(where, variable, "at most one podSet can use minCount")))
    if variable > 0 and elastic(obj, ctx):
        out.append(_f(WORKLOAD_POD_SETS, where, kfield.invalid(
            where, variable, "partial admission and elastic job cannot be used together")))
    if _has_quota_reservation(obj):
        out.extend(_admission(obj, old))
    out.extend(_reclaimable_pods(obj))
    out.extend(_admission_checks(obj))
    config = ctx.kueue or SHIPPED
    if config.gate("AdmissionGatedBy"):
        from jobsetctl.kueue.job_rules import admission_gated_by_problems

        value = str(_m(_m(obj.get("metadata")).get("annotations")).get("kueue.x-k8s.io/admission-gated-by") or "")
        out.extend(admission_gated_by_problems(value, WORKLOAD_POD_SETS))
    if config.gate("PriorityBoost"):
        out.extend(_priority_boost(obj))
    return out


def _priority_boost(obj: Object) -> list[Finding]:
    from jobsetctl.kueue.tas import parse_go_int32

    annotations = _m(_m(obj.get("metadata")).get("annotations"))
    key = "kueue.x-k8s.io/priority-boost"
    if key not in annotations:
        return []
    value = str(annotations[key])
    where: Path = ("metadata", "annotations", key)
    if value == "":
        return [_f(WORKLOAD_POD_SETS, where, kfield.invalid(
            where, value, 'must be a valid signed integer; use "0" explicitly, empty string is not allowed'))]
    if parse_go_int32(value) is None:
        return [_f(WORKLOAD_POD_SETS, where, kfield.invalid(where, value, "must be a valid signed integer"))]
    return []


def _admission(obj: Object, old: Object | None) -> list[Finding]:
    """``validateAdmission``."""
    status = _m(obj.get("status"))
    at: Path = ("status", "admission")
    admission = status.get("admission")
    if not isinstance(admission, dict):
        if old is not None and _has_quota_reservation(old) and not isinstance(_m(old.get("status")).get("admission"), dict):
            return []
        return [_f(WORKLOAD_STATUS, at, kfield.required(at, "must be set while the QuotaReserved condition is true"))]
    names = {_m(p).get("name", "main") for p in _l(_m(obj.get("spec")).get("podSets"))}
    out: list[Finding] = []
    for i, raw in enumerate(_l(admission.get("podSetAssignments"))):
        assignment = _m(raw)
        where: Path = (*at, "podSetAssignments", i)
        name = assignment.get("name", "main")
        if name not in names:
            out.append(_f(WORKLOAD_STATUS, (*where, "name"), kfield.field_error(
                kfield.ErrorType.NOT_FOUND, (*where, "name"), name)))
        count = assignment.get("count")
        if isinstance(count, int) and count > 0:
            for resource, value in _m(assignment.get("resourceUsage")).items():
                q = _quantity(value)
                amount = q * 1000 if q is not None and resource == "cpu" else q  # ResourceValue: milli-CPU
                if amount is not None and (amount.denominator != 1 or amount.numerator % count):
                    usage_at = f"{path_string((*where, 'resourceUsage'))}[{resource}]"
                    out.append(WORKLOAD_STATUS.finding(kfield.invalid(usage_at, value, f"is not a multiple of {count}"),
                                                       at=(*where, "resourceUsage", resource)))
    return out


def _reclaimable_pods(obj: Object) -> list[Finding]:
    """``validateReclaimablePods`` (create, or an update of a non-elastic workload)."""
    pod_sets = {str(_m(p).get("name", "main")): _m(p) for p in _l(_m(obj.get("spec")).get("podSets"))}
    out: list[Finding] = []
    for raw in _l(_m(obj.get("status")).get("reclaimablePods")):
        reclaim = _m(raw)
        name = str(reclaim.get("name", ""))
        base = f"status.reclaimablePods[{name}]"
        at: Path = ("status", "reclaimablePods")
        if name not in pod_sets:
            out.append(WORKLOAD_STATUS.finding(_not_supported(("status",), name, list(pod_sets)).replace(
                "status:", f"{base}.name:", 1), at=at))
            continue
        count, size = reclaim.get("count", 0), pod_sets[name].get("count", 1)
        if isinstance(count, int) and isinstance(size, int) and count > size:
            out.append(WORKLOAD_STATUS.finding(kfield.invalid(f"{base}.count", count, f"should be less or equal to {size}"),
                                               at=at))
    return out


def _admission_checks(obj: Object) -> list[Finding]:
    """``validateAdmissionChecks`` / ``validatePodSetUpdates``."""
    known = sorted(str(_m(p).get("name", "main")) for p in _l(_m(obj.get("spec")).get("podSets")))
    out: list[Finding] = []
    for i, raw in enumerate(_l(_m(obj.get("status")).get("admissionChecks"))):
        for j, raw_update in enumerate(_l(_m(raw).get("podSetUpdates"))):
            update = _m(raw_update)
            where: Path = ("status", "admissionChecks", i, "podSetUpdates", j)
            if update.get("name") not in known:
                out.append(_f(WORKLOAD_STATUS, (*where, "name"), _not_supported((*where, "name"), update.get("name"), known)))
            out.extend(_tolerations(update.get("tolerations"), (*where, "tolerations"), WORKLOAD_STATUS))
            annotations_at: Path = (*where, "annotations")
            for key in _m(update.get("annotations")):
                out.extend(_f(WORKLOAD_STATUS, annotations_at, kfield.invalid(annotations_at, key, m))
                           for m in is_qualified_name(str(key).lower()))
            for name in ("nodeSelector", "labels"):
                out.extend(_f(WORKLOAD_STATUS, (*where, name), m) for m in label_problems(update.get(name), (*where, name)))
    return out


def validate_workload_update(old: Object, new: Object, ctx: AdmissionContext) -> list[Finding]:
    """``ValidateWorkloadUpdate``."""
    config = ctx.kueue or SHIPPED
    out = validate_workload(new, old, ctx)
    if _has_quota_reservation(old):
        out.extend(_immutable_pod_sets(_l(_m(new.get("spec")).get("podSets")), _l(_m(old.get("spec")).get("podSets")),
                                       config.gate("ElasticJobsViaWorkloadSlices")))
    if _has_quota_reservation(new) and _has_quota_reservation(old):
        out.extend(_reclaimable_update(new, old))
    out.extend(_admission_update(_m(new.get("status")).get("admission"), _m(old.get("status")).get("admission"),
                                 config.gate("TopologyAwareScheduling")))
    out.extend(_ready_pod_set_updates(new, old))
    if config.gate("AdmissionGatedBy"):
        from jobsetctl.kueue.job_rules import admission_gated_by_update_problems

        key = "kueue.x-k8s.io/admission-gated-by"
        before = str(_m(_m(old.get("metadata")).get("annotations")).get(key) or "")
        after = str(_m(_m(new.get("metadata")).get("annotations")).get(key) or "")
        # The format problems were reported by validate_workload already.
        out.extend(f for f in admission_gated_by_update_problems(before, after, WORKLOAD_UPDATE) if "Forbidden" in f.message)
    new_status, old_status = _m(new.get("status")), _m(old.get("status"))
    if old_status.get("clusterName") is None and new_status.get("clusterName") is not None and \
            new_status["clusterName"] not in _l(old_status.get("nominatedClusterNames")):
        where: Path = ("status", "clusterName")
        out.append(_f(WORKLOAD_STATUS, where, kfield.invalid(
            where, new_status["clusterName"], "when setting clusterName it must be one of the nominatedClusterNames")))
    return out


def _immutable_pod_sets(new: list[Any], old: list[Any], elastic_gate: bool) -> list[Finding]:
    at: Path = ("spec", "podSets")
    if len(new) != len(old):
        return [_f(WORKLOAD_UPDATE, at, kfield.invalid(at, new, "field is immutable"))]
    out: list[Finding] = []
    for i, (after, before) in enumerate(zip(new, old, strict=True)):
        after, before = dict(_m(after)), _m(before)
        if elastic_gate and isinstance(after.get("count"), int) and isinstance(before.get("count"), int) \
                and after["count"] < before["count"]:
            after["count"] = before["count"]  # elastic scale-down
        if after != before:
            # Quirk: path.Child(strconv.Itoa(i)) renders the index as a field, "spec.podSets.0".
            where = f"spec.podSets.{i}"
            out.append(WORKLOAD_UPDATE.finding(kfield.invalid(where, after, "field is immutable"), at=(*at, i)))
    return out


def _reclaimable_update(new: Object, old: Object) -> list[Finding]:
    """``validateReclaimablePodsUpdate`` (non-elastic)."""
    before = {str(_m(r).get("name")): _m(r).get("count", 0) for r in _l(_m(old.get("status")).get("reclaimablePods"))}
    after = {str(_m(r).get("name")): _m(r).get("count", 0) for r in _l(_m(new.get("status")).get("reclaimablePods"))}
    if before == after or not before:
        return []
    out: list[Finding] = []
    at: Path = ("status", "reclaimablePods")
    for name, count in after.items():
        if name in before and isinstance(count, int) and count < before[name]:
            out.append(WORKLOAD_UPDATE.finding(kfield.invalid(f"status.reclaimablePods[{name}].count", count,
                                                              f"cannot be less than {before[name]}"), at=at))
    for name in before:
        if name not in after:
            out.append(WORKLOAD_UPDATE.finding(kfield.required(f"status.reclaimablePods[{name}]", "cannot be removed"), at=at))
    return out


def _admission_update(new: Any, old: Any, tas: bool) -> list[Finding]:
    """``validateAdmissionUpdate``: admission may be set or unset, not changed (TAS fields excepted)."""
    if not isinstance(new, dict) or not isinstance(old, dict):
        return []
    at: Path = ("status", "admission")
    if tas:
        new_assignments, old_assignments = _l(new.get("podSetAssignments")), _l(old.get("podSetAssignments"))
        if len(new_assignments) == len(old_assignments):
            old = dict(old)
            old["podSetAssignments"] = [
                {**_m(o), **{k: _m(n)[k] for k in ("topologyAssignment", "delayedTopologyRequest") if k in _m(n)}}
                for o, n in zip(old_assignments, new_assignments, strict=True)]
            for patched, n in zip(old["podSetAssignments"], new_assignments, strict=True):
                for k in ("topologyAssignment", "delayedTopologyRequest"):
                    if k not in _m(n):
                        patched.pop(k, None)
    if new != old:
        return [_f(WORKLOAD_UPDATE, at, kfield.invalid(at, new, "field is immutable"))]
    return []


def _ready_pod_set_updates(new: Object, old: Object) -> list[Finding]:
    """``validateImmutablePodSetUpdates``."""
    after = {str(_m(c).get("name")): _m(c) for c in _l(_m(new.get("status")).get("admissionChecks"))}
    out: list[Finding] = []
    for i, raw in enumerate(_l(_m(old.get("status")).get("admissionChecks"))):
        before = _m(raw)
        current = after.get(str(before.get("name")))
        if current is None:
            continue
        if before.get("state") == "Ready" and current.get("state") == "Ready" and \
                current.get("podSetUpdates") != before.get("podSetUpdates"):
            where: Path = ("status", "admissionChecks", i, "podSetUpdates")
            out.append(_f(WORKLOAD_UPDATE, where, kfield.invalid(where, current.get("podSetUpdates"), "field is immutable")))
    return out
