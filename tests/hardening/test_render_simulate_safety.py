"""Interrupts, output files, the network and bounded resources for ``render`` and ``simulate`` (issue #6,
phase 2).

* Ctrl-C: SIGINT to the installed entry point while it computes, and while it writes an output file:
  exit 130, ``jobsetctl: interrupted`` and nothing else on stderr, every target either as it was or
  complete, no temporary file left.
* Output files: written whole or not at all (a file size limit, RLIMIT_FSIZE, makes a real write fail half
  way), an existing target replaced whole, a device or FIFO written to rather than replaced, output
  created only where asked (a scratch working directory, ``TMPDIR`` and ``HOME`` stay empty).
* No network: validate, render and simulate of every sample with every socket entry point refusing.
* Bounded time and memory: the inputs of tests/corpus/ that once ran out of memory or for hours, in a
  subprocess under an address-space limit and a timeout, finish within seconds.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from jobsetctl.simulate import limits
from jobsetctl.status import ExitStatus
from tests.hardening.cli_runs import bounded_subprocess, cli, interrupt_when, temporary_files, tree
from tests.hardening.harness import CORPUS, assert_sane, jobsetctl_executable
from tests.helpers import SAMPLES

Capsys = pytest.CaptureFixture[str]
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and resource limits")

RESTARTS_FOREVER = CORPUS / "simulate-restarts-forever.yaml"
OLD = {"t.json": '{"old": true}\n', "s.svg": "<svg>old</svg>\n", "h.html": "<html>old</html>\n"}


def _outputs(directory: Path) -> list[str]:
    return ["--trace", str(directory / "t.json"), "--svg", str(directory / "s.svg"), "--html", str(directory / "h.html")]


def _complete_or_old(directory: Path, name: str) -> str:
    """'old', 'new' (complete) or 'absent'; anything half-written fails."""
    path = directory / name
    if not path.exists():
        return "absent"
    text = path.read_text(encoding="utf-8")
    if text == OLD.get(name):
        return "old"
    if name.endswith(".json"):
        json.loads(text)
    else:
        assert text.rstrip().endswith("</svg>" if name.endswith(".svg") else "</html>"), text[-200:]
    return "new"


# --- Ctrl-C --------------------------------------------------------------------------------------------


@posix_only
def test_ctrl_c_while_simulating_exits_130_and_leaves_outputs_as_they_were(tmp_path: Path) -> None:
    for name, text in OLD.items():
        (tmp_path / name).write_text(text)
    before = tree(tmp_path)
    busy = iter(range(2000))  # ~1 s of polling: well inside a run that takes several seconds
    done, sent = interrupt_when(["simulate", str(RESTARTS_FOREVER), "--until", "2h", *_outputs(tmp_path)],
                                lambda: next(busy, None) is None, cwd=tmp_path)
    assert sent, "finished before the interrupt"
    assert done.returncode == ExitStatus.INTERRUPTED
    assert done.stderr.decode() == "jobsetctl: interrupted\n" and done.stdout == b""
    assert tree(tmp_path) == before


@posix_only
@pytest.mark.parametrize("existing", [False, True], ids=["new-targets", "existing-targets"])
def test_ctrl_c_while_a_trace_is_being_written_leaves_no_partial_file(tmp_path: Path, existing: bool) -> None:
    """SIGINT the moment the trace's temporary file appears: the interrupt lands while it is written (or
    just after the rename); the trace is then complete or as it was, the SVG and HTML untouched.

    The temporary file lives for a few milliseconds; on a loaded machine the polling loop can miss it, and
    the run then simply finishes. Such a miss says nothing about the property, so the run is repeated (in a
    fresh directory) up to five times; the assertions below judge the first run the interrupt reached."""
    for attempt in range(5):
        directory = tmp_path / f"attempt-{attempt}"
        directory.mkdir()
        if existing:
            for name, text in OLD.items():
                (directory / name).write_text(text)
        done, sent = interrupt_when(
            ["simulate", "-o", "json", str(RESTARTS_FOREVER), "--until", "1h", *_outputs(directory)],
            lambda: any(name.startswith(".t.json.") for name in os.listdir(directory)),  # noqa: B023
            cwd=directory, poll=0.0002)
        if sent:
            break
    assert sent, "the trace was never seen being written in five runs"
    assert done.returncode == ExitStatus.INTERRUPTED, done.stderr
    assert done.stderr.decode() == "jobsetctl: interrupted\n"
    assert temporary_files(directory) == []
    untouched = "old" if existing else "absent"
    assert _complete_or_old(directory, "t.json") in (untouched, "new")
    assert [_complete_or_old(directory, n) for n in ("s.svg", "h.html")] == [untouched, untouched]


def _many_jobs(tmp_path: Path, replicas: int) -> Path:
    path = tmp_path / "many.yaml"
    path.write_text(yaml.safe_dump({
        "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "many"},
        "spec": {"replicatedJobs": [{"name": "w", "replicas": replicas, "template": {"spec": {
            "parallelism": 1, "completions": 1,
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}}]},
    }))
    return path


@posix_only
def test_ctrl_c_while_rendering_creates_no_output_directory(tmp_path: Path) -> None:
    """SIGINT once the child has read its input (a known stage, not a guessed delay): every output is built
    before the first write, so the interrupt, landing while the 3,000 Jobs are computed, leaves nothing.

    The input comes on stdin, padded past the pipe's buffer (64 KiB on Linux) so that our write returns
    only once the child, past its imports, is reading it. A fixed count of sleeps here once fired before
    the child had started on an idle machine, or after it had finished on a loaded one."""
    document = _many_jobs(tmp_path, 3000).read_bytes()
    padding = b"# padding so that the pipe fills up\n" * 20_000  # about 700 KiB
    reader, writer = os.pipe()
    process = subprocess.Popen(
        [*jobsetctl_executable(), "render", "-", "--output-dir", str(tmp_path / "out")],
        stdin=reader, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
        env={**os.environ, "NO_COLOR": "1"}, start_new_session=True,
    )
    os.close(reader)
    try:
        with os.fdopen(writer, "wb") as stdin:
            stdin.write(padding + document)  # returns once all but the last pipe-buffer's worth was read
        assert process.poll() is None, "finished before the interrupt: make the input bigger"
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == ExitStatus.INTERRUPTED, err
    assert err.decode() == "jobsetctl: interrupted\n" and out == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["many.yaml"]


@posix_only
def test_ctrl_c_while_writing_the_output_directory_leaves_only_complete_files(tmp_path: Path) -> None:
    inputs = _many_jobs(tmp_path, 3000)
    out = tmp_path / "out"
    done, sent = interrupt_when(["render", str(inputs), "--output-dir", str(out)],
                                lambda: out.is_dir() and sum(not n.startswith(".") for n in os.listdir(out)) >= 20,
                                cwd=tmp_path)
    assert sent and done.returncode == ExitStatus.INTERRUPTED, done.stderr
    assert done.stderr.decode() == "jobsetctl: interrupted\n"
    assert temporary_files(tmp_path) == []
    files = sorted(out.iterdir())
    assert 20 <= len(files) < 3002  # interrupted part-way: some written, each of them whole
    for path in files:
        document = yaml.safe_load(path.read_text())
        assert document["kind"] in ("JobSet", "Service", "Job") and document["metadata"]["name"]


# --- output files --------------------------------------------------------------------------------------


def _limited_file_size(limit: int) -> Any:
    import resource

    def apply() -> None:  # in the child, before exec; CPython ignores SIGXFSZ, so writes fail with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def _run_with_file_size_limit(args: list[str], cwd: Path, limit: int) -> tuple[int, str]:
    import subprocess

    env = {**os.environ, "NO_COLOR": "1"}
    done = subprocess.run([*jobsetctl_executable(), *args], capture_output=True, cwd=cwd, env=env, timeout=600,
                          check=False, preexec_fn=_limited_file_size(limit))
    return done.returncode, done.stderr.decode()


@posix_only
def test_a_write_that_fails_half_way_leaves_the_old_trace(tmp_path: Path) -> None:
    for name, text in OLD.items():
        (tmp_path / name).write_text(text)
    # The trace of this run is about a megabyte: the file size limit stops its write a fifth of the way.
    status, stderr = _run_with_file_size_limit(
        ["simulate", str(RESTARTS_FOREVER), "--until", "1h", *_outputs(tmp_path)], tmp_path, 200_000)
    assert status == ExitStatus.USAGE
    assert stderr == f"jobsetctl: error: --trace {tmp_path / 't.json'}: cannot write: File too large\n"
    assert [_complete_or_old(tmp_path, n) for n in OLD] == ["old", "old", "old"]
    assert temporary_files(tmp_path) == []


@posix_only
def test_a_write_that_fails_in_the_output_directory_names_the_file_and_leaves_no_partial_one(tmp_path: Path) -> None:
    out = tmp_path / "out"
    status, stderr = _run_with_file_size_limit(
        ["render", "--pods", str(SAMPLES / "valid" / "jobset-driver-workers.yaml"), "--output-dir", str(out)],
        tmp_path, 1500)
    assert status == ExitStatus.USAGE
    assert stderr == (f"jobsetctl: error: --output-dir {out}: cannot write {out / '0001-jobset-driver-workers.yaml'}: "
                      "File too large; 0 of 4 files written\n")
    assert list(out.iterdir()) == []


def test_existing_targets_are_replaced_whole_and_keep_their_mode(tmp_path: Path, capsys: Capsys) -> None:
    for name, text in OLD.items():
        (tmp_path / name).write_text(text * 1000)  # longer than the new content: no old tail may remain
        (tmp_path / name).chmod(0o640)
    outcome = cli(["simulate", str(SAMPLES / "scenarios" / "node-failure.yaml"), *_outputs(tmp_path)], capsys)
    assert outcome.status == ExitStatus.SUCCESS
    for name in OLD:
        assert _complete_or_old(tmp_path, name) == "new"
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o640
    assert json.loads((tmp_path / "t.json").read_text())["otherData"]["scenario"] == "node-failure"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.html", "s.svg", "t.json"]


def test_a_bad_target_refuses_the_run_and_writes_none_of_the_others(tmp_path: Path, capsys: Capsys) -> None:
    for name, text in OLD.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "dir.svg").mkdir()
    before = tree(tmp_path)
    scenario = str(SAMPLES / "scenarios" / "node-failure.yaml")
    for option, target, message in [
        ("--svg", tmp_path / "dir.svg", f"--svg {tmp_path / 'dir.svg'}: is a directory"),
        ("--html", tmp_path / "no" / "h.html", f"--html {tmp_path / 'no' / 'h.html'}: directory {tmp_path / 'no'} does not exist"),
    ]:
        args = ["simulate", scenario, "--trace", str(tmp_path / "t.json"), option, str(target)]
        outcome = cli(args, capsys)
        assert outcome.status == ExitStatus.USAGE and outcome.stdout == ""
        assert outcome.stderr == f"jobsetctl: error: {message}\n"
        assert tree(tmp_path) == before


def test_an_output_directory_whose_parent_is_missing_is_a_usage_error(tmp_path: Path, capsys: Capsys) -> None:
    target = tmp_path / "missing" / "out"
    outcome = cli(["render", str(SAMPLES / "valid"), "--output-dir", str(target)], capsys)
    assert outcome.status == ExitStatus.USAGE and outcome.stdout == ""
    assert outcome.stderr == f"jobsetctl: error: --output-dir {target}: parent directory {tmp_path / 'missing'} does not exist\n"
    assert list(tmp_path.iterdir()) == []
    blocker = tmp_path / "file"
    blocker.write_text("x")
    outcome = cli(["render", str(SAMPLES / "valid"), "--output-dir", str(blocker)], capsys)
    assert outcome.status == ExitStatus.USAGE
    assert outcome.stderr == f"jobsetctl: error: --output-dir {blocker}: exists and is not a directory\n"


def test_hostile_names_make_safe_file_names(tmp_path: Path, capsys: Capsys) -> None:
    # Regressions: a NUL in a name crashed --output-dir (exit 3), 200 two-byte letters overflowed the
    # 255-byte name limit half-way through the directory (exit 2 after the first files were written).
    out = tmp_path / "out"
    outcome = cli(["render", str(CORPUS / "render-unsafe-file-names.yaml"), "--output-dir", str(out)], capsys)
    assert outcome.status == ExitStatus.SUCCESS, outcome.stderr
    names = sorted(p.name for p in out.iterdir())
    assert names[0] == "0001-gadget-nul_byte.yaml"
    assert names[1].startswith("0002-gadget-____") and len(names[1].encode()) <= 255 - len(".x.12345678.tmp")
    assert names[2] == "0003-.._.._gadget-.._.._escape_newline.yaml"
    assert [p.parent for p in tmp_path.rglob("*.yaml")] == [out, out, out]
    assert [yaml.safe_load(p.read_text())["metadata"]["name"] for p in sorted(out.iterdir())] == [
        "nul\0byte", "\u00e9" * 200, "../../escape\nnewline"]


@posix_only
def test_a_fifo_target_is_written_to_not_replaced(tmp_path: Path, capsys: Capsys) -> None:
    # Regression: the rename over the target replaced a FIFO by a plain file (and, for root, --trace
    # /dev/null would have replaced /dev/null).
    fifo = tmp_path / "trace.fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    outcome = cli(["simulate", str(SAMPLES / "scenarios" / "node-failure.yaml"), "--trace", str(fifo)], capsys)
    reader.join(timeout=60)
    assert outcome.status == ExitStatus.SUCCESS, outcome.stderr
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert json.loads(received[0])["otherData"]["scenario"] == "node-failure"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trace.fifo"]


def test_a_symbolic_link_target_keeps_pointing_at_the_new_content(tmp_path: Path, capsys: Capsys) -> None:
    real = tmp_path / "real.svg"
    real.write_text("old")
    link = tmp_path / "link.svg"
    link.symlink_to(real)
    outcome = cli(["simulate", str(SAMPLES / "scenarios" / "node-failure.yaml"), "--svg", str(link)], capsys)
    assert outcome.status == ExitStatus.SUCCESS
    assert link.is_symlink() and link.resolve() == real
    assert real.read_text().rstrip().endswith("</svg>")


def test_output_is_created_only_where_asked(tmp_path: Path) -> None:
    """In a scratch working directory, with TMPDIR and HOME pointing at empty directories: the requested
    files appear, nothing else does, anywhere (the inputs' tree included)."""
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    for source in [*(SAMPLES / "valid").glob("*.yaml"), SAMPLES / "scenarios" / "node-failure.yaml"]:
        (inputs / source.name).write_text(source.read_text())
    work, temp, home = tmp_path / "work", tmp_path / "tmp", tmp_path / "home"
    for directory in (work, temp, home):
        directory.mkdir()
    env = {"TMPDIR": str(temp), "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")}
    before = tree(inputs)
    runs = [
        (["validate", str(inputs)], []),
        (["render", "--pods", "--gang", "replicatedjob", str(inputs / "jobset-driver-workers.yaml")], []),
        (["render", "--pods", str(inputs), "--output-dir", "rendered"], ["rendered"]),
        (["simulate", str(inputs / "node-failure.yaml")], []),
        (["simulate", str(inputs / "node-failure.yaml"), "--trace", "t.json", "--svg", "s.svg", "--html", "h.html"],
         ["h.html", "s.svg", "t.json"]),
    ]
    expected: set[str] = set()
    for args, created in runs:
        outcome, _ = bounded_subprocess(args, cwd=work, env=env, timeout=300)
        assert_sane(outcome)
        assert outcome.status == ExitStatus.SUCCESS, (args, outcome.stderr)
        expected |= set(created)
        top = {p.name for p in work.iterdir()}
        assert top == expected, args
    assert all(p.parent == work / "rendered" for p in (work / "rendered").rglob("*"))
    assert tree(temp) == [] and tree(home) == []
    assert tree(inputs) == before


# --- no network ------------------------------------------------------------------------------------------


def test_validate_render_and_simulate_never_touch_the_network(
    tmp_path: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every socket entry point refuses (and records the attempt) while all three commands run on the
    samples, in-process; each must succeed and none may have tried."""
    attempts: list[str] = []

    def refuse(what: str) -> Any:
        def refused(*args: Any, **kwargs: Any) -> Any:
            attempts.append(f"{what} {args[:2]!r}")
            raise OSError(f"network access is forbidden in this test ({what})")
        return refused

    for name in ("socket", "create_connection", "getaddrinfo", "gethostbyname", "socketpair", "fromfd"):
        monkeypatch.setattr(socket, name, refuse(name))
    with pytest.raises(OSError, match="forbidden"):  # the patch is live
        socket.create_connection(("example.com", 443))
    attempts.clear()

    runs = [
        ["validate", str(SAMPLES / "valid")],
        ["render", "--pods", "--all-stages", str(SAMPLES / "valid")],
        ["render", "--gang", "replicatedjob", "-o", "json", str(SAMPLES / "valid" / "jobset-driver-workers.yaml")],
        ["render", "--output-dir", str(tmp_path / "out"), str(SAMPLES / "valid")],
        *(["simulate", str(path), *_outputs(tmp_path)] for path in sorted((SAMPLES / "scenarios").glob("*.yaml"))),
        ["simulate", "-o", "json", str(SAMPLES / "scenarios" / "manifests" / "team-a.yaml"),
         "--nodes", str(SAMPLES / "scenarios" / "manifests" / "nodes.yaml"), "--until", "6h"],
    ]
    for args in runs:
        outcome = cli(args, capsys)
        assert outcome.status == ExitStatus.SUCCESS, (args, outcome.stderr)
        assert outcome.stdout or "wrote" in outcome.stderr
    assert attempts == []


# --- bounded time and memory -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "name", "status", "fragment"),
    [
        ("simulate", "simulate-million-nodes.yaml", ExitStatus.FINDINGS,
         "9:5  error   spec.nodes[0].count: Invalid value: 1000000: 1,000,000 nodes in all"),
        ("simulate", "simulate-billion-replicas.yaml", ExitStatus.FINDINGS,
         "10:5  error   spec.replicatedJobs[0].replicas: JobSet billion would make the controllers create "
         "1,000,000,000 Jobs and 1,000,000,000 pods"),
        ("render", "simulate-billion-replicas.yaml", ExitStatus.FINDINGS,
         "10:5  error   spec.replicatedJobs[0].replicas: JobSet billion would make the controllers create "
         "1,000,000,000 Jobs; render models at most 50,000 objects"),
        ("simulate", "simulate-infinite-times.yaml", ExitStatus.FINDINGS,
         '7:3  error   spec.until: invalid duration ".inf": must be a finite duration'),
        ("simulate", "simulate-submits-itself.yaml", ExitStatus.FINDINGS,
         "10:22  error   spec.submit[0].files[0]: \"simulate-submits-itself.yaml\" is this Scenario's own file"),
    ],
    ids=["million-nodes", "billion-replicas-simulate", "billion-replicas-render", "infinite-times", "submits-itself"],
)
def test_worst_inputs_are_refused_within_seconds(command: str, name: str, status: int, fragment: str) -> None:
    outcome, seconds = bounded_subprocess([command, str(CORPUS / name)], timeout=120)
    assert_sane(outcome)
    assert outcome.status == status
    report = outcome.stdout if command == "simulate" else outcome.stderr
    assert any(fragment in line for line in report.splitlines()), report
    assert seconds < 60


@posix_only
def test_a_jobset_restarting_forever_stops_at_the_event_limit() -> None:
    outcome, seconds = bounded_subprocess(["simulate", "-o", "json", str(RESTARTS_FOREVER)], timeout=300)
    assert_sane(outcome)
    assert outcome.status == ExitStatus.SUCCESS and outcome.stderr == ""
    document = json.loads(outcome.stdout)
    assert document["summary"]["stopReason"] == "limit"
    events = document["events"]
    assert limits.MAX_EVENTS < len(events) < limits.MAX_EVENTS + 100
    assert document["endTime"] == events[-1]["time"] < 30 * 86400  # where it stopped, far before the horizon
    assert seconds < 240


@posix_only
@pytest.mark.parametrize("command", ["simulate", "render"])
def test_objects_the_estimate_cannot_see_are_counted_while_running(command: str) -> None:
    """A runtime's numNodes: nothing in the TrainJob says 60,000 pods; the count of the store stops the
    run past 50,000 objects, under the address-space limit, and points at the TrainJob."""
    args = [command, str(CORPUS / "simulate-trainjob-runtime-too-wide.yaml"), *(["--pods"] if command == "render" else [])]
    outcome, seconds = bounded_subprocess(args, timeout=600)
    assert_sane(outcome)
    assert outcome.status == ExitStatus.FINDINGS
    report = (outcome.stdout if command == "simulate" else outcome.stderr).splitlines()
    assert report[1].startswith(
        "  25:1  error   TrainJob wide-job: the controllers created more than 50,000 objects by 0s (the last: Pod "
        "default/wide-job-node-0-")
    assert report[1].endswith(f"); {command} models at most 50,000 objects and stopped (raise with --max-objects)  [input/simulation-too-large]")
    assert seconds < 300
