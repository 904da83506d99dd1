"""Schema defaulting and null pruning as apiextensions-apiserver applies them (jobset.md §1.1,
trainer.md §2.1, §3.3; upstream ``pkg/apiserver/schema/defaulting/{prunenulls,algorithm}.go``).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jobsetctl.admission.schema import authored_schema, builtin_schema, compile_openapi
from jobsetctl.kube.versions import KubeVersion

V = KubeVersion.V1_37

SCHEMA = compile_openapi(
    {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "mode": {"type": "string", "default": "a"},
                    "keep": {"type": "string", "nullable": True, "default": "k"},
                    "plain": {"type": "string"},
                    "obj": {"type": "object", "default": {"inner": [1]},
                            "properties": {"inner": {"type": "array", "items": {"type": "integer"}},
                                           "deep": {"type": "integer", "default": 7}}},
                    "list": {"type": "array", "items": {"type": "string"}},
                    "map": {"type": "object", "additionalProperties": {"type": "string"}},
                },
            },
        },
    },
    "defaults",
    V,
)

DEFAULTS_TABLE = [
    pytest.param({}, {"mode": "a", "keep": "k", "obj": {"inner": [1], "deep": 7}}, id="absent-keys-defaulted"),
    pytest.param({"mode": "b"}, {"mode": "b", "keep": "k", "obj": {"inner": [1], "deep": 7}}, id="value-kept"),
    pytest.param({"mode": None}, {"mode": "a", "keep": "k", "obj": {"inner": [1], "deep": 7}},
                 id="non-nullable-null-defaulted"),
    pytest.param({"keep": None}, {"mode": "a", "keep": None, "obj": {"inner": [1], "deep": 7}},
                 id="nullable-null-kept"),
    pytest.param({"plain": None}, {"mode": "a", "keep": "k", "obj": {"inner": [1], "deep": 7}},
                 id="null-without-default-pruned"),
    pytest.param({"list": [None, "x"]}, {"mode": "a", "keep": "k", "obj": {"inner": [1], "deep": 7},
                                         "list": [None, "x"]}, id="null-in-list-kept"),
    pytest.param({"map": {"a": None, "b": "x"}}, {"mode": "a", "keep": "k", "obj": {"inner": [1], "deep": 7},
                                                  "map": {"b": "x"}}, id="null-map-value-pruned"),
    pytest.param({"obj": {}}, {"mode": "a", "keep": "k", "obj": {"deep": 7}}, id="nested-default-in-given-object"),
]


@pytest.mark.parametrize(("spec", "expected"), DEFAULTS_TABLE)
def test_defaults_table(spec: dict[str, Any], expected: dict[str, Any]) -> None:
    obj = {"spec": copy.deepcopy(spec)}
    SCHEMA.apply_defaults(obj)
    assert obj == {"spec": expected}


def test_defaults_are_deep_copies() -> None:
    first: dict[str, Any] = {"spec": {}}
    second: dict[str, Any] = {"spec": {}}
    SCHEMA.apply_defaults(first)
    first["spec"]["obj"]["inner"].append(2)
    SCHEMA.apply_defaults(second)
    assert second["spec"]["obj"]["inner"] == [1]


def test_quirk_pruned_null_of_a_required_field_becomes_required_value() -> None:
    """The API server prunes the null before validation, so users see Required, not a type error."""
    schema = compile_openapi({"type": "object", "properties": {"spec": {
        "type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}}}, "r", V)
    obj: dict[str, Any] = {"spec": {"name": None}}
    schema.apply_defaults(obj)
    assert [f.message for f in schema.validate(obj)] == ["spec.name: Required value"]


def test_builtin_kinds_keep_nulls_and_have_no_schema_defaults() -> None:
    """Built-in defaults are hand-written defaulting functions (each kind's handler), not schema defaults."""
    schema = builtin_schema("io.k8s.api.batch.v1.Job", V)
    obj = {"spec": {"parallelism": None, "template": {"spec": {"containers": [{"name": "c", "ports": [
        {"containerPort": 80}]}]}}}}
    before = copy.deepcopy(obj)
    schema.apply_defaults(obj)
    assert obj == before
    assert not schema.root.has_defaults


def jobset_obj(**spec: Any) -> dict[str, Any]:
    pod = {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}]}],
           "initContainers": [{"name": "i", "image": "i", "ports": [{"containerPort": 81}]}]}
    rj = {"name": "rj", "template": {"spec": {"template": {"spec": pod}}}}
    return {"spec": {"replicatedJobs": [rj], **spec}}


def test_jobset_crd_defaults_jobset_md_1_1() -> None:
    obj = jobset_obj(failurePolicy={}, volumeClaimPolicies=[{"retentionPolicy": {}}, {}])
    authored_schema("jobset.x-k8s.io_v1alpha2_JobSet", V).apply_defaults(obj)
    spec = obj["spec"]
    rj = spec["replicatedJobs"][0]
    assert (rj["replicas"], rj["groupName"]) == (1, "default")
    assert spec["failurePolicy"] == {"restartStrategy": "Recreate"}
    # only when retentionPolicy is present: a missing one is the webhook's to default (jobset.md §1.1 #2)
    assert spec["volumeClaimPolicies"] == [{"retentionPolicy": {"whenDeleted": "Delete"}}, {}]
    pod = rj["template"]["spec"]["template"]["spec"]
    assert pod["containers"][0]["ports"][0]["protocol"] == "TCP"
    assert pod["initContainers"][0]["ports"][0]["protocol"] == "TCP"
    # Not defaulted by the CRD: the webhook's job (successPolicy, startupPolicy, network, completionMode).
    assert set(spec) == {"replicatedJobs", "failurePolicy", "volumeClaimPolicies"}
    assert "completionMode" not in rj["template"]["spec"]


def test_jobset_without_failure_policy_gets_no_restart_strategy() -> None:
    obj = jobset_obj()
    authored_schema("jobset.x-k8s.io_v1alpha2_JobSet", V).apply_defaults(obj)
    assert "failurePolicy" not in obj["spec"]


def test_embedded_kubernetes_defaults_match_the_crd() -> None:
    """The +default markers of k8s.io/api that controller-gen carries into the CRD (our overlay)."""
    pod = {
        "containers": [{"name": "c", "envFrom": [{"configMapRef": {}}, {"secretRef": {}}],
                        "env": [{"name": "E", "valueFrom": {"secretKeyRef": {"key": "k"}}}],
                        "readinessProbe": {"grpc": {"port": 1}}}],
        "imagePullSecrets": [{}],
        "volumes": [{"name": "v", "rbd": {"monitors": ["m"], "image": "i"}}, {"name": "w", "configMap": {}}],
    }
    obj = {"spec": {"replicatedJobs": [{"name": "rj", "template": {"spec": {"template": {"spec": pod}}}}]}}
    authored_schema("jobset.x-k8s.io_v1alpha2_JobSet", V).apply_defaults(obj)
    c = pod["containers"][0]
    assert c["envFrom"] == [{"configMapRef": {"name": ""}}, {"secretRef": {"name": ""}}]
    assert c["env"][0]["valueFrom"]["secretKeyRef"] == {"key": "k", "name": ""}
    assert c["readinessProbe"]["grpc"] == {"port": 1, "service": ""}
    assert pod["imagePullSecrets"] == [{"name": ""}]
    assert pod["volumes"][0]["rbd"] == {"monitors": ["m"], "image": "i", "keyring": "/etc/ceph/keyring",
                                        "pool": "rbd", "user": "admin"}
    assert pod["volumes"][1]["configMap"] == {"name": ""}


def test_trainjob_crd_defaults_trainer_md_3_3() -> None:
    obj = {"spec": {"runtimeRef": {"name": "torch"}, "initializer": {"dataset": {"secretRef": {}}}}}
    authored_schema("trainer.kubeflow.org_v1alpha1_TrainJob", V).apply_defaults(obj)
    assert obj["spec"] == {
        "runtimeRef": {"name": "torch", "apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime"},
        "initializer": {"dataset": {"secretRef": {"name": ""}}},
        "suspend": False,
        "managedBy": "trainer.kubeflow.org/trainjob-controller",
    }


@pytest.mark.parametrize("name", ["trainer.kubeflow.org_v1alpha1_TrainingRuntime",
                                  "trainer.kubeflow.org_v1alpha1_ClusterTrainingRuntime"])
def test_runtime_crd_defaults_trainer_md_3_3(name: str) -> None:
    obj = {"spec": {
        "mlPolicy": {"mpi": {}, "flux": {}},
        "podGroupPolicy": {"coscheduling": {}, "volcano": {"networkTopology": {}}},
        "template": {"spec": {"replicatedJobs": [{"name": "node", "template": {}}]}},
    }}
    authored_schema(name, V).apply_defaults(obj)
    spec = obj["spec"]
    assert spec["mlPolicy"]["mpi"] == {"numProcPerNode": 1, "mpiImplementation": "OpenMPI",
                                       "sshAuthMountPath": "/root/.ssh", "runLauncherAsNode": False}
    assert spec["mlPolicy"]["flux"] == {"numProcPerNode": 1}
    assert spec["podGroupPolicy"] == {"coscheduling": {"scheduleTimeoutSeconds": 60},
                                      "volcano": {"networkTopology": {"mode": "hard", "highestTierAllowed": 1}}}
    rj = spec["template"]["spec"]["replicatedJobs"][0]
    assert (rj["replicas"], rj["groupName"]) == (1, "default")
    assert "numNodes" not in spec["mlPolicy"]  # no CRD default: the code treats nil as 1 (trainer.md §1.5)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(
        st.sampled_from(["spec", "replicatedJobs", "template", "replicas", "failurePolicy", "name", "x", "ports",
                         "containers", "metadata"]), children, max_size=4),
    max_leaves=25,
)


@settings(max_examples=200, deadline=None)
@given(JSON)
def test_defaulting_tolerates_any_shape_and_is_idempotent(value: Any) -> None:
    """Defaulting runs before validation, on whatever the user wrote: it must never fail."""
    schema = authored_schema("jobset.x-k8s.io_v1alpha2_JobSet", V)
    obj = {"spec": value}
    schema.apply_defaults(obj)
    once = copy.deepcopy(obj)
    schema.apply_defaults(obj)
    assert obj == once
