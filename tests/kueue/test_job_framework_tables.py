"""Kueue's jobframework webhook tables, translated through jobsetctl's admission chain (jobsetctl/kueue/jobs.py,
job_rules.py): kubernetes-sigs/kueue @ ff69552e.

* ``pkg/controller/jobframework/validation_test.go`` ``TestValidateJobOnCreate`` (3/3). Upstream hands
  ``ValidateJobOnCreate`` a batch Job behind a mocked GVK; the JobSet entries here are real JobSets.
* ``pkg/controller/jobframework/base_webhook_test.go`` ``TestBaseWebhookDefault`` (9/10),
  ``TestValidateOnCreate`` (2/3, one of them in part), ``TestValidateOnUpdate`` (2/3, one in part). The
  BaseWebhook serves integrations without a webhook of their own; the Job webhook (``job_webhook.go``) runs
  the same steps (``ApplyDefaultLocalQueue``, ``ApplyDefaultWorkloadPriorityClass``, ``ApplyDefaultForSuspend``,
  ``ApplyDefaultForManagedBy``; ``ValidateJobOnCreate``/``ValidateJobOnUpdate``), so the entries run on batch
  Jobs as Kueue's Job webhook admits them. ``utiljob.MakeJob`` gives a suspended Job (``Suspend: true``):
  the inputs here are suspended too, and one more row per suspend entry starts from an unsuspended Job.

Left out (no manifest can express them):

* ``validation_test.go`` ``TestValidateImmutablePodSpec`` (13 entries): ``ValidateImmutablePodGroupPodSpec``
  serves the LeaderWorkerSet and StatefulSet webhooks only (``leaderworkerset_webhook.go``,
  ``statefulset_webhook.go``), kinds jobsetctl does not model; JobSet, TrainJob and Job never call it.
* ``TestBaseWebhookDefault`` "does not panic without an integration manager": a nil Go pointer; jobsetctl's
  Kueue always has its integrations.
* ``TestValidateOnCreate``/``TestValidateOnUpdate`` "invalid request custom validation error", and the mocked
  ``JobWithCustomValidation`` errors of "invalid request": they test how BaseWebhook aggregates a mock's
  results. The framework errors of "invalid request" are checked.
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
ELASTIC = "kueue.x-k8s.io/elastic-job"
MAX_EXEC = "kueue.x-k8s.io/max-exec-time-seconds"
MULTIKUEUE = "kueue.x-k8s.io/multikueue"


def make_job(name: str = "job", namespace: str = "default", *, queue: str | None = None, suspend: bool | None = True,
             labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None,
             managed_by: str | None = None) -> dict[str, Any]:
    """utiljob.MakeJob: parallelism 1, suspended, one container, restartPolicy Never."""
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "annotations": dict(annotations or {})}
    if labels or queue:
        meta["labels"] = {**(labels or {}), **({QUEUE: queue} if queue else {})}
    spec: dict[str, Any] = {"parallelism": 1, "template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "c", "image": "pause"}]}}}
    if suspend is not None:
        spec["suspend"] = suspend
    if managed_by is not None:
        spec["managedBy"] = managed_by
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": spec}


def make_jobset(annotations: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": "test-job", "namespace": "ns1", "annotations": annotations},
            "spec": {"replicatedJobs": [{"name": "r", "template": {"spec": {"template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "c", "image": "pause"}]}}}}}]}}


def context(gates: dict[str, bool] | None = None, cluster: list[dict[str, Any]] | None = None,
            **config: Any) -> AdmissionContext:
    return AdmissionContext(V137, parse_feature_gates(None, V137), kueue=kueue_config(featureGates=gates or {}, **config),
                            cluster=ObjectIndex(cluster) if cluster is not None else None)


def kueue_findings(obj: dict[str, Any], ctx: AdmissionContext, old: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    result = admit(obj, ctx.for_update() if old is not None else ctx, old=old)
    return [(f.path, f.message) for f in result.findings if f.rule.id.startswith("kueue-")]


# ---- validation_test.go TestValidateJobOnCreate ----------------------------------------------------------------

ON_CREATE = [
    ("elastic annotation on batch/v1.Job is allowed", make_job("test-job", "ns1", annotations={ELASTIC: "true"}),
     {"ElasticJobsViaWorkloadSlices": True}, []),
    ("elastic annotation on unsupported framework is rejected", make_jobset({ELASTIC: "true"}),
     {"ElasticJobsViaWorkloadSlices": True},
     [(f"metadata.annotations[{ELASTIC}]", f"metadata.annotations[{ELASTIC}]: Forbidden: elastic job is not supported "
                                          'for "jobset.x-k8s.io/v1alpha2, Kind=JobSet"')]),
    ("elastic annotation without feature gate is ignored", make_jobset({ELASTIC: "true"}),
     {"ElasticJobsViaWorkloadSlices": False}, []),
]


@pytest.mark.parametrize(("obj", "gates", "want"), [c[1:] for c in ON_CREATE], ids=[c[0] for c in ON_CREATE])
def test_validate_job_on_create(obj: dict[str, Any], gates: dict[str, bool], want: list[tuple[str, str]]) -> None:
    assert kueue_findings(obj, context(gates)) == want


# ---- base_webhook_test.go TestBaseWebhookDefault ---------------------------------------------------------------

def local_queue(name: str, namespace: str = "default", cluster_queue: str = "cluster-queue") -> dict[str, Any]:
    return {"apiVersion": G, "kind": "LocalQueue", "metadata": {"name": name, "namespace": namespace},
            "spec": {"clusterQueue": cluster_queue}}


#: ``if tc.featureGates[features.MultiKueue]``: a LocalQueue "multikueue" to a ClusterQueue with a MultiKueue check.
MULTIKUEUE_OBJECTS = [
    local_queue("multikueue"),
    {"apiVersion": G, "kind": "ClusterQueue", "metadata": {"name": "cluster-queue"},
     "spec": {"namespaceSelector": {}, "admissionChecksStrategy": {"admissionChecks": [{"name": "admission-check"}]}}},
    {"apiVersion": G, "kind": "AdmissionCheck", "metadata": {"name": "admission-check"},
     "spec": {"controllerName": MULTIKUEUE}},
]
NOT_UNMANAGED = {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn",
                                       "values": ["unmanaged-ns"]}]}
UNMANAGED_NS = {"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": "unmanaged-ns", "labels": {"kubernetes.io/metadata.name": "unmanaged-ns"}}}

# (case, job, default LocalQueue exists, MultiKueue gate, configuration, extra objects, want)
DEFAULT: list[tuple[str, dict[str, Any], bool, bool, dict[str, Any], list[dict[str, Any]], dict[str, Any]]] = [
    ("update the suspend field with 'manageJobsWithoutQueueName=false'", make_job(queue="queue"), False, False, {}, [],
     make_job(queue="queue", suspend=True)),
    ("update the suspend field with 'manageJobsWithoutQueueName=false' (from an unsuspended job)",
     make_job(queue="queue", suspend=False), False, False, {}, [], make_job(queue="queue", suspend=True)),
    ("update the suspend field 'manageJobsWithoutQueueName=true'", make_job(queue="queue"), False, False,
     {"manageJobsWithoutQueueName": True}, [], make_job(queue="queue", suspend=True)),
    ("update the suspend field 'manageJobsWithoutQueueName=true' (from an unsuspended job)",
     make_job(queue="queue", suspend=False), False, False, {"manageJobsWithoutQueueName": True}, [],
     make_job(queue="queue", suspend=True)),
    ("default lq is created, job doesn't have queue label", make_job(), True, False, {}, [],
     make_job(labels={QUEUE: "default"})),
    ("default lq is created, job has queue label", make_job(queue="queue"), True, False, {}, [], make_job(queue="queue")),
    ("default lq isn't created, job doesn't have queue label", make_job(), False, False, {}, [], make_job()),
    ("ManagedByDefaulting, targeting multikueue local queue", make_job(queue="multikueue"), False, True, {},
     MULTIKUEUE_OBJECTS, make_job(queue="multikueue", managed_by=MULTIKUEUE)),
    ("ManagedByDefaulting, targeting multikueue local queue but already managaed by someone else",
     make_job(queue="multikueue", managed_by="someone-else"), False, True, {}, MULTIKUEUE_OBJECTS,
     make_job(queue="multikueue", managed_by="someone-else")),
    ("ManagedByDefaulting, targeting non-multikueue local queue", make_job(queue="queue"), False, True, {},
     MULTIKUEUE_OBJECTS, make_job(queue="queue")),
    ("job in unmanaged namespace with default lq should not get queue label or be suspended",
     make_job(namespace="unmanaged-ns"), True, False, {"managedJobsNamespaceSelector": NOT_UNMANAGED}, [UNMANAGED_NS],
     make_job(namespace="unmanaged-ns")),
    # Upstream's default LocalQueue sits in namespace default, so the selector is not what keeps the label away;
    # here the namespace has a default LocalQueue of its own and only the selector decides.
    ("job in unmanaged namespace with default lq should not get queue label or be suspended (its own default lq)",
     make_job(namespace="unmanaged-ns", suspend=False), False, False, {"managedJobsNamespaceSelector": NOT_UNMANAGED},
     [UNMANAGED_NS, local_queue("default", "unmanaged-ns")], make_job(namespace="unmanaged-ns", suspend=False)),
]


@pytest.mark.parametrize(("job", "default_lq", "multikueue", "config", "objects", "want"), [c[1:] for c in DEFAULT],
                         ids=[c[0] for c in DEFAULT])
def test_base_webhook_default(job: dict[str, Any], default_lq: bool, multikueue: bool, config: dict[str, Any],
                              objects: list[dict[str, Any]], want: dict[str, Any]) -> None:
    cluster = [*objects, *([local_queue("default")] if default_lq else [])]
    defaulted = admit(job, context({"MultiKueue": multikueue}, cluster, **config)).obj
    assert defaulted is not None
    assert defaulted["metadata"].get("labels") == want["metadata"].get("labels")
    assert defaulted["spec"].get("suspend") == want["spec"].get("suspend")
    assert defaulted["spec"].get("managedBy") == want["spec"].get("managedBy")


# ---- base_webhook_test.go TestValidateOnCreate, TestValidateOnUpdate -----------------------------------------------

MAX_EXEC_PATH = f"metadata.labels[{MAX_EXEC}]"
QUEUE_PATH = f"metadata.labels[{QUEUE}]"


@pytest.mark.parametrize(("job", "want"), [
    pytest.param(make_job(queue="queue"), [], id="valid request"),
    # The mock's "custom validation test error" is left out; ValidateJobOnCreate's error is upstream's first.
    pytest.param(make_job(labels={MAX_EXEC: "0"}),
                 [(MAX_EXEC_PATH, f"{MAX_EXEC_PATH}: Invalid value: 0: should be greater than 0")], id="invalid request"),
])
def test_validate_on_create(job: dict[str, Any], want: list[tuple[str, str]]) -> None:
    assert kueue_findings(job, context()) == want


@pytest.mark.parametrize(("old", "new", "want"), [
    pytest.param(make_job(queue="queue"), make_job(queue="queue"), [], id="valid request"),
    pytest.param(make_job(queue="queue"), make_job(queue="changed", suspend=False),
                 [(QUEUE_PATH, f'{QUEUE_PATH}: Invalid value: "changed": field is immutable')], id="invalid request"),
])
def test_validate_on_update(old: dict[str, Any], new: dict[str, Any], want: list[tuple[str, str]]) -> None:
    stored = admit(old, context()).obj
    assert stored is not None
    assert kueue_findings(new, context(), old=stored) == want
