"""The write and reconcile path of the engine reads less and changes nothing (stop 22).

* ``unset_quota_reservation`` and ``sync_admitted_after_reservation`` are ``sync_admitted_condition`` with what
  the reservation write before it made sure of; ``has_all_checks_ready`` reads the checks in one pass: each is
  compared with the general form on generated conditions (duplicated types included) and checks.
* The memos (duration annotations, ``resourceRequests`` text, ``validate_resources`` per pod-spec content) are
  keyed by everything they read: changing each input changes the answer.
* ``Engine.kept_conditions`` hands the conditions read at a resourceVersion back only while the object is at
  that version; with the shortcut checks on, conditions changed without a write are caught.
* ``Engine.write_finished`` keeps the Info of the version before the Finished condition: the observed version
  reads as a fresh Info would, and a stale Info is caught by the shortcut checks.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jobsetctl.fakecluster.apiserver import WatchEvent
from jobsetctl.kueue.engine import names
from jobsetctl.kueue.engine.conditions import (
    admission_checks,
    first_conditions,
    has_all_checks_ready,
    set_condition,
    set_quota_reservation,
    sync_admitted_after_reservation,
    sync_admitted_condition,
    unset_quota_reservation,
    workload_status,
)
from jobsetctl.kueue.engine.jobs import workload_duration
from jobsetctl.kueue.engine.workload import (
    PodSetResources,
    WorkloadInfo,
    reading,
    requests_text,
    validate_resources,
)
from tests.kueue.upstream.harness import Harness

K = "kueue.x-k8s.io/v1beta2"
NOW = "2026-01-01T00:00:00Z"
TYPES = [names.QUOTA_RESERVED, names.ADMITTED, names.EVICTED, names.PREEMPTED, names.REQUEUED, names.FINISHED]

conditions_lists = st.lists(st.fixed_dictionaries({
    "type": st.sampled_from(TYPES), "status": st.sampled_from(["True", "False", "Unknown"]),
    "reason": st.sampled_from(["A", "NoReservation", "Admitted"]),
    "message": st.sampled_from(["", "The workload has no reservation", "The workload is admitted"]),
    "lastTransitionTime": st.just("2025-01-01T00:00:00Z")}), max_size=6)
checks_lists = st.one_of(st.none(), st.lists(st.one_of(
    st.fixed_dictionaries({"name": st.sampled_from(["a", "b"]),
                           "state": st.sampled_from([names.CHECK_READY, names.CHECK_PENDING, names.CHECK_RETRY])}),
    st.just("not a check")), max_size=3))


def _obj(conditions: list[dict[str, Any]], checks: Any, admitted: bool) -> dict[str, Any]:
    status: dict[str, Any] = {"conditions": conditions}
    if checks is not None:
        status["admissionChecks"] = checks
    if admitted:
        status["admission"] = {"clusterQueue": "cq"}
    return {"metadata": {"name": "w", "namespace": "ns", "generation": 1}, "status": status}


@settings(max_examples=300, deadline=None)
@given(conditions_lists, checks_lists, st.booleans())
def test_unset_quota_reservation_is_the_general_sync(conditions: list[dict[str, Any]], checks: Any,
                                                     admitted: bool) -> None:
    fast, general = _obj(copy.deepcopy(conditions), copy.deepcopy(checks), admitted), _obj(conditions, checks, admitted)
    changed = set_condition(general, names.QUOTA_RESERVED, False, "R", "M", NOW)
    if general["status"].pop("admission", None) is not None:
        changed = True
    changed = sync_admitted_condition(general, NOW) or changed
    assert unset_quota_reservation(fast, "R", "M", NOW) == changed
    assert fast == general


@settings(max_examples=300, deadline=None)
@given(conditions_lists, checks_lists)
def test_sync_after_a_reservation_is_the_general_sync(conditions: list[dict[str, Any]], checks: Any) -> None:
    fast, general = _obj(copy.deepcopy(conditions), copy.deepcopy(checks), False), _obj(conditions, checks, False)
    for obj in (fast, general):
        set_quota_reservation(obj, {"clusterQueue": "cq"}, NOW)
    assert sync_admitted_after_reservation(fast, NOW) == sync_admitted_condition(general, NOW)
    assert fast == general


@settings(max_examples=200, deadline=None)
@given(checks_lists, st.sampled_from([None, "status", {}]))
def test_all_checks_ready_in_one_pass(checks: Any, status: Any) -> None:
    obj = _obj([], checks, False) if status is None else {"status": status}
    assert has_all_checks_ready(obj) == all(c.get("state") == names.CHECK_READY for c in admission_checks(obj))


# ---- memos ------------------------------------------------------------------------------------------------


def _with_duration(value: Any) -> dict[str, Any]:
    return {"metadata": {"annotations": {"jobsetctl.dev/duration": value}}}


def test_the_duration_memo_answers_per_text() -> None:
    assert workload_duration(_with_duration("90s")) == 90.0
    assert workload_duration(_with_duration("90s")) == 90.0
    assert workload_duration(_with_duration("2m")) == 120.0
    assert workload_duration(_with_duration("soon")) is None
    assert workload_duration(_with_duration("soon")) is None
    assert workload_duration(_with_duration(30)) == 30.0  # not text: parsed, not remembered
    assert workload_duration({"metadata": {}}) is None


def _workload(name: str = "w", cpu: str = "1", limit: str | None = None, count: int = 2,
              pod_resources: dict[str, Any] | None = None, podsets: int = 1) -> dict[str, Any]:
    resources: dict[str, Any] = {"requests": {"cpu": cpu}}
    if limit is not None:
        resources["limits"] = {"cpu": limit}
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": resources}]}
    if pod_resources is not None:
        spec["resources"] = pod_resources
    sets = [{"name": f"p{i}", "count": count, "template": {"spec": copy.deepcopy(spec)}} for i in range(podsets)]
    return {"apiVersion": K, "kind": "Workload", "metadata": {"name": name, "namespace": "ns"},
            "spec": {"queueName": "lq", "podSets": sets}}


def test_the_requests_text_is_kept_per_podsets_list() -> None:
    info = WorkloadInfo(_workload(count=2))
    text = requests_text(info)
    assert text == [{"name": "p0", "resources": {"cpu": "2"}}]
    assert requests_text(info) is text
    # A new reading (here: another count) makes a new podsets list, which the memo does not answer for.
    info.podsets = [PodSetResources("p0", 3, info.podsets[0].per_pod)]
    assert requests_text(info) == [{"name": "p0", "resources": {"cpu": "3"}}]


def test_validate_resources_is_remembered_per_pod_spec_content() -> None:
    over = "spec.podSets[0].template.spec.containers[0]: Invalid value: [\"cpu\"]: requests must not exceed its limits"
    assert validate_resources(WorkloadInfo(_workload(cpu="2", limit="1"))) == [over]
    # Each input the answer reads changes it: the request, the limit, pod-level resources, the podsets' order.
    assert validate_resources(WorkloadInfo(_workload(name="x", cpu="2", limit="1"))) == [over]
    assert validate_resources(WorkloadInfo(_workload(cpu="1", limit="1"))) == []
    assert validate_resources(WorkloadInfo(_workload(cpu="2", limit="3"))) == []
    assert validate_resources(WorkloadInfo(_workload(cpu="1", pod_resources={
        "requests": {"cpu": "2"}, "limits": {"cpu": "1"}}))) == [
        "spec.podSets[0].template.spec.resources: Invalid value: [\"cpu\"]: requests must not exceed its limits"]
    two = _workload(podsets=2)
    two["spec"]["podSets"][1]["template"]["spec"]["containers"][0]["resources"]["limits"] = {"cpu": "0"}
    assert validate_resources(WorkloadInfo(two)) == [over.replace("podSets[0]", "podSets[1]")]
    two["spec"]["podSets"].reverse()
    assert validate_resources(WorkloadInfo(copy.deepcopy(two))) == [over]


# ---- the engine's kept readings -------------------------------------------------------------------------


def _harness_with_workload() -> tuple[Harness, dict[str, Any]]:
    h = Harness()
    h.add({"apiVersion": K, "kind": "Workload", "metadata": {"name": "w", "namespace": ""},
           "spec": {"queueName": "lq", "podSets": [{"name": "main", "count": 1, "template": {"spec": {
               "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}]}})
    obj = h.api.get(names.GROUP, "Workload", "", "w")
    assert obj is not None
    return h, obj


def test_kept_conditions_hold_while_the_version_does() -> None:
    h, obj = _harness_with_workload()
    engine = h.engine
    engine.verify_shortcuts = True
    first = first_conditions(obj)
    read_at = obj["metadata"]["resourceVersion"]
    assert engine.kept_conditions(obj, first, read_at) is first
    set_condition(obj, names.QUOTA_RESERVED, False, "Pending", "m", NOW)
    # A condition added without a write: the checks catch it.
    with pytest.raises(AssertionError, match="without a write"):
        engine.kept_conditions(obj, first, read_at)
    h.api.update_status(obj)
    assert engine.kept_conditions(obj, first, read_at) is None
    engine.shortcuts = False
    assert engine.kept_conditions(obj, first_conditions(obj), obj["metadata"]["resourceVersion"]) is None


def test_the_finished_write_keeps_the_info_it_stands_for() -> None:
    h, obj = _harness_with_workload()
    engine = h.engine
    engine.verify_shortcuts = True
    h.api.subscribe(lambda event: _observe(h, event))
    before = engine.infos["/w"]
    set_condition(obj, names.FINISHED, True, names.FINISHED_SUCCEEDED, "done", NOW)
    engine.write_finished(obj)
    info = engine.infos["/w"]
    assert info is before and info.resource_version == obj["metadata"]["resourceVersion"]
    assert workload_status(obj) == engine.status_of("/w") == "finished"
    assert reading(WorkloadInfo(obj)) == reading(info)


def test_a_stale_info_is_caught_when_it_would_stand_for_the_finished_version() -> None:
    h, obj = _harness_with_workload()
    engine = h.engine
    engine.verify_shortcuts = True
    h.api.subscribe(lambda event: _observe(h, event))
    obj["spec"]["priority"] = 7  # changed without a write: the kept Info no longer reads as the object does
    set_condition(obj, names.FINISHED, True, names.FINISHED_SUCCEEDED, "done", NOW)
    with pytest.raises(AssertionError, match="stale"):
        engine.write_finished(obj)


def _observe(h: Harness, event: WatchEvent) -> None:
    if event.obj is not None and event.obj.get("kind") == "Workload":
        h.engine.observe(event.obj)
