"""Kueue's flavor-assigner table, entry by entry, against :class:`FlavorAssigner`.

Source (kueue ff69552e): ``pkg/scheduler/flavorassigner/flavorassigner_test.go`` ``TestAssignFlavors``:
a workload's podsets, a ClusterQueue (and a secondary one in its Cohort) with usage added to the
snapshot, a preemption oracle that answers from the table (``simulationResult``, default Preempt), then
``Assign``: the representative mode, and per podset the flavor, mode and tried-flavor index of each
resource, the status reasons, the requests and count, the assignment's borrowing, usage and NoFit
reason, and the considered flavors (``flexAssertConsidered``). Run with UnadmittedWorkloadsObservability
on (its default at ff69552; upstream also runs it off, ignoring the NoFit reasons).
"""

from __future__ import annotations

from typing import Any

import pytest

from jobsetctl.kueue.engine.amounts import units
from jobsetctl.kueue.engine.assignment import (
    DEFERRED_FIT,
    FIT,
    NO_CANDIDATES,
    NO_FIT,
    POSSIBILITY_NAMES,
    POSSIBLE_PREEMPT,
    POSSIBLE_RECLAIM,
    PREEMPT,
    Assignment,
)
from jobsetctl.kueue.engine.flavors import FlavorAssigner
from jobsetctl.kueue.engine.quota import add_usage_map
from jobsetctl.kueue.engine.workload import WorkloadInfo
from tests.kueue.upstream.harness import Harness, left_out_reason, load

TABLE = load("flavorassigner_test__TestAssignFlavors.json")
MODES = {"NoFit": NO_FIT, "Preempt": PREEMPT, "DeferredFit": DEFERRED_FIT, "Fit": FIT}
MODE_NAMES = {v: k for k, v in MODES.items()}
POSSIBILITIES = {"NoCandidates": NO_CANDIDATES, "Preempt": POSSIBLE_PREEMPT, "Reclaim": POSSIBLE_RECLAIM}

LEFT_OUT = {
    "with reclaimable pods; reclaimablePods off":
        "the engine always honours status.reclaimablePods; its job adapter writes them only with the "
        "ReclaimablePods gate on, so the gate-off case of a Workload carrying them does not arise",
}
FIELDS = ("wlPods", "wlReclaimablePods", "clusterQueue", "clusterQueueUsage", "secondaryClusterQueue",
          "secondaryClusterQueueUsage", "wantRepMode", "wantAssignment", "simulationResult", "topologies",
          "preemptWorkloadSlice")


def _runnable() -> list[Any]:
    return [pytest.param(name, case, id=name) for name, case in sorted(TABLE["cases"].items())
            if name not in LEFT_OUT and left_out_reason(case, FIELDS) is None]


def left_out() -> dict[str, str]:
    out = {}
    for name, case in sorted(TABLE["cases"].items()):
        reason = LEFT_OUT.get(name) or left_out_reason(case, FIELDS)
        if reason is not None:
            out[f"flavorassigner_test.go TestAssignFlavors/{name}"] = reason
    return out


def _usage(raw: dict[str, Any] | None) -> dict[tuple[str, str], int]:
    out = {}
    for key, value in (raw or {}).items():
        flavor, _, resource = key.partition("/")
        out[(flavor, resource)] = int(value)
    return out


def run(case: dict[str, Any]) -> Assignment:
    return assigner_for(case).assign()


def assigner_for(case: dict[str, Any]) -> FlavorAssigner:
    f = case["fields"]
    h = Harness(gates=f.get("featureGates"))
    for topology in f.get("topologies") or []:
        h.add(topology)
    for flavor in TABLE["fixtures"]["resourceFlavors"].values():
        h.add(flavor)
    cq_obj = f["clusterQueue"]
    h.add(cq_obj)
    if f.get("secondaryClusterQueue"):
        h.add(f["secondaryClusterQueue"])
    cohort = (cq_obj.get("spec") or {}).get("cohortName")
    if cohort:
        h.add({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort", "metadata": {"name": cohort}, "spec": {}})
    engine = h.engine
    cq = engine.cache.cluster_queues[cq_obj["metadata"]["name"]]
    if f.get("clusterQueueUsage"):
        add_usage_map(cq.node, _usage(f["clusterQueueUsage"]))
    if f.get("secondaryClusterQueue"):
        second = engine.cache.cluster_queues[f["secondaryClusterQueue"]["metadata"]["name"]]
        add_usage_map(second.node, _usage(f.get("secondaryClusterQueueUsage")))
    obj = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload", "metadata": {"name": "", "namespace": ""},
           "spec": {"podSets": f["wlPods"]}, "status": {}}
    if f.get("wlReclaimablePods"):
        obj["status"]["reclaimablePods"] = f["wlReclaimablePods"]
    info = WorkloadInfo(obj)
    results = f.get("simulationResult") or {}

    def oracle(_info: WorkloadInfo, fr: tuple[str, str], _quantity: int) -> tuple[int, int]:
        found = results.get(f"{fr[0]}/{fr[1]}")
        if found is None:
            return POSSIBLE_PREEMPT, 0
        return POSSIBILITIES[found.get("_0", "NoCandidates")], int(found.get("_1", 0))

    return FlavorAssigner(info, cq, engine.cache.flavors, oracle, fair_sharing=bool(f.get("enableFairSharing")),
                          tas=engine.tas_assigner(cq))


def _want_podset(want: dict[str, Any]) -> dict[str, Any]:
    flavors = {r: (fa.get("Name"), fa.get("Mode", "NoFit"), fa.get("TriedFlavorIdx", 0))
               for r, fa in (want.get("Flavors") or {}).items()}
    status = want.get("Status") or {}
    return {
        "name": want.get("Name"),
        "flavors": flavors,
        "reasons": sorted(status.get("reasons") or []),
        "requests": {r: units(r, q) for r, q in (want.get("Requests") or {}).items()},
        "count": want.get("Count", 0),
    }


def _got_podset(got: Any) -> dict[str, Any]:
    return {
        "name": got.name,
        "flavors": {r: (fa.name, MODE_NAMES[fa.mode], fa.tried_flavor_idx) for r, fa in got.flavors.items()},
        "reasons": sorted(got.status.reasons),
        "requests": dict(got.requests),
        "count": got.count,
    }


def _attempt(a: Any) -> dict[str, Any]:
    if isinstance(a, dict):
        return {"flavor": a.get("Flavor"), "mode": a.get("Mode", "NoFit"), "borrow": a.get("Borrow", 0),
                "possibility": a.get("PreemptionPossibility"), "reasons": list(a.get("Reasons") or []),
                "noFitReason": a.get("NoFitReason", "")}
    return {"flavor": a.flavor, "mode": MODE_NAMES[a.mode], "borrow": a.borrow,
            "possibility": POSSIBILITY_NAMES.get(a.possibility) if a.possibility is not None else None,
            "reasons": list(a.reasons), "noFitReason": a.no_fit_reason}


def check_considered(want_podsets: list[dict[str, Any]], got: Assignment) -> None:
    """``flexAssertConsidered``: with a Fit, every attempt reported must be wanted (a wanted "does not
    provide resource" NoFit may have become a Fit); without one, every wanted attempt must be there."""
    got_by_name = {p.name: p for p in got.podsets}
    for want in want_podsets:
        wanted = [_attempt(a) for a in want.get("FlavorAssignmentAttempts") or []]
        if not wanted:
            continue
        got_ps = got_by_name[want.get("Name")]
        got_attempts = {a.flavor: _attempt(a) for a in got_ps.attempts}
        want_by_flavor = {a["flavor"]: a for a in wanted}
        if any(a["mode"] == "Fit" for a in got_attempts.values()):
            for flavor, attempt in got_attempts.items():
                assert flavor in want_by_flavor, f"unexpected attempt {attempt}"
                expected = want_by_flavor[flavor]
                if attempt["mode"] == "Fit" and expected["mode"] == "NoFit" and expected["reasons"] and all(
                        "does not provide resource" in r for r in expected["reasons"]):
                    continue
                assert attempt == expected
        else:
            for flavor, expected in want_by_flavor.items():
                assert got_attempts.get(flavor) == expected


@pytest.mark.parametrize(("name", "case"), _runnable())
def test_assign_flavors(name: str, case: dict[str, Any]) -> None:
    check_assignment(case, run(case))


@pytest.mark.parametrize(("name", "case"), _runnable())
def test_assign_flavors_again_with_the_flavor_checks_remembered(name: str, case: dict[str, Any]) -> None:
    """The same workload and ClusterQueue assigned again answer the flavor checks from the memo
    (``flavors._CHECK_MEMO``): the assignment is the table's all the same."""
    assigner = assigner_for(case)
    assigner.assign()
    check_assignment(case, assigner.assign())


def check_assignment(case: dict[str, Any], got: Assignment) -> None:
    f = case["fields"]
    assert MODE_NAMES[got.representative_mode()] == f.get("wantRepMode", "NoFit")
    want = f["wantAssignment"]
    want_podsets = want.get("PodSets") or []
    assert [_got_podset(p) for p in got.podsets] == [_want_podset(p) for p in want_podsets]
    assert got.borrowing == want.get("Borrowing", 0)
    assigned = ((want.get("Usage") or {}).get("Quota") or {}).get("Assigned") or {}
    assert {k: v for k, v in got.usage.items() if v} == {k: v for k, v in _usage(assigned).items() if v}
    assert got.no_fit_reason == want.get("NoFitReason", "")
    check_considered(want_podsets, got)


def test_every_entry_is_run_or_listed() -> None:
    assert len(TABLE["cases"]) == len(_runnable()) + len(left_out())
