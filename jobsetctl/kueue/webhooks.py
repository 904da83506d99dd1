"""Kueue's validating webhooks on its own kinds (pkg/webhooks/*.go), on the ``v1beta2`` form of an object.

* ``vclusterqueue.kb.io`` (``ValidateClusterQueue``, ``ValidateClusterQueueUpdate``): resource groups
  (resource names are label keys, each resource and flavor in one group only, a flavor's resources in
  the order of ``coveredResources``, quotas and limits not negative, limits only with a cohort, a
  lending limit no larger than the nominal quota, at most 256 flavors, 256 covered resources and 512
  flavor-resource pairs per group), the namespace selector, preemption and flavor fungibility,
  admission-check ``onFlavors`` naming flavors of the queue, the ConcurrentAdmission policy (gate
  ConcurrentAdmission) and, on update, its immutability;
* ``vcohort.kb.io`` (``validateCohort``): fair-sharing weight and resource groups (limits need a parent;
  no nominal-over-lending check);
* ``vresourceflavor.kb.io`` (``ValidateResourceFlavor``): node labels, taints (key, value, unique per
  key and effect), tolerations (key);
* ``vworkload.kb.io``: :mod:`jobsetctl.kueue.webhook_workload`.

LocalQueue, WorkloadPriorityClass, Topology and AdmissionCheck have no validating webhook.

Where upstream lists a Go set's members in a message (``UnsortedList``), we sort them: the order upstream
prints is random.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube import field as kfield
from jobsetctl.kube.field import Path, go_quote, path_string
from jobsetctl.kube.names import is_qualified_name, is_valid_label_value
from jobsetctl.kube.quantity import QuantityError, format_quantity, parse_quantity
from jobsetctl.kueue.config import SHIPPED
from jobsetctl.rules.interface import Rule
from jobsetctl.rules.registry import define

_SPEC = "scheduling.md §2.1 (pkg/webhooks)"


def _rule(rule_id: str, summary: str) -> Rule:
    return define(rule_id, Layer.WEBHOOK, Severity.ERROR, summary, spec=_SPEC)


RESOURCE_GROUPS = _rule(
    "kueue-resource-groups",
    "A ClusterQueue's or Cohort's resource groups: resource names, each resource and flavor in one group, quotas "
    "and limits not negative, limits only with a cohort (parent), lending limit within the nominal quota.",
)
NAMESPACE_SELECTOR = _rule("kueue-namespace-selector", "A ClusterQueue's namespaceSelector is not a valid label selector.")
PREEMPTION = _rule(
    "kueue-preemption",
    "A ClusterQueue's preemption or flavorFungibility settings contradict each other.",
)
ADMISSION_CHECK_FLAVORS = _rule(
    "kueue-admission-check-flavors",
    "A ClusterQueue's admissionChecksStrategy names, in onFlavors, a flavor that is not in its resource groups.",
)
CONCURRENT_ADMISSION = _rule(
    "kueue-concurrent-admission",
    "A ClusterQueue's concurrentAdmissionPolicy needs one resource group of at most 16 flavors and no StrictFIFO; "
    "it cannot be added or removed later.",
)
FAIR_SHARING = _rule("kueue-fair-sharing-weight", "A fairSharing.weight is negative or so small it collapses to 0.")
RESOURCE_FLAVOR = _rule(
    "kueue-resource-flavor", "A ResourceFlavor's nodeLabels, nodeTaints or tolerations are not valid.",
)

MAX_FLAVORS = 256
MAX_COVERED_RESOURCES = 256
MAX_FLAVOR_RESOURCE_PAIRS = 512
MAX_CONCURRENT_ADMISSION_FLAVORS = 16
IS_NEGATIVE = "must be greater than or equal to 0"


def _m(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _l(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _f(rule: Rule, at: Path, message: str) -> Finding:
    return rule.finding(message, path=path_string(at), at=at)


def _not_supported(at: Path, value: Any, supported: list[str]) -> str:
    """``field.NotSupported``: no "supported values" detail when the list is empty."""
    if not supported:
        return kfield.field_error(kfield.ErrorType.NOT_SUPPORTED, at, value)
    return kfield.not_supported(at, value, supported)


def _quantity(value: Any) -> Fraction | None:
    try:
        return parse_quantity(value)
    except QuantityError:
        return None


def _quantity_text(value: Any) -> str:
    """``Quantity.String()`` of a value as written (canonical form)."""
    q = _quantity(value)
    if q is None:
        return str(value)
    text = str(value)
    binary = isinstance(value, str) and text.rstrip("0123456789.+-eE").endswith("i")
    return format_quantity(q, binary=binary)


# ---- label helpers (apimachinery meta/v1/validation) --------------------------------------------

def label_problems(labels: Any, at: Path) -> list[str]:
    """``ValidateLabels``: every error at the map's own path, the bad value the key or the value."""
    out: list[str] = []
    for key, value in _m(labels).items():
        out.extend(kfield.invalid(at, key, m) for m in is_qualified_name(str(key)))
        if isinstance(value, str):
            out.extend(kfield.invalid(at, value, m) for m in is_valid_label_value(value))
    return out


def label_name_problems(name: Any, at: Path) -> list[str]:
    """``ValidateLabelName``."""
    return [kfield.invalid(at, name, m) for m in is_qualified_name(str(name))]


def label_selector_problems(selector: Any, at: Path) -> list[str]:
    """``metav1validation.ValidateLabelSelector`` (no options)."""
    if not isinstance(selector, dict):
        return []
    out: list[str] = []
    for index, raw in enumerate(_l(selector.get("matchExpressions"))):
        expr = _m(raw)
        where: Path = (*at, "matchExpressions", index)
        operator = expr.get("operator")
        values = _l(expr.get("values"))
        if operator in ("In", "NotIn"):
            if not values:
                out.append(kfield.required((*where, "values"), "must be specified when `operator` is 'In' or 'NotIn'"))
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                out.append(kfield.forbidden((*where, "values"),
                                            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
        else:
            out.append(kfield.invalid((*where, "operator"), operator, "not a valid selector operator"))
        out.extend(label_name_problems(expr.get("key"), (*where, "key")))
    out.extend(label_problems(selector.get("matchLabels"), (*at, "matchLabels")))
    return out


# ---- resource groups (ClusterQueue and Cohort) ---------------------------------------------------------

def _validate_resource_groups(groups: Any, has_parent: bool, nominal_over_lending: bool, at: Path,
                              is_cohort: bool) -> list[Finding]:
    """``validateResourceGroups``."""
    out: list[Finding] = []
    seen_resources: set[str] = set()
    seen_flavors: set[str] = set()
    for i, raw in enumerate(_l(groups)):
        group = _m(raw)
        covered = [str(r) for r in _l(group.get("coveredResources"))]
        for j, name in enumerate(covered):
            where: Path = (*at, i, "coveredResources", j)
            # validateResourceName: content.IsLabelKey
            out.extend(_f(RESOURCE_GROUPS, where, kfield.invalid(where, name, m)) for m in is_qualified_name(name))
            if name in seen_resources:
                out.append(_f(RESOURCE_GROUPS, where, kfield.duplicate(where, name)))
            else:
                seen_resources.add(name)
        for j, raw_flavor in enumerate(_l(group.get("flavors"))):
            flavor = _m(raw_flavor)
            where = (*at, i, "flavors", j)
            out.extend(_flavor_quotas(flavor, covered, has_parent, nominal_over_lending, where, is_cohort))
            name = str(flavor.get("name", ""))
            if name in seen_flavors:
                out.append(_f(RESOURCE_GROUPS, (*where, "name"), kfield.duplicate((*where, "name"), name)))
            else:
                seen_flavors.add(name)
    return out


def _flavor_quotas(flavor: dict[str, Any], covered: list[str], has_parent: bool, nominal_over_lending: bool,
                   at: Path, is_cohort: bool) -> list[Finding]:
    """``validateFlavorQuotas``."""
    out: list[Finding] = []
    for i, raw in enumerate(_l(flavor.get("resources"))):
        if i >= len(covered):
            break
        quota = _m(raw)
        where: Path = (*at, "resources", i)
        if quota.get("name") != covered[i]:
            out.append(_f(RESOURCE_GROUPS, (*where, "name"), kfield.invalid(
                (*where, "name"), quota.get("name"), "must match the name in coveredResources")))
        out.extend(_not_negative(quota.get("nominalQuota"), (*where, "nominalQuota")))
        if quota.get("borrowingLimit") is not None:
            limit_at: Path = (*where, "borrowingLimit")
            out.extend(_limit_needs_parent(quota["borrowingLimit"], has_parent, limit_at, is_cohort))
            out.extend(_not_negative(quota["borrowingLimit"], limit_at))
        if quota.get("lendingLimit") is not None:
            limit_at = (*where, "lendingLimit")
            out.extend(_not_negative(quota["lendingLimit"], limit_at))
            out.extend(_limit_needs_parent(quota["lendingLimit"], has_parent, limit_at, is_cohort))
            lend, nominal = _quantity(quota["lendingLimit"]), _quantity(quota.get("nominalQuota", 0))
            if nominal_over_lending and lend is not None and nominal is not None and lend > nominal:
                out.append(_f(RESOURCE_GROUPS, limit_at, kfield.invalid(
                    limit_at, _quantity_text(quota["lendingLimit"]), "must be less than or equal to the nominalQuota")))
    return out


def _not_negative(value: Any, at: Path) -> list[Finding]:
    """``validateResourceQuantity``."""
    q = _quantity(value)
    if q is not None and q < 0:
        return [_f(RESOURCE_GROUPS, at, kfield.invalid(at, _quantity_text(value), IS_NEGATIVE))]
    return []


def _limit_needs_parent(value: Any, has_parent: bool, at: Path, is_cohort: bool) -> list[Finding]:
    """``validateLimit``."""
    if has_parent:
        return []
    what = "parent" if is_cohort else "cohort"
    return [_f(RESOURCE_GROUPS, at, kfield.invalid(at, _quantity_text(value), f"must be nil when {what} is empty"))]


def _validate_fair_sharing(fair_sharing: Any, at: Path) -> list[Finding]:
    """``validateFairSharing``."""
    weight = _m(fair_sharing).get("weight")
    if weight is None:
        return []
    q = _quantity(weight)
    if q is None:
        return []
    out: list[Finding] = []
    if q < 0:
        out.append(_f(FAIR_SHARING, at, kfield.invalid(at, _quantity_text(weight), IS_NEGATIVE)))
    if 0 < q <= Fraction(1, 10**9):
        out.append(_f(FAIR_SHARING, at, kfield.invalid(at, _quantity_text(weight), "When not 0, weight must be > 10e-9")))
    return out


# ---- ClusterQueue -------------------------------------------------------------------------------------

def _all_flavors(spec: dict[str, Any]) -> list[str]:
    return [str(_m(f).get("name", "")) for g in _l(spec.get("resourceGroups")) for f in _l(_m(g).get("flavors"))]


def _cluster_queue_spec(cq: Object, ctx: AdmissionContext) -> list[Finding]:
    """``validateClusterQueueSpec``."""
    config = ctx.kueue or SHIPPED
    spec = _m(cq.get("spec"))
    at: Path = ("spec",)
    out = _validate_resource_groups(spec.get("resourceGroups"), bool(spec.get("cohortName")), True,
                                    (*at, "resourceGroups"), False)
    for message in label_selector_problems(spec.get("namespaceSelector"), (*at, "namespaceSelector")):
        named = message.split(":", 1)[0]
        # At the field the message names (its deepest written ancestor when the field is missing).
        out.append(NAMESPACE_SELECTOR.finding(message, path=named, at=kfield.parse_path(named)))
    preemption = spec.get("preemption")
    if isinstance(preemption, dict):
        borrow = preemption.get("borrowWithinCohort")
        if preemption.get("reclaimWithinCohort") == "Never" and isinstance(borrow, dict) and borrow.get("policy") != "Never":
            where: Path = (*at, "preemption")
            out.append(_f(PREEMPTION, where, kfield.invalid(where, preemption,
                                                            "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never")))
    fungibility = spec.get("flavorFungibility")
    if isinstance(fungibility, dict) and fungibility.get("preference") is not None and (
            fungibility.get("whenCanBorrow") != "TryNextFlavor" or fungibility.get("whenCanPreempt") != "TryNextFlavor"):
        where = (*at, "flavorFungibility", "preference")
        preference = fungibility["preference"]
        out.append(_f(PREEMPTION, where, kfield.invalid(
            where, preference,
            f"preference {go_quote(str(preference))} requires both whenCanBorrow and whenCanPreempt to be TryNextFlavor")))
    out.extend(_fair_sharing_and_totals(spec, at))
    if config.gate("ConcurrentAdmission"):
        out.extend(_concurrent_admission(spec, at))
    return out


def _fair_sharing_and_totals(spec: dict[str, Any], at: Path) -> list[Finding]:
    out = _validate_fair_sharing(spec.get("fairSharing"), (*at, "fairSharing"))
    groups = [_m(g) for g in _l(spec.get("resourceGroups"))]
    where: Path = (*at, "resourceGroups")
    flavors = sum(len(_l(g.get("flavors"))) for g in groups)
    if flavors > MAX_FLAVORS:
        out.append(_f(RESOURCE_GROUPS, where, kfield.invalid(
            where, flavors, f"total number of flavors across all resourceGroups must be ≤ {MAX_FLAVORS}, got {flavors}")))
    covered = sum(len(_l(g.get("coveredResources"))) for g in groups)
    if covered > MAX_COVERED_RESOURCES:
        out.append(_f(RESOURCE_GROUPS, where, kfield.invalid(
            where, covered, "total number of covered resources across all resourceGroups must be ≤ "
                            f"{MAX_COVERED_RESOURCES}, got {covered}")))
    for i, group in enumerate(groups):
        pairs = sum(len(_l(_m(f).get("resources"))) for f in _l(group.get("flavors")))
        if pairs > MAX_FLAVOR_RESOURCE_PAIRS:
            out.append(_f(RESOURCE_GROUPS, (*where, i), kfield.invalid(
                (*where, i), pairs, "number of flavor-resource combinations in a resourceGroup must be ≤ "
                                    f"{MAX_FLAVOR_RESOURCE_PAIRS}, got {pairs}")))
    return out


def _concurrent_admission(spec: dict[str, Any], at: Path) -> list[Finding]:
    """``validateConcurrentAdmissionPolicy``."""
    policy = spec.get("concurrentAdmissionPolicy")
    if not isinstance(policy, dict):
        return []
    out: list[Finding] = []
    groups = _l(spec.get("resourceGroups"))
    if len(groups) != 1:
        where: Path = (*at, "resourceGroups")
        out.append(_f(CONCURRENT_ADMISSION, where, kfield.invalid(
            where, len(groups), "must have exactly one ResourceGroup when ConcurrentAdmissionPolicy is defined")))
    if len(groups) == 1 and len(_l(_m(groups[0]).get("flavors"))) > MAX_CONCURRENT_ADMISSION_FLAVORS:
        where = (*at, "resourceGroups", 0, "flavors")
        out.append(_f(CONCURRENT_ADMISSION, where, kfield.invalid(
            where, len(_l(_m(groups[0]).get("flavors"))),
            f"cannot have more than {MAX_CONCURRENT_ADMISSION_FLAVORS} resource flavors in the ResourceGroup when "
            "ConcurrentAdmissionPolicy is defined")))
    migration = _m(policy.get("migration"))
    constraints = migration.get("constraints")
    if isinstance(constraints, dict):
        mode = migration.get("mode") or ""
        where = (*at, "concurrentAdmissionPolicy", "migration", "constraints")
        if mode and mode != "TryPreferredFlavors":
            out.append(_f(CONCURRENT_ADMISSION, where, kfield.forbidden(
                where, f'may only be set when migration.mode is "TryPreferredFlavors" (got {go_quote(str(mode))})')))
        elif constraints.get("lastAcceptableFlavorName") is not None:
            name = constraints["lastAcceptableFlavorName"]
            flavors = sorted(set(_all_flavors(spec)))
            if name not in flavors:
                last_at: Path = (*where, "lastAcceptableFlavorName")
                out.append(_f(CONCURRENT_ADMISSION, last_at, kfield.invalid(
                    last_at, name, f"must be one of the flavors defined in the ClusterQueue: [{' '.join(flavors)}]")))
    if spec.get("queueingStrategy") == "StrictFIFO":
        where = (*at, "queueingStrategy")
        out.append(_f(CONCURRENT_ADMISSION, where, kfield.invalid(
            where, "StrictFIFO", "StrictFIFO queueing strategy cannot be used when ConcurrentAdmissionPolicy is defined")))
    return out


def _admission_check_flavors(cq: Object, old_on_flavors: dict[str, set[str]]) -> list[Finding]:
    """``validateAdmissionCheckOnFlavorsWithOld``."""
    spec = _m(cq.get("spec"))
    strategy = spec.get("admissionChecksStrategy")
    if not isinstance(strategy, dict):
        return []
    valid = set(_all_flavors(spec))
    out: list[Finding] = []
    for i, raw in enumerate(_l(strategy.get("admissionChecks"))):
        check = _m(raw)
        on_flavors = [str(f) for f in _l(check.get("onFlavors"))]
        old = old_on_flavors.get(str(check.get("name")))
        if old is not None and old == set(on_flavors):
            continue
        for j, flavor in enumerate(on_flavors):
            if flavor not in valid:
                where: Path = ("spec", "admissionChecksStrategy", "admissionChecks", i, "onFlavors", j)
                out.append(_f(ADMISSION_CHECK_FLAVORS, where, _not_supported(where, flavor, sorted(valid))))
    return out


def validate_cluster_queue(obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
    return _cluster_queue_spec(obj, ctx) + _admission_check_flavors(obj, {})


def validate_cluster_queue_update(old: Object, new: Object, ctx: AdmissionContext) -> Iterable[Finding]:
    config = ctx.kueue or SHIPPED
    out = _cluster_queue_spec(new, ctx)
    old_on_flavors: dict[str, set[str]] = {}
    if not config.gate("RejectUpdatesToCQWithInvalidOnFlavors"):
        old_spec, new_spec = _m(old.get("spec")), _m(new.get("spec"))
        strategy = old_spec.get("admissionChecksStrategy")
        if isinstance(strategy, dict) and set(_all_flavors(old_spec)) == set(_all_flavors(new_spec)):
            old_on_flavors = {str(_m(c).get("name")): {str(f) for f in _l(_m(c).get("onFlavors"))}
                              for c in _l(strategy.get("admissionChecks"))}
    out.extend(_admission_check_flavors(new, old_on_flavors))
    before, after = _m(old.get("spec")).get("concurrentAdmissionPolicy"), _m(new.get("spec")).get("concurrentAdmissionPolicy")
    if before != after:
        where: Path = ("spec", "concurrentAdmissionPolicy")
        out.append(_f(CONCURRENT_ADMISSION, where, kfield.invalid(where, after, "field is immutable")))
    return out


# ---- Cohort -------------------------------------------------------------------------------------------

def validate_cohort(obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
    spec = _m(obj.get("spec"))
    out = _validate_fair_sharing(spec.get("fairSharing"), ("spec", "fairSharing"))
    out.extend(_validate_resource_groups(spec.get("resourceGroups"), bool(spec.get("parentName")), False,
                                         ("spec", "resourceGroups"), True))
    return out


# ---- ResourceFlavor -----------------------------------------------------------------------------------

def validate_resource_flavor(obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
    spec = _m(obj.get("spec"))
    out: list[Finding] = []
    labels_at: Path = ("spec", "nodeLabels")
    out.extend(RESOURCE_FLAVOR.finding(m, path=path_string(labels_at), at=labels_at)
               for m in label_problems(spec.get("nodeLabels"), labels_at))
    seen: dict[str, set[str]] = {}
    for i, raw in enumerate(_l(spec.get("nodeTaints"))):
        taint = _m(raw)
        where: Path = ("spec", "nodeTaints", i)
        key, value, effect = str(taint.get("key", "")), str(taint.get("value", "")), str(taint.get("effect", ""))
        out.extend(_f(RESOURCE_FLAVOR, (*where, "key"), m) for m in label_name_problems(key, (*where, "key")))
        value_problems = is_valid_label_value(value)
        if value_problems:
            out.append(_f(RESOURCE_FLAVOR, (*where, "value"), kfield.invalid((*where, "value"), value, ";".join(value_problems))))
        if key in seen.get(effect, set()):
            message = kfield.field_error(kfield.ErrorType.DUPLICATE, where, taint,
                                         "taints must be unique by key and effect pair")
            out.append(_f(RESOURCE_FLAVOR, where, message))
            continue
        seen.setdefault(effect, set()).add(key)
    out.extend(_tolerations(spec.get("tolerations"), ("spec", "tolerations"), RESOURCE_FLAVOR))
    return out


def _tolerations(tolerations: Any, at: Path, rule: Rule) -> list[Finding]:
    """``validateTolerations`` (only the key is checked)."""
    out: list[Finding] = []
    for i, raw in enumerate(_l(tolerations)):
        key = _m(raw).get("key")
        if isinstance(key, str) and key:
            where: Path = (*at, i, "key")
            out.extend(_f(rule, where, m) for m in label_name_problems(key, where))
    return out
