"""``Recorder.record_for`` makes the event ``Recorder.record`` makes, on each of its paths."""

from __future__ import annotations

from typing import Any

import pytest

from jobsetctl.fakecluster.clock import VirtualClock
from jobsetctl.fakecluster.events import Recorder

KUEUE_WORKLOAD = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload", "metadata": {"name": "w", "namespace": "ns"}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}}

CASES: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    ("plain", POD, {}, {}),
    ("reason-and-message", POD, {"reason": "R", "message": "M"}, {"reason": "R", "message": "M"}),
    ("every-detail", POD, {"node": "n", "reason": "R", "message": None, "transient": True},
     {"node": "n", "reason": "R", "message": None, "transient": True}),
    ("shared-kind-group", KUEUE_WORKLOAD, {"reason": "Pending"}, {"reason": "Pending", "group": "kueue.x-k8s.io"}),
    ("shared-kind-no-details", KUEUE_WORKLOAD, {}, {"group": "kueue.x-k8s.io"}),
    ("explicit-group-kept", KUEUE_WORKLOAD, {"group": "x"}, {"group": "x"}),
]


@pytest.mark.parametrize(("label", "obj", "details", "expected"), CASES, ids=[c[0] for c in CASES])
def test_record_for_is_record(label: str, obj: dict[str, Any], details: dict[str, Any], expected: dict[str, Any]) -> None:
    clock = VirtualClock()
    clock.advance_to(12.5)
    via_for, via_record = Recorder(clock), Recorder(clock)
    via_for.record_for(obj, "Created", **details)
    md = obj["metadata"]
    via_record.record(obj["kind"], md["namespace"], md["name"], "Created", **expected)
    assert via_for.events == via_record.events


def test_an_unknown_detail_is_refused_as_record_refuses_it() -> None:
    with pytest.raises(TypeError):
        Recorder(VirtualClock()).record_for(POD, "Created", colour="red")


SCHEDULING_WORKLOAD = {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
                       "metadata": {"name": "w", "namespace": "ns"}}


@pytest.mark.parametrize(("obj", "group"), [(KUEUE_WORKLOAD, "kueue.x-k8s.io"), (SCHEDULING_WORKLOAD, None),
                                            (POD, None), ({"kind": "Workload"}, None), ({}, None)],
                         ids=["kueue-workload", "in-tree-workload", "pod", "no-metadata", "empty"])
@pytest.mark.parametrize(("reason", "message"), [("R", "M"), (None, None), ("R", None)])
def test_the_kueue_engines_events_are_record_with_a_reason_and_a_message(obj: dict[str, Any], group: str | None,
                                                                          reason: str | None,
                                                                          message: str | None) -> None:
    """The Kueue engine's path (``Engine.record``: ``record_for`` with a reason and a message): the event
    ``record`` makes, with the object's group where its kind exists in two API groups and the group is not the
    implied one (an in-tree scheduling Workload carries none)."""
    clock = VirtualClock()
    clock.advance_to(3.0)
    via_for, via_record = Recorder(clock), Recorder(clock)
    via_for.record_for(obj, "Admitted", reason=reason, message=message)
    md = obj.get("metadata") or {}
    via_record.record(str(obj.get("kind", "")), md.get("namespace", ""), md.get("name", ""), "Admitted", reason=reason,
                      message=message, group=group)
    assert via_for.events == via_record.events
    assert [e.as_json() for e in via_for.events] == [e.as_json() for e in via_record.events]
