"""``simulate -o json``: the timeline as one JSON document (a contract, version 1).

::

    {"version": 1, "scenario": NAME, "endTime": SECONDS,
     "events": [{"time", "kind", "namespace", "name", "event", "node"?, "reason"?, "message"?, "transient"?}, ...],
     "final": [{"kind", "namespace", "name", "state", "node"?}, ...],
     "summary": {"kubernetesVersion", "enabledGates", "stopReason", "makespan", ...}}

``NAME`` is the Scenario's ``metadata.name``, else the first input file's stem. ``endTime`` is ``until`` when
given, else the time of the last event. Events are the recorder's, in the order they happened, and their
``event`` is one of the closed vocabulary :data:`EVENTS_BY_KIND` (tests hold every emitted event to it);
``transient: true`` marks a ``Rejected`` create that its controller retries by design (an exclusive-placement
follower refused until its leader is scheduled), which is not counted as rejected.
``summary`` is described in :mod:`jobsetctl.simulate.summary`; ``enabledGates`` lists the gates simulate
turned on because the inputs need them; ``stopReason`` says why the run ended (``until``, ``done``: nothing
left to happen, ``idle``: only retries of pods that cannot fit were left, ``horizon``, ``limit``: the run
recorded :data:`~jobsetctl.simulate.limits.MAX_EVENTS` events and stopped there); ``gangs`` holds the
scheduler's per-group records (quorum and admission times, topology domains, why a gang waits). The same inputs and seed give byte-identical output: keys are in
a fixed order, numbers are rounded, and nothing depends on wall time or hash order.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from jobsetctl.simulate.runner import SimulationResult
from jobsetctl.simulate.summary import Summary, json_number

FORMAT_VERSION = 1

#: Events any kind may have.
COMMON_EVENTS = frozenset({"Created", "Deleted", "Rejected"})
_GROUP_EVENTS = frozenset({"Scheduled", "Unschedulable", "Preempted"})
#: The closed vocabulary of ``event`` values, per kind (plus :data:`COMMON_EVENTS` for every kind).
EVENTS_BY_KIND: dict[str, frozenset[str]] = {
    "Pod": frozenset({"Scheduled", "Unschedulable", "Started", "Ready", "Succeeded", "Failed", "Preempted"}),
    "Job": frozenset({"Suspended", "Resumed", "Completed", "Failed"}),
    "JobSet": frozenset({"Restarting", "Suspended", "Resumed", "Completed", "Failed"}),
    "TrainJob": frozenset({"Suspended", "Resumed", "Completed", "Failed"}),
    "Workload": _GROUP_EVENTS,
    "PodGroup": _GROUP_EVENTS,
    "CompositePodGroup": _GROUP_EVENTS,
    "Node": frozenset({"Failed"}),
}
#: The vocabulary of kinds whose events carry ``group`` (a kind served by several API groups), by group.
EVENTS_BY_GROUP_KIND: dict[tuple[str, str], frozenset[str]] = {
    ("kueue.x-k8s.io", "Workload"): frozenset({
        "Pending", "QuotaReserved", "Admitted", "Evicted", "Preempted", "Requeued", "Deactivated", "Finished"}),
    ("scheduling.x-k8s.io", "PodGroup"): _GROUP_EVENTS,
    ("scheduling.volcano.sh", "PodGroup"): _GROUP_EVENTS,
}


def allowed_events(kind: str, group: str | None = None) -> frozenset[str]:
    """The ``event`` values an object of ``kind`` (of ``group``, for events that carry one) may have in
    the JSON report."""
    if group is not None:
        return COMMON_EVENTS | EVENTS_BY_GROUP_KIND.get((group, kind), frozenset())
    return COMMON_EVENTS | EVENTS_BY_KIND.get(kind, frozenset())


def is_allowed(kind: str, event: str, group: str | None = None) -> bool:
    return event in allowed_events(kind, group)


def report_document(result: SimulationResult, summary: Summary, *, events: bool = True) -> dict[str, Any]:
    summary_part: dict[str, Any] = {
        "kubernetesVersion": result.version.value,
        "enabledGates": list(result.enabled_gates),
        "stopReason": result.stop_reason,
    }
    summary_part.update(summary.as_dict())
    summary_part["gangs"] = gang_records(result.group_records)
    if result.kueue is not None:
        from jobsetctl.simulate.kueue_report import kueue_summary

        summary_part["kueue"] = kueue_summary(result)
    return {
        "version": FORMAT_VERSION,
        "scenario": result.name,
        "endTime": json_number(result.end_time),
        "events": [event.as_dict() for event in result.events] if events else [],
        "final": result.final,
        "summary": summary_part,
    }


def gang_records(records: Any) -> list[dict[str, Any]]:
    """The scheduler's per-group records (admission, domains, why it waits), sorted, when it keeps them."""
    if not isinstance(records, dict):
        return []
    out = [_plain(record.as_dict()) for record in records.values() if callable(getattr(record, "as_dict", None))]
    return sorted(out, key=lambda r: (str(r.get("namespace")), str(r.get("name")), str(r.get("kind"))))


def _plain(value: Any) -> Any:
    """Times as the events print them: whole seconds as integers, others rounded (stable JSON)."""
    if isinstance(value, float):
        return json_number(value)
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _compact_encoder() -> Callable[[Any], str]:
    """``json.dumps(value, ensure_ascii=False, separators=(", ", ": "))`` for one value after another (one
    per event). ``dumps`` builds an encoder per call, and so does ``JSONEncoder.encode`` (its C scanner):
    the C scanner is made once here, where CPython has it, for the same text."""
    encoder = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "))
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return encoder.encode
    scan = make({}, encoder.default, json.encoder.encode_basestring, None, ": ", ", ", False, False, True)

    def compact(value: Any) -> str:
        if isinstance(value, str):  # what ``encode`` does for a bare string
            return json.encoder.encode_basestring(value)
        return "".join(scan(value, 0))

    return compact


def render_json(result: SimulationResult, summary: Summary) -> str:
    """The document with one event (and one final entry) per line: readable, grep-able, and written by
    the C encoder (``indent`` would make ``json`` fall back to its pure-Python encoder, several times
    slower on the tens of thousands of events of a large run)."""
    document = report_document(result, summary, events=False)  # the events are written straight from the records

    compact = _compact_encoder()

    def listing(items: list[Any]) -> str:
        if not items:
            return "[]"
        return "[\n    " + ",\n    ".join([compact(item) for item in items]) + "\n  ]"

    parts = [f"  {compact(key)}: {compact(document[key])}" for key in ("version", "scenario", "endTime")]
    events = result.events
    # The indent goes in with the separator: one string per event, not two (a prefixed copy of each).
    parts.append('  "events": ' + ("[\n    " + ",\n    ".join([event.as_json() for event in events]) + "\n  ]"
                                   if events else "[]"))
    parts.append(f'  "final": {listing(document["final"])}')
    summary_text = json.dumps(document["summary"], ensure_ascii=False, indent=2).replace("\n", "\n  ")
    parts.append(f'  "summary": {summary_text}')
    return "{\n" + ",\n".join(parts) + "\n}\n"
