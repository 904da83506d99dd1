"""Upstream JobSet examples through the whole simulated cluster (skipped without ../shared/upstream)."""

from __future__ import annotations

from collections import defaultdict

import yaml

from tests.fakecluster.harness import ClusterFactory, Timeline, add_node, kube_events, submit
from tests.helpers import UPSTREAM, requires_upstream

POOL = "cloud.google.com/gke-nodepool"


@requires_upstream
def test_exclusive_placement_example_gives_each_job_its_own_node_pool(make_cluster: ClusterFactory) -> None:
    """jobset.md §3.6 on ``simple/exclusive-placement.yaml``: three Jobs of three pods, three node pools.
    Each leader lands in a free pool; its followers are denied until it is scheduled, retried by the
    Job controller 1 s later, and pinned to the leader's pool."""
    fake = make_cluster()
    for pool in ("a", "b", "c"):
        for i in range(2):
            add_node(fake, f"{pool}-{i}", {POOL: f"pool-{pool}"})
    manifest = yaml.safe_load((UPSTREAM / "jobset/examples/simple/exclusive-placement.yaml").read_text())
    submit(fake, manifest)
    fake.run(10)
    pods = fake.api.list("", "Pod")
    assert len(pods) == 9 and all(p["status"]["phase"] == "Running" for p in pods)
    pools_by_job: dict[str, set[str]] = defaultdict(set)
    for pod in pods:
        node = fake.api.get("", "Node", "", pod["spec"]["nodeName"])
        assert node is not None
        pools_by_job[pod["metadata"]["labels"]["batch.kubernetes.io/job-name"]].add(node["metadata"]["labels"][POOL])
    assert sorted(pools_by_job) == [f"exclusive-placement-workers-{i}" for i in range(3)]
    assert all(len(pools) == 1 for pools in pools_by_job.values())
    assert len(set.union(*pools_by_job.values())) == 3
    created = [(e[0], e[2]) for e in Timeline(fake).events(kinds={"Pod"}) if e[3] == "Created"]
    assert [name for at, name in created if at == 0] == [f"exclusive-placement-workers-{i}-0-*1" for i in range(3)]
    assert len([name for at, name in created if at == 1]) == 6
    denials = {e[5] for e in kube_events(fake, "Job") if e[4] == "FailedCreate"}
    assert denials == {'Error creating: admission webhook "vpod.kb.io" denied the request: follower pod node '
                       "selector not set"}
