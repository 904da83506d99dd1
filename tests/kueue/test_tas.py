"""TAS podset annotations (jobsetctl/kueue/tas.py), translated from pkg/controller/jobframework/tas_test.go
``TestPodSetTopologyRequestBuilder`` and tas_validation_test.go
``TestValidateSliceRequiredTopologyConstraintsAnnotation``, ``TestValidateSliceSizeAnnotationUpperBound``."""

from __future__ import annotations

from typing import Any

import pytest

from jobsetctl.kueue.tas import (
    LAYER_COUNT_ERROR,
    PARSE_CONSTRAINTS_ERROR,
    GroupedPodSet,
    IndexLabels,
    TopologyRequestError,
    topology_request,
    validate_podset_annotations,
    validate_podset_grouping,
    validate_slice_size_upper_bound,
)

REQ, PREF, UNC = ("kueue.x-k8s.io/podset-required-topology", "kueue.x-k8s.io/podset-preferred-topology",
                  "kueue.x-k8s.io/podset-unconstrained-topology")
SLICE, SIZE, LAYERS, GROUP = ("kueue.x-k8s.io/podset-slice-required-topology", "kueue.x-k8s.io/podset-slice-size",
                              "kueue.x-k8s.io/podset-slice-required-topology-constraints",
                              "kueue.x-k8s.io/podset-group-name")
INDEX = "batch.kubernetes.io/job-completion-index"
JOB_INDEX = "jobset.sigs.k8s.io/job-index"
THREE = '[{"topology":"cloud.com/rack","size":16},{"topology":"cloud.com/sub-rack","size":4},{"topology":"kubernetes.io/hostname","size":2}]'


def meta(**annotations: str) -> dict[str, Any]:
    return {"annotations": annotations}


# TestPodSetTopologyRequestBuilder
@pytest.mark.parametrize(("case", "annotations", "index", "multi", "want"), [
    ("required annotation", {REQ: "cloud.com/block"}, IndexLabels(), True, {"required": "cloud.com/block"}),
    ("required annotation with pod index label", {REQ: "cloud.com/block"}, IndexLabels(INDEX), True,
     {"required": "cloud.com/block", "podIndexLabel": INDEX}),
    ("pod index label only", {}, IndexLabels(INDEX), True, {"podIndexLabel": INDEX}),
    ("required annotation with sub group", {REQ: "cloud.com/block", GROUP: "block"}, IndexLabels(None, JOB_INDEX, 1), True,
     {"required": "cloud.com/block", "subGroupIndexLabel": JOB_INDEX, "subGroupCount": 1, "podSetGroupName": "block"}),
    ("preferred annotation", {PREF: "cloud.com/block"}, IndexLabels(), True, {"preferred": "cloud.com/block"}),
    ("unconstrained annotation (true)", {UNC: "true"}, IndexLabels(), True, {"unconstrained": True}),
    ("unconstrained annotation (false)", {UNC: "false"}, IndexLabels(), True, {"unconstrained": False}),
    ("slice-only topology", {SLICE: "cloud.com/block", SIZE: "1"}, IndexLabels(), True,
     {"podSetSliceRequiredTopology": "cloud.com/block", "podSetSliceSize": 1}),
    ("slice-only topology – only slice required annotation", {SLICE: "cloud.com/block"}, IndexLabels(), True, None),
    ("slice-only topology – only slice size annotation", {SIZE: "1"}, IndexLabels(), True, None),
    ("slice-only topology with sub group and pod set group name annotation",
     {SLICE: "cloud.com/block", SIZE: "1", GROUP: "block"}, IndexLabels(None, JOB_INDEX, 1), True,
     {"podSetSliceRequiredTopology": "cloud.com/block", "podSetSliceSize": 1, "subGroupIndexLabel": JOB_INDEX,
      "subGroupCount": 1}),
    ("multi-layer: three constraint layers with feature gate", {REQ: "cloud.com/block", LAYERS: THREE}, IndexLabels(), True,
     {"required": "cloud.com/block", "podsetSliceRequiredTopologyConstraints": [
         {"topology": "cloud.com/rack", "size": 16}, {"topology": "cloud.com/sub-rack", "size": 4},
         {"topology": "kubernetes.io/hostname", "size": 2}]}),
    ("multi-layer: ignored without feature gate", {REQ: "cloud.com/block", SLICE: "cloud.com/rack", SIZE: "16"},
     IndexLabels(), False,
     {"required": "cloud.com/block", "podSetSliceRequiredTopology": "cloud.com/rack", "podSetSliceSize": 16}),
])
def test_pod_set_topology_request_builder(case: str, annotations: dict[str, str], index: IndexLabels, multi: bool,
                                          want: dict[str, Any] | None) -> None:
    assert topology_request(meta(**annotations), index, multi) == want


@pytest.mark.parametrize(("case", "annotations", "error"), [
    ("invalid unconstrained topology annotation value", {UNC: "invalid"}, "invalid syntax"),
    ("invalid podset slice size annotation value", {SLICE: "cloud.com/block", SIZE: "invalid"}, "invalid syntax"),
    ("multi-layer: zero constraint layers with feature gate", {REQ: "cloud.com/block", LAYERS: "[]"}, LAYER_COUNT_ERROR),
    ("multi-layer: four constraint layers with feature gate", {REQ: "cloud.com/block", LAYERS: (
        '[{"topology":"a","size":32},{"topology":"b","size":16},{"topology":"c","size":4},{"topology":"d","size":2}]')},
     LAYER_COUNT_ERROR),
    ("multi-layer: invalid JSON in constraints annotation", {REQ: "cloud.com/block", LAYERS: "invalid-json"},
     PARSE_CONSTRAINTS_ERROR),
    ("multi-layer: invalid JSON in constraints annotation - expect size as integer",
     {REQ: "cloud.com/block", LAYERS: '[{"topology":"cloud.com/rack","size":"8"}]'}, PARSE_CONSTRAINTS_ERROR),
])
def test_pod_set_topology_request_builder_errors(case: str, annotations: dict[str, str], error: str) -> None:
    with pytest.raises(TopologyRequestError, match=error):
        topology_request(meta(**annotations), IndexLabels(), True)


# TestValidateSliceRequiredTopologyConstraintsAnnotation (upstream counts the errors)
@pytest.mark.parametrize(("case", "annotations", "multi", "errors"), [
    ("valid: single constraint layer", {REQ: "cloud.com/block", LAYERS: '[{"topology":"cloud.com/rack","size":16}]'}, True, 0),
    ("valid: two constraint layers", {REQ: "cloud.com/block", LAYERS: (
        '[{"topology":"cloud.com/rack","size":16},{"topology":"kubernetes.io/hostname","size":4}]')}, True, 0),
    ("valid: three constraint layers", {REQ: "cloud.com/block", LAYERS: THREE}, True, 0),
    ("invalid: not valid JSON", {REQ: "cloud.com/block", LAYERS: "invalid-json"}, True, 1),
    ("invalid: empty array", {REQ: "cloud.com/block", LAYERS: "[]"}, True, 1),
    ("invalid: more than 3 entries", {REQ: "cloud.com/block", LAYERS: (
        '[{"topology":"a","size":64},{"topology":"b","size":16},{"topology":"c","size":4},{"topology":"d","size":1}]')},
     True, 1),
    ("invalid: size less than 1", {REQ: "cloud.com/block", LAYERS: '[{"topology":"cloud.com/rack","size":0}]'}, True, 1),
    ("invalid: size does not divide parent", {REQ: "cloud.com/block", LAYERS: (
        '[{"topology":"cloud.com/rack","size":16},{"topology":"kubernetes.io/hostname","size":5}]')}, True, 1),
    ("invalid: mutual exclusivity with podset-slice-required-topology", {
        REQ: "cloud.com/block", SLICE: "cloud.com/rack", SIZE: "16",
        LAYERS: '[{"topology":"cloud.com/rack","size":16}]'}, True, 2),
    ("invalid: with podset-group-name", {REQ: "cloud.com/block", GROUP: "group1",
                                         LAYERS: '[{"topology":"cloud.com/rack","size":16}]'}, True, 1),
    ("invalid: feature gate disabled", {REQ: "cloud.com/block", LAYERS: '[{"topology":"cloud.com/rack","size":16}]'},
     False, 1),
    ("invalid: duplicate topology labels", {REQ: "cloud.com/block", LAYERS: (
        '[{"topology":"cloud.com/rack","size":16},{"topology":"cloud.com/rack","size":4}]')}, True, 1),
    ("invalid: duplicate topology label among three entries", {REQ: "cloud.com/block", LAYERS: (
        '[{"topology":"cloud.com/rack","size":16},{"topology":"kubernetes.io/hostname","size":4},'
        '{"topology":"cloud.com/rack","size":2}]')}, True, 1),
])
def test_validate_slice_required_topology_constraints(case: str, annotations: dict[str, str], multi: bool,
                                                      errors: int) -> None:
    assert len(validate_podset_annotations(("spec", "template", "metadata"), meta(**annotations), multi)) == errors


# TestValidateSliceSizeAnnotationUpperBound
@pytest.mark.parametrize(("case", "annotations", "count", "errors"), [
    ("valid: PodSetSliceSizeAnnotation within bound", {SIZE: "16", SLICE: "cloud.com/rack", REQ: "cloud.com/block"}, 20, 0),
    ("invalid: PodSetSliceSizeAnnotation exceeds pod count", {SIZE: "20", SLICE: "cloud.com/rack", REQ: "cloud.com/block"},
     16, 1),
    ("valid: multi-layer outermost size within bound", {REQ: "cloud.com/block", LAYERS: (
        '[{"topology":"cloud.com/rack","size":16},{"topology":"kubernetes.io/hostname","size":4}]')}, 20, 0),
    ("invalid: multi-layer outermost size exceeds pod count", {REQ: "cloud.com/block", LAYERS: (
        '[{"topology":"cloud.com/rack","size":16},{"topology":"kubernetes.io/hostname","size":4}]')}, 10, 1),
])
def test_validate_slice_size_upper_bound(case: str, annotations: dict[str, str], count: int, errors: int) -> None:
    assert len(validate_slice_size_upper_bound(("spec", "template", "metadata"), meta(**annotations), count)) == errors


A = "spec.template.metadata.annotations"


def messages(annotations: dict[str, str]) -> list[str]:
    return [m for _, m in validate_podset_annotations(("spec", "template", "metadata"), meta(**annotations), True)]


def test_messages_of_the_podset_annotation_rules() -> None:
    assert messages({REQ: "a", PREF: "b"}) == [
        f'{A}: Invalid value: must not contain more than one topology annotation: ["{REQ}", "{PREF}", "{UNC}"]']
    assert messages({UNC: "yes"}) == [f'{A}[{UNC}]: Invalid value: "yes": must be a boolean value']
    assert messages({SLICE: "r"}) == [f"{A}[{SIZE}]: Required value: must be set when '{SLICE}' is specified"]
    assert messages({SIZE: "2"}) == [f"{A}[{SIZE}]: Forbidden: may not be set when '{SLICE}' is not specified"]
    assert messages({SLICE: "r", SIZE: "x"}) == [f'{A}[{SIZE}]: Invalid value: "x": must be a numeric value']
    assert messages({SLICE: "r", SIZE: "0"}) == [f'{A}[{SIZE}]: Invalid value: "0": must be greater than or equal to 1']
    assert messages({REQ: "b", GROUP: "42"}) == [f'{A}[{GROUP}]: Invalid value: "42": must not be a number']
    assert messages({GROUP: "g"}) == [
        f"{A}[{GROUP}]: Forbidden: may not be set when neither '{PREF}' nor '{REQ}' is specified"]


def test_podset_grouping() -> None:
    # ValidatePodSetGroupingTopology: exactly two podSets, one of them with a single pod, the same topology.
    def grouped(name: str, count: int, request: dict[str, Any]) -> GroupedPodSet:
        return GroupedPodSet(name, count, {**request, "podSetGroupName": "g"}, ("p", name, "annotations"))

    ok = [grouped("leader", 1, {"required": "rack"}), grouped("workers", 4, {"required": "rack"})]
    assert validate_podset_grouping(ok) == []
    both_many = [grouped("a", 2, {"required": "rack"}), grouped("b", 4, {"required": "rack"})]
    assert [m for _, m in validate_podset_grouping(both_many)] == [
        'p.a.annotations[kueue.x-k8s.io/podset-group-name]: Invalid value: "g": can only define groups where at least '
        "one pod set has only 1 replica, got: 2 replica(s) and 4 replica(s) in the group"] * 1 + [
        'p.b.annotations[kueue.x-k8s.io/podset-group-name]: Invalid value: "g": can only define groups where at least '
        "one pod set has only 1 replica, got: 2 replica(s) and 4 replica(s) in the group"]
    mismatched = [grouped("a", 1, {"required": "rack"}), grouped("b", 4, {"preferred": "rack"})]
    assert [m for _, m in validate_podset_grouping(mismatched)] == [
        f"p.a.annotations: Invalid value: must specify '{REQ}' or '{PREF}' topology consistent with 'p.b.annotations' "
        "in group 'g'",
        f"p.b.annotations: Invalid value: must specify '{REQ}' or '{PREF}' topology consistent with 'p.a.annotations' "
        "in group 'g'"]
    alone = [grouped("a", 1, {"required": "rack"})]
    assert [m for _, m in validate_podset_grouping(alone)] == [
        'p.a.annotations[kueue.x-k8s.io/podset-group-name]: Invalid value: "g": can only define groups of exactly 2 '
        "pod sets, got: 1 pod set(s)"]
