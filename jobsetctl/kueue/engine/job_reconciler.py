"""Kueue's job reconciler in a simulation: the creation half (the API side's
:class:`~jobsetctl.fakecluster.controllers.kueue_job.KueueJobReconciler`: the Workload is built and
created, child jobs are held) with the admission half of :mod:`.jobs` in ``sync_with_workload``: the job
starts with its flavors' node selectors, tolerations and the TAS gate once its Workload is admitted, stops
and gives the quota back when the Workload is evicted, and reports PodsReady, reclaimable pods and its
end to the Workload.
"""

from __future__ import annotations

from typing import Any

from jobsetctl.fakecluster.controllers.kueue_job import KueueJobReconciler
from jobsetctl.kinds.interface import Object
from jobsetctl.kueue.engine import jobs
from jobsetctl.kueue.engine.core import Engine
from jobsetctl.kueue.workload import group_kind


class JobReconciler(KueueJobReconciler):
    def __init__(self, options: Any = None) -> None:
        super().__init__(options)
        self._engine: Engine | None = None

    def engine(self) -> Engine | None:
        """The engine of the Kueue component registered beside this reconciler."""
        if self._engine is None:
            from jobsetctl.kueue.engine.controller import KueueController

            for controller in self.manager.controllers:
                if isinstance(controller, KueueController):
                    self._engine = controller.engine
        return self._engine

    def sync_with_workload(self, job: Object, workload: Object) -> float | None:
        engine = self.engine()
        if engine is None or group_kind(job) not in jobs.JOB_KINDS:
            return super().sync_with_workload(job, workload)
        return jobs.reconcile_job(engine, job, workload)
