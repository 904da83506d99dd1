"""XGBoost (trainer.md §3.8.6). PlainML is active too and upserts ``trainer.env`` first (Go runs the
two in random map order; we fix PlainML first, so user envs precede the DMLC ones)."""

from __future__ import annotations

from jobsetctl.trainer import api
from jobsetctl.trainer.expand.resources import gpu_count
from jobsetctl.trainer.expand.state import State
from jobsetctl.trainer.expand.upsert import env_completion_index, env_value, upsert_env, upsert_ports


def enforce(state: State) -> None:
    if state.info.policy("xgboost") is None:
        return
    trainjob = state.trainjob
    trainer_set = state.info.pod_set_by_ancestor(api.ANCESTOR_TRAINER)
    if trainer_set is None:
        return
    if trainjob.num_nodes is not None:
        trainer_set.count = trainjob.num_nodes
    if trainjob.trainer is None:
        return
    container = state.info.trainer_container()
    if container is None:
        return
    workers_per_node = max(1, gpu_count(state.info.resources_for_derivation(trainjob)))
    upsert_env(container, [
        env_value(api.XGBOOST_ENV_TRACKER_URI, f"{trainjob.name}-{api.NODE}-0-0.{trainjob.name}"),
        env_value(api.XGBOOST_ENV_TRACKER_PORT, str(api.TRAINER_PORT)),
        env_completion_index(api.XGBOOST_ENV_TASK_ID),
        env_value(api.XGBOOST_ENV_NUM_WORKER, str(trainer_set.count * workers_per_node)),
    ])
    upsert_ports(container, [{"containerPort": api.TRAINER_PORT}])
