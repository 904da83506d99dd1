"""Kueue's checks across objects, in the ``consequence`` layer: the API server accepts every object here,
and the workload then waits for ever (or Kueue never creates it). Words are Kueue's own, from the condition
or event a user would find later (see :mod:`jobsetctl.kueue.queues` for the upstream sources).

On a job Kueue manages (a JobSet, TrainJob or Job with a queue-name label, any job under
``manageJobsWithoutQueueName``) and on a Workload written by hand:

* ``kueue-local-queue-missing``: its queue names no LocalQueue of its namespace:
  ``LocalQueue <q> doesn't exist`` (QuotaReserved=False, reason Misconfigured); a job managed under
  ``manageJobsWithoutQueueName`` that names none (and finds no LocalQueue ``default``) and a Workload without
  ``queueName`` get upstream's ``LocalQueue  doesn't exist`` (two spaces);
* ``kueue-cluster-queue-missing``: the LocalQueue's ClusterQueue does not exist: ``ClusterQueue <c> doesn't
  exist``, reported on the LocalQueue when it is an input, else on the job;
* ``kueue-cluster-queue-inactive``: the ClusterQueue refers to ResourceFlavors, AdmissionChecks or (TAS)
  Topologies that do not exist, or combines MultiKueue checks as it may not: its ``Active`` condition's
  message, ``Can't admit new workloads: references missing ResourceFlavor(s): a,b.``, reported at each
  reference on the ClusterQueue when it is an input; a job whose ClusterQueue is not an input gets the
  scheduler's ``ClusterQueue <c> is inactive``;
* ``kueue-namespace-not-selected``: the ClusterQueue's ``namespaceSelector`` does not select the namespace:
  ``workload namespace doesn't match ClusterQueue selector``, on the LocalQueue when it is an input;
* ``kueue-priority-class-missing``: the ``kueue.x-k8s.io/priority-class`` label names no
  WorkloadPriorityClass: Kueue creates no Workload (event WorkloadPriorityClassNotFound,
  ``WorkloadPriorityClass "<n>" not found``);
* ``kueue-tas-topology``: a podset's topology request that no flavor of the ClusterQueue can serve, in the
  flavor assigner's words (``couldn't assign flavors to pod set <ps>: Flavor "f" does not contain the
  requested level``; the TAS snapshot's ``podset slice topology X is above the podset topology Y``);
* ``kueue-tas-slice-size`` (warning): a slice size that does not divide the podset's count (KEP-2724).

And on every job of an integration Kueue runs, ``kueue-queue-name-annotation`` (warning): the queue name
written as the annotation ``kueue.x-k8s.io/queue-name``, which Kueue stopped reading in v0.15 (kueue#7271):
the job is not queued. ``jobsetctl fix`` moves it to the label.

Lookups go through ``ctx.cluster``: validate's inputs and its ``--context`` files, render's fake cluster.
A missing object (ClusterQueue, ResourceFlavor, AdmissionCheck, Topology, WorkloadPriorityClass, and the
LocalQueue, which administrators create in the users' namespaces) carries ``unresolved``, so validate, which
cannot see the cluster, makes it a warning with a hint unless ``--strict`` or the name is a slip of a known
one (:mod:`jobsetctl.context`); render's fake cluster holds nothing else, so there it is an error. Nothing
runs without Kueue (``ctx.kueue`` None).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jobsetctl.context import did_you_mean
from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.kinds.index import object_key
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.field import Path, path_string
from jobsetctl.kueue import api, fit, queues
from jobsetctl.kueue.config import KueueConfiguration
from jobsetctl.kueue.jobs import is_managed
from jobsetctl.kueue.versions import field_path_in, to_v1beta2
from jobsetctl.kueue.workload import WPC_NOT_FOUND_REASON, group_kind, priority_class_label, queue_name
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define

E, W, CONSEQUENCE = Severity.ERROR, Severity.WARNING, Layer.CONSEQUENCE
_SPEC = "scheduling.md §2.1, §2.3 (pkg/controller/core/workload_controller.go, pkg/cache/scheduler/clusterqueue.go)"

LOCAL_QUEUE_MISSING = define(
    "kueue-local-queue-missing", CONSEQUENCE, E,
    "A job's queue-name (or a Workload's queueName) names no LocalQueue of its namespace; it waits for ever.",
    spec=_SPEC, waits=True,
)
CLUSTER_QUEUE_MISSING = define(
    "kueue-cluster-queue-missing", CONSEQUENCE, E,
    "A LocalQueue's clusterQueue does not exist: its workloads are never admitted.", spec=_SPEC, waits=True,
)
CLUSTER_QUEUE_INACTIVE = define(
    "kueue-cluster-queue-inactive", CONSEQUENCE, E,
    "A ClusterQueue refers to missing ResourceFlavors, AdmissionChecks or Topologies: it admits nothing.",
    spec=_SPEC, waits=True,
)
NAMESPACE_NOT_SELECTED = define(
    "kueue-namespace-not-selected", CONSEQUENCE, E,
    "The ClusterQueue's namespaceSelector does not select the namespace a workload is submitted from.",
    spec="scheduling.md §2.1 (pkg/workload/resources.go ValidateAdmissibility)",
)
PRIORITY_CLASS_MISSING = define(
    "kueue-priority-class-missing", CONSEQUENCE, E,
    "The kueue.x-k8s.io/priority-class label names no WorkloadPriorityClass: Kueue creates no Workload.",
    spec="scheduling.md §2.4 (pkg/controller/jobframework/reconciler.go, ExtractPriority)",
)
TAS_TOPOLOGY = define(
    "kueue-tas-topology", CONSEQUENCE, E,
    "A podset's topology request that no flavor of its ClusterQueue can serve (level missing, not a TAS flavor).",
    spec="scheduling.md §2.5 (tas_flavorassigner.go, tas_flavor_snapshot.go)",
)
TAS_SLICE_SIZE = define(
    "kueue-tas-slice-size", CONSEQUENCE, W,
    "A podset's slice size does not divide its pod count (KEP-2724: it has to evenly divide the PodSet).",
    spec="scheduling.md §2.5 (KEP-2724 topology-aware-scheduling, Validation)",
)
QUEUE_NAME_ANNOTATION = define(
    "kueue-queue-name-annotation", CONSEQUENCE, W,
    "The queue name is written as an annotation, which Kueue no longer reads: the job is not queued.",
    spec="scheduling.md §2.1 (Kueue v0.15 CHANGELOG, kueue#7271)",
)

_LABEL_AT: Path = ("metadata", "labels", api.QUEUE_LABEL)
_ANNOTATION_AT: Path = ("metadata", "annotations", api.QUEUE_LABEL)
_PENDING = "the Workload stays pending (QuotaReserved=False, reason {reason})"

Admitted = list[tuple[ObjectRecord, dict[str, Any]]]


def _m(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _namespace(obj: Object, ctx: AdmissionContext) -> str:
    namespace = _m(obj.get("metadata")).get("namespace")
    return namespace if isinstance(namespace, str) and namespace else ctx.default_namespace


def check_kueue_references(admitted: Admitted, ctx: AdmissionContext) -> Iterator[tuple[ObjectRecord, Finding]]:
    """Every consequence finding of Kueue's objects and the jobs it manages, over validate's admitted inputs."""
    config = ctx.kueue
    queues.forget_workloads()
    if config is None:
        return
    kueue = queues.Kueue(ctx.cluster, ctx.default_namespace)
    inputs = {_key(obj, ctx) for _, obj in admitted}
    for record, obj in admitted:
        group, kind = group_kind(obj)
        findings: Iterator[Finding]
        if group == api.GROUP:
            if kind == api.LOCAL_QUEUE:
                findings = _local_queue(obj, ctx, kueue, config)
            elif kind == api.CLUSTER_QUEUE:
                findings = _cluster_queue(obj, record.obj, kueue, config)
            elif kind == api.WORKLOAD:
                findings = _workload(obj, ctx, kueue, config, inputs)
            else:
                continue
        elif config.manages(group, kind):
            findings = _job(obj, ctx, kueue, config, inputs)
        else:
            continue
        for finding in findings:
            yield record, finding
    # The Workloads built stay for the Kueue lints, which run next; the next run forgets them.


def _key(obj: Object, ctx: AdmissionContext) -> tuple[str, str, str, str]:
    group, kind, namespace, name = object_key(obj)
    if group == api.GROUP and kind in api.CLUSTER_SCOPED_KINDS:
        return group, kind, "", name
    return group, kind, namespace or ctx.default_namespace, name


# ---- Kueue's own objects ------------------------------------------------------------------------------


def _local_queue(obj: Object, ctx: AdmissionContext, kueue: queues.Kueue,
                 config: KueueConfiguration) -> Iterator[Finding]:
    name = queues.cluster_queue_name(obj)
    if not name:
        return
    at: Path = ("spec", "clusterQueue")
    cluster_queue = kueue.get(api.CLUSTER_QUEUE, name)
    if cluster_queue is None:
        yield CLUSTER_QUEUE_MISSING.finding(
            f"ClusterQueue {name} doesn't exist", at=at, unresolved=(api.GROUP, api.CLUSTER_QUEUE, name),
            hint=f"the LocalQueue is Active=False ({queues.CLUSTER_QUEUE_DOES_NOT_EXIST}: "
                 f"{queues.LOCAL_QUEUE_INACTIVE_MESSAGE}); {_PENDING.format(reason=queues.MISCONFIGURED)}")
        return
    namespace = _namespace(obj, ctx)
    if not queues.namespace_selected(cluster_queue, namespace, kueue.cluster):
        yield NAMESPACE_NOT_SELECTED.finding(
            queues.NAMESPACE_MISMATCH, at=at,
            hint=f"ClusterQueue {name}'s namespaceSelector does not select namespace {namespace} (no "
                 f"namespaceSelector selects none): every workload of this LocalQueue stays pending "
                 f"({queues.MISCONFIGURED})")


def _cluster_queue(obj: Object, written: Object, kueue: queues.Kueue, config: KueueConfiguration) -> Iterator[Finding]:
    """``written``: the object as the user wrote it, in either version (positions point there)."""
    stored = to_v1beta2(obj)
    obj = written
    why = queues.inactive(stored, kueue, config)
    if not why.blocking:
        return
    hint = f"reason {why.reason}: the ClusterQueue is Active=False and admits no workload"
    reported: set[Path] = {("spec", "stopPolicy")}
    for missing in why.missing:
        at = field_path_in(obj, missing.at)
        reported.add(missing.at)
        yield CLUSTER_QUEUE_INACTIVE.finding(why.message, at=at, hint=hint,
                                             unresolved=(api.GROUP, missing.kind, missing.name))
    for part_at in why.part_at:
        if part_at not in reported:
            reported.add(part_at)
            yield CLUSTER_QUEUE_INACTIVE.finding(why.message, at=field_path_in(obj, part_at), hint=hint)


def _workload(obj: Object, ctx: AdmissionContext, kueue: queues.Kueue, config: KueueConfiguration,
              inputs: set[tuple[str, str, str, str]]) -> Iterator[Finding]:
    """A Workload written by hand (a prebuilt workload): its ``queueName``, "" when absent
    (workload_controller_test.go: ``LocalQueue  doesn't exist``, two spaces)."""
    queue = _m(to_v1beta2(obj).get("spec")).get("queueName")
    if not isinstance(queue, str) or not queue:
        yield LOCAL_QUEUE_MISSING.finding(
            "LocalQueue  doesn't exist", at=("spec",),
            hint=f"the Workload names no queueName: {_PENDING.format(reason=queues.MISCONFIGURED)}")
        return
    yield from _route(_namespace(obj, ctx), queue, ("spec", "queueName"), kueue, config, inputs)


# ---- a workload's way to its ClusterQueue ---------------------------------------------------------------


def _route(namespace: str, queue: str, at: Path, kueue: queues.Kueue, config: KueueConfiguration,
           inputs: set[tuple[str, str, str, str]]) -> Iterator[Finding]:
    """The blockers on the way from a LocalQueue name to an active ClusterQueue; what an input LocalQueue or
    ClusterQueue reports itself is not repeated on the workload."""
    if not queue:
        return
    way = queues.route(namespace, queue, kueue, config)
    if way.local_queue is None:
        known = [str(_m(lq.get("metadata")).get("name", "")) for lq in kueue.list(api.LOCAL_QUEUE)
                 if _m(lq.get("metadata")).get("namespace", kueue.default_namespace) == namespace]
        close = did_you_mean(queue, known)
        suggestion = "did you mean " + " or ".join(f'"{c}"' for c in close) + "? " if close else ""
        yield LOCAL_QUEUE_MISSING.finding(
            f"LocalQueue {queue} doesn't exist", at=at, unresolved=(api.GROUP, api.LOCAL_QUEUE, queue),
            hint=f"{suggestion}no LocalQueue {queue} in namespace {namespace} among the inputs and the context: "
                 f"{_PENDING.format(reason=queues.MISCONFIGURED)}")
        return
    local_queue_is_input = (api.GROUP, api.LOCAL_QUEUE, namespace, queue) in inputs
    cluster_queue_is_input = (api.GROUP, api.CLUSTER_QUEUE, "", way.cluster_queue_name) in inputs
    if way.cluster_queue is None:
        if not local_queue_is_input:
            yield CLUSTER_QUEUE_MISSING.finding(
                f"ClusterQueue {way.cluster_queue_name} doesn't exist", at=at,
                unresolved=(api.GROUP, api.CLUSTER_QUEUE, way.cluster_queue_name),
                hint=f"LocalQueue {queue} points at it; {_PENDING.format(reason=queues.MISCONFIGURED)}")
        return
    if way.inactive is not None and way.inactive.blocking and not cluster_queue_is_input:
        yield CLUSTER_QUEUE_INACTIVE.finding(
            f"ClusterQueue {way.cluster_queue_name} is inactive", at=at,
            hint=f"its Active condition: {way.inactive.message} {_PENDING.format(reason=queues.SUSPENDED)}")
    if not way.selected and not local_queue_is_input:
        yield NAMESPACE_NOT_SELECTED.finding(
            queues.NAMESPACE_MISMATCH, at=at,
            hint=f"ClusterQueue {way.cluster_queue_name} (of LocalQueue {queue}) does not select namespace "
                 f"{namespace}: {_PENDING.format(reason=queues.MISCONFIGURED)}")


# ---- jobs -----------------------------------------------------------------------------------------------


def _job(obj: Object, ctx: AdmissionContext, kueue: queues.Kueue, config: KueueConfiguration,
         inputs: set[tuple[str, str, str, str]]) -> Iterator[Finding]:
    annotation = _m(_m(obj.get("metadata")).get("annotations")).get(api.QUEUE_LABEL)
    if isinstance(annotation, str):
        label = queue_name(obj)
        same = "" if not label else (" (the label says the same)" if label == annotation else
                                     f" (the label names {label})")
        yield QUEUE_NAME_ANNOTATION.finding(
            f"the annotation {api.QUEUE_LABEL} is ignored: Kueue reads the queue name from the label of that "
            f"name since v0.15 (kueue#7271){same}", at=_ANNOTATION_AT,
            hint="without the label the job is not queued and starts at once" if not label else
                 "remove the annotation")
    if not is_managed(obj, ctx):
        return
    namespace = _namespace(obj, ctx)
    wpc = priority_class_label(obj)
    if wpc:
        built = queues.workload_of(obj, ctx)
        if built.event is not None and built.event[0] == WPC_NOT_FOUND_REASON:
            yield PRIORITY_CLASS_MISSING.finding(
                built.event[1], at=built.at, unresolved=(api.GROUP, api.WORKLOAD_PRIORITY_CLASS, wpc),
                hint=f"Kueue creates no Workload (event {WPC_NOT_FOUND_REASON}) and the job stays suspended")
            return
    queue = queue_name(obj)
    if not queue and kueue.get(api.LOCAL_QUEUE, api.DEFAULT_LOCAL_QUEUE, namespace) is not None:
        queue = api.DEFAULT_LOCAL_QUEUE  # ApplyDefaultLocalQueue, which validate's per-file phase cannot apply
    if not queue:
        # manageJobsWithoutQueueName: suspended and managed, but ApplyDefaultLocalQueue found no LocalQueue
        # "default" to name: the Workload's queueName is empty (workload_controller_test.go, two spaces).
        yield LOCAL_QUEUE_MISSING.finding(
            "LocalQueue  doesn't exist", at=("metadata", "labels") if _m(obj.get("metadata")).get("labels")
            else ("metadata",), unresolved=(api.GROUP, api.LOCAL_QUEUE, api.DEFAULT_LOCAL_QUEUE),
            hint=f"manageJobsWithoutQueueName: Kueue suspends this job, which names no queue, and namespace "
                 f"{namespace} has no LocalQueue {api.DEFAULT_LOCAL_QUEUE} to default to; set the "
                 f"{api.QUEUE_LABEL} label. {_PENDING.format(reason=queues.MISCONFIGURED)}")
        return
    blocked = False
    for finding in _route(namespace, queue, _LABEL_AT, kueue, config, inputs):
        blocked = True
        yield finding
    if blocked or not config.gate("TopologyAwareScheduling"):
        return
    way = queues.route(namespace, queue, kueue, config)
    if way.usable and way.cluster_queue is not None:
        workload = queues.workload_of(obj, ctx).workload  # built only now: most jobs stop before
        if workload is not None:
            yield from _tas(obj, workload, way.cluster_queue, kueue, config)


def _tas(job: Object, workload: Object, cluster_queue: Object, kueue: queues.Kueue,
         config: KueueConfiguration) -> Iterator[Finding]:
    groups = queues.resource_groups(cluster_queue)
    flavors = {name: kueue.get(api.RESOURCE_FLAVOR, name) for group in groups for name in group.flavors}
    existing = [f for f in flavors.values() if f is not None]
    tas_only = bool(existing) and all(_m(f.get("spec")).get("topologyName") for f in existing)
    covers_pods = queues.group_for(groups, "pods") is not None
    for index, pod_set in enumerate(_m(workload.get("spec")).get("podSets") or []):
        name = str(_m(pod_set).get("name", ""))
        at = queues.where_in_job(job, index, "metadata", "annotations")
        requests = queues.podset_requests(pod_set, config, covers_pods)
        reasons: list[str] = []
        for group in groups:
            if not any(resource in group.covered for resource in requests):
                continue
            mismatches = [queues.flavor_tas_mismatch(pod_set, flavor, flavors[flavor], tas_only, True, kueue)
                          for flavor in group.flavors if flavors.get(flavor) is not None]
            if mismatches and all(m is not None for m in mismatches):
                reasons = sorted(m for m in mismatches if m is not None)
                break
        if reasons:
            yield TAS_TOPOLOGY.finding(
                fit.NO_FLAVOR.format(pod_set=name, reasons=", ".join(reasons)), path=path_string(at), at=at,
                hint=f"ClusterQueue {_m(cluster_queue.get('metadata')).get('name')}: "
                     f"{_PENDING.format(reason='NoMatchingFlavor')}")
            continue
        remainder = queues.slice_remainder(pod_set) if queues.explicitly_requests_tas(pod_set) else None
        if remainder is not None:
            size, left = remainder
            yield TAS_SLICE_SIZE.finding(
                f"pod set {name}: slice size {size} does not divide its {pod_set.get('count')} pods: the scheduler "
                f"places whole slices of {size} and {left} pod(s) belong to none", path=path_string(at), at=at,
                hint="KEP-2724: the slice size has to evenly divide the size of a PodSet")
