"""Server-side apply of the expanded objects, as far as the fake API server needs it (trainer.md §3.1 step 7).

Upstream applies every object with field manager ``trainer`` and ``ForceOwnership``. Which objects are
applied at all when one already exists is :func:`jobsetctl.trainer.expand.apply.should_apply` (§3.10,
§3.13 step 7, §3.14). What an apply does to an existing object, emulated here:

* the fields the apply configuration sets win (force ownership): ``spec`` and every other top-level
  field are replaced by the desired ones, then admission defaults them again exactly as at creation;
* labels and annotations are merged; keys this controller applied before and no longer applies are
  removed (SSA drops fields a manager stops applying), keys other writers added stay;
* the TrainJob's controller ownerReference is upserted by ``uid``;
* an apply that changes nothing is no write at all (no ``resourceVersion`` bump, no watch event): we
  dry-run admission on the merged object and compare before writing. Without that, each apply would
  wake the controller again and it would never settle.

What "applied before" means is remembered per object uid for the lifetime of the controller, which is
the lifetime of the fake cluster (upstream keeps it in ``metadata.managedFields``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from jobsetctl.admission.chain import admit
from jobsetctl.fakecluster.apiserver import APIServer, WriteResult
from jobsetctl.kinds.interface import Object, Operation
from jobsetctl.kube.jsontree import copy_tree
from jobsetctl.trainer.expand.model import as_dict, as_list, as_str

#: Top-level keys that are not the object's content an apply configuration sets.
_IDENTITY: Final = frozenset({"apiVersion", "kind", "metadata", "status"})
_MAPS: Final = ("labels", "annotations")


@dataclass(frozen=True, slots=True)
class Managed:
    """The fields of one object our last apply set (SSA managed fields, coarsely)."""

    labels: frozenset[str]
    annotations: frozenset[str]
    top_level: frozenset[str]

    @classmethod
    def of(cls, desired: Object) -> Managed:
        md = as_dict(desired.get("metadata"))
        return cls(
            frozenset(as_dict(md.get("labels"))),
            frozenset(as_dict(md.get("annotations"))),
            frozenset(k for k in desired if k not in _IDENTITY),
        )

    def keys(self, field: str) -> frozenset[str]:
        return self.labels if field == "labels" else self.annotations


class Applier:
    """Creates or server-side-applies objects through the API server; returns reconcile errors as text."""

    def __init__(self, cluster: APIServer) -> None:
        self.api = cluster
        self._managed: dict[str, Managed] = {}

    def apply(self, desired: Object, existing: Object | None) -> str | None:
        """Create ``desired`` when ``existing`` is None, else apply it over ``existing``. ``desired`` is
        not modified (the caller may keep it)."""
        if existing is None:
            result = self.api.create(copy_tree(desired))
            if not result.ok:
                return result.message()
            self._remember(result.obj, desired)
            return None
        uid = as_str(as_dict(existing.get("metadata")).get("uid"))
        candidate = merged(existing, desired, self._managed.get(uid))
        admitted, error = self._dry_run(candidate, existing)
        if error is not None:
            return error
        assert admitted is not None
        if content(admitted) == content(existing):
            self._remember(existing, desired)
            return None
        result = self.api.update(candidate, old=existing)
        if not result.ok:
            return result.message()
        self._remember(result.obj, desired)
        return None

    def forget(self, uid: str) -> None:
        self._managed.pop(uid, None)

    def _remember(self, stored: Object | None, desired: Object) -> None:
        uid = as_str(as_dict((stored or {}).get("metadata")).get("uid"))
        if uid:
            self._managed[uid] = Managed.of(desired)

    def _dry_run(self, candidate: Object, existing: Object) -> tuple[Object | None, str | None]:
        """The object an update would store (``dryRun=All``), or the API server's rejection message."""
        result = admit(candidate, self.api.context(Operation.UPDATE), old=existing)
        if result.handler is None:
            return candidate, None  # a kind without admission rules of ours: stored as given
        if not result.accepted or result.obj is None:
            return None, WriteResult(None, result.findings).message()
        return result.obj, None


def merged(existing: Object, desired: Object, managed: Managed | None) -> Object:
    """``existing`` with ``desired`` applied over it (see the module docstring)."""
    candidate = copy_tree(existing)
    md = candidate.get("metadata")
    if not isinstance(md, dict):
        md = candidate["metadata"] = {}
    desired_md = as_dict(desired.get("metadata"))
    for field in _MAPS:
        values = dict(as_dict(md.get(field)))
        wanted = as_dict(desired_md.get(field))
        if managed is not None:
            for key in managed.keys(field) - wanted.keys():
                values.pop(key, None)
        values.update(copy_tree(wanted))
        if values:
            md[field] = values
        else:
            md.pop(field, None)
    refs = [ref for ref in as_list(md.get("ownerReferences")) if isinstance(ref, dict)]
    for ref in as_list(desired_md.get("ownerReferences")):
        if not isinstance(ref, dict):
            continue
        same = [index for index, current in enumerate(refs) if current.get("uid") == ref.get("uid")]
        if same:
            refs[same[0]] = copy_tree(ref)
        else:
            refs.append(copy_tree(ref))
    if refs:
        md["ownerReferences"] = refs
    if managed is not None:
        for key in managed.top_level - desired.keys():
            candidate.pop(key, None)
    for key, value in desired.items():
        if key not in _IDENTITY:
            candidate[key] = copy_tree(value)
    return candidate


def content(obj: Object) -> tuple[Any, ...]:
    """What an apply can change: every top-level field but metadata and status, plus the metadata maps
    and ownerReferences."""
    md = as_dict(obj.get("metadata"))
    body = {key: value for key, value in obj.items() if key not in ("metadata", "status")}
    return body, as_dict(md.get("labels")), as_dict(md.get("annotations")), as_list(md.get("ownerReferences"))
