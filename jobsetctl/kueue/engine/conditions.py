"""A Kueue Workload's status conditions and the states they make (``pkg/workload/workload.go``'s condition
helpers): conditions follow apimachinery's ``meta.SetStatusCondition`` (the transition time moves only when
the status changes); a Workload is pending, holds quota, is admitted or finished by its True conditions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jobsetctl.kueue.engine import names

Object = dict[str, Any]
#: Kueue truncates condition messages to this many characters (``api.TruncateConditionMessage``).
MAX_CONDITION_MESSAGE = 32 * 1024


def as_mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def key_of(obj: Object) -> str:
    md = as_mapping(obj.get("metadata"))
    return f"{md.get('namespace', '')}/{md.get('name', '')}"


# ---- conditions --------------------------------------------------------------------------------------


def conditions(obj: Object) -> list[dict[str, Any]]:
    status = obj.get("status")
    if not isinstance(status, dict):
        status = {}
        obj["status"] = status
    conds = status.get("conditions")
    if not isinstance(conds, list):
        conds = []
        status["conditions"] = conds
    return conds


def find_condition(obj: Object, kind: str) -> dict[str, Any] | None:
    status = obj.get("status")
    if not isinstance(status, dict):
        return None
    for cond in status.get("conditions") or ():
        if isinstance(cond, dict) and cond.get("type") == kind:
            return cond
    return None


def first_conditions(obj: Object) -> dict[Any, dict[str, Any]]:
    """Condition type -> the first condition of that type (what :func:`find_condition` finds for each), in one
    pass: for a reconcile that reads several conditions before it writes anything. (Read by type only: the
    keys' order is not part of the answer.)"""
    status = obj.get("status")
    if not isinstance(status, dict):
        return {}
    conds = status.get("conditions")
    if type(conds) is list:
        # Last to first, so that the first condition of a type is the one kept.
        return {cond.get("type"): cond for cond in reversed(conds) if isinstance(cond, dict)}
    out: dict[Any, dict[str, Any]] = {}
    for cond in conds or ():
        if isinstance(cond, dict):
            out.setdefault(cond.get("type"), cond)
    return out


def true_in(first: dict[Any, dict[str, Any]], kind: str) -> bool:
    """:func:`is_true` over :func:`first_conditions`."""
    cond = first.get(kind)
    return cond is not None and cond.get("status") == "True"


def is_true(obj: Object, kind: str) -> bool:
    """The first condition of this type is True (the per-type predicate of :func:`_true_predicate`)."""
    predicate = _PREDICATES.get(kind)
    if predicate is None:
        predicate = _PREDICATES[kind] = _true_predicate(kind)
    return predicate(obj)


def is_false(obj: Object, kind: str) -> bool:
    cond = find_condition(obj, kind)
    return cond is not None and cond.get("status") == "False"


def set_condition(obj: Object, kind: str, status: bool, reason: str, message: str, now: str,
                  generation: int | None = None) -> bool:
    """``meta.SetStatusCondition``: returns whether anything changed."""
    if generation is None:
        md = obj.get("metadata")
        generation = int(md.get("generation") or 0) if isinstance(md, dict) else 0
    conds = conditions(obj)
    for cond in conds:
        if cond.get("type") == kind:
            return _put_condition(conds, cond, kind, "True" if status else "False", reason, message, generation, now)
    return _put_condition(conds, None, kind, "True" if status else "False", reason, message, generation, now)


def _generation(obj: Object) -> int:
    md = obj.get("metadata")
    return int(md.get("generation") or 0) if isinstance(md, dict) else 0


def _firsts(conds: list[Any], kinds: tuple[str, ...]) -> dict[str, dict[str, Any]] | None:
    """The first condition of each of ``kinds`` (what :func:`set_condition` would find for each), in one pass;
    None when the list holds something else than conditions (the callers then take the long way)."""
    found: dict[str, dict[str, Any]] = {}
    for cond in conds:
        if not isinstance(cond, dict):
            return None
        kind = cond.get("type")
        if kind in kinds and kind not in found:
            found[kind] = cond
    return found


def _put_condition(conds: list[Any], cond: dict[str, Any] | None, kind: str, text: str, reason: str, message: str,
                   gen: int, now: str) -> bool:
    """:func:`set_condition` once the first condition of the type (``cond``, None when there is none) is found."""
    if len(message) > MAX_CONDITION_MESSAGE:
        message = message[:MAX_CONDITION_MESSAGE]
    if cond is None:
        cond = {"type": kind, "status": text, "lastTransitionTime": now, "reason": reason, "message": message}
        if gen:
            cond["observedGeneration"] = gen
        conds.append(cond)
        return True
    changed = False
    if cond.get("status") != text:
        cond["status"] = text
        cond["lastTransitionTime"] = now
        changed = True
    if cond.get("reason") != reason:
        cond["reason"] = reason
        changed = True
    if cond.get("message") != message:
        cond["message"] = message
        changed = True
    if gen and cond.get("observedGeneration") != gen:
        cond["observedGeneration"] = gen
        changed = True
    return changed


def remove_condition(obj: Object, kind: str) -> bool:
    conds = conditions(obj)
    for index, cond in enumerate(conds):
        if cond.get("type") == kind:
            del conds[index]
            return True
    return False


# ---- status predicates (workload.go) ----------------------------------------------------------------

STATUS_PENDING = "pending"
STATUS_QUOTA_RESERVED = "quotaReserved"
STATUS_ADMITTED = "admitted"
STATUS_FINISHED = "finished"


def _true_predicate(kind: str) -> Callable[[Object], bool]:
    """Whether the first condition of type ``kind`` is True, as one function per type: the reconcile hot
    path calls these directly (:func:`find_condition`'s scan written out, no call inside)."""

    def predicate(obj: Object) -> bool:
        status = obj.get("status")
        if not isinstance(status, dict):
            return False
        for cond in status.get("conditions") or ():
            if isinstance(cond, dict) and cond.get("type") == kind:
                return cond.get("status") == "True"
        return False
    return predicate


#: The predicates :func:`is_true` made, per condition type.
_PREDICATES: dict[str, Callable[[Object], bool]] = {}

has_quota_reservation: Callable[[Object], bool] = _true_predicate(names.QUOTA_RESERVED)
is_admitted: Callable[[Object], bool] = _true_predicate(names.ADMITTED)
is_finished: Callable[[Object], bool] = _true_predicate(names.FINISHED)
is_evicted: Callable[[Object], bool] = _true_predicate(names.EVICTED)


def is_active(obj: Object) -> bool:
    spec = obj.get("spec")
    return not isinstance(spec, dict) or spec.get("active") is not False


_FINISHED, _ADMITTED, _QUOTA_RESERVED = names.FINISHED, names.ADMITTED, names.QUOTA_RESERVED


def workload_status(obj: Object) -> str:
    """``workload.Status`` (one pass over the conditions; a True Finished condition decides at once)."""
    status = obj.get("status")
    if not isinstance(status, dict):
        return STATUS_PENDING
    admitted = reserved = False
    for cond in status.get("conditions") or ():
        if isinstance(cond, dict) and cond.get("status") == "True":
            kind = cond.get("type")
            if kind == _FINISHED:
                return STATUS_FINISHED
            if kind == _ADMITTED:
                admitted = True
            elif kind == _QUOTA_RESERVED:
                reserved = True
    if admitted:
        return STATUS_ADMITTED
    if reserved:
        return STATUS_QUOTA_RESERVED
    return STATUS_PENDING


def is_admissible(obj: Object) -> bool:
    """``workload.IsAdmissible`` (no admission gates or on-hold workloads here)."""
    return is_active(obj) and workload_status(obj) == STATUS_PENDING


def admission(obj: Object) -> dict[str, Any] | None:
    value = as_mapping(obj.get("status")).get("admission")
    return value if isinstance(value, dict) else None


def admission_checks(obj: Object) -> list[dict[str, Any]]:
    return [c for c in as_list(as_mapping(obj.get("status")).get("admissionChecks")) if isinstance(c, dict)]


def any_check_state(obj: Object, matches: Callable[[Any], bool]) -> bool:
    """Whether the state of one admission check (of :func:`admission_checks`) ``matches``: one pass, no list
    built (asked per head per cycle and per reconcile; most workloads have no checks)."""
    status = obj.get("status")
    checks = status.get("admissionChecks") if isinstance(status, dict) else None
    if isinstance(checks, list):
        for check in checks:
            if isinstance(check, dict) and matches(check.get("state")):
                return True
    return False


def has_all_checks_ready(obj: Object) -> bool:
    """Every admission check is Ready."""
    return not any_check_state(obj, _not_ready)


def has_failed_checks(obj: Object) -> bool:
    """One admission check is in state Retry or Rejected (the scheduler then does not nominate the workload)."""
    return any_check_state(obj, _failed)


def _not_ready(state: Any) -> bool:
    return bool(state != names.CHECK_READY)


def _failed(state: Any) -> bool:
    return state in (names.CHECK_RETRY, names.CHECK_REJECTED)  # a state of any type (no hashing)


def sync_admitted_condition(obj: Object, now: str) -> bool:
    """``workload.SyncAdmittedCondition`` with UnadmittedWorkloadsObservability on (its default at ff69552):
    Admitted=True once quota is reserved and every admission check is Ready; while neither reservation nor
    Admitted exists, nothing is written."""
    reserved = has_quota_reservation(obj)
    checks_ready = has_all_checks_ready(obj)
    admitted_cond = find_condition(obj, names.ADMITTED)
    if find_condition(obj, names.QUOTA_RESERVED) is None and admitted_cond is None:
        return False
    if reserved and checks_ready:
        return set_condition(obj, names.ADMITTED, True, "Admitted", "The workload is admitted", now)
    if not reserved:
        return set_condition(obj, names.ADMITTED, False, names.NO_RESERVATION, "The workload has no reservation", now)
    return set_condition(obj, names.ADMITTED, False, names.UNSATISFIED_ADMISSION_CHECKS,
                         "The workload has not all checks ready", now)


_UNSET_KINDS = (names.QUOTA_RESERVED, names.ADMITTED)


def unset_quota_reservation(obj: Object, reason: str, message: str, now: str) -> bool:
    """``workload.UnsetQuotaReservationWithCondition`` (the conditions it sets found in one pass)."""
    conds = conditions(obj)
    found = _firsts(conds, _UNSET_KINDS)
    if found is None:
        return _unset_quota_reservation(obj, reason, message, now)
    gen = _generation(obj)
    # Setting QuotaReserved changes no condition's type: the first Admitted one is still the one found.
    changed = _put_condition(conds, found.get(names.QUOTA_RESERVED), names.QUOTA_RESERVED, "False", reason, message,
                             gen, now)
    status = obj["status"]  # conditions() made it a dict
    if status.get("admission") is not None:
        status.pop("admission", None)
        changed = True
    if _put_condition(conds, found.get(names.ADMITTED), names.ADMITTED, "False", names.NO_RESERVATION,
                      "The workload has no reservation", gen, now):
        changed = True
    return changed


def _unset_quota_reservation(obj: Object, reason: str, message: str, now: str) -> bool:
    """:func:`unset_quota_reservation` one condition at a time."""
    changed = set_condition(obj, names.QUOTA_RESERVED, False, reason, message, now)
    status = obj["status"]  # set_condition made it a dict
    if status.get("admission") is not None:
        status.pop("admission", None)
        changed = True
    # sync_admitted_condition with what the line above made sure of: a QuotaReserved condition exists and the
    # first one is False, so there is no reservation.
    if set_condition(obj, names.ADMITTED, False, names.NO_RESERVATION, "The workload has no reservation", now):
        changed = True
    return changed


def sync_admitted_after_reservation(obj: Object, now: str) -> bool:
    """:func:`sync_admitted_condition` right after :func:`set_quota_reservation` (the first QuotaReserved
    condition is True): Admitted follows the admission checks."""
    if has_all_checks_ready(obj):
        return set_condition(obj, names.ADMITTED, True, "Admitted", "The workload is admitted", now)
    return set_condition(obj, names.ADMITTED, False, names.UNSATISFIED_ADMISSION_CHECKS,
                         "The workload has not all checks ready", now)


def reset_active_condition(obj: Object, kind: str, reason: str, now: str) -> bool:
    """``resetActiveCondition``: a True condition turns False with "Previously: " + its message."""
    cond = find_condition(obj, kind)
    if cond is None or cond.get("status") != "True":
        return False
    return set_condition(obj, kind, False, reason, "Previously: " + str(cond.get("message", "")), now)


_RESERVE_KINDS = (names.QUOTA_RESERVED, names.EVICTED, names.PREEMPTED)


def set_quota_reservation(obj: Object, admission_value: dict[str, Any], now: str) -> None:
    """``workload.SetQuotaReservation`` (the conditions it sets and resets found in one pass)."""
    obj.setdefault("status", {})["admission"] = admission_value
    cq = admission_value.get("clusterQueue", "")
    message = f"Quota reserved in ClusterQueue {cq}"
    conds = conditions(obj)
    found = _firsts(conds, _RESERVE_KINDS)
    if found is None:
        set_condition(obj, names.QUOTA_RESERVED, True, "QuotaReserved", message, now)
        reset_active_condition(obj, names.EVICTED, "QuotaReserved", now)
        reset_active_condition(obj, names.PREEMPTED, "QuotaReserved", now)
        return
    gen = _generation(obj)
    _put_condition(conds, found.get(names.QUOTA_RESERVED), names.QUOTA_RESERVED, "True", "QuotaReserved", message,
                   gen, now)
    # reset_active_condition of each (setting QuotaReserved changes no condition's type).
    for kind in (names.EVICTED, names.PREEMPTED):
        cond = found.get(kind)
        if cond is not None and cond.get("status") == "True":
            _put_condition(conds, cond, kind, "False", "QuotaReserved", "Previously: " + str(cond.get("message", "")),
                           gen, now)


def set_requeued_condition(obj: Object, reason: str, message: str, status: bool, now: str) -> bool:
    return set_condition(obj, names.REQUEUED, status, reason, message, now)
