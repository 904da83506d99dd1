"""Rule ids and constants of the ``scheduling.k8s.io`` Workload, PodGroup and CompositePodGroup kinds.

One family of rules per kind (``workload-*``, ``podgroup-*``, ``compositepodgroup-*``) so that a user
can silence, say, PodGroup topology findings without touching Workloads. scheduling.md §1.2 gives
the shapes per release.
"""

from __future__ import annotations

from dataclasses import dataclass

from jobsetctl.diagnostics import Layer, Severity
from jobsetctl.rules.interface import Rule
from jobsetctl.rules.registry import define

GROUP = "scheduling.k8s.io"

#: ``WorkloadMaxPodGroups`` / ``WorkloadMaxPodGroupTemplates`` (scheduling.md §1.2).
MAX_TEMPLATES = 8
#: ``MaxPodGroupResourceClaims``.
MAX_RESOURCE_CLAIMS = 4
#: Topology constraints per group ("Currently only a single topology constraint can be specified").
MAX_TOPOLOGY_CONSTRAINTS = 1
#: KEP-6012: a CompositePodGroup tree may be at most this deep (counting PodGroup leaves).
MAX_TREE_DEPTH = 4
#: ``HighestUserDefinablePriority``: group priorities are user priorities.
MAX_PRIORITY = 1_000_000_000

#: 1.36 string enum (scheduling.md §1.2 v1alpha2).
DISRUPTION_POD = "Pod"
DISRUPTION_POD_GROUP = "PodGroup"
DISRUPTION_MODES_V1ALPHA2 = (DISRUPTION_POD, DISRUPTION_POD_GROUP)
#: Declarative validation lists the preemption policies alphabetically (workload declarative test).
GROUP_PREEMPTION_POLICIES = ("Never", "PreemptLowerPriority")


@dataclass(frozen=True, slots=True)
class KindRules:
    """The rules of one scheduling kind."""

    name: Rule
    templates: Rule
    policy: Rule
    topology: Rule
    resource_claims: Rule
    disruption_mode: Rule
    priority: Rule
    preemption_policy: Rule
    reference: Rule
    immutable: Rule
    gated_field: Rule


def _family(prefix: str, kind: str, without: tuple[str, ...] = ()) -> KindRules:
    """The rules of one kind; a kind without a field (a PodGroup has no templates, hence no template
    names) gets no rule for it, and the slot holds the ``reference`` rule, which its checks never reach."""
    e, w = Severity.ERROR, Severity.WARNING
    spec = "scheduling.md §1.2"
    reference = define(f"{prefix}-reference", Layer.WEBHOOK, e,
                       f"A {kind} reference field (controllerRef, workloadRef, parent) is malformed.", spec=spec)

    def rule(suffix: str, summary: str, severity: Severity = e, layer: Layer = Layer.WEBHOOK) -> Rule:
        if suffix in without:
            return reference
        return define(f"{prefix}-{suffix}", layer, severity, summary, spec=spec)

    return KindRules(
        name=rule("name", f"A {kind} template or reference name is missing, malformed or duplicated."),
        templates=rule(
            "templates",
            f"The {kind} template lists are empty, too long, both set, or a CompositePodGroup tree is malformed.",
        ),
        policy=rule("policy", f"A {kind} schedulingPolicy is not exactly one of basic/gang, or its count is below 1."),
        topology=rule("topology", f"A {kind} topology constraint is malformed or there is more than one."),
        resource_claims=rule("resource-claims", f"A {kind} resourceClaims entry is malformed."),
        disruption_mode=rule("disruption-mode", f"A {kind} disruptionMode is not one of the supported modes."),
        priority=rule("priority", f"A {kind} priority or priorityClassName is invalid or cannot be resolved."),
        preemption_policy=rule("preemption-policy", f"A {kind} preemptionPolicy is unsupported."),
        reference=reference,
        immutable=rule("immutable", f"An update changes an immutable {kind} field."),
        gated_field=rule(
            "gated-field",
            f"A {kind} field whose feature gate is off; the API server drops it on create.",
            w,
        ),
    )


WORKLOAD = _family("workload", "Workload")
PODGROUP = _family("podgroup", "PodGroup", without=("templates", "name"))
COMPOSITE_PODGROUP = _family("compositepodgroup", "CompositePodGroup", without=("templates", "name", "resource-claims"))
