"""``-o sarif``: SARIF 2.1.0, the subset code-scanning tools read, built as plain dicts (anchors.md §4)."""

from __future__ import annotations

import json
from typing import Any

from jobsetctl import __version__
from jobsetctl.cli.reporters.interface import Reporter
from jobsetctl.diagnostics import Report, Severity
from jobsetctl.rules import all_rules

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


class SarifReporter(Reporter):
    name = "sarif"
    summary = "SARIF 2.1.0 for code-scanning dashboards"

    def render(self, report: Report) -> str:
        rules = all_rules()
        index = {rule.id: i for i, rule in enumerate(rules)}
        results: list[dict[str, Any]] = []
        for d in report.diagnostics:
            result: dict[str, Any] = {
                "ruleId": d.rule,
                "level": _LEVEL[d.severity],
                "message": {"text": d.message + (f"\nhint: {d.hint}" if d.hint else "")
                            + (f"\nnote: {d.after_note}" if d.after is not None else "")},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": {"uri": _uri(d.file)},
                        "region": {"startLine": max(d.line, 1), "startColumn": max(d.column, 1)},
                    },
                }],
                "properties": {"layer": str(d.layer), "path": d.path},
            }
            if d.rule in index:
                result["ruleIndex"] = index[d.rule]
            if d.object is not None:
                result["properties"]["object"] = d.object.as_dict()
            if d.after is not None:
                # Not what the API server answers: upstream stops at these errors first (issue #13).
                result["properties"]["after"] = str(d.after)
            results.append(result)
        document = {
            "$schema": SARIF_SCHEMA,
            "version": "2.1.0",
            "runs": [{
                "tool": {
                    "driver": {
                        "name": "jobsetctl",
                        "version": __version__,
                        "informationUri": "https://github.com/jobsetctl/jobsetctl",
                        "rules": [
                            {
                                "id": rule.id,
                                "name": rule.id,
                                "shortDescription": {"text": rule.summary},
                                "defaultConfiguration": {"level": _LEVEL[rule.severity]},
                                "properties": {"layer": str(rule.layer), "spec": rule.spec},
                            }
                            for rule in rules
                        ],
                    }
                },
                "results": results,
            }],
        }
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _uri(path: str) -> str:
    return path.replace("\\", "/").removeprefix("./")
