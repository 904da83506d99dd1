"""``gang-min-count-staged``: a gang whose ``minCount`` counts pods that never exist at the same time.

scheduling.md §1.3: a gang's pods wait at the scheduler's PreEnqueue until ``minCount`` of them exist,
and the whole gang is admitted in one pass or not at all (§1.3 for 1.36/1.37, the 300 s Permit window
in 1.35; scheduler-plugins Coscheduling and Volcano behave alike, §4.1, §4.2). JobSet creates a
replicated job that ``dependsOn`` another only once that one is Ready or Complete (jobset.md §4.4), and
with ``startupPolicy: InOrder`` one replicated job at a time (§4.3). If a gang spans such stages, its
first stage alone must reach ``minCount``; when it cannot, the first stage waits for a gang that needs
the later stages, which wait for the first stage: nothing is ever scheduled.

The static check that ``minCount`` exceeds *all* pods of the group is the reference layer's
``ref-gang-too-large``; this lint only reports gangs that are large enough in total.

Reported on:

* a ``scheduling.k8s.io`` PodGroup (1.36, 1.37) or a 1.35 Workload pod group, counting the pods of
  every JobSet and Job among the inputs that reference it;
* a (Cluster)TrainingRuntime with a Coscheduling or Volcano ``podGroupPolicy`` and stages: Trainer's
  PodGroup counts the pods of every replicated job (trainer.md §3.10);
* a TrainJob whose runtime is such a runtime, with the counts of its expansion.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.jobset import api
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.field import Path, go_quote, path_string
from jobsetctl.lint.support import (
    CLUSTER_TRAINING_RUNTIME,
    JOB,
    PODGROUP,
    RUNTIME_REF_NAME,
    TRAINING_RUNTIME,
    TRAINJOB,
    WORKLOAD,
    GangMember,
    coexistence,
    gang_members,
    group_kind,
    jobset_pods,
    jobset_views,
    lint_doc,
    plan_of,
    runtime_label,
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
    gang: {minCount: 4}           # only the workers: they exist together
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: staged
spec:
  replicatedJobs:
  - name: prepare
    template:
      spec:
        template:
          spec:
            containers: [{name: prepare, image: busybox}]
  - name: workers
    dependsOn: [{name: prepare, status: Complete}]
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
    gang: {minCount: 5}           # driver + 4 workers, but workers wait for the driver
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: staged
spec:
  replicatedJobs:
  - name: driver
    template:
      spec:
        template:
          spec:
            schedulingGroup: {podGroupName: trainers}
            containers: [{name: driver, image: busybox}]
  - name: workers
    dependsOn: [{name: driver, status: Ready}]
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
    "gang-min-count-staged", Layer.LINT, Severity.WARNING,
    "A gang's minCount needs pods of later dependsOn/InOrder stages, which only exist once the gang runs.",
    spec="scheduling.md §1.3; jobset.md §4.3, §4.4; trainer.md §3.10",
    doc=lint_doc(
        "Gang pods wait until minCount of them exist, but a stage's pods are created only after the stage "
        "it depends on is ready or complete. A gang spanning stages therefore never starts.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({PODGROUP, WORKLOAD, TRAINJOB, TRAINING_RUNTIME, CLUSTER_TRAINING_RUNTIME})


@dataclass(slots=True)
class _Tally:
    """Pods of one gang: all of them, those that can exist before it is admitted, and why not the rest."""

    total: int = 0
    up_front: int = 0
    reasons: list[str] = field(default_factory=list)

    def add_jobset(self, js: Any, members: set[str], label: str) -> None:
        pods = jobset_pods(js)  # counted once per JobSet: one with a PodGroup per replicated job comes ten times
        split = coexistence(js, members)
        self.total += sum(pods[name] for name in members)
        self.up_front += sum(pods[name] for name in split.first)
        for name, blocker in split.waiting.items():
            if pods[name] <= 0:
                continue
            in_order = api.startup_order(js) == api.StartupPolicyOrder.IN_ORDER.value
            how = "InOrder startup" if in_order else "dependsOn"
            self.reasons.append(f"{label}{go_quote(name)} waits for {go_quote(blocker)} ({how})")


def _message(min_count: int, tally: _Tally, group: str) -> str:
    return (
        f"gang minCount {min_count} cannot be met: of the {tally.total} pods of {group}, only {tally.up_front} "
        f"can exist before the gang is admitted ({'; '.join(tally.reasons)}, and those are in the gang "
        "themselves): the gang never starts"
    )


def _tally(members: list[GangMember]) -> _Tally:
    tally = _Tally()
    for kind, other, names in members:
        if kind == JOB[1]:
            pods = pods_per_job(api.spec(other))  # a Job's pods all exist at once
            tally.total += pods
            tally.up_front += pods
        else:
            tally.add_jobset(other, names, f"JobSet {go_quote(api.name(other))}: ")
    return tally


def _podgroup(obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    gang = api.as_dict(api.as_dict(api.spec(obj).get("schedulingPolicy")).get("gang"))
    min_count = api.as_int(gang.get("minCount"))
    name = api.name(obj)
    if min_count is None or not name:
        return
    namespace = api.namespace(obj) or ctx.default_namespace
    tally = _tally(gang_members(ctx).get(("pg", namespace, name), []))
    if tally.up_front < min_count <= tally.total:
        at: Path = ("spec", "schedulingPolicy", "gang", "minCount")
        yield RULE.finding(_message(min_count, tally, f"PodGroup {go_quote(name)}"), path=path_string(at), at=at)


def _workload(obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    """Kubernetes 1.35: pods name (Workload, pod group, replica key); each replica key is a gang."""
    if ctx.version.minor != 35:
        return
    name = api.name(obj)
    namespace = api.namespace(obj) or ctx.default_namespace
    index = gang_members(ctx)
    for position, group in enumerate(api.as_list(api.spec(obj).get("podGroups"))):
        group_name = api.as_dict(group).get("name")
        gang = api.as_dict(api.as_dict(api.as_dict(group).get("policy")).get("gang"))
        min_count = api.as_int(gang.get("minCount"))
        if min_count is None or not isinstance(group_name, str):
            continue
        replica_keys = sorted(key[4] for key in index if key[:4] == ("wl", namespace, name, group_name))
        for replica_key in replica_keys:
            tally = _tally(index[("wl", namespace, name, group_name, replica_key)])
            if tally.up_front < min_count <= tally.total:
                label = f"pod group {go_quote(group_name)}" + (f" replica {go_quote(replica_key)}" if replica_key else "")
                at: Path = ("spec", "podGroups", position, "policy", "gang", "minCount")
                yield RULE.finding(_message(min_count, tally, label), path=path_string(at), at=at)


def _runtime(obj: Object) -> Iterator[Finding]:
    policy = api.as_dict(api.spec(obj).get("podGroupPolicy"))
    schedulers = [name for name in ("coscheduling", "volcano") if isinstance(policy.get(name), dict)]
    if not schedulers:
        return
    for view in jobset_views(obj):
        members = {api.rjob_name(rjob) for rjob in api.replicated_jobs(view.obj)}
        split = coexistence(view.obj, members)
        if not split.waiting:
            continue
        waiting = "; ".join(f"{go_quote(n)} waits for {go_quote(b)}" for n, b in split.waiting.items())
        at: Path = ("spec", "podGroupPolicy")
        yield RULE.finding(
            f"podGroupPolicy ({', '.join(schedulers)}) makes one gang of the pods of every replicated job, but "
            f"the replicated jobs run in stages ({waiting}): only {', '.join(go_quote(n) for n in split.first)} "
            "can have pods before the gang is admitted, so no TrainJob using this runtime ever starts",
            path=path_string(at), at=at,
            hint="drop podGroupPolicy, or remove the stages from the runtime",
        )


def _trainjob(obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    plan = plan_of(obj, ctx)
    if plan is None or plan.jobset is None or not plan.expansion.applied:
        return
    for group in plan.expansion.objects:
        if group.get("kind") != "PodGroup":
            continue
        min_member = api.as_int(api.spec(group).get("minMember"))
        if min_member is None:
            continue
        tally = _Tally()
        members = {api.rjob_name(rjob) for rjob in api.replicated_jobs(plan.jobset)}
        tally.add_jobset(plan.jobset, members, "")
        if tally.up_front >= min_member or not tally.reasons:
            continue
        scheduler = str(group.get("apiVersion", "")).partition("/")[0]
        yield RULE.finding(
            f"{runtime_label(plan)} gangs every pod of this TrainJob ({scheduler} PodGroup "
            f"{go_quote(api.name(group))}, minMember {min_member}), but only {tally.up_front} can exist before the "
            f"gang is admitted ({'; '.join(tally.reasons)}): the TrainJob never starts",
            path=path_string(RUNTIME_REF_NAME), at=RUNTIME_REF_NAME,
        )


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    kind = group_kind(obj)
    if kind == PODGROUP:
        yield from _podgroup(obj, ctx)
    elif kind == WORKLOAD:
        yield from _workload(obj, ctx)
    elif kind == TRAINJOB:
        yield from _trainjob(obj, ctx)
    else:
        yield from _runtime(obj)
