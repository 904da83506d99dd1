"""The fake kube-scheduler of ``simulate`` (issues #4 and #5).

Built the way kube-scheduler is (scheduling.md §1.3, §3): a scheduling queue (:mod:`.queue`), a cache
updated from watch events (:mod:`.snapshot`), a framework of plugins per extension point
(:mod:`.interface`, :mod:`.framework`, :mod:`.plugins`), pod-by-pod cycles with Permit (:mod:`.podcycle`),
PodGroup/workload cycles with topology-aware placement and workload-aware preemption (:mod:`.groupcycle`,
:mod:`.placement`, :mod:`.domainindex`, :mod:`.composite`, :mod:`.workloadpreemption`), and the writes
and timeline events (:mod:`.actuator`). :class:`Scheduler` (:mod:`.scheduler`) is the controller the fake
cluster loads; ``Scheduler.group_records`` holds the per-group timeline data.
"""

from __future__ import annotations

from jobsetctl.fakecluster.scheduler.scheduler import Scheduler

__all__ = ["Scheduler"]
