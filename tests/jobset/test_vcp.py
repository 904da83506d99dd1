"""volumeClaimPolicies checks (jobset.md §2.2 #21-#26): template names, PVC names, mounts, and PVCs that
already exist (PVC manifests among the inputs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jobsetctl.kube.names import DNS1123_SUBDOMAIN_ERROR
from tests.helpers import validate_files
from tests.jobset.builders import jobset, rjob, rule_ids, rules_and_messages, to_yaml


def _mounting(*names: str, init: bool = False, volumes: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    container = {"name": "c", "image": "i", "volumeMounts": [{"name": n, "mountPath": f"/{n}"} for n in names]}
    pod_spec: dict[str, Any] = {"initContainers": [container]} if init else {"containers": [container]}
    if volumes:
        pod_spec["volumes"] = volumes
    return rjob(pod_spec=pod_spec)


def _policy(*names: str, **fields: Any) -> dict[str, Any]:
    return {"templates": [{"metadata": {"name": n}, "spec": {"accessModes": ["ReadWriteOnce"]}} for n in names], **fields}


FAILING = [
    pytest.param(
        jobset(_mounting("Data"), volumeClaimPolicies=[_policy("Data")]),
        [("jobset-vcp-template-name",
          f'spec.volumeClaimPolicies[0].template[0].name: Invalid value: "Data": {DNS1123_SUBDOMAIN_ERROR}')],
        id="22-template-name",
    ),
    pytest.param(
        jobset(_mounting("t" * 61), volumeClaimPolicies=[_policy("t" * 61)]),
        [("jobset-vcp-pvc-name-length", f'spec.volumeClaimPolicies[0].template[0].name: Invalid value: "{"t" * 61}": '
          "VolumeClaimPolicies template name is too long")],
        id="23-pvc-name-64",
    ),
    pytest.param(
        jobset(_mounting("data", volumes=[{"name": "scratch", "emptyDir": {}}, {"name": "data", "emptyDir": {}}]),
               volumeClaimPolicies=[_policy("data")]),
        [("jobset-vcp-volume-conflict", 'spec.replicatedJobs[0].template.spec.template.spec.volumes[1].name: '
          'Invalid value: "data": volume name conflicts with VolumeClaimPolicy template name: data')],
        id="24-volume-conflict",
    ),
]


@pytest.mark.parametrize(("obj", "expected"), FAILING)
def test_failing(obj: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert rules_and_messages(obj) == expected


@pytest.mark.parametrize("obj", [
    pytest.param(jobset(_mounting("data"), volumeClaimPolicies=[_policy("data")]), id="mounted"),
    pytest.param(jobset(_mounting("data", init=True), volumeClaimPolicies=[_policy("data")]), id="mounted-by-init"),
    pytest.param(jobset(rjob("a"), _mounting("data") | {"name": "b"}, volumeClaimPolicies=[_policy("data")]),
                 id="mounted-by-another-replicated-job"),
    pytest.param(jobset(_mounting("t" * 60), volumeClaimPolicies=[_policy("t" * 60)]), id="23-pvc-name-63"),
    pytest.param(jobset(_mounting("a", "b"), volumeClaimPolicies=[_policy("a"), _policy("b")]), id="two-policies"),
])
def test_passing(obj: dict[str, Any]) -> None:
    assert rule_ids(obj) == []


def test_missing_mount_reported_per_template() -> None:
    obj = jobset(_mounting("a"), volumeClaimPolicies=[_policy("a", "b", "c")])
    assert rule_ids(obj) == ["jobset-vcp-volume-mount", "jobset-vcp-volume-mount"]


# --- #26: existing PVCs ---------------------------------------------------------------------------------


def _pvc(name: str, namespace: str | None = None, **spec: Any) -> str:
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    return to_yaml({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": metadata,
                    "spec": spec or {"accessModes": ["ReadWriteOnce"]}})


def _checked(tmp_path: Path, jobset_obj: dict[str, Any], *pvcs: str) -> list[tuple[str, str]]:
    files = {"jobset.yaml": to_yaml(jobset_obj)} | {f"pvc{i}.yaml": text for i, text in enumerate(pvcs)}
    return [(d.rule, d.message) for d in validate_files(tmp_path, files) if d.rule.startswith("jobset-")]


RETAIN = {"retentionPolicy": {"whenDeleted": "Retain"}}


def test_existing_pvc_with_same_spec_and_retain_is_accepted(tmp_path: Path) -> None:
    obj = jobset(_mounting("data"), volumeClaimPolicies=[_policy("data", **RETAIN)])
    assert _checked(tmp_path, obj, _pvc("data-js")) == []


def test_no_existing_pvc_needs_nothing(tmp_path: Path) -> None:
    obj = jobset(_mounting("data"), volumeClaimPolicies=[_policy("data")])
    assert _checked(tmp_path, obj, _pvc("other-js"), _pvc("data-js", namespace="elsewhere")) == []


def test_existing_pvc_with_delete_policy(tmp_path: Path) -> None:
    obj = jobset(_mounting("data"), volumeClaimPolicies=[_policy("data")])
    assert _checked(tmp_path, obj, _pvc("data-js")) == [(
        "jobset-vcp-existing-pvc-retention",
        'spec.volumeClaimPolicies[0].retentionPolicy.whenDeleted: Invalid value: "Delete": '
        "retentionPolicy must be retain when PVC exists",
    )]


def test_existing_pvc_with_other_spec(tmp_path: Path) -> None:
    obj = jobset(_mounting("data"), volumeClaimPolicies=[_policy("data", **RETAIN)])
    assert _checked(tmp_path, obj, _pvc("data-js", namespace="default", accessModes=["ReadWriteMany"])) == [(
        "jobset-vcp-existing-pvc-spec",
        'spec.volumeClaimPolicies[0].template[0].spec: Invalid value: {"accessModes":["ReadWriteOnce"]}: '
        "spec does not match existing PVC data-js in namespace default",
    )]


def test_existing_pvc_in_the_jobset_namespace_only(tmp_path: Path) -> None:
    obj = jobset(_mounting("data"), volumeClaimPolicies=[_policy("data")])
    obj["metadata"]["namespace"] = "team"
    assert [rule for rule, _ in _checked(tmp_path, obj, _pvc("data-js"))] == []
    assert [rule for rule, _ in _checked(tmp_path, obj, _pvc("data-js", namespace="team"))] == [
        "jobset-vcp-existing-pvc-retention"
    ]


def test_existing_pvc_quantities_compare_by_value(tmp_path: Path) -> None:
    """Not confirmed upstream (reflect.DeepEqual on decoded Quantities); we compare values."""
    template_spec = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    policy = {"templates": [{"metadata": {"name": "data"}, "spec": template_spec}], **RETAIN}
    obj = jobset(_mounting("data"), volumeClaimPolicies=[policy])
    same = _pvc("data-js", accessModes=["ReadWriteOnce"], resources={"requests": {"storage": "1024Mi"}})
    assert _checked(tmp_path, obj, same) == []
