"""``jobset-failure-policy-no-restarts``: a failure policy that can never restart anything.

jobset.md §1.5, §4.6 and §6 #7. ``maxRestarts`` defaults to 0, and ``RestartJobSet`` (the action of a
failure no rule matches) and ``RestartJob`` count against it: with 0 the first counted failure fails the
JobSet with reason ``ReachedMaxRestarts``. ``failurePolicy: {}`` therefore behaves like no failure policy
at all, only with another reason, and a rule list that restarts without a ``maxRestarts`` restarts
nothing.

Reported when no rule has an ``...AndIgnoreMaxRestarts`` action (those restart regardless) and either
``maxRestarts`` is not written, or it is written as 0 while a rule asks for a counted restart. A
negative value is ``jobset-max-restarts-negative``.
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
    what,
)
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define

A = api.FailurePolicyAction
#: Actions that restart without counting against maxRestarts.
UNCOUNTED = frozenset({A.RESTART_JOBSET_AND_IGNORE_MAX_RESTARTS.value, A.RESTART_JOB_AND_IGNORE_MAX_RESTARTS.value})
#: Actions that restart and count against maxRestarts.
COUNTED = frozenset({A.RESTART_JOBSET.value, A.RESTART_JOB.value})

PASSING = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: resilient
spec:
  failurePolicy:
    maxRestarts: 3
  replicatedJobs:
  - name: workers
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
  name: resilient
spec:
  failurePolicy: {}                # maxRestarts 0: the first failure is terminal
  replicatedJobs:
  - name: workers
    template:
      spec:
        template:
          spec:
            containers: [{name: worker, image: busybox}]
"""

RULE = define(
    "jobset-failure-policy-no-restarts", Layer.LINT, Severity.WARNING,
    "A failurePolicy that never restarts: maxRestarts is 0 and no rule ignores it (e.g. failurePolicy: {}).",
    spec="jobset.md §4.6, §6 #7",
    doc=lint_doc(
        "maxRestarts defaults to 0, so a failure policy without it (and without an ...AndIgnoreMaxRestarts "
        "rule) fails the JobSet on the first Job failure, with reason ReachedMaxRestarts.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({JOBSET, TRAINING_RUNTIME, CLUSTER_TRAINING_RUNTIME})
LOCAL_KINDS = KINDS  # looks at nothing but the object itself


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    for view in jobset_views(obj):
        policy = api.failure_policy(view.obj)
        if policy is None:
            continue
        actions = {api.as_dict(rule).get("action") for rule in api.failure_rules(view.obj)}
        if actions & UNCOUNTED:
            continue
        written = api.as_int(policy.get("maxRestarts"))
        if written is None:
            at = view.at("spec", "failurePolicy")
            yield RULE.finding(
                f"the failurePolicy of {what(view)} sets no maxRestarts (default 0) and no rule ignores it: the "
                "first Job failure fails the JobSet (reason ReachedMaxRestarts), as if there were no failure "
                "policy",
                path=path_string(at), at=at,
                hint="set failurePolicy.maxRestarts to the number of restarts you want",
            )
        elif written == 0 and actions & COUNTED:
            at = view.at("spec", "failurePolicy", "maxRestarts")
            counted = ", ".join(sorted(str(a) for a in actions & COUNTED))
            yield RULE.finding(
                f"maxRestarts is 0, so the {counted} rule(s) never restart: each counted restart is refused and "
                "the JobSet fails with reason ReachedMaxRestarts",
                path=path_string(at), at=at,
                hint="raise maxRestarts, or use the ...AndIgnoreMaxRestarts actions",
            )
