"""Trainer's ``pkg/apply`` upserts and env conversion (trainer.md §3.13 step 1, §6).

Upsert = replace the first matching item in place, else append: env by ``name``, ports by
``containerPort`` *or* ``name``, volumes by ``name``, volumeMounts by ``mountPath``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from jobsetctl.kube.jsontree import copy_tree
from jobsetctl.trainer import api
from jobsetctl.trainer.expand.model import as_dict, as_str, child_list


def _upsert(items: list[Any], new: dict[str, Any], same: Callable[[Any, dict[str, Any]], bool]) -> None:
    for index, existing in enumerate(items):
        if isinstance(existing, dict) and same(existing, new):
            items[index] = copy_tree(new)
            return
    items.append(copy_tree(new))


def upsert_env(container: dict[str, Any], envs: Iterable[dict[str, Any]]) -> None:
    items = child_list(container, "env")
    for env in envs:
        _upsert(items, env, lambda a, b: a.get("name") == b.get("name"))


def upsert_ports(container: dict[str, Any], ports: Iterable[dict[str, Any]]) -> None:
    """Quirk [derived]: Go compares names with ``ptr.Equal``, which holds for two *absent* names, so
    the trainer port ``{containerPort: 29500}`` replaces the first unnamed port of the template."""
    items = child_list(container, "ports")
    for port in ports:
        _upsert(
            items,
            port,
            lambda a, b: a.get("containerPort") == b.get("containerPort") or a.get("name") == b.get("name"),
        )


def upsert_volumes(pod_spec: dict[str, Any], volumes: Iterable[dict[str, Any]]) -> None:
    items = child_list(pod_spec, "volumes")
    for volume in volumes:
        _upsert(items, volume, lambda a, b: a.get("name") == b.get("name"))


def upsert_volume_mounts(container: dict[str, Any], mounts: Iterable[dict[str, Any]]) -> None:
    items = child_list(container, "volumeMounts")
    for mount in mounts:
        _upsert(items, mount, lambda a, b: a.get("mountPath") == b.get("mountPath"))


def env_value(name: str, value: str) -> dict[str, Any]:
    return {"name": name, "value": value}


def env_completion_index(name: str) -> dict[str, Any]:
    """An env from the Indexed-Job completion index annotation (node rank, process id, task id)."""
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": api.JOB_COMPLETION_INDEX_FIELD_PATH}}}


def env_from_api(env: dict[str, Any]) -> dict[str, Any]:
    """Trainer ``apply.EnvVar``: a user EnvVar as the controller re-builds it.

    Quirks [derived]: a plain env always gets ``value`` (``""`` when absent); ``fieldRef`` keeps only
    ``fieldPath`` (``apiVersion`` is dropped); ``resourceFieldRef`` always carries ``containerName``
    and ``divisor`` (``""`` and ``0`` when absent); other sources (e.g. ``fileKeyRef``) are dropped.
    """
    out: dict[str, Any] = {"name": as_str(env.get("name"))}
    source = env.get("valueFrom")
    if not isinstance(source, dict):
        out["value"] = as_str(env.get("value"))
        return out
    converted: dict[str, Any] = {}
    field_ref = source.get("fieldRef")
    if isinstance(field_ref, dict):
        converted["fieldRef"] = {"fieldPath": as_str(field_ref.get("fieldPath"))}
    resource_ref = source.get("resourceFieldRef")
    if isinstance(resource_ref, dict):
        converted["resourceFieldRef"] = {
            "containerName": as_str(resource_ref.get("containerName")),
            "resource": as_str(resource_ref.get("resource")),
            "divisor": resource_ref.get("divisor", "0"),
        }
    for key in ("configMapKeyRef", "secretKeyRef"):
        ref = source.get(key)
        if isinstance(ref, dict):
            selector: dict[str, Any] = {"key": as_str(ref.get("key")), "name": as_str(ref.get("name"))}
            if isinstance(ref.get("optional"), bool):
                selector["optional"] = ref["optional"]
            converted[key] = selector
    out["valueFrom"] = converted
    return out


def envs_from_api(envs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [env_from_api(as_dict(env)) for env in envs]
