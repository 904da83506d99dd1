"""The Kubernetes Job controller (``batch/v1``, behaviour of 1.35–1.37) for the fake cluster.

It runs in ``render`` (no scheduler: pods stay Pending) and ``simulate`` alike. The pass itself is
:class:`~.job_sync.JobSync`; pod creation and deletion :mod:`.job_manage`; failure handling
:mod:`.job_failure`; Workload/PodGroup creation (KEP-5547) :mod:`.job_scheduling`.

What we keep and what we leave out (kubernetes ``pkg/controller/job``):

* pods are listed by controller ownerReference (UID); orphan adoption by selector is not modelled;
* the ``batch.kubernetes.io/job-tracking`` finalizer is modelled: every pod the controller creates
  carries it until the controller has counted the pod, so a pod that finishes and is removed at
  the same instant is still counted; pods of a deleted or finished Job lose it (``orphanWorker``);
* expectations are not needed: our store is consistent and controllers run one at a time;
* events re-sync the Job at once (upstream batches pod events by 1 s); timed re-syncs come from
  ``activeDeadlineSeconds``, the pod-failure back-off and the API back-off of rejected creates;
* ``successPolicy`` of Indexed Jobs: :mod:`.job_success`.

Simulation events (the JSON contract): Job ``Suspended``, ``Resumed``, ``Completed`` and ``Failed``
(with the condition's reason and message). Kubernetes Events as upstream: ``SuccessfulCreate``,
``FailedCreate``, ``SuccessfulDelete``, ``Suspended``, ``Resumed``, ``Completed`` and the failure
reason.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Iterable
from typing import Any

from jobsetctl.fakecluster.apiserver import WatchEvent, WatchType, controller_of
from jobsetctl.fakecluster.controllers.job_pods import has_tracking_finalizer, owned_pods
from jobsetctl.fakecluster.controllers.job_scheduling import GROUP as SCHEDULING_GROUP
from jobsetctl.fakecluster.controllers.job_scheduling import SchedulingObjects
from jobsetctl.fakecluster.controllers.job_spec import (
    JOB_COMPLETION_INDEX_KEY,
    JOB_TRACKING_FINALIZER,
    JobView,
    job_finished,
    mapping,
    text,
)
from jobsetctl.fakecluster.controllers.job_sync import JobState, JobSync
from jobsetctl.fakecluster.manager import Controller, Manager
from jobsetctl.kinds.interface import Object

JOB_KEY = "job"
ORPHAN_KEY = "orphan-pod"


def sync_inputs(pod: Object) -> tuple[Any, ...]:
    """What a Job sync reads of one of its pods, besides its ownership (outside ``restartPolicy: OnFailure``
    and pod failure policies): the phase, whether it is deleted, the first Ready condition's status, the
    tracking finalizer and the completion index annotation, as raw values (equal raw values give equal
    answers of ``phase``, ``is_deleted``, ``is_ready``, ``has_tracking_finalizer``, ``completion_index``).
    The node and the other conditions enter a sync only when it deletes pods (removal order), which a Job
    at a fixed point does not."""
    md = pod.get("metadata")
    if not isinstance(md, dict):
        md = {}
    status = pod.get("status")
    if not isinstance(status, dict):
        status = {}
    ready: Any = None
    conditions = status.get("conditions")
    if isinstance(conditions, list):
        for cond in conditions:
            if isinstance(cond, dict) and cond.get("type") == "Ready":
                ready = ("Ready", cond.get("status"))
                break
    finalizers = md.get("finalizers")
    annotations = md.get("annotations")
    return (status.get("phase"), bool(md.get("deletionTimestamp")), ready,
            isinstance(finalizers, list) and JOB_TRACKING_FINALIZER in finalizers,
            annotations.get(JOB_COMPLETION_INDEX_KEY) if isinstance(annotations, dict) else None)


class JobController(Controller):
    name = "job-controller"
    watches = frozenset({("batch", "Job"), ("", "Pod"), (SCHEDULING_GROUP, "Workload"), (SCHEDULING_GROUP, "PodGroup")})

    def __init__(self, options: Any = None) -> None:
        super().__init__(options)
        #: Per Job UID: the pod-failure back-off record and the API back-off.
        self._states: dict[str, JobState] = {}
        #: render without ``--pods``: everything but pod creation.
        self.create_pods = bool(getattr(options, "create_pods", True)) if options is not None else True
        #: Keys of Jobs that their last sync left at a fixed point (``JobSync.settled``) and that nothing
        #: has touched since: their next sync would write nothing, so it is skipped. It stays in the queue
        #: (keys are enqueued as before), so every other reconcile keeps its place and order. The value: per
        #: pod (by identity) what the sync reads of it (:func:`sync_inputs`), so that a pod write that changes
        #: none of it (the binding, a scheduling condition) leaves the Job settled; None: any pod write counts.
        self._settled: dict[Hashable, dict[int, tuple[Object, tuple[Any, ...]]] | None] = {}
        #: The key of the sync in progress, and whether an event other than its own writes (pod creates,
        #: its status write) touched its Job meanwhile.
        self._syncing: Hashable | None = None
        self._disturbed = False
        #: Syncs skipped that way (with ``verify_settled``: run anyway and found to write nothing).
        self.skipped_syncs = 0
        extra = getattr(options, "extra", None) or {}
        settings = extra.get(self.name) if isinstance(extra, dict) else None
        settings = settings if isinstance(settings, dict) else {}
        #: ``{"job-controller": {"skipSettledSyncs": false}}`` (tests): every sync runs, the reference.
        self.skip_settled = bool(settings.get("skipSettledSyncs", True))
        #: With the invariant checks (the test suite), a skipped sync runs anyway and must write nothing
        #: (``verifySettledSyncs`` says otherwise, for the tests that compare skipping with not skipping).
        from jobsetctl.fakecluster.cluster import CHECK_INVARIANTS_ENV

        checks = bool(extra.get("check_invariants") if isinstance(extra, dict) else False) or bool(
            os.environ.get(CHECK_INVARIANTS_ENV))
        self.verify_settled = bool(settings.get("verifySettledSyncs", checks))

    def setup(self, manager: Manager) -> None:
        super().setup(manager)
        self.scheduling = SchedulingObjects(self.api, self._scheduling_event)
        self._current: Object | None = None

    # -- watch -----------------------------------------------------------------------------------------
    def keys_for(self, event: WatchEvent) -> Iterable[Hashable]:
        # Tuples, not a generator: this runs for every pod write.
        group, kind, namespace, name = event.key
        if group == "batch" and kind == "Job":
            key = (JOB_KEY, namespace, name)
            if event.type == WatchType.DELETED:
                self._states.pop(text(mapping(event.obj.get("metadata")).get("uid")), None)
                self._settled.pop(key, None)
                return ()
            if self._syncing is not None or self._settled:
                self._touched(key, event.type == WatchType.MODIFIED and event.obj is self._current)
            return (key,)
        if group == "" and kind == "Pod":
            ref = controller_of(event.obj)
            if ref is None or ref.get("kind") != "Job" or ref.get("apiVersion") != "batch/v1":
                return ()
            if self._syncing is not None or self._settled:
                job_key = (JOB_KEY, namespace, text(ref.get("name")))
                if event.type == WatchType.MODIFIED and job_key != self._syncing:
                    pods = self._settled.get(job_key)
                    seen = pods.get(id(event.obj)) if pods is not None else None
                    if seen is None or seen[0] is not event.obj or seen[1] != sync_inputs(event.obj):
                        self._settled.pop(job_key, None)
                else:
                    self._touched(job_key, event.type == WatchType.ADDED)
            job = self.api.get("batch", "Job", namespace, text(ref.get("name")))
            if job is not None and mapping(job.get("metadata")).get("uid") == ref.get("uid"):
                if not isinstance(job.get("status"), dict):
                    job["status"] = {}  # as ``JobView.finished`` reads it (it materialises the status)
                if not job_finished(job):
                    return ((JOB_KEY, namespace, text(ref.get("name"))),)
            if event.type != WatchType.DELETED and has_tracking_finalizer(event.obj):
                return ((ORPHAN_KEY, namespace, name),)
            return ()
        if group == SCHEDULING_GROUP and kind in ("Workload", "PodGroup"):
            for ref in mapping(event.obj.get("metadata")).get("ownerReferences") or []:
                if isinstance(ref, dict) and ref.get("kind") == "Job" and ref.get("apiVersion") == "batch/v1":
                    key = (JOB_KEY, namespace, text(ref.get("name")))
                    self._touched(key, False)
                    return (key,)
        return ()

    def _touched(self, key: Hashable, own_write: bool) -> None:
        """An event about the Job of ``key``, its pods or its scheduling objects: the Job is no longer known to
        be settled. During that Job's own sync, only its own writes (``own_write``: a pod create, the status
        write) leave the sync's fixed-point verdict standing."""
        if key == self._syncing:
            if not own_write:
                self._disturbed = True
        else:
            self._settled.pop(key, None)

    # -- reconcile -------------------------------------------------------------------------------------
    def reconcile(self, key: Hashable) -> float | None:
        if not isinstance(key, tuple):
            return None
        kind, namespace, name = str(key[0]), str(key[1]), str(key[2])
        if kind == ORPHAN_KEY:
            self._release_orphan(namespace, name)
            return None
        job = self.api.get("batch", "Job", namespace, name)
        if job is None:
            return None
        settled = key in self._settled
        if settled:
            self.skipped_syncs += 1
            if not self.verify_settled:
                return None  # nothing touched the Job since a sync left it at a fixed point
        self._settled.pop(key, None)
        uid = text(mapping(job.get("metadata")).get("uid"))
        state = self._states.setdefault(uid, JobState())
        before = self._footprint(state) if settled else None
        self._current = job
        self._syncing = key
        self._disturbed = False
        try:
            sync = JobSync(self, job, state)
            again = sync.run()
        finally:
            self._current = None
            self._syncing = None
        if before is not None and (again is not None or self._footprint(state) != before):
            raise AssertionError(f"job-controller: the sync of settled Job {namespace}/{name} was not a no-op")
        if sync.settled and not self._disturbed and self.skip_settled:
            # ``restartPolicy: OnFailure`` also reads container restart counts: any pod write counts there.
            self._settled[key] = None if sync.view.restart_policy == "OnFailure" else {
                id(pod): (pod, sync_inputs(pod)) for pod in (*sync.pods, *sync.created)}
        return again

    def _footprint(self, state: JobState) -> tuple[Any, ...]:
        """What a sync can change: the store (resource versions, object count), the events, the Job's state."""
        return (self.api.resource_version, len(self.api), len(self.recorder.events), len(self.recorder.kube_events),
                repr(state))

    def pods_of(self, view: JobView) -> list[Object]:
        """The Job's pods: those whose controller ownerReference has the Job's UID, oldest first."""
        uid = view.uid
        return [pod for pod in owned_pods(self.api, uid) if (ref := controller_of(pod)) is not None
                and ref.get("uid") == uid]

    def _release_orphan(self, namespace: str, name: str) -> None:
        """``syncOrphanPod``: a pod whose Job is gone or finished keeps no tracking finalizer."""
        pod = self.api.get("", "Pod", namespace, name)
        if pod is None or not has_tracking_finalizer(pod):
            return
        ref = controller_of(pod)
        if ref is not None and ref.get("kind") == "Job":
            job = self.api.get("batch", "Job", namespace, text(ref.get("name")))
            if job is not None and mapping(job.get("metadata")).get("uid") == ref.get("uid") and not JobView(
                    job).finished:
                return  # adopted after all
        self.api.remove_finalizer(pod, JOB_TRACKING_FINALIZER)

    def _scheduling_event(self, type_: str, reason: str, message: str) -> None:
        if self._current is not None:
            self.recorder.kube_event(self._current, type_, reason, message)
