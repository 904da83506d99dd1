"""``runtime-gang-both-schedulers``: a runtime that asks for Coscheduling and Volcano gangs at once.

trainer.md §1.5 (note: "No CEL enforces 'only one of coscheduling/volcano' although the doc says so;
if both are set both plugins run") and §3.16 #7: every TrainJob then gets two PodGroups, the
scheduler-plugins one (pods labelled ``scheduling.x-k8s.io/pod-group``) and Volcano's (pods annotated
``scheduling.k8s.io/group-name``). A pod is scheduled by one scheduler only (its ``schedulerName``), so
one of the two gangs is never honoured and its PodGroup never leaves Pending.
"""

from __future__ import annotations

from collections.abc import Iterator

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.jobset import api
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.field import Path, path_string
from jobsetctl.lint.support import CLUSTER_TRAINING_RUNTIME, TRAINING_RUNTIME, lint_doc
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define

PASSING = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-gang
spec:
  mlPolicy: {numNodes: 2, torch: {}}
  podGroupPolicy:
    volcano: {}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                schedulerName: volcano
                containers: [{name: node, image: pytorch/pytorch}]
"""

FAILING = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-gang
spec:
  mlPolicy: {numNodes: 2, torch: {}}
  podGroupPolicy:                   # two gang schedulers: one PodGroup is never honoured
    coscheduling: {}
    volcano: {}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                containers: [{name: node, image: pytorch/pytorch}]
"""

RULE = define(
    "runtime-gang-both-schedulers", Layer.LINT, Severity.WARNING,
    "podGroupPolicy sets both coscheduling and volcano: both PodGroups are created, one scheduler ignores its own.",
    spec="trainer.md §1.5, §3.10, §3.16 #7",
    doc=lint_doc(
        "Nothing rejects both gang policies at once. Trainer then creates a scheduler-plugins PodGroup and "
        "a Volcano PodGroup for the same pods, which only one scheduler will ever schedule.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({TRAINING_RUNTIME, CLUSTER_TRAINING_RUNTIME})
LOCAL_KINDS = KINDS  # looks at nothing but the object itself


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    policy = api.as_dict(api.spec(obj).get("podGroupPolicy"))
    if not (isinstance(policy.get("coscheduling"), dict) and isinstance(policy.get("volcano"), dict)):
        return
    at: Path = ("spec", "podGroupPolicy")
    yield RULE.finding(
        "podGroupPolicy configures both coscheduling and volcano: every TrainJob gets a scheduler-plugins "
        "PodGroup and a Volcano PodGroup for the same pods, and the scheduler the pods do not use never "
        "schedules its gang",
        path=path_string(at), at=at,
        hint="keep the policy of the scheduler the pods' schedulerName names",
    )
