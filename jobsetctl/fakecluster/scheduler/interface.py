"""Extension points of the scheduling framework (pip-audit's ``interface.py`` idea, anchors.md §5.3).

The shapes mirror kube-scheduler's framework (``k8s.io/kube-scheduler/framework``): a plugin
implements one or more extension points; statuses carry a code, reasons and the plugin that produced
them. Two deliberate differences, both for speed (issue #5):

* Filter plugins declare a :class:`FilterStage`. ``STATIC`` filters depend only on the node object
  and the pod's :class:`~.podinfo.StaticSignature`, so the framework evaluates them once per signature
  and node-spec generation; ``RESOURCES`` is NodeResourcesFit, evaluated once per usage bucket;
  ``DYNAMIC`` filters run per candidate node after those.
* Score plugins must be functions of the node's capacity and usage (LeastAllocated is), so a usage
  bucket scores once. A plugin that scores on anything else would need the slow path.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from enum import Enum, IntEnum
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from jobsetctl.fakecluster.apiserver import APIServer
    from jobsetctl.fakecluster.clock import VirtualClock
    from jobsetctl.fakecluster.events import Recorder
    from jobsetctl.fakecluster.scheduler.groups import GroupRegistry
    from jobsetctl.fakecluster.scheduler.podinfo import PodInfo
    from jobsetctl.fakecluster.scheduler.snapshot import NodeInfo, NodeSet, Snapshot
    from jobsetctl.kube.featuregates import FeatureGates
    from jobsetctl.kube.versions import KubeVersion


class Code(IntEnum):
    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    #: ``UnschedulableAndUnresolvable``: preemption cannot help on this node.
    UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5


@dataclass(frozen=True, slots=True)
class Status:
    code: Code
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def ok(self) -> bool:
        return self.code in (Code.SUCCESS, Code.SKIP)

    @property
    def rejected(self) -> bool:
        return self.code in (Code.UNSCHEDULABLE, Code.UNRESOLVABLE)

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)


SUCCESS = Status(Code.SUCCESS)


def unschedulable(plugin: str, *reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, reasons, plugin)


def unresolvable(plugin: str, *reasons: str) -> Status:
    return Status(Code.UNRESOLVABLE, reasons, plugin)


class ClusterEvent(Enum):
    """Cluster events that move unschedulable pods back to the active or backoff queue."""

    NODE_ADD = "NodeAdd"
    NODE_UPDATE = "NodeUpdate"
    ASSIGNED_POD_ADD = "AssignedPodAdd"
    ASSIGNED_POD_UPDATE = "AssignedPodUpdate"
    ASSIGNED_POD_DELETE = "AssignedPodDelete"
    UNSCHEDULED_POD_ADD = "UnscheduledPodAdd"
    #: An update of the waiting pod itself (upstream's ``PodSchedulingPropertiesChange`` events of the pod's
    #: own update, asked only for that pod: ``UpdatePodToleration``, ``UpdatePodLabel``).
    UNSCHEDULED_POD_UPDATE = "UnscheduledPodUpdate"
    GROUP_ADD = "PodGroupAdd"
    GROUP_UPDATE = "PodGroupUpdate"
    #: Not a watch event: the unschedulable-pods leftover flush (``podMaxInUnschedulablePodsDuration``).
    FLUSH = "UnschedulableTimeout"


@dataclass(frozen=True, slots=True)
class NodeView:
    """What the node hints compare (``isSchedulableAfterNodeChange``): a node before or after an update."""

    name: str
    labels: dict[str, str]
    taints: tuple[Any, ...]
    unschedulable: bool
    allocatable: dict[str, int]
    allowed_pods: int

    @classmethod
    def of(cls, node: Any) -> NodeView:
        """A copy of a :class:`~.snapshot.NodeInfo`'s spec (the cache object itself is updated in place)."""
        return cls(node.name, dict(node.labels), node.taints, node.unschedulable, dict(node.allocatable),
                   node.allowed_pods)


@dataclass(frozen=True, slots=True)
class EventDetail:
    """The old object of an update event, which upstream hints receive as ``oldObj`` (issue 12):
    ``old_node``/``new_node`` for node events (``old_node`` None for an add), ``old_labels`` for a pod's
    label update, ``old_static`` (the :class:`~.podinfo.StaticSignature`) for a waiting pod's own update."""

    old_node: NodeView | None = None
    new_node: NodeView | None = None
    old_labels: dict[str, str] | None = None
    old_static: Any = None


class FilterStage(Enum):
    STATIC = "static"
    RESOURCES = "resources"
    DYNAMIC = "dynamic"


@dataclass(slots=True)
class CycleState:
    """Per-attempt state shared by the plugins (kube-scheduler's ``CycleState``)."""

    pod: PodInfo
    #: Nodes this attempt may use (a TAS placement); None means the whole cluster.
    restrict: NodeSet | None = None
    data: dict[str, Any] = field(default_factory=dict)
    #: Set inside a PodGroup/workload cycle: per-pod preemption is deferred or disabled.
    in_group_cycle: bool = False


@dataclass(slots=True)
class Diagnosis:
    """Why a pod found no node: the input of the ``0/N nodes are available`` message."""

    num_nodes: int
    #: reason text -> number of nodes that reported it.
    reasons: dict[str, int] = field(default_factory=dict)
    #: node name -> status, for nodes that failed a filter (what preemption reads).
    node_status: dict[str, Status] = field(default_factory=dict)
    prefilter_msg: str = ""
    postfilter_msg: str = ""
    unschedulable_plugins: set[str] = field(default_factory=set)

    def add(self, node_name: str, status: Status) -> None:
        self.node_status[node_name] = status
        for reason in status.reasons:
            self.reasons[reason] = self.reasons.get(reason, 0) + 1
        if status.plugin:
            self.unschedulable_plugins.add(status.plugin)

    def add_many(self, node_names: list[str], status: Status) -> None:
        """:meth:`add` for several nodes with one status (a usage bucket of identical nodes)."""
        if not node_names:
            return
        self.node_status.update(dict.fromkeys(node_names, status))
        self.count(len(node_names), status)

    def count(self, nodes: int, status: Status) -> None:
        """``nodes`` nodes failed with ``status``, for the message only (``node_status`` is not filled: a
        diagnosis made for a group's status text, which preemption does not read)."""
        if nodes <= 0:
            return
        for reason in status.reasons:
            self.reasons[reason] = self.reasons.get(reason, 0) + nodes
        if status.plugin:
            self.unschedulable_plugins.add(status.plugin)


@dataclass(frozen=True, slots=True)
class PostFilterResult:
    status: Status
    #: The node the preemptor is nominated to, "" to clear a previous nomination, None to leave it.
    nominated_node: str | None = None


class Handle(Protocol):
    """What plugins may use (kube-scheduler's ``framework.Handle``): the cluster and the scheduler."""

    api: APIServer
    clock: VirtualClock
    recorder: Recorder
    snapshot: Snapshot
    groups: GroupRegistry
    version: KubeVersion
    gates: FeatureGates

    def activate(self, pods: list[PodInfo]) -> None:
        """Move pods from the unschedulable/backoff queues to the active queue now."""

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        """Labels of a namespace (with ``kubernetes.io/metadata.name``), for namespace selectors."""


class Plugin(ABC):
    name: ClassVar[str]
    #: Cluster events that may make a pod this plugin rejected schedulable (``EventsToRegister``).
    events: ClassVar[frozenset[ClusterEvent]] = frozenset()

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def applies_to(self, pod: PodInfo) -> bool:
        """Whether the plugin has anything to say about this pod (cheap pre-check)."""
        return True


class PreEnqueuePlugin(Plugin):
    @abstractmethod
    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        """None (or success) lets the pod into the active queue; a rejection keeps it gated, silently."""


class QueueSortPlugin(Plugin):
    @abstractmethod
    def sort_key(self, pod: PodInfo, timestamp: float) -> tuple[Any, ...]:
        """Smaller sorts first."""


class PreFilterPlugin(Plugin):
    @abstractmethod
    def pre_filter(self, state: CycleState) -> Status | None:
        """A rejection here fails the pod on every node with this message (PreFilterMsg)."""


class FilterPlugin(Plugin):
    stage: ClassVar[FilterStage] = FilterStage.DYNAMIC

    @abstractmethod
    def filter(self, state: CycleState, node: NodeInfo) -> Status | None:
        """None or success when the pod may run on ``node``."""


class PostFilterPlugin(Plugin):
    @abstractmethod
    def post_filter(self, state: CycleState, diagnosis: Diagnosis) -> PostFilterResult | None:
        """Try to make the pod schedulable later (preemption); None when not applicable."""


class ScorePlugin(Plugin):
    weight: ClassVar[int] = 1

    @abstractmethod
    def score(self, state: CycleState, node: NodeInfo) -> int:
        """0..100 for a node that passed every filter."""


class ReservePlugin(Plugin):
    @abstractmethod
    def reserve(self, state: CycleState, node: NodeInfo) -> Status | None:
        """Claim per-plugin state for the pod on ``node``."""

    def unreserve(self, state: CycleState, node: NodeInfo) -> None:
        """Undo :meth:`reserve` after a later failure (default: nothing to undo)."""


class PermitPlugin(Plugin):
    @abstractmethod
    def permit(self, state: CycleState, node: NodeInfo) -> tuple[Status | None, float]:
        """Allow (None), reject, or ``Code.WAIT`` with a timeout in seconds."""


class BindPlugin(Plugin):
    @abstractmethod
    def bind(self, state: CycleState, node: NodeInfo) -> Status | None:
        """Write the binding; None on success."""


class PostBindPlugin(Plugin):
    @abstractmethod
    def post_bind(self, state: CycleState, node: NodeInfo) -> None:
        """Informational, after a successful bind."""
