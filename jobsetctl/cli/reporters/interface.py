"""Output formats of ``validate`` (pip-audit's ``interface.py`` per extension point)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from jobsetctl.diagnostics import Report


class Reporter(ABC):
    """Turns a :class:`~jobsetctl.diagnostics.Report` into text. Pure: no I/O, no exit codes."""

    name: ClassVar[str]
    summary: ClassVar[str]

    def __init__(self, *, color: bool = False) -> None:
        self.color = color

    @abstractmethod
    def render(self, report: Report) -> str:
        """The whole output, ending with a newline when non-empty."""
