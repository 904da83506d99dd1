"""``jobsetctl simulate`` as one package function: read, check, run, write the outputs.

The CLI (``jobsetctl.cli.simulate_cmd``) parses options into :class:`SimulateOptions` and
:class:`OutputOptions`, calls :func:`execute` and maps the outcome to an exit status:

* input problems found before the run (unreadable files, YAML errors, ``scenario-*`` rules) come back as
  a :class:`~jobsetctl.diagnostics.Report`, nothing runs and nothing is written (exit 1; the CLI renders
  the report like ``validate``);
* otherwise the simulation runs, the requested files are written atomically, stdout gets the chart (or
  JSON), and the outcome is ``failed`` when any object was rejected during the run (exit 1);
* usage errors (unsupported version, unknown gate, an output directory that does not exist) raise
  :class:`~jobsetctl.status.UsageError` before anything runs (exit 2).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TextIO

from rich.console import Console

from jobsetctl.atomicio import atomic_write_text
from jobsetctl.diagnostics import Report
from jobsetctl.simulate.inputs import load_inputs
from jobsetctl.simulate.picture import render_html, render_svg
from jobsetctl.simulate.report import render_json
from jobsetctl.simulate.runner import SimulateOptions, SimulationResult, plan, run_plan
from jobsetctl.simulate.summary import Summary, summarize
from jobsetctl.simulate.terminal import render_terminal
from jobsetctl.simulate.timeline import Timeline, annotate_groups, build_timeline
from jobsetctl.simulate.trace import render_trace
from jobsetctl.status import UsageError


@dataclass(frozen=True, slots=True)
class OutputOptions:
    #: What goes to stdout: "text" (chart, log, summary) or "json".
    format: str = "text"
    trace: str | None = None
    svg: str | None = None
    html: str | None = None
    color: bool = False
    #: Terminal width for the chart; None asks the terminal (80 when it is not one).
    width: int | None = None


@dataclass(slots=True)
class SimulateOutcome:
    #: Problems found before the run (nothing ran), else None.
    report: Report | None = None
    result: SimulationResult | None = None
    summary: Summary | None = None

    @property
    def failed(self) -> bool:
        if self.report is not None:
            return self.report.errors > 0
        return self.result is not None and self.result.rejected > 0


def _check_target(option: str, path: str | None) -> None:
    if path is None:
        return
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise UsageError(f"{option} {path}: directory {directory} does not exist")
    if os.path.isdir(path):
        raise UsageError(f"{option} {path}: is a directory")
    if not os.access(directory, os.W_OK):
        raise UsageError(f"{option} {path}: directory {directory} is not writable")


def execute(options: SimulateOptions, outputs: OutputOptions, stdout: TextIO) -> SimulateOutcome:
    for option, path in (("--trace", outputs.trace), ("--svg", outputs.svg), ("--html", outputs.html)):
        _check_target(option, path)
    inputs = load_inputs(list(options.paths), options.nodes_file)
    if inputs.errors:
        return SimulateOutcome(report=Report(inputs.diagnostics, files=inputs.files,
                                             objects=len(inputs.all_records())))
    the_plan = plan(inputs, options)
    result = run_plan(the_plan, options.seed)
    timeline = build_timeline(result.events, result.ledger, result.end_time)
    annotate_groups(timeline, result.ledger, result.group_records)
    summary = summarize(result.events, result.ledger, timeline)
    write_files(result, timeline, summary, outputs)
    if outputs.format == "json":
        stdout.write(render_json(result, summary))
    else:
        console = Console(file=stdout, width=outputs.width, color_system="auto" if outputs.color else None,
                          force_terminal=outputs.color or None, highlight=False, emoji=False, soft_wrap=True)
        render_terminal(console, result, timeline, summary)
    return SimulateOutcome(result=result, summary=summary)


def write_files(result: SimulationResult, timeline: Timeline, summary: Summary, outputs: OutputOptions) -> None:
    """Only the files asked for, each atomically (a failure leaves the previous file as it was)."""
    title = f"jobsetctl simulate: {result.name}"
    try:
        if outputs.trace:
            atomic_write_text(outputs.trace, render_trace(timeline, result.ledger, result.events, result.name))
        if outputs.svg:
            atomic_write_text(outputs.svg, render_svg(timeline, title))
        if outputs.html:
            subtitle = (f"Kubernetes {result.version.value} · {len(result.ledger.nodes)} nodes · "
                        f"seed {result.seed} · end {result.end_time:g}s")
            atomic_write_text(outputs.html, render_html(timeline, summary, title, subtitle))
    except OSError as exc:
        raise UsageError(f"cannot write output file: {exc.strerror or exc}: {exc.filename}") from None
