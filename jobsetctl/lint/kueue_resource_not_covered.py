"""``kueue-resource-not-covered``: a queued job requests a resource its ClusterQueue does not cover.

scheduling.md §2.2 (pkg/scheduler/flavorassigner ``findFlavorForPodSets``): every resource a podset
requests must be in a ``coveredResources`` list of the ClusterQueue (``excludeResourcePrefixes`` of the
Configuration aside, and everything under ``quotaCheckStrategy: IgnoreUndeclared``); a podset asking for one that is not gets ``resource <r> unavailable in
ClusterQueue`` and the Workload never gets a flavor. A common case: ``ephemeral-storage`` or a GPU asked
for in a queue that only covers CPU and memory.
"""

from __future__ import annotations

from collections.abc import Iterator

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.field import path_string
from jobsetctl.kueue import fit
from jobsetctl.lint.support import JOB, JOBSET, TRAINJOB, lint_doc
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define

_QUEUES = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: default-flavor
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: research
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: 64
      - name: memory
        nominalQuota: 256Gi
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: team-a
spec:
  clusterQueue: research
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: pretrain
  labels:
    kueue.x-k8s.io/queue-name: team-a
spec:
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        template:
          spec:
            containers:
            - name: trainer
              image: registry.example.com/trainer:1.0
              resources:
"""

PASSING = _QUEUES + """\
                requests: {cpu: "8", memory: 32Gi}
"""

FAILING = _QUEUES + """\
                requests: {cpu: "8", memory: 32Gi}
                limits: {nvidia.com/gpu: "8"}    # the ClusterQueue covers no GPUs
"""

RULE = define(
    "kueue-resource-not-covered", Layer.LINT, Severity.WARNING,
    "A queued job requests a resource its ClusterQueue does not cover: the Workload never gets a flavor.",
    spec="scheduling.md §2.2 (flavorassigner.go findFlavorForPodSets)",
    doc=lint_doc(
        "Kueue assigns a flavor per requested resource from the resource group that covers it; a resource "
        "no group covers is 'unavailable in ClusterQueue' and the workload stays pending for ever.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({JOBSET, TRAINJOB, JOB})


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    config = ctx.kueue
    if config is not None and config.resources is not None and config.gate("QuotaCheckStrategy") \
            and config.resources.quota_check_strategy == "IgnoreUndeclared":
        return  # IgnoreUndeclaredResources: requests no resource group declares are left out
    queued = fit.queued(obj, ctx)
    if queued is None:
        return
    for view, resource in fit.uncovered(queued):
        yield RULE.finding(
            fit.NO_FLAVOR.format(pod_set=view.name, reasons=fit.UNAVAILABLE.format(resource=resource)),
            path=path_string(view.at), at=view.at,
            hint=f"ClusterQueue {queued.cluster_queue_name} covers "
                 f"{', '.join(r for g in queued.groups for r in g.covered) or 'no resource'}: add {resource} to a "
                 "resource group, stop requesting it, or exclude it (resources.excludeResourcePrefixes)",
        )
