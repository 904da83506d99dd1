"""The JobSet plugin's PreBuildSync and Build (trainer.md §3.9, §3.12, §3.13)."""

from __future__ import annotations

from typing import Any

from jobsetctl.jobset import api as jobset_api
from jobsetctl.jobset.names import pod_dns_name
from jobsetctl.kube.jsontree import copy_tree
from jobsetctl.trainer import api
from jobsetctl.trainer.expand.model import (
    as_dict,
    as_int,
    as_str,
    child,
    find_container,
    job_ancestor,
    pod_spec_of,
)
from jobsetctl.trainer.expand.state import State, owner_reference
from jobsetctl.trainer.expand.upsert import env_value, envs_from_api, upsert_env


def pre_build_sync(state: State) -> None:
    """Endpoints per PodSet, then ``parallelism = completions = count`` on the same-named job."""
    name = state.trainjob.name
    subdomain = as_str(as_dict(state.info.spec.get("network")).get("subdomain"))
    for pod_set in state.info.pod_sets:
        replicas = as_int(pod_set.job.get("replicas"))
        replicas = api.DEFAULT_JOB_REPLICAS if replicas is None else replicas
        pod_set.endpoints = [
            pod_dns_name(name, pod_set.name, replica, index, subdomain)
            for replica in range(replicas)
            for index in range(pod_set.count)
        ]
    for pod_set in state.info.pod_sets:
        for job in state.info.replicated_jobs:
            if job.get("name") == pod_set.name:
                job_spec = child(child(job, "template"), "spec")
                job_spec["parallelism"] = pod_set.count
                job_spec["completions"] = pod_set.count
                break


def build(state: State) -> dict[str, Any]:
    spec = copy_tree(state.info.spec)
    jobs = [job for job in spec.get("replicatedJobs") or [] if isinstance(job, dict)]
    _initializers(state, jobs)
    _trainer(state, jobs)
    for job in jobs:
        pod_template = child(child(child(job, "template"), "spec"), "template")
        if state.info.pod_labels:
            child(child(pod_template, "metadata"), "labels").update(state.info.pod_labels)
        if state.info.pod_annotations:
            child(child(pod_template, "metadata"), "annotations").update(state.info.pod_annotations)
    if state.trainjob.suspend is None:
        spec.pop("suspend", None)
    else:
        spec["suspend"] = state.trainjob.suspend
    metadata: dict[str, Any] = {"name": state.trainjob.name, "namespace": state.trainjob.namespace}
    if state.info.labels:
        metadata["labels"] = dict(state.info.labels)
    if state.info.annotations:
        metadata["annotations"] = dict(state.info.annotations)
    metadata["ownerReferences"] = [owner_reference(state.trainjob)]
    return {"apiVersion": jobset_api.API_VERSION, "kind": "JobSet", "metadata": metadata, "spec": spec}


def _initializers(state: State, jobs: list[dict[str, Any]]) -> None:
    """trainer.md §3.9: jobs found by ancestor label, containers by name (quirk 1)."""
    for job in jobs:
        ancestor = job_ancestor(job)
        for section, container_name in (("dataset", api.DATASET_INITIALIZER), ("model", api.MODEL_INITIALIZER)):
            if ancestor != container_name:
                continue
            job["replicas"] = 1
            initializer = state.trainjob.initializer(section)
            container = find_container(pod_spec_of(job), container_name)
            if initializer is None or container is None:
                continue
            storage_uri = initializer.get("storageUri")
            if isinstance(storage_uri, str):
                upsert_env(container, [env_value(api.ENV_STORAGE_URI, storage_uri)])
            env = [e for e in initializer.get("env") or [] if isinstance(e, dict)]
            upsert_env(container, envs_from_api(env))
            secret_ref = initializer.get("secretRef")
            if isinstance(secret_ref, dict):
                env_from = container.get("envFrom")
                if not isinstance(env_from, list):
                    env_from = container["envFrom"] = []
                env_from.append({"secretRef": {"name": as_str(secret_ref.get("name"))}})


def _trainer(state: State, jobs: list[dict[str, Any]]) -> None:
    """trainer.md §3.13 step 3: every trainer-ancestor job gets ``replicas: 1`` and the TrainJob's
    image/command/args on container ``node``; ``trainer.env`` also goes to the ``node`` job with MPI
    runLauncherAsNode. No container ``node`` → nothing applied (quirk 12)."""
    trainer = state.trainjob.trainer
    mpi = state.info.policy("mpi")
    launcher_as_node = mpi is not None and mpi.get("runLauncherAsNode") is True
    for job in jobs:
        is_trainer = job_ancestor(job) == api.ANCESTOR_TRAINER
        if is_trainer:
            job["replicas"] = 1
        container = find_container(pod_spec_of(job), api.NODE)
        if container is None or trainer is None:
            continue
        if is_trainer:
            if isinstance(trainer.get("image"), str):
                container["image"] = trainer["image"]
            if state.trainjob.trainer_command is not None:
                container["command"] = list(state.trainjob.trainer_command)
            # Runtime args survive when only the command is replaced (trainer.md §3.13 step 3).
            if state.trainjob.trainer_args is not None:
                container["args"] = list(state.trainjob.trainer_args)
        if is_trainer or (launcher_as_node and job.get("name") == api.NODE):
            upsert_env(container, envs_from_api(state.trainjob.trainer_env))
