"""Torchtune decisions shared by the Torch plugin and its webhook checks (trainer.md §2.4 T3–T8, §3.8.3)."""

from __future__ import annotations

from typing import Any

from jobsetctl.trainer import api
from jobsetctl.trainer.expand.model import dicts, find_container, job_ancestor, pod_spec_of, strings

#: ``numProcPerNode``: an int, or ``"auto"`` when the TrainJob leaves it to the plugin.
ProcPerNode = int | str


def model_of(runtime_name: str) -> str:
    """``torchtune-qwen2.5-1.5b`` → ``qwen2_5/1.5B``; a name that is not three ``-`` parts gives ``""``."""
    parts = runtime_name.split("-")
    if len(parts) != 3:
        return ""
    return f"{parts[1].replace('.', '_')}/{parts[2].upper()}"


def uses_lora(args: list[str]) -> bool:
    return any(api.TORCHTUNE_LORA_ATTN_MODULES in arg for arg in args)


def _bool_arg_enabled(args: list[str], item: str) -> bool:
    for arg in args:
        name, sep, value = arg.partition("=")
        if sep and item in name and value.strip().lower() == "true":
            return True
    return False


def uses_qlora(args: list[str]) -> bool:
    """QLoRA = ``…model.quantize_base…=true`` (any case) unless DoRA is on (``…model.use_dora…=true``)."""
    if _bool_arg_enabled(args, api.TORCHTUNE_USE_DORA):
        return False
    return _bool_arg_enabled(args, api.TORCHTUNE_QUANTIZE_BASE)


def recipe_and_config(
    num_nodes: int, proc_per_node: ProcPerNode, gpus: int, args: list[str], runtime_name: str
) -> tuple[str, str]:
    """The recipe and ``--config`` of trainer.md §3.8.3 (first matching row)."""
    recipe, suffix = api.RECIPE_FULL_DISTRIBUTED, api.SUFFIX_FULL_MULTI_DEVICE
    single_device = proc_per_node == 1 or gpus == 1
    if num_nodes == 1 and single_device:
        if uses_qlora(args):
            recipe, suffix = api.RECIPE_LORA_SINGLE_DEVICE, api.SUFFIX_QLORA_SINGLE_DEVICE
        elif uses_lora(args):
            recipe, suffix = api.RECIPE_LORA_SINGLE_DEVICE, api.SUFFIX_LORA_SINGLE_DEVICE
        else:
            recipe, suffix = api.RECIPE_FULL_SINGLE_DEVICE, api.SUFFIX_FULL_SINGLE_DEVICE
    elif num_nodes == 1 and uses_qlora(args):
        recipe, suffix = api.RECIPE_LORA_DISTRIBUTED, api.SUFFIX_QLORA_DISTRIBUTED
    elif num_nodes == 1 and uses_lora(args):
        recipe, suffix = api.RECIPE_LORA_DISTRIBUTED, api.SUFFIX_LORA_DISTRIBUTED
    elif num_nodes > 1:
        suffix = api.SUFFIX_FULL_MULTI_NODE
    return recipe, model_of(runtime_name) + suffix


def needs_rendezvous(num_nodes: int, proc_per_node: ProcPerNode, gpus: int) -> bool:
    """``--rdzv_endpoint`` only for multi-node or multi-device runs."""
    if num_nodes > 1:
        return True
    if isinstance(proc_per_node, int):
        return proc_per_node > 1
    return gpus > 1


def runtime_overrides(replicated_jobs: list[Any]) -> list[str]:
    """Runtime ``node`` command items whose key (before ``=``) is an immutable config, in runtime
    order, from every trainer-ancestor job. Every other runtime command item is dropped (quirk 9)."""
    overrides: list[str] = []
    for job in dicts(replicated_jobs):
        if job_ancestor(job) != api.ANCESTOR_TRAINER:
            continue
        container = find_container(pod_spec_of(job), api.NODE)
        if container is None:
            continue
        for item in strings(container.get("command")) or []:
            if item.split("=")[0] in api.TORCHTUNE_IMMUTABLE_CONFIGS:
                overrides.append(item)
    return overrides
