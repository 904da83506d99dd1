"""Which expanded objects the controller (re)applies when some already exist (trainer.md §3.8.4,
§3.10, §3.13 step 7, §3.14). For the fake API server: expansion itself never looks at the cluster.

* JobSet: applied when absent, or when the TrainJob *or* the existing JobSet is suspended; a running
  JobSet is never mutated (so runtimePatches edits made while suspended reach it, then freeze).
* PodGroup (Coscheduling or Volcano): applied when absent or while the TrainJob is suspended.
* MPI SSH Secret: created only when absent (it is immutable).
* Everything else (hostfile, Flux, status and snapshot ConfigMaps): applied every reconcile.
"""

from __future__ import annotations

from typing import Any

from jobsetctl.trainer import api
from jobsetctl.trainer.expand.model import as_dict, as_str


def should_apply(obj: dict[str, Any], trainjob: dict[str, Any], existing: dict[str, Any] | None) -> bool:
    """Whether the controller applies ``obj`` given the object of the same kind and name, if any."""
    if existing is None:
        return True
    trainjob_suspended = as_dict(trainjob.get("spec")).get("suspend") is True
    kind = obj.get("kind")
    if kind == "JobSet":
        return trainjob_suspended or as_dict(existing.get("spec")).get("suspend") is True
    if kind == "PodGroup":
        return trainjob_suspended
    name = as_str(as_dict(obj.get("metadata")).get("name"))
    return not (kind == "Secret" and name.endswith(api.MPI_SSH_AUTH_SECRET_SUFFIX))
