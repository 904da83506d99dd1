"""The JobSet kind handler: what the API server and JobSet's webhooks do with a JobSet.

CRD structural defaults and every CEL rule come from the authored schema; this handler adds the
defaulting webhook (CREATE only, jobset.md §1.1 step 2) and the validating webhook (§2.2, §2.4).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from jobsetctl.jobset import api
from jobsetctl.kinds.interface import AdmissionContext, KindHandler, Object, Operation
from jobsetctl.kube.versions import KubeVersion

if TYPE_CHECKING:
    from jobsetctl.admission.schema import StructuralSchema
    from jobsetctl.diagnostics import Finding


class JobSetHandler(KindHandler):
    group = api.GROUP
    kind = api.KIND
    namespaced = True
    webhooks = True  # vjobset.kb.io
    consequences_look_up = False  # the child Jobs are made of the JobSet alone

    def served_versions(self, version: KubeVersion) -> tuple[str, ...]:
        # The JobSet CRD serves one version whatever the Kubernetes release.
        return (api.VERSION,)

    def schema(self, api_version: str, version: KubeVersion) -> StructuralSchema:
        from jobsetctl.admission.schema import authored_schema

        return authored_schema(api.SCHEMA_NAME, version)

    def default(self, obj: Object, ctx: AdmissionContext) -> None:
        # mjobset.kb.io is registered for CREATE only: an update keeps what the user sent.
        if ctx.operation is Operation.CREATE:
            from jobsetctl.jobset.defaults import apply_webhook_defaults

            apply_webhook_defaults(obj)

    def validate(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        from jobsetctl.jobset.webhook import validate_create

        return validate_create(obj, ctx)

    def validate_in_cluster(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        from jobsetctl.jobset.webhook_vcp import validate_existing_pvcs

        return validate_existing_pvcs(obj, ctx)

    def validate_update(self, old: Object, new: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        from jobsetctl.jobset.update import validate_update

        return validate_update(old, new, ctx)

    def validate_consequences(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        from jobsetctl.jobset.consequences import check_child_jobs

        return check_child_jobs(obj, ctx)


HANDLER = JobSetHandler()
