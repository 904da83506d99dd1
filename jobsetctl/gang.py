"""``render --gang``: the Workload, PodGroups and CompositePodGroups JobSet users write by hand today.

JobSet has no Workload/PodGroup code (scheduling.md §1.9: the KEP-6089 JobSet integration is only an
example); users who want gang scheduling write the objects themselves, as the upstream
``workload-aware-scheduling`` examples do. These pure functions generate them, *before* admission, as
if the user had written them: a Workload with one template per group, the standalone groups, and the
JobSet's pod templates wired to their group. ``render`` then validates them like any input.

Modes (``--gang``):

* ``jobset``: one gang for the whole JobSet;
* ``replicatedjob``: one gang per replicated job;
* ``job``: one gang per child Job. A JobSet's pod template is shared by all its Jobs, so the pods
  cannot name a per-Job group themselves; only Kubernetes 1.37 can do it, by delegation (KEP-5547
  management mode ``managePodGroupOnly``, KEP-6089): the Job template carries
  ``scheduling.k8s.io/group-template-name`` and the parent-CompositePodGroup annotation, and the Job
  controller creates one PodGroup per Job from that template of the Workload whose ``controllerRef``
  is the JobSet (scheduling.md §1.5, §1.9). The Job controller names that PodGroup after the Workload
  and the template (``computePodGroupName``, job_scheduling_manager.go), so the replicas' Jobs of one
  replicated job would collide: only the first would get its PodGroup, the others would never create
  pods. A generator does not knowingly emit what never runs: a replicated job with more than one
  replica is a usage error in this mode (:func:`_check_one_job_per_template`), naming the ways that work
  (``--gang replicatedjob``, or ``replicas: 1``).

``minCount`` counts the pods that exist at once: ``min(parallelism, completions)`` per Job (API
defaults: parallelism 1, completions = parallelism), times the Jobs in the gang.

Shapes per release (scheduling.md §1.2; field names checked against the kubernetes-validate schemas):

* 1.35 ``scheduling.k8s.io/v1alpha1``: a Workload with ``podGroups[].policy``; pods name their group
  with ``spec.workloadRef {name, podGroup}``. No topology, priority or disruption mode.
* 1.36 ``v1alpha2``: Workload ``podGroupTemplates`` + standalone PodGroups with
  ``podGroupTemplateRef.workload``; ``disruptionMode`` is the string ``Pod``/``PodGroup``; one topology
  key; pods use ``spec.schedulingGroup.podGroupName``.
* 1.37 ``v1beta1`` Workload/PodGroup (``workloadRef {workloadName, templateName}``), ``v1alpha3``
  CompositePodGroup; ``disruptionMode`` is the union ``{single: {}}``/``{all: {}}``. Two to four topology
  keys make a CompositePodGroup tree, coarse to fine (scheduling.md §1.6): a chain of
  CompositePodGroups for all keys but the last, whose last link parents the PodGroups, which get the
  last key. ``job`` mode always has a CompositePodGroup: the parent the delegation annotation names.

Names (deterministic; ``<js>`` is the JobSet's name):

=========================  ==============================  ==========================================
object                     object name                     template name in the Workload
=========================  ==============================  ==========================================
Workload                   ``<js>``                        —
PodGroup, ``jobset``       ``<js>``                        ``jobset``
PodGroup, ``replicatedjob``  ``<js>-<rjob>``               ``<rjob>``
PodGroup, ``job``          by the Job controller           ``<rjob>``
CompositePodGroup (root)   ``<js>``                        ``composite``
CompositePodGroup (level i)  ``<js>-composite-<i>``        ``composite-<i>``
=========================  ==============================  ==========================================

A template name that would clash with a replicated job's name gets ``-x`` appended until it does not.

A CompositePodGroup gangs its children (``minGroupCount`` = number of children) when every replicated job
starts at once; with ``dependsOn`` or the ``InOrder`` startup policy the later children do not exist
at first, so a gang over them could never be admitted: the CompositePodGroup is ``basic`` then, and
``--gang jobset`` is refused. Priority: ``--priority-class`` goes on every group and on the pod templates
without one; without it, a group takes the priority class its pods share. Kubernetes 1.37 requires a
group and its pods to agree and one priority across a CompositePodGroup tree (scheduling.md §1.6,
§1.8), so disagreement is a usage error there.

Exclusive placement (``alpha.jobset.sigs.k8s.io/exclusive-topology``) does not mix with these gangs: a
Job's followers are created only once its leader is scheduled (jobset.md §3.6), so before that the
group has one pod per Job, fewer than the generated ``minCount``, and never starts (scheduling.md §1.3).
The objects are still generated (they are what the user asked for); :func:`deadlock_warning` is the
one-line warning ``render`` prints for such a plan.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from jobsetctl.jobset import api as jsapi
from jobsetctl.jobset.render import leader_first_topology, pods_before_leader
from jobsetctl.kube.podspec import priority_class_name, scheduling_group_name, workload_reference
from jobsetctl.kube.versions import KubeVersion
from jobsetctl.reference import pods_per_job
from jobsetctl.status import UsageError

GROUP = "scheduling.k8s.io"
#: KEP-6089 / KEP-5547 delegation annotations on the Job template (scheduling.md §1.5, U3: we emit
#: the KEP-6089 spelling of the parent annotation).
GROUP_TEMPLATE_ANNOTATION = "scheduling.k8s.io/group-template-name"
PARENT_COMPOSITE_ANNOTATION = "scheduling.k8s.io/parent-composite-podgroup"
#: Per-list and tree-depth limits of the Workload API (scheduling.md §1.2).
MAX_TEMPLATES = 8
MAX_TREE_DEPTH = 4

JOBSET_TEMPLATE = "jobset"
COMPOSITE_TEMPLATE = "composite"


class GangMode(StrEnum):
    NONE = "none"
    JOBSET = "jobset"
    REPLICATED_JOB = "replicatedjob"
    JOB = "job"


#: ``--disruption-mode`` spellings: the 1.37 union members and the 1.36 enum values.
DISRUPTION_SPELLINGS = {"single": "single", "all": "all", "pod": "single", "podgroup": "all"}
#: The 1.36 string enum for each canonical mode.
DISRUPTION_V1ALPHA2 = {"single": "Pod", "all": "PodGroup"}


@dataclass(frozen=True, slots=True)
class GangOptions:
    mode: GangMode = GangMode.NONE
    #: Node label keys, coarse to fine.
    topology: tuple[str, ...] = ()
    priority_class: str | None = None
    #: ``single`` or ``all`` (canonical), or None.
    disruption: str | None = None

    @property
    def enabled(self) -> bool:
        return self.mode is not GangMode.NONE


def parse_gang_options(mode: str | None, topology: str | None, priority_class: str | None,
                       disruption: str | None) -> GangOptions:
    """Command-line strings to :class:`GangOptions`; spelling problems are usage errors."""
    try:
        gang_mode = GangMode((mode or "none").strip().lower())
    except ValueError:
        raise UsageError(f"--gang {mode}: choose none, jobset, replicatedjob or job") from None
    keys = tuple(part.strip() for part in (topology or "").split(",") if part.strip())
    if len(set(keys)) != len(keys):
        raise UsageError(f"--topology {topology}: a key appears twice")
    canonical: str | None = None
    if disruption is not None:
        canonical = DISRUPTION_SPELLINGS.get(disruption.strip().lower())
        if canonical is None:
            raise UsageError(f"--disruption-mode {disruption}: choose single or all (also spelled Pod or PodGroup)")
    options = GangOptions(gang_mode, keys, (priority_class or "").strip() or None, canonical)
    if not options.enabled and (keys or options.priority_class or canonical):
        raise UsageError("--topology, --priority-class and --disruption-mode shape the objects --gang generates: "
                         "give --gang jobset, replicatedjob or job")
    return options


def check_options(options: GangOptions, version: KubeVersion) -> None:
    """What a release cannot express at all: one-line usage errors, before any input is read."""
    if not options.enabled:
        return
    minor = version.minor
    if options.mode is GangMode.JOB and minor < 37:
        raise UsageError(
            f"--gang job needs Kubernetes 1.37: a JobSet's pod template is shared by all its Jobs, so only the "
            f"1.37 Job controller can give each Job its own PodGroup (by delegation, KEP-5547/KEP-6089); "
            f"{version.value} can gang a JobSet or each replicated job (--gang jobset|replicatedjob)")
    if options.topology and minor < 36:
        raise UsageError("--topology needs Kubernetes 1.36 or later: 1.35 pod groups (scheduling.k8s.io/v1alpha1) "
                         "have no topology constraints")
    if len(options.topology) > 1 and minor < 37:
        raise UsageError(f"--topology with {len(options.topology)} keys needs Kubernetes 1.37 (CompositePodGroup "
                         f"trees); {version.value} pod groups take one topology key")
    if len(options.topology) > MAX_TREE_DEPTH:
        raise UsageError(f"--topology with {len(options.topology)} keys: a pod-group tree is at most "
                         f"{MAX_TREE_DEPTH} levels deep")
    if options.disruption and minor < 36:
        raise UsageError("--disruption-mode needs Kubernetes 1.36 or later: 1.35 pod groups (scheduling.k8s.io/"
                         "v1alpha1) have no disruption mode")
    if options.priority_class and minor < 36:
        raise UsageError("--priority-class needs Kubernetes 1.36 or later: 1.35 pod groups (scheduling.k8s.io/"
                         "v1alpha1) carry no priority; set priorityClassName in the pod templates instead")


def needed_gates(options: GangOptions, version: KubeVersion) -> list[str]:
    """Gates the generated objects need (those a release lacks are ignored by ``with_enabled``)."""
    if not options.enabled:
        return []
    gates = ["GenericWorkload", "GangScheduling"]
    if options.topology:
        gates.append("TopologyAwareWorkloadScheduling")
    if version.minor == 36 and (options.disruption or options.priority_class):
        gates.append("WorkloadAwarePreemption")
    if uses_composite(options):
        gates.append("CompositePodGroup")
    if options.mode is GangMode.JOB:
        gates.append("WorkloadWithJob")
    return gates


def uses_composite(options: GangOptions) -> bool:
    return options.mode is GangMode.JOB or len(options.topology) > 1


# --- the plan: version-independent -----------------------------------------------------------------


@dataclass(slots=True)
class LeafGroup:
    """A PodGroup template (and, except in ``job`` mode, its PodGroup object)."""

    template: str
    #: The PodGroup object's name; None when the Job controller creates one per Job.
    object_name: str | None
    min_count: int
    topology: str | None
    priority_class: str | None
    #: The replicated jobs whose pods join the group.
    rjobs: list[str] = field(default_factory=list)
    #: When exclusive placement holds followers back until their Job's leader is scheduled: the pods of
    #: the group (of one Job in ``job`` mode) that can exist before any is scheduled, and the topology key.
    up_front: int | None = None
    exclusive: str | None = None


@dataclass(slots=True)
class CompositeGroup:
    template: str
    object_name: str
    topology: str | None
    #: ``gang.minGroupCount``; None for ``basic``.
    min_group_count: int | None
    priority_class: str | None


@dataclass(slots=True)
class GangPlan:
    jobset_name: str
    #: The JobSet's own ``metadata.namespace`` (None: the default namespace applies to all alike).
    namespace: str | None
    #: A chain, root first; the last parents the leaves.
    composites: list[CompositeGroup]
    leaves: list[LeafGroup]
    version: KubeVersion = KubeVersion.V1_37


@dataclass(slots=True)
class Generated:
    """The result for the inputs: ``objects`` in input order, each JobSet replaced by its wired copy and
    preceded by its generated objects; ``generated`` those alone; ``plans`` per JobSet."""

    objects: list[dict[str, Any]]
    generated: list[dict[str, Any]]
    plans: list[GangPlan]


def _is_jobset(obj: dict[str, Any]) -> bool:
    return obj.get("kind") == jsapi.KIND and obj.get("apiVersion") == jsapi.API_VERSION


def _starts_together(js: dict[str, Any]) -> bool:
    if jsapi.startup_order(js) == jsapi.StartupPolicyOrder.IN_ORDER:
        return False
    return not any(jsapi.depends_on(rjob) for rjob in jsapi.replicated_jobs(js))


def _unique(name: str, taken: set[str]) -> str:
    while name in taken:
        name += "-x"
    taken.add(name)
    return name


def _shared_priority(js_name: str, rjobs: list[dict[str, Any]], options: GangOptions, version: KubeVersion,
                     what: str) -> str | None:
    """The priority class of a group of replicated jobs' pods (see the module docstring)."""
    if version.minor < 36:
        return None
    classes = {rjob_name: priority_class_name(jsapi.pod_spec(rjob))
               for rjob in rjobs if (rjob_name := jsapi.rjob_name(rjob))}
    if options.priority_class:
        if version.minor >= 37:
            for rjob_name, own in classes.items():
                if own and own != options.priority_class:
                    raise UsageError(
                        f"JobSet {js_name}: replicated job {rjob_name} sets priorityClassName {own} but --priority-class "
                        f"is {options.priority_class}; Kubernetes 1.37 requires a pod group and its pods to share one "
                        f"priority")
        return options.priority_class
    distinct = sorted({c or "" for c in classes.values()})
    if len(distinct) == 1:
        return distinct[0] or None
    if version.minor >= 37:
        listed = ", ".join(f"{n}: {c or '(none)'}" for n, c in classes.items())
        raise UsageError(f"JobSet {js_name}: {what} mixes priority classes ({listed}); Kubernetes 1.37 requires one "
                         f"priority per pod group and per pod-group tree: give --priority-class")
    return None


def plan_for(js: dict[str, Any], options: GangOptions, version: KubeVersion) -> GangPlan:
    """The groups for one JobSet (as written, before defaults). Raises :class:`UsageError`."""
    name = jsapi.name(js)
    md = js.get("metadata")
    namespace = md.get("namespace") if isinstance(md, dict) and isinstance(md.get("namespace"), str) else None
    rjobs = jsapi.replicated_jobs(js)
    _check_unwired(name, rjobs)
    counted = [(rjob, jsapi.replicas(rjob), pods_per_job(jsapi.job_spec(rjob))) for rjob in rjobs]
    grouped = [(rjob, replicas, per_job) for rjob, replicas, per_job in counted if replicas > 0 and per_job > 0]
    if options.mode is GangMode.JOB:
        _check_one_job_per_template(name, [(rjob, replicas) for rjob, replicas, _ in grouped])
    keys = list(options.topology)
    leaf_key = keys[-1] if keys else None
    taken = {jsapi.rjob_name(rjob) for rjob in rjobs}
    leaves: list[LeafGroup] = []
    if options.mode is GangMode.JOBSET:
        if not _starts_together(js):
            raise UsageError(f"JobSet {name} starts its replicated jobs one after another (dependsOn or InOrder): "
                             f"one gang over all its pods could never be admitted; use --gang replicatedjob")
        total = sum(replicas * per_job for _, replicas, per_job in grouped)
        if total == 0:
            raise UsageError(f"JobSet {name} has no pods to gang (replicas x min(parallelism, completions) is 0)")
        priority = _shared_priority(name, [r for r, _, _ in grouped], options, version, "its replicated jobs")
        leaves.append(_with_leaders(LeafGroup(_unique(JOBSET_TEMPLATE, taken), name, total, leaf_key, priority,
                                              [jsapi.rjob_name(r) for r, _, _ in grouped]), js, grouped, False))
    else:
        if len(grouped) > MAX_TEMPLATES:
            raise UsageError(f"JobSet {name} has {len(grouped)} replicated jobs with pods; a Workload holds at most "
                             f"{MAX_TEMPLATES} pod group templates")
        per_job_mode = options.mode is GangMode.JOB
        for rjob, replicas, per_job in grouped:
            rjob_name = jsapi.rjob_name(rjob)
            priority = _shared_priority(name, [rjob], options, version, f"replicated job {rjob_name}")
            leaves.append(_with_leaders(LeafGroup(
                rjob_name, None if per_job_mode else f"{name}-{rjob_name}",
                per_job if per_job_mode else replicas * per_job, leaf_key, priority, [rjob_name]),
                js, [(rjob, replicas, per_job)], per_job_mode))
        if not leaves:
            raise UsageError(f"JobSet {name} has no pods to gang (replicas x min(parallelism, completions) is 0)")
    composites: list[CompositeGroup] = []
    if uses_composite(options):
        composite_keys: list[str | None] = list(keys[:-1]) or [None]
        if options.mode is GangMode.JOB:
            children_of_last = sum(replicas for _, replicas, _ in grouped)
        else:
            children_of_last = len(leaves)
        together = _starts_together(js)
        priorities = sorted({leaf.priority_class or "" for leaf in leaves})
        if len(priorities) > 1:
            _shared_priority(name, [r for r, _, _ in grouped], options, version, "the pod-group tree")
        tree_priority = priorities[0] or None if len(priorities) == 1 else None
        for level, key in enumerate(composite_keys):
            last = level == len(composite_keys) - 1
            children = children_of_last if last else 1
            composites.append(CompositeGroup(
                _unique(COMPOSITE_TEMPLATE if level == 0 else f"{COMPOSITE_TEMPLATE}-{level}", taken),
                name if level == 0 else f"{name}-{COMPOSITE_TEMPLATE}-{level}",
                key, children if together else None, tree_priority))
    return GangPlan(name, namespace, composites, leaves, version)


def _with_leaders(leaf: LeafGroup, js: dict[str, Any], members: list[tuple[dict[str, Any], int, int]],
                  per_job_mode: bool) -> LeafGroup:
    """Fill in ``up_front`` when exclusive placement holds back followers of the group's pods: until a
    Job's leader (completion index 0) is scheduled, the Job has that one pod (jobset.md §3.6)."""
    up_front = 0
    for rjob, replicas, per_job in members:
        before = pods_before_leader(js, rjob, per_job)
        if before < per_job:
            leaf.exclusive = leaf.exclusive or leader_first_topology(js, rjob)
        up_front += before if per_job_mode else replicas * before
    if leaf.exclusive is not None:
        leaf.up_front = up_front
    return leaf


def deadlock_warning(plan: GangPlan) -> str | None:
    """One line for stderr when exclusive placement keeps a generated gang from ever starting, else None.

    The pod webhooks create a Job's followers only once its leader is scheduled (jobset.md §3.6), and a
    gang schedules none of its pods before ``minCount`` exist (scheduling.md §1.3); the generated
    ``minCount`` counts the followers, so the leaders wait for them forever. ``validate`` reports the
    same on hand-written groups (``gang-exclusive-placement-deadlock``).
    """
    stuck = [leaf for leaf in plan.leaves if leaf.up_front is not None and leaf.up_front < leaf.min_count]
    if not stuck:
        return None
    def group(leaf: LeafGroup) -> str:
        if plan.version.minor <= 35:
            return f"pod group {leaf.template} of Workload {plan.jobset_name}"
        if leaf.object_name is None:
            return f"each Job's PodGroup from template {leaf.template}"
        return f"PodGroup {leaf.object_name}"

    groups = "; ".join(f"{group(leaf)} needs minCount {leaf.min_count} but only {leaf.up_front} "
                       f"pod{'s' * (leaf.up_front != 1)} can exist before a leader is scheduled" for leaf in stuck)
    return (f"warning: JobSet {plan.jobset_name} uses exclusive placement ({jsapi.EXCLUSIVE_TOPOLOGY_KEY}: "
            f"{stuck[0].exclusive}), whose followers are created only once their Job's leader is scheduled: "
            f"{groups}, so none of its pods is ever scheduled (gang-exclusive-placement-deadlock); drop the annotation"
            + (" and place the gang with --topology instead" if plan.version.minor >= 36 else ""))


def _check_one_job_per_template(js_name: str, rjobs: list[tuple[dict[str, Any], int]]) -> None:
    """``--gang job``: every replicated job must make one Job. The Job controller names the PodGroup it creates
    for a delegated Job after the Workload and the template only (``computePodGroupName(workloadName,
    templateName)``, pkg/controller/job/job_scheduling_manager.go), so a second Job of the same template asks
    for the same PodGroup: only the first Job gets one, the others never create pods. ``rjobs``: the
    replicated jobs that get a group, with their replicas."""
    for rjob, replicas in rjobs:
        if replicas > 1:
            rjob_name = jsapi.rjob_name(rjob)
            raise UsageError(
                f"--gang job: JobSet {js_name}, replicated job {rjob_name} has {replicas} replicas, and the Job "
                f"controller names each Job's PodGroup after the Workload and the template alone "
                f"(computePodGroupName, KEP-5547), so its {replicas} Jobs would claim one PodGroup: only the first "
                f"would ever create pods; gang each replicated job with --gang replicatedjob, or give {rjob_name} "
                f"replicas: 1")


def _check_unwired(js_name: str, rjobs: list[dict[str, Any]]) -> None:
    for rjob in rjobs:
        spec = jsapi.pod_spec(rjob)
        annotations = jsapi.as_dict(jsapi.as_dict(jsapi.job_template(rjob).get("metadata")).get("annotations"))
        if (scheduling_group_name(spec) is not None or workload_reference(spec) is not None
                or GROUP_TEMPLATE_ANNOTATION in annotations):
            raise UsageError(f"JobSet {js_name}: replicated job {jsapi.rjob_name(rjob)} already names its pod group; "
                             f"--gang generates the groups: drop one or the other")


# --- objects per release ----------------------------------------------------------------------------


def api_versions(version: KubeVersion) -> tuple[str, str | None, str | None]:
    """(Workload, PodGroup, CompositePodGroup) apiVersions a release serves for the generated objects."""
    if version.minor <= 35:
        return f"{GROUP}/v1alpha1", None, None
    if version.minor == 36:
        return f"{GROUP}/v1alpha2", f"{GROUP}/v1alpha2", None
    return f"{GROUP}/v1beta1", f"{GROUP}/v1beta1", f"{GROUP}/v1alpha3"


def _metadata(name: str, namespace: str | None) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name}
    if namespace is not None:
        md["namespace"] = namespace
    return md


def _disruption(mode: str | None, version: KubeVersion) -> Any:
    if mode is None:
        return None
    return DISRUPTION_V1ALPHA2[mode] if version.minor == 36 else {mode: {}}


def _group_fields(policy: dict[str, Any], topology: str | None, disruption: Any,
                  priority_class: str | None) -> dict[str, Any]:
    """schedulingPolicy, schedulingConstraints, disruptionMode, priorityClassName (Go field order)."""
    out: dict[str, Any] = {"schedulingPolicy": policy}
    if topology is not None:
        out["schedulingConstraints"] = {"topology": [{"key": topology}]}
    if disruption is not None:
        out["disruptionMode"] = copy.deepcopy(disruption)
    if priority_class is not None:
        out["priorityClassName"] = priority_class
    return out


def _leaf_policy(leaf: LeafGroup) -> dict[str, Any]:
    return {"gang": {"minCount": leaf.min_count}}


def _composite_policy(group: CompositeGroup) -> dict[str, Any]:
    return {"basic": {}} if group.min_group_count is None else {"gang": {"minGroupCount": group.min_group_count}}


def build_objects(plan: GangPlan, options: GangOptions, version: KubeVersion) -> list[dict[str, Any]]:
    """Workload, then CompositePodGroups root first, then PodGroups: the order they must be created in."""
    workload_api, group_api, composite_api = api_versions(version)
    disruption = _disruption(options.disruption, version)
    controller_ref = {"apiGroup": jsapi.GROUP, "kind": jsapi.KIND, "name": plan.jobset_name}
    if version.minor <= 35:
        spec: dict[str, Any] = {"controllerRef": controller_ref, "podGroups": [
            {"name": leaf.template, "policy": _leaf_policy(leaf)} for leaf in plan.leaves]}
        return [{"apiVersion": workload_api, "kind": "Workload",
                 "metadata": _metadata(plan.jobset_name, plan.namespace), "spec": spec}]
    templates = [{"name": leaf.template, **_group_fields(_leaf_policy(leaf), leaf.topology, disruption,
                                                          leaf.priority_class)} for leaf in plan.leaves]
    spec = {"controllerRef": controller_ref}
    if plan.composites:
        nested: dict[str, Any] = {"podGroupTemplates": templates}
        for group in reversed(plan.composites):
            nested = {"compositePodGroupTemplates": [{
                "name": group.template,
                **_group_fields(_composite_policy(group), group.topology, disruption, group.priority_class),
                **nested}]}
        spec.update(nested)
    else:
        spec["podGroupTemplates"] = templates
    objects: list[dict[str, Any]] = [{"apiVersion": workload_api, "kind": "Workload",
                                      "metadata": _metadata(plan.jobset_name, plan.namespace), "spec": spec}]
    parent: str | None = None
    for group in plan.composites:
        cpg_spec: dict[str, Any] = {"workloadRef": {"workloadName": plan.jobset_name, "templateName": group.template}}
        if parent is not None:
            cpg_spec["parentCompositePodGroupName"] = parent
        cpg_spec.update(_group_fields(_composite_policy(group), group.topology, disruption, group.priority_class))
        objects.append({"apiVersion": composite_api, "kind": "CompositePodGroup",
                        "metadata": _metadata(group.object_name, plan.namespace), "spec": cpg_spec})
        parent = group.object_name
    for leaf in plan.leaves:
        if leaf.object_name is None:
            continue  # job mode: the Job controller creates one per Job
        pg_spec: dict[str, Any]
        if version.minor == 36:
            pg_spec = {"podGroupTemplateRef": {"workload": {"workloadName": plan.jobset_name,
                                                            "podGroupTemplateName": leaf.template}}}
        else:
            pg_spec = {"workloadRef": {"workloadName": plan.jobset_name, "templateName": leaf.template}}
            if parent is not None:
                pg_spec["parentCompositePodGroupName"] = parent
        pg_spec.update(_group_fields(_leaf_policy(leaf), leaf.topology, disruption, leaf.priority_class))
        objects.append({"apiVersion": group_api, "kind": "PodGroup",
                        "metadata": _metadata(leaf.object_name, plan.namespace), "spec": pg_spec})
    return objects


def wire_jobset(js: dict[str, Any], plan: GangPlan, options: GangOptions, version: KubeVersion) -> dict[str, Any]:
    """A copy of ``js`` whose pod templates (or, in ``job`` mode, Job templates) name their group."""
    wired = copy.deepcopy(js)
    leaf_of = {rjob_name: leaf for leaf in plan.leaves for rjob_name in leaf.rjobs}
    for rjob in jsapi.replicated_jobs(wired):
        leaf = leaf_of.get(jsapi.rjob_name(rjob))
        if leaf is None:
            continue
        pod_spec = _ensure(_ensure(_ensure(_ensure(rjob, "template"), "spec"), "template"), "spec")
        if options.priority_class and not pod_spec.get("priorityClassName"):
            pod_spec["priorityClassName"] = options.priority_class
        if options.mode is GangMode.JOB:
            annotations = _ensure(_ensure_first(_ensure(rjob, "template"), "metadata"), "annotations")
            annotations[GROUP_TEMPLATE_ANNOTATION] = leaf.template
            annotations[PARENT_COMPOSITE_ANNOTATION] = plan.composites[-1].object_name
        elif version.minor <= 35:
            pod_spec["workloadRef"] = {"name": plan.jobset_name, "podGroup": leaf.template}
        else:
            pod_spec["schedulingGroup"] = {"podGroupName": leaf.object_name}
    return wired


def _ensure(holder: dict[str, Any], key: str) -> dict[str, Any]:
    value = holder.get(key)
    if not isinstance(value, dict):
        value = {}
        holder[key] = value
    return value


def _ensure_first(holder: dict[str, Any], key: str) -> dict[str, Any]:
    """``_ensure``, placing a new entry first (``metadata`` before ``spec``, as people write templates)."""
    if isinstance(holder.get(key), dict):
        return _ensure(holder, key)
    rest = list(holder.items())
    holder.clear()
    holder[key] = {}
    holder.update(rest)
    value: dict[str, Any] = holder[key]
    return value


def generate(objects: list[dict[str, Any]], options: GangOptions, version: KubeVersion) -> Generated:
    """Apply ``options`` to every JobSet among ``objects`` (see :class:`Generated`). Pure: nothing is modified."""
    check_options(options, version)
    out: list[dict[str, Any]] = []
    generated: list[dict[str, Any]] = []
    plans: list[GangPlan] = []
    for obj in objects:
        if not options.enabled or not _is_jobset(obj):
            out.append(obj)
            continue
        plan = plan_for(obj, options, version)
        made = build_objects(plan, options, version)
        plans.append(plan)
        generated.extend(made)
        out.extend(made)
        out.append(wire_jobset(obj, plan, options, version))
    if options.enabled and not plans:
        raise UsageError(f"--gang {options.mode.value}: no JobSet among the inputs (TrainJobs get their JobSet from "
                         f"the Trainer controller; render them without --gang)")
    return Generated(out, generated, plans)


def describe(plan: GangPlan) -> str:
    """One line for stderr: what was generated for a JobSet."""
    if plan.version.minor <= 35:
        embedded = ", ".join(f"{leaf.template} (minCount {leaf.min_count})" for leaf in plan.leaves)
        return f"JobSet {plan.jobset_name}: Workload {plan.jobset_name} with podGroups {embedded}"
    parts = [f"Workload {plan.jobset_name}"]
    for group in plan.composites:
        policy = "basic" if group.min_group_count is None else f"minGroupCount {group.min_group_count}"
        where = f", {group.topology}" if group.topology else ""
        parts.append(f"CompositePodGroup {group.object_name} ({policy}{where})")
    for leaf in plan.leaves:
        where = f", {leaf.topology}" if leaf.topology else ""
        if leaf.object_name is None:
            parts.append(f"template {leaf.template} (one PodGroup per Job, minCount {leaf.min_count}{where})")
        else:
            parts.append(f"PodGroup {leaf.object_name} (minCount {leaf.min_count}{where})")
    return f"JobSet {plan.jobset_name}: " + ", ".join(parts)
