"""Property tests of the placement shortcuts against the per-pod reference, on random small node sets.

* :meth:`Placer._place_identical` (identical pods on a node set without a bucket index: each usage bucket
  key's fit and score worked out once, the best node the top of a heap) places every pod where the
  per-pod filter-and-score pass (:meth:`Framework.find_node`, one scan of the node set per pod) does;
* :meth:`Framework.diagnose` on such a node set (one resource-fit check per usage bucket key) gives the
  reasons and per-node statuses of one check per node;
* a node's usage bucket key, worked out lazily when no index holds the node, is always the current one, and
  its number (:meth:`NodeInfo.current_id`) is the same for equal keys only.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from jobsetctl.fakecluster.scheduler.interface import CycleState, Diagnosis
from jobsetctl.fakecluster.scheduler.podinfo import PodInfo
from jobsetctl.fakecluster.scheduler.snapshot import BucketIndex
from tests.scheduler.harness import Sim

#: (cpu, pods allowed, cpu of each pod already bound there)
nodes_strategy = st.lists(
    st.tuples(st.integers(1, 8), st.integers(1, 5), st.lists(st.integers(1, 3), max_size=3)),
    min_size=1, max_size=12,
)


def _cluster(nodes: list[tuple[int, int, list[int]]], pending: int, cpu: int) -> tuple[Sim, list[PodInfo]]:
    sim = Sim("1.37")
    for i, (node_cpu, allowed, bound) in enumerate(nodes):
        sim.node(f"n{i:02d}", cpu=str(node_cpu), pods=allowed, labels={"rack": "r1"})
        used = 0
        for j, bound_cpu in enumerate(bound[:allowed]):
            if used + bound_cpu <= node_cpu:  # a bound pod never overcommits its node (an invariant)
                used += bound_cpu
                sim.pod(f"b{i}-{j}", cpu=str(bound_cpu), nodeName=f"n{i:02d}")
    for k in range(pending):
        sim.pod(f"p{k}", cpu=str(cpu))
    s = sim.scheduler
    pods = sorted((info for info in s.pods.values() if info.name.startswith("p")), key=lambda p: p.name)
    return sim, pods


@settings(max_examples=60, deadline=None)
@given(nodes=nodes_strategy, pending=st.integers(2, 8), cpu=st.integers(1, 3))
def test_identical_pods_land_where_the_per_pod_pass_puts_them(
    nodes: list[tuple[int, int, list[int]]], pending: int, cpu: int,
) -> None:
    sim, pods = _cluster(nodes, pending, cpu)
    s = sim.scheduler
    placer = s.group_cycle.placer
    restrict = s.snapshot.node_set(("test-rack",), lambda: list(s.snapshot.ordered_nodes()))
    assert restrict.index is None  # a small set: scanned, the shortcut's case
    # The reference: one filter-and-score pass per pod (an on_fail hook turns the shortcuts off).
    reference = placer.place(pods, restrict, None, on_fail=lambda *_: None)
    expected = [(pod.name, node.name) for pod, node in reference.placed]
    expected_failed = [pod.name for pod, _, _ in reference.failed]
    placer.rollback(reference)
    quick = placer._place_identical(pods, restrict, None)
    assert quick is not None
    assert [(pod.name, node.name) for pod, node in quick.placed] == expected
    assert [pod.name for pod, _, _ in quick.failed] == expected_failed
    placer.rollback(quick)


@settings(max_examples=60, deadline=None)
@given(nodes=nodes_strategy, cpu=st.integers(1, 9))
def test_diagnosis_by_usage_bucket_equals_one_check_per_node(nodes: list[tuple[int, int, list[int]]], cpu: int) -> None:
    sim, pods = _cluster(nodes, 1, cpu)
    s = sim.scheduler
    restrict = s.snapshot.node_set(("test-rack",), lambda: list(s.snapshot.ordered_nodes()))
    state = CycleState(pods[0], restrict=restrict, in_group_cycle=True)
    framework = s.framework_for(pods[0])
    diagnosis = framework.diagnose(state, None)
    expected = Diagnosis(len(restrict.nodes))
    for node in restrict.nodes:
        status = framework.fit.check(pods[0], node)
        if status is not None:
            expected.add(node.name, status)
    assert diagnosis.reasons == expected.reasons
    assert diagnosis.node_status == expected.node_status
    assert diagnosis.unschedulable_plugins == expected.unschedulable_plugins
    # The histogram alone (a group's status text): nodes counted per usage bucket key.
    histogram = framework.diagnose(CycleState(pods[0], restrict=restrict, in_group_cycle=True), None, per_node=False)
    assert histogram.reasons == expected.reasons
    assert histogram.unschedulable_plugins == expected.unschedulable_plugins
    assert histogram.num_nodes == expected.num_nodes


@settings(max_examples=40, deadline=None)
@given(nodes=nodes_strategy, pending=st.integers(2, 8), cpu=st.integers(1, 3), indexed=st.integers(0, 12))
def test_usage_bucket_keys_stay_current_with_or_without_an_index(
    nodes: list[tuple[int, int, list[int]]], pending: int, cpu: int, indexed: int,
) -> None:
    """A node no index holds works its bucket key out only when asked; one in an index keeps it current
    and sits in the bucket of that key, through pods added and removed."""
    sim, pods = _cluster(nodes, pending, cpu)
    s = sim.scheduler
    ordered = s.snapshot.ordered_nodes()
    index = BucketIndex("test", ordered[:indexed])

    def check() -> None:
        ids: dict[object, set[int]] = {}
        for node in ordered:
            assert node.current_key() == node.usage_key()
            ids.setdefault(node.current_key(), set()).add(node.current_id())
        # One number per key, a different one for each key.
        assert all(len(numbers) == 1 for numbers in ids.values())
        assert len({n for numbers in ids.values() for n in numbers}) == len(ids)
        for key, bucket in index.buckets.items():
            for node in bucket.members.values():
                assert node.bucket_key == key == node.usage_key()
        assert sorted(index.names) == sorted(n.name for n in ordered[:indexed])

    check()
    placer = s.group_cycle.placer
    everything = s.snapshot.node_set(("test-rack",), lambda: list(ordered))
    placement = placer.place(pods, everything, None, on_fail=lambda *_: None)
    check()
    placer.rollback(placement)
    check()
    index.detach()
