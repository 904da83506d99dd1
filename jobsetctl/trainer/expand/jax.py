"""JAX (trainer.md §3.8.5). ``trainer.env`` is applied later by the JobSet builder, after these envs."""

from __future__ import annotations

from jobsetctl.trainer import api
from jobsetctl.trainer.expand.state import State
from jobsetctl.trainer.expand.upsert import env_completion_index, env_value, upsert_env, upsert_ports


def enforce(state: State) -> None:
    if state.info.policy("jax") is None:
        return
    trainjob = state.trainjob
    trainer_set = state.info.pod_set_by_ancestor(api.ANCESTOR_TRAINER)
    if trainer_set is not None and trainjob.num_nodes is not None:
        trainer_set.count = trainjob.num_nodes
    if trainjob.trainer is None:
        return
    container = state.info.trainer_container()
    if container is None:
        return
    count = trainer_set.count if trainer_set is not None else 1
    upsert_env(container, [
        env_value(api.JAX_ENV_NUM_PROCESSES, str(count)),
        env_completion_index(api.JAX_ENV_PROCESS_ID),
        # Quirk 2: job name "node" and the TrainJob name as subdomain, whatever the runtime says.
        env_value(api.JAX_ENV_COORDINATOR_ADDRESS, f"{trainjob.name}-{api.NODE}-0-0.{trainjob.name}:{api.TRAINER_PORT}"),
    ])
    upsert_ports(container, [{"containerPort": api.TRAINER_PORT}])
