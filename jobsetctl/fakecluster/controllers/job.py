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

from collections.abc import Hashable, Iterable
from typing import Any

from jobsetctl.fakecluster.apiserver import WatchEvent, WatchType, controller_of
from jobsetctl.fakecluster.controllers.job_pods import has_tracking_finalizer, owned_pods
from jobsetctl.fakecluster.controllers.job_scheduling import GROUP as SCHEDULING_GROUP
from jobsetctl.fakecluster.controllers.job_scheduling import SchedulingObjects
from jobsetctl.fakecluster.controllers.job_spec import (
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


class JobController(Controller):
    name = "job-controller"
    watches = frozenset({("batch", "Job"), ("", "Pod"), (SCHEDULING_GROUP, "Workload"), (SCHEDULING_GROUP, "PodGroup")})

    def __init__(self, options: Any = None) -> None:
        super().__init__(options)
        #: Per Job UID: the pod-failure back-off record and the API back-off.
        self._states: dict[str, JobState] = {}
        #: render without ``--pods``: everything but pod creation.
        self.create_pods = bool(getattr(options, "create_pods", True)) if options is not None else True

    def setup(self, manager: Manager) -> None:
        super().setup(manager)
        self.scheduling = SchedulingObjects(self.api, self._scheduling_event)
        self._current: Object | None = None

    # -- watch -----------------------------------------------------------------------------------------
    def keys_for(self, event: WatchEvent) -> Iterable[Hashable]:
        # Tuples, not a generator: this runs for every pod write.
        group, kind, namespace, name = event.key
        if group == "batch" and kind == "Job":
            if event.type == WatchType.DELETED:
                self._states.pop(text(mapping(event.obj.get("metadata")).get("uid")), None)
                return ()
            return ((JOB_KEY, namespace, name),)
        if group == "" and kind == "Pod":
            ref = controller_of(event.obj)
            if ref is None or ref.get("kind") != "Job" or ref.get("apiVersion") != "batch/v1":
                return ()
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
                    return ((JOB_KEY, namespace, text(ref.get("name"))),)
        return ()

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
        uid = text(mapping(job.get("metadata")).get("uid"))
        state = self._states.setdefault(uid, JobState())
        self._current = job
        try:
            return JobSync(self, job, state).run()
        finally:
            self._current = None

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
