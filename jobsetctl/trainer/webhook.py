"""The TrainJob webhooks as admission steps (trainer.md §2.3, §2.4, §2.6, §2.7).

Where each upstream check runs in jobsetctl:

* ``default`` (mutating, CREATE): ``runtimePatches[].time`` (:mod:`.webhook_defaulter`);
* ``validate`` (no lookups): J7, the only check that needs nothing but the TrainJob. Upstream it runs
  after the runtime lookup, so a TrainJob whose runtime is missing gets both findings here;
* ``validate_in_cluster``: step A (runtime resolution, :mod:`.runtimeref`), step B (every plugin
  check, :mod:`.webhook_jobset`, :mod:`.webhook_plugins`) on the same Info the controller builds,
  then the expansion and the JobSet admission (:mod:`.webhook_expansion`) when step A/B found no error;
* ``validate_update``: the UPDATE branch of the defaulter, J7, J12; with a cluster view, steps A and
  B again (upstream re-validates on every update) and J13.

This module also imports every module that defines a Trainer rule (rules are listed by importing it).
"""

from __future__ import annotations

from jobsetctl.diagnostics import Finding, Severity
from jobsetctl.kinds.interface import AdmissionContext, ClusterView, Object, Operation
from jobsetctl.trainer import rules as rules
from jobsetctl.trainer import runtime_webhook as runtime_webhook
from jobsetctl.trainer.expand import prepare
from jobsetctl.trainer.expand.info import build_info
from jobsetctl.trainer.expand.model import TrainJobView
from jobsetctl.trainer.runtimeref import resolve
from jobsetctl.trainer.webhook_defaulter import stamp_create, stamp_update
from jobsetctl.trainer.webhook_expansion import check_generated_objects, once
from jobsetctl.trainer.webhook_jobset import (
    check_initializers,
    check_managers,
    check_patch_targets,
    check_patch_update,
)
from jobsetctl.trainer.webhook_plugins import check_flux, check_mpi, check_torch, check_volcano, check_xgboost

__all__ = [
    "default", "rules", "runtime_webhook", "validate", "validate_consequences", "validate_in_cluster", "validate_update",
]


def default(obj: Object, ctx: AdmissionContext) -> None:
    """The mutating webhook (trainer.md §2.3): CREATE stamps new patches; UPDATE compares with the old object."""
    if ctx.operation is Operation.CREATE:
        stamp_create(obj, ctx.now)
    elif ctx.old is not None:
        stamp_update(obj, ctx.old, ctx.now)


def validate(obj: Object, ctx: AdmissionContext) -> list[Finding]:
    return check_managers(TrainJobView(obj, ctx.default_namespace))


def validate_in_cluster(obj: Object, ctx: AdmissionContext) -> list[Finding]:
    assert ctx.cluster is not None
    return runtime_checks(obj, ctx, ctx.cluster)[0]


def validate_consequences(obj: Object, ctx: AdmissionContext) -> list[Finding]:
    """trainer.md §2.7: the JobSet the controller would apply, admitted as the JobSet webhook would (and the
    reconcile errors the controller would hit). Only when the TrainJob itself is admitted."""
    assert ctx.cluster is not None
    findings, runtime = runtime_checks(obj, ctx, ctx.cluster)
    if runtime is None or any(f.effective_severity is Severity.ERROR for f in findings):
        return []
    return check_generated_objects(obj, runtime, ctx)


def validate_update(old: Object, new: Object, ctx: AdmissionContext) -> list[Finding]:
    new_view = TrainJobView(new, ctx.default_namespace)
    findings = check_managers(new_view)
    findings += check_patch_update(TrainJobView(old, ctx.default_namespace), new_view, ctx.cluster)
    if ctx.cluster is not None:
        findings += runtime_checks(new, ctx, ctx.cluster)[0]
    return findings


def runtime_checks(obj: Object, ctx: AdmissionContext, cluster: ClusterView) -> tuple[list[Finding], Object | None]:
    """Step A, then step B on the runtime Info (trainer.md §2.4); once per run for the in-cluster webhook, the
    consequences and the lints (:func:`jobsetctl.trainer.webhook_expansion.once`)."""
    return once("runtime", obj, ctx, cluster, lambda: _runtime_checks(obj, ctx, cluster))


def _runtime_checks(obj: Object, ctx: AdmissionContext, cluster: ClusterView) -> tuple[list[Finding], Object | None]:
    resolution = resolve(TrainJobView(obj, ctx.default_namespace), cluster)
    if resolution.runtime is None:
        return resolution.findings, None
    view, runtime = prepare(obj, resolution.runtime, ctx.default_namespace)
    info = build_info(view, runtime)
    findings = list(resolution.findings)
    findings += check_initializers(view, info)
    findings += check_patch_targets(view, runtime)
    findings += check_torch(view, info)
    findings += check_mpi(view, info)
    findings += check_xgboost(view, info)
    findings += check_flux(info)
    findings += check_volcano(view, info, cluster)
    return findings, resolution.runtime
