"""pkg/scheduler/backend/queue/scheduling_queue_test.go, the tables about which events move which pods and
where to, entry by entry against our :class:`SchedulingQueue` (issue 12).

Read through the file index of kubernetes/kubernetes: ``TestPriorityQueue_MoveAllToActiveOrBackoffQueueWith
QueueingHint`` and ``TestPriorityQueue_MoveAllToActiveOrBackoffQueue`` in the 1.37-dev version (index id
54576707891, 300,364 chars); ``TestHighPriorityFlushUnschedulablePodsLeftover``,
``TestPriorityQueue_initPodMaxInUnschedulablePodsDuration`` and ``TestPodTimestamp`` in an older version
(index id 41114673: the newer file's later tests lie past what the index searches).

Upstream's unit tests register a made-up plugin ("foo", "fooPlugin") whose hint always answers Queue or
QueueSkip. Here the question goes through the real ``Scheduler._interested`` (``isPodWorthRequeuing``) with
real plugins in their place: NodeResourcesFit registered NodeAdd and, without a node detail, answers Queue
(fooPlugin); GangScheduling did not register NodeAdd (barPlugin). Where the table fixes the hint's answer
itself, the ``interested`` callback states it, as upstream's ``queueHintReturnQueue``/``...Skip`` do.

Left out (reasons):
* "Queue queues pod to activeQ" (a pod with only PendingPlugins skips backoff): we have no Pending status;
* the wildcard-event rows ("... the event is wildcard", three rows): our only wildcard move is the
  leftover flush, which comes five minutes after a failure, when no backoff (10 s at most) is left, and
  PreEnqueue-gated pods are kept out of our pool (queue.py), so "gated and wildcard" cannot be set up;
* "QueueHintFunction is (not) called when Pod is gated by the plugin ...": gated pods are not in our pool;
  the gates are re-checked on their own events (PodGroup add, member add, spec update);
* initPodMaxInUnschedulablePodsDuration "user-defined value": the duration is not configurable here;
* TestPodTimestamp "update two pod to activeQ": our queue has no in-place update of an activeQ entry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from jobsetctl.fakecluster.scheduler.interface import ClusterEvent
from jobsetctl.fakecluster.scheduler.queue import (
    ACTIVE,
    BACKOFF,
    MAX_BACKOFF,
    MAX_IN_UNSCHEDULABLE,
    UNSCHEDULABLE,
    QueuedItem,
    SchedulingQueue,
)
from tests.scheduler.harness import SimFactory

FOO = frozenset({"NodeResourcesFit"})  # upstream's fooPlugin: registered NodeAdd, hint Queue
BAR = frozenset({"GangScheduling"})  # upstream's barPlugin: registered nothing NodeAdd concerns


def _fail(queue: SchedulingQueue, key: str, now: float, plugins: frozenset[str], priority: int = 0) -> QueuedItem:
    """Add, pop and requeue as unschedulable (upstream's Pop + AddUnschedulablePodIfNotPresent)."""
    item = QueuedItem(key=key, priority=priority, timestamp=now)
    queue.add(item, gated=False)
    popped = queue.pop(now)
    assert popped is item
    queue.requeue(item, now, plugins)
    return item


@pytest.mark.parametrize(("name", "queue_hint", "after", "expected"), [
    ("Queue queues pod to backoffQ if Pod is backing off", True, 0.0, BACKOFF),
    ("Queue queues pod to activeQ if Pod is not backing off", True, 2.0, ACTIVE),
    ("Skip queues pod to unschedulableEntities", False, 0.0, UNSCHEDULABLE),
])
def test_move_all_with_queueing_hint(name: str, queue_hint: bool, after: float, expected: str) -> None:
    """TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint: a NodeAdd whose hint answers Queue
    moves the pod to backoffQ while its 1 s backoff runs, to activeQ after; QueueSkip leaves it."""
    queue = SchedulingQueue()
    item = _fail(queue, "pod1", 0.0, frozenset({"foo"}))
    hint: Callable[[QueuedItem, ClusterEvent], bool] = lambda _item, _event: queue_hint  # noqa: E731
    queue.move(ClusterEvent.NODE_ADD, hint, after)
    assert item.where == expected


def test_move_all_to_active_or_backoff_queue(make_sim: SimFactory) -> None:
    """TestPriorityQueue_MoveAllToActiveOrBackoffQueue, step by step."""
    interested = make_sim().scheduler._interested

    def move(now: float) -> None:
        queue.move(ClusterEvent.NODE_ADD, lambda item, event: interested(item, event, None, None), now)

    queue = SchedulingQueue()
    unschedulable = _fail(queue, "unschedulable", 0.0, FOO, priority=0)
    high = _fail(queue, "high", 0.0, FOO, priority=100)
    hpp1 = _fail(queue, "hpp1", 0.0, frozenset(), priority=100)  # no plugin: any event moves it
    hpp2 = _fail(queue, "hpp2", 0.0, BAR, priority=100)
    move(0.0)
    medium = QueuedItem(key="medium", priority=50, timestamp=0.0)
    queue.add(medium, gated=False)
    assert queue.pop(0.0) is medium  # the only one in activeQ
    assert [it.where for it in (unschedulable, high, hpp1, hpp2)] == [BACKOFF, BACKOFF, BACKOFF, UNSCHEDULABLE]
    # After the longest backoff, fail the three again, then one more NodeAdd: all but hpp2 go to activeQ.
    now = MAX_BACKOFF
    queue.flush_backoff(now)
    for item in (unschedulable, high, hpp1):
        assert item.where == ACTIVE
    popped = {queue.pop(now), queue.pop(now), queue.pop(now)}
    assert popped == {unschedulable, high, hpp1}
    for item, plugins in ((unschedulable, FOO), (high, FOO), (hpp1, frozenset())):
        queue.requeue(item, now, plugins)
    queue.add(QueuedItem(key="medium-2", priority=50, timestamp=now), gated=False)
    move(now + MAX_BACKOFF)
    assert [it.where for it in (unschedulable, high, hpp1, hpp2)] == [ACTIVE, ACTIVE, ACTIVE, UNSCHEDULABLE]
    assert sum(1 for it in queue.items.values() if it.where == ACTIVE) == 4


def test_high_priority_flush_unschedulable_pods_leftover() -> None:
    """TestHighPriorityFlushUnschedulablePodsLeftover: after podMaxInUnschedulablePodsDuration both pods go
    to activeQ, the higher priority first. Upstream's unit test calls the flush at 5 min + 1 s; our flush
    runs on the 30 s ticks of the real loop, the first strictly after 5 min (here 330 s), so we ask it
    there; at 301 s nothing is due yet."""
    queue = SchedulingQueue()
    high = _fail(queue, "high", 0.0, frozenset({"fakePlugin"}), priority=100)
    mid = _fail(queue, "mid", 0.0, frozenset({"fakePlugin"}), priority=50)
    queue.flush_unschedulable(MAX_IN_UNSCHEDULABLE + 1, change_counter=1)
    assert (high.where, mid.where) == (UNSCHEDULABLE, UNSCHEDULABLE)
    queue.flush_unschedulable(330.0, change_counter=1)
    assert queue.pop(330.0) is high
    assert queue.pop(330.0) is mid


def test_init_pod_max_in_unschedulable_pods_duration_default() -> None:
    """TestPriorityQueue_initPodMaxInUnschedulablePodsDuration, "New priority queue by the default value": two
    pods in the pool, flushed together, come out by their timestamps (pod2 failed a second earlier)."""
    queue = SchedulingQueue()
    pod2 = _fail(queue, "pod2", 0.0, frozenset({"fakePlugin"}))
    pod1 = _fail(queue, "pod1", 1.0, frozenset({"fakePlugin"}))
    queue.flush_unschedulable(330.0, change_counter=1)
    assert [queue.pop(330.0), queue.pop(330.0)] == [pod2, pod1]


def test_pod_timestamp_add_two_pods_to_active_q() -> None:
    """TestPodTimestamp "add two pod to activeQ and sort them by the timestamp"."""
    queue = SchedulingQueue()
    pod2 = QueuedItem(key="pod2", priority=0, timestamp=1.0)
    pod1 = QueuedItem(key="pod1", priority=0, timestamp=0.0)
    queue.add(pod2, gated=False)
    queue.add(pod1, gated=False)
    assert [queue.pop(5.0), queue.pop(5.0)] == [pod1, pod2]


def test_pod_timestamp_unschedulable_pods_moved_to_active_q(make_sim: SimFactory) -> None:
    """TestPodTimestamp "add two pod to unschedulablePods then move them to activeQ and sort them by the
    timestamp" (a move 2 s later, the wildcard move of the old test; here a NodeAdd both registered)."""
    interested = make_sim().scheduler._interested
    queue = SchedulingQueue()
    pod2 = _fail(queue, "pod2", 1.0, FOO)
    pod1 = _fail(queue, "pod1", 0.0, FOO)
    queue.move(ClusterEvent.NODE_ADD, lambda item, event: interested(item, event, None, None), 3.0)
    assert [queue.pop(3.0), queue.pop(3.0)] == [pod1, pod2]


def test_pod_timestamp_backoff_q_moved_to_active_q() -> None:
    """TestPodTimestamp "add one pod to BackoffQ and move it to activeQ": the pod that backed off joins the
    one in activeQ after its backoff, ordered by timestamp."""
    queue = SchedulingQueue(pop_from_backoff=False)
    pod1 = QueuedItem(key="pod1", priority=0, timestamp=0.0)
    queue.add(pod1, gated=False)
    assert queue.pop(0.0) is pod1
    queue.requeue(pod1, 0.0, frozenset(), error=True)  # straight to backoffQ
    pod2 = QueuedItem(key="pod2", priority=0, timestamp=1.0)
    queue.add(pod2, gated=False)
    queue.flush_backoff(2.0)
    assert [queue.pop(2.0), queue.pop(2.0)] == [pod1, pod2]


# ---- scheduling_queue_cpg_test.go (commit cad9df97): CompositePodGroup entries in activeQ -----------------
CPG_GATES = "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true,CompositePodGroup=true"


def _cpg(sim: Any, name: str, min_groups: int, parent: str | None = None) -> None:
    # Workload "wl", as the harness's PodGroups (a tree may not span workloads).
    spec: dict[str, Any] = {"workloadRef": {"workloadName": "wl", "templateName": name},
                            "schedulingPolicy": {"gang": {"minGroupCount": min_groups}}}
    if parent:
        spec["parentCompositePodGroupName"] = parent
    sim.create({"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup",
                "metadata": {"name": name, "namespace": "default"}, "spec": spec})


def _root_entry(sim: Any, root: str) -> QueuedItem | None:
    """The queued group entry of the tree whose root is CompositePodGroup ``root`` (nothing is scheduled:
    the fake cluster is not run, only its informer fed)."""
    return sim.scheduler.queue.get(("group", "cpg", "default", root))


def test_pod_group_with_parent_cpg_queueing(make_sim: SimFactory) -> None:
    """TestPodGroupWithParentCPGQueueing: a CompositePodGroup (minGroupCount 1), its PodGroup (minCount 1) and
    one pod: the tree's entry, keyed by the root, is in activeQ."""
    sim = make_sim("1.37", CPG_GATES)
    _cpg(sim, "test-cpg", 1)
    sim.podgroup("test-pg", 1, parent="test-cpg")
    sim.member("pod1", "test-pg")
    entry = _root_entry(sim, "test-cpg")
    assert entry is not None and entry.where == ACTIVE


def test_multi_level_cpg_readiness_decrease(make_sim: SimFactory) -> None:
    """TestMultiLevelCPGReadinessDecrease: root A, child B, PodGroup under B, one pod: A's entry is in activeQ
    and stays there when the PodGroup is removed (lazy removal: the cycle finds out)."""
    sim = make_sim("1.37", CPG_GATES)
    _cpg(sim, "test-cpg-a", 1)
    _cpg(sim, "test-cpg-b", 1, parent="test-cpg-a")
    pg = sim.podgroup("test-pg", 1, parent="test-cpg-b")
    sim.member("pod1", "test-pg")
    entry = _root_entry(sim, "test-cpg-a")
    assert entry is not None and entry.where == ACTIVE
    sim.api.delete(pg)
    assert entry.where == ACTIVE


def test_multi_level_cpg_with_high_min_group_count(make_sim: SimFactory) -> None:
    """TestMultiLevelCPGWithHighMinGroupCount: a root needing two ready children gets into activeQ once both
    child CompositePodGroups have their PodGroup's pod."""
    sim = make_sim("1.37", CPG_GATES)
    _cpg(sim, "root-cpg", 2)
    _cpg(sim, "child-cpg-1", 1, parent="root-cpg")
    _cpg(sim, "child-cpg-2", 1, parent="root-cpg")
    sim.podgroup("test-pg-1", 1, parent="child-cpg-1")
    sim.podgroup("test-pg-2", 1, parent="child-cpg-2")
    sim.member("pod1", "test-pg-1")
    entry = _root_entry(sim, "root-cpg")
    assert entry is None or entry.where != ACTIVE  # one ready child of two: the tree's quorum is not met
    sim.member("pod2", "test-pg-2")
    entry = _root_entry(sim, "root-cpg")
    assert entry is not None and entry.where == ACTIVE
