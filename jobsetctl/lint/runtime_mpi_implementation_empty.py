"""``runtime-mpi-implementation-empty``: ``mlPolicy.mpi.mpiImplementation: ""``.

trainer.md §1.5 and §3.16 #11: the CRD enum is ``OpenMPI | ""``, so an explicit empty string passes
admission (and is not defaulted: the default applies only to an absent field), but the MPI plugin
supports only OpenMPI: when it configures the ``node`` container of the ``launcher`` job it fails the
reconcile with ``MPI implementation for  doesn't supported``. Every TrainJob that uses such a runtime is
admitted and never runs (the TrainJob itself gets ``trainjob-reconcile-failure``). A runtime without a
launcher job never reaches that code and is not reported.
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
from jobsetctl.trainer import api as trainer_api

PASSING = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: mpi
spec:
  mlPolicy:
    numNodes: 2
    mpi: {mpiImplementation: OpenMPI}
  template:
    spec:
      replicatedJobs:
      - name: launcher
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                containers: [{name: node, image: mpioperator/openmpi}]
      - name: node
        template:
          spec:
            template:
              spec:
                containers: [{name: node, image: mpioperator/openmpi}]
"""

FAILING = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: mpi
spec:
  mlPolicy:
    numNodes: 2
    mpi: {mpiImplementation: ""}    # passes the enum, fails every reconcile
  template:
    spec:
      replicatedJobs:
      - name: launcher
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                containers: [{name: node, image: mpioperator/openmpi}]
      - name: node
        template:
          spec:
            template:
              spec:
                containers: [{name: node, image: mpioperator/openmpi}]
"""

RULE = define(
    "runtime-mpi-implementation-empty", Layer.LINT, Severity.WARNING,
    'mpiImplementation "" passes the CRD enum, but the MPI plugin fails every TrainJob of a launcher runtime.',
    spec="trainer.md §1.5, §3.16 #11",
    doc=lint_doc(
        'The enum allows "" and only an absent field is defaulted to OpenMPI, but the MPI plugin supports '
        "nothing else: TrainJobs using this runtime are admitted and never run.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({TRAINING_RUNTIME, CLUSTER_TRAINING_RUNTIME})
LOCAL_KINDS = KINDS  # looks at nothing but the object itself


def _has_launcher(runtime: Object) -> bool:
    """A ``launcher`` replicated job with a ``node`` container: where the MPI plugin checks the implementation."""
    template = api.as_dict(api.spec(runtime).get("template"))
    found = api.find_replicated_job(template, trainer_api.LAUNCHER)
    return found is not None and any(c.get("name") == trainer_api.NODE for c in api.containers(found[1]))


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    mpi = api.as_dict(api.as_dict(api.spec(obj).get("mlPolicy")).get("mpi"))
    if mpi.get("mpiImplementation") != "" or not _has_launcher(obj):
        return
    at: Path = ("spec", "mlPolicy", "mpi", "mpiImplementation")
    yield RULE.finding(
        'mpiImplementation "" is accepted, but the MPI plugin supports only OpenMPI: every TrainJob using this '
        "runtime fails to reconcile (\"MPI implementation for  doesn't supported\") and never runs",
        path=path_string(at), at=at,
        hint="write OpenMPI, or leave the field out (it defaults to OpenMPI)",
    )
