"""Kueue's webhooks on the jobs it manages: JobSet, TrainJob and Job (``mjobset``/``vjobset``,
``mtrainjob``/``vtrainjob``, ``mjob``/``vjob`` of kubernetes-sigs/kueue).

They exist only when Kueue runs (``ctx.kueue``) with the job's integration enabled
(``integrations.frameworks``); they then act on every job of the kind, labelled or not.

Defaulting (``BaseWebhook.Default`` and the per-integration ``Default``), in upstream order:

1. ``ApplyDefaultLocalQueue``: a job without a queue-name label, whose namespace has a LocalQueue named
   ``default`` and matches ``managedJobsNamespaceSelector``, and whose owner is not a Kueue-managed job,
   gets ``kueue.x-k8s.io/queue-name: default``;
2. ``ApplyDefaultWorkloadPriorityClass`` (gate WorkloadPriorityClassDefaulting, beta, on): a job without
   the priority-class label, not owned by a managed job, gets ``kueue.x-k8s.io/priority-class: default``
   when a WorkloadPriorityClass ``default`` exists;
3. ``ApplyDefaultForSuspend`` (``WorkloadShouldBeSuspended``): a job whose ancestor is a Kueue-managed job
   is left alone; a job with a queue-name is suspended; under ``manageJobsWithoutQueueName`` a job of a
   namespace the selector matches is suspended too;
4. ``ApplyDefaultForManagedBy`` (gate MultiKueue): ``spec.managedBy`` becomes ``kueue.x-k8s.io/multikueue``
   when the job's ClusterQueue has a MultiKueue admission check;
5. Job only (``applyWorkloadSliceSchedulingGate``, gate ElasticJobsViaWorkloadSlices): a Job with
   ``kueue.x-k8s.io/elastic-job: "true"`` gets the scheduling gate ``kueue.x-k8s.io/elastic-job`` on its pod
   template, once;
6. TrainJob only: a ``runtimePatches`` entry for manager ``kueue.x-k8s.io/manager`` with an empty
   JobSet spec patch is appended to **every** TrainJob (Kueue fills it at admission).

Lookups (LocalQueues, WorkloadPriorityClasses, owners, Namespaces) go through ``ctx.cluster``; without a
cluster view (validate's per-file phase) the steps that need one are left out, as nothing they would
add is checked later. A Namespace that is not among the objects has the one label the API server puts
on every Namespace, ``kubernetes.io/metadata.name``.

Validation (``ValidateJobOnCreate`` and the integrations' TAS checks) lives in :func:`JobWebhook.validate`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from jobsetctl.diagnostics import Finding
from jobsetctl.kinds.interface import AdmissionContext, AdmissionWebhook, ClusterView, Object
from jobsetctl.kube.podspec import label_selector_matches
from jobsetctl.kueue import api
from jobsetctl.kueue.config import FRAMEWORK_OF_KIND, KueueConfiguration, thaw
from jobsetctl.kueue.workload import group_kind, priority_class_label, queue_name

RUNTIME_PATCH_MANAGER = "kueue.x-k8s.io/manager"
MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"
#: ``CanDefaultManagedBy``: the managedBy values that MultiKueue may replace, per kind.
DEFAULT_MANAGERS = {
    ("jobset.x-k8s.io", "JobSet"): "jobset.sigs.k8s.io/jobset-controller",
    ("trainer.kubeflow.org", "TrainJob"): "trainer.kubeflow.org/trainjob-controller",
    ("batch", "Job"): "kubernetes.io/job-controller",
}
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
#: How far up the owner chain Kueue looks (``managedOwnersChainLimit``).
OWNER_CHAIN_LIMIT = 10


def _m(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def managing_config(obj: Object, ctx: AdmissionContext) -> KueueConfiguration | None:
    """Kueue's configuration when its webhook for ``obj``'s kind is installed, else None."""
    config = ctx.kueue
    if config is None:
        return None
    group, kind = group_kind(obj)
    return config if config.manages(group, kind) else None


def namespace_labels(namespace: str, cluster: ClusterView | None) -> dict[str, Any]:
    found = cluster.get("", "Namespace", "", namespace) if cluster is not None else None
    labels = dict(_m(_m(_m(found).get("metadata")).get("labels")))
    labels[NAMESPACE_NAME_LABEL] = namespace
    return labels


def namespace_managed(namespace: str, config: KueueConfiguration, cluster: ClusterView | None) -> bool:
    """``namespaceMatchesSelector`` with ``managedJobsNamespaceSelector``."""
    return label_selector_matches(thaw(config.managed_jobs_namespace_selector), namespace_labels(namespace, cluster))


def managed_ancestor(obj: Object, config: KueueConfiguration, cluster: ClusterView | None) -> Object | None:
    """``FindAncestorJobManagedByKueue``: the top-most controller ancestor that is a job of an enabled
    integration with a queue-name (any, under manageJobsWithoutQueueName); None when there is none or
    the owners cannot be looked up."""
    if cluster is None:
        return None
    namespace = str(_m(obj.get("metadata")).get("namespace") or "")
    current, top, seen = obj, None, set()
    for _ in range(OWNER_CHAIN_LIMIT + 1):
        uid = _m(current.get("metadata")).get("uid")
        if uid in seen:
            return None
        seen.add(uid)
        owner = next((r for r in _m(current.get("metadata")).get("ownerReferences") or []
                      if isinstance(r, dict) and r.get("controller")), None)
        if owner is None:
            return top
        group = str(owner.get("apiVersion", "")).rpartition("/")[0]
        kind = str(owner.get("kind", ""))
        if (group, kind) not in FRAMEWORK_OF_KIND:
            return top
        parent = cluster.get(group, kind, namespace, str(owner.get("name", "")))
        if parent is None or _m(parent.get("metadata")).get("uid") != owner.get("uid"):
            return top
        if config.manages(group, kind) and (config.manage_jobs_without_queue_name or queue_name(parent)):
            top = parent
        current = parent
    return top


def owner_managed(obj: Object, config: KueueConfiguration, cluster: ClusterView | None) -> bool:
    """``IsOwnerManagedByKueueForObject``: the controller owner is a job of an enabled integration (any
    integration Kueue has, not only the kinds jobsetctl models)."""
    owner = next((r for r in _m(obj.get("metadata")).get("ownerReferences") or []
                  if isinstance(r, dict) and r.get("controller")), None)
    if owner is None:
        return False
    return config.manages_owner(str(owner.get("apiVersion", "")), str(owner.get("kind", "")))


def should_suspend(obj: Object, config: KueueConfiguration, cluster: ClusterView | None, namespace: str) -> bool:
    """``WorkloadShouldBeSuspended``."""
    if managed_ancestor(obj, config, cluster) is not None:
        return False
    if queue_name(obj):
        return True
    if config.manage_jobs_without_queue_name:
        return namespace_managed(namespace, config, cluster)
    return False


def is_managed(obj: Object, ctx: AdmissionContext) -> bool:
    """Whether Kueue's reconciler builds a Workload for ``obj``: a top-level job of an enabled integration
    with a queue-name (any job, under manageJobsWithoutQueueName, in a managed namespace)."""
    config = managing_config(obj, ctx)
    if config is None:
        return False
    namespace = str(_m(obj.get("metadata")).get("namespace") or ctx.default_namespace)
    if not namespace_managed(namespace, config, ctx.cluster):
        return False
    if managed_ancestor(obj, config, ctx.cluster) is not None or owner_managed(obj, config, ctx.cluster):
        return False
    return bool(queue_name(obj)) or config.manage_jobs_without_queue_name


def _set_label(obj: Object, key: str, value: str) -> None:
    meta = obj.setdefault("metadata", {})
    if isinstance(meta, dict):
        labels = meta.get("labels")
        if not isinstance(labels, dict):
            labels = meta["labels"] = {}
        labels[key] = value


def _suspend(obj: Object) -> None:
    spec = obj.get("spec")
    if isinstance(spec, dict):
        spec["suspend"] = True


def _apply_workload_slice_scheduling_gate(job: Object, config: KueueConfiguration) -> None:
    """job_webhook.go ``applyWorkloadSliceSchedulingGate``: an elastic Job's pod template gets the
    ``kueue.x-k8s.io/elastic-job`` scheduling gate, appended once (``utilpod.GateTemplate``)."""
    from jobsetctl.kueue.job_rules import elastic_enabled

    if not elastic_enabled(job, config):
        return
    template = _m(job.get("spec")).get("template")
    if not isinstance(template, dict):
        return
    pod_spec = template.setdefault("spec", {})
    if not isinstance(pod_spec, dict):
        return
    gates = pod_spec.get("schedulingGates")
    if not isinstance(gates, list):
        gates = pod_spec["schedulingGates"] = []
    if not any(_m(gate).get("name") == api.ELASTIC_JOB_SCHEDULING_GATE for gate in gates):
        gates.append({"name": api.ELASTIC_JOB_SCHEDULING_GATE})


class JobWebhook(AdmissionWebhook):
    """Kueue's webhooks on JobSets, TrainJobs and Jobs (one object serves the three kinds)."""

    def default(self, obj: Object, ctx: AdmissionContext) -> None:
        from jobsetctl.kinds.interface import Operation

        config = managing_config(obj, ctx)
        if config is None or ctx.operation is not Operation.CREATE:
            return  # m<kind>.kb.io are registered for CREATE only
        cluster = ctx.cluster
        namespace = str(_m(obj.get("metadata")).get("namespace") or ctx.default_namespace)
        group, kind = group_kind(obj)
        # 1. default LocalQueue
        if (cluster is not None and not queue_name(obj)
                and cluster.get(api.GROUP, api.LOCAL_QUEUE, namespace, api.DEFAULT_LOCAL_QUEUE) is not None
                and not owner_managed(obj, config, cluster) and namespace_managed(namespace, config, cluster)):
            _set_label(obj, api.QUEUE_LABEL, api.DEFAULT_LOCAL_QUEUE)
        # 2. default WorkloadPriorityClass
        if (cluster is not None and config.gate("WorkloadPriorityClassDefaulting") and not priority_class_label(obj)
                and not owner_managed(obj, config, cluster)
                and cluster.get(api.GROUP, api.WORKLOAD_PRIORITY_CLASS, "", api.DEFAULT_WORKLOAD_PRIORITY_CLASS)):
            _set_label(obj, api.PRIORITY_CLASS_LABEL, api.DEFAULT_WORKLOAD_PRIORITY_CLASS)
        suspend = should_suspend(obj, config, cluster, namespace)
        if (group, kind) == ("trainer.kubeflow.org", "TrainJob"):
            # The TrainJob webhook defaults managedBy before deciding on suspend (trainjob_webhook.go).
            self._default_managed_by(obj, config, cluster, namespace)
            if suspend:
                _suspend(obj)
            spec = obj.get("spec")
            if isinstance(spec, dict):
                patches = spec.get("runtimePatches")
                if not isinstance(patches, list):
                    patches = spec["runtimePatches"] = []
                patches.append({"manager": RUNTIME_PATCH_MANAGER, "trainingRuntimeSpec": {"template": {"spec": {}}}})
            return
        if suspend:
            _suspend(obj)
        self._default_managed_by(obj, config, cluster, namespace)
        if (group, kind) == ("batch", "Job"):
            _apply_workload_slice_scheduling_gate(obj, config)

    def _default_managed_by(self, obj: Object, config: KueueConfiguration, cluster: ClusterView | None,
                            namespace: str) -> None:
        """``ApplyDefaultForManagedBy``: MultiKueue takes over a job whose ClusterQueue has a MultiKueue check."""
        spec = obj.get("spec")
        if cluster is None or not isinstance(spec, dict) or not config.gate("MultiKueue"):
            return
        current = spec.get("managedBy")
        if current is not None and current != DEFAULT_MANAGERS.get(group_kind(obj)):
            return
        local = queue_name(obj)
        if not local:
            return
        queue = cluster.get(api.GROUP, api.LOCAL_QUEUE, namespace, local)
        cq_name = _m(_m(queue).get("spec")).get("clusterQueue")
        cq = cluster.get(api.GROUP, api.CLUSTER_QUEUE, "", str(cq_name)) if cq_name else None
        if cq is None:
            return
        from jobsetctl.kueue.versions import to_v1beta2

        strategy = _m(_m(to_v1beta2(cq).get("spec")).get("admissionChecksStrategy"))
        for check in strategy.get("admissionChecks") or []:
            found = cluster.get(api.GROUP, api.ADMISSION_CHECK, "", str(_m(check).get("name", "")))
            if _m(_m(found).get("spec")).get("controllerName") == MULTIKUEUE_CONTROLLER:
                spec["managedBy"] = MULTIKUEUE_CONTROLLER
                return

    def validate(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        if managing_config(obj, ctx) is None:
            return ()
        from jobsetctl.kueue.job_rules import validate_job_create

        return validate_job_create(obj, ctx)

    def validate_update(self, old: Object, new: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        if managing_config(new, ctx) is None:
            return ()
        from jobsetctl.kueue.job_rules import validate_job_update

        return validate_job_update(old, new, ctx)


JOB_WEBHOOK = JobWebhook()
