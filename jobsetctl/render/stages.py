"""``render --all-stages``: the pretend step that releases the replicated jobs a JobSet starts later.

Without a scheduler and kubelet nothing ever runs, so a JobSet whose replicated jobs wait for others
(``dependsOn``, jobset.md §4.4; the ``InOrder`` startup policy, §4.3) stops after its first stage. To
show the later stages, render pretends, after each fixed point, that the Jobs blocking them reached the
state they wait for, by writing status through the API server, exactly as a kubelet and the Job
controller would have:

* a ``Complete`` dependency: the blocking Jobs get the terminal ``status`` the Job controller writes
  when completions are reached (``SuccessCriteriaMet`` and ``Complete`` conditions, ``succeeded``,
  ``completedIndexes``, ``completionTime``). The Job controller leaves finished Jobs alone, so it sticks;
* a ``Ready`` dependency (and ``InOrder``): the blocking Jobs' active pods become ``Running`` and
  ``Ready`` (pod status written as a kubelet would), and the real Job controller counts them into the
  Job's ``status.ready``. A Job that has too few pods for that (exclusive-placement followers wait for
  a scheduled leader) is completed instead, which satisfies ``Ready`` too (jobset.md §4.4 counts
  succeeded Jobs). So that there are pods to make ready, ``--all-stages`` always lets the Job
  controller create pods; without ``--pods`` they are left out of the output.

Then the controllers run to the next fixed point; everything created meanwhile belongs to the next
stage. The loop ends when no JobSet has a blocked replicated job left whose blockers render has not
already pretended on, or when a pass creates nothing new after every pretence was tried.

Side effects are the real controllers' own: completing Jobs can satisfy the JobSet's success policy
(e.g. ``operator: Any``), which then completes the JobSet and creates nothing more.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jobsetctl.fakecluster.apiserver import APIServer, controller_of
from jobsetctl.fakecluster.controllers.job_pods import is_active, owned_pods
from jobsetctl.fakecluster.controllers.job_spec import (
    COMPLETE,
    MESSAGE_COMPLETIONS_REACHED,
    REASON_COMPLETIONS_REACHED,
    SUCCESS_CRITERIA_MET,
    new_condition,
)
from jobsetctl.jobset import api as jsapi
from jobsetctl.kinds.interface import Object
from jobsetctl.reference import pods_per_job

READY = "Ready"
COMPLETE_STATUS = "Complete"
#: Fields Go omits when zero.
OMIT_WHEN_ZERO = ("active", "succeeded", "failed", "completedIndexes")
#: Stages beyond this are a loop in the inputs (a replicated job depending on itself never starts).
MAX_STAGES = 1000
#: JobStatus fields in the order ``k8s.io/api/batch/v1`` serialises them.
JOB_STATUS_ORDER = ("conditions", "startTime", "completionTime", "active", "succeeded", "failed", "terminating",
                    "completedIndexes", "failedIndexes", "uncountedTerminatedPods", "ready")


@dataclass(slots=True)
class Pretence:
    """What the pretend step did in one round, for the stderr summary."""

    completed: list[str] = field(default_factory=list)
    made_ready: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.completed or self.made_ready)


def _job_rjob(job: Object) -> str:
    labels = jsapi.as_dict(jsapi.metadata(job).get("labels"))
    return jsapi.as_str(labels.get(jsapi.REPLICATED_JOB_NAME_KEY))


def _owned_jobs(api: APIServer, js: Object) -> dict[str, list[Object]]:
    uid = jsapi.as_str(jsapi.metadata(js).get("uid"))
    by_rjob: dict[str, list[Object]] = {}
    for job in api.owned(uid, "batch", "Job"):
        ref = controller_of(job)
        if ref is not None and ref.get("uid") == uid and not jsapi.metadata(job).get("deletionTimestamp"):
            by_rjob.setdefault(_job_rjob(job), []).append(job)
    return by_rjob


def _finished(job: Object) -> bool:
    for cond in jsapi.as_list(jsapi.as_dict(job.get("status")).get("conditions")):
        if isinstance(cond, dict) and cond.get("type") in (COMPLETE, "Failed") and cond.get("status") == "True":
            return True
    return False


def blockers(api: APIServer, js: Object) -> dict[str, str]:
    """Replicated jobs whose Jobs hold back a later one, and the state wanted of them (Complete wins)."""
    if jsapi.is_finished(js) or jsapi.is_suspended(js) or not jsapi.is_managed_by_builtin_controller(js):
        return {}
    jobs = _owned_jobs(api, js)
    wanted: dict[str, str] = {}

    def want(rjob_name: str, state: str) -> None:
        if wanted.get(rjob_name) != COMPLETE_STATUS:
            wanted[rjob_name] = state

    in_order = jsapi.startup_order(js) == jsapi.StartupPolicyOrder.IN_ORDER
    earlier: list[str] = []
    for rjob in jsapi.replicated_jobs(js):
        name = jsapi.rjob_name(rjob)
        if len(jobs.get(name, [])) < jsapi.replicas(rjob):
            for dependency in jsapi.depends_on(rjob) or []:
                status = jsapi.as_str(dependency.get("status"))
                want(jsapi.as_str(dependency.get("name")), COMPLETE_STATUS if status == COMPLETE_STATUS else READY)
            if in_order:
                for previous in earlier:
                    want(previous, READY)
        earlier.append(name)
    return {name: state for name, state in wanted.items() if jobs.get(name)}


def pretend(api: APIServer, done: set[tuple[str, str]]) -> Pretence:
    """One pretend round over every JobSet; ``done`` remembers (Job uid, state) already pretended."""
    result = Pretence()
    now = api.clock.timestamp()
    for js in list(api.iter_kind(jsapi.GROUP, jsapi.KIND)):
        wanted = blockers(api, js)
        if not wanted:
            continue
        jobs = _owned_jobs(api, js)
        for rjob in jsapi.replicated_jobs(js):
            state = wanted.get(jsapi.rjob_name(rjob))
            if state is None:
                continue
            for job in jobs.get(jsapi.rjob_name(rjob), []):
                uid = jsapi.as_str(jsapi.metadata(job).get("uid"))
                if _finished(job) or (uid, state) in done:
                    continue
                done.add((uid, state))
                if state == READY and make_ready(api, job, now):
                    result.made_ready.append(jsapi.name(job))
                else:
                    done.add((uid, READY))
                    complete(api, job, now)
                    result.completed.append(jsapi.name(job))
    return result


def make_ready(api: APIServer, job: Object, now: str) -> bool:
    """Mark the Job's active pods Running and Ready (a kubelet's status write); False when there are
    too few pods for the Job to count as ready, in which case nothing is written."""
    uid = jsapi.as_str(jsapi.metadata(job).get("uid"))
    pods = [p for p in owned_pods(api, uid) if is_active(p)]
    if not pods or len(pods) < pods_per_job(job.get("spec")):
        return False
    for pod in pods:
        status = jsapi.as_dict(pod.get("status"))
        ready = [{"type": kind, "status": "True", "lastProbeTime": None, "lastTransitionTime": now}
                 for kind in ("Initialized", READY, "ContainersReady", "PodScheduled")]
        pod["status"] = {**status, "phase": "Running", "conditions": ready, "startTime": now}
        api.update_status(pod)
    return True


def complete(api: APIServer, job: Object, now: str) -> None:
    """Write the status the Job controller writes when a Job reaches its completions."""
    spec = jsapi.as_dict(job.get("spec"))
    parallelism = jsapi.as_int(spec.get("parallelism"))
    completions = jsapi.as_int(spec.get("completions"))
    succeeded = completions if completions is not None else (1 if parallelism is None else max(parallelism, 1))
    status: dict[str, Any] = dict(jsapi.as_dict(job.get("status")))
    conditions = [c for c in jsapi.as_list(status.get("conditions"))
                  if isinstance(c, dict) and c.get("type") not in (SUCCESS_CRITERIA_MET, COMPLETE)]
    conditions.append(new_condition(SUCCESS_CRITERIA_MET, "True", REASON_COMPLETIONS_REACHED,
                                    MESSAGE_COMPLETIONS_REACHED, now))
    conditions.append(new_condition(COMPLETE, "True", REASON_COMPLETIONS_REACHED, MESSAGE_COMPLETIONS_REACHED, now))
    status.update({"conditions": conditions, "completionTime": now, "active": 0, "succeeded": succeeded,
                   "terminating": 0, "uncountedTerminatedPods": {}, "ready": 0})
    status.setdefault("startTime", now)
    if spec.get("completionMode") == "Indexed" and succeeded > 0:
        status["completedIndexes"] = f"0-{succeeded - 1}" if succeeded > 2 else ",".join(
            str(i) for i in range(succeeded))
    job["status"] = {key: status[key] for key in JOB_STATUS_ORDER
                     if key in status and not (key in OMIT_WHEN_ZERO and status[key] in (0, "", None))}
    api.update_status(job)


def run_stages(api: APIServer, settle: Callable[[], None], set_stage: Callable[[int], None],
               count: Callable[[], int]) -> list[Pretence]:
    """Pretend, settle, repeat (see the module docstring). ``set_stage`` labels what gets created next;
    ``count`` is the number of captured objects so far. Returns the rounds that created something."""
    rounds: list[Pretence] = []
    done: set[tuple[str, str]] = set()
    stage = 0
    for _ in range(MAX_STAGES):
        pretence = pretend(api, done)
        if not pretence:
            break
        before = count()
        set_stage(stage + 1)
        settle()
        if count() > before:
            stage += 1
            rounds.append(pretence)
    return rounds
