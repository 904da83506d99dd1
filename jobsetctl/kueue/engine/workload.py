"""A Workload as the engine sees it (``pkg/workload/workload.go`` ``Info``).

:class:`WorkloadInfo` holds the Workload object (the dict stored in the fake API server) with what the
scheduler derives from it: per-podset requests after ``reclaimablePods``, the assigned flavors once it
holds quota, its effective priority and queue-order timestamp. Its status conditions are read and written
by :mod:`jobsetctl.kueue.engine.conditions`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from jobsetctl.kube.jsontree import content_key, shape_bytes
from jobsetctl.kube.podspec import pod_requests
from jobsetctl.kube.quantity import QuantityError, parse_quantity
from jobsetctl.kueue.engine import names
from jobsetctl.kueue.engine.amounts import (
    FRQuantities,
    Requests,
    requests_from_fractions,
    requests_from_resource_list,
    resource_list_text,
)
from jobsetctl.kueue.engine.conditions import (
    as_list,
    as_mapping,
)

Object = dict[str, Any]


# ---- Info --------------------------------------------------------------------------------------------


@dataclass(slots=True)
class PodSetResources:
    """``workload.PodSetResources``: one podset's requests (totals for ``count`` pods)."""

    name: str
    count: int
    #: One pod's requests (``PodRequests`` of the template, in Kueue units).
    per_pod: Requests
    #: Flavor per resource, once quota is reserved.
    flavors: dict[str, str] | None = None
    #: The podset's ``topologyRequest`` (TAS), as written on the Workload.
    topology_request: dict[str, Any] | None = None
    #: The admitted topology assignment (internal form), once admitted by TAS.
    topology_assignment: Any = None

    @property
    def requests(self) -> Requests:
        return {name: value * self.count for name, value in self.per_pod.items()}

    def scaled_to(self, count: int) -> PodSetResources:
        return PodSetResources(self.name, count, self.per_pod, dict(self.flavors) if self.flavors else None,
                               self.topology_request, self.topology_assignment)


@dataclass(slots=True)
class AssignmentState:
    """``workload.AssignmentClusterQueueState``: where the flavor scan stopped, per podset and resource."""

    last_tried: list[dict[str, int]] = field(default_factory=list)
    cluster_queue_generation: int = 0
    scheduling_cycle: int = 0
    scheduling_hash: str = ""

    def next_flavor(self, podset_index: int, resource: str) -> int:
        if podset_index >= len(self.last_tried):
            return 0
        index = self.last_tried[podset_index].get(resource)
        return 0 if index is None else index + 1

    def pending_flavors(self) -> bool:
        return any(index != -1 for flavors in self.last_tried for index in flavors.values())


#: One pod's requests per pod spec content (:func:`plain_key`): the workloads of a class share a template.
#: The values are shared between podsets: readers never change a ``per_pod`` in place.
_PER_POD_BY_CONTENT: dict[Any, Requests] = {}
MAX_PER_POD_CONTENTS = 4096
#: Scheduling hashes per content of their inputs (:meth:`WorkloadInfo.compute_scheduling_hash`).
_HASH_BY_CONTENT: dict[Any, str] = {}
MAX_HASH_CONTENTS = 4096


def _remember(memo: dict[Any, Any], key: Any, value: Any, cap: int) -> None:
    """Keep ``value`` under ``key`` in a content memo, which starts afresh when it holds ``cap`` entries."""
    if len(memo) >= cap:
        memo.clear()
    memo[key] = value


#: Per Info: ``id(pod spec)`` -> (pod spec, one pod's requests, the pod spec's :func:`plain_key` or None).
PerPodMemo = dict[int, tuple[Any, Requests, Any]]


def plain_key(value: Any) -> bytes | None:
    """The content key of the memos of this module: :func:`shape_bytes` (one C call) of a plain JSON tree, None
    for anything else (:func:`content_key` refuses it). Equal keys mean equal trees, type for type and key order
    included. A hot path that finds ``shape_bytes`` in a memo may skip the plainness check: only keys made
    here are remembered, and bytes equal to a plain tree's decode to that tree (see :func:`shape_bytes`)."""
    key = shape_bytes(value)
    return key if key is not None and content_key(value) is not None else None


def _podset_per_pod(podset: dict[str, Any], memo: PerPodMemo | None = None) -> Requests:
    """One pod's requests of a podset's template. Podset templates are immutable once the Workload
    exists, so the result is remembered per template object, and per template content (``PodRequests``
    reads nothing but the pod spec)."""
    template = as_mapping(podset.get("template"))
    spec = template.get("spec")
    if memo is not None:
        hit = memo.get(id(spec))
        if hit is not None and hit[0] is spec:
            return hit[1]
    # The bytes are looked up as they are (see plain_key); a miss checks plainness before it remembers.
    content = shape_bytes(spec)
    value = _PER_POD_BY_CONTENT.get(content) if content is not None else None
    if value is None:
        value = requests_from_fractions(pod_requests(spec))
        if content is not None and content_key(spec) is None:
            content = None
        if content is not None:
            _remember(_PER_POD_BY_CONTENT, content, value, MAX_PER_POD_CONTENTS)
    if memo is not None:
        memo[id(spec)] = (spec, value, content)
    return value


class WorkloadInfo:
    """``workload.Info``: built once per version of the Workload object the engine sees."""

    __slots__ = (
        "_backoff",
        "_hash_memo",
        "_order_key",
        "_per_pod_memo",
        "_podset_inputs",
        "_requests_text",
        "_reserved_at",
        "_spec_podsets",
        "_usage",
        "cluster_queue",
        "creation_ts",
        "generation",
        "key",
        "last_assignment",
        "last_evaluated_generation",
        "local_queue_usage",
        "name",
        "namespace",
        "nomination_mapping",
        "obj",
        "podsets",
        "priority",
        "queue_name",
        "queue_signature",
        "resource_errors",
        "resource_version",
        "scheduling_hash",
        "uid",
    )

    podsets: list[PodSetResources]
    _podset_inputs: tuple[Any, ...]

    def __init__(self, obj: Object) -> None:
        self.last_assignment: AssignmentState | None = None
        self.nomination_mapping: dict[str, dict[str, str]] | None = None
        self.local_queue_usage: float | None = None
        self.last_evaluated_generation = 0
        self._per_pod_memo: PerPodMemo = {}
        self._spec_podsets: tuple[Any, list[dict[str, Any]]] | None = None
        self._requests_text: tuple[list[PodSetResources], list[dict[str, Any]]] | None = None
        self.update(obj)

    def update(self, obj: Object, previous: WorkloadInfo | None = None) -> None:
        """Read a version of the object; ``previous`` is the Info of the version before, whose per-podset
        requests are kept when their inputs are the same objects (most versions change only conditions)."""
        self.obj = obj
        # The reads of as_mapping, admission and str written out: this runs for every version observed.
        md = obj.get("metadata")
        if not isinstance(md, dict):
            md = {}
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            spec = {}
        namespace = md.get("namespace", "")
        name = md.get("name", "")
        self.namespace = namespace = namespace if type(namespace) is str else str(namespace)
        self.name = name = name if type(name) is str else str(name)
        self.key = f"{namespace}/{name}"
        #: The resourceVersion of the version read (None for an object not stored yet).
        self.resource_version = md.get("resourceVersion")
        self.uid = str(md.get("uid", ""))
        self.generation = generation = int(md.get("generation") or 0)
        self.queue_name = queue_name = str(spec.get("queueName") or "")
        priority = spec.get("priority")
        self.priority = priority = priority if isinstance(priority, int) and not isinstance(priority, bool) else 0
        self.creation_ts = str(md.get("creationTimestamp", ""))
        self._usage: FRQuantities | None = None
        status = obj.get("status")
        if isinstance(status, dict):
            adm = status.get("admission")
            if not isinstance(adm, dict):
                adm = None
            reclaimable = status.get("reclaimablePods")
        else:
            adm = reclaimable = None
        self.cluster_queue = str(adm.get("clusterQueue", "")) if adm else ""
        # The inputs of _total_requests, by identity: writers replace spec.podSets, status.admission and
        # status.reclaimablePods as a whole (a new spec arrives as a new object), never edit them in place.
        spec_podsets = spec.get("podSets")
        inputs = (spec_podsets, adm, reclaimable)
        if previous is not None and _same_objects(previous._podset_inputs, inputs):
            self.podsets = podsets = previous.podsets
            self._requests_text = previous._requests_text
        else:
            self._requests_text = None
            self.podsets = podsets = _total_requests(obj, adm, self._per_pod_memo)
        #: (spec.podSets, podsets, priority, hash) of the last scheduling hash computed, carried across versions.
        self._hash_memo: tuple[Any, list[PodSetResources], int, str] | None = \
            previous._hash_memo if previous is not None else None
        self.scheduling_hash = ""
        # validate_resources reads the podset templates only: kept while spec.podSets is the same object.
        self.resource_errors: list[str] | None = \
            previous.resource_errors if previous is not None and previous._podset_inputs[0] is spec_podsets else None
        self._podset_inputs = inputs
        #: Queue ordering key and backoff state, computed once per version by the queue manager.
        self._order_key: tuple[int, float, str] | None = None
        self._backoff: tuple[bool, float | None] | None = None
        self._reserved_at: tuple[str, float] | None = None
        self.queue_signature = (
            generation, priority, queue_name, spec.get("active"),
            tuple([(p.name, p.count) for p in podsets]),
            *_evicted_requeued_signatures(status),
        )

    # ---- derived ------------------------------------------------------------------------------------
    def spec_podsets(self) -> list[dict[str, Any]]:
        """The podsets of the Workload's spec (read-only: the list is kept while ``spec.podSets`` is the same
        object, which writers replace as a whole, see :meth:`update`; the flavor assigner asks several times
        per workload and cycle)."""
        raw = as_mapping(self.obj.get("spec")).get("podSets")
        memo = self._spec_podsets
        if memo is not None and memo[0] is raw:
            return memo[1]
        podsets = [p for p in as_list(raw) if isinstance(p, dict)]
        self._spec_podsets = (raw, podsets)
        return podsets

    def usage(self) -> FRQuantities:
        """``Info.Usage().Quota.Assigned``: requests per (flavor, resource) of the assigned flavors."""
        if self._usage is None:
            usage: FRQuantities = {}
            for podset in self.podsets:
                if not podset.flavors:
                    continue
                for resource, value in podset.per_pod.items():
                    flavor = podset.flavors.get(resource)
                    if flavor:
                        key = (flavor, resource)
                        usage[key] = usage.get(key, 0) + value * podset.count
            self._usage = usage
        return self._usage

    def can_be_partially_admitted(self) -> bool:
        for podset in self.spec_podsets():
            count = podset.get("count", 1)
            min_count = podset.get("minCount")
            if isinstance(min_count, int) and isinstance(count, int) and count > min_count:
                return True
        return False

    def compute_scheduling_hash(self) -> str:
        """``computeSchedulingHash``: the scheduling-relevant shape (priority, pod specs, effective counts,
        requests, minCount, topologyRequest) hashed; equal hashes get equal flavor-assigner results.

        Its inputs are replaced as a whole, never edited in place (see :meth:`update`): a version with the same
        spec.podSets, podsets and priority as the one hashed last has the same hash."""
        spec_podsets = as_mapping(self.obj.get("spec")).get("podSets")
        memo = self._hash_memo
        if memo is not None and memo[0] is spec_podsets and memo[1] is self.podsets and memo[2] == self.priority:
            return memo[3]
        # The text hashed is a function of spec.podSets, the podsets' counts and per-pod requests and the
        # priority: workloads of one class share it (content key, types included).
        # spec.podSets by shape_bytes, looked up as they are; a miss checks plainness before it remembers
        # (see plain_key).
        podsets_key = shape_bytes(spec_podsets)
        content: Any = None if podsets_key is None else (
            podsets_key, self.priority,
            tuple((p.count, tuple((r, type(v), v) for r, v in p.per_pod.items())) for p in self.podsets))
        digest = _HASH_BY_CONTENT.get(content) if content is not None else None
        if digest is None:
            digest = self._hash_text_digest()
            if content is not None and content_key(spec_podsets) is not None:
                _remember(_HASH_BY_CONTENT, content, digest, MAX_HASH_CONTENTS)
        self._hash_memo = (spec_podsets, self.podsets, self.priority, digest)
        return digest

    def _hash_text_digest(self) -> str:
        shapes = []
        for index, podset in enumerate(self.spec_podsets()):
            resources = self.podsets[index] if index < len(self.podsets) else None
            template = as_mapping(podset.get("template"))
            shapes.append({
                "name": podset.get("name"),
                "spec": template.get("spec"),
                "count": resources.count if resources else podset.get("count"),
                "requests": resources.requests if resources else None,
                "minCount": podset.get("minCount"),
                "topologyRequest": podset.get("topologyRequest"),
            })
        text = json.dumps({"podSets": shapes, "priority": self.priority}, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def reading(info: WorkloadInfo) -> tuple[Any, ...]:
    """What :meth:`WorkloadInfo.update` read from the object (the inputs of the per-podset requests by
    identity): two Infos with equal readings stand for the same version of a Workload. The engine's
    shortcut checks compare them (``Engine.verify_shortcuts``)."""
    return (info.obj, info.resource_version, info.namespace, info.name, info.key, info.uid, info.generation,
            info.queue_name, info.priority, info.creation_ts, info.cluster_queue, info.podsets, info.queue_signature,
            tuple(id(value) for value in info._podset_inputs))


def requests_text(info: WorkloadInfo) -> list[dict[str, Any]]:
    """``PropagateResourceRequests``: the requests per podset as the status's ``resourceRequests`` (read only:
    a writer stores a copy). Remembered per ``info.podsets`` list, whose name, count and per-pod requests are
    what it reads: the list and its entries are never changed in place (a new reading makes a new list)."""
    memo = info._requests_text
    podsets = info.podsets
    if memo is not None and memo[0] is podsets:
        return memo[1]
    text = [{"name": p.name, "resources": resource_list_text(p.requests)} for p in podsets]
    info._requests_text = (podsets, text)
    return text


#: ``validate_resources`` answers per content of the pod specs of the podsets, in order (all it reads).
_ERRORS_BY_CONTENT: dict[Any, list[str]] = {}
MAX_ERRORS_CONTENTS = 4096


def _pod_specs_content(info: WorkloadInfo) -> Any:
    """A content key of the pod specs ``validate_resources`` reads (per podset, in order), None without one;
    the pod specs' keys the per-pod requests remembered are not walked again."""
    memo = info._per_pod_memo
    parts = []
    for podset in info.spec_podsets():
        spec = as_mapping(podset.get("template")).get("spec")
        hit = memo.get(id(spec))
        key = hit[2] if hit is not None and hit[0] is spec else plain_key(spec)
        if key is None:
            return None
        parts.append(key)
    return tuple(parts)


def validate_resources(info: WorkloadInfo) -> list[str]:
    """``ValidateResources``: per container (and pod-level resources), the requests above their limits,
    as ``field.Invalid`` errors. Podset templates are immutable, so the result is kept on the Info, and it is
    remembered per content of the pod specs (workloads of a class share their templates)."""
    if info.resource_errors is not None:
        return info.resource_errors
    content = _pod_specs_content(info)
    known = _ERRORS_BY_CONTENT.get(content) if content is not None else None
    if known is not None:
        info.resource_errors = known
        return known
    errors = _resource_errors(info)
    if content is not None:
        _remember(_ERRORS_BY_CONTENT, content, errors, MAX_ERRORS_CONTENTS)
    info.resource_errors = errors
    return errors


def _resource_errors(info: WorkloadInfo) -> list[str]:
    errors: list[str] = []
    for index, podset in enumerate(info.spec_podsets()):
        spec = as_mapping(as_mapping(podset.get("template")).get("spec"))
        path = f"spec.podSets[{index}].template.spec"
        for kind in ("initContainers", "containers"):
            for i, container in enumerate(as_list(spec.get(kind))):
                resources = as_mapping(as_mapping(container).get("resources"))
                greater = _greater_keys(resources)
                if greater:
                    errors.append(_invalid(f"{path}.{kind}[{i}]", greater))
        pod_resources = spec.get("resources")
        if isinstance(pod_resources, dict):
            greater = _greater_keys(pod_resources)
            if greater:
                errors.append(_invalid(f"{path}.resources", greater))
    return errors


def _greater_keys(resources: dict[str, Any]) -> list[str]:
    requests = as_mapping(resources.get("requests"))
    limits = as_mapping(resources.get("limits"))
    out = []
    for name in sorted(requests):
        if name in limits:
            try:
                if parse_quantity(requests[name]) > parse_quantity(limits[name]):
                    out.append(str(name))
            except QuantityError:
                continue
    return out


def _invalid(path: str, names_: list[str]) -> str:
    return f"{path}: Invalid value: {json.dumps(names_, separators=(',', ':'))}: requests must not exceed its limits"


def aggregate(errors: list[str]) -> str:
    """``field.ErrorList.ToAggregate().Error()``."""
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


def _same_objects(left: tuple[Any, ...], right: tuple[Any, ...]) -> bool:
    """The same three objects (spec.podSets, admission, reclaimablePods), by identity."""
    return left[0] is right[0] and left[1] is right[1] and left[2] is right[2]


def _evicted_requeued_signatures(status: Any) -> tuple[tuple[Any, ...] | None, tuple[Any, ...] | None]:
    """(status, reason, lastTransitionTime) of the Evicted and of the Requeued condition, in one pass (the first
    condition of each type counts, as in :func:`find_condition`)."""
    evicted = requeued = None
    if isinstance(status, dict):
        for cond in status.get("conditions") or ():
            if not isinstance(cond, dict):
                continue
            kind = cond.get("type")
            if kind == names.EVICTED and evicted is None:
                evicted = (cond.get("status"), cond.get("reason"), cond.get("lastTransitionTime"))
            elif kind == names.REQUEUED and requeued is None:
                requeued = (cond.get("status"), cond.get("reason"), cond.get("lastTransitionTime"))
    return evicted, requeued


def _reclaimable(obj: Object) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in as_list(as_mapping(obj.get("status")).get("reclaimablePods")):
        if isinstance(item, dict) and isinstance(item.get("count"), int):
            out[str(item.get("name", ""))] = item["count"]
    return out


def _total_requests(obj: Object, adm: dict[str, Any] | None,
                    memo: PerPodMemo | None = None) -> list[PodSetResources]:
    """``totalRequestsFromPodSets`` / ``totalRequestsFromAdmission``, after ``reclaimablePods``."""
    spec_podsets = [p for p in as_list(as_mapping(obj.get("spec")).get("podSets")) if isinstance(p, dict)]
    status = obj.get("status")
    # _reclaimable reads nothing from an empty or missing list (most workloads have none).
    reclaim = _reclaimable(obj) if isinstance(status, dict) and status.get("reclaimablePods") else {}
    out: list[PodSetResources] = []
    if adm is None:
        for podset in spec_podsets:
            name = str(podset.get("name") or "main")
            count = podset.get("count", 1)
            count = count if isinstance(count, int) and not isinstance(count, bool) else 1
            count -= min(reclaim.get(name, 0), count)
            out.append(PodSetResources(name, count, _podset_per_pod(podset, memo), None,
                                       as_mapping(podset.get("topologyRequest")) or None))
        return out
    by_name = {str(p.get("name", "main")): p for p in spec_podsets}
    for assignment in as_list(adm.get("podSetAssignments")):
        if not isinstance(assignment, dict):
            continue
        name = str(assignment.get("name", "main"))
        podset = by_name.get(name, {})
        total_count = podset.get("count", 1) if isinstance(podset.get("count", 1), int) else 1
        count = assignment.get("count")
        count = count if isinstance(count, int) else total_count
        usage = requests_from_resource_list(assignment.get("resourceUsage"))
        per_pod = {r: (v // count if count else 0) for r, v in usage.items()} if count else _podset_per_pod(podset, memo)
        after_reclaim = total_count - min(reclaim.get(name, 0), total_count)
        if after_reclaim < count:
            count = after_reclaim
        flavors = {str(r): str(f) for r, f in as_mapping(assignment.get("flavors")).items()}
        out.append(PodSetResources(name, count, per_pod, flavors, as_mapping(podset.get("topologyRequest")) or None,
                                   assignment.get("topologyAssignment")))
    return out
