"""The pod-by-pod scheduling cycle (``scheduleOne``): PreFilter, Filter/Score, PostFilter on failure,
Reserve, Permit (possibly waiting, scheduling.md §1.3 v1.35 and §4.1), Bind.

A pod waiting at Permit keeps its reservation in the cache. It is released on Allow (binds), on a
plugin's Reject, or when its Permit timeout passes: then it fails with
``0/1 nodes are available: 1 rejected due to timeout after waiting <d> at plugin <name>.`` (the framework
wraps a Permit rejection in a one-node FitError) and goes back to the unschedulable pool.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jobsetctl.fakecluster.scheduler import messages
from jobsetctl.fakecluster.scheduler.groups import COSCHED
from jobsetctl.fakecluster.scheduler.interface import Code, CycleState, Diagnosis, Status
from jobsetctl.fakecluster.scheduler.podinfo import PodInfo
from jobsetctl.fakecluster.scheduler.queue import GATED, QueuedItem
from jobsetctl.fakecluster.scheduler.requeue import FitClass
from jobsetctl.fakecluster.scheduler.snapshot import NodeInfo

if TYPE_CHECKING:
    from jobsetctl.fakecluster.scheduler.framework import Framework
    from jobsetctl.fakecluster.scheduler.scheduler import Scheduler

WAITING = "waiting"
NO_NODES = messages.NO_NODES


@dataclass(slots=True, eq=False)
class WaitingPod:
    item: QueuedItem
    state: CycleState
    node: NodeInfo
    framework: Framework
    #: plugin name -> (deadline, the timeout it asked for)
    pending: dict[str, tuple[float, float]]


class PodCycle:
    def __init__(self, scheduler: Scheduler) -> None:
        self.s = scheduler
        self.waiting: dict[str, WaitingPod] = {}
        #: Rejections of waiting pods asked for during another pod's cycle (upstream they run in the
        #: waiting pods' own binding goroutines, after the current cycle records its outcome).
        self._rejections: list[tuple[str, str, str]] = []

    # ---- queue entry -------------------------------------------------------------------------------
    def sort_key(self, item: QueuedItem) -> tuple[Any, ...]:
        pod = self.s.pods.get(item.key) if not isinstance(item.payload, tuple) else None
        if pod is not None and pod.group is not None and pod.group[0] == COSCHED:
            state = self.s.groups.states.get(pod.group)
            created = state.created if state is not None and state.obj is not None else (
                item.initial_attempt if item.initial_attempt is not None else item.timestamp)
            return (-item.priority, created, f"{pod.group[1]}/{pod.group[2]}", pod.key)
        # Equal priority and timestamp: released by PreEnqueue first, then seen first (upstream leaves the
        # order to the heap and to the moment each pod reaches it).
        return (-item.priority, item.timestamp, "", item.released, pod.seq if pod is not None else 0)

    def enqueue_new(self, pod: PodInfo) -> Status | None:
        """Queue a new pod (gated when a PreEnqueue plugin holds it back); returns that plugin's status."""
        item = QueuedItem(pod.uid, pod.priority, self.s.clock.now)
        gate = self.s.framework_for(pod).run_pre_enqueue(pod)
        self.s.queue.add(item, gated=gate is not None)
        return gate

    def recheck_gated(self, pods: list[PodInfo]) -> bool:
        """Re-run PreEnqueue for gated pods (a gang reached quorum, gates were removed)."""
        moved = False
        for pod in pods:
            item = self.s.queue.get(pod.uid)
            if item is not None and item.where == GATED and self.s.framework_for(pod).run_pre_enqueue(pod) is None:
                self.s.queue.ungate(item, self.s.clock.now)
                moved = True
        return moved

    def respec(self, known: PodInfo, obj: dict[str, Any]) -> bool:
        fresh = self.s._new_pod_info(obj)
        fresh.seq, fresh.group, fresh.created = known.seq, known.group, known.created
        # ``obj`` too: an update stores a new dict, and binding or failing must write the stored one (with the
        # old dict a bind reported the pod's old spec and the store's pod never got its node).
        for name in ("static", "affinity", "anti_affinity", "priority", "preempt_never", "labels", "obj"):
            setattr(known, name, getattr(fresh, name))
        item = self.s.queue.get(known.uid)
        if item is None:
            return False
        if item.where == GATED:
            return self.recheck_gated([known])
        return False

    # ---- the cycle ---------------------------------------------------------------------------------
    def schedule_one(self, item: QueuedItem, pod: PodInfo) -> None:
        s = self.s
        framework = s.framework_for(pod)
        state = s.new_state(pod)
        if not s.snapshot.nodes:
            s.fail_pod(item, pod, NO_NODES, ())
            return
        prefilter = framework.run_pre_filter(state)
        node = framework.find_node(state) if prefilter is None else None
        if node is None:
            self.handle_failure(item, state, framework, prefilter)
            return
        self.assume_and_bind(item, state, node, framework)

    def handle_failure(self, item: QueuedItem, state: CycleState, framework: Framework,
                       prefilter: Status | None) -> Diagnosis:
        """Diagnose, run PostFilter plugins (preemption), write the failure."""
        s = self.s
        pod = state.pod
        diagnosis = framework.diagnose(state, prefilter)
        messages_: list[str] = []
        nominated: str | None = None
        for plugin in framework.profile.post_filter:
            if not plugin.applies_to(pod):
                continue
            result = plugin.post_filter(state, diagnosis)
            if result is None:
                continue
            if result.nominated_node is not None:
                nominated = result.nominated_node
            if result.status.ok:
                messages_ = []
                break
            if result.status.code == Code.UNRESOLVABLE:
                messages_.append(result.status.message)
                break
            messages_.append(result.status.message)
        diagnosis.postfilter_msg = ", ".join(m for m in messages_ if m)
        if nominated is not None:
            s.actuator.nominate(pod, nominated or None)
        s.requeue.classify(item, self._room_class(pod, framework, diagnosis, prefilter), pod)
        s.fail_pod(item, pod, messages.fit_error(diagnosis), diagnosis.unschedulable_plugins)
        if pod.group is not None:
            s.group_cycle.pod_failed(pod, diagnosis)
        return diagnosis

    def _room_class(self, pod: PodInfo, framework: Framework, diagnosis: Diagnosis,
                    prefilter: Status | None) -> FitClass | None:
        """What a pod waits for when every node refused it for room alone (see :mod:`.requeue`)."""
        s = self.s
        if (prefilter is not None or pod.group is not None or pod.has_affinity_terms
                or diagnosis.unschedulable_plugins != {framework.fit.name} or not s.requeue.gate_holds()):
            return None
        can_preempt = not pod.preempt_never and any(p.applies_to(pod) for p in framework.profile.post_filter)
        return FitClass(pod.static.key, None, 1, pod.priority, can_preempt)

    def assume_and_bind(self, item: QueuedItem, state: CycleState, node: NodeInfo, framework: Framework) -> None:
        """Reserve, Permit and (unless waiting) Bind a pod on the chosen node."""
        s = self.s
        pod = state.pod
        s.snapshot.add_pod(pod, node.name)
        for index, plugin in enumerate(framework.profile.reserve):
            status = plugin.reserve(state, node) if plugin.applies_to(pod) else None
            if status is not None and not status.ok:
                for undo in reversed(framework.profile.reserve[:index]):
                    undo.unreserve(state, node)
                s.snapshot.remove_pod(pod)
                self._fail_one_node(item, pod, status)
                return
        pending: dict[str, tuple[float, float]] = {}
        for permit in framework.profile.permit:
            if not permit.applies_to(pod):
                continue
            status, timeout = permit.permit(state, node)
            if status is None or status.ok:
                continue
            if status.code == Code.WAIT:
                pending[permit.name] = (s.clock.now + timeout, timeout)
                continue
            self._unreserve(state, node, framework)
            self._fail_one_node(item, pod, status)
            return
        if pending and pod.uid not in self.waiting:
            s.queue.hold(item, WAITING)
            self.waiting[pod.uid] = WaitingPod(item, state, node, framework, pending)
            s.log_attempt(pod.key, "waiting")
            return
        self.bind(item, state, node, framework)

    def bind(self, item: QueuedItem, state: CycleState, node: NodeInfo, framework: Framework) -> None:
        s = self.s
        pod = state.pod
        self.waiting.pop(pod.uid, None)
        s.queue.done(item.key)
        framework.profile.bind[0].bind(state, node)
        s.log_attempt(pod.key, f"bound {node.name}")
        if pod.group is not None:
            s.group_cycle.member_bound(pod)
        for plugin in framework.profile.post_bind:
            if plugin.applies_to(pod):
                plugin.post_bind(state, node)

    def _unreserve(self, state: CycleState, node: NodeInfo, framework: Framework) -> None:
        for plugin in reversed(framework.profile.reserve):
            if plugin.applies_to(state.pod):
                plugin.unreserve(state, node)
        self.s.snapshot.remove_pod(state.pod)

    def _fail_one_node(self, item: QueuedItem, pod: PodInfo, status: Status) -> None:
        diagnosis = Diagnosis(1)
        diagnosis.add(pod.node_name or "node", status)
        self.s.fail_pod(item, pod, messages.fit_error(diagnosis), {status.plugin} if status.plugin else ())

    # ---- waiting pods ------------------------------------------------------------------------------
    def allow(self, uid: str, plugin: str) -> None:
        waiting = self.waiting.get(uid)
        if waiting is None:
            return
        waiting.pending.pop(plugin, None)
        if not waiting.pending:
            self.bind(waiting.item, waiting.state, waiting.node, waiting.framework)

    def reject_later(self, uid: str, plugin: str, reason: str) -> None:
        """``WaitingPod.Reject`` from a plugin: takes effect once the current cycle is written."""
        self._rejections.append((uid, plugin, reason))

    def flush_rejections(self) -> None:
        while self._rejections:
            self.reject(*self._rejections.pop(0))

    def reject(self, uid: str, plugin: str, reason: str) -> None:
        waiting = self.waiting.pop(uid, None)
        if waiting is None:
            return
        pod = waiting.state.pod
        self.s.snapshot.remove_pod(pod)  # ForgetPod; the failure is recorded before Unreserve's side effects
        status = Status(Code.UNSCHEDULABLE, (reason,), plugin)
        diagnosis = Diagnosis(1)
        diagnosis.add(waiting.node.name, status)
        self.s.fail_pod(waiting.item, pod, messages.fit_error(diagnosis), {plugin})
        for reserve in reversed(waiting.framework.profile.reserve):
            if reserve.applies_to(pod):
                reserve.unreserve(waiting.state, waiting.node)
        self.flush_rejections()

    def expire_waiting(self, now: float) -> None:
        for uid, waiting in list(self.waiting.items()):
            for plugin, (deadline, timeout) in list(waiting.pending.items()):
                if deadline <= now and uid in self.waiting:
                    self.reject(uid, plugin,
                                f"rejected due to timeout after waiting {messages.go_duration(timeout)} at plugin {plugin}")

    def next_deadline(self) -> float | None:
        deadlines = [d for w in self.waiting.values() for d, _ in w.pending.values()]
        return min(deadlines) if deadlines else None

    def waiting_of(self, uids: set[str]) -> list[WaitingPod]:
        return [w for uid, w in self.waiting.items() if uid in uids]

    def forget_waiting(self, pod: PodInfo) -> None:
        waiting = self.waiting.pop(pod.uid, None)
        if waiting is not None:
            for plugin in reversed(waiting.framework.profile.reserve):
                if plugin.applies_to(pod):
                    plugin.unreserve(waiting.state, waiting.node)
