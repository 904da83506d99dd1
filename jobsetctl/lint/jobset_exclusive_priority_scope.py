"""``jobset-exclusive-priority-scope``: exclusive placement does not separate different priorities.

jobset.md §3.6 and scheduling.md §3.4 (issue jobset#682, fixed by #687, completed by #1077): a leader
pod's anti-affinity matches pods of other Jobs *with the same* ``jobset.sigs.k8s.io/priority`` label
only. That is what lets a higher-priority JobSet land in a domain held by a lower-priority one and take
it by ordinary preemption (no cross-node preemption exists for anti-affinity, which was #682). The
flip side: exclusive JobSets of different priorities do not repel each other at all, so they share a
topology domain whenever it has room for both, and the higher-priority one preempts the other only
when resources run short.

Reported (as a note) on an exclusive JobSet when another exclusive JobSet among the inputs (any
namespace: the anti-affinity uses ``namespaceSelector: {}``) uses the same topology key while its pods
resolve to a different priority.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.jobset import api
from jobsetctl.jobset.render import pod_exclusive_topology_at, pod_placement_annotations
from jobsetctl.kinds.interface import AdmissionContext, ClusterView, Object
from jobsetctl.kube.field import Path, go_quote, path_string
from jobsetctl.kube.podspec import priority_class_name
from jobsetctl.lint.support import JOBSET, lint_doc, memo, priority_of
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define

PASSING = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: team-a
  annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: cloud.google.com/gke-nodepool}
spec:
  replicatedJobs:
  - name: workers
    template:
      spec:
        template:
          spec:
            containers: [{name: worker, image: busybox}]
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: team-b                      # same priority: the two never share a node pool
  annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: cloud.google.com/gke-nodepool}
spec:
  replicatedJobs:
  - name: workers
    template:
      spec:
        template:
          spec:
            containers: [{name: worker, image: busybox}]
"""

FAILING = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: urgent
value: 1000
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: team-a
  annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: cloud.google.com/gke-nodepool}
spec:
  replicatedJobs:
  - name: workers
    template:
      spec:
        template:
          spec:
            containers: [{name: worker, image: busybox}]
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: team-b                      # priority 1000 vs 0: may share a node pool with team-a
  annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: cloud.google.com/gke-nodepool}
spec:
  replicatedJobs:
  - name: workers
    template:
      spec:
        template:
          spec:
            priorityClassName: urgent
            containers: [{name: worker, image: busybox}]
"""

RULE = define(
    "jobset-exclusive-priority-scope", Layer.LINT, Severity.INFO,
    "Exclusive JobSets of different priorities do not repel each other: they may share a topology domain.",
    spec="jobset.md §3.6; scheduling.md §3.4",
    doc=lint_doc(
        "Since jobset#687, exclusive placement keeps apart only pods of the same priority, so that a "
        "higher-priority JobSet can preempt its way into an occupied domain (jobset#682).",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({JOBSET})


@dataclass(frozen=True, slots=True)
class _Exclusive:
    owner: Object
    rjob: str
    topology: str
    priority: int
    #: Where the exclusive-topology annotation is written.
    at: Path


def _exclusive(obj: Object, ctx: AdmissionContext) -> Iterator[_Exclusive]:
    for index, rjob in api.enumerate_replicated_jobs(obj):
        placement = pod_placement_annotations(obj, rjob)  # the pod webhook's view (pod_webhook.go Default)
        topology = placement.get(api.EXCLUSIVE_TOPOLOGY_KEY)
        if topology is None or api.NODE_SELECTOR_STRATEGY_KEY in placement:
            continue  # the node-selector strategy has no pod affinities at all
        priority = priority_of(ctx, priority_class_name(api.pod_spec(rjob)))
        if priority is None:
            continue  # ref-priority-class: the pods are rejected anyway
        at = pod_exclusive_topology_at(obj, index, rjob)
        if at is None:
            continue
        yield _Exclusive(obj, api.rjob_name(rjob), topology, priority, at)


#: Topology key → priority → the first exclusive replicated job with that key and priority.
_Index = dict[str, dict[int, _Exclusive]]


def _everyone(cluster: ClusterView, ctx: AdmissionContext) -> _Index:
    index: _Index = {}
    for js in cluster.list(api.GROUP, api.KIND):
        if isinstance(js, dict):
            for entry in _exclusive(js, ctx):
                index.setdefault(entry.topology, {}).setdefault(entry.priority, entry)
    return index


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    mine = list(_exclusive(obj, ctx))
    if not mine:
        return
    index = memo(ctx, RULE.id, lambda cluster: _everyone(cluster, ctx))
    reported: set[Path] = set()
    for entry in mine:
        if entry.at in reported:
            continue
        clash = next((other for priority, other in sorted(index.get(entry.topology, {}).items())
                      if priority != entry.priority), None)
        if clash is None:
            continue
        reported.add(entry.at)
        where = (f"replicated job {go_quote(clash.rjob)}" if clash.owner is obj
                 else f"JobSet {go_quote(api.name(clash.owner))}")
        yield RULE.finding(
            f"exclusive placement on {go_quote(entry.topology)} keeps apart only pods of the same priority: "
            f"{where} is exclusive on the same key with priority {clash.priority}, these pods have priority "
            f"{entry.priority}, so they may share a domain (the higher priority preempts the other only when "
            "resources run short)",
            path=path_string(entry.at), at=entry.at,
            hint="give exclusive JobSets that must never share a domain the same priority",
        )
