"""Faults and operator actions of a Scenario, applied to the fake cluster at their virtual time.

* ``failNode``: the kubelet fails the node (``Kubelet.fail_node``): its pods fail, it stops being Ready.
* ``failPod``: the kubelet fails one pod (``Kubelet.fail_pod``). ``name`` matches a pod with exactly that
  name or, when there is none, a pod named ``<name>-<generated suffix>`` (so ``js-workers-0-0`` finds the
  pod of index 0 of Job ``js-workers-0``); ``namePrefix`` matches any name that starts with it. Of the
  matching pods, the first one *created* that is bound to a node and not finished is failed (creation
  order, not name order, so the choice does not depend on random name suffixes).
* ``suspend`` / ``resume``: ``spec.suspend`` set to true / false through an update, so admission sees it
  (an update admission refuses is recorded as ``Rejected`` by the API server).
* ``delete``: deleted with background propagation, as ``kubectl delete`` does.
* ``patch``: ``merge`` applied as a JSON merge patch (RFC 7386: mappings merge, ``null`` removes a key,
  anything else replaces), as ``kubectl patch --type merge`` does, then written through an update, so
  admission judges it (an immutable field is refused and recorded as ``Rejected``). E.g. an in-place
  change of a PodGroup's ``minCount`` (mutable on 1.37), which the scheduler's queueing hints react to.

An action whose target does not exist at that moment does not stop the run: it is recorded as a
``Rejected`` event of the target (reason ``NotFound``, a message that names the action and its time and
says whether the object never existed or was already gone), and counts as a rejection for the exit
status, like a refused submission: a scenario that did not do what it says should fail a CI job.
"""

from __future__ import annotations

from typing import Any

from jobsetctl.fakecluster.cluster import FakeCluster
from jobsetctl.kube.duration import format_duration
from jobsetctl.kube.jsontree import copy_tree
from jobsetctl.simulate import access
from jobsetctl.simulate.ledger import Ledger
from jobsetctl.simulate.scenario import Action, ObjectTarget, PodTarget

NOT_FOUND = "NotFound"


def apply_action(cluster: FakeCluster, ledger: Ledger, action: Action) -> bool:
    """Apply one action now. Returns False when it could not be applied (a Rejected event says why)."""
    if action.verb == "failNode" and action.node is not None:
        return _fail_node(cluster, ledger, action, action.node)
    if action.verb == "failPod" and action.pod is not None:
        return _fail_pod(cluster, ledger, action, action.pod)
    if action.target is not None:
        obj = cluster.api.get(action.target.group, action.target.kind, action.target.namespace, action.target.name)
        if obj is None:
            _not_found(cluster, ledger, action, action.target.kind, action.target.namespace, action.target.name)
            return False
        if action.verb == "delete":
            cluster.api.delete(obj, propagation="Background")
            return True
        if action.verb == "patch":
            return cluster.api.update(merge_patch(copy_tree(obj), action.merge or {})).ok
        return _set_suspend(cluster, obj, action.verb == "suspend")
    return False


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch of ``target`` (changed in place where it is a mapping)."""
    if not isinstance(patch, dict):
        return copy_tree(patch)
    if not isinstance(target, dict):
        target = {}
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        else:
            target[key] = merge_patch(target.get(key), value)
    return target


def _fail_node(cluster: FakeCluster, ledger: Ledger, action: Action, name: str) -> bool:
    if cluster.api.get("", "Node", "", name) is None:
        _not_found(cluster, ledger, action, "Node", "", name)
        return False
    kubelet: Any = cluster.components["kubelet"]
    return bool(kubelet.fail_node(name))


def find_pod(cluster: FakeCluster, target: PodTarget) -> dict[str, Any] | None:
    """The pod ``failPod`` acts on (see the module docstring), or None."""
    pods = cluster.api.list("", "Pod", target.namespace)
    if target.name is not None:
        exact = cluster.api.get("", "Pod", target.namespace, target.name)
        if exact is not None and _is_running(exact):
            return exact
        prefix = target.name + "-"
        candidates = [p for p in pods if _name(p).startswith(prefix) and "-" not in _name(p)[len(prefix):]]
    else:
        prefix = target.name_prefix or ""
        candidates = [p for p in pods if _name(p).startswith(prefix)]
    for pod in candidates:
        if _is_running(pod):
            return pod
    return None


def _fail_pod(cluster: FakeCluster, ledger: Ledger, action: Action, target: PodTarget) -> bool:
    pod = find_pod(cluster, target)
    if pod is None:
        name = target.name if target.name is not None else f"{target.name_prefix}*"
        _not_found(cluster, ledger, action, "Pod", target.namespace, name, running=True)
        return False
    kubelet: Any = cluster.components["kubelet"]
    if kubelet.fail_pod(pod):
        return True
    # Bound and not finished, yet the kubelet does not run it: its node has failed.
    _not_found(cluster, ledger, action, "Pod", target.namespace, access.name_of(pod), running=True)
    return False


def _set_suspend(cluster: FakeCluster, current: dict[str, Any], suspend: bool) -> bool:
    updated = copy_tree(current)
    spec = updated.get("spec")
    if not isinstance(spec, dict):
        spec = {}
        updated["spec"] = spec
    spec["suspend"] = suspend
    return cluster.api.update(updated).ok


def _not_found(
    cluster: FakeCluster, ledger: Ledger, action: Action, kind: str, namespace: str, name: str, *, running: bool = False
) -> None:
    when = format_duration(action.at)
    if running:
        message = f"{action.describe()} at {when}: no running pod matches in namespace {namespace!r}; the action was skipped"
    else:
        existed = (kind, namespace, name) in ledger.objects
        what = f"{kind} {namespace + '/' if namespace else ''}{name}"
        history = "was already deleted" if existed else "never existed"
        message = f"{action.describe()} at {when}: {what} {history}; the action was skipped"
    cluster.recorder.record(kind, namespace, name, "Rejected", reason=NOT_FOUND, message=message)


def _name(obj: dict[str, Any]) -> str:
    return str(access.metadata(obj).get("name", ""))


def _is_running(pod: dict[str, Any]) -> bool:
    spec = access.spec(pod)
    status = access.status(pod)
    md = access.metadata(pod)
    return bool(spec.get("nodeName")) and status.get("phase") not in ("Succeeded", "Failed") \
        and not md.get("deletionTimestamp")


def describe_target(target: ObjectTarget) -> str:
    return str(target)
