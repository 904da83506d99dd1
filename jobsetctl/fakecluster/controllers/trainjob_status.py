"""The TrainJob status the controller computes (trainer.md §1.4, §3.14; jobset.md §4.9).

One reconcile works on a copy of ``status`` and, like upstream ``trainjob_controller.go``:

1. ``Suspended`` (:func:`set_suspended_condition`): True/``Suspended``/``TrainJob is suspended`` while
   ``spec.suspend``; False/``Resumed``/``TrainJob is resumed`` only when it was True before; else untouched;
2. the JobSet plugin's ``Status`` (:func:`copy_jobset_status`): the JobSet's True ``Completed`` and
   ``Failed`` conditions are copied whole (reason, message, ``lastTransitionTime``) as ``Complete`` and
   ``Failed``; ``jobsStatus`` is rebuilt from ``replicatedJobsStatus``. A ``Failed/DeadlineExceeded``
   condition the TrainJob already had is put back afterwards, so a JobSet failure cannot overwrite it;
3. the deadline (:func:`deadline_check`).

Conditions follow apimachinery ``meta.SetStatusCondition`` (:func:`set_condition`): a new type is appended
(``lastTransitionTime`` = the given one, else now); a status change replaces ``lastTransitionTime`` the
same way; reason, message and ``observedGeneration`` are updated in place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from jobsetctl.fakecluster.clock import VirtualClock
from jobsetctl.jobset import api as jobset_api
from jobsetctl.kinds.interface import Object
from jobsetctl.kube.jsontree import copy_tree
from jobsetctl.trainer import api
from jobsetctl.trainer.expand.model import as_dict, as_int, as_list, as_str

TRUE: Final = "True"
FALSE: Final = "False"
#: ``metav1.Condition`` JSON field order.
CONDITION_FIELDS: Final[tuple[str, ...]] = ("type", "status", "observedGeneration", "lastTransitionTime", "reason", "message")
#: ``TrainJobStatus`` JSON field order.
STATUS_FIELDS: Final[tuple[str, ...]] = ("conditions", "jobsStatus", "trainerStatus")
#: ``JobStatus`` fields copied from a JobSet ``ReplicatedJobStatus`` (all int32 pointers, always written).
JOB_STATUS_COUNTERS: Final = ("ready", "succeeded", "failed", "active", "suspended")


def conditions_of(status: dict[str, Any]) -> list[dict[str, Any]]:
    value = status.get("conditions")
    if not isinstance(value, list):
        value = status["conditions"] = []
    return value


def find_condition(status: dict[str, Any], condition_type: str) -> dict[str, Any] | None:
    for condition in as_list(status.get("conditions")):
        if isinstance(condition, dict) and condition.get("type") == condition_type:
            return condition
    return None


def is_condition_true(status: dict[str, Any], condition_type: str) -> bool:
    condition = find_condition(status, condition_type)
    return condition is not None and condition.get("status") == TRUE


def is_finished(status: dict[str, Any]) -> bool:
    """``IsTrainJobFinished``: Complete or Failed is True."""
    return is_condition_true(status, api.CONDITION_COMPLETE) or is_condition_true(status, api.CONDITION_FAILED)


def condition(condition_type: str, status: str, reason: str, message: str, last_transition: str = "") -> dict[str, Any]:
    new: dict[str, Any] = {"type": condition_type, "status": status}
    if last_transition:
        new["lastTransitionTime"] = last_transition
    new["reason"] = reason
    new["message"] = message
    return new


def set_condition(status: dict[str, Any], new: dict[str, Any], now: str) -> bool:
    """apimachinery ``meta.SetStatusCondition``; returns whether anything changed."""
    conditions = conditions_of(status)
    current = next((c for c in conditions if isinstance(c, dict) and c.get("type") == new.get("type")), None)
    if current is None:
        added = dict(new)
        added["lastTransitionTime"] = as_str(new.get("lastTransitionTime")) or now
        conditions.append(_ordered(added))
        return True
    changed = False
    if current.get("status") != new.get("status"):
        current["status"] = new.get("status")
        current["lastTransitionTime"] = as_str(new.get("lastTransitionTime")) or now
        changed = True
    for key in ("reason", "message"):
        if current.get(key) != new.get(key):
            current[key] = new.get(key)
            changed = True
    generation = as_int(new.get("observedGeneration")) or 0
    if (as_int(current.get("observedGeneration")) or 0) != generation:
        if generation:
            current["observedGeneration"] = generation
        else:
            current.pop("observedGeneration", None)
        changed = True
    if changed:
        conditions[conditions.index(current)] = _ordered(current)
    return changed


def _ordered(cond: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {key: cond[key] for key in CONDITION_FIELDS if key in cond}
    out.update({key: value for key, value in cond.items() if key not in out})
    return out


def ordered_status(status: dict[str, Any]) -> dict[str, Any]:
    """The status with its fields in Go struct order, empty lists dropped (``omitempty``)."""
    out: dict[str, Any] = {}
    for key in STATUS_FIELDS:
        value = status.get(key)
        if value is None or (isinstance(value, list) and not value):
            continue
        out[key] = value
    out.update({key: value for key, value in status.items() if key not in STATUS_FIELDS and value is not None})
    return out


def set_suspended_condition(status: dict[str, Any], suspend: bool, now: str) -> None:
    """``setSuspendedCondition`` (trainer.md §1.4)."""
    if suspend:
        set_condition(status, condition(api.CONDITION_SUSPENDED, TRUE, api.REASON_SUSPENDED, api.MESSAGE_SUSPENDED), now)
    elif is_condition_true(status, api.CONDITION_SUSPENDED):
        set_condition(status, condition(api.CONDITION_SUSPENDED, FALSE, api.REASON_RESUMED, api.MESSAGE_RESUMED), now)


def set_failed_condition(status: dict[str, Any], reason: str, message: str, now: str) -> None:
    set_condition(status, condition(api.CONDITION_FAILED, TRUE, reason, message), now)


def jobset_not_found(name: str) -> str:
    """The API server's NotFound error for a JobSet, as the status plugin returns it."""
    return f'jobsets.{jobset_api.GROUP} "{name}" not found'


def copy_jobset_status(status: dict[str, Any], jobset: Object | None, name: str, now: str) -> str | None:
    """``setTrainJobStatus`` with the JobSet plugin's ``Status``; returns the reconcile error, if any.

    No JobSet: nothing changes; an error unless the TrainJob is finished (its JobSet may have been
    removed by its TTL, or by the deadline).
    """
    deadline = find_condition(status, api.CONDITION_FAILED)
    if deadline is not None and deadline.get("reason") != api.REASON_DEADLINE_EXCEEDED:
        deadline = None
    deadline = copy_tree(deadline)
    if jobset is None:
        return None if is_finished(status) else jobset_not_found(name)
    js_status = as_dict(jobset.get("status"))
    for js_type, tj_type in (
        (jobset_api.ConditionType.COMPLETED.value, api.CONDITION_COMPLETE),
        (jobset_api.ConditionType.FAILED.value, api.CONDITION_FAILED),
    ):
        found = find_condition(js_status, js_type)
        if found is not None and found.get("status") == TRUE:
            copied = copy_tree(found)
            copied["type"] = tj_type
            set_condition(status, copied, now)
    entries = [
        {"name": as_str(entry.get("name")), **{key: as_int(entry.get(key)) or 0 for key in JOB_STATUS_COUNTERS}}
        for entry in as_list(js_status.get("replicatedJobsStatus"))
        if isinstance(entry, dict)
    ]
    if entries:
        status["jobsStatus"] = entries
    else:
        status.pop("jobsStatus", None)
    if deadline is not None:
        set_condition(status, deadline, now)
    return None


@dataclass(frozen=True, slots=True)
class DeadlineCheck:
    """What ``reconcileDeadline`` decided: nothing, exceeded now, or check again after some seconds."""

    exceeded: bool = False
    requeue_after: float | None = None


def deadline_check(trainjob: Object, status: dict[str, Any], clock: VirtualClock) -> DeadlineCheck:
    """``reconcileDeadline`` (trainer.md §3.14): the clock starts at creation, or at the
    ``lastTransitionTime`` of ``Suspended=False`` (a resume); it does not run while suspended or once
    finished. A resume restarts the count: time run before a suspension is forgotten (quirk).

    Upstream fails the TrainJob when ``now.After(deadline)`` and otherwise requeues after
    ``time.Until(deadline)``; in real time that requeue runs a few milliseconds after the deadline. On
    the virtual clock it runs exactly at the deadline, so the deadline counts as passed at that instant.
    """
    spec = as_dict(trainjob.get("spec"))
    seconds = as_int(spec.get("activeDeadlineSeconds")) or 0
    if seconds <= 0 or is_finished(status) or spec.get("suspend") is True:
        return DeadlineCheck()
    start_stamp = as_str(as_dict(trainjob.get("metadata")).get("creationTimestamp"))
    suspended = find_condition(status, api.CONDITION_SUSPENDED)
    if suspended is not None and suspended.get("status") == FALSE:
        start_stamp = as_str(suspended.get("lastTransitionTime"))
    try:
        start = clock.seconds_of(start_stamp)
    except ValueError:
        return DeadlineCheck()  # a zero or foreign timestamp: upstream skips the check too
    deadline = start + seconds
    if clock.now >= deadline:
        return DeadlineCheck(exceeded=True)
    return DeadlineCheck(requeue_after=deadline - clock.now)
