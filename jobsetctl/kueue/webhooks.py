"""Kueue's validating webhooks on its own kinds (pkg/webhooks/*.go), on the ``v1beta2`` form of an object.

Filled in by the webhook-rules work; until then every check accepts.
"""

from __future__ import annotations

from collections.abc import Iterable

from jobsetctl.diagnostics import Finding
from jobsetctl.kinds.interface import AdmissionContext, Object


def validate_cluster_queue(obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
    return ()


def validate_cluster_queue_update(old: Object, new: Object, ctx: AdmissionContext) -> Iterable[Finding]:
    return ()


def validate_cohort(obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
    return ()


def validate_resource_flavor(obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
    return ()


def validate_workload(obj: Object, old: Object | None, ctx: AdmissionContext) -> Iterable[Finding]:
    return ()


def validate_workload_update(old: Object, new: Object, ctx: AdmissionContext) -> Iterable[Finding]:
    return ()
