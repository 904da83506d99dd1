"""Conformance with the upstream CRDs and examples (skipped when ../shared/upstream is absent).

* Fidelity: our authored schemas, compiled, equal the upstream CRDs' ``openAPIV3Schema`` compiled with the
  same compiler: every property path, type, enum, default, bound, list type, map key and CEL rule. The CRDs
  embed k8s.io/api v0.36, so Kubernetes 1.36 matches exactly; for 1.35 and 1.37 the embedded Kubernetes
  types follow that release (by design), and only property sets under Kubernetes types may differ.
* Examples: every upstream JobSet example and Trainer runtime/example passes our schema, except where the
  spec predicts otherwise.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from jobsetctl.admission.schema import MISSING, SchemaNode, authored_schema, compile_openapi
from jobsetctl.kube.versions import KubeVersion
from jobsetctl.loader.yamlload import load_documents
from tests.helpers import UPSTREAM, requires_upstream

pytestmark = requires_upstream

SCHEMAS = {
    "JobSet": ("jobset/crd/jobset.x-k8s.io_jobsets.yaml", "jobset.x-k8s.io_v1alpha2_JobSet"),
    "TrainJob": ("trainer/crd/trainer.kubeflow.org_trainjobs.yaml", "trainer.kubeflow.org_v1alpha1_TrainJob"),
    "TrainingRuntime": ("trainer/crd/trainer.kubeflow.org_trainingruntimes.yaml",
                        "trainer.kubeflow.org_v1alpha1_TrainingRuntime"),
    "ClusterTrainingRuntime": ("trainer/crd/trainer.kubeflow.org_clustertrainingruntimes.yaml",
                               "trainer.kubeflow.org_v1alpha1_ClusterTrainingRuntime"),
}


def signature(node: SchemaNode) -> tuple[Any, ...]:
    return (
        tuple(sorted(node.types)), node.nullable, tuple(sorted(node.required)), node.enum,
        None if node.default is MISSING else repr(node.default), node.minimum, node.maximum,
        node.exclusive_minimum, node.exclusive_maximum, node.min_length, node.max_length, node.pattern,
        node.min_items, node.max_items, node.min_properties, node.max_properties, node.format,
        node.preserve_unknown, node.int_or_string, node.list_type, node.list_map_keys, node.map_type,
        tuple((r.rule, r.message) for r in node.validations),
    )


def flatten(node: SchemaNode, path: str = "", depth: int = 0) -> Iterator[tuple[str, tuple[Any, ...], bool]]:
    """(path, signature, under a Kubernetes type) for every node; root metadata and status are left out
    (the API server treats root metadata as ObjectMeta; we keep status loose on purpose)."""
    yield path, signature(node), bool(node.ref)
    if depth > 40:
        return
    for key, child in node.properties.items():
        if path == "" and key in ("metadata", "status"):
            continue
        for row in flatten(child, f"{path}.{key}", depth + 1):
            yield row[0], row[1], row[2] or bool(node.ref)
    if node.items is not None:
        for row in flatten(node.items, path + "[]", depth + 1):
            yield row[0], row[1], row[2] or bool(node.ref)
    if node.extra is not None:
        for row in flatten(node.extra, path + "{}", depth + 1):
            yield row[0], row[1], row[2] or bool(node.ref)


def compiled_pair(kind: str, version: KubeVersion) -> tuple[dict[str, Any], dict[str, Any]]:
    crd_file, ours = SCHEMAS[kind]
    crd = yaml.safe_load((UPSTREAM / crd_file).read_text())
    [served] = crd["spec"]["versions"]
    upstream = compile_openapi(served["schema"]["openAPIV3Schema"], kind, version)
    theirs = {p: (s, k) for p, s, k in flatten(upstream.root)}
    mine = {p: (s, k) for p, s, k in flatten(authored_schema(ours, version).root)}
    return theirs, mine


@pytest.mark.parametrize("kind", list(SCHEMAS))
def test_authored_schema_equals_upstream_crd_on_1_36(kind: str) -> None:
    theirs, mine = compiled_pair(kind, KubeVersion.V1_36)
    assert set(mine) == set(theirs)
    differing = {p: (theirs[p][0], mine[p][0]) for p in theirs if theirs[p][0] != mine[p][0]}
    assert differing == {}


@pytest.mark.parametrize("version", [KubeVersion.V1_35, KubeVersion.V1_37])
@pytest.mark.parametrize("kind", list(SCHEMAS))
def test_other_releases_differ_only_inside_kubernetes_types(kind: str, version: KubeVersion) -> None:
    theirs, mine = compiled_pair(kind, KubeVersion.V1_36)
    _, mine_now = compiled_pair(kind, version)
    own_paths = {p for p, (_, under_k8s) in mine.items() if not under_k8s}
    assert {p for p, (_, k) in mine_now.items() if not k} == own_paths
    assert all(mine_now[p][0] == theirs[p][0] for p in own_paths)
    # defaults and CEL rules agree wherever both releases have the path
    shared = set(mine_now) & set(theirs)
    for path in shared:
        assert mine_now[path][0][4] == theirs[path][0][4], path  # default
        assert mine_now[path][0][-1] == theirs[path][0][-1], path  # CEL rules


NAMES = {kind: ours for kind, (_, ours) in SCHEMAS.items()}


def upstream_objects() -> Iterator[tuple[str, int, dict[str, Any]]]:
    for path in sorted(UPSTREAM.rglob("*.yaml")) if UPSTREAM.is_dir() else []:
        if "/crd/" in str(path):
            continue
        documents, _ = load_documents(path.read_text(), str(path))
        for index, document in enumerate(documents):
            value = document.value
            if isinstance(value, dict) and value.get("kind") in NAMES:
                yield str(path.relative_to(UPSTREAM)), index, value


def predicted(relative: str, obj: dict[str, Any], version: KubeVersion) -> list[str]:
    """Schema findings the spec predicts for an upstream example when checked by the schema alone."""
    out: list[str] = []
    rules = ((obj.get("spec") or {}).get("failurePolicy") or {}).get("rules") or []
    for i, rule in enumerate(rules):
        if isinstance(rule, dict) and "name" not in rule:
            # The mutating webhook names unnamed rules before schema validation (jobset.md §1.1 #2-#3).
            out.append(f"spec.failurePolicy.rules[{i}].name: Required value")
    if version is KubeVersion.V1_35 and relative.startswith("jobset/examples/workload-aware-scheduling"):
        # The pod's schedulingGroup is a 1.36 field (scheduling.md §1.1): unknown to a 1.35 pod template.
        for j, rj in enumerate(obj["spec"]["replicatedJobs"]):
            if "schedulingGroup" in rj["template"]["spec"]["template"]["spec"]:
                out.append(f'strict decoding error: unknown field "spec.replicatedJobs[{j}].template.spec.'
                           f'template.spec.schedulingGroup"')
    return out


OBJECTS = list(upstream_objects())


def test_upstream_examples_are_found() -> None:
    kinds = {obj["kind"] for _, _, obj in OBJECTS}
    assert kinds == set(NAMES)
    assert len(OBJECTS) >= 40


@pytest.mark.parametrize("version", list(KubeVersion))
@pytest.mark.parametrize(("relative", "index", "obj"), OBJECTS, ids=[f"{r}#{i}" for r, i, _ in OBJECTS])
def test_upstream_example_passes_schema(relative: str, index: int, obj: dict[str, Any], version: KubeVersion) -> None:
    schema = authored_schema(NAMES[obj["kind"]], version)
    admitted = copy.deepcopy(obj)
    schema.apply_defaults(admitted)
    assert [f.message for f in schema.validate(admitted)] == predicted(relative, obj, version)

