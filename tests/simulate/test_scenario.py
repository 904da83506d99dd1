"""Scenario parsing: the model of a valid file, and every error class with its (line, column, rule)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobsetctl.simulate.inputs import load_inputs
from jobsetctl.simulate.scenario import TopologyLevel
from jobsetctl.status import UsageError
from tests.helpers import dedent, table

TEAM_A = """\
apiVersion: batch/v1
kind: Job
metadata: {name: a}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
"""

VALID = """\
apiVersion: jobsetctl.dev/v1alpha1
kind: Scenario
metadata: {name: two-teams}
spec:
  kubernetesVersion: "1.36"
  featureGates: {WorkloadWithJob: true}
  until: 24h
  nodes:
  - name: gpu
    count: 16
    capacity: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8", pods: "110"}
    labels: {cloud.example.com/pool: gpu}
    taints: [{key: gpu, value: "true", effect: NoSchedule}]
    topology:
    - {key: topology.example.com/block, count: 2}
    - {key: topology.example.com/rack, count: 4}
  - name: cpu
    capacity: {cpu: "32"}
    topologyOffset: 8
  submit:
  - {at: 0s, files: [team-a.yaml]}
  - at: 30m
    objects:
    - {apiVersion: v1, kind: ConfigMap, metadata: {name: settings}}
  actions:
  - {at: 2h, failNode: gpu-3}
  - {at: 3h, failPod: {namespace: default, name: js-workers-0-0}}
  - {at: 3h30m, failPod: {namePrefix: js-}}
  - {at: 4h, suspend: {kind: JobSet, namespace: team-a, name: js}}
  - {at: 5h, resume: {kind: TrainJob, name: tj}}
  - {at: 6h, delete: {kind: Job, name: a}}
  - {at: 7h, delete: {apiVersion: example.com/v1, kind: Widget, name: w}}
"""


def _write(tmp_path: Path, scenario: str, files: dict[str, str] | None = None) -> str:
    for name, text in (files if files is not None else {"team-a.yaml": TEAM_A}).items():
        (tmp_path / name).write_text(dedent(text))
    path = tmp_path / "scenario.yaml"
    path.write_text(dedent(scenario))
    return str(path)


def test_valid_scenario_model(tmp_path: Path) -> None:
    inputs = load_inputs([_write(tmp_path, VALID)], None)
    assert table(inputs.diagnostics) == []
    scenario = inputs.scenario
    assert scenario is not None
    assert inputs.name == "two-teams"
    assert scenario.kubernetes_version == "1.36"
    assert scenario.feature_gates == {"WorkloadWithJob": True}
    assert scenario.until == 86400.0
    gpu, cpu = scenario.nodes
    assert (gpu.name, gpu.count, gpu.topology_offset) == ("gpu", 16, 0)
    assert gpu.topology == (TopologyLevel("topology.example.com/block", 2), TopologyLevel("topology.example.com/rack", 4))
    assert gpu.taints == ({"key": "gpu", "value": "true", "effect": "NoSchedule"},)
    assert gpu.capacity == {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8", "pods": "110"}
    # A pool without count is one node; without pods capacity it gets kubelet's default 110.
    assert (cpu.count, cpu.capacity, cpu.topology_offset) == (1, {"cpu": "32", "pods": "110"}, 8)
    assert [(s.at, [r.obj["metadata"]["name"] for r in s.records]) for s in inputs.submissions] == [
        (0.0, ["a"]), (1800.0, ["settings"])]
    # Inline objects keep their position in the Scenario file.
    inline = inputs.submissions[1].records[0]
    assert (inline.file, inline.position(())) == (scenario.file, (24, 7))
    described = [(a.at, a.describe()) for a in scenario.actions]
    assert described == [
        (7200.0, "failNode gpu-3"),
        (10800.0, 'failPod pod "default/js-workers-0-0"'),
        (12600.0, 'failPod pod with name prefix "default/js-"'),
        (14400.0, "suspend JobSet team-a/js"),
        (18000.0, "resume TrainJob default/tj"),
        (21600.0, "delete Job default/a"),
        (25200.0, "delete Widget default/w"),
    ]
    assert scenario.actions[6].target is not None and scenario.actions[6].target.group == "example.com"


def test_plain_manifests_are_submitted_at_zero_and_named_after_the_first_file(tmp_path: Path) -> None:
    (tmp_path / "team-a.yaml").write_text(TEAM_A)
    inputs = load_inputs([str(tmp_path / "team-a.yaml")], None)
    assert inputs.scenario is None
    assert inputs.name == "team-a"
    assert [(s.at, len(s.records)) for s in inputs.submissions] == [(0.0, 1)]


# (description, replacement applied to VALID, expected (line, column, rule) rows)
ERROR_CASES = [
    ("unknown top-level key", ("kind: Scenario\n", "kind: Scenario\nstatus: {}\n"),
     [(3, 1, "scenario-unknown-field")]),
    ("unknown key in a pool", ("    count: 16\n", "    count: 16\n    cout: 3\n"),
     [(11, 5, "scenario-unknown-field")]),
    ("unknown key in spec", ("  until: 24h\n", "  until: 24h\n  speed: 2\n"),
     [(8, 3, "scenario-unknown-field")]),
    ("until negative", ("until: 24h", "until: -1h"), [(7, 3, "scenario-invalid-duration")]),
    ("until without a unit", ("until: 24h", "until: 24 hours"), [(7, 3, "scenario-invalid-duration")]),
    ("at negative", ("{at: 2h, failNode", "{at: -2h, failNode"), [(26, 6, "scenario-invalid-duration")]),
    ("at missing", ("{at: 2h, failNode", "{failNode"), [(26, 5, "scenario-required")]),
    ("count negative", ("count: 16", "count: -1"), [(10, 5, "scenario-invalid-value")]),
    ("count not an integer", ("count: 16", "count: many"), [(10, 5, "scenario-invalid-type")]),
    ("nodes not a list", ("  nodes:\n  - name: gpu\n", "  nodes: {}\n  x:\n  - name: gpu\n"),
     [(8, 3, "scenario-invalid-type"), (9, 3, "scenario-unknown-field")]),
    ("topology count zero", ("{key: topology.example.com/rack, count: 4}", "{key: topology.example.com/rack, count: 0}"),
     [(16, 40, "scenario-invalid-value")]),
    ("topology key invalid", ("{key: topology.example.com/rack, count: 4}", "{key: 'bad key', count: 4}"),
     [(16, 8, "scenario-invalid-value")]),
    ("bad quantity", ('memory: 512Gi', 'memory: 512GB'), [(11, 27, "scenario-invalid-value")]),
    ("bad taint effect", ("effect: NoSchedule", "effect: Never"), [(13, 40, "scenario-invalid-value")]),
    ("duplicate pool", ("  - name: cpu\n", "  - name: gpu\n"), [(17, 5, "scenario-duplicate-node")]),
    ("pool name invalid", ("  - name: cpu\n", "  - name: CPU_pool\n"), [(17, 5, "scenario-invalid-value")]),
    ("missing file", ("files: [team-a.yaml]", "files: [team-b.yaml]"), [(21, 22, "scenario-missing-file")]),
    ("submission without files or objects", ("{at: 0s, files: [team-a.yaml]}", "{at: 0s}"),
     [(21, 5, "scenario-required")]),
    ("inline object without kind", ("{apiVersion: v1, kind: ConfigMap, metadata: {name: settings}}",
                                    "{apiVersion: v1, metadata: {name: settings}}"),
     [(24, 7, "missing-api-version-or-kind")]),
    ("two verbs", ("{at: 2h, failNode: gpu-3}", "{at: 2h, failNode: gpu-3, delete: {kind: Job, name: a}}"),
     [(26, 5, "scenario-invalid-action")]),
    ("no verb", ("{at: 2h, failNode: gpu-3}", "{at: 2h}"), [(26, 5, "scenario-invalid-action")]),
    ("failPod with name and prefix", ("{namespace: default, name: js-workers-0-0}",
                                      "{name: js-workers-0-0, namePrefix: js}"), [(27, 14, "scenario-invalid-action")]),
    ("suspend a Pod", ("suspend: {kind: JobSet", "suspend: {kind: Pod"), [(29, 24, "scenario-invalid-value")]),
    ("delete an unknown kind without apiVersion", ("{apiVersion: example.com/v1, kind: Widget, name: w}",
                                                   "{kind: Widget, name: w}"), [(32, 23, "scenario-invalid-value")]),
    ("object target without name", ("{kind: Job, name: a}", "{kind: Job}"), [(31, 14, "scenario-required")]),
    ("wrong apiVersion", ("apiVersion: jobsetctl.dev/v1alpha1", "apiVersion: jobsetctl.dev/v2"),
     [(1, 1, "scenario-api-version")]),
    ("unquoted version", ('kubernetesVersion: "1.36"', "kubernetesVersion: 1.30"), [(5, 3, "scenario-invalid-type")]),
    ("YAML error", ("  until: 24h\n", "  until: [24h\n"), [(8, 8, "yaml-syntax")]),
    ("label value invalid", ("{cloud.example.com/pool: gpu}", "{cloud.example.com/pool: 'a b'}"),
     [(12, 14, "scenario-invalid-value")]),
]


@pytest.mark.parametrize(("replace", "expected"), [c[1:] for c in ERROR_CASES], ids=[c[0] for c in ERROR_CASES])
def test_scenario_errors(tmp_path: Path, replace: tuple[str, str], expected: list[tuple[int, int, str]]) -> None:
    old, new = replace
    assert old in VALID
    inputs = load_inputs([_write(tmp_path, VALID.replace(old, new, 1))], None)
    assert table(inputs.diagnostics) == expected
    assert inputs.errors == len(expected)


def test_second_scenario_is_an_error(tmp_path: Path) -> None:
    first = _write(tmp_path, VALID)
    second = tmp_path / "other.yaml"
    second.write_text("apiVersion: jobsetctl.dev/v1alpha1\nkind: Scenario\nspec: {}\n")
    inputs = load_inputs([first, str(second)], None)
    assert [(d.file, d.line, d.column, d.rule) for d in inputs.diagnostics] == [
        (str(second), 1, 1, "scenario-multiple")]


def test_unreadable_input_is_reported_like_validate(tmp_path: Path) -> None:
    inputs = load_inputs([str(tmp_path / "nope.yaml")], None)
    assert [(d.line, d.column, d.rule) for d in inputs.diagnostics] == [(1, 1, "input-unreadable")]


def test_nodes_file_must_hold_nodes(tmp_path: Path) -> None:
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(dedent("""\
        apiVersion: v1
        kind: List
        items:
        - {apiVersion: v1, kind: Node, metadata: {name: n1}}
        - {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}
        """))
    (tmp_path / "team-a.yaml").write_text(TEAM_A)
    inputs = load_inputs([str(tmp_path / "team-a.yaml")], str(nodes))
    assert table(inputs.diagnostics) == [(5, 20, "scenario-nodes-file")]
    assert [r.obj["metadata"]["name"] for r in inputs.node_records] == ["n1"]


def test_node_defined_twice(tmp_path: Path) -> None:
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text("apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-3\n")
    inputs = load_inputs([_write(tmp_path, VALID)], str(nodes))
    assert table(inputs.diagnostics) == [(4, 3, "scenario-duplicate-node")]


def test_missing_nodes_file_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "team-a.yaml").write_text(TEAM_A)
    with pytest.raises(UsageError, match=r"--nodes: .*no such file"):
        load_inputs([str(tmp_path / "team-a.yaml")], str(tmp_path / "missing.yaml"))


def test_no_input_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="no input"):
        load_inputs([], None)


def test_error_messages(tmp_path: Path) -> None:
    text = (VALID.replace("    count: 16\n", "    count: 16\n    cout: 3\n")
            .replace("until: 24h", "until: -1h")
            .replace("{at: 2h, failNode: gpu-3}", "{at: 2h}")
            .replace("effect: NoSchedule", "effect: Never"))
    inputs = load_inputs([_write(tmp_path, text)], None)
    assert [(d.rule, d.message, d.path) for d in inputs.diagnostics] == [
        ("scenario-invalid-duration", 'spec.until: invalid duration "-1h": must not be negative', "spec.until"),
        ("scenario-unknown-field", 'unknown field "spec.nodes[0].cout"', "spec.nodes[0].cout"),
        ("scenario-invalid-value", 'spec.nodes[0].taints[0].effect: Unsupported value: "Never": supported values: '
         '"NoSchedule", "PreferNoSchedule", "NoExecute"', "spec.nodes[0].taints[0].effect"),
        ("scenario-invalid-action", "spec.actions[0]: an action needs exactly one of failNode, failPod, suspend, "
         "resume, delete, patch (found none)", "spec.actions[0]"),
    ]
