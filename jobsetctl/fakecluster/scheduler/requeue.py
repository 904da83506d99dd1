"""Which waiting items a cluster event may help, found without looking at every waiting item (issue 12).

kube-scheduler asks the queueing hints of the plugins that rejected each unschedulable pod
(``isPodWorthRequeuing``, pkg/scheduler/backend/queue/scheduling_queue.go; a queued pod group moves when
any of its pods is worth it, ``isEntityWorthRequeuing``). A contended day has thousands of gangs
waiting and tens of thousands of events, so asking every one of them at every event costs more than the
scheduling itself. Two indexes keep the answer the same and the work proportional to what can move:

* **by event**: a pooled item is listed under each event some plugin that rejected it registered for
  (``EventsToRegister``); an event looks at its list only. The gang plugin's hints move a group only for
  a pod or a group of its own hierarchy (gangscheduling.go: ``isSchedulableAfterPodAdded``,
  ``...PodGroupAdded``, ``...PodGroupUpdated``), so for those events an item is listed under its
  hierarchy's root and only that root's items are asked (without the CompositePodGroup gate, where a
  hierarchy cannot change under a waiting group).

* **by room** (:class:`FitClass`): NodeResourcesFit's hint says Queue for every deletion of a bound pod
  and every new or larger node (fit.go ``isSchedulableAfterPodEvent``). Upstream then moves every gang
  that waits for room, and all but the first few fail again. Here an item whose last failure was
  *only* for room — one pod signature, no inter-pod affinity anywhere, no nominated pods, no member
  bound yet — waits in a class (signature, topology key, minCount, priority); such an event marks the
  class, and before the next scheduling cycle the class releases, in queue order, as many of its items
  as there are places for a whole gang: ``sum over domains of floor(copies that fit / minCount)``
  (one domain, the cluster, without a topology constraint), minus the class's items already on their
  way (in activeQ, backoffQ or in flight). Copies that fit are kept per node and summed per topology
  domain as pods come and go (:class:`CapacityIndex`), so the answer costs no node scan. This is our
  modelling, not upstream's: a gang upstream would retry and fail is not retried, so the attempts and
  ``Unschedulable`` events of gangs that wait for room are fewer; every gang that upstream's retries
  would place is released (the count is exact for identical pods: any node that holds one copy takes
  it). A class whose gangs may preempt (a lower-priority pod is bound, preemption allowed) releases all
  its items, as upstream would: their retry may find victims.

The five-minute leftover flush (``podMaxInUnschedulablePodsDuration`` and, for groups,
``podGroupMaxInUnschedulablePodsDuration``, both 5 min) moves every pooled item whatever its class.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jobsetctl.fakecluster.scheduler.groups import POD_GROUP, WORKLOAD_GROUP, GroupKey
from jobsetctl.fakecluster.scheduler.interface import ClusterEvent, CycleState
from jobsetctl.fakecluster.scheduler.podinfo import PodInfo
from jobsetctl.fakecluster.scheduler.queue import ACTIVE, BACKOFF, IN_FLIGHT, UNSCHEDULABLE, QueuedItem
from jobsetctl.fakecluster.scheduler.snapshot import NodeInfo

if TYPE_CHECKING:
    from jobsetctl.fakecluster.scheduler.scheduler import Scheduler

#: Events that free room (NodeResourcesFit registers them): the class gate answers them.
ROOM_EVENTS = frozenset({ClusterEvent.ASSIGNED_POD_DELETE, ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE})
_ALL_EVENTS = tuple(event for event in ClusterEvent if event is not ClusterEvent.FLUSH)
#: Scope key of items whose group-scoped hint cannot be narrowed (no group known): asked for every event.
_ANY = ("*",)


@dataclass(frozen=True, slots=True)
class FitClass:
    """What a waiting item lacks: room for ``need`` pods of one signature in one domain of ``topology``
    (the cluster when None), at ``priority``."""

    signature: str
    topology: str | None
    need: int
    priority: int
    #: The item may preempt lower-priority pods (preemption on, policy not Never).
    can_preempt: bool


@dataclass(slots=True)
class _Capacity:
    """Copies of one pod signature that fit, per node, and their sums."""

    example: PodInfo
    generation: int = -1
    passing: frozenset[str] = frozenset()
    fit: dict[str, int] = field(default_factory=dict)
    total: int = 0
    #: topology key -> label value -> copies that fit in that domain.
    domains: dict[str, dict[str, int]] = field(default_factory=dict)


class CapacityIndex:
    """Free room per topology domain for the signatures of waiting items, kept up to date as pods land on
    and leave nodes; rebuilt when nodes change (their labels, taints, capacity)."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.s = scheduler
        self._signatures: dict[str, _Capacity] = {}
        scheduler.snapshot.pod_listeners.append(self._on_pod)

    def places(self, cls: FitClass, example: PodInfo) -> int:
        """How many whole gangs of ``cls`` fit now, each in one domain."""
        capacity = self._current(cls.signature, example)
        if cls.topology is None:
            return capacity.total // cls.need
        domains = capacity.domains.get(cls.topology)
        if domains is None:
            domains = capacity.domains[cls.topology] = self._sum_domains(capacity, cls.topology)
        return sum(copies // cls.need for copies in domains.values())

    def _current(self, signature: str, example: PodInfo) -> _Capacity:
        capacity = self._signatures.get(signature)
        if capacity is None:
            capacity = self._signatures[signature] = _Capacity(example)
        snapshot = self.s.snapshot
        if capacity.generation != snapshot.spec_generation:
            framework = self.s.framework_for(capacity.example)
            capacity.generation = snapshot.spec_generation
            capacity.passing = framework.static_result(CycleState(capacity.example)).passing_names
            fit_count = framework.fit.fit_count
            capacity.fit = {name: fit_count(capacity.example, snapshot.nodes[name]) for name in capacity.passing
                            if name in snapshot.nodes}
            capacity.total = sum(capacity.fit.values())
            capacity.domains = {key: self._sum_domains(capacity, key) for key in capacity.domains}
            if snapshot.dry_runs:
                capacity.generation = -1  # made from a what-if: recomputed when next asked
        return capacity

    def _sum_domains(self, capacity: _Capacity, key: str) -> dict[str, int]:
        nodes = self.s.snapshot.nodes
        sums: dict[str, int] = {}
        for name, copies in capacity.fit.items():
            value = nodes[name].labels.get(key)
            if value is not None:
                sums[value] = sums.get(value, 0) + copies
        return sums

    def _on_pod(self, _pod: PodInfo, node: NodeInfo, _delta: int) -> None:
        if self.s.snapshot.dry_runs:
            return  # a dry run puts back every pod it moves (:meth:`Snapshot.dry_run`)
        generation = self.s.snapshot.spec_generation
        for capacity in self._signatures.values():
            if capacity.generation != generation or node.name not in capacity.passing:
                continue
            copies = self.s.framework_for(capacity.example).fit.fit_count(capacity.example, node)
            change = copies - capacity.fit.get(node.name, 0)
            if not change:
                continue
            capacity.fit[node.name] = copies
            capacity.total += change
            for key, sums in capacity.domains.items():
                value = node.labels.get(key)
                if value is not None:
                    sums[value] = sums.get(value, 0) + change


class Requeue:
    """The two indexes of the module docstring, fed by the queue's pool hook."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.s = scheduler
        self.capacity = CapacityIndex(scheduler)
        #: event -> pooled items that any event of that kind may help (key -> item).
        self._general: dict[ClusterEvent, dict[Any, QueuedItem]] = {event: {} for event in _ALL_EVENTS}
        #: event -> hierarchy scope -> pooled items only an event of that hierarchy may help.
        self._scoped: dict[ClusterEvent, dict[Hashable, dict[Any, QueuedItem]]] = {event: {} for event in _ALL_EVENTS}
        #: item key -> where it is listed, to unlist it.
        self._listed: dict[Any, list[tuple[ClusterEvent, Hashable | None]]] = {}
        self._classes: dict[FitClass, dict[Any, QueuedItem]] = {}
        self._examples: dict[FitClass, PodInfo] = {}
        self._marked: set[FitClass] = set()
        self._interest: dict[frozenset[str], dict[ClusterEvent, bool]] = {}
        scheduler.queue.on_pool = self._on_pool

    # ---- the event index --------------------------------------------------------------------------
    def _scopes_on(self) -> bool:
        """Hierarchies are fixed while a group waits unless CompositePodGroups can appear above it."""
        return not self.s.group_cycle.trees.enabled()

    def _interest_of(self, plugins: frozenset[str]) -> dict[ClusterEvent, bool]:
        """Event -> whether only group-scoped hints registered for it (else any such event may help)."""
        found = self._interest.get(plugins)
        if found is None:
            found = {}
            if not plugins:
                found = dict.fromkeys(_ALL_EVENTS, False)  # no rejecting plugin: every event may help
            for name in sorted(plugins):
                plugin = self.s.plugin_named(name)
                if plugin is None:
                    continue
                narrow: frozenset[ClusterEvent] = getattr(plugin, "scoped_events", frozenset())
                for event in plugin.events:
                    found[event] = found.get(event, True) and event in narrow
            self._interest[plugins] = found
        return found

    def scope_of_item(self, item: QueuedItem) -> Hashable:
        if isinstance(item.payload, tuple):
            root: GroupKey = item.payload
            return root
        pod = self.s.pods.get(item.key)
        return self.scope_of_group(pod.group if pod is not None else None)

    def scope_of_group(self, group: GroupKey | None) -> Hashable:
        if group is None:
            return _ANY
        if group[0] == WORKLOAD_GROUP:
            return group[:3]  # a 1.35 Workload object answers for every gang it defines
        if group[0] == POD_GROUP:
            return self.s.group_cycle.entry_key(group)
        return group

    def _on_pool(self, item: QueuedItem, entered: bool) -> None:
        if not entered:
            for event, where in self._listed.pop(item.key, ()):
                if where is None:
                    self._general[event].pop(item.key, None)
                else:
                    listed = self._scoped[event].get(where)
                    if listed is not None:
                        listed.pop(item.key, None)
                        if not listed:
                            del self._scoped[event][where]
            return
        places: list[tuple[ClusterEvent, Hashable | None]] = []
        scopes_on = self._scopes_on()
        scope: Hashable | None = None
        for event, scoped in self._interest_of(item.unschedulable_plugins).items():
            if event in ROOM_EVENTS and item.fit_class is not None:
                continue  # the class gate answers room events
            if scoped and scopes_on:
                if scope is None:
                    scope = self.scope_of_item(item)
                self._scoped[event].setdefault(scope, {})[item.key] = item
                places.append((event, scope))
            else:
                self._general[event][item.key] = item
                places.append((event, None))
        self._listed[item.key] = places

    def candidates(self, event: ClusterEvent, subject: PodInfo | None, group: GroupKey | None) -> list[QueuedItem]:
        """The pooled items ``event`` may help; marks the classes it may help."""
        found = list(self._general[event].values())
        scoped = self._scoped[event]
        if scoped:
            scope: Hashable | None = None
            if subject is not None and event in (ClusterEvent.UNSCHEDULED_POD_ADD, ClusterEvent.ASSIGNED_POD_ADD):
                scope = self.scope_of_group(subject.group)
            elif group is not None and event in (ClusterEvent.GROUP_ADD, ClusterEvent.GROUP_UPDATE):
                scope = self.scope_of_group(group)
            if scope is None or scope == _ANY:
                found.extend(item for listed in scoped.values() for item in listed.values())
            else:
                found.extend(scoped.get(scope, {}).values())
                found.extend(scoped.get(_ANY, {}).values())
        if event in ROOM_EVENTS and self._classes:
            if self.gate_holds():
                self._marked.update(self._classes)
            else:
                found.extend(item for members in self._classes.values() for item in members.values()
                             if item.where == UNSCHEDULABLE and item.fit_class is not None)
        return found

    # ---- the room gate ----------------------------------------------------------------------------
    def gate_holds(self) -> bool:
        """Whether room is what the scheduler's placement counts: no reservations of nominated pods and
        no inter-pod affinity anywhere (either can make a copy that fits on paper not fit)."""
        snapshot = self.s.snapshot
        return self.s.hints and not snapshot.nominated and not snapshot.anti_affinity_pods

    def classify(self, item: QueuedItem, cls: FitClass | None, example: PodInfo | None) -> None:
        """Record what ``item`` waits for (before it goes back to the pool)."""
        item.fit_class = cls
        if cls is None or example is None:
            return
        self._classes.setdefault(cls, {})[item.key] = item
        self._examples.setdefault(cls, example)

    def release(self, now: float) -> None:
        """Before a scheduling cycle: let out of the pool the class items that now have a place."""
        if not self._marked:
            return
        marked, self._marked = self._marked, set()
        holds = self.gate_holds()
        queue = self.s.queue
        for cls in sorted(marked, key=lambda c: (c.signature, c.topology or "", c.need, c.priority, c.can_preempt)):
            members = self._classes.get(cls)
            if not members:
                continue
            waiting: list[QueuedItem] = []
            on_the_way = 0
            for key, item in list(members.items()):
                if item.fit_class != cls or queue.get(key) is not item:
                    del members[key]
                elif item.where == UNSCHEDULABLE:
                    if item.frozen_at != now:
                        waiting.append(item)
                elif item.where in (ACTIVE, BACKOFF, IN_FLIGHT):
                    on_the_way += 1
            if not members:
                self._classes.pop(cls, None)
                self._examples.pop(cls, None)
                continue
            if not waiting:
                continue
            if not holds or (cls.can_preempt and self._victims_below(cls.priority)):
                chosen = waiting
            else:
                free = self.capacity.places(cls, self._examples[cls]) - on_the_way
                if free <= 0:
                    continue
                chosen = sorted(waiting, key=lambda it: self._order(it, now))[:free]
            for item in sorted(chosen, key=lambda it: it.pool_seq):
                queue.release(item, now)

    def _order(self, item: QueuedItem, now: float) -> tuple[Any, ...]:
        """The order the released items would be tried in: those done backing off by the queue's sort
        order first (activeQ), then the others by the end of their backoff (backoffQ)."""
        expiry = item.backoff_expiry()
        if expiry <= now:
            return (0, self.s.queue.sort_key(item), item.pool_seq)
        return (1, expiry, item.pool_seq)

    def _victims_below(self, priority: int) -> bool:
        lowest = self.s.group_cycle.units.lowest_priority()
        return lowest is not None and lowest < priority
