"""The TrainJob mutating webhook ``defaulter.trainjob.trainer.kubeflow.org`` (trainer.md §2.3).

It only stamps ``runtimePatches[].time``. On CREATE every patch without a time gets ``now``. On
UPDATE a patch whose manager existed before keeps the old time when it is otherwise unchanged and
gets ``now`` when it changed (even if the client sent a time); a new manager gets ``now`` unless the
client sent a time.

The admission chain calls ``KindHandler.default`` without the old object, so the UPDATE branch runs
at the start of ``validate_update`` (on the same admitted object) instead.
"""

from __future__ import annotations

from typing import Any

from jobsetctl.trainer.expand.model import as_dict, as_list
from jobsetctl.trainer.webhook_jobset import semantic_equal


def stamp_create(obj: dict[str, Any], now: str) -> None:
    for patch in as_list(as_dict(obj.get("spec")).get("runtimePatches")):
        if isinstance(patch, dict) and patch.get("time") is None:
            patch["time"] = now


def stamp_update(new: dict[str, Any], old: dict[str, Any], now: str) -> None:
    old_by_manager: dict[Any, dict[str, Any]] = {}
    for patch in as_list(as_dict(old.get("spec")).get("runtimePatches")):
        if isinstance(patch, dict):
            old_by_manager[patch.get("manager")] = patch
    for patch in as_list(as_dict(new.get("spec")).get("runtimePatches")):
        if not isinstance(patch, dict):
            continue
        previous = old_by_manager.get(patch.get("manager"))
        if previous is not None:
            unchanged = semantic_equal(_without_time(previous), _without_time(patch))
            if unchanged and previous.get("time") is not None:
                patch["time"] = previous["time"]
            elif unchanged:
                patch.pop("time", None)
            else:
                patch["time"] = now
        elif patch.get("time") is None:
            patch["time"] = now


def _without_time(patch: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in patch.items() if key != "time"}
