"""Helpers for end-to-end simulate tests: run the real pipeline on inline Scenarios, compare golden JSON."""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path
from typing import Any

from jobsetctl.simulate.command import OutputOptions, SimulateOutcome, execute
from jobsetctl.simulate.runner import SimulateOptions
from tests.helpers import dedent

GOLDEN = Path(__file__).parent / "golden"
UPDATE_GOLDEN = os.environ.get("JOBSETCTL_UPDATE_GOLDEN") == "1"
#: The 5 random characters the API server appends to generated names (apimachinery's alphabet).
GENERATED_SUFFIX = re.compile(r"-[bcdfghjklmnpqrstvwxz2456789]{5}\b")


def run_json(path: str | Path, **options: Any) -> tuple[str, SimulateOutcome]:
    """``jobsetctl simulate PATH -o json``, through the package function the CLI calls."""
    out = io.StringIO()
    outputs = OutputOptions("json", **{k: options.pop(k) for k in ("trace", "svg", "html") if k in options})
    outcome = execute(SimulateOptions([str(path)], **options), outputs, out)
    return out.getvalue(), outcome


def write_scenario(tmp_path: Path, text: str, name: str = "scenario.yaml") -> Path:
    path = tmp_path / name
    path.write_text(dedent(text))
    return path


def events_of(document: dict[str, Any]) -> list[tuple[Any, ...]]:
    """(time, kind, name with generated suffixes as -XXXXX, event, node) per event, for exact sequences."""
    return [(e["time"], e["kind"], GENERATED_SUFFIX.sub("-XXXXX", e["name"]), e["event"], e.get("node"))
            for e in document["events"]]


def assert_golden(name: str, text: str) -> None:
    """Compare with ``golden/<name>``; ``JOBSETCTL_UPDATE_GOLDEN=1`` rewrites it instead."""
    path = GOLDEN / name
    if UPDATE_GOLDEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return
    assert path.exists(), f"{path} is missing: run with JOBSETCTL_UPDATE_GOLDEN=1 once and review it"
    assert text == path.read_text(), f"{name} differs from the golden file (JOBSETCTL_UPDATE_GOLDEN=1 to accept)"


def load(text: str) -> dict[str, Any]:
    value = json.loads(text)
    assert isinstance(value, dict)
    return value
