"""kube-scheduler's queueing-hint tables, entry by entry, against our scheduler (issue 12).

Every row of :mod:`tests.scheduler.upstream_hint_cases` is asked of the real scheduler of a real fake
cluster: the pending pod is created through the API server (the scheduler's informer builds its
:class:`PodInfo`), the event's other object is built by the informer's own builder, and the question goes
through ``Scheduler._interested``, our ``isPodWorthRequeuing`` (rejecting plugin registered for the event,
then its hint). A node's before/after is the :class:`NodeInfo` parse of the Node object, as the informer
takes it. ``Test_isSchedulableAfterPodGroupUpdated`` runs end to end (our minCount comparison sits in the
informer, before the hint), and so do the rows whose answer is "no event at all".

The room gate (:mod:`jobsetctl.fakecluster.scheduler.requeue`) is not involved in these rows: it answers
room events for items refused for room alone, in place of NodeResourcesFit's Queue; the last tests show
that deliberate difference next to the upstream answer.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from jobsetctl.fakecluster.scheduler.groups import object_group_key
from jobsetctl.fakecluster.scheduler.interface import ClusterEvent, EventDetail, NodeView
from jobsetctl.fakecluster.scheduler.queue import QueuedItem
from jobsetctl.fakecluster.scheduler.snapshot import NodeInfo
from tests.scheduler import upstream_hint_cases as cases
from tests.scheduler.harness import ALL_GANG_GATES, Sim, SimFactory

CPG_ON = ALL_GANG_GATES["1.37"] + ",CompositePodGroup=true"
#: Upstream turns TopologyAwareWorkloadScheduling off with CompositePodGroup.
CPG_OFF = "GenericWorkload=true,GangScheduling=true"


def _ensure_namespace(sim: Sim, namespace: str) -> None:
    if sim.api.get("", "Namespace", "", namespace) is None:
        sim.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})


def _target(sim: Sim, obj: dict[str, Any]) -> QueuedItem:
    _ensure_namespace(sim, obj["metadata"]["namespace"])
    created = sim.create(obj)
    uid = created["metadata"]["uid"]
    assert uid in sim.scheduler.pods
    return QueuedItem(key=uid, priority=0, timestamp=0.0)


def _ask(sim: Sim, item: QueuedItem, plugin: str, event: ClusterEvent, *, subject: dict[str, Any] | None = None,
         group: Any = None, detail: EventDetail | None = None) -> bool:
    item.unschedulable_plugins = frozenset({plugin})
    info = sim.scheduler._new_pod_info(subject) if subject is not None else None
    return sim.scheduler._interested(item, event, info, group, detail)


def _view(obj: dict[str, Any]) -> NodeView:
    info = NodeInfo(obj["metadata"]["name"], 0)
    info.set_node(obj)
    return NodeView.of(info)


def _id(case: Any) -> str:
    return f"{case.source.split('/')[0]}: {case.name}"


@pytest.mark.parametrize("case", cases.POD_HINTS, ids=_id)
def test_pod_event_hint(make_sim: SimFactory, case: cases.PodHint) -> None:
    sim = make_sim()
    item = _target(sim, case.target)
    detail = EventDetail(old_labels=case.old_labels) if case.old_labels is not None else None
    assert _ask(sim, item, case.plugin, case.event, subject=case.subject, detail=detail) is case.queue


@pytest.mark.parametrize("case", cases.NODE_HINTS, ids=_id)
def test_node_event_hint(make_sim: SimFactory, case: cases.NodeHint) -> None:
    sim = make_sim()
    item = _target(sim, case.target)
    detail = EventDetail(old_node=_view(case.old) if case.old is not None else None, new_node=_view(case.new))
    event = ClusterEvent.NODE_ADD if case.old is None else ClusterEvent.NODE_UPDATE
    assert _ask(sim, item, case.plugin, event, detail=detail) is case.queue


@pytest.mark.parametrize("case", cases.SELF_UPDATES, ids=_id)
def test_waiting_pod_updated_hint(make_sim: SimFactory, case: cases.SelfUpdate) -> None:
    """The waiting pod's own update (``PriorityQueue.Update`` asks the hints of UpdatePodToleration /
    UpdatePodLabel); an update of another pending pod asks nothing of this one, which the hint's own-pod
    check answers the same way."""
    sim = make_sim()
    item = _target(sim, case.target)
    known = sim.scheduler.pods[item.key]
    updated = copy.deepcopy(known.obj)
    if case.other:
        updated["metadata"]["uid"] = "another-pod"
    if case.tolerations is not None:
        updated["spec"]["tolerations"] = list(updated["spec"].get("tolerations") or []) + case.tolerations
    if case.labels is not None:
        updated["metadata"]["labels"] = dict(case.labels)
    detail = EventDetail(old_labels=dict(known.labels), old_static=known.static)
    assert _ask(sim, item, case.plugin, ClusterEvent.UNSCHEDULED_POD_UPDATE, subject=updated,
                detail=detail) is case.queue


def test_a_toleration_added_to_the_waiting_pod_retries_it(make_sim: SimFactory) -> None:
    """taint_toleration_test.go "queue-on-toleration-added", end to end: the pod binds at the update (before
    issue 12 it waited for another event or the five-minute flush)."""
    sim = make_sim()
    sim.node("n0", cpu="4", taints=[cases.taint("x")])
    sim.pod("p", cpu="1")

    def tolerate() -> None:
        obj = copy.deepcopy(sim.get_pod("p"))
        obj["spec"]["tolerations"] = [*(obj["spec"].get("tolerations") or []), cases.toleration("x")]
        result = sim.api.update(obj)
        assert result.ok, result.message()

    sim.at(10, tolerate)
    sim.run(60)
    assert _attempts(sim, "default/p") == [0, 10]
    assert sim.node_of("p") == "n0"


def _gang_rows() -> list[Any]:
    return [pytest.param(case, cpg, id=f"{_id(case)} (CPG enabled: {cpg})") for case in cases.GANG_HINTS
            for cpg in case.cpg]


@pytest.mark.parametrize(("case", "cpg"), _gang_rows())
def test_gang_scheduling_hint(make_sim: SimFactory, case: cases.GangHint, cpg: bool) -> None:
    if case.version == "1.35":
        sim = make_sim("1.35", ALL_GANG_GATES["1.35"])
    else:
        sim = make_sim("1.37", CPG_ON if cpg else CPG_OFF)
    for name, parent in case.composites.items():
        _composite(sim, "default", name, parent)
    for (namespace, name), parent in case.pod_groups.items():
        _pod_group(sim, namespace, name, parent)
    item = _target(sim, case.target)
    if case.subject is not None:
        _ensure_namespace(sim, case.subject["metadata"]["namespace"])
        event = ClusterEvent.ASSIGNED_POD_ADD if case.subject["spec"].get("nodeName") else \
            ClusterEvent.UNSCHEDULED_POD_ADD
        assert _ask(sim, item, "GangScheduling", event, subject=case.subject) is case.queue
        return
    assert case.added is not None
    kind, namespace, name, parent = case.added
    if kind == "Workload":
        _ensure_namespace(sim, namespace)
        obj = sim.create({"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
                          "metadata": {"name": name, "namespace": namespace},
                          "spec": {"podGroups": [{"name": "pg", "policy": {"gang": {"minCount": 1}}}]}})
    elif kind == "PodGroup":
        obj = _pod_group(sim, namespace, name, parent)
    else:
        obj = _composite(sim, namespace, name, parent)
    assert _ask(sim, item, "GangScheduling", ClusterEvent.GROUP_ADD, group=object_group_key(obj)) is case.queue


def _pod_group(sim: Sim, namespace: str, name: str, parent: str | None, min_count: int | None = 1) -> dict[str, Any]:
    _ensure_namespace(sim, namespace)
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": min_count}} if min_count else {"basic": {}}}
    api_version = "scheduling.k8s.io/v1beta1"
    if parent:
        spec["parentCompositePodGroupName"] = parent
        spec["workloadRef"] = {"workloadName": "w", "templateName": name}
        api_version = "scheduling.k8s.io/v1alpha3"
    return sim.create({"apiVersion": api_version, "kind": "PodGroup",
                       "metadata": {"name": name, "namespace": namespace}, "spec": spec})


def _composite(sim: Sim, namespace: str, name: str, parent: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"workloadRef": {"workloadName": "w", "templateName": name},
                            "schedulingPolicy": {"basic": {}}}
    if parent:
        spec["parentCompositePodGroupName"] = parent
    return sim.create({"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup",
                       "metadata": {"name": name, "namespace": namespace}, "spec": spec})


def _attempts(sim: Sim, subject: str) -> list[float]:
    return [t for t, who, _ in sim.scheduler.attempt_log if who == subject]


def _deleting(sim: Sim, name: str) -> Callable[[], None]:
    """An action for ``sim.at``: delete the pod ``default/name`` (it must exist then)."""
    def action() -> None:
        obj = sim.api.get("", "Pod", "default", name)
        assert obj is not None
        sim.api.delete(obj)
    return action


@pytest.mark.parametrize("case", cases.GROUP_UPDATES, ids=lambda c: f"gangscheduling: {c.name}")
def test_pod_group_updated(make_sim: SimFactory, case: cases.GroupUpdate) -> None:
    """1.37 ``Test_isSchedulableAfterPodGroupUpdated``: the waiting item is retried at t=10 exactly when
    upstream's hint says Queue (each waiting gang needs more cpu than the node has, before and after)."""
    sim = make_sim("1.37", CPG_ON)
    sim.node("n0", cpu="2")
    _pod_group(sim, "default", "pg", None, case.old)
    if case.group is None:
        sim.pod("p", cpu="4")
        waiting = "default/p"
    else:
        if (case.namespace, case.group) != ("default", "pg"):
            _pod_group(sim, case.namespace, case.group, None, case.old)
        for i in range(4):
            sim.pod(f"m{i}", cpu="1" if case.old else "4", namespace=case.namespace,
                    schedulingGroup={"podGroupName": case.group})
        waiting = f"group {case.namespace}/{case.group}"

    def update() -> None:
        stored = sim.api.get("scheduling.k8s.io", "PodGroup", "default", "pg")
        assert stored is not None
        obj = copy.deepcopy(stored)  # the store's dict is the informer's old object: never edit it in place
        if case.new is None:
            obj["metadata"].setdefault("labels", {})["touched"] = "yes"
        else:
            obj["spec"]["schedulingPolicy"]["gang"]["minCount"] = case.new
        result = sim.api.update(obj)
        assert result.ok, result.message()

    sim.at(10, update)
    sim.run(60)
    assert _attempts(sim, waiting)[:1] == [0]
    assert (10 in _attempts(sim, waiting)) is case.queue


# ---- fit_test.go TestEventsToRegister ----------------------------------------------------------------------
def test_fit_events_to_register_with_queueing_hints(make_sim: SimFactory) -> None:
    """"Register events with SchedulingQueueHint feature enabled": Pod Delete and Node Add|UpdateNodeAllocatable.
    Our NODE_UPDATE stands for every node update; the hint lets through allocatable growth only."""
    sim = make_sim()
    fit = sim.scheduler.plugin_named("NodeResourcesFit")
    assert fit.events == frozenset({ClusterEvent.ASSIGNED_POD_DELETE, ClusterEvent.NODE_ADD,
                                    ClusterEvent.NODE_UPDATE})
    item = _target(sim, cases.pod(requests={"cpu": "1"}))
    before = cases.node(capacity={"cpu": "2"})
    labelled = cases.node(capacity={"cpu": "2"}, labels={"new": "label"})
    tainted = cases.node(capacity={"cpu": "2"}, taints=[cases.taint("x")])
    for after in (labelled, tainted):
        detail = EventDetail(old_node=_view(before), new_node=_view(after))
        assert not _ask(sim, item, "NodeResourcesFit", ClusterEvent.NODE_UPDATE, detail=detail)
    for event in (ClusterEvent.ASSIGNED_POD_ADD, ClusterEvent.ASSIGNED_POD_UPDATE, ClusterEvent.UNSCHEDULED_POD_ADD):
        assert not _ask(sim, item, "NodeResourcesFit", event, subject=cases.pod("o", node_name="n"))


@pytest.mark.parametrize("hints", [True, False], ids=["hints on", "hints off (InPlacePodVerticalScaling / "
                                                      "DRAExtendedResource disabled)"])
def test_fit_events_to_register_label_update(make_sim: SimFactory, hints: bool) -> None:
    """With queueing hints off upstream registers Node Add|Allocatable|Taint|Label for NodeResourcesFit: a label
    update moves the pod; with hints on a label update is not an event NodeResourcesFit listens to."""
    sim = make_sim(scheduler={"queueingHints": hints})
    sim.node("n1", cpu="1")
    sim.pod("p", cpu="2")

    def relabel() -> None:
        obj = sim.api.get("", "Node", "", "n1")
        assert obj is not None
        obj["metadata"]["labels"]["new"] = "label"
        sim.api.update_status(obj)

    sim.at(10, relabel)
    sim.run(60)
    assert _attempts(sim, "default/p") == ([0] if hints else [0, 10])


def test_fit_skip_queue_on_unscheduled_pod_deleted(make_sim: SimFactory) -> None:
    """fit_test.go "skip-queue-on-unscheduled-pod-deleted": deleting a pod that never got a node frees
    nothing; we send no event for it at all (nominated pods aside), so the waiting pod stays."""
    sim = make_sim()
    sim.node("n1", cpu="1")
    sim.pod("p", cpu="2")
    sim.pod("q", cpu="2")

    sim.at(10, _deleting(sim, "q"))
    sim.run(60)
    assert _attempts(sim, "default/p") == [0]


# ---- the room gate next to upstream's answer --------------------------------------------------------------
def test_room_gate_differs_from_fit_queue_on_other_pod_deleted(make_sim: SimFactory) -> None:
    """Deliberate difference (room gate, requeue.py): fit.go "queue-on-other-pod-deleted" says Queue for any
    deletion of a bound pod, and the hint itself agrees here (row above); but a pod refused for room alone is
    released only when a copy of it fits, so the deletion of a 1-cpu pod does not retry a 2-cpu pod."""
    sim = make_sim()
    sim.node("n0", cpu="2")
    sim.pod("a", cpu="1")
    sim.pod("b", cpu="1")
    sim.pod("c", cpu="2")

    sim.at(10, _deleting(sim, "a"))
    sim.at(20, _deleting(sim, "b"))
    sim.run(60)
    assert _attempts(sim, "default/c") == [0, 20]  # upstream: [0, 10, 20]


def test_room_gate_differs_from_fit_queue_on_node_add(make_sim: SimFactory) -> None:
    """Deliberate difference (room gate): fit.go "queue-on-node-add-with-sufficient-resources" says Queue for
    each of three gangs waiting for one node's worth of room; the gate releases one gang per place."""
    sim = make_sim("1.37", ALL_GANG_GATES["1.37"])
    sim.node("n0", cpu="2")
    for name in ("a", "b", "c"):
        _pod_group(sim, "default", name, None, 4)
        for i in range(4):
            sim.pod(f"{name}-{i}", cpu="1", schedulingGroup={"podGroupName": name})
    sim.at(10, lambda: sim.node("n1", cpu="4"))
    sim.run(60)
    retried = [name for name in ("a", "b", "c") if 10 in _attempts(sim, f"group default/{name}")]
    assert retried == ["a"]  # upstream retries all three (its hint: the pod fits the new node)


# ---- the bookkeeping ---------------------------------------------------------------------------------------
def test_every_upstream_case_is_translated_or_left_out_with_a_reason() -> None:
    translated = {
        cases.FIT: 2 + 7 + 3,  # pod events (other deleted, unscheduled deleted), node changes, EventsToRegister
        cases.TAINT: 4 + 3, cases.UNSCHED: 5 + 3, cases.AFFINITY: 6, cases.IPA: 16 + 12,
    }
    rows = [*cases.POD_HINTS, *cases.NODE_HINTS, *cases.SELF_UPDATES]
    assert sum(1 for r in rows if r.source == cases.FIT) + 1 + len(cases.EVENTS_TO_REGISTER) == translated[cases.FIT]
    for source in (cases.TAINT, cases.UNSCHED, cases.AFFINITY, cases.IPA):
        assert sum(1 for r in rows if r.source == source) == translated[source], source
    for reasons in cases.LEFT_OUT.values():
        assert all(reason for _, reason in reasons)


def test_a_deleted_nominated_pod_gives_its_room_back_to_lower_priority_pods(make_sim: SimFactory) -> None:
    """eventhandlers.go ``deletePodFromSchedulingQueue`` (index id 510693257): deleting a pod that had a nominated
    node moves the waiting pods of lower or equal priority (AssignedPodDelete, ``getLEPriorityPreCheck``), and
    fit.go's ``isSchedulableAfterPodEvent`` says Queue for it (only "skip-queue-on-unscheduled-pod-deleted",
    no node and no nomination, is QueueSkip). Before issue 12 "middle" waited for the victim to go (t=31)."""
    sim = make_sim()
    for name, value in (("p1", 1), ("high", 100), ("top", 200)):
        sim.priority_class(name, value)
    sim.node("n1", cpu="6")
    sim.pod("low", cpu="4", priority="p1", terminationGracePeriodSeconds=30)
    sim.at(1, lambda: sim.pod("urgent", cpu="4", priority="high"))  # preempts low, nominated to n1
    sim.at(10, lambda: sim.pod("middle", cpu="2", priority="p1"))  # fits beside low, not beside the nomination
    sim.at(12, lambda: sim.pod("above", cpu="8", priority="top"))  # higher than urgent: not moved by its delete

    sim.at(20, _deleting(sim, "urgent"))
    sim.run(60)
    assert _attempts(sim, "default/middle") == [10, 20]
    assert sim.node_of("middle") == "n1"
    assert 20 not in _attempts(sim, "default/above")
