"""DefaultBinder: write ``spec.nodeName`` through the binding subresource (see :mod:`..actuator`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jobsetctl.fakecluster.scheduler.interface import BindPlugin, CycleState, Status
from jobsetctl.fakecluster.scheduler.snapshot import NodeInfo

if TYPE_CHECKING:
    from jobsetctl.fakecluster.scheduler.scheduler import Scheduler


class DefaultBinder(BindPlugin):
    name = "DefaultBinder"

    def __init__(self, handle: Scheduler) -> None:
        super().__init__(handle)
        self.scheduler = handle

    def bind(self, state: CycleState, node: NodeInfo) -> Status | None:
        self.scheduler.actuator.bind(state.pod, node.name)
        return None
