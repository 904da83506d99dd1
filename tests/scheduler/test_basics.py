"""Phase 1: kube-scheduler basics (issue #4) — binding, filters and their reason texts, scoring."""

from __future__ import annotations

from tests.scheduler.harness import SimFactory, affinity, anti_affinity


def test_pod_binds_to_the_least_allocated_node_and_ties_go_to_the_first_node(make_sim: SimFactory) -> None:
    sim = make_sim()
    sim.node("n1")
    sim.node("n2")
    sim.pod("busy", cpu="2", nodeName="n1")
    sim.pod("a", cpu="1")
    sim.pod("b", cpu="1")
    sim.run(1)
    assert sim.timeline() == [
        (0, "Pod", "a", "Scheduled", "n2"),
        (0, "Pod", "b", "Scheduled", "n2"),
    ]
    pod = sim.get_pod("a")
    assert sim.condition(pod, "PodScheduled") is not None
    assert sim.condition(pod, "PodScheduled")["status"] == "True"  # type: ignore[index]


def test_insufficient_resources_and_too_many_pods_are_counted_per_node(make_sim: SimFactory) -> None:
    sim = make_sim()
    sim.node("n1", cpu="2", gpu=8)
    sim.node("n2", cpu="2", gpu=8)
    sim.node("n3", cpu="8", pods=1)
    sim.pod("filler", cpu="1", nodeName="n3")
    sim.pod("p", cpu="4", gpu=1)
    sim.run(1)
    message = ("0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 1 Too many pods, 2 Insufficient cpu. "
               "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")
    assert sim.timeline() == [(0, "Pod", "p", "Unschedulable", message)]
    condition = sim.condition(sim.get_pod("p"), "PodScheduled")
    assert condition is not None
    assert (condition["status"], condition["reason"], condition["message"]) == ("False", "Unschedulable", message)


def test_histogram_entries_sort_as_strings(make_sim: SimFactory) -> None:
    """``sort.Strings`` on "count reason": "10 x" sorts before "2 y" (kubernetes FitError.Error)."""
    sim = make_sim()
    for i in range(10):
        sim.node(f"a{i}", cpu="1")
    for i in range(2):
        sim.node(f"b{i}", cpu="8", labels={"pool": "b"}, taints=[{"key": "dedicated", "value": "b",
                                                                   "effect": "NoSchedule"}])
    sim.pod("p", cpu="2")
    sim.run(1)
    assert sim.timeline()[0][4] == (
        "0/12 nodes are available: 10 Insufficient cpu, 2 node(s) had untolerated taint(s). "
        "preemption: 0/12 nodes are available: 12 Preemption is not helpful for scheduling.")


def test_node_selector_affinity_taints_and_cordon_reasons(make_sim: SimFactory) -> None:
    sim = make_sim()
    sim.node("plain")
    sim.node("tainted", labels={"zone": "a"}, taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}])
    sim.node("cordoned", labels={"zone": "a"}, unschedulable=True)
    sim.node("executing", labels={"zone": "a"}, taints=[{"key": "bad", "effect": "NoExecute"}])
    sim.node("preferred", labels={"zone": "b"}, taints=[{"key": "meh", "effect": "PreferNoSchedule"}])
    sim.pod("wants-zone-a", nodeSelector={"zone": "a"})
    sim.pod("wants-zone-b", nodeSelector={"zone": "b"})
    sim.pod("tolerates", nodeSelector={"zone": "a"},
            tolerations=[{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}])
    sim.run(1)
    assert sim.timeline() == [
        (0, "Pod", "wants-zone-a", "Unschedulable",
         "0/5 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn't match Pod's node "
         "affinity/selector, 2 node(s) had untolerated taint(s). preemption: 0/5 nodes are available: "
         "5 Preemption is not helpful for scheduling."),
        (0, "Pod", "wants-zone-b", "Scheduled", "preferred"),
        (0, "Pod", "tolerates", "Scheduled", "tainted"),
    ]


def test_required_node_affinity_operators_and_match_fields(make_sim: SimFactory) -> None:
    sim = make_sim()
    sim.node("small", labels={"cores": "8", "arch": "amd64"})
    sim.node("big", labels={"cores": "64", "arch": "amd64"})
    sim.node("arm", labels={"cores": "128", "arch": "arm64"})
    sim.node("bare")

    def required(*terms: dict[str, object]) -> dict[str, object]:
        return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}

    sim.pod("gt", affinity=required({"matchExpressions": [
        {"key": "cores", "operator": "Gt", "values": ["16"]},
        {"key": "arch", "operator": "NotIn", "values": ["arm64"]}]}))
    sim.pod("lt", affinity=required({"matchExpressions": [{"key": "cores", "operator": "Lt", "values": ["16"]}]}))
    sim.pod("absent", affinity=required({"matchExpressions": [{"key": "cores", "operator": "DoesNotExist"}]}))
    sim.pod("by-name", affinity=required({"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["arm"]}]}))
    sim.pod("ored", affinity=required({"matchExpressions": [{"key": "arch", "operator": "In", "values": ["x"]}]},
                                      {"matchExpressions": [{"key": "arch", "operator": "Exists"}]}))
    sim.pod("none", affinity=required())
    sim.run(1)
    placed = {e[2]: e[4] for e in sim.timeline() if e[3] == "Scheduled"}
    assert placed == {"gt": "big", "lt": "small", "absent": "bare", "by-name": "arm", "ored": "small"}
    assert sim.timeline()[-1][2:4] == ("none", "Unschedulable")


def test_extended_resources_init_containers_and_overhead_count(make_sim: SimFactory) -> None:
    sim = make_sim()
    sim.node("n1", cpu="4", gpu=2)
    # Init container needs 3 cpu: the pod needs max(1 + 1 sidecar... ) -> 3 cpu; overhead adds 500m.
    sim.pod("init", cpu="1", initContainers=[{"name": "prep", "image": "busybox",
                                              "resources": {"requests": {"cpu": "3"}}}],
            overhead={"cpu": "500m"})
    sim.pod("second", cpu="1")
    sim.pod("gpus", gpu=2)
    sim.pod("more-gpus", gpu=1)
    sim.run(1)
    assert [e[2:4] for e in sim.timeline()] == [
        ("init", "Scheduled"), ("second", "Unschedulable"), ("gpus", "Scheduled"), ("more-gpus", "Unschedulable"),
    ]
    assert sim.timeline()[1][4].startswith("0/1 nodes are available: 1 Insufficient cpu.")


def test_pod_anti_affinity_reasons_and_symmetry(make_sim: SimFactory) -> None:
    sim = make_sim()
    for name in ("n1", "n2"):
        sim.node(name, labels={"rack": "r1"})
    sim.node("n3", labels={"rack": "r2"})
    sim.pod("web-1", labels={"app": "web"}, affinity=anti_affinity({"app": "web"}, "rack"))
    sim.pod("web-2", labels={"app": "web"}, affinity=anti_affinity({"app": "web"}, "rack"))
    sim.pod("web-3", labels={"app": "web"}, affinity=anti_affinity({"app": "web"}, "rack"))
    # No terms of its own, but the existing pods' anti-affinity matches it (symmetry).
    sim.pod("plain-web", labels={"app": "web"})
    sim.run(1)
    assert sim.timeline() == [
        (0, "Pod", "web-1", "Scheduled", "n1"),
        (0, "Pod", "web-2", "Scheduled", "n3"),
        (0, "Pod", "web-3", "Unschedulable",
         "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. preemption: 0/3 nodes "
         "are available: 3 No preemption victims found for incoming pod."),
        (0, "Pod", "plain-web", "Unschedulable",
         "0/3 nodes are available: 3 node(s) didn't satisfy existing pods anti-affinity rules. preemption: "
         "0/3 nodes are available: 3 No preemption victims found for incoming pod."),
    ]


def test_pod_affinity_first_pod_exception_and_missing_topology_key(make_sim: SimFactory) -> None:
    sim = make_sim()
    sim.node("n1", labels={"zone": "a"})
    sim.node("n2", labels={"zone": "b"})
    sim.node("n3")  # no zone label: never in an affinity domain
    sim.pod("cache-1", labels={"app": "cache"}, affinity=affinity({"app": "cache"}, "zone"))
    sim.pod("cache-2", labels={"app": "cache"}, affinity=affinity({"app": "cache"}, "zone"), nodeSelector={"zone": "b"})
    sim.pod("orphan", labels={"app": "x"}, affinity=affinity({"app": "db"}, "zone"))
    sim.run(1)
    assert sim.timeline() == [
        (0, "Pod", "cache-1", "Scheduled", "n1"),
        (0, "Pod", "cache-2", "Unschedulable",
         "0/3 nodes are available: 1 node(s) didn't match pod affinity rules, 2 node(s) didn't match Pod's "
         "node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."),
        (0, "Pod", "orphan", "Unschedulable",
         "0/3 nodes are available: 3 node(s) didn't match pod affinity rules. preemption: 0/3 nodes are "
         "available: 3 Preemption is not helpful for scheduling."),
    ]


def test_namespaces_and_namespace_selector_of_affinity_terms(make_sim: SimFactory) -> None:
    sim = make_sim()
    sim.node("n1")
    sim.node("n2")
    sim.pod("other-ns-web", namespace="other", labels={"app": "web"})
    sim.run(0)
    on = sim.api.get("", "Pod", "other", "other-ns-web")["spec"]["nodeName"]  # type: ignore[index]
    term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}
    # Null namespaceSelector and no namespaces: own namespace only -> the other namespace's pod is invisible.
    sim.pod("own-ns", affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
            nodeName=None)
    # Empty namespaceSelector: every namespace.
    sim.pod("all-ns", affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {**term, "namespaceSelector": {}}]}})
    sim.run(1)
    placed = {e[2]: e[4] for e in sim.timeline() if e[3] == "Scheduled"}
    assert placed["all-ns"] == on
    assert placed["own-ns"] in ("n1", "n2")


def test_match_label_keys_are_merged_on_read_when_admission_did_not(make_sim: SimFactory) -> None:
    """Exclusive tenants (KEP-3633 pattern, scheduling.md §3.3)."""
    sim = make_sim()
    sim.node("n1", labels={"rack": "r1"})
    sim.node("n2", labels={"rack": "r2"})
    tenant_terms = {
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchExpressions": [{"key": "tenant", "operator": "Exists"}]},
             "matchLabelKeys": ["tenant"], "topologyKey": "rack"}]},
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchExpressions": [{"key": "tenant", "operator": "Exists"}]},
             "mismatchLabelKeys": ["tenant"], "topologyKey": "rack"}]},
    }
    sim.pod("a-1", labels={"tenant": "a"}, affinity=tenant_terms)
    sim.pod("b-1", labels={"tenant": "b"}, affinity=tenant_terms)
    sim.pod("a-2", labels={"tenant": "a"}, affinity=tenant_terms)
    sim.pod("c-1", labels={"tenant": "c"}, affinity=tenant_terms)
    sim.run(1)
    placed = {e[2]: e[4] for e in sim.timeline() if e[3] == "Scheduled"}
    assert placed == {"a-1": "n1", "b-1": "n2", "a-2": "n1"}
    assert sim.timeline()[-1][2:4] == ("c-1", "Unschedulable")


def test_pods_for_other_schedulers_are_left_alone(make_sim: SimFactory) -> None:
    sim = make_sim()
    sim.node("n1")
    sim.pod("mine")
    sim.pod("theirs", schedulerName="someone-else")
    sim.run(1)
    assert sim.timeline() == [(0, "Pod", "mine", "Scheduled", "n1")]
    assert not sim.get_pod("theirs")["spec"].get("nodeName")


def test_scheduling_gates_hold_a_pod_without_events_until_removed(make_sim: SimFactory) -> None:
    sim = make_sim()
    sim.node("n1")
    sim.pod("gated", schedulingGates=[{"name": "example.com/wait"}])

    def ungate() -> None:
        pod = sim.get_pod("gated")
        import copy

        old = copy.deepcopy(pod)
        pod["spec"]["schedulingGates"] = []
        sim.api.update(pod, old=old, skip_admission=True)

    sim.at(5, ungate)
    sim.run(10)
    assert sim.timeline() == [(5, "Pod", "gated", "Scheduled", "n1")]


def test_unschedulable_event_only_when_the_text_changes(make_sim: SimFactory) -> None:
    """A failure is recorded when its text changes. A node that cannot hold the pod does not retry it (the
    room gate, :mod:`jobsetctl.fakecluster.scheduler.requeue`; upstream's NodeResourcesFit hint says QueueSkip
    for a node the pod does not fit, fit.go ``isSchedulableAfterNodeChange``): the five-minute leftover flush
    does, and its text names the new nodes. Issue 12 changed this test: the node adds at 10 s and 20 s used to
    retry the pod at once."""
    sim = make_sim()
    sim.node("n1", cpu="1")
    sim.pod("big", cpu="2")
    sim.at(10, lambda: sim.node("n2", cpu="1"))
    sim.at(340, lambda: sim.node("n3", cpu="1", labels={"x": "y"}))
    sim.at(700, lambda: sim.node("n4", cpu="4"))
    sim.run(800)
    message = ("0/{n} nodes are available: {n} Insufficient cpu. preemption: 0/{n} nodes are available: "
               "{n} Preemption is not helpful for scheduling.")
    assert sim.timeline() == [
        (0, "Pod", "big", "Unschedulable", message.format(n=1)),
        (330, "Pod", "big", "Unschedulable", message.format(n=2)),
        (660, "Pod", "big", "Unschedulable", message.format(n=3)),
        (700, "Pod", "big", "Scheduled", "n4"),
    ]


def test_identical_failures_are_one_event_with_a_count(make_sim: SimFactory) -> None:
    """Issue 12: a retry that fails with the same text adds to the count of the event that recorded it (the
    events API aggregates repeats the same way), in the JSON as ``count`` (absent while it is 1)."""
    sim = make_sim()
    sim.node("n1", cpu="1")
    sim.pod("big", cpu="2")
    # Something changes in the cluster (a pod lands on n1), so the leftover flush at 330 s retries "big".
    sim.at(100, lambda: sim.pod("small", cpu="500m"))
    sim.run(400)
    message = ("0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
               "1 Preemption is not helpful for scheduling.")
    failures = [e for e in sim.recorder.events if e.name == "big" and e.event == "Unschedulable"]
    assert [(e.time, e.message, e.count) for e in failures] == [(0, message, 2)]
    assert failures[0].as_dict()["count"] == 2
    assert "count" not in next(e for e in sim.recorder.events if e.name == "small").as_dict()
    assert [t for t, subject, _ in sim.scheduler.attempt_log if subject == "default/big"] == [0, 330]
    [kube] = [e for e in sim.recorder.kube_events if e.name == "big" and e.reason == "FailedScheduling"]
    assert kube.count == 2
def test_the_issue_example_message(make_sim: SimFactory) -> None:
    """The format of issue #4: ``0/16 nodes are available: 8 Insufficient nvidia.com/gpu, 8 node(s) didn't
    match pod anti-affinity rules.`` plus the preemption part."""
    sim = make_sim()
    for i in range(8):
        sim.node(f"busy-{i}", gpu=1)
        sim.pod(f"gpu-user-{i}", gpu=1, nodeName=f"busy-{i}")
        sim.node(f"free-{i}", gpu=1)
        sim.pod(f"x-{i}", labels={"app": "x"}, nodeName=f"free-{i}")
    sim.run(0)
    sim.pod("p", gpu=1, affinity=anti_affinity({"app": "x"}))
    sim.run(1)
    assert sim.timeline(events={"Unschedulable"}) == [(0, "Pod", "p", "Unschedulable",
        "0/16 nodes are available: 8 Insufficient nvidia.com/gpu, 8 node(s) didn't match pod anti-affinity rules. "
        "preemption: 0/16 nodes are available: 16 No preemption victims found for incoming pod.")]
