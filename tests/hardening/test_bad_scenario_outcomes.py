"""Scenarios that run but cannot do what they say (issue #6, phase 2): the simulated outcome explains
itself, in the events and the chart, with the documented exit status, and the run ends by itself.

Actions on objects that never exist, a cyclic ``dependsOn``, a gang that can never fit, a cluster of
zero nodes, ``until: 0s`` with work after it, a file submitted twice, an empty input. Each runs through
the real command line in-process (``simulate`` and, where it applies, ``render`` and ``validate``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jobsetctl.status import ExitStatus
from tests.hardening.cli_runs import JOB, cli
from tests.hardening.harness import Outcome, assert_sane
from tests.helpers import dedent

Capsys = pytest.CaptureFixture[str]


def write(tmp_path: Path, text: str, name: str = "scenario.yaml") -> Path:
    (tmp_path / "job.yaml").write_text(JOB)
    path = tmp_path / name
    path.write_text(dedent(text))
    return path


def simulate(capsys: Capsys, *args: str) -> Outcome:
    outcome = cli(["simulate", *args], capsys)
    assert_sane(outcome)
    return outcome


def events(outcome: Outcome, event: str | None = None) -> list[tuple[Any, ...]]:
    document = json.loads(outcome.stdout)
    return [(e["time"], e["kind"], e["namespace"], e["name"], e.get("reason"), e.get("message"))
            for e in document["events"] if event is None or e["event"] == event]


def log_lines(outcome: Outcome) -> list[str]:
    """The text output's Events section."""
    lines = outcome.stdout.splitlines()
    start = lines.index("Events") + 1
    return lines[start:lines.index("Summary", start) - 1]


ACTIONS = """\
apiVersion: jobsetctl.dev/v1alpha1
kind: Scenario
metadata: {name: ghosts}
spec:
  nodes:
  - {name: node, count: 2, capacity: {cpu: "4"}}
  submit:
  - {at: 0s, files: [job.yaml]}
  actions:
  - {at: 1m, failNode: ghost}
  - {at: 2m, failPod: {name: nobody}}
  - {at: 3m, failPod: {namespace: team, namePrefix: nobody-}}
  - {at: 4m, delete: {kind: JobSet, name: nothing}}
  - {at: 5m, suspend: {kind: TrainJob, namespace: ns, name: nothing}}
  - {at: 6m, resume: {kind: Job, name: nothing}}
  - {at: 7m, delete: {apiVersion: example.com/v1, kind: Gadget, name: nothing}}
  - {at: 8m, failNode: node-1}
"""


def test_actions_on_objects_that_never_exist_say_so_and_fail_the_run(tmp_path: Path, capsys: Capsys) -> None:
    path = write(tmp_path, ACTIONS)
    outcome = simulate(capsys, str(path))
    assert outcome.status == ExitStatus.FINDINGS and outcome.stderr == ""
    lines = log_lines(outcome)
    assert lines[:7] == [
        "        1m  Node ghost Rejected  NotFound: failNode ghost at 1m: Node ghost never existed; the action was skipped",
        '        2m  Pod default/nobody Rejected  NotFound: failPod pod "default/nobody" at 2m: no running pod matches in '
        "namespace 'default'; the action was skipped",
        '        3m  Pod team/nobody-* Rejected  NotFound: failPod pod with name prefix "team/nobody-" at 3m: no running '
        "pod matches in namespace 'team'; the action was skipped",
        "        4m  JobSet default/nothing Rejected  NotFound: delete JobSet default/nothing at 4m: JobSet default/nothing "
        "never existed; the action was skipped",
        "        5m  TrainJob ns/nothing Rejected  NotFound: suspend TrainJob ns/nothing at 5m: TrainJob ns/nothing never "
        "existed; the action was skipped",
        "        6m  Job default/nothing Rejected  NotFound: resume Job default/nothing at 6m: Job default/nothing never "
        "existed; the action was skipped",
        "        7m  Gadget default/nothing Rejected  NotFound: delete Gadget default/nothing at 7m: Gadget default/nothing "
        "never existed; the action was skipped",
    ]
    # The one action whose target exists does what it says.
    assert "        8m  Node node-1 Failed  NodeStatusUnknown: Kubelet stopped posting node status." in lines[7:]
    assert "rejected 7" in outcome.stdout


def test_cyclic_depends_on_is_refused_by_all_three_commands_at_the_same_place(tmp_path: Path, capsys: Capsys) -> None:
    path = tmp_path / "cycle.yaml"
    path.write_text(dedent("""\
        apiVersion: jobset.x-k8s.io/v1alpha2
        kind: JobSet
        metadata: {name: cycle}
        spec:
          replicatedJobs:
          - name: a
            dependsOn: [{name: b, status: Ready}]
            template: {spec: {template: {spec: {containers: [{name: a, image: busybox}]}}}}
          - name: b
            dependsOn: [{name: a, status: Ready}]
            template: {spec: {template: {spec: {containers: [{name: b, image: busybox}]}}}}
        """))
    expected = [
        ("jobset-depends-on-first", 7, 5, "<nil>: Internal error: DependsOn can't be set for the first ReplicatedJob"),
        ("jobset-depends-on-order", 7, 18, "<nil>: Internal error: replicatedJob: a cannot depend on replicatedJob: b"),
    ]
    checked = cli(["validate", "-o", "json", str(path)], capsys)
    assert checked.status == ExitStatus.FINDINGS
    assert [(d["rule"], d["line"], d["column"], d["message"]) for d in checked.diagnostics] == expected
    text = cli(["validate", str(path)], capsys)

    rendered = cli(["render", str(path)], capsys)
    assert rendered.status == ExitStatus.FINDINGS and rendered.stdout == ""
    assert rendered.stderr == text.stdout

    # simulate submits it as kubectl would: the API server refuses it with the same errors, placed in the file.
    outcome = simulate(capsys, str(path))
    assert outcome.status == ExitStatus.FINDINGS
    assert log_lines(outcome) == [
        "        0s  JobSet default/cycle Rejected  Invalid: [" + ", ".join(m for *_, m in expected) + "]",
        *(f"  {path}:{line}:{column}: {message} [webhook/{rule}]" for rule, line, column, message in expected),
    ]
    assert "no workloads ran" in outcome.stdout and "rejected 1" in outcome.stdout


GANG = """\
apiVersion: jobsetctl.dev/v1alpha1
kind: Scenario
metadata: {name: gang}
spec:
  kubernetesVersion: "1.36"
  nodes:
  - {name: node, count: 2, capacity: {cpu: "4", memory: 16Gi}}
  submit:
  - at: 0s
    objects:
    - apiVersion: scheduling.k8s.io/v1alpha2
      kind: PodGroup
      metadata: {name: pg}
      spec:
        schedulingPolicy: {gang: {minCount: 3}}
    - apiVersion: batch/v1
      kind: Job
      metadata: {name: g}
      spec:
        parallelism: 3
        completions: 3
        completionMode: Indexed
        template:
          metadata: {annotations: {jobsetctl.dev/duration: 5m}}
          spec:
            restartPolicy: Never
            schedulingGroup: {podGroupName: pg}
            containers: [{name: c, image: x, resources: {requests: {cpu: "3"}}}]
"""


def test_a_gang_that_can_never_fit_waits_says_why_and_the_run_ends(tmp_path: Path, capsys: Capsys) -> None:
    """Three pods of 3 CPUs, two nodes of 4: two fit, the gang needs all three."""
    path = write(tmp_path, GANG)
    outcome = simulate(capsys, "-o", "json", str(path))
    assert outcome.status == ExitStatus.SUCCESS
    document = json.loads(outcome.stdout)
    summary = document["summary"]
    assert summary["stopReason"] == "done" and document["endTime"] == 0
    [gang] = summary["gangs"]
    assert (gang["name"], gang["placeable"], gang["minCount"], gang["admittedAt"], gang["waiting"]) == (
        "pg", 2, 3, None, "gang 2/3 placeable: 1 pods Insufficient cpu")
    # The event carries upstream's status; the explanation above is the chart's note.
    assert ("PodGroup", "pg", "Unschedulable", "pod group is unschedulable") in [
        (e["kind"], e["name"], e["event"], e.get("message")) for e in document["events"]]
    assert {f["state"] for f in document["final"] if f["kind"] == "Pod"} == {"Pending"}
    # The chart's row for the Job says why it waits: the gang's reason (regression: a PodGroup written
    # beside the Job has no row of its own, and its reason was lost).
    text = simulate(capsys, "--width", "120", str(path))
    [row] = [line for line in text.stdout.splitlines() if line.startswith("Job default/g ") and "waiting" in line]
    assert "waiting  gang 2/3 placeable: 1 pods Insufficient cpu" in row
    # It never starts, and the summary says it never could (issue 10).
    assert ("  Job default/g  gang 2/3 placeable: 1 pods Insufficient cpu · never fits this cluster: the nodes its "
            "pods may use hold 8 CPUs in all, the gang needs 9 CPUs") in text.stdout.splitlines()


@pytest.mark.parametrize("pools", ["", "  nodes:\n  - {name: none, count: 0}\n"], ids=["no-pool", "empty-pool"])
def test_a_cluster_of_zero_nodes(tmp_path: Path, capsys: Capsys, pools: str) -> None:
    path = write(tmp_path, "apiVersion: jobsetctl.dev/v1alpha1\nkind: Scenario\nmetadata: {name: zero}\nspec:\n"
                 + pools + "  submit:\n  - {at: 0s, files: [job.yaml]}\n")
    outcome = simulate(capsys, "-o", "json", str(path))
    assert outcome.status == ExitStatus.SUCCESS
    document = json.loads(outcome.stdout)
    # kube-scheduler's ErrNoNodesAvailable, the words it uses when the cluster has no node at all.
    assert {(e[1], e[5]) for e in events(outcome, "Unschedulable")} == {("Pod", "no nodes available to schedule pods")}
    assert document["summary"]["stopReason"] == "done" and document["summary"]["nodes"] == 0
    assert [(f["kind"], f["state"]) for f in document["final"]] == [("Job", "Active"), ("Pod", "Pending"), ("Pod", "Pending")]
    chart = simulate(capsys, "--width", "120", str(path)).stdout
    assert "· 0 nodes ·" in chart.splitlines()[0] and "waiting  no nodes available to schedule" in chart
    assert chart.splitlines()[-1] == ("  Job default/j  no nodes available to schedule pods · never fits this "
                                      "cluster: it has no Ready node")


UNTIL_ZERO = """\
apiVersion: jobsetctl.dev/v1alpha1
kind: Scenario
metadata: {name: instant}
spec:
  until: 0s
  nodes:
  - {name: node, count: 2, capacity: {cpu: "4"}}
  submit:
  - {at: 0s, files: [job.yaml]}
  - at: 10m
    files: [job.yaml]
  actions:
  - {at: 0s, failNode: node-0}
  - {at: 1h, failNode: node-1}
"""


def test_until_0s_runs_time_zero_and_warns_about_what_comes_after(tmp_path: Path, capsys: Capsys) -> None:
    path = write(tmp_path, UNTIL_ZERO)
    outcome = simulate(capsys, "-o", "json", str(path))
    assert outcome.status == ExitStatus.SUCCESS
    assert outcome.stderr.splitlines() == [
        f"jobsetctl simulate: warning: {path}:10:5: spec.submit[1] at 10m comes after the end of the run (0s) "
        "and never happens",
        f"jobsetctl simulate: warning: {path}:14:6: spec.actions[1] (failNode node-1) at 1h comes after the end of "
        "the run (0s) and never happens",
    ]
    document = json.loads(outcome.stdout)
    assert document["endTime"] == 0 and document["summary"]["stopReason"] == "until"
    assert {e["time"] for e in document["events"]} == {0}
    assert ("Node", "node-0", "Failed") in [(e["kind"], e["name"], e["event"]) for e in document["events"]]
    # The command line's --until wins, and the warnings follow it.
    later = simulate(capsys, "-o", "json", str(path), "--until", "30m")
    assert later.stderr.splitlines() == [
        f"jobsetctl simulate: warning: {path}:14:6: spec.actions[1] (failNode node-1) at 1h comes after the end of "
        "the run (30m) and never happens"]


def test_a_file_submitted_twice_is_refused_the_second_time(tmp_path: Path, capsys: Capsys) -> None:
    path = write(tmp_path, """\
        apiVersion: jobsetctl.dev/v1alpha1
        kind: Scenario
        spec:
          nodes: [{name: node, count: 1, capacity: {cpu: "4"}}]
          submit:
          - {at: 0s, files: [job.yaml, ./job.yaml]}
        """)
    outcome = simulate(capsys, "-o", "json", str(path))
    assert outcome.status == ExitStatus.FINDINGS
    assert events(outcome, "Rejected") == [(0, "Job", "default", "j", "AlreadyExists", 'jobs.batch "j" already exists')]


def test_an_empty_input_runs_nothing_and_says_so_on_stderr(tmp_path: Path, capsys: Capsys) -> None:
    # Regression: the loader's note (validate prints it) was dropped, and an empty file simulated in silence.
    path = tmp_path / "empty.yaml"
    path.write_text("# nothing yet\n")
    outcome = simulate(capsys, str(path))
    assert outcome.status == ExitStatus.SUCCESS
    assert outcome.stderr.splitlines()[:2] == [str(path), "  1:1  info    file holds no YAML documents  [input/empty-file]"]
    assert "no workloads ran" in outcome.stdout
