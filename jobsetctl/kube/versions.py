"""Kubernetes releases jobsetctl models, and which API versions each one serves.

The Kubernetes JSON Schemas shipped in ``kubernetes-validate`` are the authority for the built-in
groups (scheduling.md, "Authority for field names"): a release serves ``<group>/<version>`` for a kind
exactly when that release's schema directory has a top-level schema for it.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
from enum import StrEnum

from jobsetctl.status import UsageError


class KubeVersion(StrEnum):
    V1_35 = "1.35"
    V1_36 = "1.36"
    V1_37 = "1.37"

    @property
    def minor(self) -> int:
        # Asked on every Job sync (which scheduling API to write): a table instead of parsing each time.
        return _MINOR[self.value]

    @classmethod
    def parse(cls, text: str) -> KubeVersion:
        cleaned = text.strip().lstrip("v")
        parts = cleaned.split(".")
        key = ".".join(parts[:2])
        for version in cls:
            if version.value == key:
                return version
        known = ", ".join(v.value for v in cls)
        raise UsageError(f"unsupported Kubernetes version {text!r}: choose one of {known}")


#: Minor number of each release's value ("1.37" → 37), for :attr:`KubeVersion.minor`.
_MINOR: dict[str, int] = {version.value: int(version.value.split(".")[1]) for version in KubeVersion}

DEFAULT_KUBE_VERSION = KubeVersion.V1_37


@functools.cache
def schema_dir(version: KubeVersion, strict: bool = True) -> str:
    """The kubernetes-validate schema directory for a release (``v1.37.0-local-strict``)."""
    base = os.path.join(_kubernetes_validate_dir(), "kubernetes-json-schema")
    suffix = "-local-strict" if strict else "-local"
    candidates = sorted(
        (d for d in os.listdir(base) if d.startswith(f"v{version.value}.") and d.endswith(suffix)),
        key=lambda d: [int(p) for p in d[1:].split("-")[0].split(".")],
    )
    if not candidates:
        raise UsageError(f"kubernetes-validate has no schemas for Kubernetes {version.value}; upgrade it")
    return os.path.join(base, candidates[-1])


def _kubernetes_validate_dir() -> str:
    """Where the kubernetes-validate package is installed, found without importing it.

    Only its data files are read: importing the package would also import jsonschema, referencing, rpds
    and attrs (~50 ms of every ``validate`` and ``simulate``). ``importlib.util.find_spec`` locates a
    top-level package without executing its ``__init__`` (``importlib.resources.files`` would execute it).
    """
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        # What ``import kubernetes_validate`` raises when the package is absent.
        raise ModuleNotFoundError("No module named 'kubernetes_validate'", name="kubernetes_validate")
    return str(next(iter(spec.submodule_search_locations)))


def _group_file_part(group: str) -> str:
    # kubernetes-validate names files <kind>-<first DNS label of the group>-<version>.json; core has none.
    return group.split(".")[0] if group else ""


@functools.cache
def builtin_served_versions(version: KubeVersion, group: str, kind: str) -> tuple[str, ...]:
    """Versions of a built-in ``group``/``kind`` that ``version`` serves, from the schema files."""
    directory = schema_dir(version)
    prefix = f"{kind.lower()}-"
    group_part = _group_file_part(group)
    found: list[str] = []
    for name in os.listdir(directory):
        if not name.startswith(prefix) or not name.endswith(".json"):
            continue
        parts = name[len(prefix):-len(".json")].split("-")
        if group_part:
            if len(parts) != 2 or parts[0] != group_part:
                continue
            api_version = parts[1]
        else:
            if len(parts) != 1:
                continue
            api_version = parts[0]
        if _is_top_level_kind(os.path.join(directory, name), kind):
            found.append(api_version)
    return tuple(sorted(found, key=_version_rank, reverse=True))


def _is_top_level_kind(path: str, kind: str) -> bool:
    # Some files describe embedded types with a kind-like name (1.35 has an embedded scheduling
    # "PodGroup" inside Workload); only files whose `kind` property names the kind are API kinds.
    with open(path, encoding="utf-8") as handle:
        schema = json.load(handle)
    prop = schema.get("properties", {}).get("kind", {})
    return kind in prop.get("enum", [])


def _version_rank(api_version: str) -> tuple[int, int, int]:
    """Kubernetes version priority: GA > beta > alpha, then by number."""
    import re

    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", api_version)
    if not m:
        return (0, 0, 0)
    major, stage, minor = m.groups()
    stage_rank = {"alpha": 0, "beta": 1, None: 2}[stage]
    return (stage_rank, int(major), int(minor or 0))


def split_api_version(api_version: str) -> tuple[str, str]:
    """``"jobset.x-k8s.io/v1alpha2"`` to ``("jobset.x-k8s.io", "v1alpha2")``; ``"v1"`` to ``("", "v1")``."""
    if "/" in api_version:
        group, _, version = api_version.partition("/")
        return group, version
    return "", api_version
