"""The Workload Kueue builds for a job: one function for render, simulate and the validate rules.

Upstream path (pkg/controller/jobframework/reconciler.go ``handleJobWithNoWorkload``):
``ConstructWorkload`` (name, podSets, labels, annotations, finalizer, owner reference) then
``prepareWorkload`` (priority, minCount cleared without PartialAdmission). Per integration:

* **JobSet** (pkg/controller/jobs/jobset ``PodSets``): one podSet per replicated job, named after it in
  lower case, with its pod template and ``count = replicas × min(parallelism, completions)``
  (parallelism defaults to 1, completions to parallelism); with TopologyAwareScheduling a
  ``topologyRequest`` from the template's annotations, ``podIndexLabel``
  ``batch.kubernetes.io/job-completion-index``, ``subGroupIndexLabel`` ``jobset.sigs.k8s.io/job-index``
  and ``subGroupCount = replicas`` (so every JobSet's podSets carry a topologyRequest when the gate
  is on, annotations or not);
* **TrainJob** (pkg/controller/jobs/trainjob): the JobSet the Trainer builds from the TrainJob and its
  runtime (:func:`jobsetctl.trainer.expand.expand`), then the JobSet's podSets, defaulted as a dry-run
  create of a Workload defaults them;
* **Job** (pkg/controller/jobs/job): one podSet ``main``, the template without the Job controller's
  ``controller-uid``/``batch.kubernetes.io/controller-uid``/legacy ``job-name`` labels,
  ``count = min(parallelism, completions)``, ``minCount`` from ``kueue.x-k8s.io/job-min-parallelism``
  (PartialAdmission), ``podIndexLabel`` ``batch.kubernetes.io/job-completion-index``.

Every podSet's containers lose duplicate environment variables (the last of a name wins, at the first
one's place: ``SanitizePodSets``).

Name: ``<kind in lower case>-<job name>-<hash>`` (``workload_names.go``): the prefix truncated to 247
characters (57 with ShortWorkloadNames), the hash the first 5 hex digits of SHA-1 over
``kind\\ngroup\\nname\\nuid``.

Metadata: namespace of the job; labels: only the keys of ``integrations.labelKeysToCopy``, plus
``kueue.x-k8s.io/job-uid`` (when the uid is a valid label value); annotations: the job's
``provreq.kueue.x-k8s.io/`` ones; finalizer ``kueue.x-k8s.io/resource-in-use``; a controller owner
reference to the job. Spec: ``queueName`` from the queue-name label, ``maximumExecutionTimeSeconds`` from
``kueue.x-k8s.io/max-exec-time-seconds`` (a positive int32, else absent).

Priority (``ExtractPriority``): the ``kueue.x-k8s.io/priority-class`` label names a WorkloadPriorityClass
(``priorityClassRef`` to it, its value; **not found: no Workload**, event
``WorkloadPriorityClassNotFound``); else the first podSet's ``priorityClassName`` names a PriorityClass
(not found: no Workload); else the global default PriorityClass (lowest value if several); else no
``priorityClassRef`` and priority 0.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jobsetctl.kinds.interface import AdmissionContext, ClusterView, Object
from jobsetctl.kube.jsontree import copy_tree
from jobsetctl.kube.names import is_valid_label_value
from jobsetctl.kube.versions import split_api_version
from jobsetctl.kueue import api
from jobsetctl.kueue.config import SHIPPED, KueueConfiguration
from jobsetctl.kueue.tas import IndexLabels, TopologyRequestError, topology_request

HASH_LENGTH = 5
LONG_MAX_NAME = 253
#: ShortWorkloadNames: workload names are label values (kueue#9872, #10098).
SHORT_MAX_NAME = 63
JOB_MIN_PARALLELISM_ANNOTATION = "kueue.x-k8s.io/job-min-parallelism"
DEFAULT_POD_SET = "main"
#: The Job controller's labels dropped from a Job's podSet template (``managedLabels`` but ``batch.kubernetes.io/job-name``).
JOB_MANAGED_LABELS = ("job-name", "controller-uid", "batch.kubernetes.io/controller-uid")
WPC_NOT_FOUND_REASON = "WorkloadPriorityClassNotFound"


# ---- names ---------------------------------------------------------------------------------------

def workload_name(owner_name: str, owner_uid: str, group: str, kind: str, *, short: bool = False, extra: str = "") -> str:
    """``GenerateWorkloadNameWithExtra`` (``GetWorkloadNameForOwnerWithGVK`` when ``extra`` is empty)."""
    max_prefix = (SHORT_MAX_NAME if short else LONG_MAX_NAME) - 1 - HASH_LENGTH
    prefix = f"{kind.lower()}-{owner_name}"[:max_prefix]
    digest = hashlib.sha1(f"{kind}\n{group}\n{owner_name}\n{owner_uid}".encode())
    if extra:
        digest.update(f"\n{extra}".encode())
    return f"{prefix}-{digest.hexdigest()[:HASH_LENGTH]}"


# ---- the result ----------------------------------------------------------------------------------

@dataclass(slots=True)
class BuiltWorkload:
    """The Workload for a job, or why Kueue cannot build one (its reconcile fails and retries)."""

    workload: Object | None
    #: Upstream's error text when there is no Workload.
    error: str | None = None
    #: The Kubernetes Event Kueue records on the job with the error (reason, message), if any.
    event: tuple[str, str] | None = None
    #: Where in the job the cause is (for validate's findings).
    at: tuple[str | int, ...] = ()
    notes: list[str] = field(default_factory=list)


def _m(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _l(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def group_kind(obj: Object) -> tuple[str, str]:
    api_version = obj.get("apiVersion")
    group = split_api_version(api_version)[0] if isinstance(api_version, str) else ""
    return group, str(obj.get("kind", ""))


def labels_of(obj: Object) -> dict[str, Any]:
    return _m(_m(obj.get("metadata")).get("labels"))


def queue_name(obj: Object) -> str:
    """``QueueNameForObject``: the queue-name label ('' when absent)."""
    value = labels_of(obj).get(api.QUEUE_LABEL)
    return value if isinstance(value, str) else ""


def priority_class_label(obj: Object) -> str:
    value = labels_of(obj).get(api.PRIORITY_CLASS_LABEL)
    return value if isinstance(value, str) else ""


# ---- podSets per integration ---------------------------------------------------------------------

def pods_per_replica(job_spec: Any) -> int:
    """``PodsCountPerReplica``: min(parallelism, completions), parallelism defaulting to 1."""
    spec = _m(job_spec)
    parallelism = _int(spec.get("parallelism"), 1)
    completions = _int(spec.get("completions"), parallelism)
    return min(parallelism, completions)


def jobset_pod_sets(jobset: Object, config: KueueConfiguration) -> list[Object]:
    """pkg/controller/jobs/jobset ``PodSets``. Raises :class:`TopologyRequestError`."""
    tas = config.gate("TopologyAwareScheduling")
    out: list[Object] = []
    for raw in _l(_m(jobset.get("spec")).get("replicatedJobs")):
        replicated = _m(raw)
        job_spec = _m(_m(replicated.get("template")).get("spec"))
        template = copy_tree(_m(job_spec.get("template")))
        replicas = _int(replicated.get("replicas"), 1)
        pod_set: Object = {
            "name": str(replicated.get("name", "")).lower(),
            "template": template,
            "count": replicas * pods_per_replica(job_spec),
        }
        if tas:
            request = topology_request(template.get("metadata"), IndexLabels(
                api.JOB_COMPLETION_INDEX_ANNOTATION, api.JOBSET_JOB_INDEX_LABEL, replicas),
                config.gate("TASMultiLayerTopology"))
            if request is not None:
                pod_set["topologyRequest"] = request
        out.append(pod_set)
    return out


def job_pod_sets(job: Object, config: KueueConfiguration) -> list[Object]:
    """pkg/controller/jobs/job ``PodSets``. Raises :class:`TopologyRequestError`."""
    spec = _m(job.get("spec"))
    template = copy_tree(_m(spec.get("template")))
    labels = _m(_m(template.get("metadata")).get("labels"))
    for key in JOB_MANAGED_LABELS:
        labels.pop(key, None)
    pod_set: Object = {"name": DEFAULT_POD_SET, "template": template, "count": pods_per_replica(spec)}
    min_text = _m(_m(job.get("metadata")).get("annotations")).get(JOB_MIN_PARALLELISM_ANNOTATION)
    if isinstance(min_text, str) and min_text.lstrip("+-").isdigit():
        pod_set["minCount"] = int(min_text)
    if config.gate("TopologyAwareScheduling"):
        request = topology_request(template.get("metadata"), IndexLabels(api.JOB_COMPLETION_INDEX_ANNOTATION),
                                   config.gate("TASMultiLayerTopology"))
        if request is not None:
            pod_set["topologyRequest"] = request
    return [pod_set]


def trainjob_jobset(trainjob: Object, ctx: AdmissionContext) -> tuple[Object | None, str | None]:
    """The JobSet Kueue's TrainJob integration builds (``getChildJobSet``), or its error."""
    from jobsetctl.trainer import api as trainer_api
    from jobsetctl.trainer.expand import expand
    from jobsetctl.trainer.expand.model import TrainJobView
    from jobsetctl.trainer.runtimeref import lookup_runtime

    if ctx.cluster is None:
        return None, "no view of the runtimes"
    view = TrainJobView(trainjob, ctx.default_namespace)
    ref = view.runtime_ref
    if ref.group_kind not in (trainer_api.group_kind(trainer_api.TRAINING_RUNTIME, trainer_api.GROUP),
                              trainer_api.group_kind(trainer_api.CLUSTER_TRAINING_RUNTIME, trainer_api.GROUP)):
        return None, f"unsupported runtime: {ref.group_kind}"
    runtime = lookup_runtime(view, ctx.cluster)
    if runtime is None:
        return None, f"runtime '{ref.name}' not found"
    expansion = expand(trainjob, runtime, gates=ctx.gates, default_namespace=ctx.default_namespace)
    if expansion.errors:
        return None, expansion.errors[0]
    return expansion.jobset, None


def pod_sets_for(job: Object, ctx: AdmissionContext, config: KueueConfiguration) -> tuple[list[Object], str | None]:
    """The podSets of a job Kueue manages (sanitized), or the error that keeps Kueue from building them."""
    group, kind = group_kind(job)
    try:
        if (group, kind) == ("jobset.x-k8s.io", "JobSet"):
            pod_sets = jobset_pod_sets(job, config)
        elif (group, kind) == ("batch", "Job"):
            pod_sets = job_pod_sets(job, config)
        elif (group, kind) == ("trainer.kubeflow.org", "TrainJob"):
            jobset, error = trainjob_jobset(job, ctx)
            if jobset is None:
                return [], error
            pod_sets = jobset_pod_sets(jobset, config)
        else:
            return [], f"{kind}.{group} is not an integration jobsetctl models"
    except TopologyRequestError as exc:
        return [], str(exc)
    for pod_set in pod_sets:
        sanitize_pod_set(pod_set)
    return pod_sets, None


def sanitize_pod_set(pod_set: Object) -> None:
    """``SanitizePodSet``: duplicate env names keep the last value, at the place of the first."""
    spec = _m(_m(pod_set.get("template")).get("spec"))
    for key in ("initContainers", "containers"):
        for container in _l(spec.get(key)):
            env = _m(container).get("env")
            if not isinstance(env, list):
                continue
            order: list[str] = []
            last: dict[str, Any] = {}
            for entry in env:
                name = str(_m(entry).get("name", ""))
                if name not in last:
                    order.append(name)
                last[name] = entry
            if len(order) != len(env):
                container["env"] = [last[name] for name in order]


# ---- priority --------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Priority:
    ref: Mapping[str, str] | None
    value: int
    error: str | None = None
    #: The label (or template field) the error is about.
    at: tuple[str | int, ...] = ()


def workload_priority(job: Object, pod_sets: list[Object], cluster: ClusterView | None) -> Priority:
    """``ExtractPriority``."""
    from jobsetctl.kube.priority import resolve_priority

    wpc_name = priority_class_label(job)
    if wpc_name:
        wpc = cluster.get(api.GROUP, api.WORKLOAD_PRIORITY_CLASS, "", wpc_name) if cluster is not None else None
        if wpc is None:
            return Priority(None, 0, f'workloadpriorityclasses.kueue.x-k8s.io "{wpc_name}" not found',
                            ("metadata", "labels", api.PRIORITY_CLASS_LABEL))
        return Priority({"group": api.GROUP, "kind": api.WORKLOAD_PRIORITY_CLASS, "name": wpc_name},
                        _int(wpc.get("value"), 0))
    name = ""
    for pod_set in pod_sets:
        candidate = _m(_m(pod_set.get("template")).get("spec")).get("priorityClassName")
        if isinstance(candidate, str) and candidate:
            name = candidate
            break
    resolution = resolve_priority(name or None, cluster)
    if resolution.error is not None:
        return Priority(None, 0, f'priorityclasses.scheduling.k8s.io "{name}" not found')
    if resolution.class_name is None:
        return Priority(None, resolution.priority)
    return Priority({"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": resolution.class_name},
                    resolution.priority)


# ---- the Workload ------------------------------------------------------------------------------------

def build_workload(job: Object, ctx: AdmissionContext, *, uid: str | None = None) -> BuiltWorkload:
    """The Workload Kueue's reconciler creates for ``job`` (stored form, ``kueue.x-k8s.io/v1beta2``).

    ``ctx.cluster`` is where Kueue looks things up (WorkloadPriorityClasses, PriorityClasses, runtimes);
    ``ctx.kueue`` its configuration (the shipped one when None). ``uid`` defaults to the job's
    ``metadata.uid`` (validate has none: the name's hash is then over an empty uid).
    """
    config = ctx.kueue or SHIPPED
    group, kind = group_kind(job)
    meta = _m(job.get("metadata"))
    name = str(meta.get("name", ""))
    namespace = str(meta.get("namespace") or ctx.default_namespace)
    job_uid = uid if uid is not None else str(meta.get("uid", ""))
    pod_sets, error = pod_sets_for(job, ctx, config)
    if error is not None:
        return BuiltWorkload(None, error)
    priority = workload_priority(job, pod_sets, ctx.cluster)
    if priority.error is not None:
        event = None
        if priority.at:
            event = (WPC_NOT_FOUND_REASON, f'WorkloadPriorityClass "{priority_class_label(job)}" not found')
        return BuiltWorkload(None, priority.error, event, priority.at)

    labels = {k: v for k, v in _m(meta.get("labels")).items() if k in config.integrations.label_keys_to_copy}
    if job_uid and not is_valid_label_value(job_uid):
        labels[api.JOB_UID_LABEL] = job_uid
    annotations = {k: v for k, v in _m(meta.get("annotations")).items()
                   if isinstance(k, str) and k.startswith(api.PROVREQ_ANNOTATION_PREFIX)}
    workload_meta: Object = {
        "name": workload_name(name, job_uid, group, kind, short=config.gate("ShortWorkloadNames")),
        "namespace": namespace,
    }
    if labels:
        workload_meta["labels"] = labels
    if annotations:
        workload_meta["annotations"] = annotations
    workload_meta["finalizers"] = [api.RESOURCE_IN_USE_FINALIZER]
    workload_meta["ownerReferences"] = [{
        "apiVersion": job.get("apiVersion"), "kind": kind, "name": name, "uid": job_uid,
        "controller": True, "blockOwnerDeletion": True,
    }]
    if not config.gate("PartialAdmission"):
        for pod_set in pod_sets:
            pod_set.pop("minCount", None)
    spec: Object = {"podSets": pod_sets}
    queue = queue_name(job)
    if queue:
        spec["queueName"] = queue
    if priority.ref is not None:
        spec["priorityClassRef"] = dict(priority.ref)
    spec["priority"] = priority.value
    max_exec = _max_exec_seconds(meta)
    if max_exec is not None:
        spec["maximumExecutionTimeSeconds"] = max_exec
    workload: Object = {"apiVersion": api.API_VERSION, "kind": api.WORKLOAD, "metadata": workload_meta, "spec": spec}
    return BuiltWorkload(workload)


def _max_exec_seconds(meta: dict[str, Any]) -> int | None:
    """``MaximumExecutionTimeSecondsForObject``: the label as a positive int32, else None."""
    text = _m(meta.get("labels")).get(api.MAX_EXEC_TIME_LABEL)
    if not isinstance(text, str):
        return None
    from jobsetctl.kueue.tas import parse_go_int32

    value = parse_go_int32(text)
    return value if value is not None and value > 0 else None
