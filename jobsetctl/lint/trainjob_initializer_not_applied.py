"""``trainjob-initializer-not-applied``: initializer settings that admission accepts and the build ignores.

trainer.md §3.16 #1 (with §2.4 J1–J6 and §3.9): admission finds the initializer job *by name*
(``dataset-initializer``, ``model-initializer``), the JobSet builder *by the Job-template label*
``trainer.kubeflow.org/trainjob-ancestor-step``. A runtime whose initializer job has the right name but
lacks the label passes admission, and the TrainJob's ``storageUri``, ``env`` and ``secretRef`` are never
injected: the initializer runs with whatever the runtime template says.
"""

from __future__ import annotations

from collections.abc import Iterator

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.jobset import api
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.field import Path, go_quote, path_string
from jobsetctl.lint.support import TRAINJOB, lint_doc, plan_of, runtime_label
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define
from jobsetctl.trainer import api as trainer_api

_FILES = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: with-data
spec:
  mlPolicy: {{numNodes: 1, torch: {{}}}}
  template:
    spec:
      replicatedJobs:
      - name: dataset-initializer
        template:
{labels}          spec:
            template:
              spec:
                containers:
                - name: dataset-initializer
                  image: ghcr.io/kubeflow/trainer/dataset-initializer
                  volumeMounts: [{{name: initializer, mountPath: /workspace}}]
                volumes: [{{name: initializer, emptyDir: {{}}}}]
      - name: node
        dependsOn: [{{name: dataset-initializer, status: Complete}}]
        template:
          metadata:
            labels: {{trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              spec:
                containers: [{{name: node, image: pytorch/pytorch}}]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: job
spec:
  runtimeRef: {{kind: TrainingRuntime, name: with-data}}
  initializer:
    dataset: {{storageUri: "hf://tatsu-lab/alpaca"}}
"""

PASSING = _FILES.format(
    labels="          metadata:\n            labels: {trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer}\n"
)
FAILING = _FILES.format(labels="          # no trainjob-ancestor-step label: STORAGE_URI is never injected\n")

RULE = define(
    "trainjob-initializer-not-applied", Layer.LINT, Severity.WARNING,
    "spec.initializer targets a job found by name but not labelled as that initializer: its settings are not applied.",
    spec="trainer.md §3.16 #1, §3.9, §2.4",
    doc=lint_doc(
        "Admission looks for the initializer job by name, the controller by the trainjob-ancestor-step "
        "label. Without the label, storageUri, env and secretRef never reach the initializer.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({TRAINJOB})

_SECTIONS = (
    ("dataset", trainer_api.DATASET_INITIALIZER, trainer_api.ANCESTOR_DATASET_INITIALIZER),
    ("model", trainer_api.MODEL_INITIALIZER, trainer_api.ANCESTOR_MODEL_INITIALIZER),
)


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    from jobsetctl.trainer.expand.model import job_ancestor

    initializer = api.as_dict(api.spec(obj).get("initializer"))
    if not initializer:
        return
    plan = plan_of(obj, ctx)
    if plan is None or plan.expansion.info is None:
        return
    jobs = plan.expansion.info.replicated_jobs  # after runtimePatches, which may add the label
    for section, job_name, ancestor in _SECTIONS:
        if not isinstance(initializer.get(section), dict):
            continue
        named = any(api.rjob_name(job) == job_name for job in jobs)
        labelled = any(job_ancestor(job) == ancestor for job in jobs)
        if not named or labelled:
            continue
        at: Path = ("spec", "initializer", section)
        yield RULE.finding(
            f"{runtime_label(plan)} has a replicated job named {go_quote(job_name)} (what admission checks) but "
            f"none labelled {trainer_api.LABEL_ANCESTOR}: {ancestor} (what the controller uses): "
            f"spec.initializer.{section} (storageUri, env, secretRef) is never applied",
            path=path_string(at), at=at,
            hint=f"label the {job_name} job template with {trainer_api.LABEL_ANCESTOR}: {ancestor}",
        )
