"""One ``syncJob`` pass of the Job controller (``pkg/controller/job/job_controller.go``, 1.35+).

Order, as upstream:

1. skip Jobs managed by another controller and finished Jobs;
2. KEP-5547 Workload/PodGroup (:mod:`.job_scheduling`), before anything is created;
3. classify pods; ``startTime`` on first sync of a Job that is not suspended;
4. the finished condition, first match wins: an existing SuccessCriteriaMet or FailureTarget; a
   pod failure policy FailJob; failures above ``backoffLimit`` (with ``restartPolicy: OnFailure``
   also container restarts: ``pastBackoffLimitOnFailure``); ``activeDeadlineSeconds`` (measured
   from ``startTime``, never while suspended); Indexed: ``maxFailedIndexes`` exceeded, or every
   index finished with some failed; then completions reached;
5. failed: delete the active pods (they then count as failed); otherwise ``manageJob``
   (:mod:`.job_manage`) and the Suspended condition (``JobSuspended``/``JobResumed``; resuming
   resets ``startTime``);
6. count pods that finished (removing their tracking finalizer), write the interim
   ``FailureTarget``/``SuccessCriteriaMet`` condition, and the terminal ``Failed``/``Complete``
   condition once no pod is terminating (``delayTerminalCondition`` is always true since
   ``JobPodReplacementPolicy`` went GA in 1.34).

Counting is what upstream does in two steps with ``uncountedTerminatedPods``; we count and remove
finalizers in the same pass, so that list is always empty. Pods are judged as they were when the
pass began (upstream reads its informer cache), so a pod this pass releases and deletes is not
mistaken for a failure.

Upstream quirk kept: step 4 checks ``activeDeadlineSeconds`` against the old ``startTime`` before
step 5 resets it on resume, so a Job resumed long after it first started fails with
``DeadlineExceeded`` at once unless whoever resumes it clears ``startTime`` first (JobSet and Kueue
do; jobset.md §4.8).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jobsetctl.fakecluster.controllers.job_failure import (
    ApiBackoff,
    BackoffRecord,
    is_index_failed,
    match_pod_failure_policy,
    pods_with_delayed_deletion,
)
from jobsetctl.fakecluster.controllers.job_manage import delete_pods, manage_job
from jobsetctl.fakecluster.controllers.job_pods import (
    FAILED as FAILED_PHASE,
)
from jobsetctl.fakecluster.controllers.job_pods import (
    SUCCEEDED,
    UNKNOWN_INDEX,
    completion_index,
    failed_in_phase,
    format_indexes,
    has_tracking_finalizer,
    is_deleted,
    is_failed,
    is_ready,
    parse_indexes,
    phase,
    restart_count,
)
from jobsetctl.fakecluster.controllers.job_scheduling import MANAGE_NONE, management_mode
from jobsetctl.fakecluster.controllers.job_spec import (
    COMPLETE,
    EVENT_COMPLETED,
    EVENT_RESUMED,
    EVENT_SUSPENDED,
    FAILED,
    FAILURE_TARGET,
    JOB_TRACKING_FINALIZER,
    MESSAGE_BACKOFF_LIMIT_EXCEEDED,
    MESSAGE_COMPLETIONS_REACHED,
    MESSAGE_DEADLINE_EXCEEDED,
    MESSAGE_FAILED_INDEXES,
    MESSAGE_JOB_RESUMED,
    MESSAGE_JOB_SUSPENDED,
    MESSAGE_MAX_FAILED_INDEXES_EXCEEDED,
    REASON_BACKOFF_LIMIT_EXCEEDED,
    REASON_COMPLETIONS_REACHED,
    REASON_DEADLINE_EXCEEDED,
    REASON_FAILED_INDEXES,
    REASON_JOB_RESUMED,
    REASON_JOB_SUSPENDED,
    REASON_MAX_FAILED_INDEXES_EXCEEDED,
    REASON_POD_FAILURE_POLICY,
    SUCCESS_CRITERIA_MET,
    SUSPENDED,
    JobView,
    ensure_condition,
    integer,
    new_condition,
)
from jobsetctl.fakecluster.controllers.job_success import REASON_SUCCESS_POLICY, match_success_policy
from jobsetctl.kinds.interface import Object
from jobsetctl.kube.jsontree import copy_tree

if TYPE_CHECKING:
    from jobsetctl.fakecluster.controllers.job import JobController

#: JobStatus fields in the order ``k8s.io/api/batch/v1`` declares (and serialises) them.
STATUS_ORDER = ("conditions", "startTime", "completionTime", "active", "succeeded", "failed", "terminating",
                "completedIndexes", "failedIndexes", "uncountedTerminatedPods", "ready")
#: Fields Go omits when zero (``omitempty`` on a value); the pointer fields are written when set.
OMIT_WHEN_ZERO = ("active", "succeeded", "failed", "completedIndexes")


@dataclass(slots=True)
class JobState:
    """What the controller remembers about a Job between syncs (upstream: the back-off store and the
    work queue's rate limiter)."""

    backoff: BackoffRecord = field(default_factory=BackoffRecord)
    api_backoff: ApiBackoff = field(default_factory=ApiBackoff)


@dataclass(frozen=True, slots=True)
class Finish:
    type: str
    reason: str
    message: str


class JobSync:
    def __init__(self, controller: JobController, job: Object, state: JobState) -> None:
        self.controller = controller
        self.api = controller.api
        self.clock = controller.clock
        self.job = job
        self.view = JobView(job)
        self.state = state
        self.pods: list[Object] = []
        self.active_pods: list[Object] = []
        self.active = self.ready = self.terminating = 0
        self.succeeded = self.failed = 0
        self.succeeded_indexes: set[int] = set()
        self.prev_succeeded_indexes: set[int] = set()
        self.failed_indexes: set[int] | None = None
        self.delayed: dict[int, Object] = {}
        self.new_backoff = state.backoff
        self.pod_group: Object | None = None
        self.created: list[Object] = []
        self._requeue: float | None = None
        self._finished: Finish | None = None
        self._at_start: dict[int, tuple[str, bool]] = {}
        #: Pods this pass deleted (``delete_pods``) or released (``_track``): writes besides creates and status.
        self.pod_writes = 0
        #: Set at the end of the pass when running it again on what it left would write nothing (see
        #: :meth:`_left_fixed_point`); the controller then skips the re-sync its own writes ask for.
        self.settled = False
        # Read once per pass (``_valid_index`` asks for every tracked pod): the spec does not change in it.
        self._indexed = self.view.indexed
        self._completions = (self.view.completions or 0) if self._indexed else 0

    # -- helpers used by job_manage ------------------------------------------------------------------
    def requeue(self, delay: float) -> None:
        self._requeue = delay if self._requeue is None else min(self._requeue, delay)

    def event(self, type_: str, reason: str, message: str) -> None:
        self.controller.recorder.kube_event(self.job, type_, reason, message)

    def _valid_index(self, pod: Object) -> bool:
        if not self._indexed:
            return True
        index = completion_index(pod)
        return index != UNKNOWN_INDEX and index < self._completions

    # -- the pass --------------------------------------------------------------------------------------
    def run(self) -> float | None:
        view = self.view
        if view.managed_by_other:
            return None
        if view.finished:
            self.state.backoff = BackoffRecord()
            return None
        if view.indexed and view.completions is None:
            return None  # invalid (validation requires completions); upstream would not get here
        before = copy_tree(view.status)
        now = self.clock.timestamp()
        self.pods = self.controller.pods_of(view)
        if not view.deleting:
            ensured = self.controller.scheduling.ensure(view, self.pods)
            self.pod_group = ensured.pod_group
            if ensured.error is not None:
                self.event("Warning", "FailedWorkloadCreate", ensured.error)
                self.requeue(self.state.api_backoff.failed(self.clock.now))
                return self._requeue
        # One pass over the pods, reading each one's phase once (this runs on every pod event).
        # Upstream judges pods by its informer cache as of the start of the sync; our pods are live
        # objects that this very pass may delete, so ``_at_start`` remembers how each tracked one looked.
        only_failed = view.only_replace_failed_pods
        tracked: list[Object] = []
        at_start: dict[int, tuple[str, bool]] = {}
        active_pods: list[Object] = []
        new_succeeded: list[Object] = []
        new_failed: list[Object] = []
        ready = terminating = 0
        for pod in self.pods:
            pod_phase = phase(pod)
            terminal = pod_phase in (SUCCEEDED, FAILED_PHASE)
            if is_deleted(pod):
                if not terminal:
                    terminating += 1
            elif not terminal:
                active_pods.append(pod)
                if is_ready(pod):
                    ready += 1
            if has_tracking_finalizer(pod):
                tracked.append(pod)
                failed = failed_in_phase(pod, pod_phase, only_failed)
                at_start[id(pod)] = (pod_phase, failed)
                if pod_phase == SUCCEEDED and self._valid_index(pod):
                    new_succeeded.append(pod)
                if failed and self._valid_index(pod):
                    new_failed.append(pod)
        self._at_start = at_start
        self.active_pods = active_pods
        self.active = len(active_pods)
        self.ready = ready
        self.terminating = terminating
        status = view.status
        self.succeeded = (integer(status.get("succeeded")) or 0) + len(new_succeeded)
        policy = view.pod_failure_policy
        self.failed = (integer(status.get("failed")) or 0) + (len(new_failed) if policy is None else sum(
            1 for p in new_failed if match_pod_failure_policy(policy, p).count_failed))
        if not status.get("startTime") and not view.suspended:
            status["startTime"] = now
        self.new_backoff = self.state.backoff.next(new_succeeded, new_failed, self.clock)

        finish = self._finish_from_conditions(tracked)
        if finish is None:
            finish = self._finish_from_limits()
        if view.indexed:
            completions = view.completions or 0
            self.prev_succeeded_indexes = parse_indexes(status.get("completedIndexes"), completions)
            self.succeeded_indexes = self.prev_succeeded_indexes | {completion_index(p) for p in new_succeeded}
            self.succeeded = len(self.succeeded_indexes)
            if view.has_backoff_limit_per_index:
                self.failed_indexes = parse_indexes(status.get("failedIndexes"), completions) | {
                    completion_index(p) for p in tracked if self._valid_index(p) and is_index_failed(view, p)}
                if finish is None:
                    finish = self._finish_from_indexes(completions)
                self.delayed = pods_with_delayed_deletion(
                    view, tracked, self.succeeded_indexes, self.failed_indexes,
                    {completion_index(p) for p in self.active_pods}, self.clock)
            if finish is None:
                matched = match_success_policy(view, self.succeeded_indexes, completions)
                if matched is not None:
                    finish = Finish(SUCCESS_CRITERIA_MET, REASON_SUCCESS_POLICY, matched)

        suspend_changed = managed = False
        if finish is not None:
            deleted, ready = delete_pods(self, self.active_pods, release=False)
            self.active -= deleted
            self.terminating += deleted
            self.ready -= ready
        else:
            if not view.deleting:
                manage_job(self)
                managed = True
            wanted = view.completions
            if wanted is None:
                complete = self.succeeded > 0 and self.active == 0
            else:
                complete = self.succeeded >= wanted and self.active == 0
            if complete:
                finish = Finish(SUCCESS_CRITERIA_MET, REASON_COMPLETIONS_REACHED, MESSAGE_COMPLETIONS_REACHED)
            elif managed:
                suspend_changed = self._suspend_condition(now)

        self._track(tracked, finish, now)
        self._write_status(before, suspend_changed)
        self.settled = (finish is None and self._requeue is None and not suspend_changed and self.pod_writes == 0
                        and self._left_fixed_point(managed))
        return self._requeue

    def _left_fixed_point(self, managed: bool) -> bool:
        """Whether this pass, which finished nothing, asked for no requeue, changed no condition and deleted
        or released no pod (its only writes: the pods it created, all accepted, and the status), left the
        Job at a fixed point: a second pass over what it left, with nothing else changed, writes nothing.

        Why: such a pass saw no tracked pod succeed or fail (either would have been released), so the next
        pass sees the same pods plus the created ones (Pending, not ready, with the tracking finalizer,
        fresh valid indexes), the counts and indexes this pass wrote (``format_indexes`` of a parsed set
        parses back to it), the same ``startTime`` and conditions, an equal back-off record (``next`` of no
        finished pods) and a forgotten API back-off; it finds the same finish (none), and ``manageJob``
        finds nothing to delete or create exactly when the checks below hold. Time enters only through
        requeues (deadline, back-offs: excluded above) and through writes. Left out, conservatively: the
        per-index back-off and pod failure policies (pod-level timing and matching), and Jobs whose
        Workload/PodGroup the controller manages (``ensure`` reads other objects). The controller checks
        this claim on every skipped sync when the scheduling invariants are checked (the test suite)."""
        view = self.view
        if view.has_backoff_limit_per_index or view.pod_failure_policy is not None:
            return False
        if management_mode(view, self.api.version, self.api.gates) != MANAGE_NONE:
            return False
        if not managed or view.suspended:
            # Deleting (``manageJob`` does not run) or suspended with no active pod left (any would have
            # been deleted, a pod write): the next pass does the same nothing.
            return True
        completions = view.completions
        if completions is None:
            want = self.active if self.succeeded > 0 else view.parallelism
        else:
            want = max(min(completions - self.succeeded, view.parallelism), 0)
        terminating = self.terminating if view.only_replace_failed_pods else 0
        return self.active <= want and want - terminating - self.active <= 0

    def _finish_from_conditions(self, tracked: list[Object]) -> Finish | None:
        view = self.view
        met = view.condition(SUCCESS_CRITERIA_MET)
        if met is not None and met.get("status") == "True":
            return Finish(SUCCESS_CRITERIA_MET, str(met.get("reason", "")), str(met.get("message", "")))
        target = view.condition(FAILURE_TARGET)
        if target is not None and target.get("status") == "True":
            return Finish(FAILED, str(target.get("reason", "")), str(target.get("message", "")))
        if view.pod_failure_policy is not None:
            # ``getFailJobMessage`` looks at every failed pod, counted or not.
            for pod in self.pods:
                if is_failed(pod, view):
                    message = match_pod_failure_policy(view.pod_failure_policy, pod).fail_job_message
                    if message is not None:
                        return Finish(FAILURE_TARGET, REASON_POD_FAILURE_POLICY, message)
        return None

    def _finish_from_limits(self) -> Finish | None:
        view = self.view
        if self.failed > view.backoff_limit or self._past_backoff_limit_on_failure():
            return Finish(FAILURE_TARGET, REASON_BACKOFF_LIMIT_EXCEEDED, MESSAGE_BACKOFF_LIMIT_EXCEEDED)
        deadline = view.active_deadline_seconds
        start = view.status.get("startTime")
        if deadline is not None and isinstance(start, str) and not view.suspended:
            elapsed = self.clock.now - self.clock.seconds_of(start)
            if elapsed >= deadline:
                return Finish(FAILURE_TARGET, REASON_DEADLINE_EXCEEDED, MESSAGE_DEADLINE_EXCEEDED)
            self.requeue(deadline - elapsed)
        return None

    def _finish_from_indexes(self, completions: int) -> Finish | None:
        failed = len(self.failed_indexes or ())
        limit = self.view.max_failed_indexes
        if limit is not None and failed > limit:
            return Finish(FAILURE_TARGET, REASON_MAX_FAILED_INDEXES_EXCEEDED, MESSAGE_MAX_FAILED_INDEXES_EXCEEDED)
        if failed > 0 and failed + len(self.succeeded_indexes) >= completions:
            return Finish(FAILURE_TARGET, REASON_FAILED_INDEXES, MESSAGE_FAILED_INDEXES)
        return None

    def _past_backoff_limit_on_failure(self) -> bool:
        """``pastBackoffLimitOnFailure``: container restarts of running or pending pods."""
        if self.view.restart_policy != "OnFailure":
            return False
        restarts = sum(restart_count(p) for p in self.pods if phase(p) in ("Running", "Pending"))
        limit = self.view.backoff_limit
        return restarts > 0 if limit == 0 else restarts >= limit

    def _suspend_condition(self, now: str) -> bool:
        view = self.view
        recorder = self.controller.recorder
        if view.suspended:
            if ensure_condition(view, SUSPENDED, "True", REASON_JOB_SUSPENDED, MESSAGE_JOB_SUSPENDED, now):
                self.event("Normal", EVENT_SUSPENDED, MESSAGE_JOB_SUSPENDED)
                recorder.record_for(self.job, "Suspended", reason=REASON_JOB_SUSPENDED, message=MESSAGE_JOB_SUSPENDED)
                return True
            return False
        if ensure_condition(view, SUSPENDED, "False", REASON_JOB_RESUMED, MESSAGE_JOB_RESUMED, now):
            self.event("Normal", EVENT_RESUMED, MESSAGE_JOB_RESUMED)
            recorder.record_for(self.job, "Resumed", reason=REASON_JOB_RESUMED, message=MESSAGE_JOB_RESUMED)
            # activeDeadlineSeconds counts continuous activity: resuming restarts the clock.
            view.status["startTime"] = now
            return True
        return False

    def _track(self, tracked: list[Object], finish: Finish | None, now: str) -> None:
        """``trackJobStatusAndRemoveFinalizers`` + ``enactJobFinished``."""
        view = self.view
        status = view.status
        policy = view.pod_failure_policy
        success = finish is not None and finish.type == SUCCESS_CRITERIA_MET
        if view.indexed:
            tracked = sorted(tracked, key=completion_index)
        release: list[Object] = []
        new_indexes: list[int] = []
        counted_succeeded = counted_failed = 0
        deleting = view.deleting  # the loop below writes nothing: read the Job once
        per_index = view.has_backoff_limit_per_index
        at_start = self._at_start
        for pod in tracked:
            if not has_tracking_finalizer(pod):
                continue  # released by this pass (deleted for suspension or as surplus): never counted
            pod_phase, considered_failed = at_start[id(pod)]
            removable = deleting or finish is not None or pod_phase == SUCCEEDED or considered_failed
            if removable and considered_failed and not deleting and finish is None and per_index:
                index = completion_index(pod)
                removable = self.delayed.get(index) is not pod
            if not removable:
                continue
            release.append(pod)
            if pod_phase == SUCCEEDED:
                if view.indexed:
                    index = completion_index(pod)
                    if self._valid_index(pod) and index not in self.prev_succeeded_indexes:
                        new_indexes.append(index)
                else:
                    counted_succeeded += 1
            elif ((considered_failed or (finish is not None and not success)) and self._valid_index(pod)
                  and match_pod_failure_policy(policy, pod).count_failed):
                counted_failed += 1
        if view.indexed:
            indexes = self.prev_succeeded_indexes | set(new_indexes)
            status["succeeded"] = len(indexes)
            status["completedIndexes"] = format_indexes(indexes)
            if self.failed_indexes is not None:
                status["failedIndexes"] = format_indexes(self.failed_indexes)
        else:
            status["succeeded"] = (integer(status.get("succeeded")) or 0) + counted_succeeded
        status["failed"] = (integer(status.get("failed")) or 0) + counted_failed
        status["uncountedTerminatedPods"] = {}
        status["active"] = self.active
        status["ready"] = self.ready
        status["terminating"] = self.terminating

        terminal: Finish | None = None
        if finish is not None:
            if finish.type == FAILURE_TARGET:
                status.setdefault("conditions", []).append(
                    new_condition(FAILURE_TARGET, "True", finish.reason, finish.message, now))
                terminal = Finish(FAILED, finish.reason, finish.message)
            elif finish.type == SUCCESS_CRITERIA_MET:
                if view.condition(SUCCESS_CRITERIA_MET) is None:
                    status.setdefault("conditions", []).append(
                        new_condition(SUCCESS_CRITERIA_MET, "True", finish.reason, finish.message, now))
                terminal = Finish(COMPLETE, finish.reason, finish.message)
            else:
                terminal = finish
        self.pod_writes += len(release)
        for pod in release:
            self.api.remove_finalizer(pod, JOB_TRACKING_FINALIZER)
        self.state.backoff = self.new_backoff
        if terminal is not None and self.terminating == 0:
            ensure_condition(view, terminal.type, "True", terminal.reason, terminal.message, now)
            if terminal.type == COMPLETE:
                status["completionTime"] = now
            self._finished = terminal

    def _write_status(self, before: dict[str, Any], suspend_changed: bool) -> None:
        view = self.view
        status = view.status
        ordered: dict[str, Any] = {}
        for key in STATUS_ORDER:
            if key not in status:
                continue
            value = status[key]
            if key in OMIT_WHEN_ZERO and value in (0, "", None):
                continue
            if key == "conditions" and not value:
                continue
            ordered[key] = value
        for key, value in status.items():  # anything else someone wrote
            if key not in STATUS_ORDER:
                ordered[key] = value
        self.job["status"] = ordered
        if ordered != before or suspend_changed:
            self.api.update_status(self.job)
        finished = self._finished
        if finished is None:
            return
        recorder = self.controller.recorder
        if finished.type == COMPLETE:
            self.event("Normal", EVENT_COMPLETED, "Job completed")
            recorder.record_for(self.job, "Completed", reason=finished.reason, message=finished.message)
        else:
            self.event("Warning", finished.reason, finished.message)
            recorder.record_for(self.job, "Failed", reason=finished.reason, message=finished.message)
