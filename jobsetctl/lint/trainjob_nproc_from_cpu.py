"""``trainjob-nproc-from-cpu``: ``PET_NPROC_PER_NODE`` derived from CPUs on GPU nodes.

trainer.md §3.6 and §3.16 #4 (open PR #3974): the Torch plugin derives ``PET_NPROC_PER_NODE`` from the
TrainJob's ``resourcesPerNode`` *alone* when it is set, and from the runtime's node container
otherwise. A TrainJob that sets ``resourcesPerNode`` without a GPU (say, to raise memory) against a
runtime whose node container has GPUs keeps those GPUs in its pods (the merge keeps them, §3.6), but
gets ``max(1, CPU count)`` processes per node instead of ``auto`` (one per GPU): torchrun starts as
many processes as there are CPUs, not GPUs.
"""

from __future__ import annotations

from collections.abc import Iterator

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.field import Path, go_quote, path_string
from jobsetctl.kube.podspec import env_value
from jobsetctl.lint.support import TRAINJOB, lint_doc, plan_of, runtime_label, trainer_section
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define
from jobsetctl.trainer import api as trainer_api

_FILES = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: torch-gpu
spec:
  mlPolicy: {{numNodes: 1, torch: {{}}}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels: {{trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: pytorch/pytorch
                  resources:
                    limits: {{nvidia.com/gpu: 4}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: job
spec:
  runtimeRef: {{kind: TrainingRuntime, name: torch-gpu}}
  trainer:
{extra}    resourcesPerNode:
      limits: {{memory: 64Gi}}      # no GPU here: processes are counted from CPUs
"""

PASSING = _FILES.format(extra="    numProcPerNode: 4               # explicit: one process per GPU\n")
FAILING = _FILES.format(extra="")

RULE = define(
    "trainjob-nproc-from-cpu", Layer.LINT, Severity.WARNING,
    "resourcesPerNode without GPUs on a GPU runtime: PET_NPROC_PER_NODE is counted from CPUs, not GPUs.",
    spec="trainer.md §3.6, §3.8.2, §3.16 #4",
    doc=lint_doc(
        "When the TrainJob sets resourcesPerNode, Torch derives processes per node from it alone. Without a "
        "GPU there, the count comes from CPUs although the pods keep the runtime's GPUs.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({TRAINJOB})


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    from jobsetctl.trainer.expand.resources import gpu_count

    trainer = trainer_section(obj)
    if trainer is None or trainer.get("numProcPerNode") is not None:
        return
    own = trainer.get("resourcesPerNode")
    if not isinstance(own, dict) or gpu_count(own) > 0:
        return
    plan = plan_of(obj, ctx)
    if plan is None or plan.expansion.info is None or plan.expansion.info.policy("torch") is None:
        return
    runtime_gpus = gpu_count(plan.expansion.info.runtime_resources_per_node())
    container = plan.expansion.info.trainer_container()
    nproc = env_value(container, trainer_api.TORCH_ENV_NPROC_PER_NODE) if container is not None else None
    if runtime_gpus <= 0 or nproc is None or not nproc.isdigit():
        return
    at: Path = ("spec", "trainer", "resourcesPerNode")
    yield RULE.finding(
        f"the pods keep the {runtime_gpus} GPU(s) of {runtime_label(plan)}, but PET_NPROC_PER_NODE is derived from "
        f"resourcesPerNode alone, which has no GPU: it becomes {go_quote(nproc)} (from CPUs) instead of \"auto\" "
        "(one process per GPU)",
        path=path_string(at), at=at,
        hint=f"set trainer.numProcPerNode: {runtime_gpus}, or repeat the GPU in resourcesPerNode",
    )
