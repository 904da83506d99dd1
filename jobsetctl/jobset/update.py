"""The JobSet validating webhook on UPDATE (jobset.md §2.4).

Create checks are not re-run (jobset.md §6 #1: pointing ``coordinator`` at a replicated job that does
not exist is accepted on update). CEL immutability rules (network, successPolicy, failurePolicy,
startupPolicy, volumeClaimPolicies, dependsOn) live in the schema, not here.

The webhook works on a copy of the new ``replicatedJobs``:

1. with the ElasticJobSet gate, parallelism/completions changes of Indexed replicated jobs (matched
   by name) are checked and then masked with the old values;
2. when the old *or* the new JobSet is suspended, the five pod-template fields Kueue edits (labels,
   annotations, nodeSelector, tolerations, schedulingGates) are masked with the old values;
3. the copy must equal the old list semantically, and ``managedBy`` must not change.
"""

from __future__ import annotations

import copy
from typing import Any

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.jobset import api
from jobsetctl.jobset.webhook_rules import dict_items, unique_messages
from jobsetctl.kinds.interface import AdmissionContext
from jobsetctl.kube import field
from jobsetctl.kube.field import Path, path_string
from jobsetctl.kube.quantity import QuantityError, parse_quantity
from jobsetctl.rules.interface import Rule
from jobsetctl.rules.registry import define


def _rule(rule_id: str, step: str, summary: str) -> Rule:
    return define(rule_id, Layer.WEBHOOK, Severity.ERROR, summary, spec=f"jobset.md §2.4 step {step}")


ELASTIC_TERMINAL = _rule(
    "jobset-update-elastic-terminal", "2",
    "With ElasticJobSet, parallelism/completions cannot change once the JobSet is Completed or Failed.",
)
ELASTIC_PARALLELISM = _rule(
    "jobset-update-elastic-parallelism", "2",
    "With ElasticJobSet, a changed parallelism must be at least 1.",
)
ELASTIC_COMPLETIONS = _rule(
    "jobset-update-elastic-completions", "2",
    "With ElasticJobSet, a changed completions must be at least 1.",
)
ELASTIC_EQUAL = _rule(
    "jobset-update-elastic-equal", "2",
    "With ElasticJobSet, completions must equal parallelism for Elastic Indexed Jobs.",
)
REPLICATED_JOBS_IMMUTABLE = _rule(
    "jobset-update-replicated-jobs-immutable", "4",
    "spec.replicatedJobs is immutable, except pod-template scheduling fields while suspended "
    "(and parallelism/completions with ElasticJobSet).",
)
MANAGED_BY_IMMUTABLE = _rule(
    "jobset-update-managed-by-immutable", "5",
    "spec.managedBy is immutable.",
)

#: Pod-template fields that may change while the JobSet is (or is being) suspended: Kueue edits them
#: before admitting (jobset.md §2.4 step 3, §4.8). Paths are relative to ``template.spec.template``.
SUSPENDED_MUTABLE_FIELDS: tuple[tuple[str, str], ...] = (
    ("metadata", "annotations"),
    ("metadata", "labels"),
    ("spec", "nodeSelector"),
    ("spec", "tolerations"),
    ("spec", "schedulingGates"),
)
ELASTIC_FIELDS = ("parallelism", "completions")


def validate_update(old: dict[str, Any], new: dict[str, Any], ctx: AdmissionContext) -> list[Finding]:
    old_rjobs = api.as_list(api.spec(old).get("replicatedJobs"))
    new_rjobs = api.as_list(api.spec(new).get("replicatedJobs"))
    working = copy.deepcopy(new_rjobs)
    # A Go map by name: with duplicate names the last one wins.
    old_by_name = {api.rjob_name(rjob): rjob for _, rjob in dict_items(old_rjobs)}
    findings: list[Finding] = []

    if ctx.gates.enabled(api.GATE_ELASTIC_JOBSET):
        findings += _check_elastic(old, new_rjobs, working, old_by_name)

    if api.is_suspended(old) or api.is_suspended(new):
        for index, rjob in dict_items(new_rjobs):
            previous = old_by_name.get(api.rjob_name(rjob))
            if previous is not None and isinstance(working[index], dict):
                for section, key in SUSPENDED_MUTABLE_FIELDS:
                    _copy_field(previous, working[index], ("template", "spec", "template", section, key))

    if not semantic_equal(working, old_rjobs):
        findings.append(_immutable_replicated_jobs(old, new, working, old_rjobs, ctx))

    old_manager, new_manager = api.managed_by(old), api.managed_by(new)
    if old_manager != new_manager:
        message = field.invalid("spec.managedBy", new_manager, "field is immutable")
        findings.append(MANAGED_BY_IMMUTABLE.finding(message, path="spec.managedBy"))
    return unique_messages(findings)


def _check_elastic(
    old: dict[str, Any],
    new_rjobs: list[Any],
    working: list[Any],
    old_by_name: dict[str, dict[str, Any]],
) -> list[Finding]:
    """Step 2: matched by name, so reordering is tolerated here; masks the working copy."""
    terminal = api.is_finished(old)
    findings: list[Finding] = []
    for index, rjob in dict_items(new_rjobs):
        previous = old_by_name.get(api.rjob_name(rjob))
        if previous is None or not api.is_indexed(rjob):
            continue
        new_spec, old_spec = api.job_spec(rjob), api.job_spec(previous)
        parallelism, completions = new_spec.get("parallelism"), new_spec.get("completions")
        parallelism_changed = parallelism != old_spec.get("parallelism")
        completions_changed = completions != old_spec.get("completions")
        spec_path: Path = ("spec", "replicatedJobs", index, "template", "spec")
        if parallelism_changed or completions_changed:
            if terminal:
                message = field.forbidden(
                    spec_path,
                    "Cannot mutate parallelism or completions when JobSet is in a terminal state (Completed or Failed)",
                )
                findings.append(ELASTIC_TERMINAL.finding(message, path=path_string(spec_path)))
            else:
                findings += _elastic_values(spec_path, parallelism, completions, parallelism_changed, completions_changed)
        if isinstance(working[index], dict):
            for key in ELASTIC_FIELDS:
                _copy_field(previous, working[index], ("template", "spec", key))
    return findings


def _elastic_values(
    spec_path: Path, parallelism: Any, completions: Any, parallelism_changed: bool, completions_changed: bool
) -> list[Finding]:
    findings: list[Finding] = []
    new_parallelism, new_completions = api.as_int(parallelism), api.as_int(completions)
    if parallelism_changed and new_parallelism is not None and new_parallelism < 1:
        path = path_string((*spec_path, "parallelism"))
        findings.append(ELASTIC_PARALLELISM.finding(
            field.invalid(path, new_parallelism, "parallelism must be >= 1"), path=path
        ))
    completions_path = path_string((*spec_path, "completions"))
    if completions_changed and new_completions is not None and new_completions < 1:
        findings.append(ELASTIC_COMPLETIONS.finding(
            field.invalid(completions_path, new_completions, "completions must be >= 1"), path=completions_path
        ))
    if new_parallelism is not None and new_completions is not None and new_parallelism != new_completions:
        findings.append(ELASTIC_EQUAL.finding(
            field.invalid(
                completions_path, new_completions, "completions must be equal to parallelism for Elastic Indexed Jobs"
            ),
            path=completions_path,
        ))
    return findings


def _copy_field(source: dict[str, Any], target: dict[str, Any], path: tuple[str, ...]) -> None:
    """Set ``target`` at ``path`` to ``source``'s value there (removing it when ``source`` has none),
    creating absent parents as Go's zero-valued structs would be; wrong-typed parents are left alone."""
    value: Any = source
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    node = target
    for key in path[:-1]:
        child = node.get(key)
        if child is None:
            if value is None:
                return
            child = node[key] = {}
        if not isinstance(child, dict):
            return
        node = child
    if value is None:
        node.pop(path[-1], None)
    else:
        node[path[-1]] = copy.deepcopy(value)


def _immutable_replicated_jobs(
    old: dict[str, Any],
    new: dict[str, Any],
    working: list[Any],
    old_rjobs: list[Any],
    ctx: AdmissionContext,
) -> Finding:
    """Step 4. The bad value is the working copy (Go prints it with %#v; we print compact JSON). The
    position is the first difference, which is what a user needs to find."""
    message = field.invalid("spec.replicatedJobs", working, "field is immutable")
    difference = first_difference(old_rjobs, working)
    at: Path = ("spec", "replicatedJobs", *difference)
    hint = f"first difference at {path_string(at)}"
    if _is_suspended_mutable(difference) and not (api.is_suspended(old) or api.is_suspended(new)):
        hint += (
            "; pod-template labels, annotations, nodeSelector, tolerations and schedulingGates may change "
            "only while the JobSet is suspended or being suspended"
        )
    elif difference[-1:] in (("parallelism",), ("completions",)) and not ctx.gates.enabled(api.GATE_ELASTIC_JOBSET):
        hint += "; parallelism and completions of Indexed jobs may change only with the ElasticJobSet feature gate"
    return REPLICATED_JOBS_IMMUTABLE.finding(message, path="spec.replicatedJobs", at=at, hint=hint)


def _is_suspended_mutable(difference: Path) -> bool:
    tail = difference[1:6]
    return len(tail) >= 5 and tail[:3] == ("template", "spec", "template") and tuple(tail[3:5]) in SUSPENDED_MUTABLE_FIELDS


# ---------------------------------------------------------------------------------------------------
# Semantic equality (apimachinery ``equality.Semantic.DeepEqual``)

#: Maps whose values are resource quantities, compared by value (``1Gi`` == ``1024Mi``).
_QUANTITY_MAPS = frozenset({"requests", "limits", "overhead"})
_QUANTITY_FIELDS = frozenset({"sizeLimit"})


def semantic_equal(left: Any, right: Any) -> bool:
    """Equality as the webhook's ``ValidateImmutableField`` sees it: nil and empty lists and maps are
    equal, quantities compare by value.

    Without Go's types we also treat an empty string like an absent field (true of Go's non-pointer
    strings, which most fields here are); ``0`` and ``false`` stay distinct from absent because the
    Job fields where that matters (parallelism, completions, backoffLimit, suspend) are pointers.
    """
    return _semantic_form(left) == _semantic_form(right)


def _is_empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def _semantic_form(value: Any, key: str = "", parent_key: str = "") -> Any:
    if parent_key in _QUANTITY_MAPS or key in _QUANTITY_FIELDS:
        try:
            return ("quantity", parse_quantity(value))
        except QuantityError:
            pass
    if isinstance(value, dict):
        form = {k: _semantic_form(v, k, key) for k, v in value.items()}
        return {k: v for k, v in form.items() if not _is_empty(v)}
    if isinstance(value, list):
        return [_semantic_form(item) for item in value]
    return value


def first_difference(left: Any, right: Any) -> Path:
    """The path of the first place where two values differ semantically (``()`` for the roots)."""
    a, b = _semantic_form(left), _semantic_form(right)
    path: list[str | int] = []
    while True:
        if isinstance(a, dict) and isinstance(b, dict):
            key = next((k for k in [*b, *a] if a.get(k) != b.get(k)), None)
            if key is None or key not in a or key not in b:
                if key is not None:
                    path.append(key)
                return tuple(path)
            path.append(key)
            a, b = a[key], b[key]
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            index = next((i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y), None)
            if index is None:
                return tuple(path)
            path.append(index)
            a, b = a[index], b[index]
        else:
            return tuple(path)
