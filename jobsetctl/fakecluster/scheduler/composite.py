"""CompositePodGroup trees (KEP-6012, alpha 1.37, gate ``CompositePodGroup``), scheduling.md §1.6.

* A tree: CompositePodGroups (inner nodes) and PodGroups (leaves), linked child → parent by
  ``spec.parentCompositePodGroupName``. The queue entry and the PreEnqueue quorum are the root's: a
  PodGroup is ready with ``minCount`` members (basic: always), a CPG with ``minGroupCount`` ready
  children (basic: one).
* Invalid trees — a parent cycle, more than 4 levels, or nodes whose ``workloadRef.workloadName``
  differs from the root's — are marked ``CompositePodGroupInitiallyScheduled=False`` reason ``Invalid``
  and never scheduled.
* Alpha rule: one priority across the tree (PodGroup/CPG ``priority`` and every pod), else
  ``SchedulerError``.
* Placement, top-down: a CPG with a topology key tries each domain of that key (coarse), placing its
  children inside it; children go in creation order, greedily, each keeping what it placed when it is
  feasible (no backtracking between siblings); the domain with the most feasible children, then the
  most pods placed, wins (ties: smallest value, U7). A CPG is feasible with ≥ ``minGroupCount`` feasible
  children (basic: ≥ 1). Leaves use the PodGroup placement of :mod:`.placement`, confined to the parent's
  domain.
* Preemption only at the root (workload-aware, the whole tree's pods as the preemptor); binding and
  preemption never in the same cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jobsetctl.fakecluster.scheduler.groups import COMPOSITE, POD_GROUP, GroupKey, GroupSpec, gang_gates_on
from jobsetctl.fakecluster.scheduler.placement import Placement
from jobsetctl.fakecluster.scheduler.podinfo import PodInfo
from jobsetctl.fakecluster.scheduler.queue import QueuedItem
from jobsetctl.fakecluster.scheduler.workloadpreemption import wap_enabled
from jobsetctl.kube.versions import KubeVersion

if TYPE_CHECKING:
    from jobsetctl.fakecluster.scheduler.groupcycle import GroupCycle
    from jobsetctl.fakecluster.scheduler.scheduler import Scheduler

MAX_DEPTH = 4
INVALID = "Invalid"


@dataclass(slots=True)
class TreeResult:
    feasible: bool = False
    placements: list[Placement] = field(default_factory=list)
    domains: list[str] = field(default_factory=list)
    #: Leaves that were feasible (their pods bind on success).
    leaves: list[GroupKey] = field(default_factory=list)
    pods: int = 0


class CompositeTrees:
    def __init__(self, scheduler: Scheduler, cycle: GroupCycle) -> None:
        self.s = scheduler
        self.gc = cycle

    def enabled(self) -> bool:
        s = self.s
        return s.version is KubeVersion.V1_37 and gang_gates_on(s.gates) and s.gates.enabled("CompositePodGroup")

    # ---- structure ---------------------------------------------------------------------------------
    def _obj(self, key: GroupKey) -> dict[str, Any] | None:
        if key[0] == COMPOSITE:
            return self.s.groups.composite(key[1], key[2])
        state = self.s.groups.states.get(key)
        return state.obj if state is not None else None

    def parent_of(self, key: GroupKey) -> GroupKey | None:
        obj = self._obj(key)
        spec = obj.get("spec") if isinstance(obj, dict) else None
        parent = spec.get("parentCompositePodGroupName") if isinstance(spec, dict) else None
        return (COMPOSITE, key[1], parent) if isinstance(parent, str) and parent else None

    def root_of(self, key: GroupKey) -> GroupKey:
        if not self.enabled():
            return key
        seen = {key}
        current = key
        while True:
            parent = self.parent_of(current)
            if parent is None or parent in seen or self._obj(parent) is None:
                return current
            seen.add(parent)
            current = parent

    def children(self, key: GroupKey) -> list[GroupKey]:
        s = self.s
        found: list[tuple[float, str, GroupKey]] = []
        for state in s.groups.states.values():
            if state.key[0] == POD_GROUP and state.obj is not None and self.parent_of(state.key) == key:
                found.append((state.created, state.key[2], state.key))
        for (namespace, name), obj in s.groups.composites.items():
            child = (COMPOSITE, namespace, name)
            if namespace == key[1] and self.parent_of(child) == key:
                created = s.clock.seconds_of(str((obj.get("metadata") or {}).get("creationTimestamp")
                                                 or s.clock.timestamp()))
                found.append((created, name, child))
        return [k for _, _, k in sorted(found)]

    def validate(self, root: GroupKey) -> str | None:
        if self.parent_of(root) is not None:
            return f'composite pod group "{root[2]}" has a parent cycle'
        workload = _workload_name(self._obj(root))

        def walk(key: GroupKey, depth: int, path: set[GroupKey]) -> str | None:
            if depth > MAX_DEPTH:
                return f'composite pod group tree "{root[2]}" is deeper than {MAX_DEPTH} levels'
            if _workload_name(self._obj(key)) != workload:
                return f'composite pod group tree "{root[2]}" spans more than one workload'
            for child in self.children(key) if key[0] == COMPOSITE else []:
                if child in path:
                    return f'composite pod group "{root[2]}" has a parent cycle'
                problem = walk(child, depth + 1, path | {child})
                if problem:
                    return problem
            return None

        return walk(root, 1, {root})

    def spec(self, key: GroupKey) -> GroupSpec | None:
        s = self.s
        return s.groups.spec(s.groups.state(key))

    def ready(self, key: GroupKey) -> bool:
        spec = self.spec(key)
        if spec is None:
            return False
        if key[0] == POD_GROUP:
            return not spec.gang or len(self.s.groups.state(key).members) >= spec.min_count
        need = spec.min_count if spec.gang else 1
        return sum(1 for child in self.children(key) if self.ready(child)) >= need

    def quorum(self, namespace: str, cpg: str) -> tuple[str, str | None]:
        """(root name, why the tree may not enter the queue yet, or None)."""
        root = self.root_of((COMPOSITE, namespace, cpg))
        problem = self.validate(root)
        if problem is not None:
            self.mark_invalid(root, problem)
            return root[2], problem
        if not self.ready(root):
            return root[2], f'waiting for composite pod group "{root[2]}" tree to meet quorum'
        return root[2], None

    def mark_invalid(self, root: GroupKey, problem: str) -> None:
        state = self.s.groups.state(root)
        self.s.actuator.group_unschedulable(state, problem, reason=INVALID)

    def leaves(self, key: GroupKey) -> list[GroupKey]:
        if key[0] == POD_GROUP:
            return [key]
        return [leaf for child in self.children(key) for leaf in self.leaves(child)]

    # ---- the cycle ---------------------------------------------------------------------------------
    def cycle(self, root: GroupKey, held: dict[str, QueuedItem], entry: QueuedItem) -> None:
        s = self.s
        root_state = s.groups.state(root)
        s.groups.record(root).attempts += 1
        problem = self.validate(root)
        if problem is not None:
            self.gc.fail(root_state, held, entry, problem, placement=None, reason=INVALID)
            return
        pods = [s.pods[uid] for uid in held]
        priorities = {p.priority for p in pods}
        for key in [root, *self._all(root)]:
            spec = self.spec(key)
            if spec is not None and spec.priority is not None:
                priorities.add(spec.priority)
        if len(priorities) > 1:
            from jobsetctl.fakecluster.scheduler.groupcycle import PRIORITY_MISMATCH

            self.gc.fail(root_state, held, entry, PRIORITY_MISMATCH, placement=None, error=True)
            return
        by_leaf: dict[GroupKey, list[PodInfo]] = {}
        for pod in sorted(pods, key=lambda p: (p.created, p.seq)):
            if pod.group is not None:
                by_leaf.setdefault(pod.group, []).append(pod)
        result = self.place(root, None, by_leaf)
        if result.feasible:
            self._bind(root, result, held, entry)
            return
        for placement in reversed(result.placements):
            self.gc.placer.rollback(placement)
        message = f"composite pod group {root[1]}/{root[2]}: not enough feasible children"
        if wap_enabled(s):
            self._preempt(root, by_leaf)
        self.gc.fail(root_state, held, entry, message, placement=None)

    def _all(self, key: GroupKey) -> list[GroupKey]:
        out: list[GroupKey] = []
        for child in self.children(key) if key[0] == COMPOSITE else []:
            out.append(child)
            out.extend(self._all(child))
        return out

    def place(self, key: GroupKey, scope: set[str] | None, by_leaf: dict[GroupKey, list[PodInfo]]) -> TreeResult:
        s = self.s
        spec = self.spec(key)
        if spec is None:
            return TreeResult()
        if key[0] == POD_GROUP:
            pods = by_leaf.get(key, [])
            state = s.groups.state(key)
            bound_nodes = [s.pods[uid].node_name or "" for uid in state.bound if uid in s.pods]
            need = spec.min_count if spec.gang else 1
            if not pods:
                return TreeResult(feasible=len(bound_nodes) >= need)
            placement = self.gc.place(key, spec, pods, bound_nodes, need, scope)
            if self.gc.feasible(spec, placement, len(bound_nodes), need):
                return TreeResult(True, [placement], placement.domains, [key], placement.count)
            self.gc.placer.rollback(placement)
            return TreeResult()
        if spec.topology_key:
            best: tuple[int, int, str] | None = None
            for value, nodes in s.snapshot.domains(spec.topology_key).items():
                sub = {n.name for n in nodes if scope is None or n.name in scope}
                if not sub:
                    continue
                trial = self._children(key, spec, sub, by_leaf)
                for placement in reversed(trial.placements):
                    self.gc.placer.rollback(placement)
                score = (len(trial.leaves), trial.pods)
                if trial.feasible and (best is None or score > best[:2]):
                    best = (*score, value)
            if best is None:
                return TreeResult()
            value = best[2]
            sub = {n.name for n in s.snapshot.domains(spec.topology_key)[value] if scope is None or n.name in scope}
            result = self._children(key, spec, sub, by_leaf)
            result.domains = [f"{spec.topology_key}={value}", *result.domains]
            return result
        return self._children(key, spec, scope, by_leaf)

    def _children(self, key: GroupKey, spec: GroupSpec, scope: set[str] | None,
                  by_leaf: dict[GroupKey, list[PodInfo]]) -> TreeResult:
        total = TreeResult()
        feasible_children = 0
        for child in self.children(key):
            result = self.place(child, scope, by_leaf)
            if result.feasible:
                feasible_children += 1
                total.placements.extend(result.placements)
                total.leaves.extend(result.leaves)
                total.domains.extend(d for d in result.domains if d not in total.domains)
                total.pods += result.pods
        need = spec.min_count if spec.gang else 1
        total.feasible = feasible_children >= need
        return total

    def _bind(self, root: GroupKey, result: TreeResult, held: dict[str, QueuedItem], entry: QueuedItem) -> None:
        s = self.s
        s.actuator.group_scheduled(s.groups.state(root), result.domains)
        for leaf in result.leaves:
            s.actuator.group_scheduled(s.groups.state(leaf), result.domains)
        for placement in result.placements:
            for pod, node in placement.placed:
                item = held.pop(pod.uid, None)
                if item is not None:
                    s.pod_cycle.bind(item, s.new_state(pod), node, s.framework_for(pod))
                    self.gc.held.get(root, {}).pop(pod.uid, None)
        if held:
            s.queue.requeue(entry, s.clock.now, frozenset({"GangScheduling", "NodeResourcesFit"}),
                            change_counter=s.snapshot.change_counter)
        else:
            s.queue.done(entry.key)

    def _preempt(self, root: GroupKey, by_leaf: dict[GroupKey, list[PodInfo]]) -> None:
        pods = [p for leaf in by_leaf.values() for p in leaf]
        spec = self.spec(root)
        if spec is None or not pods:
            return
        if self.gc.preemption.waiting_for_victims(pods):
            return

        def place() -> Placement:
            result = self.place(root, None, by_leaf)
            merged = Placement(domains=result.domains)
            for placement in result.placements:
                merged.placed.extend(placement.placed)
            merged.aborted = not result.feasible
            return merged

        plan = self.gc.preemption.plan(root, spec, pods, place, lambda p: not p.aborted and p.count > 0)
        if plan is not None and plan.victims:
            self.gc.preemption.actuate(root, plan)


def _workload_name(obj: dict[str, Any] | None) -> str | None:
    spec = obj.get("spec") if isinstance(obj, dict) else None
    ref = spec.get("workloadRef") if isinstance(spec, dict) else None
    name = ref.get("workloadName") if isinstance(ref, dict) else None
    return name if isinstance(name, str) else None
