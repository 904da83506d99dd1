"""Property test: :func:`set_pod_conditions` (several conditions, the list copied and searched once) leaves
a pod exactly as :func:`set_pod_condition` called for each condition in turn does, on random condition
lists (duplicates, entries that are not mappings, missing transition times, no status at all).

The reference below is the one-condition rule written out on its own: the first condition of the type is
replaced when anything differs, the transition time kept while the status stays, a new one appended.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from jobsetctl.fakecluster.nodelifecycle import set_pod_condition, set_pod_conditions

TYPES = ("Ready", "ContainersReady", "Initialized", "PodScheduled")
STATUSES = ("True", "False")
REASONS = (None, "", "ContainersNotReady", "PodCompleted")


def _reference(pod: dict[str, Any], type_: str, status: str, now: str, reason: str | None,
               message: str | None) -> bool:
    pod_status = pod.get("status")
    if not isinstance(pod_status, dict):
        pod_status = pod["status"] = {}
    raw = pod_status.get("conditions")
    conditions = [c for c in raw if isinstance(c, dict)] if isinstance(raw, list) else []
    wanted: dict[str, Any] = {"type": type_, "status": status, "lastProbeTime": None, "lastTransitionTime": now}
    if reason:
        wanted["reason"] = reason
    if message:
        wanted["message"] = message
    for index, cond in enumerate(conditions):
        if cond.get("type") != type_:
            continue
        if cond.get("status") == status:
            wanted["lastTransitionTime"] = cond.get("lastTransitionTime", now)
        if cond == wanted:
            return False
        conditions[index] = wanted
        pod_status["conditions"] = conditions
        return True
    conditions.append(wanted)
    pod_status["conditions"] = conditions
    return True


condition = st.fixed_dictionaries(
    {"type": st.sampled_from(TYPES), "status": st.sampled_from(STATUSES)},
    optional={"lastProbeTime": st.none(), "lastTransitionTime": st.sampled_from(("t0", "t1")),
              "reason": st.sampled_from(("ContainersNotReady", "PodCompleted")), "message": st.just("m")},
)
entries = st.lists(st.one_of(condition, st.just("not-a-mapping"), st.just(7)), max_size=6)
pods = st.one_of(
    st.just({}),
    st.just({"status": "broken"}),
    entries.map(lambda conditions: {"status": {"phase": "Running", "conditions": conditions}}),
)
updates = st.lists(st.tuples(st.sampled_from(TYPES), st.sampled_from(STATUSES), st.sampled_from(REASONS),
                             st.sampled_from((None, "", "m"))), min_size=1, max_size=4)


@given(pod=pods, updates=updates, now=st.sampled_from(("t1", "t2")))
def test_several_conditions_at_once_equal_one_after_another(pod: dict[str, Any], updates: list[Any], now: str) -> None:
    expected = copy.deepcopy(pod)
    expected_changed = False
    for type_, status, reason, message in updates:
        expected_changed = _reference(expected, type_, status, now, reason, message) or expected_changed
    actual = copy.deepcopy(pod)
    assert set_pod_conditions(actual, now, updates) == expected_changed
    assert actual == expected
    # The one-condition entry point is the same rule.
    single = copy.deepcopy(pod)
    type_, status, reason, message = updates[0]
    assert set_pod_condition(single, type_, status, now, reason, message) == _reference(
        pod, type_, status, now, reason, message)
    assert single == pod
