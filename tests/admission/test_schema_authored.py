"""The authored CRD schemas at real paths: JobSet (jobset.md §1, §2.1), Trainer (trainer.md §1, §2.2), and
the built-in Job as its Go decoder sees it, side by side where the two differ (quirks).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from jobsetctl.admission.schema import authored_schema, builtin_schema
from jobsetctl.admission.schema_compile import QUANTITY_CRD_PATTERN
from jobsetctl.admission.schema_hints import EXECUTION_POLICY_HINT
from jobsetctl.kube.quantity import QUANTITY_ERROR
from jobsetctl.kube.versions import KubeVersion
from tests.helpers import table, validate_text

V = KubeVersion.V1_37
JOBSET = "jobset.x-k8s.io_v1alpha2_JobSet"
TRAINJOB = "trainer.kubeflow.org_v1alpha1_TrainJob"
RUNTIME = "trainer.kubeflow.org_v1alpha1_TrainingRuntime"
CLUSTER_RUNTIME = "trainer.kubeflow.org_v1alpha1_ClusterTrainingRuntime"
POD = "spec.replicatedJobs[0].template.spec.template.spec"


def container(**fields: Any) -> dict[str, Any]:
    return {"name": "main", "image": "busybox", **fields}


def jobset(rj: dict[str, Any] | None = None, pod: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    item = {"name": "rj", "template": {"spec": {"template": {"spec": {"containers": [container()], **(pod or {})}}}}}
    item.update(rj or {})
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "js"},
            "spec": {"replicatedJobs": [item], **spec}}


def job(pod: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [container()], **(pod or {})}},
                     **spec}}


def admit_schema(name: str, obj: dict[str, Any], version: KubeVersion = V) -> list[tuple[str, str]]:
    """Schema defaults then schema validation, as the admission chain runs them for a custom resource."""
    schema = authored_schema(name, version)
    obj = copy.deepcopy(obj)
    schema.apply_defaults(obj)
    return [(f.rule.id, f.message) for f in schema.validate(obj)]


def admit_job(obj: dict[str, Any]) -> list[tuple[str, str]]:
    schema = builtin_schema("io.k8s.api.batch.v1.Job", V)
    obj = copy.deepcopy(obj)
    schema.apply_defaults(obj)
    return [(f.rule.id, f.message) for f in schema.validate(obj)]


JOBSET_TABLE = [
    pytest.param(jobset(), [], id="minimal"),
    pytest.param(
        jobset({"replicas": -1}),
        [("schema-range", "spec.replicatedJobs[0].replicas: Invalid value: -1: spec.replicatedJobs[0].replicas "
                          "in body should be greater than or equal to 0")],
        id="replicas-minimum-jobset.md-2.1",
    ),
    pytest.param(
        jobset({"dependsOn": [{"name": "rj", "status": "Failed"}]}),
        [("schema-enum", 'spec.replicatedJobs[0].dependsOn[0].status: Unsupported value: "Failed": '
                         'supported values: "Ready", "Complete"')],
        id="depends-on-status-jobset.md-2.1",
    ),
    pytest.param(
        jobset({"dependsOn": [{"name": f"d{i}", "status": "Ready"} for i in range(6)]}),
        [("schema-items", "spec.replicatedJobs[0].dependsOn: Too many: 6: must have at most 5 items")],
        id="depends-on-max-items",
    ),
    pytest.param(
        jobset(failurePolicy={"restartStrategy": "Never"}),
        [("schema-enum", 'spec.failurePolicy.restartStrategy: Unsupported value: "Never": supported values: '
                         '"Recreate", "BlockingRecreate", "InPlaceRestart"')],
        id="restart-strategy-enum",
    ),
    pytest.param(
        jobset(failurePolicy={"rules": [{"name": "r", "action": "Retry"}]}),
        [("schema-enum", 'spec.failurePolicy.rules[0].action: Unsupported value: "Retry": supported values: '
                         '"FailJobSet", "RestartJobSet", "RestartJobSetAndIgnoreMaxRestarts", "RestartJob", '
                         '"RestartJobAndIgnoreMaxRestarts"')],
        id="rule-action-enum",
    ),
    pytest.param(
        jobset(successPolicy={"targetReplicatedJobs": ["rj"]}),
        [("schema-required", "spec.successPolicy.operator: Required value")],
        id="success-policy-operator-required",
    ),
    pytest.param(
        jobset(startupPolicy={"startupPolicyOrder": "Random"}),
        [("schema-enum", 'spec.startupPolicy.startupPolicyOrder: Unsupported value: "Random": supported values: '
                         '"AnyOrder", "InOrder"')],
        id="startup-policy-enum",
    ),
    pytest.param(
        jobset(ttlSecondsAfterFinished=-5),
        [("schema-range", "spec.ttlSecondsAfterFinished: Invalid value: -5: spec.ttlSecondsAfterFinished in body "
                          "should be greater than or equal to 0")],
        id="ttl-minimum",
    ),
    pytest.param(
        jobset(volumeClaimPolicies=[{"templates": []}] * 51),
        [("schema-items", "spec.volumeClaimPolicies: Too many: 51: must have at most 50 items")],
        id="volume-claim-policies-max-items",
    ),
    pytest.param(
        jobset(volumeClaimPolicies=[{"retentionPolicy": {"whenDeleted": "Keep"}}]),
        [("schema-enum", 'spec.volumeClaimPolicies[0].retentionPolicy.whenDeleted: Unsupported value: "Keep": '
                         'supported values: "Delete", "Retain"')],
        id="when-deleted-enum",
    ),
    pytest.param(
        jobset(coordinator={"jobIndex": 0}),
        [("schema-required", "spec.coordinator.replicatedJob: Required value")],
        id="coordinator-required",
    ),
    pytest.param(
        jobset({"template": None}),
        [("schema-required", "spec.replicatedJobs[0].template: Required value")],
        id="null-template-is-pruned-then-required",
    ),
    pytest.param(
        jobset(pod={"containers": [container(ports=[{"containerPort": "http"}])]}),
        [("schema-type", f'{POD}.containers[0].ports[0].containerPort: Invalid value: "string": '
                         f'{POD}.containers[0].ports[0].containerPort in body must be of type integer: "string"')],
        id="embedded-type",
    ),
]


@pytest.mark.parametrize(("obj", "expected"), JOBSET_TABLE)
def test_jobset_table(obj: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert admit_schema(JOBSET, obj) == expected


def test_duplicate_replicated_job_names_are_rejected_by_the_api_server() -> None:
    """jobset.md §2.2: the webhook does not check duplicate names; the list-map keyed by name does."""
    obj = jobset()
    obj["spec"]["replicatedJobs"].append(copy.deepcopy(obj["spec"]["replicatedJobs"][0]))
    assert admit_schema(JOBSET, obj) == [
        ("schema-duplicate", 'spec.replicatedJobs[1]: Duplicate value: {"name":"rj"}'),
    ]


def test_execution_policy_gets_the_kep_672_hint() -> None:
    """The seed proposal's executionPolicy is unknown; dependsOn (KEP-672) is what shipped (jobset.md §5)."""
    schema = authored_schema(JOBSET, V)
    obj = jobset({"executionPolicy": {"executionPolicyOrder": "InOrder"}})
    [finding] = schema.validate(obj)
    assert finding.message == 'strict decoding error: unknown field "spec.replicatedJobs[0].executionPolicy"'
    assert finding.at == ("spec", "replicatedJobs", 0, "executionPolicy")
    assert finding.hint == EXECUTION_POLICY_HINT


def test_unknown_field_position_is_the_key(tmp_path: Path) -> None:
    text = """
    apiVersion: jobset.x-k8s.io/v1alpha2
    kind: JobSet
    metadata:
      name: js
    spec:
      replicatedJobs:
      - name: rj
        executionPolicy: {}
        template:
          spec:
            template:
              spec:
                restartPolicy: Never
                containers: [{name: c, image: busybox}]
    """
    rows = [row for row in table(validate_text(tmp_path, text)) if row[2].startswith("schema-")]
    assert rows == [(8, 5, "schema-unknown-field")]


def test_quirk_embedded_metadata_is_restricted() -> None:
    """controller-gen's embedded ObjectMeta has only annotations, finalizers, labels, name, namespace: a
    pod template's generateName, or the creationTimestamp: null that generators write, are unknown fields."""
    obj = jobset()
    obj["spec"]["replicatedJobs"][0]["template"]["metadata"] = {"generateName": "x-"}
    obj["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"] = {"creationTimestamp": None,
                                                                                    "labels": {"a": "b"}}
    assert sorted(admit_schema(JOBSET, obj)) == [
        ("schema-unknown-field",
         'strict decoding error: unknown field "spec.replicatedJobs[0].template.metadata.generateName"'),
        ("schema-unknown-field",
         'strict decoding error: unknown field "spec.replicatedJobs[0].template.spec.template.metadata.'
         'creationTimestamp"'),
    ]


def test_quirk_duplicate_env_names_rejected_in_a_jobset_but_not_in_a_job() -> None:
    """The JobSet CRD makes env a list-map keyed by name; a built-in Job only warns about duplicates."""
    env = [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]
    assert admit_schema(JOBSET, jobset(pod={"containers": [container(env=env)]})) == [
        ("schema-duplicate", f'{POD}.containers[0].env[1]: Duplicate value: {{"name":"A"}}'),
    ]
    assert admit_job(job(pod={"containers": [container(env=env)]})) == []


def test_quirk_fractional_cpu_number_rejected_in_a_jobset_but_not_in_a_job() -> None:
    """A Quantity in a CRD is int-or-string: the number 0.5 fails the type and the anyOf (derived from code);
    a Job's Go decoder parses the number as a quantity."""
    cpu = f"{POD}.containers[0].resources.requests.cpu"
    resources = {"requests": {"cpu": 0.5}}
    assert admit_schema(JOBSET, jobset(pod={"containers": [container(resources=resources)]})) == [
        ("schema-type", f'{cpu}: Invalid value: "number": {cpu} in body must be of type integer,string: "number"'),
        ("schema-type", f'<nil>: Invalid value: "": "{cpu}" must validate at least one schema (anyOf)'),
        ("schema-type", f'{cpu}: Invalid value: "number": {cpu} in body must be of type integer: "number"'),
    ]
    assert admit_job(job(pod={"containers": [container(resources=resources)]})) == []
    [first, composite, _] = authored_schema(JOBSET, V).validate(jobset(pod={"containers": [container(
        resources=resources)]}))
    assert first.hint == composite.hint == (
        'a custom resource takes an int-or-string here (a quantity, a port), not a fraction: quote it ("0.5") '
        'or use a suffix such as "500m"'
    )


def test_bad_quantity_string_messages_differ_between_crd_and_builtin() -> None:
    resources = {"limits": {"memory": "1GB"}}
    memory = f"{POD}.containers[0].resources.limits.memory"
    assert admit_schema(JOBSET, jobset(pod={"containers": [container(resources=resources)]})) == [
        ("schema-pattern", f'{memory}: Invalid value: "1GB": {memory} in body should match \'{QUANTITY_CRD_PATTERN}\''),
    ]
    job_memory = "spec.template.spec.containers[0].resources.limits.memory"
    assert admit_job(job(pod={"containers": [container(resources=resources)]})) == [
        ("schema-pattern", f'{job_memory}: Invalid value: "1GB": {QUANTITY_ERROR}'),
    ]


def test_quirk_int32_overflow_passes_a_jobset_but_not_a_job() -> None:
    """Custom resources drop int32 formats; the Job decoder fails. The Go error text is our best reading of
    encoding/json's UnmarshalTypeError (unsure about the struct/field part)."""
    big = 3_000_000_000
    assert admit_schema(JOBSET, jobset({"template": {"spec": {"parallelism": big, "template": {
        "spec": {"containers": [container()]}}}}})) == []
    assert admit_job(job(parallelism=big)) == [(
        "schema-format",
        "json: cannot unmarshal number 3000000000 into Go struct field JobSpec.spec.parallelism of type int32",
    )]


def test_builtin_kinds_accept_null_for_optional_fields() -> None:
    """Go decodes null as the zero value; kubernetes-validate marks optional fields nullable."""
    assert admit_job(job(parallelism=None, pod={"nodeSelector": None})) == []


TRAINJOB_BASE: dict[str, Any] = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": "tj"},
    "spec": {"runtimeRef": {"name": "torch-distributed"}},
}


def trainjob(**spec: Any) -> dict[str, Any]:
    obj = copy.deepcopy(TRAINJOB_BASE)
    obj["spec"].update(spec)
    return obj


TRAINJOB_TABLE = [
    pytest.param(trainjob(), [], id="minimal"),
    pytest.param(trainjob(runtimeRef=None), [("schema-required", "spec.runtimeRef: Required value")],
                 id="runtime-ref-required"),
    pytest.param(
        trainjob(runtimeRef={"name": ""}),
        [("schema-length", 'spec.runtimeRef.name: Invalid value: "": spec.runtimeRef.name in body should be at '
                           "least 1 chars long")],
        id="runtime-ref-name-min-length",
    ),
    pytest.param(
        trainjob(trainer={"numNodes": -1}),
        [("schema-range", "spec.trainer.numNodes: Invalid value: -1: spec.trainer.numNodes in body should be "
                          "greater than or equal to 0")],
        id="num-nodes-minimum",
    ),
    pytest.param(trainjob(trainer={"numNodes": 0}), [], id="quirk-num-nodes-zero-accepted"),
    pytest.param(
        trainjob(activeDeadlineSeconds=0),
        [("schema-range", "spec.activeDeadlineSeconds: Invalid value: 0: spec.activeDeadlineSeconds in body should "
                          "be greater than or equal to 1")],
        id="active-deadline-minimum",
    ),
    pytest.param(trainjob(managedBy="x" * 254),
                 [("schema-length", "spec.managedBy: Too long: may not be more than 253 bytes")], id="managed-by-long"),
    pytest.param(
        trainjob(trainer={"command": ["x"] * 129}),
        [("schema-items", "spec.trainer.command: Too many: 129: must have at most 128 items")],
        id="command-max-items",
    ),
    pytest.param(
        trainjob(runtimePatches=[{"manager": "a.io/x", "time": "now"}]),
        [("schema-format", 'spec.runtimePatches[0].time: Invalid value: "now": spec.runtimePatches[0].time in body '
                           'must be of type date-time: "now"')],
        id="patch-time-format",
    ),
    pytest.param(
        trainjob(runtimePatches=[{"manager": "a.io/x"}, {"manager": "a.io/x"}]),
        [("schema-duplicate", 'spec.runtimePatches[1]: Duplicate value: {"manager":"a.io/x"}')],
        id="patch-manager-duplicate",
    ),
    pytest.param(
        trainjob(labels={"a": "b"}),
        [("schema-unknown-field", 'strict decoding error: unknown field "spec.labels"')],
        id="v2.1-labels-removed",
    ),
    pytest.param(
        trainjob(runtimePatches=[{"manager": "a.io/x", "trainingRuntimeSpec": {"template": {"spec": {
            "replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": {
                "containers": [{"name": "node", "image": "x"}]}}}}}]}}}}]),
        [("schema-unknown-field", 'strict decoding error: unknown field "spec.runtimePatches[0].trainingRuntimeSpec.'
                                  'template.spec.replicatedJobs[0].template.spec.template.spec.containers[0].image"')],
        id="container-patch-has-no-image",
    ),
]


@pytest.mark.parametrize(("obj", "expected"), TRAINJOB_TABLE)
def test_trainjob_table(obj: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert admit_schema(TRAINJOB, obj) == expected


def runtime(kind: str = "TrainingRuntime", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": kind, "metadata": {"name": "rt"}, "spec": spec}


RUNTIME_TABLE = [
    pytest.param(runtime(mlPolicy={"numNodes": 1}), [], id="minimal"),
    pytest.param(runtime(), [("schema-properties", "spec: Invalid value: 0: spec in body should have at least 1 "
                                                   "properties")], id="spec-min-properties"),
    pytest.param(runtime(template={}), [("schema-properties", "spec.template: Invalid value: 0: spec.template in body "
                                                              "should have at least 1 properties")],
                 id="template-min-properties"),
    pytest.param(
        runtime(mlPolicy={"mpi": {"mpiImplementation": "Intel"}}),
        [("schema-enum", 'spec.mlPolicy.mpi.mpiImplementation: Unsupported value: "Intel": supported values: '
                         '"OpenMPI", ""')],
        id="mpi-implementation-enum",
    ),
    pytest.param(runtime(mlPolicy={"mpi": {"mpiImplementation": ""}}), [], id="quirk-mpi-empty-implementation-passes"),
    pytest.param(
        runtime(mlPolicy={"torch": {"numProcPerNode": "auto"}}),
        [("schema-unknown-field", 'strict decoding error: unknown field "spec.mlPolicy.torch.numProcPerNode"')],
        id="v2.1-torch-num-proc-removed",
    ),
    pytest.param(
        runtime(mlPolicy={"jax": {"anything": 1}}),
        [("schema-unknown-field", 'strict decoding error: unknown field "spec.mlPolicy.jax.anything"')],
        id="empty-struct-has-no-fields",
    ),
    pytest.param(
        runtime(mlPolicy={"torch": {"envInjection": {"targets": [{"jobName": "node", "containerNames": []}]}}}),
        [("schema-items", "spec.mlPolicy.torch.envInjection.targets[0].containerNames: Invalid value: 0: "
                          "spec.mlPolicy.torch.envInjection.targets[0].containerNames in body should have at least "
                          "1 items")],
        id="container-names-min-items",
    ),
    pytest.param(
        runtime(mlPolicy={"torch": {"envInjection": {"targets": [{"jobName": "j", "containerNames": ["a", "a"]}]}}}),
        [("schema-duplicate", 'spec.mlPolicy.torch.envInjection.targets[0].containerNames[1]: Duplicate value: "a"')],
        id="container-names-set",
    ),
    pytest.param(
        runtime(podGroupPolicy={"volcano": {"networkTopology": {"mode": "strict"}}}),
        [("schema-enum", 'spec.podGroupPolicy.volcano.networkTopology.mode: Unsupported value: "strict": supported '
                         'values: "hard", "soft"')],
        id="volcano-mode-enum",
    ),
]


@pytest.mark.parametrize("name", [RUNTIME, CLUSTER_RUNTIME])
@pytest.mark.parametrize(("obj", "expected"), RUNTIME_TABLE)
def test_runtime_table(name: str, obj: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert admit_schema(name, obj) == expected


def test_quirk_runtime_embeds_the_older_jobset_schema() -> None:
    """Trainer pins jobset v0.12, whose CRD has no minimum on replicas (#1279 came later): a runtime accepts
    replicas -1 that a JobSet rejects (trainer.md §0, jobset.md §6 #11)."""
    js = jobset({"replicas": -1})
    rt = runtime(template={"spec": js["spec"]})
    assert admit_schema(RUNTIME, rt) == []
    assert [r for r, _ in admit_schema(JOBSET, js)] == ["schema-range"]


def test_runtime_template_carries_the_jobset_cel_rules() -> None:
    """trainer.md §1.5: the embedded JobSet spec keeps its CEL (for the CEL layer to evaluate)."""
    node = authored_schema(RUNTIME, V).node_at(("spec", "template", "spec"))
    assert node is not None
    assert [r.message for r in node.validations] == ["StartupPolicy and DependsOn APIs are mutually exclusive"]
