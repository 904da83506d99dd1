"""The admission chain: what the API server does with a create or an update, in upstream order.

``validate`` is a dry-run of this function, and the fake API server of ``render`` and ``simulate``
calls it on every write, so what one accepts the other admits (issue #2, "One pipeline").

Order (jobset.md §1.1, trainer.md §2.1):

1. kind and version lookup: an unknown kind is passed over; a version the release does not serve is
   ``no matches for kind``;
2. CRD structural defaults (schema ``default``), on the new object and, for updates, on the old one;
3. mutating admission: apiserver defaulting and mutating webhooks (the handler's ``default``);
4. schema validation: types, unknown fields (strict field validation), required, enums, ranges;
5. CEL ``x-kubernetes-validations`` (transition rules only on update);
6. validating webhooks / built-in validation (the handler's ``validate`` or ``validate_update``),
   and the checks that need other objects when a cluster view is given.

Other components' webhooks on a kind (Kueue's on JobSets, TrainJobs and Jobs:
:func:`jobsetctl.kinds.registry.webhooks_for`) run after the kind's own, at steps 3 and 6. Their
defaulting is not replayed on the two sides of an update: what they add at creation (Kueue suspends a
queued job) is a one-time decision, not a default of the object's shape, and the stored object given
as ``old`` already shows what became of it.

Unlike the real API server, which stops at the first failing stage, we carry on while the object is
still well-typed, so a user sees every problem at once. An object with type errors stops after step 4:
upstream webhooks could not even decode it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from jobsetctl.diagnostics import Finding, Severity
from jobsetctl.kinds.interface import AdmissionContext, KindHandler, Object, Operation
from jobsetctl.kinds.registry import handler_for, webhooks_for
from jobsetctl.kube.jsontree import copy_tree
from jobsetctl.kube.versions import split_api_version
from jobsetctl.rules import core


@dataclass(slots=True)
class AdmissionResult:
    """The object as admission leaves it, and what admission said about it."""

    obj: Object | None
    findings: list[Finding] = field(default_factory=list)
    handler: KindHandler | None = None
    #: False when the object could not be typed (schema type errors): later stages did not run.
    typed: bool = True

    @property
    def accepted(self) -> bool:
        return not any(f.effective_severity is Severity.ERROR for f in self.findings)


def resolve_handler(obj: Object, ctx: AdmissionContext) -> tuple[KindHandler | None, list[Finding]]:
    """The handler for an object's kind, or the finding that explains why there is none."""
    api_version = obj.get("apiVersion")
    kind = obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None, []
    group, version = split_api_version(api_version)
    handler = handler_for(group, kind)
    if handler is None:
        return None, [core.UNKNOWN_KIND.finding(
            f"{kind} ({api_version}) is not a kind jobsetctl checks; passed over", path="kind", at=("kind",)
        )]
    served = handler.served_versions(ctx.version)
    if version not in served:
        hint = f"Kubernetes {ctx.version.value} serves {kind} as " + ", ".join(
            f"{group}/{v}" if group else v for v in served
        ) if served else f"Kubernetes {ctx.version.value} does not serve {kind} at all"
        return None, [core.NO_MATCH.finding(
            f'no matches for kind "{kind}" in version "{api_version}"',
            path="apiVersion", at=("apiVersion",), hint=hint,
        )]
    return handler, []


#: A kind's exact shortcut for creates (:func:`register_create_fast_path`): called with the object, the
#: context and the full chain (a callable), it returns what the full chain would.
CreateFastPath = Callable[[Object, AdmissionContext, Callable[[], AdmissionResult]], AdmissionResult]
_CREATE_FAST_PATHS: dict[KindHandler, CreateFastPath] = {}


def register_create_fast_path(handler: KindHandler, fast: CreateFastPath) -> None:
    """Let ``fast`` answer the creates that ``handler`` admits (Kueue memoizes Workload admission per
    shape: a run creates thousands of Workloads that differ only in their names). It must return exactly
    what the full chain returns, which it may call."""
    _CREATE_FAST_PATHS[handler] = fast


def admit(obj: Object, ctx: AdmissionContext, old: Object | None = None) -> AdmissionResult:
    """Run admission on a private copy of ``obj`` (and ``old`` for an update)."""
    handler, findings = resolve_handler(obj, ctx)
    if handler is None:
        return AdmissionResult(None, findings)
    if old is None and _CREATE_FAST_PATHS:
        fast = _CREATE_FAST_PATHS.get(handler)
        if fast is not None:
            return fast(obj, ctx, lambda: _admit(obj, ctx, old, handler, findings))
    return _admit(obj, ctx, old, handler, findings)


def _admit(obj: Object, ctx: AdmissionContext, old: Object | None, handler: KindHandler,
           findings: list[Finding]) -> AdmissionResult:
    webhooks = webhooks_for(handler.group, handler.kind)
    new = copy_tree(obj)
    _default_namespace(new, handler, ctx)
    api_version = new["apiVersion"]
    schema = handler.schema(api_version, ctx.version)

    previous: Object | None = None
    if old is not None and ctx.operation is Operation.UPDATE:
        # The stored old object went through create-time defaulting when it was created.
        previous = copy_tree(old)
        _default_namespace(previous, handler, ctx)
        schema.apply_defaults(previous)
        handler.default(previous, _as_create(ctx))

    if previous is not None:
        ctx = replace(ctx, old=previous)
    schema.apply_defaults(new)
    if previous is not None:
        # Issue #2: create-time defaults go on both sides of an update, as the stored object has them,
        # so that an unchanged manifest is an unchanged object (mutating webhooks run on CREATE only).
        handler.default(new, _as_create(ctx))
    handler.default(new, ctx)
    for webhook in webhooks:
        webhook.default(new, ctx)

    from jobsetctl.admission.schema import has_type_errors
    from jobsetctl.kube.meta import validate_object_meta

    schema_findings = schema.validate(new)
    findings.extend(schema_findings)
    findings.extend(validate_object_meta(new, handler.namespaced))
    if has_type_errors(schema_findings):
        return AdmissionResult(new, findings, handler, typed=False)

    from jobsetctl.admission.cel import validate_cel

    findings.extend(validate_cel(schema, new, previous))
    if previous is not None:
        findings.extend(handler.validate_update(previous, new, ctx))
        for webhook in webhooks:
            findings.extend(webhook.validate_update(previous, new, ctx))
    else:
        findings.extend(handler.validate(new, ctx))
        for webhook in webhooks:
            findings.extend(webhook.validate(new, ctx))
        if ctx.cluster is not None:
            findings.extend(handler.validate_in_cluster(new, ctx))
            for webhook in webhooks:
                findings.extend(webhook.validate_in_cluster(new, ctx))
    return AdmissionResult(new, findings, handler)


def admit_in_cluster(obj: Object, ctx: AdmissionContext) -> list[Finding]:
    """Only the lookup-dependent checks, for an object already admitted without a cluster view."""
    handler, _ = resolve_handler(obj, ctx)
    if handler is None or ctx.cluster is None:
        return []
    findings = list(handler.validate_in_cluster(obj, ctx))
    for webhook in webhooks_for(handler.group, handler.kind):
        findings.extend(webhook.validate_in_cluster(obj, ctx))
    return findings


def _as_create(ctx: AdmissionContext) -> AdmissionContext:
    return replace(ctx, operation=Operation.CREATE, old=None)


def _default_namespace(obj: Any, handler: KindHandler, ctx: AdmissionContext) -> None:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return
    if handler.namespaced and not meta.get("namespace"):
        meta["namespace"] = ctx.default_namespace
