"""How big a simulation (or a render) may get: bounded time and memory whatever the input says.

A Scenario or a manifest can ask for far more than any machine can model: a million nodes, a JobSet of
a billion replicas, a run at the year 10**20, a JobSet restarting every second for a month. Each of
these is refused before anything runs, with its ``file:line:column``, or, when only the run shows it,
stops the run with a word on why:

* :data:`MAX_NODES` nodes in one simulation (pools, ``--nodes`` and Node manifests together): twice the
  5,000 nodes Kubernetes' own scalability tests go up to;
* :data:`MAX_OBJECTS` objects (Jobs, pods, groups ...; nodes not counted) that the inputs would make
  the controllers create, estimated from ``replicas``, ``parallelism`` and ``completions`` before the
  run (:func:`estimate`), and counted again while it runs (:class:`ObjectBudget`, for what the estimate
  cannot see: TrainJob runtimes, objects created over time);
* :data:`MAX_TIME` for every time of a Scenario (``at``, ``until``) and ``--until``: a year of virtual
  time; infinite and NaN times are malformed;
* :data:`MAX_EVENTS` timeline events (or :data:`EVENTS_PER_OBJECT` per object the inputs make or
  submit, when that is more: a contended day of 50,000 pods records some 300,000, Kueue's performance
  configurations submit 50,000 Workloads): a run that keeps producing events (a JobSet restarting
  forever) stops there, with ``stopReason: limit``, like a run that reached its horizon.

The estimate counts what the store will hold: each submitted object (nodes apart), the Jobs and pods of
JobSets and Jobs, a JobSet's headless Service, and the JobSet and pods a TrainJob makes at least. For JobSets
and Jobs it is exact as long as nothing restarts (the objects of a run without failures), so the message
that refuses an input names the ``--max-objects`` value that lets it run. It does not see what a
TrainingRuntime adds, the Workloads and PodGroups the Job controller makes with ``WorkloadWithJob``, nor
PersistentVolumeClaims of ``volumeClaimPolicies``: the run's own count (:class:`ObjectBudget`) catches those.

The rule is defined here and registered through :mod:`jobsetctl.simulate.scenario`, which imports this
module.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from jobsetctl.diagnostics import Diagnostic, Layer, Severity
from jobsetctl.fakecluster.apiserver import APIServer, WatchEvent, WatchType, controller_of
from jobsetctl.kinds.index import object_key
from jobsetctl.kube.field import Path, path_string
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define

MAX_NODES = 10_000
#: The default of ``--max-objects`` (render and simulate): a hostile input stops within about a minute
#: and 1.5 GB; a simulation at scheduler_perf's size (5,000 nodes, 50,000 pods in gangs: some 70,000
#: objects) asks for more with the option.
MAX_OBJECTS = 50_000
MAX_TIME = 365 * 86400.0
MAX_EVENTS = 100_000
#: Timeline events allowed per object the inputs make or submit, above :data:`MAX_EVENTS`: a pod that waits,
#: runs and ends records about six (Created, Unschedulable, Scheduled, Started, Ready, Succeeded), a
#: Kueue Workload about as many (Created, QuotaReserved, Admitted, Finished ...).
EVENTS_PER_OBJECT = 20


def event_limit(objects: int) -> int:
    """The timeline events a run of inputs that make (or submit) ``objects`` objects may record before it
    stops with ``stopReason: limit``."""
    return max(MAX_EVENTS, EVENTS_PER_OBJECT * objects)

TOO_LARGE = define(
    "simulation-too-large", Layer.INPUT, Severity.ERROR,
    f"render or simulate would model more than {MAX_NODES:,} nodes or {MAX_OBJECTS:,} objects.",
    spec="simulate: limits (jobsetctl simulate --help)",
)

#: Said when the run's own count passes the limit: larger runs are legitimate, the limit is a guard.
_RAISE_HINT = " (raise with --max-objects)"

JOBSET = ("jobset.x-k8s.io", "JobSet")
JOB = ("batch", "Job")
TRAINJOB = ("trainer.kubeflow.org", "TrainJob")


def time_problem(seconds: float) -> str | None:
    """Why a Scenario time cannot be used (infinite, NaN, beyond :data:`MAX_TIME`), or None."""
    if not math.isfinite(seconds):
        return "must be a finite duration"
    if seconds > MAX_TIME:
        return f"must be at most {MAX_TIME / 3600:g}h (365 days), the longest run simulate models"
    return None


def _count(value: Any, default: int) -> int:
    """A replica or pod count as written; anything that is not a non-negative integer counts as the
    default (admission reports it; the estimate only has to be an estimate)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return default
    return value


def _pods_per_job(job_spec: Any) -> tuple[int, Path]:
    """Pods a Job makes over its life (pods that finish stay until the Job goes) and the field that says so."""
    spec = job_spec if isinstance(job_spec, dict) else {}
    parallelism = _count(spec.get("parallelism"), 1)
    completions = _count(spec.get("completions"), 0)
    if completions > parallelism:
        return completions, ("completions",)
    return parallelism, ("parallelism",)


@dataclass(frozen=True, slots=True)
class Estimate:
    """What one input makes the controllers create, and the field most responsible."""

    objects: int
    at: Path
    what: str


def estimate_one(obj: dict[str, Any], pods: bool) -> Estimate | None:
    """Jobs and pods a JobSet, a Job or a TrainJob would create (pods only when ``pods``), or None for
    other kinds."""
    return _estimate(obj, object_key(obj)[:2], pods)


def _estimate(obj: dict[str, Any], group_kind: tuple[str, str], pods: bool) -> Estimate | None:
    """:func:`estimate_one` for an object of ``group_kind`` (its :func:`object_key`'s first two)."""
    group, kind = group_kind
    raw_spec = obj.get("spec")
    spec: dict[str, Any] = raw_spec if isinstance(raw_spec, dict) else {}
    if (group, kind) == JOB:
        per_job, field_at = _pods_per_job(spec)
        count = per_job if pods else 0
        return Estimate(count, ("spec", *field_at), f"{count:,} pods")
    if (group, kind) == TRAINJOB:
        # The runtime decides the Jobs; ``numNodes`` pods are the least a TrainJob makes.
        trainer = spec.get("trainer")
        nodes = _count(trainer.get("numNodes"), 1) if isinstance(trainer, dict) else 1
        count = 2 + (nodes if pods else 0)
        return Estimate(count, ("spec", "trainer", "numNodes"), f"{nodes:,} pods" if pods else "a JobSet")
    if (group, kind) != JOBSET:
        return None
    jobs = pod_total = 0
    biggest = -1
    at: Path = ("spec", "replicatedJobs")
    replicated = spec.get("replicatedJobs")
    for index, rj in enumerate(replicated if isinstance(replicated, list) else []):
        if not isinstance(rj, dict):
            continue
        replicas = _count(rj.get("replicas"), 1)
        template = rj.get("template")
        per_job, field_at = _pods_per_job(template.get("spec") if isinstance(template, dict) else None)
        made = replicas * (1 + (per_job if pods else 0))
        jobs += replicas
        pod_total += replicas * per_job
        if made > biggest:
            biggest = made
            base: Path = ("spec", "replicatedJobs", index)
            at = (*base, "replicas") if replicas > 1 or not pods else (*base, "template", "spec", *field_at)
    what = f"{jobs:,} Jobs" + (f" and {pod_total:,} pods" if pods else "")
    return Estimate(jobs + (pod_total if pods else 0), at, what)


def objects_of(obj: dict[str, Any], pods: bool) -> int:
    """The objects the store holds for one input: itself (a Node is not counted) and what the controllers
    make of it (:func:`estimate_one`, and a JobSet's headless Service)."""
    group_kind = object_key(obj)[:2]
    own = 0 if group_kind == ("", "Node") else 1
    if group_kind != JOB and group_kind != TRAINJOB and group_kind != JOBSET:
        return own  # (what _estimate answers None for, without a call: most inputs of a large run)
    found = _estimate(obj, group_kind, pods)
    if found is None:
        return own
    extra = 0
    if group_kind == JOBSET:
        from jobsetctl.jobset.render import headless_service

        extra = 1 if headless_service(obj) is not None else 0
    return own + found.objects + extra


def objects_total(records: Iterable[ObjectRecord], *, pods: bool = True) -> int:
    """:func:`objects_of` summed over the inputs."""
    return sum(objects_of(record.obj, pods) for record in records)


def counted_exactly(obj: dict[str, Any]) -> bool:
    """Whether :func:`objects_of` is all the store will hold for ``obj`` in a run without restarts: not for
    a TrainJob (its runtime decides; the Trainer's runtimes are installed too), a JobSet with
    ``volumeClaimPolicies`` (PersistentVolumeClaims) or a Job with ``spec.scheduling`` (a Workload and a
    PodGroup of the Job controller's)."""
    key = object_key(obj)[:2]
    spec = obj.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    if key == TRAINJOB:
        return False
    if key == JOB:
        return "scheduling" not in spec
    if key == JOBSET:
        if spec.get("volumeClaimPolicies"):
            return False
        for rj in spec.get("replicatedJobs") or []:
            template = rj.get("template") if isinstance(rj, dict) else None
            job_spec = template.get("spec") if isinstance(template, dict) else None
            if isinstance(job_spec, dict) and "scheduling" in job_spec:
                return False
    return True


def estimate(
    records: Iterable[ObjectRecord], *, pods: bool, command: str, max_objects: int = MAX_OBJECTS
) -> list[Diagnostic]:
    """One diagnostic at the input that brings the objects the inputs make past ``max_objects``, which
    says the ``--max-objects`` value that lets all of them run."""
    listed = list(records)
    needed = objects_total(listed, pods=pods)
    if needed <= max_objects:
        return []
    if all(counted_exactly(record.obj) for record in listed):
        lets = f"--max-objects {needed:,} lets these inputs run"
    else:
        lets = f"these inputs need --max-objects {needed:,} at least (their runtimes or claims may add more)"
    total = 0
    for record in listed:
        made = objects_of(record.obj, pods)
        total += made
        found = estimate_one(record.obj, pods)
        if total <= max_objects or found is None:
            continue
        others = total - made
        besides = f" (besides {others:,} for the inputs before it)" if others else ""
        message = (f"{path_string(found.at)}: {record.ref.kind} {record.ref.name} would make the controllers "
                   f"create {found.what}{besides}; {command} models at most {max_objects:,} objects: {lets}")
        return [record.diagnostic(TOO_LARGE.finding(message, path=path_string(found.at), at=found.at))]
    # Past the limit only with objects no controller makes (thousands of submitted ConfigMaps ...): said at
    # the input that crosses it.
    total = 0
    for record in listed:
        total += objects_of(record.obj, pods)
        if total > max_objects:
            message = (f"{record.ref.kind} {record.ref.name}: the inputs hold {needed:,} objects; {command} models "
                       f"at most {max_objects:,} objects: {lets}")
            return [record.diagnostic(TOO_LARGE.finding(message, path="", at=()))]
    return []


def node_limit_message(total: int) -> str:
    return f"{total:,} nodes in all; simulate models at most {MAX_NODES:,} nodes"


class ObjectLimitExceeded(RuntimeError):
    """Raised from the API server's watch when the store holds more than :data:`MAX_OBJECTS` objects."""

    def __init__(self, obj: dict[str, Any], time: float, limit: int = MAX_OBJECTS) -> None:
        self.obj = obj
        self.limit = limit
        #: (kind, namespace, name) of its controller owners, nearest first (filled in by whoever can look).
        self.owners: list[tuple[str, str, str]] = []
        raw = obj.get("metadata")
        md: dict[str, Any] = raw if isinstance(raw, dict) else {}
        self.kind = str(obj.get("kind", ""))
        self.namespace = str(md.get("namespace") or "")
        self.name = str(md.get("name") or "")
        self.time = time
        super().__init__(f"more than {limit:,} objects at {time:g}s (creating {self.kind} {self.name})")


class ObjectBudget:
    """A watcher (``APIServer.subscribe``) that counts the objects in the store, nodes apart, and raises
    :class:`ObjectLimitExceeded` past :data:`MAX_OBJECTS`: the guard for what :func:`estimate` cannot
    foresee. It raises from inside a controller's create, which abandons the run: nothing after it is
    reported, so a half-updated store does not matter."""

    def __init__(self, clock: Any, limit: int = MAX_OBJECTS) -> None:
        self.clock = clock
        self.limit = limit
        self.objects = 0

    def __call__(self, event: WatchEvent) -> None:
        if event.key[1] == "Node":
            return
        if event.type == WatchType.ADDED:
            self.objects += 1
            if self.objects > self.limit:
                raise ObjectLimitExceeded(event.obj, float(self.clock.now), self.limit)
        elif event.type == WatchType.DELETED:
            self.objects -= 1


def owner_chain(api: APIServer, obj: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(kind, namespace, name) of the controller owners of ``obj``, nearest first."""
    chain: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    current = obj
    while True:
        ref = controller_of(current)
        uid = str(ref.get("uid", "")) if ref else ""
        owner = api.get_by_uid(uid) if uid and uid not in seen else None
        if owner is None:
            return chain
        seen.add(uid)
        raw = owner.get("metadata")
        md: dict[str, Any] = raw if isinstance(raw, dict) else {}
        chain.append((str(owner.get("kind", "")), str(md.get("namespace") or ""), str(md.get("name") or "")))
        current = owner


def limit_diagnostic(exc: ObjectLimitExceeded, records: Iterable[ObjectRecord], command: str) -> Diagnostic:
    """The run's object limit as a diagnostic at the input the runaway object descends from (through
    ``exc.owners``), else at the first input."""
    listed = list(records)
    chain = [(exc.kind, exc.namespace, exc.name), *exc.owners]
    for kind, namespace, name in reversed(chain):
        for record in listed:
            ref = record.ref
            if ref.kind == kind and ref.name == name and (ref.namespace or "default") == (namespace or "default"):
                return _diagnostic(record, exc, command)
    if listed:
        return _diagnostic(listed[0], exc, command)
    rule = TOO_LARGE
    return Diagnostic("<inputs>", 1, 1, rule.severity, rule.layer, rule.id, _limit_text(exc, command))


def _limit_text(exc: ObjectLimitExceeded, command: str) -> str:
    return (f"the controllers created more than {exc.limit:,} objects by {exc.time:g}s (the last: {exc.kind} "
            f"{exc.namespace + '/' if exc.namespace else ''}{exc.name}); {command} models at most {exc.limit:,} "
            f"objects and stopped{_RAISE_HINT if exc.limit == MAX_OBJECTS else ''}")


def _diagnostic(record: ObjectRecord, exc: ObjectLimitExceeded, command: str) -> Diagnostic:
    return record.diagnostic(TOO_LARGE.finding(f"{record.ref.kind} {record.ref.name}: {_limit_text(exc, command)}",
                                               path="", at=()))
