"""Failure policy (jobset.md §4.6), success policy (§4.5) and TTL after finished (§4.8) of the JobSet
controller (upstream ``failure_policy.go``, ``success_policy.go``, ``ttl_after_finished.go``).

Rule matching: for each rule in order, the earliest-failing Job (by the ``Failed`` condition's
``lastTransitionTime``) that matches the reasons, the message patterns and the targets; the first
rule that matches any Job wins; no match → ``RestartJobSet`` on the earliest failed Job with reason
``DefaultFailurePolicy``. Timestamps have second precision, so failures in the same second tie; as
Go's strict ``Before``, the first Job in list order wins a tie (ours: creation order; upstream's
informer order is unspecified).

Message patterns are Go ``regexp`` (RE2) searches, unanchored; an invalid pattern is skipped and never
matches (quirk, jobset.md §6 #3). We compile them with the same RE2 helper CEL's ``matches`` uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jobsetctl.admission.cel_functions import RegexError, compile_regex
from jobsetctl.fakecluster.clock import VirtualClock
from jobsetctl.fakecluster.controllers.jobset_conditions import (
    TRUE,
    WARNING,
    QueuedEvent,
    SimulationEvent,
    StatusUpdate,
)
from jobsetctl.fakecluster.controllers.jobset_status import (
    ChildJobs,
    ReconcileError,
    failure_condition,
    labels,
    per_job_counts,
)
from jobsetctl.jobset import api
from jobsetctl.kinds.interface import Object

#: ``Restarting`` is the simulation event of every restart action (the JSON contract's vocabulary).
RESTARTING = "Restarting"

#: Per action: (Kubernetes Event reason, whether the restart counts towards maxRestarts).
_RESTART_EVENTS: dict[str, tuple[str, bool]] = {
    api.FailurePolicyAction.RESTART_JOBSET: (api.EVENT_RESTART_JOBSET_ACTION, True),
    api.FailurePolicyAction.RESTART_JOBSET_AND_IGNORE_MAX_RESTARTS: (api.EVENT_RESTART_JOBSET_AND_IGNORE_ACTION, False),
    api.FailurePolicyAction.RESTART_JOB: (api.EVENT_RESTART_JOB_ACTION, True),
    api.FailurePolicyAction.RESTART_JOB_AND_IGNORE_MAX_RESTARTS: (api.EVENT_RESTART_JOB_AND_IGNORE_ACTION, False),
}


# ---------------------------------------------------------------------------------------------------
# Failure policy


def _failure_time(job: Object) -> str:
    condition = failure_condition(job)
    return api.as_str(condition.get("lastTransitionTime")) if condition else ""


def _earlier(candidate: str, best: str, clock: VirtualClock) -> bool:
    """Strictly before (Go ``metav1.Time.Before``). Unparseable or empty times compare as zero time."""
    return _seconds(candidate, clock) < _seconds(best, clock)


def _seconds(timestamp: str, clock: VirtualClock) -> float:
    try:
        return clock.seconds_of(timestamp)
    except ValueError:
        return float("-inf")  # the zero time is before every real one


def first_failed_job(failed: list[Object], clock: VirtualClock) -> Object | None:
    """The failed Job with the earliest ``Failed`` condition (upstream ``findFirstFailedJob``)."""
    best: Object | None = None
    for job in failed:
        if failure_condition(job) is None:
            continue
        if best is None or _earlier(_failure_time(job), _failure_time(best), clock):
            best = job
    return best


def pattern_matches(pattern: str, message: str) -> bool:
    """An unanchored RE2 search; an invalid pattern never matches (jobset.md §1.5, §6 #3)."""
    try:
        search = compile_regex(pattern)
    except RegexError:
        return False
    return search(message) is not None


def rule_applies(rule: dict[str, Any], job: Object, reason: str, message: str) -> bool:
    """Reasons, then message patterns, then targets; an empty filter matches anything."""
    reasons = [r for r in api.as_list(rule.get("onJobFailureReasons")) if isinstance(r, str)]
    if reasons and reason not in reasons:
        return False
    patterns = [p for p in api.as_list(rule.get("onJobFailureMessagePatterns")) if isinstance(p, str)]
    if patterns and not any(pattern_matches(p, message) for p in patterns):
        return False
    parent = labels(job).get(api.REPLICATED_JOB_NAME_KEY)
    if not isinstance(parent, str) or not parent:
        return False  # upstream: a Job without a parent replicated job matches no rule
    targets = [t for t in api.as_list(rule.get("targetReplicatedJobs")) if isinstance(t, str)]
    return not targets or parent in targets


def matching_rule(rules: list[Any], failed: list[Object], clock: VirtualClock) -> tuple[dict[str, Any], Object] | None:
    """The first rule that matches a failed Job, with the earliest such Job."""
    for rule in rules:
        if not isinstance(rule, dict):
            continue
        best: Object | None = None
        for job in failed:
            condition = failure_condition(job)
            if condition is None:
                continue
            reason = api.as_str(condition.get("reason"))
            message = api.as_str(condition.get("message"))
            if rule_applies(rule, job, reason, message) and (
                best is None or _earlier(_failure_time(job), _failure_time(best), clock)
            ):
                best = job
        if best is not None:
            return rule, best
    return None


@dataclass(frozen=True, slots=True)
class FailureDecision:
    """What the failure policy chose: the action, the rule (None for no match) and the Job."""

    action: str
    rule: dict[str, Any] | None
    job: Object


def decide(js: Any, children: ChildJobs, clock: VirtualClock) -> FailureDecision | None:
    """The action for this pass's failed Jobs; None when the JobSet has no ``failurePolicy``."""
    policy = api.failure_policy(js)
    if policy is None:
        return None
    match = matching_rule(api.failure_rules(js), children.failed, clock)
    if match is not None:
        rule, matched_job = match
        return FailureDecision(api.as_str(rule.get("action")), rule, matched_job)
    first = first_failed_job(children.failed, clock)
    if first is None:  # every failed Job has a Failed=True condition by construction
        raise ReconcileError("no failed job with a Failed condition")
    return FailureDecision(api.FailurePolicyAction.RESTART_JOBSET.value, None, first)


def total_restarts_count_towards_max(update: StatusUpdate) -> int:
    """Global counted restarts + Σ ``jobRestartsCountTowardsMax`` (upstream ``totalRestartsCountTowardsMax``)."""
    total = update.restarts_count_towards_max
    for entry in update.replicated_jobs_status():
        total += sum(api.as_int(v) or 0 for v in api.as_list(entry.get("jobRestartsCountTowardsMax")))
    return total


def execute_failure_policy(
    js: Any, children: ChildJobs, update: StatusUpdate, clock: VirtualClock, restart_job_gate: bool
) -> None:
    """Run the failure policy on a pass with ≥ 1 failed current-attempt Job (jobset.md §4.6)."""
    decision = decide(js, children, clock)
    if decision is None:
        job = first_failed_job(children.failed, clock)
        job_name = api.name(job) if job is not None else ""
        update.set_failed(api.REASON_FAILED_JOBS, api.MESSAGE_FAILED_JOBS + api.first_failed_job_suffix(job_name))
        return
    action, job_name = decision.action, api.name(decision.job)
    max_restarts = api.max_restarts(js)
    if action == api.FailurePolicyAction.FAIL_JOBSET:
        update.set_failed(
            api.REASON_FAIL_JOBSET_ACTION, api.MESSAGE_FAIL_JOBSET_ACTION + api.first_failed_job_suffix(job_name)
        )
        return
    per_job = action in (api.FailurePolicyAction.RESTART_JOB, api.FailurePolicyAction.RESTART_JOB_AND_IGNORE_MAX_RESTARTS)
    if per_job and not restart_job_gate:
        # Admission rejects these actions without the gate; upstream errors out of the pass.
        raise ReconcileError(f"{action} failure policy action cannot be used when the feature gate RestartJob is disabled")
    if action not in _RESTART_EVENTS:
        raise ReconcileError(f"failed to find a corresponding action for the FailurePolicyRuleAction {action}")
    event_reason, counted = _RESTART_EVENTS[action]
    if counted and _reached_max(update, max_restarts, restart_job_gate, per_job=per_job):
        update.set_failed(
            api.REASON_REACHED_MAX_RESTARTS, api.MESSAGE_REACHED_MAX_RESTARTS + api.first_failed_job_suffix(job_name)
        )
        return
    message = api.action_message(action) + api.first_failed_job_suffix(job_name)
    if per_job:
        _restart_job(js, update, decision.job, counted, event_reason, message)
    else:
        _restart_jobset(update, decision, counted, event_reason, message)


def _reached_max(update: StatusUpdate, max_restarts: int, restart_job_gate: bool, *, per_job: bool) -> bool:
    """``RestartJobSet``: gate on and total ≥ max, or global counted ≥ max. ``RestartJob``: total ≥ max."""
    total = total_restarts_count_towards_max(update)
    if per_job:
        return total >= max_restarts
    return (restart_job_gate and total >= max_restarts) or update.restarts_count_towards_max >= max_restarts


def _restart_jobset(update: StatusUpdate, decision: FailureDecision, counted: bool, event_reason: str, message: str) -> None:
    """``restarts += 1`` (and the counted one), ``RestartingJobSet=True``, then the action's event."""
    update.status["restarts"] = update.restarts + 1
    if counted:
        update.status["restartsCountTowardsMax"] = update.restarts_count_towards_max + 1
    update.should_update = True
    reason = (
        api.restarting_reason(api.as_str(decision.rule.get("name")))
        if decision.rule is not None
        else api.REASON_DEFAULT_FAILURE_POLICY
    )
    update.set_condition(api.ConditionType.RESTARTING, TRUE, reason, message, WARNING)
    update.enqueue(QueuedEvent(WARNING, event_reason, message, SimulationEvent(RESTARTING, reason, message)))


def _restart_job(js: Any, update: StatusUpdate, job: Object, counted: bool, event_reason: str, message: str) -> None:
    """RestartJob gate: ``jobRestarts[jobIndex] += 1`` (and the counted list); no condition (§4.6)."""
    job_labels = labels(job)
    rjob_name = job_labels.get(api.REPLICATED_JOB_NAME_KEY)
    index_text = job_labels.get(api.JOB_INDEX_KEY)
    if not isinstance(rjob_name, str):
        raise ReconcileError(f"failed job {api.name(job)} missing {api.REPLICATED_JOB_NAME_KEY} label")
    if not isinstance(index_text, str) or not index_text.lstrip("+-").isdigit():
        raise ReconcileError(f"failed job {api.name(job)} has invalid {api.JOB_INDEX_KEY} label: {index_text}")
    job_index = int(index_text)
    entry = update.entry(rjob_name)
    counters = ["jobRestarts", "jobRestartsCountTowardsMax"] if counted else ["jobRestarts"]
    for counter in counters:
        values = per_job_counts(js, update.status, rjob_name, counter)
        if not 0 <= job_index < len(values):
            raise ReconcileError(
                f"failed job {api.name(job)} has index {job_index} out of bounds for replicated job {rjob_name}"
            )
        values[job_index] += 1
        if entry is not None:  # upstream ``setJobRestarts`` writes only into an existing entry
            entry[counter] = values
    update.should_update = True
    update.enqueue(QueuedEvent(WARNING, event_reason, message, SimulationEvent(RESTARTING, event_reason, message)))


# ---------------------------------------------------------------------------------------------------
# Success policy


def jobs_expected_to_succeed(js: Any) -> int:
    """``Any`` → 1; ``All`` → Σ replicas of the targeted replicated jobs (all without targets),
    including replicated jobs not created yet (jobset.md §4.5). An unknown operator needs 0."""
    policy = api.success_policy(js)
    operator = policy.get("operator")
    if operator == api.SuccessOperator.ANY:
        return 1
    if operator == api.SuccessOperator.ALL:
        targets = api.success_targets(js)
        return sum(
            api.replicas(rjob) for rjob in api.replicated_jobs(js) if not targets or api.rjob_name(rjob) in targets
        )
    return 0


def jobs_matching_success_policy(js: Any, successful: list[Object]) -> int:
    targets = api.success_targets(js)
    return sum(1 for job in successful if not targets or labels(job).get(api.REPLICATED_JOB_NAME_KEY) in targets)


def execute_success_policy(js: Any, children: ChildJobs, update: StatusUpdate) -> bool:
    """Complete the JobSet if enough Jobs succeeded; True when it did."""
    if jobs_matching_success_policy(js, children.successful) >= jobs_expected_to_succeed(js):
        update.set_completed()
        return True
    return False


# ---------------------------------------------------------------------------------------------------
# TTL after finished


def finish_time(js: Any, clock: VirtualClock) -> float:
    """``lastTransitionTime`` of the True ``Completed``/``Failed`` condition, in virtual seconds.

    Raises :class:`ReconcileError` for a missing or zero time (jobset.md §4.8)."""
    for condition in api.conditions(js):
        if condition.get("type") in (api.ConditionType.COMPLETED, api.ConditionType.FAILED) and condition.get("status") == TRUE:
            stamp = api.as_str(condition.get("lastTransitionTime"))
            try:
                return clock.seconds_of(stamp)
            except ValueError as exc:
                raise ReconcileError(
                    f"unable to find the time when the JobSet {api.namespace(js)}/{api.name(js)} finished"
                ) from exc
    raise ReconcileError(f"unable to find the status of the finished JobSet {api.namespace(js)}/{api.name(js)}")


def ttl_remaining(js: Any, clock: VirtualClock) -> float | None:
    """Seconds until the TTL expires (≤ 0: expired), or None without ``ttlSecondsAfterFinished``."""
    ttl = api.ttl_seconds_after_finished(js)
    if ttl is None:
        return None
    return finish_time(js, clock) + ttl - clock.now
