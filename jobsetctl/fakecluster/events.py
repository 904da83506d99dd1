"""What happened, when: the timeline that ``simulate`` reports (issue #4, "Outputs").

Two streams: :class:`SimEvent`, the closed vocabulary of the JSON contract (``Created``, ``Scheduled``,
``Completed`` ...), and :class:`KubeEvent`, the Kubernetes Events controllers emit (reason and message as
upstream writes them), kept for the human-readable log.
"""

from __future__ import annotations

import json
import json.encoder
import math
from dataclasses import dataclass, field, replace
from typing import Any

from jobsetctl.fakecluster.clock import VirtualClock

#: Kinds served by more than one API group, and the group an event of that kind implies when it carries
#: none (the in-tree ``scheduling.k8s.io`` objects, whose events predate the ``group`` key). An event of
#: such a kind from any other group (Kueue's ``kueue.x-k8s.io`` Workload, scheduler-plugins'
#: ``scheduling.x-k8s.io`` PodGroup) carries ``group`` in the JSON report.
SHARED_KINDS: dict[str, str] = {"Workload": "scheduling.k8s.io", "PodGroup": "scheduling.k8s.io"}


def event_group(obj: dict[str, Any]) -> str | None:
    """The ``group`` an event about ``obj`` carries: its API group when its kind exists in several groups
    and the group is not the implied one, else None."""
    kind = obj.get("kind")
    implied = SHARED_KINDS.get(kind) if isinstance(kind, str) else None
    if implied is None:
        return None
    api_version = obj.get("apiVersion")
    group = api_version.partition("/")[0] if isinstance(api_version, str) and "/" in api_version else ""
    return group if group and group != implied else None


# SimEvent and KubeEvent are values (hashable, changed only through ``replace``) but not frozen dataclasses:
# a frozen one's ``__init__`` sets every field through ``object.__setattr__``, and a run makes one per
# pod transition.
@dataclass(slots=True, unsafe_hash=True)
class SimEvent:
    time: float
    kind: str
    namespace: str
    name: str
    event: str
    node: str | None = None
    reason: str | None = None
    message: str | None = None
    #: The API group, for kinds of :data:`SHARED_KINDS` outside the implied group (see :func:`event_group`).
    group: str | None = None
    #: A ``Rejected`` create the creating controller retries by design (the JobSet pod webhook refusing an
    #: exclusive-placement follower until its leader is scheduled): not an object that can never exist.
    transient: bool = False
    #: How many identical occurrences the event stands for: an ``Unschedulable`` that repeats with the same
    #: text is not recorded again, its first record counts it (as the events API's ``count`` does).
    count: int = 1

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"time": _number(self.time), "kind": self.kind}
        if self.group is not None:
            data["group"] = self.group
        data["namespace"] = self.namespace
        data["name"] = self.name
        data["event"] = self.event
        if self.node is not None:
            data["node"] = self.node
        if self.reason is not None:
            data["reason"] = self.reason
        if self.message is not None:
            data["message"] = self.message
        if self.transient:
            data["transient"] = True
        if self.count > 1:
            data["count"] = self.count
        return data

    def as_json(self) -> str:
        """``as_dict`` as ``json.dumps(..., ensure_ascii=False, separators=(", ", ": "))`` writes it, put
        together directly (a large run writes hundreds of thousands): the same strings through the json
        module's own string encoder, the same number spelling (``repr``). Anything but the declared types
        goes through ``json.dumps`` itself."""
        time = self.time
        if type(time) is float and time.is_integer():  # most event times: ``_number``'s answer, sooner
            time = int(time)
        else:
            time = _number(time)
        if not ((type(time) is float and math.isfinite(time)) or type(time) is int) or \
                type(self.transient) is not bool or type(self.count) is not int:
            return json.dumps(self.as_dict(), ensure_ascii=False, separators=(", ", ": "))
        group, node, reason, message = self.group, self.node, self.reason, self.message
        texts = _JSON_TEXTS  # a cached text is never empty, so ``or`` falls through only on a miss
        try:
            head = (f'{{"time": {time!r}, "kind": {texts.get(self.kind) or _json_text(self.kind)}'
                    if group is None else
                    f'{{"time": {time!r}, "kind": {_json_text(self.kind)}, "group": {_json_text(group)}')
            out = (f'{head}, "namespace": {texts.get(self.namespace) or _json_text(self.namespace)}, '
                   f'"name": {texts.get(self.name) or _json_text(self.name)}, '
                   f'"event": {texts.get(self.event) or _json_text(self.event)}')
            if node is not None:
                out += f', "node": {texts.get(node) or _json_text(node)}'
            if reason is not None:
                out += f', "reason": {_json_text(reason)}'
            if message is not None:
                out += f', "message": {_json_text(message)}'
        except TypeError:  # a field that is not a string (or not hashable)
            return json.dumps(self.as_dict(), ensure_ascii=False, separators=(", ", ": "))
        if self.transient:
            out += ', "transient": true'
        if self.count > 1:
            out += f', "count": {self.count!r}'
        return out + "}"


@dataclass(slots=True, unsafe_hash=True)
class KubeEvent:
    time: float
    kind: str
    namespace: str
    name: str
    type: str  # Normal or Warning
    reason: str
    message: str
    #: Identical occurrences aggregated into this one (the events API's ``count``).
    count: int = 1


#: What ``json.dumps(..., ensure_ascii=False)`` writes for a string, remembered for the strings that repeat
#: (kinds, namespaces, event names, node and object names appear in many events).
_JSON_TEXTS: dict[str, str] = {}
_JSON_TEXTS_MAX = 65_536


def _json_text(value: str) -> str:
    found = _JSON_TEXTS.get(value)
    if found is None:
        found = json.encoder.encode_basestring(value)
        if len(_JSON_TEXTS) >= _JSON_TEXTS_MAX:
            _JSON_TEXTS.clear()
        _JSON_TEXTS[value] = found
    return found


def _number(value: float) -> float | int:
    """Whole seconds print as integers so that JSON stays readable and stable."""
    if type(value) is float and value.is_integer():  # most event times: the same answer, sooner
        return int(value)
    rounded = round(value, 6)
    return int(rounded) if rounded == int(rounded) else rounded


@dataclass(slots=True)
class Recorder:
    clock: VirtualClock
    events: list[SimEvent] = field(default_factory=list)
    kube_events: list[KubeEvent] = field(default_factory=list)

    def record(
        self,
        kind: str,
        namespace: str,
        name: str,
        event: str,
        *,
        node: str | None = None,
        reason: str | None = None,
        message: str | None = None,
        group: str | None = None,
        transient: bool = False,
    ) -> None:
        self.events.append(SimEvent(self.clock.now, kind, namespace, name, event, node, reason, message, group, transient))

    def repeat(self, index: int) -> None:
        """The event at ``index`` happened again, identically: count it there instead of recording it."""
        event = self.events[index]
        self.events[index] = replace(event, count=event.count + 1)

    def repeat_kube_event(self, index: int) -> None:
        event = self.kube_events[index]
        self.kube_events[index] = replace(event, count=event.count + 1)

    def record_for(self, obj: dict[str, Any], event: str, *, node: str | None = None, reason: str | None = None,
                   message: str | None = None, group: str | None = None, transient: bool = False) -> None:
        """:meth:`record` for an object: its kind, namespace and name, and for a kind of two API groups
        (:data:`SHARED_KINDS`) its group unless one is given. Keywords, not a details mapping: every controller
        and the Kueue engine record through here, several events per object."""
        md = obj.get("metadata") or {}
        kind = obj.get("kind", "")
        if group is None and isinstance(kind, str) and kind in SHARED_KINDS:  # most events (Pods) have none
            group = event_group(obj)
        self.events.append(SimEvent(self.clock.now, str(kind), str(md.get("namespace", "")), str(md.get("name", "")),
                                    event, node, reason, message, group, transient))

    def kube_event(self, obj: dict[str, Any], type_: str, reason: str, message: str) -> None:
        md = obj.get("metadata") or {}
        self.kube_events.append(KubeEvent(
            self.clock.now, str(obj.get("kind", "")), str(md.get("namespace", "")), str(md.get("name", "")),
            type_, reason, message,
        ))
