"""The reporter registry: one table drives ``-o`` choices, docs and tests."""

from __future__ import annotations

from jobsetctl.cli.reporters.github import GithubReporter
from jobsetctl.cli.reporters.interface import Reporter
from jobsetctl.cli.reporters.json import JsonReporter
from jobsetctl.cli.reporters.sarif import SarifReporter
from jobsetctl.cli.reporters.text import TextReporter

REPORTERS: dict[str, type[Reporter]] = {
    cls.name: cls for cls in (TextReporter, JsonReporter, SarifReporter, GithubReporter)
}

__all__ = ["REPORTERS", "Reporter"]
