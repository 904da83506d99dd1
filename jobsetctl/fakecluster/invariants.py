"""Invariants of a simulated cluster, checked at every step from the API server's watch stream.

:class:`InvariantChecker` keeps its own books (it does not trust the scheduler's cache) and raises
:class:`InvariantViolation` the moment a rule breaks:

1. **No over-commit.** For every node and every resource a bound, non-terminal pod requests (pods that
   are terminating still hold their resources) plus the ``pods`` slot: the sum never exceeds
   allocatable (falling back to capacity; a node without a ``pods`` entry gets the kubelet's 110, as the
   scheduler assumes). Requests are Kubernetes PodRequests (:func:`jobsetctl.kube.podspec.pod_requests`).
   Pods bound to a node name keep counting while no Node of that name exists, and count again when one
   (re)appears (a deleted node created anew must not look empty while its pods still run).
2. **Gangs all-or-nothing at bind time.** For a gang (in-tree ``gang`` PodGroup or 1.35 Workload
   podGroup, coscheduling ``minMember``, Volcano ``minMember``): when the gang goes from no bound member
   to some, the members bound during that virtual instant plus those already bound reach ``minCount``
   by the end of the instant (pods created already bound, ``spec.nodeName`` set by their author, count
   as members but were not scheduled, so they start no such check). "Instant" is one value of the virtual clock: in every version the
   binding of a gang happens in one instant — 1.35 releases the pods waiting at Permit together, 1.36+
   binds a whole PodGroup cycle, coscheduling allows every waiting pod at once. Checked when time moves
   on (and by :meth:`finish`). ``minCount`` is read when the instant closes (1.37 allows decreasing it).
3. **Preemption only of lower priority.** Every ``Preempted`` timeline event names its preemptor (a pod
   ``namespace/name``, ``PodGroup namespace/name`` or ``CompositePodGroup namespace/name``); the preemptor's
   priority (a group's ``spec.priority``, else its highest member's) must exceed the victim's (the lower
   of the pod's and its PodGroup's priority, so both per-pod and workload-aware preemption are covered).
4. **Taints respected.** A pod the scheduler binds (``spec.nodeName`` set on an existing pod) tolerates
   every ``NoSchedule``/``NoExecute`` taint of that node at that moment.
5. **No ``dependsOn`` stage before its dependency is met.** When a child Job of a JobSet's replicated job
   that has ``dependsOn`` is created, every dependency has reached its status among the Jobs of the same
   JobSet and restart attempt (jobset.md §4.4): ``Complete`` — replicas Jobs ``Complete``; ``Ready`` —
   ready + succeeded + failed Jobs == replicas, a Job being ready when unfinished with ready plus
   succeeded pods ≥ min(parallelism, completions) (§1.7). Counted from the Jobs' watch events.
6. **Every pod ends in a state its Job accounts for.** The Job controller counts a pod when it removes the
   ``batch.kubernetes.io/job-tracking`` finalizer, so: no pod leaves the store holding it; when a Job
   becomes finished and at the end of the run (:meth:`InvariantChecker.finish`), ``succeeded`` (Indexed:
   ``completedIndexes``) is exactly the pods seen Succeeded while tracked, ``failed`` lies between the
   released pods seen Failed while tracked and all released pods that did not succeed,
   ``uncountedTerminatedPods`` is empty, a finished Job has no tracked or active pod left, and an
   unfinished one's ``active``/``terminating``/``ready`` match its pods (details, and why some of these
   are bounds rather than equalities, in :mod:`jobsetctl.fakecluster.invariants_jobs`).
7. **A gang that preempted is bound, or explains why not, within the same instant once its victims are
   gone.** When the last victim of a PodGroup's or CompositePodGroup's preemption (or of a gang member's
   per-pod preemption) is deleted, by the end of that instant the gang has ``minCount`` members bound, or
   has recorded a new ``Scheduled``/``Unschedulable`` event (:mod:`jobsetctl.fakecluster.invariants_preemption`).

8. **Kueue's books balance** (:mod:`jobsetctl.fakecluster.invariants_kueue`): a reservation's usage is what
   its podsets ask, no ClusterQueue over its nominal quota plus borrowing limit and no Cohort tree over
   its quotas, Admitted only with QuotaReserved, and in-ClusterQueue preemption only of lower priority.

The simulate runner calls :meth:`InvariantChecker.finish` when a run ends (it closes the last instant and
runs the end-of-run part of rule 6). ``checks`` counts the individual checks executed (the hardening issue
reports it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jobsetctl.fakecluster.apiserver import APIServer, WatchEvent, WatchType
from jobsetctl.fakecluster.events import Recorder
from jobsetctl.fakecluster.invariants_jobs import InvariantViolation, WorkloadBooks
from jobsetctl.fakecluster.invariants_kueue import KueueBooks
from jobsetctl.fakecluster.invariants_preemption import PREEMPTOR, GangRef, PreemptingGangs
from jobsetctl.fakecluster.scheduler.groups import (
    COSCHED,
    POD_GROUP,
    VOLCANO_GROUP,
    WORKLOAD_GROUP,
    GroupKey,
    group_key_of,
    object_group_key,
    parse_group_spec,
)
from jobsetctl.fakecluster.scheduler.podinfo import (
    PODS,
    mapping,
    parse_taints,
    parse_tolerations,
    resource_list,
    to_units,
    tolerates_all,
)
from jobsetctl.kube import podspec

DEFAULT_MAX_PODS = 110


@dataclass(slots=True)
class _Node:
    #: None while no Node of that name exists (deleted, or not created yet): pods bound to the name keep
    #: their share, which counts again if a Node of that name (re)appears.
    allocatable: dict[str, int] | None
    taints: tuple[Any, ...]
    used: dict[str, int] = field(default_factory=dict)
    pods: set[str] = field(default_factory=set)


@dataclass(slots=True)
class _Bound:
    node: str
    requests: dict[str, int]
    group: GroupKey | None


class InvariantChecker:
    def __init__(self, api: APIServer, recorder: Recorder | None = None) -> None:
        self.api = api
        self.recorder = recorder
        self._checks = 0
        self._nodes: dict[str, _Node] = {}
        self._bound: dict[str, _Bound] = {}
        self._group_bound: dict[GroupKey, set[str]] = {}
        self._instant: float = api.clock.now
        #: groups with no bound member when the current instant began, and their binds in it.
        self._opening: dict[GroupKey, set[str]] = {}
        self._seen_events = 0
        self._workloads = WorkloadBooks(lambda: api.clock.now)
        self._gangs = PreemptingGangs(api, recorder, self._bound_members) if recorder is not None else None
        self._kueue = KueueBooks(api)
        api.subscribe(self._on_event)

    @property
    def checks(self) -> int:
        return (self._checks + self._workloads.checks + self._kueue.checks
                + (self._gangs.checks if self._gangs is not None else 0))

    def _bound_members(self, gang: GangRef) -> int:
        return len(self._group_bound.get((POD_GROUP, gang[1], gang[2]), set()))

    # ---- stream ------------------------------------------------------------------------------------
    def _on_event(self, event: WatchEvent) -> None:
        if self.api.clock.now != self._instant:
            self._close_instant()
            self._instant = self.api.clock.now
        kind = event.key[1]
        if event.key[0] == "" and kind == "Node":
            self._on_node(event)
        elif event.key[0] == "" and kind == "Pod":
            self._on_pod(event)
        self._workloads.on_event(event)
        self._kueue.on_event(event)
        self._check_preemptions()

    def _on_node(self, event: WatchEvent) -> None:
        name = event.key[3]
        if event.type == WatchType.DELETED:
            gone = self._nodes.get(name)
            if gone is not None:
                gone.allocatable, gone.taints = None, ()
            return
        status = mapping(event.obj.get("status"))
        allocatable = resource_list(status.get("allocatable") or status.get("capacity"))
        allocatable.setdefault(PODS, DEFAULT_MAX_PODS)
        current = self._nodes.get(name)
        node = _Node(allocatable, parse_taints(mapping(event.obj.get("spec"))))
        if current is not None:
            node.used, node.pods = current.used, current.pods
        self._nodes[name] = node
        self._check_node(name)

    def _on_pod(self, event: WatchEvent) -> None:
        obj = event.obj
        uid = str(mapping(obj.get("metadata")).get("uid") or "")
        spec = mapping(obj.get("spec"))
        node_name = spec.get("nodeName")
        terminal = mapping(obj.get("status")).get("phase") in ("Succeeded", "Failed")
        known = self._bound.get(uid)
        if event.type == WatchType.DELETED or terminal:
            if known is not None:
                self._release(uid, known)
            return
        if not node_name or known is not None:
            return
        requests = {name: to_units(name, amount) for name, amount in podspec.pod_requests(spec).items()}
        requests[PODS] = requests.get(PODS, 0) + 1
        group = group_key_of(obj, self.api.version, self.api.gates)
        bound = _Bound(str(node_name), requests, group)
        self._bound[uid] = bound
        node = self._nodes.setdefault(bound.node, _Node(None, ()))
        for resource, amount in requests.items():
            node.used[resource] = node.used.get(resource, 0) + amount
        node.pods.add(uid)
        if event.type == WatchType.MODIFIED:
            self._check_taints(obj, node, bound.node)
        self._check_node(bound.node)
        if group is not None:
            members = self._group_bound.setdefault(group, set())
            # A pod created already bound (``spec.nodeName`` set by its author) was never scheduled: it
            # counts as a bound member but opens no all-or-nothing check of its own.
            scheduled = event.type != WatchType.ADDED
            if scheduled and not members and group not in self._opening:
                self._opening[group] = set()
            if group in self._opening:
                self._opening[group].add(uid)
            members.add(uid)

    def _release(self, uid: str, bound: _Bound) -> None:
        del self._bound[uid]
        node = self._nodes.get(bound.node)
        if node is not None and uid in node.pods:
            node.pods.discard(uid)
            for resource, amount in bound.requests.items():
                node.used[resource] = node.used.get(resource, 0) - amount
        if bound.group is not None:
            self._group_bound.get(bound.group, set()).discard(uid)

    # ---- rules -------------------------------------------------------------------------------------
    def _check_node(self, name: str) -> None:
        node = self._nodes[name]
        self._checks += 1
        if node.allocatable is None:
            return  # no such node (now): nothing to over-commit
        for resource, used in node.used.items():
            self._checks += 1
            if used > node.allocatable.get(resource, 0) and used > 0:
                raise InvariantViolation(
                    f"t={self.api.clock.now:g}s node {name} over-committed on {resource}: requested {used} > "
                    f"allocatable {node.allocatable.get(resource, 0)} (pods: {sorted(node.pods)})")

    def _check_taints(self, pod: dict[str, Any], node: _Node, node_name: str) -> None:
        self._checks += 1
        taint = tolerates_all(parse_tolerations(mapping(pod.get("spec"))), node.taints)
        if taint is not None:
            md = mapping(pod.get("metadata"))
            raise InvariantViolation(
                f"t={self.api.clock.now:g}s pod {md.get('namespace')}/{md.get('name')} bound to {node_name} "
                f"which has the untolerated taint {taint.key}={taint.value}:{taint.effect}")

    def _min_count(self, group: GroupKey) -> int | None:
        kind = group[0]
        if kind == WORKLOAD_GROUP:
            obj = self.api.get("scheduling.k8s.io", "Workload", group[1], group[2])
        elif kind == POD_GROUP:
            obj = self.api.get("scheduling.k8s.io", "PodGroup", group[1], group[2])
        elif kind == COSCHED:
            obj = self.api.get("scheduling.x-k8s.io", "PodGroup", group[1], group[2])
        elif kind == VOLCANO_GROUP:
            obj = self.api.get("scheduling.volcano.sh", "PodGroup", group[1], group[2])
        else:
            return None
        if obj is None:
            return None
        if kind in (WORKLOAD_GROUP, POD_GROUP) and not self.api.gates.enabled("GangScheduling"):
            return None  # nothing enforces an in-tree gang's minCount without the gate
        spec = parse_group_spec(group, obj, self.api.gates, self.api.version)
        return spec.min_count if spec.gang else None

    def _close_instant(self) -> None:
        if self._gangs is not None:
            self._gangs.close_instant(self._instant)
        for group, binds in self._opening.items():
            if not binds:
                continue
            self._checks += 1
            need = self._min_count(group)
            present = len(binds | self._group_bound.get(group, set()))
            if need is not None and present < need:
                raise InvariantViolation(
                    f"t={self._instant:g}s gang {'/'.join(group[1:])} started with {present} bound member(s), "
                    f"below minCount {need}: {sorted(binds)}")
        self._opening = {g: set() for g, members in self._group_bound.items() if not members}

    def _check_preemptions(self) -> None:
        if self.recorder is None:
            return
        events = self.recorder.events
        while self._seen_events < len(events):
            event = events[self._seen_events]
            self._seen_events += 1
            if event.kind != "Pod" or event.event != "Preempted" or not event.message:
                continue
            match = PREEMPTOR.match(event.message)
            if match is None:
                raise InvariantViolation(f"unreadable preemption message {event.message!r}")
            victim = self.api.get("", "Pod", event.namespace, event.name)
            if victim is None:
                continue
            preemptor = self._priority_of(match.group("ns"), match.group("name"), match.group("kind"))
            victim_priority = self._victim_priority(victim)
            self._checks += 1
            if preemptor is not None and victim_priority is not None and not preemptor > victim_priority:
                raise InvariantViolation(
                    f"t={event.time:g}s {event.namespace}/{event.name} (priority {victim_priority}) preempted by "
                    f"{match.group('ns')}/{match.group('name')} (priority {preemptor}), not lower priority")

    def _priority_of(self, namespace: str, name: str, kind: str | None) -> int | None:
        if not kind:
            pod = self.api.get("", "Pod", namespace, name)
            return _priority(pod) if pod is not None else None
        obj = self.api.get("scheduling.k8s.io", kind, namespace, name)
        value = mapping(obj.get("spec")).get("priority") if obj is not None else None
        if isinstance(value, int):
            return value
        if kind != "PodGroup":
            return None  # a CompositePodGroup without spec.priority: nothing to compare with
        members = [p for p in self.api.list("", "Pod", namespace)
                   if group_key_of(p, self.api.version, self.api.gates) == (POD_GROUP, namespace, name)]
        return max((_priority(p) or 0 for p in members), default=None)

    def _victim_priority(self, pod: dict[str, Any]) -> int | None:
        own = _priority(pod)
        group = group_key_of(pod, self.api.version, self.api.gates)
        if group is not None and group[0] == POD_GROUP:
            obj = self.api.get("scheduling.k8s.io", "PodGroup", group[1], group[2])
            value = mapping(obj.get("spec")).get("priority") if obj is not None else None
            if isinstance(value, int) and own is not None:
                return min(own, value)
        return own

    def finish(self) -> int:
        """Close the last instant and check the end-of-run rules; returns the number of checks executed."""
        self._close_instant()
        self._workloads.finish()
        return self.checks


def _priority(pod: dict[str, Any]) -> int | None:
    value = mapping(pod.get("spec")).get("priority")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


__all__ = ["InvariantChecker", "InvariantViolation", "object_group_key"]
