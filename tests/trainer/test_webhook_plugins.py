"""TrainJob validating webhook, plugin checks: Torch/torchtune T1–T8, MPI M1–M2, XGBoost, Flux, Volcano
(trainer.md §2.4 step B)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.trainer.util import (
    NO_WEBHOOK,
    container,
    job,
    only,
    runtime,
    torch_runtime,
    trainer_rules,
    trainjob,
    validate_objects,
)

TUNE = ["tune", "run"]


def _rules(tmp_path: Path, *objects: dict[str, Any]) -> list[str]:
    return trainer_rules(validate_objects(tmp_path, *objects))


# --- Torch ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("targets", "expected"),
    [
        ([{"jobName": "node", "containerNames": ["warmup"]}], []),
        ([{"jobName": "aux", "containerNames": ["aux"]}], []),
        ([{"jobName": "node", "containerNames": ["missing"]}], ["trainjob-env-injection-target-missing"]),
        ([{"jobName": "ghost", "containerNames": ["a", "b"]}],
         ["trainjob-env-injection-target-missing", "trainjob-env-injection-target-missing"]),
    ],
)
def test_env_injection_targets_t1(tmp_path: Path, targets: list[dict[str, Any]], expected: list[str]) -> None:
    rt = torch_runtime(
        ml_policy={"torch": {"envInjection": {"targets": targets}}},
        jobs=[job("aux", None, [container("aux")]), job(init_containers=[container("warmup")])],
    )
    assert _rules(tmp_path, rt, trainjob()) == expected


def test_env_injection_message(tmp_path: Path) -> None:
    rt = torch_runtime(ml_policy={"torch": {"envInjection": {"targets": [{"jobName": "node", "containerNames": ["x"]}]}}})
    found = only(validate_objects(tmp_path, rt, trainjob()), "trainjob-env-injection-target-missing")
    assert found.message == (
        'spec.runtimeRef: Invalid value: {"containerNames":["x"],"jobName":"node"}: '
        'envInjection target podSet "node" container "x" not found in runtime template'
    )


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ([{"name": "OK", "value": "1"}], None),
        ([{"name": "PET_NNODES", "value": "1"}], "[PET_NNODES]"),
        ([{"name": "PET_MASTER_PORT", "value": "1"}, {"name": "PET_MASTER_ADDR", "value": "x"}],
         "[PET_MASTER_ADDR PET_MASTER_PORT]"),
    ],
)
def test_torch_reserved_env_t2(tmp_path: Path, env: list[dict[str, Any]], expected: str | None) -> None:
    diagnostics = validate_objects(tmp_path, trainjob("tj", "torch-distributed", trainer={"env": env}))
    found = [d for d in diagnostics if d.rule == "trainjob-torch-reserved-env"]
    if expected is None:
        assert found == []
    else:
        assert [d.message.split("invalid envs configured: ")[-1] for d in found] == [expected]
        assert found[0].message.startswith("spec.trainer.env: Invalid value: [")
        assert "must not have reserved envs" in found[0].message


def test_torch_reserved_env_only_for_torch_runtimes(tmp_path: Path) -> None:
    tj = trainjob("tj", "jax-distributed", trainer={"env": [{"name": "PET_NNODES", "value": "1"}]})
    assert _rules(tmp_path, tj) == []


@pytest.mark.parametrize(
    ("runtime_name", "trainer", "expected"),
    [
        pytest.param("torchtune-llama3.2-1b", {}, [], id="full-finetune"),
        pytest.param("torchtune-llama3.2-1b", {"command": ["tune"]}, [], id="not-torchtune-command"),
        pytest.param("torchtune-llama3.2-1b", {"numNodes": 2}, ["trainjob-torchtune-num-nodes"], id="T4"),
        pytest.param("torchtune-qwen2.5-1.5b", {"args": ["model.quantize_base=True"],
                                                "resourcesPerNode": {"limits": {"nvidia.com/gpu": 2}}},
                     ["trainjob-torchtune-qlora-unsupported"], id="T5"),
        pytest.param("torchtune-llama3.2-3b", {"args": ["model.quantize_base=True"]},
                     ["trainjob-torchtune-qlora-devices", "trainjob-torchtune-qlora-devices"], id="T6"),
        pytest.param("torchtune-llama3.2-3b", {"args": ["model.quantize_base=True"], "numProcPerNode": 1}, [],
                     id="T6-single-device-ok"),
        pytest.param("torchtune-llama3.2-1b", {"numNodes": 2, "args": ["model.lora_attn_modules=[q]"]},
                     ["trainjob-torchtune-num-nodes", "trainjob-torchtune-lora-multinode"], id="T7"),
        pytest.param("torchtune-llama3.2-1b", {"args": ["epochs=1", "output_dir=/x", "tokenizer.path=/t"]},
                     ["trainjob-torchtune-immutable-config", "trainjob-torchtune-immutable-config"], id="T8"),
    ],
)
def test_torchtune_checks_table(tmp_path: Path, runtime_name: str, trainer: dict[str, Any], expected: list[str]) -> None:
    trainer = {"command": TUNE, **trainer}
    # Diagnostics come sorted by position, then rule: compare as multisets.
    assert sorted(_rules(tmp_path, trainjob("ft", runtime_name, trainer=trainer))) == sorted(expected)


def test_torchtune_unsupported_model_t3(tmp_path: Path) -> None:
    rt = torch_runtime("my-tune")
    found = only(validate_objects(tmp_path, rt, trainjob("ft", "my-tune", trainer={"command": TUNE})),
                 "trainjob-torchtune-unsupported-model")
    assert found.message == (
        'spec.runtimeRef.name: Invalid value: "my-tune": must have a supported pretrained model, invalid model configured: '
    )


def test_torchtune_messages(tmp_path: Path) -> None:
    tj = trainjob("ft", "torchtune-llama3.2-3b", trainer={
        "command": TUNE, "numNodes": 2, "args": ["model.quantize_base=True", "checkpointer.checkpoint_dir=/c"],
    })
    diagnostics = validate_objects(tmp_path, tj)
    got = {(d.rule, d.message) for d in diagnostics if d.rule.startswith("trainjob-torchtune")}
    assert got == {
        ("trainjob-torchtune-num-nodes", "spec.trainer.numNodes: Invalid value: 2: must be 1 for llama3_2/3B model"),
        ("trainjob-torchtune-lora-multinode", "spec.trainer.numNodes: Invalid value: 2: LoRA fine-tuning is not "
         "supported for multi-node training in TorchTune"),
        ("trainjob-torchtune-immutable-config", 'spec.trainer.args[1]: Invalid value: "checkpointer.checkpoint_dir=/c": '
         'must not set immutable config "checkpointer.checkpoint_dir" in trainer args; it is managed by the runtime'),
    }


def test_torchtune_qlora_device_messages(tmp_path: Path) -> None:
    tj = trainjob("ft", "torchtune-llama3.2-1b", trainer={"command": TUNE, "args": ["model.quantize_base=true"]})
    found = [d for d in validate_objects(tmp_path, tj) if d.rule == "trainjob-torchtune-qlora-devices"]
    assert [(d.path, d.message) for d in found] == [
        ("spec.trainer.numProcPerNode", 'spec.trainer.numProcPerNode: Invalid value: "auto": must be auto or 1 for '
         "llama3_2/1B model when using QLoRA"),
        ("spec.trainer.resourcesPerNode", 'spec.trainer.resourcesPerNode: Invalid value: "null": must have gpu resource '
         "with value 1 for llama3_2/1B model when using QLoRA"),
    ]


# --- MPI --------------------------------------------------------------------------------------


def _mpi_runtime(jobs: list[dict[str, Any]]) -> dict[str, Any]:
    return runtime("mpi", ml_policy={"numNodes": 1, "mpi": {"runLauncherAsNode": True}}, jobs=jobs, labels=NO_WEBHOOK)


@pytest.mark.parametrize(
    ("jobs", "num_nodes", "expected"),
    [
        ([job("launcher"), job("node", None)], 4, []),
        ([job("launcher")], 1, []),
        ([job("launcher")], 2, ["trainjob-mpi-num-nodes"]),
        ([job("node")], 3, ["trainjob-mpi-num-nodes"]),
    ],
)
def test_mpi_num_nodes_m1(tmp_path: Path, jobs: list[dict[str, Any]], num_nodes: int, expected: list[str]) -> None:
    assert _rules(tmp_path, _mpi_runtime(jobs), trainjob("m", "mpi", trainer={"numNodes": num_nodes})) == expected


def test_mpi_m1_message(tmp_path: Path) -> None:
    found = only(validate_objects(tmp_path, _mpi_runtime([job("launcher")]), trainjob("m", "mpi", trainer={"numNodes": 2})),
                 "trainjob-mpi-num-nodes")
    assert found.message == (
        "spec.trainer.numNodes: Invalid value: 2: must have 1 when MPI trainingRuntime with enabled "
        "runLauncherAsNode does not have either launcher and node"
    )


def test_mpi_reserved_env_m2(tmp_path: Path) -> None:
    tj = trainjob("ds", "deepspeed-distributed", trainer={"env": [
        {"name": "OMPI_MCA_plm_rsh_args", "value": "a"}, {"name": "OMPI_MCA_orte_default_hostfile", "value": "b"},
        {"name": "FINE", "value": "c"},
    ]})
    found = only(validate_objects(tmp_path, tj), "trainjob-mpi-reserved-env")
    assert found.message.endswith(
        "must not have reserved envs, invalid envs configured: [OMPI_MCA_orte_default_hostfile OMPI_MCA_plm_rsh_args]"
    )


# --- XGBoost, Flux, Volcano --------------------------------------------------------------------


def test_xgboost_reserved_env_one_error_per_entry(tmp_path: Path) -> None:
    tj = trainjob("xg", "xgboost-distributed", trainer={"env": [
        {"name": "A", "value": "1"}, {"name": "DMLC_TASK_ID", "value": "0"}, {"name": "DMLC_NUM_WORKER", "value": "2"},
    ]})
    found = [d for d in validate_objects(tmp_path, tj) if d.rule == "trainjob-xgboost-reserved-env"]
    assert [(d.path, d.message) for d in found] == [
        ("spec.trainer.env[1]", "spec.trainer.env[1]: Forbidden: DMLC_TASK_ID is reserved for the XGBoost runtime"),
        ("spec.trainer.env[2]", "spec.trainer.env[2]: Forbidden: DMLC_NUM_WORKER is reserved for the XGBoost runtime"),
    ]


@pytest.mark.parametrize(("init", "expected"), [([], []), ([container("flux-installer")], ["trainjob-flux-reserved-init-container"])])
def test_flux_reserved_init_container(tmp_path: Path, init: list[dict[str, Any]], expected: list[str]) -> None:
    rt = runtime("flux", ml_policy={"numNodes": 1, "flux": {}}, jobs=[job(init_containers=init)], labels=NO_WEBHOOK)
    diagnostics = validate_objects(tmp_path, rt, trainjob("f", "flux", trainer={"numNodes": 1}))
    assert trainer_rules(diagnostics) == expected
    if expected:
        assert diagnostics[0].message == (
            'spec.trainer.initContainers: Invalid value: "flux-installer": InitContainer \'flux-installer\' is reserved'
        )


def _volcano_runtime(priority: list[str | None], queue: str | None = None) -> dict[str, Any]:
    jobs = [job(f"j{i}", None, [container(f"c{i}")], pod={"priorityClassName": p} if p is not None else {})
            for i, p in enumerate(priority)]
    jobs.append(job())
    metadata = {"annotations": {"scheduling.volcano.sh/queue-name": queue}} if queue is not None else None
    return torch_runtime("vc", pod_group_policy={"volcano": {}}, jobs=jobs, template_metadata=metadata)


def _priority_class(name: str) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": 1000}


@pytest.mark.parametrize(
    ("priority", "classes", "expected"),
    [
        pytest.param(["high"], [], [], id="no-priority-classes-known-no-check"),
        pytest.param(["high"], ["high"], [], id="exists"),
        pytest.param(["high"], ["low"], ["trainjob-volcano-priority-class-missing"], id="missing"),
        pytest.param(["system-node-critical", "ghost"], ["low"], [], id="system-class-stops-the-check"),
        pytest.param(["ghost", "system-cluster-critical"], ["low"], ["trainjob-volcano-priority-class-missing"],
                     id="errors-before-system-class-kept"),
        pytest.param([None], ["low"], [], id="no-priority-class-name"),
    ],
)
def test_volcano_priority_classes(tmp_path: Path, priority: list[str | None], classes: list[str], expected: list[str]) -> None:
    objects = [_volcano_runtime(priority), trainjob("t", "vc"), *(_priority_class(c) for c in classes)]
    assert _rules(tmp_path, *objects) == expected


def test_volcano_priority_class_message(tmp_path: Path) -> None:
    diagnostics = validate_objects(tmp_path, _volcano_runtime(["ghost"]), trainjob("t", "vc"), _priority_class("low"))
    assert only(diagnostics, "trainjob-volcano-priority-class-missing").message == (
        'spec.templateSpec.priorityClassName: Invalid value: "ghost": PriorityClass "ghost" doesn\'t exist: '
        'priorityclasses.scheduling.k8s.io "ghost" not found'
    )


@pytest.mark.parametrize(("queue", "expected"), [("q", []), (None, []), ("", ["trainjob-volcano-empty-queue"])])
def test_volcano_empty_queue(tmp_path: Path, queue: str | None, expected: list[str]) -> None:
    assert _rules(tmp_path, _volcano_runtime([], queue), trainjob("t", "vc")) == expected


def test_volcano_empty_queue_from_a_patch(tmp_path: Path) -> None:
    patch = {"manager": "a.io/q", "trainingRuntimeSpec": {"template": {"metadata": {
        "annotations": {"scheduling.volcano.sh/queue-name": ""}}}}}
    found = only(validate_objects(tmp_path, _volcano_runtime([], "q"), trainjob("t", "vc", patches=[patch])),
                 "trainjob-volcano-empty-queue")
    assert found.message == (
        'spec.annotations[scheduling.volcano.sh/queue-name]: Invalid value: "": Volcano queue name must not be empty'
    )
    assert found.path == "spec.annotations[scheduling.volcano.sh/queue-name]"
