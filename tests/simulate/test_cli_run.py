"""``jobsetctl simulate`` runs: exit statuses, the terminal output, and the files it writes."""

from __future__ import annotations

import itertools
import json
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from jobsetctl.cli.app import run
from tests.helpers import SAMPLES
from tests.simulate.harness import assert_golden

NODE_FAILURE = str(SAMPLES / "scenarios" / "node-failure.yaml")


@pytest.mark.parametrize("name", ["node-failure", "two-teams", "gang-topology", "kueue"])
def test_text_output_is_exact(name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``jobsetctl simulate samples/scenarios/NAME.yaml | less`` shows: header, chart, legend, events,
    summary (golden files under ``golden/text/``; ``JOBSETCTL_UPDATE_GOLDEN=1`` rewrites them)."""
    monkeypatch.delenv("COLUMNS", raising=False)
    assert run(["simulate", str(SAMPLES / "scenarios" / f"{name}.yaml")]) == 0
    out = capsys.readouterr().out
    assert "\x1b[" not in out  # no colour codes when stdout is not a terminal
    assert_golden(f"text/{name}.txt", out)


def test_files_are_written_only_when_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace, svg, html = tmp_path / "t.json", tmp_path / "c.svg", tmp_path / "c.html"
    assert run(["simulate", NODE_FAILURE, "-o", "json", "--trace", str(trace), "--svg", str(svg),
                "--html", str(html)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["scenario"] == "node-failure"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.html", "c.svg", "t.json"]
    events = json.loads(trace.read_text())["traceEvents"]
    tracks: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    for event in events:
        if event["ph"] == "X":
            tracks[(event["pid"], event["tid"])].append((event["ts"], event["ts"] + event["dur"]))
    for slices in tracks.values():
        ordered = sorted(slices)
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(ordered))
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {"gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-spare"} <= names
    assert svg.read_text().startswith("<svg") and "<svg" in html.read_text()
    run(["simulate", NODE_FAILURE])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.html", "c.svg", "t.json"]


def test_rejection_during_the_run_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = tmp_path / "bad.yaml"
    manifest.write_text("apiVersion: batch/v1\nkind: Job\nmetadata: {name: Bad}\nspec:\n  template:\n"
                        "    spec: {restartPolicy: Never, containers: [{name: c, image: x}]}\n")
    assert run(["simulate", str(manifest)]) == 1
    out = capsys.readouterr().out
    assert "Job default/Bad Rejected" in out
    assert f"{manifest}:3:12: metadata.name: Invalid value: \"Bad\"" in out
    assert "workload / job" not in out  # a refused object gets no chart row


def test_plain_manifests_with_a_nodes_file(capsys: pytest.CaptureFixture[str]) -> None:
    team_a = str(SAMPLES / "scenarios" / "manifests" / "team-a.yaml")
    nodes = str(SAMPLES / "scenarios" / "manifests" / "nodes.yaml")
    assert run(["simulate", team_a, "--nodes", nodes, "-o", "json", "--until", "6h"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["scenario"], document["endTime"], document["summary"]["stopReason"]) == ("team-a", 21600, "until")
    scheduled = {e["node"] for e in document["events"] if e["event"] == "Scheduled"}
    assert scheduled <= {"ip-10-0-1-11", "ip-10-0-1-12", "ip-10-0-2-21"}
    assert document["summary"]["nodes"] == 3


def test_the_nodes_file_is_read_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The README's pattern: ``simulate manifests/ --nodes manifests/nodes.yaml``."""
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    for name in ("team-a.yaml", "nodes.yaml"):
        shutil.copy(SAMPLES / "scenarios" / "manifests" / name, manifests / name)
    status = run(["simulate", str(manifests), "--nodes", str(manifests / "nodes.yaml"), "-o", "json", "--until", "6h"])
    captured = capsys.readouterr()
    assert status == 0, captured.out
    document = json.loads(captured.out)
    assert document["summary"]["nodes"] == 3 and "already defined" not in captured.err
    nodes = [e["name"] for e in document["events"] if e["kind"] == "Node" and e["event"] == "Created"]
    assert nodes == ["ip-10-0-1-11", "ip-10-0-1-12", "ip-10-0-2-21"]
    # The samples' own directory, as the samples README suggests (it also holds gangs that never fit it).
    samples = SAMPLES / "scenarios" / "manifests"
    assert run(["simulate", str(samples), "--nodes", str(samples / "nodes.yaml"), "-o", "json", "--until", "6h"]) == 0
    assert json.loads(capsys.readouterr().out)["summary"]["nodes"] == 3
