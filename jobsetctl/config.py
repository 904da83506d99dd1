"""``.jobsetctl.yaml``: project defaults for the command-line options.

Found by ``--config FILE`` or, without it, as the nearest ``.jobsetctl.yaml`` from the current directory
upward (like yamllint's and kube-linter's files). Paths in it are relative to the file. Options given on
the command line win; ``ignore`` lists are merged. Example::

    kubernetesVersion: "1.36"
    featureGates: {RestartJob: true}
    strict: true
    ignore: [jobset-kueue-depends-on]
    runtimes: [platform/runtimes/]
    context: [platform/, clusters/prod/priorityclasses.yaml]   # resolved against, never reported
    admissionOnly: false   # true: only what the API server answers (validate --admission-only)
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from jobsetctl.status import UsageError

CONFIG_NAME = ".jobsetctl.yaml"
_KEYS = {"kubernetesVersion", "featureGates", "strict", "ignore", "runtimes", "crds", "context", "admissionOnly"}


@dataclass(frozen=True, slots=True)
class Config:
    path: str | None = None
    kubernetes_version: str | None = None
    feature_gates: dict[str, bool] = field(default_factory=dict)
    strict: bool | None = None
    ignore: tuple[str, ...] = ()
    runtimes: tuple[str, ...] = ()
    crds: tuple[str, ...] = ()
    context: tuple[str, ...] = ()
    admission_only: bool | None = None
    #: ``file:line:column`` of each key, for errors found once the command line is merged in.
    positions: dict[str, str] = field(default_factory=dict)

    def where(self, key: str) -> str:
        return self.positions.get(key, self.path or CONFIG_NAME)


def find_config(start: str) -> str | None:
    directory = os.path.abspath(start)
    while True:
        candidate = os.path.join(directory, CONFIG_NAME)
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def load_config(explicit: str | None, start: str = ".") -> Config:
    path = explicit if explicit is not None else find_config(start)
    if path is None:
        return Config()
    from jobsetctl.loader.yamlload import PosScalar, load_settings

    documents = load_settings(path, f"{path}: ", "cannot read configuration: ", "configuration is not UTF-8 text")
    data: Any = documents[0].value if documents else {}
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise UsageError(f"{path}:1:1: configuration must be a mapping")
    document = documents[0] if documents else None

    def where(key: str) -> str:
        if document is None:
            return path
        line, column = document.position((key,))
        return f"{path}:{line}:{column}"

    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise UsageError(f"{where(unknown[0])}: unknown configuration key {unknown[0]!r}; known keys: {', '.join(sorted(_KEYS))}")
    base = os.path.dirname(os.path.abspath(path))

    def strings(key: str) -> tuple[str, ...]:
        value = data.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise UsageError(f"{where(key)}: {key} must be a list of strings")
        return tuple(value)

    def paths(key: str) -> tuple[str, ...]:
        return tuple(os.path.join(base, p) for p in strings(key))

    version = data.get("kubernetesVersion")
    if version is not None and (not isinstance(version, str | int | float) or isinstance(version, bool)):
        raise UsageError(f"{where('kubernetesVersion')}: kubernetesVersion must be a string such as \"1.37\"")
    if version is not None:
        from jobsetctl.kube.versions import KubeVersion

        try:
            KubeVersion.parse(str(version))
        except UsageError as exc:
            # An unquoted 1.30 is the number 1.3: say where, and that quoting keeps the text.
            quote = ""
            node = document.node_at(("kubernetesVersion",)) if document is not None else None
            if isinstance(node, PosScalar):
                quote = f' (YAML reads the unquoted {node.text} as the number {version}; quote it: "{node.text}")'
            raise UsageError(f"{where('kubernetesVersion')}: {exc}{quote}") from None
    gates = data.get("featureGates", {})
    if isinstance(gates, str):
        parts = [p.strip() for p in gates.split(",") if p.strip()]
        malformed = [p for p in parts if "=" not in p]
        if malformed:
            raise UsageError(f"{where('featureGates')}: invalid feature gate {malformed[0]!r}: expected Name=true|false")
        gates = dict(p.split("=", 1) for p in parts)
    if not isinstance(gates, dict):
        raise UsageError(f"{where('featureGates')}: featureGates must be a mapping of gate names to true/false")
    strict = data.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise UsageError(f"{where('strict')}: strict must be true or false")
    admission_only = data.get("admissionOnly")
    if admission_only is not None and not isinstance(admission_only, bool):
        raise UsageError(f"{where('admissionOnly')}: admissionOnly must be true or false")
    return Config(
        path=path,
        kubernetes_version=None if version is None else str(version),
        feature_gates=dict(gates),
        strict=strict,
        ignore=strings("ignore"),
        runtimes=paths("runtimes"),
        crds=paths("crds"),
        context=paths("context"),
        admission_only=admission_only,
        positions={key: where(key) for key in data},
    )
