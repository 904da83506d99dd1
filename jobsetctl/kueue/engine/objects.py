"""Typed views of Kueue's configuration objects, with the CRD defaults upstream's API server applies.

Both served versions are read: ``v1beta2`` spells ``spec.cohortName``, ``Cohort.spec.parentName`` and
``spec.admissionChecksStrategy``; ``v1beta1`` spelled ``spec.cohort``, ``spec.parent`` and
``spec.admissionChecks`` (apis/kueue/v1beta1 at ff69552). Values that admission would have refused
(validate reports them) read as their defaults, so the engine never fails on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from jobsetctl.fakecluster.scheduler.podinfo import Taint, Toleration, parse_taints, parse_tolerations
from jobsetctl.fakecluster.scheduler.selectors import LabelSelector, compile_label_selector
from jobsetctl.kube.quantity import QuantityError, parse_quantity
from jobsetctl.kueue.engine import names
from jobsetctl.kueue.engine.amounts import FlavorResource, units


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def name_of(obj: dict[str, Any]) -> str:
    return str(_mapping(obj.get("metadata")).get("name", ""))


def _amount(resource: str, value: Any) -> int | None:
    if value is None or value == "":
        return None
    try:
        return units(resource, parse_quantity(value))
    except QuantityError:
        return None


@dataclass(frozen=True, slots=True)
class Quota:
    """``ResourceQuota`` of a flavor and resource: nominal, and the optional borrowing and lending limits."""

    nominal: int = 0
    borrowing_limit: int | None = None
    lending_limit: int | None = None


@dataclass(frozen=True, slots=True)
class ResourceGroup:
    covered_resources: tuple[str, ...]
    flavors: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Preemption:
    within_cluster_queue: str = names.NEVER
    reclaim_within_cohort: str = names.NEVER
    borrow_within_cohort: str = names.NEVER
    max_priority_threshold: int | None = None


@dataclass(frozen=True, slots=True)
class FlavorFungibility:
    when_can_borrow: str = names.MAY_STOP_SEARCH
    when_can_preempt: str = names.TRY_NEXT_FLAVOR
    preference: str | None = None


@dataclass(frozen=True, slots=True)
class AdmissionCheckRule:
    name: str
    on_flavors: tuple[str, ...] = ()


@dataclass(slots=True)
class ClusterQueueSpec:
    name: str
    cohort: str = ""
    queueing_strategy: str = names.BEST_EFFORT_FIFO
    namespace_selector: LabelSelector | None = None
    resource_groups: tuple[ResourceGroup, ...] = ()
    quotas: dict[FlavorResource, Quota] = field(default_factory=dict)
    preemption: Preemption = Preemption()
    fungibility: FlavorFungibility = FlavorFungibility()
    fair_weight: float = 1.0
    stop_policy: str = "None"
    admission_checks: tuple[AdmissionCheckRule, ...] = ()
    #: ``spec.admissionScope.admissionMode`` (AdmissionFairSharing), "" when unset.
    admission_mode: str = ""
    #: ``RGByResource`` for every covered resource: the first group covering it (asked per resource per
    #: flavor assignment, so it is worked out once; ``resource_groups`` is never reassigned).
    group_by_resource: dict[str, ResourceGroup] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_resource: dict[str, ResourceGroup] = {}
        for group in self.resource_groups:
            for resource in group.covered_resources:
                by_resource.setdefault(resource, group)
        self.group_by_resource = by_resource

    def flavors(self) -> list[str]:
        seen: list[str] = []
        for group in self.resource_groups:
            for flavor in group.flavors:
                if flavor not in seen:
                    seen.append(flavor)
        return seen

    def group_of(self, resource: str) -> ResourceGroup | None:
        """``RGByResource``."""
        return self.group_by_resource.get(resource)


def fair_weight(value: Any) -> float:
    """``parseFairWeight``: ``fairSharing.weight`` as a float, 1 when unset."""
    weight = _mapping(value).get("weight")
    if weight is None:
        return 1.0
    try:
        return float(parse_quantity(weight))
    except QuantityError:
        return 1.0


def _resource_groups(raw: Any) -> tuple[tuple[ResourceGroup, ...], dict[FlavorResource, Quota]]:
    groups: list[ResourceGroup] = []
    quotas: dict[FlavorResource, Quota] = {}
    for group in _list(raw):
        group = _mapping(group)
        covered = tuple(str(r) for r in _list(group.get("coveredResources")))
        flavors: list[str] = []
        for flavor in _list(group.get("flavors")):
            flavor = _mapping(flavor)
            flavor_name = str(flavor.get("name", ""))
            flavors.append(flavor_name)
            for resource in _list(flavor.get("resources")):
                resource = _mapping(resource)
                resource_name = str(resource.get("name", ""))
                quotas[(flavor_name, resource_name)] = Quota(
                    _amount(resource_name, resource.get("nominalQuota")) or 0,
                    _amount(resource_name, resource.get("borrowingLimit")),
                    _amount(resource_name, resource.get("lendingLimit")),
                )
        groups.append(ResourceGroup(covered, tuple(flavors)))
    return tuple(groups), quotas


def cluster_queue_spec(obj: dict[str, Any]) -> ClusterQueueSpec:
    spec = _mapping(obj.get("spec"))
    groups, quotas = _resource_groups(spec.get("resourceGroups"))
    preemption = _mapping(spec.get("preemption"))
    borrow = _mapping(preemption.get("borrowWithinCohort"))
    threshold = borrow.get("maxPriorityThreshold")
    fungibility = _mapping(spec.get("flavorFungibility"))
    checks: list[AdmissionCheckRule] = []
    for check in _list(spec.get("admissionChecks")):  # v1beta1
        if isinstance(check, str):
            checks.append(AdmissionCheckRule(check))
    strategy = _mapping(spec.get("admissionChecksStrategy"))
    for rule in _list(strategy.get("admissionChecks")):
        rule = _mapping(rule)
        checks.append(AdmissionCheckRule(str(rule.get("name", "")),
                                         tuple(str(f) for f in _list(rule.get("onFlavors")))))
    selector = spec.get("namespaceSelector")
    return ClusterQueueSpec(
        name=name_of(obj),
        cohort=str(spec.get("cohortName") or spec.get("cohort") or ""),
        queueing_strategy=str(spec.get("queueingStrategy") or names.BEST_EFFORT_FIFO),
        # A null selector is a nothing selector: no namespace is eligible (clusterqueue_types.go).
        namespace_selector=compile_label_selector(selector) if selector is not None else None,
        resource_groups=groups,
        quotas=quotas,
        preemption=Preemption(
            _policy(preemption.get("withinClusterQueue")),
            _policy(preemption.get("reclaimWithinCohort")),
            str(borrow.get("policy") or names.NEVER),
            threshold if isinstance(threshold, int) and not isinstance(threshold, bool) else None,
        ),
        fungibility=FlavorFungibility(
            str(fungibility.get("whenCanBorrow") or names.MAY_STOP_SEARCH),
            str(fungibility.get("whenCanPreempt") or names.TRY_NEXT_FLAVOR),
            str(fungibility["preference"]) if fungibility.get("preference") else None,
        ),
        fair_weight=fair_weight(spec.get("fairSharing")),
        stop_policy=str(spec.get("stopPolicy") or "None"),
        admission_checks=tuple(checks),
        admission_mode=str(_mapping(spec.get("admissionScope")).get("admissionMode") or ""),
    )


@dataclass(slots=True)
class CohortSpec:
    name: str
    parent: str = ""
    quotas: dict[FlavorResource, Quota] = field(default_factory=dict)
    fair_weight: float = 1.0


def cohort_spec(obj: dict[str, Any]) -> CohortSpec:
    spec = _mapping(obj.get("spec"))
    _, quotas = _resource_groups(spec.get("resourceGroups"))
    return CohortSpec(name_of(obj), str(spec.get("parentName") or spec.get("parent") or ""), quotas,
                      fair_weight(spec.get("fairSharing")))


@dataclass(frozen=True, slots=True)
class FlavorSpec:
    name: str
    node_labels: tuple[tuple[str, str], ...] = ()
    node_taints: tuple[Taint, ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    #: The raw tolerations, injected into pod templates on admission.
    raw_tolerations: tuple[dict[str, Any], ...] = ()
    topology_name: str | None = None

    @property
    def labels(self) -> dict[str, str]:
        return dict(self.node_labels)


def flavor_spec(obj: dict[str, Any]) -> FlavorSpec:
    spec = _mapping(obj.get("spec"))
    labels = _mapping(spec.get("nodeLabels"))
    raw_tolerations = tuple(t for t in _list(spec.get("tolerations")) if isinstance(t, dict))
    topology = spec.get("topologyName")
    return FlavorSpec(
        name_of(obj),
        tuple(sorted((str(k), str(v)) for k, v in labels.items())),
        parse_taints({"taints": spec.get("nodeTaints")}),
        parse_tolerations({"tolerations": list(raw_tolerations)}),
        raw_tolerations,
        str(topology) if isinstance(topology, str) and topology else None,
    )


def topology_levels(obj: dict[str, Any]) -> tuple[str, ...]:
    spec = _mapping(obj.get("spec"))
    return tuple(str(_mapping(level).get("nodeLabel", "")) for level in _list(spec.get("levels")))


@dataclass(frozen=True, slots=True)
class LocalQueueSpec:
    namespace: str
    name: str
    cluster_queue: str
    stop_policy: str = "None"

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def local_queue_spec(obj: dict[str, Any]) -> LocalQueueSpec:
    md = _mapping(obj.get("metadata"))
    spec = _mapping(obj.get("spec"))
    return LocalQueueSpec(str(md.get("namespace") or "default"), str(md.get("name", "")),
                          str(spec.get("clusterQueue", "")), str(spec.get("stopPolicy") or "None"))


def priority_class_value(obj: dict[str, Any]) -> int:
    value = obj.get("value")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def quantity_float(value: Any) -> float:
    try:
        return float(parse_quantity(value))
    except QuantityError:
        return 0.0


def fraction(value: Any) -> Fraction:
    try:
        return parse_quantity(value)
    except QuantityError:
        return Fraction(0)


def _policy(value: Any) -> str:
    """A preemption policy; absent is the API default ``Never``. An empty string (Go's zero value, which
    Kueue's unit tests build without API defaulting) is kept: it is not ``Never`` for the checks that
    compare against ``Never``, and satisfies no policy."""
    return names.NEVER if value is None else str(value)
