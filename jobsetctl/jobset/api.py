"""JobSet API constants and type-safe accessors (``jobset.x-k8s.io/v1alpha2``).

Every label and annotation key, enum value, limit, condition and event text of the JobSet API is
defined here once (jobset.md §1.7, §1.8, §3.2, §4.6, §4.9); webhooks, the controller and the
simulator import them instead of spelling strings again.

The accessors read a manifest as plain ``dict`` data and tolerate any shape: admission runs them
before (or without) the schema layer, so a wrong type must never raise. They return the value Go
would see after decoding, e.g. an absent ``dependsOn`` is ``None`` and an explicit ``[]`` is ``[]``
(the two differ for jobset.md §2.2 #2).
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import StrEnum
from typing import Any, Final

# ---------------------------------------------------------------------------------------------------
# Group, version, kind (jobset.md §1)

GROUP: Final = "jobset.x-k8s.io"
VERSION: Final = "v1alpha2"
API_VERSION: Final = f"{GROUP}/{VERSION}"
KIND: Final = "JobSet"
#: Our authored schema, ``jobsetctl/schemas/<name>.json`` (CRD defaults and CEL rules live there).
SCHEMA_NAME: Final = "jobset.x-k8s.io_v1alpha2_JobSet"

# JobSet feature gates (jobset.md, feature gate table; defaults live in kube/featuregates.py).
GATE_IN_PLACE_RESTART: Final = "InPlaceRestart"
GATE_RESTART_JOB: Final = "RestartJob"
GATE_ELASTIC_JOBSET: Final = "ElasticJobSet"

# ---------------------------------------------------------------------------------------------------
# Label and annotation keys (jobset.md §1.8, §3.2)

JOBSET_NAME_KEY: Final = "jobset.sigs.k8s.io/jobset-name"
JOBSET_UID_KEY: Final = "jobset.sigs.k8s.io/jobset-uid"
REPLICATED_JOB_NAME_KEY: Final = "jobset.sigs.k8s.io/replicatedjob-name"
REPLICATED_JOB_REPLICAS_KEY: Final = "jobset.sigs.k8s.io/replicatedjob-replicas"
GLOBAL_REPLICAS_KEY: Final = "jobset.sigs.k8s.io/global-replicas"
JOB_INDEX_KEY: Final = "jobset.sigs.k8s.io/job-index"
JOB_GLOBAL_INDEX_KEY: Final = "jobset.sigs.k8s.io/job-global-index"
#: SHA-1 (not SHA-256, jobset.md §6 #9) of ``<namespace>/<jobName>``: see ``names.job_key``.
JOB_KEY: Final = "jobset.sigs.k8s.io/job-key"
GROUP_NAME_KEY: Final = "jobset.sigs.k8s.io/group-name"
GROUP_REPLICAS_KEY: Final = "jobset.sigs.k8s.io/group-replicas"
JOB_GROUP_INDEX_KEY: Final = "jobset.sigs.k8s.io/job-group-index"
COORDINATOR_KEY: Final = "jobset.sigs.k8s.io/coordinator"
RESTART_ATTEMPT_KEY: Final = "jobset.sigs.k8s.io/restart-attempt"
#: Only written with the RestartJob gate (jobset.md §3.2).
JOB_RESTART_ATTEMPT_KEY: Final = "jobset.sigs.k8s.io/job-restart-attempt"
#: Pod label written by the mutating pod webhook (jobset.md §3.6).
PRIORITY_KEY: Final = "jobset.sigs.k8s.io/priority"
#: Pod annotation written by the in-place restart agent (jobset.md §4.10).
IN_PLACE_RESTART_ATTEMPT_KEY: Final = "jobset.sigs.k8s.io/in-place-restart-attempt"
#: JobSet annotation that turns in-place restart off for one JobSet.
DISABLE_IN_PLACE_RESTART_KEY: Final = "jobset.sigs.k8s.io/disable-in-place-restart"

#: Exclusive placement (annotation on the JobSet or on a replicated job's template; jobset.md §3.6).
EXCLUSIVE_TOPOLOGY_KEY: Final = "alpha.jobset.sigs.k8s.io/exclusive-topology"
#: Node-selector strategy flag (any value; jobset.md §3.7).
NODE_SELECTOR_STRATEGY_KEY: Final = "alpha.jobset.sigs.k8s.io/node-selector"
#: Node label the node-selector strategy selects on; its value is ``names.namespaced_job_value``.
NAMESPACED_JOB_KEY: Final = "alpha.jobset.sigs.k8s.io/namespaced-job"
#: Node taint key the node-selector strategy tolerates.
NO_SCHEDULE_TAINT_KEY: Final = "alpha.jobset.sigs.k8s.io/no-schedule"

#: Keys written both as label and annotation on every child Job and its pod template (jobset.md §3.2).
CHILD_KEYS: Final = (
    JOBSET_NAME_KEY,
    JOBSET_UID_KEY,
    REPLICATED_JOB_NAME_KEY,
    REPLICATED_JOB_REPLICAS_KEY,
    GLOBAL_REPLICAS_KEY,
    JOB_INDEX_KEY,
    JOB_GLOBAL_INDEX_KEY,
    JOB_KEY,
    GROUP_NAME_KEY,
    GROUP_REPLICAS_KEY,
    JOB_GROUP_INDEX_KEY,
    RESTART_ATTEMPT_KEY,
)

#: The reserved ``spec.managedBy`` value: the built-in controller (jobset.md §1.2, §4.1 step 2).
JOBSET_CONTROLLER_NAME: Final = "jobset.sigs.k8s.io/jobset-controller"

# ---------------------------------------------------------------------------------------------------
# Enums (jobset.md §1.3-§1.6)


class SuccessOperator(StrEnum):
    ALL = "All"
    ANY = "Any"


class StartupPolicyOrder(StrEnum):
    ANY_ORDER = "AnyOrder"
    IN_ORDER = "InOrder"


class FailurePolicyAction(StrEnum):
    FAIL_JOBSET = "FailJobSet"
    RESTART_JOBSET = "RestartJobSet"
    RESTART_JOBSET_AND_IGNORE_MAX_RESTARTS = "RestartJobSetAndIgnoreMaxRestarts"
    RESTART_JOB = "RestartJob"
    RESTART_JOB_AND_IGNORE_MAX_RESTARTS = "RestartJobAndIgnoreMaxRestarts"


#: Actions that need the RestartJob feature gate (jobset.md §2.2 #12).
RESTART_JOB_ACTIONS: Final = frozenset({
    FailurePolicyAction.RESTART_JOB.value,
    FailurePolicyAction.RESTART_JOB_AND_IGNORE_MAX_RESTARTS.value,
})


class RestartStrategy(StrEnum):
    RECREATE = "Recreate"
    BLOCKING_RECREATE = "BlockingRecreate"
    IN_PLACE_RESTART = "InPlaceRestart"


class DependsOnStatus(StrEnum):
    READY = "Ready"
    COMPLETE = "Complete"


class RetentionPolicy(StrEnum):
    DELETE = "Delete"
    RETAIN = "Retain"


class JobFailureReason(StrEnum):
    """The batch/v1 Job failure reasons ``onJobFailureReasons`` may name (jobset.md §1.5, §2.2 #17)."""

    BACKOFF_LIMIT_EXCEEDED = "BackoffLimitExceeded"
    DEADLINE_EXCEEDED = "DeadlineExceeded"
    FAILED_INDEXES = "FailedIndexes"
    MAX_FAILED_INDEXES_EXCEEDED = "MaxFailedIndexesExceeded"
    POD_FAILURE_POLICY = "PodFailurePolicy"


#: In the order upstream lists them.
JOB_FAILURE_REASONS: Final = tuple(r.value for r in JobFailureReason)

# batch/v1 and core/v1 values the JobSet webhooks write or compare against.
COMPLETION_MODE_INDEXED: Final = "Indexed"
RESTART_POLICY_ON_FAILURE: Final = "OnFailure"
POD_REPLACEMENT_POLICY_FAILED: Final = "Failed"

# ---------------------------------------------------------------------------------------------------
# Limits

MAX_INT32: Final = 2_147_483_647
#: RestartJob actions need every replicated job at or under this (status arrays max out; §2.2 #13).
MAX_REPLICAS_FOR_RESTART_JOB: Final = 1024
#: Parallel Job creates and deletes per reconcile (jobset.md §1.8).
MAX_PARALLEL_CREATES: Final = 50
#: CRD ``maxItems`` of ``replicatedJobs[].dependsOn`` (jobset.md §1.3).
MAX_DEPENDS_ON: Final = 5
#: CRD ``maxItems`` of ``volumeClaimPolicies`` and of each policy's ``templates`` (jobset.md §1.2, §1.6).
MAX_VOLUME_CLAIM_POLICY_TEMPLATES: Final = 50
#: ``status.replicatedJobsStatus[].jobRestarts`` maxItems (jobset.md §1.7).
MAX_JOB_RESTARTS_ITEMS: Final = 1024
MAX_MANAGED_BY_LENGTH: Final = 63
#: PVC names ``<template>-<jobset>`` (jobset.md §2.2 #23).
MAX_VOLUME_CLAIM_NAME_LENGTH: Final = 63
MIN_RULE_NAME_LENGTH: Final = 1
MAX_RULE_NAME_LENGTH: Final = 128
#: Failure-policy rule names, anchored at both ends (jobset.md §1.5).
RULE_NAME_PATTERN: Final = r"[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?"

# CRD structural defaults (jobset.md §1.1 step 1). The schema layer writes them into the object;
# accessors fall back to them only so that reading an object that skipped schema defaulting (raw
# input, a schema not yet compiled) sees what the API server would have stored.
CRD_DEFAULT_REPLICAS: Final = 1
CRD_DEFAULT_GROUP_NAME: Final = "default"

# ---------------------------------------------------------------------------------------------------
# Conditions, reasons, messages and events (jobset.md §4.6-§4.9)


class ConditionType(StrEnum):
    COMPLETED = "Completed"
    FAILED = "Failed"
    SUSPENDED = "Suspended"
    RESTARTING = "RestartingJobSet"
    STARTUP_POLICY_IN_PROGRESS = "StartupPolicyInProgress"
    STARTUP_POLICY_COMPLETED = "StartupPolicyCompleted"


class TerminalState(StrEnum):
    COMPLETED = "Completed"
    FAILED = "Failed"


REASON_ALL_JOBS_COMPLETED: Final = "AllJobsCompleted"
MESSAGE_ALL_JOBS_COMPLETED: Final = "jobset completed successfully"
REASON_FAILED_JOBS: Final = "FailedJobs"
MESSAGE_FAILED_JOBS: Final = "jobset failed due to one or more job failures"
REASON_REACHED_MAX_RESTARTS: Final = "ReachedMaxRestarts"
MESSAGE_REACHED_MAX_RESTARTS: Final = "jobset failed due to reaching max number of restarts"
REASON_FAIL_JOBSET_ACTION: Final = "FailJobSetFailurePolicyAction"
MESSAGE_FAIL_JOBSET_ACTION: Final = "applying FailJobSet failure policy action"
REASON_SUSPENDED: Final = "SuspendedJobs"
MESSAGE_SUSPENDED: Final = "jobset is suspended"
REASON_RESUMED: Final = "ResumeJobs"
MESSAGE_RESUMED: Final = "jobset is resumed"
REASON_DEFAULT_FAILURE_POLICY: Final = "DefaultFailurePolicy"
REASON_JOBS_READY: Final = "JobsReady"
MESSAGE_JOBS_READY: Final = "all jobs are ready"
REASON_JOBSET_FAILED: Final = "JobSetFailed"
MESSAGE_JOBSET_FAILED: Final = "jobset failed"
REASON_JOBSET_COMPLETED: Final = "JobSetCompleted"
REASON_JOBSET_SUSPENDED: Final = "JobSetSuspended"
REASON_IN_ORDER_IN_PROGRESS: Final = "InOrderStartupPolicyInProgress"
MESSAGE_IN_ORDER_IN_PROGRESS: Final = "in order startup policy is in progress"
REASON_IN_ORDER_COMPLETED: Final = "InOrderStartupPolicyCompleted"
MESSAGE_IN_ORDER_COMPLETED: Final = "in order startup policy has completed"

# Events that are not tied to a condition (all Warning).
EVENT_JOB_CREATION_FAILED: Final = "JobCreationFailed"
EVENT_HEADLESS_SERVICE_CREATION_FAILED: Final = "HeadlessServiceCreationFailed"
EVENT_PVC_CREATION_FAILED: Final = "PVCCreationFailed"
EVENT_RESTART_JOBSET_ACTION: Final = "RestartJobSetFailurePolicyAction"
EVENT_RESTART_JOBSET_AND_IGNORE_ACTION: Final = "RestartJobSetAndIgnoreMaxRestartsFailurePolicyAction"
EVENT_RESTART_JOB_ACTION: Final = "RestartJobFailurePolicyAction"
EVENT_RESTART_JOB_AND_IGNORE_ACTION: Final = "RestartJobAndIgnoreMaxRestartsFailurePolicyAction"

#: Pod condition the pod controller writes before deleting misplaced followers (jobset.md §3.6).
REASON_EXCLUSIVE_PLACEMENT_VIOLATION: Final = "ExclusivePlacementViolation"
MESSAGE_EXCLUSIVE_PLACEMENT_VIOLATION: Final = "Pod violated JobSet exclusive placement policy"


def first_failed_job_suffix(job_name: str) -> str:
    """`` (first failed job: X)``, appended to the failure and restart messages (jobset.md §4.6)."""
    return f" (first failed job: {job_name})"


def restarting_reason(rule_name: str) -> str:
    """``RestartingJobSet`` reason for a matched failure-policy rule (jobset.md §4.6)."""
    return f"FailurePolicy_{rule_name}"


def action_message(action: str) -> str:
    """``applying <Action> failure policy action`` (jobset.md §4.6; the suffix is added separately)."""
    return f"applying {action} failure policy action"


def job_creation_failed_message(job_name: str, error: str) -> str:
    return f'job "{job_name}" creation failed with error: {error}'


# ---------------------------------------------------------------------------------------------------
# Accessors. Each tolerates any shape and never raises.


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` if it is a mapping, else an empty one (a Go struct that was absent decodes to zero)."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_int(value: Any) -> int | None:
    """An integer field, or None when absent or not an integer (``True`` is not an integer here)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def metadata(obj: Any) -> dict[str, Any]:
    return as_dict(as_dict(obj).get("metadata"))


def name(obj: Any) -> str:
    return as_str(metadata(obj).get("name"))


def generate_name(obj: Any) -> str:
    return as_str(metadata(obj).get("generateName"))


def namespace(obj: Any) -> str:
    return as_str(metadata(obj).get("namespace"))


def object_annotations(obj: Any) -> dict[str, Any]:
    return as_dict(metadata(obj).get("annotations"))


def spec(js: Any) -> dict[str, Any]:
    return as_dict(as_dict(js).get("spec"))


def status(js: Any) -> dict[str, Any]:
    return as_dict(as_dict(js).get("status"))


def replicated_jobs(js: Any) -> list[dict[str, Any]]:
    """The replicated jobs that are mappings, in spec order (malformed items are left out)."""
    return [rjob for rjob in as_list(spec(js).get("replicatedJobs")) if isinstance(rjob, dict)]


def enumerate_replicated_jobs(js: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(index in spec.replicatedJobs, replicated job)``: indices stay those of the manifest."""
    for index, rjob in enumerate(as_list(spec(js).get("replicatedJobs"))):
        if isinstance(rjob, dict):
            yield index, rjob


def replicated_job_names(js: Any) -> list[str]:
    return [rjob_name(rjob) for rjob in replicated_jobs(js)]


def find_replicated_job(js: Any, wanted: str) -> tuple[int, dict[str, Any]] | None:
    """The first replicated job with this name, with its index (upstream ``replicatedJobByName``)."""
    for index, rjob in enumerate_replicated_jobs(js):
        if rjob_name(rjob) == wanted:
            return index, rjob
    return None


def rjob_name(rjob: Any) -> str:
    return as_str(as_dict(rjob).get("name"))


def replicas(rjob: Any) -> int:
    """``replicas``; absent means the CRD default 1 (see :data:`CRD_DEFAULT_REPLICAS`)."""
    value = as_dict(rjob).get("replicas")
    number = as_int(value)
    return CRD_DEFAULT_REPLICAS if number is None else number


def group_name(rjob: Any) -> str:
    """``groupName``; absent means the CRD default ``default``. An explicit ``""`` stays ``""``."""
    value = as_dict(rjob).get("groupName")
    return CRD_DEFAULT_GROUP_NAME if value is None else as_str(value)


def depends_on(rjob: Any) -> list[dict[str, Any]] | None:
    """``dependsOn`` items; None when absent or null (Go nil), ``[]`` for an explicit empty list."""
    value = as_dict(rjob).get("dependsOn")
    if not isinstance(value, list):
        return None
    return [item for item in value if isinstance(item, dict)]


def job_template(rjob: Any) -> dict[str, Any]:
    return as_dict(as_dict(rjob).get("template"))


def job_spec(rjob: Any) -> dict[str, Any]:
    return as_dict(job_template(rjob).get("spec"))


def pod_template(rjob: Any) -> dict[str, Any]:
    return as_dict(job_spec(rjob).get("template"))


def pod_spec(rjob: Any) -> dict[str, Any]:
    return as_dict(pod_template(rjob).get("spec"))


def parallelism(rjob: Any) -> int | None:
    return as_int(job_spec(rjob).get("parallelism"))


def completions(rjob: Any) -> int | None:
    return as_int(job_spec(rjob).get("completions"))


def completion_mode(rjob: Any) -> str | None:
    value = job_spec(rjob).get("completionMode")
    return value if isinstance(value, str) else None


def is_indexed(rjob: Any) -> bool:
    """Indexed completion mode as the webhook tests it (after defaulting; absent is not Indexed)."""
    return completion_mode(rjob) == COMPLETION_MODE_INDEXED


def containers(rjob: Any) -> list[dict[str, Any]]:
    return [c for c in as_list(pod_spec(rjob).get("containers")) if isinstance(c, dict)]


def init_containers(rjob: Any) -> list[dict[str, Any]]:
    return [c for c in as_list(pod_spec(rjob).get("initContainers")) if isinstance(c, dict)]


def volume_mount_names(container: Any) -> list[str]:
    return [as_str(m.get("name")) for m in as_list(as_dict(container).get("volumeMounts")) if isinstance(m, dict)]


def network(js: Any) -> dict[str, Any]:
    return as_dict(spec(js).get("network"))


def subdomain(js: Any) -> str:
    """``network.subdomain`` as written ("" when unset); see ``names.headless_service_name``."""
    return as_str(network(js).get("subdomain"))


def enable_dns_hostnames(js: Any) -> bool:
    """Nil counts as true, as the defaulting webhook makes it (jobset.md §1.4)."""
    value = network(js).get("enableDNSHostnames")
    return value if isinstance(value, bool) else True


def publish_not_ready_addresses(js: Any) -> bool:
    """Nil counts as true: the controller treats it so (jobset.md §1.4)."""
    value = network(js).get("publishNotReadyAddresses")
    return value if isinstance(value, bool) else True


def success_policy(js: Any) -> dict[str, Any]:
    return as_dict(spec(js).get("successPolicy"))


def success_targets(js: Any) -> list[str]:
    return [t for t in as_list(success_policy(js).get("targetReplicatedJobs")) if isinstance(t, str)]


def startup_order(js: Any) -> str:
    """``startupPolicy.startupPolicyOrder``; nil behaves as ``AnyOrder`` (jobset.md §4.3)."""
    value = as_dict(spec(js).get("startupPolicy")).get("startupPolicyOrder")
    return value if isinstance(value, str) else StartupPolicyOrder.ANY_ORDER.value


def failure_policy(js: Any) -> dict[str, Any] | None:
    """``failurePolicy``, or None when absent (a present ``{}`` differs: jobset.md §6 #7)."""
    value = spec(js).get("failurePolicy")
    return value if isinstance(value, dict) else None


def restart_strategy(js: Any) -> str:
    """The restart strategy; ``Recreate`` (CRD default) when unset."""
    value = as_dict(failure_policy(js)).get("restartStrategy")
    return value if isinstance(value, str) and value else RestartStrategy.RECREATE.value


def failure_rules(js: Any) -> list[Any]:
    """``failurePolicy.rules`` as written (items may be malformed; callers keep the indices)."""
    return as_list(as_dict(failure_policy(js)).get("rules"))


def max_restarts(js: Any) -> int:
    return as_int(as_dict(failure_policy(js)).get("maxRestarts")) or 0


def coordinator(js: Any) -> dict[str, Any] | None:
    value = spec(js).get("coordinator")
    return value if isinstance(value, dict) else None


def managed_by(js: Any) -> str | None:
    value = spec(js).get("managedBy")
    return value if isinstance(value, str) else None


def is_managed_by_builtin_controller(js: Any) -> bool:
    """Unset or the reserved value: the built-in controller reconciles it (jobset.md §4.1 step 2)."""
    manager = managed_by(js)
    return manager is None or manager == JOBSET_CONTROLLER_NAME


def is_suspended(js: Any) -> bool:
    return spec(js).get("suspend") is True


def ttl_seconds_after_finished(js: Any) -> int | None:
    return as_int(spec(js).get("ttlSecondsAfterFinished"))


def volume_claim_policies(js: Any) -> list[Any]:
    """``volumeClaimPolicies`` as written (callers keep the indices)."""
    return as_list(spec(js).get("volumeClaimPolicies"))


def claim_templates(policy: Any) -> list[Any]:
    return as_list(as_dict(policy).get("templates"))


def template_name(claim_template: Any) -> str:
    """A PVC template's ``metadata.name`` (Go reads it as ``template.Name``)."""
    return name(claim_template)


def conditions(js: Any) -> list[dict[str, Any]]:
    return [c for c in as_list(status(js).get("conditions")) if isinstance(c, dict)]


def condition_is_true(js: Any, condition_type: str) -> bool:
    return any(c.get("type") == condition_type and c.get("status") == "True" for c in conditions(js))


def is_finished(js: Any) -> bool:
    """``Completed`` or ``Failed`` is True (jobset.md §2.4 step 2, §4.1 step 5)."""
    return condition_is_true(js, ConditionType.COMPLETED) or condition_is_true(js, ConditionType.FAILED)
