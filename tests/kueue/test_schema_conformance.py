"""Our authored Kueue schemas against the upstream CRDs (skipped when ../shared/upstream is absent).

The same comparison as tests/admission/test_schema_conformance.py for JobSet and Trainer: every property
path, type, enum, default, bound, list type, map key and CEL rule of ``spec`` (and of the root, and of
top-level fields such as WorkloadPriorityClass ``value``) equals what the CRD's ``openAPIV3Schema`` compiles
to, for both served versions. The Kueue CRDs embed k8s.io/api v0.36 types (a Workload's pod template):
Kubernetes 1.36 matches exactly; other releases differ only inside Kubernetes types.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from jobsetctl.admission.schema import authored_schema, compile_openapi
from jobsetctl.kube.versions import KubeVersion
from jobsetctl.kueue import api
from jobsetctl.kueue.versions import schema_name
from tests.admission.test_schema_conformance import flatten
from tests.helpers import UPSTREAM, requires_upstream

pytestmark = requires_upstream

CRD_FILES = {
    "ClusterQueue": "kueue.x-k8s.io_clusterqueues.yaml",
    "LocalQueue": "kueue.x-k8s.io_localqueues.yaml",
    "Cohort": "kueue.x-k8s.io_cohorts.yaml",
    "ResourceFlavor": "kueue.x-k8s.io_resourceflavors.yaml",
    "WorkloadPriorityClass": "kueue.x-k8s.io_workloadpriorityclasses.yaml",
    "Topology": "kueue.x-k8s.io_topologies.yaml",
    "AdmissionCheck": "kueue.x-k8s.io_admissionchecks.yaml",
    "Workload": "kueue.x-k8s.io_workloads.yaml",
}
CASES = [(kind, version) for kind in CRD_FILES for version in api.VERSIONS]


def _crd_version(kind: str, version: str) -> dict[str, Any]:
    crd = yaml.safe_load((UPSTREAM / "kueue" / "crd" / CRD_FILES[kind]).read_text())
    [served] = [v for v in crd["spec"]["versions"] if v["name"] == version]
    assert served["served"] is True
    return served


def compiled_pair(kind: str, version: str, kube: KubeVersion) -> tuple[dict[str, Any], dict[str, Any]]:
    served = _crd_version(kind, version)
    upstream = compile_openapi(served["schema"]["openAPIV3Schema"], kind, kube)
    theirs = {p: (s, k) for p, s, k in flatten(upstream.root)}
    mine = {p: (s, k) for p, s, k in flatten(authored_schema(schema_name(kind, version), kube).root)}
    return theirs, mine


@pytest.mark.parametrize(("kind", "version"), CASES)
def test_authored_schema_equals_upstream_crd_on_1_36(kind: str, version: str) -> None:
    theirs, mine = compiled_pair(kind, version, KubeVersion.V1_36)
    assert sorted(set(mine) ^ set(theirs)) == []
    differing = {p: (theirs[p][0], mine[p][0]) for p in theirs if theirs[p][0] != mine[p][0]}
    assert differing == {}


@pytest.mark.parametrize("kube", [KubeVersion.V1_35, KubeVersion.V1_37])
@pytest.mark.parametrize(("kind", "version"), CASES)
def test_other_releases_differ_only_inside_kubernetes_types(kind: str, version: str, kube: KubeVersion) -> None:
    theirs, mine = compiled_pair(kind, version, KubeVersion.V1_36)
    _, mine_now = compiled_pair(kind, version, kube)
    own = {p for p, (_, under_k8s) in mine.items() if not under_k8s}
    assert {p for p, (_, k) in mine_now.items() if not k} == own
    assert [p for p in sorted(own) if mine_now[p][0] != theirs[p][0]] == []


@pytest.mark.parametrize(("kind", "version"), CASES)
def test_storage_version_is_v1beta2(kind: str, version: str) -> None:
    assert _crd_version(kind, version)["storage"] is (version == api.STORAGE_VERSION)


def _status_rows(node: Any) -> dict[str, Any]:
    status = node.properties["status"]
    return {p: s for p, s, _ in flatten(status, ".status")}


@pytest.mark.parametrize("version", api.VERSIONS)
def test_workload_status_equals_upstream(version: str) -> None:
    # The Workload status is typed (the root CEL rules read it; Kueue's controllers write it), so it is
    # compared too; the other kinds keep a loose status, as JobSet and Trainer do.
    served = _crd_version("Workload", version)
    upstream = compile_openapi(served["schema"]["openAPIV3Schema"], "Workload", KubeVersion.V1_36)
    mine = authored_schema(schema_name("Workload", version), KubeVersion.V1_36)
    theirs, ours = _status_rows(upstream.root), _status_rows(mine.root)
    assert sorted(set(theirs) ^ set(ours)) == []
    assert {p: (theirs[p], ours[p]) for p in theirs if theirs[p] != ours[p]} == {}
