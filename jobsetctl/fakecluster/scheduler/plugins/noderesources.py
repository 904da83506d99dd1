"""NodeResourcesFit: the pod's requests (PodRequests: containers summed, init containers maxed, sidecars,
overhead; from :func:`jobsetctl.kube.podspec.pod_requests`) against allocatable minus requested, plus the
``pods`` slot; and LeastAllocated scoring.

Filter (``fitsRequest`` in plugins/noderesources/fit.go upstream): ``Too many pods`` when the node's pod
count would exceed ``allocatable.pods``; ``Insufficient <resource>`` for cpu, memory, ephemeral-storage
and every scalar (extended) resource that does not fit. All failing resources are reported. The status
is ``UnschedulableAndUnresolvable`` when some request exceeds the node's whole allocatable (no eviction
can help), else ``Unschedulable``.

Score (the default profile's ``LeastAllocated`` strategy, resources cpu and memory with weight 1 each):
per resource ``(allocatable - requested) * 100 / allocatable`` on the *non-zero* requests (containers
without a request count 100m CPU / 200Mi), integer division, averaged over resources with allocatable > 0.
We chose this one scorer because it is kube-scheduler's default fit strategy and depends only on a
node's capacity and usage, which the usage buckets of :mod:`..snapshot` need. Not modelled: the default
profile's NodeResourcesBalancedAllocation, ImageLocality, TaintToleration (PreferNoSchedule) and
preferred (anti-)affinity scores, and ``percentageOfNodesToScore`` (we score every feasible node, as
kube-scheduler does for clusters under 100 nodes). Extended resources such as GPUs do not influence the
default score, exactly as upstream.
"""

from __future__ import annotations

from typing import ClassVar

from jobsetctl.fakecluster.scheduler.interface import (
    ClusterEvent,
    Code,
    CycleState,
    EventDetail,
    FilterPlugin,
    FilterStage,
    ScorePlugin,
    Status,
)
from jobsetctl.fakecluster.scheduler.messages import TOO_MANY_PODS, insufficient
from jobsetctl.fakecluster.scheduler.podinfo import CPU, MEMORY, PodInfo, Resources
from jobsetctl.fakecluster.scheduler.snapshot import NodeInfo, resource_names_in_order

MAX_NODE_SCORE = 100


class NodeResourcesFit(FilterPlugin, ScorePlugin):
    name = "NodeResourcesFit"
    stage = FilterStage.RESOURCES
    events: ClassVar[frozenset[ClusterEvent]] = frozenset({
        ClusterEvent.ASSIGNED_POD_DELETE, ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE,
    })

    def hint(self, target: PodInfo, event: ClusterEvent, subject: PodInfo | None, group: tuple[str, ...] | None,
             detail: EventDetail | None = None) -> bool:
        """fit.go: ``isSchedulableAfterPodEvent`` says Queue for every deletion of a bound pod (our only pod
        event here; in-place resize is not modelled). ``isSchedulableAfterNodeChange``: the pod must fit the
        new node when empty, and an update must also have raised ``pods`` or the allocatable of a resource
        the pod requests (``haveAnyRequestedResourcesIncreased``). With the SchedulerQueueingHints gate
        upstream registers only Add|UpdateNodeAllocatable: a label or taint change is never Queue here."""
        if event not in (ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE) or detail is None or detail.new_node is None:
            return True
        new, old = detail.new_node, detail.old_node
        if new.allowed_pods < 1:
            return False
        requests = target.static.requests
        if any(amount > new.allocatable.get(resource, 0) for resource, amount in requests.items()):
            return False
        if old is None:
            return True
        if new.allowed_pods > old.allowed_pods:
            return True
        return any(new.allocatable.get(resource, 0) > old.allocatable.get(resource, 0) for resource in requests)

    def filter(self, state: CycleState, node: NodeInfo) -> Status | None:
        extra, extra_pods = nominated_usage(state.pod, node)
        return self.check(state.pod, node, extra, extra_pods)

    def check(self, pod: PodInfo, node: NodeInfo, extra: Resources | None = None, extra_pods: int = 0) -> Status | None:
        reasons: list[str] = []
        code = Code.UNSCHEDULABLE
        if node.pod_count + extra_pods + 1 > node.allowed_pods:
            reasons.append(TOO_MANY_PODS)
        requests = pod.static.requests
        if requests:
            allocatable, requested = node.allocatable, node.requested
            for resource in resource_names_in_order(requests):
                amount = requests[resource]
                capacity = allocatable.get(resource, 0)
                used = requested.get(resource, 0) + (extra.get(resource, 0) if extra else 0)
                if amount > capacity - used:
                    reasons.append(insufficient(resource))
                    if amount > capacity:
                        code = Code.UNRESOLVABLE
        if not reasons:
            return None
        return Status(code, tuple(reasons), self.name)

    def fits(self, pod: PodInfo, node: NodeInfo) -> bool:
        """The filter without building a status (the hot path)."""
        if node.pod_count >= node.allowed_pods:
            return False
        allocatable, requested = node.allocatable, node.requested
        for resource, amount in pod.static.requests.items():
            if amount > allocatable.get(resource, 0) - requested.get(resource, 0):
                return False
        return True

    def fit_count(self, pod: PodInfo, node: NodeInfo) -> int:
        """How many copies of ``pod`` fit on ``node`` as it is now."""
        count = node.allowed_pods - node.pod_count
        allocatable, requested = node.allocatable, node.requested
        for resource, amount in pod.static.requests.items():
            free = allocatable.get(resource, 0) - requested.get(resource, 0)
            count = min(count, free // amount if free > 0 else 0)
            if count <= 0:
                return 0
        return max(count, 0)

    def score(self, state: CycleState, node: NodeInfo) -> int:
        return least_allocated(state.pod, node)


def least_allocated(pod: PodInfo, node: NodeInfo) -> int:
    total = weight = 0
    for capacity, requested in (
        (node.allocatable.get(CPU, 0), node.nonzero_cpu + pod.static.nonzero_cpu),
        (node.allocatable.get(MEMORY, 0), node.nonzero_memory + pod.static.nonzero_memory),
    ):
        if capacity == 0:
            continue
        weight += 1
        if requested <= capacity:
            total += (capacity - requested) * MAX_NODE_SCORE // capacity
    return total // weight if weight else 0


def nominated_usage(pod: PodInfo, node: NodeInfo) -> tuple[Resources | None, int]:
    """Requests of pods nominated to ``node`` with priority >= the pod's (scheduling.md §3.2 point 6)."""
    if not node.nominated:
        return None, 0
    extra: Resources = {}
    count = 0
    for other in node.nominated.values():
        if other.uid == pod.uid or other.priority < pod.priority:
            continue
        count += 1
        for resource, amount in other.static.requests.items():
            extra[resource] = extra.get(resource, 0) + amount
    return (extra or None), count
