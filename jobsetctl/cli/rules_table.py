"""``jobsetctl rules``: the registry as a table or JSON."""

from __future__ import annotations

import json

from jobsetctl.rules import all_rules


def render_rules(fmt: str) -> str:
    rules = all_rules()
    if fmt == "json":
        return json.dumps(
            [
                {"id": r.id, "severity": str(r.severity), "layer": str(r.layer), "summary": r.summary, "spec": r.spec,
                 "fix": r.fix}
                for r in rules
            ],
            indent=2,
        ) + "\n"
    width = max((len(r.id) for r in rules), default=10)
    lines = [f"{'RULE':<{width}}  {'SEVERITY':<8}  {'LAYER':<9}  DESCRIPTION"]
    for r in rules:
        lines.append(f"{r.id:<{width}}  {r.severity!s:<8}  {r.layer!s:<9}  {r.summary}")
        if r.fix:
            lines.append(f"{'':<{width}}  {'':<8}  {'':<9}  fix: {r.fix}")
    return "\n".join(lines) + "\n"
