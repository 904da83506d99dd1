"""Kueue's topology-aware scheduling tables, entry by entry, against the engine.

Source (kueue ff69552e): ``pkg/scheduler/scheduler_tas_test.go``:

* ``TestScheduleForTAS``: nodes, pods (usage outside TAS), topologies, flavors, ClusterQueues and
  workloads; one cycle; the new admissions with their topology assignments, the queues and the events;
* ``TestScheduleForTASPreemption`` and ``TestScheduleForTASCohorts`` (``runTASScheduleTestCases``): the
  same plus the Workloads' conditions, with preemption within the ClusterQueue and in the Cohort.

Run with UnadmittedWorkloadsObservability on and the TAS caching gates at their defaults.
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

TABLES = {
    "scheduler_tas_test.go TestScheduleForTAS": load("scheduler_tas_test__TestScheduleForTAS.json"),
    "scheduler_tas_test.go TestScheduleForTASPreemption": load("scheduler_tas_test__TestScheduleForTASPreemption.json"),
    "scheduler_tas_test.go TestScheduleForTASCohorts": load("scheduler_tas_test__TestScheduleForTASCohorts.json"),
}
#: The tables whose runner sorts the recorded events before comparing (``runTASScheduleTestCases``).
SORTED_EVENTS = {"scheduler_tas_test.go TestScheduleForTASPreemption", "scheduler_tas_test.go TestScheduleForTASCohorts"}
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"

LEFT_OUT: dict[str, str] = {}
FIELDS = ("nodes", "pods", "topologies", "cohorts", "admissionChecks", "resourceFlavors", "clusterQueues", "workloads",
          "wantWorkloads", "wantNewAssignments", "wantLeft", "wantInadmissibleLeft", "wantEvents", "eventCmpOpts",
          "patchStatusErr")


def _reason(table: str, name: str, case: dict[str, Any]) -> str | None:
    key = f"{table}/{name}"
    if key in LEFT_OUT:
        return LEFT_OUT[key]
    reason = left_out_reason(case, FIELDS)
    if reason is not None:
        return reason
    f = case["fields"]
    if f.get("resourceTransformations"):
        return "Kueue's resource transformations (Configuration.resources.transformations) are not modelled"
    if f.get("patchStatusErr") is not None:
        return "the fake client's injected patch error has no counterpart: the fake API server does not fail writes"
    if any((c.get("spec") or {}).get("controllerName") == PROVISIONING_CONTROLLER for c in f.get("admissionChecks") or []):
        return ("the TAS second pass for ProvisioningRequest checks (delayedTopologyRequest) is not modelled: "
                "simulated checks answer after their delay with the topology already assigned")
    return None


def _entries() -> list[tuple[str, str, dict[str, Any]]]:
    return [(table, name, case) for table, data in TABLES.items() for name, case in sorted(data["cases"].items())]


def _runnable() -> list[Any]:
    return [pytest.param(table, name, case, id=f"{table}/{name}") for table, name, case in _entries()
            if _reason(table, name, case) is None]


def left_out() -> dict[str, str]:
    out = {}
    for table, name, case in _entries():
        reason = _reason(table, name, case)
        if reason is not None:
            out[f"{table}/{name}"] = reason
    return out


def _ignores_message(options: Any) -> bool:
    if isinstance(options, list) and options[:1] == ["ignore"]:
        return "Message" in options
    return isinstance(options, list) and any(_ignores_message(o) for o in options)


@pytest.mark.parametrize(("table", "name", "case"), _runnable())
def test_tas_table(table: str, name: str, case: dict[str, Any]) -> None:
    data = TABLES[table]
    f = case["fields"]
    h = Harness(gates=f.get("featureGates"))
    h.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}})
    for node in f.get("nodes") or []:
        h.add(node)
    for check in f.get("admissionChecks") or []:
        h.add(check)
    topologies = {t["metadata"]["name"]: t for t in f.get("topologies") or []}
    for flavor in f.get("resourceFlavors") or []:
        topology = (flavor.get("spec") or {}).get("topologyName")
        if topology in topologies:
            h.add(topologies[topology])
        h.add(flavor)
    for cohort in f.get("cohorts") or []:
        h.add(cohort)
    for cq in f.get("clusterQueues") or []:
        h.add(cq)
    for lq in data["fixtures"]["queues"]:
        h.add(lq)
    for pod in f.get("pods") or []:
        h.add(pod)
    initially_admitted = set()
    for wl in f.get("workloads") or []:
        conditions = (wl.get("status") or {}).get("conditions") or []
        if any(c.get("type") == "Admitted" and c.get("status") == "True" for c in conditions):
            initially_admitted.add(f"{wl['metadata'].get('namespace', '')}/{wl['metadata']['name']}")
        h.add(wl)

    h.schedule()

    got = {k: norm_admission(v) for k, v in h.assignments().items() if k not in initially_admitted}
    want = {k: norm_admission(v) for k, v in (f.get("wantNewAssignments") or {}).items()}
    assert got == want, "new assignments"
    if f.get("wantWorkloads") is not None:
        want_wl = {(w["metadata"].get("namespace", ""), w["metadata"]["name"]): norm_status(h, w)
                   for w in f["wantWorkloads"]}
        got_wl = {(w["metadata"].get("namespace", ""), w["metadata"]["name"]): norm_status(h, w) for w in h.workloads()}
        assert got_wl == want_wl, "workloads"
    assert _dump(h.engine.queues.dump()) == _dump(f.get("wantLeft")), "left in the queues"
    assert _dump(h.engine.queues.dump_inadmissible()) == _dump(f.get("wantInadmissibleLeft")), "left inadmissible"
    ignore = _ignores_message(f.get("eventCmpOpts"))
    want_events = norm_events(f.get("wantEvents") or [], ignore_message=ignore)
    got_events = norm_events(h.recorder.kube_events, ignore_message=ignore)
    if table in SORTED_EVENTS or _sorts(f.get("eventCmpOpts")):
        want_events, got_events = sorted(want_events, key=str), sorted(got_events, key=str)
    assert got_events == want_events, "events"


def _sorts(options: Any) -> bool:
    if isinstance(options, list) and options[:2] == ["cmp", "SortSlices"]:
        return True
    return isinstance(options, list) and any(_sorts(o) for o in options)


def _dump(value: Any) -> dict[str, list[str]]:
    return {str(k): sorted(v) for k, v in (value or {}).items() if v}


def test_every_entry_is_run_or_listed() -> None:
    assert len(_entries()) == len(_runnable()) + len(left_out())
