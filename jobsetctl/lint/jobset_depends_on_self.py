"""``jobset-depends-on-self``: a replicated job that lists itself in ``dependsOn``.

jobset.md §4.4 quirk and §6 #2: the webhook adds a replicated job's name to the names "seen so far"
before it checks that job's own ``dependsOn`` (§2.2 #9), so a self-dependency is accepted (except on
the first replicated job, which may not have ``dependsOn`` at all). The controller creates a
replicated job only when its dependencies are met, which this one's never is: its Jobs are never
created, nor those of the replicated jobs that wait for it, and the JobSet never completes.
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
    jobset_views,
    lint_doc,
    names_list,
    waits_for,
)
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define

PASSING = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: stages
spec:
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
  name: stages
spec:
  replicatedJobs:
  - name: prepare
    template:
      spec:
        template:
          spec:
            containers: [{name: prepare, image: busybox}]
  - name: train
    dependsOn: [{name: train, status: Complete}]   # itself: never met
    template:
      spec:
        template:
          spec:
            containers: [{name: train, image: busybox}]
"""

RULE = define(
    "jobset-depends-on-self", Layer.LINT, Severity.WARNING,
    "A replicated job depends on itself: it is accepted but its Jobs are never created.",
    spec="jobset.md §4.4, §6 #2",
    doc=lint_doc(
        "The webhook accepts a replicated job that names itself in dependsOn, but that dependency can "
        "never be met, so the replicated job (and everything waiting for it) never starts.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({JOBSET, TRAINING_RUNTIME, CLUSTER_TRAINING_RUNTIME})
LOCAL_KINDS = KINDS  # looks at nothing but the object itself


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    for view in jobset_views(obj):
        closure = waits_for(view.obj)
        for index, rjob in api.enumerate_replicated_jobs(view.obj):
            if index == 0:
                continue  # jobset-depends-on-first already rejects any dependsOn here
            name = api.rjob_name(rjob)
            for item_index, item in enumerate(api.depends_on(rjob) or []):
                if item.get("name") != name:
                    continue
                blocked = sorted(other for other, deps in closure.items() if other != name and name in deps)
                also = f", nor those of {names_list(blocked)} that wait for it" if blocked else ""
                at = view.rjob_at(index, "dependsOn", item_index, "name")
                yield RULE.finding(
                    f"replicated job {go_quote(name)} depends on itself: the dependency is never met, so its "
                    f"Jobs are never created{also}",
                    path=path_string(at), at=at,
                    hint="depend on an earlier replicated job instead",
                )
