"""Admission of Pods in the fake API server: the plugins and webhooks that mutate or reject a pod create.

Pods are created only by controllers, from templates that admission already checked, so instead of
the structural schema they go through what kube-apiserver runs on a pod CREATE, in its order:

1. mutating admission plugins, in ``AllOrderedPlugins`` order (``pkg/kubeapiserver/options/
   plugins.go``): **Priority** (``plugin/pkg/admission/priority``) then **DefaultTolerationSeconds**
   (``plugin/pkg/admission/defaulttolerationseconds``);
2. mutating webhooks: the JobSet ``mpod.kb.io`` (:mod:`jobsetctl.jobset.podwebhook`);
3. the pod strategy's ``PrepareForCreate`` (``pkg/registry/core/pod/strategy.go``), which the
   registry runs *after* mutating admission: ``status = {phase: Pending, qosClass}`` and the
   ``matchLabelKeys``/``mismatchLabelKeys`` merge into every (anti-)affinity term's labelSelector
   (scheduling.md §3.3). Because it comes after ``mpod.kb.io``, a key such as
   ``jobset.sigs.k8s.io/priority`` that the webhook adds is visible to the merge;
4. validating webhooks: ``vpod.kb.io``.

Pod API validation (``ValidatePodCreate``) is not repeated: the template was validated with its Job.

Rejections are findings of the rules below (layer ``webhook``), whose message is the API server's
error text, e.g. ``pods "pi-0-" is forbidden: no PriorityClass with name high was found`` — the name is
the generateName because the registry generates the name after admission (``extractResourceName``).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.jobset import podwebhook
from jobsetctl.jobset.api import EXCLUSIVE_TOPOLOGY_KEY
from jobsetctl.kinds.interface import Object
from jobsetctl.kube.priority import resolve_priority
from jobsetctl.kube.quantity import QuantityError, parse_quantity
from jobsetctl.rules.registry import define

if TYPE_CHECKING:
    from jobsetctl.fakecluster.apiserver import APIServer, WatchEvent

NOT_READY_TAINT = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
#: ``defaultNotReadyTolerationSeconds`` / ``defaultUnreachableTolerationSeconds`` (flag defaults).
DEFAULT_TOLERATION_SECONDS = 300

PRIORITY_CLASS_NOT_FOUND = define(
    "pod-priority-class-not-found", Layer.WEBHOOK, Severity.ERROR,
    "The Priority admission plugin rejects a pod whose priorityClassName names no PriorityClass.",
    spec="scheduling.md §3.1",
)
PRIORITY_PRESET = define(
    "pod-priority-preset", Layer.WEBHOOK, Severity.ERROR,
    "The Priority admission plugin rejects a pod whose spec.priority or spec.preemptionPolicy differs from "
    "what its PriorityClass gives.",
    spec="scheduling.md §3.1",
)


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _forbidden(pod: Object, reason: str) -> str:
    """``admission.NewForbidden``: the name is the generateName when the name is not generated yet."""
    meta = _mapping(pod.get("metadata"))
    name = meta.get("generateName") or meta.get("name") or "Unknown"
    return f'pods "{name}" is forbidden: {reason}'


# --- 1. admission plugins --------------------------------------------------------------------------


def admit_priority(api: APIServer, pod: Object) -> Finding | None:
    """Priority: resolve ``priorityClassName`` (or the global default) into ``priority`` and
    ``preemptionPolicy``; an unknown class or a conflicting preset value is Forbidden."""
    spec = pod.setdefault("spec", {})
    name = spec.get("priorityClassName")
    resolution = resolve_priority(name if isinstance(name, str) else None, api)
    if resolution.error is not None:
        return PRIORITY_CLASS_NOT_FOUND.finding(_forbidden(pod, resolution.error), path="spec.priorityClassName")
    if resolution.class_name and not name:
        spec["priorityClassName"] = resolution.class_name
    preset = spec.get("priority")
    if isinstance(preset, int) and not isinstance(preset, bool) and preset != resolution.priority:
        return PRIORITY_PRESET.finding(_forbidden(
            pod, f"the integer value of priority ({preset}) must not be provided in pod spec; priority admission "
                 f"controller computed {resolution.priority} from the given PriorityClass name"), path="spec.priority")
    spec["priority"] = resolution.priority
    policy = spec.get("preemptionPolicy")
    if isinstance(policy, str) and policy and policy != resolution.preemption_policy:
        return PRIORITY_PRESET.finding(_forbidden(
            pod, f"the string value of PreemptionPolicy ({policy}) must not be provided in pod spec; priority "
                 f"admission controller computed {resolution.preemption_policy} from the given PriorityClass name"),
            path="spec.preemptionPolicy")
    spec["preemptionPolicy"] = resolution.preemption_policy
    return None


def default_toleration_seconds(pod: Object) -> None:
    """DefaultTolerationSeconds: tolerate not-ready and unreachable NoExecute for 300 s unless some
    toleration (empty key or that key; empty effect or NoExecute) already does."""
    spec = pod.setdefault("spec", {})
    tolerations = [t for t in _list(spec.get("tolerations")) if isinstance(t, dict)]

    def tolerated(key: str) -> bool:
        return any((t.get("key") in (None, "", key)) and (t.get("effect") in (None, "", "NoExecute"))
                   for t in tolerations)

    added = [{"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": DEFAULT_TOLERATION_SECONDS}
             for key in (NOT_READY_TAINT, UNREACHABLE_TAINT) if not tolerated(key)]
    if added:
        spec["tolerations"] = tolerations + added


# --- 3. PrepareForCreate ---------------------------------------------------------------------------


def merge_label_keys(pod: Object) -> None:
    """``mutatePodAffinity``: for each term with a labelSelector, append ``key In (value)`` for its
    ``matchLabelKeys`` and ``key NotIn (value)`` for its ``mismatchLabelKeys``, for the keys the pod
    has as labels (required and preferred terms of podAffinity and podAntiAffinity)."""
    affinity = _mapping(_mapping(pod.get("spec")).get("affinity"))
    if not affinity:
        return  # no terms to merge into (most pods): the walk below would find none
    labels = _mapping(_mapping(pod.get("metadata")).get("labels"))
    for kind in ("podAffinity", "podAntiAffinity"):
        block = _mapping(affinity.get(kind))
        terms = [t for t in _list(block.get("requiredDuringSchedulingIgnoredDuringExecution")) if isinstance(t, dict)]
        for weighted in _list(block.get("preferredDuringSchedulingIgnoredDuringExecution")):
            term = _mapping(weighted).get("podAffinityTerm")
            if isinstance(term, dict):
                terms.append(term)
        for term in terms:
            selector = term.get("labelSelector")
            if not isinstance(selector, dict):
                continue  # a nil selector matches nothing; nothing to merge into
            for field_name, operator in (("matchLabelKeys", "In"), ("mismatchLabelKeys", "NotIn")):
                for key in _list(term.get(field_name)):
                    if isinstance(key, str) and isinstance(labels.get(key), str):
                        expressions = selector.get("matchExpressions")
                        if not isinstance(expressions, list):
                            expressions = []
                            selector["matchExpressions"] = expressions
                        expressions.append({"key": key, "operator": operator, "values": [labels[key]]})


def _resources(container: dict[str, Any], kind: str) -> dict[str, Any]:
    return _mapping(_mapping(container.get("resources")).get(kind))


def qos_class(pod: Object) -> str:
    """``qos.GetPodQOS`` for cpu and memory: BestEffort without any, Guaranteed when every container
    limits both and requests (if given) equal the limits, else Burstable."""
    spec = _mapping(pod.get("spec"))
    containers = [_mapping(c) for key in ("initContainers", "containers") for c in _list(spec.get(key))]
    any_set = False
    guaranteed = bool(containers)
    for container in containers:
        requests, limits = _resources(container, "requests"), _resources(container, "limits")
        for resource in ("cpu", "memory"):
            request, limit = requests.get(resource), limits.get(resource)
            if request is not None or limit is not None:
                any_set = True
            if limit is None or (request is not None and _amount(request) != _amount(limit)):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def _amount(value: Any) -> Any:
    try:
        return parse_quantity(value)
    except QuantityError:
        return value


def prepare_for_create(pod: Object) -> None:
    pod["status"] = {"phase": "Pending", "qosClass": qos_class(pod)}
    merge_label_keys(pod)


# --- lookups for the JobSet webhooks ---------------------------------------------------------------


class _PodNameIndex:
    """The jobset manager's ``podName`` field index over the fake API server's pods."""

    def __init__(self, api: APIServer) -> None:
        # Weak, so that the registry below does not keep a finished cluster alive.
        self._api = weakref.ref(api)
        self._stems: dict[tuple[str, str], dict[str, None]] = {}
        for pod in api.iter_kind("", "Pod"):
            self._add(pod)
        api.subscribe(self._on_event)

    @staticmethod
    def _key(pod: Object) -> tuple[str, str] | None:
        if podwebhook.exclusive_topology(pod) is None:
            return None
        meta = _mapping(pod.get("metadata"))
        stem = podwebhook.pod_name_stem(str(meta.get("name", "")))
        return None if stem is None else (str(meta.get("namespace", "")), stem)

    def _add(self, pod: Object) -> None:
        key = self._key(pod)
        if key is not None:
            self._stems.setdefault(key, {})[str(_mapping(pod.get("metadata")).get("name"))] = None

    def _on_event(self, event: WatchEvent) -> None:
        if event.key[1] != "Pod" or event.key[0] != "":
            return
        # Every pod write comes here; only pods of exclusive placement are indexed (see ``_key``).
        md = event.obj.get("metadata")
        annotations = md.get("annotations") if isinstance(md, dict) else None
        if not isinstance(annotations, dict) or not isinstance(annotations.get(EXCLUSIVE_TOPOLOGY_KEY), str):
            return
        key = self._key(event.obj)
        if key is None:
            return
        if event.type == "DELETED":
            self._stems.get(key, {}).pop(str(_mapping(event.obj.get("metadata")).get("name")), None)
        else:
            self._add(event.obj)

    def pods_by_name_stem(self, namespace: str, stem: str) -> list[Object]:
        api = self._api()
        out: list[Object] = []
        if api is None:
            return out
        for name in self._stems.get((namespace, stem), {}):
            pod = api.get("", "Pod", namespace, name)
            if pod is not None:
                out.append(pod)
        return out

    def node(self, name: str) -> Object | None:
        api = self._api()
        return None if api is None else api.get("", "Node", "", name)


_INDEXES: weakref.WeakKeyDictionary[Any, _PodNameIndex] = weakref.WeakKeyDictionary()


def webhook_lookups(api: APIServer) -> podwebhook.WebhookLookups:
    index = _INDEXES.get(api)
    if index is None:
        index = _PodNameIndex(api)
        _INDEXES[api] = index
    return index


# --- the chain ---------------------------------------------------------------------------------------


def _denied(denial: podwebhook.Denial) -> Finding:
    return denial.rule.finding(denial.message)


def admit_pod(api: APIServer, pod: Object) -> list[Finding]:
    """Admit a pod create: mutate ``pod`` in place; a finding of severity error rejects it."""
    finding = admit_priority(api, pod)
    if finding is not None:
        return [finding]
    default_toleration_seconds(pod)
    lookups = webhook_lookups(api)
    denial = podwebhook.default_pod(pod, lookups)
    if denial is not None:
        return [_denied(denial)]
    prepare_for_create(pod)
    denial = podwebhook.validate_pod(pod, lookups)
    if denial is not None:
        return [_denied(denial)]
    return []
