"""Every Scenario sample runs to its end without internal errors, and emits only contract events."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobsetctl.simulate.report import is_allowed
from tests.helpers import SAMPLES
from tests.simulate.harness import load, run_json

SCENARIOS = sorted((SAMPLES / "scenarios").glob("*.yaml"))


def test_samples_exist() -> None:
    assert {p.name for p in SCENARIOS} >= {"two-teams.yaml", "gang-topology.yaml", "node-failure.yaml", "kueue.yaml"}


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_sample_runs(path: Path, tmp_path: Path) -> None:
    text, outcome = run_json(path, trace=str(tmp_path / "t.json"), svg=str(tmp_path / "c.svg"))
    assert outcome.report is None, outcome.report
    assert not outcome.failed, [e for e in load(text)["events"] if e["event"] == "Rejected"]
    document = load(text)
    assert all(is_allowed(e["kind"], e["event"], e.get("group")) for e in document["events"])
    assert document["summary"]["unfinishedWorkloads"] == 0 or document["summary"]["stopReason"] == "until"


def test_samples_together_show_every_scenario_feature() -> None:
    from jobsetctl.simulate.inputs import load_inputs
    from jobsetctl.simulate.nodes import is_node

    seen: set[str] = set()
    for path in SCENARIOS:
        inputs = load_inputs([str(path)], None)
        scenario = inputs.scenario
        assert scenario is not None and not inputs.errors
        spec = scenario.record.obj["spec"]
        seen.update(f"spec.{key}" for key in spec)
        for pool in spec.get("nodes", []):
            seen.update(f"nodes.{key}" for key in pool)
        for submission in spec.get("submit", []):
            seen.update(f"submit.{key}" for key in submission)
        for action in scenario.actions:
            seen.add(f"action.{action.verb}")
            if action.pod is not None:
                seen.add("failPod.name" if action.pod.name is not None else "failPod.namePrefix")
        if any(is_node(r.obj) for r in inputs.all_records()):
            seen.add("submitted Node")
        if len(scenario.nodes) > 1:
            seen.add("several pools")
    assert seen >= {
        "spec.kubernetesVersion", "spec.featureGates", "spec.until", "spec.nodes", "spec.submit", "spec.actions",
        "nodes.name", "nodes.count", "nodes.capacity", "nodes.labels", "nodes.taints", "nodes.topology",
        "nodes.topologyOffset", "submit.at", "submit.files", "submit.objects",
        "action.failNode", "action.failPod", "action.suspend", "action.resume", "action.delete",
        "failPod.name", "failPod.namePrefix", "submitted Node", "several pools",
    }
    assert (SAMPLES / "scenarios" / "manifests" / "nodes.yaml").is_file()  # the --nodes sample
