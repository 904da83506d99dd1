"""``jobset-success-any-depends-on``: an ``Any`` success policy that ends a staged JobSet early.

jobset.md §4.5 (quirk: "``Any`` with no targets together with dependsOn completes the JobSet as soon as
the first stage finishes; later stages are never created") and §5 (policy compatibility table:
"allowed but usually wrong"). The success policy is evaluated on every pass with a succeeded Job:
``Any`` needs one successful Job of a targeted replicated job (any, without targets), and the JobSet
then completes and its remaining Jobs are deleted.

Reported:

* ``Any`` without targets and at least one ``dependsOn``: the first Job to succeed anywhere ends the
  run, so stages that wait for a stage to *Complete* are never created;
* ``Any`` with targets, where another replicated job waits (``status: Complete``) for a target: the
  target's first successful Job completes the JobSet before the waiting job is created.

A ``Ready`` dependency on a target is a common, correct pattern (workers wait for the driver to be
ready; the driver's success ends the run) and is not reported.
"""

from __future__ import annotations

from collections.abc import Iterator

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.jobset import api
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.field import go_quote, path_string
from jobsetctl.lint.support import (
    CLUSTER_TRAINING_RUNTIME,
    JOBSET,
    TRAINING_RUNTIME,
    dependencies,
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
  name: pipeline
spec:
  successPolicy:
    operator: Any
    targetReplicatedJobs: [train]   # the last stage decides
  replicatedJobs:
  - name: prepare
    template:
      spec:
        template:
          spec:
            containers: [{name: prepare, image: busybox}]
  - name: train
    dependsOn: [{name: prepare, status: Complete}]
    template:
      spec:
        template:
          spec:
            containers: [{name: train, image: busybox}]
"""

FAILING = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: pipeline
spec:
  successPolicy:
    operator: Any                   # no targets: "prepare" succeeding ends the JobSet
  replicatedJobs:
  - name: prepare
    template:
      spec:
        template:
          spec:
            containers: [{name: prepare, image: busybox}]
  - name: train
    dependsOn: [{name: prepare, status: Complete}]
    template:
      spec:
        template:
          spec:
            containers: [{name: train, image: busybox}]
"""

RULE = define(
    "jobset-success-any-depends-on", Layer.LINT, Severity.WARNING,
    "successPolicy Any completes a staged (dependsOn) JobSet before its later stages run.",
    spec="jobset.md §4.5, §5",
    doc=lint_doc(
        "The first successful Job of a targeted replicated job (any replicated job, without targets) "
        "completes the JobSet, so a stage that waits for that job to Complete is never created.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({JOBSET, TRAINING_RUNTIME, CLUSTER_TRAINING_RUNTIME})
LOCAL_KINDS = KINDS  # looks at nothing but the object itself


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    for view in jobset_views(obj):
        if api.as_dict(api.spec(view.obj).get("successPolicy")).get("operator") != api.SuccessOperator.ANY.value:
            continue
        deps = dependencies(view.obj)
        staged = [name for name, items in deps.items() if items]
        if not staged:
            continue
        targets = api.success_targets(view.obj)
        if not targets:
            never = [name for name, items in deps.items() if any(status == "Complete" for _, status in items)]
            consequence = (
                f"the replicated jobs that wait for a stage to Complete ({names_list(never)}) are never created"
                if never else f"the later stages ({names_list(staged)}) are stopped when it does"
            )
            at = view.at("spec", "successPolicy", "operator")
            yield RULE.finding(
                f"successPolicy Any without targetReplicatedJobs completes {what(view)} as soon as any Job "
                f"succeeds, and {consequence}",
                path=path_string(at), at=at,
                hint="name the last stage in successPolicy.targetReplicatedJobs, or use operator All",
            )
            continue
        replicas = {api.rjob_name(rjob): api.replicas(rjob) for rjob in api.replicated_jobs(view.obj)}
        for index, target in enumerate(targets):
            if replicas.get(target, 0) <= 0:
                continue  # no Job of it can succeed
            waiting = [name for name, items in deps.items() if (target, "Complete") in items]
            if not waiting:
                continue
            at = view.at("spec", "successPolicy", "targetReplicatedJobs", index)
            yield RULE.finding(
                f"successPolicy Any completes {what(view)} when the first Job of {go_quote(target)} succeeds, "
                f"but {names_list(waiting)} wait for {go_quote(target)} to Complete (dependsOn): they are "
                "never created",
                path=path_string(at), at=at,
                hint="target the last stage instead, or use operator All",
            )
