"""The rules of the JobSet validating webhook ``vjobset.kb.io`` on CREATE: one per upstream check.

Rules are data (jobset.md §2.2, the ``#`` numbers are that table's); the checks that report them are
in :mod:`jobsetctl.jobset.webhook` and its ``webhook_*`` helpers. Findings carry the upstream message
verbatim: field errors as apimachinery renders them, plain errors as ``<nil>: Internal error: …``
(jobset.md §2.1).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.kube import field
from jobsetctl.kube.field import Path, path_string
from jobsetctl.rules.interface import Rule
from jobsetctl.rules.registry import define


def _rule(rule_id: str, number: str, summary: str, doc: str = "") -> Rule:
    return define(rule_id, Layer.WEBHOOK, Severity.ERROR, summary, spec=f"jobset.md §2.2 #{number}", doc=doc)


INPLACE_RESTART_GATE = _rule(
    "jobset-inplace-restart-gate", "1",
    "failurePolicy.restartStrategy InPlaceRestart needs the InPlaceRestart feature gate.",
)
DEPENDS_ON_FIRST = _rule(
    "jobset-depends-on-first", "2",
    "The first replicated job may not set dependsOn (not even an empty list).",
)
SUBDOMAIN = _rule(
    "jobset-subdomain", "3",
    "network.subdomain must be a DNS-1123 subdomain.",
)
SUBDOMAIN_LABEL = _rule(
    "jobset-subdomain-label", "3b",
    "network.subdomain is also the Service name, so it must be a DNS-1035 label of at most 63 characters.",
    doc="The length message says 'less than 63 characters', but exactly 63 is accepted (jobset.md §6 #4).",
)
MANAGED_BY = _rule(
    "jobset-managed-by", "4",
    "spec.managedBy must be a domain-prefixed path such as acme.io/foo.",
)
MANAGED_BY_LENGTH = _rule(
    "jobset-managed-by-length", "4b",
    "spec.managedBy may be at most 63 bytes long.",
)
REPLICAS_PARALLELISM_OVERFLOW = _rule(
    "jobset-replicas-parallelism-overflow", "5",
    "replicas × parallelism of a replicated job must fit in an int32.",
)
GROUP_NAME = _rule(
    "jobset-group-name", "6",
    "groupName must be a DNS-1035 label of at most 63 characters.",
    doc="The length message says 'less than 63 characters', but exactly 63 is accepted (jobset.md §6 #4).",
)
JOB_NAME = _rule(
    "jobset-job-name", "7",
    "The longest child Job name <jobset>-<replicatedJob>-<replicas-1> must be a DNS-1035 label (≤ 63).",
)
POD_NAME = _rule(
    "jobset-pod-name", "8",
    "For an Indexed job with completions, the longest pod name must be a DNS-1035 label (≤ 63).",
    doc="The bad value shown is the job name, not the pod name (jobset.md §6 #5).",
)
DEPENDS_ON_ORDER = _rule(
    "jobset-depends-on-order", "9",
    "dependsOn may only name replicated jobs listed earlier (or, a quirk, the replicated job itself).",
)
INPLACE_RESTART_BACKOFF_LIMIT = _rule(
    "jobset-inplace-restart-backoff-limit", "10",
    "With in-place restart, every replicated job needs backoffLimit 2147483647.",
)
INPLACE_RESTART_POD_REPLACEMENT = _rule(
    "jobset-inplace-restart-pod-replacement-policy", "10b",
    "With in-place restart, every replicated job needs podReplacementPolicy Failed.",
)
INPLACE_RESTART_COMPLETIONS = _rule(
    "jobset-inplace-restart-completions", "10c",
    "With in-place restart, completions and parallelism must be set and equal.",
)
SUCCESS_POLICY_TARGET = _rule(
    "jobset-success-policy-target", "11",
    "successPolicy.targetReplicatedJobs must name existing replicated jobs.",
)
RESTART_JOB_GATE = _rule(
    "jobset-restart-job-gate", "12",
    "RestartJob and RestartJobAndIgnoreMaxRestarts actions need the RestartJob feature gate.",
    doc="When this fires, the other failure-policy checks (#13-#18) are skipped, as upstream returns early.",
)
RESTART_JOB_REPLICAS = _rule(
    "jobset-restart-job-replicas", "13",
    "With a RestartJob action, no replicated job may have more than 1024 replicas.",
)
FAILURE_RULE_NAME_LENGTH = _rule(
    "jobset-failure-rule-name-length", "14",
    "A failure-policy rule name must be 1 to 128 characters long.",
)
FAILURE_RULE_NAME_FORMAT = _rule(
    "jobset-failure-rule-name-format", "15",
    "A failure-policy rule name must match ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$.",
)
FAILURE_RULE_TARGET = _rule(
    "jobset-failure-rule-target", "16",
    "A failure-policy rule's targetReplicatedJobs must name existing replicated jobs.",
)
FAILURE_RULE_REASON = _rule(
    "jobset-failure-rule-reason", "17",
    "onJobFailureReasons must be Job failure reasons JobSet knows.",
)
FAILURE_RULE_NAMES_UNIQUE = _rule(
    "jobset-failure-rule-names-unique", "18",
    "Failure-policy rule names must be unique.",
)
COORDINATOR = _rule(
    "jobset-coordinator", "19",
    "spec.coordinator must name an existing Indexed replicated job with completions, and valid indices.",
    doc="Only the first failing coordinator check is reported (jobset.md §6 #6).",
)
COORDINATOR_LABEL = _rule(
    "jobset-coordinator-label", "20",
    "The coordinator endpoint <js>-<rj>-<job>-<pod>.<subdomain> must be a valid label value (≤ 63).",
    doc="Checked even when jobset-coordinator fails (jobset.md §6 #6).",
)
VCP_TEMPLATE_NAME_UNIQUE = _rule(
    "jobset-vcp-template-name-unique", "21",
    "volumeClaimPolicies template names must be unique across all policies.",
)
VCP_TEMPLATE_NAME = _rule(
    "jobset-vcp-template-name", "22",
    "A volumeClaimPolicies template name must be a DNS-1123 subdomain.",
)
VCP_PVC_NAME_LENGTH = _rule(
    "jobset-vcp-pvc-name-length", "23",
    "The PVC name <template>-<jobset> may be at most 63 characters long.",
)
VCP_VOLUME_CONFLICT = _rule(
    "jobset-vcp-volume-conflict", "24",
    "A pod-template volume may not have the name of a volumeClaimPolicies template.",
)
VCP_VOLUME_MOUNT = _rule(
    "jobset-vcp-volume-mount", "25",
    "Each volumeClaimPolicies template must be mounted by some container of some replicated job.",
)
VCP_EXISTING_PVC_SPEC = _rule(
    "jobset-vcp-existing-pvc-spec", "26",
    "An existing PVC <template>-<jobset> must have exactly the template's spec.",
    doc="Existing PVCs are the PersistentVolumeClaim objects among the inputs (or in the simulated cluster).",
)
VCP_EXISTING_PVC_RETENTION = _rule(
    "jobset-vcp-existing-pvc-retention", "26b",
    "When the PVC <template>-<jobset> already exists, the policy's whenDeleted must be Retain.",
)


# ---------------------------------------------------------------------------------------------------
# Building findings (jobset.md §2.1)


def plain_error(rule: Rule, message: str, at: Path) -> Finding:
    """A plain (non-field) webhook error: upstream wraps it with a nil path, so the message is
    ``<nil>: Internal error: <message>``; we point at the offending field and report its path.

    Unsure: jobset.md §8 derived this rendering from the apimachinery source without running it;
    upstream's own tests only check that the message is a substring.
    """
    return rule.finding(field.internal(message), path=path_string(at), at=at)


def field_error(rule: Rule, message: str, path: str, at: Path | None = None) -> Finding:
    """A field error already rendered by :mod:`jobsetctl.kube.field`; ``path`` is upstream's, verbatim."""
    return rule.finding(message, path=path, at=at)


def unique_messages(findings: Iterable[Finding]) -> list[Finding]:
    """Drop findings whose message repeats an earlier one: upstream aggregates identical error
    strings into one (apimachinery ``ToAggregate``; jobset.md §2.1)."""
    seen: set[str] = set()
    kept: list[Finding] = []
    for finding in findings:
        if finding.message not in seen:
            seen.add(finding.message)
            kept.append(finding)
    return kept


def dict_items(value: Any) -> list[tuple[int, dict[str, Any]]]:
    """``(index, item)`` for the mapping items of a list, indices as in the manifest."""
    if not isinstance(value, list):
        return []
    return [(index, item) for index, item in enumerate(value) if isinstance(item, dict)]
