"""Resolving a TrainJob's ``spec.runtimeRef`` (trainer.md §2.4 step A, §2.6).

Shared by the validating webhook and by callers that expand a TrainJob (render, simulate): a
TrainingRuntime is looked up in the TrainJob's namespace, a ClusterTrainingRuntime cluster-wide.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jobsetctl.diagnostics import Finding
from jobsetctl.kinds.interface import ClusterView
from jobsetctl.kube.field import invalid
from jobsetctl.trainer import api
from jobsetctl.trainer import rules as r
from jobsetctl.trainer.expand.model import RuntimeRef, TrainJobView, as_dict

_SUPPORTED = {
    api.group_kind(api.TRAINING_RUNTIME, api.GROUP): api.TRAINING_RUNTIME,
    api.group_kind(api.CLUSTER_TRAINING_RUNTIME, api.GROUP): api.CLUSTER_TRAINING_RUNTIME,
}


@dataclass(slots=True)
class Resolution:
    """The runtime a TrainJob references, or the findings explaining why there is none."""

    runtime: dict[str, Any] | None
    findings: list[Finding]


def lookup_runtime(trainjob: TrainJobView, cluster: ClusterView) -> dict[str, Any] | None:
    """The referenced runtime object, or None (unsupported kind or not found)."""
    ref = trainjob.runtime_ref
    kind = _SUPPORTED.get(ref.group_kind)
    if kind == api.TRAINING_RUNTIME:
        return cluster.get(api.GROUP, kind, trainjob.namespace, ref.name)
    if kind == api.CLUSTER_TRAINING_RUNTIME:
        return cluster.get(api.GROUP, kind, "", ref.name)
    return None


def resolve(trainjob: TrainJobView, cluster: ClusterView) -> Resolution:
    """Step A with its exact messages, including the capital-R ``spec.RuntimeRef`` quirk."""
    ref = trainjob.runtime_ref
    kind = _SUPPORTED.get(ref.group_kind)
    if kind is None:
        # A plain (non-field) error, returned as is by controller-runtime.
        return Resolution(None, [r.RUNTIME_UNSUPPORTED.finding(
            api.unsupported_runtime_message(ref.group_kind), path="spec.runtimeRef", at=("spec", "runtimeRef"),
        )])
    runtime = lookup_runtime(trainjob, cluster)
    if runtime is None:
        return Resolution(None, [_not_found(ref, kind, _known_names(trainjob, kind, cluster))])
    findings: list[Finding] = []
    labels = (runtime.get("metadata") or {}).get("labels") if isinstance(runtime.get("metadata"), dict) else None
    if kind == api.CLUSTER_TRAINING_RUNTIME and isinstance(labels, dict) and (
        labels.get(api.LABEL_SUPPORT) == api.SUPPORT_DEPRECATED
    ):
        findings.append(r.RUNTIME_DEPRECATED.finding(
            f'Referenced ClusterTrainingRuntime "{ref.name}" is deprecated and will be removed in a future '
            f"release of Kubeflow Trainer. See runtime deprecation policy: {api.DEPRECATION_POLICY_URL}",
            path="spec.runtimeRef.name",
        ))
    return Resolution(runtime, findings)


_LOOKUP_HINT = "jobsetctl looks runtimes up among the inputs, the context, --runtimes files and its built-in catalog"


def _known_names(trainjob: TrainJobView, kind: str, cluster: ClusterView) -> list[str]:
    namespace = trainjob.namespace if kind == api.TRAINING_RUNTIME else None
    names = (as_dict(obj.get("metadata")).get("name") for obj in cluster.list(api.GROUP, kind, namespace))
    return [name for name in names if isinstance(name, str)]


def not_found_hint(name: str, kind: str, known: list[str]) -> str:
    """What to do about a runtime name that does not resolve: the closest names of that kind, the built-in
    ClusterTrainingRuntimes (a slip in one of them is the usual cause), and where jobsetctl looked."""
    from jobsetctl.context import did_you_mean
    from jobsetctl.trainer.catalog import CATALOG_NAMES

    candidates = [*known, *(CATALOG_NAMES if kind == api.CLUSTER_TRAINING_RUNTIME else ())]
    close = did_you_mean(name, candidates)
    suggestion = ("did you mean " + " or ".join(f'"{c}"' for c in close) + "? ") if close else ""
    return f"{suggestion}built-in ClusterTrainingRuntimes: {', '.join(CATALOG_NAMES)}; {_LOOKUP_HINT}"


def _not_found(ref: RuntimeRef, kind: str, known: list[str]) -> Finding:
    hint = not_found_hint(ref.name, kind, known)
    unresolved = (api.GROUP, kind, ref.name)
    if kind == api.TRAINING_RUNTIME:
        detail = (
            f'{api.TRAINING_RUNTIME_RESOURCE} "{ref.name}" not found: '
            "specified trainingRuntime must be created before the TrainJob is created"
        )
        return r.RUNTIME_NOT_FOUND.finding(
            invalid("spec.runtimeRef", ref.as_dict(), detail),
            path="spec.runtimeRef",
            at=("spec", "runtimeRef", "name"),
            hint=hint,
            unresolved=unresolved,
        )
    detail = (
        f'{api.CLUSTER_TRAINING_RUNTIME_RESOURCE} "{ref.name}" not found: '
        "specified clusterTrainingRuntime must be created before the TrainJob is created"
    )
    # Quirk (asserted upstream): the ClusterTrainingRuntime branch reports the path as spec.RuntimeRef.
    return r.RUNTIME_NOT_FOUND.finding(
        invalid("spec.RuntimeRef", ref.as_dict(), detail),
        path="spec.RuntimeRef",
        at=("spec", "runtimeRef", "name"),
        hint=hint,
        unresolved=unresolved,
    )
