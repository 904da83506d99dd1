"""What the reports need to know about objects that may be gone by the end of a run.

The recorder's events name objects by kind, namespace and name only. To draw a Gantt row per Job, to
charge a pod's GPU-hours to its TrainJob, or to put a pod on its node's trace track we also need each
object's owner, its PodGroup and its GPU request, as they were when it was created. The ledger listens
to the API server's watch (ADDED events, in write order) and keeps exactly that, keyed by
``(kind, namespace, name)``: names are reused across restarts (a JobSet recreates its Jobs under the
same names) but always under the same owner, so the latest entry is right for every incarnation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from jobsetctl.fakecluster.apiserver import WatchEvent, WatchType
from jobsetctl.fakecluster.scheduler.podinfo import PodInfo, StaticSignature, static_signature
from jobsetctl.kube.podspec import scheduling_group_name, workload_reference
from jobsetctl.simulate import access
from jobsetctl.simulate.nodes import NodeInfo, gpu_amount, node_info

ObjectKey = tuple[str, str, str]  # kind, namespace, name
_UNSEEN = object()
#: Kinds that make a workload in the summary, outermost first.
WORKLOAD_KINDS = ("TrainJob", "JobSet", "Job")
GROUP_KINDS = ("Workload", "PodGroup", "CompositePodGroup")


@dataclass(slots=True)
class ObjectInfo:
    key: ObjectKey
    #: The controller owner, same namespace (ownerReferences cannot cross namespaces).
    owner: ObjectKey | None = None
    #: Pods: the PodGroup (1.36+) or Workload (1.35) the pod belongs to.
    group: ObjectKey | None = None
    #: Pods: the GPUs the pod requests (every ``<vendor>/gpu`` resource).
    gpus: Fraction = Fraction(0)
    #: Order of creation, to sort rows and workloads deterministically.
    order: int = 0
    #: Created with ``spec.suspend: true`` (JobSet, TrainJob, Job): its row starts suspended.
    suspended: bool = False


@dataclass(slots=True)
class Ledger:
    objects: dict[ObjectKey, ObjectInfo] = field(default_factory=dict)
    nodes: dict[str, NodeInfo] = field(default_factory=dict)
    #: Pool of each node, set by the runner before the node is created (trace processes).
    pools: dict[str, str] = field(default_factory=dict)
    #: Watch events seen; the runner uses the count to tell progress from idle retries.
    writes: int = 0
    #: GPUs per pod-spec signature (:func:`static_signature`'s key).
    _gpus_by_signature: dict[str, Fraction] = field(default_factory=dict)
    #: ``workload_of`` and ``job_of`` answers, asked once per event by the reports; valid until the next
    #: object is recorded (which may change an owner chain), so :meth:`on_event` empties them.
    _workload_cache: dict[ObjectKey, ObjectKey | None] = field(default_factory=dict)
    _job_cache: dict[ObjectKey, ObjectKey | None] = field(default_factory=dict)
    #: The scheduler's pods by UID (``Scheduler.pods``), when a scheduler runs. It hears of a new pod before
    #: the ledger does (the controller manager subscribes first) and keeps the pod's
    #: :func:`static_signature`: reading it there saves working the signature out a second time per pod.
    scheduler_pods: Mapping[str, PodInfo] | None = None

    def on_event(self, event: WatchEvent) -> None:
        self.writes += 1
        if event.type != WatchType.ADDED:
            return
        if self._workload_cache or self._job_cache:
            self._workload_cache.clear()
            self._job_cache.clear()
        obj = event.obj
        kind = str(obj.get("kind", ""))
        md = access.metadata(obj)
        namespace, name = str(md.get("namespace", "") or ""), str(md.get("name", ""))
        key = (kind, namespace, name)
        info = ObjectInfo(key, order=len(self.objects))
        for ref in md.get("ownerReferences") or []:
            if isinstance(ref, dict) and ref.get("controller"):
                info.owner = (str(ref.get("kind", "")), namespace, str(ref.get("name", "")))
                break
        if kind == "Pod":
            spec = obj.get("spec")
            # The scheduler's signature of the spec holds its requests, parsed once per pod template.
            info.gpus = self._gpus(obj, md, spec) if isinstance(spec, dict) else Fraction(0)
            group = scheduling_group_name(spec)
            if group is not None:
                info.group = ("PodGroup", namespace, group)
            else:
                reference = workload_reference(spec)
                if reference is not None:
                    info.group = ("Workload", namespace, reference.name)
        elif kind in WORKLOAD_KINDS:
            spec = obj.get("spec")
            info.suspended = isinstance(spec, dict) and spec.get("suspend") is True
        elif kind == "Node" and str(obj.get("apiVersion", "")) == "v1":
            self.nodes[name] = node_info(obj, self.pools.get(name, "nodes"))
        previous = self.objects.get(key)
        if previous is not None:
            info.order = previous.order
        self.objects[key] = info

    def _gpus(self, obj: dict[str, Any], md: dict[str, Any], spec: dict[str, Any]) -> Fraction:
        signature: StaticSignature | None = None
        if self.scheduler_pods is not None:
            known = self.scheduler_pods.get(str(md.get("uid") or ""))
            if known is not None and known.obj is obj:  # this very pod, parsed from this spec
                signature = known.static
        if signature is None:
            signature = static_signature(spec)
        gpus = self._gpus_by_signature.get(signature.key)
        if gpus is None:  # Fraction sums cost more than the lookup: once per pod template
            gpus = self._gpus_by_signature[signature.key] = gpu_amount(signature.requests)
        return gpus

    def owner_chain(self, key: ObjectKey) -> list[ObjectKey]:
        """``key`` and its controller owners, innermost first (cycles and gaps end the chain)."""
        chain = [key]
        seen = {key}
        current = self.objects.get(key)
        while current is not None and current.owner is not None and current.owner not in seen:
            chain.append(current.owner)
            seen.add(current.owner)
            current = self.objects.get(current.owner)
        return chain

    def workload_of(self, key: ObjectKey) -> ObjectKey | None:
        """The outermost TrainJob, JobSet or Job that ``key`` belongs to (itself included)."""
        cached = self._workload_cache.get(key, _UNSEEN)
        if cached is not _UNSEEN:
            return cached  # type: ignore[return-value]
        found: ObjectKey | None = None
        for link in self.owner_chain(key):
            if link[0] in WORKLOAD_KINDS:
                found = link
        self._workload_cache[key] = found
        return found

    def job_of(self, key: ObjectKey) -> ObjectKey | None:
        """The innermost Job that ``key`` belongs to (itself included)."""
        cached = self._job_cache.get(key, _UNSEEN)
        if cached is not _UNSEEN:
            return cached  # type: ignore[return-value]
        found: ObjectKey | None = None
        for link in self.owner_chain(key):
            if link[0] == "Job":
                found = link
                break
        self._job_cache[key] = found
        return found

    def info(self, key: ObjectKey) -> ObjectInfo | None:
        return self.objects.get(key)

    def order_of(self, key: ObjectKey) -> int:
        info = self.objects.get(key)
        return info.order if info is not None else len(self.objects)


def object_key(obj: dict[str, Any]) -> ObjectKey:
    md = access.metadata(obj)
    return str(obj.get("kind", "")), str(md.get("namespace", "") or ""), str(md.get("name", ""))
