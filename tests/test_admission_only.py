"""``validate --admission-only``: exactly what ``kubectl apply --dry-run=server`` answers (issue #13).

What the API server answers is its own validation (schema, ObjectMeta, CEL), the webhooks and the
references they look up; what happens once an object is stored (the ``consequence`` layer) and the lints
are not part of it. Proof, as issue #13 asks:

* kubeflow/trainer ``test/integration/webhooks/trainjob_test.go``: the tables "Validate TrainJob on
  creation" and "RFC1035-compliant TrainJob name validation", entry by entry, with the answer's status
  class (``BeInvalidError``: 422 from the schema or CEL; ``BeForbiddenError``: 403 from the Trainer
  webhook; ``Succeed``). The 63-character name is accepted although its JobSet is refused later: the
  default ``validate`` reports that consequence as an error, ``--admission-only`` does not.
* kubeflow/trainer ``test/integration/controller/trainjob_controller_test.go``, "Integration Tests for the
  OpenMPI Runtime" / "Should succeed to create TrainJob with OpenMPI TrainingRuntime": the runtime and the
  TrainJob are created (envtest runs no JobSet webhook), but the runtime's ``launcher`` depends on the
  later ``node``, which the JobSet webhook refuses (jobset.md §2.2 #9).
* Every upstream example (``../shared/upstream/{jobset,trainer}``) and every ``samples/valid`` file: the
  accept/reject of ``tests/test_conformance.py``'s expectations, which cite the spec.
* Every invalid sample: ``--admission-only`` gives exactly the admission-layer part of the full report.

Kueue examples are left out until Kueue kinds exist (issue #14).
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from jobsetctl.cli.app import run
from jobsetctl.diagnostics import Diagnostic, Layer
from jobsetctl.kinds.registry import clear_extra
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import KubeVersion
from jobsetctl.validate import ValidateOptions, check
from tests.helpers import SAMPLES, UPSTREAM, requires_upstream

NAMESPACE = "trainjob-webhook"
RUNTIME = "training-runtime"
ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
OK, INVALID, FORBIDDEN = "Succeed", "BeInvalidError", "BeForbiddenError"


def answer(diagnostics: list[Diagnostic]) -> str:
    """The status class of the API server's answer: the schema and CEL answer 422 Invalid before any
    webhook runs; the Trainer webhook answers 403 Forbidden (trainer.md §2.1)."""
    errors = {d.layer for d in diagnostics if d.severity == "error"}
    if errors & {Layer.INPUT, Layer.SCHEMA, Layer.CEL}:
        return INVALID
    return FORBIDDEN if errors else OK


def write(path: Path, *objects: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False), encoding="utf-8")
    return path


def validate(paths: list[Path], *, admission_only: bool, runtimes: list[Path] | None = None,
             version: str = "1.37", gates: str = "") -> list[Diagnostic]:
    kube = KubeVersion.parse(version)
    options = ValidateOptions(paths=[str(p) for p in paths], version=kube, gates=parse_feature_gates(gates, kube),
                              runtimes=[str(p) for p in runtimes or []], jobs=1, admission_only=admission_only)
    return check(options).report.diagnostics


# --- trainjob_test.go: the runtimes of its BeforeEach (utiltesting wrappers, re-expressed) ---------


def _initializer_job(name: str, mount: str, *, labelled: bool) -> dict[str, Any]:
    template: dict[str, Any] = {"spec": {"template": {"spec": {
        "containers": [{"name": name, "volumeMounts": [{"name": "initializer", "mountPath": mount}]}],
        "volumes": [{"name": "initializer", "persistentVolumeClaim": {"claimName": "initializer"}}],
    }}}}
    if labelled:
        template = {"metadata": {"labels": {ANCESTOR: name}}, **template}
    return {"name": name, "groupName": "default", "template": template}


def _node_job(*, labelled: bool) -> dict[str, Any]:
    template: dict[str, Any] = {"spec": {"template": {"spec": {
        "containers": [{"name": "node", "volumeMounts": [
            {"name": "initializer", "mountPath": "/workspace/dataset"},
            {"name": "initializer", "mountPath": "/workspace/model"},
        ]}],
        "volumes": [{"name": "initializer", "persistentVolumeClaim": {"claimName": "initializer"}}],
    }}}}
    if labelled:
        template = {"metadata": {"labels": {ANCESTOR: "trainer"}}, **template}
    return {"name": "node", "groupName": "default", "template": template}


def training_runtime() -> dict[str, Any]:
    """``MakeTrainingRuntimeWrapper(ns, "training-runtime")``: dataset-initializer, model-initializer and
    node jobs, with ancestor labels, containers without images, no mlPolicy."""
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime",
        "metadata": {"name": RUNTIME, "namespace": NAMESPACE},
        "spec": {"template": {"spec": {"replicatedJobs": [
            _initializer_job("dataset-initializer", "/workspace/dataset", labelled=True),
            _initializer_job("model-initializer", "/workspace/model", labelled=True),
            _node_job(labelled=True),
        ]}}},
    }


def cluster_training_runtime() -> dict[str, Any]:
    """``MakeClusterTrainingRuntimeWrapper("training-runtime")``: the same jobs without ancestor labels."""
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
        "metadata": {"name": RUNTIME},
        "spec": {"template": {"spec": {"replicatedJobs": [
            _initializer_job("dataset-initializer", "/workspace/dataset", labelled=False),
            _initializer_job("model-initializer", "/workspace/model", labelled=False),
            _node_job(labelled=False),
        ]}}},
    }


def trainjob(name: str = "train-job", *, kind: str = "TrainingRuntime", runtime: str = RUNTIME,
             **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": kind, "name": runtime}, **spec},
    }


def _without_container(job_index: int, container: str) -> Any:
    def mutate(runtime: dict[str, Any]) -> None:
        pod = runtime["spec"]["template"]["spec"]["replicatedJobs"][job_index]["template"]["spec"]["template"]["spec"]
        pod["containers"] = [c for c in pod["containers"] if c["name"] != container]
    return mutate


def _ml_policy(policy: dict[str, Any]) -> Any:
    def mutate(runtime: dict[str, Any]) -> None:
        runtime["spec"]["mlPolicy"] = policy
    return mutate


def _flux_installer(runtime: dict[str, Any]) -> None:
    runtime["spec"]["mlPolicy"] = {"flux": {}}
    node = runtime["spec"]["template"]["spec"]["replicatedJobs"][2]
    node["template"]["spec"]["template"]["spec"]["initContainers"] = [{"name": "flux-installer", "image": "ubuntu:22.04"}]


CTR = "ClusterTrainingRuntime"
MAX_ITEM = 1048576  # the CRD's maxLength of a trainer command/args item
#: (entry, TrainJob, how the entry updates the TrainingRuntime first (upstream updates it, which the
#: TrainingRuntime webhook does not validate: here it is a --runtimes file), expected answer).
CREATION: list[tuple[str, dict[str, Any], Any, str]] = [
    ("Should succeed in creating trainJob with namespace scoped trainingRuntime", trainjob(), None, OK),
    ("Should fail in creating trainJob referencing trainingRuntime not present in the namespace",
     trainjob(runtime="invalid"), None, FORBIDDEN),
    ("Should fail in creating trainJob with negative numNodes", trainjob(trainer={"numNodes": -1}), None, INVALID),
    ("Should succeed in creating trainJob with zero numNodes", trainjob(trainer={"numNodes": 0}), None, OK),
    ("Should fail in creating trainJob with negative numProcPerNode",
     trainjob(trainer={"numProcPerNode": -5}), None, INVALID),
    ("Should fail in creating trainJob with zero numProcPerNode", trainjob(trainer={"numProcPerNode": 0}), None, INVALID),
    ("Should succeed in creating trainJob with positive numNodes and numProcPerNode",
     trainjob(trainer={"numNodes": 1, "numProcPerNode": 1}), None, OK),
    ("Should succeed in creating trainJob with namespace scoped trainingRuntime (ClusterTrainingRuntime)",
     trainjob(kind=CTR), None, OK),
    ("Should fail in creating trainJob with pre-trained model config when referencing a trainingRuntime without an "
     "initializer", trainjob(initializer={"model": {"storageUri": "hf://trainjob-model"}}),
     _without_container(1, "model-initializer"), FORBIDDEN),
    ("Should fail in creating trainJob with dataset initializer when referencing a trainingRuntime without an "
     "initializer", trainjob(initializer={"dataset": {"storageUri": "hf://trainjob-model"}}),
     _without_container(0, "dataset-initializer"), FORBIDDEN),
    ("Should succeed in creating trainJob with dataset initializer when referencing a ClusterTrainingRuntime with an "
     "initializer", trainjob(kind=CTR, initializer={"dataset": {"storageUri": "hf://trainjob-model"}}), None, OK),
    ("Should succeed in creating trainJob with valid trainer config for torch runtime",
     trainjob(trainer={"numProcPerNode": 4}), _ml_policy({"torch": {}}), OK),
    ("Should fail in creating trainJob with trainer config having envs with reserved env names",
     trainjob(trainer={"env": [{"name": "PET_NODE_RANK", "value": "1"}]}), _ml_policy({"torch": {}}), FORBIDDEN),
    # "numProcPerNode: 0 is rejected by the CRD schema before the Flux plugin webhook runs".
    ("Should fail in creating TrainJob with Flux numProcPerNode < 1", trainjob(trainer={"numProcPerNode": 0}),
     _ml_policy({"flux": {}}), INVALID),
    ("Should fail in creating TrainJob with reserved flux-installer init container", trainjob(), _flux_installer,
     FORBIDDEN),
    ("Should fail with invalid dataset storageUri",
     trainjob(kind=CTR, initializer={"dataset": {"storageUri": "invalid-uri"}}), None, INVALID),
    ("Should succeed with empty dataset storageUri", trainjob(kind=CTR, initializer={"dataset": {"storageUri": ""}}),
     None, OK),
    ("Should fail with dataset storageUri missing path",
     trainjob(kind=CTR, initializer={"dataset": {"storageUri": "s3://"}}), None, INVALID),
    ("Should succeed with valid dataset storageUri",
     trainjob(kind=CTR, initializer={"dataset": {"storageUri": "s3://bucket/path"}}), None, OK),
    ("Should fail with invalid model storageUri",
     trainjob(kind=CTR, initializer={"model": {"storageUri": "invalid-uri"}}), None, INVALID),
    ("Should succeed with valid model storageUri",
     trainjob(kind=CTR, initializer={"model": {"storageUri": "gs://bucket/model"}}), None, OK),
    ("Should succeed to create TrainJob with trainer command item at the max length",
     trainjob(kind=CTR, trainer={"command": ["a" * MAX_ITEM]}), None, OK),
    ("Should fail to create TrainJob with trainer command item exceeding the max length",
     trainjob(kind=CTR, trainer={"command": ["a" * (MAX_ITEM + 1)]}), None, INVALID),
    ("Should succeed to create TrainJob with trainer args item at the max length",
     trainjob(kind=CTR, trainer={"args": ["a" * MAX_ITEM]}), None, OK),
    ("Should fail to create TrainJob with trainer args item exceeding the max length",
     trainjob(kind=CTR, trainer={"args": ["a" * (MAX_ITEM + 1)]}), None, INVALID),
]

NAME_63 = "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk"
#: "RFC1035-compliant TrainJob name validation" (all against the ClusterTrainingRuntime).
NAMES: list[tuple[str, str, str]] = [
    ("Should succeed to create TrainJob with valid RFC1035-compliant name", "valid-job-name", OK),
    ("Should succeed to create TrainJob with name exactly 63 characters", NAME_63, OK),
    ("Should fail to create TrainJob with uppercase letters in name", "Invalid-job-name", INVALID),
    ("Should fail to create TrainJob starting with a digit", "1jobname", INVALID),
    ("Should fail to create TrainJob ending with a hyphen", "jobname-", INVALID),
    ("Should fail to create TrainJob with name exceeding 63 characters",
     "this-name-is-way-too-long-for-a-rfc1035-label-and-should-fail-validation", INVALID),
]


def _webhook_case(tmp_path: Path, tj: dict[str, Any], mutate: Any, *, admission_only: bool) -> list[Diagnostic]:
    runtime = training_runtime()
    if mutate is not None:
        mutate(runtime)
    runtimes = write(tmp_path / "runtimes.yaml", runtime, cluster_training_runtime())
    return validate([write(tmp_path / "trainjob.yaml", tj)], admission_only=admission_only, runtimes=[runtimes])


@pytest.mark.parametrize(("entry", "tj", "mutate", "expected"), CREATION, ids=[c[0] for c in CREATION])
def test_trainjob_webhook_integration_creation_table(
    tmp_path: Path, entry: str, tj: dict[str, Any], mutate: Any, expected: str
) -> None:
    """kubeflow/trainer test/integration/webhooks/trainjob_test.go, "Validate TrainJob on creation"."""
    assert answer(_webhook_case(tmp_path, tj, mutate, admission_only=True)) == expected


@pytest.mark.parametrize(("entry", "name", "expected"), NAMES, ids=[n[0] for n in NAMES])
def test_trainjob_webhook_integration_name_table(tmp_path: Path, entry: str, name: str, expected: str) -> None:
    """kubeflow/trainer test/integration/webhooks/trainjob_test.go, "RFC1035-compliant TrainJob name validation"."""
    assert answer(_webhook_case(tmp_path, trainjob(name, kind=CTR), None, admission_only=True)) == expected


def test_63_character_name_is_accepted_and_its_jobset_refused_later(tmp_path: Path) -> None:
    """The entry "name exactly 63 characters": Trainer accepts it, and the JobSet its controller builds has
    Job names ``<63 characters>-node-0``, which the JobSet webhook refuses (trainer.md §2.7). The full
    report says both halves, as an error of the consequence layer, at the TrainJob's name."""
    diagnostics = _webhook_case(tmp_path, trainjob(NAME_63, kind=CTR), None, admission_only=False)
    errors = [d for d in diagnostics if d.severity == "error"]
    assert {(d.layer, d.rule, d.path, d.line, d.column) for d in errors} == {
        (Layer.CONSEQUENCE, "trainjob-jobset-rejected", "metadata.name", 4, 3)}
    assert errors[0].message.startswith(
        f'TrainJob "{NAME_63}" is accepted, but JobSet admission refuses its JobSet "{NAME_63}", event '
        "TrainJobResourcesCreationFailed: TrainJob resources reconciliation failed: spec.replicatedJobs[0].name: "
        f'Invalid value: "{NAME_63}-dataset-initializer-0": JobSet name is too long, job names generated for this '
        "JobSet will exceed 63 characters")
    assert answer(_webhook_case(tmp_path, trainjob(NAME_63, kind=CTR), None, admission_only=True)) == OK


def test_accepted_entries_whose_jobs_are_refused_later(tmp_path: Path) -> None:
    """The runtimes of trainjob_test.go have containers without an image: Trainer accepts the TrainJob
    (``Succeed``), and the Job API refuses every Job of its JobSet. Only the full report says so."""
    full = _webhook_case(tmp_path, trainjob(), None, admission_only=False)
    refused = sorted({d.rule for d in full if d.severity == "error"})
    assert refused == ["jobset-child-job-invalid"]
    assert all(d.layer is Layer.CONSEQUENCE for d in full if d.severity == "error")
    assert answer(_webhook_case(tmp_path, trainjob(), None, admission_only=True)) == OK


# --- trainjob_controller_test.go: the OpenMPI runtime ----------------------------------------------


def openmpi_runtime() -> dict[str, Any]:
    """``MakeTrainingRuntimeWrapper(ns, "alpha")`` with ``LauncherReplica()`` (a ``launcher`` job before
    ``node``), ``DependsOn(launcher, {node, Ready})``, ``Replicas(1, launcher)``, an OpenMPI mlPolicy
    (numNodes 1, 8 slots, /root/.ssh, runLauncherAsNode false) and the node container's image."""
    runtime = training_runtime()
    runtime["metadata"]["name"] = "alpha"
    jobs = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    node = jobs[2]
    node_container = node["template"]["spec"]["template"]["spec"]["containers"][0]
    node_container.update({"image": "test:trainjob", "command": ["trainjob"], "args": ["trainjob"],
                           "resources": {"requests": {"cpu": "1"}}})
    launcher = {"name": "launcher", "groupName": "default", "replicas": 1,
                "dependsOn": [{"name": "node", "status": "Ready"}],
                "template": {"spec": {"template": {"spec": {
                    "containers": [{"name": "node", "command": ["mpirun"], "args": ["echo.sh"]}]}}}}}
    jobs.insert(2, launcher)
    runtime["spec"]["mlPolicy"] = {"numNodes": 1, "mpi": {
        "numProcPerNode": 8, "mpiImplementation": "OpenMPI", "sshAuthMountPath": "/root/.ssh",
        "runLauncherAsNode": False}}
    return runtime


def openmpi_trainjob() -> dict[str, Any]:
    return trainjob("alpha", runtime="alpha", trainer={
        "numNodes": 2, "image": "test:trainjob", "command": ["trainjob"], "args": ["trainjob"],
        "resourcesPerNode": {"requests": {"cpu": "1"}}, "env": [{"name": "TRAIN_JOB", "value": "value"}]})


def test_openmpi_controller_integration_objects_are_accepted(tmp_path: Path) -> None:
    """trainjob_controller_test.go "Should succeed to create TrainJob with OpenMPI TrainingRuntime": both
    creates succeed; that envtest has no JobSet webhook, which would refuse the JobSet (``launcher``
    depends on ``node``, listed after it: jobset.md §2.2 #9)."""
    paths = [write(tmp_path / "runtime.yaml", openmpi_runtime()), write(tmp_path / "trainjob.yaml", openmpi_trainjob())]
    assert validate(paths, admission_only=True) == []
    full = validate(paths, admission_only=False)
    assert [(d.layer, d.rule, Path(d.file).name) for d in full] == [
        (Layer.CONSEQUENCE, "trainjob-jobset-rejected", "trainjob.yaml")]
    assert full[0].message == (
        'TrainJob "alpha" is accepted, but JobSet admission refuses its JobSet "alpha", event '
        "TrainJobResourcesCreationFailed: TrainJob resources reconciliation failed: <nil>: Internal error: "
        "replicatedJob: launcher cannot depend on replicatedJob: node")


# --- upstream examples and samples/valid -------------------------------------------------------------


@requires_upstream
def test_upstream_examples_answer_as_upstream() -> None:
    """Every JobSet and Trainer example, validated per directory (``kubectl apply -f <dir>/``): refused
    exactly where tests/test_conformance.py expects an error (a gate off, 05-multi-step's missing
    mount), and nothing but the admission layers in the report."""
    from tests.test_conformance import DEFAULT, ERROR, JOBSET_FILES, TRAINER_FILES, manifests

    directories = sorted({p.parent for p in JOBSET_FILES + TRAINER_FILES})
    refused: set[str] = set()
    for directory in directories:
        for d in validate(manifests(directory), admission_only=True):
            assert d.layer.admission, d
            if d.severity == "error":
                refused.add(str(Path(d.file).relative_to(UPSTREAM)))
    # Errors of the admission layers only: a consequence error (the Trainer's Kueue example's missing LocalQueue,
    # issue #14) is no refusal.
    expected = {path for path, e in DEFAULT.items()
                if any(severity == ERROR and _rule_layer(rule).admission for severity, rule in e.found)}
    assert refused == expected


@requires_upstream
def test_upstream_workload_aware_scheduling_examples_are_accepted_on_136() -> None:
    from tests.test_conformance import WAS_FILES, kind_gates, manifests, was_setup

    for directory in sorted({p.parent for p in WAS_FILES}):
        gates = kind_gates(was_setup(next(p for p in WAS_FILES if p.parent == directory)))
        errors = [d for d in validate(manifests(directory), admission_only=True, version="1.36", gates=gates)
                  if d.severity == "error"]
        assert errors == [], directory


@requires_upstream
@pytest.mark.parametrize(("directory", "gates"), [("failure-policy", "RestartJob=true"),
                                                  ("in-place-restart", "InPlaceRestart=true")])
def test_upstream_gated_examples_are_accepted_with_their_gate(directory: str, gates: str) -> None:
    from tests.test_conformance import JOBSET_EXAMPLES, manifests

    found = validate(manifests(JOBSET_EXAMPLES / directory), admission_only=True, gates=gates)
    assert [d for d in found if d.severity == "error"] == []


def test_valid_samples_are_accepted() -> None:
    valid = sorted((SAMPLES / "valid").glob("*.yaml"))
    assert validate([SAMPLES / "valid"], admission_only=True) == []
    for path in valid:
        # One by one too, with the directory as context (a TrainJob's runtime lives next to it).
        context = [p for p in valid if p != path]
        found = validate([path], admission_only=True, runtimes=context)
        assert [d for d in found if d.severity == "error"] == [], path


# --- every invalid sample: the admission part of the full report, nothing else -------------------------


def _json(args: list[str]) -> tuple[int, list[dict[str, Any]]]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = run(["validate", "-o", "json", *args])
    return status, json.loads(out.getvalue())["diagnostics"]


def _sample_ids() -> list[str]:
    from tests.test_samples import invalid_samples

    return sorted(rule for rule, sample in invalid_samples().items() if sample.command == "validate")


@pytest.mark.parametrize("rule", _sample_ids())
def test_admission_only_is_the_admission_part_of_the_report(rule: str) -> None:
    from tests.test_samples import invalid_samples

    sample = invalid_samples()[rule]
    args = [*sample.options, *(str(p) for p in sample.inputs)]
    try:
        full_status, full = _json(args)
        clear_extra()
        only_status, only = _json(["--admission-only", *args])
    finally:
        clear_extra()
    admission = [d for d in full if Layer(d["layer"]).admission]
    assert only == admission
    failed = any(d["severity"] == "error" for d in admission)
    assert only_status == (1 if failed else 0)
    assert full_status == (1 if any(d["severity"] == "error" for d in full) else 0)


def test_config_key_and_flag(tmp_path: Path) -> None:
    bad = tmp_path / "js.yaml"
    bad.write_text(
        "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: js}\nspec:\n  replicatedJobs:\n"
        "  - name: rj\n    template: {spec: {parallelism: 2, template: {spec: {containers: [{name: c, image: b}]}}}}\n",
        encoding="utf-8")
    config = tmp_path / ".jobsetctl.yaml"
    assert _json([str(bad)])[0] == 1  # the child Jobs are refused: a consequence error
    config.write_text("admissionOnly: true\n", encoding="utf-8")
    assert _json(["--config", str(config), str(bad)]) == (0, [])
    status, found = _json(["--config", str(config), "--no-admission-only", str(bad)])
    assert status == 1 and [d["rule"] for d in found] == ["jobset-child-job-invalid"]
    config.write_text("admissionOnly: yes please\n", encoding="utf-8")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert run(["validate", "--config", str(config), str(bad)]) == 2
    assert f"{config}:1:1: admissionOnly must be true or false" in err.getvalue()


def _rule_layer(rule_id: str) -> Layer:
    from jobsetctl.rules import get

    rule = get(rule_id)
    assert rule is not None, rule_id
    return rule.layer
