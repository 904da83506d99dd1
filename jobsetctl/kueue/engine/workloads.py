"""Kueue's Workload controller (``pkg/controller/core/workload_controller.go`` ``Reconcile``), for what a
simulation needs:

* deactivation: a ``DeactivationTarget`` condition sets ``spec.active: false``; an inactive workload is
  evicted (``Deactivated``, with the target's reason as the cause);
* requeue backoff: a workload evicted by the PodsReady timeout waits until ``requeueState.requeueAt``,
  then its ``Requeued`` condition turns True (``BackoffFinished``) and it re-enters its queue;
* admission checks: the checks the ClusterQueue requires are added as Pending; a simulated check turns
  to the state the Scenario gives it after its delay (Ready by default, at once); Rejected deactivates
  the workload, Retry evicts it (``AdmissionCheck``);
* Admitted once quota is reserved and every check is Ready;
* ``waitForPodsReady``: an admitted workload whose PodsReady is not True after ``timeout`` (or, after a
  pod failed, ``recoveryTimeout``) is evicted (``PodsReadyTimeout``) with ``requeueState`` backoff
  ``base * 2^(n-1)`` capped at ``max`` (``UpdateRequeueState``); past ``backoffLimitCount`` it is
  deactivated (``RequeuingLimitExceeded``).
* a pending workload's QuotaReserved=False condition names what blocks its queue (LocalQueue or
  ClusterQueue missing or inactive, namespace selector).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jobsetctl.kueue.engine import names
from jobsetctl.kueue.engine.conditions import (
    find_condition,
    first_conditions,
    has_quota_reservation,
    is_active,
    is_admissible,
    is_admitted,
    is_evicted,
    remove_condition,
    set_condition,
    sync_admitted_condition,
    true_in,
)

if TYPE_CHECKING:
    from jobsetctl.kueue.engine.core import Engine

Object = dict[str, Any]


def reconcile(engine: Engine, obj: Object, first: dict[Any, dict[str, Any]] | None = None) -> float | None:
    """Returns seconds after which to look again, or None. ``first``: :func:`first_conditions` of ``obj`` as
    it is now, when the caller read it already."""
    # The conditions as they are before this reconcile writes anything: every read through ``first`` below
    # comes before the first write on its path.
    if first is None:
        first = first_conditions(obj)
    if true_in(first, names.FINISHED):
        return None
    read_at = (obj.get("metadata") or {}).get("resourceVersion")
    key = _key(obj)
    clock = engine.clock
    # (The timestamp is read where a branch writes: the clock does not move within a reconcile.)
    status = obj.setdefault("status", {})
    if is_active(obj):
        target = first.get(names.DEACTIVATION_TARGET)
        if target is not None and target.get("status") == "True":
            obj.setdefault("spec", {})["active"] = False
            engine.record(obj, "Deactivated", reason=str(target.get("reason", "")), message=str(target.get("message", "")))
            engine.api.update(obj, skip_admission=True)
            return 0.0
        state = status.get("requeueState")
        requeue_at = state.get("requeueAt") if isinstance(state, dict) else None
        requeued = first.get(names.REQUEUED)
        if requeue_at:
            remaining = clock.seconds_of(str(requeue_at)) - clock.now
            if remaining > 0:
                return remaining
            if not true_in(first, names.QUOTA_RESERVED):
                state.pop("requeueAt", None)
                changed = False
                if requeued is not None and requeued.get("status") == "False" and requeued.get("reason") in (
                        names.EVICTED_BY_PODS_READY_TIMEOUT, names.EVICTED_BY_ADMISSION_CHECK):
                    changed = set_condition(obj, names.REQUEUED, True, names.BACKOFF_FINISHED,
                                            "The workload backoff was finished", clock.timestamp())
                if changed:
                    engine.record(obj, "Requeued", reason=names.BACKOFF_FINISHED, message="The workload backoff was finished")
                engine.write(obj)
                info = engine.infos.get(key)
                if info is not None and is_admissible(obj):
                    engine.queues.add_or_update_workload(info)
                return None
        if requeued is not None and requeued.get("status") == "False" and not true_in(first, names.QUOTA_RESERVED):
            reason = requeued.get("reason")
            if reason == names.DEACTIVATED:
                set_condition(obj, names.REQUEUED, True, names.REACTIVATED, "The workload was reactivated",
                              clock.timestamp())
                engine.record(obj, "Requeued", reason=names.REACTIVATED, message="The workload was reactivated")
                engine.write(obj)
                return None
            if reason in (names.EVICTED_BY_PODS_READY_TIMEOUT, names.EVICTED_BY_ADMISSION_CHECK):
                set_condition(obj, names.REQUEUED, True, names.BACKOFF_FINISHED, "The workload backoff was finished",
                              clock.timestamp())
                engine.record(obj, "Requeued", reason=names.BACKOFF_FINISHED, message="The workload backoff was finished")
                engine.write(obj)
                return None
    else:
        target = first.get(names.DEACTIVATION_TARGET)
        changed = False
        if not true_in(first, names.EVICTED):
            message = "The workload is deactivated"
            cause = ""
            if target is not None:
                cause = str(target.get("reason", ""))
                message = f"{message} due to {target.get('message', '')}"
            if target is not None:
                remove_condition(obj, names.DEACTIVATION_TARGET)
            status.pop("requeueState", None)
            # Evict sets the condition in any case, but reports (events) only a workload with an admission.
            engine.evict(obj, names.DEACTIVATED, message, cause=cause, report=has_quota_reservation(obj))
            return None
        if status.get("requeueState") is not None:
            status.pop("requeueState", None)
            changed = True
        if changed:
            engine.write(obj)
        return None

    # Nothing below sets or clears the reservation (checks, the Admitted condition, a queue blocker's
    # QuotaReserved=False on a workload without one), so it is read once.
    reserved = true_in(first, names.QUOTA_RESERVED)
    # The admission's ClusterQueue, else the one of the workload's LocalQueue (looked up only then).
    cq_name = (status.get("admission") or {}).get("clusterQueue") if reserved else None
    if not cq_name:
        info = engine.infos.get(key)
        cq_name = engine.queues.cluster_queue_for(info) if info is not None else None
    cq = engine.cache.cluster_queues.get(cq_name or "")
    recheck: list[float] = []
    if cq is not None and reserved and engine.sync_admission_checks(obj, cq):
        engine.write(obj)
    if reserved:
        wait = _advance_checks(engine, obj)
        if wait is not None:
            recheck.append(wait)
    if not is_admitted(obj):
        if not reserved:
            _queue_blocker(engine, obj)
        now_text = clock.timestamp()
        if reserved and sync_admitted_condition(obj, now_text):
            if is_admitted(obj):
                engine.admitted_at[key] = clock.now
                reservation = find_condition(obj, names.QUOTA_RESERVED) or {}
                waited = clock.now - clock.seconds_of(str(reservation.get("lastTransitionTime", now_text)))
                cq_text = (status.get("admission") or {}).get("clusterQueue", "")
                engine.recorder.kube_event(obj, "Normal", "Admitted",
                                           f"Admitted by ClusterQueue {cq_text}, wait time since reservation was {waited:.0f}s")
                engine.record(obj, "Admitted", reason="Admitted", message=f"Admitted by ClusterQueue {cq_text}")
            engine.write(obj)
    if reserved:
        if _check_based_eviction(engine, obj):
            return None
        wait = _pods_ready_timeout(engine, obj, engine.kept_conditions(obj, first, read_at))
        if wait is not None:
            recheck.append(wait)
    return min(recheck) if recheck else None


def _key(obj: Object) -> str:
    md = obj.get("metadata") or {}
    return f"{md.get('namespace', '')}/{md.get('name', '')}"


def _advance_checks(engine: Engine, obj: Object) -> float | None:
    """The simulated admission-check controllers: a Pending check turns to its configured state after
    its delay (counted from when it became Pending)."""
    clock = engine.clock
    wait: float | None = None
    changed = False
    for check in (obj.get("status") or {}).get("admissionChecks") or []:
        if not isinstance(check, dict) or check.get("state") != names.CHECK_PENDING:
            continue
        behaviour = engine.settings.admission_checks.get(str(check.get("name", "")))
        delay = behaviour.delay if behaviour is not None else 0.0
        since = clock.seconds_of(str(check.get("lastTransitionTime") or clock.timestamp()))
        due = since + delay
        if clock.now + 1e-9 < due:
            remaining = due - clock.now
            wait = remaining if wait is None else min(wait, remaining)
            continue
        state = behaviour.state if behaviour is not None else names.CHECK_READY
        check["state"] = state
        check["lastTransitionTime"] = clock.timestamp()
        check["message"] = behaviour.message if behaviour is not None else ""
        changed = True
    if changed:
        engine.write(obj)
        return 0.0 if wait is None else wait
    return wait


def _check_based_eviction(engine: Engine, obj: Object) -> bool:
    """``reconcileCheckBasedEviction``."""
    found = (obj.get("status") or {}).get("admissionChecks")
    if not found or is_evicted(obj):
        return False
    checks = [c for c in found if isinstance(c, dict)]
    rejected = [c for c in checks if c.get("state") == names.CHECK_REJECTED]
    retry = [c for c in checks if c.get("state") == names.CHECK_RETRY]
    if rejected:
        message = _checks_message(rejected, names.CHECK_REJECTED)
        set_condition(obj, names.DEACTIVATION_TARGET, True, names.EVICTED_BY_ADMISSION_CHECK, message,
                      engine.clock.timestamp())
        engine.recorder.kube_event(obj, "Warning", "AdmissionCheckRejected", f"Deactivated due to {message}")
        engine.write(obj)
        return True
    if retry:
        message = f"Evicted due to {_checks_message(retry, names.CHECK_RETRY)}"
        engine.evict(obj, names.EVICTED_BY_ADMISSION_CHECK, message)
        return True
    return False


def _checks_message(checks: list[dict[str, Any]], state: str) -> str:
    """``buildAdmissionChecksMessage``."""
    parts = []
    for check in sorted(checks, key=lambda c: str(c.get("name", ""))):
        if check.get("message"):
            parts.append(f'"{check.get("name")}" ({check.get("message")})')
        else:
            parts.append(f'"{check.get("name")}"')
    noun = "AdmissionChecks" if len(checks) > 1 else "AdmissionCheck"
    return f"{noun} in {state} state: {'; '.join(parts)}"


def _pods_ready_timeout(engine: Engine, obj: Object, first: dict[Any, dict[str, Any]] | None = None) -> float | None:
    """``reconcileNotReadyTimeout`` with ``admittedNotReadyWorkload``; ``first``: :func:`first_conditions` of
    ``obj`` as it is now, when the caller kept it."""
    wait = engine.settings.wait_for_pods_ready
    if wait is None or not is_active(obj):
        return None
    if first is None:
        first = first_conditions(obj)  # nothing is written before the eviction below
    if true_in(first, names.EVICTED) or not true_in(first, names.ADMITTED):
        return None
    clock = engine.clock
    ready = first.get(names.PODS_READY)
    if ready is not None and ready.get("status") == "True":
        return None
    if ready is None or ready.get("reason") in (names.WAIT_FOR_START, "PodsReady"):
        admitted = first.get(names.ADMITTED) or {}
        elapsed = clock.now - clock.seconds_of(str(admitted.get("lastTransitionTime", clock.timestamp())))
        timeout = wait.timeout
        cause = names.WAIT_FOR_START
    elif ready.get("reason") == names.WAIT_FOR_RECOVERY and wait.recovery_timeout is not None:
        elapsed = clock.now - clock.seconds_of(str(ready.get("lastTransitionTime", clock.timestamp())))
        timeout = wait.recovery_timeout
        cause = names.WAIT_FOR_RECOVERY
    else:
        return None
    if elapsed < timeout:
        return timeout - elapsed
    status = obj.setdefault("status", {})
    state = status.get("requeueState") if isinstance(status.get("requeueState"), dict) else {}
    count = int(state.get("count") or 0)
    if wait.backoff_limit_count is not None and count + 1 > wait.backoff_limit_count:
        set_condition(obj, names.DEACTIVATION_TARGET, True, names.REQUEUING_LIMIT_EXCEEDED,
                      "exceeding the maximum number of re-queuing retries", clock.timestamp())
        engine.write(obj)
        return None
    # UpdateRequeueState: about base * 2^(n-1), capped at max (upstream adds a 0.01% jitter we leave out).
    count += 1
    backoff = min(wait.backoff_base_seconds * 2 ** (count - 1), wait.backoff_max_seconds)
    status["requeueState"] = {"count": count, "requeueAt": clock.timestamp(clock.now + backoff)}
    key = _key(obj)
    message = f"Exceeded the PodsReady timeout {key}"
    engine.evict(obj, names.EVICTED_BY_PODS_READY_TIMEOUT, message, cause=cause)
    engine.reconcile_after(key, backoff)
    return None


def _queue_blocker(engine: Engine, obj: Object) -> None:
    """``getQueueBlocker``: a pending workload whose queue cannot admit it says why."""
    spec = obj.get("spec") or {}
    md = obj.get("metadata") or {}
    namespace = str(md.get("namespace", ""))
    queue_name = str(spec.get("queueName") or "")
    reason = message = ""
    lq = engine.cache.local_queues.get(f"{namespace}/{queue_name}")
    if lq is None:
        reason, message = names.MISCONFIGURED, f"LocalQueue {queue_name} doesn't exist"
    elif lq.stop_policy not in ("", "None"):
        reason, message = names.SUSPENDED, f"LocalQueue {queue_name} is inactive"
    else:
        cq = engine.cache.cluster_queues.get(lq.cluster_queue)
        if cq is None:
            reason, message = names.MISCONFIGURED, f"ClusterQueue {lq.cluster_queue} doesn't exist"
        elif not cq.active:
            reason, message = names.SUSPENDED, f"ClusterQueue {lq.cluster_queue} is inactive"
    if not reason:
        return
    from jobsetctl.kueue.engine.conditions import unset_quota_reservation

    if unset_quota_reservation(obj, reason, message, engine.clock.timestamp()):
        engine.note_pending(obj, reason, message)
        engine.write(obj)
