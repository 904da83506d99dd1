"""``jobset-max-restarts-negative``: a negative ``failurePolicy.maxRestarts``.

jobset.md §1.5: the CRD has no minimum for ``maxRestarts``; "a negative value is accepted and makes the
first failure terminal". The controller compares the counted restarts (0 at first) with
``maxRestarts`` and fails with ``ReachedMaxRestarts`` once they reach it (§4.6), which 0 ≥ -1 already
does.
"""

from __future__ import annotations

from collections.abc import Iterator

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.jobset import api
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.field import path_string
from jobsetctl.lint.support import CLUSTER_TRAINING_RUNTIME, JOBSET, TRAINING_RUNTIME, jobset_views, lint_doc
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define

PASSING = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: retries
spec:
  failurePolicy: {maxRestarts: 2}
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
  name: retries
spec:
  failurePolicy: {maxRestarts: -1}   # not "unlimited": no restart at all
  replicatedJobs:
  - name: workers
    template:
      spec:
        template:
          spec:
            containers: [{name: worker, image: busybox}]
"""

RULE = define(
    "jobset-max-restarts-negative", Layer.LINT, Severity.WARNING,
    "A negative failurePolicy.maxRestarts is accepted and means no counted restart at all (not unlimited).",
    spec="jobset.md §1.5, §4.6",
    doc=lint_doc(
        "The CRD sets no minimum: a negative maxRestarts is accepted, and the first counted failure fails "
        "the JobSet with reason ReachedMaxRestarts.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({JOBSET, TRAINING_RUNTIME, CLUSTER_TRAINING_RUNTIME})
LOCAL_KINDS = KINDS  # looks at nothing but the object itself


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    for view in jobset_views(obj):
        value = api.as_int(api.as_dict(api.failure_policy(view.obj)).get("maxRestarts"))
        if value is None or value >= 0:
            continue
        at = view.at("spec", "failurePolicy", "maxRestarts")
        yield RULE.finding(
            f"maxRestarts {value} is accepted but allows no restart: the first counted Job failure fails the "
            "JobSet (reason ReachedMaxRestarts); it does not mean unlimited",
            path=path_string(at), at=at,
            hint="use 0 for no restarts, or RestartJobSetAndIgnoreMaxRestarts rules for unlimited ones",
        )
