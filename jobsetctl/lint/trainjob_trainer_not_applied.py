"""``trainjob-trainer-not-applied``: ``spec.trainer`` settings with nowhere to go.

trainer.md §3.13 step 3 and §3.16 #12: the JobSet builder applies ``trainer.image``, ``command``,
``args``, ``env`` and ``resourcesPerNode`` to the container named ``node`` of the replicated jobs
labelled ``trainer.kubeflow.org/trainjob-ancestor-step: trainer``, and ``numNodes`` to that job's
PodSet (§3.7). A runtime without such a job, or whose trainer job has no ``node`` container, takes the
TrainJob silently: the pods run the runtime's image and command. (The runtime webhook rejects the
second shape unless the runtime is labelled ``webhook-validation: disabled``, §2.5; the first shape it
accepts.)
"""

from __future__ import annotations

from collections.abc import Iterator

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.field import Path, go_quote, path_string
from jobsetctl.lint.support import TRAINJOB, lint_doc, plan_of, runtime_label, trainer_section
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define
from jobsetctl.trainer import api as trainer_api

_FILES = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: custom
spec:
  mlPolicy: {{numNodes: 1, torch: {{}}}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
{labels}          spec:
            template:
              spec:
                containers: [{{name: node, image: pytorch/pytorch}}]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: job
spec:
  runtimeRef: {{kind: TrainingRuntime, name: custom}}
  trainer:
    image: registry.example.com/train:v2
    command: [python, train.py]
"""

PASSING = _FILES.format(
    labels="          metadata:\n            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}\n"
)
FAILING = _FILES.format(labels="          # no trainjob-ancestor-step: trainer label: image and command are ignored\n")

RULE = define(
    "trainjob-trainer-not-applied", Layer.LINT, Severity.WARNING,
    "spec.trainer is ignored: the runtime has no trainer-labelled replicated job with a node container.",
    spec="trainer.md §3.13, §3.16 #12, §3.7",
    doc=lint_doc(
        "Trainer applies spec.trainer to the node container of the replicated job labelled "
        "trainjob-ancestor-step: trainer. Without one, the TrainJob's image, command, env and resources "
        "are silently dropped.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({TRAINJOB})

_CONTAINER_FIELDS = ("image", "command", "args", "env", "resourcesPerNode")


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    trainer = trainer_section(obj)
    if not trainer:
        return
    plan = plan_of(obj, ctx)
    if plan is None or plan.expansion.info is None:
        return
    info = plan.expansion.info
    trainer_set = info.pod_set_by_ancestor(trainer_api.ANCESTOR_TRAINER)
    if trainer_set is None:
        ignored = [key for key in trainer if trainer.get(key) is not None]
        why = f"has no replicated job labelled {trainer_api.LABEL_ANCESTOR}: {trainer_api.ANCESTOR_TRAINER}"
    elif trainer_set.container(trainer_api.NODE) is None:
        ignored = [key for key in _CONTAINER_FIELDS if trainer.get(key) is not None]
        why = f"has no container named {go_quote(trainer_api.NODE)} in its trainer job {go_quote(trainer_set.name)}"
    else:
        return
    if not ignored:
        return
    at: Path = ("spec", "trainer", ignored[0])
    yield RULE.finding(
        f"{runtime_label(plan)} {why}: spec.trainer.{', spec.trainer.'.join(ignored)} "
        f"{'is' if len(ignored) == 1 else 'are'} silently not applied",
        path=path_string(at), at=at,
        hint=f"label the training job {trainer_api.LABEL_ANCESTOR}: {trainer_api.ANCESTOR_TRAINER} and name its "
        f"main container {trainer_api.NODE}",
    )
