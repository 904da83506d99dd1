"""The Scenario ``patch`` action: a JSON merge patch through an update (``kubectl patch --type merge``),
added for upstream tests that change an object in place (queueing_test.go: a PodGroup's minCount)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobsetctl.simulate.actions import merge_patch
from jobsetctl.simulate.inputs import load_inputs
from tests.simulate.harness import load, run_json, write_scenario

SCENARIO = """\
    apiVersion: jobsetctl.dev/v1alpha1
    kind: Scenario
    spec:
      kubernetesVersion: "1.37"
      nodes:
      - {name: node, count: 1, capacity: {cpu: "8", memory: 16Gi}}
      submit:
      - at: 0s
        objects:
        - apiVersion: scheduling.k8s.io/v1beta1
          kind: PodGroup
          metadata: {name: pg}
          spec: {schedulingPolicy: {gang: {minCount: 2}}}
        - apiVersion: v1
          kind: Pod
          metadata: {name: p1}
          spec:
            schedulingGroup: {podGroupName: pg}
            containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
      actions:
      - ACTION
    """


def test_merge_patch_follows_rfc_7386() -> None:
    target = {"a": {"b": 1, "c": [1, 2]}, "d": "x"}
    assert merge_patch(target, {"a": {"b": None, "c": [3]}, "e": {"f": 1}}) == {"a": {"c": [3]}, "d": "x",
                                                                                  "e": {"f": 1}}
    assert merge_patch("scalar", {"k": 1}) == {"k": 1}


def test_patching_a_pod_group_min_count_lets_its_gang_schedule(tmp_path: Path) -> None:
    action = "{at: 10s, patch: {kind: PodGroup, name: pg, merge: {spec: {schedulingPolicy: {gang: {minCount: 1}}}}}}"
    text, outcome = run_json(write_scenario(tmp_path, SCENARIO.replace("ACTION", action)))
    assert not outcome.failed
    scheduled = [(e["time"], e["kind"], e["name"]) for e in load(text)["events"] if e["event"] == "Scheduled"]
    assert scheduled == [(10, "PodGroup", "pg"), (10, "Pod", "p1")]


def test_a_patch_admission_refuses_is_recorded_and_fails_the_run(tmp_path: Path) -> None:
    action = "{at: 10s, patch: {kind: PodGroup, name: pg, merge: {spec: {schedulingPolicy: {basic: {}, gang: null}}}}}"
    text, outcome = run_json(write_scenario(tmp_path, SCENARIO.replace("ACTION", action)))
    refused = [(e["time"], e["kind"], e["name"], e["reason"]) for e in load(text)["events"] if e["event"] == "Rejected"]
    assert refused == [(10, "PodGroup", "pg", "Invalid")]
    assert outcome.failed


@pytest.mark.parametrize(("action", "expected"), [
    ("{at: 1s, patch: {kind: PodGroup, name: pg}}",
     ("scenario-required", "spec.actions[0].patch.merge: Required value: a JSON merge patch (a mapping)")),
    ("{at: 1s, patch: {kind: PodGroup, name: pg, merge: [1]}}",
     ("scenario-invalid-type", 'spec.actions[0].patch.merge: Invalid value: "list": expected a mapping')),
    ("{at: 1s, patch: {kind: PodGroup, name: pg, merge: {kind: Pod}}}",
     ("scenario-invalid-value", 'spec.actions[0].patch.merge.kind: Invalid value: "Pod": a patch may not change it')),
    ("{at: 1s, patch: {kind: PodGroup, name: pg, merge: {metadata: {name: other}}}}",
     ("scenario-invalid-value", 'spec.actions[0].patch.merge.metadata: Invalid value: "name/namespace": a patch '
                                "may not change them")),
])
def test_a_malformed_patch_is_a_scenario_error(tmp_path: Path, action: str, expected: tuple[str, str]) -> None:
    inputs = load_inputs([write_scenario(tmp_path, SCENARIO.replace("ACTION", action))], None)
    assert [(d.rule, d.message) for d in inputs.diagnostics] == [expected]
