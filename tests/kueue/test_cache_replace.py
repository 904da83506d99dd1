"""The cache's re-add shortcut (``Cache._replace``: a new version of a workload counted already, with the same
usage, swaps in without taking its usage out of the Cohort tree and putting it back) against the delete and
add it stands for, on generated sequences of adds, re-adds and deletes over Cohorts with lending limits and
borrowing: the same usage at every node, the same entries in the same order, generations, not-ready sets
and quota spans."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from jobsetctl.kueue.engine.cache import Cache
from jobsetctl.kueue.engine.history import History
from jobsetctl.kueue.engine.workload import WorkloadInfo

K = "kueue.x-k8s.io/v1beta2"


def _cq(name: str, cohort: str, nominal: int, lending: int | None) -> dict[str, Any]:
    resource: dict[str, Any] = {"name": "cpu", "nominalQuota": str(nominal)}
    if lending is not None:
        resource["lendingLimit"] = str(lending)
    return {"apiVersion": K, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": {
        "cohortName": cohort, "namespaceSelector": {}, "resourceGroups": [
            {"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [resource]}]}]}}


def _workload(name: str, cq: str, count: int, cpu: int, ready: bool) -> dict[str, Any]:
    conditions = [{"type": "QuotaReserved", "status": "True"}, {"type": "Admitted", "status": "True"}]
    if ready:
        conditions.append({"type": "PodsReady", "status": "True"})
    return {"apiVersion": K, "kind": "Workload", "metadata": {"name": name, "namespace": "ns"},
            "spec": {"podSets": [{"name": "main", "count": count, "template": {"spec": {"containers": [
                {"name": "c", "resources": {"requests": {"cpu": str(cpu)}}}]}}}]},
            "status": {"conditions": conditions, "admission": {"clusterQueue": cq, "podSetAssignments": [
                {"name": "main", "count": count, "flavors": {"cpu": "f"}, "resourceUsage": {"cpu": str(count * cpu)}}]}}}


def _cache(tracking: bool, shortcut: bool, queues: list[dict[str, Any]]) -> Cache:
    cache = Cache(pods_ready_tracking=tracking)
    cache.history = History()
    cache.replace_shortcut = shortcut
    cache.add_or_update_flavor({"apiVersion": K, "kind": "ResourceFlavor", "metadata": {"name": "f"}})
    for cq in queues:
        cache.add_or_update_cluster_queue(cq)
    return cache


def _books(cache: Cache) -> Any:
    nodes = {name: list(node.usage.items()) for name, node in cache.cohorts.items()}
    states = {name: (list(state.node.usage.items()), list(state.workloads.items()), state.generation,
                     sorted(state.not_ready)) for name, state in cache.cluster_queues.items()}
    spans = [(s.key, s.cluster_queue, s.start, s.usage, s.flavors, s.end) for s in cache.history.spans] \
        if cache.history is not None else []
    return nodes, states, list(cache._assumed.items()), spans


operations = st.lists(st.tuples(st.sampled_from(["add", "readd", "readd", "same", "delete"]), st.integers(0, 5),
                                st.integers(0, 3), st.integers(1, 3), st.integers(1, 6), st.booleans()),
                      min_size=1, max_size=40)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 8), st.one_of(st.none(), st.integers(0, 8))), min_size=2, max_size=4),
       st.booleans(), operations)
def test_the_re_add_shortcut_leaves_the_books_as_delete_and_add_would(
        quotas: list[tuple[int, int | None]], tracking: bool, ops: list[tuple[str, int, int, int, int, bool]]) -> None:
    queues = [_cq(f"cq-{i}", "cohort-a" if i % 2 else "cohort-b", nominal, lending)
              for i, (nominal, lending) in enumerate(quotas)]
    fast, full = _cache(tracking, True, queues), _cache(tracking, False, queues)
    clock = [0.0]
    fast.now = full.now = lambda: clock[0]
    current: dict[str, dict[str, Any]] = {}
    infos: dict[str, WorkloadInfo] = {}
    for step, (op, wl, cq_index, count, cpu, ready) in enumerate(ops):
        clock[0] = float(step)
        name = f"wl-{wl}"
        key = f"ns/{name}"
        if op == "delete":
            assert (fast.delete_workload(key) is None) == (full.delete_workload(key) is None)
            current.pop(key, None)
        elif op == "same" and key in infos:
            # The Info added last, again (the engine re-adds the Info it keeps for a version it observes again).
            assert fast.add_or_update_workload(infos[key]) == full.add_or_update_workload(infos[key])
        else:
            obj = current.get(key) if op == "readd" else None
            if obj is None:
                obj = _workload(name, f"cq-{cq_index % len(queues)}", count, cpu, ready)
            else:
                # A new version: the same usage, or another one when the draw says so.
                obj = {**obj, "status": {**obj["status"]}} if ready else \
                    _workload(name, obj["status"]["admission"]["clusterQueue"], count, cpu, not ready)
            current[key] = obj
            info = infos[key] = WorkloadInfo(obj)
            assert fast.add_or_update_workload(info) == full.add_or_update_workload(info)
        assert _books(fast) == _books(full)
