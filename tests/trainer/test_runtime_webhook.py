"""TrainingRuntime / ClusterTrainingRuntime webhooks (trainer.md §2.5) and the TrainJob defaulter (§2.3)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from jobsetctl.diagnostics import Severity
from tests.helpers import admit_text
from tests.trainer.util import NO_WEBHOOK, container, job, runtime, trainjob

URL = "https://trainer.kubeflow.org/en/latest/operator-guides/runtime.html#runtime-deprecation-policy"


def _trainer_findings(obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    result = admit_text(yaml.safe_dump(obj), old=yaml.safe_dump(old) if old is not None else None)
    return [(f.rule.id, f.message) for f in result.findings if f.rule.id.startswith(("runtime-", "trainjob-"))]


KINDS = ["TrainingRuntime", "ClusterTrainingRuntime"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("jobs", "expected"),
    [
        pytest.param([job()], [], id="trainer-with-node"),
        pytest.param([job(replicas=2)], ["runtime-ancestor-replicas"], id="replicas-2"),
        pytest.param([job(replicas=0)], ["runtime-ancestor-replicas"], id="replicas-0"),
        pytest.param([job(containers=[container("main")])], ["runtime-ancestor-container-missing"], id="no-node"),
        pytest.param([job(containers=[container("main")], init_containers=[container("node")])],
                     ["runtime-ancestor-container-missing"], id="init-container-does-not-count"),
        pytest.param([job("d", "dataset-initializer", [container("x")], replicas=3)],
                     ["runtime-ancestor-replicas", "runtime-ancestor-container-missing"], id="dataset-both"),
        pytest.param([job("m", "model-initializer", [container("model-initializer")])], [], id="model-ok"),
        pytest.param([job("x", "other-step", [container("x")], replicas=5)], [], id="unknown-ancestor-ignored"),
        pytest.param([job("x", None, [container("x")], replicas=5)], [], id="no-ancestor-ignored"),
    ],
)
def test_replicated_job_checks(kind: str, jobs: list[dict[str, Any]], expected: list[str]) -> None:
    rt = runtime(kind=kind, jobs=jobs, namespace="default" if kind == "TrainingRuntime" else None)
    assert [rule for rule, _ in _trainer_findings(rt)] == expected


def test_replicated_job_messages() -> None:
    rt = runtime(jobs=[job("a"), job("d", "dataset-initializer", [container("x")], replicas=3)])
    assert _trainer_findings(rt) == [
        ("runtime-ancestor-replicas", "spec.template.spec.replicatedJobs[1].replicas: Invalid value: 3: always must be 1"),
        ("runtime-ancestor-container-missing",
         'spec.template.spec.replicatedJobs[1].template.spec.template.spec.containers: Invalid value: '
         '[{"image":"img","name":"x"}]: must contain the required container for the ancestor: dataset-initializer'),
    ]


@pytest.mark.parametrize("kind", KINDS)
def test_webhook_validation_disabled_label_skips_the_webhook(kind: str) -> None:
    labels = {**NO_WEBHOOK, "trainer.kubeflow.org/support": "deprecated"}
    rt = runtime(kind=kind, jobs=[job(replicas=2)], labels=labels)
    assert _trainer_findings(rt) == []


def test_cluster_runtime_deprecation_warning_on_create() -> None:
    rt = runtime("old", labels={"trainer.kubeflow.org/support": "deprecated"})
    result = admit_text(yaml.safe_dump(rt))
    warnings = [f for f in result.findings if f.rule.id == "runtime-deprecated"]
    assert [(f.severity or f.rule.severity, f.message) for f in warnings] == [(
        Severity.WARNING,
        f'ClusterTrainingRuntime "old" is deprecated and will be removed in a future release of Kubeflow Trainer. '
        f"See runtime deprecation policy: {URL}",
    )]
    assert result.accepted


def test_namespaced_runtime_has_no_deprecation_warning() -> None:
    rt = runtime(kind="TrainingRuntime", namespace="default", labels={"trainer.kubeflow.org/support": "deprecated"})
    assert _trainer_findings(rt) == []


def test_training_runtime_not_validated_on_update() -> None:
    old = runtime(kind="TrainingRuntime", namespace="default")
    new = runtime(kind="TrainingRuntime", namespace="default", jobs=[job(replicas=2)])
    assert _trainer_findings(new, old) == []


def test_cluster_runtime_validated_on_update_without_warning() -> None:
    old = runtime(labels={"trainer.kubeflow.org/support": "deprecated"})
    new = runtime(jobs=[job(replicas=2)], labels={"trainer.kubeflow.org/support": "deprecated"})
    assert [rule for rule, _ in _trainer_findings(new, old)] == ["runtime-ancestor-replicas"]


# --- TrainJob mutating webhook: runtimePatches[].time (§2.3) ---------------------------------------

NOW = "2026-01-01T00:00:00Z"


def _times(obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[str | None]:
    result = admit_text(yaml.safe_dump(obj), old=yaml.safe_dump(old) if old is not None else None)
    assert result.obj is not None
    return [p.get("time") for p in result.obj["spec"]["runtimePatches"]]


def test_create_stamps_missing_times_and_keeps_given_ones() -> None:
    tj = trainjob(patches=[{"manager": "a.io/x"}, {"manager": "a.io/y", "time": "2025-01-01T00:00:00Z"}])
    assert _times(tj) == [NOW, "2025-01-01T00:00:00Z"]


@pytest.mark.parametrize(
    ("old_patch", "new_patch", "expected"),
    [
        pytest.param({"manager": "a.io/x", "time": "2025-01-01T00:00:00Z"}, {"manager": "a.io/x"},
                     "2025-01-01T00:00:00Z", id="unchanged-keeps-old-time"),
        pytest.param({"manager": "a.io/x", "time": "2025-01-01T00:00:00Z"},
                     {"manager": "a.io/x", "time": "2030-01-01T00:00:00Z"},
                     "2025-01-01T00:00:00Z", id="unchanged-client-time-ignored"),
        pytest.param({"manager": "a.io/x", "time": "2025-01-01T00:00:00Z"},
                     {"manager": "a.io/x", "time": "2030-01-01T00:00:00Z",
                      "trainingRuntimeSpec": {"template": {"metadata": {"labels": {"a": "b"}}}}},
                     NOW, id="changed-gets-now-even-with-client-time"),
        pytest.param({"manager": "a.io/other"}, {"manager": "a.io/x", "time": "2030-01-01T00:00:00Z"},
                     "2030-01-01T00:00:00Z", id="new-manager-keeps-client-time"),
        pytest.param({"manager": "a.io/other"}, {"manager": "a.io/x"}, NOW, id="new-manager-gets-now"),
    ],
)
def test_update_time_rules(old_patch: dict[str, Any], new_patch: dict[str, Any], expected: str) -> None:
    old = trainjob(suspend=True, patches=[old_patch])
    new = trainjob(suspend=True, patches=[new_patch])
    assert _times(new, old) == [expected]
