"""Expansion: the Torch plugin (trainer.md §3.8.2) and torchtune (§3.8.3)."""

from __future__ import annotations

from typing import Any

import pytest

from jobsetctl.trainer.expand import torchtune
from tests.trainer.util import (
    RANK_FIELD,
    catalog,
    container,
    ctr,
    env_map,
    env_names,
    job,
    pod_spec,
    rjob,
    run,
    torch_runtime,
    trainjob,
)

RANK = {"name": "PET_NODE_RANK", "valueFrom": {"fieldRef": {"fieldPath": RANK_FIELD}}}


def test_torch_injects_pet_envs_port_and_counts() -> None:
    """The 01-multi-node shape: numNodes 3 against torch-distributed (no resources: CPU 0 → 1 proc)."""
    expansion = run(trainjob("tj", "torch-distributed", trainer={"numNodes": 3, "command": ["torchrun", "x.py"]}),
                    catalog("torch-distributed"))
    node = ctr(expansion, "node")
    assert node["env"] == [
        {"name": "PET_NNODES", "value": "3"},
        {"name": "PET_NPROC_PER_NODE", "value": "1"},
        RANK,
        {"name": "PET_MASTER_ADDR", "value": "tj-node-0-0.tj"},
        {"name": "PET_MASTER_PORT", "value": "29500"},
    ]
    assert node["ports"] == [{"containerPort": 29500}]
    assert node["command"] == ["torchrun", "x.py"]
    spec = rjob(expansion, "node")
    assert spec["replicas"] == 1
    assert spec["template"]["spec"]["parallelism"] == 3
    assert spec["template"]["spec"]["completions"] == 3
    assert expansion.errors == []
    assert expansion.objects == []


def test_torch_env_order_template_then_new_trainer_env_then_pet() -> None:
    """Upsert semantics (trainer.md §3.8.2 step 5): replaced in place, new ones appended."""
    rt = torch_runtime(jobs=[job(containers=[container(env=[
        {"name": "A", "value": "1"}, {"name": "PET_NNODES", "value": "stale"},
    ])])])
    tj = trainjob(trainer={"numNodes": 2, "env": [{"name": "B", "value": "b"}, {"name": "A", "value": "2"}]})
    node = ctr(run(tj, rt), "node")
    assert env_names(node) == [
        "A", "PET_NNODES", "B", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT",
    ]
    assert env_map(node)["A"] == "2"
    assert env_map(node)["PET_NNODES"] == "2"


@pytest.mark.parametrize(
    ("runtime_resources", "trainer", "expected"),
    [
        pytest.param(None, {}, "1", id="nothing-known"),
        pytest.param({"limits": {"nvidia.com/gpu": 4}}, {}, "auto", id="runtime-gpus-auto"),
        pytest.param(None, {"numProcPerNode": 8}, "8", id="explicit"),
        pytest.param({"limits": {"nvidia.com/gpu": 4}}, {"numProcPerNode": 2}, "2", id="explicit-wins-over-gpu"),
        pytest.param(None, {"resourcesPerNode": {"requests": {"cpu": "2500m"}}}, "3", id="cpu-rounded-up"),
        pytest.param(None, {"resourcesPerNode": {"limits": {"cpu": "3.7"}}}, "4", id="cpu-from-limits"),
        pytest.param({"requests": {"cpu": "6"}}, {}, "6", id="runtime-cpu"),
        pytest.param(None, {"resourcesPerNode": {"requests": {"cpu": "0"}, "limits": {"cpu": "5"}}}, "5",
                     id="zero-request-falls-back-to-limit"),
        pytest.param(None, {"resourcesPerNode": {"requests": {"amd.com/GPU": "1"}}}, "auto", id="gpu-name-any-case"),
    ],
)
def test_nproc_per_node_table(runtime_resources: dict[str, Any] | None, trainer: dict[str, Any], expected: str) -> None:
    fields = {"resources": runtime_resources} if runtime_resources else {}
    rt = torch_runtime(jobs=[job(containers=[container(**fields)])])
    node = ctr(run(trainjob(trainer=trainer), rt), "node")
    assert env_map(node)["PET_NPROC_PER_NODE"] == expected


def test_quirk_4_resources_per_node_without_gpu_ignores_runtime_gpus() -> None:
    """A TrainJob that only raises memory gets pods with the runtime's 4 GPUs (merged resources) but
    PET_NPROC_PER_NODE from CPU: its own resourcesPerNode is used alone (open upstream PR #3974)."""
    rt = torch_runtime(jobs=[job(containers=[container(resources={"limits": {"nvidia.com/gpu": 4}})])])
    tj = trainjob(trainer={"resourcesPerNode": {"requests": {"memory": "64Gi"}}})
    node = ctr(run(tj, rt), "node")
    assert node["resources"] == {"limits": {"nvidia.com/gpu": "4"}, "requests": {"memory": "64Gi"}}
    assert env_map(node)["PET_NPROC_PER_NODE"] == "1"


def test_quirk_2_master_addr_ignores_subdomain_and_job_name() -> None:
    rt = torch_runtime(jobs=[job("trainer-job")], jobset={"network": {"subdomain": "custom"}})
    node = ctr(run(trainjob("tj", trainer={}), rt), "trainer-job")
    assert env_map(node)["PET_MASTER_ADDR"] == "tj-node-0-0.tj"


def test_quirk_3_no_trainer_section_no_node_envs_but_injection_targets_get_them() -> None:
    rt = torch_runtime(
        ml_policy={"numNodes": 2, "torch": {"envInjection": {"targets": [{"jobName": "node", "containerNames": ["warmup"]}]}}},
        jobs=[job(init_containers=[container("warmup")])],
    )
    expansion = run(trainjob(), rt)
    node = ctr(expansion, "node")
    assert "env" not in node and "ports" not in node
    warmup = ctr(expansion, "node", "warmup", init=True)
    assert warmup["env"] == [
        {"name": "PET_NNODES", "value": "2"},
        {"name": "PET_NPROC_PER_NODE", "value": "1"},
        RANK,
        {"name": "PET_MASTER_ADDR", "value": "tj-node-0-0.tj"},
        {"name": "PET_MASTER_PORT", "value": "29500"},
    ]


def test_env_injection_targets_other_jobs_and_app_containers() -> None:
    rt = torch_runtime(
        ml_policy={"torch": {"envInjection": {"targets": [{"jobName": "prep", "containerNames": ["check"]}]}}},
        jobs=[job("prep", None, [container("check")]), job()],
    )
    expansion = run(trainjob(trainer={"numNodes": 4}), rt)
    assert env_map(ctr(expansion, "prep", "check"))["PET_NNODES"] == "4"
    # A job without ancestor keeps its parallelism-derived count (1).
    assert rjob(expansion, "prep")["template"]["spec"]["parallelism"] == 1


def test_missing_env_injection_target_is_a_reconcile_error() -> None:
    rt = torch_runtime(ml_policy={"torch": {"envInjection": {"targets": [{"jobName": "node", "containerNames": ["nope"]}]}}})
    expansion = run(trainjob(trainer={}), rt)
    assert expansion.errors == ['envInjection target podSet "node" container "nope" not found in runtime template']
    assert not expansion.applied


def test_quirk_trainer_port_replaces_first_unnamed_template_port() -> None:
    """Go's ptr.Equal(nil, nil) makes two unnamed ports "the same" (pkg/apply byContainerPortOrName)."""
    rt = torch_runtime(jobs=[job(containers=[container(ports=[{"containerPort": 8080}, {"name": "m", "containerPort": 9090}])])])
    node = ctr(run(trainjob(trainer={}), rt), "node")
    assert node["ports"] == [{"containerPort": 29500}, {"name": "m", "containerPort": 9090}]


def test_quirk_env_from_trainjob_is_rebuilt_by_the_controller() -> None:
    """apply.EnvVar: value "" for a valueless env, fieldRef keeps only fieldPath."""
    tj = trainjob(trainer={"env": [
        {"name": "EMPTY"},
        {"name": "POD", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
        {"name": "MEM", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory"}}},
    ]})
    node = ctr(run(tj, torch_runtime()), "node")
    assert node["env"][:3] == [
        {"name": "EMPTY", "value": ""},
        {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "MEM", "valueFrom": {"resourceFieldRef": {"containerName": "", "resource": "limits.memory", "divisor": "0"}}},
    ]


# --- torchtune ------------------------------------------------------------------------------------

TUNE = ["tune", "run"]
LLAMA_1B_OVERRIDES = [
    "output_dir=/workspace/output",
    "tokenizer.path=/workspace/model/original/tokenizer.model",
    "checkpointer.checkpoint_dir=/workspace/model",
]


def test_torchtune_default_runtime_two_gpus() -> None:
    """Runtime GPUs 2 → numProcPerNode auto, rendezvous on, multi-device full finetune."""
    expansion = run(trainjob("ft", "torchtune-llama3.2-1b", trainer={"command": TUNE}), catalog("torchtune-llama3.2-1b"))
    node = ctr(expansion, "node")
    assert node["command"] == [
        "tune", "run", "--rdzv_endpoint=ft-node-0-0.ft:29500", "full_finetune_distributed",
        "--config", "llama3_2/1B_full", *LLAMA_1B_OVERRIDES,
    ]
    assert env_names(node) == ["PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK"]
    assert env_map(node)["PET_NPROC_PER_NODE"] == "auto"
    assert node["ports"] == [{"containerPort": 29500}]


def test_quirk_9_torchtune_drops_mutable_runtime_command_items() -> None:
    expansion = run(trainjob("ft", "torchtune-llama3.2-1b", trainer={"command": TUNE}), catalog("torchtune-llama3.2-1b"))
    command = ctr(expansion, "node")["command"]
    assert not any(item.startswith("dataset") for item in command)


def test_torchtune_single_gpu_and_user_args() -> None:
    tj = trainjob("ft", "torchtune-qwen2.5-1.5b", trainer={
        "command": TUNE, "args": ["batch_size=4"], "resourcesPerNode": {"limits": {"nvidia.com/gpu": 1}},
    })
    node = ctr(run(tj, catalog("torchtune-qwen2.5-1.5b")), "node")
    assert node["command"] == [
        "tune", "run", "full_finetune_single_device", "--config", "qwen2_5/1.5B_full_single_device",
        "output_dir=/workspace/output", "tokenizer.path=/workspace/model/vocab.json",
        "tokenizer.merges_file=/workspace/model/merges.txt", "checkpointer.checkpoint_dir=/workspace/model",
    ]
    assert node["args"] == ["batch_size=4"]
    assert node["resources"] == {"limits": {"nvidia.com/gpu": "1"}}


def test_torchtune_without_command_keeps_runtime_command_and_gets_master_envs() -> None:
    """[derived] trainer.md §3.8.3 last bullet."""
    expansion = run(trainjob("ft", "torchtune-llama3.2-1b", trainer={}), catalog("torchtune-llama3.2-1b"))
    node = ctr(expansion, "node")
    assert node["command"][:3] == ["tune", "run", "--rdzv_endpoint=localhost:29500"]
    assert "dataset.source=parquet" in node["command"]
    assert env_map(node)["PET_MASTER_ADDR"] == "ft-node-0-0.ft"


@pytest.mark.parametrize(
    ("nodes", "proc", "gpus", "args", "expected"),
    [
        (1, 1, 0, [], ("full_finetune_single_device", "llama3_2/1B_full_single_device")),
        (1, "auto", 1, [], ("full_finetune_single_device", "llama3_2/1B_full_single_device")),
        (1, "auto", 1, ["model.lora_attn_modules=[q_proj]"], ("lora_finetune_single_device", "llama3_2/1B_lora_single_device")),
        (1, 1, 0, ["model.quantize_base=True"], ("lora_finetune_single_device", "llama3_2/1B_qlora_single_device")),
        (1, "auto", 2, ["model.quantize_base=TRUE"], ("lora_finetune_distributed", "llama3_2/1B_qlora")),
        (1, "auto", 2, ["model.quantize_base=true", "model.use_dora=True"], ("full_finetune_distributed", "llama3_2/1B_full")),
        (1, 4, 0, ["model.lora_attn_modules=[q]"], ("lora_finetune_distributed", "llama3_2/1B_lora")),
        (2, "auto", 8, ["model.lora_attn_modules=[q]"], ("full_finetune_distributed", "llama3_2/1B_full_multinode")),
        (1, "auto", 4, ["model.quantize_base=false"], ("full_finetune_distributed", "llama3_2/1B_full")),
    ],
)
def test_recipe_and_config_table(nodes: int, proc: int | str, gpus: int, args: list[str], expected: tuple[str, str]) -> None:
    assert torchtune.recipe_and_config(nodes, proc, gpus, args, "torchtune-llama3.2-1b") == expected


@pytest.mark.parametrize(
    ("name", "model"),
    [
        ("torchtune-llama3.2-1b", "llama3_2/1B"),
        ("torchtune-qwen2.5-1.5b", "qwen2_5/1.5B"),
        ("torchtune-llama3.3-70b", "llama3_3/70B"),
        ("my-runtime", ""),
        ("a-b-c-d", ""),
    ],
)
def test_model_from_runtime_name(name: str, model: str) -> None:
    assert torchtune.model_of(name) == model


@pytest.mark.parametrize(
    ("nodes", "proc", "gpus", "expected"),
    [(2, 1, 0, True), (1, 2, 0, True), (1, 1, 8, False), (1, "auto", 2, True), (1, "auto", 1, False)],
)
def test_rendezvous_table(nodes: int, proc: int | str, gpus: int, expected: bool) -> None:
    assert torchtune.needs_rendezvous(nodes, proc, gpus) is expected


def test_torch_pod_spec_of_other_jobs_untouched() -> None:
    rt = torch_runtime(jobs=[job("aux", None, [container("aux")]), job()])
    expansion = run(trainjob(trainer={"numNodes": 2}), rt)
    assert pod_spec(expansion, "aux") == {"containers": [{"name": "aux", "image": "img"}]}
