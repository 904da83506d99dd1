"""Whether a queued job can ever fit, from the objects alone: the Kueue lints' arithmetic.

A job Kueue manages, whose LocalQueue leads to an active ClusterQueue that admits its namespace
(:func:`jobsetctl.kueue.queues.route`), gets its Workload built as Kueue builds it; then, per podset in order:

* **a resource no resource group covers**: the flavor assigner's ``resource %s unavailable in ClusterQueue``
  (``findFlavorForPodSets``); the podset can never get a flavor;
* **more than the ClusterQueue can ever hold**: ``fitsResourceQuota``'s ``ExceedsMaxQuota``, with upstream's
  message. The bound used is the one no object outside the inputs can raise: the nominal quota when the
  ClusterQueue is in no cohort, nominal + ``borrowingLimit`` when it is in one (``potentialAvailable`` is at
  most that); a ClusterQueue in a cohort without a borrowing limit is not judged (the cohort's other members
  decide). When the resource group has one flavor, every podset uses it, so earlier podsets' requests are
  counted as upstream's "previously considered podsets requests"; with several flavors each podset is judged
  alone (a lower bound). A podset with ``minCount`` (PartialAdmission) is judged at that count, the fewest
  pods Kueue may admit it with. Flavors whose TAS support does not match the podset are not candidates;
* **a required topology no domain can hold**, only when Nodes are among the inputs or the context: the
  nodes of a TAS flavor (its ``nodeLabels``, not unschedulable, with every level label, their
  NoSchedule/NoExecute taints tolerated by the pod or the flavor), each holding ``min over resources of
  allocatable / request`` pods (``pods`` counted, 110 when a Node does not say), summed per domain of the
  required level as whole slices; the TAS snapshot's ``topology "t" allows to fit only N out of M pod(s)``
  (``notFitMessage``) when the largest domain is too small, with no other workload running.

Not modelled: resource transformations (with any configured the quota lints say nothing), node affinity,
preferred and unconstrained requests (they spread), inner slice layers, pod-level usage already on nodes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.field import Path
from jobsetctl.kube.podspec import pod_requests
from jobsetctl.kube.quantity import QuantityError, parse_quantity
from jobsetctl.kueue import api, queues
from jobsetctl.kueue.jobs import is_managed
from jobsetctl.kueue.workload import queue_name

DEFAULT_MAX_PODS = 110
UNAVAILABLE = "resource {resource} unavailable in ClusterQueue"
#: The flavor assigner's message for a podset that gets no flavor (flavorassigner.go), with its reasons.
NO_FLAVOR = "couldn't assign flavors to pod set {pod_set}: {reasons}"
EXCEEDS = ("insufficient quota for {resource} in flavor {flavor}, previously considered podsets requests "
           "({assumed}) + current podset request ({request}) > maximum capacity ({capacity})")


def _m(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _l(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


@dataclass(frozen=True, slots=True)
class PodSetView:
    """One podset of a queued job, with where it is written."""

    index: int
    name: str
    pod_set: Object
    requests: Mapping[str, int]
    #: Where the podset's pod spec is in the job.
    at: Path
    #: The requests of the fewest pods Kueue may admit: ``minCount`` (PartialAdmission) when set, else all.
    least: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class Queued:
    """A managed job on its way to an active ClusterQueue, with its podsets."""

    cluster_queue: Object
    groups: list[queues.ResourceGroup]
    flavors: Mapping[str, Object | None]
    tas_only: bool
    pod_sets: list[PodSetView]
    kueue: queues.Kueue

    @property
    def cluster_queue_name(self) -> str:
        return str(_m(self.cluster_queue.get("metadata")).get("name", ""))

    @property
    def in_cohort(self) -> bool:
        return bool(_m(self.cluster_queue.get("spec")).get("cohortName"))


def queued(job: Object, ctx: AdmissionContext) -> Queued | None:
    """The job's podsets and its ClusterQueue, when Kueue manages it and nothing before quota blocks it
    (the consequence checks report those blockers)."""
    config = ctx.kueue
    if config is None or not is_managed(job, ctx):
        return None
    queue = queue_name(job)
    meta = _m(job.get("metadata"))
    namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) and meta.get("namespace") \
        else ctx.default_namespace
    kueue = queues.Kueue(ctx.cluster, ctx.default_namespace)
    way = queues.route(str(namespace), queue, kueue, config)
    if not way.usable or way.cluster_queue is None:
        return None
    built = queues.workload_of(job, ctx)
    if built.workload is None:
        return None
    groups = queues.resource_groups(way.cluster_queue)
    flavors = {name: kueue.get(api.RESOURCE_FLAVOR, name) for group in groups for name in group.flavors}
    existing = [f for f in flavors.values() if f is not None]
    tas_only = bool(existing) and all(_m(f.get("spec")).get("topologyName") for f in existing)
    covers_pods = queues.group_for(groups, "pods") is not None
    views = []
    for index, raw in enumerate(_l(_m(built.workload.get("spec")).get("podSets"))):
        pod_set = _m(raw)
        requests = queues.podset_requests(pod_set, config, covers_pods)
        min_count = pod_set.get("minCount")
        least = requests if not isinstance(min_count, int) else \
            queues.podset_requests(pod_set, config, covers_pods, count=min_count)
        views.append(PodSetView(index, str(pod_set.get("name", "")), pod_set, requests,
                                queues.where_in_job(job, index, "spec"), least))
    return Queued(way.cluster_queue, groups, flavors, tas_only, views, kueue)


def _candidates(q: Queued, view: PodSetView, group: queues.ResourceGroup, tas: bool) -> list[str]:
    """The flavors of ``group`` the podset could use as far as TAS goes (all when TAS is off)."""
    out = []
    for name in group.flavors:
        flavor = q.flavors.get(name)
        if flavor is None:
            continue
        if tas and queues.flavor_tas_mismatch(view.pod_set, name, flavor, q.tas_only, True, q.kueue) is not None:
            continue
        out.append(name)
    return out


# ---- resources ------------------------------------------------------------------------------------------


def uncovered(q: Queued) -> Iterator[tuple[PodSetView, str]]:
    """(podset, resource) for every requested resource no resource group covers, resources sorted."""
    for view in q.pod_sets:
        for resource in sorted(view.requests):
            if queues.group_for(q.groups, resource) is None:
                yield view, resource


@dataclass(frozen=True, slots=True)
class Exceeds:
    view: PodSetView
    resource: str
    #: One upstream reason per candidate flavor, sorted as upstream sorts a podset's reasons.
    reasons: list[str]
    #: How the bound was made, per flavor: ``nominal 8 + borrowingLimit 4``.
    bounds: list[str]


def exceeds_max_quota(q: Queued, tas: bool) -> Iterator[Exceeds]:
    """Podsets that exceed what the ClusterQueue could ever give them in every candidate flavor."""
    assumed: dict[tuple[str, str], int] = {}
    for view in q.pod_sets:
        for resource in sorted(view.requests):
            group = queues.group_for(q.groups, resource)
            if group is None:
                continue
            candidates = _candidates(q, view, group, tas)
            if not candidates:
                continue
            request = view.least.get(resource, 0)
            reasons, bounds = [], []
            for flavor in candidates:
                nominal, borrowing = group.quotas.get(flavor, {}).get(resource, (0, None))
                if q.in_cohort and borrowing is None:
                    break
                capacity = nominal + (borrowing or 0) if q.in_cohort else nominal
                before = assumed.get((flavor, resource), 0) if len(group.flavors) == 1 else 0
                if before + request <= capacity:
                    break
                reasons.append(EXCEEDS.format(
                    resource=resource, flavor=flavor, assumed=queues.kueue_quantity_text(resource, before),
                    request=queues.kueue_quantity_text(resource, request),
                    capacity=queues.kueue_quantity_text(resource, capacity)))
                text = f"nominalQuota {queues.kueue_quantity_text(resource, nominal)}"
                if q.in_cohort:
                    text += f" + borrowingLimit {queues.kueue_quantity_text(resource, borrowing or 0)}"
                bounds.append(f"{flavor}: {text}")
            else:
                yield Exceeds(view, resource, sorted(reasons), bounds)
                break
        for resource, request in view.least.items():
            group = queues.group_for(q.groups, resource)
            if group is not None and len(group.flavors) == 1:
                key = (group.flavors[0], resource)
                assumed[key] = assumed.get(key, 0) + request


# ---- topology ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TopologyShortfall:
    view: PodSetView
    flavor: str
    topology: str
    level: str
    fit: int
    needed: int
    unit: str
    nodes: int

    @property
    def message(self) -> str:
        if self.fit == 0:
            return f'topology "{self.topology}" doesn\'t allow to fit any of {self.needed} {self.unit}(s)'
        return f'topology "{self.topology}" allows to fit only {self.fit} out of {self.needed} {self.unit}(s)'


def _quantities(raw: Any) -> dict[str, Fraction]:
    out = {}
    for name, value in _m(raw).items():
        try:
            out[str(name)] = parse_quantity(value)
        except QuantityError:
            continue
    return out


def _tolerated(taint: Mapping[str, Any], tolerations: list[Any]) -> bool:
    if taint.get("effect") not in ("NoSchedule", "NoExecute"):
        return True
    for raw in tolerations:
        toleration = _m(raw)
        effect = toleration.get("effect") or ""
        if effect and effect != taint.get("effect"):
            continue
        key = toleration.get("key") or ""
        if (toleration.get("operator") or "Equal") == "Exists":
            if not key or key == taint.get("key"):
                return True
        elif key == taint.get("key") and (toleration.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def pods_on_node(node: Object, per_pod: Mapping[str, Fraction]) -> int:
    """How many pods of ``per_pod`` requests an empty node holds (its ``pods`` allocatable included)."""
    status = _m(node.get("status"))
    allocatable = _quantities(status.get("allocatable") or status.get("capacity"))
    most = int(allocatable.pop("pods", Fraction(DEFAULT_MAX_PODS)))
    for resource, amount in per_pod.items():
        if amount > 0:
            most = min(most, int(allocatable.get(resource, Fraction(0)) // amount))
    return max(0, most)


def topology_shortfalls(q: Queued, nodes: list[Object]) -> Iterator[TopologyShortfall]:
    """Podsets with a required topology that no domain of any candidate TAS flavor can hold."""
    for view in q.pod_sets:
        request = _m(view.pod_set.get("topologyRequest"))
        level = request.get("required")
        if not isinstance(level, str):
            continue
        shortfalls = []
        candidates = {f for group in q.groups if any(r in group.covered for r in view.requests)
                      for f in _candidates(q, view, group, True)}
        for flavor_name in sorted(candidates):
            shortfall = _flavor_shortfall(q, view, flavor_name, level, nodes)
            if shortfall is None:
                break
            shortfalls.append(shortfall)
        else:
            if shortfalls:
                yield shortfalls[0]


def _flavor_shortfall(q: Queued, view: PodSetView, flavor_name: str, level: str,
                      nodes: list[Object]) -> TopologyShortfall | None:
    flavor_spec = _m(_m(q.flavors.get(flavor_name)).get("spec"))
    topology_name = str(flavor_spec.get("topologyName", ""))
    levels = queues.topology_levels(q.kueue.get(api.TOPOLOGY, topology_name))
    if level not in levels:
        return None
    request = _m(view.pod_set.get("topologyRequest"))
    layers = queues.slice_layers(request)
    slice_size = layers[0][1] if layers and layers[0][1] > 0 else 1
    slice_level = layers[0][0] if layers else levels[-1]
    if slice_level not in levels:
        return None
    depth, slice_depth = levels.index(level) + 1, levels.index(slice_level) + 1
    pod_spec = _m(_m(view.pod_set.get("template")).get("spec"))
    per_pod = pod_requests(pod_spec)
    tolerations = _l(pod_spec.get("tolerations")) + _l(flavor_spec.get("tolerations"))
    wanted = {str(k): v for k, v in _m(flavor_spec.get("nodeLabels")).items()}
    pods_per_slice_domain: dict[tuple[str, ...], int] = {}
    used = 0
    for node in nodes:
        labels = _m(_m(node.get("metadata")).get("labels"))
        if any(labels.get(k) != v for k, v in wanted.items()) or any(lv not in labels for lv in levels):
            continue
        if _m(node.get("spec")).get("unschedulable"):
            continue
        if not all(_tolerated(_m(t), tolerations) for t in _l(_m(node.get("spec")).get("taints"))):
            continue
        used += 1
        key = tuple(str(labels[lv]) for lv in levels[:slice_depth])
        pods_per_slice_domain[key] = pods_per_slice_domain.get(key, 0) + pods_on_node(node, per_pod)
    slices_per_domain: dict[tuple[str, ...], int] = {}
    for key, pods in pods_per_slice_domain.items():
        slices_per_domain[key[:depth]] = slices_per_domain.get(key[:depth], 0) + pods // slice_size
    count = view.pod_set.get("count")
    needed = (count if isinstance(count, int) else 1) // slice_size
    fit = max(slices_per_domain.values(), default=0)
    if fit >= needed:
        return None
    return TopologyShortfall(view, flavor_name, topology_name, level, fit, needed,
                             "pod" if slice_size == 1 else "slice", used)
