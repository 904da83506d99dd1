"""Progress of a long simulation on stderr (issue 12): simulated time reached, pods bound, events.

Shown only when stderr is a terminal and the run has taken more than :data:`SHOW_AFTER` seconds of wall
time: a run of a few seconds, a pipe, a CI log or a test get nothing. The bar is rich's ``Progress``,
refreshed by the run's own step hook at most every :data:`REFRESH` seconds (no refresh thread: nothing
runs beside the simulation) and removed when the run ends (``transient``), so the terminal keeps only the
command's output.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO, cast

from jobsetctl.fakecluster.events import SimEvent
from jobsetctl.kube.duration import format_duration

# rich only once a line is drawn: a run nobody watches does without it.
if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

#: Wall seconds before anything is shown.
SHOW_AFTER = 1.0
#: Wall seconds between two refreshes of the line.
REFRESH = 0.1


def wants_progress(stream: TextIO | None) -> bool:
    """Whether ``stream`` is a terminal (progress is for people watching, not for logs or pipes)."""
    isatty = getattr(stream, "isatty", None)
    return bool(callable(isatty) and isatty())


class RunProgress:
    """Fed by the runner after every instant (:meth:`step`); draws once the run is long enough."""

    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream
        self.clock = clock
        self.started = clock()
        self.next_refresh = self.started + SHOW_AFTER
        self.progress: Progress | None = None
        self.task = cast("TaskID", 0)
        #: Pods bound so far, counted from the timeline's ``Scheduled`` events up to :attr:`seen`.
        self.bound = 0
        self.seen = 0

    def step(self, now: float, events: list[SimEvent]) -> None:
        wall = self.clock()
        if wall < self.next_refresh:
            return
        self.next_refresh = wall + REFRESH
        for event in events[self.seen:]:
            if event.event == "Scheduled" and event.kind == "Pod":
                self.bound += 1
        self.seen = len(events)
        if self.progress is None:
            from rich.console import Console
            from rich.progress import Progress, TextColumn, TimeElapsedColumn

            console = Console(file=self.stream, force_terminal=True, highlight=False, emoji=False)
            self.progress = Progress(TextColumn("simulating"), TextColumn("{task.description}"),
                                     TimeElapsedColumn(), console=console, transient=True, auto_refresh=False)
            self.progress.start()
            self.task = self.progress.add_task("", total=None)
        self.progress.update(self.task, description=f"virtual time {format_duration(now)} · "
                                                    f"{self.bound:,} pods bound · {len(events):,} events")
        self.progress.refresh()

    def close(self) -> None:
        """The run ended (or failed): remove the line."""
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
