"""Issue 10, "Outputs that tell the truth": each trap a new user met, reproduced through the real command.

Width in pipes, names that stay distinguishable, bars that show the state over time, marks that stay
visible, node failures, an axis that ends when the work does, a verdict for what never started (and
``--fail-if-pending``), and the HTML page.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from jobsetctl.cli.app import run
from jobsetctl.simulate.chartstyle import STATES
from jobsetctl.simulate.command import PIPE_WIDTH, output_width
from tests.helpers import SAMPLES
from tests.simulate.harness import load, run_json, write_scenario

TWO_TEAMS = str(SAMPLES / "scenarios" / "two-teams.yaml")
NODE_FAILURE = str(SAMPLES / "scenarios" / "node-failure.yaml")
LLAMA = "llama3-70b-lora-exp-0042-trainer"

#: 4 nodes of 8 GPUs, 2 racks of 16 GPUs; a 4-pod gang of 8 GPUs each that must sit in one rack (32 GPUs),
#: and a small Job that runs. The gang never fits.
NEVER_FITS = f"""\
apiVersion: jobsetctl.dev/v1alpha1
kind: Scenario
metadata: {{name: never-fits}}
spec:
  kubernetesVersion: "1.37"
  nodes:
  - name: gpu
    count: 4
    capacity: {{cpu: "64", memory: 512Gi, nvidia.com/gpu: "8"}}
    topology:
    - {{key: topology.example.com/rack, count: 2}}
  submit:
  - at: 0s
    objects:
    - apiVersion: scheduling.k8s.io/v1alpha2
      kind: PodGroup
      metadata: {{name: big-workers}}
      spec:
        schedulingPolicy:
          gang: {{minCount: 4}}
        schedulingConstraints:
          topology: [{{key: topology.example.com/rack}}]
    - apiVersion: jobset.x-k8s.io/v1alpha2
      kind: JobSet
      metadata: {{name: {LLAMA}}}
      spec:
        replicatedJobs:
        - name: worker-a
          replicas: 1
          template: &job
            spec:
              completions: 2
              parallelism: 2
              completionMode: Indexed
              template:
                metadata:
                  annotations: {{jobsetctl.dev/duration: 1h}}
                spec:
                  schedulingGroup: {{podGroupName: big-workers}}
                  containers:
                  - {{name: w, image: busybox, resources: {{limits: {{nvidia.com/gpu: "8"}}}}}}
        - name: worker-b
          replicas: 1
          template: *job
    - apiVersion: batch/v1
      kind: Job
      metadata: {{name: small}}
      spec:
        template:
          metadata:
            annotations: {{jobsetctl.dev/duration: 30m}}
          spec:
            restartPolicy: Never
            containers:
            - {{name: s, image: busybox, resources: {{limits: {{nvidia.com/gpu: "8"}}}}}}
"""
NEVER_FITS_REASON = ("gang 2/4 placeable: 2 pods Insufficient nvidia.com/gpu in rack-0 · never fits this cluster: "
                     "the largest rack holds 16 GPUs, the gang needs 32 GPUs")


def _job(name: str, gpus: int, duration: str = "1h", extra: str = "") -> str:
    return f"""\
    - apiVersion: batch/v1
      kind: Job
      metadata: {{name: {name}}}
      spec:
        template:
          metadata:
            annotations: {{jobsetctl.dev/duration: {duration}}}
          spec:
            restartPolicy: Never
            containers:
            - {{name: c, image: busybox, resources: {{limits: {{nvidia.com/gpu: "{gpus}"}}}}}}{extra}
"""


def _jobs_scenario(jobs: str, nodes: int = 1, until: str = "", actions: str = "") -> str:
    return (f"apiVersion: jobsetctl.dev/v1alpha1\nkind: Scenario\nmetadata: {{name: jobs}}\nspec:\n{until}"
            f"  nodes:\n  - {{name: gpu, count: {nodes}, capacity: {{cpu: \"8\", memory: 64Gi, nvidia.com/gpu: \"8\"}}}}\n"
            f"  submit:\n  - at: 0s\n    objects:\n{jobs}{actions}")


def _text(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    status = run(["simulate", *args])
    return status, capsys.readouterr().out.splitlines()


def _chart(lines: list[str]) -> list[str]:
    """The chart's table: its heading and one line per row (not the legend under it)."""
    start = next(i for i, line in enumerate(lines) if line.startswith("workload / job"))
    legend = tuple(f"{style.char} " for style in STATES.values())
    end = next(i for i, line in enumerate(lines) if i > start and (not line.strip() or line.startswith(legend)))
    return lines[start:end]


def _rows(lines: list[str]) -> list[tuple[str, str, str]]:
    """(label, bars, state and note) per chart row: the axis' "0" is where the bars start."""
    chart = _chart(lines)
    bars_at = chart[0].index(" 0 ") + 1
    bars_end = chart[0].rindex("  state")
    return [(line[:bars_at].rstrip(), line[bars_at:bars_end], line[bars_end:].strip()) for line in chart[1:]]


# ---- width --------------------------------------------------------------------------------------------


def test_output_width_rules() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert output_width(None, io.StringIO(), {}) == PIPE_WIDTH == 120
    assert output_width(None, io.StringIO(), {"COLUMNS": "90"}) == 90
    assert output_width(None, io.StringIO(), {"COLUMNS": "wide"}) == 120
    assert output_width(150, io.StringIO(), {"COLUMNS": "90"}) == 150
    assert output_width(None, Tty(), {"COLUMNS": "77"}) == 77


def test_a_pipe_gets_a_readable_width(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The trap: in CI logs and ``| less`` the chart had 7 bar columns and headings read ``Comp…``."""
    monkeypatch.delenv("COLUMNS", raising=False)
    status, lines = _text([TWO_TEAMS], capsys)
    assert status == 0
    chart = _chart(lines)
    assert max(len(line) for line in chart) == 120
    assert chart[1].startswith("JobSet team-a/team-a-train  ") and chart[1].count("█") >= 50
    heading = next(line for line in lines if line.startswith("workload ") and "submitted" in line)
    assert heading.split() == ["workload", "state", "submitted", "to", "admission", "queueing", "finished",
                               "preempt.", "restarts", "GPU-h"]
    assert "…" not in "\n".join(lines[lines.index("Summary"):])
    assert any(line.startswith("JobSet team-a/team-a-train       Completed") for line in lines)


@pytest.mark.parametrize(("columns", "args", "width"), [("100", [], 100), ("100", ["--width", "140"], 140)])
def test_columns_and_width_option(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                  columns: str, args: list[str], width: int) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    status, lines = _text([NODE_FAILURE, *args], capsys)
    assert status == 0 and max(len(line) for line in _chart(lines)) == width


def test_width_below_40_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["simulate", NODE_FAILURE, "--width", "20"]) == 2
    capsys.readouterr()


# ---- labels -------------------------------------------------------------------------------------------


def test_long_names_stay_distinguishable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_scenario(tmp_path, NEVER_FITS)
    status, lines = _text([str(path), "--width", "100", "--svg", str(tmp_path / "c.svg")], capsys)
    assert status == 0
    labels = [label for label, _, _ in _rows(lines)]
    assert labels == ["JobSet default/llam…trainer", "  …-worker-a-0", "  …-worker-b-0", "Job default/small"]
    svg = (tmp_path / "c.svg").read_text()
    assert ">  …-worker-a-0<" in svg and ">  …-worker-b-0<" in svg


def test_plain_job_rows_show_kind_and_namespace(capsys: pytest.CaptureFixture[str]) -> None:
    _, lines = _text([TWO_TEAMS, "--width", "120"], capsys)
    labels = [label for label, _, _ in _rows(lines)]
    assert labels == ["JobSet team-a/team-a-train", "  team-a-train-driver-0", "  team-a-train-workers-0",
                      "  team-a-train-workers-1", "TrainJob team-b/team-b-finetune", "  team-b-finetune-node-0",
                      "Job team-a/nightly-eval", "Job team-b/scratch", "Node gpu-3"]


# ---- bars, marks, axis --------------------------------------------------------------------------------


def test_two_teams_chart_tells_the_story(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Every bar is the state over time; outcomes are end marks; the failed node has a row; the axis ends
    at 4h30m, when the last workload ended, although the Scenario's until is 12h."""
    monkeypatch.setenv("COLUMNS", "120")
    _, lines = _text([TWO_TEAMS], capsys)
    chart = _chart(lines)
    assert chart[0].split() == ["workload", "/", "job", "0", "1h", "2h", "3h", "4h", "state"]
    rows = {label.strip(): (bars, state) for label, bars, state in _rows(lines)}
    assert rows["TrainJob team-b/team-b-finetune"][0].count("▒") >= 5  # suspended 2h-2h30m
    assert "xR" in rows["team-a-train-workers-0"][0]  # pod failed and restart at one instant: both shown
    assert rows["Job team-a/nightly-eval"][0].rstrip().endswith("x██████████✓")  # a pod failed, then done
    assert rows["Job team-a/nightly-eval"][1] == "done"
    assert rows["Job team-b/scratch"][0].rstrip().endswith("D") and rows["Job team-b/scratch"][1] == "deleted"
    assert rows["Node gpu-3"][0].strip().startswith("N▚▚") and rows["Node gpu-3"][0].endswith("▚")
    assert rows["Node gpu-3"][1] == "down"
    assert all(bars.rstrip().endswith("✓") for label, (bars, _) in rows.items() if label.startswith("JobSet"))
    after = lines[len(chart) + lines.index(chart[0]):]
    assert after[:2] == [
        "█ running  ▒ suspended  ▚ node down  R restart  x pod failed  N node failed  ✓ done  D deleted",
        "the chart ends at 4h30m, when the last workload ended; the run went on to 12h (give --until to draw it all)",
    ]


def test_until_on_the_command_line_draws_the_whole_run(capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    _, lines = _text([TWO_TEAMS, "--until", "12h"], capsys)
    assert _chart(lines)[0].split()[-2:] == ["12h", "state"]
    assert not any(line.startswith("the chart ends at") for line in lines)


def test_a_partly_bound_gang_is_drawn_partly_running(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A gang of 3 with minCount 2 on 2 nodes: 2 pods bind, the third waits; once the two are done the
    third can never reach minCount alone and waits (gang 1/2)."""
    path = write_scenario(tmp_path, """\
        apiVersion: jobsetctl.dev/v1alpha1
        kind: Scenario
        metadata: {name: partial}
        spec:
          kubernetesVersion: "1.37"
          nodes:
          - {name: gpu, count: 2, capacity: {cpu: "8", memory: 64Gi, nvidia.com/gpu: "8"}}
          submit:
          - at: 0s
            objects:
            - apiVersion: scheduling.k8s.io/v1alpha2
              kind: PodGroup
              metadata: {name: trio}
              spec:
                schedulingPolicy:
                  gang: {minCount: 2}
            - apiVersion: batch/v1
              kind: Job
              metadata: {name: trio}
              spec:
                parallelism: 3
                completions: 3
                completionMode: Indexed
                template:
                  metadata:
                    annotations: {jobsetctl.dev/duration: 1h}
                  spec:
                    restartPolicy: Never
                    schedulingGroup: {podGroupName: trio}
                    containers:
                    - {name: c, image: busybox, resources: {limits: {nvidia.com/gpu: "8"}}}
        """)
    status, lines = _text([str(path), "--width", "100"], capsys)
    assert status == 0
    ((label, bars, rest),) = _rows(lines)
    assert (label, set(bars)) == ("Job default/trio", {"▄"})
    assert rest.split()[:2] == ["waiting", "gang"]  # it ended waiting, and says why


def test_a_job_that_never_started_is_not_running(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_scenario(tmp_path, NEVER_FITS)
    text, _ = run_json(path)
    workloads = load(text)["summary"]["workloads"]
    assert [(w["name"], w["state"]) for w in workloads] == [(LLAMA, "Pending"), ("small", "Completed")]
    status, lines = _text([str(path), "--width", "120"], capsys)
    assert status == 0
    assert [(set(bars), rest.split()[0]) for _, bars, rest in _rows(lines)] == [
        ({"░"}, "waiting"), ({"░"}, "waiting"), ({"░"}, "waiting"), ({"█", "✓"}, "done")]
    assert any(line.startswith("JobSet default/") and line.split()[2] == "Pending" for line in lines)


# ---- never started: the verdict ------------------------------------------------------------------------


def test_a_workload_that_never_fits_gets_a_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_scenario(tmp_path, NEVER_FITS)
    status, lines = _text([str(path)], capsys)
    assert status == 0  # a pending workload alone is no error ...
    assert lines[lines.index("Never started (1)") + 1] == f"  JobSet default/{LLAMA}  {NEVER_FITS_REASON}"
    assert run(["simulate", str(path), "--fail-if-pending"]) == 1  # ... unless CI asks
    capsys.readouterr()
    text, outcome = run_json(path)
    assert [v.reason for v in outcome.never_started] == [NEVER_FITS_REASON]
    workloads = load(text)["summary"]["workloads"]
    assert workloads[0]["neverStarted"] == {"reason": NEVER_FITS_REASON, "fitsCluster": False}
    assert "neverStarted" not in workloads[1]


def test_the_readme_shows_the_verdict_as_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    readme = (SAMPLES.parent / "README.md").read_text(encoding="utf-8")
    _, lines = _text([str(write_scenario(tmp_path, NEVER_FITS))], capsys)
    start = lines.index("Never started (1)")
    assert "```text\n" + "\n".join(lines[start:start + 2]) + "\n```" in readme


def test_fail_if_pending_passes_when_everything_started(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["simulate", NODE_FAILURE, "--fail-if-pending"]) == 0
    capsys.readouterr()


def test_a_workload_that_waited_for_capacity_fits_alone(tmp_path: Path) -> None:
    path = write_scenario(tmp_path, _jobs_scenario(_job("first", 8, "10h") + _job("second", 8), until="  until: 2h\n"))
    text, outcome = run_json(path)
    (verdict,) = outcome.never_started
    assert verdict.fits is True
    assert verdict.reason == ("0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are "
                              "available: 1 No preemption victims found for incoming pod. · fits this cluster alone: "
                              "waited for capacity other workloads held")
    assert load(text)["summary"]["workloads"][1]["neverStarted"]["fitsCluster"] is True


def test_each_workload_is_tried_alone(tmp_path: Path) -> None:
    """Two workloads waiting behind a third: each fits the empty cluster on its own (the trial cluster is
    emptied between them), although not both at once."""
    jobs = _job("first", 8, "10h") + _job("second", 8) + _job("third", 8)
    _, outcome = run_json(write_scenario(tmp_path, _jobs_scenario(jobs, until="  until: 2h\n")))
    assert [(v.workload[2], v.fits) for v in outcome.never_started] == [("second", True), ("third", True)]


def test_a_pod_larger_than_every_node_never_fits(tmp_path: Path) -> None:
    _, outcome = run_json(write_scenario(tmp_path, _jobs_scenario(_job("huge", 16), nodes=2)))
    (verdict,) = outcome.never_started
    assert verdict.reason.endswith(
        " · never fits this cluster: the largest node it may use has 8 GPUs, its pod needs 16 GPUs")
    assert verdict.reason.startswith("0/2 nodes are available: 2 Insufficient nvidia.com/gpu.")


def test_a_tainted_cluster_never_takes_an_intolerant_pod(tmp_path: Path) -> None:
    text = _jobs_scenario(_job("plain", 1)).replace(
        'nvidia.com/gpu: "8"}}', 'nvidia.com/gpu: "8"}, taints: [{key: gpu, effect: NoSchedule}]}')
    _, outcome = run_json(write_scenario(tmp_path, text))
    (verdict,) = outcome.never_started
    assert verdict.reason.endswith(" · never fits this cluster: no node accepts its pods (taints, node selector "
                                   "or affinity, unschedulable nodes)")


def test_the_verdict_says_when_nodes_were_lost(tmp_path: Path) -> None:
    """A gang of two 8-GPU pods on two 8-GPU nodes, submitted after one of them failed."""
    group = ("    - apiVersion: scheduling.k8s.io/v1alpha2\n      kind: PodGroup\n      metadata: {name: pair}\n"
             "      spec: {schedulingPolicy: {gang: {minCount: 2}}}\n")
    job = _job("pair", 8, extra="\n            schedulingGroup: {podGroupName: pair}").replace(
        "spec:\n        template:", "spec:\n        parallelism: 2\n        completions: 2\n        template:")
    text = _jobs_scenario(group + job, nodes=2, actions="  actions:\n  - {at: 0s, failNode: gpu-1}\n")
    text = text.replace('spec:\n  nodes:', 'spec:\n  kubernetesVersion: "1.37"\n  nodes:')
    text = text.replace("  - at: 0s\n    objects:", "  - at: 1m\n    objects:")
    _, outcome = run_json(write_scenario(tmp_path, text))
    (verdict,) = outcome.never_started
    assert verdict.lost_nodes == ("gpu-1",) and verdict.fits is False
    assert verdict.reason.endswith(" · never fits the nodes left after gpu-1 failed: the nodes its pods may use "
                                   "hold 8 GPUs in all, the gang needs 16 GPUs")


def test_a_suspended_workload_is_said_to_be_suspended(tmp_path: Path) -> None:
    text = _jobs_scenario(_job("held", 1).replace("spec:\n        template:", "spec:\n        suspend: true\n"
                                                  "        template:"))
    text_out, outcome = run_json(write_scenario(tmp_path, text))
    assert [v.reason for v in outcome.never_started] == ["suspended"]
    assert load(text_out)["summary"]["workloads"][0]["state"] == "Suspended"


# ---- the HTML page ------------------------------------------------------------------------------------


def test_html_page_has_one_title_human_times_and_the_events(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    html = tmp_path / "two-teams.html"
    assert run(["simulate", TWO_TEAMS, "--html", str(html)]) == 0
    capsys.readouterr()
    page = html.read_text()
    assert page.count("<h1>") == 1 and page.count("<title>jobsetctl") == 1  # the picture has no title of its own
    assert '<p class="run">Kubernetes 1.37 · 20 nodes · seed 0 · end 12h (until)</p>' in page
    assert "43200" not in page and "s</text>" not in page.replace("0s</text>", "")
    assert "<h2>Events</h2>" in page
    assert ('<tr><td>1h</td><td>Node gpu-3</td><td class="bad">Failed</td>'
            '<td class="detail">NodeStatusUnknown: Kubelet stopped posting node status.</td></tr>') in page
    never = tmp_path / "never.html"
    assert run(["simulate", str(write_scenario(tmp_path, NEVER_FITS)), "--html", str(never)]) == 0
    capsys.readouterr()
    assert (f"<h2>Never started (1)</h2>\n<ul class=\"never-started\">\n<li><b>JobSet default/{LLAMA}</b>: "
            f"{NEVER_FITS_REASON}</li>") in never.read_text()
