"""Where the TrainJob webhook's plugin findings point: (line, column, path, rule) per upstream test entry
(issue #13: every finding carries its upstream field path and points at that field).

Each entry is one case of kubeflow/trainer's own plugin tests, re-expressed as a TrainJob (the table's
``newObj``) and the runtime its ``runtime.Info`` stands for, run through the whole ``validate`` pipeline:

* ``pkg/runtime/framework/plugins/torch/torch_test.go`` ``TestTorchValidate``;
* ``pkg/runtime/framework/plugins/mpi/mpi_test.go`` ``TestValidate``;
* ``pkg/runtime/framework/plugins/xgboost/xgboost_test.go`` ``TestXGBoostValidate``;
* ``pkg/runtime/framework/plugins/flux/flux_test.go`` ``TestValidate``;
* ``pkg/runtime/framework/plugins/volcano/volcano_test.go`` ``TestValidate``;
* ``pkg/runtime/framework/plugins/jobset/jobset_test.go`` ``TestValidate`` (the create entries).

Entries left out: "no action when info is nil" (every table; the webhook always builds an Info once the
runtime is found), and the update entries of the JobSet plugin (tests/trainer/test_webhook_jobset.py
has them with ``--old``). The TrainJob is written in block style, so positions are easy to count:
``runtimeRef:`` is line 6 column 3 and its ``name`` line 7 column 5; ``trainer:`` (when present) is
line 8, its first field line 9 column 5. Runtimes are given as ``--runtimes`` context (the plugin tests
do not validate them); the built-in catalog supplies the shipped torchtune runtimes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from jobsetctl.diagnostics import Layer
from tests.helpers import allowed_positions, validate_files

Row = tuple[int, int, str, str]
ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"


def runtime(name: str, ml_policy: dict[str, Any] | None = None, *, jobs: list[dict[str, Any]] | None = None,
            pod_group_policy: dict[str, Any] | None = None, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if ml_policy is not None:
        spec["mlPolicy"] = ml_policy
    if pod_group_policy is not None:
        spec["podGroupPolicy"] = pod_group_policy
    template: dict[str, Any] = {"spec": {"replicatedJobs": jobs if jobs is not None else [job("node")]}}
    if annotations is not None:
        template = {"metadata": {"annotations": annotations}, **template}
    spec["template"] = template
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
            "metadata": {"name": name}, "spec": spec}


def job(name: str, *, containers: list[dict[str, Any]] | None = None, ancestor: str | None = None,
        pod: dict[str, Any] | None = None) -> dict[str, Any]:
    pod_spec = {**(pod or {}), "containers": containers if containers is not None else [{"name": "node", "image": "x"}]}
    template: dict[str, Any] = {"spec": {"template": {"spec": pod_spec}}}
    if ancestor is not None:
        template = {"metadata": {"labels": {ANCESTOR: ancestor}}, **template}
    return {"name": name, "template": template}


def trainjob(runtime_name: str, *body: str) -> str:
    """A TrainJob named ``test``; ``body`` lines follow ``runtimeRef`` (indented two spaces, from line 8)."""
    lines = ["apiVersion: trainer.kubeflow.org/v1alpha1", "kind: TrainJob", "metadata:", "  name: test", "spec:",
             "  runtimeRef:", f"    name: {runtime_name}", *body]
    return "\n".join(lines) + "\n"


def rows(tmp_path: Path, text: str, *runtimes: dict[str, Any], context: list[dict[str, Any]] | None = None) -> list[Row]:
    """(line, column, path, rule) of the TrainJob webhook's findings on the TrainJob, each checked to
    point inside its path."""
    files = {"trainjob.yaml": text}
    if context:
        files["context.yaml"] = yaml.safe_dump_all(context, sort_keys=False)
    options: dict[str, Any] = {}
    if runtimes:
        (tmp_path / "runtimes.yaml").write_text(yaml.safe_dump_all(runtimes, sort_keys=False), encoding="utf-8")
        options["runtimes"] = [str(tmp_path / "runtimes.yaml")]
    found = [d for d in validate_files(tmp_path, files, **options)
             if d.layer in (Layer.WEBHOOK, Layer.REFERENCE) and Path(d.file).name == "trainjob.yaml"]
    for d in found:
        assert (d.line, d.column) in allowed_positions(d.file, d.object.as_dict() if d.object else None, d.path), d
    return [(d.line, d.column, d.path, d.rule) for d in found]


TORCH = {"torch": {}}
TUNE = ["  trainer:", "    image: ghcr.io/kubeflow/trainer/torchtune-trainer", "    command: [tune, run]"]

# --- torch_test.go TestTorchValidate -------------------------------------------------------------

TORCH_CASES: list[tuple[str, str, list[dict[str, Any]], list[Row]]] = [
    ("no action when info does not have MLPolicySource",
     trainjob("plain", "  trainer:", "    env: [{name: PET_NNODES, value: '1'}]"), [runtime("plain")], []),
    ("no action when info has MLPolicySource but no Torch policy",
     trainjob("plain", "  trainer:", "    env: [{name: PET_NNODES, value: '1'}]"), [runtime("plain", {"numNodes": 1})], []),
    ("envInjection target container does not exist",
     trainjob("inject"),
     [runtime("inject", {"torch": {"envInjection": {"targets": [
         {"jobName": "node", "containerNames": ["missing-container"]}]}}})],
     [(7, 5, "spec.runtimeRef", "trainjob-env-injection-target-missing")]),
    ("no action when info does not have numProcPerNode", trainjob("t", "  trainer: {}"), [runtime("t", TORCH)], []),
    ("valid environment variable present",
     trainjob("t", "  trainer:", "    env:", "    - {name: test, value: value}", "    - {name: test2, value: value}"),
     [runtime("t", TORCH)], []),
    ("reserved environment variable present",
     trainjob("t", "  trainer:", "    env:", "    - {name: test, value: value}", "    - {name: PET_NPROC_PER_NODE, value: value}"),
     [runtime("t", TORCH)], [(9, 5, "spec.trainer.env", "trainjob-torch-reserved-env")]),
    ("unsupported pretrained model",
     trainjob("torchtune-llama3.1-70b", *TUNE, "    numNodes: 1"), [runtime("torchtune-llama3.1-70b", TORCH)],
     [(7, 5, "spec.runtimeRef.name", "trainjob-torchtune-unsupported-model")]),
    ("multi-node mode is only enabled for Llama-3.3-70b",
     trainjob("torchtune-llama3.2-3b", *TUNE, "    numNodes: 2"), [],
     [(11, 5, "spec.trainer.numNodes", "trainjob-torchtune-num-nodes")]),
    ("qlora is not supported for qwen in torchtune",
     trainjob("torchtune-qwen2.5-1.5b", *TUNE, "    numNodes: 1",
              "    args: ['model.lora_attn_modules=[q_proj, v_proj, output_proj]', model.quantize_base=True]"), [],
     [(7, 5, "spec.runtimeRef.name", "trainjob-torchtune-qlora-unsupported")]),
    # numProcPerNode is not set ("auto"): the finding points at spec.trainer, the deepest part of its path.
    ("muti-devices qlora is not supported for llama3.2-1b in torchtune",
     trainjob("torchtune-llama3.2-1b", *TUNE, "    numNodes: 1",
              "    args: ['model.lora_attn_modules=[q_proj, v_proj, output_proj]', model.quantize_base=True]",
              "    resourcesPerNode: {requests: {example.com/gpu: 2}}"), [],
     [(8, 3, "spec.trainer.numProcPerNode", "trainjob-torchtune-qlora-devices"),
      (13, 5, "spec.trainer.resourcesPerNode", "trainjob-torchtune-qlora-devices")]),
    ("lora is not supported for multi-node training in torchtune",
     trainjob("torchtune-llama3.3-70b", *TUNE, "    numNodes: 2",
              "    args: ['model.lora_attn_modules=[q_proj, v_proj, output_proj]']"),
     [runtime("torchtune-llama3.3-70b", TORCH)],
     [(11, 5, "spec.trainer.numNodes", "trainjob-torchtune-lora-multinode")]),
    ("lora is supported for single-node training in torchtune",
     trainjob("torchtune-llama3.3-70b", *TUNE, "    numNodes: 1",
              "    args: ['model.lora_attn_modules=[q_proj, v_proj, output_proj]']"),
     [runtime("torchtune-llama3.3-70b", TORCH)], []),
    ("immutable runtime config must not be set in trainer args",
     trainjob("torchtune-llama3.2-1b", *TUNE, "    numNodes: 1", "    args:", "    - output_dir=/custom/output"), [],
     [(13, 7, "spec.trainer.args[0]", "trainjob-torchtune-immutable-config")]),
    ("multiple immutable runtime configs must not be set in trainer args",
     trainjob("torchtune-llama3.2-1b", *TUNE, "    numNodes: 1", "    args:", "    - output_dir=custom-output",
              "    - tokenizer.path=/some/path"), [],
     [(13, 7, "spec.trainer.args[0]", "trainjob-torchtune-immutable-config"),
      (14, 7, "spec.trainer.args[1]", "trainjob-torchtune-immutable-config")]),
]


@pytest.mark.parametrize(("entry", "text", "runtimes", "expected"), TORCH_CASES, ids=[c[0] for c in TORCH_CASES])
def test_torch_validate(tmp_path: Path, entry: str, text: str, runtimes: list[dict[str, Any]], expected: list[Row]) -> None:
    assert rows(tmp_path, text, *runtimes) == expected


# --- mpi_test.go TestValidate ----------------------------------------------------------------------


def mpi(name: str, run_launcher_as_node: bool | None, jobs: list[dict[str, Any]]) -> dict[str, Any]:
    policy: dict[str, Any] = {"numProcPerNode": 1, "mpiImplementation": "OpenMPI"}
    if run_launcher_as_node is not None:
        policy["runLauncherAsNode"] = run_launcher_as_node
    return runtime(name, {"mpi": policy}, jobs=jobs)


NUM_NODES_2 = trainjob("m", "  trainer:", "    numNodes: 2")
MPI_M1 = [(9, 5, "spec.trainer.numNodes", "trainjob-mpi-num-nodes")]
MPI_CASES: list[tuple[str, str, list[dict[str, Any]], list[Row]]] = [
    ("no action when info does not have MLPolicySource", trainjob("m"), [runtime("m")], []),
    ("info does not have MPIPolicySource", trainjob("m"), [runtime("m", {"numNodes": 1})], []),
    ("numProcPerNode typed is int", trainjob("m", "  trainer:", "    numProcPerNode: 8"),
     [mpi("m", None, [job("launcher"), job("node")])], []),
    ("runtime does not have Launcher but TrainJob has only 1 numNodes", trainjob("m", "  trainer:", "    numNodes: 1"),
     [mpi("m", True, [job("node", ancestor="trainer")])], []),
    ("runtime does not have Launcher even though MPI with runLauncherAsNode has 2 numNodes", NUM_NODES_2,
     [mpi("m", True, [job("node")])], MPI_M1),
    ("runtime does not have Node even though MPI with runLauncherAsNode has 2 numNodes", NUM_NODES_2,
     [mpi("m", True, [job("launcher")])], MPI_M1),
    ("runtime does not have Launcher and Node even though MPI with runLauncherAsNode has 2 numNodes", NUM_NODES_2,
     [mpi("m", True, [job("worker")])], MPI_M1),
    ("trainer has reserved MPI env OMPI_MCA_orte_default_hostfile",
     trainjob("m", "  trainer:", "    env: [{name: OMPI_MCA_orte_default_hostfile, value: /custom/hostfile}]"),
     [mpi("m", None, [job("launcher"), job("node")])], [(9, 5, "spec.trainer.env", "trainjob-mpi-reserved-env")]),
    ("trainer has multiple reserved MPI envs",
     trainjob("m", "  trainer:", "    env:", "    - {name: OMPI_MCA_orte_default_hostfile, value: /custom/hostfile}",
              "    - {name: OMPI_MCA_plm_rsh_args, value: custom-args}"),
     [mpi("m", None, [job("launcher"), job("node")])], [(9, 5, "spec.trainer.env", "trainjob-mpi-reserved-env")]),
    ("trainer has non-reserved env is valid",
     trainjob("m", "  trainer:", "    env: [{name: CUSTOM_ENV, value: custom-value}]"),
     [mpi("m", None, [job("launcher"), job("node")])], []),
]


@pytest.mark.parametrize(("entry", "text", "runtimes", "expected"), MPI_CASES, ids=[c[0] for c in MPI_CASES])
def test_mpi_validate(tmp_path: Path, entry: str, text: str, runtimes: list[dict[str, Any]], expected: list[Row]) -> None:
    assert rows(tmp_path, text, *runtimes) == expected


# --- xgboost_test.go TestXGBoostValidate -----------------------------------------------------------

XGB = runtime("x", {"xgboost": {}})
XGB_CASES: list[tuple[str, str, list[dict[str, Any]], list[Row]]] = [
    ("no error when runtime is not XGBoost (e.g. Torch)",
     trainjob("x", "  trainer:", "    numNodes: 1", "    env: [{name: DMLC_TRACKER_URI, value: custom-tracker}]"),
     [runtime("x", TORCH)], []),
    ("no error when trainer is nil", trainjob("x"), [XGB], []),
    ("no error when env does not contain reserved names", trainjob("x", "  trainer:", "    numNodes: 1"), [XGB], []),
    ("error when using reserved DMLC_TRACKER_URI env",
     trainjob("x", "  trainer:", "    numNodes: 1", "    env:", "    - {name: DMLC_TRACKER_URI, value: custom-tracker}"),
     [XGB], [(11, 7, "spec.trainer.env[0]", "trainjob-xgboost-reserved-env")]),
    ("error when using reserved DMLC_NUM_WORKER env",
     trainjob("x", "  trainer:", "    numNodes: 1", "    env:", "    - {name: DMLC_NUM_WORKER, value: '10'}"),
     [XGB], [(11, 7, "spec.trainer.env[0]", "trainjob-xgboost-reserved-env")]),
    ("multiple errors when using multiple reserved envs",
     trainjob("x", "  trainer:", "    numNodes: 1", "    env:", "    - {name: DMLC_TRACKER_URI, value: custom}",
              "    - {name: DMLC_TASK_ID, value: '0'}"),
     [XGB], [(11, 7, "spec.trainer.env[0]", "trainjob-xgboost-reserved-env"),
             (12, 7, "spec.trainer.env[1]", "trainjob-xgboost-reserved-env")]),
]


@pytest.mark.parametrize(("entry", "text", "runtimes", "expected"), XGB_CASES, ids=[c[0] for c in XGB_CASES])
def test_xgboost_validate(tmp_path: Path, entry: str, text: str, runtimes: list[dict[str, Any]], expected: list[Row]) -> None:
    assert rows(tmp_path, text, *runtimes) == expected


# --- flux_test.go TestValidate ---------------------------------------------------------------------

FLUX_INSTALLER = job("node", pod={"initContainers": [{"name": "flux-installer", "image": "x"}]})
FLUX_CASES: list[tuple[str, str, list[dict[str, Any]], list[Row]]] = [
    ("valid when flux policy is nil", trainjob("f"), [runtime("f", jobs=[FLUX_INSTALLER])], []),
    ("valid when flux policy is present", trainjob("f"), [runtime("f", {"flux": {}})], []),
    # Upstream path spec.trainer.initContainers: the TrainJob has no spec.trainer, so the finding points at
    # spec, the deepest part of the path it has; with a trainer section, at that.
    ("invalid when node podSet includes reserved flux installer init container",
     trainjob("f"), [runtime("f", {"flux": {}}, jobs=[FLUX_INSTALLER])],
     [(5, 1, "spec.trainer.initContainers", "trainjob-flux-reserved-init-container")]),
    ("invalid when node podSet includes reserved flux installer init container (with a trainer section)",
     trainjob("f", "  trainer:", "    numNodes: 1"), [runtime("f", {"flux": {}}, jobs=[FLUX_INSTALLER])],
     [(8, 3, "spec.trainer.initContainers", "trainjob-flux-reserved-init-container")]),
]


@pytest.mark.parametrize(("entry", "text", "runtimes", "expected"), FLUX_CASES, ids=[c[0] for c in FLUX_CASES])
def test_flux_validate(tmp_path: Path, entry: str, text: str, runtimes: list[dict[str, Any]], expected: list[Row]) -> None:
    assert rows(tmp_path, text, *runtimes) == expected


# --- volcano_test.go TestValidate ------------------------------------------------------------------

VOLCANO = {"volcano": {}}
PRIORITY_CLASS = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "value": 100}


def _priority_class(name: str) -> dict[str, Any]:
    return {**PRIORITY_CLASS, "metadata": {"name": name}}


def test_volcano_policy_not_enabled(tmp_path: Path) -> None:
    """"no action when Volcano policy not enabled"."""
    assert rows(tmp_path, trainjob("v"), runtime("v", annotations={"scheduling.volcano.sh/queue-name": ""})) == []


def test_volcano_queue_annotation_is_empty(tmp_path: Path) -> None:
    """"queue annotation is empty": the upstream path names the JobSet's annotations, which the TrainJob
    does not have; the finding points at the runtime reference, inside ``spec``."""
    rt = runtime("v", pod_group_policy=VOLCANO, annotations={"scheduling.volcano.sh/queue-name": ""})
    assert rows(tmp_path, trainjob("v"), rt) == [
        (7, 5, "spec.annotations[scheduling.volcano.sh/queue-name]", "trainjob-volcano-empty-queue")]


@pytest.mark.parametrize(("entry", "classes", "expected"), [
    # Offline, the check runs only when the inputs hold some PriorityClass (the rule's doc): one is given.
    ("priorityClassName does not exist", ["unrelated"],
     [(7, 5, "spec.templateSpec.priorityClassName", "trainjob-volcano-priority-class-missing")]),
    ("priorityClassName exists", ["existing-priority"], []),
])
def test_volcano_priority_class(tmp_path: Path, entry: str, classes: list[str], expected: list[Row]) -> None:
    name = "non-existent" if entry.endswith("does not exist") else "existing-priority"
    rt = runtime("v", pod_group_policy=VOLCANO, jobs=[job("node", pod={"priorityClassName": name})])
    assert rows(tmp_path, trainjob("v"), rt, context=[_priority_class(c) for c in classes]) == expected


# --- jobset_test.go TestValidate (create entries) ----------------------------------------------------

DATASET = ["  initializer:", "    dataset: {}"]
MODEL = ["  initializer:", "    model: {}"]
REF = (6, 3, "spec.runtimeRef")
PATCH_LINES = ["  runtimePatches:", "  - manager: test.io/manager", "    trainingRuntimeSpec:", "      template:",
               "        spec:", "          replicatedJobs:"]


def _patch(*job_lines: str) -> list[str]:
    return [*PATCH_LINES, *job_lines]


def _init_job(name: str, containers: list[dict[str, Any]]) -> dict[str, Any]:
    return job(name, containers=containers)


JOBSET_CASES: list[tuple[str, str, list[dict[str, Any]], list[Row]]] = [
    ("no initializer job", trainjob("j"), [runtime("j")], []),
    ("must have dataset initializer job when trainJob is configured with input datasetConfig",
     trainjob("j", *DATASET), [runtime("j", jobs=[job("random", containers=[{"name": "random", "image": "x"}])])],
     [(*REF, "trainjob-initializer-job-missing")]),
    ("must have container with name - dataset initializer in the dataset initializer job",
     trainjob("j", *DATASET), [runtime("j", jobs=[_init_job("dataset-initializer", [{"name": "other", "image": "x"}])])],
     [(*REF, "trainjob-initializer-container-missing")]),
    ("no model initializer job", trainjob("j"), [runtime("j", jobs=[_init_job("dataset-initializer", [
        {"name": "dataset-initializer", "image": "x"}])])], []),
    ("must have model initializer job when trainJob is configured with input modelConfig",
     trainjob("j", *MODEL), [runtime("j", jobs=[job("random", containers=[{"name": "random", "image": "x"}])])],
     [(*REF, "trainjob-initializer-job-missing")]),
    ("must have container with name - model initializer in the model initializer job",
     trainjob("j", *MODEL), [runtime("j", jobs=[_init_job("model-initializer", [{"name": "other", "image": "x"}])])],
     [(*REF, "trainjob-initializer-container-missing")]),
    ("must have volumeMount with name - initializer in the dataset initializer container",
     trainjob("j", *DATASET), [runtime("j", jobs=[_init_job("dataset-initializer", [
         {"name": "dataset-initializer", "image": "x"}])])],
     [(*REF, "trainjob-initializer-volume-mount-missing")]),
    ("must have volumeMount with name - initializer in the model initializer container",
     trainjob("j", *MODEL), [runtime("j", jobs=[_init_job("model-initializer", [
         {"name": "model-initializer", "image": "x"}])])],
     [(*REF, "trainjob-initializer-volume-mount-missing")]),
    # J8–J11: the upstream path is spec.runtimePatches; the finding points at the item inside it.
    ("runtimePatches contain invalid replicated job",
     trainjob("j", *_patch("          - name: invalid")), [runtime("j")],
     [(14, 13, "spec.runtimePatches", "trainjob-patch-unknown-job")]),
    ("runtimePatches contain invalid initContainer",
     trainjob("j", *_patch("          - name: node",
                           "            template: {spec: {template: {spec: {initContainers: [{name: invalid}]}}}}")),
     [runtime("j", jobs=[job("node", pod={"initContainers": [{"name": "custom-init", "image": "x"}]})])],
     [(15, 67, "spec.runtimePatches", "trainjob-patch-unknown-init-container")]),
    ("runtimePatches contain invalid container",
     trainjob("j", *_patch("          - name: node",
                           "            template: {spec: {template: {spec: {containers: [{name: invalid}]}}}}")),
     [runtime("j")], [(15, 63, "spec.runtimePatches", "trainjob-patch-unknown-container")]),
    ("runtimePatches contain envs for reserved container",
     trainjob("j", *_patch("          - name: node",
                           "            template: {spec: {template: {spec: {containers: [{name: node, env: "
                           "[{name: ENV_NAME, value: OVERRIDE}]}]}}}}")),
     [runtime("j")], [(15, 75, "spec.runtimePatches", "trainjob-patch-env-forbidden")]),
]


@pytest.mark.parametrize(("entry", "text", "runtimes", "expected"), JOBSET_CASES, ids=[c[0] for c in JOBSET_CASES])
def test_jobset_validate(tmp_path: Path, entry: str, text: str, runtimes: list[dict[str, Any]], expected: list[Row]) -> None:
    assert rows(tmp_path, text, *runtimes) == expected
