"""A verdict for every workload that never started: why it waited, and whether it could ever start here.

A workload *never started* when none of its pods was ever bound to a node and it did not finish (the
summary's ``state: Pending``). Its verdict has two parts:

* **why it waited**: the chart's note for it, i.e. the scheduler's latest explanation (``gang 2/4
  placeable: 2 pods Insufficient nvidia.com/gpu in rack-0``), or what held it back before scheduling
  (suspended, a scheduling gate, a scheduler this cluster does not run, no pods created);
* **whether it fits this cluster**: its pending pods are given, alone, to a fresh simulated cluster made
  of the nodes still Ready at the end of the run, with the same Kubernetes version, feature gates,
  PriorityClasses, namespaces and group objects (PodGroup, Workload, CompositePodGroup, coscheduling and
  Volcano groups), and the real scheduler runs for :data:`JUDGE_WINDOW` of virtual time. If no pod binds,
  the workload never fits this cluster, whatever else runs; if one does, it waited for capacity other
  workloads held (the trial cluster is built once per run; each workload's pods are removed from it
  before the next one is tried). The numbers behind "never fits" come from that scheduler's own view of the empty
  cluster: the nodes that pass the pod's filters (taints, node selector, affinity), grouped by the
  gang's topology key as the scheduler groups them, their allocatable resources, and the copies of the
  pod NodeResourcesFit fits on them (``Placer.domain_stats``): ``the largest rack holds 16 GPUs, the gang
  needs 32``. Nothing here fits resources by itself.

At most :data:`MAX_JUDGED` workloads are judged per run (each costs a small simulation); the others get
their "why it waited" only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jobsetctl.fakecluster.cluster import ClusterOptions, FakeCluster
from jobsetctl.kube import podspec
from jobsetctl.kube.jsontree import copy_tree
from jobsetctl.simulate import access
from jobsetctl.simulate.ledger import ObjectKey, object_key
from jobsetctl.simulate.nodes import GPU_RESOURCE_SUFFIX, normalize_node
from jobsetctl.simulate.summary import Summary, WorkloadStats
from jobsetctl.simulate.timeline import Timeline

#: Virtual seconds a never-started workload gets, alone on the cluster, to bind a pod.
JUDGE_WINDOW = 60.0
#: Never-started workloads judged per run.
MAX_JUDGED = 20
#: API groups whose objects the scheduler reads for groups and priorities (copied into the trial cluster).
SCHEDULING_GROUPS = frozenset({"scheduling.k8s.io", "scheduling.x-k8s.io", "scheduling.volcano.sh"})


@dataclass(frozen=True, slots=True)
class Verdict:
    workload: ObjectKey
    #: Why it waited, in the scheduler's words (or what held it back before scheduling).
    waiting: str
    #: Alone on the cluster as it was at the end: True (a pod binds), False (none does), None (not judged).
    fits: bool | None = None
    #: The numbers behind "never fits" (``the largest rack holds 16 GPUs, the gang needs 32``).
    capacity: str = ""
    #: Why it does not start even alone, when that is not capacity (the trial's own explanation).
    alone: str = ""
    #: Nodes that failed during the run: the verdict is about the nodes left.
    lost_nodes: tuple[str, ...] = ()

    @property
    def reason(self) -> str:
        parts = [self.waiting] if self.waiting else []
        cluster = "this cluster" if not self.lost_nodes else f"the nodes left after {', '.join(self.lost_nodes)} failed"
        if self.fits is False and self.capacity:
            parts.append(f"never fits {cluster}: {self.capacity}")
        elif self.fits is False:
            alone = f": {self.alone}" if self.alone and self.alone != self.waiting else ""
            parts.append(f"never starts on {cluster}, even alone{alone}")
        elif self.fits is True:
            parts.append(f"fits {cluster} alone: waited for capacity other workloads held")
        return " · ".join(parts) or "never started"

    def as_dict(self) -> dict[str, Any]:
        return {"reason": self.reason, "fitsCluster": self.fits}


def never_started(stats: WorkloadStats) -> bool:
    return stats.finished is None and not stats.started


def judge_never_started(cluster: Any, summary: Summary, timeline: Timeline) -> list[Verdict]:
    """A verdict per never-started workload of the summary (attached to its stats as ``verdict``)."""
    candidates = [stats for stats in summary.workloads if never_started(stats)]
    if not candidates:
        return []
    notes = _notes(timeline)
    lost = tuple(name for name, (_, down) in timeline.node_life.items() if down is not None)
    pending = _pending_pods(cluster, timeline) if cluster is not None else {}
    trial = _Trial(cluster)
    verdicts: list[Verdict] = []
    for index, stats in enumerate(candidates):
        key = stats.key
        waiting = notes.get(key, "")
        pods = pending.get(key, [])
        if stats.state == "Suspended":
            verdict = Verdict(key, "suspended")
        elif cluster is None or index >= MAX_JUDGED:
            verdict = Verdict(key, waiting)
        elif not pods:
            verdict = Verdict(key, waiting or "created no pods")
        else:
            verdict = _judge(cluster, trial, key, waiting, pods, lost)
        stats.verdict = verdict
        verdicts.append(verdict)
    return verdicts


def _notes(timeline: Timeline) -> dict[ObjectKey, str]:
    """The first note of each workload's rows (its header first): the chart's "why it waits"."""
    notes: dict[ObjectKey, str] = {}
    for row in timeline.rows:
        if row.workload is not None and row.note and row.workload not in notes:
            notes[row.workload] = row.note
    return notes


def _pending_pods(cluster: Any, timeline: Timeline) -> dict[ObjectKey, list[dict[str, Any]]]:
    """Unbound, live pods at the end of the run, per workload."""
    workload_of = {span.key: span.workload for span in timeline.pods if span.workload is not None}
    out: dict[ObjectKey, list[dict[str, Any]]] = {}
    for pod in cluster.api.iter_kind("", "Pod"):
        if access.spec(pod).get("nodeName") or access.metadata(pod).get("deletionTimestamp"):
            continue
        if access.status(pod).get("phase") in ("Succeeded", "Failed"):
            continue
        workload = workload_of.get(object_key(pod))
        if workload is not None:
            out.setdefault(workload, []).append(pod)
    return out


def _judge(cluster: Any, trial: _Trial, key: ObjectKey, waiting: str, pods: list[dict[str, Any]],
           lost: tuple[str, ...]) -> Verdict:
    gates = sorted({str(g.get("name")) for pod in pods for g in access.spec(pod).get("schedulingGates") or []
                    if isinstance(g, dict)})
    if gates:
        return Verdict(key, waiting or f"held by scheduling gate{'s' * (len(gates) > 1)} {', '.join(gates)}")
    scheduler = cluster.components.get("scheduler")
    if scheduler is not None:
        unknown = sorted({podspec.scheduler_name(access.spec(pod)) for pod in pods} - set(scheduler.profiles))
        if unknown:
            return Verdict(key, waiting or f"its pods ask for scheduler {', '.join(unknown)}, which this cluster "
                                           "does not run")
    fits, capacity, alone = trial.alone(pods)
    return Verdict(key, waiting, fits, capacity if not fits else "", alone if not fits else "", lost)


class _Trial:
    """The empty cluster the workloads are tried on, one after the other: built once (the nodes still
    Ready, the scheduling objects), then per workload its pods are created (unbound, ownerless), the
    scheduler runs for :data:`JUDGE_WINDOW`, and the pods are removed again, leaving the cluster empty."""

    def __init__(self, cluster: Any) -> None:
        self.source = cluster
        self.cluster: FakeCluster | None = None

    def _build(self) -> FakeCluster:
        options = self.source.options
        trial = FakeCluster(ClusterOptions(options.version, options.gates, seed=options.seed, simulate=True))
        for node in self.source.api.iter_kind("", "Node"):
            if _ready(node) and not access.metadata(node).get("deletionTimestamp"):
                trial.api.create(normalize_node(node), skip_admission=True)
        for obj in self.source.api.all_objects():
            group = str(obj.get("apiVersion", "")).rpartition("/")[0]
            if group in SCHEDULING_GROUPS or (group == "" and obj.get("kind") == "Namespace"):
                trial.api.create(_fresh(obj), skip_admission=True)
        return trial

    def alone(self, pods: list[dict[str, Any]]) -> tuple[bool, str, str]:
        """(a pod bound, the capacity text, the trial's last "why it waits") for these pods alone."""
        if self.cluster is None:
            self.cluster = self._build()
        trial = self.cluster
        first_event = len(trial.recorder.events)
        created: list[dict[str, Any]] = []
        for pod in pods:
            copy = _fresh(pod)
            copy["spec"].pop("nodeName", None)
            result = trial.api.create(copy, skip_admission=True)
            if result.obj is not None:
                created.append(result.obj)
        trial.manager.run(trial.clock.now + JUDGE_WINDOW)
        events = trial.recorder.events[first_event:]
        fits = any(e.kind == "Pod" and e.event == "Scheduled" for e in events)
        scheduler = trial.components.get("scheduler")
        uids = {str(access.metadata(pod).get("uid")) for pod in created}
        capacity = _capacity(scheduler, uids) if scheduler is not None and not fits else ""
        alone = next((e.message for e in reversed(events) if e.event == "Unschedulable" and e.message), "") or ""
        for pod in created:
            trial.api.remove(pod)
        trial.manager.run(trial.clock.now)
        return fits, capacity, alone


def _fresh(obj: dict[str, Any]) -> dict[str, Any]:
    """A copy as a user would write it: identity, labels, annotations and spec; no owner, no status."""
    md = access.metadata(obj)
    metadata = {k: copy_tree(v) for k, v in md.items() if k in ("name", "namespace", "labels", "annotations")}
    out: dict[str, Any] = {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": metadata}
    for field_name in ("spec", "value", "preemptionPolicy", "globalDefault", "description"):
        if field_name in obj:
            out[field_name] = copy_tree(obj[field_name])
    if obj.get("kind") == "Pod":
        out.setdefault("spec", {})
    return out


def _ready(node: dict[str, Any]) -> bool:
    for condition in access.status(node).get("conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return False


def _capacity(scheduler: Any, uids: set[str]) -> str:
    """``the largest rack holds 16 GPUs, the gang needs 32`` from the trial scheduler's view of the empty
    cluster (for the pods ``uids``), or '' when resources are not what keeps the workload out."""
    from jobsetctl.fakecluster.scheduler.interface import CycleState

    pods = sorted((p for p in scheduler.pods.values() if p.uid in uids), key=lambda p: (p.created, p.seq))
    if not pods:
        return ""
    first = pods[0]
    state = scheduler.groups.states.get(first.group) if first.group is not None else None
    spec = scheduler.groups.spec(state) if state is not None else None
    gang = spec is not None and spec.gang
    need = spec.min_count if gang and spec is not None else 1
    members = state.ordered_members()[:need] if gang and state is not None else [first]
    if len(members) < need or any(m.static is not first.static for m in members):
        return ""  # a gang of several pod shapes: the scheduler's own explanation says more
    if not scheduler.snapshot.nodes:
        return "it has no Ready node"
    passing = scheduler.framework_for(first).static_result(CycleState(first)).passing_names
    nodes = [n for n in scheduler.snapshot.ordered_nodes() if n.name in passing]
    if not nodes:
        return "no node accepts its pods (taints, node selector or affinity, unschedulable nodes)"
    topology = spec.topology_key if spec is not None else None
    if topology:
        word = topology.rsplit("/", 1)[-1]
        domains = [[n for n in members_ if n.name in passing]
                   for members_ in scheduler.snapshot.domains(topology).values()]
        domains = [d for d in domains if d]
        if not domains:
            return f"no {topology} domain has a node that accepts its pods"
        holds, fits = f"the largest {word} holds {{held}}", f"the largest {word} fits {{count}} of its pods at once"
    elif gang:
        domains = [nodes]
        holds = "the nodes its pods may use hold {held} in all"
        fits = "the nodes its pods may use fit {count} of its pods at once"
    else:
        domains = [[n] for n in nodes]
        holds, fits = "the largest node it may use has {held}", "no node it may use fits its pod"
    who = "the gang" if gang else "its pod"
    demand = {r: amount * need for r, amount in first.static.requests.items() if amount > 0}
    held = {r: max(sum(n.allocatable.get(r, 0) for n in d) for d in domains) for r in demand}
    short = [r for r in demand if demand[r] > held[r]]
    if short:
        resource = min(short, key=lambda r: (not r.endswith(GPU_RESOURCE_SUFFIX), -demand[r] / max(held[r], 1), r))
        return (holds.format(held=_amount(held[resource], resource))
                + f", {who} needs {_amount(demand[resource], resource)}")
    placer = scheduler.group_cycle.placer
    fitting = max(placer.domain_stats(first, d)[0] for d in domains)
    if fitting >= need:
        return ""
    return fits.format(count=fitting) + (f", the gang needs {need}" if gang else "")


def _amount(value: int, resource: str) -> str:
    """A resource amount in scheduler units (CPU in millicores, the rest whole units) as people say it."""
    if resource.endswith(GPU_RESOURCE_SUFFIX):
        return f"{value} GPU{'s' * (value != 1)}"
    if resource == "cpu":
        return f"{value / 1000:g} CPU{'s' * (value != 1000)}"
    if resource in ("memory", "ephemeral-storage"):
        for unit, size in (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
            if value >= size:
                return f"{value / size:g}{unit} of {resource}"
        return f"{value} bytes of {resource}"
    if resource == "pods":
        return f"{value} pod slot{'s' * (value != 1)}"
    return f"{value} {resource}"
