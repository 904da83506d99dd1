"""What ``render`` prints: every object as the API server stores it at creation, and the pod requests it
refuses, in the order they happen.

A snapshot is taken at the ``ADDED`` watch event, so later writes (status, finalizers, deletions) are
not part of the output. Stored objects are handed out by reference (see
:mod:`jobsetctl.fakecluster.apiserver`), hence the copy (:func:`jobsetctl.kube.jsontree.copy_tree`:
JSON-shaped data only, so a plain recursive copy does what :func:`copy.deepcopy` does at a fraction of
the cost).

Refused creates come from ``APIServer.on_rejected``. The expected one is an exclusive-placement
follower: the JobSet pod webhook (``vpod.kb.io``) admits it only once its leader pod is scheduled, and
``render`` runs no scheduler (jobset.md §3.6). The request is printed as the Job controller first
sends it (after the mutating admission plugins, before any leader-derived nodeSelector), without the
name the API server would generate and without status, and marked with :data:`NOTE_ANNOTATION`.
Anything else refused is unexpected after ``validate`` passed; it is printed the same way and counted
in :attr:`Capture.unexpected`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jobsetctl.fakecluster.apiserver import APIServer, WatchEvent, WatchType, WriteResult
from jobsetctl.jobset import podwebhook
from jobsetctl.kinds.interface import Object
from jobsetctl.kube.jsontree import copy_tree

#: Render-only annotations (never written to the fake cluster's objects).
NOTE_ANNOTATION = "jobsetctl.dev/render-note"
STAGE_ANNOTATION = "jobsetctl.dev/stage"
#: Webhook rules that only mean "the leader is not scheduled yet" (transient upstream).
WAITING_FOR_LEADER = podwebhook.WAITING_FOR_LEADER
FOLLOWER_NOTE = ("not created yet: the JobSet pod webhook admits an exclusive-placement follower only once its "
                 "leader pod is scheduled, and render runs no scheduler ({message})")


@dataclass(slots=True)
class Entry:
    """One printed object: a snapshot, the stage that released it, and why it was not created."""

    obj: Object
    stage: int
    #: None for created objects; the reason for refused requests.
    note: str | None = None
    #: A refusal render cannot explain (a problem of the manifest that validate did not see).
    unexpected: bool = False

    @property
    def kind(self) -> str:
        return str(self.obj.get("kind", ""))


class Capture:
    """Subscribes to an API server; ``active`` is False while the context (runtimes) is installed."""

    def __init__(self, api: APIServer) -> None:
        self.entries: list[Entry] = []
        self.stage = 0
        self.active = False
        self._refused: set[tuple[str, str, str]] = set()
        api.subscribe(self._on_event)
        api.on_rejected.append(self._on_rejected)

    @property
    def unexpected(self) -> list[Entry]:
        return [e for e in self.entries if e.unexpected]

    def _on_event(self, event: WatchEvent) -> None:
        if self.active and event.type == WatchType.ADDED:
            self.entries.append(Entry(copy_tree(event.obj), self.stage))

    def _on_rejected(self, obj: Object, result: WriteResult) -> None:
        if not self.active:
            return
        metadata = obj.get("metadata")
        md: dict[str, Any] = metadata if isinstance(metadata, dict) else {}
        if "resourceVersion" in md:
            return  # a refused update of a stored object: nothing new would have appeared
        # The Job controller retries a refused pod with a new random name; the first request is the one shown.
        key = (str(obj.get("kind", "")), str(md.get("namespace", "")), str(md.get("generateName") or md.get("name")))
        if key in self._refused:
            return
        self._refused.add(key)
        rules = {f.rule.id for f in result.findings if f.effective_severity.value == "error"}
        waiting = bool(rules) and rules <= WAITING_FOR_LEADER
        note = FOLLOWER_NOTE.format(message=result.message()) if waiting else f"not created: {result.message()}"
        self.entries.append(Entry(request_of(obj), self.stage, note, unexpected=not waiting))


def request_of(obj: Object) -> Object:
    """A refused create as the client sent it: no generated name, uid, timestamp or status."""
    request = copy_tree(obj)
    md = request.get("metadata")
    if isinstance(md, dict):
        if md.get("generateName"):
            md.pop("name", None)
        for server_field in ("uid", "creationTimestamp", "resourceVersion", "generation"):
            md.pop(server_field, None)
    request.pop("status", None)
    return request


#: ``ObjectMeta`` fields in Go declaration order, which is how the API server serialises them.
OBJECT_META_ORDER = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
                     "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
                     "ownerReferences", "finalizers", "managedFields")
_META_RANK = {name: rank for rank, name in enumerate(OBJECT_META_ORDER)}


def printable(entry: Entry, *, stages: bool) -> Object:
    """The object as printed: ``apiVersion``, ``kind``, ``metadata`` first and ``metadata`` in the API
    server's field order (our store appends server-set fields such as ``uid`` last), plus the
    render-only annotations. Shallow copies only: the snapshot itself stays as captured."""
    obj = entry.obj
    md = obj.get("metadata")
    md = dict(md) if isinstance(md, dict) else {}
    if stages or entry.note is not None:
        annotations = dict(md.get("annotations") or {})
        if stages:
            annotations[STAGE_ANNOTATION] = str(entry.stage)
        if entry.note is not None:
            annotations[NOTE_ANNOTATION] = entry.note
        md["annotations"] = annotations
    ordered_md = {key: md[key] for key in sorted(md, key=lambda k: _META_RANK.get(k, len(_META_RANK)))}
    out: Object = {}
    for key in ("apiVersion", "kind"):
        if key in obj:
            out[key] = obj[key]
    if "metadata" in obj or ordered_md:
        out["metadata"] = ordered_md
    for key, value in obj.items():
        if key not in out:
            out[key] = value
    return out
