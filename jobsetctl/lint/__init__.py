"""The ``lint`` layer: what upstream accepts but users regret (issue #2), reported as warnings or notes.

One module per rule (yamllint's layout, anchors.md §5.2, §5.5): each defines

* ``RULE``: the rule (id, severity, one-line summary, ``spec`` citation, and a ``doc`` with the reason
  and a passing and a failing manifest, the module's ``PASSING`` and ``FAILING``);
* ``KINDS``: the (group, kind) pairs it looks at;
* ``check(record, obj, ctx)``: a generator of findings on one admitted object. Other objects are looked
  up through ``ctx.cluster`` (every input, ``--runtimes`` files, the built-in Trainer runtimes);
* ``LOCAL_KINDS`` (optional): the kinds for which ``check`` looks at nothing but the object itself.
  Those run in phase A, in the worker that admitted the object (:func:`run_local_lints`), where the
  object's positions are at hand; the rest wait for the view of every input in phase B.

:data:`LINTS` is the explicit registry, id → module: a new lint is a new module plus one line here
(and a ``samples/invalid/<id>.yaml``, which ``tests/test_samples.py`` demands). Lints run last, in
phase B of ``validate`` (:func:`run_lints`), on every object admission could type, whether or not
admission found errors in it. Checks that upstream admission performs belong to the other layers;
checks across objects belong to :mod:`jobsetctl.reference`; what upstream accepts but then refuses to
create or run (a JobSet's child Jobs, a TrainJob's JobSet) to the ``consequence`` layer (the kind
handlers' ``validate_consequences``).
"""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType
from typing import Any

from jobsetctl.diagnostics import Finding
from jobsetctl.kinds.interface import AdmissionContext
from jobsetctl.lint import (
    gang_exclusive_placement_deadlock,
    gang_min_count_staged,
    jobset_coordinator_without_dns,
    jobset_depends_on_self,
    jobset_exclusive_non_indexed,
    jobset_exclusive_pod_template,
    jobset_exclusive_priority_scope,
    jobset_failure_message_pattern,
    jobset_failure_policy_no_restarts,
    jobset_failure_reason_duplicate,
    jobset_kueue_depends_on,
    jobset_max_restarts_negative,
    jobset_startup_in_order,
    jobset_success_all_zero_replicas,
    jobset_success_any_depends_on,
    kueue_exceeds_max_quota,
    kueue_resource_not_covered,
    kueue_topology_unfit,
    podgroup_scheduler_name_mismatch,
    runtime_gang_both_schedulers,
    runtime_mpi_implementation_empty,
    trainjob_initializer_not_applied,
    trainjob_master_address_unresolvable,
    trainjob_nproc_from_cpu,
    trainjob_num_nodes_zero,
    trainjob_resources_ignored,
    trainjob_torchtune_dropped_override,
    trainjob_trainer_not_applied,
)
from jobsetctl.lint.support import GroupKind, clear_caches, group_kind
from jobsetctl.loader.objects import ObjectRecord

#: Rule id → lint module, in the order lints run (and report, before sorting by position).
LINTS: dict[str, ModuleType] = {
    module.RULE.id: module
    for module in (
        jobset_success_any_depends_on,
        jobset_depends_on_self,
        jobset_exclusive_non_indexed,
        jobset_exclusive_pod_template,
        jobset_coordinator_without_dns,
        jobset_kueue_depends_on,
        jobset_failure_policy_no_restarts,
        jobset_max_restarts_negative,
        jobset_failure_message_pattern,
        jobset_failure_reason_duplicate,
        jobset_success_all_zero_replicas,
        jobset_startup_in_order,
            jobset_exclusive_priority_scope,
        gang_min_count_staged,
        gang_exclusive_placement_deadlock,
        podgroup_scheduler_name_mismatch,
        runtime_gang_both_schedulers,
        runtime_mpi_implementation_empty,
        trainjob_resources_ignored,
        trainjob_num_nodes_zero,
        trainjob_nproc_from_cpu,
        trainjob_torchtune_dropped_override,
        trainjob_master_address_unresolvable,
        trainjob_initializer_not_applied,
        trainjob_trainer_not_applied,
        kueue_resource_not_covered,
        kueue_exceeds_max_quota,
        kueue_topology_unfit,
    )
}


def get(rule_id: str) -> ModuleType:
    """The lint module of a rule id; raises ``KeyError`` for an id that is not a lint."""
    return LINTS[rule_id]


def _is_local(module: ModuleType, kind: GroupKind) -> bool:
    return kind in getattr(module, "LOCAL_KINDS", ())


def run_local_lints(record: ObjectRecord, obj: dict[str, Any], ctx: AdmissionContext) -> Iterator[Finding]:
    """The lints that need no other object, on one admitted object (phase A)."""
    kind = group_kind(obj)
    for module in LINTS.values():
        if kind in module.KINDS and _is_local(module, kind):
            yield from module.check(record, obj, ctx)


def run_lints(
    admitted: list[tuple[ObjectRecord, dict[str, Any], bool]], ctx: AdmissionContext
) -> Iterator[tuple[ObjectRecord, Finding]]:
    """Every lint over every admitted object (``dict`` as admission left it, defaults applied); for an
    object whose flag says :func:`run_local_lints` has seen it, only the lints that look across objects."""
    clear_caches()
    try:
        for record, obj, linted_locally in admitted:
            kind = group_kind(obj)
            for module in LINTS.values():
                if kind in module.KINDS and not (linted_locally and _is_local(module, kind)):
                    for finding in module.check(record, obj, ctx):
                        yield record, finding
    finally:
        clear_caches()
