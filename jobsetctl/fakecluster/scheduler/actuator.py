"""Everything the scheduler writes to the API server, and the timeline events that go with it.

Writes (kube-scheduler wording):

* bind: ``spec.nodeName`` (the pods/binding subresource, so no admission), condition
  ``PodScheduled=True``, ``nominatedNodeName`` cleared; Kubernetes Event ``Scheduled``
  ``Successfully assigned <ns>/<pod> to <node>``;
* failure: condition ``PodScheduled=False`` reason ``Unschedulable`` (``SchedulerError`` for errors) with
  the FitError text; Event ``FailedScheduling``;
* preemption of a victim: condition ``DisruptionTarget=True`` reason ``PreemptionByScheduler`` message
  ``<scheduler>: preempting to accommodate a higher priority pod``, then delete (graceful); Event
  ``Preempted`` ``Preempted by pod <uid> on node <node>``;
* PodGroup conditions (1.36 ``PodGroupScheduled``, 1.37 ``PodGroupInitiallyScheduled``,
  ``DisruptionTarget``), coscheduling and Volcano ``status.phase``.

Timeline (closed vocabulary, issue #4): Pod ``Scheduled`` (node), ``Unschedulable`` (only when the text
changes), ``Preempted`` (message names the preemptor ``namespace/name``); group ``Scheduled``,
``Unschedulable``, ``Preempted``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jobsetctl.fakecluster.scheduler.groups import GroupKey, GroupState, event_kind
from jobsetctl.fakecluster.scheduler.podinfo import PodInfo

if TYPE_CHECKING:
    from jobsetctl.fakecluster.scheduler.scheduler import Scheduler

UNSCHEDULABLE_REASON = "Unschedulable"
SCHEDULER_ERROR_REASON = "SchedulerError"
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"


def set_condition(obj: dict[str, Any], condition_type: str, status: str, reason: str, message: str,
                  now: str, *, metav1: bool = False) -> bool:
    """Upsert a condition; returns True when anything changed. ``metav1`` conditions (PodGroup) carry
    ``lastTransitionTime`` too; pod conditions carry ``lastProbeTime: null`` like upstream."""
    status_obj = obj.setdefault("status", {})
    if not isinstance(status_obj, dict):
        status_obj = obj["status"] = {}
    conditions = status_obj.setdefault("conditions", [])
    if not isinstance(conditions, list):
        conditions = status_obj["conditions"] = []
    for condition in conditions:
        if isinstance(condition, dict) and condition.get("type") == condition_type:
            if (condition.get("status"), condition.get("reason"), condition.get("message", "")) == (
                    status, reason, message):
                return False
            if condition.get("status") != status:
                condition["lastTransitionTime"] = now
            condition.update({"status": status, "reason": reason, "message": message})
            return True
    fresh: dict[str, Any] = {"type": condition_type, "status": status, "reason": reason, "message": message,
                             "lastTransitionTime": now}
    if not metav1:
        fresh["lastProbeTime"] = None
    conditions.append(fresh)
    return True


def condition(obj: dict[str, Any], condition_type: str) -> dict[str, Any] | None:
    status = obj.get("status")
    for item in (status.get("conditions") or []) if isinstance(status, dict) else []:
        if isinstance(item, dict) and item.get("type") == condition_type:
            return item
    return None


class Actuator:
    def __init__(self, scheduler: Scheduler) -> None:
        self.s = scheduler
        #: Last Unschedulable text per pod uid / group key (events only when it changes).
        self.last_pod_message: dict[str, str] = {}
        #: Where that text was recorded per pod uid: (timeline event, Kubernetes Event) indexes, which an
        #: identical failure counts again (:meth:`Recorder.repeat`).
        self._pod_event_at: dict[str, tuple[int, int]] = {}
        self._timestamp: tuple[float, str] = (-1.0, "")

    def timestamp(self) -> str:
        """``clock.timestamp()``, formatted once per instant (binds come in bursts)."""
        now = self.s.clock.now
        if self._timestamp[0] != now:
            self._timestamp = (now, self.s.clock.timestamp())
        return self._timestamp[1]

    # ---- pods --------------------------------------------------------------------------------------
    def bind(self, pod: PodInfo, node_name: str) -> None:
        s = self.s
        obj = pod.obj
        spec = obj.setdefault("spec", {})
        spec["nodeName"] = node_name
        set_condition(obj, "PodScheduled", "True", "", "", self.timestamp())
        status = obj.setdefault("status", {})
        status.pop("nominatedNodeName", None)
        pod.started = s.clock.now if pod.started is None else pod.started
        self.forget_pod(pod.uid)
        if pod.uid in s.snapshot.nominated:
            s.snapshot.nominate(pod, None)
        s.recorder.record_for(obj, "Scheduled", node=node_name)
        s.recorder.kube_event(obj, "Normal", "Scheduled", f"Successfully assigned {pod.key} to {node_name}")
        s.api.update_status(obj)

    def fail(self, pod: PodInfo, message: str, *, error: bool = False) -> None:
        s = self.s
        if s.api.get("", "Pod", pod.namespace, pod.name) is not pod.obj:
            return  # deleted meanwhile
        reason = SCHEDULER_ERROR_REASON if error else UNSCHEDULABLE_REASON
        changed = set_condition(pod.obj, "PodScheduled", "False", reason, message, self.timestamp())
        if self.last_pod_message.get(pod.uid) != message:
            self.last_pod_message[pod.uid] = message
            self._pod_event_at[pod.uid] = (len(s.recorder.events), len(s.recorder.kube_events))
            s.recorder.record_for(pod.obj, "Unschedulable", reason=reason, message=message)
            s.recorder.kube_event(pod.obj, "Warning", "FailedScheduling", message)
        else:
            # The same failure again: one event with a count, as the events API aggregates repeats.
            event_at, kube_at = self._pod_event_at[pod.uid]
            s.recorder.repeat(event_at)
            s.recorder.repeat_kube_event(kube_at)
        if changed:
            s.api.update_status(pod.obj)

    def forget_pod(self, uid: str) -> None:
        """The pod was bound or is gone: its next failure, if any, is a new event."""
        self.last_pod_message.pop(uid, None)
        self._pod_event_at.pop(uid, None)

    def nominate(self, pod: PodInfo, node_name: str | None) -> None:
        """Set or clear ``status.nominatedNodeName``."""
        s = self.s
        status = pod.obj.setdefault("status", {})
        current = status.get("nominatedNodeName")
        s.snapshot.nominate(pod, node_name)
        if (current or None) == (node_name or None):
            return
        if node_name:
            status["nominatedNodeName"] = node_name
        else:
            status.pop("nominatedNodeName", None)
        if s.api.get("", "Pod", pod.namespace, pod.name) is pod.obj:
            s.api.update_status(pod.obj)

    def preempt_pod(self, victim: PodInfo, preemptor: str, preemptor_uid: str, candidate: str | None,
                    scheduler_name: str, *, kind: str = "pod") -> None:
        """Mark and delete one victim (``Executor.PreemptPod``). ``preemptor`` names it for the timeline
        (``namespace/name`` of a pod, ``PodGroup namespace/name`` of a group); ``kind`` is the executor's
        entity type (``pod``, ``podgroup``, ``compositepodgroup``) and ``candidate`` the node the
        preemptor was nominated to ("cluster" for a group)."""
        s = self.s
        obj = victim.obj
        if s.api.get("", "Pod", victim.namespace, victim.name) is not obj:
            return
        set_condition(obj, "DisruptionTarget", "True", PREEMPTION_BY_SCHEDULER,
                      f"{scheduler_name}: preempting to accommodate a higher priority {kind}", self.timestamp())
        where = f" on node {victim.node_name}" if victim.node_name else ""
        s.recorder.record_for(obj, "Preempted", node=victim.node_name, reason=PREEMPTION_BY_SCHEDULER,
                              message=f"Preempted by {preemptor}{where}")
        s.recorder.kube_event(obj, "Normal", "Preempted", f"Preempted by {kind} {preemptor_uid} on node {candidate}")
        s.api.update_status(obj)
        s.api.delete(obj)

    # ---- groups ------------------------------------------------------------------------------------
    def group_scheduled(self, state: GroupState, domains: list[str]) -> None:
        s = self.s
        record = s.groups.record(state.key)
        if not state.scheduled:
            state.scheduled = True
            record.admitted_at = s.clock.now
            record.waiting = None
            record.domains = list(domains)
            message = "domain " + ", ".join(domains) if domains else None
            self._record_group(state.key, "Scheduled", message=message)
            state.last_message = None
            state.last_event_at = None
        self._group_condition(state, True, "Scheduled", "")

    def group_unschedulable(self, state: GroupState, message: str, *, error: bool = False,
                            reason: str | None = None, note: str | None = None) -> None:
        """The group's condition and ``Unschedulable`` event carry ``message`` (upstream's status text);
        ``note`` (our explanation, default the message) is what the timeline shows while it waits."""
        if state.scheduled and not error and reason is None:
            # Extras of a group that is scheduled: the condition does not regress (``updatePodGroupCondition``)
            # and the group is not waiting; the pods say why they do not fit.
            return
        record = self.s.groups.record(state.key)
        record.waiting = note or message
        reason = reason or (SCHEDULER_ERROR_REASON if error else UNSCHEDULABLE_REASON)
        retried = state.preempted_in_cycle is not None and state.preempted_in_cycle != self.s.queue.scheduling_cycle
        if retried:
            state.preempted_in_cycle = None
        if state.last_message != message or retried:
            state.last_message = message
            state.last_event_at = len(self.s.recorder.events)
            self._record_group(state.key, "Unschedulable", reason=reason, message=message)
        elif state.last_event_at is not None:
            self.s.recorder.repeat(state.last_event_at)
        self._group_condition(state, False, reason, message)

    def group_preempted(self, state: GroupState, preemptor: str) -> None:
        s = self.s
        s.groups.record(state.key).preempted_at.append(s.clock.now)
        self._record_group(state.key, "Preempted", reason=PREEMPTION_BY_SCHEDULER,
                           message=f"Preempted by {preemptor}")
        state.scheduled = False
        if state.obj is not None and state.key[0] in ("pg", "cpg"):
            set_condition(state.obj, "DisruptionTarget", "True", PREEMPTION_BY_SCHEDULER,
                          f"preempted to accommodate {preemptor}", self.timestamp(), metav1=True)
            s.api.update_status(state.obj)

    def _record_group(self, key: GroupKey, event: str, **details: Any) -> None:
        s = self.s
        if key[0] == "wl" and not details.get("message"):
            # 1.35: the gang is an entry of the Workload object; say which one.
            replica = f" (replica {key[4]})" if len(key) > 4 and key[4] else ""
            details["message"] = f"pod group {key[3]}{replica}"
        s.recorder.record(event_kind(key), key[1], key[2], event, **details)

    def _group_condition(self, state: GroupState, scheduled: bool, reason: str, message: str) -> None:
        """1.36 ``PodGroupScheduled`` (True/Scheduled or False/Unschedulable|SchedulerError); 1.37
        ``PodGroupInitiallyScheduled``, terminal once True."""
        s = self.s
        obj = state.obj
        if obj is None or state.key[0] not in ("pg", "cpg"):
            return
        if s.version.minor >= 37:
            kind = "CompositePodGroupInitiallyScheduled" if state.key[0] == "cpg" else "PodGroupInitiallyScheduled"
            current = condition(obj, kind)
            if current is not None and current.get("status") == "True":
                return
            changed = set_condition(obj, kind, "True" if scheduled else "False", reason,
                                    message, self.timestamp(), metav1=True)
        else:
            changed = set_condition(obj, "PodGroupScheduled", "True" if scheduled else "False", reason, message,
                                    self.timestamp(), metav1=True)
        if changed:
            s.api.update_status(obj)

    def set_phase(self, obj: dict[str, Any], phase: str, **fields: Any) -> None:
        status = obj.setdefault("status", {})
        changed = status.get("phase") != phase
        status["phase"] = phase
        for name, value in fields.items():
            if status.get(name) != value:
                status[name] = value
                changed = True
        if changed:
            self.s.api.update_status(obj)
