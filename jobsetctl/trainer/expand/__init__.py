"""TrainJob + runtime → JobSet and the other objects the Trainer controller applies (trainer.md §3).

Pipeline (§3.1), one module per step or plugin:

1. defaults (§3.3, :mod:`.model`) on private copies of both objects;
2. the runtime Info (:mod:`.info`): JobSet labels/annotations, runtimePatches strategic merge
   (:mod:`.smp`), ``resourcesPerNode`` merge, PodSets;
3. ML-policy plugins in a fixed order (Go runs them in map order; their effects commute except for
   the order of new env entries, see :mod:`.xgboost`): :mod:`.plainml`, :mod:`.torch`, :mod:`.mpi`,
   :mod:`.jax`, :mod:`.xgboost`, :mod:`.flux`;
4. pod-group plugins (:mod:`.podgroups`), then the TrainJobStatus plugin (:mod:`.status`, gated);
5. PreBuildSync and the JobSet build (:mod:`.jobset_build`), then the other objects in a fixed order:
   PodGroup(s), Secret(s), ConfigMap(s) (§3.13b, §6).

The expansion never raises on admitted input. What would make the controller fail a reconcile
(quirks 11, Flux without numNodes, a missing envInjection target) is returned in
:attr:`Expansion.errors`; upstream then applies nothing, and ``jobset`` is our best effort for
inspection. The runtime snapshot ConfigMap is :func:`runtime_snapshot`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jobsetctl.kube.featuregates import FeatureGates
from jobsetctl.kube.jsontree import copy_tree
from jobsetctl.trainer import api
from jobsetctl.trainer.expand import flux, jax, jobset_build, mpi, plainml, podgroups, status, torch, xgboost
from jobsetctl.trainer.expand.info import RuntimeInfo, build_info
from jobsetctl.trainer.expand.model import Object, TrainJobView, default_runtime, default_trainjob
from jobsetctl.trainer.expand.snapshot import runtime_snapshot
from jobsetctl.trainer.expand.state import State

__all__ = ["Expansion", "expand", "prepare", "runtime_snapshot"]


@dataclass(slots=True)
class Expansion:
    """What the controller applies for one TrainJob."""

    jobset: dict[str, Any]
    #: PodGroup(s), Secret(s), ConfigMap(s), in that order.
    objects: list[dict[str, Any]] = field(default_factory=list)
    #: Reconcile errors the controller would hit; when any, upstream applies nothing.
    errors: list[str] = field(default_factory=list)
    #: Why the controller would do nothing at all (``managedBy`` names another controller), or None.
    skipped: str | None = None
    #: The Info after every plugin ran (PodSets with counts and endpoints), for callers that need it.
    info: RuntimeInfo | None = None

    @property
    def applied(self) -> bool:
        """Whether the controller would apply these objects."""
        return self.skipped is None and not self.errors

    def all_objects(self) -> list[dict[str, Any]]:
        return [self.jobset, *self.objects]


def prepare(trainjob: Object, runtime: Object, default_namespace: str = "default") -> tuple[TrainJobView, Object]:
    """Defaulted private copies of a TrainJob and its runtime (trainer.md §3.3)."""
    trainjob_copy = copy_tree(trainjob)
    default_trainjob(trainjob_copy)
    runtime_copy = copy_tree(runtime)
    default_runtime(runtime_copy)
    return TrainJobView(trainjob_copy, default_namespace), runtime_copy


def expand(
    trainjob: Object, runtime: Object, *, gates: FeatureGates, default_namespace: str = "default"
) -> Expansion:
    """Expand ``trainjob`` against ``runtime`` (neither is modified). Deterministic."""
    view, runtime_copy = prepare(trainjob, runtime, default_namespace)
    state = State(view, runtime_copy, build_info(view, runtime_copy), gates)
    skipped = None
    if view.managed_by != api.MANAGED_BY_TRAINER:
        skipped = f"spec.managedBy is {view.managed_by!r}: the Trainer controller does not reconcile it"

    for plugin in (plainml, torch, mpi, jax, xgboost, flux):
        plugin.enforce(state)
    podgroups.enforce(state)
    status.enforce(state)
    jobset_build.pre_build_sync(state)

    jobset = jobset_build.build(state)
    objects = podgroups.build(state)
    built: list[dict[str, Any]] = [*mpi.build(state), *flux.build(state), *status.build(state)]
    objects += [o for o in built if o["kind"] == "Secret"] + [o for o in built if o["kind"] == "ConfigMap"]
    return Expansion(jobset, objects, state.errors, skipped, state.info)
