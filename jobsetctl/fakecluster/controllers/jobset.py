"""The JobSet controller (kubernetes-sigs/jobset ``pkg/controllers/jobset_controller.go``) for the fake cluster.

One reconcile pass runs the steps of jobset.md §4.1 in order:

1. JobSet gone or being deleted → nothing;
2. ``spec.managedBy`` names another controller → nothing at all (no children, no status write);
3. list the owned Jobs by controller-owner UID and classify them (§4.2);
4. recompute ``replicatedJobsStatus`` (§1.7);
5. finished → delete the active Jobs (foreground) and handle the TTL (§4.8), stop;
6. delete the previous-attempt Jobs (foreground);
7. ``RestartingJobSet=False/JobsReady`` when every Job is ready or succeeded and not suspended;
8. a failed Job → failure policy (§4.6), stop;
9. a succeeded Job → success policy (§4.5), stop if completed;
10.-13. headless Service, PVCs, ElasticJobSet patches, Job creation (:mod:`.jobset_children`);
14. suspend or resume the active Jobs;
15. (InPlaceRestart: not modelled, see below);
16. write the status once; emit the queued events only if that write succeeded.

A step that fails ends the pass *without* the status write (queued condition events are dropped; the
events emitted directly — ``JobCreationFailed``, ``HeadlessServiceCreationFailed``,
``PVCCreationFailed`` — are already out) and the key is retried with controller-runtime's default
per-item back-off (5 ms doubling up to 1000 s; forgotten after a pass without error).

Reconcile triggers: the JobSet's own events, and events of Jobs, Services and PVCs whose controller
ownerReference is a JobSet (mapped to that JobSet's key). Upstream ``Owns`` only Jobs and Services;
PVC events additionally trigger a pass here, which only matters when a PVC is deleted by hand.

Simulation events (the JSON contract) for JobSets, emitted with the Kubernetes Events after the status
write: ``Restarting`` per restart action (reason: the ``RestartingJobSet`` condition reason, or for the
per-Job RestartJob actions the Event reason), ``Suspended``, ``Resumed``, ``Completed``, ``Failed``.

Not modelled: the InPlaceRestart strategy (§4.10: the pod watch, ``currentInPlaceRestartAttempt`` /
``previousInPlaceRestartAttempt`` and the in-place max-restarts check). With that strategy, failed Jobs
are handled as with ``Recreate``, which is what upstream does for Jobs that fail anyway.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any, Final, cast

from jobsetctl.fakecluster.apiserver import WatchEvent, WatchType, controller_of
from jobsetctl.fakecluster.controllers.jobset_children import ChildWriter
from jobsetctl.fakecluster.controllers.jobset_conditions import StatusUpdate, ordered_status
from jobsetctl.fakecluster.controllers.jobset_policies import (
    execute_failure_policy,
    execute_success_policy,
    ttl_remaining,
)
from jobsetctl.fakecluster.controllers.jobset_status import (
    ReconcileError,
    all_jobs_ready,
    classify,
    replicated_job_statuses,
    sorted_by_name_descending,
    statuses_changed,
)
from jobsetctl.fakecluster.manager import Controller
from jobsetctl.jobset import api
from jobsetctl.kinds.interface import Object
from jobsetctl.kube.jsontree import copy_tree
from jobsetctl.kube.versions import split_api_version

#: controller-runtime's default per-item rate limiter (client-go ``DefaultTypedControllerRateLimiter``).
BACKOFF_BASE_SECONDS: Final = 0.005
BACKOFF_MAX_SECONDS: Final = 1000.0
#: Child kinds whose events trigger a pass of their controller JobSet: (group, kind).
CHILD_KINDS: Final = frozenset({("batch", "Job"), ("", "Service"), ("", "PersistentVolumeClaim")})

JobSetKey = tuple[str, str]  # namespace, name


class JobSetController(Controller):
    name = "jobset-controller"
    watches = CHILD_KINDS | {(api.GROUP, api.KIND)}

    def __init__(self, options: Any = None) -> None:
        super().__init__(options)
        #: Consecutive failed passes per key, for the back-off.
        self._failures: dict[Hashable, int] = {}

    # -- options ----------------------------------------------------------------------------------------
    def gate(self, name: str) -> bool:
        gates = getattr(self.options, "gates", None)
        return bool(gates is not None and gates.enabled(name))

    # -- watch ------------------------------------------------------------------------------------------
    def keys_for(self, event: WatchEvent) -> Iterable[Hashable]:
        group, kind, namespace, name = event.key
        if group == api.GROUP and kind == api.KIND:
            if event.type != WatchType.DELETED:
                yield (namespace, name)
            return
        if (group, kind) not in CHILD_KINDS:
            return
        ref = controller_of(event.obj)
        if ref is None or ref.get("kind") != api.KIND:
            return
        if split_api_version(str(ref.get("apiVersion", "")))[0] != api.GROUP:
            return
        yield (namespace, str(ref.get("name", "")))

    # -- reconcile --------------------------------------------------------------------------------------
    def reconcile(self, key: Hashable) -> float | None:
        namespace, name = cast(JobSetKey, key)
        js = self.api.get(api.GROUP, api.KIND, namespace, name)
        if js is None or api.metadata(js).get("deletionTimestamp"):
            self._failures.pop(key, None)
            return None
        try:
            requeue = ReconcilePass(self, js).run()
        except ReconcileError:
            failures = self._failures.get(key, 0)
            self._failures[key] = failures + 1
            return min(BACKOFF_BASE_SECONDS * (2 ** failures), BACKOFF_MAX_SECONDS)
        self._failures.pop(key, None)
        return requeue


class ReconcilePass:
    """One pass over one JobSet (see the module docstring for the steps)."""

    def __init__(self, controller: JobSetController, js: Object) -> None:
        self.controller = controller
        self.api = controller.api
        self.clock = controller.clock
        self.recorder = controller.recorder
        self.js = js
        self.restart_job_gate = controller.gate(api.GATE_RESTART_JOB)
        self.update = StatusUpdate(copy_tree(api.status(js)), self.clock.timestamp())

    def run(self) -> float | None:
        if not api.is_managed_by_builtin_controller(self.js):
            return None  # another controller (e.g. MultiKueue) owns it: leave everything alone
        requeue = self.reconcile()
        self.write_status()
        return requeue

    def owned_jobs(self) -> list[Object]:
        """Jobs whose *controller* reference is this JobSet's UID (jobset.md §3.1), in creation order."""
        uid = api.as_str(api.metadata(self.js).get("uid"))
        out: list[Object] = []
        for job in self.api.owned(uid, "batch", "Job"):
            ref = controller_of(job)
            if (
                ref is not None
                and ref.get("uid") == uid
                and ref.get("kind") == api.KIND
                and str(ref.get("apiVersion", "")) == api.API_VERSION
                and api.namespace(job) == api.namespace(self.js)
            ):
                out.append(job)
        return out

    def reconcile(self) -> float | None:
        update = self.update
        children = classify(self.js, self.owned_jobs(), update.status, self.restart_job_gate)
        entries = replicated_job_statuses(self.js, children, update.status, self.restart_job_gate)
        old_entries = api.as_list(update.status.get("replicatedJobsStatus"))
        if statuses_changed(old_entries, entries):
            update.status["replicatedJobsStatus"] = sorted_by_name_descending(entries)
            update.should_update = True
        else:
            update.status["replicatedJobsStatus"] = sorted_by_name_descending([e for e in old_entries if isinstance(e, dict)])
        # From here on, the working entries (the failure policy edits jobRestarts in them).
        entries = update.replicated_jobs_status()

        if api.is_finished(self.js):
            self.delete_jobs(children.active)
            remaining = ttl_remaining(self.js, self.clock)
            if remaining is None:
                return None
            if remaining <= 0:
                self.api.delete(self.js, propagation="Foreground")
                return None
            return remaining

        self.delete_jobs(children.previous)
        suspended = api.is_suspended(self.js)
        if not suspended and all_jobs_ready(self.js, entries):
            update.set_restarting_false(api.REASON_JOBS_READY, api.MESSAGE_JOBS_READY)

        if children.failed:
            execute_failure_policy(self.js, children, update, self.clock, self.restart_job_gate)
            return None
        if children.successful and execute_success_policy(self.js, children, update):
            return None

        writer = ChildWriter(self.api, self.recorder, self.js, update, self.restart_job_gate)
        writer.ensure_headless_service()
        if api.volume_claim_policies(self.js):
            writer.ensure_volume_claims()
        if self.controller.gate(api.GATE_ELASTIC_JOBSET):
            writer.sync_job_scaling(children.active)
        writer.reconcile_replicated_jobs(children, entries)
        if suspended:
            writer.suspend_jobs(children.active)
        else:
            writer.resume_jobs(children.active, entries)
        return None

    def delete_jobs(self, jobs: list[Object]) -> None:
        """Foreground deletion; Jobs already being deleted are skipped, NotFound is ignored."""
        for job in jobs:
            if api.metadata(job).get("deletionTimestamp"):
                continue
            self.api.delete(job, propagation="Foreground")

    def write_status(self) -> None:
        """Write the status once; then emit the queued Kubernetes and simulation events."""
        if not self.update.should_update:
            return
        stored = self.api.get(api.GROUP, api.KIND, api.namespace(self.js), api.name(self.js))
        if stored is not self.js:
            return  # deleted (e.g. by the TTL) or replaced: the write fails, the events are dropped
        self.js["status"] = ordered_status(self.update.status)
        self.api.update_status(self.js)
        for queued in self.update.events:
            self.recorder.kube_event(self.js, queued.type, queued.reason, queued.message)
            if queued.simulation is not None:
                self.recorder.record_for(
                    self.js, queued.simulation.event,
                    reason=queued.simulation.reason, message=queued.simulation.message,
                )

