"""Kueue's scheduling-cycle tables, entry by entry, against the engine.

Sources (kueue ff69552e): ``pkg/scheduler/scheduler_test.go`` ``TestSchedule`` and
``pkg/scheduler/scheduler_fs_test.go`` ``TestScheduleForFairSharing``, both run by
``runScheduleTestCases``: objects into the cache and queue manager, one ``schedule`` cycle, then the
cache's admissions (``wantAssignments``), the Workloads (``wantWorkloads``: conditions with reasons and
messages, admission, resource requests), the queues (``wantLeft``, ``wantInadmissibleLeft``) and the
events (``wantEvents``). Upstream runs each case four times (two gates); this runs the defaults at
ff69552 (UnadmittedWorkloadsObservability on). The tables are converted from the Go source by
``tests/kueue/upstream/convert.py``; entries that cannot run are listed in :data:`LEFT_OUT` with reasons.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.kueue.upstream.harness import (
    Harness,
    left_out_reason,
    load,
    norm_admission,
    norm_events,
    norm_status,
)

NAMESPACES = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "eng-alpha", "labels": {"dep": "eng"}}},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "eng-beta", "labels": {"dep": "eng"}}},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "eng-gamma", "labels": {"dep": "eng"}}},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "sales", "labels": {"dep": "sales"}}},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "lend", "labels": {"dep": "lend"}}},
]

TABLES = {
    "scheduler_test.go TestSchedule": load("scheduler_test__TestSchedule.json"),
    "scheduler_fs_test.go TestScheduleForFairSharing": load("scheduler_fs_test__TestScheduleForFairSharing.json"),
}

#: Entries not run, with why (besides those whose Go values do not evaluate, see ``left_out_reason``).
LEFT_OUT: dict[str, str] = {
    "scheduler_test.go TestSchedule/error during admission":
        "the fake client's injected patch error has no counterpart: the fake API server does not fail writes",
    "scheduler_test.go TestSchedule/container does not satisfy limitRange constraints":
        "LimitRange objects are not modelled",
}

FIELDS = ("workloads", "additionalClusterQueues", "additionalLocalQueues", "cohorts", "objects", "wantAssignments",
          "wantWorkloads", "wantLeft", "wantInadmissibleLeft", "wantEvents", "eventCmpOpts", "admissionError")


def _entries() -> list[tuple[str, str, dict[str, Any]]]:
    out = []
    for table, data in TABLES.items():
        for name, case in sorted(data["cases"].items()):
            out.append((table, name, case))
    return out


def _runnable() -> list[Any]:
    out = []
    for table, name, case in _entries():
        key = f"{table}/{name}"
        if key in LEFT_OUT or left_out_reason(case, FIELDS) is not None:
            continue
        out.append(pytest.param(table, name, case, id=key))
    return out


def left_out() -> dict[str, str]:
    """Every entry not run, with its reason (for the report)."""
    out = {}
    for table, name, case in _entries():
        key = f"{table}/{name}"
        reason = LEFT_OUT.get(key) or left_out_reason(case, FIELDS)
        if reason is not None:
            out[key] = reason
    return out


@pytest.mark.parametrize(("table", "name", "case"), _runnable())
def test_schedule_table(table: str, name: str, case: dict[str, Any]) -> None:
    data = TABLES[table]
    fixtures = data["fixtures"]
    f = case["fields"]
    fair = ("LessThanOrEqualToFinalShare", "LessThanInitialShare") if f.get("enableFairSharing") else None
    h = Harness(gates=f.get("featureGates"), fair_sharing=fair)
    for ns in NAMESPACES:
        h.add(ns)
    for obj in f.get("objects") or []:
        h.add(obj)
    for flavor in fixtures["resourceFlavors"]:
        h.add(flavor)
    for cq in fixtures["clusterQueues"] + (f.get("additionalClusterQueues") or []):
        h.add(cq)
    for cohort in f.get("cohorts") or []:
        h.add(cohort)
    for lq in fixtures["queues"] + (f.get("additionalLocalQueues") or []):
        h.add(lq)
    for wl in f.get("workloads") or []:
        h.add(wl)

    h.schedule()

    got_assignments = {k: norm_admission(v) for k, v in h.assignments().items()}
    want_assignments = {k: norm_admission(v) for k, v in (f.get("wantAssignments") or {}).items()}
    assert got_assignments == want_assignments, "assignments in the cache"

    if f.get("wantWorkloads") is not None or f.get("workloads"):
        want = {(w["metadata"].get("namespace", ""), w["metadata"]["name"]): norm_status(h, w)
                for w in f.get("wantWorkloads") or []}
        got = {(w["metadata"].get("namespace", ""), w["metadata"]["name"]): norm_status(h, w) for w in h.workloads()}
        assert got == want, "workloads"

    assert _dump(h.engine.queues.dump()) == _dump(f.get("wantLeft")), "left in the queues"
    assert _dump(h.engine.queues.dump_inadmissible()) == _dump(f.get("wantInadmissibleLeft")), "left inadmissible"

    if f.get("wantEvents"):
        options = f.get("eventCmpOpts") or []
        ignore_message = any(isinstance(o, list) and o[:1] == ["ignore"] and "Message" in o for o in options)
        want_events = norm_events(f["wantEvents"], ignore_message=ignore_message)
        got_events = norm_events(h.recorder.kube_events, ignore_message=ignore_message)
        if any(isinstance(o, list) and o[:2] == ["cmp", "SortSlices"] for o in options):
            want_events, got_events = sorted(want_events, key=str), sorted(got_events, key=str)
        assert got_events == want_events, "events"


def _dump(value: Any) -> dict[str, list[str]]:
    return {str(k): sorted(v) for k, v in (value or {}).items() if v}


def test_every_entry_is_run_or_listed() -> None:
    entries = _entries()
    runnable = {p.id for p in _runnable()}
    listed = left_out()
    assert len(entries) == len(runnable) + len(listed)
    assert runnable.isdisjoint(listed)
