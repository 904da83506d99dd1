"""TrainJob validating webhook, step A: runtime resolution (trainer.md §2.4 step A, §2.6)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from jobsetctl.diagnostics import Layer, Severity
from tests.helpers import table, validate_files
from tests.trainer.util import messages, only, torch_runtime, trainer_rules, trainjob, validate_objects

URL = "https://trainer.kubeflow.org/en/latest/operator-guides/runtime.html#runtime-deprecation-policy"
REF = '{"apiGroup":"trainer.kubeflow.org","kind":"%s","name":"%s"}'


@pytest.mark.parametrize(
    ("objects", "expected"),
    [
        pytest.param([trainjob(runtime_name="torch-distributed")], [], id="catalog-cluster-runtime"),
        pytest.param([torch_runtime(), trainjob()], [], id="input-cluster-runtime"),
        pytest.param(
            [torch_runtime(kind="TrainingRuntime", namespace="default"), trainjob(kind="TrainingRuntime")],
            [], id="namespaced-runtime-same-namespace",
        ),
        pytest.param(
            [torch_runtime(kind="TrainingRuntime", namespace="default"), trainjob(kind="TrainingRuntime", namespace="ml")],
            ["trainjob-runtime-not-found"], id="namespaced-runtime-other-namespace",
        ),
        pytest.param([trainjob(runtime_name="missing")], ["trainjob-runtime-not-found"], id="cluster-runtime-missing"),
        pytest.param(
            [torch_runtime(kind="TrainingRuntime", namespace="default"), trainjob()],
            ["trainjob-runtime-not-found"], id="default-kind-is-cluster-runtime",
        ),
        pytest.param(
            [torch_runtime(), trainjob(kind="Foo")], ["trainjob-runtime-unsupported"], id="unsupported-kind",
        ),
    ],
)
def test_runtime_resolution_table(tmp_path: Path, objects: list[dict[str, Any]], expected: list[str]) -> None:
    assert trainer_rules(validate_objects(tmp_path, *objects)) == expected


def test_cluster_runtime_not_found_message_has_capital_r_quirk(tmp_path: Path) -> None:
    """quirk: the ClusterTrainingRuntime branch reports ``spec.RuntimeRef`` (asserted upstream)."""
    found = only(validate_objects(tmp_path, trainjob(runtime_name="missing")), "trainjob-runtime-not-found")
    assert found.message == (
        "spec.RuntimeRef: Invalid value: " + REF % ("ClusterTrainingRuntime", "missing") + ": "
        'clustertrainingruntimes.trainer.kubeflow.org "missing" not found: '
        "specified clusterTrainingRuntime must be created before the TrainJob is created"
    )
    assert found.path == "spec.RuntimeRef"
    assert found.layer is Layer.REFERENCE
    assert found.severity is Severity.ERROR


def test_quirk_capital_r_path_still_points_at_the_runtime_name(tmp_path: Path) -> None:
    diagnostics = validate_objects(tmp_path, trainjob(runtime_name="missing"))
    # Line 7 of the dumped TrainJob is "    name: missing" under spec.runtimeRef.
    assert table(diagnostics) == [(7, 5, "trainjob-runtime-not-found")]


def test_training_runtime_not_found_message(tmp_path: Path) -> None:
    found = only(validate_objects(tmp_path, trainjob(runtime_name="gone", kind="TrainingRuntime")),
                 "trainjob-runtime-not-found")
    assert found.message == (
        "spec.runtimeRef: Invalid value: " + REF % ("TrainingRuntime", "gone") + ": "
        'trainingruntimes.trainer.kubeflow.org "gone" not found: '
        "specified trainingRuntime must be created before the TrainJob is created"
    )
    assert found.path == "spec.runtimeRef"


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ({"name": "rt", "kind": "Foo"}, "unsupported runtime: Foo.trainer.kubeflow.org"),
        ({"name": "rt", "apiGroup": "", "kind": "TrainingRuntime"}, "unsupported runtime: TrainingRuntime"),
        ({"name": "rt", "apiGroup": "example.com"}, "unsupported runtime: ClusterTrainingRuntime.example.com"),
    ],
)
def test_unsupported_runtime_is_a_plain_error(tmp_path: Path, ref: dict[str, Any], message: str) -> None:
    tj = trainjob()
    tj["spec"]["runtimeRef"] = ref
    found = only(validate_objects(tmp_path, torch_runtime(), tj), "trainjob-runtime-unsupported")
    assert found.message == message
    assert found.layer is Layer.WEBHOOK


def test_deprecated_cluster_runtime_is_a_warning(tmp_path: Path) -> None:
    rt = torch_runtime(labels={"trainer.kubeflow.org/support": "deprecated",
                               "trainer.kubeflow.org/webhook-validation": "disabled"})
    diagnostics = validate_objects(tmp_path, rt, trainjob())
    found = only(diagnostics, "trainjob-runtime-deprecated")
    assert found.severity is Severity.WARNING
    assert found.layer is Layer.REFERENCE
    assert found.message == (
        'Referenced ClusterTrainingRuntime "rt" is deprecated and will be removed in a future release of '
        f"Kubeflow Trainer. See runtime deprecation policy: {URL}"
    )


def test_deprecated_namespaced_runtime_gives_no_warning(tmp_path: Path) -> None:
    rt = torch_runtime(kind="TrainingRuntime", namespace="default",
                       labels={"trainer.kubeflow.org/support": "deprecated"})
    assert trainer_rules(validate_objects(tmp_path, rt, trainjob(kind="TrainingRuntime"))) == []


def test_input_runtime_wins_over_catalog_runtime_of_the_same_name(tmp_path: Path) -> None:
    rt = torch_runtime("torch-distributed", labels={"trainer.kubeflow.org/support": "deprecated",
                                                     "trainer.kubeflow.org/webhook-validation": "disabled"})
    diagnostics = validate_objects(tmp_path, rt, trainjob(runtime_name="torch-distributed"))
    assert trainer_rules(diagnostics) == ["trainjob-runtime-deprecated"]


def test_runtime_from_runtimes_option(tmp_path: Path) -> None:
    runtimes = tmp_path / "runtimes" / "rt.yaml"
    runtimes.parent.mkdir()
    runtimes.write_text(yaml.safe_dump(torch_runtime("from-file")))
    diagnostics = validate_files(
        tmp_path, {"tj.yaml": yaml.safe_dump(trainjob(runtime_name="from-file"))}, runtimes=[str(runtimes)],
    )
    assert trainer_rules(diagnostics) == []
    without = validate_files(tmp_path, {"tj.yaml": yaml.safe_dump(trainjob(runtime_name="from-file"))})
    assert messages(without, "trainjob-runtime-not-found")
