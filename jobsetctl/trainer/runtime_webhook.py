"""TrainingRuntime and ClusterTrainingRuntime validating webhooks (trainer.md §2.5).

Both webhooks carry the objectSelector ``trainer.kubeflow.org/webhook-validation NotIn [disabled]``:
a runtime with that label is never sent to them (no errors, no deprecation warning). A
TrainingRuntime is validated on CREATE only; a ClusterTrainingRuntime on CREATE and UPDATE, with a
deprecation warning on CREATE.
"""

from __future__ import annotations

from typing import Any

from jobsetctl.diagnostics import Finding
from jobsetctl.kube.field import Path, invalid
from jobsetctl.trainer import api
from jobsetctl.trainer import rules as r
from jobsetctl.trainer.expand.model import (
    as_dict,
    as_int,
    as_list,
    as_str,
    containers_of,
    job_ancestor,
    pod_spec_of,
)

_JOBS_PATH: Path = ("spec", "template", "spec", "replicatedJobs")


def webhook_selected(runtime: dict[str, Any]) -> bool:
    """Whether the objectSelector sends this runtime to the webhook."""
    labels = as_dict(as_dict(runtime.get("metadata")).get("labels"))
    return labels.get(api.LABEL_WEBHOOK_VALIDATION) != api.WEBHOOK_VALIDATION_DISABLED


def is_deprecated(runtime: dict[str, Any]) -> bool:
    labels = as_dict(as_dict(runtime.get("metadata")).get("labels"))
    return labels.get(api.LABEL_SUPPORT) == api.SUPPORT_DEPRECATED


def validate_replicated_jobs(runtime: dict[str, Any]) -> list[Finding]:
    """``validateReplicatedJobs``: jobs whose Job-template ancestor label is one of the three known
    values need ``replicas: 1`` and their main container (initContainers do not count)."""
    findings: list[Finding] = []
    jobs = as_list(as_dict(as_dict(as_dict(runtime.get("spec")).get("template")).get("spec")).get("replicatedJobs"))
    for index, job in enumerate(jobs):
        if not isinstance(job, dict):
            continue
        ancestor = job_ancestor(job)
        if ancestor not in api.ANCESTOR_CONTAINER:
            continue
        replicas = as_int(job.get("replicas"))
        # The CRD defaults replicas to 1 before the webhook runs.
        replicas = api.DEFAULT_JOB_REPLICAS if replicas is None else replicas
        if replicas != 1:
            path: Path = (*_JOBS_PATH, index, "replicas")
            findings.append(r.RUNTIME_ANCESTOR_REPLICAS.finding(invalid(path, replicas, "always must be 1"), at=path))
        pod_spec = pod_spec_of(job)
        required = api.ANCESTOR_CONTAINER[ancestor]
        if not any(as_str(c.get("name")) == required for c in containers_of(pod_spec)):
            path = (*_JOBS_PATH, index, "template", "spec", "template", "spec", "containers")
            detail = f"must contain the required container for the ancestor: {ancestor}"
            findings.append(r.RUNTIME_ANCESTOR_CONTAINER.finding(
                invalid(path, pod_spec.get("containers", []), detail), at=path,
            ))
    return findings


def validate_training_runtime_create(runtime: dict[str, Any]) -> list[Finding]:
    return validate_replicated_jobs(runtime) if webhook_selected(runtime) else []


def validate_cluster_training_runtime_create(runtime: dict[str, Any]) -> list[Finding]:
    if not webhook_selected(runtime):
        return []
    findings: list[Finding] = []
    if is_deprecated(runtime):
        name = as_str(as_dict(runtime.get("metadata")).get("name"))
        findings.append(r.RUNTIME_SELF_DEPRECATED.finding(
            f'ClusterTrainingRuntime "{name}" is deprecated and will be removed in a future release of '
            f"Kubeflow Trainer. See runtime deprecation policy: {api.DEPRECATION_POLICY_URL}",
            path=f"metadata.labels[{api.LABEL_SUPPORT}]",
            at=("metadata", "labels", api.LABEL_SUPPORT),
        ))
    return findings + validate_replicated_jobs(runtime)


def validate_cluster_training_runtime_update(runtime: dict[str, Any]) -> list[Finding]:
    return validate_replicated_jobs(runtime) if webhook_selected(runtime) else []
