"""``jobset-success-all-zero-replicas``: an ``All`` success policy whose targets have no replicas.

jobset.md §4.5 quirk: "``All`` whose targets only have replicas 0 needs 0, so it completes on the first
success of any Job". The policy is evaluated once some Job succeeded; it needs Σ replicas of the
targets successful Jobs, which is 0, so the first successful Job of *any* replicated job completes the
JobSet and the other Jobs are deleted.
"""

from __future__ import annotations

from collections.abc import Iterator

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.jobset import api
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.field import path_string
from jobsetctl.lint.support import (
    CLUSTER_TRAINING_RUNTIME,
    JOBSET,
    TRAINING_RUNTIME,
    jobset_views,
    lint_doc,
    names_list,
    what,
)
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define

PASSING = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: success
spec:
  successPolicy: {operator: All, targetReplicatedJobs: [workers]}
  replicatedJobs:
  - name: driver
    template:
      spec:
        template:
          spec:
            containers: [{name: driver, image: busybox}]
  - name: workers
    replicas: 2
    template:
      spec:
        template:
          spec:
            containers: [{name: worker, image: busybox}]
"""

FAILING = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: success
spec:
  successPolicy: {operator: All, targetReplicatedJobs: [workers]}
  replicatedJobs:
  - name: driver
    template:
      spec:
        template:
          spec:
            containers: [{name: driver, image: busybox}]
  - name: workers
    replicas: 0                   # All of nothing: the driver's success completes the JobSet
    template:
      spec:
        template:
          spec:
            containers: [{name: worker, image: busybox}]
"""

RULE = define(
    "jobset-success-all-zero-replicas", Layer.LINT, Severity.WARNING,
    "successPolicy All whose targets all have replicas 0: the first successful Job of any kind completes the JobSet.",
    spec="jobset.md §4.5",
    doc=lint_doc(
        "All needs as many successful Jobs as its targets have replicas; with 0 replicas that is 0, so the "
        "JobSet completes on the first Job success anywhere.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({JOBSET, TRAINING_RUNTIME, CLUSTER_TRAINING_RUNTIME})
LOCAL_KINDS = KINDS  # looks at nothing but the object itself


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    for view in jobset_views(obj):
        policy = api.as_dict(api.spec(view.obj).get("successPolicy"))
        targets = api.success_targets(view.obj)
        if policy.get("operator") != api.SuccessOperator.ALL.value or not targets:
            continue
        replicas = {api.rjob_name(rjob): api.replicas(rjob) for rjob in api.replicated_jobs(view.obj)}
        if any(target not in replicas for target in targets):
            continue  # jobset-success-policy-target rejects it
        if sum(replicas[target] for target in targets) > 0 or not any(n > 0 for n in replicas.values()):
            continue
        at = view.at("spec", "successPolicy", "targetReplicatedJobs")
        yield RULE.finding(
            f"successPolicy All targets only {names_list(targets)}, which have replicas 0: it needs 0 successful "
            f"Jobs, so the first Job to succeed in any replicated job completes {what(view)}",
            path=path_string(at), at=at,
            hint="target replicated jobs that run, or give the targets replicas",
        )
