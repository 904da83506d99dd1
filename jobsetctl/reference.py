"""Checks across objects, run once over every admitted input (validate phase B).

Only ``ref-global-default`` is something the API server itself answers (the Priority admission plugin
refuses a second default class): the ``reference`` layer. Everything else here is what happens after
the objects are accepted, the ``consequence`` layer (issue #13): pods refused later, gangs the scheduler
never admits or fails, pods that wait for a group. ``validate --admission-only`` leaves those out.

What it checks (rule ids ``ref-*``):

* a pod template that names a scheduling group (1.36/1.37 ``spec.schedulingGroup.podGroupName``,
  1.35 ``spec.workloadRef``) whose PodGroup (Workload) is not among the inputs: a warning, the pods
  would wait at the scheduler's PreEnqueue until it exists (scheduling.md §1.3); a 1.35 ``podGroup``
  missing from an existing Workload is an error (the Workload is immutable, they would wait forever);
* a PodGroup's template reference (1.36 ``podGroupTemplateRef.workload``, 1.37 ``workloadRef``) and a
  CompositePodGroup's ``workloadRef``: the Workload missing is a warning, the template missing in it an
  error; 1.37 ``parentCompositePodGroupName`` not found: a warning;
* a gang whose ``minCount`` exceeds the pods that reference the group, counted statically over all
  inputs (JobSet: replicas × pods per child Job; Job: pods per Job, where pods per Job is
  ``min(parallelism, completions)`` with API defaults, the number that can exist at once): an error,
  the gang can never be admitted;
* priorities: an unknown ``priorityClassName`` on a pod template (the Priority admission plugin rejects
  the pods); pods of one PodGroup resolving to different priorities, or (1.37, and 1.36 with
  WorkloadAwarePreemption) to a priority other than the PodGroup's own: scheduling.md §1.8, the 1.37
  scheduler fails the group with ``SchedulerError`` "all pods in a single pod group should match the
  priority of the pod group" (an error on 1.37, a warning on 1.36);
* at most one PriorityClass with ``globalDefault: true`` (the plugin rejects the later ones);
* CompositePodGroup trees (1.37, scheduling.md §1.6): an ``all`` parent with a ``single`` child, more
  than four levels, cycles, and differing priorities within a tree.

Pod templates come from :data:`POD_TEMPLATE_SOURCES`. TrainJobs are not read directly: their pods
come from the JobSet the Trainer expands them into, so the Trainer module registers a source with
:func:`register_pod_template_source` that expands a TrainJob and yields that JobSet's templates with
paths pointing back into the TrainJob (the hook exists; the expansion is the Trainer's).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.kinds.interface import AdmissionContext, ClusterView
from jobsetctl.kube.field import Path, go_quote, path_string
from jobsetctl.kube.podspec import priority_class_name, scheduling_group_name, workload_reference
from jobsetctl.kube.priority import GROUP as PRIORITY_GROUP
from jobsetctl.kube.priority import KIND as PRIORITY_KIND
from jobsetctl.kube.priority import already_default_message, resolve_priority
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define

SCHEDULING = "scheduling.k8s.io"
E, W = Severity.ERROR, Severity.WARNING
_SPEC = "scheduling.md §1.3"

GROUP_MISSING = define(
    "ref-group-missing", Layer.CONSEQUENCE, W,
    "A pod template names a PodGroup (or 1.35 Workload) that is not among the inputs; its pods wait.", spec=_SPEC,
)
WORKLOAD_MISSING = define(
    "ref-workload-missing", Layer.CONSEQUENCE, W,
    "A PodGroup or CompositePodGroup refers to a Workload that is not among the inputs.", spec="scheduling.md §1.2",
)
TEMPLATE_MISSING = define(
    "ref-template-missing", Layer.CONSEQUENCE, E,
    "A reference names a template (or 1.35 pod group) that the referenced Workload does not have.",
    spec="scheduling.md §1.2",
)
PARENT_MISSING = define(
    "ref-parent-missing", Layer.CONSEQUENCE, W,
    "parentCompositePodGroupName names a CompositePodGroup that is not among the inputs.", spec="scheduling.md §1.6",
)
GANG_TOO_LARGE = define(
    "ref-gang-too-large", Layer.CONSEQUENCE, E,
    "A gang's minCount is larger than the number of pods that reference the group.", spec=_SPEC,
)
PRIORITY_CLASS = define(
    "ref-priority-class", Layer.CONSEQUENCE, E,
    "A pod template's priorityClassName names no PriorityClass; the Priority admission plugin rejects its pods.",
    spec="scheduling.md §3.1",
)
GROUP_PRIORITY = define(
    "ref-group-priority", Layer.CONSEQUENCE, E,
    "Pods of one PodGroup do not share one priority, or differ from the PodGroup's priority.",
    spec="scheduling.md §1.8",
)
GLOBAL_DEFAULT = define(
    "ref-global-default", Layer.REFERENCE, E, "More than one PriorityClass has globalDefault: true.",
    spec="scheduling.md §3.1",
)
COMPOSITE_TREE = define(
    "ref-composite-tree", Layer.CONSEQUENCE, E,
    "A CompositePodGroup tree has a cycle, is deeper than 4 levels, mixes disruption modes or priorities.",
    spec="scheduling.md §1.6",
)

MAX_TREE_DEPTH = 4

Admitted = list[tuple[ObjectRecord, dict[str, Any]]]


def _m(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _l(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: Any, default: int | None = None) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _meta(obj: dict[str, Any], ctx: AdmissionContext) -> tuple[str, str]:
    meta = _m(obj.get("metadata"))
    namespace = meta.get("namespace")
    name = meta.get("name")
    return (namespace if isinstance(namespace, str) and namespace else ctx.default_namespace,
            name if isinstance(name, str) else "")


# --- where pods come from ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PodTemplateUse:
    """A pod template among the inputs and how many pods it stands for."""

    record: ObjectRecord
    namespace: str
    pod_spec: dict[str, Any]
    #: Path of the pod spec inside the record's object.
    at: Path
    pods: int
    #: How the count was made, for messages: ``JobSet js: 3 × 2 pods``.
    origin: str


PodTemplateSource = Callable[[ObjectRecord, dict[str, Any], AdmissionContext], Iterator[PodTemplateUse]]


def pods_per_job(job_spec: Any) -> int:
    """Pods of one Job that can exist at once: ``min(parallelism, completions)`` with API defaults."""
    spec = _m(job_spec)
    parallelism = _int(spec.get("parallelism"), 1) or 0
    completions = _int(spec.get("completions"))
    return parallelism if completions is None else max(0, min(parallelism, completions))


def _job_templates(record: ObjectRecord, obj: dict[str, Any], ctx: AdmissionContext) -> Iterator[PodTemplateUse]:
    spec = _m(obj.get("spec"))
    pod_spec = _m(_m(spec.get("template")).get("spec"))
    namespace, name = _meta(obj, ctx)
    pods = pods_per_job(spec)
    yield PodTemplateUse(record, namespace, pod_spec, ("spec", "template", "spec"), pods, f"Job {name}: {pods} pods")


def _jobset_templates(record: ObjectRecord, obj: dict[str, Any], ctx: AdmissionContext) -> Iterator[PodTemplateUse]:
    namespace, name = _meta(obj, ctx)
    for index, raw in enumerate(_l(_m(obj.get("spec")).get("replicatedJobs"))):
        replicated = _m(raw)
        job_spec = _m(_m(replicated.get("template")).get("spec"))
        replicas = _int(replicated.get("replicas"), 1) or 0
        per_job = pods_per_job(job_spec)
        at: Path = ("spec", "replicatedJobs", index, "template", "spec", "template", "spec")
        origin = f"JobSet {name}/{replicated.get('name', index)}: {replicas} × {per_job} pods"
        yield PodTemplateUse(record, namespace, _m(_m(job_spec.get("template")).get("spec")), at,
                             replicas * per_job, origin)


#: (group, kind) → the function that lists an object's pod templates.
POD_TEMPLATE_SOURCES: dict[tuple[str, str], PodTemplateSource] = {
    ("batch", "Job"): _job_templates,
    ("jobset.x-k8s.io", "JobSet"): _jobset_templates,
}


def register_pod_template_source(group: str, kind: str, source: PodTemplateSource) -> None:
    """Let another kind (the Trainer's TrainJob) contribute pod templates to the reference checks."""
    POD_TEMPLATE_SOURCES[(group, kind)] = source


def pod_template_uses(admitted: Admitted, ctx: AdmissionContext) -> list[PodTemplateUse]:
    uses: list[PodTemplateUse] = []
    for record, obj in admitted:
        api_version = obj.get("apiVersion")
        group = api_version.partition("/")[0] if isinstance(api_version, str) and "/" in api_version else ""
        source = POD_TEMPLATE_SOURCES.get((group, str(obj.get("kind"))))
        if source is not None:
            uses.extend(source(record, obj, ctx))
    return uses


# --- the checks -------------------------------------------------------------------------------


@dataclass(slots=True)
class _Run:
    admitted: Admitted
    ctx: AdmissionContext
    cluster: ClusterView
    out: list[tuple[ObjectRecord, Finding]]

    def emit(self, record: ObjectRecord, finding: Finding) -> None:
        self.out.append((record, finding))

    def records_of(self, kind: str) -> list[tuple[ObjectRecord, dict[str, Any]]]:
        return [(r, o) for r, o in self.admitted
                if o.get("kind") == kind and str(o.get("apiVersion", "")).startswith(SCHEDULING + "/")]


class _EmptyCluster:
    def get(self, group: str, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        return None

    def list(self, group: str, kind: str, namespace: str | None = None) -> list[dict[str, Any]]:
        return []


def check_references(admitted: Admitted, ctx: AdmissionContext) -> Iterator[tuple[ObjectRecord, Finding]]:
    run = _Run(admitted, ctx, ctx.cluster if ctx.cluster is not None else _EmptyCluster(), [])
    uses = pod_template_uses(admitted, ctx)
    _global_default(run)
    _pod_priority_classes(run, uses)
    if ctx.version.minor <= 35:
        _groups_v1alpha1(run, uses)
    else:
        by_group = _pod_groups_by_name(run, uses)
        _group_templates(run)
        _gangs(run, by_group)
        _group_priorities(run, by_group)
        if ctx.version.minor >= 37:
            _composite_trees(run)
    yield from run.out


def _global_default(run: _Run) -> None:
    first: str | None = None
    for record, obj in run.admitted:
        if obj.get("kind") != "PriorityClass" or obj.get("globalDefault") is not True:
            continue
        name = _meta(obj, run.ctx)[1]
        if first is None:
            first = name
        else:
            run.emit(record, GLOBAL_DEFAULT.finding(already_default_message(first), path="globalDefault",
                                                    at=("globalDefault",)))


def _pod_priority_classes(run: _Run, uses: list[PodTemplateUse]) -> None:
    for use in uses:
        name = priority_class_name(use.pod_spec)
        if name is None:
            continue
        resolution = resolve_priority(name, run.cluster)
        if resolution.error is not None:
            at = (*use.at, "priorityClassName")
            who = f"{use.record.ref.kind} {go_quote(use.record.ref.name)}"
            run.emit(use.record, PRIORITY_CLASS.finding(
                f"{who} is accepted, but the Priority admission plugin refuses its pods: {resolution.error}",
                path=path_string(at), at=at, unresolved=(PRIORITY_GROUP, PRIORITY_KIND, name)))


def _groups_v1alpha1(run: _Run, uses: list[PodTemplateUse]) -> None:
    """1.35: pods name (Workload, podGroup, replica key); the gang is per replica key."""
    counts: dict[tuple[str, str, str, str], list[PodTemplateUse]] = defaultdict(list)
    for use in uses:
        ref = workload_reference(use.pod_spec)
        if ref is None:
            continue
        at: Path = (*use.at, "workloadRef")
        found = run.cluster.get(SCHEDULING, "Workload", use.namespace, ref.name)
        if found is None:
            run.emit(use.record, GROUP_MISSING.finding(
                f"Workload {go_quote(ref.name)} is not among the inputs: its pods would wait until it exists",
                path=path_string(at), at=at))
            continue
        groups = {_m(g).get("name"): _m(g) for g in _l(_m(found.get("spec")).get("podGroups"))}
        if ref.pod_group not in groups:
            run.emit(use.record, TEMPLATE_MISSING.finding(
                f"Workload {go_quote(ref.name)} has no pod group {go_quote(ref.pod_group)}: its pods would never be "
                "scheduled (the Workload's podGroups are immutable)", path=path_string((*at, "podGroup")),
                at=(*at, "podGroup")))
            continue
        counts[(use.namespace, ref.name, ref.pod_group, ref.replica_key)].append(use)
    for record, obj in run.records_of("Workload"):
        namespace, name = _meta(obj, run.ctx)
        for index, group in enumerate(_l(_m(obj.get("spec")).get("podGroups"))):
            min_count = _int(_m(_m(_m(group).get("policy")).get("gang")).get("minCount"))
            if min_count is None:
                continue
            count_at: Path = ("spec", "podGroups", index, "policy", "gang", "minCount")
            for (ns, workload_name, pod_group, key), members in sorted(counts.items()):
                if (ns, workload_name, pod_group) == (namespace, name, _m(group).get("name")):
                    label = f"pod group {go_quote(pod_group)}" + (f" replica {go_quote(key)}" if key else "")
                    _gang_finding(run, record, count_at, min_count, label, members)


def _gang_finding(run: _Run, record: ObjectRecord, at: Path, min_count: int, label: str,
                  members: list[PodTemplateUse]) -> None:
    total = sum(use.pods for use in members)
    if total == 0 or min_count <= total:
        return
    origins = "; ".join(use.origin for use in members)
    run.emit(record, GANG_TOO_LARGE.finding(
        f"gang minCount {min_count} is larger than the {total} pods that reference {label} ({origins}): "
        "the gang can never be admitted", path=path_string(at), at=at))


def _pod_groups_by_name(run: _Run, uses: list[PodTemplateUse]) -> dict[tuple[str, str], list[PodTemplateUse]]:
    by_group: dict[tuple[str, str], list[PodTemplateUse]] = defaultdict(list)
    for use in uses:
        name = scheduling_group_name(use.pod_spec)
        if name is None:
            continue
        by_group[(use.namespace, name)].append(use)
        if run.cluster.get(SCHEDULING, "PodGroup", use.namespace, name) is None:
            at = (*use.at, "schedulingGroup", "podGroupName")
            run.emit(use.record, GROUP_MISSING.finding(
                f"PodGroup {go_quote(name)} is not among the inputs: its pods would wait until it exists",
                path=path_string(at), at=at))
    return by_group


def _template_names(workload: dict[str, Any], composite: bool) -> set[str]:
    """Template names of one kind anywhere in a Workload (1.37 templates nest inside composites)."""
    names: set[str] = set()

    def visit(container: dict[str, Any]) -> None:
        for template in _l(container.get("podGroupTemplates")):
            if not composite:
                names.add(str(_m(template).get("name")))
        for template in _l(container.get("compositePodGroupTemplates")):
            if composite:
                names.add(str(_m(template).get("name")))
            visit(_m(template))

    visit(_m(workload.get("spec")))
    return names


def _group_templates(run: _Run) -> None:
    kinds = ("PodGroup", "CompositePodGroup") if run.ctx.version.minor >= 37 else ("PodGroup",)
    for kind in kinds:
        for record, obj in run.records_of(kind):
            namespace, _ = _meta(obj, run.ctx)
            spec = _m(obj.get("spec"))
            if run.ctx.version.minor == 36:
                ref = _m(_m(spec.get("podGroupTemplateRef")).get("workload"))
                base: Path = ("spec", "podGroupTemplateRef", "workload")
                workload_name, template_name = ref.get("workloadName"), ref.get("podGroupTemplateName")
                template_key = "podGroupTemplateName"
            else:
                ref = _m(spec.get("workloadRef"))
                base = ("spec", "workloadRef")
                workload_name, template_name = ref.get("workloadName"), ref.get("templateName")
                template_key = "templateName"
            if not isinstance(workload_name, str) or not workload_name:
                continue
            workload = run.cluster.get(SCHEDULING, "Workload", namespace, workload_name)
            if workload is None:
                at = (*base, "workloadName")
                run.emit(record, WORKLOAD_MISSING.finding(
                    f"Workload {go_quote(workload_name)} is not among the inputs", path=path_string(at), at=at))
                continue
            composite = kind == "CompositePodGroup"
            if isinstance(template_name, str) and template_name not in _template_names(workload, composite):
                at = (*base, template_key)
                what = "compositePodGroupTemplate" if composite else "podGroupTemplate"
                run.emit(record, TEMPLATE_MISSING.finding(
                    f"Workload {go_quote(workload_name)} has no {what} {go_quote(template_name)}",
                    path=path_string(at), at=at))


def _gangs(run: _Run, by_group: dict[tuple[str, str], list[PodTemplateUse]]) -> None:
    for record, obj in run.records_of("PodGroup"):
        min_count = _int(_m(_m(_m(obj.get("spec")).get("schedulingPolicy")).get("gang")).get("minCount"))
        members = by_group.get(_meta(obj, run.ctx), [])
        if min_count is not None and members:
            at: Path = ("spec", "schedulingPolicy", "gang", "minCount")
            _gang_finding(run, record, at, min_count, f"PodGroup {go_quote(_meta(obj, run.ctx)[1])}", members)


def group_priority(obj: dict[str, Any], cluster: ClusterView) -> int | None:
    """A PodGroup's (or CompositePodGroup's) priority as admission leaves it; None if unresolvable."""
    spec = _m(obj.get("spec"))
    explicit = _int(spec.get("priority"))
    if explicit is not None:
        return explicit
    name = spec.get("priorityClassName")
    resolution = resolve_priority(name if isinstance(name, str) else None, cluster)
    return None if resolution.error is not None else resolution.priority


def _group_priorities(run: _Run, by_group: dict[tuple[str, str], list[PodTemplateUse]]) -> None:
    minor = run.ctx.version.minor
    severity = Severity.ERROR if minor >= 37 else Severity.WARNING
    # 1.36 reads the PodGroup's own priority only in workload-aware preemption (scheduling.md §1.8).
    compare_group = minor >= 37 or run.ctx.gates.enabled("WorkloadAwarePreemption")
    for (namespace, name), members in sorted(by_group.items(), key=lambda item: item[0]):
        resolved = []
        for use in members:
            pcn = priority_class_name(use.pod_spec)
            resolution = resolve_priority(pcn, run.cluster)
            if resolution.error is None:
                resolved.append((use, resolution.priority, pcn))
        if not resolved:
            continue
        group = run.cluster.get(SCHEDULING, "PodGroup", namespace, name)
        expected = group_priority(group, run.cluster) if group is not None and compare_group else None
        reference = expected if expected is not None else resolved[0][1]
        whose = (f"PodGroup {go_quote(name)} has priority {expected}" if expected is not None
                 else f"other pods of PodGroup {go_quote(name)} have priority {reference}")
        for use, priority, pcn in resolved:
            if priority == reference:
                continue
            at = (*use.at, "priorityClassName") if pcn else (*use.at, "schedulingGroup", "podGroupName")
            run.emit(use.record, GROUP_PRIORITY.finding(
                f"all pods in a single pod group should match the priority of the pod group: these pods get "
                f"priority {priority} but {whose}", path=path_string(at), at=at, severity=severity))


# --- CompositePodGroup trees (1.37) -----------------------------------------------------------


def _disruption_all(obj: dict[str, Any]) -> bool:
    return _m(_m(obj.get("spec")).get("disruptionMode")).get("all") is not None


def _composite_trees(run: _Run) -> None:
    nodes: dict[tuple[str, str, str], tuple[ObjectRecord, dict[str, Any]]] = {}
    for kind in ("CompositePodGroup", "PodGroup"):
        for record, obj in run.records_of(kind):
            namespace, name = _meta(obj, run.ctx)
            nodes[(kind, namespace, name)] = (record, obj)
    for (kind, namespace, name), (record, obj) in sorted(nodes.items()):
        parent_name = _m(obj.get("spec")).get("parentCompositePodGroupName")
        if not isinstance(parent_name, str) or not parent_name:
            continue
        at: Path = ("spec", "parentCompositePodGroupName")
        parent = run.cluster.get(SCHEDULING, "CompositePodGroup", namespace, parent_name)
        if parent is None:
            run.emit(record, PARENT_MISSING.finding(
                f"CompositePodGroup {go_quote(parent_name)} is not among the inputs", path=path_string(at), at=at))
            continue
        chain = _ancestors(run.cluster, namespace, parent_name, name if kind == "CompositePodGroup" else None)
        if chain is None:
            run.emit(record, COMPOSITE_TREE.finding(
                f"the parentCompositePodGroupName chain of {kind} {go_quote(name)} is a cycle", path=path_string(at), at=at))
            continue
        depth = len(chain) + 1
        if depth > MAX_TREE_DEPTH:
            run.emit(record, COMPOSITE_TREE.finding(
                f"{kind} {go_quote(name)} is at level {depth} of its CompositePodGroup tree; the maximum tree depth "
                f"is {MAX_TREE_DEPTH}", path=path_string(at), at=at))
        if _disruption_all(parent) and not _disruption_all(obj):
            mode_at: Path = ("spec", "disruptionMode")
            run.emit(record, COMPOSITE_TREE.finding(
                f"parent CompositePodGroup {go_quote(parent_name)} has disruptionMode all, so its children must use "
                "all too (alpha rule)", path=path_string(mode_at), at=mode_at))
        own, parents = group_priority(obj, run.cluster), group_priority(parent, run.cluster)
        if own is not None and parents is not None and own != parents:
            run.emit(record, COMPOSITE_TREE.finding(
                f"{kind} {go_quote(name)} has priority {own} but its parent {go_quote(parent_name)} has {parents}: "
                "all groups of a CompositePodGroup tree must share one priority (alpha rule)",
                path=path_string(at), at=at))


def _ancestors(cluster: ClusterView, namespace: str, parent: str, self_name: str | None) -> list[str] | None:
    """Names from the parent to the root; None when the chain loops (or comes back to ``self_name``)."""
    chain: list[str] = []
    current: str | None = parent
    while current:
        if current in chain or current == self_name:
            return None
        chain.append(current)
        node = cluster.get(SCHEDULING, "CompositePodGroup", namespace, current)
        if node is None:
            break
        following = _m(node.get("spec")).get("parentCompositePodGroupName")
        current = following if isinstance(following, str) else None
    return chain
