"""The schema compiler: keywords, references, the embedded/native modes, sharing and recursion."""

from __future__ import annotations

from typing import Any

import pytest

from jobsetctl.admission.schema import (
    MISSING,
    SchemaError,
    authored_schema,
    builtin_schema,
    compile_openapi,
    embedded_definition,
)
from jobsetctl.admission.schema_compile import QUANTITY_CRD_PATTERN
from jobsetctl.kube.versions import KubeVersion

V = KubeVersion.V1_37


def compile_spec(spec: dict[str, Any], **root: Any) -> Any:
    schema = compile_openapi({"type": "object", "properties": {"spec": spec}, **root}, "t", V)
    node = schema.node_at(("spec",))
    assert node is not None
    return node


def test_keywords_compile_to_node_fields() -> None:
    node = compile_spec({
        "type": ["string", "null"], "enum": ["a", "b"], "minLength": 1, "maxLength": 9, "pattern": "^a",
        "format": "date-time", "default": "a",
        "x-kubernetes-validations": [{"rule": "self != 'b'", "message": "m", "messageExpression": "'e'",
                                      "reason": "FieldValueForbidden", "fieldPath": ".x", "optionalOldSelf": True}],
    })
    assert (node.types, node.nullable, node.enum, node.min_length, node.max_length) == (
        frozenset({"string"}), True, ("a", "b"), 1, 9)
    assert (node.pattern, node.format, node.default) == ("^a", "date-time", "a")
    [rule] = node.validations
    assert (rule.rule, rule.message, rule.message_expression, rule.reason, rule.field_path, rule.optional_old_self) \
        == ("self != 'b'", "m", "'e'", "FieldValueForbidden", ".x", True)
    assert node.has_defaults and node.has_validations


def test_list_and_map_extensions() -> None:
    node = compile_spec({
        "type": "object",
        "x-kubernetes-map-type": "atomic",
        "properties": {"l": {"type": "array", "x-kubernetes-list-type": "map",
                             "x-kubernetes-list-map-keys": ["name", "port"], "minItems": 1, "maxItems": 3,
                             "items": {"type": "object"}}},
        "minProperties": 1,
        "maxProperties": 4,
    })
    items = node.properties["l"]
    assert (items.list_type, items.list_map_keys, items.min_items, items.max_items) == ("map", ("name", "port"), 1, 3)
    assert (node.map_type, node.min_properties, node.max_properties) == ("atomic", 1, 4)


def test_int_or_string_and_preserve_unknown_and_embedded_resource() -> None:
    node = compile_spec({"type": "object", "properties": {
        "ios": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        "res": {"type": "object", "x-kubernetes-embedded-resource": True, "properties": {"spec": {"type": "object"}}},
    }})
    ios = node.properties["ios"]
    assert ios.int_or_string and ios.types == frozenset({"integer", "string"}) and len(ios.any_of) == 2
    assert node.properties["free"].preserve_unknown
    assert set(node.properties["res"].properties) == {"apiVersion", "kind", "metadata", "spec"}


def test_local_and_cross_file_refs_with_patch_and_siblings() -> None:
    runtime = authored_schema("trainer.kubeflow.org_v1alpha1_TrainingRuntime", V)
    jobset = authored_schema("jobset.x-k8s.io_v1alpha2_JobSet", V)
    path = ("spec", "replicatedJobs", 0, "replicas")
    js_replicas = jobset.node_at(path)
    rt_replicas = runtime.node_at(("spec", "template", *path))
    assert js_replicas is not None and rt_replicas is not None
    assert (js_replicas.minimum, rt_replicas.minimum) == (0, None)  # x-jobsetctl-patch removed it
    # a $ref with sibling x-kubernetes-validations: the PodSecurityContext ref in TrainJob's PodSpecPatch
    trainjob = authored_schema("trainer.kubeflow.org_v1alpha1_TrainJob", V)
    patch = ("spec", "runtimePatches", 0, "trainingRuntimeSpec", "template", "spec", "replicatedJobs", 0,
             "template", "spec", "template", "spec", "securityContext")
    node = trainjob.node_at(patch)
    assert node is not None and node.ref == "io.k8s.api.core.v1.PodSecurityContext"
    assert [r.message for r in node.validations] == ["field is immutable"]
    shared = embedded_definition("io.k8s.api.core.v1.PodSecurityContext", V)
    assert shared.validations == ()  # the override copied the shared node instead of changing it


def test_kubernetes_validate_top_level_file_compiles() -> None:
    """A kubernetes-validate file refers to ``/api/_definitions.json#/$defs/...`` (built-in semantics)."""
    import json

    from jobsetctl.kube.versions import schema_dir

    with open(f"{schema_dir(V)}/job-batch-v1.json", encoding="utf-8") as handle:
        document = json.load(handle)
    schema = compile_openapi(document, "job-batch-v1", V)
    spec = schema.node_at(("spec",))
    assert spec is builtin_schema("io.k8s.api.batch.v1.JobSpec", V).root
    findings = schema.validate({"apiVersion": "batch/v1", "kind": "Job", "spec": {"parallelism": "2"}})
    assert [f.path for f in findings] == ["spec.parallelism", "spec.template"]


def test_k8s_definitions_are_shared_per_release_and_mode() -> None:
    a = embedded_definition("io.k8s.api.core.v1.PodSpec", V)
    b = embedded_definition("io.k8s.api.core.v1.PodSpec", V)
    native = builtin_schema("io.k8s.api.core.v1.PodSpec", V).root
    other = embedded_definition("io.k8s.api.core.v1.PodSpec", KubeVersion.V1_36)
    assert a is b
    assert native is not a and other is not a


def test_recursive_definitions_terminate_and_validate() -> None:
    """JSONSchemaProps refers to itself (properties, items, allOf...): one shared node per definition."""
    schema = builtin_schema("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps", V)
    props = schema.root.properties["properties"].extra
    assert props is schema.root
    nested = {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": 3}}}}}
    [finding] = schema.validate(nested)
    assert finding.path == "properties.a.properties.b.type"


def test_embedded_mode_differs_from_native_mode() -> None:
    """Embedded (controller-gen in a CRD) vs native (the Go decoder of a built-in kind)."""
    embedded = embedded_definition("io.k8s.api.core.v1.PersistentVolumeClaim", V)
    native = builtin_schema("io.k8s.api.core.v1.PersistentVolumeClaim", V).root
    assert native.properties["apiVersion"].enum == ("v1",)
    assert embedded.properties["apiVersion"].enum is None
    assert native.properties["spec"].nullable and not embedded.properties["spec"].nullable
    assert set(embedded.properties["metadata"].properties) == {"annotations", "finalizers", "labels", "name",
                                                                "namespace"}
    quantity = embedded.properties["spec"].properties["resources"].properties["requests"].extra
    assert quantity is not None and quantity.int_or_string and quantity.pattern == QUANTITY_CRD_PATTERN
    native_quantity = native.properties["spec"].properties["resources"].properties["requests"].extra
    assert native_quantity is not None and native_quantity.quantity and not native_quantity.any_of


def test_overlay_defaults_do_not_leak_into_native_mode() -> None:
    embedded = embedded_definition("io.k8s.api.core.v1.ContainerPort", V)
    native = builtin_schema("io.k8s.api.core.v1.ContainerPort", V).root
    assert embedded.properties["protocol"].default == "TCP"
    assert native.properties["protocol"].default is MISSING


def test_has_defaults_prunes_whole_subtrees() -> None:
    schema = authored_schema("jobset.x-k8s.io_v1alpha2_JobSet", V)
    spec = schema.node_at(("spec",))
    assert spec is not None and spec.has_defaults
    assert not spec.properties["successPolicy"].has_defaults
    assert spec.properties["successPolicy"].has_validations
    coordinator = spec.properties["coordinator"]
    assert not coordinator.has_defaults and not coordinator.has_validations


def test_root_metadata_of_a_crd_is_full_object_meta() -> None:
    """A CRD's ``metadata: {type: object}`` is coerced to ObjectMeta by the API server, not pruned."""
    schema = compile_openapi({"type": "object", "properties": {"metadata": {"type": "object"}}}, "t", V)
    assert schema.validate({"metadata": {"name": "x", "labels": {"a": "b"}, "generateName": "g-"}}) == []
    [finding] = schema.validate({"metadata": {"nmae": "x"}})
    assert finding.message == 'strict decoding error: unknown field "metadata.nmae"'


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}},
        {"type": "object", "properties": {"a": {"$ref": "k8s:io.k8s.api.core.v1.NoSuchThing"}}},
        {"type": "object", "properties": {"a": {"$ref": "http://example.com/x"}}},
    ],
    ids=["local", "k8s", "remote"],
)
def test_unresolvable_refs_raise_schema_error(schema: dict[str, Any]) -> None:
    with pytest.raises(SchemaError):
        compile_openapi(schema, "t", V)


def test_node_at_follows_properties_items_and_additional_properties() -> None:
    schema = authored_schema("jobset.x-k8s.io_v1alpha2_JobSet", V)
    node = schema.node_at(("spec", "replicatedJobs", 3, "template", "spec", "template", "metadata", "labels", "x"))
    assert node is not None and node.types == frozenset({"string"})
    assert schema.node_at(("spec", "nope")) is None
