"""Kueue's webhook on TrainJobs (jobsetctl/kueue/jobs.py, job_rules.py), translated from
pkg/controller/jobs/trainjob/trainjob_webhook_test.go: TestValidateCreate (every entry) and TestDefault
(every entry). The TAS annotations come from the JobSet the Trainer builds from the runtime and the
TrainJob's runtimePatches; upstream's paths name its replicated jobs (``job[node].annotations``)."""

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
MANAGER = "kueue.x-k8s.io/manager"
REQUIRED, PREFERRED = "kueue.x-k8s.io/podset-required-topology", "kueue.x-k8s.io/podset-preferred-topology"
SLICE, SIZE = "kueue.x-k8s.io/podset-slice-required-topology", "kueue.x-k8s.io/podset-slice-size"
BLOCK = "cloud.com/block"
ADVICE = ('. Adjust either the "TrainJob.spec.runtimePatches" or the "TrainingRuntime.Template" annotations for '
          'the corresponding Job')
MORE_THAN_ONE = ('must not contain more than one topology annotation: ["kueue.x-k8s.io/podset-required-topology", '
                 '"kueue.x-k8s.io/podset-preferred-topology", "kueue.x-k8s.io/podset-unconstrained-topology"]')
RFC1123 = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
           "start and end with an alphanumeric character")


def runtime(annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """``MakeClusterTrainingRuntime("testCtr", ...)``: one replicated job ``node``."""
    template: dict[str, Any] = {"spec": {"containers": [{"name": "node", "image": "pause"}]}}
    if annotations:
        template["metadata"] = {"annotations": annotations}
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
            "metadata": {"name": "testctr"},
            "spec": {"template": {"spec": {"replicatedJobs": [{"name": "node", "replicas": 1, "template": {"spec": {
                "parallelism": 1, "completions": 1, "template": template}}}]}}}}


def patch(annotations: dict[str, str]) -> dict[str, Any]:
    return {"manager": MANAGER, "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [
        {"name": "node", "template": {"spec": {"template": {"metadata": {"annotations": annotations}}}}}]}}}}


def trainjob(queue: str | None = None, labels: dict[str, str] | None = None, patches: list[dict[str, Any]] | None = None,
             managed_by: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "trainjob", "namespace": "ns", "labels": dict(labels or {})}
    if queue is not None:
        meta["labels"]["kueue.x-k8s.io/queue-name"] = queue
    spec: dict[str, Any] = {"runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime",
                                           "name": "testctr"}, "suspend": False}
    if patches:
        spec["runtimePatches"] = patches
    if managed_by is not None:
        spec["managedBy"] = managed_by
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": meta, "spec": spec}


def ctx(cluster: list[dict[str, Any]], gates: dict[str, bool] | None = None, **config: Any) -> AdmissionContext:
    return AdmissionContext(V137, parse_feature_gates(None, V137), cluster=ObjectIndex(cluster),
                            kueue=kueue_config(featureGates=gates or {}, **config))


VALIDATE_CREATE = [
    ("base", runtime(), trainjob("local-queue"), []),
    ("invalid queue-name label", runtime(), trainjob("queue_name"),
     [("metadata.labels[kueue.x-k8s.io/queue-name]", RFC1123)]),
    ("with prebuilt workload", runtime(),
     trainjob("local-queue", labels={"kueue.x-k8s.io/prebuilt-workload-name": "prebuilt-workload"}), []),
    ("valid topology request in RuntimePatch", runtime(), trainjob(patches=[patch({REQUIRED: BLOCK})]), []),
    ("valid topology request in TrainingRuntime", runtime({REQUIRED: BLOCK}), trainjob(), []),
    ("invalid topology request in TrainJob", runtime(), trainjob(patches=[patch({PREFERRED: BLOCK, REQUIRED: BLOCK})]),
     [("job[node].annotations", MORE_THAN_ONE + ADVICE)]),
    ("invalid topology request in TrainingRuntime", runtime({PREFERRED: BLOCK, REQUIRED: BLOCK}), trainjob(),
     [("job[node].annotations", MORE_THAN_ONE + ADVICE)]),
    ("invalid slice topology request - slice size larger than number of podsets", runtime(),
     trainjob(patches=[patch({REQUIRED: BLOCK, SLICE: BLOCK, SIZE: "20"})]),
     [(f"job[node].annotations[{SIZE}]", "must not be greater than pod set count 1" + ADVICE)]),
]


@pytest.mark.parametrize(("ctr", "job", "want"), [c[1:] for c in VALIDATE_CREATE], ids=[c[0] for c in VALIDATE_CREATE])
def test_validate_create(ctr: dict[str, Any], job: dict[str, Any], want: list[tuple[str, str]]) -> None:
    result = admit(job, ctx([ctr], {"TopologyAwareScheduling": True}))
    got = [(f.path, f.message) for f in result.findings if f.rule.id.startswith("kueue-")]
    assert [path for path, _ in got] == [path for path, _ in want]
    for (path, message), (_, detail) in zip(got, want, strict=True):
        assert message.startswith(path) and detail in message
        if detail.endswith(ADVICE):
            assert message.endswith(ADVICE)


# ---- TestDefault ------------------------------------------------------------------------------------------------

G = "kueue.x-k8s.io/v1beta2"
LOCAL_QUEUE = {"apiVersion": G, "kind": "LocalQueue", "metadata": {"name": "local-queue", "namespace": "ns"},
               "spec": {"clusterQueue": "cluster-queue"}}
DEFAULT_QUEUE = {**LOCAL_QUEUE, "metadata": {"name": "default", "namespace": "ns"}}
MK = [LOCAL_QUEUE, {"apiVersion": G, "kind": "ClusterQueue", "metadata": {"name": "cluster-queue"},
                    "spec": {"admissionChecksStrategy": {"admissionChecks": [{"name": "ac"}]}}},
      {"apiVersion": G, "kind": "AdmissionCheck", "metadata": {"name": "ac"},
       "spec": {"controllerName": "kueue.x-k8s.io/multikueue"}}]
KUEUE_PATCH = {"manager": MANAGER, "trainingRuntimeSpec": {"template": {"spec": {}}}}
DEFAULT = [
    ("should suspend a TrainJob with a queue label", trainjob("local-queue"), [], False,
     {"queue": "local-queue", "suspend": True}),
    ("should not suspend a TrainJob without a queue label if manageJobsWithoutQueueName is not enabled", trainjob(), [],
     False, {"queue": None, "suspend": False}),
    ("should suspend a TrainJob without a queue label if manageJobsWithoutQueueName is enabled", trainjob(), [], True,
     {"queue": None, "suspend": True}),
    ("should set the default local queue if enabled and the user didn't specify any", trainjob(), [DEFAULT_QUEUE], False,
     {"queue": "default", "suspend": True}),
    ("should not set the default local queue if doesn't exists", trainjob(), [], False,
     {"queue": None, "suspend": False}),
    ("should set managedBy to multiKueue if the user didn't specify any", trainjob("local-queue"), MK, False,
     {"queue": "local-queue", "suspend": True, "managedBy": "kueue.x-k8s.io/multikueue"}),
    ("should not set managedBy to multiKueue if already specified by the user", trainjob("local-queue", managed_by="user"),
     MK, False, {"queue": "local-queue", "suspend": True, "managedBy": "user"}),
]


@pytest.mark.parametrize(("job", "queues", "without_queue_name", "want"), [c[1:] for c in DEFAULT],
                         ids=[c[0] for c in DEFAULT])
def test_default(job: dict[str, Any], queues: list[dict[str, Any]], without_queue_name: bool, want: dict[str, Any]) -> None:
    context = ctx([runtime(), *queues], manageJobsWithoutQueueName=without_queue_name)
    defaulted = admit(job, context).obj
    assert defaulted is not None
    got = {"queue": defaulted["metadata"].get("labels", {}).get("kueue.x-k8s.io/queue-name"),
           "suspend": defaulted["spec"].get("suspend")}
    if "managedBy" in want:
        got["managedBy"] = defaulted["spec"].get("managedBy")
    assert got == want
    # testExpectedTrainJob: every TrainJob gets Kueue's empty runtimePatch, queued or not.
    assert defaulted["spec"]["runtimePatches"][-1] == KUEUE_PATCH
