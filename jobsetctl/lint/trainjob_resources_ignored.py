"""``trainjob-resources-ignored``: ``trainer.resourcesPerNode`` against a runtime without ``mlPolicy``.

trainer.md §3.6 and §3.16 #10: since v2.3.0 the JobSet builder no longer writes resources; the only
place ``resourcesPerNode`` reaches the pods is the merge in ``newRuntimeInfo``, which requires a non-nil
``mlPolicy``. Against a runtime without one (PlainML), the requested CPUs, memory and GPUs are silently
not applied: the pods run with the runtime's resources. ``mlPolicy: {numNodes: 1}`` is enough to enable
the merge.
"""

from __future__ import annotations

from collections.abc import Iterator

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.jobset import api
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.field import Path, path_string
from jobsetctl.lint.support import TRAINJOB, lint_doc, plan_of, runtime_label, trainer_section
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define

_RUNTIME = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: plain
spec:
{policy}  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels: {{trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              spec:
                containers: [{{name: node, image: python:3.11}}]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: job
spec:
  runtimeRef: {{kind: TrainingRuntime, name: plain}}
  trainer:
    resourcesPerNode:
      limits: {{cpu: "8", memory: 32Gi}}
"""

PASSING = _RUNTIME.format(policy="  mlPolicy: {numNodes: 1}        # any mlPolicy enables the merge\n")
FAILING = _RUNTIME.format(policy="  # no mlPolicy: resourcesPerNode is silently dropped\n")

RULE = define(
    "trainjob-resources-ignored", Layer.LINT, Severity.WARNING,
    "trainer.resourcesPerNode is ignored because the runtime has no mlPolicy.",
    spec="trainer.md §3.6, §3.16 #10",
    doc=lint_doc(
        "Trainer merges resourcesPerNode into the node container only when the runtime has an mlPolicy "
        "(any kind). Without one, the pods keep the runtime's resources.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({TRAINJOB})


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    trainer = trainer_section(obj)
    if trainer is None or not isinstance(trainer.get("resourcesPerNode"), dict):
        return
    plan = plan_of(obj, ctx)
    if plan is None or isinstance(api.spec(plan.runtime).get("mlPolicy"), dict):
        return
    at: Path = ("spec", "trainer", "resourcesPerNode")
    yield RULE.finding(
        f"trainer.resourcesPerNode is ignored: {runtime_label(plan)} has no mlPolicy, and Trainer merges "
        "resourcesPerNode into the node container only when the runtime has one",
        path=path_string(at), at=at,
        hint="add mlPolicy: {numNodes: 1} to the runtime, or set the resources in the runtime's template",
    )
