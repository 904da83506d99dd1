"""The controller manager: work queues fed by watch events, reconciles run to a fixed point at each instant.

"Controllers react at once" (issue #4): every reconcile happens at the virtual instant of the event that
caused it; time only moves to the next timer once nothing is left to do now. A controller that keeps
finding work at one instant is a bug or a livelock; we stop with a clear error instead of hanging.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Hashable, Iterable
from typing import TYPE_CHECKING, Any, ClassVar

from jobsetctl.fakecluster.apiserver import APIServer, WatchEvent
from jobsetctl.fakecluster.clock import Timer, VirtualClock
from jobsetctl.fakecluster.events import Recorder

if TYPE_CHECKING:
    pass

#: Reconciles allowed at one virtual instant before we call it a livelock.
MAX_RECONCILES_PER_INSTANT = 2_000_000


class SimulationStuck(RuntimeError):
    """Controllers did not settle: a bug in a controller or an input that makes them loop."""


class Controller(ABC):
    """One control loop. ``keys_for`` maps a watch event to the keys to reconcile; ``reconcile`` does the
    work for one key and may ask to be called again after some virtual seconds."""

    name: ClassVar[str]
    #: The (group, kind) pairs whose watch events ``keys_for`` may map to keys; None for every kind. The
    #: manager calls ``keys_for`` only for these, so for any other kind it must yield nothing and change
    #: nothing (most events are of kinds a controller ignores: routing skips a call per controller).
    watches: ClassVar[frozenset[tuple[str, str]] | None] = None

    def __init__(self, options: Any = None) -> None:
        #: The cluster's ``ClusterOptions`` (version, gates, seed, simulate, create_pods, extra).
        self.options = options

    def setup(self, manager: Manager) -> None:
        self.manager = manager
        self.api = manager.api
        self.clock = manager.clock
        self.recorder = manager.recorder

    @abstractmethod
    def keys_for(self, event: WatchEvent) -> Iterable[Hashable]:
        """Keys of work this event creates (e.g. the owning JobSet of a changed Job)."""

    @abstractmethod
    def reconcile(self, key: Hashable) -> float | None:
        """Do the work for ``key``; return seconds after which to reconcile it again, or None."""


class Manager:
    def __init__(self, api: APIServer, clock: VirtualClock, recorder: Recorder) -> None:
        self.api = api
        self.clock = clock
        self.recorder = recorder
        self.controllers: list[Controller] = []
        self._queue: deque[tuple[Controller, Hashable]] = deque()
        self._pending: set[tuple[str, Hashable]] = set()
        self._timers: dict[tuple[str, Hashable], Timer] = {}
        self.reconciles = 0
        #: Per (group, kind): the controllers that watch it, in registration order (see ``watches``).
        self._routes: dict[tuple[str, str], tuple[Controller, ...]] = {}
        self._routed = 0
        api.subscribe(self._on_event)

    def add(self, controller: Controller) -> None:
        controller.setup(self)
        self.controllers.append(controller)

    def _route(self, group_kind: tuple[str, str]) -> tuple[Controller, ...]:
        if self._routed != len(self.controllers):
            self._routes.clear()  # a controller was added since the routes were computed
            self._routed = len(self.controllers)
        routes = self._routes.get(group_kind)
        if routes is None:
            routes = tuple(c for c in self.controllers if c.watches is None or group_kind in c.watches)
            self._routes[group_kind] = routes
        return routes

    def _on_event(self, event: WatchEvent) -> None:
        key_of_event = event.key
        pending = self._pending
        routes = self._routes.get((key_of_event[0], key_of_event[1])) if self._routed == len(self.controllers) else None
        if routes is None:
            routes = self._route((key_of_event[0], key_of_event[1]))
        for controller in routes:
            for key in controller.keys_for(event):
                token = (controller.name, key)  # as ``enqueue``, inlined: this runs for every event
                if token not in pending:
                    pending.add(token)
                    self._queue.append((controller, key))

    def enqueue(self, controller: Controller, key: Hashable) -> None:
        token = (controller.name, key)
        if token not in self._pending:
            self._pending.add(token)
            self._queue.append((controller, key))

    def enqueue_after(self, controller: Controller, key: Hashable, delay: float) -> None:
        token = (controller.name, key)
        when = self.clock.now + max(delay, 0.0)
        existing = self._timers.get(token)
        if existing is not None and not existing.cancelled and existing.when <= when:
            return
        if existing is not None:
            existing.cancel()
        self._timers[token] = self.clock.call_at(when, self._fire, controller, key)

    def _fire(self, controller: Controller, key: Hashable) -> None:
        self._timers.pop((controller.name, key), None)
        self.enqueue(controller, key)

    def settle(self) -> None:
        """Run reconciles until no controller has work at the current instant."""
        done = 0
        while self._queue:
            controller, key = self._queue.popleft()
            self._pending.discard((controller.name, key))
            again = controller.reconcile(key)
            self.reconciles += 1
            done += 1
            if again is not None:
                self.enqueue_after(controller, key, again)
            if done > MAX_RECONCILES_PER_INSTANT:
                raise SimulationStuck(
                    f"controllers did not settle at t={self.clock.now:g}s after {done} reconciles "
                    f"(last: {controller.name} {key!r})"
                )

    def run(self, until: float | None = None, on_step: Callable[[], Any] | None = None) -> None:
        """Settle, then move from timer to timer until ``until`` or until nothing is scheduled."""
        self.settle()
        if on_step:
            on_step()
        while True:
            next_time = self.clock.next_time()
            if next_time is None or (until is not None and next_time > until):
                break
            timer = self.clock.pop_due(next_time)
            if timer is None:
                break
            timer.callback(*timer.args)
            # Every timer of this instant fires before the controllers run: 1,000 pods that start
            # together then cost the Job controller one sync, not one (over all 1,000 pods) per pod,
            # which made a large Job quadratic. Upstream batches pod events for a second
            # (``syncJobBatchPeriod``); we stay within the instant, so no timestamp moves.
            while (timer := self.clock.pop_due(next_time)) is not None:
                timer.callback(*timer.args)
            self.settle()
            if on_step:
                on_step()
        if until is not None:
            self.clock.advance_to(until)
