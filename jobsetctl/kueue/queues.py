"""What Kueue concludes from its queue objects alone, before any workload runs: the checks of validate's
``consequence`` layer (:mod:`jobsetctl.kueue.references`) and the Kueue lints read them from here.

Everything is read through a :class:`~jobsetctl.kinds.interface.ClusterView` (validate: the inputs, the
context and nothing else; render: the fake API server) and every Kueue object through
:func:`jobsetctl.kueue.versions.to_v1beta2`, so ``v1beta1`` and ``v1beta2`` objects mix.

Upstream, in the order a queued job meets it (kubernetes-sigs/kueue at the spec's snapshot):

* the Workload's queue: ``WorkloadReconciler.getQueueBlocker`` (pkg/controller/core/workload_controller.go):
  ``LocalQueue %s doesn't exist`` and ``ClusterQueue %s doesn't exist`` (reason ``Misconfigured``),
  ``ClusterQueue %s is inactive`` (reason ``Suspended``); a LocalQueue whose ClusterQueue is missing is
  ``Active=False``, reason ``ClusterQueueDoesNotExist``, ``Can't submit new workloads to clusterQueue``
  (localqueue_controller.go);
* a ClusterQueue's ``Active`` condition (pkg/cache/scheduler/clusterqueue.go ``inactiveReason``):
  ``Can't admit new workloads: <part>, <part>.`` with the parts ``references missing ResourceFlavor(s): a,b``
  (``FlavorNotFound``), ``references missing AdmissionCheck(s): x`` (``AdmissionCheckNotFound``), the
  MultiKueue combinations, and under TopologyAwareScheduling ``there is no Topology "t" for TAS flavor
  "f"`` (``TopologyNotFound``); ``is stopped`` (a ``stopPolicy``) is the administrator's choice: part of the
  message, never reported on its own;
* the scheduler's admissibility check (pkg/workload/resources.go ``ValidateAdmissibility``): ``workload
  namespace doesn't match ClusterQueue selector``; a ClusterQueue without ``namespaceSelector`` selects no
  namespace (clusterqueue_types.go: "Defaults to null which is a nothing selector");
* the flavor assigner's TAS match (pkg/scheduler/flavorassigner/tas_flavorassigner.go
  ``checkPodSetAndFlavorMatchForTAS``) and the TAS snapshot's level checks
  (pkg/cache/scheduler/tas_flavor_snapshot.go ``HasLevel``, ``findTopologyAssignment``,
  ``buildSliceSizeAtLevel``);
* the quota bound (``fitsResourceQuota``, ``potentialAvailable``): ``insufficient quota for %s in flavor %s,
  previously considered podsets requests (%s) + current podset request (%s) > maximum capacity (%s)``.

Not modelled here (the simulation engine has them): the flavor assigner's taint and node-affinity checks,
resource transformations, quota left to a workload by the others, inactive AdmissionChecks (their
controllers decide).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from jobsetctl.kinds.interface import AdmissionContext, ClusterView, Object
from jobsetctl.kube.field import Path
from jobsetctl.kube.podspec import label_selector_matches, pod_requests
from jobsetctl.kube.quantity import QuantityError, ceil_value, format_quantity, milli_value, parse_quantity
from jobsetctl.kueue import api
from jobsetctl.kueue.config import KueueConfiguration
from jobsetctl.kueue.jobs import namespace_labels
from jobsetctl.kueue.versions import to_v1beta2
from jobsetctl.kueue.workload import BuiltWorkload, build_workload

MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"

# Reasons (apis/kueue/v1beta2 constants).
MISCONFIGURED = "Misconfigured"
SUSPENDED = "Suspended"
EXCEEDS_MAX_QUOTA = "ExceedsMaxQuota"
CLUSTER_QUEUE_DOES_NOT_EXIST = "ClusterQueueDoesNotExist"
LOCAL_QUEUE_INACTIVE_MESSAGE = "Can't submit new workloads to clusterQueue"
NAMESPACE_MISMATCH = "workload namespace doesn't match ClusterQueue selector"


def _m(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _l(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _s(value: Any) -> str:
    return value if isinstance(value, str) else ""


# ---- lookups ---------------------------------------------------------------------------------------


class Kueue:
    """Kueue's objects in a cluster view, as ``v1beta2``."""

    def __init__(self, cluster: ClusterView | None, default_namespace: str = "default") -> None:
        self.cluster = cluster
        self.default_namespace = default_namespace

    def get(self, kind: str, name: str, namespace: str = "") -> Object | None:
        if self.cluster is None or not name:
            return None
        found = self.cluster.get(api.GROUP, kind, namespace, name)
        return to_v1beta2(found) if found is not None else None

    def list(self, kind: str) -> list[Object]:
        if self.cluster is None:
            return []
        return [to_v1beta2(obj) for obj in self.cluster.list(api.GROUP, kind)]


def cluster_queue_name(local_queue: Object) -> str:
    return _s(_m(local_queue.get("spec")).get("clusterQueue"))


def namespace_selected(cluster_queue: Object, namespace: str, cluster: ClusterView | None) -> bool:
    """``ValidateAdmissibility``'s selector test: no ``namespaceSelector`` selects nothing."""
    selector = _m(cluster_queue.get("spec")).get("namespaceSelector")
    if selector is None:
        return False
    return label_selector_matches(selector, namespace_labels(namespace, cluster))


# ---- a ClusterQueue's Active condition -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Missing:
    """An object a ClusterQueue refers to that is not there (``unresolved`` of a finding)."""

    kind: str
    name: str
    #: Where the ClusterQueue names it.
    at: Path


@dataclass(slots=True)
class Inactive:
    """Why a ClusterQueue is not active (``updateQueueStatus``, ``inactiveReason``), reasons in upstream order.
    ``parts`` are empty when it is active."""

    reasons: list[str] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)
    missing: list[Missing] = field(default_factory=list)
    #: Where each part points in the ClusterQueue (the first reference it is about).
    part_at: list[Path] = field(default_factory=list)
    #: A ``stopPolicy`` holds it: the administrator's choice, never reported on its own.
    stopped: bool = False

    @property
    def message(self) -> str:
        return f"Can't admit new workloads: {', '.join(self.parts)}."

    @property
    def reason(self) -> str:
        return self.reasons[0] if self.reasons else "Ready"

    @property
    def blocking(self) -> bool:
        """Inactive for a reason other than its stopPolicy: a mistake in the objects."""
        return len(self.parts) > (1 if self.stopped else 0)

    def add(self, reason: str, part: str, at: Path) -> None:
        self.reasons.append(reason)
        self.parts.append(part)
        self.part_at.append(at)


def flavor_references(cluster_queue: Object) -> Iterator[tuple[str, Path]]:
    """Every flavor name in ``resourceGroups``, in order, with its path."""
    for g, group in enumerate(_l(_m(cluster_queue.get("spec")).get("resourceGroups"))):
        for f, flavor in enumerate(_l(_m(group).get("flavors"))):
            name = _s(_m(flavor).get("name"))
            if name:
                yield name, ("spec", "resourceGroups", g, "flavors", f, "name")


def admission_check_references(cluster_queue: Object) -> dict[str, tuple[set[str], Path]]:
    """``admissionChecksStrategy.admissionChecks``: name → (flavors it applies to, '' set = all; path)."""
    out: dict[str, tuple[set[str], Path]] = {}
    strategy = _m(_m(cluster_queue.get("spec")).get("admissionChecksStrategy"))
    for i, rule in enumerate(_l(strategy.get("admissionChecks"))):
        name = _s(_m(rule).get("name"))
        if name:
            flavors = {f for f in _l(_m(rule).get("onFlavors")) if isinstance(f, str)}
            out[name] = (flavors, ("spec", "admissionChecksStrategy", "admissionChecks", i, "name"))
    return out


def inactive(cluster_queue: Object, kueue: Kueue, config: KueueConfiguration) -> Inactive:
    """Why a ClusterQueue is not active (no parts when it is)."""
    out = Inactive()
    stop_policy = _m(cluster_queue.get("spec")).get("stopPolicy")
    if stop_policy in ("Hold", "HoldAndDrain"):
        out.add("Stopped", "is stopped", ("spec", "stopPolicy"))
        out.stopped = True
    missing_flavors: list[tuple[str, Path]] = []
    tas_flavors: dict[str, tuple[str, Path]] = {}
    for name, at in flavor_references(cluster_queue):
        flavor = kueue.get(api.RESOURCE_FLAVOR, name)
        if flavor is None:
            missing_flavors.append((name, at))
            continue
        topology = _s(_m(flavor.get("spec")).get("topologyName"))
        if topology:
            tas_flavors[name] = (topology, at)
    if missing_flavors:
        out.add("FlavorNotFound", "references missing ResourceFlavor(s): " + ",".join(n for n, _ in missing_flavors),
                missing_flavors[0][1])
        out.missing.extend(Missing(api.RESOURCE_FLAVOR, n, at) for n, at in missing_flavors)

    checks = admission_check_references(cluster_queue)
    missing_checks = sorted(name for name in checks if kueue.get(api.ADMISSION_CHECK, name) is None)
    if missing_checks:
        out.add("AdmissionCheckNotFound", "references missing AdmissionCheck(s): " + ",".join(missing_checks),
                checks[missing_checks[0]][1])
        out.missing.extend(Missing(api.ADMISSION_CHECK, n, checks[n][1]) for n in missing_checks)
    controllers = {name: _s(_m(_m(kueue.get(api.ADMISSION_CHECK, name)).get("spec")).get("controllerName"))
                   for name in checks if name not in missing_checks}
    multikueue = sorted(n for n, c in controllers.items() if c == MULTIKUEUE_CONTROLLER)
    provisioning = sorted(n for n, c in controllers.items() if c == PROVISIONING_CONTROLLER)
    all_flavors = {name for name, _ in flavor_references(cluster_queue)}
    per_flavor = sorted(n for n in multikueue if (checks[n][0] or all_flavors) != all_flavors)
    if len(multikueue) > 1:
        out.add("MultipleMultiKueueAdmissionChecks", "Cannot use multiple MultiKueue AdmissionChecks on the same "
                f"ClusterQueue, found: {','.join(multikueue)}", checks[multikueue[1]][1])
    if per_flavor:
        out.add("MultiKueueAdmissionCheckAppliedPerFlavor",
                f"Cannot specify MultiKueue AdmissionCheck per flavor, found: {','.join(per_flavor)}",
                checks[per_flavor[0]][1])
    if multikueue and provisioning:
        out.add("MultiKueueWithProvisioningRequest", "Cannot use both MultiKueue and ProvisioningRequest "
                f"AdmissionChecks together, found: {','.join(multikueue)}, {','.join(provisioning)}",
                checks[provisioning[0]][1])
    if config.gate("TopologyAwareScheduling"):
        # Upstream iterates a Go map here: the parts come in no fixed order. Sorted by flavor for stable output.
        missing_topologies = [(name, *tas_flavors[name]) for name in sorted(tas_flavors)
                              if kueue.get(api.TOPOLOGY, tas_flavors[name][0]) is None]
        # isTASViolated: with a MultiKueue check, topology is the worker clusters' business; the parts are still
        # in the message when the queue is inactive for another reason.
        if missing_topologies and (out.parts or not multikueue):
            for name, topology, at in missing_topologies:
                out.add("TopologyNotFound", f'there is no Topology "{topology}" for TAS flavor "{name}"', at)
                out.missing.append(Missing(api.TOPOLOGY, topology, at))
    return out


# ---- the queue a job goes to -----------------------------------------------------------------------


@dataclass(slots=True)
class Route:
    """Where a workload of ``namespace`` submitted to LocalQueue ``queue`` ends up."""

    namespace: str
    queue: str
    local_queue: Object | None = None
    cluster_queue_name: str = ""
    cluster_queue: Object | None = None
    inactive: Inactive | None = None
    selected: bool = True

    @property
    def usable(self) -> bool:
        """The ClusterQueue exists, is active and admits the namespace: quota is what decides next."""
        return self.cluster_queue is not None and not (self.inactive and self.inactive.blocking) and self.selected


def route(namespace: str, queue: str, kueue: Kueue, config: KueueConfiguration) -> Route:
    out = Route(namespace, queue)
    out.local_queue = kueue.get(api.LOCAL_QUEUE, queue, namespace)
    if out.local_queue is None:
        return out
    out.cluster_queue_name = cluster_queue_name(out.local_queue)
    out.cluster_queue = kueue.get(api.CLUSTER_QUEUE, out.cluster_queue_name)
    if out.cluster_queue is None:
        return out
    out.inactive = inactive(out.cluster_queue, kueue, config)
    out.selected = namespace_selected(out.cluster_queue, namespace, kueue.cluster)
    return out


# ---- the Workload of a job, once per run -------------------------------------------------------------

_BUILT: dict[tuple[int, int], tuple[Object, ClusterView | None, BuiltWorkload]] = {}


def workload_of(job: Object, ctx: AdmissionContext) -> BuiltWorkload:
    """:func:`~jobsetctl.kueue.workload.build_workload` memoised for the run (a TrainJob expands its runtime)."""
    key = (id(job), id(ctx.cluster))
    cached = _BUILT.get(key)
    if cached is not None and cached[0] is job and cached[1] is ctx.cluster:
        return cached[2]
    built = build_workload(job, ctx)
    _BUILT[key] = (job, ctx.cluster, built)  # holding the objects keeps their ids from being reused
    return built


def forget_workloads() -> None:
    _BUILT.clear()


# ---- podsets: requests, flavors, topology ------------------------------------------------------------


def kueue_amount(resource: str, value: Fraction) -> int:
    """How Kueue stores a quantity (``resources.Requests``): CPU in millicores, everything else in units,
    rounded up."""
    return milli_value(value) if resource == "cpu" else ceil_value(value)


def kueue_quantity_text(resource: str, amount: int) -> str:
    """``ResourceFormatter.ResourceQuantityString``: millicores for CPU; memory, ephemeral-storage and
    hugepages through ``newCanonicalQuantity`` (BinarySI text parsed again: binary when a multiple of 1024,
    so 1e9 bytes read ``1G``); decimal otherwise."""
    if resource == "cpu":
        return format_quantity(Fraction(amount, 1000))
    binary = resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-")
    return format_quantity(Fraction(amount), binary=binary and amount % 1024 == 0)


def podset_requests(pod_set: Object, config: KueueConfiguration, covers_pods: bool,
                    count: int | None = None) -> dict[str, int]:
    """A podset's total requests as Kueue counts them (per-pod ``PodRequests`` × count, excluded prefixes
    dropped, ``pods`` = count when the ClusterQueue covers ``pods``); zero requests left out. ``count``
    replaces the podset's (e.g. its ``minCount``)."""
    if count is None:
        raw_count = pod_set.get("count")
        count = raw_count if isinstance(raw_count, int) else 1
    per_pod = pod_requests(_m(_m(pod_set.get("template")).get("spec")))
    excluded = config.resources.exclude_resource_prefixes if config.resources is not None else ()
    out: dict[str, int] = {}
    for name, value in per_pod.items():
        if value > 0 and not name.startswith(tuple(excluded)):
            out[name] = kueue_amount(name, value) * count
    if covers_pods:
        out["pods"] = count
    return out


@dataclass(frozen=True, slots=True)
class ResourceGroup:
    covered: tuple[str, ...]
    flavors: tuple[str, ...]
    #: flavor → resource → (nominal, borrowingLimit or None), in Kueue's units.
    quotas: Mapping[str, Mapping[str, tuple[int, int | None]]]


def resource_groups(cluster_queue: Object) -> list[ResourceGroup]:
    out: list[ResourceGroup] = []
    for group in _l(_m(cluster_queue.get("spec")).get("resourceGroups")):
        covered = tuple(r for r in _l(_m(group).get("coveredResources")) if isinstance(r, str))
        flavors: list[str] = []
        quotas: dict[str, dict[str, tuple[int, int | None]]] = {}
        for flavor in _l(_m(group).get("flavors")):
            name = _s(_m(flavor).get("name"))
            flavors.append(name)
            per_resource = quotas.setdefault(name, {})
            for resource in _l(_m(flavor).get("resources")):
                resource_name = _s(_m(resource).get("name"))
                nominal = _amount(resource_name, _m(resource).get("nominalQuota"))
                limit = _m(resource).get("borrowingLimit")
                per_resource[resource_name] = (nominal or 0, _amount(resource_name, limit) if limit is not None else None)
        out.append(ResourceGroup(covered, tuple(flavors), quotas))
    return out


def _amount(resource: str, raw: Any) -> int | None:
    try:
        return kueue_amount(resource, parse_quantity(raw))
    except QuantityError:
        return None


def group_for(groups: list[ResourceGroup], resource: str) -> ResourceGroup | None:
    """``RGByResource``."""
    return next((g for g in groups if resource in g.covered), None)


def explicitly_requests_tas(pod_set: Object) -> bool:
    """``IsExplicitlyRequestingTAS``."""
    request = _m(pod_set.get("topologyRequest"))
    return any(key in request for key in ("unconstrained", "required", "preferred", "podSetSliceRequiredTopology",
                                          "podSetSliceSize", "podsetSliceRequiredTopologyConstraints"))


def topology_levels(topology: Object | None) -> list[str]:
    return [_s(_m(level).get("nodeLabel")) for level in _l(_m(_m(topology).get("spec")).get("levels"))]


def slice_layers(request: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(level, size) per slice layer, ``PodSetSliceRequiredTopologyConstraints``: the multi-layer list, else the single slice layer."""
    layers = request.get("podsetSliceRequiredTopologyConstraints")
    if isinstance(layers, list) and layers:
        return [(_s(_m(layer).get("topology")), int(_m(layer).get("size") or 0)) for layer in layers]
    if isinstance(request.get("podSetSliceRequiredTopology"), str):
        size = request.get("podSetSliceSize")
        return [(request["podSetSliceRequiredTopology"], size if isinstance(size, int) else 0)]
    return []


def level_key(request: Mapping[str, Any], levels: list[str]) -> str | None:
    """``levelKey``: required, preferred, the highest level for a slice-only request, the lowest for
    unconstrained."""
    if isinstance(request.get("required"), str):
        return str(request["required"])
    if isinstance(request.get("preferred"), str):
        return str(request["preferred"])
    if slice_layers(request) and not request.get("unconstrained"):
        return levels[0] if levels else None
    if request.get("unconstrained"):
        return levels[-1] if levels else None
    return None


def has_level(pod_set: Object, levels: list[str]) -> bool:
    """``TASFlavorSnapshot.HasLevel``: the podset's level, its slice level and every slice layer's level are
    levels of the flavor's Topology."""
    request = _m(pod_set.get("topologyRequest"))
    main = level_key(request, levels)
    layers = slice_layers(request)
    slice_key = layers[0][0] if layers else (levels[-1] if levels else "")
    return main is not None and main in levels and slice_key in levels and all(t in levels for t, _ in layers)


def tas_level_problem(pod_set: Object, levels: list[str]) -> str | None:
    """For a podset :func:`has_level` accepts: ``findTopologyAssignment``'s and ``buildSliceSizeAtLevel``'s
    checks that need no node, verbatim (a slice level above the podset level, inner slice layers out of
    order or not dividing the layer above)."""
    request = _m(pod_set.get("topologyRequest"))
    main = level_key(request, levels)
    layers = slice_layers(request)
    slice_key = layers[0][0] if layers else levels[-1]
    if main is None:
        return None
    if levels.index(main) > levels.index(slice_key):
        return f"podset slice topology {slice_key} is above the podset topology {main}"
    previous_size, previous_level = (layers[0][1], levels.index(slice_key)) if layers else (1, len(levels) - 1)
    for topology, size in layers[1:]:
        index = levels.index(topology)
        if index <= previous_level:
            return f"additional slice layer topology {topology} must be at a lower level than {levels[previous_level]}"
        if size and previous_size % size:
            return f"additional slice layer size {size} must evenly divide parent layer size {previous_size}"
        previous_size, previous_level = size, index
    return None


def slice_remainder(pod_set: Object) -> tuple[int, int] | None:
    """(slice size, pods left over) when the podset's count is not a multiple of its outermost slice size:
    the scheduler places ``count div size`` slices (``findLevelWithFitDomains``), KEP-2724 requires the
    size to divide the count."""
    layers = slice_layers(_m(pod_set.get("topologyRequest")))
    count = pod_set.get("count")
    if not layers or not isinstance(count, int) or layers[0][1] <= 0 or count % layers[0][1] == 0:
        return None
    return layers[0][1], count % layers[0][1]


def flavor_tas_mismatch(pod_set: Object, flavor_name: str, flavor: Object | None, tas_only: bool,
                        overlaps: bool, kueue: Kueue) -> str | None:
    """``checkPodSetAndFlavorMatchForTAS`` for a flavor that exists (``overlaps``: the podset requests a
    resource of the flavor's resource group; ``tas_only``: every flavor of the ClusterQueue is a TAS flavor)."""
    spec = _m(_m(flavor).get("spec"))
    topology_name = _s(spec.get("topologyName"))
    explicit = explicitly_requests_tas(pod_set)
    if explicit or tas_only:
        if not explicit and tas_only:
            return None  # implied TAS: any flavor of a TAS-only ClusterQueue matches
        if not topology_name:
            return None if not overlaps else f'Flavor "{flavor_name}" does not support TopologyAwareScheduling'
        topology = kueue.get(api.TOPOLOGY, topology_name)
        if topology is None:
            return f'Flavor "{flavor_name}" information missing in TAS cache'
        levels = topology_levels(topology)
        if not has_level(pod_set, levels):
            return f'Flavor "{flavor_name}" does not contain the requested level'
        return tas_level_problem(pod_set, levels)
    if topology_name:
        return f'Flavor "{flavor_name}" supports only TopologyAwareScheduling'
    return None


def where_in_job(job: Object, index: int, *tail: str) -> Path:
    """Where podset ``index``'s pod template (then ``tail``, e.g. ``metadata``, ``annotations``) is written in
    the job; a TrainJob's podsets come from its runtime, so its ``spec.runtimeRef.name``."""
    kind = job.get("kind")
    if kind == "JobSet":
        return ("spec", "replicatedJobs", index, "template", "spec", "template", *tail)
    if kind == "Job":
        return ("spec", "template", *tail)
    return ("spec", "runtimeRef", "name")
