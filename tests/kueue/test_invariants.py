"""Kueue's invariants (:mod:`jobsetctl.fakecluster.invariants_kueue`) on real runs, and properties of the
engine over generated clusters (hypothesis): every run keeps the books balanced, is deterministic, and
admits every workload that fits its ClusterQueue's reach once the others are done."""

from __future__ import annotations

import copy
import io
import os
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobsetctl.fakecluster.apiserver import APIServer, WatchEvent, WatchType
from jobsetctl.fakecluster.clock import VirtualClock
from jobsetctl.fakecluster.invariants_jobs import InvariantViolation
from jobsetctl.fakecluster.invariants_kueue import KueueBooks
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import DEFAULT_KUBE_VERSION
from jobsetctl.loader.yamlload import load_documents
from jobsetctl.simulate.command import OutputOptions, execute
from jobsetctl.simulate.runner import SimulateOptions
from tests.helpers import SAMPLES
from tests.simulate.harness import load, run_json

K = "kueue.x-k8s.io/v1beta2"

# The YAML loader raises the recursion limit on first use; do it before hypothesis runs, which otherwise
# warns that it cannot restore the limit.
load_documents("a: 1\n", "warm-up.yaml")


def test_the_kueue_sample_runs_with_the_invariants_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JOBSETCTL_CHECK_INVARIANTS", "1")
    outcome = execute(SimulateOptions([str(SAMPLES / "scenarios" / "kueue.yaml")]), OutputOptions("json"), io.StringIO())
    assert outcome.result is not None and outcome.result.invariant_checks


def _api() -> APIServer:
    clock = VirtualClock()
    return APIServer(clock, DEFAULT_KUBE_VERSION, parse_feature_gates({}, DEFAULT_KUBE_VERSION))


def _cq(name: str, cpu: str, borrowing: str | None = None, cohort: str | None = None) -> dict[str, Any]:
    resource: dict[str, Any] = {"name": "cpu", "nominalQuota": cpu}
    if borrowing is not None:
        resource["borrowingLimit"] = borrowing
    spec: dict[str, Any] = {"namespaceSelector": {}, "resourceGroups": [
        {"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [resource]}]}]}
    if cohort:
        spec["cohortName"] = cohort
    return {"apiVersion": K, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def _reserved(name: str, cq: str, per_pod: str, count: int, usage: str, *, admitted: bool = True) -> dict[str, Any]:
    conditions = [{"type": "QuotaReserved", "status": "True"}]
    if admitted:
        conditions.append({"type": "Admitted", "status": "True"})
    return {"apiVersion": K, "kind": "Workload", "metadata": {"name": name, "namespace": "ns"},
            "spec": {"podSets": [{"name": "main", "count": count, "template": {"spec": {"containers": [
                {"name": "c", "resources": {"requests": {"cpu": per_pod}}}]}}}]},
            "status": {"conditions": conditions, "admission": {"clusterQueue": cq, "podSetAssignments": [
                {"name": "main", "count": count, "flavors": {"cpu": "f"}, "resourceUsage": {"cpu": usage}}]}}}


def _feed(books: KueueBooks, api: APIServer, obj: dict[str, Any]) -> None:
    api.create(copy.deepcopy(obj), skip_admission=True)
    md = obj["metadata"]
    key = ("kueue.x-k8s.io", obj["kind"], md.get("namespace", ""), md["name"])
    books.on_event(WatchEvent(WatchType.ADDED, key, obj))


def _flavor(name: str = "f") -> dict[str, Any]:
    return {"apiVersion": K, "kind": "ResourceFlavor", "metadata": {"name": name}}


def test_usage_must_be_count_times_requests() -> None:
    api = _api()
    books = KueueBooks(api)
    _feed(books, api, _flavor())
    _feed(books, api, _cq("cq", "10"))
    _feed(books, api, _reserved("ok", "cq", "2", 3, "6"))
    with pytest.raises(InvariantViolation, match=r"resourceUsage cpu 5 is not count x requests \(6\)"):
        _feed(books, api, _reserved("bad", "cq", "2", 3, "5"))


def test_assigned_flavors_exist_and_belong_to_the_cluster_queue() -> None:
    api = _api()
    books = KueueBooks(api)
    _feed(books, api, _cq("cq", "10"))
    with pytest.raises(InvariantViolation, match="ResourceFlavor f, which does not exist"):
        _feed(books, api, _reserved("w1", "cq", "1", 1, "1"))
    _feed(books, api, _flavor())
    _feed(books, api, _flavor("g"))
    wl = _reserved("w2", "cq", "1", 1, "1")
    wl["status"]["admission"]["podSetAssignments"][0]["flavors"] = {"cpu": "g"}
    with pytest.raises(InvariantViolation, match="flavor g for cpu, which its ClusterQueue does not list"):
        _feed(books, api, wl)


def test_in_cluster_queue_preemption_only_of_lower_priority() -> None:
    api = _api()
    books = KueueBooks(api)
    _feed(books, api, _flavor())
    _feed(books, api, _cq("cq", "10"))
    preemptor = _reserved("low", "cq", "1", 1, "1", admitted=False)
    preemptor["status"] = {}
    preemptor["spec"]["priority"] = 10
    _feed(books, api, preemptor)
    uid = api.get("kueue.x-k8s.io", "Workload", "ns", "low")["metadata"]["uid"]
    victim = _reserved("high", "cq", "1", 1, "1")
    victim["spec"]["priority"] = 100
    victim["status"]["conditions"].append({
        "type": "Preempted", "status": "True", "reason": "InClusterQueue", "lastTransitionTime": "t",
        "message": f"Preempted to accommodate a workload (UID: {uid}, JobUID: UNKNOWN) due to prioritization "
                   "in the ClusterQueue"})
    with pytest.raises(InvariantViolation, match=r"high \(priority 100\) preempted in its ClusterQueue by a workload "
                                                 r"of priority 10"):
        _feed(books, api, victim)


def test_no_cluster_queue_over_nominal_plus_borrowing() -> None:
    api = _api()
    books = KueueBooks(api)
    _feed(books, api, _flavor())
    _feed(books, api, _cq("a", "4", borrowing="2", cohort="c"))
    _feed(books, api, _cq("b", "10", cohort="c"))
    _feed(books, api, _reserved("w1", "a", "3", 2, "6"))
    with pytest.raises(InvariantViolation, match="over its nominal quota plus borrowing limit"):
        _feed(books, api, _reserved("w2", "a", "1", 1, "1"))


def test_no_cohort_tree_over_its_quota() -> None:
    api = _api()
    books = KueueBooks(api)
    _feed(books, api, _flavor())
    _feed(books, api, _cq("a", "4", cohort="c"))
    _feed(books, api, _cq("b", "4", cohort="c"))
    _feed(books, api, _reserved("w1", "a", "6", 1, "6"))
    with pytest.raises(InvariantViolation, match="the Cohort tree of c uses 9"):
        _feed(books, api, _reserved("w2", "b", "3", 1, "3"))


def test_admitted_needs_quota() -> None:
    api = _api()
    books = KueueBooks(api)
    wl = _reserved("w", "cq", "1", 1, "1")
    wl["status"]["conditions"] = [{"type": "Admitted", "status": "True"}]
    with pytest.raises(InvariantViolation, match="Admitted without QuotaReserved"):
        _feed(books, api, wl)


# ---- properties over generated clusters -----------------------------------------------------------------

@st.composite
def clusters(draw: st.DrawFn) -> dict[str, Any]:
    queues = draw(st.integers(1, 3))
    cqs = []
    for i in range(queues):
        nominal = draw(st.integers(0, 8))
        borrowing = draw(st.one_of(st.none(), st.integers(0, 6)))
        preemption = {"withinClusterQueue": draw(st.sampled_from(["Never", "LowerPriority"])),
                      "reclaimWithinCohort": draw(st.sampled_from(["Never", "Any", "LowerPriority"]))}
        resource: dict[str, Any] = {"name": "cpu", "nominalQuota": str(nominal)}
        if borrowing is not None:
            resource["borrowingLimit"] = str(borrowing)
        cqs.append({"apiVersion": K, "kind": "ClusterQueue", "metadata": {"name": f"cq{i}"}, "spec": {
            "cohortName": "org", "namespaceSelector": {}, "preemption": preemption,
            "queueingStrategy": draw(st.sampled_from(["BestEffortFIFO", "StrictFIFO"])),
            "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                {"name": "f", "resources": [resource]}]}]}})
    workloads = []
    for j in range(draw(st.integers(1, 8))):
        workloads.append({
            "at": draw(st.integers(0, 120)), "queue": draw(st.integers(0, queues - 1)),
            "cpu": draw(st.integers(1, 6)), "priority": draw(st.integers(0, 2)) * 100,
            "seconds": draw(st.integers(1, 300)), "name": f"w{j}"})
    return {"cqs": cqs, "workloads": workloads}


def _scenario(cluster: dict[str, Any]) -> dict[str, Any]:
    first: list[dict[str, Any]] = [{"apiVersion": K, "kind": "ResourceFlavor", "metadata": {"name": "f"}}]
    first += cluster["cqs"]
    first += [{"apiVersion": K, "kind": "LocalQueue", "metadata": {"name": f"lq{i}", "namespace": "default"},
               "spec": {"clusterQueue": f"cq{i}"}} for i in range(len(cluster["cqs"]))]
    submit: list[dict[str, Any]] = [{"at": "0s", "objects": first}]
    for w in cluster["workloads"]:
        submit.append({"at": f"{w['at']}s", "objects": [{
            "apiVersion": K, "kind": "Workload",
            "metadata": {"name": w["name"], "namespace": "default",
                         "annotations": {"jobsetctl.dev/duration": f"{w['seconds']}s"}},
            "spec": {"queueName": f"lq{w['queue']}", "priority": w["priority"], "podSets": [
                {"name": "main", "count": 1, "template": {"spec": {"containers": [
                    {"name": "c", "resources": {"requests": {"cpu": str(w["cpu"])}}}]}}}]}}]})
    return {"apiVersion": "jobsetctl.dev/v1alpha1", "kind": "Scenario", "metadata": {"name": "generated"},
            "spec": {"submit": submit}}


def _reach(cluster: dict[str, Any], queue: int) -> int:
    """The most a ClusterQueue can hold: its nominal plus what it may borrow from the Cohort."""
    total = sum(int(c["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"]) for c in cluster["cqs"])
    resource = cluster["cqs"][queue]["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]
    own = int(resource["nominalQuota"])
    if "borrowingLimit" in resource:
        return min(total, own + int(resource["borrowingLimit"]))
    return total


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(clusters())
def test_generated_clusters_keep_the_books(tmp_path_factory: pytest.TempPathFactory, cluster: dict[str, Any]) -> None:
    os.environ["JOBSETCTL_CHECK_INVARIANTS"] = "1"
    try:
        path = tmp_path_factory.mktemp("gen") / "scenario.yaml"
        path.write_text(yaml.safe_dump(_scenario(cluster)))
        first, outcome = run_json(path)
        second, _ = run_json(path)
    finally:
        os.environ.pop("JOBSETCTL_CHECK_INVARIANTS", None)
    assert outcome.report is None
    assert first == second  # deterministic
    document = load(first)
    finished = {e["name"] for e in document["events"] if e.get("group") == "kueue.x-k8s.io" and e["event"] == "Finished"}
    for w in cluster["workloads"]:
        if w["cpu"] > _reach(cluster, w["queue"]):
            assert w["name"] not in finished
        elif not _blocked_by_strict_fifo(cluster, w):
            assert w["name"] in finished, (w, document["summary"].get("stopReason"))


def _blocked_by_strict_fifo(cluster: dict[str, Any], workload: dict[str, Any]) -> bool:
    """StrictFIFO: a head that never fits stays the head (``RequeueIfNotPresent`` is immediate), so every
    workload ordered after it in that ClusterQueue (lower priority, or equal priority and not older) waits
    for ever. Equal creation times have no defined order: such a workload may go either way."""
    queue = workload["queue"]
    if cluster["cqs"][queue]["spec"]["queueingStrategy"] != "StrictFIFO":
        return False
    return any(other["queue"] == queue and other["cpu"] > _reach(cluster, queue)
               and (other["priority"] > workload["priority"]
                    or (other["priority"] == workload["priority"] and other["at"] <= workload["at"]))
               for other in cluster["workloads"])


def _two_cpu(name: str, priority: int) -> dict[str, Any]:
    return {"apiVersion": K, "kind": "Workload",
            "metadata": {"name": name, "namespace": "default", "annotations": {"jobsetctl.dev/duration": "1s"}},
            "spec": {"queueName": "lq", "priority": priority, "podSets": [{"name": "main", "count": 1, "template": {
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]}}}]}}


def test_a_workload_finishing_as_a_higher_priority_one_arrives_is_not_preempted(tmp_path: Any) -> None:
    """Rule 5. The low-priority workload finishes at the instant the high-priority one is created: the cache
    forgets it as the Finished update is seen (workload_controller.go's Update handler), so the cycle that
    admits the newcomer finds the quota free instead of preempting a finished workload (it did, and the
    checker named it: 172 of the 262 evictions of Kueue's TAS performance configuration, 15 of 75 in baseline)."""
    first = [{"apiVersion": K, "kind": "ResourceFlavor", "metadata": {"name": "f"}},
             {"apiVersion": K, "kind": "ClusterQueue", "metadata": {"name": "cq"}, "spec": {
                 "namespaceSelector": {}, "preemption": {"withinClusterQueue": "LowerPriority"},
                 "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                     {"name": "f", "resources": [{"name": "cpu", "nominalQuota": "2"}]}]}]}},
             {"apiVersion": K, "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": "default"},
              "spec": {"clusterQueue": "cq"}}, _two_cpu("low", 0)]
    scenario = {"apiVersion": "jobsetctl.dev/v1alpha1", "kind": "Scenario", "metadata": {"name": "finish"},
                "spec": {"submit": [{"at": "0s", "objects": first}, {"at": "1s", "objects": [_two_cpu("high", 100)]}]}}
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(scenario))
    text, outcome = run_json(path)
    assert outcome.report is None
    assert [(e["time"], e["name"], e["event"]) for e in load(text)["events"] if e.get("group") == "kueue.x-k8s.io"] == [
        (0, "low", "Created"), (0, "low", "QuotaReserved"), (0, "low", "Admitted"),
        (1, "high", "Created"), (1, "low", "Finished"), (1, "high", "QuotaReserved"), (1, "high", "Admitted"),
        (2, "high", "Finished")]
