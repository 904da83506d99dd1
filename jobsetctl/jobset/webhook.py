"""The JobSet validating webhook ``vjobset.kb.io`` on CREATE (jobset.md §2.2), in upstream order.

Every check runs and errors accumulate; identical messages are reported once, as upstream's
aggregate does. Names derived from the JobSet (Jobs, pods, the coordinator endpoint, PVCs) come from
:mod:`jobsetctl.jobset.names`. The checks that need other objects (existing PVCs, #26) are in
:func:`jobsetctl.jobset.webhook_vcp.validate_existing_pvcs`, run from ``validate_in_cluster``.

One deliberate difference: when the JobSet has neither ``name`` nor ``generateName`` the API server
rejects it before webhooks run (ObjectMeta validation), so the derived-name checks (#7, #8, #20) are
skipped instead of reporting names like ``-rj-0``.
"""

from __future__ import annotations

from typing import Any

from jobsetctl.diagnostics import Finding
from jobsetctl.jobset import api, names
from jobsetctl.jobset.webhook_policies import check_coordinator, check_failure_policy, check_success_policy
from jobsetctl.jobset.webhook_rules import (
    DEPENDS_ON_FIRST,
    DEPENDS_ON_ORDER,
    GROUP_NAME,
    INPLACE_RESTART_BACKOFF_LIMIT,
    INPLACE_RESTART_COMPLETIONS,
    INPLACE_RESTART_GATE,
    INPLACE_RESTART_POD_REPLACEMENT,
    JOB_NAME,
    MANAGED_BY,
    MANAGED_BY_LENGTH,
    POD_NAME,
    REPLICAS_PARALLELISM_OVERFLOW,
    SUBDOMAIN,
    SUBDOMAIN_LABEL,
    dict_items,
    field_error,
    plain_error,
    unique_messages,
)
from jobsetctl.jobset.webhook_vcp import check_volume_claim_policies
from jobsetctl.kinds.interface import AdmissionContext
from jobsetctl.kube import field
from jobsetctl.kube.field import Path, path_string
from jobsetctl.kube.names import (
    DNS1035_LABEL_MAX,
    domain_prefixed_path_errors,
    is_dns1035_label,
    is_dns1123_subdomain,
    max_len_error,
)

#: What ``IsDNS1035Label`` says about length; upstream swaps it for its own text (§2.2 #3b, #6-#8).
_DNS1035_TOO_LONG = max_len_error(DNS1035_LABEL_MAX)
SUBDOMAIN_TOO_LONG = ".spec.network.subdomain is too long, must be less than 63 characters"
GROUP_NAME_TOO_LONG = ".spec.replicatedJob[].groupName is too long, must be less than 63 characters"
JOB_NAME_TOO_LONG = "JobSet name is too long, job names generated for this JobSet will exceed 63 characters"
POD_NAME_TOO_LONG = "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters"


def validate_create(js: dict[str, Any], ctx: AdmissionContext) -> list[Finding]:
    """Every CREATE check of jobset.md §2.2 except the existing-PVC lookups (#26)."""
    jobset_name = names.jobset_name_for_validation(js)
    findings: list[Finding] = []
    findings += _check_in_place_restart_gate(js, ctx)
    findings += _check_first_depends_on(js)
    findings += _check_subdomain(js)
    findings += _check_managed_by(js)
    # Each name enters the set before its own dependsOn is checked, so a replicated job may depend
    # on itself (jobset.md §6 #2).
    seen: set[str] = set()
    for index, rjob in api.enumerate_replicated_jobs(js):
        seen.add(api.rjob_name(rjob))
        findings += _check_replicated_job(js, index, rjob, jobset_name, seen, ctx)
    all_names = set(api.replicated_job_names(js))
    findings += check_success_policy(js, all_names)
    findings += check_failure_policy(js, all_names, ctx)
    findings += check_coordinator(js, jobset_name)
    findings += check_volume_claim_policies(js, jobset_name)
    return unique_messages(findings)


def _check_in_place_restart_gate(js: dict[str, Any], ctx: AdmissionContext) -> list[Finding]:
    """#1."""
    if ctx.gates.enabled(api.GATE_IN_PLACE_RESTART) or not _uses_in_place_restart(js):
        return []
    return [plain_error(
        INPLACE_RESTART_GATE,
        "InPlaceRestart restart strategy cannot be set when InPlaceRestart feature gate is disabled",
        ("spec", "failurePolicy", "restartStrategy"),
    )]


def _uses_in_place_restart(js: dict[str, Any]) -> bool:
    policy = api.failure_policy(js)
    return policy is not None and policy.get("restartStrategy") == api.RestartStrategy.IN_PLACE_RESTART


def _check_first_depends_on(js: dict[str, Any]) -> list[Finding]:
    """#2: even an explicit empty list counts (Go decodes ``[]`` to a non-nil slice)."""
    items = api.as_list(api.spec(js).get("replicatedJobs"))
    if not items or api.depends_on(items[0]) is None:
        return []
    return [plain_error(
        DEPENDS_ON_FIRST,
        "DependsOn can't be set for the first ReplicatedJob",
        ("spec", "replicatedJobs", 0, "dependsOn"),
    )]


def _check_subdomain(js: dict[str, Any]) -> list[Finding]:
    """#3 and #3b: the subdomain is a DNS name and also the headless Service's name."""
    subdomain = api.subdomain(js)
    if not subdomain:
        return []
    path = "spec.network.subdomain"
    findings = [
        field_error(SUBDOMAIN, field.invalid(path, subdomain, detail), path)
        for detail in is_dns1123_subdomain(subdomain)
    ]
    for detail in is_dns1035_label(subdomain):
        # Upstream swaps the length message, which then says "less than 63" (jobset.md §6 #4).
        text = SUBDOMAIN_TOO_LONG if _DNS1035_TOO_LONG in detail else detail
        findings.append(field_error(SUBDOMAIN_LABEL, field.invalid(path, subdomain, text), path))
    return findings


def _check_managed_by(js: dict[str, Any]) -> list[Finding]:
    """#4 and #4b (apimachinery ``IsDomainPrefixedPath``, then a 63-byte limit)."""
    manager = api.managed_by(js)
    if manager is None:
        return []
    path = "spec.managedBy"
    findings = [field_error(MANAGED_BY, message, path) for message in domain_prefixed_path_errors(path, manager)]
    if len(manager.encode()) > api.MAX_MANAGED_BY_LENGTH:
        findings.append(field_error(MANAGED_BY_LENGTH, field.too_long(path, api.MAX_MANAGED_BY_LENGTH), path))
    return findings


def _check_replicated_job(
    js: dict[str, Any],
    index: int,
    rjob: dict[str, Any],
    jobset_name: str,
    seen: set[str],
    ctx: AdmissionContext,
) -> list[Finding]:
    """#5-#10 for one replicated job, in upstream order."""
    base: Path = ("spec", "replicatedJobs", index)
    rjob_name = api.rjob_name(rjob)
    replicas = api.replicas(rjob)
    findings: list[Finding] = []

    parallelism = api.parallelism(rjob)
    if (1 if parallelism is None else parallelism) * replicas > api.MAX_INT32:
        findings.append(plain_error(
            REPLICAS_PARALLELISM_OVERFLOW,
            "the product of replicas and parallelism must not exceed "
            f"{api.MAX_INT32} for replicatedJob '{rjob_name}'",
            (*base, "replicas"),
        ))

    group = api.group_name(rjob)
    group_path = path_string((*base, "groupName"))
    for detail in is_dns1035_label(group):
        text = GROUP_NAME_TOO_LONG if _DNS1035_TOO_LONG in detail else detail
        findings.append(field_error(GROUP_NAME, field.invalid(group_path, group, text), group_path))

    if jobset_name:
        findings += _check_derived_names(base, rjob, jobset_name)

    for item_index, item in dict_items(rjob.get("dependsOn")):
        dependency = api.as_str(item.get("name"))
        if dependency not in seen:
            findings.append(plain_error(
                DEPENDS_ON_ORDER,
                f"replicatedJob: {rjob_name} cannot depend on replicatedJob: {dependency}",
                (*base, "dependsOn", item_index, "name"),
            ))

    if ctx.gates.enabled(api.GATE_IN_PLACE_RESTART) and _uses_in_place_restart(js):
        findings += _check_in_place_restart(base, rjob)
    return findings


def _check_derived_names(base: Path, rjob: dict[str, Any], jobset_name: str) -> list[Finding]:
    """#7 and #8. Both report at ``spec.replicatedJobs[i].name`` with the longest *job* name as the
    bad value, even for the pod-name check (jobset.md §6 #5)."""
    rjob_name = api.rjob_name(rjob)
    replicas = api.replicas(rjob)
    path = path_string((*base, "name"))
    longest_job = names.longest_job_name(jobset_name, rjob_name, replicas)
    findings = []
    for detail in is_dns1035_label(longest_job):
        text = JOB_NAME_TOO_LONG if _DNS1035_TOO_LONG in detail else detail
        findings.append(field_error(JOB_NAME, field.invalid(path, longest_job, text), path))
    completions = api.completions(rjob)
    if api.is_indexed(rjob) and completions is not None:
        longest_pod = names.longest_pod_name_for_validation(jobset_name, rjob_name, replicas, completions)
        for detail in is_dns1035_label(longest_pod):
            text = POD_NAME_TOO_LONG if _DNS1035_TOO_LONG in detail else detail
            findings.append(field_error(POD_NAME, field.invalid(path, longest_job, text), path))
    return findings


def _check_in_place_restart(base: Path, rjob: dict[str, Any]) -> list[Finding]:
    """#10, #10b, #10c (only with the gate on and the InPlaceRestart strategy)."""
    rjob_name = api.rjob_name(rjob)
    job_spec = api.job_spec(rjob)
    spec_path: Path = (*base, "template", "spec")
    findings = []

    backoff_limit = api.as_int(job_spec.get("backoffLimit"))
    if backoff_limit != api.MAX_INT32:
        path = path_string((*spec_path, "backoffLimit"))
        detail = f"replicatedJob {rjob_name}: must be set to {api.MAX_INT32} (MaxInt32) when in-place restart is enabled"
        findings.append(field_error(INPLACE_RESTART_BACKOFF_LIMIT, field.invalid(path, backoff_limit, detail), path))

    replacement = job_spec.get("podReplacementPolicy")
    replacement = replacement if isinstance(replacement, str) else None
    if replacement != api.POD_REPLACEMENT_POLICY_FAILED:
        path = path_string((*spec_path, "podReplacementPolicy"))
        detail = (
            f"replicatedJob {rjob_name}: must be set to {api.POD_REPLACEMENT_POLICY_FAILED} "
            "when in-place restart is enabled"
        )
        findings.append(field_error(INPLACE_RESTART_POD_REPLACEMENT, field.invalid(path, replacement, detail), path))

    completions = api.completions(rjob)
    parallelism = api.parallelism(rjob)
    if completions is None or parallelism is None or completions != parallelism:
        path = path_string((*spec_path, "completions"))
        detail = (
            f"replicatedJob {rjob_name}: completions and parallelism must be set and equal to each other "
            "when in-place restart is enabled"
        )
        findings.append(field_error(INPLACE_RESTART_COMPLETIONS, field.invalid(path, completions, detail), path))
    return findings
