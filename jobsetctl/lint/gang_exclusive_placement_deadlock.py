"""``gang-exclusive-placement-deadlock``: exclusive placement inside a gang that needs the followers.

The mechanism, step by step:

* jobset.md §3.6: with ``alpha.jobset.sigs.k8s.io/exclusive-topology`` on the pods (from the JobSet, a
  replicated job's template or the pod template: the webhook reads the pod's annotations,
  :func:`jobsetctl.jobset.render.pod_placement_annotations`), the JobSet validating pod webhook rejects every follower pod (completion
  index ≠ 0) of a child Job until that Job's leader (index 0) exists and is *scheduled*
  (``spec.nodeName`` set); the Job controller retries the rejected creations with back-off. Until a
  leader is scheduled, each such Job has exactly one pod: its leader.
* scheduling.md §1.3: a pod that names a gang (``schedulingGroup.podGroupName``, 1.35
  ``workloadRef``) stays behind the scheduler's PreEnqueue barrier until the scheduler has observed
  ``minCount`` pods of the group, in every release (1.35 Permit, 1.36 and 1.37 group cycles alike).

So if a gang's ``minCount`` is more than the pods that can exist before any of them is scheduled (one
leader per exclusive child Job, plus every pod of the members without exclusive placement), the leaders
wait for followers that wait for the leaders, and nothing is ever scheduled. This holds for a gang over
one child Job with more than one pod as well as for a gang over the whole JobSet. A ``minCount`` of
at most that number works: the leaders are admitted as the gang, then the followers are created and
join the scheduled group (§1.3, "new pods of an already-scheduled group").

Not affected: the node-selector strategy (``alpha.jobset.sigs.k8s.io/node-selector``: the pod webhooks
skip those pods, §3.7), and NonIndexed Jobs (they never get a leader at all; that is
``jobset-exclusive-non-indexed``). Stages are left to ``gang-min-count-staged``, and a ``minCount``
above every pod to ``ref-gang-too-large``: this lint reports only gangs that the stages alone would let
start.

Reported on each exclusive JobSet among the inputs whose held-back followers are part of the shortfall,
at the exclusive-topology annotation that applies to its first such replicated job. ``render --gang``
warns the same for the groups it generates (:func:`jobsetctl.gang.deadlock_warning`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.jobset import api
from jobsetctl.jobset.render import leader_first_topology, pod_exclusive_topology_at, pods_before_leader
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.field import go_quote, path_string
from jobsetctl.lint.support import (
    JOB,
    JOBSET,
    GangKey,
    GangMember,
    cluster_of,
    coexistence,
    gang_keys,
    gang_label,
    gang_members,
    gang_min_count,
    lint_doc,
)
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.reference import pods_per_job
from jobsetctl.rules.registry import define

PASSING = """
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata:
  name: trainers
spec:
  schedulingPolicy:
    gang: {minCount: 2}           # the two leaders; the followers join the admitted gang
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: exclusive
  annotations:
    alpha.jobset.sigs.k8s.io/exclusive-topology: cloud.google.com/gke-nodepool
spec:
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        parallelism: 4
        completions: 4
        template:
          spec:
            schedulingGroup: {podGroupName: trainers}
            containers: [{name: worker, image: busybox}]
"""

FAILING = """
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata:
  name: trainers
spec:
  schedulingPolicy:
    gang: {minCount: 8}           # every pod, but followers wait for their scheduled leader
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: exclusive
  annotations:
    alpha.jobset.sigs.k8s.io/exclusive-topology: cloud.google.com/gke-nodepool
spec:
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        parallelism: 4
        completions: 4
        template:
          spec:
            schedulingGroup: {podGroupName: trainers}
            containers: [{name: worker, image: busybox}]
"""

RULE = define(
    "gang-exclusive-placement-deadlock", Layer.LINT, Severity.WARNING,
    "Exclusive placement creates followers only after the leader is scheduled; a gang that needs them never starts.",
    spec="jobset.md §3.6, §2.5; scheduling.md §1.3",
    doc=lint_doc(
        "With exclusive placement, a child Job's follower pods are rejected until its leader (completion "
        "index 0) is scheduled, so at first each Job has one pod. A gang keeps its pods unscheduled until "
        "minCount of them exist. When minCount is more than the leaders (plus the pods of non-exclusive "
        "members), the leaders wait for followers that wait for the leaders: nothing is ever scheduled.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({JOBSET})


@dataclass(slots=True)
class _Count:
    """Pods of one gang that can exist before any is scheduled."""

    #: Counting the stages only (``gang-min-count-staged``'s number).
    staged: int = 0
    #: Counting the stages, and of exclusive Jobs the leaders only.
    up_front: int = 0
    #: Of ``up_front``, the leaders of exclusive Jobs.
    leaders: int = 0
    #: The replicated jobs whose followers are held back, for the message.
    held: list[str] = field(default_factory=list)
    #: (index, replicated job) of the checked JobSet's first member whose followers are held back; None
    #: when it holds none back (another JobSet of the gang is the cause, and is reported).
    first_own: tuple[int, dict[str, Any]] | None = None


def _is(other: Object, obj: Object, default_namespace: str) -> bool:
    return other is obj or ((api.namespace(other) or default_namespace, api.name(other))
                            == (api.namespace(obj) or default_namespace, api.name(obj)))


def _count(members: list[GangMember], obj: Object, default_namespace: str) -> _Count:
    count = _Count()
    for kind, other, names in members:
        if kind == JOB[1]:
            pods = pods_per_job(api.spec(other))  # plain Jobs: the JobSet pod webhooks ignore their pods
            count.staged += pods
            count.up_front += pods
            continue
        first = set(coexistence(other, names).first)
        own = _is(other, obj, default_namespace)
        for index, rjob in api.enumerate_replicated_jobs(other):
            if api.rjob_name(rjob) not in first:
                continue
            replicas, per_job = max(0, api.replicas(rjob)), pods_per_job(api.job_spec(rjob))
            pods = replicas * per_job
            before = pods_before_leader(other, rjob, per_job)
            count.staged += pods
            count.up_front += replicas * before
            if before == per_job:
                continue
            count.leaders += replicas
            count.held.append(f"{go_quote(api.rjob_name(rjob))} of JobSet {go_quote(api.name(other))}: "
                              f"{replicas} leader{'s' * (replicas != 1)} of {pods} pods")
            if own and count.first_own is None:
                count.first_own = (index, rjob)
    return count


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    namespace = api.namespace(obj) or ctx.default_namespace
    own: list[GangKey] = []
    for rjob in api.replicated_jobs(obj):
        if leader_first_topology(obj, rjob) is not None:
            own.extend(key for key in gang_keys(api.pod_spec(rjob), namespace) if key not in own)
    if not own:
        return
    members = gang_members(ctx)
    for key in own:
        min_count = gang_min_count(cluster_of(ctx), key)
        if min_count is None:
            continue
        count = _count(members.get(key, []), obj, ctx.default_namespace)
        if count.first_own is None or not count.up_front < min_count <= count.staged:
            continue
        index, rjob = count.first_own
        at = pod_exclusive_topology_at(obj, index, rjob) or ()
        others = count.up_front - count.leaders
        also = f"; {others} pods of members without exclusive placement" if others else ""
        topology_hint = ", or drop exclusive placement and give the gang a topology constraint" \
            if ctx.version.minor >= 36 else ", or drop exclusive placement"
        yield RULE.finding(
            f"exclusive placement ({api.EXCLUSIVE_TOPOLOGY_KEY}: {leader_first_topology(obj, rjob)}) creates a "
            f"follower pod only once its Job's leader (completion index 0) is scheduled, but {gang_label(key)} "
            f"(gang minCount {min_count}) schedules none of its pods until {min_count} exist, and until then only "
            f"{count.up_front} can ({'; '.join(count.held)}{also}): the leaders wait for followers that wait for "
            "the leaders, and the gang never starts",
            path=path_string(at), at=at,
            hint=f"set minCount to at most {count.up_front} (the leaders start the gang and the followers join it), "
                 f"use the node-selector strategy ({api.NODE_SELECTOR_STRATEGY_KEY}){topology_hint}",
        )
