"""The engine's shortcuts over Workload versions change nothing.

With ``EngineSettings.engine_shortcuts`` off (tests only), the engine reads every Workload version it
observes afresh (``Engine.observe``: no Info kept for a version read already, none carried over the
admission's own write), the cache re-adds a workload by deleting it and adding it again (``Cache._replace``,
also for ClusterQueues with TAS flavors) and a retry of inadmissible workloads moves a bucket with members of
unknown backoff member by member (``QueueManager.queue_inadmissible``). On generated clusters (a TAS flavor over racks of nodes, or a
plain flavor; ClusterQueues of one Cohort that preempt; owner-less Workloads that run for their duration,
submitted over time, of several priorities and sizes), both runs must record the same events and kube events
and leave the same objects. The invariant checks are on in both runs, so each kept Info is also compared with a
fresh reading of its version (``Engine.verify_shortcuts``).
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobsetctl.fakecluster.cluster import ClusterOptions, FakeCluster
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kueue.engine.settings import EngineSettings
from tests.kueue.harness import V137, cohort_cluster_queue, kueue_config

K = "kueue.x-k8s.io/v1beta2"
RACK = "cloud.provider.com/topology-rack"
BLOCK = "cloud.provider.com/topology-block"
HOST = "kubernetes.io/hostname"


def _nodes(racks: int, per_rack: int) -> list[dict[str, Any]]:
    out = []
    for r in range(racks):
        for n in range(per_rack):
            name = f"node-r{r}-n{n}"
            out.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
                "pool": "tas", BLOCK: "block-0", RACK: f"rack-{r}", HOST: name}},
                "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                           "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                           "conditions": [{"type": "Ready", "status": "True"}]}})
    return out


@st.composite
def setups(draw: st.DrawFn) -> dict[str, Any]:
    tas = draw(st.booleans())
    queues = draw(st.integers(1, 3))
    cqs = [{"nominal": draw(st.integers(1, 8)), "borrowing": draw(st.one_of(st.none(), st.integers(0, 8))),
            "within": draw(st.sampled_from(["Never", "LowerPriority"])),
            "reclaim": draw(st.sampled_from(["Never", "Any", "LowerPriority"]))} for _ in range(queues)]
    workloads = [{"cq": draw(st.integers(0, queues - 1)), "priority": draw(st.sampled_from([0, 50, 100, 200])),
                  "pods": draw(st.integers(1, 4)), "cpu": draw(st.sampled_from(["500m", "1", "2"])),
                  "constraint": draw(st.sampled_from(["required", "preferred", "balanced", ""])),
                  "duration": draw(st.integers(1, 40)), "at": draw(st.integers(0, 30))}
                 for _ in range(draw(st.integers(1, 12)))]
    return {"tas": tas, "racks": draw(st.integers(1, 3)), "per_rack": draw(st.integers(1, 3)), "cqs": cqs,
            "workloads": workloads}


def _objects(setup: dict[str, Any]) -> tuple[list[dict[str, Any]], list[tuple[float, dict[str, Any]]]]:
    first: list[dict[str, Any]] = []
    flavor: dict[str, Any] = {}
    if setup["tas"]:
        first.extend(_nodes(setup["racks"], setup["per_rack"]))
        first.append({"apiVersion": K, "kind": "Topology", "metadata": {"name": "topo"},
                      "spec": {"levels": [{"nodeLabel": BLOCK}, {"nodeLabel": RACK}, {"nodeLabel": HOST}]}})
        flavor = {"nodeLabels": {"pool": "tas"}, "topologyName": "topo"}
    first.append({"apiVersion": K, "kind": "ResourceFlavor", "metadata": {"name": "f"}, "spec": flavor})
    for i, cq in enumerate(setup["cqs"]):
        first.append(cohort_cluster_queue(f"cq{i}", "f", cq["nominal"], cq["borrowing"], cq["within"], cq["reclaim"]))
        first.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"ns{i}"}})
        first.append({"apiVersion": K, "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": f"ns{i}"},
                      "spec": {"clusterQueue": f"cq{i}"}})
    later = []
    for index, w in enumerate(setup["workloads"]):
        podset: dict[str, Any] = {"name": "main", "count": w["pods"], "template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "resources": {"requests": {"cpu": w["cpu"]}}}]}}}
        if setup["tas"] and w["constraint"]:
            key = {"required": "required", "preferred": "preferred", "balanced": "podSetSliceRequiredTopology"}
            podset["topologyRequest"] = {key[w["constraint"]]: RACK}
            if w["constraint"] == "balanced":
                podset["topologyRequest"]["podSetSliceSize"] = 1
        later.append((float(w["at"]), {
            "apiVersion": K, "kind": "Workload",
            "metadata": {"name": f"wl{index}", "namespace": f"ns{w['cq']}",
                         "annotations": {"jobsetctl.dev/duration": f"{w['duration']}s"}},
            "spec": {"queueName": "lq", "priority": w["priority"], "podSets": [podset]}}))
    return first, later


def _run(setup: dict[str, Any], shortcuts: bool) -> tuple[list[Any], list[Any], list[str]]:
    return run_generated(setup, EngineSettings(engine_shortcuts=shortcuts))


def run_generated(setup: dict[str, Any], engine: EngineSettings) -> tuple[list[Any], list[Any], list[str]]:
    """A whole simulated run of a generated cluster (:func:`setups`) with the invariant checks on and the
    engine's ``engine`` settings: the events, kube events and objects it leaves (what a shortcut must not
    change; the other shortcut tests compare runs through this too)."""
    extra: dict[str, Any] = {"check_invariants": True, "kueue": engine}
    cluster = FakeCluster(ClusterOptions(V137, parse_feature_gates("", V137), simulate=True, extra=extra,
                                         kueue=kueue_config()))
    first, later = _objects(setup)
    for obj in first:
        if obj["kind"] == "Node":
            cluster.api.create(obj, skip_admission=True)
        else:
            assert cluster.submit(obj).ok
    for at, obj in later:
        cluster.clock.call_at(at, lambda obj=obj: cluster.submit(obj))
    cluster.run(5_000)
    events = [e.as_dict() for e in cluster.recorder.events]
    kube_events = [(e.time, e.kind, e.name, e.type, e.reason, e.message, e.count) for e in cluster.recorder.kube_events]
    objects = sorted(repr(obj) for obj in cluster.api.all_objects())
    return events, kube_events, objects


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setups())
def test_the_engine_shortcuts_change_nothing(setup: dict[str, Any]) -> None:
    fast = _run(setup, True)
    assert fast == _run(setup, False)


#: A ClusterQueue borrowing the Cohort's quota with long low-priority workloads on a TAS flavor (3 of them, one
#: per constraint), then another one reclaiming its nominal quota: two are preempted.
RECLAIM_SETUP: dict[str, Any] = {
    "tas": True, "racks": 2, "per_rack": 2, "cqs": [
        {"nominal": 2, "borrowing": None, "within": "Never", "reclaim": "Never"},
        {"nominal": 4, "borrowing": None, "within": "LowerPriority", "reclaim": "Any"}],
    "workloads": [{"cq": 0, "priority": 0, "pods": 2, "cpu": "1", "constraint": c, "duration": 30, "at": 0}
                  for c in ("required", "preferred", "balanced")]
    + [{"cq": 1, "priority": 100, "pods": 2, "cpu": "1", "constraint": c, "duration": 5, "at": 3}
       for c in ("required", "")]}


def test_a_run_with_preemptions_is_the_same_either_way() -> None:
    """A ClusterQueue borrowing the Cohort's quota with long low-priority workloads, then another one reclaiming
    its nominal quota: two are preempted, requeued and admitted again (the comparison covers evictions)."""
    setup = RECLAIM_SETUP
    fast = _run(setup, True)
    kinds = [e["event"] for e in fast[0] if e.get("kind") == "Workload"]
    assert kinds.count("Preempted") == 2 and kinds.count("Finished") == 5
    assert fast == _run(setup, False)
