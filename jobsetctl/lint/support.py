"""What the lint modules share: kinds, the JobSet specs inside objects, stages, TrainJob expansion.

A lint module (see :mod:`jobsetctl.lint`) checks one object at a time and looks other objects up
through ``ctx.cluster`` (validate's index of every input, ``--runtimes`` files and the built-in
Trainer runtimes). Helpers here never raise on malformed input: lints run on whatever admission
could type, which may still carry admission errors.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from jobsetctl.jobset import api
from jobsetctl.kinds.index import ObjectIndex
from jobsetctl.kinds.interface import AdmissionContext, ClusterView, Object
from jobsetctl.kube.field import Path, go_quote
from jobsetctl.kube.versions import split_api_version
from jobsetctl.reference import pods_per_job
from jobsetctl.rules.registry import example_doc
from jobsetctl.trainer import api as trainer_api

GroupKind = tuple[str, str]
T = TypeVar("T")

JOBSET: Final[GroupKind] = (api.GROUP, api.KIND)
JOB: Final[GroupKind] = ("batch", "Job")
TRAINJOB: Final[GroupKind] = (trainer_api.GROUP, trainer_api.TRAINJOB)
TRAINING_RUNTIME: Final[GroupKind] = (trainer_api.GROUP, trainer_api.TRAINING_RUNTIME)
CLUSTER_TRAINING_RUNTIME: Final[GroupKind] = (trainer_api.GROUP, trainer_api.CLUSTER_TRAINING_RUNTIME)
RUNTIMES: Final = frozenset({TRAINING_RUNTIME, CLUSTER_TRAINING_RUNTIME})
SCHEDULING: Final = "scheduling.k8s.io"
PODGROUP: Final[GroupKind] = (SCHEDULING, "PodGroup")
WORKLOAD: Final[GroupKind] = (SCHEDULING, "Workload")

#: The label Kueue reads to pick a LocalQueue (scheduling.md §2.1).
KUEUE_QUEUE_LABEL: Final = "kueue.x-k8s.io/queue-name"


def group_kind(obj: Object) -> GroupKind:
    api_version = obj.get("apiVersion")
    kind = obj.get("kind")
    group = split_api_version(api_version)[0] if isinstance(api_version, str) else ""
    return group, kind if isinstance(kind, str) else ""


def cluster_of(ctx: AdmissionContext) -> ClusterView:
    """The lookups of this run; an empty index when the caller gave none."""
    return ctx.cluster if ctx.cluster is not None else ObjectIndex()


#: The ``doc`` of a lint rule (the lints' name for :func:`jobsetctl.rules.registry.example_doc`).
lint_doc = example_doc


def names_list(names: list[str]) -> str:
    """``"a", "b"`` for messages."""
    return ", ".join(go_quote(name) for name in names)




def priority_of(ctx: AdmissionContext, priority_class_name: str | None) -> int | None:
    """The priority the Priority admission plugin gives a pod with this class name (None when the class
    does not exist), resolved once per name and run: resolving scans every PriorityClass."""
    from jobsetctl.kube.priority import resolve_priority

    resolved: dict[str | None, int | None] = memo(ctx, "priorities", lambda cluster: {})
    if priority_class_name not in resolved:
        resolution = resolve_priority(priority_class_name, cluster_of(ctx))
        resolved[priority_class_name] = None if resolution.error is not None else resolution.priority
    return resolved[priority_class_name]


# --- JobSet specs inside objects -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class JobSetView:
    """A JobSet, or the JobSet template of a (Cluster)TrainingRuntime, with where it sits.

    ``obj`` has the shape of a JobSet (``metadata`` and ``spec``), so the accessors of
    :mod:`jobsetctl.jobset.api` read it; ``base`` is its path inside the checked object.
    ``name`` is what the child objects are named after: the JobSet name, or ``<trainjob>`` for a
    runtime template (every TrainJob gets a JobSet of its own name).
    """

    obj: dict[str, Any]
    base: Path
    name: str
    in_runtime: bool

    def at(self, *path: str | int) -> Path:
        return (*self.base, *path)

    def rjob_at(self, index: int, *path: str | int) -> Path:
        return self.at("spec", "replicatedJobs", index, *path)


def jobset_views(obj: Object) -> list[JobSetView]:
    """The JobSet specs a lint of JobSet semantics should read in ``obj``."""
    kind = group_kind(obj)
    if kind == JOBSET:
        return [JobSetView(obj, (), api.name(obj) or api.generate_name(obj) or "<jobset>", False)]
    if kind in RUNTIMES:
        template = api.as_dict(api.spec(obj).get("template"))
        return [JobSetView(template, ("spec", "template"), "<trainjob>", True)] if template else []
    return []


def what(view: JobSetView) -> str:
    """How messages name the object whose spec is read."""
    return "this runtime's JobSet template" if view.in_runtime else f"JobSet {go_quote(view.name)}"


# --- stages: which replicated jobs wait for which ------------------------------------------------


def dependencies(js: Any) -> dict[str, list[tuple[str, str]]]:
    """Replicated job name → its ``dependsOn`` (name, status), in spec order."""
    out: dict[str, list[tuple[str, str]]] = {}
    for rjob in api.replicated_jobs(js):
        items = api.depends_on(rjob) or []
        out[api.rjob_name(rjob)] = [(api.as_str(item.get("name")), api.as_str(item.get("status"))) for item in items]
    return out


def waits_for(js: Any) -> dict[str, set[str]]:
    """Replicated job name → every replicated job it waits for, directly or through others."""
    direct = {name: {dep for dep, _ in deps} for name, deps in dependencies(js).items()}
    closure: dict[str, set[str]] = {}
    for name in direct:
        seen: set[str] = set()
        pending = list(direct[name])
        while pending:
            dep = pending.pop()
            if dep in seen:
                continue
            seen.add(dep)
            pending.extend(direct.get(dep, ()))
        closure[name] = seen
    return closure


def _stages(js: Any) -> tuple[list[str], bool, dict[str, set[str]]]:
    """A JobSet's replicated job names in spec order, whether it starts InOrder, and :func:`waits_for` (empty
    for InOrder), once per JobSet and run: a JobSet with a PodGroup per replicated job is split into stages
    once per PodGroup (the gang lints), and these are the same each time. Read only."""
    def build() -> tuple[list[str], bool, dict[str, set[str]]]:
        ordered = [api.rjob_name(rjob) for rjob in api.replicated_jobs(js)]
        in_order = api.startup_order(js) == api.StartupPolicyOrder.IN_ORDER.value
        return ordered, in_order, {} if in_order else waits_for(js)

    return per_object(_STAGES, js, build)


def jobset_pods(js: Any) -> dict[str, int]:
    """Replicated job name → its pods that exist at once (:func:`rjob_pods`), once per JobSet and run. Read
    only."""
    return per_object(_POD_COUNTS, js, lambda: {api.rjob_name(rjob): rjob_pods(rjob) for rjob in api.replicated_jobs(js)})


def rjob_pods(rjob: Any) -> int:
    """Pods of one replicated job that exist at once: replicas × pods per child Job."""
    return max(0, api.replicas(rjob)) * pods_per_job(api.job_spec(rjob))


@dataclass(frozen=True, slots=True)
class Coexistence:
    """Which members of a gang can have pods before the gang is admitted."""

    #: Members whose Jobs are created before any other member runs.
    first: list[str]
    #: Members that wait (dependsOn, or InOrder startup) for another member to be ready or done.
    waiting: dict[str, str]


def coexistence(js: Any, members: set[str]) -> Coexistence:
    """Split the ``members`` of one JobSet into those created up front and those that wait for another
    member (jobset.md §4.3 InOrder: one replicated job at a time, the next once the previous is ready;
    §4.4 dependsOn: created once every dependency is Ready/Complete). A member that waits for another
    member can only get pods after that member's pods run, i.e. after the gang was admitted."""
    ordered, in_order, closure = _stages(js)
    first: list[str] = []
    waiting: dict[str, str] = {}
    if in_order:
        previous_member: str | None = None
        for name in ordered:
            if name not in members:
                continue
            if previous_member is None:
                first.append(name)
                previous_member = name
            else:
                waiting[name] = previous_member
        return Coexistence(first, waiting)
    for name in ordered:
        if name not in members:
            continue
        blocking = sorted(dep for dep in closure.get(name, set()) if dep in members and dep != name)
        if blocking:
            waiting[name] = blocking[0]
        else:
            first.append(name)
    return Coexistence(first, waiting)


# --- gangs: which inputs' pods reference which gang ----------------------------------------------

#: A gang: ``("pg", namespace, name)`` for a 1.36/1.37 PodGroup, ``("wl", namespace, workload, pod group,
#: replica key)`` for a 1.35 Workload pod group (each replica key is a gang of its own).
GangKey = tuple[str, ...]
#: An input whose pods join a gang: its kind (``Job`` or ``JobSet``), the object, and for a JobSet the
#: replicated jobs whose pod template names the gang.
GangMember = tuple[str, Object, set[str]]


def gang_keys(pod_spec: Any, namespace: str) -> list[GangKey]:
    """The gangs a pod template names (``schedulingGroup``, 1.35 ``workloadRef``)."""
    from jobsetctl.kube.podspec import scheduling_group_name, workload_reference

    found: list[GangKey] = []
    group = scheduling_group_name(pod_spec)
    if group is not None:
        found.append(("pg", namespace, group))
    ref = workload_reference(pod_spec)
    if ref is not None:
        found.append(("wl", namespace, ref.name, ref.pod_group, ref.replica_key))
    return found


def gang_members(ctx: AdmissionContext) -> dict[GangKey, list[GangMember]]:
    """Gang → the Jobs and JobSets among the inputs whose pods reference it, built once per run."""
    return memo(ctx, "gang-members", lambda cluster: _gang_members(cluster, ctx.default_namespace))


def _gang_members(cluster: ClusterView, default_namespace: str) -> dict[GangKey, list[GangMember]]:
    index: dict[GangKey, list[GangMember]] = {}
    for other in cluster.list(*JOB):
        if isinstance(other, dict):
            pod_spec = api.as_dict(api.as_dict(api.spec(other).get("template")).get("spec"))
            for key in gang_keys(pod_spec, api.namespace(other) or default_namespace):
                index.setdefault(key, []).append((JOB[1], other, set()))
    for other in cluster.list(*JOBSET):
        if not isinstance(other, dict):
            continue
        by_key: dict[GangKey, set[str]] = {}
        for rjob in api.replicated_jobs(other):
            for key in gang_keys(api.pod_spec(rjob), api.namespace(other) or default_namespace):
                by_key.setdefault(key, set()).add(api.rjob_name(rjob))
        for key, names in by_key.items():
            index.setdefault(key, []).append((JOBSET[1], other, names))
    return index


def gang_label(key: GangKey) -> str:
    """How messages name a gang: ``PodGroup "pg"``, ``pod group "g" of Workload "w"``."""
    if key[0] == "pg":
        return f"PodGroup {go_quote(key[2])}"
    replica = f" replica {go_quote(key[4])}" if key[4] else ""
    return f"pod group {go_quote(key[3])}{replica} of Workload {go_quote(key[2])}"


def gang_min_count(cluster: ClusterView, key: GangKey) -> int | None:
    """The ``minCount`` of a gang's PodGroup (or 1.35 Workload pod group) among the inputs; None when the
    group is missing or not a gang (``basic``)."""
    if key[0] == "pg":
        group = cluster.get(SCHEDULING, PODGROUP[1], key[1], key[2])
        policy = api.as_dict(api.spec(group).get("schedulingPolicy")) if isinstance(group, dict) else {}
        return api.as_int(api.as_dict(policy.get("gang")).get("minCount"))
    workload = cluster.get(SCHEDULING, WORKLOAD[1], key[1], key[2])
    if not isinstance(workload, dict):
        return None
    for group in api.as_list(api.spec(workload).get("podGroups")):
        if api.as_dict(group).get("name") == key[3]:
            return api.as_int(api.as_dict(api.as_dict(api.as_dict(group).get("policy")).get("gang")).get("minCount"))
    return None


# --- TrainJobs: their runtime and what the controller builds --------------------------------------


@dataclass(slots=True)
class TrainJobPlan:
    """A TrainJob, its runtime and the expansion, shared by the Trainer lints of one run."""

    runtime: Object
    runtime_name: str
    expansion: Any  # jobsetctl.trainer.expand.Expansion (imported lazily: the expansion is large)
    #: The generated JobSet as JobSet admission leaves it (defaults applied), or None if not typed.
    jobset: Object | None


_PLANS: dict[int, tuple[Object, TrainJobPlan | None]] = {}
_MEMO: dict[tuple[str, int], tuple[object, Any]] = {}
_STAGES: dict[int, tuple[Any, tuple[list[str], bool, dict[str, set[str]]]]] = {}
_POD_COUNTS: dict[int, tuple[Any, dict[str, int]]] = {}


def per_object(cache: dict[int, tuple[Any, T]], obj: Any, build: Callable[[], T]) -> T:
    """``build()`` once per object and run, kept in ``cache`` (emptied by :func:`clear_caches`). The entry
    holds the object, so its ``id`` cannot be reused by another object while the entry lives."""
    cached = cache.get(id(obj))
    if cached is not None and cached[0] is obj:
        return cached[1]
    value = build()
    cache[id(obj)] = (obj, value)
    return value


def clear_caches() -> None:
    """Forget the TrainJob plans and indexes of the previous run (:func:`jobsetctl.lint.run_lints` calls it)."""
    _PLANS.clear()
    _MEMO.clear()
    _STAGES.clear()
    _POD_COUNTS.clear()


def memo(ctx: AdmissionContext, name: str, build: Callable[[ClusterView], T]) -> T:
    """``build(cluster)`` once per cluster view and run: the lints that look across objects index the
    inputs once instead of scanning them again for every object (quadratic on large inputs)."""
    cluster = cluster_of(ctx)
    key = (name, id(cluster))
    cached = _MEMO.get(key)
    if cached is not None and cached[0] is cluster:
        value: T = cached[1]
        return value
    built = build(cluster)
    _MEMO[key] = (cluster, built)  # holding the view keeps its id from being reused
    return built


def plan_of(trainjob: Object, ctx: AdmissionContext) -> TrainJobPlan | None:
    """Expand a TrainJob against its runtime (memoised per object for the run).

    None without a runtime, and None when the TrainJob webhook (or JobSet admission of the JobSet it
    generates) rejects it: then nothing runs, and what a lint would say about running it is noise next
    to the error. Each Trainer lint would otherwise expand the same TrainJob again.
    """
    return per_object(_PLANS, trainjob, lambda: _make_plan(trainjob, ctx))


def _make_plan(trainjob: Object, ctx: AdmissionContext) -> TrainJobPlan | None:
    from dataclasses import replace

    from jobsetctl.diagnostics import Severity

    # The TrainJob webhook's steps A and B (runtime resolution, plugin checks), then what the controller
    # builds: within validate worked out once for the webhook, the consequences and the lints.
    from jobsetctl.trainer.webhook import runtime_checks
    from jobsetctl.trainer.webhook_expansion import build

    cluster = cluster_of(ctx)
    ctx = replace(ctx, cluster=cluster)
    findings, runtime = runtime_checks(trainjob, ctx, cluster)
    if runtime is None or any(f.effective_severity is Severity.ERROR for f in findings):
        return None
    built = build(trainjob, runtime, ctx)
    result = built.admission
    if result is None:
        return None  # no JobSet admission in this build
    if built.expansion.applied and not result.accepted:
        return None  # trainjob-jobset-rejected: the JobSet is never created
    jobset = result.obj if result.typed else None
    return TrainJobPlan(runtime, api.name(runtime), built.expansion, jobset)


def trainer_section(trainjob: Object) -> dict[str, Any] | None:
    value = api.spec(trainjob).get("trainer")
    return value if isinstance(value, dict) else None


def runtime_label(plan: TrainJobPlan) -> str:
    kind = plan.runtime.get("kind")
    return f"{kind if isinstance(kind, str) else 'runtime'} {go_quote(plan.runtime_name)}"


RUNTIME_REF_NAME: Final[Path] = ("spec", "runtimeRef", "name")


def labels_of(obj: Any) -> dict[str, Any]:
    return api.as_dict(api.metadata(obj).get("labels"))
