"""What the JobSet controller creates for a JobSet: child Jobs, the headless Service and the PVCs.

Pure functions of a stored JobSet (``metadata.name``, ``namespace`` and ``uid`` resolved; admission
defaults applied) and of the numbers the caller passes in: the replicated job, the job index and the
restart attempt(s). The controller (:mod:`jobsetctl.fakecluster.controllers.jobset`) is their only
caller, so ``render`` and ``simulate`` create byte-identical objects (issue #3).

Upstream: ``constructJob``, ``labelAndAnnotateObject``, ``createHeadlessSvcIfNecessary`` and
``createPVCsIfNecessary`` / ``addVolumes`` in kubernetes-sigs/jobset ``pkg/controllers``
(jobset.md §3.1-§3.4, §3.7).

Output shape: Go serialises maps with sorted keys, so every label, annotation and nodeSelector map
written here is sorted by key; struct fields follow the Go field order where we add them.
"""

from __future__ import annotations

from typing import Any

from jobsetctl.jobset import api, names
from jobsetctl.kube.jsontree import copy_tree

JOB_API_VERSION = "batch/v1"
JOB_KIND = "Job"
SERVICE_KIND = "Service"
PVC_KIND = "PersistentVolumeClaim"
#: The node-selector strategy's toleration (jobset.md §3.7; ``addTaintToleration``).
NO_SCHEDULE_TOLERATION: dict[str, str] = {
    "key": api.NO_SCHEDULE_TAINT_KEY,
    "operator": "Exists",
    "effect": "NoSchedule",
}


# ---------------------------------------------------------------------------------------------------
# Index arithmetic (jobset.md §3.2)


def global_replicas(js: Any) -> int:
    """Σ replicas over all replicated jobs (``jobset.sigs.k8s.io/global-replicas``)."""
    return sum(api.replicas(rjob) for rjob in api.replicated_jobs(js))


def global_job_index(js: Any, rjob_name: str, job_index: int) -> int | None:
    """Replicas of the replicated jobs listed earlier + ``job_index``; None for an unknown name
    (upstream returns "" then, which cannot happen for a Job it built itself)."""
    seen = 0
    for rjob in api.replicated_jobs(js):
        if api.rjob_name(rjob) == rjob_name:
            return seen + job_index
        seen += api.replicas(rjob)
    return None


def group_replicas(js: Any, group: str) -> int:
    """Σ replicas of the replicated jobs with this ``groupName``."""
    return sum(api.replicas(rjob) for rjob in api.replicated_jobs(js) if api.group_name(rjob) == group)


def group_job_index(js: Any, group: str, rjob_name: str, job_index: int) -> int | None:
    """Replicas of earlier replicated jobs of the same group + ``job_index``."""
    seen = 0
    for rjob in api.replicated_jobs(js):
        if api.group_name(rjob) != group:
            continue
        if api.rjob_name(rjob) == rjob_name:
            return seen + job_index
        seen += api.replicas(rjob)
    return None


def _text(number: int | None) -> str:
    # Go's strconv.Itoa; "" for the impossible not-found case, as upstream.
    return "" if number is None else str(number)


# ---------------------------------------------------------------------------------------------------
# Owner reference


def owner_reference(js: Any) -> dict[str, Any]:
    """The controller reference to the JobSet (``ctrl.SetControllerReference``; jobset.md §3.1)."""
    return {
        "apiVersion": api.API_VERSION,
        "kind": api.KIND,
        "name": api.name(js),
        "uid": api.as_str(api.metadata(js).get("uid")),
        "controller": True,
        "blockOwnerDeletion": True,
    }


# ---------------------------------------------------------------------------------------------------
# Labels and annotations (jobset.md §3.2; upstream ``labelAndAnnotateObject``)


def jobset_keys(
    js: Any,
    rjob: Any,
    job_index: int,
    *,
    restart_attempt: int,
    job_restart_attempt: int | None,
) -> dict[str, str]:
    """The keys written both as label and as annotation on a child Job and on its pod template.

    ``job_restart_attempt`` is None when the RestartJob gate is off: the key is not written then.
    The coordinator key is included when ``spec.coordinator`` is set.
    """
    jobset_name = api.name(js)
    namespace = api.namespace(js)
    rjob_name = api.rjob_name(rjob)
    group = api.group_name(rjob)
    job_name = names.job_name(jobset_name, rjob_name, job_index)
    keys: dict[str, str] = {
        api.JOBSET_NAME_KEY: jobset_name,
        api.JOBSET_UID_KEY: api.as_str(api.metadata(js).get("uid")),
        api.REPLICATED_JOB_NAME_KEY: rjob_name,
        api.RESTART_ATTEMPT_KEY: str(restart_attempt),
    }
    if job_restart_attempt is not None:
        keys[api.JOB_RESTART_ATTEMPT_KEY] = str(job_restart_attempt)
    keys.update({
        api.REPLICATED_JOB_REPLICAS_KEY: str(api.replicas(rjob)),
        api.GLOBAL_REPLICAS_KEY: str(global_replicas(js)),
        api.JOB_INDEX_KEY: str(job_index),
        api.JOB_KEY: names.job_key(namespace, job_name),
        api.JOB_GLOBAL_INDEX_KEY: _text(global_job_index(js, rjob_name, job_index)),
        api.GROUP_NAME_KEY: group,
        api.GROUP_REPLICAS_KEY: str(group_replicas(js, group)),
        api.JOB_GROUP_INDEX_KEY: _text(group_job_index(js, group, rjob_name, job_index)),
    })
    coordinator = names.coordinator_endpoint_of(js)
    if coordinator is not None:
        keys[api.COORDINATOR_KEY] = coordinator
    return keys


def placement_annotations(js: Any, rjob: Any) -> dict[str, str]:
    """Exclusive-placement annotations copied from the JobSet, then from the replicated job's
    ``template.metadata.annotations`` (the replicated job wins). The node-selector flag is copied
    only from a level that also carries the exclusive-topology key (jobset.md §3.2)."""
    out: dict[str, str] = {}
    for source in (api.object_annotations(js), api.object_annotations(api.job_template(rjob))):
        if api.EXCLUSIVE_TOPOLOGY_KEY in source:
            out[api.EXCLUSIVE_TOPOLOGY_KEY] = api.as_str(source[api.EXCLUSIVE_TOPOLOGY_KEY])
            if api.NODE_SELECTOR_STRATEGY_KEY in source:
                out[api.NODE_SELECTOR_STRATEGY_KEY] = api.as_str(source[api.NODE_SELECTOR_STRATEGY_KEY])
    return out


def pod_placement_annotations(js: Any, rjob: Any) -> dict[str, str]:
    """The exclusive-placement annotations the pods of ``rjob`` carry: the pod template's own, overlaid by
    :func:`placement_annotations` (jobset @ 08dfbdfd ``labelAndAnnotateObject`` on ``&job.Spec.Template``:
    ``maps.Copy`` of the template's annotations, then the JobSet's and the replicated job's keys). The pod
    webhook (``pod_webhook.go`` ``Default``, ``ValidateCreate``) and the pod controller read these, not the
    Job's: a key written on the pod template alone acts on the pods (``jobset-exclusive-pod-template``)."""
    own = api.object_annotations(api.pod_template(rjob))
    out: dict[str, str] = {key: api.as_str(own[key]) for key in (api.EXCLUSIVE_TOPOLOGY_KEY, api.NODE_SELECTOR_STRATEGY_KEY)
           if key in own}
    out.update(placement_annotations(js, rjob))
    return out


def pod_exclusive_topology_at(js: Any, index: int, rjob: Any) -> tuple[str | int, ...] | None:
    """Where the exclusive-topology key the pods of the ``index``-th replicated job carry is written: the
    replicated job's template, else the JobSet, else the pod template (the precedence of
    :func:`pod_placement_annotations`); None without one."""
    if api.EXCLUSIVE_TOPOLOGY_KEY in api.object_annotations(api.job_template(rjob)):
        return ("spec", "replicatedJobs", index, "template", "metadata", "annotations", api.EXCLUSIVE_TOPOLOGY_KEY)
    if api.EXCLUSIVE_TOPOLOGY_KEY in api.object_annotations(js):
        return ("metadata", "annotations", api.EXCLUSIVE_TOPOLOGY_KEY)
    if api.EXCLUSIVE_TOPOLOGY_KEY in api.object_annotations(api.pod_template(rjob)):
        return ("spec", "replicatedJobs", index, "template", "spec", "template", "metadata", "annotations",
                api.EXCLUSIVE_TOPOLOGY_KEY)
    return None


def leader_first_topology(js: Any, rjob: Any) -> str | None:
    """The exclusive-topology key when the pod webhooks hold back a replicated job's followers until
    their Job's leader is scheduled (jobset.md §3.6), else None: exclusive placement without the
    node-selector strategy (whose pods the webhooks skip, §3.7), on Indexed Jobs (absent is defaulted to
    Indexed; NonIndexed Jobs never get a leader at all, ``jobset-exclusive-non-indexed``). Decided on the
    pods' annotations (:func:`pod_placement_annotations`), as the webhook decides."""
    placement = pod_placement_annotations(js, rjob)
    if api.NODE_SELECTOR_STRATEGY_KEY in placement or api.completion_mode(rjob) not in (None, api.COMPLETION_MODE_INDEXED):
        return None
    return placement.get(api.EXCLUSIVE_TOPOLOGY_KEY)


def pods_before_leader(js: Any, rjob: Any, per_job: int) -> int:
    """Pods one child Job of the replicated job can have before its leader is scheduled: the leader
    alone when the pod webhooks hold back its followers (:func:`leader_first_topology`), else all
    ``per_job``. What ``gang-exclusive-placement-deadlock`` and ``render --gang`` weigh a gang's
    ``minCount`` against."""
    return 1 if per_job > 1 and leader_first_topology(js, rjob) is not None else per_job


def _label_and_annotate(target_meta: dict[str, Any], keys: dict[str, str], placement: dict[str, str]) -> None:
    """Add the JobSet keys over the object's own labels/annotations (JobSet keys win)."""
    labels = {str(k): v for k, v in api.as_dict(target_meta.get("labels")).items()}
    labels.update(keys)
    annotations = {str(k): v for k, v in api.as_dict(target_meta.get("annotations")).items()}
    annotations.update(keys)
    annotations.update(placement)
    target_meta["labels"] = dict(sorted(labels.items()))
    target_meta["annotations"] = dict(sorted(annotations.items()))


# ---------------------------------------------------------------------------------------------------
# Child Jobs (jobset.md §3.1, §3.7; upstream ``constructJob``)


def child_job_name(js: Any, rjob: Any, job_index: int) -> str:
    return names.job_name(api.name(js), api.rjob_name(rjob), job_index)


def child_job(
    js: Any,
    rjob: Any,
    job_index: int,
    *,
    restart_attempt: int,
    job_restart_attempt: int | None = None,
) -> dict[str, Any]:
    """The ``batch/v1`` Job the controller creates for ``rjob`` at ``job_index``.

    ``restart_attempt`` is ``status.restarts``; ``job_restart_attempt`` is
    ``jobRestarts[job_index]`` with the RestartJob gate on, None with it off (jobset.md §3.2).
    The ownerReference is included; the API server adds uid, resourceVersion and timestamps.
    """
    template = api.job_template(rjob)
    template_meta = api.as_dict(template.get("metadata"))
    job_meta: dict[str, Any] = {
        "name": child_job_name(js, rjob, job_index),
        "namespace": api.namespace(js),
    }
    # Job-level labels/annotations come from the replicated job's template metadata.
    if isinstance(template_meta.get("labels"), dict):
        job_meta["labels"] = copy_tree(template_meta["labels"])
    if isinstance(template_meta.get("annotations"), dict):
        job_meta["annotations"] = copy_tree(template_meta["annotations"])
    spec: dict[str, Any] = copy_tree(api.job_spec(rjob))
    pod_template = spec.get("template")
    if not isinstance(pod_template, dict):
        pod_template = spec["template"] = {}
    pod_meta = pod_template.get("metadata")
    if not isinstance(pod_meta, dict):
        pod_meta = {}
    pod_spec = pod_template.get("spec")
    if not isinstance(pod_spec, dict):
        pod_spec = pod_template["spec"] = {}

    keys = jobset_keys(js, rjob, job_index, restart_attempt=restart_attempt, job_restart_attempt=job_restart_attempt)
    placement = placement_annotations(js, rjob)
    _label_and_annotate(job_meta, keys, placement)
    _label_and_annotate(pod_meta, keys, placement)
    # Keep ``metadata`` first in the pod template, as Go serialises PodTemplateSpec.
    spec["template"] = {"metadata": pod_meta, **{k: v for k, v in pod_template.items() if k != "metadata"}}
    pod_spec = spec["template"]["spec"]

    if api.enable_dns_hostnames(js):
        # Overwrites any subdomain the user wrote (jobset.md §3.1).
        pod_spec["subdomain"] = names.headless_service_name(api.name(js), api.subdomain(js))

    # The node-selector strategy is decided on the *Job's* annotations, which include the replicated
    # job's own template annotations (upstream reads ``job.Annotations``).
    job_annotations = job_meta["annotations"]
    if api.EXCLUSIVE_TOPOLOGY_KEY in job_annotations and api.NODE_SELECTOR_STRATEGY_KEY in job_annotations:
        selector = {str(k): v for k, v in api.as_dict(pod_spec.get("nodeSelector")).items()}
        selector[api.NAMESPACED_JOB_KEY] = names.namespaced_job_value(job_meta["namespace"], job_meta["name"])
        pod_spec["nodeSelector"] = dict(sorted(selector.items()))
        tolerations = list(api.as_list(pod_spec.get("tolerations")))
        tolerations.append(dict(NO_SCHEDULE_TOLERATION))
        pod_spec["tolerations"] = tolerations

    # Always explicit, true or false (jobset.md §3.1).
    spec["suspend"] = api.is_suspended(js)

    volumes = claim_volumes(js, pod_spec)
    if volumes:
        pod_spec["volumes"] = list(api.as_list(pod_spec.get("volumes"))) + volumes

    job_meta["ownerReferences"] = [owner_reference(js)]
    return {"apiVersion": JOB_API_VERSION, "kind": JOB_KIND, "metadata": job_meta, "spec": spec}


def _mounted_names(pod_spec: dict[str, Any]) -> set[str]:
    mounted: set[str] = set()
    for key in ("containers", "initContainers"):
        for container in api.as_list(pod_spec.get(key)):
            mounted.update(api.volume_mount_names(container))
    return mounted


def claim_volumes(js: Any, pod_spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Pod volumes for the volumeClaimPolicies templates this pod spec mounts, in policy and template
    order (upstream ``addVolumes``; jobset.md §3.1)."""
    mounted = _mounted_names(pod_spec)
    jobset_name = api.name(js)
    out: list[dict[str, Any]] = []
    for policy in api.volume_claim_policies(js):
        for claim_template in api.claim_templates(policy):
            template_name = api.template_name(claim_template)
            if template_name not in mounted:
                continue
            out.append({
                "name": template_name,
                "persistentVolumeClaim": {"claimName": names.pvc_name(template_name, jobset_name)},
            })
    return out


def child_jobs(
    js: Any,
    rjob: Any,
    *,
    restart_attempt: int,
    job_restart_attempts: list[int] | None = None,
) -> list[dict[str, Any]]:
    """Every Job of one replicated job, indices 0..replicas-1 (``job_restart_attempts`` per index with
    the RestartJob gate, None without it; a missing entry counts as 0)."""
    out = []
    for job_index in range(api.replicas(rjob)):
        attempt: int | None = None
        if job_restart_attempts is not None:
            attempt = job_restart_attempts[job_index] if job_index < len(job_restart_attempts) else 0
        out.append(child_job(js, rjob, job_index, restart_attempt=restart_attempt, job_restart_attempt=attempt))
    return out


# ---------------------------------------------------------------------------------------------------
# Headless Service (jobset.md §3.3)


def headless_service_name(js: Any) -> str:
    return names.headless_service_name(api.name(js), api.subdomain(js))


def headless_service(js: Any) -> dict[str, Any] | None:
    """The headless Service, or None when ``network.enableDNSHostnames`` is false.

    Upstream tests ``enableDNSHostnames`` for non-nil *and* true; the defaulting webhook always sets
    it, so :func:`api.enable_dns_hostnames` (nil → true) agrees on every admitted JobSet.
    """
    if not api.enable_dns_hostnames(js):
        return None
    spec: dict[str, Any] = {
        "selector": {api.JOBSET_NAME_KEY: api.name(js)},
        "clusterIP": "None",
    }
    # ``publishNotReadyAddresses`` is ``omitempty`` in core/v1: false is not serialised.
    if api.publish_not_ready_addresses(js):
        spec["publishNotReadyAddresses"] = True
    return {
        "apiVersion": "v1",
        "kind": SERVICE_KIND,
        "metadata": {
            "name": headless_service_name(js),
            "namespace": api.namespace(js),
            "ownerReferences": [owner_reference(js)],
        },
        "spec": spec,
    }


# ---------------------------------------------------------------------------------------------------
# PVCs (jobset.md §3.4)


def owns_claims(policy: Any) -> bool:
    """Whether the JobSet owns this policy's PVCs: only with ``whenDeleted: Delete``.

    A policy without ``retentionPolicy`` gets no owner (upstream checks the pointer; the webhook
    always defaults it). A ``retentionPolicy`` without ``whenDeleted`` counts as the CRD default
    ``Delete``.
    """
    retention = api.as_dict(policy).get("retentionPolicy")
    if not isinstance(retention, dict):
        return False
    when_deleted = retention.get("whenDeleted")
    return when_deleted is None or when_deleted == api.RetentionPolicy.DELETE.value


def volume_claim(js: Any, policy: Any, claim_template: Any) -> dict[str, Any]:
    """One PVC ``<template>-<jobset>`` with the template's labels (+ jobset-name), annotations and spec."""
    template_meta = api.metadata(claim_template)
    labels = {str(k): v for k, v in api.as_dict(template_meta.get("labels")).items()}
    labels[api.JOBSET_NAME_KEY] = api.name(js)
    meta: dict[str, Any] = {
        "name": names.pvc_name(api.template_name(claim_template), api.name(js)),
        "namespace": api.namespace(js),
        "labels": dict(sorted(labels.items())),
    }
    annotations = template_meta.get("annotations")
    if isinstance(annotations, dict) and annotations:
        meta["annotations"] = dict(sorted(copy_tree(annotations).items()))
    if owns_claims(policy):
        meta["ownerReferences"] = [owner_reference(js)]
    claim: dict[str, Any] = {"apiVersion": "v1", "kind": PVC_KIND, "metadata": meta}
    spec = api.as_dict(claim_template).get("spec")
    claim["spec"] = copy_tree(spec) if isinstance(spec, dict) else {}
    return claim


def volume_claims(js: Any) -> list[list[dict[str, Any]]]:
    """The PVCs of every volumeClaimPolicy, grouped per policy, in spec order."""
    return [
        [volume_claim(js, policy, claim_template) for claim_template in api.claim_templates(policy)]
        for policy in api.volume_claim_policies(js)
    ]
