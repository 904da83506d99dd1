"""Issue 12: a run that takes more than a second shows its progress on stderr when stderr is a terminal
(simulated time reached, pods bound, events), and nothing otherwise."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import pytest

from jobsetctl.cli.app import run
from jobsetctl.simulate.command import OutputOptions, execute
from jobsetctl.simulate.inputs import load_inputs
from jobsetctl.simulate.progress import RunProgress, wants_progress
from jobsetctl.simulate.runner import SimulateOptions, plan, run_plan
from tests.helpers import SAMPLES

SCENARIO = str(SAMPLES / "scenarios" / "two-teams.yaml")


class Terminal(io.StringIO):
    """A stream that says it is a terminal, and keeps what was written to it."""

    def isatty(self) -> bool:
        return True


def _clock(step: float) -> Iterator[float]:
    now = 0.0
    while True:
        yield now
        now += step


def _run_with(stream: io.StringIO, wall_step: float) -> RunProgress:
    """The sample run, its progress fed by a wall clock that advances ``wall_step`` seconds per reading."""
    ticks = _clock(wall_step)
    watch = RunProgress(stream, clock=lambda: next(ticks))
    the_plan = plan(load_inputs([SCENARIO], None), SimulateOptions([SCENARIO]))
    run_plan(the_plan, 0, watch)
    return watch


def test_a_long_run_on_a_terminal_shows_time_pods_and_events() -> None:
    terminal = Terminal()
    watch = _run_with(terminal, wall_step=0.6)  # past a second from the second step on
    shown = terminal.getvalue()
    assert "simulating" in shown and "virtual time" in shown and "pods bound" in shown and "events" in shown
    assert watch.bound > 0 and watch.progress is None  # counted, and removed at the end (transient)


def test_a_run_shorter_than_a_second_shows_nothing() -> None:
    terminal = Terminal()
    watch = _run_with(terminal, wall_step=0.0)
    assert terminal.getvalue() == "" and watch.progress is None


def test_progress_is_only_for_terminals() -> None:
    assert wants_progress(Terminal())
    assert not wants_progress(io.StringIO())
    assert not wants_progress(None)


def test_execute_draws_on_a_terminal_stderr_and_not_on_a_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the package function the CLI calls: a terminal stderr gets the line once the run is long
    enough (the threshold lowered to zero here instead of running for a second), a pipe never does, and
    stdout's JSON is the same either way."""
    monkeypatch.setattr("jobsetctl.simulate.progress.SHOW_AFTER", 0.0)
    outputs = OutputOptions("json")
    documents = []
    for stderr, drawn in ((Terminal(), True), (io.StringIO(), False)):
        out = io.StringIO()
        execute(SimulateOptions([SCENARIO]), outputs, out, stderr)
        assert ("pods bound" in stderr.getvalue()) is drawn
        documents.append(json.loads(out.getvalue()))
    assert documents[0] == documents[1]


def test_the_cli_writes_nothing_on_a_captured_stderr(capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("jobsetctl.simulate.progress.SHOW_AFTER", 0.0)
    assert run(["simulate", "-o", "json", SCENARIO]) == 0
    assert capsys.readouterr().err == ""
