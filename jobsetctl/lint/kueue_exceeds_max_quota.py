"""``kueue-exceeds-max-quota``: a queued job that asks for more than its ClusterQueue can ever hold.

scheduling.md §2.2, §2.3 (pkg/scheduler/flavorassigner ``fitsResourceQuota``): a podset whose request of
a resource exceeds the most its ClusterQueue could ever give it in every flavor (nominal quota, plus the
borrowing limit inside a cohort) gets no flavor; the Workload stays pending with reason
``ExceedsMaxQuota`` and upstream's ``insufficient quota for ... > maximum capacity (...)`` for ever. The
arithmetic and its limits are in :mod:`jobsetctl.kueue.fit`.
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
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: 32
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
"""

PASSING = _QUEUES + """\
    replicas: 4                    # 4 pods x 8 CPUs: 32, the whole quota
    template:
      spec:
        template:
          spec:
            containers:
            - name: trainer
              image: registry.example.com/trainer:1.0
              resources:
                requests: {cpu: "8"}
"""

FAILING = _QUEUES + """\
    replicas: 8                    # 8 pods x 8 CPUs: 64, twice what the ClusterQueue has
    template:
      spec:
        template:
          spec:
            containers:
            - name: trainer
              image: registry.example.com/trainer:1.0
              resources:
                requests: {cpu: "8"}
"""

RULE = define(
    "kueue-exceeds-max-quota", Layer.LINT, Severity.WARNING,
    "A queued job asks for more than its ClusterQueue's nominal quota plus borrowing limit: ExceedsMaxQuota.",
    spec="scheduling.md §2.2, §2.3 (flavorassigner.go fitsResourceQuota)",
    doc=lint_doc(
        "Kueue never admits a workload that needs more of a resource than its ClusterQueue could ever give "
        "it, even with the whole cohort idle: it stays pending with reason ExceedsMaxQuota.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({JOBSET, TRAINJOB, JOB})


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    config = ctx.kueue
    if config is None or (config.resources is not None and config.resources.transformations):
        return
    queued = fit.queued(obj, ctx)
    if queued is None:
        return
    for found in fit.exceeds_max_quota(queued, config.gate("TopologyAwareScheduling")):
        at = found.view.at
        yield RULE.finding(
            fit.NO_FLAVOR.format(pod_set=found.view.name, reasons=", ".join(found.reasons)),
            path=path_string(at), at=at,
            hint=f"ClusterQueue {queued.cluster_queue_name} ({'; '.join(found.bounds)}): the Workload stays "
                 "pending for ever (reason ExceedsMaxQuota); ask for less or raise the quota",
        )
