"""An in-memory :class:`~jobsetctl.kinds.interface.ClusterView` over a set of objects (validate's inputs)."""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from typing import Any

from jobsetctl.kinds.interface import Object
from jobsetctl.kube.versions import split_api_version

#: Kinds that live outside namespaces; every other kind gets the default namespace when it names none.
CLUSTER_SCOPED = frozenset({
    ("", "Node"), ("", "Namespace"), ("", "PersistentVolume"), ("scheduling.k8s.io", "PriorityClass"),
    ("trainer.kubeflow.org", "ClusterTrainingRuntime"), ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("storage.k8s.io", "StorageClass"), ("kueue.x-k8s.io", "ClusterQueue"), ("kueue.x-k8s.io", "ResourceFlavor"),
    ("kueue.x-k8s.io", "Cohort"), ("kueue.x-k8s.io", "WorkloadPriorityClass"), ("kueue.x-k8s.io", "Topology"),
    ("kueue.x-k8s.io", "AdmissionCheck"),
})


def is_cluster_scoped(group: str, kind: str) -> bool:
    return (group, kind) in CLUSTER_SCOPED


def resource_plural(kind: str) -> str:
    """The resource name of a kind, as API errors spell it (``jobs``, ``priorityclasses``): the kind in
    lower case with the English plural ending Kubernetes' RESTMapper guesses for it."""
    lower = kind.lower()
    if lower.endswith(("s", "x", "z", "ch", "sh")):
        return lower + "es"
    if lower.endswith("y") and lower[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        return lower[:-1] + "ies"
    return lower + "s"


def already_exists(group: str, kind: str, name: str) -> str:
    """The API server's AlreadyExists text, ``<resource>.<group> "<name>" already exists``: what the fake
    API server answers a second create with, and what ``duplicate-object`` predicts."""
    from jobsetctl.kube.field import go_quote

    return f'{resource_plural(kind)}{f".{group}" if group else ""} {go_quote(name)} already exists'


def object_key(obj: Object) -> tuple[str, str, str, str]:
    """(group, kind, namespace, name) of a manifest; tolerant of malformed input."""
    api_version = obj.get("apiVersion")
    group = split_api_version(api_version)[0] if isinstance(api_version, str) else ""
    kind = obj.get("kind")
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
    namespace = meta.get("namespace")
    name = meta.get("name")
    return (
        group,
        kind if isinstance(kind, str) else "",
        namespace if isinstance(namespace, str) else "",
        name if isinstance(name, str) else "",
    )


def stored_key(obj: Object, default_namespace: str) -> tuple[str, str, str, str]:
    """:func:`object_key` as the API server stores the object: a namespaced one without a namespace goes to
    ``default_namespace``, as kubectl creates it."""
    group, kind, namespace, name = object_key(obj)
    if not namespace and not is_cluster_scoped(group, kind):
        namespace = default_namespace
    return group, kind, namespace, name


class ObjectIndex:
    """Objects by group, kind, namespace and name. Later additions of the same key win, like an apply."""

    def __init__(self, objects: Iterable[Object] = (), default_namespace: str = "default") -> None:
        self._objects: dict[tuple[str, str, str, str], Object] = {}
        # Per kind, the keys in sorted order, rebuilt only after that kind changed: lookups by kind run
        # once per pod template in the reference layer, so sorting the whole index each time was quadratic.
        self._by_kind: dict[tuple[str, str], builtins.list[tuple[str, str, str, str]]] = {}
        self._dirty: set[tuple[str, str]] = set()
        self.default_namespace = default_namespace
        for obj in objects:
            self.add(obj)

    def _key(self, obj: Object) -> tuple[str, str, str, str]:
        return stored_key(obj, self.default_namespace)

    def add(self, obj: Object) -> None:
        key = self._key(obj)
        if key not in self._objects:
            self._by_kind.setdefault(key[:2], []).append(key)
            self._dirty.add(key[:2])
        self._objects[key] = obj

    def add_missing(self, obj: Object) -> None:
        """Add unless an object with the same key is already there (built-ins yield to user objects)."""
        if self._key(obj) not in self._objects:
            self.add(obj)

    def get(self, group: str, kind: str, namespace: str, name: str) -> Object | None:
        return self._objects.get((group, kind, namespace, name))

    def list(self, group: str, kind: str, namespace: str | None = None) -> builtins.list[Object]:
        """Objects of a kind sorted by namespace and name (stable whatever the input order)."""
        keys = self._by_kind.get((group, kind))
        if not keys:
            return []
        if (group, kind) in self._dirty:
            keys.sort()
            self._dirty.discard((group, kind))
        return [self._objects[k] for k in keys if namespace is None or k[2] == namespace]

    def __len__(self) -> int:
        return len(self._objects)

    def all(self) -> builtins.list[Any]:
        return list(self._objects.values())
