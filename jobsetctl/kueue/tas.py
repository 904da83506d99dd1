"""The TAS podset annotations of a job's pod template (scheduling.md §2.5).

Two things Kueue does with them, both here so that the webhook, the Workload builder and the
Topology-dependent consequence checks read the annotations the same way:

* :func:`topology_request` — ``jobframework/tas.go`` ``podSetTopologyRequestBuilder.Build``: the
  Workload podSet's ``topologyRequest`` (required / preferred / unconstrained, the slice layer, the
  podset group, plus the pod index label and sub-group the integration passes);
* :func:`validate_podset_annotations` — ``jobframework/tas_validation.go`` ``ValidateTASPodSetRequest``
  (the job webhooks' create/update check), :func:`validate_slice_size_upper_bound`
  (``ValidateSliceSizeAnnotationUpperBound``) and :func:`validate_podset_grouping`
  (``ValidatePodSetGroupingTopology``), with upstream's messages and field paths.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jobsetctl.kube.field import (
    OMIT,
    ErrorType,
    Path,
    duplicate,
    field_error,
    forbidden,
    invalid,
    path_string,
    required,
)
from jobsetctl.kube.names import is_qualified_name
from jobsetctl.kueue import api

#: ``errTopologyConstraintsLayerCount``.
LAYER_COUNT_ERROR = "topology constraints must contain between 1 and 3 entries"
#: ``errParseTopologyConstraints``.
PARSE_CONSTRAINTS_ERROR = "failed to parse multi-layer topology constraints annotation"


class TopologyRequestError(ValueError):
    """The annotations cannot be turned into a topology request (Kueue then cannot build the Workload)."""


def _annotations(meta: Any) -> dict[str, Any]:
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    return annotations if isinstance(annotations, dict) else {}


def parse_go_bool(text: str) -> bool | None:
    """Go ``strconv.ParseBool``."""
    if text in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if text in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return None


def parse_go_int32(text: str) -> int | None:
    """Go ``strconv.ParseInt(text, 10, 32)``."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not body.isascii() or not body.isdigit():
        return None
    value = int(text)
    return value if -(2**31) <= value < 2**31 else None


def parse_constraints(text: str) -> list[dict[str, Any]] | str:
    """The multi-layer constraints JSON as Go's ``json.Unmarshal`` into ``[]PodsetSliceRequiredTopologyConstraint``
    sees it, or the error text."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        return f"invalid character in JSON: {exc}"
    if value is None:
        return []
    if not isinstance(value, list):
        return "json: cannot unmarshal into Go value of type []v1beta2.PodsetSliceRequiredTopologyConstraint"
    out: list[dict[str, Any]] = []
    for item in value:
        if not isinstance(item, dict):
            return "json: cannot unmarshal into Go value of type v1beta2.PodsetSliceRequiredTopologyConstraint"
        topology = item.get("topology", "")
        size = item.get("size", 0)
        if not isinstance(topology, str):
            return "json: cannot unmarshal into Go struct field PodsetSliceRequiredTopologyConstraint.topology of type string"
        if isinstance(size, bool) or not isinstance(size, int):
            return "json: cannot unmarshal into Go struct field PodsetSliceRequiredTopologyConstraint.size of type int32"
        out.append({"topology": topology, "size": size})
    return out


@dataclass(frozen=True, slots=True)
class IndexLabels:
    """What an integration tells the builder about its pods (``PodIndexLabel``, ``SubGroup``)."""

    pod_index_label: str | None = None
    sub_group_index_label: str | None = None
    sub_group_count: int | None = None


def topology_request(meta: Any, index: IndexLabels, multi_layer: bool) -> dict[str, Any] | None:
    """``podSetTopologyRequestBuilder.Build``: the podSet's ``topologyRequest``, None when there is none.

    ``multi_layer`` is the ``TASMultiLayerTopology`` gate. Raises :class:`TopologyRequestError` where
    upstream's builder returns an error (the webhook rejects such annotations first).
    """
    annotations = _annotations(meta)
    request: dict[str, Any] = {}
    if api.PODSET_REQUIRED_TOPOLOGY in annotations:
        request["required"] = annotations[api.PODSET_REQUIRED_TOPOLOGY]
    elif api.PODSET_PREFERRED_TOPOLOGY in annotations:
        request["preferred"] = annotations[api.PODSET_PREFERRED_TOPOLOGY]
    elif api.PODSET_UNCONSTRAINED_TOPOLOGY in annotations:
        value = parse_go_bool(str(annotations[api.PODSET_UNCONSTRAINED_TOPOLOGY]))
        if value is None:
            raise TopologyRequestError(
                f'strconv.ParseBool: parsing "{annotations[api.PODSET_UNCONSTRAINED_TOPOLOGY]}": invalid syntax')
        request["unconstrained"] = value
    else:
        slice_layer = (api.PODSET_SLICE_REQUIRED_TOPOLOGY in annotations and api.PODSET_SLICE_SIZE in annotations) \
            or api.PODSET_SLICE_REQUIRED_TOPOLOGY_CONSTRAINTS in annotations
        if not slice_layer and index == IndexLabels():
            return None
    if multi_layer and api.PODSET_SLICE_REQUIRED_TOPOLOGY_CONSTRAINTS in annotations:
        constraints = parse_constraints(str(annotations[api.PODSET_SLICE_REQUIRED_TOPOLOGY_CONSTRAINTS]))
        if isinstance(constraints, str):
            raise TopologyRequestError(f"{PARSE_CONSTRAINTS_ERROR}: {constraints}")
        if not 1 <= len(constraints) <= 3:
            raise TopologyRequestError(f"{LAYER_COUNT_ERROR}: got {len(constraints)}")
        request["podsetSliceRequiredTopologyConstraints"] = constraints
    elif api.PODSET_SLICE_REQUIRED_TOPOLOGY in annotations and api.PODSET_SLICE_SIZE in annotations:
        size = parse_go_int32(str(annotations[api.PODSET_SLICE_SIZE]))
        if size is None:
            raise TopologyRequestError(f'strconv.ParseInt: parsing "{annotations[api.PODSET_SLICE_SIZE]}": invalid syntax')
        request["podSetSliceRequiredTopology"] = annotations[api.PODSET_SLICE_REQUIRED_TOPOLOGY]
        request["podSetSliceSize"] = size
    if index.pod_index_label is not None:
        request["podIndexLabel"] = index.pod_index_label
    if index.sub_group_count is not None:
        request["subGroupCount"] = index.sub_group_count
    if index.sub_group_index_label is not None:
        request["subGroupIndexLabel"] = index.sub_group_index_label
    if api.PODSET_GROUP_NAME in annotations and ("required" in request or "preferred" in request):
        request["podSetGroupName"] = annotations[api.PODSET_GROUP_NAME]
    return request


# ---- validation (tas_validation.go) --------------------------------------------------------------

#: One webhook error: (field path, message).
Problem = tuple[Path, str]


def _label_name(value: Any, at: Path) -> list[Problem]:
    """``metavalidation.ValidateLabelName``: one Invalid error per qualified-name problem."""
    return [(at, invalid(at, value, problem)) for problem in is_qualified_name(str(value))]


def validate_podset_annotations(meta_path: Path, meta: Any, multi_layer: bool) -> list[Problem]:
    """``ValidateTASPodSetRequest`` for one pod template's metadata at ``meta_path``."""
    annotations = _annotations(meta)
    problems: list[Problem] = []
    found = {key: key in annotations for key in api.TAS_ANNOTATIONS}
    at: Path = (*meta_path, "annotations")
    count = sum(found[k] for k in (api.PODSET_REQUIRED_TOPOLOGY, api.PODSET_PREFERRED_TOPOLOGY,
                                   api.PODSET_UNCONSTRAINED_TOPOLOGY))
    if count > 1:
        problems.append((at, field_error(ErrorType.INVALID, at, OMIT,
                                         "must not contain more than one topology annotation: "
                                         f'["{api.PODSET_REQUIRED_TOPOLOGY}", "{api.PODSET_PREFERRED_TOPOLOGY}", '
                                         f'"{api.PODSET_UNCONSTRAINED_TOPOLOGY}"]')))
    for key in (api.PODSET_REQUIRED_TOPOLOGY, api.PODSET_PREFERRED_TOPOLOGY, api.PODSET_SLICE_REQUIRED_TOPOLOGY):
        if found[key]:
            problems.extend(_label_name(annotations[key], (*at, key)))
    slice_required, slice_size = found[api.PODSET_SLICE_REQUIRED_TOPOLOGY], found[api.PODSET_SLICE_SIZE]
    if found[api.PODSET_GROUP_NAME]:
        group_at: Path = (*at, api.PODSET_GROUP_NAME)
        value = str(annotations[api.PODSET_GROUP_NAME])
        if value.isascii() and value.isdigit() and int(value) < 2**64:
            problems.append((group_at, invalid(group_at, value, "must not be a number")))
        if slice_size:
            problems.append((group_at, forbidden(group_at, f"may not be set when '{api.PODSET_SLICE_SIZE}' is specified")))
        if slice_required:
            problems.append((group_at, forbidden(
                group_at, f"may not be set when '{api.PODSET_SLICE_REQUIRED_TOPOLOGY}' is specified")))
        if not found[api.PODSET_PREFERRED_TOPOLOGY] and not found[api.PODSET_REQUIRED_TOPOLOGY]:
            problems.append((group_at, forbidden(group_at, "may not be set when neither "
                                                           f"'{api.PODSET_PREFERRED_TOPOLOGY}' nor "
                                                           f"'{api.PODSET_REQUIRED_TOPOLOGY}' is specified")))
    if found[api.PODSET_UNCONSTRAINED_TOPOLOGY]:
        where: Path = (*at, api.PODSET_UNCONSTRAINED_TOPOLOGY)
        text = str(annotations[api.PODSET_UNCONSTRAINED_TOPOLOGY])
        if parse_go_bool(text) is None:
            problems.append((where, invalid(where, text, "must be a boolean value")))
    if slice_size:
        where = (*at, api.PODSET_SLICE_SIZE)
        text = str(annotations[api.PODSET_SLICE_SIZE])
        size = parse_go_int32(text)
        if size is None:
            problems.append((where, invalid(where, text, "must be a numeric value")))
        elif size < 1:
            problems.append((where, invalid(where, text, "must be greater than or equal to 1")))
    if slice_required and not slice_size:
        where = (*at, api.PODSET_SLICE_SIZE)
        problems.append((where, required(where, f"must be set when '{api.PODSET_SLICE_REQUIRED_TOPOLOGY}' is specified")))
    if not slice_required and slice_size:
        where = (*at, api.PODSET_SLICE_SIZE)
        problems.append((where, forbidden(where, f"may not be set when '{api.PODSET_SLICE_REQUIRED_TOPOLOGY}' is not specified")))
    problems.extend(_validate_constraints(at, annotations, slice_required, slice_size, found[api.PODSET_GROUP_NAME],
                                          multi_layer))
    return problems


def _validate_constraints(at: Path, annotations: Mapping[str, Any], slice_required: bool, slice_size: bool,
                          group_name: bool, multi_layer: bool) -> list[Problem]:
    """``validateSliceRequiredTopologyConstraintsAnnotation``."""
    key = api.PODSET_SLICE_REQUIRED_TOPOLOGY_CONSTRAINTS
    if key not in annotations:
        return []
    where: Path = (*at, key)
    if not multi_layer:
        return [(where, forbidden(where, "the TASMultiLayerTopology feature gate must be enabled to use this annotation"))]
    problems: list[Problem] = []
    if slice_required:
        problems.append((where, forbidden(where, f"may not be set when '{api.PODSET_SLICE_REQUIRED_TOPOLOGY}' is specified")))
    if slice_size:
        problems.append((where, forbidden(where, f"may not be set when '{api.PODSET_SLICE_SIZE}' is specified")))
    if group_name:
        group_at: Path = (*at, api.PODSET_GROUP_NAME)
        problems.append((group_at, forbidden(group_at, f"may not be set when '{key}' is specified")))
    text = str(annotations[key])
    constraints = parse_constraints(text)
    if isinstance(constraints, str):
        problems.append((where, invalid(where, text, f"must be a valid JSON array: {constraints}")))
        return problems
    if not 1 <= len(constraints) <= 3:
        problems.append((where, invalid(where, text, LAYER_COUNT_ERROR)))
        return problems
    for i, constraint in enumerate(constraints):
        problems.extend(_label_name(constraint["topology"], (*where, i, "topology")))
        if constraint["size"] < 1:
            size_at: Path = (*where, i, "size")
            problems.append((size_at, invalid(size_at, constraint["size"], "must be greater than or equal to 1")))
    seen: dict[str, int] = {}
    for i, constraint in enumerate(constraints):
        if constraint["topology"] in seen:
            dup_at: Path = (*where, i, "topology")
            problems.append((dup_at, duplicate(dup_at, f"{constraint['topology']} (also at index {seen[constraint['topology']]})")))
        else:
            seen[constraint["topology"]] = i
    for i in range(len(constraints) - 1):
        upper, lower = constraints[i]["size"], constraints[i + 1]["size"]
        if lower > 0 and upper % lower != 0:
            size_at = (*where, i + 1, "size")
            problems.append((size_at, invalid(size_at, lower, f"must evenly divide the parent layer size {upper}")))
    return problems


def validate_slice_size_upper_bound(meta_path: Path, meta: Any, count: int) -> list[Problem]:
    """``ValidateSliceSizeAnnotationUpperBound``: slice sizes no larger than the podSet's count."""
    annotations = _annotations(meta)
    at: Path = (*meta_path, "annotations")
    problems: list[Problem] = []
    if api.PODSET_SLICE_SIZE in annotations:
        where: Path = (*at, api.PODSET_SLICE_SIZE)
        text = str(annotations[api.PODSET_SLICE_SIZE])
        size = parse_go_int32(text)
        if size is None:
            return [(where, invalid(where, text, "must be a numeric value"))]
        if size > count:
            problems.append((where, invalid(where, text, f"must not be greater than pod set count {count}")))
    key = api.PODSET_SLICE_REQUIRED_TOPOLOGY_CONSTRAINTS
    if key in annotations:
        constraints = parse_constraints(str(annotations[key]))
        if isinstance(constraints, list) and constraints and constraints[0]["size"] > count:
            where = (*at, key)
            problems.append((where, invalid(where, constraints[0]["size"], f"must not be greater than pod set count {count}")))
    return problems


@dataclass(frozen=True, slots=True)
class GroupedPodSet:
    """A podSet as ``ValidatePodSetGroupingTopology`` sees it."""

    name: str
    count: int
    request: Mapping[str, Any] | None
    #: Path of the podSet's pod template ``metadata.annotations`` in the job.
    annotations_at: Path


def validate_podset_grouping(pod_sets: Sequence[GroupedPodSet]) -> list[Problem]:
    """``ValidatePodSetGroupingTopology``: a ``podset-group-name`` groups exactly two podSets, one of them
    with a single pod, with the same required or preferred topology."""
    groups: dict[str, list[GroupedPodSet]] = {}
    for pod_set in pod_sets:
        name = (pod_set.request or {}).get("podSetGroupName")
        if isinstance(name, str):
            groups.setdefault(name, []).append(pod_set)
    problems: list[Problem] = []
    for group, members in groups.items():
        if len(members) != 2:
            for member in members:
                where: Path = (*member.annotations_at, api.PODSET_GROUP_NAME)
                problems.append((where, invalid(where, group, "can only define groups of exactly 2 pod sets, got: "
                                                               f"{len(members)} pod set(s)")))
            continue
        first, second = members
        if first.count != 1 and second.count != 1:
            detail = ("can only define groups where at least one pod set has only 1 replica, got: "
                      f"{first.count} replica(s) and {second.count} replica(s) in the group")
            for member in members:
                where = (*member.annotations_at, api.PODSET_GROUP_NAME)
                problems.append((where, invalid(where, group, detail)))
        if not _same_topology(first.request or {}, second.request or {}):
            template = (f"must specify '{api.PODSET_REQUIRED_TOPOLOGY}' or '{api.PODSET_PREFERRED_TOPOLOGY}' "
                        "topology consistent with '{other}' in group '" + group + "'")
            problems.append((first.annotations_at, field_error(
                ErrorType.INVALID, first.annotations_at, OMIT, template.format(other=path_string(second.annotations_at)))))
            problems.append((second.annotations_at, field_error(
                ErrorType.INVALID, second.annotations_at, OMIT, template.format(other=path_string(first.annotations_at)))))
    return problems


def _same_topology(first: Mapping[str, Any], second: Mapping[str, Any]) -> bool:
    """``topologyRequestsValid``: both have required or preferred, and the same ones."""
    for request in (first, second):
        if request.get("required") is None and request.get("preferred") is None:
            return False
    return first.get("required") == second.get("required") and first.get("preferred") == second.get("preferred")
