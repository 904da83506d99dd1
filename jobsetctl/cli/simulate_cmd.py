"""``jobsetctl simulate``: parse the options, call :func:`jobsetctl.simulate.command.execute`, map the outcome."""

from __future__ import annotations

import os
import sys
from enum import StrEnum
from typing import Annotated

import typer

from jobsetctl.cli.app import (
    ContextOption,
    GatesOption,
    KubeVersionOption,
    KueueConfigOption,
    MaxObjectsOption,
    app,
)
from jobsetctl.status import ExitStatus, UsageError


class SimulateFormat(StrEnum):
    text = "text"
    json = "json"


def _duration(text: str | None, option: str) -> float | None:
    if text is None:
        return None
    from jobsetctl.kube.duration import DurationError, parse_duration
    from jobsetctl.simulate.limits import time_problem

    try:
        seconds = parse_duration(text)
    except DurationError as exc:
        raise UsageError(f"{option}: {exc}") from None
    problem = time_problem(seconds)  # "99...9h" parses to infinity; a year is the longest run modelled
    if problem is not None:
        raise UsageError(f'{option}: invalid duration "{text}": {problem}')
    return seconds


@app.command()
def simulate(
    paths: Annotated[list[str] | None, typer.Argument(help="A Scenario file, or manifests (files, directories, - for stdin) submitted at time zero.")] = None,
    nodes: Annotated[str | None, typer.Option("--nodes", help="Node manifests or a v1 List (e.g. kubectl get nodes -o yaml).")] = None,
    output: Annotated[SimulateFormat, typer.Option("--output", "-o", help="text (chart, events, summary) or json.")] = SimulateFormat.text,
    trace: Annotated[str | None, typer.Option("--trace", help="Write a Chrome trace (Perfetto, chrome://tracing) here.")] = None,
    svg: Annotated[str | None, typer.Option("--svg", help="Write the Gantt chart as an SVG picture here.")] = None,
    html: Annotated[str | None, typer.Option("--html", help="Write an HTML page with the chart and the summary here.")] = None,
    until: Annotated[str | None, typer.Option("--until", help="Stop at this virtual time (90m, 24h); default: the Scenario's, else when nothing is left to happen.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of every random choice (generated names); same seed, same timeline.")] = 0,
    width: Annotated[int | None, typer.Option("--width", min=40, help="Width of the text output; default: COLUMNS, else the terminal's, else 120.")] = None,
    fail_if_pending: Annotated[bool, typer.Option("--fail-if-pending", help="Exit 1 when a workload never started (for CI); the summary says why.")] = False,
    kubernetes_version: KubeVersionOption = None,
    feature_gates: GatesOption = None,
    max_objects: MaxObjectsOption = None,
    kueue_config: KueueConfigOption = None,
    context: ContextOption = None,
    config: Annotated[str | None, typer.Option("--config", help="Configuration file whose context: applies (default: nearest .jobsetctl.yaml upward); a Scenario carries its own release and gates.")] = None,
    explain: Annotated[str | None, typer.Option("--explain", help="Instead of the chart: why this Kueue workload (or the job owning it; [namespace/]name) is not admitted, in Kueue's words.")] = None,
    at: Annotated[str | None, typer.Option("--at", help="With --explain: the virtual time to explain (the run stops there); default: the end.")] = None,
) -> int:
    """Simulate what happens when manifests are submitted to a cluster: scheduling, gangs, preemption,
    failures and restarts, on a virtual clock. Prints a Gantt chart, the notable events and a summary."""
    from jobsetctl.cli.reporters import REPORTERS
    from jobsetctl.config import load_config
    from jobsetctl.simulate.command import OutputOptions, execute
    from jobsetctl.simulate.limits import MAX_OBJECTS
    from jobsetctl.simulate.runner import SimulateOptions

    color = output is SimulateFormat.text and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    options = SimulateOptions(
        paths=list(paths or []), nodes_file=nodes, until=_duration(until, "--until"), seed=seed,
        kubernetes_version=kubernetes_version, feature_gates=feature_gates, max_objects=max_objects or MAX_OBJECTS,
        kueue_config=kueue_config, context=[*(context or []), *load_config(config).context],
    )
    if at is not None and explain is None:
        raise UsageError("--at: only with --explain")
    outputs = OutputOptions(output.value, trace, svg, html, color, width, explain=explain,
                            explain_at=_duration(at, "--at"))
    outcome = execute(options, outputs, sys.stdout, sys.stderr)
    if outcome.report is not None:
        sys.stdout.write(REPORTERS[output.value](color=color).render(outcome.report))
    pending = fail_if_pending and bool(outcome.never_started)
    return ExitStatus.FINDINGS if outcome.failed or pending else ExitStatus.SUCCESS
