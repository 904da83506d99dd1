"""The TAS shortcuts (``EngineSettings.tas_shortcuts``) change no outcome.

With the switch off (tests only), the cache takes every new version of an admitted TAS workload out of
the TAS books and puts it back (``Cache._delete`` then the add, as upstream's ``AddOrUpdateWorkload``
does), the TAS side of the flavor assigner computes a workload's podsets to place at every attempt,
every placement on the cluster as it is runs (none is reused while the TAS usage has not moved), the
cached counts are combined again from all children of a domain whose leaves moved, and phase 2 sorts
and scans every level (none is read from the domains kept in order, see test_tas_order.py).
On generated clusters (racks of small nodes in one or two blocks, one TAS flavor, ClusterQueues of one
Cohort with preemption) and generated streams of workloads (required / preferred / sliced rack requests,
unconstrained and implied ones, sliced block requests, priorities, durations),
a whole run must leave the same Workloads, the same quota spans and preemptions, the same events and
the same TAS books at every step, either way.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobsetctl.fakecluster.apiserver import APIServer, WatchEvent, WatchType
from jobsetctl.fakecluster.clock import VirtualClock
from jobsetctl.fakecluster.cluster import ClusterOptions, FakeCluster
from jobsetctl.fakecluster.events import Recorder
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.jsontree import copy_tree
from jobsetctl.kube.versions import DEFAULT_KUBE_VERSION
from jobsetctl.kueue.engine.core import Engine, _refreshed
from jobsetctl.kueue.engine.settings import EngineSettings, from_kueue_configuration
from jobsetctl.kueue.engine.tas_assigner import TASAssigner
from jobsetctl.kueue.engine.tas_counts import StateOverlay
from jobsetctl.kueue.engine.tas_encoding import TopologyAssignment, to_api
from jobsetctl.kueue.engine.tas_tree import DomainState
from jobsetctl.kueue.engine.workload import WorkloadInfo
from jobsetctl.kueue.features import DEFAULT_GATES
from tests.kueue.harness import V137, cohort_cluster_queue, kueue_config

K = "kueue.x-k8s.io/v1beta2"
RACK = "cloud.provider.com/topology-rack"
BLOCK = "cloud.provider.com/topology-block"
HOST = "kubernetes.io/hostname"


@st.composite
def setups(draw: st.DrawFn) -> dict[str, Any]:
    racks = draw(st.integers(1, 3))
    blocks = draw(st.integers(1, 2))
    nodes = draw(st.integers(1, 4))
    cpu = draw(st.sampled_from(["2", "4"]))
    queues = [{"nominal": draw(st.integers(1, 8)), "borrowing": draw(st.one_of(st.none(), st.integers(0, 8))),
               "within": draw(st.sampled_from(["Never", "LowerPriority"])),
               "reclaim": draw(st.sampled_from(["Never", "Any"]))} for _ in range(draw(st.integers(1, 3)))]
    workloads = []
    for _ in range(draw(st.integers(1, 14))):
        constraint = draw(st.sampled_from(["required", "preferred", "sliced", "implied", "unconstrained",
                                           "block"]))
        pods = draw(st.integers(1, 6))
        workloads.append({
            "queue": draw(st.integers(0, len(queues) - 1)), "pods": pods, "constraint": constraint,
            "slice": draw(st.sampled_from([d for d in (1, 2, 3) if pods % d == 0])),
            "cpu": draw(st.sampled_from(["500m", "1", "1500m"])), "priority": draw(st.integers(0, 2)) * 100,
            "at": draw(st.integers(0, 8)), "seconds": draw(st.integers(1, 6))})
    return {"racks": racks, "blocks": blocks, "nodes": nodes, "cpu": cpu, "queues": queues, "workloads": workloads}


def _objects(setup: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"apiVersion": K, "kind": "Topology", "metadata": {"name": "topo"},
         "spec": {"levels": [{"nodeLabel": BLOCK}, {"nodeLabel": RACK}, {"nodeLabel": HOST}]}},
        {"apiVersion": K, "kind": "ResourceFlavor", "metadata": {"name": "tas"},
         "spec": {"nodeLabels": {"group": "tas"}, "topologyName": "topo"}}]
    for i, q in enumerate(setup["queues"]):
        out.append(cohort_cluster_queue(f"cq{i}", "tas", q["nominal"], q["borrowing"], q["within"], q["reclaim"]))
        out.append({"apiVersion": K, "kind": "LocalQueue", "metadata": {"name": f"lq{i}", "namespace": "default"},
                    "spec": {"clusterQueue": f"cq{i}"}})
    return out


def _workload(index: int, w: dict[str, Any]) -> dict[str, Any]:
    podset: dict[str, Any] = {"name": "main", "count": w["pods"], "template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "c", "resources": {"requests": {"cpu": w["cpu"]}}}]}}}
    if w["constraint"] == "required":
        podset["topologyRequest"] = {"required": RACK}
    elif w["constraint"] == "preferred":
        podset["topologyRequest"] = {"preferred": RACK}
    elif w["constraint"] == "sliced":
        podset["topologyRequest"] = {"podSetSliceRequiredTopology": RACK, "podSetSliceSize": w["slice"]}
    elif w["constraint"] == "unconstrained":
        podset["topologyRequest"] = {"unconstrained": True}
    elif w["constraint"] == "block":
        podset["topologyRequest"] = {"required": BLOCK, "podSetSliceRequiredTopology": RACK, "podSetSliceSize": w["slice"]}
    return {"apiVersion": K, "kind": "Workload",
            "metadata": {"name": f"w{index}", "namespace": "default",
                         "annotations": {"jobsetctl.dev/duration": f"{w['seconds']}s"}},
            "spec": {"queueName": f"lq{w['queue']}", "priority": w["priority"], "podSets": [podset]}}


def _node(setup: dict[str, Any], rack: int, index: int) -> dict[str, Any]:
    name = f"node-r{rack}-n{index}"
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
        "group": "tas", BLOCK: f"b{rack % setup.get('blocks', 1)}", RACK: f"r{rack}", HOST: name}},
        "status": {"allocatable": {"cpu": setup["cpu"], "memory": "8Gi", "pods": "110"},
                   "capacity": {"cpu": setup["cpu"], "memory": "8Gi", "pods": "110"},
                   "conditions": [{"type": "Ready", "status": "True"}]}}


def _books(cluster: FakeCluster) -> Any:
    engine = cluster.components["kueue"].engine  # type: ignore[attr-defined]
    tas = engine.tas
    usage = {name: sorted((leaf, sorted((r, v) for r, v in requests.items() if v))
                          for leaf, requests in flavor.usage.items() if any(requests.values()))
             for name, flavor in tas.flavors.items()}
    held = {name: sorted(flavor.workload_usage) for name, flavor in tas.flavors.items()}
    cqs = {name: (sorted(state.workloads), sorted(state.node.usage.items()), state.generation)
           for name, state in engine.cache.cluster_queues.items()}
    return usage, held, cqs


def _run(setup: dict[str, Any], shortcuts: bool) -> dict[str, Any]:
    config = kueue_config()
    engine_settings = replace(from_kueue_configuration(config), tas_shortcuts=shortcuts)
    cluster = FakeCluster(ClusterOptions(V137, parse_feature_gates("", V137), simulate=True,
                                         extra={"kueue": engine_settings}, kueue=config))
    for rack in range(setup["racks"]):
        for index in range(setup["nodes"]):
            cluster.api.create(_node(setup, rack, index), skip_admission=True)
    for obj in _objects(setup):
        result = cluster.submit(obj)
        assert result.ok, result.error_text()
    books = []
    by_time: dict[int, list[dict[str, Any]]] = {}
    for index, w in enumerate(setup["workloads"]):
        by_time.setdefault(w["at"], []).append(_workload(index, w))
    for at in range(0, 40):
        for obj in by_time.get(at, []):
            result = cluster.submit(obj)
            assert result.ok, result.error_text()
        cluster.run(until=float(at))
        books.append(_books(cluster))
    engine = cluster.components["kueue"].engine  # type: ignore[attr-defined]
    history = engine.history
    return {
        "workloads": [copy_tree(o) for o in cluster.api.list("kueue.x-k8s.io", "Workload")],
        "spans": [(s.key, s.cluster_queue, s.start, s.usage, s.flavors, s.end) for s in history.spans],
        "preemptions": [(p.victim, p.preemptor, p.reason) for p in history.preemptions],
        "events": [(e.kind, e.name, e.type, e.reason, e.message) for e in cluster.recorder.kube_events],
        "books": books,
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setups())
def test_the_tas_shortcuts_change_no_outcome(setup: dict[str, Any]) -> None:
    fast, full = _run(setup, True), _run(setup, False)
    assert fast == full


def test_the_shortcuts_are_taken_on_a_contended_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above is not vacuous: on a run with contention the podsets' requests are reused
    (counted by a spy that calls through)."""
    setup = {"racks": 2, "nodes": 2, "cpu": "2", "queues": [
        {"nominal": 3, "borrowing": 2, "within": "LowerPriority", "reclaim": "Any"},
        {"nominal": 2, "borrowing": None, "within": "Never", "reclaim": "Any"}],
        "workloads": [{"queue": i % 2, "pods": 2 + i % 3, "constraint": ["required", "preferred", "sliced"][i % 3],
                       "slice": 1, "cpu": "500m", "priority": (i % 2) * 100, "at": i % 4, "seconds": 2 + i % 3}
                      for i in range(12)]}
    taken = {"requests": 0}
    requests_for = TASAssigner.requests_for_signature

    def counting_requests(self: Any, info: Any, cq: Any, assignment: Any, signature: Any, errors: Any) -> Any:
        before = self.manager.requests_memo.get(info.key)
        value = requests_for(self, info, cq, assignment, signature, errors)
        taken["requests"] += before is not None and before[5] is value
        return value

    with monkeypatch.context() as patched:
        patched.setattr(TASAssigner, "requests_for_signature", counting_requests)
        fast = _run(setup, True)
    assert taken["requests"] > 0
    assert fast == _run(setup, False)


# ---- the cache's TAS re-add shortcut, operation by operation ---------------------------------------------

NODES = [f"node-r{r}-n{n}" for r in range(2) for n in range(3)]


def _engine(shortcuts: bool, gates: dict[str, bool] | None = None) -> Any:
    clock = VirtualClock()
    api = APIServer(clock, DEFAULT_KUBE_VERSION, parse_feature_gates({}, DEFAULT_KUBE_VERSION))
    engine = Engine(api, clock, Recorder(clock), EngineSettings(gates={**DEFAULT_GATES.as_dict(), **(gates or {})},
                                                                tas_shortcuts=shortcuts))
    for name in NODES:
        node = _node({"cpu": "4"}, int(name[6]), int(name[-1]))
        list(engine.tas.keys_for(WatchEvent(WatchType.ADDED, ("", "Node", "", name), node)))
    for obj in _objects({"queues": [{"nominal": 100, "borrowing": None, "within": "Never", "reclaim": "Never"}] * 2}):
        md = obj["metadata"]
        assert engine.on_configuration(obj["kind"], obj, md.get("namespace", ""), md["name"]) or obj["kind"] == "LocalQueue"
    return engine


def _admitted(name: str, cq: str, count: int, cpu: int, nodes: list[int]) -> dict[str, Any]:
    """A Workload holding quota in ``cq``, its ``count`` pods spread round-robin over ``nodes``."""
    per_node: dict[str, int] = {}
    for i in range(count):
        host = NODES[nodes[i % len(nodes)]]
        per_node[host] = per_node.get(host, 0) + 1
    assignment = to_api(TopologyAssignment([HOST], [([h], c) for h, c in sorted(per_node.items())]))
    return {"apiVersion": K, "kind": "Workload", "metadata": {"name": name, "namespace": "default"},
            "spec": {"queueName": "lq0", "podSets": [{"name": "main", "count": count, "topologyRequest": {"required": RACK},
                                                      "template": {"spec": {"containers": [
                                                          {"name": "c", "resources": {"requests": {"cpu": str(cpu)}}}]}}}]},
            "status": {"conditions": [{"type": "QuotaReserved", "status": "True"}, {"type": "Admitted", "status": "True"}],
                       "admission": {"clusterQueue": cq, "podSetAssignments": [
                           {"name": "main", "count": count, "flavors": {"cpu": "tas"},
                            "resourceUsage": {"cpu": str(count * cpu)}, "topologyAssignment": assignment}]}}}


def _tas_books(engine: Any) -> Any:
    tas = engine.tas
    usage = {name: sorted((leaf, sorted((r, v) for r, v in requests.items() if v))
                          for leaf, requests in flavor.usage.items() if any(requests.values()))
             for name, flavor in tas.flavors.items()}
    held = {name: sorted(flavor.workload_usage.items()) for name, flavor in tas.flavors.items()}
    cqs = {name: (list(state.workloads), sorted(state.node.usage.items()), state.generation)
           for name, state in engine.cache.cluster_queues.items()}
    return usage, held, cqs


tas_operations = st.lists(st.tuples(
    st.sampled_from(["add", "same", "same", "status", "moved", "resized", "delete"]), st.integers(0, 3),
    st.integers(0, 1), st.integers(1, 4), st.lists(st.integers(0, len(NODES) - 1), min_size=1, max_size=3)),
    min_size=1, max_size=30)


@settings(max_examples=200, deadline=None)
@given(tas_operations)
def test_the_tas_re_add_shortcut_leaves_the_books_as_delete_and_add_would(
        ops: list[tuple[str, int, int, int, list[int]]]) -> None:
    """Versions of admitted TAS workloads re-added with the same objects (a status change), with the
    same usage but another placement, or another size, and deletions: the TAS usage per node, the entries
    held per workload and the ClusterQueues' books stay those of the delete and add."""
    fast, full = _engine(True), _engine(False)
    current: dict[str, dict[str, Any]] = {}
    for op, wl, cq, count, nodes in ops:
        name = f"w{wl}"
        key = f"default/{name}"
        previous = current.get(key)
        if op == "delete":
            assert (fast.cache.delete_workload(key) is None) == (full.cache.delete_workload(key) is None)
            current.pop(key, None)
        else:
            if previous is None or op == "add":
                obj = _admitted(name, f"cq{cq}", count, 1, nodes)
            elif op == "same":
                obj = previous
            elif op == "status":
                # A new version that changes only conditions: spec and admission are the same objects.
                obj = {**previous, "status": {**previous["status"], "conditions": [
                    *previous["status"]["conditions"], {"type": "PodsReady", "status": "True"}]}}
            else:
                adm = previous["status"]["admission"]
                size = previous["spec"]["podSets"][0]["count"] if op == "moved" else count
                obj = _admitted(name, adm["clusterQueue"], size, 1, nodes)
                if op == "moved":
                    # Another placement written for the same spec (the same spec.podSets object).
                    obj["spec"] = previous["spec"]
            current[key] = obj
            for engine in (fast, full):
                infos = engine.infos
                info = WorkloadInfo(obj) if key not in infos else _refreshed(infos[key], obj)
                infos[key] = info
                engine.cache.add_or_update_workload(info)
        assert _tas_books(fast) == _tas_books(full)


# ---- sortedDomains with packed integer keys ------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 300), st.integers(0, 40)), min_size=len(NODES) + 3, max_size=len(NODES) + 3),
       st.booleans(), st.randoms(use_true_random=False))
def test_sorted_domains_order_as_the_tuple_key_would(counts: list[tuple[int, int]], least_free: bool, rng: Any) -> None:
    """``Placement._sorted`` packs (sign x slices, pods, values, index) into one integer, the values as the
    domain's rank in its level: the same order as sorting the tuples, ties and all, at every level."""
    # LeastFreeCapacity (ascending slices) for unconstrained requests under TASProfileMixed.
    engine = _engine(True, {"TASProfileMixed": least_free})
    flavor = engine.tas.flavors["tas"]
    tree = flavor.current_tree()
    states = [DomainState(pod_count=pods, slice_count=slices) for pods, slices in counts[:tree.count]]
    flavor.states = StateOverlay(states)
    sign = 1 if least_free else -1
    for level in tree.per_level:
        domains = list(level.values())
        rng.shuffle(domains)
        domains = domains[:rng.randint(1, len(domains))]
        expected = sorted(range(len(domains)), key=lambda i: (
            sign * states[domains[i].idx].slice_count, states[domains[i].idx].pod_count, domains[i].values, i))
        assert flavor._sorted(domains, True) == [domains[i] for i in expected]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 50), st.integers(0, 50), st.integers(0, 50),
                          st.integers(0, 2)), min_size=len(NODES) + 3, max_size=len(NODES) + 3),
       st.integers(1, 4), st.booleans())
def test_combining_counts_without_leader_as_the_general_loop_does(
        counts: list[tuple[int, int, int, int, int]], slice_size: int, at_slice_level: bool) -> None:
    """``Counting._combine``'s sums-and-minima path (no leader, no inner slice layer) against its general
    loop, which an inner layer of size 1 selects without changing any count."""
    engine = _engine(True)
    flavor = engine.tas.flavors["tas"]
    tree = flavor.current_tree()
    for level, domains in enumerate(tree.per_level[:-1]):
        for domain in domains.values():
            results = []
            for sizes in ({}, {level + 1: 1}):
                flavor.states = [DomainState(*c) for c in counts[:tree.count]]
                flavor._combine(domain, slice_size, level if at_slice_level else -1, level, sizes, False)
                results.append(flavor.states[domain.idx])
            assert results[0] == results[1]
