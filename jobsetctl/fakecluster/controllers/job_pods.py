"""The Job controller's view of its pods, and the pods it builds from the Job's template.

Predicates and orderings follow ``pkg/controller/job/job_controller.go``, ``indexed_job_utils.go``,
``backoff_utils.go`` and ``pkg/controller/controller_utils.go`` (read through the file index):

* active = not Succeeded/Failed and no ``deletionTimestamp`` (``FilterActivePods``);
* terminating = a ``deletionTimestamp`` and not Succeeded/Failed (``CountTerminatingPods``);
* failed = phase Failed, or (unless only failed pods are replaced) deleted and not Succeeded
  (``isPodFailed``): with the default ``podReplacementPolicy: TerminatingOrFailed`` a pod that
  someone else deletes counts as a failure at once and is replaced while it still terminates.

Pods are built like ``GetPodFromTemplate`` + ``manageJob``: template labels, annotations and spec;
a controller ownerReference with ``blockOwnerDeletion``; the tracking finalizer; for Indexed Jobs the
completion-index annotation and label (``PodIndexLabel`` is GA), ``JOB_COMPLETION_INDEX`` from the
label by the downward API in every container and init container (unless already declared), hostname
``<job>-<index>`` (set unconditionally, whatever the template says) and generateName
``<job>-<index>-`` (``podGenerateNameWithIndex``, truncated to keep the index); NonIndexed pods get
generateName ``<job>-`` (``getPodsPrefix``). The API server appends the seeded 5-character suffix.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from jobsetctl.fakecluster.apiserver import APIServer, controller_ref
from jobsetctl.fakecluster.clock import VirtualClock
from jobsetctl.fakecluster.controllers.job_spec import (
    COMPLETION_INDEX_ENV,
    CONTROLLER_UID_LABEL,
    JOB_COMPLETION_INDEX_KEY,
    JOB_INDEX_FAILURE_COUNT_KEY,
    JOB_INDEX_IGNORED_FAILURE_COUNT_KEY,
    JOB_NAME_LABEL,
    JOB_TRACKING_FINALIZER,
    LEGACY_CONTROLLER_UID_LABEL,
    LEGACY_JOB_NAME_LABEL,
    MAX_INT32,
    JobView,
    integer,
    items,
    mapping,
    text,
)
from jobsetctl.kinds.interface import Object
from jobsetctl.kube.jsontree import copy_tree

UNKNOWN_INDEX = -1
#: ``names.MaxGeneratedNameLength``: the API server keeps this much of a generateName.
MAX_GENERATED_NAME_LENGTH = 58
SUCCEEDED = "Succeeded"
FAILED = "Failed"
RUNNING = "Running"
PENDING = "Pending"


def owned_pods(api: APIServer, owner_uid: str) -> list[Object]:
    """Pods with an ownerReference to ``owner_uid``, in creation order."""
    # ``APIServer.list`` shadows the builtin inside the class, so mypy cannot read ``owned``'s type.
    return cast("list[Object]", api.owned(owner_uid, "", "Pod"))


# --- predicates -------------------------------------------------------------------------------------


def meta_of(pod: Object) -> dict[str, Any]:
    return mapping(pod.get("metadata"))


def status_of(pod: Object) -> dict[str, Any]:
    return mapping(pod.get("status"))


def spec_of(pod: Object) -> dict[str, Any]:
    return mapping(pod.get("spec"))


def phase(pod: Object) -> str:
    # The predicates below run for every pod of a Job on every sync: they read the dicts directly
    # instead of going through ``mapping``/``text`` (same results, a third of the calls).
    status = pod.get("status")
    if isinstance(status, dict):
        value = status.get("phase")
        if isinstance(value, str) and value:
            return value
    return PENDING


def is_terminal(pod: Object) -> bool:
    return phase(pod) in (SUCCEEDED, FAILED)


def is_deleted(pod: Object) -> bool:
    meta = pod.get("metadata")
    return isinstance(meta, dict) and bool(meta.get("deletionTimestamp"))


def is_active(pod: Object) -> bool:
    return not is_terminal(pod) and not is_deleted(pod)


def is_terminating(pod: Object) -> bool:
    return is_deleted(pod) and not is_terminal(pod)


def pod_condition(pod: Object, type_: str) -> dict[str, Any] | None:
    status = pod.get("status")
    conditions = status.get("conditions") if isinstance(status, dict) else None
    if isinstance(conditions, list):
        for cond in conditions:
            if isinstance(cond, dict) and cond.get("type") == type_:
                return cond
    return None


def is_ready(pod: Object) -> bool:
    cond = pod_condition(pod, "Ready")
    return cond is not None and cond.get("status") == "True"


def is_failed(pod: Object, view: JobView) -> bool:
    """``isPodFailed``."""
    return failed_in_phase(pod, phase(pod), view.only_replace_failed_pods)


def failed_in_phase(pod: Object, pod_phase: str, only_replace_failed_pods: bool) -> bool:
    """:func:`is_failed` for a pod whose phase and Job's replacement policy the caller already has."""
    if pod_phase == FAILED:
        return True
    if only_replace_failed_pods:
        return False
    return pod_phase != SUCCEEDED and is_deleted(pod)


def has_tracking_finalizer(pod: Object) -> bool:
    meta = pod.get("metadata")
    finalizers = meta.get("finalizers") if isinstance(meta, dict) else None
    return isinstance(finalizers, list) and JOB_TRACKING_FINALIZER in finalizers


def completion_index(pod: Object) -> int:
    """``getCompletionIndex``: the annotation as a non-negative integer, else -1."""
    meta = pod.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    value = annotations.get(JOB_COMPLETION_INDEX_KEY) if isinstance(annotations, dict) else None
    if not isinstance(value, str) or not value.isdigit():
        return UNKNOWN_INDEX
    return int(value)


def _annotation_count(pod: Object, key: str) -> int:
    value = mapping(meta_of(pod).get("annotations")).get(key)
    if not isinstance(value, str) or not value.isdigit():
        return 0
    number = int(value)
    return number if number <= MAX_INT32 else 0


def index_failure_count(pod: Object) -> int:
    return _annotation_count(pod, JOB_INDEX_FAILURE_COUNT_KEY)


def index_ignored_failure_count(pod: Object) -> int:
    return _annotation_count(pod, JOB_INDEX_IGNORED_FAILURE_COUNT_KEY)


def restart_count(pod: Object) -> int:
    total = 0
    for key in ("initContainerStatuses", "containerStatuses"):
        for cs in items(status_of(pod).get(key)):
            total += integer(mapping(cs).get("restartCount")) or 0
    return total


def finished_time(pod: Object, clock: VirtualClock) -> float:
    """``getFinishedTime``: the latest container finish (all terminated), else the Ready=False
    transition, else ``deletionTimestamp - grace``, else the creation time."""
    latest: float | None = None
    statuses = [mapping(cs) for cs in items(status_of(pod).get("containerStatuses"))]
    for cs in statuses:
        finished = mapping(mapping(cs.get("state")).get("terminated")).get("finishedAt")
        if not isinstance(finished, str):
            latest = None
            break
        at = clock.seconds_of(finished)
        latest = at if latest is None else max(latest, at)
    if latest is not None and statuses:
        return latest
    ready = pod_condition(pod, "Ready")
    if ready is not None and ready.get("status") == "False" and isinstance(ready.get("lastTransitionTime"), str):
        return clock.seconds_of(ready["lastTransitionTime"])
    deleted = meta_of(pod).get("deletionTimestamp")
    if isinstance(deleted, str):
        return clock.seconds_of(deleted) - (integer(meta_of(pod).get("deletionGracePeriodSeconds")) or 0)
    created = meta_of(pod).get("creationTimestamp")
    return clock.seconds_of(created) if isinstance(created, str) else 0.0


def removal_order(pod: Object, clock: VirtualClock) -> tuple[Any, ...]:
    """``controller.ActivePods`` order: the pods to delete first sort first (unassigned before
    assigned, Pending before Running, not ready before ready, ready for less time first, more
    restarts first, newer first). The name breaks remaining ties so the order is total."""
    spec = spec_of(pod)
    phase_rank = {PENDING: 0, "Unknown": 1, RUNNING: 2}.get(phase(pod), 3)
    ready = pod_condition(pod, "Ready")
    ready_since = 0.0
    if ready is not None and ready.get("status") == "True" and isinstance(ready.get("lastTransitionTime"), str):
        ready_since = clock.seconds_of(ready["lastTransitionTime"])
    created = meta_of(pod).get("creationTimestamp")
    created_at = clock.seconds_of(created) if isinstance(created, str) else 0.0
    return (bool(spec.get("nodeName")), phase_rank, is_ready(pod), -ready_since, -restart_count(pod),
            -created_at, text(meta_of(pod).get("name")))


# --- completion indexes -----------------------------------------------------------------------------


def parse_indexes(value: Any, completions: int) -> set[int]:
    """``parseIndexesFromString``: ``"0-2,5"`` to ``{0, 1, 2, 5}``, ignoring what is out of range."""
    out: set[int] = set()
    if not isinstance(value, str) or not value:
        return out
    for part in value.split(","):
        limits = part.split("-")
        if not limits[0].isdigit():
            continue
        first = int(limits[0])
        if first >= completions:
            break
        last = first
        if len(limits) > 1:
            if not limits[1].isdigit():
                continue
            last = min(int(limits[1]), completions - 1)
        out.update(range(first, last + 1))
    return out


def format_indexes(indexes: Iterable[int]) -> str:
    """``orderedIntervals.String``: runs of three or more as ``a-b``, a run of two as ``a,b``."""
    ordered = sorted(set(indexes))
    parts: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        first, last = ordered[i], ordered[j]
        if last == first:
            parts.append(str(first))
        elif last == first + 1:
            parts.append(f"{first},{last}")
        else:
            parts.append(f"{first}-{last}")
        i = j + 1
    return ",".join(parts)


def first_pending_indexes(count: int, completions: int, non_pending: set[int]) -> list[int]:
    """``firstPendingIndexes``: the lowest ``count`` indexes below ``completions`` not taken."""
    out: list[int] = []
    candidate = 0
    while candidate < completions and len(out) < count:
        if candidate not in non_pending:
            out.append(candidate)
        candidate += 1
    return out


# --- building pods ----------------------------------------------------------------------------------


def pod_generate_name(job_name: str, index: int) -> str:
    """``podGenerateNameWithIndex``: ``<job>-<index>-``, the job part cut so that the index stays."""
    append = f"-{index}-"
    prefix = job_name + append
    if len(prefix) > MAX_GENERATED_NAME_LENGTH:
        prefix = prefix[:MAX_GENERATED_NAME_LENGTH - len(append)] + append
    return prefix


def _add_index_env(container: dict[str, Any]) -> None:
    env = container.get("env")
    env = env if isinstance(env, list) else []
    if any(isinstance(v, dict) and v.get("name") == COMPLETION_INDEX_ENV for v in env):
        return
    env.append({
        "name": COMPLETION_INDEX_ENV,
        "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{JOB_COMPLETION_INDEX_KEY}']"}},
    })
    container["env"] = env


def build_pod(
    view: JobView,
    index: int,
    *,
    failure_counts: tuple[int, int] | None = None,
    pod_group: Object | None = None,
) -> Object:
    """A pod for ``index`` (or ``UNKNOWN_INDEX`` for NonIndexed Jobs) from the Job's template.

    ``failure_counts`` are the ``job-index-failure-count`` / ``-ignored-failure-count`` values
    (backoffLimitPerIndex only); ``pod_group`` the KEP-5547 PodGroup the pod joins.
    """
    template = copy_tree(view.template)
    template_meta = mapping(template.get("metadata"))
    labels = {k: v for k, v in mapping(template_meta.get("labels")).items() if isinstance(k, str)}
    annotations = {k: v for k, v in mapping(template_meta.get("annotations")).items() if isinstance(k, str)}
    # The API server writes these four labels into the Job's template when it generates the selector
    # (job strategy ``generateSelector``); it needs the Job's UID, which our store assigns after
    # admission, so the controller fills in whatever the stored template lacks.
    labels.setdefault(CONTROLLER_UID_LABEL, view.uid)
    labels.setdefault(JOB_NAME_LABEL, view.name)
    labels.setdefault(LEGACY_CONTROLLER_UID_LABEL, view.uid)
    labels.setdefault(LEGACY_JOB_NAME_LABEL, view.name)
    spec = mapping(template.get("spec"))
    finalizers = [f for f in items(template_meta.get("finalizers")) if isinstance(f, str)]
    if JOB_TRACKING_FINALIZER not in finalizers:
        finalizers.append(JOB_TRACKING_FINALIZER)
    generate_name = f"{view.name}-"
    if index != UNKNOWN_INDEX:
        for key in ("initContainers", "containers"):
            for container in items(spec.get(key)):
                if isinstance(container, dict):
                    _add_index_env(container)
        annotations[JOB_COMPLETION_INDEX_KEY] = str(index)
        labels[JOB_COMPLETION_INDEX_KEY] = str(index)
        spec["hostname"] = f"{view.name}-{index}"
        generate_name = pod_generate_name(view.name, index)
        if failure_counts is not None:
            failed, ignored = failure_counts
            annotations[JOB_INDEX_FAILURE_COUNT_KEY] = str(failed)
            if ignored > 0:
                annotations[JOB_INDEX_IGNORED_FAILURE_COUNT_KEY] = str(ignored)
    owners = [controller_ref(view.job)]
    if pod_group is not None:
        group_meta = mapping(pod_group.get("metadata"))
        owners.append({"apiVersion": pod_group.get("apiVersion"), "kind": "PodGroup",
                       "name": group_meta.get("name"), "uid": group_meta.get("uid", "")})
        spec["schedulingGroup"] = {"podGroupName": group_meta.get("name")}
    metadata: dict[str, Any] = {"generateName": generate_name, "namespace": view.namespace}
    if labels:
        metadata["labels"] = labels
    if annotations:
        metadata["annotations"] = annotations
    metadata["finalizers"] = finalizers
    metadata["ownerReferences"] = owners
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


class PodBuilder:
    """:func:`build_pod` for the pods of one pass, which differ only by index: the first is built, the others
    are copies of it with the index's four values replaced (the completion-index annotation and label, the
    hostname, the generateName), which keeps every key where :func:`build_pod` puts it, so each pod is
    equal to what :func:`build_pod` returns, key order included (a property test compares the two).
    Pods with failure counts (``backoffLimitPerIndex``) are built one by one."""

    def __init__(self, view: JobView, pod_group: Object | None) -> None:
        self.view = view
        self.pod_group = pod_group
        self._first: Object | None = None

    def build(self, index: int, failure_counts: tuple[int, int] | None = None) -> Object:
        if failure_counts is not None:
            return build_pod(self.view, index, failure_counts=failure_counts, pod_group=self.pod_group)
        if self._first is None:
            self._first = build_pod(self.view, index, pod_group=self.pod_group)
        pod = copy_tree(self._first)
        if index != UNKNOWN_INDEX:
            metadata = pod["metadata"]
            value = str(index)
            metadata["annotations"][JOB_COMPLETION_INDEX_KEY] = value
            metadata["labels"][JOB_COMPLETION_INDEX_KEY] = value
            pod["spec"]["hostname"] = f"{self.view.name}-{index}"
            metadata["generateName"] = pod_generate_name(self.view.name, index)
        return pod
