"""CompositePodGroup trees (KEP-6012, alpha 1.37, gate ``CompositePodGroup``), scheduling.md §1.6.

* A tree: CompositePodGroups (inner nodes) and PodGroups (leaves), linked child → parent by
  ``spec.parentCompositePodGroupName``. The queue entry and the PreEnqueue quorum are the root's: a
  PodGroup is ready with ``minCount`` members (basic: always), a CPG with ``minGroupCount`` ready
  children (basic: one). A tree whose named parent does not exist yet holds its pods back silently.
* Invalid trees — a parent cycle, more than 4 levels, or nodes whose ``workloadRef.workloadName``
  differs from the root's — are marked ``CompositePodGroupInitiallyScheduled=False`` reason ``Invalid``
  and never scheduled.
* Alpha rule: one priority across the tree (PodGroup/CPG ``priority`` and every pod), else
  ``SchedulerError``.
* Placement, top-down: a CPG with a topology key tries each domain of that key (coarse), placing its
  children inside it; children go in creation order, greedily, each keeping what it placed when it is
  feasible (no backtracking between siblings); the domain with the most feasible children, then the
  most pods placed, wins (ties: smallest value, U7). A CPG is feasible with ≥ ``minGroupCount`` feasible
  children (basic: ≥ 1); like a gang's PlacementFeasible it stops as soon as feasible + not yet
  evaluated children < ``minGroupCount`` (``minGroupCount (N) cannot be satisfied: S scheduled, R
  remaining``). Leaves use the PodGroup algorithm of :mod:`.groupalgorithm`, confined to the parent's domain.
* Statuses (``completeCompositePodGroupAlgorithmResultMap``, ``submitPodGroupAlgorithmResult``): every
  PodGroup and CompositePodGroup of the tree gets its condition — ``Scheduled``, or ``Unschedulable``
  with its own status when it failed, else the status of the nearest ancestor that failed (``parent
  composite pod group "X" is unschedulable: ...`` / ``ancestor ...``, :mod:`.groupstatus`); every pod
  that does not bind gets its own failure text when it found no node, else its group's text. Test:
  ``TestCPGStatusConditions_HierarchicalDiagnostics`` (podgroup/cpg_test.go).
* Binding first: a feasible root binds what its feasible leaves placed and the entry comes straight back
  for the rest. Preemption only at the root, when the root failed (workload-aware, the whole tree's pods
  as the preemptor, :mod:`.workloadpreemption`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jobsetctl.fakecluster.scheduler import groupstatus, messages
from jobsetctl.fakecluster.scheduler.groups import COMPOSITE, POD_GROUP, GroupKey, GroupSpec, gang_gates_on
from jobsetctl.fakecluster.scheduler.placement import Placement
from jobsetctl.fakecluster.scheduler.podinfo import PodInfo
from jobsetctl.fakecluster.scheduler.queue import QueuedItem
from jobsetctl.fakecluster.scheduler.victims import COMPOSITEPODGROUP, PODGROUP
from jobsetctl.fakecluster.scheduler.workloadpreemption import Attempt, wap_enabled
from jobsetctl.kube.versions import KubeVersion

if TYPE_CHECKING:
    from jobsetctl.fakecluster.scheduler.groupcycle import GroupCycle
    from jobsetctl.fakecluster.scheduler.scheduler import Scheduler

MAX_DEPTH = 4
INVALID = "Invalid"


@dataclass(slots=True)
class TreeResult:
    """The outcome of one group of the tree in a cycle."""

    key: GroupKey
    feasible: bool = False
    #: The group's own failure status (None when feasible or never evaluated).
    message: str | None = None
    #: Placements of the feasible leaves below that are kept (assumed in the cache).
    placements: list[Placement] = field(default_factory=list)
    domains: list[str] = field(default_factory=list)
    pods: int = 0
    children: list[TreeResult] = field(default_factory=list)
    #: Own failure texts of pods that found no node (leaves), by uid.
    failed_pods: dict[str, str] = field(default_factory=dict)

    def walk(self) -> list[TreeResult]:
        out = [self]
        for child in self.children:
            out.extend(child.walk())
        return out


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

    def missing_parent(self, key: GroupKey) -> GroupKey | None:
        """The first parent named on the way up that does not exist (an incomplete tree), or None."""
        seen = {key}
        current = key
        while True:
            parent = self.parent_of(current)
            if parent is None or parent in seen:
                return None
            if self._obj(parent) is None:
                return parent
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

    def ready(self, key: GroupKey, seen: frozenset[GroupKey] = frozenset()) -> bool:
        spec = self.spec(key)
        if spec is None or key in seen:
            return False  # a parent cycle is never ready (validate says why)
        if key[0] == POD_GROUP:
            return not spec.gang or len(self.s.groups.state(key).members) >= spec.min_count
        need = spec.min_count if spec.gang else 1
        inside = seen | {key}
        return sum(1 for child in self.children(key) if self.ready(child, inside)) >= need

    def quorum(self, namespace: str, cpg: str) -> tuple[str, str | None]:
        """(root name, why the tree may not enter the queue yet, or None)."""
        root = self.root_of((COMPOSITE, namespace, cpg))
        missing = self.missing_parent((COMPOSITE, namespace, cpg)) if self._obj((COMPOSITE, namespace, cpg)) else (
            COMPOSITE, namespace, cpg)
        if missing is not None:
            # An incomplete tree: its pods wait, silently, for the missing group (podgroup/queueing_test.go
            # "Incomplete CPG tree buffers pods"; [UNCONFIRMED] wording of the PreEnqueue status).
            return root[2], f'waiting for composite pod group "{missing[2]}" to appear in scheduling queue'
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

    def leaves(self, key: GroupKey, seen: frozenset[GroupKey] = frozenset()) -> list[GroupKey]:
        """The PodGroups under ``key``; a CompositePodGroup met again on the way (a parent cycle) adds none."""
        if key[0] == POD_GROUP:
            return [key]
        if key in seen:
            return []
        inside = seen | {key}
        return [leaf for child in self.children(key) for leaf in self.leaves(child, inside)]

    # ---- the cycle ---------------------------------------------------------------------------------
    def cycle(self, root: GroupKey, held: dict[str, QueuedItem], entry: QueuedItem) -> None:
        s = self.s
        root_state = s.groups.state(root)
        s.groups.record(root).attempts += 1
        problem = self.validate(root)
        if problem is not None:
            self.gc.fail(root_state, held, entry, problem, reason=INVALID)
            return
        pods = [s.pods[uid] for uid in held]
        tree = [root, *self._all(root)]
        priorities = {p.priority for p in pods}
        for key in tree:
            spec = self.spec(key)
            if spec is not None and spec.priority is not None:
                priorities.add(spec.priority)
        if len(priorities) > 1:
            from jobsetctl.fakecluster.scheduler.groupcycle import PRIORITY_MISMATCH

            self.gc.fail(root_state, held, entry, PRIORITY_MISMATCH, error=True)
            return
        by_leaf: dict[GroupKey, list[PodInfo]] = {}
        for pod in sorted(pods, key=lambda p: (-p.priority, p.created, p.seq)):
            if pod.group is not None:
                by_leaf.setdefault(pod.group, []).append(pod)
        result = self.place(root, None, by_leaf)
        if result.feasible:
            self._bind(root, result, held, entry)
            return
        statuses = self.statuses(result)
        for placement in reversed(result.placements):
            self.gc.placer.rollback(placement)
        message = result.message or groupstatus.POD_GROUP_UNSCHEDULABLE
        nominations: dict[str, str | None] = {}
        if wap_enabled(s):
            preemption = self._preempt(root, tree, pods, by_leaf)
            if preemption is not None:
                message = self.gc.with_preemption(message, preemption)
                if preemption.ok:
                    nominations = {p.uid: None for p in pods}
                    nominations.update({pod.uid: node for pod, node in preemption.nominations})
        statuses[root] = message
        self._report(result, statuses, held, entry, nominations, root_message=message)

    def _all(self, key: GroupKey, seen: frozenset[GroupKey] = frozenset()) -> list[GroupKey]:
        out: list[GroupKey] = []
        for child in self.children(key) if key[0] == COMPOSITE and key not in seen else []:
            out.append(child)
            out.extend(self._all(child, seen | {key}))
        return out

    def place(self, key: GroupKey, scope: set[str] | None, by_leaf: dict[GroupKey, list[PodInfo]]) -> TreeResult:
        s = self.s
        spec = self.spec(key)
        if spec is None:
            return TreeResult(key, message=groupstatus.POD_GROUP_UNSCHEDULABLE)
        if key[0] == POD_GROUP:
            return self._leaf(key, spec, scope, by_leaf)
        if spec.topology_key:
            best: tuple[int, int, str] | None = None
            first: TreeResult | None = None
            tried = 0
            for value, nodes in s.snapshot.domains(spec.topology_key).items():
                sub = {n.name for n in nodes if scope is None or n.name in scope}
                if not sub:
                    continue
                trial = self._children(key, spec, sub, by_leaf)
                tried += 1
                for placement in reversed(trial.placements):
                    self.gc.placer.rollback(placement)
                if first is None:
                    first = trial
                score = (sum(1 for c in trial.children if c.feasible), trial.pods)
                if trial.feasible and (best is None or score > best[:2]):
                    best = (*score, value)
            if best is None:
                failed = first if first is not None else TreeResult(key)
                inner = failed.message or groupstatus.POD_GROUP_UNSCHEDULABLE
                return TreeResult(key, message=self._placements(max(tried, 1), inner, raw=True),
                                  children=failed.children, placements=[])
            value = best[2]
            sub = {n.name for n in s.snapshot.domains(spec.topology_key)[value] if scope is None or n.name in scope}
            result = self._children(key, spec, sub, by_leaf)
            result.domains = [f"{spec.topology_key}={value}", *result.domains]
            return result
        return self._children(key, spec, scope, by_leaf)

    def _placements(self, total: int, inner: str, *, raw: bool = False) -> str:
        if self.s.gates.enabled("TopologyAwareWorkloadScheduling"):
            if raw and inner.startswith("0/"):
                inner = inner.split("first placement status: ", 1)[-1]
            return groupstatus.placements(total, inner)
        return inner

    def _leaf(self, key: GroupKey, spec: GroupSpec, scope: set[str] | None,
              by_leaf: dict[GroupKey, list[PodInfo]]) -> TreeResult:
        s = self.s
        pods = by_leaf.get(key, [])
        state = s.groups.state(key)
        bound_nodes = [s.pods[uid].node_name or "" for uid in state.bound if uid in s.pods]
        need = spec.min_count if spec.gang else 1
        if not pods:
            if len(bound_nodes) >= need:
                return TreeResult(key, feasible=True)
            return TreeResult(key, message=self._placements(1, groupstatus.min_count(need, len(bound_nodes), 0)))
        attempt = self.gc.algorithm.attempt(key, spec, pods, bound_nodes, need, scope=scope)
        placement = attempt.placement
        failed = {uid: messages.fit_error(d) for uid, d in self.gc.diagnoses(placement).items()}
        if attempt.feasible:
            return TreeResult(key, True, None, [placement], placement.domains, placement.count, failed_pods=failed)
        self.gc.placer.rollback(placement)
        return TreeResult(key, message=attempt.message or groupstatus.POD_GROUP_UNSCHEDULABLE, failed_pods=failed)

    def _children(self, key: GroupKey, spec: GroupSpec, scope: set[str] | None,
                  by_leaf: dict[GroupKey, list[PodInfo]]) -> TreeResult:
        total = TreeResult(key)
        need = spec.min_count if spec.gang else 1
        children = self.children(key)
        scheduled = 0
        remaining = len(children)
        for child in children:
            result = self.place(child, scope, by_leaf)
            total.children.append(result)
            remaining -= 1
            if result.feasible:
                scheduled += 1
                total.placements.extend(result.placements)
                total.domains.extend(d for d in result.domains if d not in total.domains)
                total.pods += result.pods
            if scheduled + remaining < need:
                break  # PlacementFeasible: the rest cannot make up for it
        total.feasible = scheduled >= need
        if not total.feasible:
            for placement in reversed(total.placements):
                self.gc.placer.rollback(placement)
            total.placements, total.pods = [], 0
            total.message = self._placements(1, groupstatus.min_group_count(need, scheduled, remaining))
        return total

    # ---- statuses ----------------------------------------------------------------------------------
    def statuses(self, result: TreeResult) -> dict[GroupKey, str | None]:
        """Every group's failure text (None: scheduled): its own, else the nearest failed ancestor's."""
        out: dict[GroupKey, str | None] = {}

        def visit(node: TreeResult, failed: list[tuple[GroupKey, str]]) -> None:
            if node.message is not None:
                out[node.key] = node.message
                chain = [*failed, (node.key, node.message)]
            else:
                out[node.key] = self._inherited(node.key, failed) if failed else None
                chain = failed
            evaluated = {child.key for child in node.children}
            for child in node.children:
                visit(child, chain)
            if node.key[0] == COMPOSITE:
                for key in self.children(node.key):
                    if key not in evaluated:
                        # Never evaluated (the parent stopped early): it shares the parent's fate.
                        visit(TreeResult(key), chain if chain else [(node.key, groupstatus.POD_GROUP_UNSCHEDULABLE)])

        visit(result, [])
        return out

    def _inherited(self, key: GroupKey, failed: list[tuple[GroupKey, str]]) -> str:
        ancestor, message = failed[-1]
        return groupstatus.inherited(ancestor[2], message, direct=self.parent_of(key) == ancestor)

    def _report(self, result: TreeResult, statuses: dict[GroupKey, str | None], held: dict[str, QueuedItem],
                entry: QueuedItem, nominations: dict[str, str | None], *, root_message: str | None = None) -> None:
        """Write every group's condition and every held pod's failure; requeue the entry."""
        s = self.s
        from jobsetctl.fakecluster.scheduler.groupcycle import REQUEUE_PLUGINS

        own_pod_text: dict[str, str] = {}
        for node in result.walk():
            own_pod_text.update(node.failed_pods)
        for key, message in statuses.items():
            state = s.groups.state(key)
            if message is None:
                s.actuator.group_scheduled(state, [])
            else:
                s.actuator.group_unschedulable(state, message)
        # In the pods' order (priority, creation), as the cycle tried them.
        for uid in sorted(held, key=lambda u: (-s.pods[u].priority, s.pods[u].created, s.pods[u].seq)
                          if u in s.pods else (0, 0.0, 0)):
            pod = s.pods.get(uid)
            if pod is None or pod.group is None:
                continue
            text = own_pod_text.get(uid) or statuses.get(pod.group) or root_message or groupstatus.POD_GROUP_UNSCHEDULABLE
            s.actuator.fail(pod, text)
            if uid in nominations:
                s.actuator.nominate(pod, nominations[uid])
        s.log_attempt(f"group {result.key[1]}/{result.key[2]}", "unschedulable")
        s.queue.requeue(entry, s.clock.now, REQUEUE_PLUGINS, change_counter=s.snapshot.change_counter)

    def _bind(self, root: GroupKey, result: TreeResult, held: dict[str, QueuedItem], entry: QueuedItem) -> None:
        s = self.s
        from jobsetctl.fakecluster.scheduler.groupcycle import REQUEUE_PLUGINS

        statuses = self.statuses(result)
        for key, message in statuses.items():
            state = s.groups.state(key)
            if message is None:
                s.actuator.group_scheduled(state, result.domains if key == root else [])
            else:
                s.actuator.group_unschedulable(state, message)
        placed = 0
        for placement in result.placements:
            for member, node in placement.placed:
                item = held.pop(member.uid, None)
                if item is not None:
                    s.pod_cycle.bind(item, s.new_state(member), node, s.framework_for(member))
                    self.gc.held.get(root, {}).pop(member.uid, None)
                    placed += 1
        s.log_attempt(f"group {root[1]}/{root[2]}", f"placed {placed}")
        if not held:
            s.queue.done(entry.key)
            return
        own_pod_text: dict[str, str] = {}
        for part in result.walk():
            own_pod_text.update(part.failed_pods)
        for uid in held:
            pod = s.pods.get(uid)
            if pod is None or pod.group is None:
                continue
            s.actuator.fail(pod, own_pod_text.get(uid) or statuses.get(pod.group) or groupstatus.POD_GROUP_UNSCHEDULABLE)
        if placed:
            s.queue.requeue_immediately(entry)  # the rest get their own cycle now (bind first, then preempt)
        else:
            s.queue.requeue(entry, s.clock.now, REQUEUE_PLUGINS, change_counter=s.snapshot.change_counter)

    def _preempt(self, root: GroupKey, tree: list[GroupKey], pods: list[PodInfo],
                 by_leaf: dict[GroupKey, list[PodInfo]]) -> Any:
        spec = self.spec(root)
        if spec is None or not pods:
            return None
        specs = [self.spec(k) for k in tree]
        priority = spec.priority if spec.priority is not None else max(p.priority for p in pods)
        never = any(sp is not None and sp.preempt_never for sp in specs) or any(p.preempt_never for p in pods)

        def schedule() -> Attempt:
            result = self.place(root, None, by_leaf)
            placements = list(result.placements)
            assignments = [pair for placement in placements for pair in placement.placed]

            def rollback() -> None:
                for placement in reversed(placements):
                    self.gc.placer.rollback(placement)

            return Attempt(assignments, result.feasible, result.message or "", rollback)

        outcome = self.gc.preemption.preempt(priority=priority, preempt_never=never, pods=pods, exclude=set(tree),
                                             schedule=schedule)
        if outcome.ok and outcome.victims:
            kind = COMPOSITEPODGROUP if root[0] == COMPOSITE else PODGROUP
            self.gc.preemption.actuate(root, kind, outcome)
        return outcome


def _workload_name(obj: dict[str, Any] | None) -> str | None:
    spec = obj.get("spec") if isinstance(obj, dict) else None
    ref = spec.get("workloadRef") if isinstance(spec, dict) else None
    name = ref.get("workloadName") if isinstance(ref, dict) else None
    return name if isinstance(name, str) else None
