"""The queue manager's shortcuts (:class:`jobsetctl.kueue.engine.queues.QueueManager`, ``shortcuts``) change nothing.

With ``shortcuts`` off (tests only; the engine sets it from ``EngineSettings.engine_shortcuts``):

* a pop takes the head it found as any key (``PendingClusterQueue.take``: is it its bucket's head? which is its
  entry?) instead of :meth:`~jobsetctl.kueue.engine.pending_queue.PendingClusterQueue._take_head`;
* a BestEffortFIFO requeue after NoFit / PreemptionNoCandidates puts the workload into an inadmissible bucket of
  its own and then merges the active bucket of its hash with it (``handleInadmissibleHash``), instead of turning
  that bucket inadmissible and adding the workload to it
  (:meth:`~jobsetctl.kueue.engine.pending_queue.PendingClusterQueue.join_moved_hash`);
* a retry moves a bucket with members of unknown backoff member by member.

Random sequences of the manager's operations (workloads of few shapes, so that buckets hold several members;
pops, requeues for every reason, retries, updates and deletes) are applied to two managers, one with the
shortcuts, one without: every answer and the whole queue state after each step (buckets in order with their
members in order and their heap entries, sequence numbers included) must be the same. The whole-run comparison
of the engine with and without its shortcuts (``test_engine_shortcuts.py``) covers the same paths on crowded
generated clusters (:func:`test_crowded_runs_are_the_same_either_way`).
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobsetctl.fakecluster.scheduler.selectors import EVERYTHING
from jobsetctl.kueue.engine import names
from jobsetctl.kueue.engine.queues import (
    REASON_FAILED_AFTER_NOMINATION,
    REASON_GENERIC,
    REASON_NO_FIT,
    REASON_PENDING_PREEMPTION,
    REASON_PREEMPTION_NO_CANDIDATES,
    QueueManager,
)
from jobsetctl.kueue.engine.workload import WorkloadInfo
from tests.kueue import test_engine_shortcuts as engine_shortcuts

REASONS = [REASON_PREEMPTION_NO_CANDIDATES, REASON_NO_FIT, REASON_GENERIC, REASON_FAILED_AFTER_NOMINATION,
           REASON_PENDING_PREEMPTION]
CLUSTER_QUEUES = {"cq0": names.BEST_EFFORT_FIFO, "cq1": names.BEST_EFFORT_FIFO, "cq2": names.STRICT_FIFO}
#: LocalQueue -> ClusterQueue: two namespaces share cq0.
LOCAL_QUEUES = {"ns0/lq": "cq0", "ns1/lq": "cq0", "ns2/lq": "cq1", "ns3/lq": "cq2"}


def _workload(index: int, namespace: int, cpu: str, priority: int, created: int, backoff: int | None) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
        "metadata": {"name": f"wl{index}", "namespace": f"ns{namespace}", "uid": f"uid-{index:03d}",
                     "creationTimestamp": f"t={created}", "generation": 1},
        "spec": {"queueName": "lq", "priority": priority, "podSets": [{"name": "main", "count": 1, "template": {
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}}]}}
    if backoff is not None:
        obj["status"] = {"requeueState": {"requeueAt": f"t={backoff}"}}
    return obj


workloads = st.lists(st.tuples(st.integers(0, 3), st.sampled_from(["1", "2"]), st.sampled_from([0, 100]),
                               st.integers(0, 5), st.one_of(st.none(), st.integers(0, 20))), min_size=4, max_size=14)
operations = st.lists(st.one_of(
    # A scheduling cycle: the heads, then each one requeued for the reason drawn for it (the last one may stay in
    # flight until a "requeue" step).
    st.tuples(st.just("cycle"), st.lists(st.sampled_from(REASONS), min_size=1, max_size=4), st.booleans()),
    st.tuples(st.just("cycle"), st.lists(st.sampled_from(REASONS[:2]), min_size=1, max_size=4), st.booleans()),
    st.tuples(st.just("add"), st.integers(0, 13)),
    st.tuples(st.just("heads"), st.just(0)),
    st.tuples(st.just("requeue"), st.integers(0, 13), st.sampled_from(REASONS), st.booleans()),
    st.tuples(st.just("retry"), st.just(0)),
    st.tuples(st.just("tick"), st.integers(1, 10)),
    st.tuples(st.just("delete"), st.integers(0, 13)),
), max_size=60)


class _World:
    def __init__(self, shortcuts: bool, bucket_retry: bool = True) -> None:
        self.now = 0.0
        self.manager = QueueManager(now=lambda: self.now, seconds_of=lambda text: float(text[2:]),
                                    namespace_labels=lambda namespace: {})
        self.manager.bucket_retry = bucket_retry
        self.manager.shortcuts = shortcuts
        for name, strategy in CLUSTER_QUEUES.items():
            self.manager.add_cluster_queue(name, strategy, EVERYTHING)
        for key, cq in LOCAL_QUEUES.items():
            self.manager.add_or_update_local_queue(key, cq)
        self.in_flight: dict[str, WorkloadInfo] = {}

    def apply(self, op: tuple[Any, ...], objects: list[dict[str, Any]]) -> Any:
        manager = self.manager
        kind = op[0]
        if kind == "add":
            if op[1] >= len(objects):
                return None
            return manager.add_or_update_workload(WorkloadInfo(objects[op[1]]))
        if kind == "cycle":
            heads = self.apply(("heads", 0), objects)
            out = [heads]
            for index, (key, _, _) in enumerate(heads):
                if op[2] and index == len(heads) - 1:
                    break
                info = self.in_flight.pop(key)
                out.append(manager.requeue_workload(info, op[1][index % len(op[1])], names.PENDING_EVALUATION, info))
            return out
        if kind == "heads":
            heads = manager.heads(lambda name: True)
            for head in heads:
                self.in_flight[head.info.key] = head.info
            return [(head.info.key, head.cluster_queue, head.is_preemptor) for head in heads]
        if kind == "requeue":
            if not self.in_flight:
                return None
            key = sorted(self.in_flight)[op[1] % len(self.in_flight)]
            info = self.in_flight.pop(key)
            return manager.requeue_workload(info, op[2], names.PENDING_EVALUATION, info if op[3] else None)
        if kind == "retry":
            return manager.queue_inadmissible(list(CLUSTER_QUEUES))
        if kind == "tick":
            self.now += op[1]
            return None
        if op[1] < len(objects):
            key = f"ns{objects[op[1]]['metadata']['namespace'][2:]}/wl{op[1]}"
            self.in_flight.pop(key, None)
            manager.forget_workload(key)
        return None

    def observed(self) -> list[Any]:
        """What the manager's callers can see: the keys on each side and the pending order per ClusterQueue."""
        return [(name, sorted(cq.active), sorted(cq.inadmissible), cq.inflight, cq.preemptor, dict(cq.bulk_moved),
                 [info.key for info in self.manager.pending(name)]) for name, cq in self.manager.cluster_queues.items()]

    def state(self) -> list[Any]:
        out: list[Any] = []
        for name, cq in self.manager.cluster_queues.items():
            buckets = [(side, digest, bucket.active, list(bucket.infos), dict(bucket.entries), sorted(bucket.slow),
                        sorted(bucket.unkeyed), dict(bucket.namespaces))
                       for side, buckets_ in (("act", cq.act), ("inad", cq.inad)) for digest, bucket in buckets_.items()]
            out.append((name, buckets, sorted(cq.where), cq.inflight, cq.preemptor, dict(cq.bulk_moved),
                        cq.queue_inadmissible_cycle, cq.pop_cycle, [info.key for info in self.manager.pending(name)]))
        return out


def _compare(fast: _World, slow: _World, specs: list[tuple[Any, ...]], ops: list[tuple[Any, ...]],
             strict: bool) -> None:
    objects = [_workload(index, *spec) for index, spec in enumerate(specs)]
    for op in [("add", index) for index in range(len(objects))] + ops:
        assert fast.apply(op, objects) == slow.apply(op, objects), op
        assert fast.observed() == slow.observed(), op
        if strict:
            assert fast.state() == slow.state(), op


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads, operations)
def test_the_queue_shortcuts_change_nothing(specs: list[tuple[Any, ...]], ops: list[tuple[Any, ...]]) -> None:
    """The pop and requeue shortcuts leave the very same buckets (members, order, entries)."""
    _compare(_World(True), _World(False), specs, ops, strict=True)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads, operations)
def test_all_queue_shortcuts_change_no_answer(specs: list[tuple[Any, ...]], ops: list[tuple[Any, ...]]) -> None:
    """With the bucket retry off too (as the engine's switch does), buckets are made differently (members moved one by
    one get new entries), but every answer and every key's side and order are the same."""
    _compare(_World(True), _World(False, bucket_retry=False), specs, ops, strict=False)


def test_a_merge_that_keeps_the_inadmissible_bucket_pops_in_order() -> None:
    """A retry merges an inadmissible bucket into the active one of its hash and keeps the inadmissible one (it is
    not smaller): the head entry then sits in the pop order twice, with the bucket it left and the one it joined,
    and the two pairs compare equal (they used to compare their buckets and fail). Found by the property above."""
    specs = [(0, "1", 100, 0, None), (0, "1", 100, 0, 1)]
    for world in (_World(True), _World(False), _World(False, bucket_retry=False)):
        objects = [_workload(index, *spec) for index, spec in enumerate(specs)]
        for index in range(2):
            world.apply(("add", index), objects)
        world.apply(("tick", 1), objects)
        assert world.apply(("retry", 0), objects) == 1
        assert world.apply(("heads", 0), objects) == [("ns0/wl0", "cq0", False)]
        assert world.apply(("heads", 0), objects) == [("ns0/wl1", "cq0", False)]


def test_a_requeue_joins_the_bucket_of_its_hash() -> None:
    """Three workloads of one shape: the head's PreemptionNoCandidates requeue turns the two others
    inadmissible with it, in one bucket, the requeued one last (as the merge appends it); a retry brings back
    all three and the same head pops first."""
    objects = [_workload(index, 0, "1", 0, index, None) for index in range(3)]
    for shortcuts in (True, False):
        world = _World(shortcuts)
        for index in range(3):
            assert world.apply(("add", index), objects)
        assert world.apply(("heads", 0), objects) == [("ns0/wl0", "cq0", False)]
        assert world.apply(("requeue", 0, REASON_PREEMPTION_NO_CANDIDATES, True), objects) == "inadmissible"
        cq = world.manager.cluster_queues["cq0"]
        assert not cq.act and [list(bucket.infos) for bucket in cq.inad.values()] == [
            ["ns0/wl1", "ns0/wl2", "ns0/wl0"]]
        assert world.apply(("retry", 0), objects) == 3
        assert world.apply(("heads", 0), objects) == [("ns0/wl0", "cq0", False)]


@st.composite
def crowded_setups(draw: st.DrawFn) -> dict[str, Any]:
    """Generated runs of ``test_engine_shortcuts`` with workloads of two shapes, more of them than the quota
    holds: heads that find no preemption candidates send the waiting ones of their shape back with them."""
    queues = draw(st.integers(1, 2))
    cqs = [{"nominal": draw(st.integers(1, 4)), "borrowing": draw(st.one_of(st.none(), st.integers(0, 2))),
            "within": draw(st.sampled_from(["Never", "LowerPriority"])),
            "reclaim": draw(st.sampled_from(["Never", "Any"]))} for _ in range(queues)]
    shapes = [{"priority": draw(st.sampled_from([0, 100])), "pods": draw(st.integers(1, 2)),
               "cpu": draw(st.sampled_from(["1", "2"])), "constraint": draw(st.sampled_from(["required", ""]))}
              for _ in range(2)]
    workloads = [{**draw(st.sampled_from(shapes)), "cq": draw(st.integers(0, queues - 1)),
                  "duration": draw(st.integers(1, 20)), "at": draw(st.integers(0, 10))}
                 for _ in range(draw(st.integers(4, 16)))]
    return {"tas": draw(st.booleans()), "racks": draw(st.integers(1, 2)), "per_rack": 2, "cqs": cqs,
            "workloads": workloads}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(crowded_setups())
def test_crowded_runs_are_the_same_either_way(setup: dict[str, Any]) -> None:
    fast = engine_shortcuts._run(setup, True)
    assert fast == engine_shortcuts._run(setup, False)
