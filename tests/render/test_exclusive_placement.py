"""Exclusive placement as the pods carry it (jobsetctl/jobset/render.py ``pod_placement_annotations``,
``leader_first_topology``, ``pods_before_leader``), against kubernetes-sigs/jobset @ 08dfbdfd.

* ``pkg/controllers/jobset_controller.go`` ``constructJob`` calls ``labelAndAnnotateObject`` twice, on the
  Job and on ``&job.Spec.Template``; that function starts from the object's own annotations
  (``maps.Copy(annotations, obj.GetAnnotations())``) and then writes the JobSet's exclusive-topology key (with
  its node-selector key) and the replicated job template's (with its node-selector key) over them. So an
  ``alpha.jobset.sigs.k8s.io/exclusive-topology`` written on the pod template stays on the pods (unless the
  JobSet or the replicated job sets one), and never reaches the Job. ``jobset_controller_test.go`` ``makeJob``
  builds its expected pods the same way: ``PodAnnotations(args.podAnnotations)`` then
  ``PodAnnotations(annotations)``.
* ``pkg/webhooks/pod_webhook.go`` ``Default`` (skip with the node-selector key, else ``patchPod`` with the
  topology key) and ``ValidateCreate`` (a follower is refused until its leader is scheduled) read the *pod's*
  annotations. A topology key on the pod template alone therefore holds the followers back exactly like one
  on the replicated job.

render already built the pods this way; what did not follow was the leader-first decision (and the lints
built on it), which looked at the Job-level keys only.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from jobsetctl.jobset import api
from jobsetctl.jobset.render import (
    child_job,
    leader_first_topology,
    placement_annotations,
    pod_exclusive_topology_at,
    pod_placement_annotations,
    pods_before_leader,
)
from tests.lint.support import lints

E, N = api.EXCLUSIVE_TOPOLOGY_KEY, api.NODE_SELECTOR_STRATEGY_KEY
LEVELS = ("jobset", "rjob", "pod")
#: What each level may hold: nothing, the topology key, or the topology key with the node-selector flag, or
#: the flag alone.
CHOICES: list[dict[str, str]] = [{}, {E: "rack"}, {E: "zone", N: "true"}, {N: "true"}]


def jobset(js: dict[str, str], rjob: dict[str, str], pod: dict[str, str], mode: str | None = None,
           pods: int = 2) -> dict[str, Any]:
    job_spec: dict[str, Any] = {
        "parallelism": pods, "completions": pods,
        "template": {"metadata": {"annotations": {"x": "y", **pod}},
                     "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}
    if mode is not None:
        job_spec["completionMode"] = mode
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": "js", "namespace": "default", "annotations": dict(js)},
            "spec": {"replicatedJobs": [{"name": "workers", "replicas": 2,
                                         "template": {"metadata": {"annotations": dict(rjob)}, "spec": job_spec}}]}}


def exclusive_keys(annotations: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in annotations.items() if k in (E, N)}


@pytest.mark.parametrize(("js", "rjob", "pod"), list(itertools.product(CHOICES, repeat=3)),
                         ids=lambda level: "+".join(sorted(k.rpartition("/")[2] for k in level)) or "none")
def test_pod_placement_is_what_the_rendered_pods_carry(js: dict[str, str], rjob: dict[str, str],
                                                      pod: dict[str, str]) -> None:
    # labelAndAnnotateObject on &job.Spec.Template (the pod's own keys, under the JobSet's and the replicated
    # job's) and on the Job (its template's keys, under the same overlay; the pod template's never reach it).
    obj = jobset(js, rjob, pod)
    [replicated] = obj["spec"]["replicatedJobs"]
    job = child_job(obj, replicated, 0, restart_attempt=0)
    assert exclusive_keys(job["spec"]["template"]["metadata"]["annotations"]) == pod_placement_annotations(obj, replicated)
    assert exclusive_keys(job["metadata"]["annotations"]) == {**rjob, **placement_annotations(obj, replicated)}


@pytest.mark.parametrize(("js", "rjob", "pod", "leader_first", "at"), [
    # The topology key on the pod template alone: the pods carry it, the webhook gates the followers.
    ({}, {}, {E: "rack"}, "rack", ("spec", "replicatedJobs", 0, "template", "spec", "template", "metadata",
                                   "annotations", E)),
    # The JobSet's key overrides the pod template's on the pods (labelAndAnnotateObject overlays it).
    ({E: "zone"}, {}, {E: "rack"}, "zone", ("metadata", "annotations", E)),
    # The replicated job's overrides both.
    ({E: "zone"}, {E: "block"}, {E: "rack"}, "block", ("spec", "replicatedJobs", 0, "template", "metadata",
                                                      "annotations", E)),
    # The node-selector flag on the pods makes the webhook skip them (pod_webhook.go Default, ValidateCreate).
    ({}, {}, {E: "rack", N: "true"}, None, ("spec", "replicatedJobs", 0, "template", "spec", "template",
                                            "metadata", "annotations", E)),
    ({}, {E: "rack"}, {N: "true"}, None, ("spec", "replicatedJobs", 0, "template", "metadata", "annotations", E)),
    # No topology key anywhere.
    ({}, {}, {N: "true"}, None, None),
])
def test_leader_first_follows_the_pods(js: dict[str, str], rjob: dict[str, str], pod: dict[str, str],
                                       leader_first: str | None, at: tuple[Any, ...] | None) -> None:
    obj = jobset(js, rjob, pod, pods=4)
    [replicated] = obj["spec"]["replicatedJobs"]
    assert leader_first_topology(obj, replicated) == leader_first
    assert pods_before_leader(obj, replicated, 4) == (1 if leader_first else 4)
    assert pod_exclusive_topology_at(obj, 0, replicated) == at


POD_TEMPLATE_KEY = """apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec:
  replicatedJobs:
  - name: workers
    template:
      spec:
        completionMode: NonIndexed
        parallelism: 2
        completions: 2
        template:
          metadata:
            annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: rack}
          spec:
            containers: [{name: c, image: busybox}]
"""


def test_non_indexed_jobs_with_the_key_on_the_pod_template_never_get_a_pod(tmp_path: Path) -> None:
    # pod_webhook.go ValidateCreate: NonIndexed pods have no completion index, so none is the leader and every
    # creation is refused; the key on the pod template is on the pods as well (jobset-exclusive-pod-template
    # raises nothing: moving the key would change nothing).
    assert lints(tmp_path, POD_TEMPLATE_KEY) == [(9, 9, "jobset-exclusive-non-indexed")]
