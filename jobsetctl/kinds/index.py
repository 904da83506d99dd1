"""An in-memory :class:`~jobsetctl.kinds.interface.ClusterView` over a set of objects (validate's inputs)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from jobsetctl.kinds.interface import Object
from jobsetctl.kube.versions import split_api_version


def object_key(obj: Object) -> tuple[str, str, str, str]:
    """(group, kind, namespace, name) of a manifest; tolerant of malformed input."""
    api_version = obj.get("apiVersion")
    group = split_api_version(api_version)[0] if isinstance(api_version, str) else ""
    kind = obj.get("kind") if isinstance(obj.get("kind"), str) else ""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) else ""
    name = meta.get("name") if isinstance(meta.get("name"), str) else ""
    return group, str(kind), namespace, name


class ObjectIndex:
    """Objects by group, kind, namespace and name. Later additions of the same key win, like an apply."""

    def __init__(self, objects: Iterable[Object] = ()) -> None:
        self._objects: dict[tuple[str, str, str, str], Object] = {}
        for obj in objects:
            self.add(obj)

    def add(self, obj: Object) -> None:
        self._objects[object_key(obj)] = obj

    def add_missing(self, obj: Object) -> None:
        """Add unless an object with the same key is already there (built-ins yield to user objects)."""
        self._objects.setdefault(object_key(obj), obj)

    def get(self, group: str, kind: str, namespace: str, name: str) -> Object | None:
        return self._objects.get((group, kind, namespace, name))

    def list(self, group: str, kind: str, namespace: str | None = None) -> list[Object]:
        return [
            obj
            for (g, k, ns, _), obj in sorted(self._objects.items(), key=lambda item: item[0])
            if g == group and k == kind and (namespace is None or ns == namespace)
        ]

    def __len__(self) -> int:
        return len(self._objects)

    def all(self) -> list[Any]:
        return list(self._objects.values())
