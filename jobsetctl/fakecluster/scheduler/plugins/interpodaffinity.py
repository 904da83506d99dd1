"""InterPodAffinity: required pod affinity and anti-affinity (scheduling.md §3.3), as in
plugins/interpodaffinity/filtering.go upstream:

* affinity: every term's topology key must be on the node, and the node's domain must hold a pod that
  matches *all* the pod's affinity terms, unless no such pod exists anywhere and the pod matches its
  own terms (the first pod of a self-affine group) — ``UnschedulableAndUnresolvable``,
  ``node(s) didn't match pod affinity rules``;
* anti-affinity: no pod matching a term in the node's domain for that term's key — ``Unschedulable``,
  ``node(s) didn't match pod anti-affinity rules``;
* symmetry: no existing pod whose own required anti-affinity term matches the incoming pod in the
  node's domain — ``Unschedulable``, ``node(s) didn't satisfy existing pods anti-affinity rules``.

Efficiency (issue #5): the counts are built from the scheduler cache's set of pods that *have* required
anti-affinity and from a label index of bound pods (candidates for a term come from its first ``In`` or
``Exists`` requirement), never by scanning every pod for every node. They are computed once per
attempt and recomputed only when the cache changed (preemption dry runs remove pods temporarily).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar

from jobsetctl.fakecluster.scheduler.interface import (
    ClusterEvent,
    CycleState,
    EventDetail,
    FilterPlugin,
    FilterStage,
    PreFilterPlugin,
    Status,
    unresolvable,
    unschedulable,
)
from jobsetctl.fakecluster.scheduler.messages import AFFINITY, ANTI_AFFINITY, EXISTING_ANTI_AFFINITY
from jobsetctl.fakecluster.scheduler.podinfo import AffinityTerm, PodInfo
from jobsetctl.fakecluster.scheduler.snapshot import NodeInfo

STATE_KEY = "InterPodAffinity"
Pair = tuple[str, str]


@dataclass(slots=True)
class AffinityState:
    counter: int
    existing_anti: dict[Pair, int] = field(default_factory=dict)
    affinity: dict[Pair, int] = field(default_factory=dict)
    anti: dict[Pair, int] = field(default_factory=dict)
    matches_own_terms: bool = False


class InterPodAffinity(PreFilterPlugin, FilterPlugin):
    name = "InterPodAffinity"
    stage = FilterStage.DYNAMIC
    events: ClassVar[frozenset[ClusterEvent]] = frozenset({
        ClusterEvent.ASSIGNED_POD_ADD, ClusterEvent.ASSIGNED_POD_UPDATE, ClusterEvent.ASSIGNED_POD_DELETE,
        ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE, ClusterEvent.UNSCHEDULED_POD_UPDATE,
    })

    def hint(self, target: PodInfo, event: ClusterEvent, subject: PodInfo | None, group: tuple[str, ...] | None,
             detail: EventDetail | None = None) -> bool:
        """``isSchedulableAfterPodChange`` and ``isSchedulableAfterNodeChange`` (plugin.go).

        Pods (bound ones: we send no event for an unscheduled pod, which upstream skips): an added pod
        helps when it matches all the target's affinity terms; a label update when it now matches all the
        affinity terms and did not, or matched all the anti-affinity terms and no longer does; a deleted
        pod when it matched all the anti-affinity terms, or when one of its own anti-affinity terms
        matched the target (the symmetric rule). No terms: "matches all" is false. A label update of the
        waiting pod itself always helps (its labels decide the symmetric rule and its own terms' matches).

        Nodes: an affinity term helps when the node has its topology key and did not (or had another
        value, or the node is new); an anti-affinity term when the node is new, lost the key or changed
        its value."""
        if event in (ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE):
            return self._node_hint(target, detail)
        if subject is None:
            return True
        if event is ClusterEvent.UNSCHEDULED_POD_UPDATE:
            return subject.uid == target.uid and (detail is None or detail.old_labels != subject.labels)
        labels = self.handle.namespace_labels

        def matches_all(terms: tuple[AffinityTerm, ...], pod_labels: dict[str, str]) -> bool:
            return bool(terms) and all(t.matches(subject.namespace, pod_labels, labels) for t in terms)

        if event is ClusterEvent.ASSIGNED_POD_ADD:
            return matches_all(target.affinity, subject.labels)
        if event is ClusterEvent.ASSIGNED_POD_UPDATE:
            if detail is None or detail.old_labels is None:
                return True
            old = detail.old_labels
            if not matches_all(target.affinity, old) and matches_all(target.affinity, subject.labels):
                return True
            return matches_all(target.anti_affinity, old) and not matches_all(target.anti_affinity, subject.labels)
        if event is ClusterEvent.ASSIGNED_POD_DELETE:
            if matches_all(target.anti_affinity, subject.labels):
                return True
            return any(t.matches(target.namespace, target.labels, labels) for t in subject.anti_affinity)
        return True

    @staticmethod
    def _node_hint(target: PodInfo, detail: EventDetail | None) -> bool:
        if detail is None or detail.new_node is None:
            return True
        new, old = detail.new_node.labels, detail.old_node.labels if detail.old_node is not None else None
        for term in target.affinity:
            if term.topology_key in new and (old is None or old.get(term.topology_key) != new[term.topology_key]):
                return True
        for term in target.anti_affinity:
            if old is None:
                return True
            if term.topology_key in old and old.get(term.topology_key) != new.get(term.topology_key):
                return True
        return False

    def applies_to(self, pod: PodInfo) -> bool:
        return pod.has_affinity_terms or bool(self.handle.snapshot.anti_affinity_pods)

    def pre_filter(self, state: CycleState) -> Status | None:
        self.state_for(state)
        return None

    def state_for(self, state: CycleState) -> AffinityState | None:
        snapshot = self.handle.snapshot
        if not state.pod.has_affinity_terms and not snapshot.anti_affinity_pods:
            return None
        cached = state.data.get(STATE_KEY)
        if isinstance(cached, AffinityState) and cached.counter == snapshot.change_counter:
            return cached
        computed = self._compute(state.pod)
        state.data[STATE_KEY] = computed
        return computed

    def _compute(self, pod: PodInfo) -> AffinityState:
        snapshot = self.handle.snapshot
        ns_labels = self.handle.namespace_labels
        result = AffinityState(snapshot.change_counter)
        for other in snapshot.anti_affinity_pods.values():
            node = snapshot.nodes.get(other.node_name or "")
            if node is None or other.uid == pod.uid:
                continue
            for term in other.anti_affinity:
                value = node.labels.get(term.topology_key)
                if value is not None and term.matches(pod.namespace, pod.labels, ns_labels):
                    pair = (term.topology_key, value)
                    result.existing_anti[pair] = result.existing_anti.get(pair, 0) + 1
        if pod.affinity:
            for other in self._candidates(pod.affinity[0]):
                if other.uid == pod.uid or not all(t.matches(other.namespace, other.labels, ns_labels)
                                                   for t in pod.affinity):
                    continue
                node = snapshot.nodes.get(other.node_name or "")
                if node is None:
                    continue
                for term in pod.affinity:
                    value = node.labels.get(term.topology_key)
                    if value is not None:
                        pair = (term.topology_key, value)
                        result.affinity[pair] = result.affinity.get(pair, 0) + 1
            result.matches_own_terms = all(t.matches(pod.namespace, pod.labels, ns_labels) for t in pod.affinity)
        for term in pod.anti_affinity:
            for other in self._candidates(term):
                if other.uid == pod.uid or not term.matches(other.namespace, other.labels, ns_labels):
                    continue
                node = snapshot.nodes.get(other.node_name or "")
                value = node.labels.get(term.topology_key) if node is not None else None
                if value is not None:
                    pair = (term.topology_key, value)
                    result.anti[pair] = result.anti.get(pair, 0) + 1
        return result

    def _candidates(self, term: AffinityTerm) -> Iterable[PodInfo]:
        """Bound pods that can match ``term``: those carrying its first positive requirement's key."""
        snapshot = self.handle.snapshot
        for requirement in term.selector.requirements:
            if requirement.is_positive:
                if requirement.operator == "In":
                    seen: dict[str, PodInfo] = {}
                    for value in sorted(requirement.values):
                        for pod in snapshot.pods_with_label(requirement.key, value):
                            seen[pod.uid] = pod
                    return list(seen.values())
                return list(snapshot.pods_with_label(requirement.key, None))
        return list(snapshot.pods.values())

    def filter(self, state: CycleState, node: NodeInfo) -> Status | None:
        computed = self.state_for(state)
        if computed is None:
            return None
        pod = state.pod
        labels = node.labels
        if pod.affinity:
            pods_exist = True
            for term in pod.affinity:
                value = labels.get(term.topology_key)
                if value is None:
                    return unresolvable(self.name, AFFINITY)
                if computed.affinity.get((term.topology_key, value), 0) <= 0:
                    pods_exist = False
            if not pods_exist and not (not computed.affinity and computed.matches_own_terms):
                return unresolvable(self.name, AFFINITY)
        if computed.anti:
            for term in pod.anti_affinity:
                value = labels.get(term.topology_key)
                if value is not None and computed.anti.get((term.topology_key, value), 0) > 0:
                    return unschedulable(self.name, ANTI_AFFINITY)
        if computed.existing_anti:
            for pair in labels.items():
                if computed.existing_anti.get(pair, 0) > 0:
                    return unschedulable(self.name, EXISTING_ANTI_AFFINITY)
        return None
