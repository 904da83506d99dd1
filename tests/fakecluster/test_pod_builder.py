"""``PodBuilder`` (the Job controller's pods of one pass, copied from the first) against ``build_pod`` (each pod
built from the template): equal pods, keys in the same order, no container shared between pods."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from jobsetctl.fakecluster.controllers.job_pods import UNKNOWN_INDEX, PodBuilder, build_pod
from jobsetctl.fakecluster.controllers.job_spec import JOB_COMPLETION_INDEX_KEY, JobView

_names = st.sampled_from(["a", "b", "app", JOB_COMPLETION_INDEX_KEY, "batch.kubernetes.io/job-name",
                          "controller-uid", "jobset.sigs.k8s.io/jobset-name"])
_small = st.dictionaries(_names, st.sampled_from(["x", "y", "0", "7"]), max_size=4)
_env = st.lists(st.fixed_dictionaries({"name": st.sampled_from(["A", "JOB_COMPLETION_INDEX", "B"]),
                                       "value": st.just("v")}), max_size=2)
_container = st.fixed_dictionaries({"name": st.sampled_from(["main", "side"]), "image": st.just("busybox")},
                                   optional={"env": _env, "resources": st.just({"requests": {"cpu": "1"}})})


@st.composite
def jobs(draw: Any) -> dict[str, Any]:
    template_meta: dict[str, Any] = {}
    if draw(st.booleans()):
        template_meta["labels"] = draw(_small)
    if draw(st.booleans()):
        template_meta["annotations"] = draw(_small)
    if draw(st.booleans()):
        template_meta["finalizers"] = draw(st.lists(st.sampled_from(
            ["example.com/keep", "batch.kubernetes.io/job-tracking"]), max_size=2))
    pod_spec: dict[str, Any] = {"restartPolicy": "Never", "containers": draw(st.lists(_container, min_size=1, max_size=2))}
    if draw(st.booleans()):
        pod_spec["initContainers"] = draw(st.lists(_container, max_size=2))
    if draw(st.booleans()):
        pod_spec["hostname"] = "given"
    if draw(st.booleans()):
        pod_spec["schedulingGroup"] = {"podGroupName": "old"}
    spec: dict[str, Any] = {"parallelism": 3, "completions": 5, "template": {"metadata": template_meta, "spec": pod_spec}}
    if draw(st.booleans()):
        spec["completionMode"] = "Indexed"
    name = draw(st.sampled_from(["pi", "a-rather-long-job-name-that-needs-cutting-to-fit-with-its-index-x"]))
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": "ns", "uid": "u-1"}, "spec": spec}


def _ordered(value: Any) -> str:
    return json.dumps(value)  # dict order kept: equal text means equal values in the same key order


@settings(max_examples=200, deadline=None)
@given(job=jobs(), indexes=st.lists(st.integers(min_value=0, max_value=120), min_size=1, max_size=4),
       grouped=st.booleans())
def test_builder_pods_equal_build_pod(job: dict[str, Any], indexes: list[int], grouped: bool) -> None:
    view = JobView(job)
    group = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
             "metadata": {"name": "pg", "uid": "g-1"}} if grouped else None
    if not view.indexed:
        indexes = [UNKNOWN_INDEX] * len(indexes)
    template_before = _ordered(job)
    builder = PodBuilder(view, group)
    built = [builder.build(index) for index in indexes]
    for index, pod in zip(indexes, built, strict=True):
        assert _ordered(pod) == _ordered(build_pod(view, index, pod_group=group))
    assert _ordered(job) == template_before  # the Job's template is left alone
    # Each pod is its own tree: admission mutates one without touching the others.
    for pod in built:
        pod["metadata"]["labels"]["touched"] = "yes"
        pod["spec"]["containers"][0]["image"] = "changed"
    for index, pod in zip(indexes, built, strict=True):
        del pod["metadata"]["labels"]["touched"]
        pod["spec"]["containers"][0]["image"] = build_pod(view, index, pod_group=group)["spec"]["containers"][0]["image"]
        assert _ordered(pod) == _ordered(build_pod(view, index, pod_group=group))


def test_failure_counts_build_each_pod() -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi", "namespace": "ns", "uid": "u"},
           "spec": {"completionMode": "Indexed", "completions": 2, "backoffLimitPerIndex": 1,
                    "template": {"spec": {"containers": [{"name": "main"}]}}}}
    view = JobView(job)
    pod = PodBuilder(view, None).build(1, (2, 1))
    assert _ordered(pod) == _ordered(build_pod(view, 1, failure_counts=(2, 1)))
