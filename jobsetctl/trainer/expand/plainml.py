"""PlainML (trainer.md §3.8.1): runtimes without torch/mpi/jax policy (none, xgboost or flux)."""

from __future__ import annotations

from jobsetctl.trainer import api
from jobsetctl.trainer.expand.state import State
from jobsetctl.trainer.expand.upsert import envs_from_api, upsert_env


def active(state: State) -> bool:
    return not any(state.info.policy(name) is not None for name in ("torch", "mpi", "jax"))


def enforce(state: State) -> None:
    if not active(state):
        return
    trainjob = state.trainjob
    trainer_set = state.info.pod_set_by_ancestor(api.ANCESTOR_TRAINER)
    if trainjob.num_nodes is not None and trainer_set is not None:
        trainer_set.count = trainjob.num_nodes
    if trainjob.trainer is not None:
        container = state.info.trainer_container()
        if container is not None:
            upsert_env(container, envs_from_api(trainjob.trainer_env))
