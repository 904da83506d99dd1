"""``jobsetctl render`` as one package function: render, then write the output and the summary.

The CLI (:mod:`jobsetctl.cli.render_cmd`) builds :class:`~jobsetctl.render.pipeline.RenderOptions`,
calls :func:`execute` and maps the outcome to an exit status:

* input the API server refuses (``validate``'s errors of the admission layers): its diagnostics go to
  stderr, nothing to stdout, nothing is written (exit 1);
* input it accepts but whose later creations fail (``validate``'s consequence errors, issue #13): the
  diagnostics go to stderr and the objects to stdout, the refused creation among them with its
  ``jobsetctl.dev/render-note``; the outcome is failed (exit 1), as ``validate``'s;
* otherwise the objects go to stdout (YAML stream, or a ``v1`` ``List`` with ``-o json``), or only to
  ``--output-dir`` (one file per object, each written atomically), and a summary goes to stderr: the
  gates render turned on (once), what ``--gang`` generated, objects per kind, pods and requests per
  replicated job;
* any other object the API server refused (other than exclusive-placement followers waiting for their
  leader, which are expected) makes the outcome failed (exit 1); the refused request is still printed,
  with its ``jobsetctl.dev/render-note``;
* usage errors raise :class:`~jobsetctl.status.UsageError` before anything is rendered (exit 2).
"""

from __future__ import annotations

from typing import TextIO

from jobsetctl.diagnostics import Report
from jobsetctl.gang import deadlock_warning, describe
from jobsetctl.render.capture import printable
from jobsetctl.render.emit import check_output_dir, dump, write_directory
from jobsetctl.render.pipeline import Rendered, RenderOptions, RenderOutcome, render
from jobsetctl.render.summary import summary_lines

PROG = "jobsetctl render"


def execute(options: RenderOptions, stdout: TextIO, stderr: TextIO, *, color: bool = False) -> RenderOutcome:
    if options.output_dir is not None:
        check_output_dir(options.output_dir)
    outcome = render(options)
    if outcome.report is not None:
        _diagnostics(outcome.report, stderr, color)
        return outcome
    rendered = outcome.rendered
    assert rendered is not None
    if outcome.warnings is not None:
        _diagnostics(outcome.warnings, stderr, color)
    objects = [printable(entry, stages=rendered.show_stages) for entry in rendered.printed()]
    if options.output_dir is not None:
        written = write_directory(options.output_dir, objects, options.output)
        stderr.write(f"{PROG}: wrote {len(written)} file{'s' * (len(written) != 1)} to {options.output_dir}\n")
    else:
        stdout.write(dump(objects, options.output))
    for line in notes(rendered):
        stderr.write(f"{PROG}: {line}\n")
    for line in summary_lines(rendered.printed()):
        stderr.write(f"{line}\n")
    return outcome


def _diagnostics(report: Report, stderr: TextIO, color: bool) -> None:
    from jobsetctl.cli.reporters import REPORTERS

    stderr.write(REPORTERS["text"](color=color).render(report))


def notes(rendered: Rendered) -> list[str]:
    """The stderr lines after the output (see the module docstring)."""
    lines: list[str] = []
    if rendered.enabled_gates:
        lines.append(f"turned on feature gates {', '.join(rendered.enabled_gates)}: the inputs use them "
                     f"(--feature-gates Name=false shows a cluster without one)")
    for plan in rendered.plans:
        lines.append(f"--gang generated for {describe(plan)}")
        warning = deadlock_warning(plan)
        if warning is not None:
            lines.append(warning)
    if rendered.passed_over:
        lines.append(f"passed over what is no API object: {'; '.join(rendered.passed_over)}")
    for index, pretence in enumerate(rendered.stages, start=1):
        parts = []
        if pretence.made_ready:
            parts.append(f"Jobs {', '.join(pretence.made_ready)} ready")
        if pretence.completed:
            parts.append(f"Jobs {', '.join(pretence.completed)} complete")
        lines.append(f"stage {index}: released by pretending {' and '.join(parts)}")
    for refused in rendered.refused_inputs:
        lines.append(f"error: the API server refused {refused}")
    for entry in rendered.unexpected:
        md = entry.obj.get("metadata") or {}
        lines.append(f"error: {entry.kind} {md.get('name') or md.get('generateName') or ''}: {entry.note}")
    return lines
