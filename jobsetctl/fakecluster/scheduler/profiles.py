"""Scheduling profiles: which plugins run for which ``spec.schedulerName``, in upstream order.

The default profile follows kube-scheduler's default plugin order (``getDefaultPlugins``): queue sort,
scheduling gates, then the filters NodeUnschedulable, TaintToleration, NodeAffinity, NodeResourcesFit,
InterPodAffinity, then DefaultPreemption and DefaultBinder; GangScheduling (in-tree, gated) and the
scheduler-plugins Coscheduling plugin (for pods with its label) are added. The Volcano profile replaces
the gang plugins by Volcano's PodGroup gang and queue checks and has no preemption (Volcano preempts in
its own ``preempt`` action, not modelled).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jobsetctl.fakecluster.scheduler.framework import Framework
from jobsetctl.fakecluster.scheduler.interface import Plugin
from jobsetctl.fakecluster.scheduler.plugins.defaultbinder import DefaultBinder
from jobsetctl.fakecluster.scheduler.plugins.defaultpreemption import DefaultPreemption
from jobsetctl.fakecluster.scheduler.plugins.interpodaffinity import InterPodAffinity
from jobsetctl.fakecluster.scheduler.plugins.nodeaffinity import NodeAffinity
from jobsetctl.fakecluster.scheduler.plugins.noderesources import NodeResourcesFit
from jobsetctl.fakecluster.scheduler.plugins.nodeunschedulable import NodeUnschedulable
from jobsetctl.fakecluster.scheduler.plugins.queuesort import PrioritySort, SchedulingGates
from jobsetctl.fakecluster.scheduler.plugins.tainttoleration import TaintToleration

if TYPE_CHECKING:
    from jobsetctl.fakecluster.scheduler.scheduler import Scheduler


def _filters(s: Scheduler) -> list[Plugin]:
    return [NodeUnschedulable(s), TaintToleration(s), NodeAffinity(s), NodeResourcesFit(s), InterPodAffinity(s)]


def build_profiles(s: Scheduler) -> dict[str, Framework]:
    from jobsetctl.fakecluster.scheduler.plugins.coscheduling import Coscheduling
    from jobsetctl.fakecluster.scheduler.plugins.gangscheduling import GangScheduling
    from jobsetctl.fakecluster.scheduler.plugins.volcano import VolcanoGang

    # Coscheduling comes after the defaults, as a profile that enables it gets it appended: its PostFilter
    # runs after DefaultPreemption's.
    default: list[Plugin] = [PrioritySort(s), SchedulingGates(s), GangScheduling(s)]
    default += _filters(s)
    default += [DefaultPreemption(s), Coscheduling(s), DefaultBinder(s)]
    framework = Framework(s, default)
    volcano = Framework(s, [PrioritySort(s), SchedulingGates(s), VolcanoGang(s), *_filters(s), DefaultBinder(s)])
    return {"default-scheduler": framework, "scheduler-plugins-scheduler": framework, "volcano": volcano}
