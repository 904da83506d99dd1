"""``-o github``: GitHub Actions workflow commands, one annotation per diagnostic, grouped per file."""

from __future__ import annotations

from jobsetctl.cli.reporters.interface import Reporter
from jobsetctl.diagnostics import Report, Severity

_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


class GithubReporter(Reporter):
    name = "github"
    summary = "GitHub Actions annotations (the default when GITHUB_ACTIONS=true)"

    def render(self, report: Report) -> str:
        lines: list[str] = []
        current: str | None = None
        for d in report.diagnostics:
            if d.file != current:
                if current is not None:
                    lines.append("::endgroup::")
                lines.append(f"::group::{_escape_data(d.file)}")
                current = d.file
            message = d.message + (f" (hint: {d.hint})" if d.hint else "") + (
                f" (note: {d.after_note})" if d.after is not None else "")
            lines.append(
                f"::{_COMMAND[d.severity]} file={_escape_property(d.file)},line={d.line},col={d.column},"
                f"title={_escape_property(d.rule)}::{_escape_data(message)}"
            )
        if current is not None:
            lines.append("::endgroup::")
        return "\n".join(lines) + ("\n" if lines else "")
