"""What the scheduler reads from a Pod, parsed once: requests, placement constraints, affinity terms.

Identical pods from one template share one :class:`StaticSignature` (requests, nodeSelector, required
node affinity, tolerations), so the node-level filters that only look at node labels, taints and
``spec.unschedulable`` run once per signature, not once per pod (issue #5, "cache per-pod signatures").

Resource amounts are integers, as kube-scheduler's ``framework.Resource`` keeps them: CPU in
millicores (``MilliValue``), everything else in whole units (``Value``), both rounded up.
"""

from __future__ import annotations

import marshal
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from jobsetctl.fakecluster.scheduler.selectors import (
    IN,
    NOT_IN,
    LabelSelector,
    RequiredNodeAffinity,
    Requirement,
    compile_label_selector,
    compile_required_node_affinity,
)
from jobsetctl.kube import podspec
from jobsetctl.kube.quantity import ceil_value, milli_value

CPU, MEMORY, PODS = "cpu", "memory", "pods"
#: ``schedutil.DefaultMilliCPURequest`` / ``DefaultMemoryRequest``: what scoring assumes for a container
#: without a request (the "non-zero" requests of NodeResourcesFit scoring).
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
UNSCHEDULABLE_TAINT_KEY = "node.kubernetes.io/unschedulable"

Resources = dict[str, int]


def mapping(value: Any) -> dict[str, Any]:
    """``value`` if it is a mapping, else an empty one (tolerant reads of API objects)."""
    return value if isinstance(value, dict) else {}


def to_units(name: str, amount: Any) -> int:
    """One quantity (a ``Fraction`` from :mod:`podspec` or a raw manifest value) in scheduler units."""
    from jobsetctl.kube.quantity import QuantityError, parse_quantity

    try:
        value = amount if not isinstance(amount, str | int | float) else parse_quantity(amount)
    except QuantityError:
        return 0
    return milli_value(value) if name == CPU else ceil_value(value)


def resource_list(raw: Any) -> Resources:
    """A ``ResourceList`` (node allocatable) in scheduler units; unparsable entries are dropped."""
    out: Resources = {}
    if isinstance(raw, dict):
        for name, amount in raw.items():
            if isinstance(name, str):
                out[name] = to_units(name, amount)
    return out


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str
    operator: str  # Equal or Exists
    value: str
    effect: str  # "" tolerates every effect

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.operator == "Exists":
            return not self.key or self.key == taint.key
        return self.key == taint.key and self.value == taint.value


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str

    @property
    def blocks_scheduling(self) -> bool:
        """NoSchedule and NoExecute filter; PreferNoSchedule only scores (not modelled)."""
        return self.effect in ("NoSchedule", "NoExecute")


def parse_tolerations(pod_spec: Any) -> tuple[Toleration, ...]:
    out: list[Toleration] = []
    for raw in podspec.tolerations(pod_spec):
        key, operator = raw.get("key") or "", raw.get("operator") or "Equal"
        value, effect = raw.get("value") or "", raw.get("effect") or ""
        if all(isinstance(x, str) for x in (key, operator, value, effect)):
            out.append(Toleration(key, operator, value, effect))
    return tuple(out)


def parse_taints(node_spec: Any) -> tuple[Taint, ...]:
    raw_taints = node_spec.get("taints") if isinstance(node_spec, dict) else None
    out: list[Taint] = []
    for raw in raw_taints if isinstance(raw_taints, list) else []:
        if isinstance(raw, dict) and isinstance(raw.get("key"), str):
            out.append(Taint(raw["key"], str(raw.get("value") or ""), str(raw.get("effect") or "")))
    return tuple(out)


def tolerates_all(tolerations: tuple[Toleration, ...], taints: tuple[Taint, ...]) -> Taint | None:
    """The first NoSchedule/NoExecute taint none of the tolerations tolerates, else None."""
    for taint in taints:
        if taint.blocks_scheduling and not any(t.tolerates(taint) for t in tolerations):
            return taint
    return None


@dataclass(slots=True, eq=False)
class StaticSignature:
    """The parts of a pod spec that node-level filters and resource fit depend on."""

    key: str
    requests: Resources
    #: Non-zero CPU (millicores) and memory requests used by LeastAllocated scoring.
    nonzero_cpu: int
    nonzero_memory: int
    node_affinity: RequiredNodeAffinity
    tolerations: tuple[Toleration, ...]
    #: Per-node results of the static filters, valid for one node-set generation (see :mod:`.snapshot`).
    static_cache: dict[str, Any] = field(default_factory=dict)

    @property
    def tolerates_unschedulable(self) -> bool:
        probe = Taint(UNSCHEDULABLE_TAINT_KEY, "", "NoSchedule")
        return any(t.tolerates(probe) for t in self.tolerations)


def _nonzero(pod_spec: Mapping[str, Any]) -> tuple[int, int]:
    """``GetNonzeroRequests`` summed like PodRequests (app containers summed, init containers max)."""
    def container_nonzero(container: Any) -> tuple[int, int]:
        requests = podspec.container_requests(container)
        cpu = milli_value(requests[CPU]) if CPU in requests else DEFAULT_MILLI_CPU_REQUEST
        memory = ceil_value(requests[MEMORY]) if MEMORY in requests else DEFAULT_MEMORY_REQUEST
        return cpu, memory

    cpu = memory = 0
    for ref in podspec.containers(pod_spec):
        c, m = container_nonzero(ref.container)
        cpu, memory = cpu + c, memory + m
    for ref in podspec.init_containers(pod_spec):
        c, m = container_nonzero(ref.container)
        cpu, memory = max(cpu, c), max(memory, m)
    overhead = resource_list(pod_spec.get("overhead"))
    return cpu + overhead.get(CPU, 0), memory + overhead.get(MEMORY, 0)


_SIGNATURES: dict[str, StaticSignature] = {}
#: The same signatures by the ``marshal`` bytes of the relevant parts: equal bytes load back to equal
#: parts, hence the same repr key, and marshalling costs well under half the repr (about 2 µs against
#: 5 µs for a pod of the contended day, two lookups per pod: the scheduler's and the ledger's).
_SIGNATURES_BY_BYTES: dict[bytes, StaticSignature] = {}
_MAX_SIGNATURES = 50_000


def static_signature(pod_spec: Mapping[str, Any]) -> StaticSignature:
    """The shared signature of a pod spec (cached process-wide by the repr of the relevant parts;
    pods from one template produce the same text because the controllers copy dicts in order)."""
    parts = (
        [c.get("resources") for c in pod_spec.get("containers") or [] if isinstance(c, dict)],
        [(c.get("resources"), c.get("restartPolicy")) for c in pod_spec.get("initContainers") or []
         if isinstance(c, dict)],
        pod_spec.get("overhead"), pod_spec.get("resources"), pod_spec.get("nodeSelector"),
        (pod_spec.get("affinity") or {}).get("nodeAffinity") if isinstance(pod_spec.get("affinity"), dict) else None,
        pod_spec.get("tolerations"),
    )
    try:
        # Version 2: no back-references, so equal parts always give equal bytes.
        raw: bytes | None = marshal.dumps(parts, 2)
    except ValueError:  # a type marshal does not take (a dict subclass...): the repr alone decides
        raw = None
    if raw is not None:
        found = _SIGNATURES_BY_BYTES.get(raw)
        if found is not None:
            return found
    key = repr(parts)
    found = _SIGNATURES.get(key)
    if found is None:
        found = _new_signature(key, pod_spec)
    if raw is not None:
        if len(_SIGNATURES_BY_BYTES) >= _MAX_SIGNATURES:
            _SIGNATURES_BY_BYTES.clear()
        _SIGNATURES_BY_BYTES[raw] = found
    return found


def _new_signature(key: str, pod_spec: Mapping[str, Any]) -> StaticSignature:
    requests = {name: to_units(name, amount) for name, amount in podspec.pod_requests(pod_spec).items()
                if name != PODS}
    requests = {name: amount for name, amount in requests.items() if amount > 0}
    nonzero_cpu, nonzero_memory = _nonzero(pod_spec)
    signature = StaticSignature(
        key, requests, nonzero_cpu, nonzero_memory,
        compile_required_node_affinity(podspec.node_selector(pod_spec), pod_spec.get("affinity")),
        parse_tolerations(pod_spec),
    )
    if len(_SIGNATURES) >= _MAX_SIGNATURES:
        _SIGNATURES.clear()
    _SIGNATURES[key] = signature
    return signature


NamespaceLabels = Callable[[str], Mapping[str, str]]


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """A required pod (anti-)affinity term with its ``matchLabelKeys`` already merged in.

    ``namespaces`` plus ``namespace_selector`` decide which pods the term can see (scheduling.md §3.3):
    an empty list and a null selector mean the owning pod's namespace; ``namespaceSelector: {}`` means
    every namespace.
    """

    selector: LabelSelector
    namespaces: frozenset[str]
    namespace_selector: LabelSelector
    topology_key: str

    def matches(self, namespace: str, labels: Mapping[str, str], namespace_labels: NamespaceLabels) -> bool:
        if namespace not in self.namespaces:
            if self.namespace_selector.nothing:
                return False
            if not self.namespace_selector.is_everything and not self.namespace_selector.matches(
                    namespace_labels(namespace)):
                return False
        return self.selector.matches(labels)


def parse_affinity_terms(
    pod_spec: Mapping[str, Any], kind: str, own_namespace: str, own_labels: Mapping[str, str],
) -> tuple[AffinityTerm, ...]:
    """Required terms of ``podAffinity``/``podAntiAffinity``.

    ``matchLabelKeys``/``mismatchLabelKeys``: the API server merges them into the selector at pod
    creation (scheduling.md §3.3, the pod admission engineer's code). We evaluate the merged selector
    and, for pods created without that merge, merge on read — but only keys the selector does not
    already constrain, so a merged selector is never merged twice.
    """
    out: list[AffinityTerm] = []
    for raw in podspec.pod_affinity_terms(pod_spec, kind):
        selector = compile_label_selector(raw.get("labelSelector"))
        constrained = {r.key for r in selector.requirements}
        extra: list[Requirement] = []
        for list_name, operator in (("matchLabelKeys", IN), ("mismatchLabelKeys", NOT_IN)):
            keys = raw.get(list_name)
            for key in keys if isinstance(keys, list) else []:
                if isinstance(key, str) and key in own_labels and key not in constrained and not selector.nothing:
                    extra.append(Requirement(key, operator, frozenset({own_labels[key]})))
        if extra:
            selector = selector.with_requirements(tuple(extra))
        namespaces_raw = raw.get("namespaces")
        namespaces = frozenset(n for n in namespaces_raw if isinstance(n, str)) if isinstance(
            namespaces_raw, list) else frozenset()
        raw_ns_selector = raw.get("namespaceSelector")
        if not namespaces and raw_ns_selector is None:
            namespaces = frozenset({own_namespace})
        topology_key = raw.get("topologyKey")
        out.append(AffinityTerm(
            selector, namespaces, compile_label_selector(raw_ns_selector),
            topology_key if isinstance(topology_key, str) else "",
        ))
    return tuple(out)


def timestamp_seconds(value: Any, seconds_of: Callable[[str], float]) -> float | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return seconds_of(value)
    except ValueError:
        return None


@dataclass(slots=True, eq=False)
class PodInfo:
    """One pod as the scheduler sees it. ``obj`` is the API server's dict (shared, never copied)."""

    uid: str
    namespace: str
    name: str
    obj: dict[str, Any]
    labels: dict[str, str]
    priority: int
    preempt_never: bool
    scheduler_name: str
    static: StaticSignature
    affinity: tuple[AffinityTerm, ...]
    anti_affinity: tuple[AffinityTerm, ...]
    #: Virtual second the pod was created (queue order tie-break, group member order).
    created: float
    #: Order in which the scheduler first saw the pod (stable tie-break everywhere).
    seq: int
    node_name: str | None = None
    #: When the pod was bound (or its ``status.startTime``): the "start time" of preemption ordering.
    started: float | None = None
    #: Set while the pod is deleted gracefully (its resources stay in use until it is gone).
    terminating: bool = False
    #: The scheduling group (gang) key, resolved by :mod:`.groups`, or None.
    group: tuple[str, ...] | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def requests(self) -> Resources:
        return self.static.requests

    @property
    def has_affinity_terms(self) -> bool:
        return bool(self.affinity or self.anti_affinity)


def _labels_of(obj: dict[str, Any]) -> dict[str, str]:
    md = mapping(obj.get("metadata"))
    labels = md.get("labels") if isinstance(md, dict) else None
    return {k: v for k, v in labels.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(
        labels, dict) else {}


def build_pod_info(
    obj: dict[str, Any], seq: int, seconds_of: Callable[[str], float],
    resolve_priority: Callable[[str | None], tuple[int, str]],
) -> PodInfo:
    """Parse a Pod. ``resolve_priority`` maps a priorityClassName to (priority, preemptionPolicy) for
    pods that reached us without ``spec.priority`` (pod admission normally fills it in)."""
    md = mapping(obj.get("metadata"))
    spec = mapping(obj.get("spec"))
    status = mapping(obj.get("status"))
    namespace, name = str(md.get("namespace") or ""), str(md.get("name") or "")
    labels = _labels_of(obj)
    priority = spec.get("priority")
    policy = spec.get("preemptionPolicy")
    if not isinstance(priority, int) or isinstance(priority, bool):
        priority, default_policy = resolve_priority(podspec.priority_class_name(spec))
        policy = policy or default_policy
    created = timestamp_seconds(md.get("creationTimestamp"), seconds_of)
    info = PodInfo(
        uid=str(md.get("uid") or f"{namespace}/{name}"), namespace=namespace, name=name, obj=obj,
        labels=labels, priority=int(priority), preempt_never=policy == "Never",
        scheduler_name=podspec.scheduler_name(spec), static=static_signature(spec),
        affinity=parse_affinity_terms(spec, "podAffinity", namespace, labels),
        anti_affinity=parse_affinity_terms(spec, "podAntiAffinity", namespace, labels),
        created=created if created is not None else 0.0, seq=seq,
    )
    node_name = spec.get("nodeName")
    info.node_name = node_name if isinstance(node_name, str) and node_name else None
    info.started = timestamp_seconds(status.get("startTime"), seconds_of)
    info.terminating = bool(md.get("deletionTimestamp"))
    return info


def pod_phase(obj: dict[str, Any]) -> str:
    status = obj.get("status")
    phase = status.get("phase") if isinstance(status, dict) else None
    return phase if isinstance(phase, str) else ""


def is_terminal(obj: dict[str, Any]) -> bool:
    return pod_phase(obj) in ("Succeeded", "Failed")
