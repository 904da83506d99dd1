"""Torch and torchtune (trainer.md §3.8.2, §3.8.3)."""

from __future__ import annotations

from typing import Any

from jobsetctl.trainer import api
from jobsetctl.trainer.expand import torchtune
from jobsetctl.trainer.expand.model import as_dict, as_str, dicts, strings
from jobsetctl.trainer.expand.resources import cpu_count, gpu_count
from jobsetctl.trainer.expand.state import State
from jobsetctl.trainer.expand.upsert import (
    env_completion_index,
    env_value,
    envs_from_api,
    upsert_env,
    upsert_ports,
)


def proc_per_node(state: State) -> torchtune.ProcPerNode:
    """``PET_NPROC_PER_NODE``: the TrainJob's value; else ``auto`` when a GPU count is known, else
    ``max(1, CPU count)``. Counts come from the TrainJob's ``resourcesPerNode`` alone when it is set,
    else from the runtime's node container (quirk 4)."""
    own = state.trainjob.num_proc_per_node
    if own is not None:
        return own
    resources = state.info.resources_for_derivation(state.trainjob)
    if gpu_count(resources) == 0:
        return max(1, cpu_count(resources))
    return "auto"


def env_injection_targets(policy: dict[str, Any]) -> list[tuple[dict[str, Any], str, str]]:
    """(target, jobName, containerName) for every ``envInjection.targets[].containerNames[]``."""
    out: list[tuple[dict[str, Any], str, str]] = []
    for target in dicts(as_dict(policy.get("envInjection")).get("targets")):
        for container in strings(target.get("containerNames")) or []:
            out.append((target, as_str(target.get("jobName")), container))
    return out


def enforce(state: State) -> None:
    policy = state.info.policy("torch")
    if policy is None:
        return
    trainjob = state.trainjob
    trainer_set = state.info.pod_set_by_ancestor(api.ANCESTOR_TRAINER)
    if trainer_set is not None and trainjob.num_nodes is not None:
        trainer_set.count = trainjob.num_nodes
    nproc = proc_per_node(state)
    gpus = gpu_count(state.info.resources_for_derivation(trainjob))
    num_nodes = trainer_set.count if trainer_set is not None else 1

    container = state.info.trainer_container() if trainjob.trainer is not None else None
    if container is not None:
        upsert_env(container, envs_from_api(trainjob.trainer_env))
    pet_envs = [
        env_value(api.TORCH_ENV_NUM_NODES, str(num_nodes)),
        env_value(api.TORCH_ENV_NPROC_PER_NODE, str(nproc)),
        env_completion_index(api.TORCH_ENV_NODE_RANK),
    ]
    # Quirk 2: always job "node" and the TrainJob name as subdomain (network.subdomain is ignored).
    master_envs = [
        env_value(api.TORCH_ENV_MASTER_ADDR, f"{trainjob.name}-{api.NODE}-0-0.{trainjob.name}"),
        env_value(api.TORCH_ENV_MASTER_PORT, str(api.TRAINER_PORT)),
    ]
    # Quirk 3: without spec.trainer nothing is injected into "node" (envInjection targets still are).
    if container is not None and trainjob.trainer is not None:
        upsert_env(container, pet_envs)
        if not trainjob.is_torchtune():
            upsert_env(container, master_envs)
        else:
            _torchtune_command(state, trainjob.trainer, num_nodes, nproc, gpus)
        upsert_ports(container, [{"containerPort": api.TRAINER_PORT}])

    for _target, job_name, container_name in env_injection_targets(policy):
        pod_set = state.info.pod_set_by_name(job_name)
        target = pod_set.container_or_init(container_name) if pod_set is not None else None
        if target is None:
            state.fail(f'envInjection target podSet "{job_name}" container "{container_name}" not found in runtime template')
            return
        upsert_env(target, pet_envs)
        upsert_env(target, master_envs)


def _torchtune_command(
    state: State, trainer: dict[str, Any], num_nodes: int, nproc: torchtune.ProcPerNode, gpus: int
) -> None:
    """Extend the TrainJob's ``[tune, run]`` in place; the JobSet builder then writes it to ``node``."""
    trainjob = state.trainjob
    extra: list[str] = []
    if torchtune.needs_rendezvous(num_nodes, nproc, gpus):
        extra.append(
            f"{api.TORCHTUNE_ARG_RDZV_ENDPOINT}={trainjob.name}-{api.NODE}-0-0.{trainjob.name}:{api.TRAINER_PORT}"
        )
    recipe, config = torchtune.recipe_and_config(
        num_nodes, nproc, gpus, trainjob.trainer_args or [], trainjob.runtime_ref.name
    )
    extra += [recipe, api.TORCHTUNE_ARG_CONFIG, config]
    extra += torchtune.runtime_overrides(state.info.replicated_jobs)
    trainer["command"] = list(trainjob.trainer_command or []) + extra
