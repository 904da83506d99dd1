"""``-o text`` (default): diagnostics grouped by file, each with its source line and a caret, then a summary."""

from __future__ import annotations

from itertools import groupby

from jobsetctl.cli.reporters.interface import Reporter
from jobsetctl.diagnostics import Diagnostic, Report, Severity
from jobsetctl.loader.sources import source_line

_STYLE = {Severity.ERROR: "\033[31m", Severity.WARNING: "\033[33m", Severity.INFO: "\033[36m"}
_BOLD, _DIM, _RESET = "\033[1m", "\033[2m", "\033[0m"
#: Longest source excerpt shown. A minified JSON file is one line: printing it whole under each of its
#: diagnostics multiplied the output by the file size (issue #6).
MAX_EXCERPT = 160
_ELLIPSIS = "..."


def _window(text: str, column: int) -> tuple[str, int]:
    """At most :data:`MAX_EXCERPT` characters of ``text`` around ``column`` (0-based), and the caret's offset in them."""
    if len(text) <= MAX_EXCERPT:
        return text, column
    start = max(0, min(column - MAX_EXCERPT // 2, len(text) - MAX_EXCERPT))
    end = start + MAX_EXCERPT
    prefix = _ELLIPSIS if start > 0 else ""
    suffix = _ELLIPSIS if end < len(text) else ""
    return prefix + text[start:end] + suffix, len(prefix) + column - start


class TextReporter(Reporter):
    name = "text"
    summary = "human-readable, grouped by file, with the source line and a caret (default)"

    def _paint(self, style: str, text: str) -> str:
        return f"{style}{text}{_RESET}" if self.color else text

    def render(self, report: Report) -> str:
        out: list[str] = []
        for file, group in groupby(report.diagnostics, key=lambda d: d.file):
            out.append(self._paint(_BOLD, file))
            for d in group:
                out.extend(self._diagnostic(d))
            out.append("")
        out.append(self._summary(report))
        return "\n".join(out) + "\n"

    def _diagnostic(self, d: Diagnostic) -> list[str]:
        severity = self._paint(_STYLE[d.severity], f"{d.severity:<7}")
        lines = [f"  {d.line}:{d.column}  {severity} {d.message}  {self._paint(_DIM, f'[{d.layer}/{d.rule}]')}"]
        text = source_line(d.file, d.line)
        if text is not None and text.strip():
            gutter = f"{d.line:>6} | "
            shown, caret = _window(text.expandtabs(1), max(d.column - 1, 0))
            lines.append(f"  {gutter}{shown}")
            lines.append("  " + " " * (len(gutter) - 2) + "| " + " " * caret + self._paint(_STYLE[d.severity], "^"))
        if d.hint:
            lines.append(f"         hint: {d.hint}")
        note = d.after_note
        if note is not None:
            lines.append(f"         note: {note}")
        return lines

    def _summary(self, report: Report) -> str:
        errors, warnings = report.errors, report.warnings
        infos = report.count(Severity.INFO)
        files_with = len({d.file for d in report.diagnostics if d.severity is not Severity.INFO})
        counts = f"{errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}"
        if infos:
            counts += f", {infos} note{'s' * (infos != 1)}"
        checked = f"{report.objects} object{'s' * (report.objects != 1)} in {report.files} file{'s' * (report.files != 1)}"
        if errors or warnings:
            return f"{counts} in {files_with} file{'s' * (files_with != 1)} ({checked} checked)"
        return f"ok: {checked} checked, no problems" + (f" ({counts})" if infos else "")
