"""The one-pass condition helpers of :mod:`jobsetctl.kueue.engine.conditions` answer and write as the helpers they
stand for, condition by condition.

``set_quota_reservation`` and ``unset_quota_reservation`` find the conditions they set in one pass over the list
instead of one ``set_condition`` / ``reset_active_condition`` scan each; ``first_conditions`` builds its map last to
first; ``workload_status`` stops at a True Finished condition. On generated condition lists (duplicate types,
every status, messages over the length limit, generations present or not, now and then an entry that is not a
condition), each must leave the same object and return the same as the step-by-step reference.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from jobsetctl.kueue.engine import conditions as c
from jobsetctl.kueue.engine import names

TYPES = [names.QUOTA_RESERVED, names.ADMITTED, names.EVICTED, names.PREEMPTED, names.FINISHED, names.REQUEUED, "Other"]
LONG = "m" * (c.MAX_CONDITION_MESSAGE - 5)

condition = st.fixed_dictionaries({"type": st.sampled_from(TYPES), "status": st.sampled_from(["True", "False", "Unknown"]),
                                   "reason": st.sampled_from(["", "QuotaReserved", "Pending"]),
                                   "message": st.sampled_from(["", "old", LONG]),
                                   "lastTransitionTime": st.just("2026-01-01T00:00:00Z")},
                                  optional={"observedGeneration": st.integers(0, 3)})
entries = st.lists(st.one_of(condition, condition, condition, condition, condition, condition, condition, condition,
                             condition, st.just("not a condition")), max_size=7)


@st.composite
def workloads(draw: st.DrawFn) -> dict[str, Any]:
    obj: dict[str, Any] = {"metadata": draw(st.sampled_from([{"generation": 2}, {}, {"generation": 0}, "odd"])),
                           "spec": draw(st.sampled_from([{}, {"active": False}, {"active": True}, None]))}
    shape = draw(st.sampled_from(["list", "list", "list", "list", "none", "no-status"]))
    if shape == "list":
        obj["status"] = {"conditions": draw(entries)}
        if draw(st.booleans()):
            obj["status"]["admission"] = {"clusterQueue": "cq"}
    elif shape == "none":
        obj["status"] = {"conditions": None}
    return obj


def _outcome(function: Any, obj: dict[str, Any], *args: Any) -> tuple[Any, dict[str, Any]]:
    try:
        return function(obj, *args), obj
    except AttributeError as error:  # an entry that is not a condition, reached by a scan
        return type(error), obj


def _set_quota_reservation_step_by_step(obj: dict[str, Any], admission: dict[str, Any], now: str) -> None:
    obj.setdefault("status", {})["admission"] = admission
    c.set_condition(obj, names.QUOTA_RESERVED, True, "QuotaReserved",
                    f"Quota reserved in ClusterQueue {admission.get('clusterQueue', '')}", now)
    c.reset_active_condition(obj, names.EVICTED, "QuotaReserved", now)
    c.reset_active_condition(obj, names.PREEMPTED, "QuotaReserved", now)


@settings(max_examples=400, deadline=None)
@given(workloads(), st.sampled_from(["Pending", "QuotaReserved"]), st.sampled_from(["waiting", "old", LONG + "tail"]))
def test_unset_quota_reservation_is_its_steps(obj: dict[str, Any], reason: str, message: str) -> None:
    now = "2026-01-02T00:00:00Z"
    assert _outcome(c.unset_quota_reservation, copy.deepcopy(obj), reason, message, now) == \
        _outcome(c._unset_quota_reservation, copy.deepcopy(obj), reason, message, now)


@settings(max_examples=400, deadline=None)
@given(workloads(), st.sampled_from(["cq", "x" * c.MAX_CONDITION_MESSAGE]))
def test_set_quota_reservation_is_its_steps(obj: dict[str, Any], cq: str) -> None:
    now = "2026-01-02T00:00:00Z"
    admission = {"clusterQueue": cq}
    assert _outcome(c.set_quota_reservation, copy.deepcopy(obj), admission, now) == \
        _outcome(_set_quota_reservation_step_by_step, copy.deepcopy(obj), admission, now)


@settings(max_examples=400, deadline=None)
@given(workloads())
def test_the_readers_answer_as_the_scans(obj: dict[str, Any]) -> None:
    conds = [cond for cond in ((obj.get("status") or {}).get("conditions") or ()) if isinstance(cond, dict)]
    first: dict[Any, Any] = {}
    for cond in conds:
        first.setdefault(cond.get("type"), cond)
    found = c.first_conditions(obj)
    assert found == first and all(found[kind] is cond for kind, cond in first.items())
    true_types = {cond.get("type") for cond in conds if cond.get("status") == "True"}
    expected = (c.STATUS_FINISHED if names.FINISHED in true_types else c.STATUS_ADMITTED if names.ADMITTED in true_types
                else c.STATUS_QUOTA_RESERVED if names.QUOTA_RESERVED in true_types else c.STATUS_PENDING)
    assert c.workload_status(obj) == expected
    assert c.is_active(obj) is (not isinstance(obj.get("spec"), dict) or obj["spec"].get("active") is not False)


def test_a_reservation_resets_the_first_evicted_and_preempted_conditions() -> None:
    """The first condition of each type is the one written (a later duplicate stays), messages are cut to the
    limit, the generation is recorded."""
    obj: dict[str, Any] = {"metadata": {"generation": 3}, "status": {"conditions": [
        {"type": names.EVICTED, "status": "True", "reason": "Preempted", "message": LONG, "lastTransitionTime": "t0"},
        {"type": names.EVICTED, "status": "True", "reason": "Preempted", "message": "second", "lastTransitionTime": "t0"},
        {"type": names.PREEMPTED, "status": "False", "reason": "", "message": "", "lastTransitionTime": "t0"}]}}
    c.set_quota_reservation(obj, {"clusterQueue": "cq"}, "t1")
    evicted, second, preempted, reserved = obj["status"]["conditions"]
    assert evicted["status"] == "False" and evicted["lastTransitionTime"] == "t1" and evicted["observedGeneration"] == 3
    assert evicted["message"] == ("Previously: " + LONG)[:c.MAX_CONDITION_MESSAGE]
    assert second["status"] == "True" and preempted == {"type": names.PREEMPTED, "status": "False", "reason": "",
                                                         "message": "", "lastTransitionTime": "t0"}
    assert reserved == {"type": names.QUOTA_RESERVED, "status": "True", "lastTransitionTime": "t1",
                        "reason": "QuotaReserved", "message": "Quota reserved in ClusterQueue cq", "observedGeneration": 3}
