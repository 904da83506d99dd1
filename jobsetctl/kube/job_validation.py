"""batch/v1 JobSpec validation (kubernetes ``pkg/apis/batch/validation/validation.go``, ``validateJobSpec``).

:func:`validate_job_spec` is the inner spec check that a Job and a JobSet's child-Job template share
(upstream ``ValidateJobTemplateSpec`` runs the same function without the selector checks). Paths
are relative to ``path_prefix`` so that a lint on a JobSet can point into
``spec.replicatedJobs[i].template.spec``.

Wording is upstream's: ``must be greater than or equal to 0`` (``ValidateNonnegativeField``),
``requires indexed completion mode``, ``when maxFailedIndexes is specified``, the podFailurePolicy
texts, ``valid values: "OnFailure", "Never"`` for a defaulted ``Always`` restartPolicy, and so on.
"""

from __future__ import annotations

from typing import Any

from jobsetctl.diagnostics import Finding
from jobsetctl.kinds.interface import AdmissionContext
from jobsetctl.kube import field as kfield
from jobsetctl.kube.field import Path, go_quote, path_string
from jobsetctl.kube.job_rules import (
    BACKOFF_PER_INDEX,
    COMPLETION_MODE,
    COMPLETIONS_SOFT_LIMIT,
    INDEXED,
    MANAGED_BY,
    MAX_FAILED_INDEXES_FOR_INDEXED_JOB,
    MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS,
    MAX_MANAGED_BY_LENGTH,
    MAX_ON_EXIT_CODES_VALUES,
    MAX_ON_POD_CONDITIONS_PATTERNS,
    MAX_PARALLELISM_FOR_INDEXED_JOB,
    MAX_POD_FAILURE_POLICY_RULES,
    NON_INDEXED,
    ON_EXIT_CODES_OPERATORS,
    ON_POD_CONDITIONS_STATUSES,
    PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS,
    POD_FAILURE_POLICY,
    POD_FAILURE_POLICY_ACTIONS,
    POD_REPLACEMENT_POLICIES,
    POD_REPLACEMENT_POLICY,
    POD_TEMPLATE,
    RESTART_POLICY,
    SUCCESS_POLICY,
    VALUE,
)
from jobsetctl.kube.job_success import validate_success_policy
from jobsetctl.kube.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
)
from jobsetctl.kube.podspec import all_containers
from jobsetctl.rules.interface import Rule


def mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def integer(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def go_string_list(values: tuple[str, ...] | list[str]) -> str:
    """Go's ``%q`` of a ``[]string``: ``["In" "NotIn"]``."""
    return "[" + " ".join(go_quote(v) for v in values) + "]"


class Findings(list[Finding]):
    """A list of findings with a helper that keeps ``path`` and ``at`` in step."""

    def add(self, rule: Rule, message: str, at: Path, path: Path | None = None) -> None:
        self.append(rule.finding(message, path=path_string(at if path is None else path), at=at))


def validate_job_spec(spec: Any, path_prefix: Path, ctx: AdmissionContext, *, drop_gated: bool = False) -> list[Finding]:
    """``validateJobSpec`` on a (defaulted) JobSpec. ``drop_gated`` removes ``spec.scheduling`` when
    its gate is off, as the Job registry strategy does (pass it only for a Job being admitted)."""
    out = Findings()
    if not isinstance(spec, dict):
        return out
    p = path_prefix
    for key in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished",
                "backoffLimitPerIndex", "maxFailedIndexes"):
        value = integer(spec.get(key))
        if value is not None and value < 0:
            out.add(VALUE, kfield.invalid((*p, key), value, "must be greater than or equal to 0"), (*p, key))
    if spec.get("maxFailedIndexes") is not None and spec.get("backoffLimitPerIndex") is None:
        here = (*p, "backoffLimitPerIndex")
        out.add(BACKOFF_PER_INDEX, kfield.required(here, "when maxFailedIndexes is specified"), (*p, "maxFailedIndexes"),
                path=here)
    _completion_mode(spec, p, out)
    if spec.get("podFailurePolicy") is not None:
        _pod_failure_policy(spec, (*p, "podFailurePolicy"), out)
    if spec.get("successPolicy") is not None:
        here = (*p, "successPolicy")
        if spec.get("completionMode") != INDEXED:
            out.add(SUCCESS_POLICY, kfield.invalid(here, spec.get("successPolicy"), "requires indexed completion mode"),
                    here)
        else:
            for message, at, path in validate_success_policy(spec, here):
                out.add(SUCCESS_POLICY, message, at, path=path)
    _pod_replacement_policy(spec, (*p, "podReplacementPolicy"), out)
    validate_pod_template(spec.get("template"), (*p, "template"), out)
    _restart_policy(spec, p, out)
    _managed_by(spec.get("managedBy"), (*p, "managedBy"), out)
    if ctx.version.minor >= 37 and "scheduling" in spec:
        from jobsetctl.kube.job_scheduling import validate_job_scheduling

        out.extend(validate_job_scheduling(spec, p, ctx, drop_gated=drop_gated))
    return out


def _completion_mode(spec: dict[str, Any], p: Path, out: Findings) -> None:
    mode = spec.get("completionMode")
    completions = integer(spec.get("completions"))
    parallelism = integer(spec.get("parallelism"))
    max_failed = integer(spec.get("maxFailedIndexes"))
    if mode is not None:
        if mode not in (NON_INDEXED, INDEXED):
            here = (*p, "completionMode")
            out.add(COMPLETION_MODE, kfield.not_supported(here, mode, [NON_INDEXED, INDEXED]), here)
        if mode == INDEXED:
            if spec.get("completions") is None:
                here = (*p, "completions")
                out.add(COMPLETION_MODE, kfield.required(here, f"when completion mode is {INDEXED}"),
                        (*p, "completionMode"), path=here)
            if parallelism is not None and parallelism > MAX_PARALLELISM_FOR_INDEXED_JOB:
                here = (*p, "parallelism")
                out.add(COMPLETION_MODE, kfield.invalid(here, parallelism, (
                    f"must be less than or equal to {MAX_PARALLELISM_FOR_INDEXED_JOB} when completion mode is {INDEXED}"
                )), here)
            here = (*p, "maxFailedIndexes")
            if completions is not None and max_failed is not None and max_failed > completions:
                out.add(BACKOFF_PER_INDEX, kfield.invalid(here, max_failed, "must be less than or equal to completions"),
                        here)
            if max_failed is not None and max_failed > MAX_FAILED_INDEXES_FOR_INDEXED_JOB:
                out.add(BACKOFF_PER_INDEX, kfield.invalid(
                    here, max_failed, f"must be less than or equal to {MAX_FAILED_INDEXES_FOR_INDEXED_JOB}"), here)
            if (completions is not None and completions > COMPLETIONS_SOFT_LIMIT
                    and spec.get("backoffLimitPerIndex") is not None):
                _high_completions(spec, p, parallelism, max_failed, out)
    if mode is None or mode == NON_INDEXED:
        for key in ("backoffLimitPerIndex", "maxFailedIndexes"):
            if spec.get(key) is not None:
                here = (*p, key)
                out.add(BACKOFF_PER_INDEX, kfield.invalid(here, spec.get(key), "requires indexed completion mode"), here)


def _high_completions(spec: dict[str, Any], p: Path, parallelism: int | None, max_failed: int | None,
                      out: Findings) -> None:
    suffix = f"when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
    if spec.get("maxFailedIndexes") is None:
        here = (*p, "maxFailedIndexes")
        out.add(BACKOFF_PER_INDEX, kfield.required(
            here, f"must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}"), (*p, "completions"),
            path=here)
    if parallelism is not None and parallelism > PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS:
        here = (*p, "parallelism")
        out.add(BACKOFF_PER_INDEX, kfield.invalid(
            here, parallelism, f"must be less than or equal to {PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS} {suffix}"), here)
    if max_failed is not None and max_failed > MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS:
        here = (*p, "maxFailedIndexes")
        out.add(BACKOFF_PER_INDEX, kfield.invalid(
            here, max_failed, f"must be less than or equal to {MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS} {suffix}"),
            here)


def _container_names(spec: dict[str, Any]) -> set[str]:
    pod_spec = mapping(mapping(spec.get("template")).get("spec"))
    return {ref.name for ref in all_containers(pod_spec)}


def _pod_failure_policy(spec: dict[str, Any], p: Path, out: Findings) -> None:
    rules = items(mapping(spec.get("podFailurePolicy")).get("rules"))
    rules_path = (*p, "rules")
    if len(rules) > MAX_POD_FAILURE_POLICY_RULES:
        out.add(POD_FAILURE_POLICY, kfield.too_many(rules_path, len(rules), MAX_POD_FAILURE_POLICY_RULES), rules_path)
    names = _container_names(spec)
    for index, raw in enumerate(rules):
        rule = mapping(raw)
        here = (*rules_path, index)
        action_path = (*here, "action")
        action = rule.get("action")
        # An absent key is the schema layer's "Required value"; only an empty one is reported here.
        if action == "":
            out.add(POD_FAILURE_POLICY, kfield.required(
                action_path, f"valid values: {go_string_list(POD_FAILURE_POLICY_ACTIONS)}"), here, path=action_path)
        elif action is None:
            pass
        elif action == "FailIndex":
            if spec.get("backoffLimitPerIndex") is None:
                out.add(POD_FAILURE_POLICY, kfield.invalid(
                    action_path, action, "requires the backoffLimitPerIndex to be set"), action_path)
        elif action not in POD_FAILURE_POLICY_ACTIONS:
            out.add(POD_FAILURE_POLICY, kfield.not_supported(action_path, action, list(POD_FAILURE_POLICY_ACTIONS)),
                    action_path)
        on_exit = rule.get("onExitCodes")
        on_conditions = items(rule.get("onPodConditions"))
        if on_exit is not None:
            _on_exit_codes(mapping(on_exit), (*here, "onExitCodes"), names, out)
        if on_conditions:
            _on_pod_conditions(on_conditions, (*here, "onPodConditions"), out)
        if on_exit is not None and on_conditions:
            out.add(POD_FAILURE_POLICY, kfield.field_error(
                kfield.ErrorType.INVALID, here, kfield.OMIT,
                "specifying both OnExitCodes and OnPodConditions is not supported"), here)
        if on_exit is None and not on_conditions:
            out.add(POD_FAILURE_POLICY, kfield.field_error(
                kfield.ErrorType.INVALID, here, kfield.OMIT,
                "specifying one of OnExitCodes and OnPodConditions is required"), here)


def _on_exit_codes(on_exit: dict[str, Any], p: Path, names: set[str], out: Findings) -> None:
    operator = on_exit.get("operator")
    operator_path = (*p, "operator")
    if operator == "":
        out.add(POD_FAILURE_POLICY, kfield.required(
            operator_path, f"valid values: {go_string_list(ON_EXIT_CODES_OPERATORS)}"), p, path=operator_path)
    elif operator is not None and operator not in ON_EXIT_CODES_OPERATORS:
        out.add(POD_FAILURE_POLICY, kfield.not_supported(operator_path, operator, list(ON_EXIT_CODES_OPERATORS)),
                operator_path)
    container = on_exit.get("containerName")
    if isinstance(container, str) and container not in names:
        here = (*p, "containerName")
        out.add(POD_FAILURE_POLICY, kfield.invalid(
            here, container, "must be one of the container or initContainer names in the pod template"), here)
    values = items(on_exit.get("values"))
    values_path = (*p, "values")
    if not values and "values" in on_exit:
        out.add(POD_FAILURE_POLICY, kfield.invalid(values_path, values, "at least one value is required"), values_path)
    elif len(values) > MAX_ON_EXIT_CODES_VALUES:
        out.add(POD_FAILURE_POLICY, kfield.too_many(values_path, len(values), MAX_ON_EXIT_CODES_VALUES), values_path)
    seen: set[int] = set()
    ordered = True
    numbers = [integer(v) for v in values]
    for index, number in enumerate(numbers):
        if number is None:
            continue
        here = (*values_path, index)
        if operator == "In" and number == 0:
            out.add(POD_FAILURE_POLICY, kfield.invalid(here, number, "must not be 0 for the In operator"), here)
        if number in seen:
            out.add(POD_FAILURE_POLICY, kfield.duplicate(here, number), here)
        seen.add(number)
        previous = numbers[index - 1] if index > 0 else None
        if previous is not None and previous > number:
            ordered = False
    if not ordered:
        out.add(POD_FAILURE_POLICY, kfield.invalid(values_path, values, "must be ordered"), values_path)


def _on_pod_conditions(patterns: list[Any], p: Path, out: Findings) -> None:
    if len(patterns) > MAX_ON_POD_CONDITIONS_PATTERNS:
        out.add(POD_FAILURE_POLICY, kfield.too_many(p, len(patterns), MAX_ON_POD_CONDITIONS_PATTERNS), p)
    for index, raw in enumerate(patterns):
        pattern = mapping(raw)
        here = (*p, index)
        condition = pattern.get("type")
        if isinstance(condition, str):
            for detail in is_qualified_name(condition):
                out.add(POD_FAILURE_POLICY, kfield.invalid((*here, "type"), condition, detail), (*here, "type"))
        status = pattern.get("status")
        status_path = (*here, "status")
        if status in (None, ""):
            out.add(POD_FAILURE_POLICY, kfield.required(
                status_path, f"valid values: {go_string_list(ON_POD_CONDITIONS_STATUSES)}"), here, path=status_path)
        elif status not in ON_POD_CONDITIONS_STATUSES:
            out.add(POD_FAILURE_POLICY, kfield.not_supported(status_path, status, list(ON_POD_CONDITIONS_STATUSES)),
                    status_path)


def _pod_replacement_policy(spec: dict[str, Any], here: Path, out: Findings) -> None:
    policy = spec.get("podReplacementPolicy")
    if policy is None:
        return
    if spec.get("podFailurePolicy") is not None:
        if policy != "Failed":
            out.add(POD_REPLACEMENT_POLICY, kfield.not_supported(here, policy, ["Failed"]), here)
    elif policy not in POD_REPLACEMENT_POLICIES:
        out.add(POD_REPLACEMENT_POLICY, kfield.not_supported(here, policy, list(POD_REPLACEMENT_POLICIES)), here)


def _restart_policy(spec: dict[str, Any], p: Path, out: Findings) -> None:
    here = (*p, "template", "spec", "restartPolicy")
    pod_spec = mapping(mapping(spec.get("template")).get("spec"))
    policy = pod_spec.get("restartPolicy")
    # Pod defaulting turns a missing restartPolicy into Always, so both read as "not chosen".
    at = here if "restartPolicy" in pod_spec else (*p, "template")
    if policy in (None, "", "Always"):
        out.add(RESTART_POLICY, kfield.required(here, 'valid values: "OnFailure", "Never"'), at, path=here)
    elif policy not in ("OnFailure", "Never"):
        out.add(RESTART_POLICY, kfield.not_supported(here, policy, ["OnFailure", "Never"]), here)
    elif spec.get("podFailurePolicy") is not None and policy != "Never":
        out.add(RESTART_POLICY, kfield.invalid(
            here, policy, 'only "Never" is supported when podFailurePolicy is specified'), here)


def _managed_by(value: Any, here: Path, out: Findings) -> None:
    """``IsDomainPrefixedPath`` plus the 63-byte limit."""
    if not isinstance(value, str):
        return
    host, separator, rest = value.partition("/")
    if not separator or not host or not rest:
        out.add(MANAGED_BY, kfield.invalid(here, value, 'must be a domain-prefixed path (such as "acme.io/foo")'),
                here)
    else:
        for detail in is_dns1123_subdomain(host):
            out.add(MANAGED_BY, kfield.invalid(here, host, detail), here)
    if len(value) > MAX_MANAGED_BY_LENGTH:
        out.add(MANAGED_BY, kfield.too_long(here, MAX_MANAGED_BY_LENGTH), here)


def label_problems(labels: Any, here: Path) -> list[tuple[str, Any]]:
    """``ValidateLabels``: (message, label key) per problem; the path is the labels map itself."""
    problems: list[tuple[str, Any]] = []
    for key, value in mapping(labels).items():
        for detail in is_qualified_name(str(key)):
            problems.append((kfield.invalid(here, key, detail), key))
        if isinstance(value, str):
            for detail in is_valid_label_value(value):
                problems.append((kfield.invalid(here, value, detail), key))
    return problems


def validate_pod_template(template: Any, p: Path, out: Findings) -> None:
    """The part of ``ValidatePodTemplateSpec`` that concerns a Job: labels, containers, names, images.

    Quirk: template labels are reported at ``<template>.labels``, not ``<template>.metadata.labels``.
    """
    tmpl = mapping(template)
    meta = mapping(tmpl.get("metadata"))
    for message, key in label_problems(meta.get("labels"), (*p, "labels")):
        out.add(POD_TEMPLATE, message, (*p, "metadata", "labels", key), path=(*p, "labels"))
    spec_path = (*p, "spec")
    pod_spec = mapping(tmpl.get("spec"))
    if "containers" in pod_spec and not items(pod_spec.get("containers")):
        here = (*spec_path, "containers")
        out.add(POD_TEMPLATE, kfield.required(here), here)
    seen: set[str] = set()
    volumes = {v.get("name") for v in items(pod_spec.get("volumes")) if isinstance(v, dict)}
    for ref in all_containers(pod_spec):
        here = spec_path + ref.path
        # ValidateVolumeMounts: every mount names a volume of the pod (a JobSet accepts the template, the
        # Job create then fails: JobCreationFailed).
        for index, mount in enumerate(items(ref.container.get("volumeMounts"))):
            mount_name = mapping(mount).get("name")
            if isinstance(mount_name, str) and mount_name and mount_name not in volumes:
                where = (*here, "volumeMounts", index, "name")
                out.add(POD_TEMPLATE, kfield.field_error(kfield.ErrorType.NOT_FOUND, where, mount_name), where)
        name = ref.container.get("name")
        if name == "":
            out.add(POD_TEMPLATE, kfield.required((*here, "name")), (*here, "name"))
        elif isinstance(name, str):
            for detail in is_dns1123_label(name):
                out.add(POD_TEMPLATE, kfield.invalid((*here, "name"), name, detail), (*here, "name"))
            if name in seen:
                out.add(POD_TEMPLATE, kfield.duplicate((*here, "name"), name), (*here, "name"))
            seen.add(name)
        image = ref.container.get("image")
        if image is None or image == "":
            out.add(POD_TEMPLATE, kfield.required((*here, "image")), (*here, "image"))  # the container when absent
        elif isinstance(image, str) and image != image.strip():
            out.add(POD_TEMPLATE, kfield.invalid((*here, "image"), image, "must not have leading or trailing whitespace"),
                    (*here, "image"))
