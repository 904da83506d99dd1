"""``jobsetctl render`` end to end: exit statuses, streams, formats, ``--output-dir``, the order of the
output, pods, gates and the stderr summary."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from jobsetctl.cli.app import run as run_cli
from jobsetctl.render.capture import NOTE_ANNOTATION
from tests.helpers import UPSTREAM, dedent, requires_upstream
from tests.render.support import INPUTS, render_cli

TRAINING = INPUTS / "training.yaml"
SUFFIX = "[bcdfghjklmnpqrstvwxz2456789]{5}"


def write(tmp_path: Path, text: str, name: str = "input.yaml") -> Path:
    path = tmp_path / name
    path.write_text(dedent(text), encoding="utf-8")
    return path


def kinds(objects: list[dict[str, Any]]) -> list[str]:
    return [o["kind"] for o in objects]


INDEXED_JOB = """
apiVersion: batch/v1
kind: Job
metadata:
  name: pi
spec:
  parallelism: 2
  completions: 2
  completionMode: Indexed
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: pi
        image: perl
"""


# --- streams and exit statuses ---------------------------------------------------------------------


def test_invalid_input_gets_validates_diagnostics_and_nothing_on_stdout(tmp_path: Path) -> None:
    path = write(tmp_path, """
        apiVersion: jobset.x-k8s.io/v1alpha2
        kind: JobSet
        metadata:
          name: Bad_Name
        spec:
          replicatedJobs: []
        """)
    result = render_cli(str(path))
    assert result.exit == 1
    assert result.stdout == ""
    validate_stdout = _validate_text(path)
    assert result.stderr == validate_stdout


def _validate_text(path: Path) -> str:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = run_cli(["validate", "-o", "text", str(path)])
    assert status == 1
    return out.getvalue()


def test_output_dir_is_untouched_by_invalid_input(tmp_path: Path) -> None:
    path = write(tmp_path, "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {}\n")
    result = render_cli(str(path), "--output-dir", str(tmp_path / "out"))
    assert result.exit == 1
    assert not (tmp_path / "out").exists()


def test_no_input_and_a_bad_output_dir_are_usage_errors(tmp_path: Path) -> None:
    assert render_cli().exit == 2
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = render_cli(str(TRAINING), "--output-dir", str(blocker))
    assert result.exit == 2 and "not a directory" in result.stderr and result.stdout == ""


def test_yaml_stream_and_json_list_hold_the_same_objects() -> None:
    as_yaml = render_cli(str(TRAINING), "--pods")
    as_json = render_cli(str(TRAINING), "--pods", "-o", "json")
    assert as_yaml.exit == as_json.exit == 0
    listed = json.loads(as_json.stdout)
    assert listed["apiVersion"] == "v1" and listed["kind"] == "List"
    assert listed["items"] == as_yaml.objects()
    assert as_yaml.stdout.count("\n---\n") == len(listed["items"]) - 1


def test_output_dir_writes_one_file_per_object_in_order(tmp_path: Path) -> None:
    stream = render_cli(str(TRAINING), "--pods").objects()
    out = tmp_path / "out"
    result = render_cli(str(TRAINING), "--pods", "--output-dir", str(out))
    assert result.exit == 0 and result.stdout == ""
    assert f"wrote {len(stream)} files to {out}" in result.stderr
    files = sorted(out.iterdir())
    assert [yaml.safe_load(f.read_text()) for f in files] == stream
    assert files[0].name == "0001-priorityclass-training.yaml"
    assert re.fullmatch(rf"0015-pod-train-workers-1-3-{SUFFIX}\.yaml", files[-1].name)
    assert not [f for f in os.listdir(out) if f.startswith(".")]  # no temporary file left behind
    again = render_cli(str(TRAINING), "--pods", "--output-dir", str(out), "-o", "json")
    assert again.exit == 0
    json_files = sorted(out.glob("*.json"))
    assert [json.loads(f.read_text()) for f in json_files] == stream


# --- what is rendered, in which order --------------------------------------------------------------


def test_inputs_come_first_with_defaults_in_dependency_order(tmp_path: Path) -> None:
    path = write(tmp_path, """
        apiVersion: jobset.x-k8s.io/v1alpha2
        kind: JobSet
        metadata:
          name: js
        spec:
          replicatedJobs:
          - name: rj
            template:
              spec:
                template:
                  spec:
                    priorityClassName: high
                    containers: [{name: c, image: busybox}]
        ---
        apiVersion: scheduling.k8s.io/v1
        kind: PriorityClass
        metadata:
          name: high
        value: 100
        """)
    result = render_cli(str(path), "--pods")
    assert result.exit == 0, result.stderr
    objects = result.objects()
    assert kinds(objects) == ["PriorityClass", "JobSet", "Service", "Job", "Pod"]
    js = objects[1]
    assert js["spec"]["successPolicy"] == {"operator": "All"}  # the JobSet webhook's default
    assert js["spec"]["replicatedJobs"][0]["template"]["spec"]["completionMode"] == "Indexed"
    assert objects[-1]["spec"]["priority"] == 100  # the Priority plugin resolved the class: it existed first
    assert all("status" not in o for o in objects if o["kind"] == "Job")  # as created, before any status write


def test_indexed_pods_carry_index_hostname_and_seeded_names(tmp_path: Path) -> None:
    path = write(tmp_path, INDEXED_JOB)
    objects = render_cli(str(path), "--pods").objects()
    pods = [o for o in objects if o["kind"] == "Pod"]
    assert [p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] for p in pods] == ["0", "1"]
    for index, pod in enumerate(pods):
        assert re.fullmatch(rf"pi-{index}-{SUFFIX}", pod["metadata"]["name"])
        assert pod["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] == str(index)
        assert pod["spec"]["hostname"] == f"pi-{index}"
        env = pod["spec"]["containers"][0]["env"]
        assert env[-1]["name"] == "JOB_COMPLETION_INDEX"
    other_seed = render_cli(str(path), "--pods", "--seed", "7").objects()
    assert [p["metadata"]["name"] for p in other_seed if p["kind"] == "Pod"] != [p["metadata"]["name"] for p in pods]
    assert render_cli(str(path), "--pods", "--seed", "7").stdout == render_cli(str(path), "--pods", "--seed", "7").stdout


def test_without_pods_there_are_no_pods(tmp_path: Path) -> None:
    assert kinds(render_cli(str(write(tmp_path, INDEXED_JOB))).objects()) == ["Job"]


def test_the_job_controllers_own_gang_objects_come_before_its_pods(tmp_path: Path) -> None:
    """KEP-5547 (scheduling.md §1.5): with WorkloadWithJob the Job controller creates Workload, PodGroup,
    then the pods, which join the group; render only shows it."""
    path = write(tmp_path, INDEXED_JOB)
    result = render_cli(str(path), "--pods", "--kubernetes-version", "1.36", "--feature-gates", "WorkloadWithJob=true")
    assert result.exit == 0, result.stderr
    objects = result.objects()
    assert kinds(objects) == ["Job", "Workload", "PodGroup", "Pod", "Pod"]
    group = objects[2]["metadata"]["name"]
    assert all(p["spec"]["schedulingGroup"] == {"podGroupName": group} for p in objects[3:])
    assert kinds(render_cli(str(path), "--pods", "--kubernetes-version", "1.36").objects()) == ["Job", "Pod", "Pod"]


@requires_upstream
def test_exclusive_placement_followers_are_shown_as_requested() -> None:
    path = UPSTREAM / "jobset" / "examples" / "simple" / "exclusive-placement.yaml"
    result = render_cli(str(path), "--pods")
    assert result.exit == 0, result.stderr
    pods = [o for o in result.objects() if o["kind"] == "Pod"]
    leaders = [p for p in pods if NOTE_ANNOTATION not in p["metadata"].get("annotations", {})]
    followers = [p for p in pods if p not in leaders]
    assert len(leaders) == 3 and len(followers) == 6
    for follower in followers:
        md = follower["metadata"]
        assert "name" not in md and "uid" not in md and "status" not in follower
        assert re.fullmatch(r"exclusive-placement-workers-\d-[12]-", md["generateName"])
        assert "leader pod is scheduled" in md["annotations"][NOTE_ANNOTATION]
        assert "nodeSelector" not in follower["spec"]
    assert "(+6 not created yet)" in result.stderr


# --- gates and summary ---------------------------------------------------------------------------------


@requires_upstream
def test_gates_the_inputs_need_are_turned_on_unless_set_explicitly() -> None:
    tas = UPSTREAM / "jobset" / "examples" / "workload-aware-scheduling" / "tas"
    result = render_cli(str(tas), "--kubernetes-version", "1.36")
    assert result.exit == 0, result.stderr
    assert result.stderr.count("turned on feature gates") == 1
    assert "TopologyAwareWorkloadScheduling" in result.stderr
    group = next(o for o in result.objects() if o["kind"] == "PodGroup")
    assert group["spec"]["schedulingConstraints"] == {"topology": [{"key": "topology.example.com/rack"}]}
    off = render_cli(str(tas), "--kubernetes-version", "1.36", "--feature-gates", "TopologyAwareWorkloadScheduling=false")
    assert off.exit == 0
    assert "TopologyAwareWorkloadScheduling" not in off.stderr.split("warning")[-1].split("turned on")[-1]
    group = next(o for o in off.objects() if o["kind"] == "PodGroup")
    assert "schedulingConstraints" not in group["spec"]  # the API server drops the gated field


def test_summary_counts_kinds_pods_and_gpus() -> None:
    result = render_cli(str(TRAINING))
    assert result.exit == 0
    lines = result.stderr.splitlines()
    assert "rendered 6 objects: 1 PriorityClass, 1 JobSet, 1 Service, 3 Job" in lines
    assert "JobSet default/train: 9 pods, cpu 130, memory 516Gi, nvidia.com/gpu 64" in lines
    assert any(re.fullmatch(r"\s+workers\s+2 Jobs x 4 pods =\s+8\s+cpu 128, memory 512Gi, nvidia.com/gpu 64", line)
               for line in lines)


@requires_upstream
def test_trainjobs_render_through_the_trainer_controller() -> None:
    path = UPSTREAM / "trainer" / "examples" / "yaml" / "01-multi-node.yaml"
    objects = render_cli(str(path)).objects()
    assert kinds(objects)[0] == "TrainJob"
    jobsets = [o for o in objects if o["kind"] == "JobSet"]
    assert len(jobsets) == 1
    owner = jobsets[0]["metadata"]["ownerReferences"][0]
    assert owner["kind"] == "TrainJob" and owner["controller"] is True
    assert "Job" in kinds(objects)


def test_scenarios_and_non_objects_are_passed_over(tmp_path: Path) -> None:
    path = write(tmp_path, """
        apiVersion: jobsetctl.dev/v1alpha1
        kind: Scenario
        metadata: {name: s}
        spec: {}
        ---
        kind: Cluster
        apiVersion: kind.x-k8s.io/v1alpha4
        nodes: [{role: worker}]
        """)
    result = render_cli(str(path))
    assert result.stdout == ""
    assert "passed over what is no API object" in result.stderr
    assert "Cluster in" in result.stderr


@pytest.mark.parametrize("flag", ["--pods", "--all-stages"])
def test_render_is_byte_for_byte_repeatable(flag: str) -> None:
    first, second = render_cli(str(INPUTS / "staged.yaml"), flag), render_cli(str(INPUTS / "staged.yaml"), flag)
    assert first.exit == 0 and first.stdout == second.stdout and first.stderr == second.stderr


def test_standard_input_is_read_once_and_used_for_every_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    data = TRAINING.read_bytes()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    from_stdin = render_cli("-", "--gang", "replicatedjob")
    assert from_stdin.exit == 0, from_stdin.stderr
    assert from_stdin.stdout == render_cli(str(TRAINING), "--gang", "replicatedjob").stdout


def test_a_child_the_api_server_refuses_is_shown_and_fails_the_render(tmp_path: Path) -> None:
    """validate accepts parallelism without completions, but the JobSet defaults completionMode to
    Indexed and the Job API then requires completions: the JobSet controller's create is refused."""
    path = write(tmp_path, """
        apiVersion: jobset.x-k8s.io/v1alpha2
        kind: JobSet
        metadata: {name: js}
        spec:
          replicatedJobs:
          - name: rj
            template:
              spec:
                parallelism: 2
                template:
                  spec:
                    containers: [{name: c, image: busybox}]
        """)
    result = render_cli(str(path))
    assert result.exit == 1
    job = result.objects()[-1]
    assert job["kind"] == "Job" and job["metadata"]["name"] == "js-rj-0"
    assert "spec.completions: Required value" in job["metadata"]["annotations"][NOTE_ANNOTATION]
    assert "error: Job js-rj-0: not created" in result.stderr
