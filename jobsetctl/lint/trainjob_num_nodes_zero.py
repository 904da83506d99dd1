"""``trainjob-num-nodes-zero``: ``trainer.numNodes: 0``.

trainer.md §1.2 (``minimum: 0``, "0 accepted!"), §3.7 and §3.16 #5: the trainer's PodSet count becomes
0, which the controller writes to the replicated job's ``parallelism`` and ``completions``. A Job with
``completions: 0`` is complete as soon as it exists, so the TrainJob "succeeds" without running a
single training pod. (MPI with ``runLauncherAsNode`` clamps the node count to 1, quirk 6; that case is
not reported.)
"""

from __future__ import annotations

from collections.abc import Iterator

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.jobset import api
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.field import Path, path_string
from jobsetctl.lint.support import TRAINJOB, lint_doc, names_list, plan_of, trainer_section
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define

_TRAINJOB = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: job
spec:
  runtimeRef: {{name: torch-distributed}}
  trainer:
    numNodes: {nodes}
"""

PASSING = _TRAINJOB.format(nodes="2")
FAILING = _TRAINJOB.format(nodes="0                   # accepted: completes at once, trains nothing")

RULE = define(
    "trainjob-num-nodes-zero", Layer.LINT, Severity.WARNING,
    "trainer.numNodes 0 is accepted and gives the trainer Jobs 0 pods: the TrainJob completes without training.",
    spec="trainer.md §1.2, §3.7, §3.16 #5",
    doc=lint_doc(
        "numNodes has minimum 0. With 0, the trainer replicated job gets parallelism and completions 0, and "
        "its Jobs complete at once.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({TRAINJOB})


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    trainer = trainer_section(obj)
    if trainer is None or api.as_int(trainer.get("numNodes")) != 0:
        return
    plan = plan_of(obj, ctx)
    if plan is None:
        return
    empty = [api.rjob_name(rjob) for rjob in api.replicated_jobs(plan.expansion.jobset) if api.parallelism(rjob) == 0]
    if not empty:
        return
    at: Path = ("spec", "trainer", "numNodes")
    yield RULE.finding(
        f"numNodes 0 is accepted, but it gives {names_list(empty)} parallelism and completions 0: those Jobs "
        "complete at once and the TrainJob finishes without training",
        path=path_string(at), at=at,
        hint="numNodes must be at least 1 to run anything",
    )
