"""Kueue's preemption tables, entry by entry, against :class:`Preemptor`.

Sources (kueue ff69552e), all under ``pkg/scheduler/preemption/``:

* ``preemption_test.go`` ``TestPreemption`` and ``preemption_hierarchical_test.go``
  ``TestHierarchicalPreemptions``: admitted workloads in a cache, an incoming workload with a flavor
  assignment, ``GetTargets`` then ``IssuePreemptions``; the number preempted and every Workload's
  conditions (Evicted and Preempted with upstream's reasons and messages) and eviction counts;
* ``preemption_fair_test.go`` ``TestFairPreemptions``: the same with fair sharing (preemption
  strategies), comparing the targets as ``key:reason``.

Each run also checks that finding targets leaves the quota usage as it found it (upstream compares the
snapshot before and after).
"""

from __future__ import annotations

from typing import Any

import pytest

from jobsetctl.kueue.engine.assignment import Assignment, FlavorAssignment, PodSetAssignment, Status
from jobsetctl.kueue.engine.workload import WorkloadInfo
from tests.kueue.test_upstream_flavorassigner import MODES
from tests.kueue.upstream.harness import Harness, left_out_reason, load, norm_status

CLASSIC = {
    "preemption_test.go TestPreemption": load("preemption_test__TestPreemption.json"),
    "preemption_hierarchical_test.go TestHierarchicalPreemptions":
        load("preemption_hierarchical_test__TestHierarchicalPreemptions.json"),
}
FAIR = load("preemption_fair_test__TestFairPreemptions.json")
DEFAULT_STRATEGIES = ("LessThanOrEqualToFinalShare", "LessThanInitialShare")

LEFT_OUT: dict[str, str] = {}


def to_assignment(raw: dict[str, Any]) -> Assignment:
    podsets = []
    for ps in raw.get("PodSets") or []:
        flavors = {r: FlavorAssignment(str(fa.get("Name")), MODES[fa.get("Mode", "NoFit")])
                   for r, fa in (ps.get("Flavors") or {}).items()}
        podsets.append(PodSetAssignment(str(ps.get("Name")), flavors, Status(), {}, int(ps.get("Count", 0))))
    return Assignment(podsets=podsets)


def _usage_snapshot(h: Harness) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, state in h.engine.cache.cluster_queues.items():
        out[f"cq:{name}"] = {k: v for k, v in state.node.usage.items() if v}
    for name, node in h.engine.cache.cohorts.items():
        out[f"cohort:{name}"] = {k: v for k, v in node.usage.items() if v}
    return out


def _setup(h: Harness, flavors: list[Any], f: dict[str, Any], *, uid_from_name: bool = False) -> None:
    for flavor in flavors:
        h.add(flavor)
    for cq in f.get("clusterQueues") or []:
        h.add(cq)
    for cohort in f.get("cohorts") or []:
        h.add(cohort)
    for wl in f.get("admitted") or []:
        if uid_from_name:
            wl = {**wl, "metadata": {**wl["metadata"], "uid": wl["metadata"]["name"]}}
        h.add(wl)


def _targets(h: Harness, f: dict[str, Any], assignment: Assignment) -> tuple[WorkloadInfo, Any, list[Any]]:
    incoming = h.materialize(f["incoming"])
    incoming.setdefault("metadata", {}).setdefault("namespace", "")
    info = WorkloadInfo(incoming)
    info.cluster_queue = f["targetCQ"]
    cq = h.engine.cache.cluster_queues[f["targetCQ"]]
    before = _usage_snapshot(h)
    tas_requests = None
    targets = h.engine.preemptor.get_targets(info, cq, assignment.total_requests(info),
                                             assignment.flavors_needing_preemption(), tas_requests)
    assert _usage_snapshot(h) == before, "finding targets changed the quota usage"
    return info, cq, targets


def _classic_cases() -> list[Any]:
    out = []
    for table, data in CLASSIC.items():
        for name, case in sorted(data["cases"].items()):
            key = f"{table}/{name}"
            if key not in LEFT_OUT and left_out_reason(case) is None:
                out.append(pytest.param(table, name, case, id=key))
    return out


def _fair_cases() -> list[Any]:
    return [pytest.param(name, case, id=name) for name, case in sorted(FAIR["cases"].items())
            if f"preemption_fair_test.go TestFairPreemptions/{name}" not in LEFT_OUT and left_out_reason(case) is None]


def left_out() -> dict[str, str]:
    out = {}
    for table, data in [*CLASSIC.items(), ("preemption_fair_test.go TestFairPreemptions", FAIR)]:
        for name, case in sorted(data["cases"].items()):
            key = f"{table}/{name}"
            reason = LEFT_OUT.get(key) or left_out_reason(case)
            if reason is not None:
                out[key] = reason
    return out


@pytest.mark.parametrize(("table", "name", "case"), _classic_cases())
def test_preemption_table(table: str, name: str, case: dict[str, Any]) -> None:
    data = CLASSIC[table]
    f = case["fields"]
    h = Harness()
    _setup(h, data["fixtures"]["flavors"], f)
    info, cq, targets = _targets(h, f, to_assignment(f["assignment"]))
    preempted = h.engine.issue_preemptions(info, cq, targets)
    assert preempted == f.get("wantPreempted", 0)
    want = {(w["metadata"].get("namespace", ""), w["metadata"]["name"]): norm_status(h, w)
            for w in f.get("wantWorkloads") or []}
    got = {(w["metadata"].get("namespace", ""), w["metadata"]["name"]): norm_status(h, w) for w in h.workloads()}
    assert got == want


@pytest.mark.parametrize(("name", "case"), _fair_cases())
def test_fair_preemption_table(name: str, case: dict[str, Any]) -> None:
    f = case["fields"]
    strategies = tuple(f.get("strategies") or DEFAULT_STRATEGIES)
    h = Harness(fair_sharing=strategies)
    _setup(h, f.get("flavors") or FAIR["fixtures"]["flavors"], f, uid_from_name=True)
    flavor = f.get("assignmentFlavor") or "default"
    assignment = to_assignment({"PodSets": [{"Name": "main", "Count": 1,
                                             "Flavors": {"cpu": {"Name": flavor, "Mode": "Preempt"}}}]})
    _, _, targets = _targets(h, f, assignment)
    got = sorted(f"{t.info.key}:{t.reason}" for t in targets)
    assert got == sorted(f.get("wantPreempted") or [])


def test_every_entry_is_run_or_listed() -> None:
    total = sum(len(d["cases"]) for d in CLASSIC.values()) + len(FAIR["cases"])
    assert total == len(_classic_cases()) + len(_fair_cases()) + len(left_out())
