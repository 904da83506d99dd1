"""ObjectMeta validation (apimachinery ``ValidateObjectMetaAccessor``, ``ValidateLabels``,
``ValidateAnnotations``): table tests of (metadata, namespaced) -> [(rule, exact message)].
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jobsetctl.diagnostics import Severity
from jobsetctl.kube.meta import TOTAL_ANNOTATION_SIZE_LIMIT, validate_object_meta
from jobsetctl.kube.names import (
    DNS1123_LABEL_ERROR,
    DNS1123_SUBDOMAIN_ERROR,
    LABEL_VALUE_ERROR,
    QUALIFIED_NAME_ERROR,
)


def rows(metadata: Any, namespaced: bool = True) -> list[tuple[str, str]]:
    return [(f.rule.id, f.message) for f in validate_object_meta({"metadata": metadata}, namespaced)
            if f.effective_severity is Severity.ERROR]


OK: dict[str, Any] = {"name": "ok", "namespace": "default"}

TABLE = [
    pytest.param(OK, [], id="valid"),
    pytest.param({"namespace": "default"},
                 [("meta-name", "metadata.name: Required value: name or generateName is required")], id="no-name"),
    pytest.param({"name": "", "namespace": "default"},
                 [("meta-name", "metadata.name: Required value: name or generateName is required")], id="empty-name"),
    pytest.param({"generateName": "train-", "namespace": "default"}, [], id="generate-name-only"),
    pytest.param({"name": "My.Job", "namespace": "default"},
                 [("meta-name", f'metadata.name: Invalid value: "My.Job": {DNS1123_SUBDOMAIN_ERROR}')],
                 id="name-uppercase"),
    pytest.param({"name": "a.b-c", "namespace": "default"}, [], id="name-dots-are-fine"),
    pytest.param({"name": "a" * 254, "namespace": "default"},
                 [("meta-name", f'metadata.name: Invalid value: "{"a" * 254}": must be no more than 253 characters')],
                 id="name-too-long"),
    pytest.param({"generateName": "Train-", "namespace": "default"},
                 [("meta-name", f'metadata.generateName: Invalid value: "Train-": {DNS1123_SUBDOMAIN_ERROR}')],
                 id="generate-name-uppercase"),
    pytest.param({"generateName": "-", "namespace": "default"},
                 [("meta-name", f'metadata.generateName: Invalid value: "-": {DNS1123_SUBDOMAIN_ERROR}')],
                 id="generate-name-lone-dash"),
    pytest.param({"name": "x", "namespace": "Team_A"},
                 [("meta-namespace", f'metadata.namespace: Invalid value: "Team_A": {DNS1123_LABEL_ERROR}')],
                 id="namespace-invalid"),
    pytest.param({"name": "x", "namespace": "a.b"},
                 [("meta-namespace", f'metadata.namespace: Invalid value: "a.b": {DNS1123_LABEL_ERROR}')],
                 id="namespace-is-a-label-not-a-subdomain"),
    pytest.param({"name": "x"}, [("meta-namespace", "metadata.namespace: Required value")], id="namespace-required"),
    pytest.param({**OK, "labels": {"app.kubernetes.io/name": "x", "tier": ""}}, [], id="labels-valid"),
    pytest.param({**OK, "labels": {"-bad": "x"}},
                 [("meta-labels", f'metadata.labels: Invalid value: "-bad": name part {QUALIFIED_NAME_ERROR}')],
                 id="label-key"),
    pytest.param({**OK, "labels": {"a": "b c"}},
                 [("meta-labels", f'metadata.labels: Invalid value: "b c": {LABEL_VALUE_ERROR}')], id="label-value"),
    pytest.param({**OK, "labels": {"a": "v" * 64}},
                 [("meta-labels", f'metadata.labels: Invalid value: "{"v" * 64}": must be no more than 63 characters')],
                 id="label-value-too-long"),
    pytest.param({**OK, "annotations": {"example.com/Note": "free text: anything"}}, [], id="annotations-valid"),
    pytest.param({**OK, "annotations": {"a/b/c": "x"}},
                 [("meta-annotations", 'metadata.annotations: Invalid value: "a/b/c": a qualified name '
                   f"{QUALIFIED_NAME_ERROR} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")],
                 id="annotation-key"),
]


@pytest.mark.parametrize(("metadata", "expected"), TABLE)
def test_object_meta_table(metadata: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert rows(metadata) == expected


def test_wrong_types_are_left_to_the_schema_layer() -> None:
    assert rows({"name": 5, "namespace": "d", "labels": {"a": 1}, "annotations": ["x"]}) == []


def test_quirk_generate_name_mask_replaces_two_characters() -> None:
    """maskTrailingDash turns "A-" into "a" (it drops the last *two* characters and appends "a"), so an
    uppercase single-letter prefix passes while "A" alone does not."""
    assert rows({"generateName": "A-", "namespace": "d"}) == []
    assert rows({"generateName": "Ab-", "namespace": "d"}) == [
        ("meta-name", f'metadata.generateName: Invalid value: "Ab-": {DNS1123_SUBDOMAIN_ERROR}'),
    ]


def test_quirk_annotation_keys_are_checked_lowercased() -> None:
    """ValidateAnnotations lowercases keys first: "example.com/Note" passes, and so does an uppercase prefix
    that a label key would fail."""
    assert rows({**OK, "annotations": {"Example.COM/Note": "x"}}) == []
    assert [r for r, _ in rows({**OK, "labels": {"Example.COM/Note": "x"}})] == ["meta-labels"]


def test_total_annotation_size_limit_counts_bytes_of_keys_and_values() -> None:
    key = "k"
    at_limit = {key: "v" * (TOTAL_ANNOTATION_SIZE_LIMIT - len(key))}
    assert rows({**OK, "annotations": at_limit}) == []
    over = {key: "é" * ((TOTAL_ANNOTATION_SIZE_LIMIT - len(key)) // 2 + 1)}  # 2 bytes per character
    assert rows({**OK, "annotations": over}) == [
        ("meta-annotations", "metadata.annotations: Too long: may not be more than 262144 bytes"),
    ]


def test_cluster_scoped_namespace_is_ignored_not_an_error() -> None:
    """The REST layer clears the namespace of a cluster-scoped object before validation."""
    [finding] = validate_object_meta({"metadata": {"name": "ctr", "namespace": "kubeflow"}}, namespaced=False)
    assert (finding.rule.id, finding.effective_severity, finding.at) == (
        "meta-namespace", Severity.INFO, ("metadata", "namespace"))
    assert validate_object_meta({"metadata": {"name": "ctr"}}, namespaced=False) == []


def test_positions_point_at_the_offending_field() -> None:
    findings = validate_object_meta({"metadata": {"name": "X", "namespace": "n", "labels": {"a": "-"}}}, True)
    assert [(f.path, f.at) for f in findings] == [
        ("metadata.name", ("metadata", "name")),
        ("metadata.labels", ("metadata", "labels", "a")),
    ]


META = st.dictionaries(
    st.sampled_from(["name", "generateName", "namespace", "labels", "annotations", "uid"]),
    st.none() | st.integers() | st.text(max_size=8) | st.dictionaries(st.text(max_size=5),
                                                                       st.none() | st.integers() | st.text(max_size=5)),
)


@settings(max_examples=200, deadline=None)
@given(st.none() | st.text() | META, st.booleans())
def test_any_shape_is_tolerated(metadata: Any, namespaced: bool) -> None:
    """Wrong types are the schema layer's findings; meta validation must never fail on them."""
    for finding in validate_object_meta({"metadata": metadata}, namespaced):
        assert finding.rule.id.startswith("meta-")
