"""``jobsetctl simulate --explain NAME [--at TIME]``: why a workload is not admitted, in Kueue's words.

The run stops at ``--at`` (else where it ends) and the engine is asked, as it stands then:

* the Workload's status (pending, quota reserved, admitted, finished, inactive) and its QuotaReserved
  condition's reason and message (what ``kubectl describe workload`` shows);
* its LocalQueue and ClusterQueue (a missing LocalQueue, an inactive ClusterQueue with its reason), its
  place in the ClusterQueue's queue or that it is set aside as inadmissible until something changes;
* a back-off after evictions (``requeueState``), its admission checks;
* a fresh flavor assignment against the quota at that instant (the flavors Kueue would consider, with
  the reasons each failed, as its QuotaReserved event lists them) and, when it would preempt, whom.

``NAME`` is a Workload or the job that owns one (``namespace/name`` or ``name``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jobsetctl.kube.duration import format_duration
from jobsetctl.kueue.engine import names
from jobsetctl.kueue.engine.amounts import quantity_string
from jobsetctl.kueue.engine.assignment import FIT, NO_FIT, PREEMPT, format_attempts
from jobsetctl.kueue.engine.conditions import find_condition, workload_status
from jobsetctl.kueue.engine.workload import WorkloadInfo

if TYPE_CHECKING:
    from jobsetctl.kueue.engine.core import Engine
    from jobsetctl.simulate.runner import SimulationResult

_STATUS_WORDS = {"pending": "pending", "quotaReserved": "quota reserved, waiting for admission checks",
                 "admitted": "admitted", "finished": "finished"}


def _when(seconds: float) -> str:
    return format_duration(seconds) if seconds else "0s"


def find_workload(engine: Engine, name: str) -> tuple[dict[str, Any] | None, list[str]]:
    """The Workload named (or owned by the job named) ``name``; else the names it could have meant."""
    namespace, _, short = name.rpartition("/")
    workloads = engine.api.list(names.GROUP, "Workload")
    for obj in workloads:
        md = obj.get("metadata") or {}
        if md.get("name") == short and (not namespace or md.get("namespace") == namespace):
            return obj, []
    for obj in workloads:
        md = obj.get("metadata") or {}
        for owner in md.get("ownerReferences") or []:
            if isinstance(owner, dict) and owner.get("name") == short and (not namespace or md.get("namespace") == namespace):
                return obj, []
    known = sorted(f"{(o.get('metadata') or {}).get('namespace', '')}/{(o.get('metadata') or {}).get('name', '')}"
                   for o in workloads)
    return None, known


def explain(result: SimulationResult, name: str) -> list[str]:
    """The explanation as lines of text."""
    engine: Engine | None = getattr(result.kueue, "engine", None)
    if engine is None:
        return [f"Kueue does not run in this simulation: no ClusterQueue among the inputs and no spec.kueue; "
                f"{name} is not queued by Kueue"]
    obj, known = find_workload(engine, name)
    if obj is None:
        hint = f"; Workloads: {', '.join(known[:10])}" + (" …" if len(known) > 10 else "") if known else ""
        return [f"no Workload {name} (nor a job owning one) at {_when(result.end_time)}{hint}"]
    md = obj.get("metadata") or {}
    key = f"{md.get('namespace', '')}/{md.get('name', '')}"
    owner = next((o for o in md.get("ownerReferences") or [] if isinstance(o, dict) and o.get("controller")), None)
    owned = f" ({owner.get('kind')} {md.get('namespace')}/{owner.get('name')})" if owner else ""
    status = workload_status(obj)
    active = (obj.get("spec") or {}).get("active") is not False
    word = _STATUS_WORDS.get(status, status) if active else "inactive (spec.active: false)"
    lines = [f"Workload {key}{owned} at {_when(result.end_time)}: {word}"]
    for kind in (names.QUOTA_RESERVED, names.ADMITTED, names.EVICTED, names.REQUEUED, names.PODS_READY,
                 names.FINISHED):
        cond = find_condition(obj, kind)
        if cond is not None:
            lines.append(f"  {kind}={cond.get('status')} {cond.get('reason', '')}: {cond.get('message', '')}")
    if status == "finished" or status == "admitted":
        return lines
    info = engine.infos.get(key) or WorkloadInfo(obj)
    queue_name = str((obj.get("spec") or {}).get("queueName") or "")
    lq_key = f"{md.get('namespace', '')}/{queue_name}"
    cq_name = engine.queues.local_queues.get(lq_key)
    if cq_name is None:
        lines.append(f"  LocalQueue {queue_name} doesn't exist (namespace {md.get('namespace')})")
        return lines
    cq = engine.cache.cluster_queues.get(cq_name)
    if cq is None:
        lines.append(f"  LocalQueue {lq_key} points at ClusterQueue {cq_name}, which doesn't exist")
        return lines
    cohort = f" in Cohort {cq.spec.cohort}" if cq.spec.cohort else ""
    lines.append(f"  LocalQueue {lq_key} -> ClusterQueue {cq_name}{cohort} ({cq.spec.queueing_strategy})")
    if cq.inactive is not None:
        lines.append(f"  ClusterQueue {cq_name} is inactive, {cq.inactive[0]}: {cq.inactive[1]}")
    lines.extend(_queue_place(engine, info, cq_name))
    state = (obj.get("status") or {}).get("requeueState")
    if isinstance(state, dict) and state.get("requeueAt"):
        at = engine.clock.seconds_of(str(state["requeueAt"]))
        if at > engine.clock.now:
            lines.append(f"  backing off after {state.get('count', 0)} eviction(s): requeued at {_when(at)}")
    for check in (obj.get("status") or {}).get("admissionChecks") or []:
        if isinstance(check, dict):
            lines.append(f"  admission check {check.get('name')}: {check.get('state')} {check.get('message', '')}".rstrip())
    if active and status == "pending":
        lines.extend(_probe(engine, info, cq))
    return lines


def _queue_place(engine: Engine, info: WorkloadInfo, cq_name: str) -> list[str]:
    pending = engine.queues.pending(cq_name)
    queue = engine.queues.cluster_queues.get(cq_name)
    if queue is None:
        return []
    if info.key in queue.inadmissible:
        reason = engine.queues.no_fit_reason(info)
        extra = f" ({reason})" if reason else ""
        return [f"  set aside as inadmissible{extra}: Kueue retries it when quota frees up in its ClusterQueue or "
                f"Cohort, or a queue, flavor or namespace changes; {len(pending)} workload(s) pending in {cq_name}"]
    for index, other in enumerate(pending):
        if other.key == info.key:
            ahead = [p.key for p in pending[:index]]
            text = f"  position {index + 1} of {len(pending)} in ClusterQueue {cq_name}"
            if ahead:
                text += f" (after {', '.join(ahead[:3])}{' …' if len(ahead) > 3 else ''})"
            return [text]
    return []


def _probe(engine: Engine, info: WorkloadInfo, cq: Any) -> list[str]:
    """A flavor assignment now, without changing anything: what Kueue's next attempt would find."""
    saved = info.last_assignment
    info.last_assignment = None
    try:
        assignment, targets = engine.scheduler.get_assignments(info, cq)
    finally:
        info.last_assignment = saved
    mode = assignment.representative_mode()
    lines = []
    considered = format_attempts(assignment)
    if mode == FIT:
        lines.append("  now: the workload fits (it waits for the next scheduling cycle or for workloads ahead of it)")
    elif mode == PREEMPT:
        if targets:
            victims = ", ".join(f"{t.info.key} ({t.reason})" for t in targets[:5])
            lines.append(f"  now: it fits after preempting {len(targets)} workload(s): {victims}")
        else:
            lines.append("  now: it needs preemption, but no workload may be preempted for it "
                         f"(preemption policy of {cq.name}: withinClusterQueue {cq.spec.preemption.within_cluster_queue}, "
                         f"reclaimWithinCohort {cq.spec.preemption.reclaim_within_cohort})")
    elif mode == NO_FIT:
        lines.append("  now: no flavor can hold it")
    message = assignment.message()
    if message and mode != FIT:
        lines.append(f"  {message}")
    if considered:
        lines.append(f"  flavors considered: {considered}")
    for (flavor, resource), value in sorted(assignment.usage.items()):
        quota = cq.node.quota((flavor, resource))
        used = cq.node.usage.get((flavor, resource), 0)
        lines.append(f"  {cq.name} {flavor}/{resource}: requests {quantity_string(resource, value)}, in use "
                     f"{quantity_string(resource, used)} of nominal {quantity_string(resource, quota.nominal)}")
    return lines
