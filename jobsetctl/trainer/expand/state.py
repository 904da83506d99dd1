"""What the expansion pipeline passes from phase to phase, and the metadata every emitted object gets."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jobsetctl.kube.featuregates import FeatureGates
from jobsetctl.trainer import api
from jobsetctl.trainer.expand.info import RuntimeInfo
from jobsetctl.trainer.expand.model import Object, TrainJobView


@dataclass(slots=True)
class State:
    """The working TrainJob (plugins rewrite ``trainer.command``/``args`` in it, as the Go plugins
    mutate their in-memory copy), the runtime, the Info, and reconcile errors met on the way."""

    trainjob: TrainJobView
    runtime: Object
    info: RuntimeInfo
    gates: FeatureGates
    errors: list[str] = field(default_factory=list)

    def fail(self, error: str) -> None:
        """Record a reconcile error: upstream the whole reconcile fails and nothing is applied."""
        self.errors.append(error)


def owner_reference(trainjob: TrainJobView) -> dict[str, Any]:
    """The controller ownerReference every object carries (trainer.md §3.1 step 7). Without
    ``metadata.uid`` (not created yet) the uid is empty."""
    return {
        "apiVersion": api.API_VERSION,
        "kind": api.TRAINJOB,
        "name": trainjob.name,
        "uid": trainjob.uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def owned_metadata(trainjob: TrainJobView, name: str) -> dict[str, Any]:
    return {"name": name, "namespace": trainjob.namespace, "ownerReferences": [owner_reference(trainjob)]}


def config_map(trainjob: TrainJobView, name: str, data: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": owned_metadata(trainjob, name), "data": data}
