"""PriorityClass (``scheduling.k8s.io/v1``) and the ``Priority`` admission plugin.

Upstream sources (read through the file index, wording confirmed):

* ``pkg/apis/scheduling/validation/validation.go`` ``ValidatePriorityClass`` /
  ``ValidatePriorityClassUpdate``: the reserved ``system-`` prefix, the user maximum, the
  preemptionPolicy enum, ``value`` immutable (``may not be changed in an update.``).
* ``pkg/apis/scheduling/v1/helpers.go`` ``IsKnownSystemPriorityClass``: the two built-in classes.
* ``plugin/pkg/admission/priority/admission.go``: a pod's (and, since 1.36, a PodGroup's)
  ``priorityClassName`` resolves to the class value; no name → the ``globalDefault`` class (the
  lowest value when a race left several), else 0; an unknown name is rejected with
  ``no PriorityClass with name <name> was found``; a second ``globalDefault`` class is rejected with
  ``PriorityClass <name> is already marked as default. Only one default can exist``.

scheduling.md §3.1 summarises the semantics. :func:`resolve_priority` is the one implementation of
the plugin that validate, render (the JobSet ``jobset.sigs.k8s.io/priority`` pod label) and the
simulator share.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from jobsetctl.admission.schema import StructuralSchema, builtin_schema
from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.kinds.interface import AdmissionContext, ClusterView, KindHandler, Object
from jobsetctl.kube import field
from jobsetctl.kube.versions import KubeVersion
from jobsetctl.rules.registry import define

GROUP = "scheduling.k8s.io"
KIND = "PriorityClass"

#: ``HighestUserDefinablePriority``: user classes may not exceed one billion.
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
#: ``SystemCriticalPriority`` = 2 × the user maximum.
SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
SYSTEM_PRIORITY_CLASS_PREFIX = "system-"
SYSTEM_CLUSTER_CRITICAL = "system-cluster-critical"
SYSTEM_NODE_CRITICAL = "system-node-critical"
#: The classes every cluster creates at bootstrap, with their values (``globalDefault`` false).
SYSTEM_PRIORITY_CLASSES: dict[str, int] = {
    SYSTEM_CLUSTER_CRITICAL: SYSTEM_CRITICAL_PRIORITY,
    SYSTEM_NODE_CRITICAL: SYSTEM_CRITICAL_PRIORITY + 1000,
}
#: ``DefaultPriorityWhenNoDefaultClassExists``.
DEFAULT_PRIORITY = 0

PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
PREEMPT_NEVER = "Never"
#: ``ValidatePreemptionPolicy`` lists the values in this order.
PREEMPTION_POLICIES = (PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER)

E, W = Severity.ERROR, Severity.WARNING
RESERVED_NAME = define(
    "priorityclass-reserved-name", Layer.WEBHOOK, E,
    "A PriorityClass name with the system- prefix that is not one of the built-in system classes.",
    spec="scheduling.md §3.1",
)
VALUE = define(
    "priorityclass-value", Layer.WEBHOOK, E,
    "A user PriorityClass value above 1000000000.", spec="scheduling.md §3.1",
)
PREEMPTION_POLICY = define(
    "priorityclass-preemption-policy", Layer.WEBHOOK, E,
    "preemptionPolicy is neither PreemptLowerPriority nor Never.", spec="scheduling.md §3.1",
)
IMMUTABLE = define(
    "priorityclass-immutable", Layer.WEBHOOK, E,
    "An update changes the value or the preemptionPolicy of a PriorityClass.", spec="scheduling.md §3.1",
)


@dataclass(frozen=True, slots=True)
class PriorityResolution:
    """What the Priority admission plugin decides for one ``priorityClassName``."""

    priority: int
    preemption_policy: str
    #: The class the priority came from: the named one, the global default, or None.
    class_name: str | None
    #: The plugin's rejection message (``no PriorityClass with name … was found``), else None.
    error: str | None = None


def not_found_message(name: str) -> str:
    return f"no PriorityClass with name {name} was found"


def _int_value(obj: Object) -> int | None:
    value = obj.get("value")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _policy_of(obj: Object) -> str:
    policy = obj.get("preemptionPolicy")
    return policy if isinstance(policy, str) and policy else PREEMPT_LOWER_PRIORITY


def _name_of(obj: Object) -> str:
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else ""


def priority_classes(cluster: ClusterView | None) -> list[Object]:
    """User PriorityClasses visible through ``cluster`` (system classes are implicit)."""
    if cluster is None:
        return []
    return [obj for obj in cluster.list(GROUP, KIND) if isinstance(obj, dict)]


def global_default_class(cluster: ClusterView | None) -> Object | None:
    """The ``globalDefault: true`` class; when several claim it, the one with the lowest value wins
    (the plugin's tie-break for a creation race)."""
    chosen: Object | None = None
    for obj in priority_classes(cluster):
        value = _int_value(obj)
        if obj.get("globalDefault") is not True or value is None:
            continue
        chosen_value = _int_value(chosen) if chosen is not None else None
        if chosen is None or (chosen_value is not None and value < chosen_value):
            chosen = obj
    return chosen


def resolve_priority(priority_class_name: str | None, cluster: ClusterView | None) -> PriorityResolution:
    """The Priority admission plugin for one pod (or PodGroup): its priority and preemption policy.

    ``cluster`` None means an empty cluster: only the built-in system classes exist, there is no
    global default.
    """
    if not priority_class_name:
        default = global_default_class(cluster)
        if default is None:
            return PriorityResolution(DEFAULT_PRIORITY, PREEMPT_LOWER_PRIORITY, None)
        value = _int_value(default)
        return PriorityResolution(
            value if value is not None else DEFAULT_PRIORITY, _policy_of(default), _name_of(default)
        )
    if priority_class_name in SYSTEM_PRIORITY_CLASSES:
        # Created at bootstrap and protected by validation, so a user object cannot change them.
        return PriorityResolution(
            SYSTEM_PRIORITY_CLASSES[priority_class_name], PREEMPT_LOWER_PRIORITY, priority_class_name
        )
    found = cluster.get(GROUP, KIND, "", priority_class_name) if cluster is not None else None
    value = _int_value(found) if isinstance(found, dict) else None
    if not isinstance(found, dict) or value is None:
        return PriorityResolution(
            DEFAULT_PRIORITY, PREEMPT_LOWER_PRIORITY, priority_class_name, not_found_message(priority_class_name)
        )
    return PriorityResolution(value, _policy_of(found), priority_class_name)


def already_default_message(name: str) -> str:
    return f"PriorityClass {name} is already marked as default. Only one default can exist"


def _known_system_class_error(name: str, value: Any, global_default: Any) -> str | None:
    """``IsKnownSystemPriorityClass``: None when ``name`` is a built-in class with its own settings."""
    expected = SYSTEM_PRIORITY_CLASSES.get(name)
    if expected is None:
        return f"{name} is not a known system priority class"
    if value != expected:
        return f"value of {name} PriorityClass must be {expected}"
    if bool(global_default) is not False:
        return f"globalDefault of {name} PriorityClass must be false"
    return None


def validate_preemption_policy(value: Any, path: field.Path) -> str | None:
    """Core ``ValidatePreemptionPolicy``; shared with PodGroups and pods."""
    if value in PREEMPTION_POLICIES:
        return None
    if value == "" or value is None:
        return field.required(path)
    return field.not_supported(path, value, list(PREEMPTION_POLICIES))


class PriorityClassHandler(KindHandler):
    group = GROUP
    kind = KIND
    namespaced = False

    def schema(self, api_version: str, version: KubeVersion) -> StructuralSchema:
        return builtin_schema(f"io.k8s.api.scheduling.{api_version.partition('/')[2]}.PriorityClass", version)

    def default(self, obj: Object, ctx: AdmissionContext) -> None:
        # SetDefaults_PriorityClass.
        if obj.get("preemptionPolicy") in (None, ""):
            obj["preemptionPolicy"] = PREEMPT_LOWER_PRIORITY

    def validate(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        name = _name_of(obj)
        value = obj.get("value")
        if name.startswith(SYSTEM_PRIORITY_CLASS_PREFIX):
            problem = _known_system_class_error(name, value, obj.get("globalDefault"))
            if problem is not None:
                yield RESERVED_NAME.finding(field.forbidden(
                    ("metadata", "name"),
                    f"priority class names with '{SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are reserved for system "
                    f"use only. error: {problem}",
                ), at=("metadata", "name"))
        elif isinstance(value, int) and not isinstance(value, bool) and value > HIGHEST_USER_DEFINABLE_PRIORITY:
            yield VALUE.finding(field.forbidden(
                ("value",), f"maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"
            ), at=("value",))
        if "preemptionPolicy" in obj:
            problem = validate_preemption_policy(obj.get("preemptionPolicy"), ("preemptionPolicy",))
            if problem is not None:
                yield PREEMPTION_POLICY.finding(problem, at=("preemptionPolicy",))

    def validate_update(self, old: Object, new: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        yield from self.validate(new, ctx)
        if new.get("value") != old.get("value"):
            yield IMMUTABLE.finding(field.forbidden(("value",), "may not be changed in an update."), at=("value",))
        if new.get("preemptionPolicy") != old.get("preemptionPolicy"):
            yield IMMUTABLE.finding(
                field.invalid(("preemptionPolicy",), new.get("preemptionPolicy"), "field is immutable"),
                at=("preemptionPolicy",),
            )


HANDLER = PriorityClassHandler()
