"""The JobSet pod controller's exclusive-placement repair loop (jobset.md §3.6 "Pod controller")."""

from __future__ import annotations

from typing import Any

from jobsetctl.fakecluster.cluster import FakeCluster
from tests.fakecluster.harness import ClusterFactory, Timeline, add_node, submit

OWNER = [{"apiVersion": "batch/v1", "kind": "Job", "name": "js-w-0", "uid": "job-uid", "controller": True}]


# Suffixes are vowels, which generated names never contain, so the timeline keeps them as written.
def exclusive_pod(name: str, index: int, node: str | None = None, selector: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": "busybox"}]}
    if node:
        spec["nodeName"] = node
    if selector:
        spec["nodeSelector"] = selector
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": name,
        "labels": {"jobset.sigs.k8s.io/jobset-name": "js", "jobset.sigs.k8s.io/replicatedjob-name": "w",
                   "jobset.sigs.k8s.io/job-index": "0", "jobset.sigs.k8s.io/job-key": "k0"},
        "annotations": {"jobset.sigs.k8s.io/jobset-name": "js", "alpha.jobset.sigs.k8s.io/exclusive-topology": "rack",
                        "batch.kubernetes.io/job-completion-index": str(index)},
        "ownerReferences": OWNER}, "spec": spec}


def _placed(fake: FakeCluster) -> None:
    add_node(fake, "node-a", {"rack": "r1"})
    add_node(fake, "node-b", {"rack": "r2"})
    submit(fake, exclusive_pod("js-w-0-0-aaaaa", 0, node="node-a"))
    for name, index in (("js-w-0-1-eeeee", 1), ("js-w-0-2-iiiii", 2)):
        created = submit(fake, exclusive_pod(name, index, node="node-a"))  # bound, so deletion is graceful
        assert created["spec"]["nodeSelector"] == {"rack": "r1"}  # mpod.kb.io followed the leader
    fake.run(0)


def test_followers_in_the_leaders_domain_are_left_alone(make_cluster: ClusterFactory) -> None:
    fake = make_cluster(simulate=False)
    _placed(fake)
    assert all(not p["metadata"].get("deletionTimestamp") for p in fake.api.list("", "Pod"))


def test_followers_of_a_leader_that_moved_are_marked_and_deleted(make_cluster: ClusterFactory) -> None:
    """The leader is replaced and lands in rack r2; the followers still select r1: each gets
    DisruptionTarget/ExclusivePlacementViolation and is deleted; the leader stays."""
    fake = make_cluster(simulate=False)
    _placed(fake)
    old_leader = fake.api.get("", "Pod", "default", "js-w-0-0-aaaaa")
    assert old_leader is not None
    fake.api.remove(old_leader)
    submit(fake, exclusive_pod("js-w-0-0-ooooo", 0, node="node-b"))
    fake.run(0)
    followers = [fake.api.get("", "Pod", "default", n) for n in ("js-w-0-1-eeeee", "js-w-0-2-iiiii")]
    for follower in followers:
        assert follower is not None and follower["metadata"]["deletionTimestamp"]
        target = next(c for c in follower["status"]["conditions"] if c["type"] == "DisruptionTarget")
        assert (target["status"], target["reason"], target["message"]) == (
            "True", "ExclusivePlacementViolation", "Pod violated JobSet exclusive placement policy")
    leader = fake.api.get("", "Pod", "default", "js-w-0-0-ooooo")
    assert leader is not None and not leader["metadata"].get("deletionTimestamp")
    assert Timeline(fake).events(kinds={"Pod"}) == [
        (0, "Pod", "js-w-0-0-aaaaa", "Created", None),
        (0, "Pod", "js-w-0-1-eeeee", "Created", None),
        (0, "Pod", "js-w-0-2-iiiii", "Created", None),
        (0, "Pod", "js-w-0-0-aaaaa", "Deleted", None),
        (0, "Pod", "js-w-0-0-ooooo", "Created", None),
    ]


def test_a_leader_on_an_unknown_node_is_not_acted_on(make_cluster: ClusterFactory) -> None:
    fake = make_cluster(simulate=False)
    add_node(fake, "node-a", {"rack": "r1"})
    submit(fake, exclusive_pod("js-w-0-0-aaaaa", 0, node="node-a"))
    submit(fake, exclusive_pod("js-w-0-1-eeeee", 1))
    stray = exclusive_pod("js-w-0-0-uuuuu", 0, node="ghost")
    fake.api.create(stray, skip_admission=True)
    fake.run(0)
    assert all(not p["metadata"].get("deletionTimestamp") for p in fake.api.list("", "Pod"))
