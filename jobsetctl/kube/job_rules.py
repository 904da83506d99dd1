"""Rule ids of batch/v1 Job validation (``job-*``) and the upstream constants the checks use.

Constants and messages are from kubernetes ``pkg/apis/batch/validation/validation.go`` (read through
the file index; the 1.35-era version with podFailurePolicy, successPolicy, managedBy and
podReplacementPolicy).
"""

from __future__ import annotations

from jobsetctl.diagnostics import Layer, Severity
from jobsetctl.kube.scheduling_rules import KindRules
from jobsetctl.rules.registry import define

#: ``maxParallelismForIndexedJob``.
MAX_PARALLELISM_FOR_INDEXED_JOB = 100_000
#: ``maxFailedIndexesForIndexedJob``.
MAX_FAILED_INDEXES_FOR_INDEXED_JOB = 100_000
COMPLETIONS_SOFT_LIMIT = 100_000
PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS = 10_000
MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS = 10_000
MAX_POD_FAILURE_POLICY_RULES = 20
MAX_ON_EXIT_CODES_VALUES = 255
MAX_ON_POD_CONDITIONS_PATTERNS = 20
MAX_SUCCESS_POLICY_RULES = 20
MAX_MANAGED_BY_LENGTH = 63
#: ``backoffLimit`` default, and the value used when ``backoffLimitPerIndex`` is set (MaxInt32).
DEFAULT_BACKOFF_LIMIT = 6
MAX_INT32 = 2**31 - 1

NON_INDEXED = "NonIndexed"
INDEXED = "Indexed"
POD_FAILURE_POLICY_ACTIONS = ("Count", "FailIndex", "FailJob", "Ignore")  # sets.List: sorted
ON_EXIT_CODES_OPERATORS = ("In", "NotIn")
ON_POD_CONDITIONS_STATUSES = ("False", "True", "Unknown")
POD_REPLACEMENT_POLICIES = ("Failed", "TerminatingOrFailed")

#: Labels the API server adds to the pod template when it generates the selector.
LEGACY_JOB_NAME_LABEL = "job-name"
LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"

E, W = Severity.ERROR, Severity.WARNING
_SPEC = "scheduling.md §1.5"


VALUE = define("job-value", Layer.WEBHOOK, E, "A Job count or duration is negative.")
COMPLETION_MODE = define(
    "job-completion-mode", Layer.WEBHOOK, E,
    "completionMode is unsupported, or an Indexed Job lacks completions or exceeds its limits.",
)
BACKOFF_PER_INDEX = define(
    "job-backoff-limit-per-index", Layer.WEBHOOK, E,
    "backoffLimitPerIndex/maxFailedIndexes are used without an Indexed Job or exceed their limits.",
)
POD_FAILURE_POLICY = define("job-pod-failure-policy", Layer.WEBHOOK, E, "A podFailurePolicy rule is invalid.")
SUCCESS_POLICY = define("job-success-policy", Layer.WEBHOOK, E, "A successPolicy rule is invalid.")
POD_REPLACEMENT_POLICY = define(
    "job-pod-replacement-policy", Layer.WEBHOOK, E, "podReplacementPolicy is unsupported for this Job."
)
RESTART_POLICY = define(
    "job-restart-policy", Layer.WEBHOOK, E, "The pod template's restartPolicy is not OnFailure or Never."
)
POD_TEMPLATE = define(
    "job-pod-template", Layer.WEBHOOK, E,
    "The pod template has no containers, a container without name or image, or invalid labels.",
)
NAME = define(
    "job-name", Layer.WEBHOOK, E,
    "The Job name cannot become a label value (over 63 characters) or an Indexed pod hostname.",
)
SELECTOR = define("job-selector", Layer.WEBHOOK, E, "The Job selector is missing, invalid or does not match.")
MANAGED_BY = define("job-managed-by", Layer.WEBHOOK, E, "spec.managedBy is not a domain-prefixed path.")
SCHEDULING = define(
    "job-scheduling", Layer.WEBHOOK, E,
    "spec.scheduling (Kubernetes 1.37, KEP-5547) is invalid, e.g. a gang minCount above parallelism.",
    spec=_SPEC,
)
GATED_FIELD = define(
    "job-gated-field", Layer.WEBHOOK, W,
    "A Job field whose feature gate is off; the API server drops it on create.", spec=_SPEC,
)
IMMUTABLE = define("job-immutable", Layer.WEBHOOK, E, "An update changes an immutable Job field.", spec=_SPEC)

#: ``spec.scheduling`` reuses the scheduling-kind checks with one rule for all of its problems.
SCHEDULING_RULES = KindRules(
    name=SCHEDULING, templates=SCHEDULING, policy=SCHEDULING, topology=SCHEDULING,
    resource_claims=SCHEDULING, disruption_mode=SCHEDULING, priority=SCHEDULING,
    preemption_policy=SCHEDULING, reference=SCHEDULING, immutable=IMMUTABLE, gated_field=GATED_FIELD,
)
