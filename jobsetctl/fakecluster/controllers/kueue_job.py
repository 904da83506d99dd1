"""Kueue's job reconciler (kubernetes-sigs/kueue ``pkg/controller/jobframework/reconciler.go``
``ReconcileGenericJob``) for JobSets, TrainJobs and Jobs in the fake cluster.

Registered when Kueue runs (``ClusterOptions.kueue``). One reconcile per job, in upstream order:

1. the job is gone or being deleted: nothing (Workloads go with their owner, by garbage collection);
2. the job's namespace does not match ``managedJobsNamespaceSelector``, or the job has no queue-name and
   ``manageJobsWithoutQueueName`` is off: nothing;
3. a job whose ancestor is a Kueue-managed job (a TrainJob's JobSet, a JobSet's Jobs) is a *child*: it
   gets no Workload of its own; it is suspended while the ancestor's latest unfinished Workload is missing
   or not admitted (``shouldSuspendChildJob``, event ``Suspended`` "Kueue managed child job suspended");
4. ``ensureOneWorkload``: the Workload this job owns (matching is by owner; the podSet-equivalence check
   that replaces an outdated Workload is not modelled) — with none and a running job, the job is stopped
   (``Stopped`` "Missing Workload; unable to restore pod templates");
5. no Workload: ``handleJobWithNoWorkload`` builds it (:func:`jobsetctl.kueue.workload.build_workload`) and
   creates it (event ``CreatedWorkload`` "Created Workload: <namespace>/<name>"). When Kueue cannot build it
   (an unknown WorkloadPriorityClass or PriorityClass, a TrainJob runtime that is missing) the reconcile
   fails: a Warning event where upstream records one, and a retry with controller-runtime's back-off;
6. a Workload exists: :meth:`KueueJobReconciler.sync_with_workload`.

**Extension point.** :meth:`sync_with_workload` is where Kueue's admission and eviction side goes (steps
1.1-8 of upstream's reconcile after ``ensureOneWorkload``: finished Workloads, reclaimable pods,
``PodsReady``, eviction with ``stopJob``, ``startJob`` with the admitted flavors' node selectors and
tolerations and the TAS scheduling gate on admission). Here it only does step 8 for a job that is not
admitted: a running job is stopped (suspended, event ``Stopped`` "Not admitted by cluster queue"), so a
job Kueue's webhook created suspended stays suspended until the scheduler side admits it. Override it in a
subclass and register that class in :data:`jobsetctl.fakecluster.cluster.KUEUE_CONTROLLERS`;
:meth:`stop_job` and :meth:`job_key` are there to reuse. ``watches`` includes Workloads, so a Workload
status change (Admitted, Evicted) reconciles its owner job.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any, Final, cast

from jobsetctl.fakecluster.apiserver import WatchEvent, WatchType, controller_of
from jobsetctl.fakecluster.manager import Controller
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.jsontree import copy_tree
from jobsetctl.kube.versions import split_api_version
from jobsetctl.kueue import api
from jobsetctl.kueue.config import FRAMEWORK_OF_KIND
from jobsetctl.kueue.jobs import managed_ancestor, managing_config, namespace_managed
from jobsetctl.kueue.workload import build_workload, group_kind, queue_name

#: controller-runtime's default per-item rate limiter (as the other controllers here model it).
BACKOFF_BASE_SECONDS: Final = 0.005
BACKOFF_MAX_SECONDS: Final = 1000.0
JOB_KINDS: Final = frozenset(FRAMEWORK_OF_KIND)
WORKLOAD_KIND: Final = (api.GROUP, api.WORKLOAD)
REASON_CREATED_WORKLOAD: Final = "CreatedWorkload"
REASON_STOPPED: Final = "Stopped"
REASON_SUSPENDED: Final = "Suspended"

#: (group, kind, namespace, name) of a job.
JobKey = tuple[str, str, str, str]


def _m(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def condition_true(obj: Object, condition: str) -> bool:
    return any(_m(c).get("type") == condition and _m(c).get("status") == "True"
               for c in _m(obj.get("status")).get("conditions") or [])


def is_admitted(workload: Object) -> bool:
    """``workload.IsAdmitted``: the ``Admitted`` condition is True."""
    return condition_true(workload, "Admitted")


def is_finished(workload: Object) -> bool:
    return condition_true(workload, "Finished")


def job_suspended(job: Object) -> bool:
    return _m(job.get("spec")).get("suspend") is True


def job_active(job: Object) -> bool:
    """``IsActive`` of the integrations: any replicated job (JobSet), job status (TrainJob) or pod (Job) active."""
    _group, kind = group_kind(job)
    status = _m(job.get("status"))
    if kind == "JobSet":
        return any(_m(s).get("active", 0) > 0 for s in status.get("replicatedJobsStatus") or [])
    if kind == "TrainJob":
        return any((_m(s).get("active") or 0) > 0 for s in status.get("jobsStatus") or [])
    return (status.get("active") or 0) > 0


class KueueJobReconciler(Controller):
    name = "kueue-job-reconciler"
    watches = JOB_KINDS | {WORKLOAD_KIND}

    def __init__(self, options: Any = None) -> None:
        super().__init__(options)
        self._failures: dict[Hashable, int] = {}

    # -- watch ------------------------------------------------------------------------------------------
    def keys_for(self, event: WatchEvent) -> Iterable[Hashable]:
        group, kind, namespace, _name = event.key
        if (group, kind) in JOB_KINDS:
            if event.type != WatchType.DELETED:
                yield event.key
            return
        if (group, kind) == WORKLOAD_KIND:
            ref = controller_of(event.obj)
            if ref is None:
                return
            owner = (split_api_version(str(ref.get("apiVersion", "")))[0], str(ref.get("kind", "")))
            if owner in JOB_KINDS:
                yield (*owner, namespace, str(ref.get("name", "")))

    # -- reconcile --------------------------------------------------------------------------------------
    def context(self) -> AdmissionContext:
        return self.api.context()

    def job_key(self, job: Object) -> JobKey:
        group, kind = group_kind(job)
        meta = _m(job.get("metadata"))
        return group, kind, str(meta.get("namespace", "")), str(meta.get("name", ""))

    def reconcile(self, key: Hashable) -> float | None:
        group, kind, namespace, name = cast(JobKey, key)
        job = self.api.get(group, kind, namespace, name)
        if job is None or _m(job.get("metadata")).get("deletionTimestamp"):
            self._failures.pop(key, None)
            return None
        ctx = self.context()
        config = managing_config(job, ctx)
        if config is None or not namespace_managed(namespace, config, self.api):
            return None
        ancestor = managed_ancestor(job, config, self.api)
        if ancestor is None and not queue_name(job) and not config.manage_jobs_without_queue_name:
            return None
        if ancestor is not None:
            self.suspend_child(job, ancestor)
            return None
        workload = self.owned_workload(job)
        if workload is None:
            return self.create_workload(key, job, ctx)
        self._failures.pop(key, None)
        return self.sync_with_workload(job, workload)

    def owned_workload(self, job: Object) -> Object | None:
        """The latest Workload the job controls (``FindMatchingWorkloads``, matching by owner only)."""
        uid = str(_m(job.get("metadata")).get("uid", ""))
        owned = [w for w in self.api.owned(uid, api.GROUP, api.WORKLOAD)
                 if (controller_of(w) or {}).get("uid") == uid]
        return owned[-1] if owned else None

    def create_workload(self, key: Hashable, job: Object, ctx: AdmissionContext) -> float | None:
        """``handleJobWithNoWorkload``: a running job is stopped first; then the Workload is built and created."""
        if not job_suspended(job):
            self.stop_job(job, "Missing Workload; unable to restore pod templates")
        if job_active(job):
            return None  # upstream waits for the pods to go away; a pod event brings the job back
        built = build_workload(job, ctx)
        if built.workload is None:
            if built.event is not None:
                self.recorder.kube_event(job, "Warning", built.event[0], built.event[1])
            return self._backoff(key)
        result = self.api.create(built.workload)
        if not result.ok or result.obj is None:
            return self._backoff(key)
        self._failures.pop(key, None)
        md = _m(result.obj.get("metadata"))
        self.recorder.kube_event(job, "Normal", REASON_CREATED_WORKLOAD,
                                 f"Created Workload: {md.get('namespace')}/{md.get('name')}")
        return None

    def sync_with_workload(self, job: Object, workload: Object) -> float | None:
        """The admission side (see the module docstring). Here: a job that runs without an admitted
        Workload is stopped (``StopReasonNotAdmitted``)."""
        if is_finished(workload):
            return None
        if not job_suspended(job) and not is_admitted(workload):
            self.stop_job(job, "Not admitted by cluster queue")
        return None

    def suspend_child(self, child: Object, ancestor: Object) -> None:
        """``shouldSuspendChildJob``: a running child of a managed job whose Workload is missing or not admitted."""
        if job_suspended(child) or _finished_job(child):
            return
        workload = self.owned_workload(ancestor)
        if workload is not None and (is_finished(workload) or is_admitted(workload)):
            return
        spec = child.get("spec")
        if not isinstance(spec, dict):
            return
        old = copy_tree(child)
        spec["suspend"] = True
        self.api.update(child, old=old)
        self.recorder.kube_event(child, "Normal", REASON_SUSPENDED, "Kueue managed child job suspended")

    def stop_job(self, job: Object, message: str) -> None:
        """``stopJob`` for a job without pod-set information to restore: suspend it, event ``Stopped``."""
        if job_suspended(job):
            return
        spec = job.get("spec")
        if not isinstance(spec, dict):
            return
        old = copy_tree(job)
        spec["suspend"] = True
        self.api.update(job, old=old)
        self.recorder.kube_event(job, "Normal", REASON_STOPPED, message)

    def _backoff(self, key: Hashable) -> float:
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        return min(BACKOFF_BASE_SECONDS * (2 ** failures), BACKOFF_MAX_SECONDS)


def _finished_job(job: Object) -> bool:
    _group, kind = group_kind(job)
    conditions = _m(job.get("status")).get("conditions") or []
    finished = {"JobSet": ("Completed", "Failed"), "TrainJob": ("Complete", "Failed"), "Job": ("Complete", "Failed")}
    return any(_m(c).get("type") in finished.get(kind, ()) and _m(c).get("status") == "True" for c in conditions)
