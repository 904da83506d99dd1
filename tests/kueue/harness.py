"""A fake cluster with Kueue running, and inline manifests for the Kueue tests."""

from __future__ import annotations

from typing import Any

from jobsetctl.fakecluster.cluster import ClusterOptions, FakeCluster
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.jsontree import copy_tree
from jobsetctl.kube.versions import KubeVersion
from jobsetctl.kueue.config import SHIPPED, KueueConfiguration, parse_configuration
from tests.helpers import load_one

V137 = KubeVersion.V1_37


def kueue_config(**body: Any) -> KueueConfiguration:
    """A Configuration with Kueue's defaults (shipped integrations unless the body names others)."""
    body.setdefault("integrations", {"frameworks": list(SHIPPED.integrations.frameworks)})
    config, problems = parse_configuration(body)
    assert problems == []
    return config


def make_cluster(config: KueueConfiguration | None = SHIPPED, gates: str = "") -> FakeCluster:
    return FakeCluster(ClusterOptions(V137, parse_feature_gates(gates, V137), simulate=False, create_pods=False,
                                      kueue=config))


def submit(cluster: FakeCluster, *texts: str) -> None:
    for text in texts:
        result = cluster.submit(load_one(text))
        assert result.ok, result.error_text()
    cluster.run(until=cluster.clock.now)


def objects(cluster: FakeCluster, group: str, kind: str) -> list[dict[str, Any]]:
    return [copy_tree(o) for o in cluster.api.list(group, kind)]


def workloads(cluster: FakeCluster) -> list[dict[str, Any]]:
    return objects(cluster, "kueue.x-k8s.io", "Workload")


def kube_events(cluster: FakeCluster) -> list[tuple[str, str, str, str]]:
    return [(e.kind, e.type, e.reason, e.message) for e in cluster.recorder.kube_events]


def jobset(name: str = "jobset", namespace: str = "ns", labels: dict[str, str] | None = None,
           replicated: str = "", **spec: Any) -> str:
    """A JobSet manifest; ``replicated`` is YAML for spec.replicatedJobs (one small job by default)."""
    import json

    label_text = json.dumps(labels or {})
    extra = "".join(f"\n  {k}: {json.dumps(v)}" for k, v in spec.items())
    replicated = replicated or """
  - name: replicated-job-1
    replicas: 1
    template: {spec: {parallelism: 1, completions: 1, template: {spec: {containers: [{name: c, image: i}]}}}}"""
    return f"""
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {{name: {name}, namespace: {namespace}, labels: {label_text}}}
spec:{extra}
  replicatedJobs:{replicated}
"""


def cohort_cluster_queue(name: str, flavor: str, nominal: Any, borrowing: Any, within: str,
                         reclaim: str) -> dict[str, Any]:
    """A ClusterQueue of Cohort ``org`` with one cpu quota (``borrowing`` None: no limit) and the two
    preemption policies: what the generated runs of the shortcut property tests are made of."""
    resource: dict[str, Any] = {"name": "cpu", "nominalQuota": str(nominal)}
    if borrowing is not None:
        resource["borrowingLimit"] = str(borrowing)
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": name}, "spec": {
        "cohortName": "org", "namespaceSelector": {},
        "preemption": {"withinClusterQueue": within, "reclaimWithinCohort": reclaim},
        "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": flavor, "resources": [resource]}]}]}}
