"""The workload invariants of :mod:`jobsetctl.fakecluster.invariants` (rules 5 and 6): JobSet ``dependsOn``
gating and Job pod accounting, from the API server's watch stream.

These books are independent of the controllers on purpose: they read the objects each watch event
carries (labels, spec, status, finalizers) and never call controller code to decide, so a controller
bug cannot hide itself. Definitions follow the spec (/work/shared/spec/jobset.md §1.7, §4.4) and upstream
``pkg/controller/job`` as cited per rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jobsetctl.fakecluster.apiserver import WatchEvent, WatchType

#: ``batch.JobTrackingFinalizer``: the Job controller counts a pod exactly when it removes this.
TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
JOB_CONTROLLER = "kubernetes.io/job-controller"
JOBSET_API_VERSION = "jobset.x-k8s.io/v1alpha2"
RJOB_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"
ATTEMPT_LABEL = "jobset.sigs.k8s.io/restart-attempt"
SUCCEEDED, FAILED = "Succeeded", "Failed"


class InvariantViolation(AssertionError):
    """A simulated cluster broke one of the rules of :mod:`jobsetctl.fakecluster.invariants` (defined here,
    where rules 5 and 6 raise it, and re-exported there)."""


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _controller(obj: dict[str, Any]) -> dict[str, Any] | None:
    for ref in _map(obj.get("metadata")).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller") is True:
            return ref
    return None


def _condition_true(obj: dict[str, Any], type_: str) -> bool:
    return any(isinstance(c, dict) and c.get("type") == type_ and c.get("status") == "True"
               for c in _map(obj.get("status")).get("conditions") or [])


def _finished(job: dict[str, Any]) -> str | None:
    for type_ in ("Complete", "Failed"):
        if _condition_true(job, type_):
            return type_
    return None


def _index(pod: dict[str, Any]) -> int:
    value = _map(_map(pod.get("metadata")).get("annotations")).get(COMPLETION_INDEX)
    return int(value) if isinstance(value, str) and value.isdigit() else -1


def _holds_finalizer(obj: dict[str, Any]) -> bool:
    finalizers = _map(obj.get("metadata")).get("finalizers")
    return isinstance(finalizers, list) and TRACKING_FINALIZER in finalizers


def _parse_indexes(text: Any) -> set[int]:
    """``completedIndexes`` ("1,3-5") as a set; a malformed part is ignored (it never is ours)."""
    out: set[int] = set()
    for part in str(text or "").split(","):
        low, _, high = part.partition("-")
        if low.isdigit() and (not high or high.isdigit()):
            out.update(range(int(low), int(high or low) + 1))
    return out


@dataclass(slots=True)
class _PodBook:
    index: int
    holding: bool
    #: The pod was seen Succeeded / Failed while it still held the tracking finalizer.
    succeeded_tracked: bool = False
    failed_tracked: bool = False
    #: The finalizer was seen to go (the controller counted, or deliberately dropped, the pod).
    released: bool = False


@dataclass(slots=True)
class _JobBook:
    obj: dict[str, Any]
    pods: dict[str, _PodBook] = field(default_factory=dict)
    #: Pods currently in the store (uid → object), to compare the live counters with at the end.
    live: dict[str, dict[str, Any]] = field(default_factory=dict)
    terminal_checked: bool = False
    #: Ever seen with a deletionTimestamp: its counters stop mattering (the JobSet restarts, GC ...).
    deleting: bool = False


class WorkloadBooks:
    """Rules 5 (``dependsOn``) and 6 (pod accounting). ``checks`` counts what was executed."""

    def __init__(self, now: Any) -> None:
        self._now = now
        self.checks = 0
        self._jobsets: dict[str, dict[str, Any]] = {}
        self._jobs: dict[str, _JobBook] = {}

    # ---- stream ------------------------------------------------------------------------------------
    def on_event(self, event: WatchEvent) -> None:
        group, kind = event.key[0], event.key[1]
        if group == "jobset.x-k8s.io" and kind == "JobSet":
            uid = str(_map(event.obj.get("metadata")).get("uid") or "")
            if event.type == WatchType.DELETED:
                self._jobsets.pop(uid, None)
            else:
                self._jobsets[uid] = event.obj
        elif group == "batch" and kind == "Job":
            self._on_job(event)
        elif group == "" and kind == "Pod":
            self._on_pod(event)

    def _on_job(self, event: WatchEvent) -> None:
        obj = event.obj
        md = _map(obj.get("metadata"))
        uid = str(md.get("uid") or "")
        if event.type == WatchType.DELETED:
            self._jobs.pop(uid, None)
            return
        book = self._jobs.get(uid)
        if book is None:
            book = self._jobs[uid] = _JobBook(obj)
            if event.type == WatchType.ADDED:
                self._check_depends_on(obj)
        book.obj = obj
        book.deleting = book.deleting or bool(md.get("deletionTimestamp"))
        if not book.terminal_checked and _finished(obj) is not None:
            book.terminal_checked = True
            self._check_accounting(book, at_terminal=True)

    def _on_pod(self, event: WatchEvent) -> None:
        obj = event.obj
        ref = _controller(obj)
        if ref is None or ref.get("kind") != "Job" or ref.get("apiVersion") != "batch/v1":
            return
        md = _map(obj.get("metadata"))
        uid = str(md.get("uid") or "")
        holding = _holds_finalizer(obj)
        job = self._jobs.get(str(ref.get("uid") or ""))
        if event.type == WatchType.DELETED:
            self.checks += 1
            if holding:
                # The finalizer exists to stop exactly this: a pod gone before its Job counted it.
                raise InvariantViolation(
                    f"t={self._now():g}s pod {md.get('namespace')}/{md.get('name')} was removed while it still "
                    f"held {TRACKING_FINALIZER}: its Job can never count it")
        if job is None:
            return
        pod = job.pods.get(uid)
        if pod is None:
            pod = job.pods[uid] = _PodBook(_index(obj), holding)
        phase = _map(obj.get("status")).get("phase")
        if pod.holding:
            pod.succeeded_tracked = pod.succeeded_tracked or phase == SUCCEEDED
            pod.failed_tracked = pod.failed_tracked or phase == FAILED
            if not holding:
                pod.released = True
        pod.holding = holding
        if event.type == WatchType.DELETED:
            job.live.pop(uid, None)
        else:
            job.live[uid] = obj

    # ---- rule 5: dependsOn -------------------------------------------------------------------------
    def _check_depends_on(self, job: dict[str, Any]) -> None:
        """A child Job of a replicated job with ``dependsOn`` is created only once every dependency
        reached its status among the Jobs of the same JobSet and restart attempt (jobset.md §4.4):
        ``Complete`` — all of the dependency's replicas have a ``Complete`` Job; ``Ready`` — ready +
        succeeded + failed == replicas, a Job being ready when it is not finished and its ready plus
        succeeded pods reach min(parallelism, completions) (§1.7; from the Job's status, as JobSet reads
        it). We count over every Job of that attempt we have seen and that still exists; a Job the
        controller would exclude (RestartJob's older per-Job attempt, which shares the name and so
        cannot coexist with its replacement) could only raise our count, never cause a false alarm."""
        ref = _controller(job)
        if ref is None or ref.get("kind") != "JobSet" or ref.get("apiVersion") != JOBSET_API_VERSION:
            return
        jobset = self._jobsets.get(str(ref.get("uid") or ""))
        if jobset is None:
            return
        labels = _map(_map(job.get("metadata")).get("labels"))
        rjobs = {str(_map(r).get("name")): _map(r) for r in _map(jobset.get("spec")).get("replicatedJobs") or []}
        rjob = rjobs.get(str(labels.get(RJOB_LABEL)))
        depends = rjob.get("dependsOn") if rjob is not None else None
        if not depends:
            return
        attempt = labels.get(ATTEMPT_LABEL)
        siblings = [b.obj for b in self._jobs.values()
                    if (r := _controller(b.obj)) is not None and r.get("uid") == ref.get("uid")
                    and _map(_map(b.obj.get("metadata")).get("labels")).get(ATTEMPT_LABEL) == attempt]
        for dependency in depends:
            name = str(_map(dependency).get("name"))
            status = _map(dependency).get("status")
            wanted = _int(_map(rjobs.get(name)).get("replicas"), 1)
            jobs = [s for s in siblings if _map(_map(s.get("metadata")).get("labels")).get(RJOB_LABEL) == name]
            if status == "Complete":
                reached = sum(1 for s in jobs if _finished(s) == "Complete")
            else:
                reached = sum(1 for s in jobs if _finished(s) is not None or _job_ready(s))
            self.checks += 1
            if reached != wanted:
                md = _map(job.get("metadata"))
                raise InvariantViolation(
                    f"t={self._now():g}s Job {md.get('namespace')}/{md.get('name')} of replicated job "
                    f"{labels.get(RJOB_LABEL)} created while its dependency {name} is not {status}: "
                    f"{reached} of {wanted} Job(s) there")

    # ---- rule 6: every pod ends in a state its Job accounts for ------------------------------------
    def finish(self) -> None:
        """At the end of a run (controllers settled): the counters of every live Job against its pods."""
        for book in self._jobs.values():
            self._check_accounting(book, at_terminal=False)

    def _check_accounting(self, book: _JobBook, *, at_terminal: bool) -> None:
        """The Job controller counts a pod when it removes the tracking finalizer (upstream
        ``trackJobStatusAndRemoveFinalizers``), and only then; so, for a Job of the built-in controller
        that is not being deleted:

        * ``uncountedTerminatedPods`` is empty (we count and release in one pass);
        * ``succeeded`` is exactly the pods seen Succeeded while tracked (NonIndexed), or Indexed: the
          set ``completedIndexes`` is exactly their valid indexes and ``succeeded`` its size;
        * ``failed`` is at most the released pods that did not succeed (a pod is counted once), and,
          without a ``podFailurePolicy`` (whose Ignore rules do not count), at least the released pods
          seen Failed while tracked with a valid index. Not equality: a pod deleted while it runs is
          counted as failed at once (``isPodFailed``) though it never reaches Failed while tracked, and a
          Job that fails counts every pod it releases, finished or not;
        * once the Job is finished no pod of it still holds the finalizer (the pass that writes the
          terminal condition releases all), and no pod of it is active;
        * at the end of a run, an unfinished Job's ``terminating`` and ``ready`` equal its pods', and
          ``active`` equals its active pods or is 0 (upstream quirk: ``manageJob`` reports 0 while the
          pod-failure back-off holds creation); a finished pod still tracked must be the failed pod
          whose removal ``backoffLimitPerIndex`` delays until its replacement exists."""
        job = book.obj
        spec = _map(job.get("spec"))
        if book.deleting or spec.get("managedBy") not in (None, JOB_CONTROLLER):
            return
        indexed = spec.get("completionMode") == "Indexed"
        completions = spec.get("completions")
        if indexed and not isinstance(completions, int):
            return  # invalid; the controller leaves it alone
        status = _map(job.get("status"))
        md = _map(job.get("metadata"))
        name = f"Job {md.get('namespace')}/{md.get('name')}"
        when = f"t={self._now():g}s"
        problems: list[str] = []
        uncounted = _map(status.get("uncountedTerminatedPods"))
        self.checks += 1
        if uncounted.get("succeeded") or uncounted.get("failed"):
            problems.append(f"uncountedTerminatedPods not empty: {uncounted}")

        def valid(pod: _PodBook) -> bool:
            return not indexed or 0 <= pod.index < _int(completions)

        pods = list(book.pods.values())
        succeeded = _int(status.get("succeeded"))
        self.checks += 1
        if indexed:
            expected = {p.index for p in pods if p.succeeded_tracked and valid(p)}
            written = _parse_indexes(status.get("completedIndexes"))
            if written != expected or succeeded != len(written):
                problems.append(f"completedIndexes {status.get('completedIndexes')!r} (succeeded {succeeded}) but "
                                f"the pods that succeeded while tracked have indexes {sorted(expected)}")
        else:
            expected_count = sum(1 for p in pods if p.succeeded_tracked)
            if succeeded != expected_count:
                problems.append(f"succeeded {succeeded} but {expected_count} pod(s) succeeded while tracked")
        failed = _int(status.get("failed"))
        most = sum(1 for p in pods if p.released and not p.succeeded_tracked)
        least = 0 if spec.get("podFailurePolicy") else sum(
            1 for p in pods if p.released and p.failed_tracked and valid(p))
        self.checks += 1
        if not least <= failed <= most:
            problems.append(f"failed {failed} outside [{least}, {most}] given its released pods")
        finished = _finished(job) is not None
        per_index = spec.get("backoffLimitPerIndex") is not None
        for uid, pod_obj in book.live.items():
            pod = book.pods[uid]
            phase = _map(pod_obj.get("status")).get("phase")
            terminal = phase in (SUCCEEDED, FAILED)
            self.checks += 1
            if finished and pod.holding:
                problems.append(f"finished, yet pod {_pod_name(pod_obj)} still holds {TRACKING_FINALIZER}")
            elif finished and not terminal and not _map(pod_obj.get("metadata")).get("deletionTimestamp"):
                problems.append(f"finished, yet pod {_pod_name(pod_obj)} is still active ({phase})")
            elif not at_terminal and pod.holding and terminal and not (per_index and phase == FAILED):
                problems.append(f"pod {_pod_name(pod_obj)} is {phase} and still uncounted (holds the finalizer)")
        if not at_terminal and not finished:
            self._check_live_counters(book, status, problems)
        if problems:
            raise InvariantViolation(f"{when} {name} does not account for its pods: " + "; ".join(problems))

    def _check_live_counters(self, book: _JobBook, status: dict[str, Any], problems: list[str]) -> None:
        active = terminating = ready = 0
        for pod_obj in book.live.values():
            terminal = _map(pod_obj.get("status")).get("phase") in (SUCCEEDED, FAILED)
            if terminal:
                continue
            if _map(pod_obj.get("metadata")).get("deletionTimestamp"):
                terminating += 1
                continue
            active += 1
            ready += 1 if _condition_true(pod_obj, "Ready") else 0
        self.checks += 1
        written = (_int(status.get("active")), _int(status.get("terminating")), _int(status.get("ready")))
        if written[0] not in (active, 0) or written[1:] != (terminating, ready):
            problems.append(f"active/terminating/ready {written} but its pods give {(active, terminating, ready)}")


def _job_ready(job: dict[str, Any]) -> bool:
    spec = _map(job.get("spec"))
    status = _map(job.get("status"))
    parallelism = spec.get("parallelism")
    needed = 1 if not isinstance(parallelism, int) else parallelism
    completions = spec.get("completions")
    if isinstance(completions, int) and completions < needed:
        needed = completions
    return _int(status.get("ready")) + _int(status.get("succeeded")) >= needed


def _pod_name(pod: dict[str, Any]) -> str:
    md = _map(pod.get("metadata"))
    return f"{md.get('namespace')}/{md.get('name')}"
