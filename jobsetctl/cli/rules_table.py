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
                 "fix": r.fix, "fix_needs_include_info": bool(r.fix) and str(r.severity) == "info"}
                for r in rules
            ],
            indent=2,
        ) + "\n"
    width = max((len(r.id) for r in rules), default=10)
    layer_width = max((len(str(r.layer)) for r in rules), default=5)
    lines = [f"{'RULE':<{width}}  {'SEVERITY':<8}  {'LAYER':<{layer_width}}  DESCRIPTION"]
    for r in rules:
        lines.append(f"{r.id:<{width}}  {r.severity!s:<8}  {r.layer!s:<{layer_width}}  {r.summary}")
        if r.fix:
            # `jobsetctl fix` applies the fixes of info-level findings only with --include-info.
            label = "fix (with --include-info)" if str(r.severity) == "info" else "fix"
            lines.append(f"{'':<{width}}  {'':<8}  {'':<{layer_width}}  {label}: {r.fix}")
    return "\n".join(lines) + "\n"
