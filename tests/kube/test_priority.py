"""PriorityClass validation and the Priority admission plugin (scheduling.md §3.1).

Messages are upstream's: ``pkg/apis/scheduling/validation/validation.go`` and
``plugin/pkg/admission/priority/admission.go``.
"""

from __future__ import annotations

from typing import Any

import pytest

from jobsetctl.kinds.index import ObjectIndex
from jobsetctl.kube.priority import (
    PREEMPT_LOWER_PRIORITY,
    PriorityResolution,
    global_default_class,
    resolve_priority,
)
from tests.helpers import admit_text


def messages(result: Any) -> list[tuple[str, str]]:
    return [(f.rule.id, f.message) for f in result.findings if f.effective_severity != "info"]


def priority_class(name: str, value: int, *, default: bool = False, policy: str | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                           "metadata": {"name": name}, "value": value, "globalDefault": default}
    if policy is not None:
        obj["preemptionPolicy"] = policy
    return obj


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("metadata: {name: high}\nvalue: 1000000000", []),
        ("metadata: {name: high}\nvalue: 1000000001", [(
            "priorityclass-value", "value: Forbidden: maximum allowed value of a user defined priority is 1000000000")]),
        ("metadata: {name: system-cluster-critical}\nvalue: 2000000000", []),
        ("metadata: {name: system-node-critical}\nvalue: 2000000000", [(
            "priorityclass-reserved-name",
            "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
            "error: value of system-node-critical PriorityClass must be 2000001000")]),
        ("metadata: {name: system-mine}\nvalue: 5", [(
            "priorityclass-reserved-name",
            "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
            "error: system-mine is not a known system priority class")]),
        ("metadata: {name: system-cluster-critical}\nvalue: 2000000000\nglobalDefault: true", [(
            "priorityclass-reserved-name",
            "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
            "error: globalDefault of system-cluster-critical PriorityClass must be false")]),
        ("metadata: {name: p}\nvalue: 1\npreemptionPolicy: Sometimes", [(
            "priorityclass-preemption-policy",
            'preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"')]),
    ],
)
def test_priority_class_validation_table(text: str, expected: list[tuple[str, str]]) -> None:
    result = admit_text("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n" + text)
    assert messages(result) == expected


def test_priority_class_defaults_preemption_policy_and_is_cluster_scoped() -> None:
    result = admit_text("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: p}\nvalue: 1")
    assert result.obj is not None
    assert result.obj["preemptionPolicy"] == PREEMPT_LOWER_PRIORITY
    assert "namespace" not in result.obj["metadata"]


def test_priority_class_value_and_policy_are_immutable() -> None:
    old = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: p}\nvalue: 1"
    new = ("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: p}\nvalue: 2\n"
           "preemptionPolicy: Never")
    assert messages(admit_text(new, old=old)) == [
        ("priorityclass-immutable", "value: Forbidden: may not be changed in an update."),
        ("priorityclass-immutable", 'preemptionPolicy: Invalid value: "Never": field is immutable'),
    ]
    assert messages(admit_text(old, old=old)) == []


@pytest.mark.parametrize(
    ("name", "objects", "expected"),
    [
        # No class and no default: 0.
        (None, [], PriorityResolution(0, "PreemptLowerPriority", None)),
        # The global default applies to pods without a class.
        (None, [priority_class("d", 7, default=True, policy="Never")], PriorityResolution(7, "Never", "d")),
        # Several defaults (a creation race): the lowest value wins.
        (None, [priority_class("a", 9, default=True), priority_class("b", 3, default=True)],
         PriorityResolution(3, "PreemptLowerPriority", "b")),
        ("high", [priority_class("high", 1000)], PriorityResolution(1000, "PreemptLowerPriority", "high")),
        # Built-in classes always exist.
        ("system-node-critical", [], PriorityResolution(2000001000, "PreemptLowerPriority", "system-node-critical")),
        ("system-cluster-critical", [],
         PriorityResolution(2000000000, "PreemptLowerPriority", "system-cluster-critical")),
        ("missing", [priority_class("d", 7, default=True)],
         PriorityResolution(0, "PreemptLowerPriority", "missing", "no PriorityClass with name missing was found")),
    ],
)
def test_resolve_priority_table(name: str | None, objects: list[dict[str, Any]], expected: PriorityResolution) -> None:
    assert resolve_priority(name, ObjectIndex(objects)) == expected


def test_resolve_priority_without_a_cluster_knows_only_system_classes() -> None:
    assert resolve_priority(None, None) == PriorityResolution(0, "PreemptLowerPriority", None)
    assert resolve_priority("x", None).error == "no PriorityClass with name x was found"
    assert resolve_priority("system-cluster-critical", None).priority == 2_000_000_000
    assert global_default_class(None) is None
