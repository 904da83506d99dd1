"""PodGroup (1.36) and workload (1.37) scheduling cycles, and Volcano's all-or-nothing allocation
(scheduling.md §1.3, §1.4, §1.7, §1.8, §4.2).

1.36 (``podgroup cycle``): popping any member pulls every queued member (activeQ and backoffQ); they are
sorted by priority and first observation, placed against one cache, and minCount (assumed + bound) decides:
success binds the placed pods (extras that did not fit stay pending), failure binds nothing and sends
everyone back to the unschedulable pool (PodGroup ``PodGroupScheduled=False/Unschedulable``). Without
``WorkloadAwarePreemption`` the failing pods preempt one by one (DefaultPreemption); with it the group
preempts as a unit; a topology constraint disables preemption (doc note, test "tas gang with constraint
does not use workload preemption").

1.37 (``workload scheduling cycle``): member pods wait in the queue as parts of one group entry
(``QueuedPodGroupInfo``); PlacementFeasible aborts a pass as soon as placed + remaining < minCount; an
*initial* attempt (no member bound yet) that reaches minCount binds without preempting and requeues the
rest at once with their old timestamp; a *subsequent* attempt of a gang with unplaced pods tries
workload-aware preemption first ("PartialSuccess") and binds only if preemption cannot help; basic groups
always bind what fits. A priority mismatch between the PodGroup and a member fails the whole group with
``SchedulerError`` (``all pods in a single pod group should match the priority of the pod group``), which
serves the full error backoff. ``minCount`` is read at every cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jobsetctl.fakecluster.apiserver import WatchEvent, WatchType
from jobsetctl.fakecluster.scheduler import messages
from jobsetctl.fakecluster.scheduler.composite import CompositeTrees
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
    parse_group_spec,
)
from jobsetctl.fakecluster.scheduler.interface import ClusterEvent, CycleState, Diagnosis
from jobsetctl.fakecluster.scheduler.placement import Placement, Placer
from jobsetctl.fakecluster.scheduler.plugins.volcano import task_of
from jobsetctl.fakecluster.scheduler.podinfo import PodInfo, mapping
from jobsetctl.fakecluster.scheduler.queue import ACTIVE, BACKOFF, GATED, IN_FLIGHT, QueuedItem
from jobsetctl.fakecluster.scheduler.workloadpreemption import WorkloadPreemption, wap_enabled
from jobsetctl.kube.versions import KubeVersion

if TYPE_CHECKING:
    from jobsetctl.fakecluster.scheduler.scheduler import Scheduler

MEMBER = "member"
PRIORITY_MISMATCH = "all pods in a single pod group should match the priority of the pod group"
SCHEDULER_MISMATCH = "all pods in a single pod group should use the same scheduler"
ENTRY = "group"


class GroupCycle:
    def __init__(self, scheduler: Scheduler) -> None:
        self.s = scheduler
        self.placer = Placer(scheduler)
        self.preemption = WorkloadPreemption(scheduler)
        self.trees = CompositeTrees(scheduler, self)
        #: 1.37: member pod items held by their group entry, per entry (root) key.
        self.held: dict[GroupKey, dict[str, QueuedItem]] = {}
        scheduler.queue.on_activate = self._capture
        default = scheduler.profiles["default-scheduler"]
        preemption = default.plugin("DefaultPreemption")
        if preemption is not None:
            preemption.unit_of = self._per_pod_unit  # type: ignore[attr-defined]
            preemption.unit_priority = self._per_pod_priority  # type: ignore[attr-defined]

    # ---- which pods go through here ----------------------------------------------------------------
    def workload_cycle(self) -> bool:
        return self.s.version is KubeVersion.V1_37 and gang_gates_on(self.s.gates)

    def handles(self, pod: PodInfo) -> bool:
        assert pod.group is not None
        if pod.group[0] == VOLCANO_GROUP:
            return True
        return pod.group[0] == POD_GROUP and gang_gates_on(self.s.gates) and self.s.version.minor >= 36

    def _per_pod_unit(self, pod: PodInfo) -> list[PodInfo]:
        # 1.37 per-pod preemption takes an ``all``-mode group as a unit (U9, provisional); 1.36 does not.
        return self.preemption.unit_of(pod) if self.s.version is KubeVersion.V1_37 else [pod]

    def _per_pod_priority(self, pod: PodInfo) -> int:
        return self.preemption.group_priority(pod.group, pod) if self.s.version is KubeVersion.V1_37 else pod.priority

    def entry_key(self, group: GroupKey) -> GroupKey:
        return self.trees.root_of(group)

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
            return False
        previous_min = None
        if event.type == WatchType.MODIFIED and event.old is not None:
            # The stored dict is shared and may already hold the new values: compare with ``old``.
            old_spec = parse_group_spec(key, event.old, s.gates, s.version)
            previous_min = old_spec.min_count
        states = s.groups.upsert_object(key, event.obj, created)
        if key[0] in (COSCHED, VOLCANO_GROUP) and event.type == WatchType.ADDED:
            status = mapping(event.obj.get("status"))
            if not status.get("phase"):
                s.actuator.set_phase(event.obj, "Pending")
        if key[0] == COMPOSITE:
            states = [st for st in s.groups.states.values() if st.key[0] == POD_GROUP and
                      self.entry_key(st.key) == self.entry_key(key)] if self.workload_cycle() else []
        pods = [p for st in states for p in st.members.values()]
        if event.type == WatchType.MODIFIED:
            spec = s.groups.spec(states[0]) if states else None
            if previous_min is None or spec is None or spec.min_count >= previous_min:
                return False  # only a minCount decrease can help a waiting gang (1.37)
            s.move(ClusterEvent.GROUP_UPDATE)
        else:
            s.move(ClusterEvent.GROUP_ADD)
        return s.pod_cycle.recheck_gated(pods) or bool(pods)

    def on_volcano_queue(self) -> bool:
        pods = [p for st in self.s.groups.states.values() if st.key[0] == VOLCANO_GROUP for p in st.members.values()]
        return self.s.pod_cycle.recheck_gated(pods)

    def member_added(self, pod: PodInfo) -> None:
        assert pod.group is not None
        s = self.s
        root = self.entry_key(pod.group) if pod.group[0] == POD_GROUP and self.workload_cycle() else pod.group
        if root != pod.group:
            # A CompositePodGroup tree: the quorum is the root's, so every leaf's gated pods are rechecked.
            pods = [p for leaf in self.trees.leaves(root) for p in s.groups.state(leaf).members.values()]
        else:
            pods = list(s.groups.state(pod.group).members.values())
        if not self._group_gate_closed(pod):
            s.pod_cycle.recheck_gated(pods)
        s.move(ClusterEvent.UNSCHEDULED_POD_ADD, pod)

    def _group_gate_closed(self, pod: PodInfo) -> bool:
        """Whether the group-level PreEnqueue check (existence, quorum) still holds the new member back:
        then it holds every member back and rechecking them one by one is wasted work."""
        item = self.s.queue.get(pod.uid)
        if item is None or item.where != GATED:
            return False
        for plugin in self.s.framework_for(pod).profile.pre_enqueue:
            if plugin.name in ("GangScheduling", "VolcanoGang") and plugin.applies_to(pod):
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
        for held in self.held.values():
            held.pop(pod.uid, None)
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
        """Per-pod preemption took pods of groups: a group whose ``all`` unit was taken is Preempted."""
        seen: set[GroupKey] = set()
        for pod in victims:
            if pod.group is None or pod.group in seen:
                continue
            seen.add(pod.group)
            state = self.s.groups.states.get(pod.group)
            spec = self.s.groups.spec(state) if state is not None else None
            if state is not None and spec is not None and spec.disruption_all and len(victims) > 1:
                self.s.actuator.group_preempted(state, preemptor)

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
            if uid != pod.uid and other is not None and other.where in (ACTIVE, BACKOFF):
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

    def cycle(self, key: GroupKey, items: dict[str, QueuedItem], *, entry: QueuedItem | None) -> None:
        s = self.s
        state = s.groups.state(key)
        spec = s.groups.spec(state)
        record = s.groups.record(key)
        record.attempts += 1
        pods = sorted((s.pods[uid] for uid in items), key=lambda p: (-p.priority, p.created, p.seq))
        if spec is None:
            self.fail(state, items, entry, f'pod group "{key[2]}" does not exist', placement=None)
            return
        if s.version is KubeVersion.V1_37 and spec.priority is not None and any(p.priority != spec.priority for p in pods):
            self.fail(state, items, entry, PRIORITY_MISMATCH, placement=None, error=True)
            return
        if s.version is KubeVersion.V1_37 and len({p.scheduler_name for p in state.members.values()}) > 1:
            # KEP-4671 beta: every pod of a group is rejected when they name different schedulers (the
            # exact message is not in the snapshot: [UNCONFIRMED] wording).
            self.fail(state, items, entry, SCHEDULER_MISMATCH, placement=None, error=True)
            return
        bound_nodes = [s.pods[uid].node_name or "" for uid in state.bound if uid in s.pods]
        need = spec.min_count if spec.gang else 1
        record.min_count = need
        placement = self.place(key, spec, pods, bound_nodes, need)
        feasible = self.feasible(spec, placement, len(bound_nodes), need)
        record.placeable = placement.count + len(bound_nodes)
        initial = not state.bound and not state.scheduled
        unplaced = [p for p in pods if p not in {x for x, _ in placement.placed}]
        if feasible and unplaced and spec.gang and s.version is KubeVersion.V1_37 and not initial and wap_enabled(s):
            self.placer.rollback(placement)
            if self.try_preemption(key, spec, pods, bound_nodes, need, require_all=True):
                self.fail(state, items, entry, self.why(spec, placement, bound_nodes, need), placement=None,
                          bind_nothing=True)
                return
            placement = self.place(key, spec, pods, bound_nodes, need)
            feasible = self.feasible(spec, placement, len(bound_nodes), need)
        if feasible:
            self.succeed(state, items, entry, placement, initial)
            return
        if len(bound_nodes) >= need and placement.count == 0:
            # The gang already runs: extras that do not fit fail one by one, the group stays Scheduled —
            # after a 1.37 gang has tried to preempt for them ("PartialSuccess").
            if spec.gang and s.version is KubeVersion.V1_37 and wap_enabled(s):
                self.placer.rollback(placement)
                if self.try_preemption(key, spec, pods, bound_nodes, need, require_all=True):
                    self.fail(state, items, entry, self.why(spec, placement, bound_nodes, need), placement=None,
                              bind_nothing=True)
                    return
                placement = self.place(key, spec, pods, bound_nodes, need)
            self.succeed(state, items, entry, placement, initial=False)
            return
        message = self.why(spec, placement, bound_nodes, need)
        diagnoses = self.diagnoses(placement)  # while the group's assumed pods still hold their nodes
        per_pod = {uid: messages.fit_error(diagnosis) for uid, diagnosis in diagnoses.items()}
        self.placer.rollback(placement)
        per_pod.update(self.preempt_after_failure(key, spec, pods, bound_nodes, need, placement, diagnoses))
        self.fail(state, items, entry, message, placement=placement, per_pod=per_pod)

    def place(self, key: GroupKey, spec: GroupSpec, pods: list[PodInfo], bound_nodes: list[str], need: int,
              scope: set[str] | None = None) -> Placement:
        stop = None
        if self.s.version is KubeVersion.V1_37 and spec.gang:
            def stop(placed: int, remaining: int) -> bool:
                return placed + len(bound_nodes) + remaining < need
        if spec.topology_key:
            return self.placer.place_in_domains(pods, spec.topology_key, need, bound_nodes, stop, scope)
        restrict = None
        if scope is not None:
            restrict = self.s.snapshot.node_set(("scope", hash(frozenset(scope))),
                                                lambda: [n for n in self.s.snapshot.ordered_nodes() if n.name in scope])
        return self.placer.place(pods, restrict, stop)

    def feasible(self, spec: GroupSpec, placement: Placement, bound: int, need: int) -> bool:
        if placement.count == 0 or placement.count + bound < need:
            return False
        if spec.min_task_member:
            per_task: dict[str, int] = {}
            for pod, _ in placement.placed:
                per_task[task_of(pod)] = per_task.get(task_of(pod), 0) + 1
            return all(per_task.get(task, 0) >= count for task, count in spec.min_task_member.items())
        return True

    # ---- outcomes ----------------------------------------------------------------------------------
    def succeed(self, state: GroupState, items: dict[str, QueuedItem], entry: QueuedItem | None,
                placement: Placement, initial: bool) -> None:
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
        if entry is not None:
            if left and initial:
                # Initial attempt: no preemption now; the rest go straight back, old timestamp kept.
                s.queue.requeue_immediately(entry)
                return
            if not left:
                s.queue.done(entry.key)
                return
        messages_ = self.failure_messages(placement)
        for uid, item in left.items():
            pod = s.pods[uid]
            s.actuator.fail(pod, messages_.get(uid, "pod did not fit with its group"))
            if entry is None:
                s.queue.requeue(item, s.clock.now, frozenset({"NodeResourcesFit"}),
                                change_counter=s.snapshot.change_counter)
        if entry is not None:
            s.queue.requeue(entry, s.clock.now, frozenset({"NodeResourcesFit", "GangScheduling"}),
                            change_counter=s.snapshot.change_counter)

    def fail(self, state: GroupState, items: dict[str, QueuedItem], entry: QueuedItem | None, message: str, *,
             placement: Placement | None, error: bool = False, per_pod: dict[str, str] | None = None,
             bind_nothing: bool = False, reason: str | None = None) -> None:
        s = self.s
        s.actuator.group_unschedulable(state, message, error=error, reason=reason)
        s.log_attempt(f"group {state.namespace}/{state.name}", "error" if error else "unschedulable")
        plugins = frozenset({"GangScheduling", "NodeResourcesFit", "InterPodAffinity", "NodeAffinity",
                             "TaintToleration", "NodeUnschedulable", "VolcanoGang"})
        for uid, item in items.items():
            pod = s.pods.get(uid)
            if pod is None:
                continue
            s.actuator.fail(pod, (per_pod or {}).get(uid, message), error=error)
            if entry is None:
                s.queue.requeue(item, s.clock.now, plugins, error=error, change_counter=s.snapshot.change_counter)
        if entry is not None:
            s.queue.requeue(entry, s.clock.now, plugins, error=error, change_counter=s.snapshot.change_counter)

    def try_preemption(self, key: GroupKey, spec: GroupSpec, pods: list[PodInfo], bound_nodes: list[str],
                       need: int, scope: set[str] | None = None, *, require_all: bool = False) -> bool:
        """Workload-aware preemption for the group; ``require_all``: the goal is to place every pod
        (1.37 "PartialSuccess"), else to reach minCount."""
        if self.preemption.waiting_for_victims(pods):
            return False

        def goal(placement: Placement) -> bool:
            if require_all:
                return placement.count >= len(pods)
            return self.feasible(spec, placement, len(bound_nodes), need)

        plan = self.preemption.plan(
            key, spec, pods, lambda: self.place(key, spec, pods, bound_nodes, need, scope), goal,
        )
        if plan is None or not plan.victims:
            return False
        self.preemption.actuate(key, plan)
        return True

    def preempt_after_failure(self, key: GroupKey, spec: GroupSpec, pods: list[PodInfo], bound_nodes: list[str],
                              need: int, placement: Placement, diagnoses: dict[str, Diagnosis]) -> dict[str, str]:
        """Preemption after a failed group cycle; returns per-pod failure texts it produced.

        ``diagnoses`` are the failed pods' filter results from the cycle, taken before the group's
        assumed pods were rolled back: DefaultPreemption's PostFilter works from the statuses of the
        pod's own cycle (a diagnosis taken afterwards found every node free and said nothing)."""
        s = self.s
        if key[0] == VOLCANO_GROUP:
            return {}
        if wap_enabled(s):
            if s.version is KubeVersion.V1_36 and spec.topology_key:
                return {}  # 1.36 TAS does not trigger preemption
            self.try_preemption(key, spec, pods, bound_nodes, need)
            return {}
        if spec.topology_key:
            return {}
        # Plain per-pod preemption for the pods that found no node (gate off): victims may go even if the
        # gang still fails later.
        framework = s.default_framework
        plugin = framework.plugin("DefaultPreemption")
        texts: dict[str, str] = {}
        if plugin is None:
            return texts
        for pod, _state, prefilter in placement.failed:
            diagnosis = diagnoses.get(pod.uid) or framework.diagnose(CycleState(pod), prefilter)
            result = plugin.post_filter(CycleState(pod), diagnosis)  # type: ignore[attr-defined]
            if result is None:
                continue
            if result.nominated_node is not None:
                s.actuator.nominate(pod, result.nominated_node or None)
            if not result.status.ok:
                diagnosis.postfilter_msg = result.status.message
            texts[pod.uid] = messages.fit_error(diagnosis)
        return texts

    # ---- messages ----------------------------------------------------------------------------------
    def diagnoses(self, placement: Placement) -> dict[str, Diagnosis]:
        """Filter results of every pod that found no node, evaluated in the placement's scope."""
        return {pod.uid: self.s.framework_for(pod).diagnose(state, prefilter)
                for pod, state, prefilter in placement.failed}

    def failure_messages(self, placement: Placement) -> dict[str, str]:
        """FitError text of every pod that found no node, evaluated in the placement's scope."""
        return {uid: messages.fit_error(diagnosis) for uid, diagnosis in self.diagnoses(placement).items()}

    def why(self, spec: GroupSpec, placement: Placement, bound_nodes: list[str], need: int) -> str:
        """``gang 5/8 placeable: 3 pods Insufficient nvidia.com/gpu in rack-2``."""
        placed = placement.count + len(bound_nodes)
        kind = "gang" if spec.gang else "basic group"
        failed = len(placement.failed)
        reason = ""
        if placement.failed:
            pod, state, prefilter = placement.failed[0]
            if prefilter is not None:
                reason = prefilter.message
            else:
                diagnosis = self.s.framework_for(pod).diagnose(state, None)
                if diagnosis.reasons:
                    reason = min(diagnosis.reasons.items(), key=lambda kv: (-kv[1], kv[0]))[0]
        where = f" in {placement.focus}" if placement.focus is not None else ""
        if not reason:
            return f"{kind} {placed}/{need} placeable: minCount ({need}) cannot be satisfied{where}"
        return f"{kind} {placed}/{need} placeable: {failed} pods {reason}{where}"



