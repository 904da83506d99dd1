"""``scheduling.k8s.io`` Workload, PodGroup and CompositePodGroup: defaulting and built-in validation.

The API changed shape in every release (scheduling.md §1.1–§1.2):

* 1.35 ``v1alpha1``: ``Workload.spec.podGroups[]`` with ``policy``; no PodGroup kind;
* 1.36 ``v1alpha2``: ``Workload.spec.podGroupTemplates[]`` and a standalone ``PodGroup`` that points
  back with ``podGroupTemplateRef.workload``; ``disruptionMode`` is the string ``Pod``/``PodGroup``;
* 1.37 ``v1beta1``/``v1alpha3``: ``PodGroup.spec.workloadRef``, ``parentCompositePodGroupName``,
  ``disruptionMode`` union ``single``/``all``, ``preemptionPolicy``, mutable ``gang.minCount``,
  ``compositePodGroupTemplates`` and the ``CompositePodGroup`` kind.

The message forms and the feature-gate handling are explained in :mod:`.scheduling_checks`; update
rules live in :mod:`.scheduling_update`. Checks that need other objects (template references,
priorities across pods) are in :mod:`jobsetctl.reference`, except the Priority admission plugin's
class lookup, which is :meth:`validate_in_cluster` here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from jobsetctl.admission.schema import StructuralSchema, builtin_schema
from jobsetctl.diagnostics import Finding
from jobsetctl.kinds.interface import AdmissionContext, KindHandler, Object
from jobsetctl.kube import field as kfield
from jobsetctl.kube.field import Path
from jobsetctl.kube.priority import KIND as PRIORITY_CLASS
from jobsetctl.kube.priority import resolve_priority
from jobsetctl.kube.scheduling_checks import (
    CPG,
    PGPP,
    WAP,
    Checker,
    group_gates,
    integer,
    items,
    mapping,
    union_errors,
    walk_templates,
)
from jobsetctl.kube.scheduling_rules import (
    COMPOSITE_PODGROUP as CPG_RULES,
)
from jobsetctl.kube.scheduling_rules import (
    GROUP,
    MAX_TEMPLATES,
    MAX_TREE_DEPTH,
    KindRules,
)
from jobsetctl.kube.scheduling_rules import (
    PODGROUP as PODGROUP_RULES,
)
from jobsetctl.kube.scheduling_rules import (
    WORKLOAD as WORKLOAD_RULES,
)
from jobsetctl.kube.versions import KubeVersion

SPEC: Path = ("spec",)


def _version_of(api_version: str) -> str:
    return api_version.partition("/")[2]


def _name(obj: Object) -> str:
    name = mapping(obj.get("metadata")).get("name")
    return name if isinstance(name, str) else ""


class _SchedulingHandler(KindHandler):
    """What the three kinds share: the schema lookup and the Priority plugin's class check."""

    group = GROUP
    rules: KindRules
    resource: str

    def schema(self, api_version: str, version: KubeVersion) -> StructuralSchema:
        return builtin_schema(f"io.k8s.api.scheduling.{_version_of(api_version)}.{self.kind}", version)

    def validate(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        return self.check(obj, ctx, None)

    def validate_update(self, old: Object, new: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        from jobsetctl.kube.scheduling_update import immutability

        findings = self.check(new, ctx, old)
        findings.extend(immutability(self.kind, self.rules, old, new, ctx))
        return findings

    def check(self, obj: Object, ctx: AdmissionContext, old: Object | None) -> list[Finding]:
        raise NotImplementedError

    def priority_holders(self, obj: Object, ctx: AdmissionContext) -> list[tuple[dict[str, Any], Path]]:
        """The mappings that carry ``priorityClassName``/``priority``, with their paths."""
        spec = obj.get("spec")
        return [(spec, SPEC)] if isinstance(spec, dict) else []

    def default(self, obj: Object, ctx: AdmissionContext) -> None:
        if ctx.cluster is None:
            return  # validate's per-file phase: the plugin needs the PriorityClasses
        if ctx.version.minor == 36 and not ctx.gates.enabled(WAP):
            return  # the priority fields are dropped anyway
        for holder, _ in self.priority_holders(obj, ctx):
            fill_priority(holder, ctx)

    def validate_in_cluster(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        """The Priority admission plugin rejects a group whose class does not exist."""
        for holder, path in self.priority_holders(obj, ctx):
            name = holder.get("priorityClassName")
            if not isinstance(name, str) or not name:
                continue
            resolution = resolve_priority(name, ctx.cluster)
            if resolution.error is not None:
                here = (*path, "priorityClassName")
                yield self.rules.priority.finding(
                    f'{self.resource}.{GROUP} "{_name(obj)}" is forbidden: {resolution.error}',
                    path=kfield.path_string(here), at=here, unresolved=(GROUP, PRIORITY_CLASS, name),
                )


def fill_priority(holder: dict[str, Any], ctx: AdmissionContext) -> None:
    """The Priority admission plugin on one PodGroup-like mapping (scheduling.md §3.1)."""
    if holder.get("priority") is not None:
        return
    name = holder.get("priorityClassName")
    resolution = resolve_priority(name if isinstance(name, str) else None, ctx.cluster)
    if resolution.error is not None:
        return  # rejected in validate_in_cluster
    holder["priority"] = resolution.priority
    if not name and resolution.class_name:
        holder["priorityClassName"] = resolution.class_name
    if ctx.version.minor >= 37 and ctx.gates.enabled(PGPP) and holder.get("preemptionPolicy") in (None, ""):
        holder["preemptionPolicy"] = resolution.preemption_policy


def _group_fields(c: Checker, holder: Any, path: Path, old: Any, *, pod_group: bool = False) -> None:
    """A PodGroup spec or a PodGroupTemplate (they carry the same fields)."""
    if not isinstance(holder, dict):
        return
    c.drop_gated(holder, path, group_gates(c.version, pod_group=pod_group), old)
    c.policy(holder.get("schedulingPolicy"), (*path, "schedulingPolicy"))
    if "schedulingConstraints" in holder:
        c.topology(holder.get("schedulingConstraints"), (*path, "schedulingConstraints"))
    if "resourceClaims" in holder:
        c.resource_claims(holder.get("resourceClaims"), (*path, "resourceClaims"))
    c.disruption_mode(holder.get("disruptionMode"), (*path, "disruptionMode"))
    c.priority(holder, path)
    if c.version.minor >= 37:
        c.preemption_policy(holder, path)


def _template_list_size(c: Checker, spec: dict[str, Any], key: str, path: Path) -> bool:
    """Empty (when required) or over-long template lists; returns True when the size is fine."""
    entries = items(spec.get(key))
    here = (*path, key)
    if len(entries) > MAX_TEMPLATES:
        c.emit(c.rules.templates, kfield.too_many(here, len(entries), MAX_TEMPLATES), here)
        return False
    return True


# --- Workload ---------------------------------------------------------------------------------


class WorkloadHandler(_SchedulingHandler):
    kind = "Workload"
    rules = WORKLOAD_RULES
    resource = "workloads"

    def priority_holders(self, obj: Object, ctx: AdmissionContext) -> list[tuple[dict[str, Any], Path]]:
        if ctx.version.minor < 36:
            return []
        return [(template, path) for template, path, _, _ in walk_templates(obj.get("spec"), SPEC)]

    def check(self, obj: Object, ctx: AdmissionContext, old: Object | None) -> list[Finding]:
        c = Checker(self.rules, ctx)
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return c.findings
        c.controller_ref(spec.get("controllerRef"), (*SPEC, "controllerRef"))
        old_spec = mapping(mapping(old).get("spec")) if old is not None else None
        if ctx.version.minor <= 35:
            _workload_v1alpha1(c, spec)
        elif ctx.version.minor == 36:
            _workload_v1alpha2(c, spec, old_spec)
        else:
            _workload_v1beta1(c, spec, old_spec)
        return c.findings


def _workload_v1alpha1(c: Checker, spec: dict[str, Any]) -> None:
    """1.35 ``validatePodGroups``: the per-item checks only run when the list size is fine."""
    if "podGroups" not in spec:
        return  # the schema's Required value
    groups = items(spec.get("podGroups"))
    path = (*SPEC, "podGroups")
    if not groups:
        c.emit(c.rules.templates, kfield.required(path, "must have at least one item"), path)
        return
    if not _template_list_size(c, spec, "podGroups", SPEC):
        return
    seen: set[str] = set()
    for index, group in enumerate(groups):
        if not isinstance(group, dict):
            continue
        here = (*path, index)
        c.name(group.get("name"), (*here, "name"))
        name = group.get("name")
        if isinstance(name, str) and name:
            if name in seen:
                # 1.35 quirk: the bad value is the whole entry, not its name.
                c.emit(c.rules.name, kfield.duplicate(here, group), here)
            seen.add(name)
        c.policy(group.get("policy"), (*here, "policy"))


def _workload_v1alpha2(c: Checker, spec: dict[str, Any], old_spec: dict[str, Any] | None) -> None:
    if "podGroupTemplates" not in spec:
        return
    templates = items(spec.get("podGroupTemplates"))
    path = (*SPEC, "podGroupTemplates")
    if not templates:
        c.emit(c.rules.templates, kfield.required(path, "must have at least one item"), path)
        return
    _template_list_size(c, spec, "podGroupTemplates", SPEC)
    c.unique_names(templates, path)
    old_templates = _by_name(old_spec.get("podGroupTemplates")) if old_spec is not None else {}
    for index, template in enumerate(templates):
        if isinstance(template, dict):
            here = (*path, index)
            c.name(template.get("name"), (*here, "name"))
            _group_fields(c, template, here, old_templates.get(str(template.get("name"))))


def _by_name(entries: Any) -> dict[str, Any]:
    return {str(mapping(e).get("name")): e for e in items(entries) if isinstance(e, dict)}


def _workload_v1beta1(c: Checker, spec: dict[str, Any], old_spec: dict[str, Any] | None) -> None:
    composite_on = c.ctx.gates.enabled(CPG)
    c.drop_gated(spec, SPEC, [("compositePodGroupTemplates", CPG)], old_spec)
    # Quirk: the union's member list follows the gate, so with CompositePodGroup off the message
    # names podGroupTemplates alone (workload declarative_validation_test.go "empty podGroupTemplates").
    members = ["podGroupTemplates"] + (["compositePodGroupTemplates"] if "compositePodGroupTemplates" in spec
                                        or composite_on else [])
    present = [m for m in members if items(spec.get(m))]
    problem = union_errors(SPEC, members, present, declarative=True)
    if problem is not None:
        c.emit(c.rules.templates, problem, SPEC)

    seen: set[str] = set()
    configurations: set[tuple[str, int | None]] = set()
    old_templates = {kfield.path_string(p): t for t, p, _, _ in walk_templates(old_spec, SPEC)} if old_spec else {}
    for key in ("podGroupTemplates", "compositePodGroupTemplates"):
        _template_list_size(c, spec, key, SPEC)
    _tree_depth(c, spec)
    for template, path, composite, _depth in walk_templates(spec, SPEC):
        c.name(template.get("name"), (*path, "name"))
        name = template.get("name")
        if isinstance(name, str) and name:
            # Template names are unique across the whole tree (KEP-6012, scheduling.md §1.6).
            if name in seen:
                c.emit(c.rules.name, kfield.duplicate(path, name), path)
            seen.add(name)
        pcn = template.get("priorityClassName")
        configurations.add((pcn if isinstance(pcn, str) else "", integer(template.get("priority"))))
        old_template = old_templates.get(kfield.path_string(path))
        if composite:
            _composite_template(c, template, path, old_template)
        else:
            _group_fields(c, template, path, old_template)
    if len(configurations) > 1:
        # The alpha rule "one priority per tree" (scheduling.md §1.6). The bad value upstream passes
        # is not visible in the tests read [UNCONFIRMED]; it is left out.
        c.emit(c.rules.priority, kfield.field_error(
            kfield.ErrorType.INVALID, SPEC, kfield.OMIT, "detected multiple priority configurations"
        ), SPEC)


def _composite_template(c: Checker, template: dict[str, Any], path: Path, old: Any) -> None:
    c.drop_gated(template, path, group_gates(c.version, composite=True), old)
    c.policy(template.get("schedulingPolicy"), (*path, "schedulingPolicy"), count_key="minGroupCount")
    if "schedulingConstraints" in template:
        c.topology(template.get("schedulingConstraints"), (*path, "schedulingConstraints"))
    c.disruption_mode(template.get("disruptionMode"), (*path, "disruptionMode"))
    c.priority(template, path)
    c.preemption_policy(template, path)
    for key in ("podGroupTemplates", "compositePodGroupTemplates"):
        _template_list_size(c, template, key, path)
    if not items(template.get("podGroupTemplates")) and not items(template.get("compositePodGroupTemplates")):
        c.emit(c.rules.templates, kfield.invalid(
            path, template.get("name"), "must have at least one child PodGroupTemplate or CompositePodGroupTemplate"
        ), path)


def subtree_depth(template: Any, composite: bool) -> int:
    """Levels of a template subtree, the template itself included (a PodGroup leaf is one level)."""
    if not composite:
        return 1
    children = [subtree_depth(t, False) for t in items(mapping(template).get("podGroupTemplates"))]
    children += [subtree_depth(t, True) for t in items(mapping(template).get("compositePodGroupTemplates"))]
    return 1 + max(children, default=0)


def _tree_depth(c: Checker, spec: dict[str, Any]) -> None:
    """KEP-6012: at most four levels; reported on the top-level composite template (declarative test
    "cpg tree depth exceeds limit")."""
    for index, template in enumerate(items(spec.get("compositePodGroupTemplates"))):
        if subtree_depth(template, True) > MAX_TREE_DEPTH:
            here = (*SPEC, "compositePodGroupTemplates", index)
            c.emit(c.rules.templates, kfield.invalid(
                here, mapping(template).get("name"), f"maximum tree depth is {MAX_TREE_DEPTH}"
            ), here)


# --- PodGroup ---------------------------------------------------------------------------------


class PodGroupHandler(_SchedulingHandler):
    kind = "PodGroup"
    rules = PODGROUP_RULES
    resource = "podgroups"

    def default(self, obj: Object, ctx: AdmissionContext) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict) and spec.get("disruptionMode") is None:
            # v1alpha2 defaults Pod (only visible with WorkloadAwarePreemption on, else dropped);
            # v1beta1/v1alpha3 default {single: {}}.
            if ctx.version.minor == 36 and ctx.gates.enabled(WAP):
                spec["disruptionMode"] = "Pod"
            elif ctx.version.minor >= 37:
                spec["disruptionMode"] = {"single": {}}
        super().default(obj, ctx)

    def check(self, obj: Object, ctx: AdmissionContext, old: Object | None) -> list[Finding]:
        c = Checker(self.rules, ctx)
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return c.findings
        old_spec = mapping(mapping(old).get("spec")) if old is not None else None
        if ctx.version.minor == 36:
            ref = mapping(spec.get("podGroupTemplateRef"))
            if "workload" in ref:
                here = (*SPEC, "podGroupTemplateRef", "workload")
                workload_ref = mapping(ref.get("workload"))
                c.name(workload_ref.get("workloadName"), (*here, "workloadName"), rule=c.rules.reference)
                c.name(workload_ref.get("podGroupTemplateName"), (*here, "podGroupTemplateName"),
                       rule=c.rules.reference)
        elif ctx.version.minor >= 37:
            _workload_ref(c, spec)
        _group_fields(c, spec, SPEC, old_spec, pod_group=True)
        if ctx.version.minor >= 37:
            _parent(c, spec, requires_ref=True)
        return c.findings


def _workload_ref(c: Checker, spec: dict[str, Any]) -> None:
    ref = spec.get("workloadRef")
    if isinstance(ref, dict):
        here = (*SPEC, "workloadRef")
        c.name(ref.get("workloadName"), (*here, "workloadName"), subdomain=True, rule=c.rules.reference)
        c.name(ref.get("templateName"), (*here, "templateName"), rule=c.rules.reference)


def _parent(c: Checker, spec: dict[str, Any], *, requires_ref: bool) -> None:
    parent = spec.get("parentCompositePodGroupName")
    if not isinstance(parent, str) or not parent:
        return
    c.name(parent, (*SPEC, "parentCompositePodGroupName"), subdomain=True, rule=c.rules.reference)
    if requires_ref and not isinstance(spec.get("workloadRef"), dict):
        # Rule from scheduling.md §1.2 (v1beta1 table); exact wording not found [UNCONFIRMED].
        here = (*SPEC, "workloadRef")
        c.emit(c.rules.reference, kfield.required(here, "must be set when parentCompositePodGroupName is set"), here)


# --- CompositePodGroup ------------------------------------------------------------------------


class CompositePodGroupHandler(_SchedulingHandler):
    kind = "CompositePodGroup"
    rules = CPG_RULES
    resource = "compositepodgroups"

    def default(self, obj: Object, ctx: AdmissionContext) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict) and spec.get("disruptionMode") is None:
            spec["disruptionMode"] = {"single": {}}
        super().default(obj, ctx)

    def check(self, obj: Object, ctx: AdmissionContext, old: Object | None) -> list[Finding]:
        c = Checker(self.rules, ctx)
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return c.findings
        old_spec = mapping(mapping(old).get("spec")) if old is not None else None
        c.drop_gated(spec, SPEC, group_gates(ctx.version, composite=True), old_spec)
        _workload_ref(c, spec)
        _parent(c, spec, requires_ref=False)
        c.policy(spec.get("schedulingPolicy"), (*SPEC, "schedulingPolicy"), count_key="minGroupCount")
        if "schedulingConstraints" in spec:
            c.topology(spec.get("schedulingConstraints"), (*SPEC, "schedulingConstraints"))
        c.disruption_mode(spec.get("disruptionMode"), (*SPEC, "disruptionMode"))
        c.priority(spec, SPEC)
        c.preemption_policy(spec, SPEC)
        return c.findings


WORKLOAD = WorkloadHandler()
PODGROUP = PodGroupHandler()
COMPOSITE_PODGROUP = CompositePodGroupHandler()
