"""``jobsetctl simulate`` as one package function: read, check, run, write the outputs.

The CLI (``jobsetctl.cli.simulate_cmd``) parses options into :class:`SimulateOptions` and
:class:`OutputOptions`, calls :func:`execute` and maps the outcome to an exit status:

* input problems found before the run (unreadable files, YAML errors, ``scenario-*`` rules, a Scenario's
  unsupported ``kubernetesVersion`` or unknown feature gate) come back, all of them at once, as a
  :class:`~jobsetctl.diagnostics.Report`, nothing runs and nothing is written (exit 1; the CLI renders
  the report like ``validate``);
* otherwise the simulation runs, the requested files are written atomically, stdout gets the chart (or
  JSON), and the outcome is ``failed`` when any object was rejected during the run (exit 1);
* usage errors (an unsupported ``--kubernetes-version``, an unknown gate in ``--feature-gates``, an output
  directory that does not exist) raise
  :class:`~jobsetctl.status.UsageError` before anything runs (exit 2);
* a run that takes more than a second shows its progress on ``stderr`` when that is a terminal (simulated
  time, pods bound, events; :mod:`jobsetctl.simulate.progress`), nothing otherwise;
* submissions and actions timed after ``until`` get a warning each on ``stderr`` (they never happen);
* validate's lint findings on the submitted objects, and its findings on Kueue queues found in neither the
  inputs nor the context (``--context``), are written to ``stderr`` before the run, as validate prints them
  (a replicated job that depends on itself, or a job queued to a LocalQueue the simulated cluster lacks,
  would otherwise only wait in the chart); they do not change the exit status;
* a run whose controllers create more objects than :mod:`jobsetctl.simulate.limits` allows is abandoned
  and reported like an input problem (exit 1), at the input the objects descend from.
"""

from __future__ import annotations

import dataclasses
import io
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TextIO

from jobsetctl.atomicio import atomic_write_text
from jobsetctl.diagnostics import Diagnostic, Report
from jobsetctl.kube.duration import format_duration
from jobsetctl.simulate.inputs import Inputs, load_inputs
from jobsetctl.simulate.limits import ObjectLimitExceeded, limit_diagnostic
from jobsetctl.simulate.progress import RunProgress, wants_progress
from jobsetctl.simulate.report import render_json
from jobsetctl.simulate.runner import (
    Plan,
    SimulateOptions,
    SimulationResult,
    after_the_end,
    plan,
    run_plan,
    settings_problems,
)
from jobsetctl.simulate.summary import Summary, summarize
from jobsetctl.simulate.timeline import Timeline, annotate_groups, build_timeline, chart_end
from jobsetctl.simulate.verdict import Verdict, judge_never_started
from jobsetctl.status import UsageError

# The chart's renderers (rich, the SVG and HTML pages, the Perfetto trace) are imported where they are used:
# ``simulate -o json`` needs none of them, and importing them was a part of every run's start.

#: Width of the text output when stdout is not a terminal and ``COLUMNS`` is not set (CI logs, ``| less``,
#: a file): wide enough for a readable chart and unabridged summary headings.
PIPE_WIDTH = 120


@dataclass(frozen=True, slots=True)
class OutputOptions:
    #: What goes to stdout: "text" (chart, log, summary) or "json".
    format: str = "text"
    trace: str | None = None
    svg: str | None = None
    html: str | None = None
    color: bool = False
    #: Width of the text output (``--width``); None: :func:`output_width` decides.
    width: int | None = None
    #: ``--explain``: a Kueue workload (or its job) whose reasons to wait are printed instead of the chart.
    explain: str | None = None
    #: ``--at``: when to explain (the run stops there); None: where the run ends.
    explain_at: float | None = None


@dataclass(slots=True)
class SimulateOutcome:
    #: Problems found before the run (nothing ran), else None.
    report: Report | None = None
    result: SimulationResult | None = None
    summary: Summary | None = None
    #: A verdict per workload that never started (``--fail-if-pending`` exits 1 when there is one).
    never_started: list[Verdict] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        if self.report is not None:
            return self.report.errors > 0
        return self.result is not None and self.result.rejected > 0


def _check_target(option: str, path: str | None) -> None:
    if path is None:
        return
    if os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path):
        # A device or a FIFO (/dev/null, >(gzip > x)): written to directly (atomicio), so it is the file,
        # not its directory, that must be writable.
        if not os.access(path, os.W_OK):
            raise UsageError(f"{option} {path}: not writable")
        return
    directory = os.path.dirname(os.path.realpath(path))
    if not os.path.isdir(directory):
        raise UsageError(f"{option} {path}: directory {directory} does not exist")
    if os.path.isdir(path):
        raise UsageError(f"{option} {path}: is a directory")
    if not os.access(directory, os.W_OK):
        raise UsageError(f"{option} {path}: directory {directory} is not writable")


def execute(
    options: SimulateOptions, outputs: OutputOptions, stdout: TextIO, stderr: TextIO | None = None
) -> SimulateOutcome:
    for option, path in (("--trace", outputs.trace), ("--svg", outputs.svg), ("--html", outputs.html)):
        _check_target(option, path)
    inputs = load_inputs(list(options.paths), options.nodes_file, options.max_objects)
    inputs.diagnostics.extend(settings_problems(inputs, options))
    inputs.diagnostics.sort(key=Diagnostic.sort_key)
    if inputs.errors:
        return SimulateOutcome(report=Report(inputs.diagnostics, files=inputs.files,
                                             objects=len(inputs.all_records())))
    if inputs.diagnostics and stderr is not None:
        # Notes and warnings about the inputs (an empty file ...) do not stop the run; say them as
        # validate would, on stderr, so that stdout stays the chart or the JSON document.
        from jobsetctl.cli.reporters import REPORTERS

        stderr.write(REPORTERS["text"](color=False).render(
            Report(inputs.diagnostics, files=inputs.files, objects=len(inputs.all_records()))))
    the_plan = plan(inputs, options)
    if stderr is not None:
        _lint_warnings(inputs, the_plan, stderr)
    for file, when, position, what in after_the_end(inputs, the_plan.until):
        line, column = position or (1, 1)
        if stderr is not None:
            stderr.write(f"jobsetctl simulate: warning: {file}:{line}:{column}: {what} at {format_duration(when)} "
                         f"comes after the end of the run ({format_duration(the_plan.until or 0)}) and never happens\n")
    if outputs.explain is not None and outputs.explain_at is not None:
        the_plan = dataclasses.replace(the_plan, until=outputs.explain_at)
    watch = RunProgress(stderr) if stderr is not None and wants_progress(stderr) else None
    try:
        result = run_plan(the_plan, options.seed, watch)
    except ObjectLimitExceeded as exc:
        # Bounded memory: the estimate before the run missed it (a runtime's replicas, objects made over
        # time); reported like an input problem, at the input the runaway objects descend from.
        diagnostic = limit_diagnostic(exc, inputs.all_records(), "simulate")
        return SimulateOutcome(report=Report([diagnostic], files=inputs.files, objects=len(inputs.all_records())))
    if outputs.explain is not None:
        from jobsetctl.simulate.kueue_explain import explain

        lines = explain(result, outputs.explain)
        if outputs.format == "json":
            import json

            stdout.write(json.dumps({"workload": outputs.explain, "at": result.end_time, "explanation": lines},
                                    indent=2) + "\n")
        else:
            stdout.write("\n".join(lines) + "\n")
        return SimulateOutcome(result=result)
    timeline = build_timeline(result.events, result.ledger, result.end_time)
    annotate_groups(timeline, result.ledger, result.group_records)
    summary = summarize(result.events, result.ledger, timeline)
    verdicts = judge_never_started(result.cluster, summary, timeline)
    result.cluster = None  # the verdicts were its last reader: let it go before the outputs are made
    axis_end = chart_end(timeline, until_asked=options.until is not None)
    write_files(result, timeline, summary, outputs, axis_end)
    if outputs.format == "json":
        stdout.write(render_json(result, summary))
    else:
        # Rendered into a buffer, then written at once: rich turns a broken pipe (``simulate | head``) into
        # SystemExit(1), where the CLI's own handling of BrokenPipeError exits 0 as every command does.
        from rich.console import Console

        from jobsetctl.simulate.terminal import render_terminal

        width = output_width(outputs.width, stdout, os.environ)
        buffer = io.StringIO()
        console = Console(file=buffer, width=width, color_system="auto" if outputs.color else None,
                          force_terminal=outputs.color or None, highlight=False, emoji=False, soft_wrap=True)
        render_terminal(console, result, timeline, summary, axis_end)
        stdout.write(buffer.getvalue())
    return SimulateOutcome(result=result, summary=summary, never_started=verdicts)


def _lint_warnings(inputs: Inputs, the_plan: Plan, stderr: TextIO) -> None:
    from jobsetctl.cli.reporters import REPORTERS
    from jobsetctl.kinds.interface import AdmissionContext
    from jobsetctl.validate import lint_records

    records = inputs.all_records()
    found = lint_records(records, AdmissionContext(the_plan.version, the_plan.gates, kueue=the_plan.kueue),
                         the_plan.context)
    if found:
        stderr.write(REPORTERS["text"](color=False).render(Report(found, files=inputs.files, objects=len(records))))


def output_width(width: int | None, stdout: TextIO, environ: Mapping[str, str]) -> int:
    """``--width``, else ``COLUMNS``, else the terminal's width, else :data:`PIPE_WIDTH` (not a terminal:
    rich would say 80, which squeezes the chart to a few columns and cuts the summary's headings)."""
    if width:
        return width
    columns = environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    isatty = getattr(stdout, "isatty", None)
    if callable(isatty) and isatty():
        from rich.console import Console

        return Console(file=stdout).width
    return PIPE_WIDTH


def write_files(result: SimulationResult, timeline: Timeline, summary: Summary, outputs: OutputOptions,
                axis_end: float | None = None) -> None:
    """Only the files asked for, each atomically (a failure leaves the previous file as it was). Every
    content is made before the first file is written, so that a failure while making one writes none."""
    from jobsetctl.simulate.htmlpage import render_html
    from jobsetctl.simulate.picture import render_svg
    from jobsetctl.simulate.trace import render_trace

    title = f"jobsetctl simulate: {result.name}"
    end = timeline.end_time if axis_end is None else axis_end
    contents: list[tuple[str, str, str]] = []
    if outputs.trace:
        contents.append(("--trace", outputs.trace, render_trace(timeline, result.ledger, result.events, result.name)))
    if outputs.svg:
        contents.append(("--svg", outputs.svg, render_svg(timeline, title, end)))
    if outputs.html:
        contents.append(("--html", outputs.html, render_html(result, timeline, summary, title, end)))
    for option, path, text in contents:
        try:
            atomic_write_text(path, text)
        except OSError as exc:
            # A write error has no file name of its own (a full disk, a file size limit): name the target.
            raise UsageError(f"{option} {path}: cannot write: {exc.strerror or exc}") from None
