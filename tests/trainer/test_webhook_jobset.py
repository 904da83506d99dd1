"""TrainJob validating webhook, JobSet plugin: J1–J13 (trainer.md §2.4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from jobsetctl.admission.chain import admit
from jobsetctl.diagnostics import Severity
from jobsetctl.kinds.index import ObjectIndex
from jobsetctl.kinds.interface import AdmissionContext, Operation
from jobsetctl.kube.featuregates import FeatureGates
from jobsetctl.kube.versions import KubeVersion
from tests.helpers import admit_text, table, validate_files
from tests.trainer.util import (
    NO_WEBHOOK,
    container,
    job,
    messages,
    only,
    pod_patch,
    torch_runtime,
    trainer_rules,
    trainjob,
    validate_objects,
)

REF = '{"apiGroup":"trainer.kubeflow.org","kind":"ClusterTrainingRuntime","name":"rt"}'
DATASET = {"dataset": {"storageUri": "hf://a/b"}}
MODEL = {"model": {"storageUri": "hf://a/b"}}


def _init_job(name: str, containers: list[dict[str, Any]] | None = None, **kwargs: Any) -> dict[str, Any]:
    return job(name, name, containers if containers is not None else [
        container(name, volumeMounts=[{"name": "initializer", "mountPath": "/workspace"}]),
    ], **kwargs)


@pytest.mark.parametrize(
    ("jobs", "initializer", "expected"),
    [
        pytest.param([job()], None, [], id="no-initializer"),
        pytest.param([_init_job("dataset-initializer"), job()], DATASET, [], id="J1-J3-pass"),
        pytest.param([job()], DATASET, ["trainjob-initializer-job-missing"], id="J1"),
        pytest.param([_init_job("dataset-initializer", [container("other")]), job()], DATASET,
                     ["trainjob-initializer-container-missing"], id="J2"),
        pytest.param([_init_job("dataset-initializer", [container("dataset-initializer")]), job()], DATASET,
                     ["trainjob-initializer-volume-mount-missing"], id="J3"),
        pytest.param([_init_job("model-initializer"), job()], MODEL, [], id="J4-J6-pass"),
        pytest.param([job()], MODEL, ["trainjob-initializer-job-missing"], id="J4"),
        pytest.param([_init_job("model-initializer", [container("x")]), job()], MODEL,
                     ["trainjob-initializer-container-missing"], id="J5"),
        pytest.param([_init_job("model-initializer", [container("model-initializer")]), job()], MODEL,
                     ["trainjob-initializer-volume-mount-missing"], id="J6"),
        pytest.param([job()], {**DATASET, **MODEL},
                     ["trainjob-initializer-job-missing", "trainjob-initializer-job-missing"], id="J1-and-J4"),
    ],
)
def test_initializer_checks_table(
    tmp_path: Path, jobs: list[dict[str, Any]], initializer: dict[str, Any] | None, expected: list[str]
) -> None:
    rt = torch_runtime(jobs=jobs, labels=NO_WEBHOOK)
    assert trainer_rules(validate_objects(tmp_path, rt, trainjob(initializer=initializer))) == expected


@pytest.mark.parametrize(
    ("initializer", "jobs", "detail"),
    [
        (DATASET, [job()], "must have dataset-initializer job when trainJob is configured with input datasetConfig"),
        (MODEL, [job()], "must have model-initializer job when trainJob is configured with input modelConfig"),
        (DATASET, [_init_job("dataset-initializer", [container("x")]), job()],
         "must have container with name - dataset-initializer in the dataset-initializer job"),
        (MODEL, [_init_job("model-initializer", [container("model-initializer")]), job()],
         "must have volumeMount with name - initializer in container model-initializer of the model-initializer job"),
    ],
)
def test_initializer_messages(tmp_path: Path, initializer: dict[str, Any], jobs: list[dict[str, Any]], detail: str) -> None:
    diagnostics = validate_objects(tmp_path, torch_runtime(jobs=jobs, labels=NO_WEBHOOK), trainjob(initializer=initializer))
    found = [d for d in diagnostics if d.rule.startswith("trainjob-initializer")]
    assert [d.message for d in found] == [f"spec.runtimeRef: Invalid value: {REF}: {detail}"]
    assert found[0].path == "spec.runtimeRef"


def test_quirk_1_validation_finds_initializer_jobs_by_name(tmp_path: Path) -> None:
    """A job named "fetch" carrying the dataset-initializer ancestor does not satisfy J1."""
    rt = torch_runtime(jobs=[job("fetch", "dataset-initializer", [container("dataset-initializer")]), job()])
    assert trainer_rules(validate_objects(tmp_path, rt, trainjob(initializer=DATASET))) == [
        "trainjob-initializer-job-missing"
    ]


def test_quirk_init_container_satisfies_j2_but_not_j3(tmp_path: Path) -> None:
    mount = [{"name": "initializer", "mountPath": "/w"}]
    rt = torch_runtime(jobs=[
        job("dataset-initializer", "dataset-initializer", [container("other")],
            init_containers=[container("dataset-initializer", volumeMounts=mount)]),
        job(),
    ], labels=NO_WEBHOOK)
    assert trainer_rules(validate_objects(tmp_path, rt, trainjob(initializer=DATASET))) == [
        "trainjob-initializer-volume-mount-missing"
    ]


def test_initializer_job_added_by_a_patch_counts(tmp_path: Path) -> None:
    """J1–J6 look at the patched spec (trainer.md §3.5 last line)."""
    rt = torch_runtime(jobs=[_init_job("dataset-initializer", [container("dataset-initializer")]), job()])
    patch = pod_patch("dataset-initializer", containers=[
        {"name": "dataset-initializer", "volumeMounts": [{"name": "initializer", "mountPath": "/w"}]},
    ])
    assert trainer_rules(validate_objects(tmp_path, rt, trainjob(initializer=DATASET, patches=[patch]))) == []


# --- J7 (context-free) ----------------------------------------------------------------------------

SUBDOMAIN_ERROR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


@pytest.mark.parametrize(
    ("manager", "expected"),
    [
        ("kueue.x-k8s.io/multikueue", []),
        ("example.com/a/b", []),
        ("no-slash", ['spec.runtimePatches.manager: Invalid value: "no-slash": must be a domain-prefixed path (such as "acme.io/foo")']),
        ("example.com/", ['spec.runtimePatches.manager: Invalid value: "example.com/": must be a domain-prefixed path (such as "acme.io/foo")']),
        ("Example.com/x", [f'spec.runtimePatches.manager: Invalid value: "Example.com": {SUBDOMAIN_ERROR}']),
        ("example.com/a b", ['spec.runtimePatches.manager: Invalid value: "a b": Invalid path (regex used for '
                             "validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')"]),
    ],
)
def test_manager_must_be_domain_prefixed_path(manager: str, expected: list[str]) -> None:
    text = yaml.safe_dump(trainjob(patches=[{"manager": manager}]))
    result = admit_text(text)
    assert [f.message for f in result.findings if f.rule.id == "trainjob-patch-manager-invalid"] == expected
    for finding in result.findings:
        if finding.rule.id == "trainjob-patch-manager-invalid":
            assert finding.path == "spec.runtimePatches.manager"
            assert finding.at == ("spec", "runtimePatches", 0, "manager")


def test_manager_finding_points_at_the_offending_patch(tmp_path: Path) -> None:
    tj = trainjob("tj", "torch-distributed", patches=[{"manager": "a.io/ok"}, {"manager": "bad"}])
    diagnostics = validate_objects(tmp_path, tj)
    assert [row for row in table(diagnostics) if row[2] == "trainjob-patch-manager-invalid"] == [
        (10, 5, "trainjob-patch-manager-invalid"),
    ]


# --- J8–J11 ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        pytest.param(pod_patch("node", nodeSelector={"a": "b"}), [], id="known-job"),
        pytest.param(pod_patch("ghost", nodeSelector={"a": "b"}), ["trainjob-patch-unknown-job"], id="J8"),
        pytest.param(pod_patch("node", initContainers=[{"name": "warmup", "volumeMounts": []}]), [],
                     id="J9-pass-init-container"),
        pytest.param(pod_patch("node", initContainers=[{"name": "node"}]), [], id="J9-pass-container-name"),
        pytest.param(pod_patch("node", initContainers=[{"name": "ghost"}]), ["trainjob-patch-unknown-init-container"],
                     id="J9"),
        pytest.param(pod_patch("node", containers=[{"name": "warmup"}]), [], id="J10-pass-init-name"),
        pytest.param(pod_patch("node", containers=[{"name": "ghost"}]), ["trainjob-patch-unknown-container"], id="J10"),
        pytest.param(pod_patch("node", containers=[{"name": "node", "env": [{"name": "A", "value": "1"}]}]),
                     ["trainjob-patch-env-forbidden"], id="J11-node"),
        pytest.param(pod_patch("node", containers=[{"name": "node", "volumeMounts": [{"name": "v", "mountPath": "/v"}]}]),
                     [], id="J11-pass-no-env"),
        pytest.param(pod_patch("node", containers=[{"name": "side", "env": [{"name": "A", "value": "1"}]}]),
                     [], id="J11-pass-other-container"),
        pytest.param(pod_patch("node", initContainers=[{"name": "node", "env": [{"name": "A", "value": "1"}]}]),
                     [], id="J11-not-for-init-containers"),
    ],
)
def test_patch_target_checks_table(tmp_path: Path, patch: dict[str, Any], expected: list[str]) -> None:
    rt = torch_runtime(jobs=[job(containers=[container(), container("side")], init_containers=[container("warmup")])])
    diagnostics = validate_objects(tmp_path, rt, trainjob(trainer={}, patches=[patch]))
    assert trainer_rules(diagnostics) == expected


@pytest.mark.parametrize(
    ("job_name", "container_name", "detail"),
    [
        ("ghost", None, "must not have replicated job that doesn't exist in the runtime job template"),
        ("node", "ghost", "must not have container that doesn't exist in the runtime job node"),
        ("node", "node", "must not have envs for the dataset-initializer, model-initializer, node containers"),
    ],
)
def test_patch_target_messages(tmp_path: Path, job_name: str, container_name: str | None, detail: str) -> None:
    containers = [] if container_name is None else [{"name": container_name, "env": [{"name": "A", "value": "1"}]}]
    patch = pod_patch(job_name, containers=containers) if containers else pod_patch(job_name, nodeSelector={"a": "b"})
    diagnostics = validate_objects(tmp_path, torch_runtime(), trainjob(patches=[patch]))
    found = [d for d in diagnostics if d.rule.startswith("trainjob-patch")]
    assert len(found) == 1
    assert found[0].path == "spec.runtimePatches"
    assert found[0].message.startswith("spec.runtimePatches: Invalid value: [")
    assert found[0].message.endswith(f"]: {detail}")


def test_quirk_j8_to_j10_checked_against_the_unpatched_runtime(tmp_path: Path) -> None:
    """Spec uncertainty: Trainer HEAD checks the *patched* Info, where the strategic merge has already
    added the unknown job (so upstream would admit this TrainJob); trainer.md §2.4 lists J8 against
    the runtime template, which we follow. Without the check the JobSet would get a job with no pod."""
    diagnostics = validate_objects(tmp_path, torch_runtime(), trainjob(patches=[pod_patch("ghost", nodeSelector={"a": "b"})]))
    assert only(diagnostics, "trainjob-patch-unknown-job").severity is Severity.ERROR


# --- J12/J13 (update) -----------------------------------------------------------------------------


def _update(tmp_path: Path, old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    (tmp_path / "old.yaml").write_text(yaml.safe_dump(old))
    diagnostics = validate_files(tmp_path, {"new.yaml": yaml.safe_dump(new)}, old=str(tmp_path / "old.yaml"),
                                 paths=[str(tmp_path / "new.yaml")])
    return trainer_rules(diagnostics)


@pytest.mark.parametrize(
    ("old_suspend", "new_suspend", "changed", "expected"),
    [
        (False, False, True, ["trainjob-patches-changed-unsuspended"]),
        (False, False, False, []),
        (True, False, True, []),
        (False, True, True, []),
        (True, True, True, []),
    ],
)
def test_patches_change_only_while_suspended(
    tmp_path: Path, old_suspend: bool, new_suspend: bool, changed: bool, expected: list[str]
) -> None:
    old = trainjob("tj", "torch-distributed", suspend=old_suspend, patches=[pod_patch("node", nodeSelector={"a": "1"})])
    new_value = "2" if changed else "1"
    new = trainjob("tj", "torch-distributed", suspend=new_suspend,
                   patches=[pod_patch("node", nodeSelector={"a": new_value})])
    assert _update(tmp_path, old, new) == expected


def test_patch_time_alone_is_not_a_change(tmp_path: Path) -> None:
    """The defaulter keeps the old time of an unchanged patch, so J12 compares equal patches."""
    old = trainjob("tj", "torch-distributed", patches=[{**pod_patch("node"), "time": "2025-05-05T00:00:00Z"}])
    new = trainjob("tj", "torch-distributed", patches=[pod_patch("node")])
    assert _update(tmp_path, old, new) == []


def test_j12_message(tmp_path: Path) -> None:
    ctx = AdmissionContext(KubeVersion.V1_37, FeatureGates(KubeVersion.V1_37), Operation.UPDATE)
    old = trainjob("tj", "torch-distributed", patches=[{"manager": "a.io/x"}])
    result = admit(trainjob("tj", "torch-distributed"), ctx, old=old)
    assert [f.message for f in result.findings] == [
        "spec.runtimePatches: Forbidden: RuntimePatches can only be modified when the TrainJob is suspended "
        "before or after the update",
    ]


def _jobset(active: dict[str, int]) -> dict[str, Any]:
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
        "metadata": {"name": "tj", "namespace": "default"},
        "spec": {"replicatedJobs": []},
        "status": {"replicatedJobsStatus": [
            {"name": name, "ready": 0, "succeeded": 0, "failed": 0, "active": count, "suspended": 0}
            for name, count in active.items()
        ]},
    }


@pytest.mark.parametrize(
    ("active", "expected"),
    [
        ({"node": 0, "init": 0}, []),
        ({"node": 2, "init": 0},
         ["spec.runtimePatches: Forbidden: RuntimePatches cannot be modified when the JobSet's ReplicatedJob node is still active"]),
        ({"node": 1, "init": 1}, [
            "spec.runtimePatches: Forbidden: RuntimePatches cannot be modified when the JobSet's ReplicatedJob node is still active",
            "spec.runtimePatches: Forbidden: RuntimePatches cannot be modified when the JobSet's ReplicatedJob init is still active",
        ]),
    ],
)
def test_j13_active_jobset_blocks_patch_changes(active: dict[str, int], expected: list[str]) -> None:
    from jobsetctl.trainer.catalog import builtin_runtimes

    cluster = ObjectIndex([_jobset(active), *builtin_runtimes()])
    ctx = AdmissionContext(KubeVersion.V1_37, FeatureGates(KubeVersion.V1_37), Operation.UPDATE, cluster=cluster)
    old = trainjob("tj", "torch-distributed", suspend=False, patches=[pod_patch("node", nodeSelector={"a": "1"})])
    new = trainjob("tj", "torch-distributed", suspend=True, patches=[pod_patch("node", nodeSelector={"a": "2"})])
    result = admit(new, ctx, old=old)
    assert messages_of(result.findings, "trainjob-patches-jobset-active") == expected
    assert not [f for f in result.findings if f.rule.id == "trainjob-patches-changed-unsuspended"]


def messages_of(findings: list[Any], rule: str) -> list[str]:
    return [f.message for f in findings if f.rule.id == rule]


def test_update_with_cluster_rechecks_the_runtime() -> None:
    """Upstream re-runs ValidateObjects on UPDATE: a vanished runtime is reported again."""
    ctx = AdmissionContext(KubeVersion.V1_37, FeatureGates(KubeVersion.V1_37), Operation.UPDATE, cluster=ObjectIndex())
    tj = trainjob("tj", "gone")
    result = admit(tj, ctx, old=tj)
    assert [f.rule.id for f in result.findings] == ["trainjob-runtime-not-found"]


def test_messages_helper_sanity(tmp_path: Path) -> None:
    diagnostics = validate_objects(tmp_path, trainjob(runtime_name="missing"))
    assert messages(diagnostics, "trainjob-runtime-not-found")
