"""JobSet exclusive placement (jobset.md §3.6, scheduling.md §3.4): nothing special in the scheduler
beyond inter-pod (anti-)affinity and per-node preemption — and jobset#682 both ways."""

from __future__ import annotations

from typing import Any

from tests.scheduler.harness import Sim, SimFactory

EXCLUSIVE = "alpha.jobset.sigs.k8s.io/exclusive-topology"
JOB_KEY = "jobset.sigs.k8s.io/job-key"


def _jobset(name: str, *, replicas: int, pods: int, cpu: str, priority: str | None = None) -> dict[str, Any]:
    pod_spec: dict[str, Any] = {"terminationGracePeriodSeconds": 0, "containers": [
        {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}]}
    if priority:
        pod_spec["priorityClassName"] = priority
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": name, "annotations": {EXCLUSIVE: "rack"}},
            "spec": {"replicatedJobs": [{"name": "w", "replicas": replicas, "template": {"spec": {
                "parallelism": pods, "completions": pods, "backoffLimit": 0,
                "template": {"spec": pod_spec}}}}]}}


def _racks(sim: Sim, racks: tuple[str, ...], per_rack: int = 2) -> None:
    for rack in racks:
        for i in range(per_rack):
            sim.node(f"{rack}-n{i}", cpu="4", labels={"rack": rack})


def _racks_of(sim: Sim) -> dict[str, set[str]]:
    """Job key -> racks its pods run in."""
    out: dict[str, set[str]] = {}
    for pod in sim.api.list("", "Pod"):
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            key = pod["metadata"]["labels"][JOB_KEY]
            out.setdefault(key, set()).add(sim.api.get("", "Node", "", node)["metadata"]["labels"]["rack"])  # type: ignore[index]
    return out


def test_exclusive_placement_puts_one_job_per_domain(make_sim: SimFactory) -> None:
    sim = make_sim("1.37")
    _racks(sim, ("r1", "r2", "r3"))
    sim.create(_jobset("js", replicas=3, pods=2, cpu="1"))
    sim.run(30)
    racks = _racks_of(sim)
    assert len(racks) == 3 and all(len(r) == 1 for r in racks.values())
    assert len(set().union(*racks.values())) == 3  # U13: only "one Job per domain" is asserted


def test_a_fourth_job_waits_when_every_domain_is_taken(make_sim: SimFactory) -> None:
    sim = make_sim("1.37")
    _racks(sim, ("r1", "r2"))
    sim.create(_jobset("js", replicas=3, pods=1, cpu="1"))
    sim.run(30)
    pending = [e for e in sim.timeline(events={"Unschedulable"}) if e[1] == "Pod"]
    assert [e[4] for e in pending] == [
        "0/4 nodes are available: 4 node(s) didn't match pod anti-affinity rules. preemption: 0/4 nodes are "
        "available: 4 No preemption victims found for incoming pod."]


def _old_style_pod(sim: Sim, name: str, job: str, node: str | None, priority: str) -> None:
    """An exclusive leader as the pre-#687 webhook wrote it: anti-affinity to every other job's pods,
    whatever their priority (written by hand; today's webhook always adds the priority term)."""
    terms = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchExpressions": [{"key": JOB_KEY, "operator": "Exists"},
                                               {"key": JOB_KEY, "operator": "NotIn", "values": [job]}]},
        "topologyKey": "rack", "namespaceSelector": {}}]}}
    extra: dict[str, Any] = {"nodeName": node} if node else {}
    sim.pod(name, cpu="4", priority=priority, labels={JOB_KEY: job}, affinity=terms, **extra)


def test_jobset_682_without_the_priority_term_a_high_priority_job_cannot_take_the_island(make_sim: SimFactory) -> None:
    """No cross-node preemption: the island's two low-priority pods sit on different nodes, so no single
    node's victims clear the rack-wide anti-affinity (scheduling.md §3.2, §3.4)."""
    sim = make_sim("1.37")
    sim.priority_class("low", 1)
    sim.priority_class("high", 100)
    _racks(sim, ("r1",))
    _old_style_pod(sim, "low-leader", "low", "r1-n0", "low")
    _old_style_pod(sim, "low-follower", "low", "r1-n1", "low")
    sim.run(0)
    _old_style_pod(sim, "high-leader", "high", None, "high")
    sim.run(60)
    # Filters run in order, so the nodes first report the cpu; the preemption dry run removes the node's
    # own low-priority pod and then hits the anti-affinity to the pod on the *other* node.
    assert sim.timeline() == [(0, "Pod", "high-leader", "Unschedulable",
                               "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
                               "2 node(s) didn't match pod anti-affinity rules.")]


def test_jobset_682_with_the_priority_term_the_high_priority_jobset_takes_the_island(make_sim: SimFactory) -> None:
    """jobset#687: exclusivity only within a priority level; ordinary node-local preemption makes room
    for the leader in the occupied rack. Here the low JobSet's Job has ``backoffLimit: 0``: losing one pod
    fails it, the JobSet fails and its other pod goes, so the follower (pinned to the rack by
    nodeSelector) finds room without preempting again."""
    sim = make_sim("1.37")
    sim.priority_class("low", 1)
    sim.priority_class("high", 100)
    _racks(sim, ("r1",))
    sim.create(_jobset("low", replicas=1, pods=2, cpu="4", priority="low"))
    sim.run(10)
    assert _racks_of(sim) == {next(iter(_racks_of(sim))): {"r1"}}
    sim.create(_jobset("high", replicas=1, pods=2, cpu="4", priority="high"))
    sim.run(60)
    preempted = [(e[2].rsplit("-", 1)[0], e[4].split(" ")[2].rsplit("-", 1)[0])
                 for e in sim.timeline() if e[3] == "Preempted"]
    assert preempted == [("low-w-0-1", "default/high-w-0-0")]
    high = [p for p in sim.api.list("", "Pod") if p["metadata"]["name"].startswith("high-")
            and (p.get("spec") or {}).get("nodeName")]
    assert sorted(p["spec"]["nodeName"] for p in high) == ["r1-n0", "r1-n1"]
