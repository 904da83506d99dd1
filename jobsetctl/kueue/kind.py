"""Admission handlers of the eight Kueue kinds, ``kueue.x-k8s.io/v1beta2`` (stored) and ``v1beta1`` (served).

Structural schemas, CRD defaults and CEL rules come from the authored schemas
``jobsetctl/schemas/kueue.x-k8s.io_<version>_<Kind>.json`` (:func:`jobsetctl.kueue.versions.schema_name`).
The handlers add Kueue's webhooks (pkg/webhooks): the mutating ones (the ``resource-in-use`` finalizer on
ClusterQueues and ResourceFlavors, minCount dropped without PartialAdmission on Workloads) and the
validating ones (:mod:`jobsetctl.kueue.webhooks`). LocalQueue, WorkloadPriorityClass, Topology and
AdmissionCheck have no webhook: their schema and CEL are all the API server checks.

Kueue registers its webhooks for ``v1beta2`` only: a ``v1beta1`` object is converted before they run, so
their findings carry ``v1beta2`` field paths (upstream's messages), placed where the user wrote the
field (:func:`jobsetctl.kueue.versions.field_path_in`). The fake API server stores every Kueue object at
``v1beta2`` (:meth:`storage_api_version`), as Kueue's CRDs do.

The Kueue webhooks run whatever ``ctx.kueue`` says: a Kueue object is only ever created where Kueue is
installed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from jobsetctl.kinds.interface import AdmissionContext, KindHandler, Object, Operation
from jobsetctl.kube.versions import KubeVersion
from jobsetctl.kueue import api
from jobsetctl.kueue.versions import convert, field_path_in, schema_name, to_v1beta2, version_of

if TYPE_CHECKING:
    from jobsetctl.admission.schema import StructuralSchema
    from jobsetctl.diagnostics import Finding

#: A webhook check on the v1beta2 form of an object.
Check = Callable[[Object, AdmissionContext], Iterable["Finding"]]
UpdateCheck = Callable[[Object, Object, AdmissionContext], Iterable["Finding"]]


class KueueKind(KindHandler):
    group = api.GROUP

    def served_versions(self, version: KubeVersion) -> tuple[str, ...]:
        # The CRDs serve both versions whatever the Kubernetes release.
        return api.VERSIONS

    def schema(self, api_version: str, version: KubeVersion) -> StructuralSchema:
        from jobsetctl.admission.schema import authored_schema

        return authored_schema(schema_name(self.kind, api_version.rpartition("/")[2]), version)

    def storage_api_version(self) -> str | None:
        return api.API_VERSION

    def convert(self, obj: Object, api_version: str) -> Object:
        return convert(obj, api_version.rpartition("/")[2])

    # -- the webhooks, on the v1beta2 form ---------------------------------------------------------
    def webhook_default(self, obj: Object, ctx: AdmissionContext) -> None:
        """Mutating webhook on a v1beta2 object (CREATE only, as Kueue registers its defaulters)."""

    def webhook_validate(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        return ()

    def webhook_validate_update(self, old: Object, new: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        return self.webhook_validate(new, ctx)

    # -- KindHandler -------------------------------------------------------------------------------
    def default(self, obj: Object, ctx: AdmissionContext) -> None:
        if ctx.operation is not Operation.CREATE:
            return
        if version_of(obj) == api.V1BETA2:
            self.webhook_default(obj, ctx)
            return
        # Converted for the webhook, and its patch applied to the object as sent.
        hub = to_v1beta2(obj)
        before = repr(hub)
        self.webhook_default(hub, ctx)
        if repr(hub) != before:
            back = convert(hub, version_of(obj))
            obj.clear()
            obj.update(back)

    def validate(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        return _placed(obj, self.webhook_validate(to_v1beta2(obj), ctx))

    def validate_update(self, old: Object, new: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        return _placed(new, self.webhook_validate_update(to_v1beta2(old), to_v1beta2(new), ctx))


def _placed(obj: Object, findings: Iterable[Finding]) -> list[Finding]:
    """Findings on the v1beta2 form, positioned in the object as written (v1beta1 field names)."""
    if version_of(obj) != api.V1BETA1:
        return list(findings)
    return [replace(f, at=field_path_in(obj, f.at)) for f in findings]


def _add_finalizer(obj: Object) -> None:
    meta: Any = obj.setdefault("metadata", {})
    if not isinstance(meta, dict):
        return
    finalizers = meta.get("finalizers")
    if not isinstance(finalizers, list):
        finalizers = []
    if api.RESOURCE_IN_USE_FINALIZER not in finalizers:
        meta["finalizers"] = [*finalizers, api.RESOURCE_IN_USE_FINALIZER]


class ClusterQueueHandler(KueueKind):
    kind = api.CLUSTER_QUEUE
    namespaced = False

    def webhook_default(self, obj: Object, ctx: AdmissionContext) -> None:
        _add_finalizer(obj)  # mclusterqueue.kb.io

    def webhook_validate(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        from jobsetctl.kueue.webhooks import validate_cluster_queue

        return validate_cluster_queue(obj, ctx)

    def webhook_validate_update(self, old: Object, new: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        from jobsetctl.kueue.webhooks import validate_cluster_queue_update

        return validate_cluster_queue_update(old, new, ctx)


class CohortHandler(KueueKind):
    kind = api.COHORT
    namespaced = False

    def webhook_validate(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        from jobsetctl.kueue.webhooks import validate_cohort

        return validate_cohort(obj, ctx)


class ResourceFlavorHandler(KueueKind):
    kind = api.RESOURCE_FLAVOR
    namespaced = False

    def webhook_default(self, obj: Object, ctx: AdmissionContext) -> None:
        _add_finalizer(obj)  # mresourceflavor.kb.io

    def webhook_validate(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        from jobsetctl.kueue.webhooks import validate_resource_flavor

        return validate_resource_flavor(obj, ctx)


class LocalQueueHandler(KueueKind):
    kind = api.LOCAL_QUEUE


class WorkloadPriorityClassHandler(KueueKind):
    kind = api.WORKLOAD_PRIORITY_CLASS
    namespaced = False


class TopologyHandler(KueueKind):
    kind = api.TOPOLOGY
    namespaced = False


class AdmissionCheckHandler(KueueKind):
    kind = api.ADMISSION_CHECK
    namespaced = False


class WorkloadHandler(KueueKind):
    kind = api.WORKLOAD

    def webhook_default(self, obj: Object, ctx: AdmissionContext) -> None:
        # mworkload.kb.io: minCount is dropped when PartialAdmission is off.
        if ctx.kueue is not None and not ctx.kueue.gate("PartialAdmission"):
            spec = obj.get("spec")
            for pod_set in (spec.get("podSets") if isinstance(spec, dict) else None) or []:
                if isinstance(pod_set, dict):
                    pod_set.pop("minCount", None)

    def webhook_validate(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        from jobsetctl.kueue.webhook_workload import validate_workload

        return validate_workload(obj, None, ctx)

    def webhook_validate_update(self, old: Object, new: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        from jobsetctl.kueue.webhook_workload import validate_workload_update

        return validate_workload_update(old, new, ctx)


CLUSTER_QUEUE = ClusterQueueHandler()
LOCAL_QUEUE = LocalQueueHandler()
COHORT = CohortHandler()
RESOURCE_FLAVOR = ResourceFlavorHandler()
WORKLOAD_PRIORITY_CLASS = WorkloadPriorityClassHandler()
TOPOLOGY = TopologyHandler()
ADMISSION_CHECK = AdmissionCheckHandler()
WORKLOAD = WorkloadHandler()


def _register_workload_memo() -> None:
    from jobsetctl.admission.chain import register_create_fast_path
    from jobsetctl.kueue.workload_admission import admit_workload_create

    register_create_fast_path(WORKLOAD, lambda obj, ctx, full: admit_workload_create(obj, ctx, WORKLOAD, full))


_register_workload_memo()
