"""``jobset-exclusive-non-indexed``: exclusive placement on a replicated job with NonIndexed Jobs.

jobset.md §3.6 and §5 ("exclusive-topology + NonIndexed completionMode: not validated; followers
never get a leader, so they never start"). With ``alpha.jobset.sigs.k8s.io/exclusive-topology`` on the
pods (from the JobSet, a replicated job's template or the pod template itself: the webhooks read the pod's
annotations, :func:`jobsetctl.jobset.render.pod_placement_annotations`), the pod webhooks treat the pod whose
``batch.kubernetes.io/job-completion-index`` annotation is ``"0"`` as the leader and reject every other
pod until the leader is scheduled. A NonIndexed Job's pods carry no completion index, so every pod is a
follower without a leader: each creation is denied and the Job never gets a pod.

The node-selector strategy (``alpha.jobset.sigs.k8s.io/node-selector``) skips the pod webhooks and is
not affected. An absent ``completionMode`` is defaulted to Indexed by the JobSet webhook.
"""

from __future__ import annotations

from collections.abc import Iterator

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.jobset import api
from jobsetctl.jobset.render import pod_placement_annotations
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.field import go_quote, path_string
from jobsetctl.lint.support import CLUSTER_TRAINING_RUNTIME, JOBSET, TRAINING_RUNTIME, jobset_views, lint_doc
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define

NON_INDEXED = "NonIndexed"

PASSING = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: exclusive
  annotations:
    alpha.jobset.sigs.k8s.io/exclusive-topology: cloud.google.com/gke-nodepool
spec:
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        parallelism: 2
        completions: 2          # Indexed by default: pod 0 leads
        template:
          spec:
            containers: [{name: worker, image: busybox}]
"""

FAILING = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: exclusive
  annotations:
    alpha.jobset.sigs.k8s.io/exclusive-topology: cloud.google.com/gke-nodepool
spec:
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        completionMode: NonIndexed   # no completion index: no leader
        parallelism: 2
        completions: 2
        template:
          spec:
            containers: [{name: worker, image: busybox}]
"""

RULE = define(
    "jobset-exclusive-non-indexed", Layer.LINT, Severity.WARNING,
    "Exclusive placement on NonIndexed Jobs: no pod is ever the leader, so every pod creation is denied.",
    spec="jobset.md §3.6, §5",
    doc=lint_doc(
        "Exclusive placement schedules each child Job's pod with completion index 0 first and rejects the "
        "other pods until it is scheduled. NonIndexed pods have no index, so they never get a leader.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({JOBSET, TRAINING_RUNTIME, CLUSTER_TRAINING_RUNTIME})
LOCAL_KINDS = KINDS  # looks at nothing but the object itself


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    for view in jobset_views(obj):
        for index, rjob in api.enumerate_replicated_jobs(view.obj):
            if api.completion_mode(rjob) != NON_INDEXED:
                continue
            placement = pod_placement_annotations(view.obj, rjob)
            topology = placement.get(api.EXCLUSIVE_TOPOLOGY_KEY)
            if topology is None or api.NODE_SELECTOR_STRATEGY_KEY in placement:
                continue
            at = view.rjob_at(index, "template", "spec", "completionMode")
            yield RULE.finding(
                f"replicated job {go_quote(api.rjob_name(rjob))} uses exclusive placement "
                f"({api.EXCLUSIVE_TOPOLOGY_KEY}: {topology}) with NonIndexed Jobs: the pod webhook admits other "
                "pods only after the pod with completion index 0 is scheduled, and NonIndexed pods have no "
                "index, so no pod of these Jobs is ever created",
                path=path_string(at), at=at,
                hint="use completionMode Indexed (the default)",
            )
