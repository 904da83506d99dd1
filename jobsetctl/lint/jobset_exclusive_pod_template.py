"""``jobset-exclusive-pod-template``: exclusive-placement annotations on a pod template, where the JobSet
controller does not read them.

``alpha.jobset.sigs.k8s.io/exclusive-topology`` and ``alpha.jobset.sigs.k8s.io/node-selector`` belong on the
JobSet or on a replicated job's ``template.metadata`` (jobset ``api/jobset/v1alpha2/jobset_types.go``,
``ExclusiveKey``). Written on the pod template (``template.spec.template.metadata``), they reach the pods but
not the child Job, and kubernetes-sigs/jobset @ 08dfbdfd reads the two levels in different places:

* the JobSet controller, ``constructJob`` (``pkg/controllers/jobset_controller.go``): the node-selector
  strategy (nodeSelector ``alpha.jobset.sigs.k8s.io/namespaced-job`` and a toleration of the
  ``alpha.jobset.sigs.k8s.io/no-schedule`` taint) only when the *Job's* annotations carry both keys; the Job's
  annotations are the replicated job's template annotations plus, by ``labelAndAnnotateObject``, the keys of
  the JobSet or of the replicated job, the node-selector key only from the level that has the topology key;
* the pod webhook (``pkg/webhooks/pod_webhook.go``, ``Default`` and ``ValidateCreate``) and the pod controller
  (``pkg/controllers/pod_controller.go``) read the *pod's* annotations: the pod template's own, overlaid by
  ``labelAndAnnotateObject``. A pod with the node-selector key is skipped; one with the topology key gets the
  leader/follower affinities.

So the topology key alone on the pod template works like on the replicated job (the webhook affinities; no
path reads the Job's topology key otherwise: ``tests/lint/test_exclusive_pod_template.py`` names the lines),
unless the JobSet has a topology key too, which overrides the pod template's (but not the replicated job's).
Any split of the node-selector strategy across the two levels loses it: both keys on the pod template
give no exclusive placement at all (the controller sees neither, the webhook skips the pods), the topology
key on the pod template with the node-selector key on the replicated job gives the webhook affinities instead
of the node selector, the reverse gives nothing. The lint compares the placement the pods get with the
placement after moving the pod template's keys to the replicated job's template (the fix), through the same
code ``render`` uses (:func:`jobsetctl.jobset.render.child_job`), and reports when they differ.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.jobset import api
from jobsetctl.jobset.podwebhook import exclusive_topology, uses_node_selector_strategy
from jobsetctl.jobset.render import child_job
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.field import go_quote, path_string
from jobsetctl.lint.support import CLUSTER_TRAINING_RUNTIME, JOBSET, TRAINING_RUNTIME, jobset_views, lint_doc
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define

#: The exclusive-placement annotations, in the order findings name them.
KEYS = (api.EXCLUSIVE_TOPOLOGY_KEY, api.NODE_SELECTOR_STRATEGY_KEY)

PASSING = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: exclusive
spec:
  replicatedJobs:
  - name: workers
    template:
      metadata:
        annotations:              # on the replicated job: the controller and the webhook see them
          alpha.jobset.sigs.k8s.io/exclusive-topology: cloud.google.com/gke-nodepool
          alpha.jobset.sigs.k8s.io/node-selector: "true"
      spec:
        template:
          spec:
            containers: [{name: worker, image: busybox}]
"""

FAILING = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: exclusive
spec:
  replicatedJobs:
  - name: workers
    template:
      spec:
        template:
          metadata:
            annotations:          # on the pod template: the controller never sees them
              alpha.jobset.sigs.k8s.io/exclusive-topology: cloud.google.com/gke-nodepool
              alpha.jobset.sigs.k8s.io/node-selector: "true"
          spec:
            containers: [{name: worker, image: busybox}]
"""

RULE = define(
    "jobset-exclusive-pod-template", Layer.LINT, Severity.WARNING,
    "Exclusive-placement annotations on a pod template, where the JobSet controller does not read them.",
    spec="jobset.md §3.2, §3.6, §3.7",
    doc=lint_doc(
        "The JobSet controller decides the node-selector strategy on the child Job's annotations (from the "
        "JobSet or the replicated job's template), the pod webhook on the pod's. Annotations on the pod "
        "template reach only the pods, so a strategy split across the two levels is lost.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({JOBSET, TRAINING_RUNTIME, CLUSTER_TRAINING_RUNTIME})
LOCAL_KINDS = KINDS  # looks at nothing but the object itself

#: (node-selector strategy applied by the controller, topology of the webhook's affinities or None).
Placement = tuple[bool, str | None]


def placement(js: Any, rjob: Any) -> Placement:
    """What the pods of ``rjob`` get, from the child Job the controller builds (index 0: all are alike)."""
    job = child_job(js, rjob, 0, restart_attempt=0)
    template = api.as_dict(api.as_dict(job.get("spec")).get("template"))
    pod = {"metadata": api.as_dict(template.get("metadata"))}
    node_selector = api.NAMESPACED_JOB_KEY in api.as_dict(api.as_dict(template.get("spec")).get("nodeSelector"))
    affinity = None if uses_node_selector_strategy(pod) else exclusive_topology(pod)
    return node_selector, affinity


def moved(rjob: Any) -> Any:
    """A copy of ``rjob`` with its pod template's exclusive-placement keys on its template instead (keys the
    template already has keep their value)."""
    out = copy.deepcopy(rjob)
    pod_meta = api.as_dict(api.pod_template(out).get("metadata"))
    pod_annotations = api.as_dict(pod_meta.get("annotations"))
    template = api.job_template(out)
    job_annotations = template.setdefault("metadata", {}).setdefault("annotations", {})
    for key in KEYS:
        if key in pod_annotations:
            job_annotations.setdefault(key, pod_annotations.pop(key))
    return out


def describe(where: Placement) -> str:
    node_selector, affinity = where
    parts = []
    if node_selector:
        parts.append(f"the controller's node selector ({api.NAMESPACED_JOB_KEY}) and toleration")
    if affinity is not None:
        parts.append(f"the pod webhook's leader/follower affinities on {go_quote(affinity)}")
    return " and ".join(parts) if parts else "no exclusive placement at all"


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    for view in jobset_views(obj):
        for index, rjob in api.enumerate_replicated_jobs(view.obj):
            on_pods = [key for key in KEYS if key in api.object_annotations(api.pod_template(rjob))]
            if not on_pods:
                continue
            actual, intended = placement(view.obj, rjob), placement(view.obj, moved(rjob))
            if actual == intended:
                continue  # e.g. the topology key alone: the pod webhook reads it from the pod either way
            at = view.rjob_at(index, "template", "spec", "template", "metadata", "annotations", on_pods[0])
            yield RULE.finding(
                f"{' and '.join(on_pods)} on the pod template of replicated job {go_quote(api.rjob_name(rjob))}: "
                "the JobSet controller reads the exclusive-placement annotations from the Job (the replicated job's "
                "template or the JobSet), the pod webhook from the pod, so these pods get "
                f"{describe(actual)} instead of {describe(intended)}",
                path=path_string(at), at=at,
                hint="move them to the replicated job's template.metadata.annotations (jobsetctl fix does)",
            )
