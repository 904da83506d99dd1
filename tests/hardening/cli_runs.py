"""Running ``jobsetctl render`` and ``simulate`` the way users do, for the hardening campaign (issue #6,
phase 2): in-process through :func:`jobsetctl.cli.app.run`, or as the installed entry point in a
subprocess with a timeout and an address-space limit, or interrupted with SIGINT at a chosen moment.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from jobsetctl.cli.app import run
from tests.hardening.harness import SUBPROCESS_TIMEOUT, Outcome, jobsetctl_executable

#: Address space a subprocess may use: an input that would need more fails instead of swapping.
MEMORY_LIMIT = 3 * 1024**3


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> Outcome:
    """``jobsetctl ARGS`` in-process (the real command line, typer included)."""
    capsys.readouterr()
    status = run(args)
    out, err = capsys.readouterr()
    return Outcome(status, out, err)


def _environment(extra: dict[str, str] | None) -> dict[str, str]:
    env = {**os.environ, "NO_COLOR": "1", **(extra or {})}
    env.pop("JOBSETCTL_DEBUG", None)
    env.pop("GITHUB_ACTIONS", None)
    return env


def _limit_memory() -> None:  # runs in the child, before exec
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def bounded_subprocess(
    args: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = SUBPROCESS_TIMEOUT,
) -> tuple[Outcome, float]:
    """The entry point under :data:`MEMORY_LIMIT` and a timeout; the outcome and the wall seconds it took."""
    started = time.monotonic()
    done = subprocess.run(
        [*jobsetctl_executable(), *args], input=b"", capture_output=True, env=_environment(env), cwd=cwd,
        timeout=timeout, check=False, preexec_fn=_limit_memory,
    )
    outcome = Outcome(done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace"))
    return outcome, time.monotonic() - started


def interrupt_when(
    args: list[str], ready: Callable[[], bool], *, cwd: Path, env: dict[str, str] | None = None,
    within: float = 300.0, poll: float = 0.0005,
) -> tuple[subprocess.CompletedProcess[bytes], bool]:
    """Start ``jobsetctl ARGS``, send SIGINT (what Ctrl-C sends) as soon as ``ready()`` holds, and collect
    what it said. Returns the finished process and whether the interrupt was sent while it still ran
    (False: it finished first, which the caller may or may not accept)."""
    process = subprocess.Popen(
        [*jobsetctl_executable(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
        env=_environment(env), start_new_session=True,
    )
    sent = False
    try:
        deadline = time.monotonic() + within
        while process.poll() is None and time.monotonic() < deadline:
            if ready():
                process.send_signal(signal.SIGINT)
                sent = True
                break
            time.sleep(poll)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return subprocess.CompletedProcess(process.args, process.returncode, out, err), sent


def tree(root: Path) -> list[tuple[str, int]]:
    """Every file and directory under ``root``, hidden ones included, with sizes (0 for directories)."""
    return sorted((str(p.relative_to(root)), 0 if p.is_dir() else p.stat().st_size) for p in root.rglob("*"))


def temporary_files(root: Path) -> list[str]:
    """Leftovers of atomic writes (``.<name>.<random>.tmp``) anywhere under ``root``."""
    return sorted(str(p.relative_to(root)) for p in root.rglob(".*.tmp"))


#: A plain two-pod Job that runs an hour: the submission of most scenario tests.
JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  parallelism: 2
  template:
    metadata: {annotations: {jobsetctl.dev/duration: 1h}}
    spec: {restartPolicy: Never, containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}
"""
