"""Node failure as the node lifecycle controller, taint eviction and PodGC handle it (``simulate``).

:meth:`NodeLifecycle.fail_node` is the moment the node lifecycle controller notices a node that
stopped reporting (upstream: ``node-monitor-grace-period`` after the last heartbeat; the scenario
picks the moment). It then, as ``pkg/controller/nodelifecycle`` does:

* sets the node's ``Ready`` condition to ``Unknown`` (reason ``NodeStatusUnknown``, message
  ``Kubelet stopped posting node status.``) and records the Node ``Failed`` simulation event;
* taints it ``node.kubernetes.io/unreachable`` with ``NoSchedule`` and ``NoExecute`` (the latter
  with ``timeAdded``);
* marks every pod on it not ready (``MarkPodsNotReady``: ``Ready=False``, Warning event
  ``NodeNotReady`` ``Node is not ready``).

Taint eviction (``pkg/controller/tainteviction``): a pod that does not tolerate the NoExecute taint
is evicted at once; one that tolerates it with ``tolerationSeconds`` (the DefaultTolerationSeconds
admission plugin gives every pod 300 s) at ``timeAdded + seconds`` (the smallest matching value);
a toleration without seconds keeps it forever. Eviction adds the pod condition
``DisruptionTarget=True`` reason ``DeletionByTaintManager`` message
``Taint manager: deleting due to NoExecute taint`` (confirmed in kubectl output quoted in public
write-ups and KEP-3329), records ``TaintManagerEviction`` ``Marking for deletion Pod <ns>/<name>``
and deletes the pod gracefully. Terminal pods are left alone.

A deleted Node (a Scenario's ``delete: {kind: Node}``: the machine is gone) is what PodGC's
``gcOrphaned`` handles: its pods stop making progress at once (nobody runs them), and once the node has
been missing for :data:`ORPHAN_QUARANTINE_SECONDS` every pod still bound to it is marked ``Failed`` with
``DisruptionTarget=True`` reason ``DeletionByPodGC`` message ``PodGC: node no longer exists``
(``markFailedAndDeletePodWithCondition``; the Pod ``Failed`` simulation event carries them) and force
deleted. A node of that name created again within the quarantine keeps its pods. A pod bound to a node
that never existed is collected the same way, the quarantine running from when the kubelet first finds
the node missing (``gcOrphaned`` queues every node its pods name that the informer does not know). (Checked upstream:
kubernetes ``pkg/controller/podgc/gc_controller.go``, ``quarantineTime = 40 * time.Second``, and the
condition's reason and message in ``gcOrphaned``; the spec files do not cover PodGC.)

PodGC, as we emulate it: nobody can run the kubelet's part on a dead node, so upstream such a pod
stays Terminating until the node is marked out-of-service (``gcTerminating``) or deleted
(``gcOrphaned``). We take the cloud outcome and collect it when its grace period ends: phase
``Failed`` (``markFailedAndDeletePod``, no new condition), the Pod ``Failed`` simulation event with
the DisruptionTarget reason and message, then removal — unless a finalizer (the Job controller's
tracking finalizer) still holds it, in which case its owner's release removes it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from jobsetctl.fakecluster.apiserver import APIServer
from jobsetctl.fakecluster.clock import VirtualClock
from jobsetctl.fakecluster.events import Recorder
from jobsetctl.kinds.interface import Object
from jobsetctl.kube.jsontree import copy_tree

UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
NOT_READY_TAINT = "node.kubernetes.io/not-ready"
NO_EXECUTE = "NoExecute"
NO_SCHEDULE = "NoSchedule"
NODE_STATUS_UNKNOWN = "NodeStatusUnknown"
NODE_STATUS_UNKNOWN_MESSAGE = "Kubelet stopped posting node status."
DISRUPTION_TARGET = "DisruptionTarget"
DELETION_BY_TAINT_MANAGER = "DeletionByTaintManager"
TAINT_MANAGER_MESSAGE = "Taint manager: deleting due to NoExecute taint"
DEFAULT_GRACE_SECONDS = 30
#: PodGC ``gcOrphaned``: a node missing this long (``quarantineTime``) has its pods collected. PodGC
#: looks every 20 s (``gcCheckPeriod``); we collect at the end of the quarantine.
ORPHAN_QUARANTINE_SECONDS = 40.0
DELETION_BY_POD_GC = "DeletionByPodGC"
POD_GC_MESSAGE = "PodGC: node no longer exists"


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def set_pod_condition(pod: Object, type_: str, status: str, now: str, reason: str | None = None,
                      message: str | None = None) -> bool:
    """Add or update a pod condition; the transition time moves only when the status changes.
    Returns whether anything changed."""
    return set_pod_conditions(pod, now, ((type_, status, reason, message),))


#: (type, status, reason, message) of one condition for :func:`set_pod_conditions`.
ConditionUpdate = tuple[str, str, str | None, str | None]


def set_pod_conditions(pod: Object, now: str, updates: Iterable[ConditionUpdate]) -> bool:
    """:func:`set_pod_condition` for several conditions in turn, the conditions list copied and searched
    once (the kubelet writes two or three at every step of every pod). Returns whether anything changed."""
    pod_status = pod.get("status")
    if not isinstance(pod_status, dict):
        pod_status = {}
        pod["status"] = pod_status
    raw = pod_status.get("conditions")
    conditions = [c for c in raw if isinstance(c, dict)] if isinstance(raw, list) else []
    first: dict[str, int] = {}
    for index, cond in enumerate(conditions):
        kind = cond.get("type")
        if isinstance(kind, str) and kind not in first:
            first[kind] = index
    changed = False
    for type_, status, reason, message in updates:
        wanted: dict[str, Any] = {"type": type_, "status": status, "lastProbeTime": None, "lastTransitionTime": now}
        if reason:
            wanted["reason"] = reason
        if message:
            wanted["message"] = message
        at = first.get(type_)
        if at is None:
            first[type_] = len(conditions)
            conditions.append(wanted)
            changed = True
            continue
        cond = conditions[at]
        if cond.get("status") == status:
            wanted["lastTransitionTime"] = cond.get("lastTransitionTime", now)
        if cond != wanted:
            conditions[at] = wanted
            changed = True
    if changed:
        pod_status["conditions"] = conditions
    return changed


def toleration_seconds(pod: Object, key: str, effect: str) -> float | None:
    """``getMinTolerationTime`` for one taint (empty value): 0 when no toleration matches, None when
    one matches without ``tolerationSeconds`` (forever), else the smallest value (negative → 0)."""
    best: float | None = None
    matched = False
    for toleration in _list(_mapping(pod.get("spec")).get("tolerations")):
        toleration = _mapping(toleration)
        if toleration.get("effect") not in (None, "", effect):
            continue
        operator = toleration.get("operator") or "Equal"
        t_key = toleration.get("key") or ""
        if operator == "Exists":
            if t_key not in ("", key):
                continue
        elif t_key != key or (toleration.get("value") or "") != "":
            continue
        matched = True
        seconds = toleration.get("tolerationSeconds")
        if not isinstance(seconds, int | float) or isinstance(seconds, bool):
            return None
        value = max(float(seconds), 0.0)
        best = value if best is None else min(best, value)
    if not matched:
        return 0.0
    return best


class NodeLifecycle:
    """Dead nodes and the pods on them. Owned by the :class:`~jobsetctl.fakecluster.kubelet.Kubelet`."""

    def __init__(self, api: APIServer, clock: VirtualClock, recorder: Recorder) -> None:
        self.api = api
        self.clock = clock
        self.recorder = recorder
        #: Failed node → when its NoExecute taint was added.
        self.failed: dict[str, float] = {}
        #: Deleted node → when it went (PodGC's quarantine runs from then).
        self.deleted: dict[str, float] = {}
        self._watched: set[str] = set()
        self._collecting: set[str] = set()

    def is_failed(self, node: str) -> bool:
        return node in self.failed

    def is_deleted(self, node: str) -> bool:
        return node in self.deleted

    def node_deleted(self, name: str) -> None:
        """The Node object is gone: its pods stop; PodGC collects them after the quarantine."""
        if name in self.deleted:
            return
        self.deleted[name] = self.clock.now
        self.clock.call_at(self.clock.now + ORPHAN_QUARANTINE_SECONDS, self._gc_orphaned, name, self.clock.now)

    def node_missing(self, name: str) -> None:
        """A pod is bound to a node that does not exist (now): the same quarantine as a deleted node."""
        self.node_deleted(name)

    def node_created(self, name: str) -> None:
        self.deleted.pop(name, None)

    def _gc_orphaned(self, name: str, since: float) -> None:
        if self.deleted.get(name) != since:
            return  # the node came back within the quarantine (perhaps to go again: a later timer)
        for pod in list(self.api.iter_kind("", "Pod")):
            if _mapping(pod.get("spec")).get("nodeName") == name:
                self._collect_orphan(pod)

    def _collect_orphan(self, pod: Object) -> None:
        status = pod.setdefault("status", {})
        if status.get("phase") not in ("Succeeded", "Failed"):
            status["phase"] = "Failed"
            set_pod_condition(pod, DISRUPTION_TARGET, "True", self.clock.timestamp(), DELETION_BY_POD_GC, POD_GC_MESSAGE)
            self.api.update_status(pod)
            self.recorder.record_for(pod, "Failed", node=_mapping(pod.get("spec")).get("nodeName"),
                                     reason=DELETION_BY_POD_GC, message=POD_GC_MESSAGE)
        current = self.api.get_by_uid(str(_mapping(pod.get("metadata")).get("uid", "")))
        if current is None:
            return
        if not _mapping(current.get("metadata")).get("finalizers"):
            self.api.remove(current)  # force deletion (grace period 0)
        else:
            self.api.delete(current)  # the Job controller's release removes it

    def fail_node(self, name: str) -> bool:
        node = self.api.get("", "Node", "", name)
        if node is None:
            return False
        if name in self.failed:
            return True
        now = self.clock.timestamp()
        self.failed[name] = self.clock.now
        old = copy_tree(node)
        spec = node.setdefault("spec", {})
        taints = [t for t in _list(spec.get("taints")) if _mapping(t).get("key") != UNREACHABLE_TAINT]
        taints.append({"key": UNREACHABLE_TAINT, "effect": NO_SCHEDULE})
        taints.append({"key": UNREACHABLE_TAINT, "effect": NO_EXECUTE, "timeAdded": now})
        spec["taints"] = taints
        status = node.setdefault("status", {})
        conditions = [c for c in _list(status.get("conditions")) if _mapping(c).get("type") != "Ready"]
        conditions.append({"type": "Ready", "status": "Unknown", "reason": NODE_STATUS_UNKNOWN,
                           "message": NODE_STATUS_UNKNOWN_MESSAGE, "lastHeartbeatTime": now,
                           "lastTransitionTime": now})
        status["conditions"] = conditions
        self.api.update(node, old=old, skip_admission=True)
        self.recorder.record_for(node, "Failed", reason=NODE_STATUS_UNKNOWN, message=NODE_STATUS_UNKNOWN_MESSAGE)
        self.recorder.kube_event(node, "Normal", "NodeNotReady", f"Node {name} status is now: NodeNotReady")
        for pod in list(self.api.iter_kind("", "Pod")):
            if _mapping(pod.get("spec")).get("nodeName") == name:
                self.watch_pod(pod)
        return True

    def watch_pod(self, pod: Object) -> None:
        """A pod on a failed node: mark it not ready, plan its eviction (once), and collect it when
        it is deleted."""
        meta = _mapping(pod.get("metadata"))
        uid = str(meta.get("uid", ""))
        phase = _mapping(pod.get("status")).get("phase")
        if phase in ("Succeeded", "Failed"):
            return
        if meta.get("deletionTimestamp"):
            self._plan_collection(pod)
            return
        if uid in self._watched:
            return
        self._watched.add(uid)
        now = self.clock.timestamp()
        if set_pod_condition(pod, "Ready", "False", now):
            self.api.update_status(pod)
            self.recorder.kube_event(pod, "Warning", "NodeNotReady", "Node is not ready")
        node = str(_mapping(pod.get("spec")).get("nodeName", ""))
        seconds = toleration_seconds(pod, UNREACHABLE_TAINT, NO_EXECUTE)
        if seconds is None:
            return
        self.clock.call_at(self.failed[node] + seconds, self._evict, uid)

    def _evict(self, uid: str) -> None:
        pod = self.api.get_by_uid(uid)
        if pod is None or _mapping(pod.get("status")).get("phase") in ("Succeeded", "Failed"):
            return
        meta = _mapping(pod.get("metadata"))
        if not meta.get("deletionTimestamp"):
            now = self.clock.timestamp()
            set_pod_condition(pod, DISRUPTION_TARGET, "True", now, DELETION_BY_TAINT_MANAGER, TAINT_MANAGER_MESSAGE)
            self.api.update_status(pod)
            self.recorder.kube_event(pod, "Normal", "TaintManagerEviction",
                                     f"Marking for deletion Pod {meta.get('namespace')}/{meta.get('name')}")
            self.api.delete(pod)
        current = self.api.get_by_uid(uid)
        if current is not None:
            self._plan_collection(current)

    def _plan_collection(self, pod: Object) -> None:
        meta = _mapping(pod.get("metadata"))
        uid = str(meta.get("uid", ""))
        if uid in self._collecting or not meta.get("deletionTimestamp"):
            return
        self._collecting.add(uid)
        grace = meta.get("deletionGracePeriodSeconds")
        grace = grace if isinstance(grace, int) else DEFAULT_GRACE_SECONDS
        self.clock.call_at(self.clock.seconds_of(str(meta["deletionTimestamp"])) + grace, self._collect, uid)

    def _collect(self, uid: str) -> None:
        pod = self.api.get_by_uid(uid)
        if pod is None:
            return
        status = pod.setdefault("status", {})
        if status.get("phase") not in ("Succeeded", "Failed"):
            status["phase"] = "Failed"
            self.api.update_status(pod)
            target = next((c for c in _list(status.get("conditions"))
                           if _mapping(c).get("type") == DISRUPTION_TARGET), None)
            self.recorder.record_for(
                pod, "Failed", node=_mapping(pod.get("spec")).get("nodeName"),
                reason=_mapping(target).get("reason") if target else None,
                message=_mapping(target).get("message") if target else None)
        current = self.api.get_by_uid(uid)
        if current is not None and not _mapping(current.get("metadata")).get("finalizers"):
            self.api.remove(current)
