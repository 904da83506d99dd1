"""The defaulting webhook ``mjobset.kb.io`` (jobset.md §1.1 step 2), run on CREATE only.

CRD structural defaults (replicas, groupName, restartStrategy, whenDeleted) are applied earlier by
the schema layer from the authored schema; they are not repeated here.

Shape tolerance: Go decodes an absent struct as its zero value, so the webhook still writes into it
(a replicated job without ``template`` gets ``template.spec.completionMode``). We do the same for
absent or null values, and leave alone any value of the wrong type: the schema layer reports it.
"""

from __future__ import annotations

from typing import Any

from jobsetctl.jobset import api, names


def apply_webhook_defaults(js: dict[str, Any]) -> None:
    """Default a JobSet in place, in upstream order."""
    spec = _child(js, "spec")
    if spec is None:
        return
    if spec.get("successPolicy") is None:
        spec["successPolicy"] = {"operator": api.SuccessOperator.ALL.value}
    if spec.get("startupPolicy") is None:
        spec["startupPolicy"] = {"startupPolicyOrder": api.StartupPolicyOrder.ANY_ORDER.value}
    _default_replicated_jobs(spec)
    _default_network(spec)
    _default_failure_rule_names(spec)
    _default_retention_policies(spec)


def _child(parent: dict[str, Any], key: str) -> dict[str, Any] | None:
    """``parent[key]``, created as ``{}`` when absent or null; None when it has the wrong type."""
    value = parent.get(key)
    if value is None:
        value = parent[key] = {}
    return value if isinstance(value, dict) else None


def _default_replicated_jobs(spec: dict[str, Any]) -> None:
    rjobs = spec.get("replicatedJobs")
    if not isinstance(rjobs, list):
        return
    for rjob in rjobs:
        if not isinstance(rjob, dict):
            continue
        template = _child(rjob, "template")
        job_spec = _child(template, "spec") if template is not None else None
        if job_spec is None:
            continue
        if job_spec.get("completionMode") is None:
            job_spec["completionMode"] = api.COMPLETION_MODE_INDEXED
        pod_template = _child(job_spec, "template")
        pod_spec = _child(pod_template, "spec") if pod_template is not None else None
        # Go compares with "": an explicit empty string is defaulted like an absent one.
        if pod_spec is not None and pod_spec.get("restartPolicy") in (None, ""):
            pod_spec["restartPolicy"] = api.RESTART_POLICY_ON_FAILURE


def _default_network(spec: dict[str, Any]) -> None:
    network = _child(spec, "network")
    if network is None:
        return
    if network.get("enableDNSHostnames") is None:
        network["enableDNSHostnames"] = True
    if network.get("publishNotReadyAddresses") is None:
        network["publishNotReadyAddresses"] = True


def _default_failure_rule_names(spec: dict[str, Any]) -> None:
    policy = spec.get("failurePolicy")
    if not isinstance(policy, dict):
        return
    rules = policy.get("rules")
    if not isinstance(rules, list):
        return
    # The index is the rule's position in the list, not a count of unnamed rules (jobset.md §1.1).
    for index, rule in enumerate(rules):
        if isinstance(rule, dict) and rule.get("name") in (None, ""):
            rule["name"] = names.default_rule_name(index)


def _default_retention_policies(spec: dict[str, Any]) -> None:
    for policy in api.as_list(spec.get("volumeClaimPolicies")):
        if isinstance(policy, dict) and policy.get("retentionPolicy") is None:
            policy["retentionPolicy"] = {"whenDeleted": api.RetentionPolicy.DELETE.value}
