"""Field checks shared by Workload templates, PodGroups and CompositePodGroups, per release.

Message forms (confirmed in kubernetes/kubernetes through the file index):

* 1.35 (``scheduling/v1alpha1``) uses hand-written validation
  (``pkg/apis/scheduling/validation/validation.go``): union errors ``must specify one of: `basic`,
  `gang``` and ``exactly one of `basic`, `gang` is required, but multiple fields are set``; a
  negative ``minCount`` is ``must be greater than zero`` and zero is ``Required value``.
* 1.36 and 1.37 use declarative validation (``pkg/registry/scheduling/*/declarative_validation_test.go``,
  ``strategy_test.go``; apimachinery ``api/validate/union.go``): ``must specify one of: …`` /
  ``must specify exactly one of: …`` (bad value ``{basic, gang}``), ``must be greater than or equal to
  1``, ``must be less than or equal to 1000000000``, ``Too many: 2: must have at most 1 item``.

Fields of a disabled feature gate are dropped by the registry strategy before validation
(``dropDisabledPodGroupFields`` and friends in ``pkg/registry/scheduling/*/strategy.go``: the
drop-disabled-fields convention, kept when the old object already used the field). jobsetctl drops
them too and reports a ``*-gated-field`` warning, because a silently ignored field is a surprise.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from jobsetctl.diagnostics import Finding
from jobsetctl.kinds.interface import AdmissionContext
from jobsetctl.kube import field as kfield
from jobsetctl.kube.field import Path, path_string
from jobsetctl.kube.names import is_dns1123_label, is_dns1123_subdomain, is_qualified_name
from jobsetctl.kube.scheduling_rules import (
    DISRUPTION_MODES_V1ALPHA2,
    GROUP_PREEMPTION_POLICIES,
    MAX_PRIORITY,
    MAX_RESOURCE_CLAIMS,
    MAX_TOPOLOGY_CONSTRAINTS,
    KindRules,
)
from jobsetctl.kube.versions import KubeVersion
from jobsetctl.rules.interface import Rule

TAS = "TopologyAwareWorkloadScheduling"
DRA = "DRAWorkloadResourceClaims"
WAP = "WorkloadAwarePreemption"
CPG = "CompositePodGroup"
PGPP = "PodGroupPreemptionPolicy"


def mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def integer(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def union_errors(path: Path, members: list[str], present: list[str], *, declarative: bool) -> str | None:
    """Exactly one of ``members`` must be set; ``present`` lists the ones that are."""
    quoted = ", ".join(f"`{m}`" for m in members)
    if not present:
        return kfield.invalid(path, "", f"must specify one of: {quoted}")
    if len(present) == 1:
        return None
    if declarative:
        return kfield.invalid(path, "{" + ", ".join(present) + "}", f"must specify exactly one of: {quoted}")
    set_fields = ", ".join(f"`{m}`" for m in present)
    return kfield.invalid(
        path, "{" + set_fields + "}", f"exactly one of {quoted} is required, but multiple fields are set"
    )


@dataclass(slots=True)
class Checker:
    """Collects findings for one object; knows the release (message forms) and the gates."""

    rules: KindRules
    ctx: AdmissionContext
    findings: list[Finding] = field(default_factory=list)

    @property
    def version(self) -> KubeVersion:
        return self.ctx.version

    @property
    def declarative(self) -> bool:
        return self.ctx.version.minor >= 36

    def emit(self, rule: Rule, message: str, at: Path) -> None:
        self.findings.append(rule.finding(message, path=path_string(at), at=at))

    # --- names ---------------------------------------------------------------------------

    def name(self, value: Any, path: Path, *, subdomain: bool = False, rule: Rule | None = None) -> None:
        """A required DNS label (or subdomain) name; empty is ``Required value``.

        An absent key is left to the schema layer, whose ``required`` list reports it (the built-in
        JSON Schemas mark these names required), so that one problem gives one finding.
        """
        rule = rule or self.rules.name
        if not isinstance(value, str) or value == "":
            if value == "":
                self.emit(rule, kfield.required(path), path)
            return  # absent: the schema's Required value; another type: a schema type error
        for detail in (is_dns1123_subdomain if subdomain else is_dns1123_label)(value):
            self.emit(rule, kfield.invalid(path, value, detail), path)

    def unique_names(self, entries: list[Any], path: Path, seen: set[str] | None = None) -> None:
        """Duplicate ``name`` in a list map: reported on the later item, with the name as bad value
        (1.36+; 1.35 reports the whole item, see :meth:`unique_items_v1alpha1`)."""
        seen = set() if seen is None else seen
        for index, entry in enumerate(entries):
            name = mapping(entry).get("name")
            if not isinstance(name, str) or not name:
                continue
            if name in seen:
                self.emit(self.rules.name, kfield.duplicate((*path, index), name), (*path, index))
            seen.add(name)

    # --- policy --------------------------------------------------------------------------

    def policy(self, policy: Any, path: Path, *, count_key: str = "minCount", optional_count: bool = False) -> bool:
        """The basic/gang union and the gang count. Returns True when the policy is ``basic``.

        A missing policy is the schema's ``Required value`` and is not repeated here.
        """
        if not isinstance(policy, dict):
            return False
        present = [key for key in ("basic", "gang") if policy.get(key) is not None]
        problem = union_errors(path, ["basic", "gang"], present, declarative=self.declarative)
        if problem is not None:
            self.emit(self.rules.policy, problem, path)
            return False
        if present == ["gang"]:
            self.count(mapping(policy.get("gang")).get(count_key), (*path, "gang", count_key), optional_count)
        return present == ["basic"]

    def count(self, value: Any, path: Path, optional: bool = False) -> None:
        number = integer(value)
        if value is None or number is None:
            return  # absent: schema "Required value" (or optional); wrong type: schema error
        if number == 0 and not optional:
            # Declarative validation treats 0 as "missing" (and so does the 1.35 hand-written code).
            self.emit(self.rules.policy, kfield.required(path), path)
        elif number < 1:
            detail = "must be greater than or equal to 1" if self.declarative else "must be greater than zero"
            self.emit(self.rules.policy, kfield.invalid(path, number, detail), path)

    # --- constraints, claims -------------------------------------------------------------

    def topology(self, constraints: Any, path: Path) -> None:
        topology = items(mapping(constraints).get("topology"))
        topology_path = (*path, "topology")
        if len(topology) > MAX_TOPOLOGY_CONSTRAINTS:
            self.emit(self.rules.topology, kfield.too_many(topology_path, len(topology), MAX_TOPOLOGY_CONSTRAINTS),
                      topology_path)
        for index, item in enumerate(topology):
            key = mapping(item).get("key")
            key_path = (*topology_path, index, "key")
            if key == "":
                self.emit(self.rules.topology, kfield.required(key_path), key_path)
            elif isinstance(key, str):
                for detail in is_qualified_name(key):
                    self.emit(self.rules.topology, kfield.invalid(key_path, key, detail), key_path)

    def resource_claims(self, claims: Any, path: Path) -> None:
        entries = items(claims)
        if len(entries) > MAX_RESOURCE_CLAIMS:
            self.emit(self.rules.resource_claims, kfield.too_many(path, len(entries), MAX_RESOURCE_CLAIMS), path)
        seen: set[str] = set()
        for index, entry in enumerate(entries):
            claim = mapping(entry)
            here = (*path, index)
            self.name(claim.get("name"), (*here, "name"), rule=self.rules.resource_claims)
            name = claim.get("name")
            if isinstance(name, str) and name:
                if name in seen:
                    self.emit(self.rules.resource_claims, kfield.duplicate(here, name), here)
                seen.add(name)
            sources = ["resourceClaimName", "resourceClaimTemplateName"]
            present = [key for key in sources if claim.get(key) not in (None, "")]
            problem = union_errors(here, sources, present, declarative=True)
            if problem is not None:
                self.emit(self.rules.resource_claims, problem, here)
            for key in present:
                value = claim.get(key)
                if isinstance(value, str):
                    for detail in is_dns1123_subdomain(value):
                        self.emit(self.rules.resource_claims, kfield.invalid((*here, key), value, detail),
                                  (*here, key))

    # --- disruption, priority, preemption ------------------------------------------------

    def disruption_mode(self, value: Any, path: Path) -> None:
        """1.36: string enum ``Pod``/``PodGroup``; 1.37: union ``single``/``all``. Either mode is valid with
        either scheduling policy: upstream's own tests create basic PodGroups with ``PodGroup``/``all``
        (podgrouppreemption_test.go "Preempt the whole basic PodGroup with a PodGroup disruption mode",
        TestDeferredResizePodPreemption_PodGroupVictims)."""
        if value is None:
            return
        if self.version.minor <= 36:
            if value not in DISRUPTION_MODES_V1ALPHA2:
                self.emit(self.rules.disruption_mode,
                          kfield.not_supported(path, value, list(DISRUPTION_MODES_V1ALPHA2)), path)
            return
        if not isinstance(value, dict):
            return
        present = [key for key in ("single", "all") if value.get(key) is not None]
        problem = union_errors(path, ["single", "all"], present, declarative=True)
        if problem is not None:
            self.emit(self.rules.disruption_mode, problem, path)

    def priority(self, holder: dict[str, Any], path: Path) -> None:
        """``priority`` ≤ 1e9 and ``priorityClassName`` a DNS subdomain (declarative ``maximum`` and
        ``format=k8s-long-name``)."""
        value = integer(holder.get("priority"))
        if value is not None and value > MAX_PRIORITY:
            here = (*path, "priority")
            self.emit(self.rules.priority,
                      kfield.invalid(here, value, f"must be less than or equal to {MAX_PRIORITY}"), here)
        name = holder.get("priorityClassName")
        if isinstance(name, str) and name:
            here = (*path, "priorityClassName")
            for detail in is_dns1123_subdomain(name):
                self.emit(self.rules.priority, kfield.invalid(here, name, detail), here)

    def preemption_policy(self, holder: dict[str, Any], path: Path) -> None:
        if "preemptionPolicy" not in holder:
            return
        here = (*path, "preemptionPolicy")
        value = holder.get("preemptionPolicy")
        if value in GROUP_PREEMPTION_POLICIES:
            return
        if value is None or value == "":
            self.emit(self.rules.preemption_policy, kfield.required(here), here)
        else:
            self.emit(self.rules.preemption_policy,
                      kfield.not_supported(here, value, list(GROUP_PREEMPTION_POLICIES)), here)

    # --- references ----------------------------------------------------------------------

    def controller_ref(self, ref: Any, path: Path) -> None:
        """``validateControllerRef``: apiGroup a DNS subdomain, kind and name path segment names."""
        if not isinstance(ref, dict):
            return
        group = ref.get("apiGroup")
        if isinstance(group, str) and group:
            for detail in is_dns1123_subdomain(group):
                self.emit(self.rules.reference, kfield.invalid((*path, "apiGroup"), group, detail),
                          (*path, "apiGroup"))
        for key in ("kind", "name"):
            value = ref.get(key)
            here = (*path, key)
            if value == "":
                self.emit(self.rules.reference, kfield.required(here), here)
            elif isinstance(value, str):
                for detail in path_segment_name_errors(value):
                    self.emit(self.rules.reference, kfield.invalid(here, value, detail), here)

    # --- feature gates -------------------------------------------------------------------

    def drop_gated(self, holder: Any, path: Path, gated: list[tuple[str, str]], old: Any = None) -> None:
        """Drop the fields of disabled gates from ``holder`` (in place) and warn about each.

        A field the old object already used is kept, as the registry strategies do on update.
        """
        if not isinstance(holder, dict):
            return
        previous = old if isinstance(old, dict) else {}
        for key, gate in gated:
            if key not in holder or self.ctx.gates.enabled(gate) or key in previous:
                continue
            here = (*path, key)
            self.emit(self.rules.gated_field, gated_field_message(here, gate), here)
            del holder[key]


def gated_field_message(path: Path, gate: str) -> str:
    """Our wording (upstream drops the field silently)."""
    return (f"{path_string(path)}: ignored while the {gate} feature gate is disabled "
            "(the API server drops the field on create)")


def path_segment_name_errors(name: str) -> list[str]:
    """apimachinery ``IsPathSegmentName`` (``content.IsPathSegmentName``)."""
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{bad}'" for bad in ("/", "%") if bad in name]


def group_gates(version: KubeVersion, *, pod_group: bool = False, composite: bool = False) -> list[tuple[str, str]]:
    """(field, gate) of a PodGroup-like spec or template that the release gates."""
    if version.minor == 36:
        return [("schedulingConstraints", TAS), ("resourceClaims", DRA),
                ("disruptionMode", WAP), ("priorityClassName", WAP), ("priority", WAP)]
    if version.minor >= 37:
        gated = [("schedulingConstraints", TAS), ("preemptionPolicy", PGPP)]
        if not composite:
            gated.append(("resourceClaims", DRA))
        if pod_group:
            gated.append(("parentCompositePodGroupName", CPG))
        return gated
    return []


def walk_templates(spec: Any, path: Path) -> Iterator[tuple[dict[str, Any], Path, bool, int]]:
    """Every template of a 1.37 Workload: (template, path, is_composite, depth), depth 1 at the top."""
    def visit(container: dict[str, Any], where: Path, depth: int) -> Iterator[tuple[dict[str, Any], Path, bool, int]]:
        for index, template in enumerate(items(container.get("podGroupTemplates"))):
            if isinstance(template, dict):
                yield template, (*where, "podGroupTemplates", index), False, depth
        for index, template in enumerate(items(container.get("compositePodGroupTemplates"))):
            if isinstance(template, dict):
                here = (*where, "compositePodGroupTemplates", index)
                yield template, here, True, depth
                yield from visit(template, here, depth + 1)

    yield from visit(mapping(spec), path, 1)
