"""The JobSet pod webhooks ``mpod.kb.io`` (mutating) and ``vpod.kb.io`` (validating), as pure functions.

jobset.md §2.5 and §3.6; kubernetes-sigs/jobset ``pkg/webhooks/pod_webhook.go`` (read through the
file index). Both fire on pod CREATE; they key on the ``jobset.sigs.k8s.io/jobset-name``
*annotation*. The fake API server calls them from :mod:`jobsetctl.fakecluster.podadmission`, so
``render`` and ``simulate`` share them; everything they look up comes through
:class:`WebhookLookups`.

Mutating (``Default``), in order:

1. no ``jobset-name`` annotation → unchanged; the node-selector strategy annotation → unchanged;
2. ``spec.priority`` set (the Priority admission plugin ran before) → label
   ``jobset.sigs.k8s.io/priority: "<priority>"`` on every JobSet pod (#1077, jobset.md §6 #10).
   Newer jobset code than the spec's snapshot writes negative priorities as ``n<abs>``; the spec's
   snapshot writes the plain number, which we follow;
3. exclusive placement: the leader (completion index ``"0"``) gets one required podAffinity term and
   one required podAntiAffinity term appended (with ``namespaceSelector: {}``); a follower whose
   leader exists and is scheduled gets ``nodeSelector[<topologyKey>]`` = the leader node's label.
   Node lookup failures deny the request (``nodes "<n>" not found``, ``node does not have topology
   label: <key>``).

Validating (``ValidateCreate``) for exclusive followers: node selector present and holding the
topology key, then exactly one live leader (``<js>-<rj>-<jobIdx>-0`` by the pod-name index, which
strips the last ``-`` part of names with at least five parts; terminating, Failed and Succeeded
copies ignored) with the same controller-owner UID, and scheduled.

Quirk (derived from code): a follower whose template sets no nodeSelector is denied with
``follower pod node selector not set`` while its leader is unscheduled — the mutating webhook left the
selector alone — so the "leader pod not yet scheduled" message only appears when the template
itself already selects on the topology key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from jobsetctl.diagnostics import Layer, Severity
from jobsetctl.jobset import api, names
from jobsetctl.kinds.interface import Object
from jobsetctl.rules.interface import Rule
from jobsetctl.rules.registry import define

MUTATING_WEBHOOK = "mpod.kb.io"
VALIDATING_WEBHOOK = "vpod.kb.io"
COMPLETION_INDEX_KEY = "batch.kubernetes.io/job-completion-index"
#: ``removePodNameSuffix`` refuses names with fewer parts (<jobset>-<rj>-<jobIdx>-<podIdx>-<suffix>).
MIN_POD_NAME_PARTS = 5

_SPEC = "jobset.md §2.5, §3.6"
FOLLOWER_NODE_SELECTOR = define(
    "pod-jobset-follower-node-selector", Layer.WEBHOOK, Severity.ERROR,
    "vpod.kb.io denies an exclusive-placement follower pod without a nodeSelector on the topology key.",
    spec=_SPEC,
    doc="Transient: the Job controller retries the pod once the leader is scheduled.",
)
LEADER_NOT_SCHEDULED = define(
    "pod-jobset-leader-not-scheduled", Layer.WEBHOOK, Severity.ERROR,
    "vpod.kb.io denies an exclusive-placement follower pod while its leader pod is not scheduled.",
    spec=_SPEC,
)
#: Refusals that only mean "the leader is not scheduled yet": upstream's design, the Job controller
#: retries the pod (``simulate`` does not count them as rejections, ``render`` explains them).
WAITING_FOR_LEADER = frozenset({FOLLOWER_NODE_SELECTOR.id, LEADER_NOT_SCHEDULED.id})
LEADER_LOOKUP = define(
    "pod-jobset-leader-lookup", Layer.WEBHOOK, Severity.ERROR,
    "The leader pod of an exclusive-placement follower is missing, ambiguous, or owned by another Job.",
    spec=_SPEC,
)
LEADER_TOPOLOGY = define(
    "pod-jobset-leader-topology", Layer.WEBHOOK, Severity.ERROR,
    "mpod.kb.io cannot read the topology label of the node the leader pod runs on.",
    spec=_SPEC,
)


class WebhookLookups(Protocol):
    """What the webhooks read from the cluster (the controller-runtime client and its indexes)."""

    def pods_by_name_stem(self, namespace: str, stem: str) -> list[Object]:
        """Pods with the exclusive-topology annotation whose name minus the last ``-`` part is
        ``stem`` (the ``podName`` field index)."""

    def node(self, name: str) -> Object | None:
        """A Node by name."""


@dataclass(frozen=True, slots=True)
class Denial:
    """A webhook denial: the rule and the message the API server returns."""

    rule: Rule
    webhook: str
    reason: str

    @property
    def message(self) -> str:
        return f'admission webhook "{self.webhook}" denied the request: {self.reason}'


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _annotations(pod: Object) -> dict[str, Any]:
    return _mapping(_mapping(pod.get("metadata")).get("annotations"))


def _labels(pod: Object) -> dict[str, Any]:
    return _mapping(_mapping(pod.get("metadata")).get("labels"))


def is_jobset_pod(pod: Object) -> bool:
    return api.JOBSET_NAME_KEY in _annotations(pod)


def uses_node_selector_strategy(pod: Object) -> bool:
    return api.NODE_SELECTOR_STRATEGY_KEY in _annotations(pod)


def exclusive_topology(pod: Object) -> str | None:
    value = _annotations(pod).get(api.EXCLUSIVE_TOPOLOGY_KEY)
    return value if isinstance(value, str) else None


def is_leader(pod: Object) -> bool:
    """``placement.IsLeaderPod``: completion index annotation ``"0"``."""
    return _annotations(pod).get(COMPLETION_INDEX_KEY) == "0"


def priority_label_value(priority: int) -> str:
    return str(priority)


def pod_name_stem(name: str) -> str | None:
    """``removePodNameSuffix``: the name without its random suffix, or None when it has too few parts."""
    parts = name.split("-")
    if len(parts) < MIN_POD_NAME_PARTS:
        return None
    return "-".join(parts[:-1])


def _leader_name(pod: Object) -> tuple[str | None, str | None]:
    """``genLeaderPodName``: (name, error)."""
    labels = _labels(pod)
    values: list[str] = []
    for key in (api.JOBSET_NAME_KEY, api.REPLICATED_JOB_NAME_KEY, api.JOB_INDEX_KEY):
        value = labels.get(key)
        if not isinstance(value, str):
            return None, f"pod missing label: {key}"
        values.append(value)
    return names.pod_hostname(values[0], values[1], values[2], "0"), None


def _controller_uid(pod: Object) -> str | None:
    for ref in _mapping(pod.get("metadata")).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller") is True:
            return str(ref.get("uid", ""))
    return None


def leader_for_follower(pod: Object, lookups: WebhookLookups) -> tuple[Object | None, str | None]:
    """``leaderPodForFollower``: (leader, error message)."""
    leader_name, problem = _leader_name(pod)
    if leader_name is None:
        return None, problem
    namespace = str(_mapping(pod.get("metadata")).get("namespace", ""))
    candidates = [
        p for p in lookups.pods_by_name_stem(namespace, leader_name)
        if not _mapping(p.get("metadata")).get("deletionTimestamp")
        and _mapping(p.get("status")).get("phase") not in ("Failed", "Succeeded")
    ]
    if len(candidates) != 1:
        return None, (f"expected 1 leader pod ({leader_name}), but got {len(candidates)}. "
                      "this is an expected, transient error")
    leader = candidates[0]
    follower_uid = _controller_uid(pod)
    if follower_uid is None:
        return None, "follower pod has no owner reference"
    leader_uid = _controller_uid(leader)
    if leader_uid is None:
        return None, f'leader pod "{_mapping(leader.get("metadata")).get("name")}" has no owner reference'
    if follower_uid != leader_uid:
        return None, f"follower pod owner UID ({follower_uid}) != leader pod owner UID ({leader_uid})"
    return leader, None


def _node_topology(node_name: str, key: str, lookups: WebhookLookups) -> tuple[str | None, str | None]:
    node = lookups.node(node_name)
    if node is None:
        return None, f'nodes "{node_name}" not found'
    value = _mapping(_mapping(node.get("metadata")).get("labels")).get(key)
    if not isinstance(value, str):
        return None, f"node does not have topology label: {key}"
    return value, None


def exclusive_affinity_terms(pod: Object, topology_key: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The leader's required podAffinity and podAntiAffinity terms (jobset.md §3.6)."""
    labels = _labels(pod)
    job_key = str(labels.get(api.JOB_KEY, ""))
    priority = str(labels.get(api.PRIORITY_KEY, ""))
    affinity = {
        "labelSelector": {"matchExpressions": [
            {"key": api.JOB_KEY, "operator": "In", "values": [job_key]},
        ]},
        "topologyKey": topology_key,
        "namespaceSelector": {},
    }
    anti_affinity = {
        "labelSelector": {"matchExpressions": [
            {"key": api.JOB_KEY, "operator": "Exists"},
            {"key": api.JOB_KEY, "operator": "NotIn", "values": [job_key]},
            {"key": api.PRIORITY_KEY, "operator": "In", "values": [priority]},
        ]},
        "topologyKey": topology_key,
        "namespaceSelector": {},
    }
    return affinity, anti_affinity


def default_pod(pod: Object, lookups: WebhookLookups) -> Denial | None:
    """``mpod.kb.io``: mutate ``pod`` in place; a :class:`Denial` when the webhook errors."""
    if not is_jobset_pod(pod) or uses_node_selector_strategy(pod):
        return None
    spec = pod.setdefault("spec", {})
    priority = spec.get("priority")
    if isinstance(priority, int) and not isinstance(priority, bool):
        metadata = pod.setdefault("metadata", {})
        labels = metadata.get("labels")
        if not isinstance(labels, dict):
            labels = {}
            metadata["labels"] = labels
        labels[api.PRIORITY_KEY] = priority_label_value(priority)
    topology_key = exclusive_topology(pod)
    if topology_key is None:
        return None
    if is_leader(pod):
        affinity, anti_affinity = exclusive_affinity_terms(pod, topology_key)
        block = spec.get("affinity")
        if not isinstance(block, dict):
            block = {}
            spec["affinity"] = block
        for kind, term in (("podAffinity", affinity), ("podAntiAffinity", anti_affinity)):
            section = block.get(kind)
            if not isinstance(section, dict):
                section = {}
                block[kind] = section
            required = section.get("requiredDuringSchedulingIgnoredDuringExecution")
            if not isinstance(required, list):
                required = []
                section["requiredDuringSchedulingIgnoredDuringExecution"] = required
            required.append(term)
        return None
    leader, _ = leader_for_follower(pod, lookups)
    if leader is None:
        return None  # the validating webhook rejects the follower
    node_name = str(_mapping(leader.get("spec")).get("nodeName") or "")
    if not node_name:
        return None
    value, problem = _node_topology(node_name, topology_key, lookups)
    if value is None:
        return Denial(LEADER_TOPOLOGY, MUTATING_WEBHOOK, problem or "")
    selector = spec.get("nodeSelector")
    if not isinstance(selector, dict):
        selector = {}
        spec["nodeSelector"] = selector
    selector[topology_key] = value
    return None


def validate_pod(pod: Object, lookups: WebhookLookups) -> Denial | None:
    """``vpod.kb.io``: a :class:`Denial` for a follower that may not be created yet."""
    if not is_jobset_pod(pod) or uses_node_selector_strategy(pod):
        return None
    topology_key = exclusive_topology(pod)
    if topology_key is None or is_leader(pod):
        return None
    selector = _mapping(_mapping(pod.get("spec")).get("nodeSelector"))
    if not selector:
        return Denial(FOLLOWER_NODE_SELECTOR, VALIDATING_WEBHOOK, "follower pod node selector not set")
    if topology_key not in selector:
        return Denial(FOLLOWER_NODE_SELECTOR, VALIDATING_WEBHOOK,
                      f"follower pod node selector for topology domain not found. missing selector: {topology_key}")
    leader, problem = leader_for_follower(pod, lookups)
    if leader is None:
        return Denial(LEADER_LOOKUP, VALIDATING_WEBHOOK, problem or "")
    if not _mapping(leader.get("spec")).get("nodeName"):
        return Denial(LEADER_NOT_SCHEDULED, VALIDATING_WEBHOOK,
                      "leader pod not yet scheduled, not creating follower pod. this is an expected, transient error")
    return None
