"""Read-only helpers over pod specs and pod templates, shared by every kind that embeds one.

Everything here tolerates malformed input (admission runs these before, or regardless of, schema
validation): a value of the wrong type reads as absent, never raises.

Resource arithmetic follows Kubernetes ``PodRequests`` (k8s.io/component-helpers
``resource/helpers.go``, trainer.md §3.7):

* a container's effective requests are its ``resources.requests``; a resource that only has a limit
  gets ``request = limit``, because API defaulting of a *Pod* copies limits into missing requests
  (``SetDefaults_Pod``; note: not at Job/JobSet create time, the pod template keeps only the limit);
* app containers are summed;
* init containers run one after another, so the pod needs the largest of them, each counted together
  with the restartable (sidecar, ``restartPolicy: Always``) init containers started before it;
* sidecars keep running, so their requests are also added to the app containers' sum;
* pod-level ``spec.resources.requests`` (PodLevelResources) replace the aggregate for the resources
  that may be set at pod level (cpu, memory, hugepages-*);
* ``spec.overhead`` is added last.

``pods: 1`` is **not** part of ``PodRequests`` (the scheduler's NodeResourcesFit counts the pod slot
separately); ask for it with ``include_pod_slot=True``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from jobsetctl.kube.field import Path
from jobsetctl.kube.quantity import QuantityError, parse_quantity

#: Resources that may be requested at pod level (``IsSupportedPodLevelResource``).
POD_LEVEL_RESOURCES = ("cpu", "memory")
HUGEPAGES_PREFIX = "hugepages-"

#: The scheduler name the API server defaults pod specs to.
DEFAULT_SCHEDULER_NAME = "default-scheduler"
#: ``terminationGracePeriodSeconds`` default (``DefaultTerminationGracePeriodSeconds``).
DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30

Resources = dict[str, Fraction]


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


@dataclass(frozen=True, slots=True)
class ContainerRef:
    """One container of a pod spec and where it is: ``("containers", 2)`` or ``("initContainers", 0)``."""

    container: dict[str, Any]
    path: Path

    @property
    def name(self) -> str:
        name = self.container.get("name")
        return name if isinstance(name, str) else ""

    @property
    def is_init(self) -> bool:
        return self.path[:1] == ("initContainers",)

    @property
    def is_sidecar(self) -> bool:
        return self.is_init and is_restartable_init_container(self.container)


def containers(pod_spec: Any) -> Iterator[ContainerRef]:
    """App containers (``spec.containers``) that are mappings, with their paths relative to the pod spec."""
    for index, container in enumerate(_list(_mapping(pod_spec).get("containers"))):
        if isinstance(container, dict):
            yield ContainerRef(container, ("containers", index))


def init_containers(pod_spec: Any) -> Iterator[ContainerRef]:
    for index, container in enumerate(_list(_mapping(pod_spec).get("initContainers"))):
        if isinstance(container, dict):
            yield ContainerRef(container, ("initContainers", index))


def all_containers(pod_spec: Any) -> Iterator[ContainerRef]:
    """Init containers first, then app containers: the order in which a pod starts them."""
    yield from init_containers(pod_spec)
    yield from containers(pod_spec)


def find_container(pod_spec: Any, name: str) -> ContainerRef | None:
    for ref in all_containers(pod_spec):
        if ref.name == name:
            return ref
    return None


def is_restartable_init_container(container: Any) -> bool:
    """A sidecar: an init container with ``restartPolicy: Always`` (KEP-753)."""
    return _mapping(container).get("restartPolicy") == "Always"


def pod_spec_of_template(template: Any) -> dict[str, Any]:
    """``template.spec`` of a PodTemplateSpec, or an empty mapping."""
    return _mapping(_mapping(template).get("spec"))


# --- resources ------------------------------------------------------------------------------


def _resource_list(value: Any) -> Resources:
    """A ResourceList as exact amounts; unparsable and negative amounts are left out (validation
    rejects them, and a negative request must not lower a sum)."""
    out: Resources = {}
    for name, raw in _mapping(value).items():
        if not isinstance(name, str):
            continue
        try:
            amount = parse_quantity(raw)
        except QuantityError:
            continue
        if amount >= 0:
            out[name] = amount
    return out


def container_requests(container: Any) -> Resources:
    """Effective requests of one container: requests, plus limits for resources without a request."""
    resources = _mapping(_mapping(container).get("resources"))
    effective = _resource_list(resources.get("limits"))
    effective.update(_resource_list(resources.get("requests")))
    return effective


def container_limits(container: Any) -> Resources:
    return _resource_list(_mapping(_mapping(container).get("resources")).get("limits"))


def _add(into: Resources, other: Mapping[str, Fraction]) -> None:
    for name, amount in other.items():
        into[name] = into.get(name, Fraction(0)) + amount


def _max(into: Resources, other: Mapping[str, Fraction]) -> None:
    for name, amount in other.items():
        if amount > into.get(name, Fraction(0)):
            into[name] = amount


def _is_pod_level_resource(name: str) -> bool:
    return name in POD_LEVEL_RESOURCES or name.startswith(HUGEPAGES_PREFIX)


def pod_requests(pod_spec: Any, *, include_overhead: bool = True, include_pod_slot: bool = False) -> Resources:
    """Kubernetes ``PodRequests`` of a pod spec (see the module docstring for the exact semantics)."""
    spec = _mapping(pod_spec)
    total: Resources = {}
    for ref in containers(spec):
        _add(total, container_requests(ref.container))

    sidecars: Resources = {}
    init_peak: Resources = {}
    for ref in init_containers(spec):
        requests = container_requests(ref.container)
        if is_restartable_init_container(ref.container):
            # A sidecar keeps running next to the app containers and the later init containers.
            _add(total, requests)
            _add(sidecars, requests)
            step = dict(sidecars)
        else:
            step = dict(requests)
            _add(step, sidecars)
        _max(init_peak, step)
    _max(total, init_peak)

    pod_level = _mapping(spec.get("resources"))
    if pod_level:
        level = _resource_list(pod_level.get("limits"))
        level.update(_resource_list(pod_level.get("requests")))
        for name, amount in level.items():
            if _is_pod_level_resource(name):
                total[name] = amount

    if include_overhead:
        _add(total, _resource_list(spec.get("overhead")))
    if include_pod_slot:
        total["pods"] = total.get("pods", Fraction(0)) + 1
    return total


def scale(resources: Mapping[str, Fraction], factor: int | Fraction) -> Resources:
    """``resources`` times ``factor`` (per-pod requests times a pod count)."""
    return {name: amount * factor for name, amount in resources.items()}


def add_resources(*lists: Mapping[str, Fraction]) -> Resources:
    total: Resources = {}
    for item in lists:
        _add(total, item)
    return total


# --- env, volumes, placement ----------------------------------------------------------------


def env_entry(container: Any, name: str) -> dict[str, Any] | None:
    """The last ``env`` entry named ``name`` (the kubelet lets a later duplicate win)."""
    found: dict[str, Any] | None = None
    for entry in _list(_mapping(container).get("env")):
        if isinstance(entry, dict) and entry.get("name") == name:
            found = entry
    return found


def env_value(container: Any, name: str) -> str | None:
    """The literal ``value`` of an env var, or None when unset or set through ``valueFrom``."""
    entry = env_entry(container, name)
    if entry is None:
        return None
    value = entry.get("value")
    if value is None and "valueFrom" not in entry:
        return ""  # declared without a value: the kubelet sets it to the empty string
    return value if isinstance(value, str) else None


def volumes(pod_spec: Any) -> list[dict[str, Any]]:
    return [v for v in _list(_mapping(pod_spec).get("volumes")) if isinstance(v, dict)]


def volume(pod_spec: Any, name: str) -> dict[str, Any] | None:
    for item in volumes(pod_spec):
        if item.get("name") == name:
            return item
    return None


def volume_mounts(container: Any) -> list[dict[str, Any]]:
    return [m for m in _list(_mapping(container).get("volumeMounts")) if isinstance(m, dict)]


def tolerations(pod_spec: Any) -> list[dict[str, Any]]:
    return [t for t in _list(_mapping(pod_spec).get("tolerations")) if isinstance(t, dict)]


def node_selector(pod_spec: Any) -> dict[str, str]:
    return {k: v for k, v in _mapping(_mapping(pod_spec).get("nodeSelector")).items()
            if isinstance(k, str) and isinstance(v, str)}


def required_node_selector_terms(pod_spec: Any) -> list[dict[str, Any]]:
    """``affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`` (ORed)."""
    node_affinity = _mapping(_mapping(_mapping(pod_spec).get("affinity")).get("nodeAffinity"))
    required = _mapping(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution"))
    return [t for t in _list(required.get("nodeSelectorTerms")) if isinstance(t, dict)]


def pod_affinity_terms(pod_spec: Any, kind: str = "podAffinity", *, required: bool = True) -> list[dict[str, Any]]:
    """Required (or, with ``required=False``, the ``podAffinityTerm`` of preferred) terms of
    ``podAffinity`` or ``podAntiAffinity``."""
    block = _mapping(_mapping(_mapping(pod_spec).get("affinity")).get(kind))
    if required:
        return [t for t in _list(block.get("requiredDuringSchedulingIgnoredDuringExecution")) if isinstance(t, dict)]
    terms: list[dict[str, Any]] = []
    for weighted in _list(block.get("preferredDuringSchedulingIgnoredDuringExecution")):
        term = _mapping(weighted).get("podAffinityTerm")
        if isinstance(term, dict):
            terms.append(term)
    return terms


# --- scheduling identity --------------------------------------------------------------------


def scheduler_name(pod_spec: Any) -> str:
    name = _mapping(pod_spec).get("schedulerName")
    return name if isinstance(name, str) and name else DEFAULT_SCHEDULER_NAME


def priority_class_name(pod_spec: Any) -> str | None:
    name = _mapping(pod_spec).get("priorityClassName")
    return name if isinstance(name, str) and name else None


def scheduling_group_name(pod_spec: Any) -> str | None:
    """``spec.schedulingGroup.podGroupName`` (Kubernetes 1.36+, scheduling.md §1.2)."""
    name = _mapping(_mapping(pod_spec).get("schedulingGroup")).get("podGroupName")
    return name if isinstance(name, str) and name else None


@dataclass(frozen=True, slots=True)
class WorkloadReference:
    """``spec.workloadRef`` of Kubernetes 1.35 (scheduling.md §1.2 v1alpha1)."""

    name: str
    pod_group: str
    replica_key: str = ""


def workload_reference(pod_spec: Any) -> WorkloadReference | None:
    ref = _mapping(_mapping(pod_spec).get("workloadRef"))
    name, group = ref.get("name"), ref.get("podGroup")
    if not isinstance(name, str) or not isinstance(group, str) or not name or not group:
        return None
    key = ref.get("podGroupReplicaKey")
    return WorkloadReference(name, group, key if isinstance(key, str) else "")


# --- defaulting -----------------------------------------------------------------------------


def default_pod_spec(pod_spec: Any) -> None:
    """The part of ``SetDefaults_PodSpec`` that behaviour depends on, in place; anything else untouched.

    Kept minimal on purpose (what the simulator reads): ``restartPolicy: Always`` (a Job then rejects
    it), ``terminationGracePeriodSeconds: 30``, ``schedulerName: default-scheduler``,
    ``dnsPolicy: ClusterFirst``. Container-level defaults (image pull policy, termination message
    path) and limit-to-request copying are not applied here: the latter happens when a *Pod* is
    created, which :func:`container_requests` models.
    """
    if not isinstance(pod_spec, dict):
        return
    for key, value in (
        ("restartPolicy", "Always"),
        ("terminationGracePeriodSeconds", DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS),
        ("schedulerName", DEFAULT_SCHEDULER_NAME),
        ("dnsPolicy", "ClusterFirst"),
    ):
        # Go sees an explicit null or "" as unset, so those are defaulted too.
        if pod_spec.get(key) in (None, ""):
            pod_spec[key] = value


# --- label selectors ------------------------------------------------------------------------


def label_selector_matches(selector: Any, labels: Mapping[str, Any]) -> bool:
    """``metav1.LabelSelectorAsSelector(selector).Matches(labels)``: matchLabels and matchExpressions
    (In, NotIn, Exists, DoesNotExist) ANDed; an empty selector matches everything. A malformed
    selector matches nothing, as a selector that fails to convert selects no objects."""
    sel = _mapping(selector)
    for key, value in _mapping(sel.get("matchLabels")).items():
        if labels.get(key) != value:
            return False
    for expression in _list(sel.get("matchExpressions")):
        expr = _mapping(expression)
        key, operator = str(expr.get("key")), expr.get("operator")
        values = [v for v in _list(expr.get("values")) if isinstance(v, str)]
        present = key in labels
        if operator == "In":
            if not present or labels.get(key) not in values:
                return False
        elif operator == "NotIn":
            if present and labels.get(key) in values:
                return False
        elif operator == "Exists":
            if not present:
                return False
        elif operator == "DoesNotExist":
            if present:
                return False
        else:
            return False
    return True
