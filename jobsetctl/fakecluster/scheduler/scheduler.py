"""The fake kube-scheduler: a controller of the fake cluster (loaded by :mod:`..cluster` as ``Scheduler``).

Event handling (``keys_for``) is the scheduler's informer: it keeps the cache (:mod:`.snapshot`), the
group registry (:mod:`.groups`) and the queue (:mod:`.queue`) up to date, and asks for a reconcile
whenever there may be work. ``reconcile`` runs scheduling cycles until nothing is ready at the current
virtual instant (a cycle takes no virtual time) and returns when to wake next (backoff expiry, Permit
deadline, the unschedulable leftover flush).

One process serves several profiles, like a multi-profile kube-scheduler sharing one cache:
``default-scheduler`` and ``scheduler-plugins-scheduler`` (in-tree plugins, plus Coscheduling for pods
with the ``scheduling.x-k8s.io/pod-group`` label) and ``volcano``. Pods naming any other scheduler are
left alone (they stay Pending), as a real cluster without that scheduler would leave them.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Iterable
from typing import Any

from jobsetctl.fakecluster.apiserver import WatchEvent, WatchType
from jobsetctl.fakecluster.manager import Controller, Manager
from jobsetctl.fakecluster.scheduler.actuator import Actuator
from jobsetctl.fakecluster.scheduler.framework import Framework
from jobsetctl.fakecluster.scheduler.groups import (
    COSCHED,
    GROUP_API_GROUPS,
    VOLCANO,
    GroupKey,
    GroupRecord,
    GroupRegistry,
    group_key_of,
    object_group_key,
)
from jobsetctl.fakecluster.scheduler.interface import ClusterEvent, CycleState, EventDetail, NodeView
from jobsetctl.fakecluster.scheduler.podcycle import PodCycle
from jobsetctl.fakecluster.scheduler.podinfo import PodInfo, build_pod_info, is_terminal, mapping
from jobsetctl.fakecluster.scheduler.profiles import build_profiles
from jobsetctl.fakecluster.scheduler.queue import UNSCHEDULABLE, QueuedItem, SchedulingQueue
from jobsetctl.fakecluster.scheduler.snapshot import Snapshot
from jobsetctl.kube.featuregates import FeatureGates
from jobsetctl.kube.priority import resolve_priority
from jobsetctl.kube.versions import KubeVersion

#: Watch events ask for a run with REQUEST_KEY; the run itself (RUN_KEY) is a timer at the same instant,
#: so it starts only once every controller has settled (timers fire after the work queue drains).
REQUEST_KEY = "schedule-request"
RUN_KEY = "schedule"
DEFAULT_PROFILES = ("default-scheduler", "scheduler-plugins-scheduler")
VOLCANO_PROFILE = "volcano"
#: Scheduling attempts of one queued item allowed at one virtual instant before we call it a livelock
#: and freeze it until something changes (:meth:`SchedulingQueue.freeze`).
MAX_ATTEMPTS_PER_INSTANT = 50


class Scheduler(Controller):
    name = "scheduler"

    def __init__(self, options: Any = None) -> None:
        super().__init__(options)
        extra = getattr(options, "extra", None) or {}
        self.config: dict[str, Any] = dict(extra.get("scheduler") or {})

    # ---- wiring ------------------------------------------------------------------------------------
    def setup(self, manager: Manager) -> None:
        super().setup(manager)
        self.version: KubeVersion = getattr(self.options, "version", None) or self.api.version
        self.gates: FeatureGates = getattr(self.options, "gates", None) or self.api.gates
        self.snapshot = Snapshot()
        self.groups = GroupRegistry(self.version, self.gates)
        self.actuator = Actuator(self)
        self.queue = SchedulingQueue(pop_from_backoff=bool(self.config.get("popFromBackoffQ", True)))
        #: Queueing hints and the room gate (:mod:`.requeue`). Off (``queueingHints: false``, for tests): an
        #: event moves every pooled item one of whose rejecting plugins registered for it, as upstream with
        #: the SchedulerQueueingHints gate off: the reference the hinted queue is compared with.
        self.hints = bool(self.config.get("queueingHints", True))
        #: Preemption's what-ifs answered from the nodes' sums where that is exact (per-pod victim search,
        #: the victim-aware node choice, the reprieve's affected placements). Off (``preemptionShortcuts:
        #: false``, for tests): every what-if moves pods out of the snapshot and back, the reference the
        #: shortcuts are compared with.
        self.preemption_shortcuts = bool(self.config.get("preemptionShortcuts", True))
        self.pods: dict[str, PodInfo] = {}
        self._seq = 0
        #: (time, pod or group, outcome) of every scheduling attempt, for tests and the timeline.
        self.attempt_log: list[tuple[float, str, str]] = []
        self.profiles = build_profiles(self)
        #: One plugin per name for the queueing hints (profiles share plugin kinds and their hints).
        self._plugins_by_name: dict[str, Any] = {}
        for framework in self.profiles.values():
            for plugin in framework.plugins:
                self._plugins_by_name.setdefault(plugin.name, plugin)
        self.default_framework: Framework = self.profiles[DEFAULT_PROFILES[0]]
        self.pod_cycle = PodCycle(self)
        from jobsetctl.fakecluster.scheduler.groupcycle import GroupCycle

        self.group_cycle = GroupCycle(self)
        self.queue.sort_key = self.pod_cycle.sort_key
        from jobsetctl.fakecluster.scheduler.requeue import Requeue

        self.requeue = Requeue(self)
        self._namespace_labels: dict[str, dict[str, str]] = {}
        # Timestamps repeat a lot (every pod created at one instant): parse each text once.
        self._seconds_of = functools.lru_cache(maxsize=4096)(self.clock.seconds_of)
        # Objects that existed before the scheduler started: nodes first, then groups, then pods.
        existing: list[dict[str, Any]] = sorted(self.api.all_objects(), key=lambda o: {"Node": 0, "Pod": 2}.get(str(o.get("kind")), 1))
        for obj in existing:
            self._handle(WatchEvent(WatchType.ADDED, _key_of(obj), obj))

    @property
    def group_records(self) -> dict[GroupKey, GroupRecord]:
        """Per group: quorum and admission times, chosen domains, why it waits (issue #5)."""
        return self.groups.records

    def framework_for(self, pod: PodInfo) -> Framework:
        return self.profiles.get(pod.scheduler_name) or self.default_framework

    def responsible_for(self, pod: PodInfo) -> bool:
        return pod.scheduler_name in self.profiles

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        labels = self._namespace_labels.get(namespace)
        if labels is None:
            obj = self.api.get("", "Namespace", "", namespace)
            md = obj.get("metadata") if isinstance(obj, dict) else None
            raw = md.get("labels") if isinstance(md, dict) else None
            labels = {k: v for k, v in raw.items() if isinstance(v, str)} if isinstance(raw, dict) else {}
            labels.setdefault("kubernetes.io/metadata.name", namespace)
            self._namespace_labels[namespace] = labels
        return labels

    def activate(self, pods: list[PodInfo]) -> None:
        for pod in pods:
            self.queue.activate(pod.uid, self.clock.now)
        self.manager.enqueue(self, REQUEST_KEY)

    def _resolve_priority(self, class_name: str | None) -> tuple[int, str]:
        resolution = resolve_priority(class_name, self.api)
        return resolution.priority, resolution.preemption_policy

    # ---- informer ----------------------------------------------------------------------------------
    def keys_for(self, event: WatchEvent) -> Iterable[Hashable]:
        return (REQUEST_KEY,) if self._handle(event) else ()

    def _handle(self, event: WatchEvent) -> bool:
        # Pods that enter activeQ because of this event form one batch (see ``SchedulingQueue.ungate``).
        self.queue.release_batch += 1
        group, kind = event.key[0], event.key[1]
        if group == "" and kind == "Pod":
            return self._on_pod(event)
        if group == "" and kind == "Node":
            return self._on_node(event)
        if group == "" and kind == "Namespace":
            self._namespace_labels.pop(event.key[3], None)
            return False
        if group == VOLCANO and kind == "Queue":
            return self.group_cycle.on_volcano_queue()
        if group not in GROUP_API_GROUPS:
            # No group object (the key's group is read from the same apiVersion as object_group_key reads
            # it): most events of a Kueue run are of its Workloads, which need no look at the object.
            return False
        key = object_group_key(event.obj)
        if key is not None:
            return self.group_cycle.on_group_object(event, key)
        return False

    def _on_node(self, event: WatchEvent) -> bool:
        if event.type == WatchType.DELETED:
            node = self.snapshot.remove_node(event.key[3])
            if node is not None:
                for pod in list(node.nominated.values()):
                    self.snapshot.nominate(pod, None)
            return node is not None
        known = self.snapshot.nodes.get(event.key[3])
        old = NodeView.of(known) if known is not None and self.queue.pool else None
        node, added, changed = self.snapshot.upsert_node(event.obj)
        if added or changed:
            detail = EventDetail(old_node=old, new_node=NodeView.of(node)) if self.queue.pool else None
            self.move(ClusterEvent.NODE_ADD if added else ClusterEvent.NODE_UPDATE, detail=detail)
            return True
        return False

    def _new_pod_info(self, obj: dict[str, Any]) -> PodInfo:
        self._seq += 1
        info = build_pod_info(obj, self._seq, self._seconds_of, self._resolve_priority)
        info.group = group_key_of(obj, self.version, self.gates)
        return info

    def _on_pod(self, event: WatchEvent) -> bool:
        obj = event.obj
        md = mapping(obj.get("metadata"))
        uid = str(md.get("uid") or "")
        known = self.pods.get(uid)
        if known is not None and known.group is not None and known.group[0] == COSCHED:
            self.group_cycle.cosched_member_changed(known)
        if known is not None and event.type == WatchType.MODIFIED and known.uid in self.snapshot.pods and \
                event.old is None and known.node_name == mapping(obj.get("spec")).get("nodeName") and \
                not is_terminal(obj) and not mapping(obj.get("metadata")).get("deletionTimestamp") and \
                mapping(obj.get("metadata")).get("labels", {}) == known.labels:
            return False  # a status write on a running pod (ours at bind, the kubelet's): nothing to do
        if event.type == WatchType.DELETED or (known is not None and is_terminal(obj)):
            return self._pod_gone(known) if known is not None else False
        if known is None:
            if is_terminal(obj):
                return False
            info = self._new_pod_info(obj)
            self.pods[uid] = info
            self.groups.observe(info)
            if info.node_name:
                self._pod_assigned(info, info.node_name)
                return True
            if self.responsible_for(info):
                gate = self.pod_cycle.enqueue_new(info)
                if info.group is not None:
                    self.group_cycle.member_added(info, gate)
                return True
            return False
        return self._pod_updated(known, obj, event)

    def _pod_updated(self, known: PodInfo, obj: dict[str, Any], event: WatchEvent) -> bool:
        spec = mapping(obj.get("spec"))
        md = mapping(obj.get("metadata"))
        node_name = spec.get("nodeName") or None
        work = False
        waiting = self.queue.pool.get(known.uid)
        before = EventDetail(old_labels=dict(known.labels), old_static=known.static) if waiting is not None else None
        if md.get("deletionTimestamp") and not known.terminating:
            known.terminating = True
            work = True
        labels = mapping(md.get("labels"))
        if labels != known.labels:
            if known.uid in self.snapshot.pods:
                old_labels = dict(known.labels)
                self.snapshot.relabel_pod(known, dict(labels))
                self.move(ClusterEvent.ASSIGNED_POD_UPDATE, known, detail=EventDetail(old_labels=old_labels))
            else:
                known.labels = dict(labels)
            work = True
        if node_name and known.uid not in self.snapshot.pods:
            # Bound by someone else (or our assumed pod was forgotten): take the node's word for it.
            self._pod_assigned(known, node_name)
            return True
        if node_name and self.snapshot.pods.get(known.uid) is known and known.node_name != node_name:
            self.snapshot.remove_pod(known)
            self._pod_assigned(known, node_name)
            return True
        if not node_name and event.old is not None and known.uid not in self.snapshot.pods:
            # A spec update of a pending pod (scheduling gates removed, nodeSelector of a gated pod...).
            work = self.pod_cycle.respec(known, obj) or work
        # ``PriorityQueue.Update`` of an unschedulable pod: its own change may help it (the hints of
        # UpdatePodToleration, UpdatePodLabel).
        if waiting is not None and before is not None and waiting.where == UNSCHEDULABLE and (
                known.labels != before.old_labels or known.static is not before.old_static) and \
                self._interested(waiting, ClusterEvent.UNSCHEDULED_POD_UPDATE, known, None, before):
            self.queue.release(waiting, self.clock.now)
            work = True
        return work

    def _pod_assigned(self, info: PodInfo, node_name: str) -> None:
        self.queue.remove(info.uid)
        self.pod_cycle.forget_waiting(info)
        if self.snapshot.add_pod(info, node_name):
            self.move(ClusterEvent.ASSIGNED_POD_ADD, info)
        if info.started is None:
            info.started = self.clock.now
        self.snapshot.nominate(info, None)
        if info.group is not None:
            self.group_cycle.member_bound(info)

    def _pod_gone(self, info: PodInfo) -> bool:
        self.pods.pop(info.uid, None)
        self.queue.remove(info.uid)
        self.pod_cycle.forget_waiting(info)
        self.actuator.forget_pod(info.uid)
        was_on_node = self.snapshot.remove_pod(info)
        was_nominated = info.uid in self.snapshot.nominated_on
        self.snapshot.nominate(info, None)
        if info.group is not None:
            self.group_cycle.member_gone(info)
        if was_on_node:
            self.move(ClusterEvent.ASSIGNED_POD_DELETE, info)
        elif was_nominated:
            # eventhandlers.go deletePodFromSchedulingQueue: a deleted pod that had a nominated node gave back
            # the room it held for pods of lower or equal priority (getLEPriorityPreCheck); fit.go's hint
            # says Queue for it (only an unscheduled pod with no nomination is QueueSkip).
            self.move(ClusterEvent.ASSIGNED_POD_DELETE, info, max_priority=info.priority)
        return True

    # ---- queue moves -------------------------------------------------------------------------------
    def move(self, event: ClusterEvent, subject: PodInfo | None = None, group: GroupKey | None = None,
             detail: EventDetail | None = None, max_priority: int | None = None) -> None:
        """A cluster event: unschedulable items whose rejecting plugins' queueing hints say it may help
        them leave the pool (``MoveAllToActiveOrBackoffQueue`` with ``isPodWorthRequeuing``). ``subject``
        is the pod of a pod event, ``group`` the group object of a PodGroup event, ``detail`` the old (and
        new) object of an update; ``max_priority``: only items of that priority or lower (upstream's
        PreEnqueueCheck of a move)."""
        if not self.queue.pool:
            self.queue.move_request_cycle = self.queue.scheduling_cycle
            return
        candidates = self.requeue.candidates(event, subject, group) if self.hints else None
        if max_priority is None:
            self.queue.move(event, lambda item, ev: self._interested(item, ev, subject, group, detail),
                            self.clock.now, candidates)
        else:
            self.queue.move(event, lambda item, ev: item.priority <= max_priority and self._interested(
                item, ev, subject, group, detail), self.clock.now, candidates)

    def _interested(self, item: QueuedItem, event: ClusterEvent, subject: PodInfo | None,
                    group: GroupKey | None, detail: EventDetail | None = None) -> bool:
        """``isEntityWorthRequeuing``: a plugin that rejected the item registered for the event and its
        hint (``QueueingHintFn``) says Queue for the item's pod, or for any pod of a queued group."""
        if not item.unschedulable_plugins:
            return True
        targets: list[PodInfo] | None = None
        for name in item.unschedulable_plugins:
            plugin = self.plugin_named(name)
            if plugin is None or event not in plugin.events:
                continue
            hint = getattr(plugin, "hint", None) if self.hints else None
            if hint is None:
                return True
            if targets is None:
                # The symmetric anti-affinity rule reads each waiting pod's labels: then every pod is asked.
                targets = self._hint_targets(item, every_pod=subject is not None and bool(subject.anti_affinity))
            if not targets or any(hint(target, event, subject, group, detail) for target in targets):
                return True
        return False

    def plugin_named(self, name: str) -> Any:
        return self._plugins_by_name.get(name)

    def _hint_targets(self, item: QueuedItem, *, every_pod: bool = False) -> list[PodInfo]:
        """The pods whose hints decide for an item: the pod, or one pod of each kind a group entry holds
        (hints read a pod's group, namespace, affinity terms and static signature: requests, tolerations,
        node affinity; its labels only for a deleted pod's anti-affinity, ``every_pod``)."""
        if not isinstance(item.payload, tuple):
            pod = self.pods.get(item.key)
            return [pod] if pod is not None else []
        held = self.group_cycle.held.get(item.payload, {})
        if every_pod:
            return [pod for uid in held if (pod := self.pods.get(uid)) is not None]
        kinds: dict[tuple[Any, ...], PodInfo] = {}
        for uid in held:
            pod = self.pods.get(uid)
            if pod is not None:
                kinds.setdefault((pod.group, pod.namespace, pod.affinity, pod.anti_affinity, pod.static.key), pod)
        return list(kinds.values())

    # ---- the loop ----------------------------------------------------------------------------------
    def reconcile(self, key: Hashable) -> float | None:
        if key == REQUEST_KEY:
            # Scheduling waits until the other controllers have reacted to this instant's events (victims
            # killed, pods completed together): a real scheduler sees such a burst together, and running in
            # between would only record half-way attempts.
            self.manager.enqueue_after(self, RUN_KEY, 0.0)
            return None
        now = self.clock.now
        attempts: dict[Any, int] = {}
        while True:
            self.queue.flush_backoff(now)
            self.queue.flush_unschedulable(now, self.snapshot.change_counter)
            self.pod_cycle.expire_waiting(now)
            self.requeue.release(now)
            item = self.queue.pop(now)
            if item is None:
                break
            attempts[item.key] = attempts.get(item.key, 0) + 1
            if attempts[item.key] > MAX_ATTEMPTS_PER_INSTANT:
                # A livelock (e.g. coscheduling's PostFilter rejecting the siblings waiting at Permit,
                # which come straight back from backoffQ): the item keeps the status of its last attempt
                # and waits for the next change, instead of ending the run with an internal error.
                self.queue.freeze(item, now, self.snapshot.change_counter)
                self.log_attempt(str(item.key), "livelock")
                continue
            self._schedule(item)
            self.pod_cycle.flush_rejections()
        wake = self._next_wake()
        return None if wake is None else max(wake - now, 0.0)

    def _schedule(self, item: QueuedItem) -> None:
        if isinstance(item.payload, tuple):  # a queued pod group (1.37)
            self.group_cycle.run_group_entry(item)
            return
        pod = self.pods.get(item.key)
        if pod is None:
            self.queue.remove(item.key)
            return
        if pod.group is not None and self.group_cycle.handles(pod):
            self.group_cycle.run_for_pod(item, pod)
            return
        self.pod_cycle.schedule_one(item, pod)

    def _next_wake(self) -> float | None:
        times = [t for t in (self.queue.next_wake(self.snapshot.change_counter), self.pod_cycle.next_deadline())
                 if t is not None]
        return min(times) if times else None

    # ---- helpers for plugins and cycles ------------------------------------------------------------
    def log_attempt(self, subject: str, outcome: str) -> None:
        self.attempt_log.append((self.clock.now, subject, outcome))

    def after_pod_preemption(self, preemptor: PodInfo, victims: list[PodInfo]) -> None:
        """Group bookkeeping after per-pod preemption (victim groups lose their Scheduled state)."""
        if preemptor.group is not None:
            self.groups.state(preemptor.group).preempted_in_cycle = self.queue.scheduling_cycle
        self.group_cycle.victims_evicted(victims, f"pod {preemptor.key}")

    def fail_pod(self, item: QueuedItem, pod: PodInfo, message: str, plugins: Iterable[str], *,
                 error: bool = False) -> None:
        self.actuator.fail(pod, message, error=error)
        self.queue.requeue(item, self.clock.now, frozenset(plugins), error=error,
                           change_counter=self.snapshot.change_counter)
        self.log_attempt(pod.key, "error" if error else "unschedulable")

    def new_state(self, pod: PodInfo) -> CycleState:
        return CycleState(pod)



def _key_of(obj: dict[str, Any]) -> tuple[str, str, str, str]:
    from jobsetctl.fakecluster.apiserver import key_of

    return key_of(obj)


__all__ = ["Scheduler"]
