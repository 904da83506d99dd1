"""``manageJob``: delete surplus pods or create missing ones (``pkg/controller/job/job_controller.go``).

* Suspended: every active pod is deleted (its tracking finalizer removed first, so it is not counted
  as a failure: ``deleteJobPods``).
* Too many active pods (or, Indexed, duplicated / out-of-range indexes): delete, in
  ``controller.ActivePods`` order. Deletion and creation never happen in the same sync.
* Too few: wait out the pod-failure back-off (global, or per index with ``backoffLimitPerIndex``),
  then create the lowest missing indexes (Indexed) or anonymous pods, in slow-start batches of 1, 2,
  4 … (``SlowStartInitialBatchSize``); a batch with a failure stops the rest. Failed creates are
  Warning ``FailedCreate`` events ``Error creating: <error>`` and the Job is retried with the API
  back-off.

Upstream quirk kept: while the pod-failure back-off holds creation back, ``manageJob`` returns 0 as
the active count, so ``status.active`` reads 0 even when other pods of the Job still run.

Modelling choice: upstream re-syncs a Job 1 s after any pod event (``syncJobBatchPeriod``), which
can retry a failed create before the rate limiter would. Our controllers react at once, so a failed
create is retried only when its API back-off expires (1 s, 2 s, 4 s … up to 60 s), and the back-off
is forgotten after a round of creates without errors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jobsetctl.fakecluster.controllers.job_failure import (
    SYNC_BATCH_PERIOD_SECONDS,
    new_index_failure_counts,
    remaining_index_backoff,
)
from jobsetctl.fakecluster.controllers.job_pods import (
    UNKNOWN_INDEX,
    PodBuilder,
    completion_index,
    first_pending_indexes,
    is_ready,
    is_terminating,
    meta_of,
    removal_order,
)
from jobsetctl.fakecluster.controllers.job_spec import (
    EVENT_FAILED_CREATE,
    EVENT_SUCCESSFUL_CREATE,
    EVENT_SUCCESSFUL_DELETE,
    JOB_TRACKING_FINALIZER,
)
from jobsetctl.kinds.interface import Object

if TYPE_CHECKING:
    from jobsetctl.fakecluster.controllers.job_sync import JobSync

#: ``MaxPodCreateDeletePerSync``.
MAX_POD_CREATE_DELETE_PER_SYNC = 500
#: ``controller.SlowStartInitialBatchSize``.
SLOW_START_INITIAL_BATCH_SIZE = 1


def pods_for_removal(sync: JobSync, pods: list[Object], at_least: int) -> list[Object]:
    """``activePodsForRemoval``: Indexed Jobs first drop pods without a valid index and all but one
    pod per index; then the first ``at_least`` pods in removal order."""
    clock = sync.clock
    remove: list[Object] = []
    left = list(pods)
    if sync.view.indexed:
        completions = sync.view.completions or 0
        by_index: dict[int, list[Object]] = {}
        left = []
        for pod in pods:
            index = completion_index(pod)
            if index == UNKNOWN_INDEX or index >= completions:
                remove.append(pod)
            else:
                by_index.setdefault(index, []).append(pod)
        for index in sorted(by_index):
            same = by_index[index]
            if len(same) > 1:  # usually one pod per index: nothing to order
                same = sorted(same, key=lambda p: removal_order(p, clock))
                remove.extend(same[:-1])
            left.append(same[-1])
    if len(remove) < at_least:
        left.sort(key=lambda p: removal_order(p, clock))
        remove.extend(left[:at_least - len(remove)])
    return remove


def delete_pods(sync: JobSync, pods: list[Object], *, release: bool) -> tuple[int, int]:
    """Delete pods; with ``release`` remove the tracking finalizer first so that the pod is never
    counted (``deleteJobPods``), without it keep it (``deleteActivePods``). Returns (deleted, ready)."""
    deleted = ready = 0
    sync.pod_writes += len(pods)
    for pod in pods:
        meta = meta_of(pod)
        if release and JOB_TRACKING_FINALIZER in (meta.get("finalizers") or []):
            sync.api.remove_finalizer(pod, JOB_TRACKING_FINALIZER)
        if is_ready(pod):
            ready += 1
        deleted += 1  # a pod already gone counts as deleted, as NotFound does upstream
        if sync.api.get("", "Pod", str(meta.get("namespace")), str(meta.get("name"))) is not None:
            sync.api.delete(pod)
            sync.event("Normal", EVENT_SUCCESSFUL_DELETE, f"Deleted pod: {meta.get('name')}")
    return deleted, ready


def manage_job(sync: JobSync) -> None:
    """Adjusts ``sync.active``, ``sync.terminating``, ``sync.ready``; may ask for a requeue."""
    view = sync.view
    if view.suspended:
        doomed = pods_for_removal(sync, sync.active_pods, len(sync.active_pods))
        deleted, ready = delete_pods(sync, doomed, release=True)
        sync.active -= deleted
        sync.terminating += deleted
        sync.ready -= ready
        return

    completions = view.completions
    if completions is None:
        want = sync.active if sync.succeeded > 0 else view.parallelism
    else:
        want = max(min(completions - sync.succeeded, view.parallelism), 0)

    surplus = max(sync.active - want, 0)
    doomed = pods_for_removal(sync, sync.active_pods, surplus)[:MAX_POD_CREATE_DELETE_PER_SYNC]
    if doomed:
        deleted, ready = delete_pods(sync, doomed, release=True)
        sync.active -= deleted
        sync.terminating += deleted
        sync.ready -= ready
        return

    terminating = sync.terminating if view.only_replace_failed_pods else 0
    diff = want - terminating - sync.active
    backoff = sync.state.api_backoff
    if diff <= 0:
        backoff.forget()  # a sync without errors resets the rate limiter (``queue.Forget``)
        return
    if backoff.retry_at > sync.clock.now:
        sync.requeue(backoff.retry_at - sync.clock.now)
        return
    if not view.has_backoff_limit_per_index:
        remaining = sync.new_backoff.remaining(sync.clock.now)
        if remaining > 0:
            sync.requeue(max(remaining, SYNC_BATCH_PERIOD_SECONDS))
            sync.active = 0  # upstream quirk: manageJob returns 0 while the back-off holds creation
            return
    if not sync.controller.create_pods:
        return  # render without --pods: everything but the pods
    diff = min(diff, MAX_POD_CREATE_DELETE_PER_SYNC)

    indexes: list[int] = [UNKNOWN_INDEX] * diff
    if view.indexed:
        non_pending = set(sync.succeeded_indexes)
        non_pending.update(completion_index(p) for p in sync.active_pods)
        if view.only_replace_failed_pods:
            non_pending.update(completion_index(p) for p in sync.pods if is_terminating(p))
        non_pending.update(sync.failed_indexes or ())
        indexes = first_pending_indexes(diff, completions or 0, non_pending)
        if view.has_backoff_limit_per_index:
            waits = {i: remaining_index_backoff(sync.delayed.get(i), sync.clock) for i in indexes}
            ready_now = [i for i in indexes if waits[i] == 0]
            if not ready_now and indexes:
                sync.requeue(max(min(waits.values()), SYNC_BATCH_PERIOD_SECONDS))
                sync.active = 0  # same quirk as the global back-off
                return
            indexes = ready_now
    create_pods(sync, indexes)


def create_pods(sync: JobSync, indexes: list[int]) -> None:
    view = sync.view
    errors: list[str] = []
    remaining = list(indexes)
    batch = min(len(remaining), SLOW_START_INITIAL_BATCH_SIZE)
    sync.active += len(remaining)
    builder = PodBuilder(view, sync.pod_group)
    while remaining:
        current, remaining = remaining[:batch], remaining[batch:]
        failed_before = len(errors)
        for index in current:
            counts = None
            if view.has_backoff_limit_per_index and index != UNKNOWN_INDEX:
                counts = new_index_failure_counts(view, sync.delayed.get(index))
            pod = builder.build(index, counts)
            result = sync.api.create(pod)
            if result.ok and result.obj is not None:
                sync.event("Normal", EVENT_SUCCESSFUL_CREATE, f"Created pod: {meta_of(result.obj).get('name')}")
                sync.created.append(result.obj)
            else:
                message = result.message()
                errors.append(message)
                sync.active -= 1
                sync.event("Warning", EVENT_FAILED_CREATE, f"Error creating: {message}")
        if len(errors) > failed_before and remaining:
            sync.active -= len(remaining)  # slow start: the rest waits for the retry
            break
        batch = min(2 * batch, len(remaining))
    backoff = sync.state.api_backoff
    if errors:
        sync.requeue(backoff.failed(sync.clock.now))
    else:
        backoff.forget()
