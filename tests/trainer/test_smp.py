"""The strategic-merge engine for runtimePatches (trainer.md §3.5)."""

from __future__ import annotations

from typing import Any

import pytest

from jobsetctl.trainer.expand.smp import clean_patch, merge_jobset_spec, merge_resources, restore_job_order


def _spec(**pod: Any) -> dict[str, Any]:
    return {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": pod}}}}]}


def _pod(spec: dict[str, Any]) -> dict[str, Any]:
    pod: dict[str, Any] = spec["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    return pod


@pytest.mark.parametrize(
    ("original", "patch", "expected"),
    [
        pytest.param(
            {"containers": [{"name": "a", "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]}]},
            {"containers": [{"name": "a", "env": [{"name": "Y", "value": "new"}]}]},
            {"containers": [{"name": "a", "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "new"}]}]},
            id="env-merged-by-name-in-place",
        ),
        pytest.param(
            {"containers": [{"name": "a", "env": [{"name": "X", "value": "1"}]}]},
            {"containers": [{"name": "a", "env": [{"name": "Z", "value": "3"}]}]},
            # apimachinery mergeSortedSlice: a new patch item goes before the server-only items.
            {"containers": [{"name": "a", "env": [{"name": "Z", "value": "3"}, {"name": "X", "value": "1"}]}]},
            id="new-env-placed-first",
        ),
        pytest.param(
            {"containers": [{"name": "a", "volumeMounts": [{"name": "v", "mountPath": "/a"}]}]},
            {"containers": [{"name": "a", "volumeMounts": [{"name": "w", "mountPath": "/a", "readOnly": True}]}]},
            {"containers": [{"name": "a", "volumeMounts": [{"name": "w", "mountPath": "/a", "readOnly": True}]}]},
            id="volume-mounts-merged-by-mount-path",
        ),
        pytest.param(
            {"tolerations": [{"key": "a", "operator": "Exists"}]},
            {"tolerations": [{"key": "b", "operator": "Exists"}]},
            {"tolerations": [{"key": "b", "operator": "Exists"}]},
            id="tolerations-replaced-whole",
        ),
        pytest.param(
            {"nodeSelector": {"a": "1", "b": "2"}},
            {"nodeSelector": {"b": "x", "c": "3"}},
            {"nodeSelector": {"a": "1", "b": "x", "c": "3"}},
            id="node-selector-map-merged",
        ),
        pytest.param(
            {"volumes": [{"name": "a", "emptyDir": {}}, {"name": "b", "emptyDir": {}}]},
            {"volumes": [{"name": "b", "configMap": {"name": "cm"}}]},
            # No $retainKeys directive in a typed patch: both sources remain.
            {"volumes": [{"name": "a", "emptyDir": {}}, {"name": "b", "emptyDir": {}, "configMap": {"name": "cm"}}]},
            id="volumes-merged-by-name-without-retain-keys",
        ),
        pytest.param(
            {"imagePullSecrets": [{"name": "a"}], "schedulingGates": [{"name": "g1"}]},
            {"imagePullSecrets": [{"name": "b"}], "schedulingGates": [{"name": "g1"}, {"name": "g2"}]},
            {"imagePullSecrets": [{"name": "b"}, {"name": "a"}], "schedulingGates": [{"name": "g1"}, {"name": "g2"}]},
            id="pull-secrets-and-gates-by-name",
        ),
        pytest.param(
            {"serviceAccountName": "a", "terminationGracePeriodSeconds": 30},
            {"serviceAccountName": "b"},
            {"serviceAccountName": "b", "terminationGracePeriodSeconds": 30},
            id="scalars-replaced",
        ),
        pytest.param(
            {"securityContext": {"runAsUser": 1, "fsGroup": 2}},
            {"securityContext": {"runAsUser": 5}},
            {"securityContext": {"runAsUser": 5, "fsGroup": 2}},
            id="struct-merged",
        ),
        pytest.param(
            {"containers": [{"name": "a", "command": ["x", "y"]}]},
            {"containers": [{"name": "b", "volumeMounts": [{"name": "v", "mountPath": "/v"}]}]},
            {"containers": [{"name": "b", "volumeMounts": [{"name": "v", "mountPath": "/v"}]},
                            {"name": "a", "command": ["x", "y"]}]},
            id="unknown-container-added-first",
        ),
    ],
)
def test_pod_spec_merge_table(original: dict[str, Any], patch: dict[str, Any], expected: dict[str, Any]) -> None:
    merged = merge_jobset_spec(_spec(**original), _spec(**patch))
    assert _pod(merged) == expected


def test_merge_keeps_original_order_for_matched_items() -> None:
    original = {"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}
    patch = {"containers": [{"name": "c", "image": "x"}, {"name": "a", "image": "y"}]}
    merged = _pod(merge_jobset_spec(_spec(**original), _spec(**patch)))
    # Patch items keep the patch order among themselves; the server-only "b" goes first because it
    # precedes "c" (the next patch item) in the original (apimachinery mergeSortedSlice).
    assert [c["name"] for c in merged["containers"]] == ["b", "c", "a"]


def test_merge_does_not_touch_its_arguments() -> None:
    original = _spec(nodeSelector={"a": "1"})
    patch = _spec(nodeSelector={"b": "2"})
    merge_jobset_spec(original, patch)
    assert _pod(original) == {"nodeSelector": {"a": "1"}}
    assert _pod(patch) == {"nodeSelector": {"b": "2"}}


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        ({"tolerations": []}, {}),
        ({"nodeSelector": {}}, {}),
        ({"nodeSelector": {"a": None}}, {}),
        ({"serviceAccountName": None}, {}),
        ({"$patch": "replace", "serviceAccountName": "x"}, {"serviceAccountName": "x"}),
        ({"securityContext": {}}, {"securityContext": {}}),
    ],
)
def test_patch_is_cleaned_like_a_typed_go_patch(patch: dict[str, Any], expected: Any) -> None:
    cleaned = clean_patch({"x": patch})
    assert (cleaned or {}).get("x") == expected


def test_empty_patch_lists_never_clear() -> None:
    merged = merge_jobset_spec(_spec(tolerations=[{"key": "a"}]), _spec(tolerations=[]))
    assert _pod(merged) == {"tolerations": [{"key": "a"}]}


def test_replicated_jobs_merge_by_name_and_order_restored() -> None:
    original = {"replicatedJobs": [{"name": "a", "replicas": 1}, {"name": "b", "replicas": 1}]}
    patch = {"replicatedJobs": [{"name": "b", "groupName": "g"}]}
    merged = merge_jobset_spec(original, patch)
    restore_job_order(merged, ["a", "b"])
    assert merged["replicatedJobs"] == [{"name": "a", "replicas": 1}, {"name": "b", "replicas": 1, "groupName": "g"}]


def test_quirk_unknown_replicated_job_sorts_as_index_zero() -> None:
    """Go's ``order[name]`` yields 0 for a job the runtime lacks, so it sorts with the first job."""
    original = {"replicatedJobs": [{"name": "a"}, {"name": "b"}]}
    merged = merge_jobset_spec(original, {"replicatedJobs": [{"name": "zz"}, {"name": "b", "x": 1}]})
    restore_job_order(merged, ["a", "b"])
    assert [j["name"] for j in merged["replicatedJobs"]] == ["zz", "a", "b"]


@pytest.mark.parametrize(
    ("base", "override", "expected"),
    [
        pytest.param({"requests": {"cpu": "1"}}, {"limits": {"nvidia.com/gpu": "4"}},
                     {"limits": {"nvidia.com/gpu": "4"}, "requests": {"cpu": "1"}}, id="spec-example"),
        pytest.param({"limits": {"cpu": "1", "memory": "1Gi"}}, {"limits": {"cpu": "2"}},
                     {"limits": {"cpu": "2", "memory": "1Gi"}}, id="per-key"),
        pytest.param({"claims": [{"name": "a"}]}, {"claims": [{"name": "b"}]},
                     {"claims": [{"name": "b"}, {"name": "a"}]}, id="claims-by-name"),
        pytest.param({}, {}, {}, id="empty"),
    ],
)
def test_resources_merge(base: dict[str, Any], override: dict[str, Any], expected: dict[str, Any]) -> None:
    assert merge_resources(base, override) == expected
