"""Conformance: the upstream JobSet examples pass the webhook except where jobset.md predicts otherwise.

Feature-gated examples are rejected with the gates off (RestartJob actions: §2.2 #12; InPlaceRestart:
§2.2 #1) and accepted with them on (the in-place examples also satisfy #10). Skips without the data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jobsetctl.admission.chain import admit
from jobsetctl.jobset import names
from jobsetctl.kinds.interface import AdmissionContext
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import KubeVersion
from jobsetctl.loader.yamlload import load_documents
from tests.helpers import UPSTREAM, requires_upstream

EXAMPLES = UPSTREAM / "jobset" / "examples"
ALL_GATES = "InPlaceRestart=true,RestartJob=true"

#: Examples the webhook rejects with default gates, and the rules it reports (jobset.md §2.2).
REJECTED_WITHOUT_GATES = {
    "failure-policy/restartjob-action.yaml": ["jobset-restart-job-gate"],
    "failure-policy/restartjobandignoremaxrestarts-action.yaml": ["jobset-restart-job-gate"],
    "in-place-restart/jobset-main-container-mode.yaml": ["jobset-inplace-restart-gate"],
    "in-place-restart/jobset-sidecar-container-mode.yaml": ["jobset-inplace-restart-gate"],
}


def _jobsets(path: Path) -> list[dict[str, Any]]:
    documents, _ = load_documents(path.read_text(), str(path))
    return [d.value for d in documents if isinstance(d.value, dict) and d.value.get("kind") == "JobSet"]


def _example_files() -> list[str]:
    if not EXAMPLES.is_dir():
        return []
    return sorted(str(p.relative_to(EXAMPLES)) for p in EXAMPLES.rglob("*.yaml") if _jobsets(p))


def _webhook_rules(obj: dict[str, Any], gates: str) -> list[str]:
    version = KubeVersion.V1_37
    result = admit(obj, AdmissionContext(version, parse_feature_gates(gates, version)))
    return [f.rule.id for f in result.findings if f.rule.id.startswith("jobset-")]


@requires_upstream
def test_examples_found() -> None:
    files = _example_files()
    assert len(files) >= 20
    assert set(REJECTED_WITHOUT_GATES) <= set(files)


@requires_upstream
@pytest.mark.parametrize("relative", _example_files())
def test_example_with_default_gates(relative: str) -> None:
    found = [rule for obj in _jobsets(EXAMPLES / relative) for rule in _webhook_rules(obj, "")]
    assert found == REJECTED_WITHOUT_GATES.get(relative, [])


@requires_upstream
@pytest.mark.parametrize("relative", _example_files())
def test_example_with_gates_on(relative: str) -> None:
    found = [rule for obj in _jobsets(EXAMPLES / relative) for rule in _webhook_rules(obj, ALL_GATES)]
    assert found == []


@requires_upstream
def test_coordinator_example_endpoint() -> None:
    """The example's own comment names the coordinator label value it expects."""
    (obj,) = _jobsets(EXAMPLES / "simple" / "coordinator.yaml")
    assert names.coordinator_endpoint_of(obj) == "coordinator-example-driver-0-0.coordinator-example"
    assert "coordinator-example-driver-0-0.coordinator-example" in (EXAMPLES / "simple" / "coordinator.yaml").read_text()
