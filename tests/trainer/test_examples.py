"""Upstream Trainer examples: what validate says about them (spec predictions) and golden expansions.

Goldens are *our* output for each example, stored under ``tests/trainer/golden/``; regenerate with
``JOBSETCTL_UPDATE_GOLDEN=1``. Upstream data must not be copied into the repository, so strings of
the example that would be carried verbatim into the output (the inline Python scripts, long
commands) are replaced in the goldens by a marker with their length and SHA-256 prefix.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from jobsetctl.trainer.catalog import builtin_runtime
from jobsetctl.trainer.expand import Expansion
from tests.helpers import UPSTREAM, requires_upstream, validate_files
from tests.trainer.util import catalog, ctr, pod_spec, run, trainer_rules, trainjob, validate_objects

EXAMPLES = UPSTREAM / "trainer" / "examples"
GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("JOBSETCTL_UPDATE_GOLDEN") == "1"


def _example_files() -> list[Path]:
    if not EXAMPLES.is_dir():
        return []
    return sorted(EXAMPLES.glob("*/*.yaml"))


def _trainjob_files() -> list[Path]:
    return [p for p in _example_files() if any(d.get("kind") == "TrainJob" for d in _documents(p))]


def _documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]


def _runtime_for(trainjob_obj: dict[str, Any], inline: list[dict[str, Any]]) -> dict[str, Any]:
    ref = trainjob_obj["spec"]["runtimeRef"]
    kind = ref.get("kind", "ClusterTrainingRuntime")
    for candidate in inline:
        if candidate["kind"] == kind and candidate["metadata"]["name"] == ref["name"]:
            return candidate
    found = builtin_runtime(ref["name"])
    assert found is not None, ref
    return found


def _inline_runtimes(path: Path) -> list[dict[str, Any]]:
    runtimes = [d for d in _documents(path) if d.get("kind", "").endswith("TrainingRuntime")]
    flux_runtime = path.parent / "flux-runtime.yaml"
    if path.parent.name == "flux" and flux_runtime.is_file():
        runtimes += [d for d in _documents(flux_runtime) if d.get("kind", "").endswith("TrainingRuntime")]
    return runtimes


def _redact(value: Any, sources: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: _redact(v, sources) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact(v, sources) for v in value]
    if isinstance(value, str) and any(source in value for source in sources):
        digest = hashlib.sha256(value.encode()).hexdigest()[:12]
        return f"<text from the upstream example: {len(value)} characters, sha256 {digest}>"
    return value


def _long_strings(value: Any) -> set[str]:
    """Multi-line or long strings of the example, and long command lines its string lists join into
    (the Flux plugin joins command and args)."""
    found: set[str] = set()
    if isinstance(value, dict):
        for item in value.values():
            found |= _long_strings(item)
    elif isinstance(value, list):
        for item in value:
            found |= _long_strings(item)
        words = [item for item in value if isinstance(item, str)]
        if words and len(" ".join(words)) >= 60:
            found.add(" ".join(words))
    elif isinstance(value, str) and ("\n" in value or len(value) >= 60):
        found.add(value)
    return found


def _render(path: Path) -> str:
    parts = [f"# jobsetctl expansion of upstream example {path.parent.name}/{path.name} (generated; see test_examples.py)\n"]
    inline = _inline_runtimes(path)
    for doc in _documents(path):
        if doc.get("kind") != "TrainJob":
            continue
        expansion = run(doc, _runtime_for(doc, inline))
        sources = _long_strings(doc)
        for error in expansion.errors:
            parts.append(f"# reconcile error: {error}\n")
        parts.append(yaml.safe_dump_all([_redact(o, sources) for o in expansion.all_objects()], sort_keys=False))
    return "".join(parts)


@requires_upstream
@pytest.mark.parametrize("path", _trainjob_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_example_expansion_matches_golden(path: Path) -> None:
    golden = GOLDEN / f"{path.parent.name}-{path.stem}.yaml"
    rendered = _render(path)
    if UPDATE:
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(rendered)
    assert golden.is_file(), f"missing golden {golden.name}: run with JOBSETCTL_UPDATE_GOLDEN=1"
    assert rendered == golden.read_text()


@requires_upstream
def test_examples_validate_as_the_spec_predicts(tmp_path: Path) -> None:
    """Every example is admitted (TrainJob and generated JobSet) except 05-multi-step, which J3
    rejects (quirk 8: its dataset-initializer container has no "initializer" volumeMount). Validated as the
    command does, for a cluster it cannot see: 03-kueue-integration's LocalQueue, a prerequisite in the cluster
    by its own comment, may be there (a warning, issue #14)."""
    files = [str(p) for p in _example_files()]
    diagnostics = validate_files(tmp_path, {}, paths=files, unseen_cluster=True)
    errors = [(Path(d.file).name, d.rule) for d in diagnostics if d.severity == "error"]
    assert errors == [("05-multi-step.yaml", "trainjob-initializer-volume-mount-missing")]


@requires_upstream
def test_quirk_8_multi_step_example_rejected_by_j3(tmp_path: Path) -> None:
    diagnostics = validate_files(tmp_path, {}, paths=[str(EXAMPLES / "yaml" / "05-multi-step.yaml")])
    assert trainer_rules(diagnostics) == ["trainjob-initializer-volume-mount-missing"]
    assert diagnostics[0].message.endswith(
        "must have volumeMount with name - initializer in container dataset-initializer of the dataset-initializer job"
    )


@requires_upstream
def test_runtime_patches_example_merges_as_described() -> None:
    """trainer.md §3.5 on 02-runtime-patches: JobSet labels/annotations from the patch; nodeSelector,
    tolerations and serviceAccountName on the node pod; node resources merged; PET envs after user envs."""
    doc = next(d for d in _documents(EXAMPLES / "yaml" / "02-runtime-patches.yaml") if d["kind"] == "TrainJob")
    expansion: Expansion = run(doc, catalog("torch-distributed"))
    metadata = expansion.jobset["metadata"]
    assert metadata["labels"] == {"team": "ml-platform", "cost-center": "research"}
    assert metadata["annotations"] == {"prometheus.io/scrape": "true", "prometheus.io/port": "8080"}
    spec = pod_spec(expansion, "node")
    assert spec["serviceAccountName"] == "training-sa"
    assert spec["nodeSelector"] == {"node-type": "training"}
    assert spec["tolerations"] == [{"key": "training-workload", "operator": "Equal", "value": "true",
                                    "effect": "NoSchedule"}]
    node = ctr(expansion, "node")
    assert node["resources"] == {"limits": {"cpu": "4", "memory": "8Gi"}, "requests": {"cpu": "2", "memory": "4Gi"}}
    assert [e["name"] for e in node["env"]] == [
        "CUSTOM_VAR", "PYTHONUNBUFFERED", "PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK",
        "PET_MASTER_ADDR", "PET_MASTER_PORT",
    ]
    assert node["env"][3] == {"name": "PET_NPROC_PER_NODE", "value": "2"}


# --- trainer.md §2.7: admitted by Trainer, rejected as a JobSet ------------------------------------


@pytest.mark.parametrize(("length", "rejected"), [(33, []), (34, ["dataset-initializer"]),
                                                  (36, ["dataset-initializer", "model-initializer"])])
def test_long_name_with_dataset_initializer_is_rejected_as_jobset(
    tmp_path: Path, length: int, rejected: list[str]
) -> None:
    name = "t" + "x" * (length - 1)
    tj = trainjob(name, "torchtune-llama3.2-1b", initializer={"dataset": {"storageUri": "hf://a/b"}})
    diagnostics = validate_objects(tmp_path, tj)
    found = [d for d in diagnostics if d.rule == "trainjob-jobset-rejected"]
    assert [d.message for d in found] == [
        f'TrainJob "{name}" is accepted, but JobSet admission refuses its JobSet "{name}", event '
        f'TrainJobResourcesCreationFailed: TrainJob resources reconciliation failed: spec.replicatedJobs[{i}].name: '
        'Invalid value: '
        f'"{name}-{job}-0": JobSet name is too long, pod names generated for this JobSet will exceed 63 characters'
        for i, job in ((["dataset-initializer", "model-initializer"].index(j), j) for j in rejected)
    ]
    # The path and the position are the TrainJob's field that causes it, metadata.name (line 4 of the
    # dumped object); the JobSet's own path is in the message (issue #13).
    assert all(d.path == "metadata.name" for d in found)
    assert all((d.line, d.column) == (4, 3) for d in found)
    assert all((d.severity, d.layer) == ("error", "consequence") for d in found)
    assert trainer_rules(diagnostics) == ["trainjob-jobset-rejected"] * len(rejected)


def test_jobset_rejection_is_not_checked_when_the_trainjob_is_already_rejected(tmp_path: Path) -> None:
    name = "t" + "x" * 40
    tj = trainjob(name, "torch-distributed-with-cache", initializer={"dataset": {"storageUri": "hf://a/b"}})
    assert trainer_rules(validate_objects(tmp_path, tj)) == ["trainjob-initializer-volume-mount-missing"]


def test_jobset_rejection_not_checked_for_other_managers(tmp_path: Path) -> None:
    name = "t" + "x" * 40
    tj = trainjob(name, "torchtune-llama3.2-1b", managedBy="kueue.x-k8s.io/multikueue")
    assert trainer_rules(validate_objects(tmp_path, tj)) == []


def test_reconcile_failure_is_a_consequence_error(tmp_path: Path) -> None:
    """Quirk 11 seen from validate: admitted, but the controller cannot build the objects: it never runs,
    an error of the consequence layer (issue #13)."""
    from tests.trainer.util import NO_WEBHOOK, job, runtime

    rt = runtime("mpi", ml_policy={"mpi": {"mpiImplementation": ""}}, jobs=[job("launcher"), job("node", None)],
                 labels=NO_WEBHOOK)
    diagnostics = validate_objects(tmp_path, rt, trainjob("m", "mpi", trainer={}))
    failures = [d for d in diagnostics if d.rule == "trainjob-reconcile-failure"]
    assert [(d.severity, d.layer, d.message) for d in failures] == [
        ("error", "consequence", 'TrainJob "m" is accepted, but its controller fails to create its objects, event '
         "TrainJobResourcesCreationFailed: TrainJob resources reconciliation failed: MPI implementation for  "
         "doesn't supported"),
    ]


@pytest.mark.parametrize(
    ("trainer", "jobset_path", "message", "expected"),
    [
        ({}, "spec.replicatedJobs[0].name", "JobSet name is too long, job names ...", ("metadata", "name")),
        ({"image": "x"}, "spec.replicatedJobs[0].template.spec.template.spec.containers[0].image", "bad",
         ("spec", "trainer", "image")),
        ({}, "spec.replicatedJobs[0].template.spec.template.spec.containers[0].image", "bad",
         ("spec", "runtimeRef", "name")),
        ({"numNodes": 2}, "spec.replicatedJobs[0].template.spec.parallelism", "bad", ("spec", "trainer", "numNodes")),
        ({}, "spec.network.subdomain", "bad", ("spec", "runtimeRef", "name")),
        ({}, "<nil>", "DependsOn can't be set for the first ReplicatedJob", ("metadata", "name")),
    ],
)
def test_jobset_finding_points_at_its_cause(
    trainer: dict[str, Any], jobset_path: str, message: str, expected: tuple[str, ...]
) -> None:
    from jobsetctl.trainer.webhook_expansion import cause_in_trainjob

    assert cause_in_trainjob(trainjob(trainer=trainer), jobset_path, message) == expected


def test_runtime_template_problem_surfaces_as_jobset_rejection(tmp_path: Path) -> None:
    """A JobSet webhook check the runtime's own admission does not run (jobset.md §2.2 #2)."""
    from tests.trainer.util import job, torch_runtime

    rt = torch_runtime(jobs=[job(dependsOn=[{"name": "node", "status": "Ready"}])])
    diagnostics = validate_objects(tmp_path, rt, trainjob("tj"))
    found = [d for d in diagnostics if d.rule == "trainjob-jobset-rejected"]
    assert [d.message for d in found] == [
        'TrainJob "tj" is accepted, but JobSet admission refuses its JobSet "tj", event TrainJobResourcesCreationFailed: '
        "TrainJob resources reconciliation failed: <nil>: Internal error: DependsOn can't be set for the first "
        "ReplicatedJob",
    ]
