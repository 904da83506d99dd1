"""Kueue's validating webhooks on JobSets, TrainJobs and Jobs (``vjobset``, ``vtrainjob``, ``vjob``).

Create (``ValidateJobOnCreate``, jobframework/validation.go, then the integration's own checks):

* ``kueue-job-queue-name``: the queue-name label is a DNS subdomain (``ValidateQueueName``);
* ``kueue-job-metadata``: ``kueue.x-k8s.io/max-exec-time-seconds`` is a positive integer; the prebuilt
  workload name is a DNS subdomain; the elastic-job annotation only on kinds that support it (Job;
  not JobSet or TrainJob); ``kueue.x-k8s.io/admission-gated-by`` is a list of distinct domain-prefixed
  paths (gate AdmissionGatedBy);
* ``kueue-job-tas-annotations`` (gate TopologyAwareScheduling): ``ValidateTASPodSetRequest``,
  ``ValidateSliceSizeAnnotationUpperBound`` per pod template and, for JobSets,
  ``ValidatePodSetGroupingTopology``. A TrainJob's pod templates are its JobSet's, reported under
  ``job[<replicated job>]`` with upstream's advice appended (trainjob_webhook.go);
* ``kueue-job-partial-admission`` (Jobs): ``kueue.x-k8s.io/job-min-parallelism`` between 1 and
  count-1; ``kueue.x-k8s.io/job-completions-equal-parallelism`` a boolean, only on Indexed Jobs whose
  completions equal parallelism; on update (``validatePartialAdmissionUpdate``) a running Job with
  job-min-parallelism keeps its parallelism, and a running Job keeps its completions-equal-parallelism.
  (An elastic Job's TAS request may only be unconstrained: ``kueue-job-tas-annotations``.)

Update (``ValidateJobOnUpdate``, ``kueue-job-update``): the queue-name of a running job is immutable, and may
not be emptied in a namespace with a default LocalQueue; the priority-class label may not be added to a
running job nor removed; the max-exec-time label of a running job is immutable; the prebuilt workload
name of a running job is immutable; the elastic-job switch is immutable. The create checks run again.
"""

from __future__ import annotations

from typing import Any

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.field import Path, forbidden, invalid, path_string, too_long
from jobsetctl.kube.names import domain_prefixed_path_errors, is_dns1123_subdomain
from jobsetctl.kueue import api, tas
from jobsetctl.kueue.config import SHIPPED, KueueConfiguration
from jobsetctl.kueue.workload import JOB_MIN_PARALLELISM_ANNOTATION, group_kind, pods_per_replica, queue_name
from jobsetctl.rules.interface import Rule
from jobsetctl.rules.registry import define

_SPEC = "scheduling.md §2.1, §2.5 (pkg/controller/jobframework/validation.go, tas_validation.go)"

QUEUE_NAME = define(
    "kueue-job-queue-name", Layer.WEBHOOK, Severity.ERROR,
    "Kueue's job webhook: the kueue.x-k8s.io/queue-name label must be a DNS-1123 subdomain.", spec=_SPEC,
)
METADATA = define(
    "kueue-job-metadata", Layer.WEBHOOK, Severity.ERROR,
    "Kueue's job webhook: max-exec-time-seconds, prebuilt-workload-name, elastic-job and admission-gated-by "
    "labels and annotations must be well-formed and supported by the kind.", spec=_SPEC,
)
TAS_ANNOTATIONS = define(
    "kueue-job-tas-annotations", Layer.WEBHOOK, Severity.ERROR,
    "Kueue's job webhook: the TAS podset annotations of a pod template must be consistent (one of required, "
    "preferred, unconstrained; a slice topology with a size; podset groups of two; an elastic Job "
    "unconstrained only).", spec="scheduling.md §2.5",
)
PARTIAL_ADMISSION = define(
    "kueue-job-partial-admission", Layer.WEBHOOK, Severity.ERROR,
    "Kueue's Job webhook: job-min-parallelism between 1 and the pod count - 1; completions-equal-parallelism "
    "only on Indexed Jobs whose completions equal parallelism; neither parallelism (with job-min-parallelism) "
    "nor completions-equal-parallelism changes on a running Job.", spec="scheduling.md §2.2",
)
UPDATE = define(
    "kueue-job-update", Layer.WEBHOOK, Severity.ERROR,
    "Kueue's job webhook on update: queue-name, priority-class, max-exec-time and prebuilt workload of a "
    "running job may not change.", spec=_SPEC,
)

QUEUE_NAME_PATH: Path = ("metadata", "labels", api.QUEUE_LABEL)
MAX_EXEC_PATH: Path = ("metadata", "labels", api.MAX_EXEC_TIME_LABEL)
PRIORITY_CLASS_PATH: Path = ("metadata", "labels", api.PRIORITY_CLASS_LABEL)
ELASTIC_PATH: Path = ("metadata", "annotations", api.ELASTIC_JOB_ANNOTATION)
GATED_BY_PATH: Path = ("metadata", "annotations", api.ADMISSION_GATED_BY_ANNOTATION)
JOB_SYNC_COMPLETION_ANNOTATION = "kueue.x-k8s.io/job-completions-equal-parallelism"
#: ``MaxGateNameLengthForAdmissionGatedBy`` (pkg/util/webhook): a gate name's limit, reported with field.TooLong.
MAX_GATE_NAME_LENGTH = 63
#: Kinds whose GVK ``supportedElasticJobGVKs`` lists (of those jobsetctl models).
ELASTIC_KINDS = frozenset({("batch", "Job")})
GVK_TEXT = {
    ("batch", "Job"): "batch/v1, Kind=Job",
    ("jobset.x-k8s.io", "JobSet"): "jobset.x-k8s.io/v1alpha2, Kind=JobSet",
    ("trainer.kubeflow.org", "TrainJob"): "trainer.kubeflow.org/v1alpha1, Kind=TrainJob",
}
TRAINJOB_TAS_ADVICE = ('. Adjust either the "TrainJob.spec.runtimePatches" or the "TrainingRuntime.Template" '
                       "annotations for the corresponding Job")


def _m(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _labels(obj: Object) -> dict[str, Any]:
    return _m(_m(obj.get("metadata")).get("labels"))


def _annotations(obj: Object) -> dict[str, Any]:
    return _m(_m(obj.get("metadata")).get("annotations"))


def _finding(rule: Rule, at: Path, message: str) -> Finding:
    return rule.finding(message, path=path_string(at), at=at)


def _suspended(obj: Object) -> bool:
    return _m(obj.get("spec")).get("suspend") is True


def elastic(obj: Object, ctx: AdmissionContext) -> bool:
    """``workloadslicing.Enabled``: the elastic-job annotation is "true" and the gate is on."""
    return elastic_enabled(obj, ctx.kueue or SHIPPED)


def elastic_enabled(obj: Object, config: KueueConfiguration) -> bool:
    return config.gate("ElasticJobsViaWorkloadSlices") and _annotations(obj).get(api.ELASTIC_JOB_ANNOTATION) == "true"


def prebuilt_path(obj: Object, ctx: AdmissionContext) -> Path:
    """``GetPrebuiltWorkloadPath``."""
    config = ctx.kueue or SHIPPED
    annotation = _annotations(obj).get(api.PREBUILT_WORKLOAD)
    if annotation and (config.gate("WorkloadIdentifierAnnotations") or len(str(annotation)) > 63):
        return ("metadata", "annotations", api.PREBUILT_WORKLOAD)
    return ("metadata", "labels", api.PREBUILT_WORKLOAD)


def prebuilt_name(obj: Object, ctx: AdmissionContext) -> str:
    """``PrebuiltWorkloadNameFor``."""
    config = ctx.kueue or SHIPPED
    annotation = str(_annotations(obj).get(api.PREBUILT_WORKLOAD) or "")
    label = str(_labels(obj).get(api.PREBUILT_WORKLOAD) or "")
    if config.gate("WorkloadIdentifierAnnotations"):
        return annotation or label
    return label or (annotation if len(annotation) > 63 else "")


def validate_job_create(obj: Object, ctx: AdmissionContext, old: Object | None = None) -> list[Finding]:
    """The create checks; with ``old``, as the Job webhook's ``validateUpdate`` runs them again (the
    min-parallelism annotation is checked only when it changed, then ``validatePartialAdmissionUpdate``)."""
    findings = _job_on_create(obj, ctx)
    group, kind = group_kind(obj)
    if (group, kind) == ("batch", "Job"):
        min_changed = old is None or (_annotations(old).get(JOB_MIN_PARALLELISM_ANNOTATION)
                                      != _annotations(obj).get(JOB_MIN_PARALLELISM_ANNOTATION))
        findings.extend(_partial_admission(obj, ctx, min_parallelism=min_changed))
        if old is not None:
            findings.extend(_partial_admission_update(old, obj))
    if (ctx.kueue or SHIPPED).gate("TopologyAwareScheduling"):
        findings.extend(_tas(obj, ctx))
    return findings


def _job_on_create(obj: Object, ctx: AdmissionContext) -> list[Finding]:
    """``ValidateJobOnCreate``."""
    config = ctx.kueue or SHIPPED
    findings: list[Finding] = []
    queue = _labels(obj).get(api.QUEUE_LABEL)
    if queue is not None:
        problems = is_dns1123_subdomain(str(queue))
        if problems:
            findings.append(_finding(QUEUE_NAME, QUEUE_NAME_PATH, invalid(QUEUE_NAME_PATH, queue, ",".join(problems))))
    # validateCreateForPrebuiltWorkload (JobSet, TrainJob and Job all support prebuilt workloads)
    where = prebuilt_path(obj, ctx)
    source = _annotations(obj) if where[1] == "annotations" else _labels(obj)
    if api.PREBUILT_WORKLOAD in source:
        problems = is_dns1123_subdomain(str(source[api.PREBUILT_WORKLOAD]))
        if problems:
            findings.append(_finding(METADATA, where, invalid(where, source[api.PREBUILT_WORKLOAD], ",".join(problems))))
    # validateCreateForMaxExecTime
    text = _labels(obj).get(api.MAX_EXEC_TIME_LABEL)
    if text is not None:
        value = _atoi(str(text))
        if value is None:
            findings.append(_finding(METADATA, MAX_EXEC_PATH, invalid(
                MAX_EXEC_PATH, text, f'strconv.Atoi: parsing "{text}": invalid syntax')))
        elif value <= 0:
            findings.append(_finding(METADATA, MAX_EXEC_PATH, invalid(MAX_EXEC_PATH, value, "should be greater than 0")))
    # ValidateElasticJobAnnotation
    if elastic(obj, ctx) and group_kind(obj) not in ELASTIC_KINDS:
        gvk = GVK_TEXT.get(group_kind(obj), "/".join(group_kind(obj)))
        findings.append(_finding(METADATA, ELASTIC_PATH, forbidden(ELASTIC_PATH, f'elastic job is not supported for "{gvk}"')))
    if config.gate("AdmissionGatedBy"):
        findings.extend(admission_gated_by_problems(str(_annotations(obj).get(api.ADMISSION_GATED_BY_ANNOTATION) or ""),
                                                    METADATA))
    return findings


def _atoi(text: str) -> int | None:
    body = text[1:] if text[:1] in "+-" else text
    return int(text) if body.isascii() and body.isdigit() else None


def admission_gated_by_problems(value: str, rule: Rule) -> list[Finding]:
    """``validateAdmissionGatedByAnnotationFormat`` (pkg/util/webhook), on jobs and Workloads."""
    if not value:
        return []
    findings: list[Finding] = []
    seen: set[str] = set()
    for gate in [part.strip() for part in value.split(",")]:
        if not gate:
            findings.append(_finding(rule, GATED_BY_PATH, invalid(GATED_BY_PATH, value, "cannot contain empty gate names")))
            continue
        if gate in seen:
            findings.append(_finding(rule, GATED_BY_PATH, invalid(GATED_BY_PATH, value, f"duplicate gate name: {gate}")))
            continue
        seen.add(gate)
        # validation.IsDomainPrefixedPath: the host or the path part is the bad value, as apimachinery reports it.
        for message in domain_prefixed_path_errors(path_string(GATED_BY_PATH), gate):
            findings.append(_finding(rule, GATED_BY_PATH, message))
        if len(gate) > MAX_GATE_NAME_LENGTH:
            findings.append(_finding(rule, GATED_BY_PATH, too_long(GATED_BY_PATH, MAX_GATE_NAME_LENGTH)))
    return findings


def admission_gated_by_update_problems(old_value: str, new_value: str, rule: Rule) -> list[Finding]:
    """``ValidateAdmissionGatedByAnnotationOnUpdate``: no gate added after creation, gates only removed."""
    findings: list[Finding] = []
    if not old_value and new_value:
        findings.append(_finding(rule, GATED_BY_PATH, forbidden(GATED_BY_PATH, "cannot add admission gate after creation")))
    if old_value and new_value:
        old_gates = [g.strip() for g in old_value.split(",")]
        if any(gate.strip() not in old_gates for gate in new_value.split(",")):
            findings.append(_finding(rule, GATED_BY_PATH, forbidden(GATED_BY_PATH, "can only remove gates, not add new ones")))
    return findings + admission_gated_by_problems(new_value, rule)


def _partial_admission(job: Object, ctx: AdmissionContext, *, min_parallelism: bool = True) -> list[Finding]:
    """job_webhook.go ``validatePartialAdmissionCreate`` (when ``min_parallelism``) and
    ``validateSyncCompletionCreate``."""
    findings: list[Finding] = []
    annotations = _annotations(job)
    spec = _m(job.get("spec"))
    count = pods_per_replica(spec)
    min_path: Path = ("metadata", "annotations", JOB_MIN_PARALLELISM_ANNOTATION)
    if min_parallelism and JOB_MIN_PARALLELISM_ANNOTATION in annotations:
        text = str(annotations[JOB_MIN_PARALLELISM_ANNOTATION])
        value = _atoi(text)
        if value is None:
            findings.append(_finding(PARTIAL_ADMISSION, min_path, invalid(
                min_path, text, f'strconv.Atoi: parsing "{text}": invalid syntax')))
        elif value >= count or value <= 0:
            findings.append(_finding(PARTIAL_ADMISSION, min_path, invalid(min_path, value, f"should be between 0 and {count - 1}")))
        if elastic(job, ctx):
            findings.append(_finding(PARTIAL_ADMISSION, min_path, invalid(
                min_path, text, "partial admission and elastic job cannot be used together")))
    sync_path: Path = ("metadata", "annotations", JOB_SYNC_COMPLETION_ANNOTATION)
    if JOB_SYNC_COMPLETION_ANNOTATION in annotations:
        text = str(annotations[JOB_SYNC_COMPLETION_ANNOTATION])
        enabled = tas.parse_go_bool(text)
        if enabled is None:
            findings.append(_finding(PARTIAL_ADMISSION, sync_path, invalid(
                sync_path, text, f'strconv.ParseBool: parsing "{text}": invalid syntax')))
        if enabled:
            if spec.get("completionMode", "NonIndexed") == "NonIndexed":
                findings.append(_finding(PARTIAL_ADMISSION, sync_path, invalid(
                    sync_path, text, "should not be enabled for NonIndexed jobs")))
            parallelism = spec.get("parallelism", 1)
            if parallelism != spec.get("completions", 1):
                at: Path = ("spec", "completions")
                findings.append(_finding(PARTIAL_ADMISSION, at, invalid(
                    at, spec.get("completions"),
                    f"should be equal to parallelism when {JOB_SYNC_COMPLETION_ANNOTATION} annotation is true")))
    return findings


def _sync_completion(job: Object) -> bool:
    """``syncCompletionWithParallelism``: the annotation parses as true."""
    return tas.parse_go_bool(str(_annotations(job).get(JOB_SYNC_COMPLETION_ANNOTATION, ""))) is True


def _partial_admission_update(old: Object, new: Object) -> list[Finding]:
    """job_webhook.go ``validatePartialAdmissionUpdate``."""
    findings: list[Finding] = []
    old_spec, new_spec = _m(old.get("spec")), _m(new.get("spec"))
    if (JOB_MIN_PARALLELISM_ANNOTATION in _annotations(old) and not _suspended(old)
            and old_spec.get("parallelism", 1) != new_spec.get("parallelism", 1)):
        at: Path = ("spec", "parallelism")
        findings.append(_finding(PARTIAL_ADMISSION, at, forbidden(
            at, "cannot change when partial admission is enabled and the job is not suspended")))
    if _suspended(old) == _suspended(new) and not _suspended(new) and _sync_completion(old) != _sync_completion(new):
        sync_path: Path = ("metadata", "annotations", JOB_SYNC_COMPLETION_ANNOTATION)
        findings.append(_finding(PARTIAL_ADMISSION, sync_path, forbidden(
            sync_path, "field is immutable while the job is not suspended")))
    return findings


def _elastic_topology(obj: Object, ctx: AdmissionContext) -> list[Finding]:
    """job_webhook.go ``validateTopologyRequest``: an elastic Job supports the unconstrained topology only.
    Quirk: the path is ``replicaMetaPath.Child("annotations", key)``, dotted, not the ``[key]`` of the other
    TAS errors."""
    if not elastic(obj, ctx):
        return []
    annotations = _annotations(_m(_m(obj.get("spec")).get("template")))
    for key, mode in ((api.PODSET_REQUIRED_TOPOLOGY, "required"), (api.PODSET_PREFERRED_TOPOLOGY, "preferred")):
        if key in annotations:
            at: Path = ("spec", "template", "metadata", "annotations", key)
            dotted = f"spec.template.metadata.annotations.{key}"
            message = forbidden(dotted, f"{mode} topology is not supported with elastic jobs")
            return [TAS_ANNOTATIONS.finding(message, path=dotted, at=at)]
    return []


def _tas(obj: Object, ctx: AdmissionContext) -> list[Finding]:
    """The integrations' ``validateTopologyRequest``."""
    config = ctx.kueue or SHIPPED
    multi = config.gate("TASMultiLayerTopology")
    group, kind = group_kind(obj)
    problems: list[tas.Problem] = []
    if (group, kind) == ("batch", "Job"):
        meta_path: Path = ("spec", "template", "metadata")
        problems = tas.validate_podset_annotations(meta_path, _m(_m(obj.get("spec")).get("template")).get("metadata"), multi)
        if not problems:
            refused = _elastic_topology(obj, ctx)
            if refused:
                return refused
            problems = tas.validate_slice_size_upper_bound(
                meta_path, _m(_m(obj.get("spec")).get("template")).get("metadata"), pods_per_replica(obj.get("spec")))
    elif (group, kind) == ("jobset.x-k8s.io", "JobSet"):
        problems = _jobset_tas(obj, config)
    elif (group, kind) == ("trainer.kubeflow.org", "TrainJob"):
        return _trainjob_tas(obj, ctx)
    return [_finding(TAS_ANNOTATIONS, at, message) for at, message in problems]


def _jobset_tas(jobset: Object, config: Any) -> list[tas.Problem]:
    from jobsetctl.kueue.workload import jobset_pod_sets

    multi = config.gate("TASMultiLayerTopology")
    problems: list[tas.Problem] = []
    grouped: list[tas.GroupedPodSet] = []
    replicated = _m(jobset.get("spec")).get("replicatedJobs")
    for index, raw in enumerate(replicated if isinstance(replicated, list) else []):
        meta_path: Path = ("spec", "replicatedJobs", index, "template", "spec", "template", "metadata")
        job_spec = _m(_m(_m(raw).get("template")).get("spec"))
        meta = _m(job_spec.get("template")).get("metadata")
        problems.extend(tas.validate_podset_annotations(meta_path, meta, multi))
        count = _m(raw).get("replicas", 1) * pods_per_replica(job_spec) if isinstance(_m(raw).get("replicas", 1), int) else 0
        problems.extend(tas.validate_slice_size_upper_bound(meta_path, meta, count))
    try:
        pod_sets = jobset_pod_sets(jobset, config)
    except tas.TopologyRequestError:
        return problems
    for index, pod_set in enumerate(pod_sets):
        grouped.append(tas.GroupedPodSet(str(pod_set["name"]), int(pod_set["count"]), pod_set.get("topologyRequest"),
                                         ("spec", "replicatedJobs", index, "template", "spec", "template", "metadata",
                                          "annotations")))
    problems.extend(tas.validate_podset_grouping(grouped))
    return problems


def _trainjob_tas(trainjob: Object, ctx: AdmissionContext) -> list[Finding]:
    """vtrainjob: the JobSet's pod templates, under ``job[<name>]``, with upstream's advice appended.
    Without a view of the runtime (validate's per-file phase) there are no podSets to check yet."""
    from jobsetctl.kueue.workload import jobset_pod_sets, trainjob_jobset

    if ctx.cluster is None:
        return []
    jobset, _ = trainjob_jobset(trainjob, ctx)
    if jobset is None:
        return []
    config = ctx.kueue or SHIPPED
    multi = config.gate("TASMultiLayerTopology")
    try:
        pod_sets = jobset_pod_sets(jobset, config)
    except tas.TopologyRequestError:
        return []
    problems: list[tas.Problem] = []
    for pod_set in pod_sets:
        job_path: Path = ("job", str(pod_set["name"]))
        meta = _m(pod_set.get("template")).get("metadata")
        problems.extend(tas.validate_podset_annotations(job_path, meta, multi))
        problems.extend(tas.validate_slice_size_upper_bound(job_path, meta, int(pod_set["count"])))
    # The paths name the JobSet's replicated jobs, not fields of the TrainJob: point at runtimeRef. Upstream's
    # field.NewPath("job").Key(name) renders job[node] even for a name path_string would dot.
    findings = []
    for at, message in problems:
        path = path_string(at)
        dotted = f"job.{at[1]}" if len(at) > 1 else ""
        if dotted and path.startswith(dotted):
            keyed = f"job[{at[1]}]"
            path = keyed + path[len(dotted):]
            message = keyed + message[len(dotted):] if message.startswith(dotted) else message
        findings.append(TAS_ANNOTATIONS.finding(message + TRAINJOB_TAS_ADVICE, path=path, at=("spec", "runtimeRef")))
    return findings


def validate_job_update(old: Object, new: Object, ctx: AdmissionContext) -> list[Finding]:
    """``ValidateJobOnUpdate`` plus the create checks (as the integrations' ``validateUpdate``)."""
    findings: list[Finding] = []
    suspended = _suspended(new)
    if not suspended and queue_name(new) != queue_name(old):
        findings.append(_finding(UPDATE, QUEUE_NAME_PATH, invalid(QUEUE_NAME_PATH, queue_name(new), "field is immutable")))
    namespace = str(_m(old.get("metadata")).get("namespace") or ctx.default_namespace)
    if (not queue_name(new) and queue_name(old) and ctx.cluster is not None
            and ctx.cluster.get(api.GROUP, api.LOCAL_QUEUE, namespace, api.DEFAULT_LOCAL_QUEUE) is not None):
        findings.append(_finding(UPDATE, QUEUE_NAME_PATH, invalid(
            QUEUE_NAME_PATH, "", "queue-name must not be empty in namespace with default queue")))
    # validateUpdateForPrebuiltWorkload: a suspended (or elastic) job gets the create check, which runs below.
    if not suspended and not elastic(old, ctx) and prebuilt_name(new, ctx) != prebuilt_name(old, ctx):
        where = prebuilt_path(new, ctx)
        findings.append(_finding(UPDATE, where, invalid(where, prebuilt_name(new, ctx), "field is immutable")))
    old_class = str(_labels(old).get(api.PRIORITY_CLASS_LABEL) or "")
    new_class = str(_labels(new).get(api.PRIORITY_CLASS_LABEL) or "")
    if not suspended and not old_class and new_class:
        findings.append(_finding(UPDATE, PRIORITY_CLASS_PATH, invalid(
            PRIORITY_CLASS_PATH, new_class, "WorkloadPriorityClass cannot be added to a non-suspended workload")))
    elif old_class and not new_class:
        findings.append(_finding(UPDATE, PRIORITY_CLASS_PATH, invalid(
            PRIORITY_CLASS_PATH, new_class, "WorkloadPriorityClass cannot be removed from a workload")))
    if not suspended or not _suspended(old):
        before, after = _labels(old).get(api.MAX_EXEC_TIME_LABEL, ""), _labels(new).get(api.MAX_EXEC_TIME_LABEL, "")
        if before != after:
            findings.append(_finding(UPDATE, MAX_EXEC_PATH, invalid(MAX_EXEC_PATH, after, "field is immutable")))
    if elastic(old, ctx) != elastic(new, ctx):
        findings.append(_finding(UPDATE, ELASTIC_PATH, invalid(ELASTIC_PATH, elastic(new, ctx), "field is immutable")))
    if (ctx.kueue or SHIPPED).gate("AdmissionGatedBy"):
        before = str(_annotations(old).get(api.ADMISSION_GATED_BY_ANNOTATION) or "")
        after = str(_annotations(new).get(api.ADMISSION_GATED_BY_ANNOTATION) or "")
        findings.extend(f for f in admission_gated_by_update_problems(before, after, UPDATE) if "Forbidden" in f.message)
    findings.extend(validate_job_create(new, ctx, old))
    return findings

