"""Admission handlers of the three Kubeflow Trainer kinds (``trainer.kubeflow.org/v1alpha1``).

Structural schemas, CRD defaults and CEL rules come from the authored schemas
``jobsetctl/schemas/trainer.kubeflow.org_v1alpha1_<Kind>.json``; the handlers add the webhooks.
``v1alpha1`` is served whatever the Kubernetes release (the CRDs do not depend on it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from jobsetctl.kinds.interface import AdmissionContext, KindHandler, Object
from jobsetctl.kube.versions import KubeVersion
from jobsetctl.trainer import api, runtime_webhook, webhook

if TYPE_CHECKING:
    from jobsetctl.admission.schema import StructuralSchema
    from jobsetctl.diagnostics import Finding


class _TrainerKind(KindHandler):
    group = api.GROUP
    webhooks = True  # validator.trainjob / validator.trainingruntime / validator.clustertrainingruntime

    def served_versions(self, version: KubeVersion) -> tuple[str, ...]:
        return (api.VERSION,)

    def schema(self, api_version: str, version: KubeVersion) -> StructuralSchema:
        from jobsetctl.admission.schema import authored_schema

        return authored_schema(f"{api.GROUP}_{api.VERSION}_{self.kind}", version)


class TrainJobHandler(_TrainerKind):
    kind = api.TRAINJOB

    def default(self, obj: Object, ctx: AdmissionContext) -> None:
        webhook.default(obj, ctx)

    def validate(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        return webhook.validate(obj, ctx)

    def validate_in_cluster(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        return webhook.validate_in_cluster(obj, ctx)

    def validate_update(self, old: Object, new: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        return webhook.validate_update(old, new, ctx)

    def validate_consequences(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        return webhook.validate_consequences(obj, ctx)


class TrainingRuntimeHandler(_TrainerKind):
    kind = api.TRAINING_RUNTIME

    def validate(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        return runtime_webhook.validate_training_runtime_create(obj)

    # UPDATE: the TrainingRuntime webhook returns nothing (trainer.md §2.5).


class ClusterTrainingRuntimeHandler(_TrainerKind):
    kind = api.CLUSTER_TRAINING_RUNTIME
    namespaced = False

    def validate(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        return runtime_webhook.validate_cluster_training_runtime_create(obj)

    def validate_update(self, old: Object, new: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        return runtime_webhook.validate_cluster_training_runtime_update(new)


TRAINJOB = TrainJobHandler()
TRAINING_RUNTIME = TrainingRuntimeHandler()
CLUSTER_TRAINING_RUNTIME = ClusterTrainingRuntimeHandler()
