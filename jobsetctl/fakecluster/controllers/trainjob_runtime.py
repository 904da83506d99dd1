"""Which runtime a TrainJob expands against at reconcile time (trainer.md §2.6, §3.2, KEP-2599).

Upstream ``NewObjects`` (``pkg/runtime/core/trainingruntime.go`` and ``clustertrainingruntime.go``) first
reads the snapshot ConfigMap ``<trainjob>-runtime-snapshot``; only when it does not exist does it GET the
live runtime, then writes the snapshot (controller-owned by the TrainJob) before building anything. From
then on the runtime may be edited or deleted without effect on the TrainJob.

Error texts, as the controller wraps them (they end up in the ``TrainJobResourcesCreationFailed`` event):

* snapshot problems (trainer.md §3.2) get a prefix that depends on the runtime kind — quirk, from
  upstream code: ``unable to get runtime snapshot: `` for a TrainingRuntime but ``getting runtime
  snapshot: `` for a ClusterTrainingRuntime;
* a missing runtime (trainer.md §2.6): ``TrainingRuntime specified in TrainJob is not found: <get error>``
  or ``not found ClusterTrainingRuntime specified in TrainJob: <get error>``, the get error being the API
  server's ``<resource> "<name>" not found``.

Unmarshalling: Go decodes the YAML with ``sigs.k8s.io/yaml`` into the typed runtime. We parse with PyYAML
and reproduce the Go error *shapes* (``error converting YAML to JSON: yaml: line N: …`` and the
``cannot unmarshal <type> into Go value of type …`` error for a document that is not a mapping); the
problem text after ``line N:`` is PyYAML's wording, not go-yaml's. A ``null`` or empty document decodes
to an empty runtime without error, so it is reported as the wrong runtime (name ``""``), as in Go.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

import yaml

from jobsetctl.fakecluster.apiserver import APIServer, controller_of
from jobsetctl.kinds.interface import Object
from jobsetctl.kube.versions import split_api_version
from jobsetctl.trainer import api
from jobsetctl.trainer.expand import runtime_snapshot
from jobsetctl.trainer.expand.model import TrainJobView, as_dict, as_str
from jobsetctl.trainer.runtimeref import lookup_runtime

#: The two runtime kinds the controller registers (trainer.md §2.4): anything else is unsupported.
SUPPORTED_RUNTIME_KINDS = frozenset({
    api.group_kind(api.TRAINING_RUNTIME, api.GROUP),
    api.group_kind(api.CLUSTER_TRAINING_RUNTIME, api.GROUP),
})

SNAPSHOT_OWNED_BY_ANOTHER = "invalid runtime snapshot: a snapshot configmap exists but is owned by another object"
SNAPSHOT_MISSING_KEY = f'invalid runtime snapshot: snapshot ConfigMap missing "{api.RUNTIME_SNAPSHOT_KEY}" data key'
SNAPSHOT_UNMARSHAL = "invalid runtime snapshot: unable to unmarshal the snapshot: "
SNAPSHOT_WRONG_RUNTIME = (
    "invalid runtime snapshot: the snapshot refers to the wrong runtime: expecting a runtime with name, "
    "api group and kind of {expected} but found runtime with name, api group and kind of {found}"
)
#: How each runtime kind wraps a snapshot read error (quirk: the two differ upstream).
SNAPSHOT_READ_PREFIX = {
    api.TRAINING_RUNTIME: "unable to get runtime snapshot: ",
    api.CLUSTER_TRAINING_RUNTIME: "getting runtime snapshot: ",
}
NOT_FOUND_PREFIX = {
    api.TRAINING_RUNTIME: "TrainingRuntime specified in TrainJob is not found: ",
    api.CLUSTER_TRAINING_RUNTIME: "not found ClusterTrainingRuntime specified in TrainJob: ",
}
NOT_FOUND_RESOURCE = {
    api.TRAINING_RUNTIME: api.TRAINING_RUNTIME_RESOURCE,
    api.CLUSTER_TRAINING_RUNTIME: api.CLUSTER_TRAINING_RUNTIME_RESOURCE,
}
SNAPSHOT_CREATE_PREFIX = "creating runtime snapshot: applying runtime snapshot ConfigMap: "
#: JSON type names in encoding/json's "cannot unmarshal" error.
_JSON_TYPE = {str: "string", int: "number", float: "number", bool: "bool", list: "array"}


@dataclass(frozen=True, slots=True)
class ResolvedRuntime:
    """The runtime to expand against, or the reconcile error that stops the reconcile."""

    runtime: Object | None
    error: str | None = None
    #: The snapshot YAML the runtime came from (or was just written to): identifies the runtime's content.
    snapshot_text: str = ""


def is_supported(view: TrainJobView) -> bool:
    return view.runtime_ref.group_kind in SUPPORTED_RUNTIME_KINDS


def snapshot_name(view: TrainJobView) -> str:
    return view.name + api.RUNTIME_SNAPSHOT_SUFFIX


def resolve_runtime(cluster: APIServer, trainjob: Object, default_namespace: str) -> ResolvedRuntime:
    """Snapshot first, else the live runtime (then write the snapshot). ``trainjob`` must reference a
    supported kind (:func:`is_supported`)."""
    view = TrainJobView(trainjob, default_namespace)
    kind = view.runtime_ref.kind
    snapshot = cluster.get("", "ConfigMap", view.namespace, snapshot_name(view))
    if snapshot is not None:
        runtime, text, error = read_snapshot(snapshot, view)
        if error is not None:
            return ResolvedRuntime(None, SNAPSHOT_READ_PREFIX[kind] + error)
        return ResolvedRuntime(runtime, None, text)

    runtime = lookup_runtime(view, cluster)
    if runtime is None:
        ref = view.runtime_ref
        return ResolvedRuntime(None, f'{NOT_FOUND_PREFIX[kind]}{NOT_FOUND_RESOURCE[kind]} "{ref.name}" not found')
    config_map = runtime_snapshot(trainjob, runtime, default_namespace=default_namespace)
    result = cluster.create(config_map)
    if not result.ok:
        return ResolvedRuntime(None, SNAPSHOT_CREATE_PREFIX + result.message())
    text = as_str(as_dict(config_map.get("data")).get(api.RUNTIME_SNAPSHOT_KEY))
    return ResolvedRuntime(runtime, None, text)


def read_snapshot(config_map: Object, view: TrainJobView) -> tuple[Object | None, str, str | None]:
    """``getRuntimeSnapshot``: (runtime, its YAML, None) or (None, "", the trainer.md §3.2 error)."""
    owner = controller_of(config_map)
    if owner is None or owner.get("uid") != view.uid:
        return None, "", SNAPSHOT_OWNED_BY_ANOTHER
    data = config_map.get("data")
    text = data.get(api.RUNTIME_SNAPSHOT_KEY) if isinstance(data, dict) else None
    if not isinstance(text, str):
        return None, "", SNAPSHOT_MISSING_KEY
    runtime, error = parse_snapshot(text, view.runtime_ref.kind)
    if error is not None:
        return None, "", SNAPSHOT_UNMARSHAL + error
    assert runtime is not None
    mismatch = wrong_runtime(runtime, view)
    if mismatch is not None:
        return None, "", mismatch
    return runtime, text, None


@functools.lru_cache(maxsize=128)
def parse_snapshot(text: str, kind: str) -> tuple[Object | None, str | None]:
    """The runtime a snapshot holds, or the decoding error (Go's shape, see the module docstring).

    Cached: every reconcile reads the snapshot again and most TrainJobs share a few runtimes. Callers
    must not mutate the returned object (the expansion never does).
    """
    try:
        value: Any = yaml.safe_load(text)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = f"line {mark.line + 1}: " if mark is not None else ""
        problem = error.problem or error.context or "invalid YAML"
        return None, f"error converting YAML to JSON: yaml: {line}{problem}"
    except yaml.YAMLError as error:
        return None, f"error converting YAML to JSON: yaml: {error}"
    if value is None:
        return {}, None  # JSON null decodes into a struct as a no-op
    if not isinstance(value, dict):
        json_type = _JSON_TYPE.get(type(value), "string")
        return None, (
            f"error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {json_type} into Go value "
            f"of type {api.VERSION}.{kind}"
        )
    return value, None


def wrong_runtime(runtime: Object, view: TrainJobView) -> str | None:
    """The name/group/kind check of the snapshot against ``spec.runtimeRef`` (defaulted, so never nil)."""
    ref = view.runtime_ref
    api_version = runtime.get("apiVersion")
    group = split_api_version(api_version)[0] if isinstance(api_version, str) else ""
    kind = as_str(runtime.get("kind"))
    name = as_str(as_dict(runtime.get("metadata")).get("name"))
    if (name, group, kind) == (ref.name, ref.api_group, ref.kind):
        return None
    return SNAPSHOT_WRONG_RUNTIME.format(
        expected=_go_quoted(ref.name, ref.api_group, ref.kind),
        found=_go_quoted(name, group, kind),
    )


def _go_quoted(*values: str) -> str:
    """Go's ``%q, %q, %q`` (JSON string quoting matches it for the names Kubernetes allows)."""
    return ", ".join(json.dumps(value, ensure_ascii=False) for value in values)
