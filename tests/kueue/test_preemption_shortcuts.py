"""The classic preemption shortcuts (:class:`jobsetctl.kueue.engine.preemption.Preemptor`) change no answer.

With ``EngineSettings.preemption_shortcuts`` off (tests only), every target search runs in full, as
upstream's ``GetTargets`` does: no answer of the nomination phase is reused, a ClusterQueue's own
workloads are all classified, and the candidates of other ClusterQueues are collected even where the
only attempt (borrowWithinCohort Never, preemptor at or over nominal) skips them, and the victims an
overlapping entry's search sets aside (``simulate_removal``) leave one by one, not a ClusterQueue's sum at
once. On generated Cohorts
of ClusterQueues with admitted workloads and pending ones, a few scheduling cycles must leave the same
admissions, evictions, conditions and preemption records either way.

Where TAS flavors are in play, the shortcuts also leave the TAS books alone in a search without a topology check
(the flavor assigner's oracle: the candidates leave the quota tree only) and in a fit check with victims whose
quota half, asked on paper first, does not fit (``Scheduler._fits``): whole generated TAS runs are compared.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobsetctl.kueue.engine.settings import EngineSettings
from tests.kueue.test_engine_shortcuts import RECLAIM_SETUP, run_generated
from tests.kueue.test_engine_shortcuts import setups as cluster_setups
from tests.kueue.upstream.harness import Harness, norm_status

K = "kueue.x-k8s.io/v1beta2"
POLICIES_WITHIN = ["Never", "LowerPriority", "LowerOrNewerEqualPriority"]
POLICIES_RECLAIM = ["Never", "Any", "LowerPriority", "LowerOrNewerEqualPriority"]


@st.composite
def setups(draw: st.DrawFn, admitted_counts: tuple[int, int] = (0, 8),
           pending_counts: tuple[int, int] = (1, 4)) -> dict[str, Any]:
    queues = draw(st.integers(1, 4))
    cqs = []
    for i in range(queues):
        nominal = draw(st.integers(0, 8))
        resource: dict[str, Any] = {"name": "cpu", "nominalQuota": str(nominal)}
        borrowing = draw(st.one_of(st.none(), st.integers(0, 6)))
        if borrowing is not None:
            resource["borrowingLimit"] = str(borrowing)
        lending = draw(st.one_of(st.none(), st.integers(0, nominal)))
        if lending is not None:
            resource["lendingLimit"] = str(lending)
        borrow_within: dict[str, Any] = {"policy": draw(st.sampled_from(["Never", "LowerPriority"]))}
        if borrow_within["policy"] != "Never" and draw(st.booleans()):
            borrow_within["maxPriorityThreshold"] = draw(st.integers(0, 2)) * 100
        preemption = {"withinClusterQueue": draw(st.sampled_from(POLICIES_WITHIN)),
                      "reclaimWithinCohort": draw(st.sampled_from(POLICIES_RECLAIM)),
                      "borrowWithinCohort": borrow_within}
        spec: dict[str, Any] = {"namespaceSelector": {}, "preemption": preemption, "resourceGroups": [
            {"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [resource]}]}]}
        if i == 0 or draw(st.integers(0, 3)):  # now and then a ClusterQueue outside the Cohort
            spec["cohortName"] = "org"
        cqs.append({"apiVersion": K, "kind": "ClusterQueue", "metadata": {"name": f"cq{i}"}, "spec": spec})
    admitted = [{"cq": draw(st.integers(0, queues - 1)), "cpu": draw(st.integers(1, 4)),
                 "priority": draw(st.integers(0, 2)) * 100, "at": draw(st.integers(0, 50))}
                for _ in range(draw(st.integers(*admitted_counts)))]
    pending = [{"cq": draw(st.integers(0, queues - 1)), "cpu": draw(st.integers(1, 6)),
                "priority": draw(st.integers(0, 2)) * 100, "at": draw(st.integers(0, 50))}
               for _ in range(draw(st.integers(*pending_counts)))]
    return {"cqs": cqs, "admitted": admitted, "pending": pending}


def _workload(name: str, w: dict[str, Any], admitted: bool) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": K, "kind": "Workload",
        "metadata": {"name": name, "namespace": "default", "uid": name, "creationTimestamp": {"$time": -100 + w["at"]}},
        "spec": {"queueName": f"lq{w['cq']}", "priority": w["priority"], "podSets": [
            {"name": "main", "count": 1, "template": {"spec": {"containers": [
                {"name": "c", "resources": {"requests": {"cpu": str(w["cpu"])}}}]}}}]}}
    if admitted:
        at = {"$time": -50 + w["at"]}
        obj["status"] = {
            "admission": {"clusterQueue": f"cq{w['cq']}", "podSetAssignments": [
                {"name": "main", "flavors": {"cpu": "f"}, "resourceUsage": {"cpu": str(w["cpu"])}, "count": 1}]},
            "conditions": [
                {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "",
                 "lastTransitionTime": at},
                {"type": "Admitted", "status": "True", "reason": "Admitted", "message": "",
                 "lastTransitionTime": at}]}
    return obj


def _run(setup: dict[str, Any], shortcuts: bool) -> dict[str, Any]:
    h = Harness(preemption_shortcuts=shortcuts)
    h.add({"apiVersion": K, "kind": "ResourceFlavor", "metadata": {"name": "f"}})
    for cq in setup["cqs"]:
        h.add(cq)
    for i in range(len(setup["cqs"])):
        h.add({"apiVersion": K, "kind": "LocalQueue", "metadata": {"name": f"lq{i}", "namespace": "default"},
               "spec": {"clusterQueue": f"cq{i}"}})
    for j, w in enumerate(setup["admitted"]):
        h.add(_workload(f"a{j}", w, True))
    for j, w in enumerate(setup["pending"]):
        h.add(_workload(f"p{j}", w, False))
    for _ in range(3):
        h.schedule()
    return {
        "assignments": h.assignments(),
        "workloads": {obj["metadata"]["name"]: norm_status(h, obj) for obj in h.workloads()},
        "preemptions": [(p.victim, p.preemptor, p.reason) for p in h.engine.history.preemptions],
        # Every node of the quota tree (Cohorts too), with the order of its entries.
        "usage": {f"{name}/{node.name}": list(node.usage.items())
                  for name, state in h.engine.cache.cluster_queues.items()
                  for node in (state.node, *state.node.ancestors())},
    }


@settings(max_examples=150, deadline=None)
@given(setups())
def test_the_preemption_shortcuts_change_no_outcome(setup: dict[str, Any]) -> None:
    assert _run(setup, True) == _run(setup, False)


@settings(max_examples=150, deadline=None)
@given(setups(admitted_counts=(6, 14), pending_counts=(3, 8)))
def test_the_shortcuts_change_no_outcome_in_busy_cycles(setup: dict[str, Any]) -> None:
    """More admitted and pending workloads: entries of one cycle whose targets overlap, so that the later
    ones search again with the earlier ones' victims set aside (``simulate_removal``)."""
    assert _run(setup, True) == _run(setup, False)


def _run_cluster(setup: dict[str, Any], shortcuts: bool) -> tuple[list[Any], list[Any], list[str]]:
    """A whole simulated run of one of :mod:`tests.kueue.test_engine_shortcuts`'s generated clusters (a TAS
    flavor over racks, or a plain one; ClusterQueues of one Cohort that preempt), with the preemption shortcuts
    on or off: the events, kube events and objects it leaves."""
    return run_generated(setup, EngineSettings(preemption_shortcuts=shortcuts))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster_setups())
def test_quota_only_searches_leave_the_tas_books_alone_and_change_nothing(setup: dict[str, Any]) -> None:
    """With the shortcuts on, a search without a topology check (the flavor assigner's oracle, its borrowing
    height after the targets leave) moves the candidates' quota usage only, not their TAS usage, and puts
    targets back in runs even when they hold TAS usage (:meth:`Preemptor.fill_back`): whole runs with TAS
    flavors, preemptions within ClusterQueues and reclaims across the Cohort, the same either way."""
    assert _run_cluster(setup, True) == _run_cluster(setup, False)


def test_a_tas_run_with_preemptions_is_the_same_either_way() -> None:
    """A ClusterQueue borrowing the Cohort's quota with long low-priority workloads on a TAS flavor, then
    another one reclaiming its nominal quota: the oracle finds targets (their TAS usage stays), two are
    preempted."""
    setup = RECLAIM_SETUP
    fast = _run_cluster(setup, True)
    kinds = [e["event"] for e in fast[0] if e.get("kind") == "Workload"]
    assert kinds.count("Preempted") == 2
    assert fast == _run_cluster(setup, False)
