"""Kueue as one component of the fake cluster's controller manager.

It watches Kueue's objects, Namespaces and, for topology-aware scheduling, Nodes and Pods; the jobs are
the job reconciler's (:mod:`.job_reconciler`). Configuration objects update the engine's cache at once (as
Kueue's event handlers do); Workloads and jobs are reconciled from the manager's work queue; the
scheduler runs one cycle per reconcile of the ``cycle`` key, again at the same instant while cycles make
progress, and whenever something it depends on changes.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Iterable
from typing import Any, ClassVar

from jobsetctl.fakecluster.apiserver import WatchEvent, WatchType, controller_of
from jobsetctl.fakecluster.manager import Controller, Manager
from jobsetctl.kueue.engine import jobs, names, workloads
from jobsetctl.kueue.engine.conditions import STATUS_FINISHED, first_conditions, true_in, workload_status
from jobsetctl.kueue.engine.core import Engine
from jobsetctl.kueue.engine.settings import EngineSettings, from_kueue_configuration

G = names.GROUP
CYCLE = ("cycle",)
#: Scheduling cycles allowed at one virtual instant (each must make progress to continue).
MAX_CYCLES_PER_INSTANT = 100_000


class KueueController(Controller):
    name: ClassVar[str] = "kueue"
    watches: ClassVar[frozenset[tuple[str, str]] | None] = frozenset({
        (G, "ClusterQueue"), (G, "LocalQueue"), (G, "Cohort"), (G, "ResourceFlavor"), (G, "Topology"),
        (G, "AdmissionCheck"), (G, "Workload"), ("", "Namespace"), ("", "Node"), ("", "Pod"),
    })

    def __init__(self, options: Any = None) -> None:
        super().__init__(options)
        extra = getattr(options, "extra", None) or {}
        settings = extra.get("kueue")
        config = getattr(options, "kueue", None)
        if not isinstance(settings, EngineSettings):
            settings = from_kueue_configuration(config) if config is not None else EngineSettings()
        self.settings: EngineSettings = settings
        self.engine: Engine | None = None
        self._cycles_at: tuple[float, int] = (-1.0, 0)
        self._in_cycle = False
        from jobsetctl.fakecluster.cluster import CHECK_INVARIANTS_ENV

        self._checks = bool(extra.get("check_invariants") if isinstance(extra, dict) else False) or bool(
            os.environ.get(CHECK_INVARIANTS_ENV))

    def setup(self, manager: Manager) -> None:
        super().setup(manager)
        engine = Engine(self.api, self.clock, self.recorder, self.settings)
        engine.kick = self._kick
        engine.reconcile_after = lambda key, delay: manager.enqueue_after(self, ("wl", key), delay)
        # With the invariant checks (the test suite), each shortcut of the engine also does the work it
        # skips and checks that the answers agree.
        engine.verify_shortcuts = self._checks
        self.engine = engine

    def _kick(self) -> None:
        # A cycle's own requeues broadcast as upstream's do (RequeueWorkload), but upstream then spins at
        # real-time backoff over unchanged queues: on the virtual clock a cycle runs again at the same
        # instant only when it made progress (a StrictFIFO head that does not fit would loop forever).
        if not self._in_cycle:
            self.manager.enqueue(self, CYCLE)

    # ---- watch -------------------------------------------------------------------------------------
    def keys_for(self, event: WatchEvent) -> Iterable[Hashable]:
        # Tuples, not a generator: this runs for every Workload write.
        engine = self.engine
        assert engine is not None
        group, kind, namespace, name = event.key
        deleted = event.type == WatchType.DELETED
        obj = None if deleted else event.obj
        if group == G:
            if kind == "Workload":
                if deleted:
                    engine.forget(event.obj)
                    return ()
                if obj is not None:
                    status = workload_status(obj)
                    if status == STATUS_FINISHED:
                        # Kueue's Update handler drops a finished Workload from the cache and the queues as it
                        # sees the event (workload_controller.go), before any scheduling cycle: a cycle at the
                        # same instant must not pick it as a preemption target.
                        engine.observe(obj, status)
                return (("wl", f"{namespace}/{name}"),)
            engine.on_configuration(kind, obj, namespace, name)
            return ()
        if kind == "Namespace" and group == "":
            engine.on_namespace(obj, name)
            return ()
        if engine.tas is not None and group == "":
            return engine.tas.keys_for(event)
        return ()

    # ---- reconcile ---------------------------------------------------------------------------------
    def reconcile(self, key: Hashable) -> float | None:
        engine = self.engine
        assert engine is not None and isinstance(key, tuple)
        if key == CYCLE:
            return self._cycle()
        if key[0] == "wl":
            namespace, _, name = str(key[1]).partition("/")
            obj = self.api.get(G, "Workload", namespace, name)
            if obj is None:
                return None
            engine.observe(obj)
            # The conditions read once for both reconcilers (observe writes nothing). Both start by returning
            # None for a finished workload, writing nothing: two of the five reconciles of a workload that
            # runs to its end come after it finished.
            first = first_conditions(obj)
            if true_in(first, names.FINISHED):
                return None
            read_at = (obj.get("metadata") or {}).get("resourceVersion")
            again = workloads.reconcile(engine, obj, first)
            if controller_of(obj) is None:
                runner = jobs.reconcile_standalone(engine, obj, engine.kept_conditions(obj, first, read_at))
                if runner is not None:
                    again = runner if again is None else min(again, runner)
            return again
        if engine.tas is not None:
            return engine.tas.reconcile(key)
        return None

    def _cycle(self) -> float | None:
        engine = self.engine
        assert engine is not None
        now = self.clock.now
        at, count = self._cycles_at
        count = count + 1 if at == now else 1
        self._cycles_at = (now, count)
        if count > MAX_CYCLES_PER_INSTANT:
            return None
        self._in_cycle = True
        try:
            result = engine.scheduler.schedule()
        finally:
            self._in_cycle = False
        if result.progress:
            self.manager.enqueue(self, CYCLE)
        return None

