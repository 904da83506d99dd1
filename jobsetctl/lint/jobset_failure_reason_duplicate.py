"""``jobset-failure-reason-duplicate``: the same reason twice in ``onJobFailureReasons``.

jobset.md §1.5 and §6 #3: duplicates are accepted (the ``UniqueItems`` marker is malformed and never
reached the CRD). A repeated reason changes nothing, which is why it is only a note: it is usually a
typo for the reason that was meant (e.g. ``DeadlineExceeded`` next to ``BackoffLimitExceeded``).
"""

from __future__ import annotations

from collections.abc import Iterator

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.jobset import api
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.field import go_quote, path_string
from jobsetctl.lint.support import CLUSTER_TRAINING_RUNTIME, JOBSET, TRAINING_RUNTIME, jobset_views, lint_doc
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define

PASSING = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: reasons
spec:
  failurePolicy:
    maxRestarts: 3
    rules:
    - action: FailJobSet
      onJobFailureReasons: [BackoffLimitExceeded, DeadlineExceeded]
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
  name: reasons
spec:
  failurePolicy:
    maxRestarts: 3
    rules:
    - action: FailJobSet
      onJobFailureReasons: [BackoffLimitExceeded, BackoffLimitExceeded]
  replicatedJobs:
  - name: workers
    template:
      spec:
        template:
          spec:
            containers: [{name: worker, image: busybox}]
"""

RULE = define(
    "jobset-failure-reason-duplicate", Layer.LINT, Severity.INFO,
    "onJobFailureReasons repeats a reason (accepted, no effect; often a typo for another reason).",
    spec="jobset.md §1.5, §6 #3",
    doc=lint_doc(
        "Duplicate reasons are accepted and change nothing; the repeated entry was usually meant to be a "
        "different reason.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({JOBSET, TRAINING_RUNTIME, CLUSTER_TRAINING_RUNTIME})
LOCAL_KINDS = KINDS  # looks at nothing but the object itself


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    for view in jobset_views(obj):
        for rule_index, rule in enumerate(api.failure_rules(view.obj)):
            seen: set[str] = set()
            for index, reason in enumerate(api.as_list(api.as_dict(rule).get("onJobFailureReasons"))):
                if not isinstance(reason, str):
                    continue
                if reason in seen:
                    at = view.at("spec", "failurePolicy", "rules", rule_index, "onJobFailureReasons", index)
                    yield RULE.finding(
                        f"onJobFailureReasons lists {go_quote(reason)} more than once; the repetition has no effect",
                        path=path_string(at), at=at,
                    )
                seen.add(reason)
