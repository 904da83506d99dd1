"""A read-only, defaulted view of a ``batch/v1`` Job, and the Job controller's constants.

The Job's own admission (``jobsetctl.kube.job``) applies the API server defaults when it stores a
Job, but the controller must not depend on it: a Job could be stored by a path that skipped them. So
every accessor here applies ``SetDefaults_Job`` on read (``pkg/apis/batch/v1/defaults.go``):

* ``parallelism`` and ``completions`` both unset → both 1; only ``parallelism`` unset → 1;
* ``backoffLimit`` unset → 6, or ``MaxInt32`` when ``backoffLimitPerIndex`` is set;
* ``completionMode`` unset → ``NonIndexed``;
* ``podReplacementPolicy`` unset → ``Failed`` with a ``podFailurePolicy``, else ``TerminatingOrFailed``.

Condition types, reasons and messages are the ones ``pkg/controller/job/job_controller.go`` writes
(read through the file index; cited per constant).
"""

from __future__ import annotations

from typing import Any, Final

from jobsetctl.kinds.interface import Object

# --- keys (k8s.io/api/batch/v1 types.go) ---------------------------------------------------------
JOB_COMPLETION_INDEX_KEY: Final = "batch.kubernetes.io/job-completion-index"
JOB_INDEX_FAILURE_COUNT_KEY: Final = "batch.kubernetes.io/job-index-failure-count"
JOB_INDEX_IGNORED_FAILURE_COUNT_KEY: Final = "batch.kubernetes.io/job-index-ignored-failure-count"
#: The finalizer the Job controller puts on every pod it creates and removes once it has counted the
#: pod (``batch.JobTrackingFinalizer``). We model it: it is what keeps a finished pod countable.
JOB_TRACKING_FINALIZER: Final = "batch.kubernetes.io/job-tracking"
CONTROLLER_UID_LABEL: Final = "batch.kubernetes.io/controller-uid"
JOB_NAME_LABEL: Final = "batch.kubernetes.io/job-name"
LEGACY_CONTROLLER_UID_LABEL: Final = "controller-uid"
LEGACY_JOB_NAME_LABEL: Final = "job-name"
#: ``completionIndexEnvName``.
COMPLETION_INDEX_ENV: Final = "JOB_COMPLETION_INDEX"
#: ``spec.managedBy`` value of the built-in controller (``batch.JobControllerName``).
JOB_CONTROLLER_NAME: Final = "kubernetes.io/job-controller"

INDEXED: Final = "Indexed"
NON_INDEXED: Final = "NonIndexed"
REPLACE_FAILED: Final = "Failed"
REPLACE_TERMINATING_OR_FAILED: Final = "TerminatingOrFailed"
DEFAULT_BACKOFF_LIMIT: Final = 6
MAX_INT32: Final = 2**31 - 1

# --- conditions (job_controller.go) ---------------------------------------------------------------
COMPLETE: Final = "Complete"
FAILED: Final = "Failed"
SUSPENDED: Final = "Suspended"
#: Interim conditions written while pods still terminate (always, since the
#: ``JobPodReplacementPolicy`` gate is GA in 1.34: ``delayTerminalCondition()``).
FAILURE_TARGET: Final = "FailureTarget"
SUCCESS_CRITERIA_MET: Final = "SuccessCriteriaMet"

REASON_BACKOFF_LIMIT_EXCEEDED: Final = "BackoffLimitExceeded"
MESSAGE_BACKOFF_LIMIT_EXCEEDED: Final = "Job has reached the specified backoff limit"
REASON_DEADLINE_EXCEEDED: Final = "DeadlineExceeded"
MESSAGE_DEADLINE_EXCEEDED: Final = "Job was active longer than specified deadline"
REASON_POD_FAILURE_POLICY: Final = "PodFailurePolicy"
REASON_MAX_FAILED_INDEXES_EXCEEDED: Final = "MaxFailedIndexesExceeded"
MESSAGE_MAX_FAILED_INDEXES_EXCEEDED: Final = "Job has exceeded the specified maximal number of failed indexes"
REASON_FAILED_INDEXES: Final = "FailedIndexes"
MESSAGE_FAILED_INDEXES: Final = "Job has failed indexes"
#: ``JobReasonCompletionsReached`` (1.31+, the reason of SuccessCriteriaMet and Complete).
REASON_COMPLETIONS_REACHED: Final = "CompletionsReached"
MESSAGE_COMPLETIONS_REACHED: Final = "Reached expected number of succeeded pods"
REASON_JOB_SUSPENDED: Final = "JobSuspended"
MESSAGE_JOB_SUSPENDED: Final = "Job suspended"
REASON_JOB_RESUMED: Final = "JobResumed"
MESSAGE_JOB_RESUMED: Final = "Job resumed"

# --- Kubernetes Events (job_controller.go, controller_utils.go RealPodControl) --------------------
EVENT_SUCCESSFUL_CREATE: Final = "SuccessfulCreate"
EVENT_FAILED_CREATE: Final = "FailedCreate"
EVENT_SUCCESSFUL_DELETE: Final = "SuccessfulDelete"
EVENT_COMPLETED: Final = "Completed"
EVENT_SUSPENDED: Final = "Suspended"
EVENT_RESUMED: Final = "Resumed"


def mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def integer(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def text(value: Any) -> str:
    return value if isinstance(value, str) else ""


class JobView:
    """Defaulted accessors over a stored Job dict. Reads only; the controller writes ``status``."""

    def __init__(self, job: Object) -> None:
        self.job = job
        self.meta = mapping(job.get("metadata"))
        self.spec = mapping(job.get("spec"))

    # -- identity -----------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return text(self.meta.get("name"))

    @property
    def namespace(self) -> str:
        return text(self.meta.get("namespace"))

    @property
    def uid(self) -> str:
        return text(self.meta.get("uid"))

    @property
    def deleting(self) -> bool:
        return bool(self.meta.get("deletionTimestamp"))

    @property
    def annotations(self) -> dict[str, Any]:
        return mapping(self.meta.get("annotations"))

    # -- spec ---------------------------------------------------------------------------------------
    @property
    def parallelism(self) -> int:
        value = integer(self.spec.get("parallelism"))
        return 1 if value is None else max(value, 0)

    @property
    def completions(self) -> int | None:
        value = integer(self.spec.get("completions"))
        if value is None and integer(self.spec.get("parallelism")) is None:
            return 1
        return value

    @property
    def indexed(self) -> bool:
        return self.spec.get("completionMode") == INDEXED

    @property
    def completion_mode(self) -> str:
        return INDEXED if self.indexed else NON_INDEXED

    @property
    def backoff_limit_per_index(self) -> int | None:
        return integer(self.spec.get("backoffLimitPerIndex"))

    @property
    def has_backoff_limit_per_index(self) -> bool:
        # hasBackoffLimitPerIndex: the gate is GA (1.33), so only the field matters.
        return self.backoff_limit_per_index is not None

    @property
    def backoff_limit(self) -> int:
        value = integer(self.spec.get("backoffLimit"))
        if value is not None:
            return value
        return MAX_INT32 if self.has_backoff_limit_per_index else DEFAULT_BACKOFF_LIMIT

    @property
    def max_failed_indexes(self) -> int | None:
        return integer(self.spec.get("maxFailedIndexes"))

    @property
    def active_deadline_seconds(self) -> int | None:
        return integer(self.spec.get("activeDeadlineSeconds"))

    @property
    def suspended(self) -> bool:
        return self.spec.get("suspend") is True

    @property
    def pod_failure_policy(self) -> dict[str, Any] | None:
        value = self.spec.get("podFailurePolicy")
        return value if isinstance(value, dict) else None

    @property
    def pod_replacement_policy(self) -> str:
        value = self.spec.get("podReplacementPolicy")
        if isinstance(value, str) and value:
            return value
        return REPLACE_FAILED if self.pod_failure_policy is not None else REPLACE_TERMINATING_OR_FAILED

    @property
    def only_replace_failed_pods(self) -> bool:
        """``onlyReplaceFailedPods``: a terminating pod is replaced only once it has failed."""
        return self.pod_replacement_policy == REPLACE_FAILED or self.pod_failure_policy is not None

    @property
    def managed_by_other(self) -> bool:
        value = self.spec.get("managedBy")
        return isinstance(value, str) and value != "" and value != JOB_CONTROLLER_NAME

    @property
    def template(self) -> dict[str, Any]:
        return mapping(self.spec.get("template"))

    @property
    def pod_spec(self) -> dict[str, Any]:
        return mapping(self.template.get("spec"))

    @property
    def restart_policy(self) -> str:
        return text(self.pod_spec.get("restartPolicy"))

    @property
    def scheduling(self) -> dict[str, Any] | None:
        value = self.spec.get("scheduling")
        return value if isinstance(value, dict) else None

    # -- status -------------------------------------------------------------------------------------
    @property
    def status(self) -> dict[str, Any]:
        status = self.job.get("status")
        if not isinstance(status, dict):
            status = {}
            self.job["status"] = status
        return status

    def conditions(self) -> list[dict[str, Any]]:
        return [c for c in items(self.status.get("conditions")) if isinstance(c, dict)]

    def condition(self, type_: str) -> dict[str, Any] | None:
        for cond in items(self.status.get("conditions")):
            if isinstance(cond, dict) and cond.get("type") == type_:
                return cond
        return None

    def condition_true(self, type_: str) -> bool:
        cond = self.condition(type_)
        return cond is not None and cond.get("status") == "True"

    @property
    def finished(self) -> bool:
        """``IsJobFinished``: a True ``Complete`` or ``Failed`` condition."""
        _ = self.status  # materialises an absent ``status``, as reading the conditions always has
        return job_finished(self.job)


def job_finished(job: Object) -> bool:
    """``IsJobFinished`` of a Job dict: the first ``Complete`` or the first ``Failed`` condition is True.
    One pass over the conditions (the Job controller asks this for every pod event)."""
    status = job.get("status")
    conditions = status.get("conditions") if isinstance(status, dict) else None
    if not isinstance(conditions, list):
        return False
    seen_complete = seen_failed = False
    for cond in conditions:
        if not isinstance(cond, dict):
            continue
        type_ = cond.get("type")
        if type_ == COMPLETE and not seen_complete:
            if cond.get("status") == "True":
                return True
            seen_complete = True
        elif type_ == FAILED and not seen_failed:
            if cond.get("status") == "True":
                return True
            seen_failed = True
    return False


def new_condition(type_: str, status: str, reason: str, message: str, now: str) -> dict[str, Any]:
    """``newCondition``: both probe and transition time are now."""
    return {
        "type": type_,
        "status": status,
        "lastProbeTime": now,
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    }


def ensure_condition(view: JobView, type_: str, status: str, reason: str, message: str, now: str) -> bool:
    """``ensureJobConditionStatus``: replace a condition of the type when anything differs (a new
    transition time even when only reason or message changed); never append a False condition.
    Returns whether the list changed."""
    conditions = view.conditions()
    for index, cond in enumerate(conditions):
        if cond.get("type") != type_:
            continue
        if cond.get("status") != status or cond.get("reason") != reason or cond.get("message") != message:
            conditions[index] = new_condition(type_, status, reason, message, now)
            view.status["conditions"] = conditions
            return True
        return False
    if status == "False":
        return False
    conditions.append(new_condition(type_, status, reason, message, now))
    view.status["conditions"] = conditions
    return True
