"""``jobset-startup-in-order``: the deprecated ``startupPolicy: InOrder``.

jobset.md §1.2 (``startupPolicy`` is deprecated in favour of ``dependsOn``) and §4.3/§4.4. InOrder
still works; ``dependsOn`` with ``status: Ready`` on each replicated job after the first expresses the
same order, also behaves sensibly when the JobSet is created suspended (InOrder creates every Job at
once then), and is the API that gets new features. A note, not a warning: nothing breaks today.
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
  name: ordered
spec:
  replicatedJobs:
  - name: driver
    template:
      spec:
        template:
          spec:
            containers: [{name: driver, image: busybox}]
  - name: workers
    dependsOn: [{name: driver, status: Ready}]
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
  name: ordered
spec:
  startupPolicy: {startupPolicyOrder: InOrder}   # deprecated
  replicatedJobs:
  - name: driver
    template:
      spec:
        template:
          spec:
            containers: [{name: driver, image: busybox}]
  - name: workers
    template:
      spec:
        template:
          spec:
            containers: [{name: worker, image: busybox}]
"""

RULE = define(
    "jobset-startup-in-order", Layer.LINT, Severity.INFO,
    "startupPolicy InOrder is deprecated; dependsOn (status Ready) expresses the same order.",
    spec="jobset.md §1.2, §4.3, §4.4",
    doc=lint_doc(
        "startupPolicy is deprecated in favour of dependsOn. InOrder still works, so this is a note.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({JOBSET, TRAINING_RUNTIME, CLUSTER_TRAINING_RUNTIME})
LOCAL_KINDS = KINDS  # looks at nothing but the object itself


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    for view in jobset_views(obj):
        policy = api.spec(view.obj).get("startupPolicy")
        if api.as_dict(policy).get("startupPolicyOrder") != api.StartupPolicyOrder.IN_ORDER.value:
            continue
        rjobs = api.replicated_jobs(view.obj)
        if any(api.depends_on(rjob) is not None for rjob in rjobs):
            continue  # CEL already rejects InOrder together with dependsOn
        names = [api.rjob_name(rjob) for rjob in rjobs]
        suggestion = (
            f"add dependsOn: [{{name: {names[0]}, status: Ready}}] to {go_quote(names[1])} (and so on down the list)"
            if len(names) > 1 else "remove startupPolicy"
        )
        at = view.at("spec", "startupPolicy", "startupPolicyOrder")
        yield RULE.finding(
            "startupPolicy InOrder is deprecated in favour of dependsOn", path=path_string(at), at=at, hint=suggestion,
        )
