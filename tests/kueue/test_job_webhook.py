"""Kueue's webhook on batch Jobs (``mjob``/``vjob``; jobsetctl/kueue/jobs.py, job_rules.py), translated from
kubernetes-sigs/kueue @ ff69552e ``pkg/controller/jobs/job/job_webhook_test.go``: ``TestValidateCreate`` (every
entry), ``TestValidateUpdate`` (every entry), ``TestDefault`` (every entry) and
``Test_applyWorkloadSliceSchedulingGate`` (every entry), each through jobsetctl's admission chain.

Upstream compares the whole field errors (``TestValidateCreate``) or their type and field
(``TestValidateUpdate``); here each finding's path and full message (field.Error's text) are compared, as a
set: jobsetctl's reporters order findings by position, not by the order the webhook appends them.
``testingutil.MakeJob`` gives a Job with parallelism 1, ``suspend: true`` and one container: so do these.
"""

from __future__ import annotations

from typing import Any

import pytest

from jobsetctl.admission.chain import admit
from jobsetctl.kinds.index import ObjectIndex
from jobsetctl.kinds.interface import AdmissionContext
from jobsetctl.kube.featuregates import parse_feature_gates
from tests.kueue.harness import V137, kueue_config

G = "kueue.x-k8s.io/v1beta2"
QUEUE = "kueue.x-k8s.io/queue-name"
WPC = "kueue.x-k8s.io/priority-class"
PREBUILT = "kueue.x-k8s.io/prebuilt-workload-name"
MAX_EXEC = "kueue.x-k8s.io/max-exec-time-seconds"
MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"
SYNC = "kueue.x-k8s.io/job-completions-equal-parallelism"
ELASTIC = "kueue.x-k8s.io/elastic-job"
GATED_BY = "kueue.x-k8s.io/admission-gated-by"
STOPPING = "kueue.x-k8s.io/stopping"
REQUIRED, PREFERRED = "kueue.x-k8s.io/podset-required-topology", "kueue.x-k8s.io/podset-preferred-topology"
UNCONSTRAINED = "kueue.x-k8s.io/podset-unconstrained-topology"
SLICE, SLICE_SIZE = "kueue.x-k8s.io/podset-slice-required-topology", "kueue.x-k8s.io/podset-slice-size"
BLOCK = "cloud.com/block"
MULTIKUEUE = "kueue.x-k8s.io/multikueue"

# test/util/constants.go
RFC1123 = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
           "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
           r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_KEY = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
             "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
             "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
INVALID_PATH = r"Invalid path (regex used for validation is '[A-Za-z0-9/\-._~%!$&'()*+,;=:]+')"
MORE_THAN_ONE = ('must not contain more than one topology annotation: ["kueue.x-k8s.io/podset-required-topology", '
                 '"kueue.x-k8s.io/podset-preferred-topology", "kueue.x-k8s.io/podset-unconstrained-topology"]')

# job_webhook_test.go's paths
QUEUE_PATH = f"metadata.labels[{QUEUE}]"
WPC_PATH = f"metadata.labels[{WPC}]"
MAX_EXEC_PATH = f"metadata.labels[{MAX_EXEC}]"
PREBUILT_LABEL_PATH = f"metadata.labels[{PREBUILT}]"
PREBUILT_ANNOTATION_PATH = f"metadata.annotations[{PREBUILT}]"
MIN_PATH = f"metadata.annotations[{MIN_PARALLELISM}]"
SYNC_PATH = f"metadata.annotations[{SYNC}]"
GATED_PATH = f"metadata.annotations[{GATED_BY}]"
REPLICA_ANNOTATIONS = "spec.template.metadata.annotations"


def mj(name: str = "job", *, queue: str | None = None, suspend: bool | None = True, parallelism: int = 1,
       completions: int | None = None, indexed: bool | None = None, labels: dict[str, str] | None = None,
       annotations: dict[str, str] | None = None, pod_annotations: dict[str, str] | None = None,
       managed_by: str | None = None, owner: tuple[str, str] | None = None,
       scheduling_gates: list[str] | None = None) -> dict[str, Any]:
    """testingutil.MakeJob(name, "default") and its wrapper calls."""
    meta: dict[str, Any] = {"name": name, "namespace": "default", "annotations": dict(annotations or {})}
    all_labels = {**(labels or {}), **({QUEUE: queue} if queue is not None else {})}
    if all_labels:
        meta["labels"] = all_labels
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": owner[0], "kind": owner[1], "name": "owner", "uid": "owner",
                                    "controller": True}]
    pod: dict[str, Any] = {"restartPolicy": "Never", "containers": [{"name": "c", "image": "pause"}]}
    if scheduling_gates:
        pod["schedulingGates"] = [{"name": gate} for gate in scheduling_gates]
    template: dict[str, Any] = {"spec": pod}
    if pod_annotations:
        template["metadata"] = {"annotations": dict(pod_annotations)}
    spec: dict[str, Any] = {"parallelism": parallelism, "template": template}
    if suspend is not None:
        spec["suspend"] = suspend
    if completions is not None:
        spec["completions"] = completions
    if indexed is not None:
        spec["completionMode"] = "Indexed" if indexed else "NonIndexed"
    if managed_by is not None:
        spec["managedBy"] = managed_by
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": spec}


def context(gates: dict[str, bool] | None = None, cluster: list[dict[str, Any]] | None = None,
            **config: Any) -> AdmissionContext:
    return AdmissionContext(V137, parse_feature_gates(None, V137), kueue=kueue_config(featureGates=gates or {}, **config),
                            cluster=ObjectIndex(cluster) if cluster is not None else None)


def kueue_findings(obj: dict[str, Any], ctx: AdmissionContext, old: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    result = admit(obj, ctx.for_update() if old is not None else ctx, old=old)
    return sorted((f.path, f.message) for f in result.findings if f.rule.id.startswith("kueue-"))


def invalid(path: str, value: str, detail: str) -> tuple[str, str]:
    """field.Invalid; ``value`` already as field.Error prints it (strings quoted, numbers bare)."""
    return path, f"{path}: Invalid value: {value}: {detail}"


def forbidden(path: str, detail: str) -> tuple[str, str]:
    return path, f"{path}: Forbidden: {detail}"


def required(path: str, detail: str) -> tuple[str, str]:
    return path, f"{path}: Required value: {detail}"


TAS = {"TopologyAwareScheduling": True}
ELASTIC_TAS = {"TopologyAwareScheduling": True, "ElasticJobsViaWorkloadSlices": True}
GATED = {"AdmissionGatedBy": True}
IDS = {"WorkloadIdentifierAnnotations": True}
SIZE_PATH = f"{REPLICA_ANNOTATIONS}[{SLICE_SIZE}]"
TOO_LONG_GATE = "cannot.be.too.long/" + "but-this-is-too-long" * 20

# ---- TestValidateCreate -------------------------------------------------------------------------------------------
VALIDATE_CREATE: list[tuple[str, dict[str, Any], dict[str, bool], list[tuple[str, str]]]] = [
    ("simple", mj(queue="queue"), {}, []),
    ("invalid queue-name label", mj(queue="queue name"), {}, [invalid(QUEUE_PATH, '"queue name"', RFC1123)]),
    ("invalid partial admission annotation (format)",
     mj(parallelism=4, completions=6, annotations={MIN_PARALLELISM: "NaN"}), {},
     [invalid(MIN_PATH, '"NaN"', 'strconv.Atoi: parsing "NaN": invalid syntax')]),
    ("invalid partial admission annotation (badValue)",
     mj(parallelism=4, completions=6, annotations={MIN_PARALLELISM: "5"}), {},
     [invalid(MIN_PATH, "5", "should be between 0 and 3")]),
    ("valid partial admission annotation", mj(parallelism=4, completions=6, annotations={MIN_PARALLELISM: "3"}), {}, []),
    ("invalid sync completions annotation (format)",
     mj(parallelism=4, completions=6, annotations={SYNC: "-"}, indexed=True), {},
     [invalid(SYNC_PATH, '"-"', 'strconv.ParseBool: parsing "-": invalid syntax')]),
    ("valid sync completions annotation, wrong completions count",
     mj(parallelism=4, completions=6, annotations={SYNC: "true"}, indexed=True), {},
     [invalid("spec.completions", "6", f"should be equal to parallelism when {SYNC} annotation is true")]),
    ("valid sync completions annotation, wrong job completions type (default)",
     mj(parallelism=4, completions=4, annotations={SYNC: "true"}), {},
     [invalid(SYNC_PATH, '"true"', "should not be enabled for NonIndexed jobs")]),
    ("valid sync completions annotation, wrong job completions type",
     mj(parallelism=4, completions=4, annotations={SYNC: "true"}, indexed=False), {},
     [invalid(SYNC_PATH, '"true"', "should not be enabled for NonIndexed jobs")]),
    ("valid sync completions annotation", mj(parallelism=4, completions=4, annotations={SYNC: "true"}, indexed=True),
     {}, []),
    ("invalid prebuilt workload", mj(parallelism=4, completions=4, labels={PREBUILT: "workload name"}, indexed=True), {},
     [invalid(PREBUILT_LABEL_PATH, '"workload name"', RFC1123)]),
    ("valid prebuilt workload", mj(parallelism=4, completions=4, labels={PREBUILT: "workload-name"}, indexed=True), {},
     []),
    ("invalid prebuilt workload annotation, WorkloadIdentifierAnnotations enabled",
     mj(parallelism=4, completions=4, annotations={PREBUILT: "workload name"}, indexed=True), IDS,
     [invalid(PREBUILT_ANNOTATION_PATH, '"workload name"', RFC1123)]),
    ("valid prebuilt workload annotation, WorkloadIdentifierAnnotations enabled",
     mj(parallelism=4, completions=4, annotations={PREBUILT: "workload-name"}, indexed=True), IDS, []),
    ("different prebuilt workload label and annotation, label ignored, WorkloadIdentifierAnnotations enabled",
     mj(labels={PREBUILT: "workload-label"}, annotations={PREBUILT: "workload-annotation"}), IDS, []),
    ("invalid maximum execution time", mj(parallelism=4, completions=4, labels={MAX_EXEC: "NaN"}, indexed=True), {},
     [invalid(MAX_EXEC_PATH, '"NaN"', 'strconv.Atoi: parsing "NaN": invalid syntax')]),
    ("zero maximum execution time", mj(parallelism=4, completions=4, labels={MAX_EXEC: "0"}, indexed=True), {},
     [invalid(MAX_EXEC_PATH, "0", "should be greater than 0")]),
    ("negative maximum execution time", mj(parallelism=4, completions=4, labels={MAX_EXEC: "-10"}, indexed=True), {},
     [invalid(MAX_EXEC_PATH, "-10", "should be greater than 0")]),
    ("valid maximum execution time", mj(parallelism=4, completions=4, labels={MAX_EXEC: "10"}, indexed=True), {}, []),
    ("valid topology request", mj(pod_annotations={REQUIRED: BLOCK}), TAS, []),
    ("invalid topology request - both annotations", mj(pod_annotations={REQUIRED: BLOCK, PREFERRED: BLOCK}), TAS,
     [(REPLICA_ANNOTATIONS, f"{REPLICA_ANNOTATIONS}: Invalid value: {MORE_THAN_ONE}")]),
    ("invalid topology request - invalid required", mj(pod_annotations={REQUIRED: "some required value"}), TAS,
     [invalid(f"{REPLICA_ANNOTATIONS}[{REQUIRED}]", '"some required value"', LABEL_KEY)]),
    ("invalid topology request - invalid preferred", mj(pod_annotations={PREFERRED: "some preferred value"}), TAS,
     [invalid(f"{REPLICA_ANNOTATIONS}[{PREFERRED}]", '"some preferred value"', LABEL_KEY)]),
    ("valid slice topology request", mj(pod_annotations={REQUIRED: BLOCK, SLICE: BLOCK, SLICE_SIZE: "1"}), TAS, []),
    ("valid topology request - slice-only topology - unconstrained with slices defined",
     mj(pod_annotations={UNCONSTRAINED: "true", SLICE: BLOCK, SLICE_SIZE: "1"}), TAS, []),
    ("invalid topology request - slice requested without slice size", mj(pod_annotations={REQUIRED: BLOCK, SLICE: BLOCK}),
     TAS, [required(SIZE_PATH, f"must be set when '{SLICE}' is specified")]),
    ("invalid topology request - slice size is not a number",
     mj(pod_annotations={REQUIRED: BLOCK, SLICE: BLOCK, SLICE_SIZE: "not a number"}), TAS,
     [invalid(SIZE_PATH, '"not a number"', "must be a numeric value")]),
    ("invalid topology request - slice size is negative",
     mj(pod_annotations={REQUIRED: BLOCK, SLICE: BLOCK, SLICE_SIZE: "-1"}), TAS,
     [invalid(SIZE_PATH, '"-1"', "must be greater than or equal to 1")]),
    ("invalid topology request - slice size is zero", mj(pod_annotations={REQUIRED: BLOCK, SLICE: BLOCK, SLICE_SIZE: "0"}),
     TAS, [invalid(SIZE_PATH, '"0"', "must be greater than or equal to 1")]),
    ("invalid topology request - slice size provided without slice topology",
     mj(pod_annotations={REQUIRED: BLOCK, SLICE_SIZE: "1"}), TAS,
     [forbidden(SIZE_PATH, f"may not be set when '{SLICE}' is not specified")]),
    ("valid topology request - slice-only topology", mj(pod_annotations={SLICE: BLOCK, SLICE_SIZE: "1"}), TAS, []),
    ("invalid slice topology request - slice size larger than number of podsets",
     mj(parallelism=4, pod_annotations={REQUIRED: BLOCK, SLICE: BLOCK, SLICE_SIZE: "20"}), TAS,
     [invalid(SIZE_PATH, '"20"', "must not be greater than pod set count 4")]),
    # Quirk: replicaMetaPath.Child("annotations", key) gives a dotted path, not the [key] of the other TAS errors.
    ("elastic job with required topology is rejected",
     mj(annotations={ELASTIC: "true"}, pod_annotations={REQUIRED: BLOCK}), ELASTIC_TAS,
     [forbidden(f"{REPLICA_ANNOTATIONS}.{REQUIRED}", "required topology is not supported with elastic jobs")]),
    ("elastic job with preferred topology is rejected",
     mj(annotations={ELASTIC: "true"}, pod_annotations={PREFERRED: BLOCK}), ELASTIC_TAS,
     [forbidden(f"{REPLICA_ANNOTATIONS}.{PREFERRED}", "preferred topology is not supported with elastic jobs")]),
    ("elastic job with unconstrained topology is accepted",
     mj(annotations={ELASTIC: "true"}, pod_annotations={UNCONSTRAINED: "true"}), ELASTIC_TAS, []),
    ("valid AdmissionGatedBy annotation with single gate", mj(queue="queue", annotations={GATED_BY: "example.com/controller"}),
     GATED, []),
    ("AdmissionGatedBy annotation - trailing space", mj(queue="queue", annotations={GATED_BY: "example.com/gate "}),
     GATED, []),
    ("AdmissionGatedBy annotation - space before comma",
     mj(queue="queue", annotations={GATED_BY: "example.com/gate ,example.com/gate2"}), GATED, []),
    ("AdmissionGatedBy annotation - space after comma",
     mj(queue="queue", annotations={GATED_BY: "example.com/gate, example.com/gate2"}), GATED, []),
    ("AdmissionGatedBy annotation - leading space", mj(queue="queue", annotations={GATED_BY: " example.com/gate"}),
     GATED, []),
    ("valid AdmissionGatedBy annotation with multiple gates",
     mj(queue="queue", annotations={GATED_BY: "example.com/a,not.example.com/b"}), GATED, []),
    ("invalid AdmissionGatedBy annotation - not in subdomain/path format",
     mj(queue="queue", annotations={GATED_BY: "this is an invalid value"}), GATED,
     [invalid(GATED_PATH, '"this is an invalid value"', 'must be a domain-prefixed path (such as "acme.io/foo")')]),
    ("invalid AdmissionGatedBy annotation - duplicate gates",
     mj(queue="queue", annotations={GATED_BY: "duplicates.are/invalid,duplicates.are/invalid"}), GATED,
     [invalid(GATED_PATH, '"duplicates.are/invalid,duplicates.are/invalid"', "duplicate gate name: duplicates.are/invalid")]),
    ("invalid AdmissionGatedBy annotation - gate name too long", mj(queue="queue", annotations={GATED_BY: TOO_LONG_GATE}),
     GATED, [(GATED_PATH, f"{GATED_PATH}: Too long: may not be more than 63 bytes")]),
    ("invalid AdmissionGatedBy annotation - space in path component",
     mj(queue="queue", annotations={GATED_BY: "example.com/gate name"}), GATED,
     [invalid(GATED_PATH, '"gate name"', INVALID_PATH)]),
    ("invalid AdmissionGatedBy annotation - space in domain component",
     mj(queue="queue", annotations={GATED_BY: "example .com/gate"}), GATED,
     [invalid(GATED_PATH, '"example .com"', RFC1123)]),
    ("invalid AdmissionGatedBy annotation - multiple gates with one containing space",
     mj(queue="queue", annotations={GATED_BY: "valid.com/gate,invalid gate.com/controller"}), GATED,
     [invalid(GATED_PATH, '"invalid gate.com"', RFC1123)]),
    ("AdmissionGatedBy annotation with feature gate disabled - valid value",
     mj(queue="queue", annotations={GATED_BY: "example.com/gate"}), {"AdmissionGatedBy": False}, []),
    ("AdmissionGatedBy annotation with feature gate disabled - invalid value",
     mj(queue="queue", annotations={GATED_BY: "this is an invalid value"}), {"AdmissionGatedBy": False}, []),
    ("AdmissionGatedBy annotation with feature gate enabled - empty string", mj(queue="queue", annotations={GATED_BY: ""}),
     GATED, []),
    ("partial admission and elastic job cannot be used together",
     mj(parallelism=4, completions=6, annotations={MIN_PARALLELISM: "2", ELASTIC: "true"}),
     {"ElasticJobsViaWorkloadSlices": True},
     [invalid(MIN_PATH, '"2"', "partial admission and elastic job cannot be used together")]),
]


@pytest.mark.parametrize(("job", "gates", "want"), [c[1:] for c in VALIDATE_CREATE], ids=[c[0] for c in VALIDATE_CREATE])
def test_validate_create(job: dict[str, Any], gates: dict[str, bool], want: list[tuple[str, str]]) -> None:
    assert kueue_findings(job, context(gates)) == sorted(want)


# ---- TestValidateUpdate (upstream compares error type and field; the details here are field.Error's) -------------
IMMUTABLE = "field is immutable"
VALIDATE_UPDATE: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, bool], list[tuple[str, str]]]] = [
    ("normal update", mj(queue="queue"), mj(queue="queue", suspend=False), {}, []),
    ("add queue name with suspend is false", mj(), mj(queue="queue", suspend=False), {},
     [invalid(QUEUE_PATH, '"queue"', IMMUTABLE)]),
    ("add queue name with suspend is true", mj(), mj(queue="queue", suspend=True), {}, []),
    ("change queue name with suspend is false", mj(queue="queue"), mj(queue="queue2", suspend=False), {},
     [invalid(QUEUE_PATH, '"queue2"', IMMUTABLE)]),
    ("change queue name with suspend is true", mj(), mj(queue="queue", suspend=True), {}, []),
    ("change queue name with suspend is true, but invalid value", mj(), mj(queue="queue name", suspend=True), {},
     [invalid(QUEUE_PATH, '"queue name"', RFC1123)]),
    ("immutable parallelism while unsuspended with partial admission enabled",
     mj(suspend=False, parallelism=4, completions=6, annotations={MIN_PARALLELISM: "3"}),
     mj(suspend=False, parallelism=5, completions=6, annotations={MIN_PARALLELISM: "3"}), {},
     [forbidden("spec.parallelism", "cannot change when partial admission is enabled and the job is not suspended")]),
    ("mutable parallelism while suspended with partial admission enabled",
     mj(parallelism=4, completions=6, annotations={MIN_PARALLELISM: "3", STOPPING: "true"}),
     mj(parallelism=5, completions=6, annotations={MIN_PARALLELISM: "3"}), {}, []),
    ("immutable sync completion annotation while unsuspended",
     mj(suspend=False, parallelism=4, completions=6, annotations={SYNC: "true"}),
     mj(suspend=False, parallelism=5, completions=6, annotations={SYNC: "false"}), {},
     [forbidden(SYNC_PATH, "field is immutable while the job is not suspended")]),
    ("mutable sync completion annotation while suspended",
     mj(suspend=True, parallelism=4, completions=6, annotations={SYNC: "true"}),
     mj(suspend=False, parallelism=5, completions=6, annotations={SYNC: "false"}), {}, []),
    ("set priority-class when job not suspend", mj(suspend=False), mj(suspend=False, labels={WPC: "test"}), {},
     [invalid(WPC_PATH, '"test"', "WorkloadPriorityClass cannot be added to a non-suspended workload")]),
    ("update priority-class when job not suspend", mj(suspend=False, labels={WPC: "test"}),
     mj(suspend=False, labels={WPC: "new-test"}), {}, []),
    ("delete priority-class when job not suspend", mj(suspend=False, labels={WPC: "test"}), mj(suspend=False), {},
     [invalid(WPC_PATH, '""', "WorkloadPriorityClass cannot be removed from a workload")]),
    ("set priority-class when job suspend", mj(suspend=True), mj(suspend=True, labels={WPC: "test"}), {}, []),
    ("update priority-class when job suspend", mj(suspend=True, labels={WPC: "test"}),
     mj(suspend=True, labels={WPC: "new-test"}), {}, []),
    ("delete priority-class when job suspend", mj(suspend=True, labels={WPC: "test"}), mj(suspend=True), {},
     [invalid(WPC_PATH, '""', "WorkloadPriorityClass cannot be removed from a workload")]),
    ("immutable prebuilt workload ", mj(suspend=True, labels={PREBUILT: "old-workload"}),
     mj(suspend=False, labels={PREBUILT: "new-workload"}), {},
     [invalid(PREBUILT_LABEL_PATH, '"new-workload"', IMMUTABLE)]),
    ("immutable prebuilt workload annotation, WorkloadIdentifierAnnotations enabled",
     mj(suspend=True, annotations={PREBUILT: "old-workload"}), mj(suspend=False, annotations={PREBUILT: "new-workload"}),
     IDS, [invalid(PREBUILT_ANNOTATION_PATH, '"new-workload"', IMMUTABLE)]),
    ("migrate from label to annotation, WorkloadIdentifierAnnotations enabled",
     mj(suspend=True, labels={PREBUILT: "workload-name"}), mj(suspend=False, annotations={PREBUILT: "workload-name"}),
     IDS, []),
    ("immutable queue name not suspend", mj(suspend=False, labels={QUEUE: "old-queue"}),
     mj(suspend=False, labels={QUEUE: "new-queue"}), {}, [invalid(QUEUE_PATH, '"new-queue"', IMMUTABLE)]),
    ("queue name can changes when it is  suspend", mj(suspend=True, labels={QUEUE: "old-queue"}),
     mj(suspend=True, labels={QUEUE: "new-queue"}), {}, []),
    ("can update the kueue.x-k8s.io/job-min-parallelism  annotation",
     mj(parallelism=4, completions=6, annotations={MIN_PARALLELISM: "3"}),
     mj(parallelism=4, completions=6, annotations={MIN_PARALLELISM: "2"}), {}, []),
    ("validates kueue.x-k8s.io/job-min-parallelism annotation value (bad format)",
     mj(parallelism=4, completions=6, annotations={MIN_PARALLELISM: "3"}),
     mj(parallelism=4, completions=6, annotations={MIN_PARALLELISM: "NaN"}), {},
     [invalid(MIN_PATH, '"NaN"', 'strconv.Atoi: parsing "NaN": invalid syntax')]),
    ("immutable max exec time while unsuspended", mj(suspend=False, labels={MAX_EXEC: "10"}),
     mj(suspend=False, labels={MAX_EXEC: "20"}), {}, [invalid(MAX_EXEC_PATH, '"20"', IMMUTABLE)]),
    ("immutable max exec time while transitioning to unsuspended", mj(suspend=True, labels={MAX_EXEC: "10"}),
     mj(suspend=False, labels={MAX_EXEC: "20"}), {}, [invalid(MAX_EXEC_PATH, '"20"', IMMUTABLE)]),
    ("mutable max exec time while suspended", mj(suspend=True, labels={MAX_EXEC: "10"}),
     mj(suspend=True, labels={MAX_EXEC: "20"}), {}, []),
    ("set valid TAS request", mj(), mj(pod_annotations={REQUIRED: BLOCK}), TAS, []),
    ("attempt to set invalid TAS request", mj(), mj(pod_annotations={REQUIRED: BLOCK, PREFERRED: BLOCK}), TAS,
     [(REPLICA_ANNOTATIONS, f"{REPLICA_ANNOTATIONS}: Invalid value: {MORE_THAN_ONE}")]),
    ("valid slice topology request", mj(), mj(pod_annotations={REQUIRED: BLOCK, SLICE: BLOCK, SLICE_SIZE: "1"}), TAS, []),
    ("attempt to set invalid slice topology request", mj(), mj(pod_annotations={REQUIRED: BLOCK, SLICE: BLOCK}), TAS,
     [required(SIZE_PATH, f"must be set when '{SLICE}' is specified")]),
    ("reject adding AdmissionGatedBy annotation after Job creation", mj(queue="queue"),
     mj(queue="queue", annotations={GATED_BY: "example.com/controller1"}), GATED,
     [forbidden(GATED_PATH, "cannot add admission gate after creation")]),
    ("allow removing AdmissionGatedBy annotation with single gate",
     mj(queue="queue", annotations={GATED_BY: "example.com/controller1"}), mj(queue="queue"), GATED, []),
    ("allow removing AdmissionGatedBy annotation with multiple gates",
     mj(queue="queue", annotations={GATED_BY: "example.com/controller1,example.com/controller2"}), mj(queue="queue"),
     GATED, []),
    ("allow removing one gate from AdmissionGatedBy annotation",
     mj(queue="queue", annotations={GATED_BY: "example.com/controller1,example.com/controller2"}),
     mj(queue="queue", annotations={GATED_BY: "example.com/controller2"}), GATED, []),
    ("reject injecting new gate in AdmissionGatedBy annotation",
     mj(queue="queue", annotations={GATED_BY: "example.com/controller1,example.com/controller2"}),
     mj(queue="queue", annotations={GATED_BY: "example.com/controller3"}), GATED,
     [forbidden(GATED_PATH, "can only remove gates, not add new ones")]),
    ("allow reordering gates in AdmissionGatedBy annotation",
     mj(queue="queue", annotations={GATED_BY: "example.com/controller1,example.com/controller2"}),
     mj(queue="queue", annotations={GATED_BY: "example.com/controller2,example.com/controller1"}), GATED, []),
]


@pytest.mark.parametrize(("old", "new", "gates", "want"), [c[1:] for c in VALIDATE_UPDATE],
                         ids=[c[0] for c in VALIDATE_UPDATE])
def test_validate_update(old: dict[str, Any], new: dict[str, Any], gates: dict[str, bool],
                         want: list[tuple[str, str]]) -> None:
    assert kueue_findings(new, context(gates), old=old) == sorted(want)


# ---- TestDefault -------------------------------------------------------------------------------------------------
def local_queue(name: str, cluster_queue: str = "cluster-queue") -> dict[str, Any]:
    return {"apiVersion": G, "kind": "LocalQueue", "metadata": {"name": name, "namespace": "default"},
            "spec": {"clusterQueue": cluster_queue}}


MULTIKUEUE_QUEUE = [
    local_queue("local-queue"),
    {"apiVersion": G, "kind": "ClusterQueue", "metadata": {"name": "cluster-queue"},
     "spec": {"namespaceSelector": {}, "admissionChecksStrategy": {"admissionChecks": [{"name": "admission-check"}]}}},
    {"apiVersion": G, "kind": "AdmissionCheck", "metadata": {"name": "admission-check"},
     "spec": {"controllerName": MULTIKUEUE}},
]
MPIJOB = ("kubeflow.org/v2beta1", "MPIJob")
JOBSET = ("jobset.x-k8s.io/v1alpha2", "JobSet")
MPI_OWNER = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
             "metadata": {"name": "owner", "namespace": "default", "uid": "owner"}}
#: newTestIntegrationManager: the Job and MPIJob integrations.
JOB_AND_MPI = {"integrations": {"frameworks": ["batch/job", "kubeflow.org/mpijob"]}}
EVERYTHING = {"managedJobsNamespaceSelector": {}}  # labels.Everything()

# (case, job, objects, default lq, gates, configuration, want)
DEFAULT: list[tuple[str, dict[str, Any], list[dict[str, Any]], bool, dict[str, bool], dict[str, Any], dict[str, Any]]] = [
    ("update the suspend field with 'manageJobsWithoutQueueName=false'", mj("job", queue="queue", suspend=False), [],
     False, {}, {}, mj("job", queue="queue")),
    ("update the suspend field 'manageJobsWithoutQueueName=true'", mj("job", suspend=False), [], False, {},
     {"manageJobsWithoutQueueName": True}, mj("job")),
    ("no change in managed by: features.MultiKueue disabled", mj("job", queue="queue", suspend=False), [], False,
     {"MultiKueue": False}, {}, mj("job", queue="queue")),
    ("managed by is defaulted: queue label was set", mj("job", queue="local-queue", suspend=False), MULTIKUEUE_QUEUE,
     False, {"MultiKueue": True}, {}, mj("job", queue="local-queue", managed_by=MULTIKUEUE)),
    ("no change in managed by: user specified managed by",
     mj("job", queue="local-queue", managed_by="example.com/foo", suspend=False), MULTIKUEUE_QUEUE, False,
     {"MultiKueue": True}, {}, mj("job", queue="local-queue", managed_by="example.com/foo")),
    ("invalid queue name", mj("job", queue="invalid-local-queue", suspend=False), [], False, {"MultiKueue": True}, {},
     mj("job", queue="invalid-local-queue")),
    ("default lq is created, job doesn't have queue label", mj("test-job"), [], True, {}, {},
     mj("test-job", queue="default")),
    ("default lq is created, job has queue label", mj("test-job", queue="test-queue"), [], True, {}, {},
     mj("test-job", queue="test-queue")),
    ("default lq isn't created, job doesn't have queue label", mj("test-job"), [], False, {}, {}, mj("test-job")),
    ("job is managed by Kueue managed owner, job doesn't have queue label", mj("test-job", owner=MPIJOB), [MPI_OWNER],
     True, {}, JOB_AND_MPI, mj("test-job", owner=MPIJOB)),
    ("job is managed by non Kueue managed owner, job has queue label", mj("test-job", owner=JOBSET), [], True, {},
     JOB_AND_MPI, mj("test-job", owner=JOBSET, queue="default")),
]


@pytest.mark.parametrize(("job", "objects", "default_lq", "gates", "config", "want"), [c[1:] for c in DEFAULT],
                         ids=[c[0] for c in DEFAULT])
def test_default(job: dict[str, Any], objects: list[dict[str, Any]], default_lq: bool, gates: dict[str, bool],
                 config: dict[str, Any], want: dict[str, Any]) -> None:
    cluster = [*objects, *([local_queue("default")] if default_lq else [])]
    defaulted = admit(job, context(gates, cluster, **{**EVERYTHING, **config})).obj
    assert defaulted is not None
    assert defaulted["metadata"].get("labels") == want["metadata"].get("labels")
    for key in ("suspend", "managedBy"):
        assert defaulted["spec"].get(key) == want["spec"].get(key), key
    assert defaulted["spec"]["template"]["spec"].get("schedulingGates") is None


# ---- Test_applyWorkloadSliceSchedulingGate -------------------------------------------------------------------------
@pytest.mark.parametrize(("gate", "job", "want"), [
    pytest.param(False, mj(), None, id="FeatureDisabledAndNotOptIn"),
    pytest.param(False, mj(annotations={ELASTIC: "true"}), None, id="FeatureDisabledAndOptIn"),
    pytest.param(True, mj(), None, id="FeatureEnabledButNotOptIn"),
    pytest.param(True, mj(annotations={ELASTIC: "true"}, scheduling_gates=["SomeOtherGate"]),
                 ["SomeOtherGate", "kueue.x-k8s.io/elastic-job"], id="FeatureEnabledAndOptIn"),
    pytest.param(True, mj(annotations={ELASTIC: "true"}, scheduling_gates=["kueue.x-k8s.io/elastic-job"]),
                 ["kueue.x-k8s.io/elastic-job"], id="FeatureEnabledAndOptIn_SpecAlreadyContainsWorkloadSliceGate"),
])
def test_apply_workload_slice_scheduling_gate(gate: bool, job: dict[str, Any], want: list[str] | None) -> None:
    defaulted = admit(job, context({"ElasticJobsViaWorkloadSlices": gate})).obj
    assert defaulted is not None
    gates = defaulted["spec"]["template"]["spec"].get("schedulingGates")
    assert (None if gates is None else [g["name"] for g in gates]) == want
