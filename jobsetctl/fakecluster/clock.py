"""Virtual time: a clock that only moves when the simulation says so, and timers ordered deterministically."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

#: Virtual time zero. Any fixed instant works; this one keeps timestamps readable.
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(order=True, slots=True)
class Timer:
    when: float
    seq: int
    callback: Callable[..., Any] = field(compare=False)
    args: tuple[Any, ...] = field(compare=False, default=())
    cancelled: bool = field(compare=False, default=False)

    def cancel(self) -> None:
        self.cancelled = True


class VirtualClock:
    """Seconds since the start of the simulation, and a heap of timers.

    Ties are broken by scheduling order, so two runs with the same inputs fire timers identically.
    """

    def __init__(self, epoch: datetime = EPOCH) -> None:
        self.now = 0.0
        self.epoch = epoch
        # Heap entries are (when, seq, timer): tuples of a float and a unique int compare in C, where the
        # dataclass ordering of Timer would run Python code for every comparison.
        self._timers: list[tuple[float, int, Timer]] = []
        self._seq = itertools.count()
        self._texts: dict[int, str] = {}
        self._seconds: dict[str, float] = {}

    def call_at(self, when: float, callback: Callable[..., Any], *args: Any) -> Timer:
        timer = Timer(max(when, self.now), next(self._seq), callback, args)
        heapq.heappush(self._timers, (timer.when, timer.seq, timer))
        return timer

    def call_later(self, delay: float, callback: Callable[..., Any], *args: Any) -> Timer:
        return self.call_at(self.now + max(delay, 0.0), callback, *args)

    def next_time(self) -> float | None:
        timers = self._timers
        while timers and timers[0][2].cancelled:
            heapq.heappop(timers)
        return timers[0][0] if timers else None

    def pop_due(self, until: float) -> Timer | None:
        """The next timer due at or before ``until`` (advancing the clock to it), or None."""
        when = self.next_time()
        if when is None or when > until:
            return None
        timer = heapq.heappop(self._timers)[2]
        self.now = max(self.now, timer.when)
        return timer

    def advance_to(self, when: float) -> None:
        self.now = max(self.now, when)

    def timestamp(self, at: float | None = None) -> str:
        """RFC 3339 with second precision, as ``metav1.Time`` serialises."""
        second = int(self.now if at is None else at)
        text = self._texts.get(second)
        if text is None:
            text = (self.epoch + timedelta(seconds=second)).strftime("%Y-%m-%dT%H:%M:%SZ")
            self._texts[second] = text
            self._seconds[text] = float(second)
        return text

    def seconds_of(self, timestamp: str) -> float:
        """Virtual seconds of an RFC 3339 timestamp written by :meth:`timestamp`.

        Controllers compare condition times all the time; ``strptime`` is slow, so both directions are
        memoised (second precision keeps the tables as small as the simulated span).
        """
        seconds = self._seconds.get(timestamp)
        if seconds is None:
            moment = datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
            seconds = (moment - self.epoch).total_seconds()
            self._seconds[timestamp] = seconds
        return seconds
