"""Lints on Kubeflow Trainer runtimes and TrainJobs (trainer.md §1.5, §3.6–§3.10, §3.16).

Rows are (file, line, column, rule): findings land on the runtime or on the TrainJob. TrainJobs that
the Trainer webhook rejects get no lint (nothing of them runs).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import validate_files, validate_text
from tests.lint.support import lints, lints_in_files

Rows = list[tuple[str, int, int, str]]


def runtime(policy: str, jobs: str, *, name: str = "rt", template_spec: str = "") -> str:
    return (
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainingRuntime\n"
        f"metadata: {{name: {name}}}\nspec:\n{policy}  template:\n    spec:\n{template_spec}"
        f"      replicatedJobs:\n{jobs}"
    )


def job(name: str, *, ancestor: str | None = "trainer", containers: str = "[{name: node, image: x}]",
        extra: str = "") -> str:
    labels = f"      metadata: {{labels: {{trainer.kubeflow.org/trainjob-ancestor-step: {ancestor}}}}}\n" if ancestor else ""
    return (f"      - name: {name}\n{extra}        template:\n{labels.replace('      metadata', '          metadata')}"
            f"          spec: {{template: {{spec: {{containers: {containers}}}}}}}\n")


def trainjob(trainer: str = "", *, ref: str = "{kind: TrainingRuntime, name: rt}", extra: str = "") -> str:
    body = f"  trainer:\n{trainer}" if trainer else ""
    return ("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: tj}\nspec:\n"
            f"  runtimeRef: {ref}\n{extra}{body}")


TORCH = "  mlPolicy: {numNodes: 1, torch: {}}\n"


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        # trainer.md §3.16 #10: no mlPolicy, no merge.
        ("", [("tj.yaml", 8, 5, "trainjob-resources-ignored")]),
        ("  mlPolicy: {numNodes: 1}\n", []),
        (TORCH, []),
    ],
)
def test_resources_per_node_without_ml_policy(tmp_path: Path, policy: str, expected: Rows) -> None:
    files = {"rt.yaml": runtime(policy, job("node")),
             "tj.yaml": trainjob("    numNodes: 2\n    resourcesPerNode: {limits: {memory: 64Gi}}\n")}
    assert lints_in_files(tmp_path, files) == expected


@pytest.mark.parametrize(
    ("trainer", "expected"),
    [
        # trainer.md §3.16 #5: numNodes 0 is accepted and runs nothing.
        ("    numNodes: 0\n", [(7, 5, "trainjob-num-nodes-zero")]),
        ("    numNodes: 1\n", []),
    ],
)
def test_num_nodes_zero(tmp_path: Path, trainer: str, expected: list[tuple[int, int, str]]) -> None:
    assert lints(tmp_path, trainjob(trainer, ref="{name: torch-distributed}")) == expected


def test_num_nodes_zero_with_mpi_launcher_as_node_is_clamped(tmp_path: Path) -> None:
    # trainer.md §3.16 #6: runLauncherAsNode keeps max(numNodes-1, 1) node pods: something runs.
    assert lints(tmp_path, trainjob("    numNodes: 0\n", ref="{name: deepspeed-distributed}")) == []


GPU_NODE = "[{name: node, image: x, resources: {limits: {nvidia.com/gpu: 4}}}]"


@pytest.mark.parametrize(
    ("trainer", "containers", "expected"),
    [
        # trainer.md §3.6/§3.16 #4: PET_NPROC_PER_NODE from resourcesPerNode alone, which has no GPU.
        ("    resourcesPerNode: {limits: {memory: 64Gi}}\n", GPU_NODE, [("tj.yaml", 7, 5, "trainjob-nproc-from-cpu")]),
        # Passing: explicit numProcPerNode; the GPU repeated; a CPU-only runtime; no resourcesPerNode.
        ("    numProcPerNode: 4\n    resourcesPerNode: {limits: {memory: 64Gi}}\n", GPU_NODE, []),
        ("    resourcesPerNode: {limits: {memory: 64Gi, nvidia.com/gpu: 4}}\n", GPU_NODE, []),
        ("    resourcesPerNode: {limits: {memory: 64Gi}}\n", "[{name: node, image: x}]", []),
        ("    numNodes: 2\n", GPU_NODE, []),
    ],
)
def test_processes_counted_from_cpus(tmp_path: Path, trainer: str, containers: str, expected: Rows) -> None:
    files = {"rt.yaml": runtime(TORCH, job("node", containers=containers)), "tj.yaml": trainjob(trainer)}
    assert lints_in_files(tmp_path, files) == expected


def test_processes_message_gives_both_counts(tmp_path: Path) -> None:
    files = {"rt.yaml": runtime(TORCH, job("node", containers=GPU_NODE)),
             "tj.yaml": trainjob("    resourcesPerNode: {requests: {cpu: '6'}, limits: {memory: 64Gi}}\n")}
    [finding] = [d for d in validate_files(tmp_path, files) if d.rule == "trainjob-nproc-from-cpu"]
    assert 'keep the 4 GPU(s) of TrainingRuntime "rt"' in finding.message
    assert 'it becomes "6" (from CPUs)' in finding.message


@pytest.mark.parametrize(
    ("trainer", "expected"),
    [
        # trainer.md §3.8.3/§3.16 #9: [tune, run] keeps only the immutable overrides of the runtime.
        ("    command: [tune, run]\n", [(7, 5, "trainjob-torchtune-dropped-override")]),
        ("    command: [tune, run]\n    args: [dataset=torchtune.datasets.instruct_dataset, dataset.source=parquet,"
         " dataset.data_dir=/workspace/dataset/data]\n", []),
        # Without [tune, run] the runtime command is used verbatim (trainer.md §3.8.3, last point).
        ("    numNodes: 1\n", []),
    ],
)
def test_torchtune_dropped_overrides(tmp_path: Path, trainer: str, expected: list[tuple[int, int, str]]) -> None:
    assert lints(tmp_path, trainjob(trainer, ref="{name: torchtune-llama3.2-1b}")) == expected


def test_torchtune_message_lists_what_is_dropped(tmp_path: Path) -> None:
    text = trainjob("    command: [tune, run]\n    args: [dataset.source=parquet]\n", ref="{name: torchtune-llama3.2-1b}")
    [finding] = [d for d in validate_text(tmp_path, text) if d.rule == "trainjob-torchtune-dropped-override"]
    assert "dataset=torchtune.datasets.instruct_dataset, dataset.data_dir=/workspace/dataset/data from " in finding.message
    assert "dataset.source=parquet," not in finding.message


@pytest.mark.parametrize(
    ("template_spec", "jobs", "expected"),
    [
        # trainer.md §3.16 #2: PET_MASTER_ADDR is always <tj>-node-0-0.<tj>.
        ("      network: {subdomain: training}\n", job("node"), [("tj.yaml", 5, 39, "trainjob-master-address-unresolvable")]),
        ("      network: {enableDNSHostnames: false}\n", job("node"),
         [("tj.yaml", 5, 39, "trainjob-master-address-unresolvable")]),
        ("", job("trainer"), [("tj.yaml", 5, 39, "trainjob-master-address-unresolvable")]),
        # Passing: the defaults; a subdomain equal to the TrainJob name.
        ("", job("node"), []),
        ("      network: {subdomain: tj}\n", job("node"), []),
    ],
)
def test_rendezvous_address(tmp_path: Path, template_spec: str, jobs: str, expected: Rows) -> None:
    files = {"rt.yaml": runtime(TORCH, jobs, template_spec=template_spec),
             "tj.yaml": trainjob("    numNodes: 2\n    command: [torchrun, train.py]\n")}
    assert lints_in_files(tmp_path, files) == expected


def test_rendezvous_address_single_node_is_not_reported(tmp_path: Path) -> None:
    files = {"rt.yaml": runtime(TORCH, job("node"), template_spec="      network: {subdomain: training}\n"),
             "tj.yaml": trainjob("    numNodes: 1\n")}
    assert lints_in_files(tmp_path, files) == []


def test_rendezvous_address_for_jax(tmp_path: Path) -> None:
    files = {"rt.yaml": runtime("  mlPolicy: {numNodes: 1, jax: {}}\n", job("worker")),
             "tj.yaml": trainjob("    numNodes: 4\n")}
    [finding] = [d for d in validate_files(tmp_path, files) if d.rule == "trainjob-master-address-unresolvable"]
    assert finding.message.startswith('JAX_COORDINATOR_ADDRESS is "tj-node-0-0.tj", which no pod of this TrainJob')
    assert 'the trainer replicated job is named "worker", so its first pod is "tj-worker-0-0.tj"' in finding.message


INIT = ("[{name: dataset-initializer, image: x, volumeMounts: [{name: initializer, mountPath: /workspace}]}],"
        " volumes: [{name: initializer, emptyDir: {}}]")


@pytest.mark.parametrize(
    ("ancestor", "expected"),
    [
        # trainer.md §3.16 #1: found by name at admission, by label at build.
        (None, [("tj.yaml", 7, 5, "trainjob-initializer-not-applied")]),
        ("dataset-initializer", []),
    ],
)
def test_initializer_found_by_name_but_not_by_label(tmp_path: Path, ancestor: str | None, expected: Rows) -> None:
    jobs = job("dataset-initializer", ancestor=ancestor, containers=INIT) + job("node")
    files = {"rt.yaml": runtime(TORCH, jobs),
             "tj.yaml": trainjob(extra="  initializer:\n    dataset: {storageUri: 'hf://org/data'}\n")}
    assert lints_in_files(tmp_path, files) == expected


@pytest.mark.parametrize(
    ("jobs", "expected"),
    [
        # trainer.md §3.16 #12 and §3.13: no trainer-labelled job, or no node container in it.
        (job("node", ancestor=None), [("tj.yaml", 7, 5, "trainjob-trainer-not-applied")]),
        (job("node", containers="[{name: main, image: x}]"), [("tj.yaml", 7, 5, "trainjob-trainer-not-applied")]),
        (job("node"), []),
    ],
)
def test_trainer_section_with_nowhere_to_go(tmp_path: Path, jobs: str, expected: Rows) -> None:
    # The second runtime shape is rejected by the runtime webhook unless validation is disabled for it.
    labelled = runtime(TORCH, jobs).replace("metadata: {name: rt}", "metadata: {name: rt, labels: "
                                            "{trainer.kubeflow.org/webhook-validation: disabled}}")
    files = {"rt.yaml": labelled, "tj.yaml": trainjob("    image: registry.example.com/train:2\n")}
    assert lints_in_files(tmp_path, files) == expected


def test_lints_skip_trainjobs_the_webhook_rejects(tmp_path: Path) -> None:
    # numNodes 2 against torchtune-llama3.2-1b is rejected (T4): no dropped-override lint beside it.
    text = trainjob("    command: [tune, run]\n    numNodes: 2\n", ref="{name: torchtune-llama3.2-1b}")
    rules = [d.rule for d in validate_text(tmp_path, text) if str(d.severity) != "info"]
    assert rules == ["trainjob-torchtune-num-nodes"]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        # trainer.md §1.5 note, §3.16 #7: both gang schedulers at once.
        ("  podGroupPolicy: {coscheduling: {}, volcano: {}}\n", [(6, 3, "runtime-gang-both-schedulers")]),
        ("  podGroupPolicy: {volcano: {}}\n", []),
    ],
)
def test_two_gang_schedulers(tmp_path: Path, policy: str, expected: list[tuple[int, int, str]]) -> None:
    assert lints(tmp_path, runtime(TORCH + policy, job("node"))) == expected


MPI_JOBS = job("launcher") + job("node", ancestor=None)


@pytest.mark.parametrize(
    ("mpi", "jobs", "expected"),
    [
        # trainer.md §3.16 #11: "" passes the enum and fails every reconcile of a launcher runtime.
        ('{mpiImplementation: ""}', MPI_JOBS, [(5, 33, "runtime-mpi-implementation-empty")]),
        ("{mpiImplementation: OpenMPI}", MPI_JOBS, []),
        ("{}", MPI_JOBS, []),
        # Without a launcher the plugin never looks at the implementation.
        ('{mpiImplementation: ""}', job("node"), []),
    ],
)
def test_empty_mpi_implementation(tmp_path: Path, mpi: str, jobs: str, expected: list[tuple[int, int, str]]) -> None:
    assert lints(tmp_path, runtime(f"  mlPolicy: {{numNodes: 1, mpi: {mpi}}}\n", jobs)) == expected


def test_empty_mpi_implementation_fails_the_trainjob_reconcile(tmp_path: Path) -> None:
    # The runtime lint and the TrainJob's reconcile-failure warning describe the same upstream failure.
    files = {"rt.yaml": runtime('  mlPolicy: {numNodes: 1, mpi: {mpiImplementation: ""}}\n', MPI_JOBS),
             "tj.yaml": trainjob("    numNodes: 2\n")}
    rules = sorted(d.rule for d in validate_files(tmp_path, files) if str(d.severity) != "info")
    assert rules == ["runtime-mpi-implementation-empty", "trainjob-reconcile-failure"]
