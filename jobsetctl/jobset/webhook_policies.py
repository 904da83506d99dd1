"""CREATE checks of the success policy, failure policy and coordinator (jobset.md §2.2 #11-#20)."""

from __future__ import annotations

import re
from typing import Any

from jobsetctl.diagnostics import Finding
from jobsetctl.jobset import api, names
from jobsetctl.jobset.webhook_rules import (
    COORDINATOR,
    COORDINATOR_LABEL,
    FAILURE_RULE_NAME_FORMAT,
    FAILURE_RULE_NAME_LENGTH,
    FAILURE_RULE_NAMES_UNIQUE,
    FAILURE_RULE_REASON,
    FAILURE_RULE_TARGET,
    RESTART_JOB_GATE,
    RESTART_JOB_REPLICAS,
    SUCCESS_POLICY_TARGET,
    dict_items,
    plain_error,
)
from jobsetctl.kinds.interface import AdmissionContext
from jobsetctl.kube.field import Path, go_quote
from jobsetctl.kube.names import is_valid_label_value

_RULE_NAME = re.compile(api.RULE_NAME_PATTERN)


def check_success_policy(js: dict[str, Any], rjob_names: set[str]) -> list[Finding]:
    """#11."""
    targets = api.success_policy(js).get("targetReplicatedJobs")
    return [
        plain_error(
            SUCCESS_POLICY_TARGET,
            f"invalid replicatedJob name '{target}' does not appear in .spec.ReplicatedJobs",
            ("spec", "successPolicy", "targetReplicatedJobs", index),
        )
        for index, target in enumerate(api.as_list(targets))
        if isinstance(target, str) and target not in rjob_names
    ]


def check_failure_policy(js: dict[str, Any], rjob_names: set[str], ctx: AdmissionContext) -> list[Finding]:
    """#12-#18. A RestartJob action without its gate ends the failure-policy checks (#12)."""
    policy = api.failure_policy(js)
    if policy is None:
        return []
    base: Path = ("spec", "failurePolicy", "rules")
    rules = dict_items(policy.get("rules"))
    findings: list[Finding] = []

    restart_job_rule = next(
        (index for index, rule in rules if rule.get("action") in api.RESTART_JOB_ACTIONS), None
    )
    if restart_job_rule is not None:
        if not ctx.gates.enabled(api.GATE_RESTART_JOB):
            return [plain_error(
                RESTART_JOB_GATE,
                "RestartJob and RestartJobAndIgnoreMaxRestarts failure policy actions are not allowed "
                "when RestartJob feature gate is disabled",
                (*base, restart_job_rule, "action"),
            )]
        # Reported once, at the first replicated job over the limit (#13).
        for index, rjob in api.enumerate_replicated_jobs(js):
            if api.replicas(rjob) > api.MAX_REPLICAS_FOR_RESTART_JOB:
                findings.append(plain_error(
                    RESTART_JOB_REPLICAS,
                    "JobSet cannot have a failure policy rule with RestartJob or RestartJobAndIgnoreMaxRestarts "
                    f"action and a replicated job with replicas > {api.MAX_REPLICAS_FOR_RESTART_JOB}",
                    ("spec", "replicatedJobs", index, "replicas"),
                ))
                break

    indices_by_name: dict[str, list[int]] = {}
    for index, rule in rules:
        findings += _check_rule(base, index, rule, rjob_names)
        indices_by_name.setdefault(api.as_str(rule.get("name")), []).append(index)

    # Upstream walks a Go map (random order); we report groups by their first index.
    for rule_name, indices in indices_by_name.items():
        if len(indices) > 1:
            listed = "[" + " ".join(str(i) for i in indices) + "]"
            findings.append(plain_error(
                FAILURE_RULE_NAMES_UNIQUE,
                f"rule names are not unique, rules with indices {listed} all have the same name '{rule_name}'",
                (*base, indices[1], "name"),
            ))
    return findings


def _check_rule(base: Path, index: int, rule: dict[str, Any], rjob_names: set[str]) -> list[Finding]:
    """#14-#17 for one rule. An empty name fails both #14 and #15."""
    rule_name = api.as_str(rule.get("name"))
    name_at: Path = (*base, index, "name")
    findings: list[Finding] = []
    # Go's len() counts bytes.
    length = len(rule_name.encode())
    if not api.MIN_RULE_NAME_LENGTH <= length <= api.MAX_RULE_NAME_LENGTH:
        findings.append(plain_error(
            FAILURE_RULE_NAME_LENGTH,
            f"invalid failure policy rule name of length {length}, the rule name must be at least "
            f"{api.MIN_RULE_NAME_LENGTH} characters long and at most {api.MAX_RULE_NAME_LENGTH} characters long",
            name_at,
        ))
    if not _RULE_NAME.fullmatch(rule_name):
        findings.append(plain_error(
            FAILURE_RULE_NAME_FORMAT,
            f"invalid failure policy rule name '{rule_name}', a failure policy rule name must start with an "
            "alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', "
            "and must end with an alphanumeric character or '_'",
            name_at,
        ))
    for target_index, target in enumerate(api.as_list(rule.get("targetReplicatedJobs"))):
        if isinstance(target, str) and target not in rjob_names:
            findings.append(plain_error(
                FAILURE_RULE_TARGET,
                f"invalid replicatedJob name '{target}' in failure policy does not appear in .spec.ReplicatedJobs",
                (*base, index, "targetReplicatedJobs", target_index),
            ))
    # Duplicate reasons are accepted (jobset.md §6 #3); only unknown ones are reported.
    for reason_index, reason in enumerate(api.as_list(rule.get("onJobFailureReasons"))):
        if isinstance(reason, str) and reason not in api.JOB_FAILURE_REASONS:
            findings.append(plain_error(
                FAILURE_RULE_REASON,
                f"invalid job failure reason '{reason}' in failure policy is not a recognized job failure reason",
                (*base, index, "onJobFailureReasons", reason_index),
            ))
    return findings


def check_coordinator(js: dict[str, Any], jobset_name: str) -> list[Finding]:
    """#19 (first failure only) and #20 (always; jobset.md §6 #6)."""
    coordinator = api.coordinator(js)
    if coordinator is None:
        return []
    findings: list[Finding] = []
    first_problem = _coordinator_problem(js, coordinator)
    if first_problem is not None:
        message, at = first_problem
        findings.append(plain_error(COORDINATOR, message, at))
    if jobset_name:
        endpoint = names.coordinator_endpoint_of(js, jobset_name) or ""
        errors = is_valid_label_value(endpoint)
        if errors:
            findings.append(plain_error(
                COORDINATOR_LABEL,
                f"spec will lead to invalid label value {go_quote(endpoint)} for coordinator label "
                f"{go_quote(api.COORDINATOR_KEY)} (long JobSet / ReplicatedJob / SubDomain name?): "
                + ", ".join(errors),
                ("spec", "coordinator"),
            ))
    return findings


def _coordinator_problem(js: dict[str, Any], coordinator: dict[str, Any]) -> tuple[str, Path] | None:
    """The first failing coordinator check of #19, with where to point, or None."""
    base: Path = ("spec", "coordinator")
    wanted = api.as_str(coordinator.get("replicatedJob"))
    found = api.find_replicated_job(js, wanted)
    if found is None:
        return f"coordinator replicatedJob {wanted} does not exist", (*base, "replicatedJob")
    rjob_index, rjob = found
    job_index = api.as_int(coordinator.get("jobIndex")) or 0
    if job_index < 0 or job_index >= api.replicas(rjob):
        return f"coordinator job index {job_index} is invalid for replicatedJob {wanted}", (*base, "jobIndex")
    completions = api.completions(rjob)
    if completions is None or not api.is_indexed(rjob):
        field_name = "completions" if api.is_indexed(rjob) else "completionMode"
        return (
            "job for coordinator pod must be indexed completion mode, and completions number must be set",
            ("spec", "replicatedJobs", rjob_index, "template", "spec", field_name),
        )
    pod_index = api.as_int(coordinator.get("podIndex")) or 0
    if pod_index < 0 or pod_index >= completions:
        return (
            f"coordinator pod index {pod_index} is invalid for replicatedJob {wanted} job index {job_index}",
            (*base, "podIndex"),
        )
    return None
