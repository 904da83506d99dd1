"""Kueue's webhook on JobSets (jobsetctl/kueue/jobs.py, job_rules.py), translated from
pkg/controller/jobs/jobset/jobset_webhook_test.go: TestValidateCreate (every entry), TestValidateUpdate (every
entry) and TestDefault (every entry; the MultiKueue ones check ``spec.managedBy``).

Upstream compares field errors; we compare each finding's field path and that its message carries upstream's
detail (the rendering around it is field.Error's, covered by the webhook tests)."""

from __future__ import annotations

from typing import Any

import pytest

from jobsetctl.admission.chain import admit
from jobsetctl.kinds.index import ObjectIndex
from jobsetctl.kinds.interface import AdmissionContext
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import KubeVersion
from tests.kueue.harness import kueue_config

V137 = KubeVersion.V1_37
ANN = "spec.replicatedJobs[{}].template.spec.template.metadata.annotations"
BLOCK, RACK = "cloud.com/block", "cloud.com/rack"
REQUIRED, PREFERRED = "kueue.x-k8s.io/podset-required-topology", "kueue.x-k8s.io/podset-preferred-topology"
GROUP, SLICE, SIZE = ("kueue.x-k8s.io/podset-group-name", "kueue.x-k8s.io/podset-slice-required-topology",
                      "kueue.x-k8s.io/podset-slice-size")
MORE_THAN_ONE = ('must not contain more than one topology annotation: ["kueue.x-k8s.io/podset-required-topology", '
                 '"kueue.x-k8s.io/podset-preferred-topology", "kueue.x-k8s.io/podset-unconstrained-topology"]')
RFC1123 = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
           "start and end with an alphanumeric character")


def rjob(name: str, replicas: int = 1, parallelism: int = 1, completions: int = 1,
         annotations: dict[str, str] | None = None) -> dict[str, Any]:
    template: dict[str, Any] = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "pause"}]}}
    if annotations:
        template["metadata"] = {"annotations": annotations}
    return {"name": name, "replicas": replicas,
            "template": {"spec": {"parallelism": parallelism, "completions": completions, "template": template}}}


def jobset(name: str = "job", queue: str | None = None, *rjobs: dict[str, Any], labels: dict[str, str] | None = None,
           annotations: dict[str, str] | None = None, managed_by: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "labels": dict(labels or {})}
    if queue is not None:
        meta["labels"]["kueue.x-k8s.io/queue-name"] = queue
    if annotations:
        meta["annotations"] = annotations
    spec: dict[str, Any] = {"replicatedJobs": list(rjobs) or [rjob("replicated-job-1")]}
    if managed_by is not None:
        spec["managedBy"] = managed_by
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": meta, "spec": spec}


def ctx(gates: dict[str, bool] | None = None, cluster: list[dict[str, Any]] | None = None) -> AdmissionContext:
    return AdmissionContext(V137, parse_feature_gates(None, V137), kueue=kueue_config(featureGates=gates or {}),
                            cluster=ObjectIndex(cluster) if cluster is not None else None)


def kueue_errors(obj: dict[str, Any], context: AdmissionContext, old: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    result = admit(obj, context.for_update() if old is not None else context, old=old)
    return [(f.path, f.message) for f in result.findings if f.rule.id.startswith("kueue-")]


TAS = {"TopologyAwareScheduling": True}
PREBUILT = "kueue.x-k8s.io/prebuilt-workload-name"
VALIDATE_CREATE: list[tuple[str, dict[str, Any], dict[str, bool], list[tuple[str, str]]]] = [
    ("simple", jobset("job", "queue"), {}, []),
    ("invalid queue-name label", jobset("job", "queue_name"), {},
     [("metadata.labels[kueue.x-k8s.io/queue-name]", RFC1123)]),
    ("with prebuilt workload", jobset("job", "queue", labels={PREBUILT: "prebuilt-workload"}), {}, []),
    ("valid prebuilt workload annotation, WorkloadIdentifierAnnotations enabled",
     jobset("job", "queue", annotations={PREBUILT: "prebuilt-workload"}), {"WorkloadIdentifierAnnotations": True}, []),
    ("different prebuilt workload label and annotation, label ignored, WorkloadIdentifierAnnotations enabled",
     jobset("job", "queue", labels={PREBUILT: "prebuilt-workload-label"},
            annotations={PREBUILT: "prebuilt-workload-annotation"}), {"WorkloadIdentifierAnnotations": True}, []),
    ("valid topology request", jobset("job", None, rjob("launcher", annotations={REQUIRED: BLOCK}),
                                      rjob("worker", annotations={REQUIRED: BLOCK})), TAS, []),
    ("invalid topology request", jobset("job", None, rjob("launcher", annotations={REQUIRED: BLOCK}),
                                        rjob("worker", annotations={PREFERRED: BLOCK, REQUIRED: BLOCK})), TAS,
     [(ANN.format(1), MORE_THAN_ONE)]),
    ("invalid slice topology request - slice size larger than number of podsets",
     jobset("jobset", None, rjob("job1", replicas=2, annotations={REQUIRED: BLOCK, SLICE: BLOCK, SIZE: "20"})), TAS,
     [(f"{ANN.format(0)}[{SIZE}]", "must not be greater than pod set count 2")]),
    ("valid PodSet grouping request",
     jobset("job", None, rjob("launcher", annotations={GROUP: "groupname", REQUIRED: BLOCK}),
            rjob("worker", replicas=4, annotations={GROUP: "groupname", REQUIRED: BLOCK})), TAS, []),
    ("invalid PodSet grouping request - groups of size other than 2",
     jobset("jobset", None, rjob("job1", annotations={REQUIRED: BLOCK, GROUP: "1podset"}),
            rjob("job2", annotations={REQUIRED: BLOCK, GROUP: "3podsets"}),
            rjob("job3", replicas=2, annotations={REQUIRED: BLOCK, GROUP: "3podsets"}),
            rjob("job4", replicas=2, parallelism=2, annotations={REQUIRED: BLOCK, GROUP: "3podsets"})), TAS,
     [(f"{ANN.format(0)}[{GROUP}]", "can only define groups of exactly 2 pod sets, got: 1 pod set(s)"),
      (f"{ANN.format(1)}[{GROUP}]", "can only define groups of exactly 2 pod sets, got: 3 pod set(s)"),
      (f"{ANN.format(2)}[{GROUP}]", "can only define groups of exactly 2 pod sets, got: 3 pod set(s)"),
      (f"{ANN.format(3)}[{GROUP}]", "can only define groups of exactly 2 pod sets, got: 3 pod set(s)")]),
    ("invalid PodSet grouping request - no leader in group",
     jobset("jobset", None, rjob("job1", replicas=2, annotations={REQUIRED: BLOCK, GROUP: "groupname"}),
            rjob("job2", parallelism=3, completions=3, annotations={REQUIRED: BLOCK, GROUP: "groupname"})), TAS,
     [(f"{ANN.format(i)}[{GROUP}]", "can only define groups where at least one pod set has only 1 replica, got: "
                                   "2 replica(s) and 3 replica(s) in the group") for i in (0, 1)]),
    *[(f"invalid PodSet grouping request - {what}",
       jobset("jobset", None, rjob("job1", annotations={first[0]: RACK, GROUP: "groupname"}),
              rjob("job2", replicas=2, annotations={second[0]: BLOCK, GROUP: "groupname"})), TAS,
       [(ANN.format(i), f"must specify '{REQUIRED}' or '{PREFERRED}' topology consistent with '{ANN.format(1 - i)}' in "
                        "group 'groupname'") for i in (0, 1)])
      for what, first, second in (("required topology does not match", (REQUIRED,), (REQUIRED,)),
                                  ("preferred topology does not match", (PREFERRED,), (PREFERRED,)),
                                  ("different topology annotations within group", (REQUIRED,), (PREFERRED,)))],
]


@pytest.mark.parametrize(("job", "gates", "want"), [c[1:] for c in VALIDATE_CREATE], ids=[c[0] for c in VALIDATE_CREATE])
def test_validate_create(job: dict[str, Any], gates: dict[str, bool], want: list[tuple[str, str]]) -> None:
    got = kueue_errors(job, ctx(gates))
    assert [path for path, _ in got] == [path for path, _ in want]
    for (_, message), (_, detail) in zip(got, want, strict=True):
        assert detail in message


VALIDATE_UPDATE = [
    ("set valid topology request", {}, {PREFERRED: BLOCK}, []),
    ("attempt to set invalid topology request", {}, {PREFERRED: BLOCK, REQUIRED: BLOCK},
     [(ANN.format(0), MORE_THAN_ONE)]),
]


@pytest.mark.parametrize(("old", "new", "want"), [c[1:] for c in VALIDATE_UPDATE], ids=[c[0] for c in VALIDATE_UPDATE])
def test_validate_update(old: dict[str, str], new: dict[str, str], want: list[tuple[str, str]]) -> None:
    before, after = jobset("job", None, rjob("worker", annotations=old)), jobset("job", None, rjob("worker", annotations=new))
    stored = admit(before, ctx(TAS)).obj
    assert stored is not None
    got = kueue_errors(after, ctx(TAS), old=stored)
    assert [path for path, _ in got] == [path for path, _ in want]
    for (_, message), (_, detail) in zip(got, want, strict=True):
        assert detail in message


# ---- TestDefault ---------------------------------------------------------------------------------------------

MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"
G = "kueue.x-k8s.io/v1beta2"


def local_queue(name: str = "local-queue", cluster_queue: str = "cluster-queue") -> dict[str, Any]:
    return {"apiVersion": G, "kind": "LocalQueue", "metadata": {"name": name, "namespace": "default"},
            "spec": {"clusterQueue": cluster_queue}}


def cluster_queue(*checks: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"namespaceSelector": {}}
    if checks:
        spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": c} for c in checks]}
    return {"apiVersion": G, "kind": "ClusterQueue", "metadata": {"name": "cluster-queue"}, "spec": spec}


MK_CHECK = {"apiVersion": G, "kind": "AdmissionCheck", "metadata": {"name": "admission-check"},
            "spec": {"controllerName": MULTIKUEUE_CONTROLLER}}
WITH_MK = [local_queue(), cluster_queue("admission-check"), MK_CHECK]
JOBSET_CONTROLLER = "jobset.sigs.k8s.io/jobset-controller"
DEFAULT_MANAGED_BY = [
    ("TestDefault_JobSetManagedBy_jobsetapi.JobSetControllerName", jobset(queue="local-queue", managed_by=JOBSET_CONTROLLER),
     WITH_MK, True, MULTIKUEUE_CONTROLLER),
    ("TestDefault_WithQueueLabel", jobset(queue="local-queue"), WITH_MK, True, MULTIKUEUE_CONTROLLER),
    ("TestDefault_WithoutQueueLabel", jobset(), [], True, None),
    ("TestDefault_InvalidQueueName", jobset(queue="invalid-queue"), [], True, None),
    ("TestDefault_QueueNotFound", jobset(queue="non-existent-queue"), [], True, None),
    ("TestDefault_AdmissionCheckNotFound", jobset(queue="local-queue"),
     [local_queue(), cluster_queue("non-existent-admission-check")], True, None),
    ("TestDefault_MultiKueueFeatureDisabled", jobset(queue="local-queue"), WITH_MK, False, None),
    ("TestDefault_UserSpecifiedManagedBy", jobset(queue="local-queue", managed_by="example.com/foo"), WITH_MK, True,
     "example.com/foo"),
    ("TestDefault_ClusterQueueWithoutAdmissionCheck", jobset(queue="local-queue"), [local_queue(), cluster_queue()],
     True, None),
]


@pytest.mark.parametrize(("job", "cluster", "multikueue", "want"), [c[1:] for c in DEFAULT_MANAGED_BY],
                         ids=[c[0] for c in DEFAULT_MANAGED_BY])
def test_default_managed_by(job: dict[str, Any], cluster: list[dict[str, Any]], multikueue: bool, want: str | None) -> None:
    defaulted = admit(job, ctx({"MultiKueue": multikueue}, cluster)).obj
    assert defaulted is not None
    # JobSet's own default for an unset managedBy is none (jobset.md): the JobSet controller's name stays as given.
    assert defaulted["spec"].get("managedBy") == want


DEFAULT_QUEUE = [
    ("default lq is created, job doesn't have queue label", True, None, "default"),
    ("default lq is created, job has queue label", True, "queue", "queue"),
    ("default lq isn't created, job doesn't have queue label", False, None, None),
]


@pytest.mark.parametrize(("default_exists", "queue", "want"), [c[1:] for c in DEFAULT_QUEUE],
                         ids=[c[0] for c in DEFAULT_QUEUE])
def test_default_local_queue(default_exists: bool, queue: str | None, want: str | None) -> None:
    cluster = [local_queue("default")] if default_exists else []
    defaulted = admit(jobset("test-js", queue), ctx(cluster=cluster)).obj
    assert defaulted is not None
    assert defaulted["metadata"].get("labels", {}).get("kueue.x-k8s.io/queue-name") == want


# ---- pkg/controller/jobframework/validation_test.go TestValidateJobOnUpdate (every entry) -------------------------
# Upstream runs ValidateJobOnUpdate on batch Jobs; it compares error types and fields only (details ignored).

QUEUE_FIELD = "metadata.labels[kueue.x-k8s.io/queue-name]"
ELASTIC = "kueue.x-k8s.io/elastic-job"
PREBUILT_LABEL = "metadata.labels[kueue.x-k8s.io/prebuilt-workload-name]"
PREBUILT_ANNOTATION = "metadata.annotations[kueue.x-k8s.io/prebuilt-workload-name]"
LONG = "workload-name-that-is-very-long-and-exceeds-the-63-character-label-limit-value"


def job(queue: str | None = None, suspend: bool | None = None, labels: dict[str, str] | None = None,
        annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "test-job", "namespace": "ns1", "labels": dict(labels or {}),
                            "annotations": dict(annotations or {})}
    if queue:
        meta["labels"]["kueue.x-k8s.io/queue-name"] = queue
    spec: dict[str, Any] = {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}}
    if suspend is not None:
        spec["suspend"] = suspend
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": spec}


NO_IDS = {"WorkloadIdentifierAnnotations": False}
IDS = {"WorkloadIdentifierAnnotations": True}
ON_UPDATE: list[tuple[str, dict[str, Any], dict[str, Any], bool, dict[str, bool], list[str]]] = [
    ("local queue cannot be changed if job is not suspended", job("lq1", False), job("lq2", False), False, NO_IDS,
     [QUEUE_FIELD]),
    ("local queue can be changed", job("lq1", True), job("lq2", True), True, NO_IDS, []),
    ("local queue can be changed from default", job("default", True), job("lq2", True), True, NO_IDS, []),
    ("local queue cannot be removed if default queue exists and feature is enabled", job("lq1", True), job(None, True),
     True, NO_IDS, [QUEUE_FIELD]),
    ("local queue can be removed if default queue does not exists and feature is enabled", job("lq1", True),
     job(None, True), False, NO_IDS, []),
    ("elastic job enabled annotation cannot be removed on update", job(annotations={ELASTIC: "true"}), job(), False,
     {"ElasticJobsViaWorkloadSlices": True}, [f"metadata.annotations[{ELASTIC}]"]),
    ("elastic job enabled annotation cannot be added on update", job(), job(annotations={ELASTIC: "true"}), False,
     {"ElasticJobsViaWorkloadSlices": True}, [f"metadata.annotations[{ELASTIC}]"]),
    ("prebuilt workload label valid on update", job(suspend=True, labels={PREBUILT: "workload-name"}),
     job(suspend=True, labels={PREBUILT: "workload-name"}), False, NO_IDS, []),
    ("prebuilt workload annotation valid on update, WorkloadIdentifierAnnotations enabled",
     job(suspend=True, annotations={PREBUILT: "workload-name"}), job(suspend=True, annotations={PREBUILT: "workload-name"}),
     False, IDS, []),
    ("prebuilt workload label fallback valid on update, WorkloadIdentifierAnnotations enabled",
     job(suspend=True, labels={PREBUILT: "workload-name"}), job(suspend=True, labels={PREBUILT: "workload-name"}),
     False, IDS, []),
    ("prebuilt workload same label and annotation on update, WorkloadIdentifierAnnotations enabled",
     job(suspend=True, labels={PREBUILT: "workload-name"}, annotations={PREBUILT: "workload-name"}),
     job(suspend=True, labels={PREBUILT: "workload-name"}, annotations={PREBUILT: "workload-name"}), False, IDS, []),
    ("prebuilt workload invalid label format with fallback on update, WorkloadIdentifierAnnotations enabled",
     job(suspend=True, labels={PREBUILT: "workload name"}), job(suspend=True, labels={PREBUILT: "workload name"}),
     False, IDS, [PREBUILT_LABEL]),
    ("prebuilt workload invalid annotation format, WorkloadIdentifierAnnotations enabled",
     job(suspend=True, annotations={PREBUILT: "workload name"}), job(suspend=True, annotations={PREBUILT: "workload name"}),
     False, IDS, [PREBUILT_ANNOTATION]),
    ("prebuilt workload annotation update, WorkloadIdentifierAnnotations enabled",
     job(suspend=True, annotations={PREBUILT: "workload-name"}),
     job(suspend=True, annotations={PREBUILT: "workload-name-new"}), False, IDS, []),
    ("prebuilt workload annotation valid for long names > 63 chars when WorkloadIdentifierAnnotations disabled",
     job(suspend=True, annotations={PREBUILT: LONG}), job(suspend=True, annotations={PREBUILT: LONG}), False, NO_IDS, []),
    ("prebuilt workload annotation update not suspended, WorkloadIdentifierAnnotations enabled",
     job(suspend=False, annotations={PREBUILT: "workload-name"}),
     job(suspend=False, annotations={PREBUILT: "workload-name-new"}), False, IDS, [PREBUILT_ANNOTATION]),
    ("prebuilt workload label to annotation update, WorkloadIdentifierAnnotations enabled",
     job(suspend=True, labels={PREBUILT: "workload-name"}), job(suspend=True, annotations={PREBUILT: "workload-name-new"}),
     False, IDS, []),
    ("prebuilt workload annotation to label update, WorkloadIdentifierAnnotations enabled",
     job(suspend=True, annotations={PREBUILT: "workload-name"}), job(suspend=True, labels={PREBUILT: "workload-name-new"}),
     False, IDS, []),
]


@pytest.mark.parametrize(("old", "new", "default_queue", "gates", "want"), [c[1:] for c in ON_UPDATE],
                         ids=[c[0] for c in ON_UPDATE])
def test_validate_job_on_update(old: dict[str, Any], new: dict[str, Any], default_queue: bool, gates: dict[str, bool],
                                want: list[str]) -> None:
    from jobsetctl.kueue.job_rules import validate_job_update

    cluster = [{"apiVersion": G, "kind": "LocalQueue", "metadata": {"name": "default", "namespace": "ns1"},
                "spec": {"clusterQueue": "cq"}}] if default_queue else []
    assert [f.path for f in validate_job_update(old, new, ctx(gates, cluster))] == want
