"""Invariant 7 of :mod:`jobsetctl.fakecluster.invariants`: a gang that preempted is bound, or explains why
not, within the same instant once its victims are gone.

A gang preempts as a PodGroup or CompositePodGroup (workload-aware preemption: ``Preempted by PodGroup
ns/name``) or through a member pod (per-pod preemption: ``Preempted by ns/name`` where the pod belongs
to a PodGroup). When the last of its victims is deleted at instant T, by the end of T the gang has

* bound: at least ``minCount`` of its members bound (a basic group: one), or, for a CompositePodGroup,
  its ``CompositePodGroupInitiallyScheduled`` condition True; or
* recorded why it still waits: a ``Scheduled`` or ``Unschedulable`` timeline event of the group after the
  last victim's ``Deleted`` event (the scheduler records the first failure after a preemption even when
  its text did not change, see ``GroupState.preempted_in_cycle``).

Before this rule, a gang could preempt its victims and then stay ``Unschedulable`` with a stale
"preempting N victims" status, never retried (issue 11).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from jobsetctl.fakecluster.apiserver import APIServer
from jobsetctl.fakecluster.events import Recorder
from jobsetctl.fakecluster.invariants_jobs import InvariantViolation
from jobsetctl.fakecluster.scheduler.groups import POD_GROUP, group_key_of
from jobsetctl.fakecluster.scheduler.podinfo import mapping

#: The preemptor of a ``Preempted`` timeline event: a group (``PodGroup ns/name``) or a pod (``ns/name``).
PREEMPTOR = re.compile(r"^Preempted by (?:(?P<kind>PodGroup|CompositePodGroup) )?(?:pod )?"
                       r"(?P<ns>[^/\s]+)/(?P<name>\S+)")
GROUP_API = "scheduling.k8s.io"

#: (kind, namespace, name) of a gang: ``PodGroup`` or ``CompositePodGroup``.
GangRef = tuple[str, str, str]


@dataclass(slots=True)
class PreemptingGangs:
    """Books of invariant 7, fed by the recorder's timeline."""

    api: APIServer
    recorder: Recorder
    #: Bound members per PodGroup, from the checker's own books.
    bound_members: Callable[[GangRef], int]
    checks: int = 0
    _seen: int = 0
    #: Victims (namespace, name) not yet gone, per gang.
    _pending: dict[GangRef, set[tuple[str, str]]] = field(default_factory=dict)
    #: Gangs whose last victim went in the current instant, and the index of that Deleted event.
    _gone: dict[GangRef, int] = field(default_factory=dict)
    #: Index of the last Scheduled/Unschedulable event per gang.
    _last_status: dict[GangRef, int] = field(default_factory=dict)

    def read(self, until: float) -> None:
        """Take in the timeline events recorded at or before ``until``."""
        events = self.recorder.events
        while self._seen < len(events) and events[self._seen].time <= until:
            index, event = self._seen, events[self._seen]
            self._seen += 1
            if event.kind in ("PodGroup", "CompositePodGroup") and event.event in ("Scheduled", "Unschedulable"):
                self._last_status[(event.kind, event.namespace, event.name)] = index
            if event.kind != "Pod":
                continue
            if event.event == "Preempted" and event.message:
                gang = self._gang_of_preemptor(event.message)
                if gang is not None:
                    self._pending.setdefault(gang, set()).add((event.namespace, event.name))
                    self._gone.pop(gang, None)
            elif event.event == "Deleted":
                victim = (event.namespace, event.name)
                for gang in [g for g, victims in self._pending.items() if victim in victims]:
                    victims = self._pending[gang]
                    victims.discard(victim)
                    if not victims:
                        del self._pending[gang]
                        self._gone[gang] = index

    def _gang_of_preemptor(self, message: str) -> GangRef | None:
        match = PREEMPTOR.match(message)
        if match is None:
            return None
        namespace, name = match.group("ns"), match.group("name")
        if match.group("kind"):
            return (match.group("kind"), namespace, name)
        pod = self.api.get("", "Pod", namespace, name)
        group = group_key_of(pod, self.api.version, self.api.gates) if pod is not None else None
        if group is None or group[0] != POD_GROUP:
            return None
        return ("PodGroup", group[1], group[2])

    def close_instant(self, instant: float) -> None:
        self.read(instant)
        for gang, gone_at in self._gone.items():
            self.checks += 1
            kind, namespace, name = gang
            obj = self.api.get(GROUP_API, kind, namespace, name)
            if obj is None or self._last_status.get(gang, -1) > gone_at or self._bound(gang, obj):
                continue
            raise InvariantViolation(
                f"t={instant:g}s {kind} {namespace}/{name} preempted and its victims are gone, but it neither "
                f"bound nor recorded why it still waits")
        self._gone.clear()

    def _bound(self, gang: GangRef, obj: dict[str, object]) -> bool:
        spec = mapping(obj.get("spec"))
        if gang[0] == "CompositePodGroup":
            conditions = mapping(obj.get("status")).get("conditions")
            return any(isinstance(c, dict) and c.get("type") == "CompositePodGroupInitiallyScheduled"
                       and c.get("status") == "True" for c in (conditions if isinstance(conditions, list) else []))
        gang_policy = mapping(mapping(spec.get("schedulingPolicy")).get("gang"))
        need = gang_policy.get("minCount")
        return self.bound_members(gang) >= (need if isinstance(need, int) else 1)
