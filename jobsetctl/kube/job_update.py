"""batch/v1 Job update rules (``ValidateJobSpecUpdate`` and friends in kubernetes
``pkg/apis/batch/validation/validation.go``; scheduling.md §1.5 for the WorkloadWithJob rules).

Mutable: ``parallelism``, ``suspend``, ``activeDeadlineSeconds``, ``backoffLimit``,
``maxFailedIndexes``, ``ttlSecondsAfterFinished``, ``podReplacementPolicy``; ``completions`` of an
Indexed Job only together with ``parallelism`` (elastic Indexed Jobs: ``can only be modified in tandem
with spec.parallelism``); the pod template's scheduling directives (node selector, tolerations, node
affinity, labels, annotations, scheduling gates) while the Job is suspended and has never started.
Everything else that ``ValidateJobSpecUpdate`` lists is immutable: selector, template, completionMode,
podFailurePolicy, backoffLimitPerIndex, managedBy, successPolicy.

Kubernetes 1.36 with ``WorkloadWithJob``: a change of ``parallelism`` is rejected when the Job, after
the update, is gang-eligible (parallelism > 1, Indexed, parallelism == completions, no
``schedulingGroup`` in the template), because the Workload's ``minCount`` cannot follow (KEP-5547
"Validation for Parallelism Changes"; the upstream wording was not found: [UNCONFIRMED]).
Kubernetes 1.37 makes ``parallelism`` mutable again and freezes ``spec.scheduling`` except
``gang.minCount`` (:mod:`.job_scheduling`).
"""

from __future__ import annotations

from typing import Any

from jobsetctl.diagnostics import Finding
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube import field as kfield
from jobsetctl.kube.field import Path
from jobsetctl.kube.job_rules import IMMUTABLE, INDEXED
from jobsetctl.kube.job_validation import Findings, integer, mapping
from jobsetctl.kube.jsontree import copy_tree

SPEC: Path = ("spec",)
IMMUTABLE_FIELDS = ("selector", "completionMode", "podFailurePolicy", "backoffLimitPerIndex", "managedBy",
                    "successPolicy")


def gang_eligible(spec: Any) -> bool:
    """``IsGangSchedulingCandidate`` (pkg/controller/job/util, unit test ``TestIsGangSchedulingCandidate``)."""
    spec = mapping(spec)
    parallelism, completions = integer(spec.get("parallelism")), integer(spec.get("completions"))
    pod_spec = mapping(mapping(spec.get("template")).get("spec"))
    return (parallelism is not None and parallelism > 1 and completions == parallelism
            and spec.get("completionMode") == INDEXED and pod_spec.get("schedulingGroup") is None)


def _immutable(out: Findings, here: Path, new: Any) -> None:
    out.add(IMMUTABLE, kfield.invalid(here, new, "field is immutable"), here)


def _mutable_directives_allowed(old: Object) -> bool:
    """``AllowMutableSchedulingDirectives``: suspended and never started."""
    status = mapping(old.get("status"))
    return mapping(old.get("spec")).get("suspend") is True and status.get("startTime") is None


def _strip_directives(template: Any) -> Any:
    stripped = copy_tree(mapping(template))
    meta = mapping(stripped.get("metadata"))
    meta.pop("labels", None)
    meta.pop("annotations", None)
    pod_spec = mapping(stripped.get("spec"))
    for key in ("nodeSelector", "tolerations", "schedulingGates"):
        pod_spec.pop(key, None)
    affinity = pod_spec.get("affinity")
    if isinstance(affinity, dict):
        affinity.pop("nodeAffinity", None)
        if not affinity:
            pod_spec.pop("affinity")
    return stripped


def validate_job_update(old: Object, new: Object, ctx: AdmissionContext) -> list[Finding]:
    out = Findings()
    old_spec, new_spec = mapping(old.get("spec")), mapping(new.get("spec"))
    for key in IMMUTABLE_FIELDS:
        if old_spec.get(key) != new_spec.get(key):
            _immutable(out, (*SPEC, key), new_spec.get(key))
    _completions(old_spec, new_spec, out)
    old_template, new_template = old_spec.get("template"), new_spec.get("template")
    if _mutable_directives_allowed(old):
        old_template, new_template = _strip_directives(old_template), _strip_directives(new_template)
    if old_template != new_template:
        _immutable(out, (*SPEC, "template"), new_spec.get("template"))
    if (ctx.version.minor == 36 and ctx.gates.enabled("WorkloadWithJob")
            and old_spec.get("parallelism") != new_spec.get("parallelism") and gang_eligible(new_spec)):
        here = (*SPEC, "parallelism")
        out.add(IMMUTABLE, kfield.invalid(
            here, new_spec.get("parallelism"), "field is immutable for a Job eligible for gang scheduling"
        ), here)
    if ctx.version.minor >= 37 and ctx.gates.enabled("WorkloadWithJob"):
        from jobsetctl.kube.job_scheduling import job_scheduling_update

        out.extend(job_scheduling_update(old_spec, new_spec, SPEC))
    return out


def _completions(old_spec: dict[str, Any], new_spec: dict[str, Any], out: Findings) -> None:
    """``validateCompletions``: Indexed Jobs may resize only with completions == parallelism."""
    here = (*SPEC, "completions")
    old, new = old_spec.get("completions"), new_spec.get("completions")
    if old == new:
        return
    if new_spec.get("completionMode") != INDEXED:
        _immutable(out, here, new)
        return
    if new is None:
        return  # reported by the create checks (Indexed needs completions)
    if new != new_spec.get("parallelism"):
        out.add(IMMUTABLE, kfield.invalid(here, new, "can only be modified in tandem with spec.parallelism"), here)
