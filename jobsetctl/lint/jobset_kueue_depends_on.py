"""``jobset-kueue-depends-on``: a Kueue-queued JobSet (or TrainJob) whose replicated jobs run in stages.

jobset.md §5 (the seed worry, KEP-672 "Quota Management" and "Drawbacks", issue #672) and
scheduling.md §2.2, §2.6 and U11: Kueue admits a JobSet as one Workload with one podset per replicated
job and reserves quota for all podsets at once, including the stages whose Jobs ``dependsOn`` keeps
from being created yet. Their share of the quota (GPUs, TPUs) is held idle while the earlier stages
run, and is released only as replicated jobs succeed (``reclaimablePods``).

A TrainJob labelled for Kueue is admitted the same way, with a podset per replicated job of its
runtime, so a runtime with initializer stages (e.g. the torchtune runtimes) reserves the trainer's
resources while the initializers download.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.jobset import api
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.field import Path, go_quote, path_string
from jobsetctl.lint.support import (
    JOBSET,
    KUEUE_QUEUE_LABEL,
    TRAINJOB,
    group_kind,
    labels_of,
    lint_doc,
    plan_of,
    rjob_pods,
    runtime_label,
)
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define

PASSING = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: queued
  labels:
    kueue.x-k8s.io/queue-name: team-a
spec:
  replicatedJobs:                  # one stage: everything reserved runs
  - name: workers
    replicas: 4
    template:
      spec:
        template:
          spec:
            containers: [{name: worker, image: busybox}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: team-a                     # the queue exists (else kueue-local-queue-missing)
spec:
  clusterQueue: research
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: research
spec:
  namespaceSelector: {}
"""

FAILING = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: queued
  labels:
    kueue.x-k8s.io/queue-name: team-a
spec:
  replicatedJobs:
  - name: prepare
    template:
      spec:
        template:
          spec:
            containers: [{name: prepare, image: busybox}]
  - name: workers                  # reserved at admission, idle while "prepare" runs
    replicas: 4
    dependsOn: [{name: prepare, status: Complete}]
    template:
      spec:
        template:
          spec:
            containers: [{name: worker, image: busybox}]
"""

RULE = define(
    "jobset-kueue-depends-on", Layer.LINT, Severity.WARNING,
    "A Kueue-queued JobSet/TrainJob with dependsOn stages: Kueue reserves quota for every stage at once.",
    spec="jobset.md §5; scheduling.md §2.6, U11",
    doc=lint_doc(
        "Kueue admits the whole JobSet as one workload: the quota of stages that wait in dependsOn is "
        "reserved at admission and held idle while the earlier stages run.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({JOBSET, TRAINJOB})
LOCAL_KINDS = frozenset({JOBSET})  # a TrainJob needs its runtime, looked up among the inputs

_LABEL_AT: Path = ("metadata", "labels", KUEUE_QUEUE_LABEL)


def _waiting(js: Any) -> tuple[list[str], int]:
    """Replicated jobs with a non-empty dependsOn, and how many pods they hold."""
    staged = [rjob for rjob in api.replicated_jobs(js) if api.depends_on(rjob)]
    return [api.rjob_name(rjob) for rjob in staged], sum(rjob_pods(rjob) for rjob in staged)


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    queue = labels_of(obj).get(KUEUE_QUEUE_LABEL)
    if not isinstance(queue, str) or not queue:
        return
    if group_kind(obj) == JOBSET:
        jobset: Any = obj
        source = "this JobSet"
    else:
        plan = plan_of(obj, ctx)
        if plan is None or plan.jobset is None:
            return
        jobset = plan.jobset
        source = f"the JobSet of {runtime_label(plan)}"
    waiting, pods = _waiting(jobset)
    if not waiting:
        return
    yield RULE.finding(
        f"Kueue (queue {go_quote(queue)}) admits {source} as one workload and reserves quota for every "
        f"replicated job at once: the {pods} pod(s) of {', '.join(go_quote(n) for n in waiting)}, which wait in "
        "dependsOn, hold their resources idle while the earlier stages run",
        path=path_string(_LABEL_AT), at=_LABEL_AT,
        hint="accept the idle reservation, or run the stages as separate workloads (KEP-672 Quota Management)",
    )
