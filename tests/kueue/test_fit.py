"""The Kueue lints (jobsetctl/kueue/fit.py; jobsetctl/lint/kueue_*.py): a queued job that can never fit.

Messages are upstream's (pkg/scheduler/flavorassigner/flavorassigner.go fitsResourceQuota and
findFlavorForPodSets, pkg/cache/scheduler/tas_flavor_snapshot.go notFitMessage). The cases are ours: the
engine's own translation of TestAssignFlavors covers the assigner with usage; these cover what can be said
with none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.kueue.harness import kueue_config
from tests.kueue.test_references import cq, found, jobset, lq, rf, topology

SETUP = (lq(), rf("flavor1"))
SPEC = "spec.replicatedJobs[0].template.spec.template.spec"


def exceeds(resource: str, flavor: str, before: str, request: str, capacity: str) -> str:
    return (f"insufficient quota for {resource} in flavor {flavor}, previously considered podsets requests ({before}) "
            f"+ current podset request ({request}) > maximum capacity ({capacity})")


def lints(tmp_path: Path, *objects: dict[str, Any], **options: Any) -> list[tuple[str, str, str]]:
    return [(rule, path, message) for _, rule, path, message in found(tmp_path, *objects, **options)
            if rule in ("kueue-exceeds-max-quota", "kueue-resource-not-covered", "kueue-topology-unfit")]


def cohort_cq(borrowing: str | None, **spec: Any) -> dict[str, Any]:
    queue = cq(cohortName="research", **spec)
    if borrowing is not None:
        queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["borrowingLimit"] = borrowing
    return queue


QUOTA_CASES = [
    ("fits the nominal quota", jobset(replicas=10), cq(), []),
    ("over the nominal quota, no cohort", jobset(replicas=11), cq(),
     [("kueue-exceeds-max-quota", SPEC, "couldn't assign flavors to pod set workers: "
       + exceeds("cpu", "flavor1", "0", "11", "10"))]),
    ("millicores", jobset(replicas=3, cpu="3500m"), cq(),
     [("kueue-exceeds-max-quota", SPEC, "couldn't assign flavors to pod set workers: "
       + exceeds("cpu", "flavor1", "0", "10500m", "10"))]),
    ("within nominal plus borrowing limit", jobset(replicas=14), cohort_cq("4"), []),
    ("over nominal plus borrowing limit", jobset(replicas=15), cohort_cq("4"),
     [("kueue-exceeds-max-quota", SPEC, "couldn't assign flavors to pod set workers: "
       + exceeds("cpu", "flavor1", "0", "15", "14"))]),
    ("in a cohort without borrowing limit: the cohort decides", jobset(replicas=100), cohort_cq(None), []),
]


@pytest.mark.parametrize(("job", "queue", "want"), [c[1:] for c in QUOTA_CASES], ids=[c[0] for c in QUOTA_CASES])
def test_exceeds_max_quota(tmp_path: Path, job: dict[str, Any], queue: dict[str, Any], want: list[Any]) -> None:
    assert lints(tmp_path, job, queue, *SETUP) == want


def test_every_flavor_must_be_too_small(tmp_path: Path) -> None:
    two = cq(flavors=("small", "big"))
    two["spec"]["resourceGroups"][0]["flavors"][1]["resources"][0]["nominalQuota"] = "20"
    assert lints(tmp_path, jobset(replicas=15), two, lq(), rf("small"), rf("big")) == []
    assert lints(tmp_path, jobset(replicas=25), two, lq(), rf("small"), rf("big")) == [
        ("kueue-exceeds-max-quota", SPEC, "couldn't assign flavors to pod set workers: "
         + exceeds("cpu", "big", "0", "25", "20") + ", " + exceeds("cpu", "small", "0", "25", "10"))]


def test_earlier_podsets_count_in_a_single_flavor(tmp_path: Path) -> None:
    job = jobset(replicas=6)
    second = dict(job["spec"]["replicatedJobs"][0], name="evaluators")
    job["spec"]["replicatedJobs"].append(second)
    assert lints(tmp_path, job, cq(), *SETUP) == [
        ("kueue-exceeds-max-quota", SPEC.replace("replicatedJobs[0]", "replicatedJobs[1]"),
         "couldn't assign flavors to pod set evaluators: " + exceeds("cpu", "flavor1", "6", "6", "10"))]


def test_partial_admission_is_judged_at_min_count(tmp_path: Path) -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
        "name": "partial", "namespace": "ns", "labels": {"kueue.x-k8s.io/queue-name": "lq"},
        "annotations": {"kueue.x-k8s.io/job-min-parallelism": "5"}},
        "spec": {"parallelism": 20, "completions": 20, "template": {"spec": {"restartPolicy": "Never", "containers": [
            {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}]}}}}
    assert lints(tmp_path, job, cq(), *SETUP) == []
    job["metadata"]["annotations"]["kueue.x-k8s.io/job-min-parallelism"] = "11"
    assert [m for _, _, m in lints(tmp_path, job, cq(), *SETUP)] == [
        "couldn't assign flavors to pod set main: " + exceeds("cpu", "flavor1", "0", "11", "10")]


def test_resource_not_covered(tmp_path: Path) -> None:
    job = jobset()
    job["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "1", "ephemeral-storage": "10Gi"}, "limits": {"example.com/gpu": "1"}}
    assert lints(tmp_path, job, cq(), *SETUP) == [
        ("kueue-resource-not-covered", SPEC,
         "couldn't assign flavors to pod set workers: resource ephemeral-storage unavailable in ClusterQueue"),
        ("kueue-resource-not-covered", SPEC,
         "couldn't assign flavors to pod set workers: resource example.com/gpu unavailable in ClusterQueue"),
    ]
    # excludeResourcePrefixes drops them from the requests; IgnoreUndeclared ignores undeclared ones.
    excluded = kueue_config(resources={"excludeResourcePrefixes": ["ephemeral-storage", "example.com/"]})
    assert lints(tmp_path, job, cq(), *SETUP, kueue=excluded) == []
    ignored = kueue_config(resources={"quotaCheckStrategy": "IgnoreUndeclared"})
    assert lints(tmp_path, job, cq(), *SETUP, kueue=ignored) == []


def test_pods_count_only_when_covered(tmp_path: Path) -> None:
    pods = cq(resource="pods", quota="4")
    assert lints(tmp_path, jobset(replicas=4, cpu="0"), pods, *SETUP) == []
    assert [m for _, _, m in lints(tmp_path, jobset(replicas=5, cpu="0"), pods, *SETUP)] == [
        "couldn't assign flavors to pod set workers: " + exceeds("pods", "flavor1", "0", "5", "4")]


def test_transformations_silence_the_quota_lints(tmp_path: Path) -> None:
    config = kueue_config(resources={"transformations": [
        {"input": "example.com/gpu-slice", "strategy": "Replace", "outputs": {"cpu": "1"}}]})
    assert lints(tmp_path, jobset(replicas=11), cq(), *SETUP, kueue=config) == []


# ---- topology -----------------------------------------------------------------------------------------------

RACK, HOST = "cloud.com/rack", "kubernetes.io/hostname"
TAS = (lq(), cq(flavors=("tas",), quota="1000"), rf("tas", nodeLabels={"pool": "a"}, topologyName="t"),
       topology("t", RACK, HOST))


def node(name: str, rack: str, cpu: str = "8", pool: str = "a", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
        "pool": pool, RACK: rack, HOST: name}}, **({"spec": spec} if spec else {}),
        "status": {"allocatable": {"cpu": cpu, "pods": "110"}}}


def tas_job(mode: str, pods: int, **extra: str) -> dict[str, Any]:
    annotations = {f"kueue.x-k8s.io/podset-{mode}-topology": RACK, **extra}
    return jobset(annotations=annotations, parallelism=pods, cpu="4")


NODES = (node("a1", "a"), node("a2", "a"), node("b1", "b"))   # rack a: 4 pods of 4 CPUs, rack b: 2


def unfit(tmp_path: Path, job: dict[str, Any], *nodes: dict[str, Any]) -> list[str]:
    return [m for rule, _, m in lints(tmp_path, job, *TAS, context=nodes) if rule == "kueue-topology-unfit"]


def test_required_topology_that_no_rack_holds(tmp_path: Path) -> None:
    assert unfit(tmp_path, tas_job("required", 4), *NODES) == []
    assert unfit(tmp_path, tas_job("required", 5), *NODES) == [
        'couldn\'t assign flavors to pod set workers: topology "t" allows to fit only 4 out of 5 pod(s)']
    assert unfit(tmp_path, tas_job("preferred", 5), *NODES) == []   # preferred spreads
    assert unfit(tmp_path, tas_job("required", 5)) == []             # no Nodes: not judged


def test_slices_count_whole_slices(tmp_path: Path) -> None:
    sliced = tas_job("required", 4, **{"kueue.x-k8s.io/podset-slice-required-topology": HOST,
                                       "kueue.x-k8s.io/podset-slice-size": "2"})
    assert unfit(tmp_path, sliced, *NODES) == []
    three = (node("a1", "a", cpu="12"), node("a2", "a", cpu="4"))   # 3 pods + 1 pod: one slice of 2 per host
    assert unfit(tmp_path, sliced, *three) == [
        'couldn\'t assign flavors to pod set workers: topology "t" allows to fit only 1 out of 2 slice(s)']


def test_nodes_the_flavor_does_not_select_or_that_repel_the_pods(tmp_path: Path) -> None:
    other_pool = (node("a1", "a", pool="b"), node("a2", "a", pool="b"))
    assert unfit(tmp_path, tas_job("required", 1), *other_pool) == [
        'couldn\'t assign flavors to pod set workers: topology "t" doesn\'t allow to fit any of 1 pod(s)']
    tainted = (node("a1", "a", taints=[{"key": "gpu", "effect": "NoSchedule"}]),)
    assert unfit(tmp_path, tas_job("required", 1), *tainted)[0].endswith("doesn't allow to fit any of 1 pod(s)")
    flavor = rf("tas", nodeLabels={"pool": "a"}, topologyName="t", tolerations=[{"key": "gpu", "operator": "Exists"}])
    assert [m for rule, _, m in lints(tmp_path, tas_job("required", 1), TAS[0], TAS[1], flavor, TAS[3], context=tainted)
            if rule == "kueue-topology-unfit"] == []


def test_lints_are_warnings_in_the_lint_layer(tmp_path: Path) -> None:
    [(severity, rule, _, _)] = found(tmp_path, jobset(replicas=11), cq(), *SETUP)
    assert (severity, rule) == ("warning", "kueue-exceeds-max-quota")


