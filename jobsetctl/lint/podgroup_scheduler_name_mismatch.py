"""``podgroup-scheduler-name-mismatch``: pods of one PodGroup that name different schedulers.

scheduling.md §1.3: "All pods of a group must share ``spec.schedulerName``; otherwise every pod of the
group is rejected (1.37 rule)". A group is scheduled as a unit by one scheduler, so Kubernetes 1.37
rejects all of its pods when they disagree, including those whose scheduler is right. Reported on
each pod template (of a JobSet or Job among the inputs) whose scheduler differs from the first one
that references the group (ordered by kind, namespace, name and replicated job).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.jobset import api
from jobsetctl.kinds.interface import AdmissionContext, ClusterView, Object
from jobsetctl.kube.field import Path, go_quote, path_string
from jobsetctl.kube.podspec import scheduler_name, scheduling_group_name
from jobsetctl.lint.support import JOB, JOBSET, group_kind, lint_doc, memo
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define

PASSING = """
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata:
  name: trainers
spec:
  schedulingPolicy: {gang: {minCount: 2}}
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: gang
spec:
  replicatedJobs:
  - name: leader
    template:
      spec:
        template:
          spec:
            schedulingGroup: {podGroupName: trainers}
            containers: [{name: leader, image: busybox}]
  - name: worker
    template:
      spec:
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
  schedulingPolicy: {gang: {minCount: 2}}
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: gang
spec:
  replicatedJobs:
  - name: leader
    template:
      spec:
        template:
          spec:
            schedulingGroup: {podGroupName: trainers}
            containers: [{name: leader, image: busybox}]
  - name: worker
    template:
      spec:
        template:
          spec:
            schedulerName: my-scheduler     # the leader uses default-scheduler
            schedulingGroup: {podGroupName: trainers}
            containers: [{name: worker, image: busybox}]
"""

RULE = define(
    "podgroup-scheduler-name-mismatch", Layer.LINT, Severity.WARNING,
    "Pods of one PodGroup name different schedulerNames: Kubernetes 1.37 rejects every pod of the group.",
    spec="scheduling.md §1.3",
    doc=lint_doc(
        "A PodGroup is scheduled by one scheduler. From Kubernetes 1.37, when its pods disagree on "
        "spec.schedulerName, all of them are rejected.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({JOBSET, JOB})


@dataclass(frozen=True, slots=True)
class _Use:
    """One pod template that references a PodGroup."""

    owner: Object
    label: str
    at: Path
    scheduler: str
    explicit: bool


def _uses(obj: Object) -> Iterator[tuple[str, _Use]]:
    if group_kind(obj) == JOB:
        pod_spec = api.as_dict(api.as_dict(api.spec(obj).get("template")).get("spec"))
        group = scheduling_group_name(pod_spec)
        if group is not None:
            yield group, _Use(obj, f"Job {go_quote(api.name(obj))}", ("spec", "template", "spec"),
                              scheduler_name(pod_spec), "schedulerName" in pod_spec)
        return
    for index, rjob in api.enumerate_replicated_jobs(obj):
        pod_spec = api.pod_spec(rjob)
        group = scheduling_group_name(pod_spec)
        if group is not None:
            label = f"JobSet {go_quote(api.name(obj))} replicated job {go_quote(api.rjob_name(rjob))}"
            at: Path = ("spec", "replicatedJobs", index, "template", "spec", "template", "spec")
            yield group, _Use(obj, label, at, scheduler_name(pod_spec), "schedulerName" in pod_spec)


def _index(cluster: ClusterView, default_namespace: str) -> dict[tuple[str, str], list[_Use]]:
    """(namespace, PodGroup name) → the pod templates that reference it, Jobs first, in a stable order."""
    everyone: dict[tuple[str, str], list[_Use]] = {}
    for kind in (JOB, JOBSET):  # "Job" sorts before "JobSet": a stable order for "the first"
        for other in cluster.list(kind[0], kind[1]):
            if isinstance(other, dict):
                for group, use in _uses(other):
                    everyone.setdefault((api.namespace(other) or default_namespace, group), []).append(use)
    return everyone


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    if ctx.version.minor < 37:
        return
    own = list(_uses(obj))
    if not own:
        return
    namespace = api.namespace(obj) or ctx.default_namespace
    everyone = memo(ctx, RULE.id, lambda cluster: _index(cluster, ctx.default_namespace))
    for group, use in own:
        members = everyone.get((namespace, group), [use])
        first = members[0]
        if use.scheduler == first.scheduler:
            continue
        at = (*use.at, "schedulerName") if use.explicit else (*use.at, "schedulingGroup", "podGroupName")
        yield RULE.finding(
            f"pods of PodGroup {go_quote(group)} use different schedulers: {go_quote(use.scheduler)} here, "
            f"{go_quote(first.scheduler)} in {first.label}; Kubernetes 1.37 rejects every pod of the group",
            path=path_string(at), at=at,
            hint="give every pod of the group the same spec.schedulerName",
        )
