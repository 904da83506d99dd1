"""The runtime snapshot ConfigMap (trainer.md §3.2, KEP-2599).

On its first reconcile the controller stores the whole runtime object as YAML under data key
``runtime`` of ``<trainjob>-runtime-snapshot`` (controller-owned by the TrainJob) and later expands from
that snapshot, so editing or deleting the runtime afterwards no longer affects the TrainJob.
"""

from __future__ import annotations

from typing import Any

import yaml

from jobsetctl.trainer import api
from jobsetctl.trainer.expand.model import Object, TrainJobView
from jobsetctl.trainer.expand.state import config_map


def runtime_snapshot(trainjob: Object, runtime: Object, *, default_namespace: str = "default") -> dict[str, Any]:
    """The snapshot ConfigMap for ``trainjob`` taken of ``runtime``.

    sigs.k8s.io/yaml marshals through JSON, so keys come out sorted; we do the same.
    """
    view = TrainJobView(trainjob, default_namespace)
    text = yaml.safe_dump(runtime, sort_keys=True, default_flow_style=False, allow_unicode=True)
    return config_map(view, view.name + api.RUNTIME_SNAPSHOT_SUFFIX, {api.RUNTIME_SNAPSHOT_KEY: text})
