"""The admission and eviction half of Kueue's job reconciler (``jobframework/reconciler.go``
``ReconcileGenericJob``), for the integrations of issue 14 (JobSet, TrainJob), and the runner of
owner-less Workloads.

For a job that owns a Workload (the Workload the job webhook and the creation half made):

* the job finished: the Workload gets ``Finished`` (``Succeeded`` or ``Failed``, the job's message);
* ``reclaimablePods`` follow the job's succeeded replicas (``ReclaimablePods``);
* waitForPodsReady: the Workload's ``PodsReady`` condition follows the job (``generatePodsReadyCondition``);
* the Workload is evicted: the job is suspended (``stopJob``, pod templates restored from the
  Workload's podsets); once it has no active pods the quota is released (QuotaReserved=False,
  ``PendingEvaluation``, the eviction message) and ``Requeued`` is set (True after a preemption);
* the Workload is admitted and the job suspended: the job starts (``startJob``): flavor node labels
  as nodeSelector, flavor tolerations, the ``kueue.x-k8s.io/podset`` and queue labels, and for TAS the
  ``kueue.x-k8s.io/workload`` annotation and the ``kueue.x-k8s.io/topology`` scheduling gate;
* the job runs without an admitted Workload: it is suspended.

A Workload with no owner has no job to run. Like the runner of Kueue's scheduler performance test
(``test/performance/scheduler/runner/controller``), the engine lets it "run" for its
``jobsetctl.dev/duration`` annotation once admitted, then marks it Finished; evicted, it gives its quota
back at once.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from jobsetctl.kube.duration import DurationError, parse_duration
from jobsetctl.kube.jsontree import copy_tree
from jobsetctl.kueue.engine import names
from jobsetctl.kueue.engine.conditions import (
    find_condition,
    first_conditions,
    has_quota_reservation,
    is_admitted,
    is_finished,
    set_condition,
    set_requeued_condition,
    true_in,
    unset_quota_reservation,
)

if TYPE_CHECKING:
    from jobsetctl.kueue.engine.core import Engine

Object = dict[str, Any]
DURATION_ANNOTATION = "jobsetctl.dev/duration"
JOBSET = ("jobset.x-k8s.io", "JobSet")
TRAINJOB = ("trainer.kubeflow.org", "TrainJob")
JOB = ("batch", "Job")
#: The job kinds whose Workloads this half handles.
JOB_KINDS = frozenset({JOBSET, TRAINJOB, JOB})


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _true_condition(obj: Object, kind: str) -> dict[str, Any] | None:
    for cond in _list(_mapping(obj.get("status")).get("conditions")):
        if isinstance(cond, dict) and cond.get("type") == kind and cond.get("status") == "True":
            return cond
    return None


class JobAdapter:
    """``GenericJob`` for one job object."""

    def __init__(self, engine: Engine, job: Object) -> None:
        self.engine = engine
        self.job = job
        self.group, self.kind = str(job.get("apiVersion", "")).partition("/")[0], str(job.get("kind", ""))

    def is_suspended(self) -> bool:
        return _mapping(self.job.get("spec")).get("suspend") is True

    def is_active(self) -> bool:
        status = _mapping(self.job.get("status"))
        if self.kind == "Job":
            return _int(status.get("active")) > 0
        key = "replicatedJobsStatus" if self.kind == "JobSet" else "jobsStatus"
        return any(_int(_mapping(s).get("active")) > 0 for s in _list(status.get(key)))

    def finished(self) -> tuple[str, bool] | None:
        done = "Completed" if self.kind == "JobSet" else "Complete"  # TrainJob and Job: Complete
        cond = _true_condition(self.job, done)
        if cond is not None:
            return str(cond.get("message", "")), True
        cond = _true_condition(self.job, "Failed")
        if cond is not None:
            return str(cond.get("message", "")), False
        return None

    def _replicated_jobs(self) -> list[dict[str, Any]]:
        """The JobSet's replicated jobs (a TrainJob's: those of the JobSet it made)."""
        if self.kind == "JobSet":
            return [r for r in _list(_mapping(self.job.get("spec")).get("replicatedJobs")) if isinstance(r, dict)]
        child = self._child_jobset()
        return [r for r in _list(_mapping(child.get("spec")).get("replicatedJobs")) if isinstance(r, dict)] if child else []

    def _child_jobset(self) -> Object | None:
        uid = str(_mapping(self.job.get("metadata")).get("uid", ""))
        owned = self.engine.api.owned(uid, JOBSET[0], JOBSET[1])
        return owned[0] if owned else None

    def pods_ready(self) -> bool:
        """``PodsReady``: ready + succeeded replicas cover every replica (a Job: ready + succeeded pods
        reach its parallelism, ``job_controller.go`` ``PodsReady``)."""
        if self.kind == "Job":
            spec = _mapping(self.job.get("spec"))
            status = _mapping(self.job.get("status"))
            parallelism = spec.get("parallelism", 1)
            parallelism = parallelism if isinstance(parallelism, int) else 1
            completions = spec.get("completions")
            if isinstance(completions, int):
                parallelism = min(parallelism, completions - _int(status.get("succeeded")))
            return _int(status.get("ready")) + _int(status.get("succeeded")) >= max(parallelism, 1)
        replicas = sum(_int(r.get("replicas", 1)) if "replicas" in r else 1 for r in self._replicated_jobs())
        status = _mapping(self.job.get("status"))
        key = "replicatedJobsStatus" if self.kind == "JobSet" else "jobsStatus"
        ready = sum(_int(_mapping(s).get("ready")) + _int(_mapping(s).get("succeeded")) for s in _list(status.get(key)))
        return replicas == ready

    def reclaimable_pods(self) -> list[dict[str, Any]]:
        """``ReclaimablePods``: succeeded replicas x pods per replica, per replicated job (a Job reports
        none here: its reclaimable pods follow completions minus parallelism, not modelled)."""
        if self.kind == "Job":
            return []
        status = _mapping(self.job.get("status"))
        key = "replicatedJobsStatus" if self.kind == "JobSet" else "jobsStatus"
        statuses = {str(_mapping(s).get("name", "")): _mapping(s) for s in _list(status.get(key))}
        if not statuses:
            return []
        out = []
        for rj in self._replicated_jobs():
            found = statuses.get(str(rj.get("name", "")))
            replicas = _int(rj.get("replicas", 1)) if "replicas" in rj else 1
            succeeded = _int(found.get("succeeded")) if found else 0
            if found is not None and 0 < succeeded <= replicas:
                out.append({"name": str(rj.get("name", "")).lower(), "count": succeeded * pods_per_replica(rj)})
        return out

    def templates(self) -> list[dict[str, Any]]:
        """The pod templates Kueue edits, one per podset (JobSet, Job; a TrainJob is patched instead)."""
        if self.kind == "Job":
            return [_mapping(_mapping(self.job.get("spec")).get("template"))]
        return [_mapping(_mapping(_mapping(rj.get("template")).get("spec")).get("template")) for rj in self._replicated_jobs()]


def pods_per_replica(rj: dict[str, Any]) -> int:
    """``PodsCountPerReplica``: min(parallelism, completions), parallelism defaulting to 1."""
    spec = _mapping(_mapping(rj.get("template")).get("spec"))
    parallelism = spec.get("parallelism", 1)
    parallelism = parallelism if isinstance(parallelism, int) else 1
    completions = spec.get("completions", parallelism)
    completions = completions if isinstance(completions, int) else parallelism
    return min(parallelism, completions)


def podset_infos(engine: Engine, workload: Object) -> list[dict[str, Any]]:
    """``getPodSetsInfoFromStatus``: what admission adds to each podset's pod template."""
    status = _mapping(workload.get("status"))
    admission = _mapping(status.get("admission"))
    spec_podsets = [p for p in _list(_mapping(workload.get("spec")).get("podSets")) if isinstance(p, dict)]
    md = _mapping(workload.get("metadata"))
    out = []
    for index, psa in enumerate(_list(admission.get("podSetAssignments"))):
        psa = _mapping(psa)
        podset = spec_podsets[index] if index < len(spec_podsets) else {}
        info: dict[str, Any] = {"name": psa.get("name"), "labels": {}, "annotations": {}, "nodeSelector": {},
                                "tolerations": [], "schedulingGates": []}
        if engine.tas is not None and psa.get("topologyAssignment") is not None:
            request = _mapping(podset.get("topologyRequest"))
            if not any(request.get(k) is not None for k in ("preferred", "required", "unconstrained")):
                info["annotations"][names.UNCONSTRAINED_TOPOLOGY_ANNOTATION] = "true"
            info["schedulingGates"].append({"name": names.TOPOLOGY_SCHEDULING_GATE})
        seen: set[str] = set()
        for flavor_name in _mapping(psa.get("flavors")).values():
            if flavor_name in seen:
                continue
            seen.add(flavor_name)
            flavor = engine.cache.flavors.get(str(flavor_name))
            if flavor is None:
                continue
            info["nodeSelector"].update(flavor.labels)
            info["tolerations"].extend(copy_tree(list(flavor.raw_tolerations)))
        if engine.tas is not None:
            info["annotations"][names.WORKLOAD_ANNOTATION] = str(md.get("name", ""))
        info["labels"][names.POD_SET_LABEL] = str(psa.get("name", ""))
        info["labels"][names.LOCAL_QUEUE_LABEL] = str(_mapping(workload.get("spec")).get("queueName", ""))
        cq = str(admission.get("clusterQueue", ""))
        if _is_dns1123_label(cq):
            info["labels"][names.CLUSTER_QUEUE_LABEL] = cq
        out.append(info)
    return out


def _is_dns1123_label(value: str) -> bool:
    from jobsetctl.kube.names import is_dns1123_label

    return not is_dns1123_label(value)


def merge_into_template(template: dict[str, Any], info: dict[str, Any]) -> None:
    """``podset.Merge`` into a pod template (labels, annotations, nodeSelector: added; tolerations and
    scheduling gates: appended when absent)."""
    md = template.setdefault("metadata", {})
    spec = template.setdefault("spec", {})
    for field_name, values in (("labels", info["labels"]), ("annotations", info["annotations"])):
        if values:
            md.setdefault(field_name, {}).update(values)
    if info["nodeSelector"]:
        spec.setdefault("nodeSelector", {}).update(info["nodeSelector"])
    for toleration in info["tolerations"]:
        existing = spec.setdefault("tolerations", [])
        if toleration not in existing:
            existing.append(toleration)
    for gate in info["schedulingGates"]:
        existing = spec.setdefault("schedulingGates", [])
        if gate not in existing:
            existing.append(gate)


def restore_template(template: dict[str, Any], original: dict[str, Any]) -> bool:
    """``podset.RestorePodSpec``: put back the fields admission changed, from the Workload's podset."""
    changed = False
    md = template.setdefault("metadata", {})
    spec = template.setdefault("spec", {})
    original_md = _mapping(original.get("metadata"))
    original_spec = _mapping(original.get("spec"))
    for container, source, name in ((md, original_md, "labels"), (md, original_md, "annotations"),
                                    (spec, original_spec, "nodeSelector"), (spec, original_spec, "tolerations"),
                                    (spec, original_spec, "schedulingGates")):
        want = source.get(name)
        if (container.get(name) or None) != (want or None):
            if want:
                container[name] = copy_tree(want)
            else:
                container.pop(name, None)
            changed = True
    return changed


def reconcile_job(engine: Engine, job: Object, workload: Object) -> float | None:
    """The admission/eviction half of ``ReconcileGenericJob`` for one JobSet or TrainJob and the Workload
    it owns (found by the creation half, :class:`~jobsetctl.fakecluster.controllers.kueue_job.KueueJobReconciler`)."""
    adapter = JobAdapter(engine, job)
    if is_finished(workload):
        return None
    finished = adapter.finished()
    if finished is not None:
        message, success = finished
        reason = names.FINISHED_SUCCEEDED if success else names.FINISHED_FAILED
        finish(engine, workload, reason, message)
        return None
    if engine.settings.gate("ReclaimablePods"):
        reclaim = _limit_reclaim(workload, adapter.reclaimable_pods())
        current = _list(_mapping(workload.get("status")).get("reclaimablePods"))
        if _reclaim_map(reclaim) != _reclaim_map(current):
            workload.setdefault("status", {})["reclaimablePods"] = reclaim
            engine.write(workload)
            return 0.0
    if engine.settings.wait_for_pods_ready is not None:
        reason, ready, message = _pods_ready_condition(adapter, workload)
        ready_condition = find_condition(workload, names.PODS_READY)
        if (ready_condition is None or ready_condition.get("reason") != reason
                or ready_condition.get("status") != ("True" if ready else "False")):
            set_condition(workload, names.PODS_READY, ready, reason, message, engine.clock.timestamp())
            engine.write(workload)
            return 0.0
    evicted = find_condition(workload, names.EVICTED)
    if evicted is not None and evicted.get("status") == "True":
        stop_job(engine, adapter, workload)
        if has_quota_reservation(workload) and not adapter.is_active():
            reason = str(evicted.get("reason", ""))
            message = str(evicted.get("message", ""))
            requeued = reason in (names.EVICTED_BY_PREEMPTION, names.EVICTED_DUE_TO_NODE_FAILURES)
            release_quota(engine, workload, reason, message, requeued)
        return None
    if adapter.is_suspended():
        if is_admitted(workload):
            start_job(engine, adapter, workload)
        return None
    if not is_admitted(workload):
        stop_job(engine, adapter, workload)
    return None


def _limit_reclaim(workload: Object, reclaim: list[dict[str, Any]]) -> list[dict[str, Any]]:
    counts = {str(_mapping(p).get("name", "")): _int(_mapping(p).get("count", 1))
              for p in _list(_mapping(workload.get("spec")).get("podSets"))}
    return [{"name": r["name"], "count": min(r["count"], counts.get(r["name"], r["count"]))} for r in reclaim]


def _reclaim_map(items: list[Any]) -> dict[str, int]:
    return {str(_mapping(i).get("name", "")): _int(_mapping(i).get("count")) for i in items}


def _pods_ready_condition(adapter: JobAdapter, workload: Object) -> tuple[str, bool, str]:
    """``generatePodsReadyCondition``."""
    not_ready = "Not all pods are ready or succeeded"
    recovery = "At least one pod has failed, waiting for recovery"
    if not is_admitted(workload):
        return names.WAIT_FOR_START, False, not_ready
    current = find_condition(workload, names.PODS_READY)
    if adapter.pods_ready():
        reason = names.STARTED
        if current is not None and current.get("reason") in (names.WAIT_FOR_RECOVERY, names.RECOVERED):
            reason = names.RECOVERED
        return reason, True, "All pods reached readiness and the workload is running"
    if current is None:
        return names.WAIT_FOR_START, False, not_ready
    if current.get("status") == "True" or current.get("reason") == names.WAIT_FOR_RECOVERY:
        return names.WAIT_FOR_RECOVERY, False, recovery
    return names.WAIT_FOR_START, False, not_ready


def finish(engine: Engine, workload: Object, reason: str, message: str) -> None:
    """``workload/finish.Finish``."""
    set_condition(workload, names.FINISHED, True, reason, message, engine.clock.timestamp())
    engine.record(workload, "Finished", reason=reason, message=message)
    engine.write_finished(workload)


def release_quota(engine: Engine, workload: Object, reason: str, message: str, requeued: bool) -> None:
    """The evicted workload's job stopped: clear the admission and set ``Requeued``."""
    now = engine.clock.timestamp()
    changed = set_requeued_condition(workload, reason, message, requeued, now)
    if unset_quota_reservation(workload, names.PENDING_EVALUATION, message, now):
        changed = True
    if requeued:
        engine.record(workload, "Requeued", reason=reason, message=message)
    if changed:
        engine.note_pending(workload, names.PENDING_EVALUATION, message)
        engine.write(workload)


def start_job(engine: Engine, adapter: JobAdapter, workload: Object) -> None:
    """``startJob``: merge the admission into the pod templates, unsuspend."""
    infos = podset_infos(engine, workload)
    job = adapter.job
    old = copy_tree(job)
    if adapter.kind in ("JobSet", "Job"):
        templates = adapter.templates()
        if len(templates) != len(infos):
            return
        for template, info in zip(templates, infos, strict=True):
            merge_into_template(template, info)
        job.setdefault("spec", {})["suspend"] = False
        engine.api.update(job, old=old)
        return
    patch = _kueue_runtime_patch(job)
    patch["trainingRuntimeSpec"] = {"template": {"spec": {"replicatedJobs": [
        {"name": info["name"], "template": {"spec": {"template": {
            "metadata": {k: v for k, v in (("labels", info["labels"]), ("annotations", info["annotations"])) if v},
            "spec": {k: v for k, v in (("nodeSelector", info["nodeSelector"]), ("tolerations", info["tolerations"]),
                                       ("schedulingGates", info["schedulingGates"])) if v},
        }}}} for info in infos]}}}
    engine.api.update(job, old=old)
    old = copy_tree(job)
    job.setdefault("spec", {})["suspend"] = False
    engine.api.update(job, old=old)


def _kueue_runtime_patch(job: Object) -> dict[str, Any]:
    spec = job.setdefault("spec", {})
    patches = spec.setdefault("runtimePatches", [])
    for patch in patches:
        if isinstance(patch, dict) and patch.get("manager") == names.TRAINJOB_RUNTIME_PATCH_MANAGER:
            return patch
    patch = {"manager": names.TRAINJOB_RUNTIME_PATCH_MANAGER}
    patches.append(patch)
    return patch


def stop_job(engine: Engine, adapter: JobAdapter, workload: Object) -> None:
    """``stopJob``: suspend, and restore the pod templates from the Workload's podsets."""
    job = adapter.job
    if adapter.kind == "TrainJob":
        if not adapter.is_suspended():
            old = copy_tree(job)
            job.setdefault("spec", {})["suspend"] = True
            engine.api.update(job, old=old)
        if adapter.is_active():
            return
        patch = _kueue_runtime_patch(job)
        if patch.get("trainingRuntimeSpec") is not None:
            old = copy_tree(job)
            patch.pop("trainingRuntimeSpec", None)
            engine.api.update(job, old=old)
        return
    if adapter.is_suspended():
        return
    old = copy_tree(job)
    job.setdefault("spec", {})["suspend"] = True
    restore_podsets(adapter, [p for p in _list(_mapping(workload.get("spec")).get("podSets")) if isinstance(p, dict)])
    engine.api.update(job, old=old)


def restore_podsets(adapter: JobAdapter, podsets: list[dict[str, Any]]) -> bool:
    """``RestorePodSetsInfo``: each pod template back as its podset holds it; a count of podsets that is not
    the job's count of templates changes nothing (jobset_controller.go). Whether anything changed."""
    templates = adapter.templates()
    if len(templates) != len(podsets):
        return False
    changed = False
    for template, podset in zip(templates, podsets, strict=True):
        changed = restore_template(template, _mapping(podset.get("template"))) or changed
    return changed


# ---- owner-less workloads ------------------------------------------------------------------------------


def workload_duration(workload: Object) -> float | None:
    annotations = _mapping(_mapping(workload.get("metadata")).get("annotations"))
    value = annotations.get(DURATION_ANNOTATION)
    if value is None:
        return None
    if type(value) is str:
        return _duration_seconds(value)
    try:
        return parse_duration(value)
    except DurationError:
        return None


@functools.lru_cache(maxsize=4096)
def _duration_seconds(text: str) -> float | None:
    """The seconds of a duration annotation text (None: not a duration), remembered: an admitted owner-less
    workload reads its annotation at each reconcile, and a run's workloads share a few texts."""
    try:
        return parse_duration(text)
    except DurationError:
        return None


def reconcile_standalone(engine: Engine, workload: Object, first: dict[Any, dict[str, Any]] | None = None) -> float | None:
    """The performance-test runner's controller, for a Workload without an owner. ``first``:
    :func:`first_conditions` of the workload as it is now, when the caller kept it."""
    if first is None:
        first = first_conditions(workload)  # read before anything is written
    if true_in(first, names.FINISHED):
        return None
    evicted = first.get(names.EVICTED)
    if evicted is not None and evicted.get("status") == "True":
        if true_in(first, names.QUOTA_RESERVED):
            now = engine.clock.timestamp()
            message = str(evicted.get("message", ""))
            reason = str(evicted.get("reason", ""))
            requeued = reason in (names.EVICTED_BY_PREEMPTION, names.EVICTED_DUE_TO_NODE_FAILURES)
            changed = set_requeued_condition(workload, reason, message, requeued, now)
            if requeued:
                engine.record(workload, "Requeued", reason=reason, message=message)
            if unset_quota_reservation(workload, names.PENDING_EVALUATION, message, now) or changed:
                engine.note_pending(workload, names.PENDING_EVALUATION, message)
                engine.write(workload)
        return None
    admitted = first.get(names.ADMITTED)
    if admitted is None or admitted.get("status") != "True":
        return None
    duration = workload_duration(workload)
    if duration is None:
        return None
    key = f"{_mapping(workload.get('metadata')).get('namespace', '')}/{_mapping(workload.get('metadata')).get('name', '')}"
    started = engine.admitted_at.get(key)
    if started is None:
        started = engine.clock.seconds_of(str(admitted.get("lastTransitionTime")))
    remaining = started + duration - engine.clock.now
    if remaining > 1e-9:
        return remaining
    finish(engine, workload, names.FINISHED_SUCCEEDED,
           f"The workload ran for its {DURATION_ANNOTATION} annotation")
    return None
