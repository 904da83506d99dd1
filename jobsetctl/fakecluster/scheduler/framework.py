"""The framework: plugins per extension point, and the filter/score algorithm for one pod.

``find_node`` is kube-scheduler's ``findNodesThatFitPod`` + ``prioritizeNodes`` + ``selectHost`` with the
indexes of :mod:`.snapshot` (issue #5): static filters once per signature, resource fit and score once
per usage bucket, dynamic filters (inter-pod affinity) only on the candidates actually considered, best
score first. ``diagnose`` is the slow path that explains a failure node by node (``FitError``).

Documented deviations: every feasible node is scored (no ``percentageOfNodesToScore`` sampling), and
among equal scores the node created first wins instead of a random one.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from jobsetctl.fakecluster.scheduler.buckets import Bucket, NodeSet
from jobsetctl.fakecluster.scheduler.interface import (
    BindPlugin,
    Code,
    CycleState,
    Diagnosis,
    FilterPlugin,
    FilterStage,
    Handle,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
    Status,
)
from jobsetctl.fakecluster.scheduler.messages import NODE_AFFINITY
from jobsetctl.fakecluster.scheduler.plugins.noderesources import NodeResourcesFit, nominated_usage
from jobsetctl.fakecluster.scheduler.podinfo import PodInfo
from jobsetctl.fakecluster.scheduler.snapshot import NodeInfo

_SERIAL = itertools.count()


@dataclass(slots=True)
class StaticResult:
    """Static filter outcome for one signature at one node-spec generation."""

    passing: list[NodeInfo]
    passing_names: frozenset[str]
    candidates: frozenset[str]
    failures: dict[str, Status] | None = None
    #: The reason histogram of ``failures`` (a :class:`Diagnosis` without nodes), once asked for.
    failure_counts: Diagnosis | None = None


@dataclass(slots=True)
class Profile:
    """Plugins sorted by extension point, in registration order (upstream's default order)."""

    pre_enqueue: list[PreEnqueuePlugin] = field(default_factory=list)
    queue_sort: QueueSortPlugin | None = None
    pre_filter: list[PreFilterPlugin] = field(default_factory=list)
    static_filters: list[FilterPlugin] = field(default_factory=list)
    dynamic_filters: list[FilterPlugin] = field(default_factory=list)
    post_filter: list[PostFilterPlugin] = field(default_factory=list)
    scorers: list[ScorePlugin] = field(default_factory=list)
    reserve: list[ReservePlugin] = field(default_factory=list)
    permit: list[PermitPlugin] = field(default_factory=list)
    bind: list[BindPlugin] = field(default_factory=list)
    post_bind: list[PostBindPlugin] = field(default_factory=list)


class Framework:
    def __init__(self, handle: Handle, plugins: list[Plugin]) -> None:
        self.handle = handle
        self.serial = next(_SERIAL)
        self.plugins = plugins
        self.profile = Profile()
        fit: NodeResourcesFit | None = None
        for plugin in plugins:
            if isinstance(plugin, PreEnqueuePlugin):
                self.profile.pre_enqueue.append(plugin)
            if isinstance(plugin, QueueSortPlugin):
                self.profile.queue_sort = plugin
            if isinstance(plugin, PreFilterPlugin):
                self.profile.pre_filter.append(plugin)
            if isinstance(plugin, FilterPlugin):
                if plugin.stage is FilterStage.STATIC:
                    self.profile.static_filters.append(plugin)
                elif plugin.stage is FilterStage.RESOURCES and isinstance(plugin, NodeResourcesFit):
                    fit = plugin
                else:
                    self.profile.dynamic_filters.append(plugin)
            if isinstance(plugin, PostFilterPlugin):
                self.profile.post_filter.append(plugin)
            if isinstance(plugin, ScorePlugin):
                self.profile.scorers.append(plugin)
            if isinstance(plugin, ReservePlugin):
                self.profile.reserve.append(plugin)
            if isinstance(plugin, PermitPlugin):
                self.profile.permit.append(plugin)
            if isinstance(plugin, BindPlugin):
                self.profile.bind.append(plugin)
            if isinstance(plugin, PostBindPlugin):
                self.profile.post_bind.append(plugin)
        if fit is None:
            raise ValueError("a scheduling profile needs the NodeResourcesFit plugin")
        self.fit = fit

    def plugin(self, name: str) -> Plugin | None:
        for plugin in self.plugins:
            if plugin.name == name:
                return plugin
        return None

    # ---- PreEnqueue / PreFilter --------------------------------------------------------------------
    def run_pre_enqueue(self, pod: PodInfo) -> Status | None:
        for plugin in self.profile.pre_enqueue:
            if plugin.applies_to(pod):
                status = plugin.pre_enqueue(pod)
                if status is not None and not status.ok:
                    return status
        return None

    def run_pre_filter(self, state: CycleState) -> Status | None:
        for plugin in self.profile.pre_filter:
            if plugin.applies_to(state.pod):
                status = plugin.pre_filter(state)
                if status is not None and not status.ok:
                    return status
        return None

    # ---- static filters ----------------------------------------------------------------------------
    def _static_status(self, state: CycleState, node: NodeInfo) -> Status | None:
        for plugin in self.profile.static_filters:
            status = plugin.filter(state, node)
            if status is not None and not status.ok:
                return status
        return None

    def static_result(self, state: CycleState) -> StaticResult:
        snapshot = self.handle.snapshot
        signature = state.pod.static
        cache_key = (snapshot.serial, self.serial)
        cached = signature.static_cache.get("result")
        if cached is not None and cached[0] == cache_key and cached[1] == snapshot.spec_generation:
            result: StaticResult = cached[2]
            return result
        pairs = signature.node_affinity.node_selector
        candidates = snapshot.nodes_with_labels(pairs) if pairs else snapshot.ordered_nodes()
        passing = [node for node in candidates if self._static_status(state, node) is None]
        result = StaticResult(passing, frozenset(n.name for n in passing), frozenset(n.name for n in candidates))
        signature.static_cache["result"] = (cache_key, snapshot.spec_generation, result)
        return result

    def static_failures(self, state: CycleState) -> dict[str, Status]:
        """Status of every node the static filters reject (computed once per signature and generation)."""
        result = self.static_result(state)
        if result.failures is None:
            failures: dict[str, Status] = {}
            affinity_only = Status(Code.UNRESOLVABLE, (NODE_AFFINITY,), "NodeAffinity")
            for node in self.handle.snapshot.ordered_nodes():
                if node.name in result.passing_names:
                    continue
                if node.name not in result.candidates and not node.flagged:
                    # Outside the nodeSelector's label index and neither cordoned nor tainted: the first
                    # failing static filter is NodeAffinity.
                    failures[node.name] = affinity_only
                    continue
                status = self._static_status(state, node)
                if status is not None:
                    failures[node.name] = status
            result.failures = failures
        return result.failures

    def candidates(self, state: CycleState) -> NodeSet:
        snapshot = self.handle.snapshot
        static = self.static_result(state)
        signature_key = state.pod.static.key
        if state.restrict is None:
            if len(static.passing) == len(snapshot.nodes):
                return snapshot.everything()
            return snapshot.node_set(("static", self.serial, signature_key), lambda: static.passing)
        restrict = state.restrict
        return snapshot.node_set(
            ("restrict", restrict.key, self.serial, signature_key),
            lambda: [n for n in restrict.nodes if n.name in static.passing_names],
        )

    # ---- filter + score ----------------------------------------------------------------------------
    def dynamic_filters(self, pod: PodInfo) -> list[FilterPlugin]:
        return [p for p in self.profile.dynamic_filters if p.applies_to(pod)]

    def passes(self, state: CycleState, node: NodeInfo, dynamic: list[FilterPlugin]) -> bool:
        pod = state.pod
        if node.nominated:
            if self.fit.filter(state, node) is not None:
                return False
        elif not self.fit.fits(pod, node):
            return False
        for plugin in dynamic:
            status = plugin.filter(state, node)
            if status is not None and not status.ok:
                return False
        return True

    def filter_node(self, state: CycleState, node: NodeInfo) -> Status | None:
        """Every filter on one node, nominated pods included (preemption dry runs use this)."""
        status = self._static_status(state, node)
        if status is not None:
            return status
        status = self.fit.filter(state, node)
        if status is not None:
            return status
        for plugin in self.dynamic_filters(state.pod):
            status = plugin.filter(state, node)
            if status is not None and not status.ok:
                return status
        return None

    def filter_node_with(self, state: CycleState, node: NodeInfo, more: dict[str, int], more_pods: int,
                         ) -> Status | None:
        """:meth:`filter_node` as if ``more_pods`` more pods requesting ``more`` in all were on ``node``
        (negative: pods gone), computed from the node's sums instead of moving pods in or out and back.
        Only for a pod no dynamic filter applies to (those read other nodes' pods); the caller checks."""
        status = self._static_status(state, node)
        if status is not None:
            return status
        extra, extra_pods = nominated_usage(state.pod, node)
        if more_pods or more:
            merged = dict(extra) if extra else {}
            for resource, amount in more.items():
                merged[resource] = merged.get(resource, 0) + amount
            extra, extra_pods = merged, extra_pods + more_pods
        return self.fit.check(state.pod, node, extra, extra_pods)

    def score(self, state: CycleState, node: NodeInfo) -> int:
        return sum(plugin.score(state, node) * plugin.weight for plugin in self.profile.scorers)

    def find_node(self, state: CycleState, bucket_memo: dict[Any, tuple[bool, int]] | None = None) -> NodeInfo | None:
        """The best feasible node, or None. ``bucket_memo``: for a run of pods of one signature and this
        framework whose only scorer is resource fit, with no nominated pods (see ``Placer.place``): a
        bucket's (fits, score), which its key (capacity class and usage) decides, kept across the run."""
        node_set = self.candidates(state)
        if not node_set.nodes:
            return None
        dynamic = self.dynamic_filters(state.pod)
        nominated = self.handle.snapshot.nominated_node_of(state.pod)
        if nominated is not None and _contains(node_set, nominated.name) and self.passes(state, nominated, dynamic):
            # evaluateNominatedNode: a pod that preempted goes to its nominated node when it fits there.
            return nominated
        if node_set.index is None:
            best: NodeInfo | None = None
            best_score = -1
            for node in node_set.nodes:
                if self.passes(state, node, dynamic):
                    value = self.score(state, node)
                    if value > best_score:
                        best, best_score = node, value
            return best
        return self._bucket_walk(state, node_set, dynamic, bucket_memo)

    def _bucket_walk(self, state: CycleState, node_set: NodeSet, dynamic: list[FilterPlugin],
                     memo: dict[Any, tuple[bool, int]] | None = None) -> NodeInfo | None:
        assert node_set.index is not None
        pod = state.pod
        levels: dict[int, list[Bucket]] = {}
        for bucket in node_set.index.buckets.values():
            known = memo.get(bucket.key) if memo is not None else None
            if known is None:
                sample = bucket.sample()
                fits = self.fit.fits(pod, sample)
                known = (fits, self.score(state, sample) if fits else 0)
                if memo is not None:
                    memo[bucket.key] = known
            if not known[0]:
                continue
            levels.setdefault(known[1], []).append(bucket)
        for value in sorted(levels, reverse=True):
            buckets = levels[value]
            firsts = [b.first() for b in buckets]
            first = min((n for n in firsts if n is not None), key=lambda n: n.index, default=None)
            if first is not None and self.passes(state, first, dynamic):
                return first
            members = sorted((n for b in buckets for n in b.members.values()), key=lambda n: n.index)
            for node in members:
                if node is not first and self.passes(state, node, dynamic):
                    return node
        return None

    def diagnose(self, state: CycleState, prefilter: Status | None = None, *, per_node: bool = True) -> Diagnosis:
        """Per-node failure statuses (the pod fits nowhere) and the reason histogram. With ``per_node``
        false only the histogram is made (the text of a ``FitError``), in time proportional to the usage
        buckets rather than to the nodes: what a group's failure message needs, many times per run."""
        snapshot = self.handle.snapshot
        scope = state.restrict.nodes if state.restrict is not None else snapshot.ordered_nodes()
        diagnosis = Diagnosis(len(scope))
        if prefilter is not None:
            diagnosis.prefilter_msg = prefilter.message
            diagnosis.unschedulable_plugins.add(prefilter.plugin)
            if per_node:
                for node in scope:
                    diagnosis.node_status[node.name] = prefilter
            return diagnosis
        self._static_diagnosis(state, diagnosis, per_node)
        dynamic = self.dynamic_filters(state.pod)
        node_set = self.candidates(state)
        if node_set.index is not None:
            any_nominated = bool(snapshot.nominated)
            for bucket in node_set.index.buckets.values():
                shared = self.fit.check(state.pod, bucket.sample())
                if shared is None or dynamic:
                    for node in bucket.ordered():
                        self._diagnose_node(state, node, diagnosis, dynamic, shared)
                    continue
                # Every node of a bucket fails resource fit the same way (same capacity, same usage), but
                # for the ones with nominated pods: one status for the lot, not a call per node.
                if not per_node and not any_nominated:
                    diagnosis.count(len(bucket.members), shared)
                    continue
                alike: list[str] = []
                for node in bucket.members.values():
                    if node.nominated:
                        self._diagnose_node(state, node, diagnosis, dynamic, shared)
                    else:
                        alike.append(node.name)
                if per_node:
                    diagnosis.add_many(alike, shared)
                else:
                    diagnosis.count(len(alike), shared)
        else:
            # Resource fit's status depends only on the node's usage bucket key (nodes with nominated pods
            # are checked with their nominations by ``_diagnose_node``): one check per key.
            check, pod = self.fit.check, state.pod
            if not per_node and not dynamic and not snapshot.nominated:
                # Only the histogram, as the indexed path above: nodes counted per key, one status each.
                samples: dict[int, NodeInfo] = {}
                counts: dict[int, int] = {}
                for node in node_set.nodes:
                    key = node.current_id()
                    if key in counts:
                        counts[key] += 1
                    else:
                        counts[key], samples[key] = 1, node
                for key, count in counts.items():
                    status = check(pod, samples[key])
                    if status is not None:
                        diagnosis.count(count, status)
                return diagnosis
            by_key: dict[int, Status | None] = {}
            for node in node_set.nodes:
                key = node.current_id()
                if key in by_key:
                    shared = by_key[key]
                else:
                    shared = by_key[key] = check(pod, node)
                self._diagnose_node(state, node, diagnosis, dynamic, shared)
        return diagnosis

    def _static_diagnosis(self, state: CycleState, diagnosis: Diagnosis, per_node: bool) -> None:
        """The nodes the static filters reject, in the attempt's scope."""
        static = self.static_result(state)
        if state.restrict is None and not per_node:
            if static.failure_counts is None:
                counted = Diagnosis(0)
                for status in self.static_failures(state).values():
                    counted.count(1, status)
                static.failure_counts = counted
            for reason, count in static.failure_counts.reasons.items():
                diagnosis.reasons[reason] = diagnosis.reasons.get(reason, 0) + count
            diagnosis.unschedulable_plugins |= static.failure_counts.unschedulable_plugins
            return
        failures = self.static_failures(state)
        if not failures:
            return
        in_scope = None if state.restrict is None else {n.name for n in state.restrict.nodes}
        for name, status in failures.items():
            if in_scope is None or name in in_scope:
                diagnosis.add(name, status)

    def _diagnose_node(
        self, state: CycleState, node: NodeInfo, diagnosis: Diagnosis, dynamic: list[FilterPlugin],
        shared: Status | None,
    ) -> None:
        status = self.fit.filter(state, node) if node.nominated else shared
        if status is not None:
            diagnosis.add(node.name, status)
            return
        for plugin in dynamic:
            status = plugin.filter(state, node)
            if status is not None and not status.ok:
                diagnosis.add(node.name, status)
                return


def _contains(node_set: NodeSet, name: str) -> bool:
    if node_set.index is not None:
        return name in node_set.index.names
    return any(n.name == name for n in node_set.nodes)
