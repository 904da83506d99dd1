"""Child-Job classification and ``replicatedJobsStatus`` (jobset.md §1.7, §4.2; upstream ``getChildJobs``,
``calculateReplicatedJobStatuses``, ``updateReplicatedJobsStatuses``), plus the readiness predicates the
startup policy and dependsOn share (§4.3, §4.4).

Quirk kept (derived from code): upstream compares the old and new ``replicatedJobsStatus`` after
sorting *both slices in place* by name, descending, and then writes the sorted slice. The stored
order is therefore by replicated-job name, descending, not spec order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jobsetctl.jobset import api
from jobsetctl.kinds.interface import Object
from jobsetctl.kube.jsontree import copy_tree


class ReconcileError(Exception):
    """A pass that ends without a status write (controller-runtime then requeues with back-off)."""


@dataclass(slots=True)
class ChildJobs:
    """Owned Jobs by bucket. Only current-attempt Jobs are active, successful or failed (§4.2)."""

    active: list[Object] = field(default_factory=list)
    successful: list[Object] = field(default_factory=list)
    failed: list[Object] = field(default_factory=list)
    #: From an older restart attempt: deleted, excluded from the counters, but they still block the
    #: re-creation of their name until they are gone (§3.1, §4.2).
    previous: list[Object] = field(default_factory=list)

    def names(self) -> set[str]:
        return {api.name(job) for job in (*self.active, *self.successful, *self.failed, *self.previous)}


def labels(obj: Any) -> dict[str, Any]:
    return api.as_dict(api.metadata(obj).get("labels"))


def job_status(job: Any) -> dict[str, Any]:
    return api.as_dict(api.as_dict(job).get("status"))


def job_conditions(job: Any) -> list[dict[str, Any]]:
    return [c for c in api.as_list(job_status(job).get("conditions")) if isinstance(c, dict)]


def finished_type(job: Any) -> str | None:
    """``Complete`` or ``Failed`` from the first True terminal condition (upstream ``JobFinished``)."""
    for condition in job_conditions(job):
        if condition.get("type") in ("Complete", "Failed") and condition.get("status") == "True":
            return str(condition["type"])
    return None


def failure_condition(job: Any) -> dict[str, Any] | None:
    """The ``Failed=True`` condition of a Job, or None."""
    for condition in job_conditions(job):
        if condition.get("type") == "Failed" and condition.get("status") == "True":
            return condition
    return None


def job_suspended(job: Any) -> bool:
    return api.as_dict(api.as_dict(job).get("spec")).get("suspend") is True


def _parse_int(value: Any) -> int | None:
    """Go ``strconv.Atoi``: optional sign and decimal digits only."""
    if not isinstance(value, str):
        return None
    text = value[1:] if value[:1] in ("+", "-") else value
    if not text or not text.isascii() or not text.isdigit():
        return None
    return int(value)


def per_job_counts(js: Any, status: dict[str, Any], rjob_name: str, counter: str) -> list[int]:
    """``jobRestarts`` (or ``jobRestartsCountTowardsMax``) of a replicated job: a copy of the status
    list, or zeros of length ``replicas`` when it is absent or empty (upstream ``getJobRestarts``)."""
    for entry in api.as_list(status.get("replicatedJobsStatus")):
        if isinstance(entry, dict) and entry.get("name") == rjob_name:
            values = [api.as_int(v) or 0 for v in api.as_list(entry.get(counter))]
            if values:
                return values
            break
    found = api.find_replicated_job(js, rjob_name)
    return [0] * (api.replicas(found[1]) if found else 0)


def classify(js: Any, jobs: list[Object], status: dict[str, Any], restart_job_gate: bool) -> ChildJobs:
    """Sort owned Jobs into buckets (jobset.md §4.2). Raises :class:`ReconcileError` for a missing or
    non-integer ``restart-attempt`` label (and, with the RestartJob gate, a bad index label)."""
    out = ChildJobs()
    restarts = api.as_int(status.get("restarts")) or 0
    for job in jobs:
        job_labels = labels(job)
        attempt = _parse_int(job_labels.get(api.RESTART_ATTEMPT_KEY))
        if attempt is None:
            raise ReconcileError(
                f"invalid value for label {api.RESTART_ATTEMPT_KEY}, must be integer (job {api.name(job)})"
            )
        if attempt < restarts:
            out.previous.append(job)
            continue
        if restart_job_gate and _previous_by_job_attempt(js, job, job_labels, status):
            out.previous.append(job)
            continue
        kind = finished_type(job)
        if kind is None:
            out.active.append(job)
        elif kind == "Failed":
            out.failed.append(job)
        else:
            out.successful.append(job)
    return out


def _previous_by_job_attempt(js: Any, job: Object, job_labels: dict[str, Any], status: dict[str, Any]) -> bool:
    """RestartJob gate: is the Job's ``job-restart-attempt`` below ``jobRestarts[jobIndex]``?"""
    rjob_name = job_labels.get(api.REPLICATED_JOB_NAME_KEY)
    if not isinstance(rjob_name, str):
        raise ReconcileError(f"missing label {api.REPLICATED_JOB_NAME_KEY}")
    job_index = _parse_int(job_labels.get(api.JOB_INDEX_KEY))
    if job_index is None:
        raise ReconcileError(f"invalid value for label {api.JOB_INDEX_KEY}, must be integer")
    if api.JOB_RESTART_ATTEMPT_KEY not in job_labels:
        return False  # tolerated for backward compatibility: upstream only logs it
    own_attempt = _parse_int(job_labels.get(api.JOB_RESTART_ATTEMPT_KEY))
    if own_attempt is None:
        raise ReconcileError(f"invalid value for label {api.JOB_RESTART_ATTEMPT_KEY}, must be integer")
    targets = per_job_counts(js, status, rjob_name, "jobRestarts")
    if not 0 <= job_index < len(targets):
        raise ReconcileError(f"job index {job_index} is out of bounds for replicated job {rjob_name}")
    return own_attempt < targets[job_index]


def _pods_needed(job: Any) -> int:
    """min(parallelism, completions); parallelism nil counts as 1 (the API server's default)."""
    spec = api.as_dict(api.as_dict(job).get("spec"))
    parallelism = api.as_int(spec.get("parallelism"))
    pods = 1 if parallelism is None else parallelism
    completions = api.as_int(spec.get("completions"))
    if completions is not None and completions < pods:
        pods = completions
    return pods


def job_is_ready(job: Any) -> bool:
    """ready pods + succeeded pods ≥ min(parallelism, completions) (jobset.md §1.7)."""
    status = job_status(job)
    ready = api.as_int(status.get("ready")) or 0
    succeeded = api.as_int(status.get("succeeded")) or 0
    return succeeded + ready >= _pods_needed(job)


def replicated_job_statuses(
    js: Any, children: ChildJobs, status: dict[str, Any], restart_job_gate: bool
) -> list[dict[str, Any]]:
    """One entry per replicated job in the spec (all zeros without Jobs), counting current-attempt Jobs
    only. With the RestartJob gate the per-job restart lists are carried over from ``status``."""
    counters: dict[str, dict[str, int]] = {}
    for rjob in api.replicated_jobs(js):
        counters.setdefault(api.rjob_name(rjob), dict.fromkeys(("ready", "succeeded", "failed", "active", "suspended"), 0))

    def bucket(job: Object) -> dict[str, int] | None:
        # A Job without the label, or naming a replicated job that is not in the spec, is skipped
        # (upstream logs it).
        rjob_name = labels(job).get(api.REPLICATED_JOB_NAME_KEY)
        return counters.get(rjob_name) if isinstance(rjob_name, str) and rjob_name else None

    for job in children.active:
        counts = bucket(job)
        if counts is None:
            continue
        if job_is_ready(job):
            counts["ready"] += 1
        if (api.as_int(job_status(job).get("active")) or 0) > 0:
            counts["active"] += 1
        if job_suspended(job):
            counts["suspended"] += 1
    for job in children.successful:
        counts = bucket(job)
        if counts is not None:
            counts["succeeded"] += 1
    for job in children.failed:
        counts = bucket(job)
        if counts is not None:
            counts["failed"] += 1

    out: list[dict[str, Any]] = []
    for rjob_name, counts in counters.items():
        entry: dict[str, Any] = {"name": rjob_name, **counts}
        if restart_job_gate:
            for key in ("jobRestarts", "jobRestartsCountTowardsMax"):
                for existing in api.as_list(status.get("replicatedJobsStatus")):
                    if isinstance(existing, dict) and existing.get("name") == rjob_name:
                        values = api.as_list(existing.get(key))
                        if values:
                            entry[key] = copy_tree(values)
                        break
        out.append(entry)
    return out


def _comparable(entries: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    # apimachinery's semantic equality treats nil and empty lists alike.
    return [
        (
            api.as_str(e.get("name")),
            *(api.as_int(e.get(k)) or 0 for k in ("ready", "succeeded", "failed", "active", "suspended")),
            tuple(api.as_list(e.get("jobRestarts"))),
            tuple(api.as_list(e.get("jobRestartsCountTowardsMax"))),
        )
        for e in entries
    ]


def sorted_by_name_descending(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The order upstream stores ``replicatedJobsStatus`` in (see the module docstring; quirk)."""
    return sorted(entries, key=lambda e: api.as_str(e.get("name")), reverse=True)


def statuses_changed(old: list[Any], new: list[dict[str, Any]]) -> bool:
    old_entries = sorted_by_name_descending([e for e in old if isinstance(e, dict)])
    new_entries = sorted_by_name_descending(new)
    if old_entries == new_entries:
        return False  # equal entries compare equal semantically too (most passes change nothing)
    return _comparable(old_entries) != _comparable(new_entries)


def find_entry(entries: list[dict[str, Any]], rjob_name: str) -> dict[str, Any] | None:
    for entry in entries:
        if entry.get("name") == rjob_name:
            return entry
    return None


def all_jobs_ready(js: Any, entries: list[dict[str, Any]]) -> bool:
    """Σ(ready + succeeded) == Σ replicas (step 7 of jobset.md §4.1)."""
    total = sum(api.replicas(rjob) for rjob in api.replicated_jobs(js))
    ready = sum((api.as_int(e.get("ready")) or 0) + (api.as_int(e.get("succeeded")) or 0) for e in entries)
    return total == ready


def all_replicas_started(replicas: int, entry: dict[str, Any] | None) -> bool:
    """InOrder: ready + succeeded + failed == replicas (jobset.md §4.3)."""
    if entry is None:
        return False
    started = sum(api.as_int(entry.get(k)) or 0 for k in ("ready", "succeeded", "failed"))
    return replicas == started


def dependencies_met(rjob: Any, replicas_seen: dict[str, int], entries: list[dict[str, Any]]) -> bool:
    """Every ``dependsOn`` item reached its status (jobset.md §4.4; upstream ``dependencyReachedStatus``).

    ``replicas_seen`` holds the replicated jobs up to and *including* this one, so a self-dependency
    compares against its own zero counters and is never met (quirk, jobset.md §6 #2). A name not
    seen yet counts as 0 replicas, as Go's map lookup does.
    """
    for dependency in api.depends_on(rjob) or []:
        dep_name = api.as_str(dependency.get("name"))
        entry = find_entry(entries, dep_name)
        if entry is None:
            return False
        wanted = replicas_seen.get(dep_name, 0)
        succeeded = api.as_int(entry.get("succeeded")) or 0
        if dependency.get("status") == api.DependsOnStatus.COMPLETE and wanted != succeeded:
            return False
        if dependency.get("status") == api.DependsOnStatus.READY and wanted != (
            (api.as_int(entry.get("failed")) or 0) + (api.as_int(entry.get("ready")) or 0) + succeeded
        ):
            return False
    return True
