"""PodGroup (1.36) and workload (1.37) scheduling cycles, and Volcano's all-or-nothing allocation
(scheduling.md §1.3, §1.4, §1.7, §1.8, §4.2; kubernetes ``schedule_one_podgroup.go``).

1.36 (``podgroup cycle``): popping any member pulls every queued member (``PopSpecificPod``); they are
placed against one cache (:mod:`.groupalgorithm`); minCount (assumed + bound) decides: success binds the
placed pods (extras that did not fit stay pending), failure binds nothing and sends everyone back
(PodGroup ``PodGroupScheduled=False/Unschedulable``, message ``pod group is unschedulable``). Without
``WorkloadAwarePreemption`` failing pods preempt one by one inside the cycle; with it the group preempts
as a unit (:mod:`.workloadpreemption`), except a group with a topology constraint ("workload aware
preemption is not supported for pod groups with scheduling constraints").

1.37 (``workload scheduling cycle``): member pods wait in the queue as parts of one group entry
(``QueuedPodGroupInfo``); PlacementFeasible ends a pass as soon as placed + remaining < minCount
(``minCount (N) cannot be satisfied: ...``). Pods that fit bind first (``podGroupCycle``): a feasible
cycle binds what it placed and puts the entry straight back so the rest get their own cycle at once;
workload-aware preemption runs only when the cycle's status is Unschedulable, and its status is appended
to the group's (``pod group preemption: found a placement for podgroup, preempting N victims``). A priority
mismatch between the PodGroup and a member fails the whole group with ``SchedulerError``.

Pods that found a node but whose group did not bind, and pods the pass never reached, carry the group's
status text; pods that found no node carry their own ``0/N nodes are available`` text. The timeline note
of a waiting group (``GroupRecord.waiting``) keeps our own explanation (``gang 2/3 placeable: ...``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jobsetctl.fakecluster.apiserver import WatchEvent, WatchType
from jobsetctl.fakecluster.scheduler import groupstatus, messages
from jobsetctl.fakecluster.scheduler.composite import CompositeTrees
from jobsetctl.fakecluster.scheduler.groupalgorithm import GroupAlgorithm
from jobsetctl.fakecluster.scheduler.groups import (
    COMPOSITE,
    COSCHED,
    POD_GROUP,
    VOLCANO_GROUP,
    WORKLOAD_GROUP,
    GroupKey,
    GroupSpec,
    GroupState,
    gang_gates_on,
    group_cycle_gates_on,
    parse_group_spec,
)
from jobsetctl.fakecluster.scheduler.interface import ClusterEvent, CycleState, Diagnosis, Status
from jobsetctl.fakecluster.scheduler.placement import Placement, Placer
from jobsetctl.fakecluster.scheduler.plugins.volcano import task_of
from jobsetctl.fakecluster.scheduler.podinfo import PodInfo, mapping
from jobsetctl.fakecluster.scheduler.queue import ACTIVE, BACKOFF, GATED, IN_FLIGHT, UNSCHEDULABLE, QueuedItem
from jobsetctl.fakecluster.scheduler.requeue import FitClass
from jobsetctl.fakecluster.scheduler.victims import PODGROUP, Units, VictimUnit
from jobsetctl.fakecluster.scheduler.workloadpreemption import (
    Attempt,
    PreemptionResult,
    WorkloadPreemption,
    wap_enabled,
)
from jobsetctl.kube.versions import KubeVersion

if TYPE_CHECKING:
    from jobsetctl.fakecluster.scheduler.scheduler import Scheduler

MEMBER = "member"
#: ``CycleState.data`` key of a failed pod's cached diagnosis (:meth:`GroupCycle.diagnosis`).
DIAGNOSIS_KEY = "group-cycle-diagnosis"
PRIORITY_MISMATCH = "all pods in a single pod group should match the priority of the pod group"
SCHEDULER_MISMATCH = "all pods in a single pod group should use the same scheduler"
#: ``runWorkloadAwarePreemption`` (1.36) refuses groups with a topology constraint.
TOPOLOGY_NOT_SUPPORTED = "workload aware preemption is not supported for pod groups with scheduling constraints"
ENTRY = "group"
#: Plugins whose cluster events can help a group that failed (pod deletion frees resources, ...).
REQUEUE_PLUGINS = frozenset({"GangScheduling", "NodeResourcesFit", "InterPodAffinity", "NodeAffinity",
                             "TaintToleration", "NodeUnschedulable", "VolcanoGang"})


class GroupCycle:
    def __init__(self, scheduler: Scheduler) -> None:
        self.s = scheduler
        self.placer = Placer(scheduler)
        self.units = Units(scheduler)
        self.preemption = WorkloadPreemption(scheduler)
        self.algorithm = GroupAlgorithm(self)
        self.trees = CompositeTrees(scheduler, self)
        #: 1.37: member pod items held by their group entry, per entry (root) key.
        self.held: dict[GroupKey, dict[str, QueuedItem]] = {}
        #: The entry (root) key that last captured each member pod, by uid.
        self.holder: dict[str, GroupKey] = {}
        scheduler.queue.on_activate = self._capture
        default = scheduler.profiles["default-scheduler"]
        preemption = default.plugin("DefaultPreemption")
        if preemption is not None:
            preemption.unit_of = self._per_pod_unit  # type: ignore[attr-defined]

    # ---- which pods go through here ----------------------------------------------------------------
    def workload_cycle(self) -> bool:
        return self.s.version is KubeVersion.V1_37 and group_cycle_gates_on(self.s.gates, self.s.version)

    def handles(self, pod: PodInfo) -> bool:
        assert pod.group is not None
        if pod.group[0] == VOLCANO_GROUP:
            return True
        return pod.group[0] == POD_GROUP and self.s.version.minor >= 36 and group_cycle_gates_on(self.s.gates, self.s.version)

    def _per_pod_unit(self, pod: PodInfo) -> VictimUnit:
        # 1.37 per-pod preemption takes a victim's unit at its hierarchy's priority (U9); 1.36 does not.
        if self.s.version is KubeVersion.V1_37:
            return self.units.unit_of(pod)
        return VictimUnit([pod], pod.priority)

    def entry_key(self, group: GroupKey) -> GroupKey:
        return self.trees.root_of(group)

    def same_hierarchy(self, pod_group: GroupKey | None, other: GroupKey) -> bool:
        """``areSameHierarchy`` of the gang plugin: the two groups have one root (a 1.35 Workload object
        answers for every gang it defines)."""
        if pod_group is None:
            return False
        if other[0] == WORKLOAD_GROUP and len(other) == 3:
            return pod_group[:3] == other
        return self.entry_key(pod_group) == self.entry_key(other)

    def _capture(self, item: QueuedItem) -> bool:
        """1.37: a member pod entering activeQ is held by its group's entry instead."""
        if item.payload is not None or not self.workload_cycle():
            return False
        pod = self.s.pods.get(item.key)
        if pod is None or pod.group is None or pod.group[0] != POD_GROUP:
            return False
        root = self.entry_key(pod.group)
        self.s.queue.hold(item, MEMBER)
        self.held.setdefault(root, {})[item.key] = item
        self.holder[item.key] = root
        self._ensure_entry(root, item.timestamp)
        return True

    def _ensure_entry(self, root: GroupKey, timestamp: float) -> None:
        queue = self.s.queue
        key = (ENTRY, *root)
        if queue.get(key) is None:
            queue.add(QueuedItem(key, self._entry_priority(root), timestamp, payload=root), gated=False)

    def _entry_priority(self, root: GroupKey) -> int:
        state = self.s.groups.states.get(root)
        spec = self.s.groups.spec(state) if state is not None else None
        if spec is not None and spec.priority is not None:
            return spec.priority
        members = [self.s.pods[uid] for uid in self.held.get(root, {}) if uid in self.s.pods]
        return max((p.priority for p in members), default=0)

    # ---- informer hooks ----------------------------------------------------------------------------
    def on_group_object(self, event: WatchEvent, key: GroupKey) -> bool:
        s = self.s
        created = s.clock.seconds_of(str((event.obj.get("metadata") or {}).get("creationTimestamp") or
                                         s.clock.timestamp()))
        if event.type == WatchType.DELETED:
            s.groups.remove_object(key)
            self.units.group_changed(key)
            return False
        previous_min = None
        if event.type == WatchType.MODIFIED and event.old is not None:
            # The stored dict is shared and may already hold the new values: compare with ``old``.
            old_spec = parse_group_spec(key, event.old, s.gates, s.version)
            previous_min = old_spec.min_count
        states = s.groups.upsert_object(key, event.obj, created)
        self.units.group_changed(key)
        if key[0] in (COSCHED, VOLCANO_GROUP) and event.type == WatchType.ADDED:
            status = mapping(event.obj.get("status"))
            if not status.get("phase"):
                s.actuator.set_phase(event.obj, "Pending")
        if key[0] in (COMPOSITE, POD_GROUP) and self.workload_cycle():
            root = self.entry_key(key)
            if root != key or key[0] == COMPOSITE:
                # Part of a CompositePodGroup tree: the quorum is the root's, so a group appearing or
                # shrinking anywhere in it may release every leaf's pods (podgroup/queueing_test.go).
                states = [s.groups.state(leaf) for leaf in self.trees.leaves(root)]
        pods = [p for st in states for p in st.members.values()]
        if event.type == WatchType.MODIFIED:
            new_min = parse_group_spec(key, event.obj, s.gates, s.version).min_count
            if previous_min is None or new_min >= previous_min:
                return False  # only a minCount (minGroupCount) decrease can help a waiting group (1.37)
            s.move(ClusterEvent.GROUP_UPDATE, group=key)
        else:
            s.move(ClusterEvent.GROUP_ADD, group=key)
        return s.pod_cycle.recheck_gated(pods) or bool(pods)

    def on_volcano_queue(self) -> bool:
        pods = [p for st in self.s.groups.states.values() if st.key[0] == VOLCANO_GROUP for p in st.members.values()]
        return self.s.pod_cycle.recheck_gated(pods)

    def member_added(self, pod: PodInfo, gate: Status | None = None) -> None:
        """A new member of a group. ``gate``: the PreEnqueue status that just queued it (see
        :meth:`PodCycle.enqueue_new`), which answers the group-level check when the group plugin gave it."""
        assert pod.group is not None
        s = self.s
        root = self.entry_key(pod.group) if pod.group[0] == POD_GROUP and self.workload_cycle() else pod.group
        if root != pod.group:
            # A CompositePodGroup tree: the quorum is the root's, so every leaf's gated pods are rechecked.
            pods = [p for leaf in self.trees.leaves(root) for p in s.groups.state(leaf).members.values()]
        else:
            pods = list(s.groups.state(pod.group).members.values())
        if not self._group_gate_closed(pod, gate):
            s.pod_cycle.recheck_gated(pods)
        s.move(ClusterEvent.UNSCHEDULED_POD_ADD, pod)

    def _group_gate_closed(self, pod: PodInfo, gate: Status | None = None) -> bool:
        """Whether the group-level PreEnqueue check (existence, quorum) still holds the new member back:
        then it holds every member back and rechecking them one by one is wasted work. ``gate``: a
        status that plugin just gave the pod (nothing changed since), else the plugin is asked."""
        item = self.s.queue.get(pod.uid)
        if item is None or item.where != GATED:
            return False
        for plugin in self.s.framework_for(pod).profile.pre_enqueue:
            if plugin.name in ("GangScheduling", "VolcanoGang") and plugin.applies_to(pod):
                if gate is not None and gate.plugin == plugin.name:
                    return not gate.ok
                status = plugin.pre_enqueue(pod)
                return status is not None and not status.ok
        return False

    def member_bound(self, pod: PodInfo) -> None:
        state = self.s.groups.observe(pod)
        if state is not None:
            state.assumed.discard(pod.uid)
            state.bound.add(pod.uid)

    def member_gone(self, pod: PodInfo) -> None:
        state = self.s.groups.forget(pod)
        root = self.holder.pop(pod.uid, None)
        if root is not None:
            self.held.get(root, {}).pop(pod.uid, None)
        if state is None:
            return
        phase = (pod.obj.get("status") or {}).get("phase")
        if phase in ("Succeeded", "Failed"):
            state.finished[phase] = state.finished.get(phase, 0) + 1
        spec = self.s.groups.spec(state)
        if state.scheduled and spec is not None and len(state.bound) < (spec.min_count if spec.gang else 1):
            state.scheduled = False
        if state.key[0] == COSCHED:
            self.cosched_member_changed(pod)

    def cosched_member_changed(self, pod: PodInfo) -> None:
        """Coscheduling PodGroup counters follow member pod phases (the PodGroup controller's part)."""
        state = self.s.groups.states.get(pod.group) if pod.group is not None else None
        plugin = self.s.default_framework.plugin("Coscheduling")
        if state is not None and plugin is not None:
            plugin.refresh_counters(state)  # type: ignore[attr-defined]

    def pod_failed(self, pod: PodInfo, diagnosis: Diagnosis) -> None:
        """A member of a pod-by-pod gang (1.35 GangScheduling, Coscheduling) found no node: the group's
        "why it waits" text and ``Unschedulable`` event."""
        if pod.group is None or pod.group[0] not in (WORKLOAD_GROUP, COSCHED):
            return
        state = self.s.groups.states.get(pod.group)
        spec = self.s.groups.spec(state) if state is not None else None
        if state is None or spec is None or not spec.gang or state.scheduled:
            return
        assigned = sum(1 for uid in state.members if uid in self.s.snapshot.pods)
        reason = diagnosis.prefilter_msg or (
            min(diagnosis.reasons.items(), key=lambda kv: (-kv[1], kv[0]))[0] if diagnosis.reasons else "")
        record = self.s.groups.record(pod.group)
        record.placeable, record.min_count = assigned, spec.min_count
        self.s.actuator.group_unschedulable(state, f"gang {assigned}/{spec.min_count} placeable: 1 pods {reason}")

    def victims_evicted(self, victims: list[PodInfo], preemptor: str) -> None:
        """Per-pod preemption took pods of groups: a group that was taken as a unit is Preempted."""
        if self.s.version is not KubeVersion.V1_37:
            return
        seen: set[GroupKey] = set()
        for pod in victims:
            group = self.units.unit_group(pod)
            if group is None or group in seen:
                continue
            seen.add(group)
            self.s.actuator.group_preempted(self.s.groups.state(group), preemptor)

    def tree_quorum(self, namespace: str, cpg: str) -> tuple[str, str | None]:
        return self.trees.quorum(namespace, cpg)

    # ---- cycles ------------------------------------------------------------------------------------
    def run_for_pod(self, item: QueuedItem, pod: PodInfo) -> None:
        """1.36 and Volcano: pull every queued member of the popped pod's group."""
        assert pod.group is not None
        if self.workload_cycle() and pod.group[0] == POD_GROUP:
            self._capture(item)
            return
        s = self.s
        items = {pod.uid: item}
        for uid in s.groups.state(pod.group).members:
            other = s.queue.get(uid)
            # ``PopSpecificPod``: every queued member joins, wherever it waits (active, backoff, unschedulable).
            if uid != pod.uid and other is not None and other.where in (ACTIVE, BACKOFF, UNSCHEDULABLE):
                s.queue.hold(other, IN_FLIGHT)
                other.attempts += 1
                other.cycle = item.cycle
                items[uid] = other
        self.cycle(pod.group, items, entry=None)

    def run_group_entry(self, entry: QueuedItem) -> None:
        root: GroupKey = entry.payload
        held = {uid: it for uid, it in self.held.get(root, {}).items() if it.where == MEMBER and uid in self.s.pods}
        if not held:
            self.s.queue.done(entry.key)
            self.held.pop(root, None)
            return
        if root[0] == COMPOSITE:
            self.trees.cycle(root, held, entry)
            return
        self.cycle(root, held, entry=entry)

    # ---- the PodGroup cycle ------------------------------------------------------------------------
    def cycle(self, key: GroupKey, items: dict[str, QueuedItem], *, entry: QueuedItem | None) -> None:
        s = self.s
        state = s.groups.state(key)
        spec = s.groups.spec(state)
        record = s.groups.record(key)
        record.attempts += 1
        pods = sorted((s.pods[uid] for uid in items), key=lambda p: (-p.priority, p.created, p.seq))
        if spec is None:
            self.fail(state, items, entry, f'pod group "{key[2]}" does not exist')
            return
        if s.version is KubeVersion.V1_37 and spec.priority is not None and any(p.priority != spec.priority for p in pods):
            self.fail(state, items, entry, PRIORITY_MISMATCH, error=True)
            return
        if s.version is KubeVersion.V1_37 and len({p.scheduler_name for p in state.members.values()}) > 1:
            # KEP-4671 beta: every pod of a group is rejected when they name different schedulers (the
            # exact message is not in the snapshot: [UNCONFIRMED] wording).
            self.fail(state, items, entry, SCHEDULER_MISMATCH, error=True)
            return
        bound_nodes = [s.pods[uid].node_name or "" for uid in state.bound if uid in s.pods]
        # Without GangScheduling nothing enforces minCount (see ``group_cycle_gates_on``).
        need = spec.min_count if spec.gang and gang_gates_on(s.gates) else 1
        record.min_count = need
        if key[0] == VOLCANO_GROUP:
            self._volcano_cycle(state, spec, items, entry, pods, bound_nodes, need)
            return
        wap = wap_enabled(s)
        per_pod = s.version is KubeVersion.V1_36 and not wap and not spec.topology_key
        attempt = self.algorithm.attempt(key, spec, pods, bound_nodes, need, per_pod_preemption=per_pod)
        placement = attempt.placement
        record.placeable = placement.count + len(bound_nodes)
        if attempt.feasible and not attempt.waiting:
            self.algorithm.restore(attempt)
            self.succeed(state, items, entry, placement, again=s.version is KubeVersion.V1_37)
            return
        note = self.why(spec, placement, bound_nodes, need)
        diagnoses = self.diagnoses(placement)
        per_pod_text = {uid: messages.fit_error(d) for uid, d in diagnoses.items()}
        per_pod_text.update(attempt.per_pod)
        rejectors = self.rejectors(diagnoses)
        placed_nodes = {pod.uid: node.name for pod, node in placement.placed}
        self.placer.rollback(placement)
        self.algorithm.restore(attempt)
        message = attempt.message
        nominations: dict[str, str | None] = dict(attempt.nominations)
        result: PreemptionResult | None = None
        if attempt.waiting:
            # 1.36: the pods that found a node are nominated to it (``SuggestedHost``).
            nominations.update(placed_nodes)
        else:
            for uid in placed_nodes:
                nominations[uid] = None  # ``clearNominatedNode``
            if wap:
                result = self.group_preemption(key, spec, pods, bound_nodes, need)
                if result is not None:
                    message = self.with_preemption(message, result)
                    if result.ok:
                        nominations = {p.uid: None for p in pods}
                        nominations.update({pod.uid: node for pod, node in result.nominations})
        failed = {pod.uid for pod, _state, _prefilter in placement.failed}
        if entry is not None:
            preempting = attempt.waiting or bool(attempt.nominations) or (result is not None and result.ok)
            room = self.room_class(spec, pods, bound_nodes, need, placement) if not preempting else None
            s.requeue.classify(entry, room, pods[0] if pods else None)
        self.fail(state, items, entry, message, note=note,
                  per_pod={uid: text for uid, text in per_pod_text.items() if uid in failed},
                  nominations=nominations, plugins=rejectors)

    def rejectors(self, diagnoses: dict[str, Diagnosis]) -> frozenset[str]:
        """The plugins that rejected a group whose placement failed: those that rejected its pods, and the
        gang plugin whose PlacementFeasible ended the pass; the events they registered for may help it."""
        found: set[str] = set()
        for diagnosis in diagnoses.values():
            found |= diagnosis.unschedulable_plugins
        return frozenset(found | {"GangScheduling"}) if found else REQUEUE_PLUGINS

    def room_class(self, spec: GroupSpec, pods: list[PodInfo], bound_nodes: list[str], need: int,
                   placement: Placement) -> FitClass | None:
        """What the group waits for when room alone is what it lacked (see :mod:`.requeue`): one pod
        signature, no affinity terms, nothing bound yet, no PreFilter rejection, no nominations."""
        s = self.s
        if bound_nodes or len(pods) < max(need, 1) or not s.requeue.gate_holds():
            return None  # fewer pods than minCount wait for pods, not for room
        first = pods[0]
        if any(p.static is not first.static or p.has_affinity_terms for p in pods):
            return None
        if any(prefilter is not None for _pod, _state, prefilter in placement.failed):
            return None
        priority = spec.priority if spec.priority is not None else max(p.priority for p in pods)
        never = spec.preempt_never or any(p.preempt_never for p in pods)
        can_preempt = wap_enabled(s) and not never and not (s.version is KubeVersion.V1_36 and spec.topology_key)
        return FitClass(first.static.key, spec.topology_key, need, priority, can_preempt)

    def with_preemption(self, message: str, result: PreemptionResult) -> str:
        """The group's status with the preemption status appended (see :mod:`.groupstatus`)."""
        if self.s.version is KubeVersion.V1_37:
            return groupstatus.join(message, groupstatus.PREEMPTION_PREFIX + result.message)
        return message if result.ok else groupstatus.join(message, result.message)

    def group_preemption(self, key: GroupKey, spec: GroupSpec, pods: list[PodInfo], bound_nodes: list[str],
                         need: int) -> PreemptionResult | None:
        """``runWorkloadAwarePreemption`` for a PodGroup that ended its cycle Unschedulable."""
        s = self.s
        if s.version is KubeVersion.V1_36 and spec.topology_key:
            return PreemptionResult(False, TOPOLOGY_NOT_SUPPORTED)
        priority = spec.priority if spec.priority is not None else max(p.priority for p in pods)

        def schedule() -> Attempt:
            attempt = self.algorithm.attempt(key, spec, pods, bound_nodes, need)
            placement = attempt.placement
            return Attempt(list(placement.placed), attempt.feasible, attempt.message,
                           lambda: self.placer.rollback(placement))

        result = self.preemption.preempt(
            priority=priority, preempt_never=spec.preempt_never or any(p.preempt_never for p in pods),
            pods=pods, exclude={key}, schedule=schedule)
        if result.ok and result.victims:
            self.preemption.actuate(key, PODGROUP, result)
        return result

    def tasks_met(self, spec: GroupSpec, placement: Placement) -> bool:
        """Volcano ``minTaskMember``: enough pods of every task placed."""
        if not spec.min_task_member:
            return True
        per_task: dict[str, int] = {}
        for pod, _ in placement.placed:
            per_task[task_of(pod)] = per_task.get(task_of(pod), 0) + 1
        return all(per_task.get(task, 0) >= count for task, count in spec.min_task_member.items())

    def _volcano_cycle(self, state: GroupState, spec: GroupSpec, items: dict[str, QueuedItem],
                       entry: QueuedItem | None, pods: list[PodInfo], bound_nodes: list[str], need: int) -> None:
        """Volcano's gang allocation: all or nothing, no preemption (its ``preempt`` action is not modelled)."""
        placement = self.placer.place(pods, None)
        if placement.count > 0 and placement.count + len(bound_nodes) >= need and self.tasks_met(spec, placement):
            self.succeed(state, items, entry, placement, again=False)
            return
        message = self.why(spec, placement, bound_nodes, need)
        per_pod = {uid: messages.fit_error(d) for uid, d in self.diagnoses(placement).items()}
        self.placer.rollback(placement)
        self.fail(state, items, entry, message, per_pod=per_pod)

    # ---- outcomes ----------------------------------------------------------------------------------
    def succeed(self, state: GroupState, items: dict[str, QueuedItem], entry: QueuedItem | None,
                placement: Placement, *, again: bool) -> None:
        """Bind what was placed. The rest fail with their own text; ``again`` (1.37): the entry goes
        straight back to activeQ so they get their own cycle now, which may preempt for them."""
        s = self.s
        framework = s.default_framework
        placed = {pod.uid for pod, _ in placement.placed}
        s.log_attempt(f"group {state.namespace}/{state.name}", f"placed {placement.count}")
        s.actuator.group_scheduled(state, placement.domains)
        held = self.held.get(self.entry_key(state.key), {})
        for pod, node in placement.placed:
            s.pod_cycle.bind(items[pod.uid], CycleState(pod), node, s.framework_for(pod) or framework)
            held.pop(pod.uid, None)
        if state.key[0] == VOLCANO_GROUP and state.obj is not None:
            s.actuator.set_phase(state.obj, "Running")
        left = {uid: it for uid, it in items.items() if uid not in placed}
        if entry is not None and not left:
            s.queue.done(entry.key)
            return
        texts = self.failure_messages(placement)
        for uid, item in left.items():
            pod = s.pods[uid]
            s.actuator.fail(pod, texts.get(uid, groupstatus.POD_GROUP_UNSCHEDULABLE))
            if entry is None:
                s.queue.requeue(item, s.clock.now, frozenset({"NodeResourcesFit"}),
                                change_counter=s.snapshot.change_counter)
        if entry is not None:
            if again:
                s.queue.requeue_immediately(entry)
            else:
                s.queue.requeue(entry, s.clock.now, frozenset({"NodeResourcesFit", "GangScheduling"}),
                                change_counter=s.snapshot.change_counter)

    def fail(self, state: GroupState, items: dict[str, QueuedItem], entry: QueuedItem | None, message: str, *,
             error: bool = False, per_pod: dict[str, str] | None = None, note: str | None = None,
             reason: str | None = None, nominations: dict[str, str | None] | None = None,
             plugins: frozenset[str] = REQUEUE_PLUGINS) -> None:
        """Nothing binds. The group's condition and every pod carry ``message`` (the upstream status),
        except pods in ``per_pod`` (their own failure); ``note`` is the timeline's explanation."""
        s = self.s
        s.actuator.group_unschedulable(state, message, error=error, reason=reason, note=note)
        s.log_attempt(f"group {state.namespace}/{state.name}", "error" if error else "unschedulable")
        # In the group's pod order (the order the cycle tried them), whatever order the queue held them in.
        order = {uid: (-pod.priority, pod.created, pod.seq) for uid in items if (pod := s.pods.get(uid)) is not None}
        for uid, item in sorted(items.items(), key=lambda kv: order.get(kv[0], (0, 0.0, 0))):
            pod = s.pods.get(uid)
            if pod is None:
                continue
            s.actuator.fail(pod, (per_pod or {}).get(uid, message), error=error)
            if nominations is not None and uid in nominations:
                s.actuator.nominate(pod, nominations[uid])
            if entry is None:
                s.queue.requeue(item, s.clock.now, plugins, error=error, change_counter=s.snapshot.change_counter)
        if entry is not None:
            s.queue.requeue(entry, s.clock.now, plugins, error=error, change_counter=s.snapshot.change_counter)

    # ---- messages ----------------------------------------------------------------------------------
    def diagnoses(self, placement: Placement) -> dict[str, Diagnosis]:
        """Filter results of every pod that found no node, evaluated in the placement's scope."""
        return {pod.uid: self.diagnosis(state, prefilter) for pod, state, prefilter in placement.failed}

    def diagnosis(self, state: CycleState, prefilter: Status | None) -> Diagnosis:
        """The reason histogram of a pod of the cycle that found no node (for the texts: no per-node
        statuses), made once per pod and cache state however often the texts ask."""
        counter = self.s.snapshot.change_counter
        cached = state.data.get(DIAGNOSIS_KEY)
        if cached is not None and cached[0] == counter:
            found: Diagnosis = cached[1]
            return found
        made = self.s.framework_for(state.pod).diagnose(state, prefilter, per_node=False)
        state.data[DIAGNOSIS_KEY] = (counter, made)
        return made

    def failure_messages(self, placement: Placement) -> dict[str, str]:
        """FitError text of every pod that found no node, evaluated in the placement's scope."""
        return {uid: messages.fit_error(diagnosis) for uid, diagnosis in self.diagnoses(placement).items()}

    def why(self, spec: GroupSpec, placement: Placement, bound_nodes: list[str], need: int) -> str:
        """Our explanation for the timeline: ``gang 5/8 placeable: 3 pods Insufficient nvidia.com/gpu in rack-2``."""
        placed = placement.count + len(bound_nodes)
        kind = "gang" if spec.gang else "basic group"
        # 1.37 stops a pass once minCount is out of reach: the pods it never tried are short too.
        failed = max(len(placement.failed), need - placed)
        reason = ""
        if placement.failed:
            _pod, state, prefilter = placement.failed[0]
            if prefilter is not None:
                reason = prefilter.message
            else:
                diagnosis = self.diagnosis(state, None)
                if diagnosis.reasons:
                    reason = min(diagnosis.reasons.items(), key=lambda kv: (-kv[1], kv[0]))[0]
        where = f" in {placement.focus}" if placement.focus is not None else ""
        if not reason:
            return f"{kind} {placed}/{need} placeable: minCount ({need}) cannot be satisfied{where}"
        return f"{kind} {placed}/{need} placeable: {failed} pods {reason}{where}"
