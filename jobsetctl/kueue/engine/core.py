"""The engine: Kueue's cache, queue manager, scheduler and preemptor over the fake API server.

Workload writes go through :meth:`Engine.write`, which stores the status (``update_status``: Kueue
patches the status subresource) and records the timeline events of the JSON contract as the write
happens. The fake cluster's watch brings every Workload change back to :meth:`Engine.observe`, which
does what Kueue's Workload event handlers do (``workload_controller.go`` Create/Update/Delete): keep the
cache and the queues in step with the workload's status, and ask for inadmissible workloads to be
retried when quota may have freed up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jobsetctl.kueue.engine import configuration, names
from jobsetctl.kueue.engine.assignment import Assignment
from jobsetctl.kueue.engine.cache import Cache, ClusterQueueState
from jobsetctl.kueue.engine.conditions import (
    STATUS_ADMITTED,
    STATUS_FINISHED,
    STATUS_PENDING,
    STATUS_QUOTA_RESERVED,
    find_condition,
    first_conditions,
    has_quota_reservation,
    is_active,
    is_admissible,
    is_admitted,
    is_evicted,
    key_of,
    set_condition,
    set_quota_reservation,
    sync_admitted_after_reservation,
    unset_quota_reservation,
    workload_status,
)
from jobsetctl.kueue.engine.history import ClusterQueueInfo, History, PreemptionRecord
from jobsetctl.kueue.engine.preemption import Preemptor, Target, cq_path, preemption_message
from jobsetctl.kueue.engine.queues import REQUEUE_BATCH_PERIOD, QueueManager
from jobsetctl.kueue.engine.scheduler import NAMESPACE_MISMATCH, Scheduler
from jobsetctl.kueue.engine.settings import EngineSettings
from jobsetctl.kueue.engine.workload import (
    WorkloadInfo,
    aggregate,
    reading,
    requests_text,
    validate_resources,
)

if TYPE_CHECKING:
    from jobsetctl.fakecluster.apiserver import APIServer
    from jobsetctl.fakecluster.clock import VirtualClock
    from jobsetctl.fakecluster.events import Recorder

Object = dict[str, Any]
KIND = "Workload"
MAX_DURATION_SECONDS = (2**63 - 1) / 1e9


@dataclass(slots=True)
class Observed:
    """What the engine last saw of a Workload: its status class and the JSON events already told."""

    status: str
    active: bool = True
    pending_message: str | None = None
    #: The resourceVersion of the version observed last.
    resource_version: Any = None
    requeued: bool = False
    evicted: bool = False


class Engine:
    def __init__(self, api: APIServer, clock: VirtualClock, recorder: Recorder, settings: EngineSettings) -> None:
        self.api = api
        self.clock = clock
        self.recorder = recorder
        self.settings = settings
        wait = settings.wait_for_pods_ready
        self.cache = Cache(pods_ready_tracking=wait is not None and wait.block_admission)
        self.queues = QueueManager(
            now=lambda: self.clock.now, seconds_of=clock.seconds_of,
            pods_ready_eviction_timestamp=wait is None or wait.timestamp == "Eviction",
            equivalence_hashing=settings.gate("SchedulingEquivalenceHashing"),
            namespace_labels=self.namespace_labels,
        )
        self.fair: Any = None
        if settings.fair_sharing is not None:
            from jobsetctl.kueue.engine.fairsharing import FairSharing

            self.fair = FairSharing(self, settings.fair_sharing)
        self.tas: Any = None
        if settings.gate("TopologyAwareScheduling"):
            from jobsetctl.kueue.engine.tas import TASManager

            self.tas = TASManager(self)
        self.preemptor = Preemptor(self.cache, order_ts=self.queues.queue_order_timestamp,
                                   seconds_of=clock.seconds_of, now=lambda: self.clock.now, fair_sharing=self.fair,
                                   tas_fits=self.tas.preemption_fits if self.tas is not None else None,
                                   shortcuts=settings.preemption_shortcuts)
        self.scheduler = Scheduler(self)
        self.history = History()
        self.cache.history = self.history
        self.cache.now = lambda: self.clock.now
        self.infos: dict[str, WorkloadInfo] = {}
        #: The Info standing for the version :meth:`write_finished` is writing.
        self._finishing: WorkloadInfo | None = None
        self.observed: dict[str, Observed] = {}
        self.namespaces: dict[str, dict[str, str]] = {}
        #: When each admitted workload was admitted, to the sub-second (an owner-less workload runs for its
        #: duration from then, as the performance test's runner keeps it in memory).
        self.admitted_at: dict[str, float] = {}
        #: Off (tests only, ``EngineSettings.engine_shortcuts``): every version observed is read afresh.
        self.shortcuts = settings.engine_shortcuts
        self.cache.replace_shortcut = settings.engine_shortcuts
        self.queues.bucket_retry = self.queues.shortcuts = settings.engine_shortcuts
        #: Tests (the invariant checks): each shortcut also does the work it skips and checks the answer.
        self.verify_shortcuts = False
        #: Requeue requests waiting for the batch period: target (Cohort root or ClusterQueue) -> due time.
        self._requeue_due: dict[str, float] = {}
        #: Called when the scheduler may have work (the component enqueues a cycle).
        self.kick: Callable[[], None] = lambda: None
        #: Called with a workload key whose reconcile (workload controller) should run after ``delay``.
        self.reconcile_after: Callable[[str, float], None] = lambda key, delay: None
        self.queues.on_broadcast = lambda: self.kick()

    # ---- configuration objects -----------------------------------------------------------------------
    def namespace_labels(self, namespace: str) -> dict[str, str]:
        """A namespace's labels; a namespace with no Namespace object exists with no labels."""
        return self.namespaces.get(namespace, {})

    def on_configuration(self, kind: str, obj: Object | None, namespace: str, name: str) -> bool:
        """A Kueue configuration object (ClusterQueue, LocalQueue, Cohort, ResourceFlavor, Topology,
        AdmissionCheck) added, updated (``obj``) or deleted (``None``); False for any other kind
        (:mod:`jobsetctl.kueue.engine.configuration`)."""
        return configuration.on_configuration(self, kind, obj, namespace, name)

    def on_namespace(self, obj: Object | None, name: str) -> None:
        configuration.on_namespace(self, obj, name)

    # ---- workload events (workload_controller.go Create/Update/Delete) -------------------------------
    def observe(self, obj: Object, status: str | None = None) -> WorkloadInfo:
        """A Workload was created or changed: bring the cache and queues in step. ``status``: its
        :func:`workload_status`, when the caller read it already."""
        md = obj.get("metadata") or {}
        key = f"{md.get('namespace', '')}/{md.get('name', '')}"
        previous = self.infos.get(key)
        seen = self.observed.get(key)
        rv = md.get("resourceVersion")
        if (seen is not None and previous is not None and seen.status == STATUS_FINISHED and previous.obj is obj
                and rv is not None and seen.resource_version == rv):
            # The finished version seen already (the runner's reconcile after the watch event): it left the
            # cache and the queues then; what remains of observing it again is the kick.
            self.kick()
            return previous
        if (previous is not None and previous.obj is obj and rv is not None and previous.resource_version == rv
                and self.shortcuts):
            # This version was read already (a reconcile after the write's own watch event, or a timer): the
            # stored object changes in place only through writes, which move its resourceVersion.
            info = previous
            if self.verify_shortcuts:
                self._verify_reading(previous, obj)
        elif previous is not None and previous is self._finishing and previous.obj is obj and rv is not None:
            # The write of :meth:`write_finished`: this version differs from the one ``previous`` read by its
            # Finished condition only, which nothing an Info reads looks at (its caches of the queue order,
            # backoff, reservation time and usage read the Evicted, Requeued and QuotaReserved conditions,
            # requeueState and the podsets). What a new Info would not carry over is reset.
            info = previous
            info.resource_version = rv
            info.nomination_mapping = None
            info.local_queue_usage = None
            info.scheduling_hash = ""
            if self.verify_shortcuts:
                self._verify_reading(previous, obj)
        else:
            info = WorkloadInfo(obj) if previous is None else _refreshed(previous, obj)
        self.infos[key] = info
        if status is None:
            status = workload_status(obj)
        active = is_active(obj)
        if seen is None:
            self.observed[key] = Observed(status, active, resource_version=rv)
            if status == STATUS_FINISHED:
                return info
            if active and status == STATUS_PENDING:  # is_admissible: observe changes nothing in obj
                self.queues.add_or_update_workload(info)
            elif has_quota_reservation(obj) and active:
                self.cache.add_or_update_workload(info)
            return info
        before = seen.status
        seen.status, seen.active, seen.resource_version = status, active, rv
        if status != STATUS_ADMITTED:
            self.admitted_at.pop(key, None)
        if status == STATUS_FINISHED or not active:
            self.queues.delete_workload(key)
            released = self.cache.delete_workload(key)
            if released is not None:
                self._notify_associated(released)
            self.kick()
        elif before == STATUS_PENDING and status == STATUS_PENDING:
            # Pending and active (the branch above took the inactive): admissible.
            self.queues.add_or_update_workload(info)
        elif before == STATUS_PENDING:
            self.queues.delete_workload(key)
            self.cache.add_or_update_workload(info)
        elif status == STATUS_PENDING:
            released = self.cache.delete_workload(key)
            if released is not None:
                self._notify_associated(released)
            if self.queues.backoff_expired(info):  # pending and active: admissible
                self.queues.add_or_update_workload(info)
            self.kick()
        else:
            cached = self.cache.workload(key)
            changed = cached is None or cached.usage() != info.usage() or cached.priority != info.priority
            self.cache.add_or_update_workload(info)
            if changed:
                self._notify_associated(info)
                self.kick()
        return info

    def _verify_reading(self, previous: WorkloadInfo, obj: Object) -> None:
        """With the shortcut checks on: the Info kept for a version seen already reads as a fresh one would."""
        fresh = _refreshed(previous, obj)
        if reading(fresh) != reading(previous):
            raise AssertionError(f"Workload {previous.key} changed at resourceVersion {previous.resource_version} "
                                 "without a write: the Info kept for it is stale")

    def kept_conditions(self, obj: Object, first: dict[Any, dict[str, Any]],
                        read_at: Any) -> dict[Any, dict[str, Any]] | None:
        """``first`` (:func:`first_conditions` of ``obj`` read at resourceVersion ``read_at``) while the object
        is still at that version, else None (read afresh). The reconcilers write every change they make to a
        Workload (each write moves its resourceVersion) before they read it again, so an unmoved version has
        the same conditions, of which ``first`` holds the live dicts. None with the shortcuts off."""
        if not self.shortcuts or read_at is None or (obj.get("metadata") or {}).get("resourceVersion") != read_at:
            return None
        if self.verify_shortcuts:
            fresh = first_conditions(obj)
            if fresh.keys() != first.keys() or any(fresh[kind] is not cond for kind, cond in first.items()):
                raise AssertionError(f"Workload {key_of(obj)} changed its conditions at resourceVersion {read_at} "
                                     "without a write: the conditions kept for it are stale")
        return first

    def forget(self, obj: Object) -> None:
        """A Workload was deleted."""
        md = obj.get("metadata") or {}
        key = f"{md.get('namespace', '')}/{md.get('name', '')}"
        released = self.cache.delete_workload(key)
        info = self.infos.pop(key, None)
        self.observed.pop(key, None)
        self.admitted_at.pop(key, None)
        if released is not None:
            self._notify_associated(released)
        elif info is not None:
            cq = self.queues.cluster_queue_for(info)
            if cq:
                self.request_requeue([cq])
        self.queues.forget_workload(key)
        if self.tas is not None:
            self.tas.forget_workload(key)
        self.kick()

    def _notify_associated(self, info: WorkloadInfo) -> None:
        """``QueueAssociatedInadmissibleWorkloadsAfter``: quota of ``info``'s ClusterQueue changed."""
        cq = info.cluster_queue or self.queues.cluster_queue_for(info)
        if cq:
            self.request_requeue([cq])

    # ---- inadmissible requeue (batched) --------------------------------------------------------------
    def request_requeue(self, cq_names: Any) -> None:
        """``notifyRetryInadmissible``: per Cohort tree (or lone ClusterQueue), one requeue
        ``requeueBatchPeriod`` after the first request."""
        due = self.clock.now + REQUEUE_BATCH_PERIOD
        for name in list(cq_names):
            state = self.cache.cluster_queues.get(name)
            if state is None:
                continue
            if state.node.parent is not None:
                if self.cache.cluster_queue_in_cycle(state):
                    continue
                target = "cohort:" + state.node.root().name
            else:
                target = "cq:" + name
            if target not in self._requeue_due:
                self._requeue_due[target] = due
                self.clock.call_at(due, self._requeue_fire, target)

    def request_requeue_all(self) -> None:
        """:meth:`request_requeue` for every ClusterQueue (a flavor, check or namespace changed), as one
        timer: configuration changes come in bursts (a thousand namespaces at start-up)."""
        if "all" in self._requeue_due:
            return
        self._requeue_due["all"] = self.clock.now + REQUEUE_BATCH_PERIOD
        self.clock.call_at(self.clock.now + REQUEUE_BATCH_PERIOD, self._requeue_fire, "all")

    def _requeue_fire(self, target: str) -> None:
        if self._requeue_due.pop(target, None) is None:
            return
        kind, _, name = target.partition(":")
        if kind == "all":
            names_ = [n for n, state in self.cache.cluster_queues.items() if not state.in_cycle]
        elif kind == "cq":
            names_ = [name]
        else:
            root = self.cache.cohorts.get(name)
            names_ = [n.name for n in root.subtree_cluster_queues()] if root is not None else []
        self.queues.queue_inadmissible(names_)

    # ---- scheduler hooks -----------------------------------------------------------------------------
    def cluster_queue_schedulable(self, name: str) -> bool:
        state = self.cache.cluster_queues.get(name)
        return state is not None and state.active and not self.cache.cluster_queue_in_cycle(state)

    def admissibility_error(self, info: WorkloadInfo, cq: ClusterQueueState) -> str | None:
        """``ValidateAdmissibility``: the namespace must match the ClusterQueue's selector."""
        selector = cq.spec.namespace_selector
        if selector is None or not selector.matches(self.namespace_labels(info.namespace)):
            return NAMESPACE_MISMATCH
        errors = validate_resources(info)
        if errors:
            return f"resources validation failed: {aggregate(errors)}"
        return None

    def oracle(self, cq: ClusterQueueState) -> Callable[[WorkloadInfo, Any, int], tuple[int, int]]:
        return lambda info, fr, quantity: self.preemptor.simulate(info, cq, fr, quantity)

    def tas_assigner(self, cq: ClusterQueueState) -> Any:
        return self.tas.assigner_for(cq) if self.tas is not None else None

    def targets_for(self, info: WorkloadInfo, cq: ClusterQueueState, assignment: Assignment) -> list[Target]:
        tas_requests = self.tas.requests_for(info, cq, assignment) if self.tas is not None else None
        return self.preemptor.get_targets(info, cq, assignment.total_requests(info),
                                          assignment.flavors_needing_preemption(), tas_requests)

    # ---- writes --------------------------------------------------------------------------------------
    def write(self, obj: Object) -> None:
        self.api.update_status(obj)

    def write_finished(self, obj: Object) -> None:
        """The write of ``workload/finish.Finish``, whose only change since the version read last is the Finished
        condition: the Info of that version, when it is the one kept, stands for the new one (see :meth:`observe`)."""
        md = obj.get("metadata") or {}
        previous = self.infos.get(f"{md.get('namespace', '')}/{md.get('name', '')}")
        rv = md.get("resourceVersion")
        if (self.shortcuts and previous is not None and previous.obj is obj and rv is not None
                and previous.resource_version == rv):
            self._finishing = previous
        try:
            self.api.update_status(obj)
        finally:
            self._finishing = None

    def admit(self, info: WorkloadInfo, cq: ClusterQueueState, admission: dict[str, Any], considered: str) -> None:
        """``admit`` + ``prepareWorkload``: QuotaReserved, and Admitted when every check is Ready."""
        obj = info.obj
        self.preemptor.forget_object(obj)
        now = self.clock.timestamp()
        was_reserved = has_quota_reservation(obj)
        queued_since = find_condition(obj, names.REQUEUED)
        since = self.clock.seconds_of(str(queued_since.get("lastTransitionTime"))) if queued_since else \
            self.clock.seconds_of(info.creation_ts)
        set_quota_reservation(obj, admission, now)
        # prepareWorkload: Admitted is synced only when every check the ClusterQueue requires has a state
        # already; otherwise the workload controller adds the states and syncs it.
        present = {c.get("name") for c in (obj.get("status") or {}).get("admissionChecks") or [] if isinstance(c, dict)}
        if set(self.checks_for(obj, cq)) <= present:
            sync_admitted_after_reservation(obj, now)
        admitted = is_admitted(obj)
        assumed = WorkloadInfo(obj)
        assumed.last_assignment = None
        self.cache.add_or_update_workload(assumed)
        self.infos[info.key] = assumed
        self.queues.clear_preemptor(info.key)
        if not was_reserved:
            # time.Duration saturates at its maximum (about 292 years) for a zero creation time.
            wait = min(max(0.0, self.clock.now - since), MAX_DURATION_SECONDS)
            message = f"Quota reserved in ClusterQueue {cq.name}, wait time since queued was {wait:.0f}s"
            if considered:
                message += f"; Flavors considered: {considered}"
            self.recorder.kube_event(obj, "Normal", "QuotaReserved", message)
            self.record(obj, "QuotaReserved", reason="QuotaReserved", message=f"Quota reserved in ClusterQueue {cq.name}")
        if admitted:
            self.admitted_at[info.key] = self.clock.now
            self.recorder.kube_event(obj, "Normal", "Admitted",
                                     f"Admitted by ClusterQueue {cq.name}, wait time since reservation was 0s")
            self.record(obj, "Admitted", reason="Admitted", message=f"Admitted by ClusterQueue {cq.name}")
        seen = self.observed.get(info.key)
        if seen is not None:
            seen.pending_message = None
        self.write(obj)
        # The write moved nothing but the resourceVersion: ``assumed`` reads as the stored version does.
        assumed.resource_version = (obj.get("metadata") or {}).get("resourceVersion")
        if not admitted:
            self.reconcile_after(info.key, 0.0)

    def sync_admission_checks(self, obj: Object, cq: ClusterQueueState) -> bool:
        """``syncAdmissionCheckConditions``: one Pending state per check the ClusterQueue requires."""
        wanted = self.checks_for(obj, cq)
        status = obj.setdefault("status", {})
        current = [c for c in status.get("admissionChecks") or [] if isinstance(c, dict)]
        if not wanted:
            if current:
                status.pop("admissionChecks", None)
                return True
            return False
        changed = False
        by_name = {c.get("name"): c for c in current}
        now = self.clock.timestamp()
        for name in wanted:
            if name not in by_name:
                by_name[name] = {"name": name, "state": names.CHECK_PENDING, "message": "",
                                 "lastTransitionTime": now}
                changed = True
        kept = [by_name[n] for n in sorted(by_name, key=str) if n in wanted]
        if len(kept) != len(current):
            changed = True
        if changed:
            status["admissionChecks"] = kept
        return changed

    def checks_for(self, obj: Object, cq: ClusterQueueState) -> list[str]:
        """``AdmissionChecksForWorkload``: the ClusterQueue's checks, those with ``onFlavors`` only when the
        admission uses one of them."""
        if not cq.spec.admission_checks:
            return []
        admission = (obj.get("status") or {}).get("admission") or {}
        flavors = {f for psa in admission.get("podSetAssignments") or [] for f in (psa.get("flavors") or {}).values()}
        out = []
        for rule in cq.spec.admission_checks:
            if not rule.on_flavors or flavors & set(rule.on_flavors):
                out.append(rule.name)
        return sorted(set(out))

    def requeue(self, info: WorkloadInfo, reason: str, quota_reserved_reason: str) -> str | None:
        current_obj = self.api.get(names.GROUP, KIND, info.namespace, info.name)
        current = None
        if current_obj is not None and is_admissible(current_obj):
            current = self.infos.get(info.key) or WorkloadInfo(current_obj)
        return self.queues.requeue_workload(info, reason, quota_reserved_reason, current)

    def set_pending(self, info: WorkloadInfo, reason: str, message: str) -> None:
        """The Pending condition and event of a workload the cycle did not admit."""
        obj = self.api.get(names.GROUP, KIND, info.namespace, info.name)
        if obj is None or has_quota_reservation(obj):
            return
        self.preemptor.forget_object(obj)
        now = self.clock.timestamp()
        changed = unset_quota_reservation(obj, reason, message, now)
        # PropagateResourceRequests: the requests the workload waits for, per podset.
        requests = requests_text(info)
        status = obj["status"]  # unset_quota_reservation made it a dict
        if status.get("resourceRequests") != requests:
            status["resourceRequests"] = [{"name": r["name"], "resources": dict(r["resources"])} for r in requests]
            changed = True
        self.recorder.kube_event(obj, "Warning", reason, message)
        self.note_pending(obj, reason, message)
        if changed:
            self.write(obj)

    def note_pending(self, obj: Object, reason: str, message: str) -> None:
        """Record the ``Pending`` timeline event, only when the message changed."""
        md = obj.get("metadata") or {}
        seen = self.observed.get(f"{md.get('namespace', '')}/{md.get('name', '')}")
        if seen is not None:
            if seen.pending_message == message:
                return
            seen.pending_message = message
        self.record(obj, "Pending", reason=reason, message=message)

    def record(self, obj: Object, event: str, *, reason: str | None = None, message: str | None = None) -> None:
        self.recorder.record_for(obj, event, reason=reason, message=message)

    def wait_for_pods_ready(self, info: WorkloadInfo) -> None:
        """``waitForPodsReadyIfNeeded``: the cycle blocks until every admitted workload is ready."""
        obj = self.api.get(names.GROUP, KIND, info.namespace, info.name)
        if obj is None:
            return
        message = "waiting for all admitted workloads to be in PodsReady condition"
        self.preemptor.forget_object(obj)
        if unset_quota_reservation(obj, names.WAITING_FOR_PODS_READY, message, self.clock.timestamp()):
            self.note_pending(obj, names.WAITING_FOR_PODS_READY, message)
            self.write(obj)

    def issue_preemptions(self, preemptor: WorkloadInfo, cq: ClusterQueueState, targets: list[Target]) -> int:
        """``IssuePreemptions``: evict each target (Evicted=Preempted, Preempted=<reason>)."""
        count = 0
        for target in targets:
            obj = self.api.get(names.GROUP, KIND, target.info.namespace, target.info.name)
            if obj is None:
                continue
            if is_evicted(obj):
                count += 1
                continue
            target_cq = self.cache.cluster_queues.get(target.info.cluster_queue)
            message = preemption_message(preemptor, target.reason, cq_path(cq.node),
                                         cq_path(target_cq.node) if target_cq else "")
            now = self.clock.timestamp()
            self.preemptor.forget_object(obj)
            set_condition(obj, names.PREEMPTED, True, target.reason, message, now)
            self.evict(obj, names.EVICTED_BY_PREEMPTION, message, write=False)
            self.recorder.kube_event(
                obj, "Normal", "Preempted",
                message + f"; preemptor effective priority: {preemptor.priority} (base: {preemptor.priority}, boost: 0); "
                f"preemptee effective priority: {target.info.priority} (base: {target.info.priority}, boost: 0)")
            self.recorder.kube_event(
                preemptor.obj, "Normal", "PreemptedWorkload",
                f"Preempted workload {target.info.key} (UID: {target.info.uid}) in ClusterQueue "
                f"{target.info.cluster_queue}; preemptor effective priority: {preemptor.priority} "
                f"(base: {preemptor.priority}, boost: 0); preemptee effective priority: {target.info.priority} "
                f"(base: {target.info.priority}, boost: 0)")
            self.record(obj, "Preempted", reason=target.reason, message=message)
            self.history.preemptions.append(PreemptionRecord(
                self.clock.now, target.info.key, target.info.cluster_queue, preemptor.key, cq.name, target.reason))
            self.write(obj)
            count += 1
        return count

    def evict(self, obj: Object, reason: str, message: str, *, write: bool = True, cause: str = "",
              report: bool = True) -> None:
        """``workload/evict.Evict``: Evicted=True; admission checks reset to Pending."""
        self.preemptor.forget_object(obj)
        now = self.clock.timestamp()
        condition_reason = f"{reason}DueTo{cause}" if reason == names.DEACTIVATED and cause else reason
        set_condition(obj, names.EVICTED, True, condition_reason, message, now)
        # workloadEvictionStateInc: schedulingStats counts evictions per (reason, underlying cause).
        stats = obj.setdefault("status", {}).setdefault("schedulingStats", {}).setdefault("evictions", [])
        for entry in stats:
            if entry.get("reason") == reason and entry.get("underlyingCause", "") == cause:
                entry["count"] = int(entry.get("count") or 0) + 1
                break
        else:
            stats.append({"reason": reason, "underlyingCause": cause, "count": 1} if cause else
                         {"reason": reason, "count": 1})
        for check in (obj.get("status") or {}).get("admissionChecks") or []:
            if isinstance(check, dict) and check.get("state") != names.CHECK_PENDING:
                previous = check.get("state")
                check.update({"state": names.CHECK_PENDING, "lastTransitionTime": now,
                              "message": f"Reset to Pending after eviction. Previously: {previous}"})
        if report:
            event_reason = f"EvictedDueTo{condition_reason}"
            self.recorder.kube_event(obj, "Normal", event_reason, message)
            self.record(obj, "Evicted", reason=condition_reason, message=message)
        if write:
            self.write(obj)

    # ---- reports -------------------------------------------------------------------------------------
    def finish_history(self) -> History:
        """The history with the ClusterQueues' configuration as the run ended."""
        history = self.history
        for name, state in self.cache.cluster_queues.items():
            node = state.node
            spec = state.spec
            history.cluster_queues[name] = ClusterQueueInfo(
                name, spec.cohort, node.root().name if node.parent is not None else "", spec.flavors(),
                dict(spec.quotas), spec.queueing_strategy,
                {"withinClusterQueue": spec.preemption.within_cluster_queue,
                 "reclaimWithinCohort": spec.preemption.reclaim_within_cohort,
                 "borrowWithinCohort": spec.preemption.borrow_within_cohort})
        history.local_queues.update({key: lq.cluster_queue for key, lq in self.cache.local_queues.items()})
        for key, info in self.infos.items():
            history.workload_queues[key] = f"{info.namespace}/{info.queue_name}"
        return history

    # ---- status queries used by reports --------------------------------------------------------------
    def status_of(self, key: str) -> str:
        seen = self.observed.get(key)
        return seen.status if seen else STATUS_PENDING

    def quota_reserved(self, key: str) -> bool:
        return self.status_of(key) in (STATUS_QUOTA_RESERVED, STATUS_ADMITTED)


def _refreshed(previous: WorkloadInfo, obj: Object) -> WorkloadInfo:
    """A new Info for a new version of the object, keeping what the queues carried over
    (``AddOrUpdateWorkloadWithoutLock`` keeps the flavor scan progress)."""
    info = WorkloadInfo.__new__(WorkloadInfo)
    info.last_assignment = previous.last_assignment
    info.nomination_mapping = None
    info.local_queue_usage = None
    info.last_evaluated_generation = previous.last_evaluated_generation
    info._per_pod_memo = previous._per_pod_memo
    info._spec_podsets = previous._spec_podsets
    info.update(obj, previous)
    return info

