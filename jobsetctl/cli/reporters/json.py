"""``-o json``: one object, version 1 (a stable contract; tools parse it)."""

from __future__ import annotations

import json

from jobsetctl.cli.reporters.interface import Reporter
from jobsetctl.diagnostics import Report

FORMAT_VERSION = 1


def report_dict(report: Report) -> dict[str, object]:
    return {
        "version": FORMAT_VERSION,
        "summary": {
            "files": report.files,
            "objects": report.objects,
            "errors": report.errors,
            "warnings": report.warnings,
        },
        "diagnostics": [d.as_dict() for d in report.diagnostics],
    }


class JsonReporter(Reporter):
    name = "json"
    summary = "one JSON object: version, summary counts and every diagnostic"

    def render(self, report: Report) -> str:
        return json.dumps(report_dict(report), indent=2, ensure_ascii=False) + "\n"
