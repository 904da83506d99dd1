"""What the JobSet controller writes to its children in one pass: the headless Service (jobset.md §3.3),
the PVCs (§3.4), ElasticJobSet patches (§4.1 step 12), Job creation with the dependsOn, InOrder and
BlockingRecreate gates (§4.3, §4.4, §4.7; upstream ``reconcileReplicatedJobs``), and suspend / resume
of the active Jobs (§4.8; upstream ``suspendJobs``, ``resumeJobsIfNecessary``, ``resumeJob``).

Upstream creates (and deletes) up to 50 Jobs in parallel; we do it sequentially in index order, and,
like ``workqueue.ParallelizeUntil``, every create is attempted even after one fails.

Resume merges the replicated job's pod-template ``tolerations`` and ``schedulingGates`` into the Job's
with Go's ``MergeSlices``: a set union over Go ``==``, whose result order is that of a Go map
iteration (random). We keep first-seen order (the Job's items, then the new ones). Go compares a
Toleration's ``tolerationSeconds`` *pointer*, so a toleration that sets ``tolerationSeconds`` never
equals a decoded copy of itself and is appended again (quirk, derived from code; we reproduce it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jobsetctl.fakecluster.apiserver import APIServer
from jobsetctl.fakecluster.controllers.jobset_conditions import WARNING, StatusUpdate
from jobsetctl.fakecluster.controllers.jobset_status import (
    ChildJobs,
    ReconcileError,
    all_replicas_started,
    dependencies_met,
    find_entry,
    job_suspended,
    labels,
    per_job_counts,
)
from jobsetctl.fakecluster.events import Recorder
from jobsetctl.jobset import api, render
from jobsetctl.kinds.interface import Object
from jobsetctl.kube.jsontree import copy_tree


@dataclass(slots=True)
class ChildWriter:
    """Writes children for one pass of one JobSet."""

    api: APIServer
    recorder: Recorder
    js: Object
    update: StatusUpdate
    restart_job_gate: bool

    # -- headless Service ------------------------------------------------------------------------------
    def ensure_headless_service(self) -> None:
        """Create the Service if none of that name exists (of any owner: never adopted, §3.3)."""
        service = render.headless_service(self.js)
        if service is None:
            return
        name = api.name(service)
        if self.api.get("", render.SERVICE_KIND, api.namespace(self.js), name) is not None:
            return
        result = self.api.create(service)
        if not result.ok:
            error = result.error_text()
            self.recorder.kube_event(self.js, WARNING, api.EVENT_HEADLESS_SERVICE_CREATION_FAILED, error)
            raise ReconcileError(error)

    # -- PVCs ------------------------------------------------------------------------------------------
    def ensure_volume_claims(self) -> None:
        """Create each policy's PVCs; an existing one is left alone (AlreadyExists is ignored). A
        failure stops that policy's remaining templates; the other policies still run (§3.4)."""
        errors: list[str] = []
        for claims in render.volume_claims(self.js):
            for claim in claims:
                name = api.name(claim)
                if self.api.get("", render.PVC_KIND, api.namespace(self.js), name) is not None:
                    continue
                result = self.api.create(claim)
                if not result.ok:
                    error = result.error_text()
                    self.recorder.kube_event(self.js, WARNING, api.EVENT_PVC_CREATION_FAILED, error)
                    errors.append(error)
                    break
        if errors:
            raise ReconcileError("\n".join(errors))

    # -- ElasticJobSet ---------------------------------------------------------------------------------
    def sync_job_scaling(self, active: list[Object]) -> None:
        """Patch active Jobs whose parallelism/completions drifted from the template, only when the
        desired parallelism equals the desired completions (upstream ``jobScalingNeedsPatch``)."""
        desired: dict[str, tuple[int | None, int | None]] = {
            api.rjob_name(rjob): (api.parallelism(rjob), api.completions(rjob)) for rjob in api.replicated_jobs(self.js)
        }
        errors: list[str] = []
        for job in active:
            rjob_name = labels(job).get(api.REPLICATED_JOB_NAME_KEY)
            if not isinstance(rjob_name, str) or rjob_name not in desired:
                continue
            parallelism, completions = desired[rjob_name]
            if parallelism != completions:
                continue
            spec = api.as_dict(job.get("spec"))
            if api.as_int(spec.get("parallelism")) == parallelism and api.as_int(spec.get("completions")) == completions:
                continue
            patched = copy_tree(job)  # the listed Job is the stored one: nothing wrote it yet
            for key, value in (("parallelism", parallelism), ("completions", completions)):
                if value is None:
                    patched["spec"].pop(key, None)
                else:
                    patched["spec"][key] = value
            result = self.api.update(patched)
            if not result.ok:
                errors.append(f'failed to patch job "{api.name(job)}" for scaling: {result.error_text()}')
        if errors:
            raise ReconcileError("\n".join(errors))

    # -- Job creation ----------------------------------------------------------------------------------
    def missing_jobs(self, rjob: Any, children: ChildJobs, taken: set[str] | None = None) -> list[Object]:
        """Jobs of ``rjob`` whose name no owned Job holds (any bucket, old attempts included). With
        ``BlockingRecreate`` nothing is created while any previous-attempt Job exists (§4.7)."""
        blocking = (
            api.failure_policy(self.js) is not None
            and api.restart_strategy(self.js) == api.RestartStrategy.BLOCKING_RECREATE
        )
        if blocking and children.previous:
            return []
        if taken is None:
            taken = children.names()
        restarts = self.update.restarts
        attempts = per_job_counts(self.js, self.update.status, api.rjob_name(rjob), "jobRestarts") if self.restart_job_gate else None
        out: list[Object] = []
        for job_index in range(api.replicas(rjob)):
            if render.child_job_name(self.js, rjob, job_index) in taken:
                continue
            attempt: int | None = None
            if attempts is not None:
                attempt = attempts[job_index] if job_index < len(attempts) else 0
            out.append(render.child_job(self.js, rjob, job_index, restart_attempt=restarts, job_restart_attempt=attempt))
        return out

    def create_jobs(self, jobs: list[Object]) -> None:
        """Create every Job; failures → one ``JobCreationFailed`` event with the newline-joined errors."""
        errors: list[str] = []
        for job in jobs:
            name = api.name(job)
            result = self.api.create(job)
            if not result.ok:
                errors.append(api.job_creation_failed_message(name, result.error_text()))
        if errors:
            message = "\n".join(errors)
            self.recorder.kube_event(self.js, WARNING, api.EVENT_JOB_CREATION_FAILED, message)
            raise ReconcileError(message)

    def reconcile_replicated_jobs(self, children: ChildJobs, entries: list[dict[str, Any]]) -> None:
        """Create missing Jobs per replicated job in spec order, behind dependsOn and InOrder (§4.3, §4.4)."""
        suspended = api.is_suspended(self.js)
        in_order = api.startup_order(self.js) == api.StartupPolicyOrder.IN_ORDER
        replicas_seen: dict[str, int] = {}
        taken = children.names()  # the names of the Jobs owned when the pass began, for every replicated job
        for rjob in api.replicated_jobs(self.js):
            jobs = self.missing_jobs(rjob, children, taken)
            rjob_name = api.rjob_name(rjob)
            replicas_seen[rjob_name] = api.replicas(rjob)
            if not dependencies_met(rjob, replicas_seen, entries):
                continue
            if not suspended and in_order and all_replicas_started(api.replicas(rjob), find_entry(entries, rjob_name)):
                continue
            self.create_jobs(jobs)
            if not suspended and in_order:
                # Wait for this replicated job to start before creating the next one.
                self.update.set_in_order_in_progress()
                return
        if not suspended and in_order:
            self.update.set_in_order_completed()

    # -- suspend / resume ------------------------------------------------------------------------------
    def _write_job(self, job: Object, edit: Any) -> None:
        """Update a Job's spec through admission, from a copy of the *stored* Job (an earlier write of
        this pass may have replaced the listed one; Go's client refreshes its object the same way)
        so that a rejected update leaves it unchanged."""
        current = self.api.get("batch", "Job", api.namespace(job), api.name(job))
        changed = copy_tree(current if current is not None else job)
        edit(changed)
        result = self.api.update(changed)
        if not result.ok:
            raise ReconcileError(result.error_text())

    def suspend_jobs(self, active: list[Object]) -> None:
        """``suspend: true`` on every active Job, then ``Suspended=True`` (§4.8)."""
        for job in active:
            if not job_suspended(job):
                self._write_job(job, _set_suspend(True))
        self.update.set_suspended()

    def resume_jobs(self, active: list[Object], entries: list[dict[str, Any]]) -> None:
        """Resume suspended active Jobs per replicated job, behind dependsOn and InOrder; then
        ``Suspended=False`` — written only once no InOrder step returned early (§4.3, §4.8)."""
        templates: dict[str, dict[str, Any]] = {}  # filled when a Job is resumed (most passes resume none)
        by_rjob: dict[str, list[Object]] = {}
        for job in active:
            by_rjob.setdefault(api.as_str(labels(job).get(api.REPLICATED_JOB_NAME_KEY)), []).append(job)
        in_order = api.startup_order(self.js) == api.StartupPolicyOrder.IN_ORDER
        replicas_seen: dict[str, int] = {}
        for rjob in api.replicated_jobs(self.js):
            rjob_name = api.rjob_name(rjob)
            replicas_seen[rjob_name] = api.replicas(rjob)
            if not dependencies_met(rjob, replicas_seen, entries):
                continue
            if in_order and all_replicas_started(api.replicas(rjob), find_entry(entries, rjob_name)):
                continue
            for job in by_rjob.get(rjob_name, []):
                if job_suspended(job):
                    if not templates:
                        templates.update((api.rjob_name(r), api.pod_template(r)) for r in api.replicated_jobs(self.js))
                    self.resume_job(job, templates)
            if in_order:
                self.update.set_in_order_in_progress()
                return
        self.update.set_resumed()

    def resume_job(self, job: Object, templates: dict[str, dict[str, Any]]) -> None:
        """Clear ``startTime`` (status write), merge the five Kueue-mutable pod-template fields, unsuspend."""
        status = job.get("status")
        if isinstance(status, dict) and status.get("startTime") is not None:
            # The Job API allows template changes only on a suspended Job that never started.
            del status["startTime"]
            self.api.update_status(job)
        rjob_name = labels(job).get(api.REPLICATED_JOB_NAME_KEY)
        template = templates.get(rjob_name) if isinstance(rjob_name, str) and rjob_name else None

        def edit(changed: Object) -> None:
            if template is not None:
                merge_pod_template(changed, template)
            changed.setdefault("spec", {})["suspend"] = False

        self._write_job(job, edit)


def _set_suspend(value: bool) -> Any:
    def edit(changed: Object) -> None:
        changed.setdefault("spec", {})["suspend"] = value
    return edit


def _merge_maps(old: Any, new: Any) -> dict[str, Any]:
    """Go ``MergeMaps``: ``new`` wins; the result is sorted as Go serialises maps."""
    merged = {str(k): v for k, v in api.as_dict(old).items()}
    merged.update({str(k): v for k, v in api.as_dict(new).items()})
    return dict(sorted(merged.items()))


def _go_equal(left: Any, right: Any, *, pointer_field: str | None) -> bool:
    if pointer_field is not None and isinstance(left, dict) and left.get(pointer_field) is not None:
        return left is right  # a pointer field compares by address in Go
    return bool(left == right)


def _merge_slices(old: Any, new: Any, *, pointer_field: str | None = None) -> list[Any]:
    """Go ``MergeSlices`` (set union); see the module docstring for the order and the pointer quirk."""
    merged: list[Any] = []
    for item in [*api.as_list(old), *api.as_list(new)]:
        if not any(_go_equal(item, seen, pointer_field=pointer_field) for seen in merged):
            merged.append(item)
    return [copy_tree(item) for item in merged]


def merge_pod_template(job: Object, template: dict[str, Any]) -> None:
    """Merge labels, annotations, nodeSelector, tolerations and schedulingGates of the replicated
    job's current pod template into the Job's (upstream ``resumeJob``). Empty results are dropped,
    as Go's ``omitempty`` does."""
    pod_template = job.setdefault("spec", {}).setdefault("template", {})
    pod_meta = pod_template.setdefault("metadata", {})
    pod_spec = pod_template.setdefault("spec", {})
    template_meta = api.as_dict(template.get("metadata"))
    template_spec = api.as_dict(template.get("spec"))
    for owner, key, new in (
        (pod_meta, "labels", template_meta.get("labels")),
        (pod_meta, "annotations", template_meta.get("annotations")),
        (pod_spec, "nodeSelector", template_spec.get("nodeSelector")),
    ):
        _store(owner, key, _merge_maps(owner.get(key), new))
    _store(pod_spec, "tolerations", _merge_slices(
        pod_spec.get("tolerations"), template_spec.get("tolerations"), pointer_field="tolerationSeconds"
    ))
    _store(pod_spec, "schedulingGates", _merge_slices(pod_spec.get("schedulingGates"), template_spec.get("schedulingGates")))


def _store(owner: dict[str, Any], key: str, value: Any) -> None:
    if value:
        owner[key] = value
    else:
        owner.pop(key, None)
