"""An in-process API server: object store, admission on every write, ownership and garbage collection, watch.

What it keeps of the real one:

* every create and update goes through :func:`jobsetctl.admission.chain.admit` (the same code as
  ``validate``), Pods through the pod admission plugins and webhooks (:mod:`.podadmission`);
* objects of a kind served at several versions are stored at its storage version (Kueue's ``v1beta1``
  objects as ``v1beta2``), as a CRD with a conversion webhook does; an update's stored object is
  converted to the version of the request before admission;
* ``metadata.uid`` (deterministic, from the seed), ``resourceVersion``, ``generation`` (bumped when
  anything but status and metadata changes), ``creationTimestamp`` on the virtual clock, ``generateName``;
* ``ownerReferences`` with background and foreground cascading deletion, finalizers, ``deletionTimestamp``
  and graceful deletion of running Pods (the kubelet finishes it after the grace period);
* watch events, delivered in write order to subscribers (controllers, scheduler, recorder).

Stored objects are plain dicts handed out by reference for speed: a component that changes one must call
:meth:`update` or :meth:`update_status` so that watchers hear about it.
"""

from __future__ import annotations

import builtins
import random
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jobsetctl.admission.chain import admit, resolve_handler
from jobsetctl.diagnostics import Finding, Severity
from jobsetctl.fakecluster.clock import VirtualClock
from jobsetctl.kinds.index import already_exists, is_cluster_scoped, object_key, resource_plural
from jobsetctl.kinds.interface import AdmissionContext, Object, Operation
from jobsetctl.kube.featuregates import FeatureGates
from jobsetctl.kube.field import invalid_status
from jobsetctl.kube.jsontree import copy_tree
from jobsetctl.kube.versions import KubeVersion, split_api_version

if TYPE_CHECKING:
    from jobsetctl.kueue.config import KueueConfiguration

Key = tuple[str, str, str, str]  # group, kind, namespace, name

FOREGROUND_FINALIZER = "foregroundDeletion"
# Kubernetes SimpleNameGenerator: base truncated to 58 characters plus 5 random ones, from this alphabet
# (apimachinery util/rand), which avoids vowels and look-alike characters.
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
MAX_GENERATED_BASE = 58


class WatchType:
    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"


@dataclass(slots=True)
class WatchEvent:
    """One watch notification. Treat it as read-only: every subscriber gets the same instance. (Not a
    frozen dataclass: a frozen one's ``__init__`` sets each field through ``object.__setattr__``, and one
    is made for every write.)"""

    type: str
    key: Key
    obj: Object
    #: The object before an update (MODIFIED only), for controllers that compare.
    old: Object | None = None


@dataclass(slots=True)
class WriteResult:
    obj: Object | None
    findings: builtins.list[Finding] = field(default_factory=list)
    #: A non-admission failure such as AlreadyExists or NotFound, in the API server's wording.
    error: str | None = None
    #: Which object the write was about: (group, kind, name), for the error envelope.
    target: tuple[str, str, str] = ("", "", "")

    @property
    def ok(self) -> bool:
        return self.obj is not None and self.error is None

    def reason(self) -> str:
        """The status reason of the refusal: ``AlreadyExists``, ``Forbidden`` (webhooks and admission plugins
        that deny: Trainer, the pod webhooks, Priority) or ``Invalid`` (schema, CEL, built-in validation and
        the JobSet webhook, which answers 422 since v0.12, jobset.md §2.1; trainer.md §0)."""
        if self.error:
            return "AlreadyExists" if "already exists" in self.error else "NotFound"
        for finding in self.findings:
            if finding.effective_severity is Severity.ERROR and finding.rule.id.startswith(_FORBIDDEN_PREFIXES):
                return "Forbidden"
        return "Invalid"

    def error_text(self) -> str:
        """The refusal as a Go client's ``err.Error()`` reads: the API server's own text for NotFound and
        AlreadyExists, else the ``Invalid`` envelope ``<Kind>.<group> "<name>" is invalid: <causes>``."""
        if self.error:
            return self.error
        group, kind, name = self.target
        return invalid_status(group, kind, name, [f.message for f in self.findings
                                                  if f.effective_severity is Severity.ERROR])

    def message(self) -> str:
        if self.error:
            return self.error
        errors = [f.message for f in self.findings if f.effective_severity is Severity.ERROR]
        return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


_FORBIDDEN_PREFIXES = ("trainjob-", "runtime-", "pod-")

PodAdmission = Callable[["APIServer", Object], list[Finding]]


def key_of(obj: Object) -> Key:
    return object_key(obj)


def meta(obj: Object) -> dict[str, Any]:
    value = obj.get("metadata")
    if not isinstance(value, dict):
        value = {}
        obj["metadata"] = value
    return value


class APIServer:
    """The object store. Implements :class:`~jobsetctl.kinds.interface.ClusterView`."""

    def __init__(
        self,
        clock: VirtualClock,
        version: KubeVersion,
        gates: FeatureGates,
        *,
        seed: int = 0,
        default_namespace: str = "default",
        pod_admission: PodAdmission | None = None,
        kueue: KueueConfiguration | None = None,
    ) -> None:
        self.clock = clock
        self.version = version
        self.gates = gates
        #: Kueue's configuration when Kueue runs in this cluster (its webhooks act), else None.
        self.kueue = kueue
        self.default_namespace = default_namespace
        self.rng = random.Random(seed)
        self._uid_rng = random.Random(f"uid-{seed}")
        self.pod_admission = pod_admission
        self._objects: dict[Key, Object] = {}
        self._by_kind: dict[tuple[str, str], dict[Key, None]] = defaultdict(dict)
        self._by_owner: dict[str, dict[Key, None]] = defaultdict(dict)
        self._by_uid: dict[str, Key] = {}
        self._resource_version = 0
        self._watchers: builtins.list[Callable[[WatchEvent], None]] = []
        self._context: AdmissionContext | None = None
        #: Called with (object, findings) when admission rejects a write.
        self.on_rejected: builtins.list[Callable[[Object, WriteResult], None]] = []

    # ---- ClusterView -------------------------------------------------------------------------------
    def get(self, group: str, kind: str, namespace: str, name: str) -> Object | None:
        return self._objects.get((group, kind, namespace, name))

    def list(self, group: str, kind: str, namespace: str | None = None) -> builtins.list[Object]:
        keys = self._by_kind.get((group, kind), {})
        if namespace is None:
            return [self._objects[k] for k in keys]
        return [self._objects[k] for k in keys if k[2] == namespace]

    def iter_kind(self, group: str, kind: str) -> Iterator[Object]:
        for k in list(self._by_kind.get((group, kind), {})):
            obj = self._objects.get(k)
            if obj is not None:
                yield obj

    def get_by_uid(self, uid: str) -> Object | None:
        k = self._by_uid.get(uid)
        return self._objects.get(k) if k else None

    def owned(self, owner_uid: str, group: str | None = None, kind: str | None = None) -> builtins.list[Object]:
        """Objects with an ownerReference to ``owner_uid`` (any controller flag), in creation order."""
        keys = self._by_owner.get(owner_uid)
        if not keys:
            return []
        objects = self._objects
        if group is None and kind is None:
            return [obj for k in keys if (obj := objects.get(k)) is not None]
        return [obj for k in keys
                if (group is None or k[0] == group) and (kind is None or k[1] == kind)
                and (obj := objects.get(k)) is not None]

    @property
    def resource_version(self) -> int:
        """The latest ``resourceVersion`` handed out (every create, update and status write takes the next)."""
        return self._resource_version

    def all_objects(self) -> builtins.list[Object]:
        return list(self._objects.values())

    def __len__(self) -> int:
        return len(self._objects)

    # ---- watch -------------------------------------------------------------------------------------
    def subscribe(self, callback: Callable[[WatchEvent], None]) -> None:
        self._watchers.append(callback)

    def _notify(self, event: WatchEvent) -> None:
        for callback in self._watchers:
            callback(event)

    # ---- writes ------------------------------------------------------------------------------------
    def context(self, operation: Operation = Operation.CREATE) -> AdmissionContext:
        # Every create and update asks (thousands at one instant): the last context made is handed out again
        # while every value it holds is the same (it is frozen, so nobody changes it).
        now = self.clock.timestamp()
        last = self._context
        if (last is not None and last.now == now and last.operation is operation and last.version == self.version
                and last.gates is self.gates and last.kueue is self.kueue
                and last.default_namespace == self.default_namespace):
            return last
        ctx = self._context = AdmissionContext(
            self.version, self.gates, operation, cluster=self, now=now,
            default_namespace=self.default_namespace, kueue=self.kueue,
        )
        return ctx

    def create(self, obj: Object, *, skip_admission: bool = False, shared: bool = False) -> WriteResult:
        """Create an object, as ``kubectl create`` would: admission, then store. Takes ownership of ``obj``;
        with ``shared``, only of ``obj`` itself and its ``metadata`` mapping (which the create fills in): the
        values below them stay the caller's and are copied before anything keeps or changes them. (A
        submission then costs one copy, not two: admission works on a copy of its own anyway.)"""
        md = meta(obj)
        group, kind = split_api_version(str(obj.get("apiVersion", "")))[0], str(obj.get("kind", ""))
        if shared and (skip_admission or (group == "" and kind == "Pod")):
            # Stored as given (pod admission also sees the object itself): the caller's values are copied now.
            obj = copy_tree(obj)
            md = meta(obj)
            shared = False
        if not is_cluster_scoped(group, kind) and not md.get("namespace"):
            md["namespace"] = self.default_namespace
        if not md.get("name") and md.get("generateName"):
            md["name"] = self.generate_name(str(md["generateName"]))
        # As the API server's BeforeCreate, uid and creationTimestamp exist before the strategy runs
        # (the Job strategy builds its selector from the uid).
        md["uid"] = self._new_uid()
        md["creationTimestamp"] = self.clock.timestamp()
        stored: Object = obj
        findings: builtins.list[Finding] = []
        if not skip_admission:
            admitted, findings = self._admit(obj, None)
            if admitted is None:
                result = WriteResult(None, findings, target=(group, kind, str(md.get("name", ""))))
                for callback in self.on_rejected:
                    callback(obj, result)
                return result
            # The chain returns its own copy, except for a kind it has no rules for (stored as given).
            stored = copy_tree(admitted) if shared and admitted is obj else admitted
        key = key_of(stored)
        if key in self._objects:
            return WriteResult(None, findings, already_exists(group, kind, key[3]), (group, kind, key[3]))
        stored_md = meta(stored)
        stored_md["uid"] = md["uid"]
        stored_md["creationTimestamp"] = md["creationTimestamp"]
        stored_md["resourceVersion"] = self._next_rv()
        stored_md["generation"] = 1
        stored_md.pop("deletionTimestamp", None)
        self._store(key, stored)
        self._notify(WatchEvent(WatchType.ADDED, key, stored))
        return WriteResult(stored, findings, target=(group, kind, key[3]))

    def update(self, obj: Object, *, skip_admission: bool = False, old: Object | None = None) -> WriteResult:
        """Replace the spec of a stored object (the stored dict may already hold the new values; pass
        ``old`` then, so that admission and generation see the change)."""
        key = key_of(obj)
        current = self._objects.get(key)
        if current is None:
            return WriteResult(None, [], f'{resource_plural(key[1])} "{key[3]}" not found', (key[0], key[1], key[3]))
        previous = old if old is not None else (copy_tree(current) if current is not obj else None)
        stored = obj
        findings: builtins.list[Finding] = []
        if not skip_admission and previous is not None:
            admitted, findings = self._admit(obj, previous)
            if admitted is None:
                result = WriteResult(None, findings, target=(key[0], key[1], key[3]))
                for callback in self.on_rejected:
                    callback(obj, result)
                return result
            stored = admitted
            # Keep server-set metadata the client may not have sent back.
            for field_name in ("uid", "creationTimestamp", "generation", "deletionTimestamp"):
                if field_name in meta(current):
                    meta(stored)[field_name] = meta(current)[field_name]
        if previous is not None and _spec_of(previous) != _spec_of(stored):
            meta(stored)["generation"] = int(meta(stored).get("generation", 1)) + 1
        meta(stored)["resourceVersion"] = self._next_rv()
        if stored is not current:
            self._unindex_owners(key, current)
            self._objects[key] = stored
            self._index_owners(key, stored)
            uid = meta(stored).get("uid")
            if isinstance(uid, str):
                self._by_uid[uid] = key
        self._notify(WatchEvent(WatchType.MODIFIED, key, stored, previous))
        return WriteResult(stored, findings, target=(key[0], key[1], key[3]))

    def update_status(self, obj: Object) -> None:
        """Record a status (or metadata) change of a stored object: no admission, no generation change."""
        # Several per pod: the stored object's own key is tried first, read from its fields directly (as
        # ``_stored_key`` does), and the watchers are called here rather than through ``_notify``.
        md = obj.get("metadata")
        api_version = obj.get("apiVersion")
        key: Key | None = None
        if type(md) is dict and type(api_version) is str:
            key = (api_version.partition("/")[0] if "/" in api_version else "", obj.get("kind"),  # type: ignore[assignment]
                   md.get("namespace", ""), md.get("name"))
            if self._objects.get(key) is not obj:  # type: ignore[arg-type]
                key = None
        if key is None:
            key = self._stored_key(obj)
            if key is None:
                return
            md = meta(obj)
        self._resource_version += 1
        md["resourceVersion"] = str(self._resource_version)  # type: ignore[index]
        event = WatchEvent(WatchType.MODIFIED, key, obj)
        for callback in self._watchers:
            callback(event)

    def _stored_key(self, obj: Object) -> Key | None:
        """The key of ``obj`` if an object of that key is stored, else None. Status writes (several per pod)
        come with the stored object itself: its key is read from its fields directly, and
        :func:`key_of`, which tolerates malformed manifests, answers for anything else."""
        md = obj.get("metadata")
        api_version = obj.get("apiVersion")
        if isinstance(md, dict) and isinstance(api_version, str):
            key = (api_version.partition("/")[0] if "/" in api_version else "", obj.get("kind"),
                   md.get("namespace", ""), md.get("name"))
            if self._objects.get(key) is obj:  # type: ignore[arg-type]
                return key  # type: ignore[return-value]
        key = key_of(obj)
        return key if key in self._objects else None

    def delete(
        self,
        obj: Object,
        *,
        propagation: str = "Background",
        grace_seconds: float | None = None,
    ) -> bool:
        """Delete an object. Returns False when it was already gone.

        ``propagation`` is ``Background``, ``Foreground`` or ``Orphan`` (the deleteOptions
        propagationPolicy). Running Pods are deleted gracefully: they keep a ``deletionTimestamp``
        until the kubelet (or node lifecycle) calls :meth:`remove`.
        """
        key = key_of(obj)
        current = self._objects.get(key)
        if current is None:
            return False
        md = meta(current)
        if md.get("deletionTimestamp") and propagation != "Foreground":
            return True  # already terminating
        finalizers = list(md.get("finalizers") or [])
        if propagation == "Foreground" and self._has_dependents(md.get("uid")):
            if FOREGROUND_FINALIZER not in finalizers:
                finalizers.append(FOREGROUND_FINALIZER)
            md["finalizers"] = finalizers
        if propagation == "Orphan":
            self._orphan_dependents(md.get("uid"))
        graceful = key[0] == "" and key[1] == "Pod" and _pod_is_running(current)
        if finalizers or graceful:
            if not md.get("deletionTimestamp"):
                md["deletionTimestamp"] = self.clock.timestamp()
                if graceful:
                    md["deletionGracePeriodSeconds"] = int(
                        grace_seconds if grace_seconds is not None else _grace_period(current)
                    )
            md["resourceVersion"] = self._next_rv()
            self._notify(WatchEvent(WatchType.MODIFIED, key, current))
            if FOREGROUND_FINALIZER in finalizers:
                self._delete_dependents(md.get("uid"), "Foreground")
            return True
        self.remove(current)
        return True

    def remove(self, obj: Object) -> None:
        """Take an object out of the store for good (finalizers done, grace period over), then
        collect its dependents (background propagation) and release owners waiting in foreground."""
        key = key_of(obj)
        current = self._objects.pop(key, None)
        if current is None:
            return
        self._by_kind[(key[0], key[1])].pop(key, None)
        uid = meta(current).get("uid")
        if isinstance(uid, str):
            self._by_uid.pop(uid, None)
        self._unindex_owners(key, current)
        self._notify(WatchEvent(WatchType.DELETED, key, current))
        if isinstance(uid, str):
            self._delete_dependents(uid, "Background")
        for ref in _owner_refs(current):
            owner = self.get_by_uid(str(ref.get("uid", "")))
            if owner is not None:
                self._maybe_finish_foreground(owner)

    def remove_finalizer(self, obj: Object, finalizer: str) -> None:
        md = meta(obj)
        finalizers = [f for f in (md.get("finalizers") or []) if f != finalizer]
        if finalizers:
            md["finalizers"] = finalizers
        else:
            md.pop("finalizers", None)
        if md.get("deletionTimestamp") and not finalizers and not _pod_is_running(obj):
            self.remove(obj)
        else:
            self.update_status(obj)

    # ---- internals ---------------------------------------------------------------------------------
    def _admit(self, obj: Object, old: Object | None) -> tuple[Object | None, builtins.list[Finding]]:
        group, _ = split_api_version(str(obj.get("apiVersion", "")))
        kind = obj.get("kind")
        if group == "" and kind == "Pod":
            findings = self.pod_admission(self, obj) if self.pod_admission and old is None else []
            rejected = any(f.effective_severity is Severity.ERROR for f in findings)
            return (None if rejected else obj), findings
        ctx = self.context(Operation.UPDATE if old is not None else Operation.CREATE)
        handler = resolve_handler(obj, ctx)[0]
        storage = handler.storage_api_version() if handler is not None else None
        if storage is not None and old is not None:
            # The stored object reaches admission at the version of the request (CRD conversion).
            old = handler.convert(old, str(obj.get("apiVersion", ""))) if handler is not None else old
        result = admit(obj, ctx, old=old)
        if result.handler is None:
            # A kind without admission rules of ours (Service, ConfigMap, PVC ...): stored as given.
            return obj, [f for f in result.findings if f.effective_severity is not Severity.INFO]
        if not result.accepted or result.obj is None:
            return None, result.findings
        if storage is not None and result.obj.get("apiVersion") != storage:
            return result.handler.convert(result.obj, storage), result.findings
        return result.obj, result.findings

    def _store(self, key: Key, obj: Object) -> None:
        self._objects[key] = obj
        self._by_kind[(key[0], key[1])][key] = None
        uid = meta(obj).get("uid")
        if isinstance(uid, str):
            self._by_uid[uid] = key
        self._index_owners(key, obj)

    def _index_owners(self, key: Key, obj: Object) -> None:
        for ref in _owner_refs(obj):
            uid = ref.get("uid")
            if isinstance(uid, str) and uid:
                self._by_owner[uid][key] = None

    def _unindex_owners(self, key: Key, obj: Object) -> None:
        for ref in _owner_refs(obj):
            uid = ref.get("uid")
            if isinstance(uid, str) and uid in self._by_owner:
                self._by_owner[uid].pop(key, None)

    def _has_dependents(self, uid: Any) -> bool:
        return isinstance(uid, str) and bool(self._by_owner.get(uid))

    def _delete_dependents(self, uid: Any, propagation: str) -> None:
        if not isinstance(uid, str):
            return
        for dependent in self.owned(uid):
            refs = _owner_refs(dependent)
            # A dependent with another live owner survives (GC deletes only when all owners are gone).
            live = [r for r in refs if r.get("uid") != uid and self.get_by_uid(str(r.get("uid", ""))) is not None]
            if live:
                continue
            self.delete(dependent, propagation=propagation)

    def _orphan_dependents(self, uid: Any) -> None:
        if not isinstance(uid, str):
            return
        for dependent in self.owned(uid):
            md = meta(dependent)
            md["ownerReferences"] = [r for r in _owner_refs(dependent) if r.get("uid") != uid]
            self._unindex_owners(key_of(dependent), {"metadata": {"ownerReferences": [{"uid": uid}]}})
            self.update_status(dependent)

    def _maybe_finish_foreground(self, owner: Object) -> None:
        md = meta(owner)
        if FOREGROUND_FINALIZER not in (md.get("finalizers") or []):
            return
        blocking = [
            d for d in self.owned(str(md.get("uid")))
            if any(r.get("uid") == md.get("uid") and r.get("blockOwnerDeletion") for r in _owner_refs(d))
        ]
        if not blocking:
            self.remove_finalizer(owner, FOREGROUND_FINALIZER)

    def _new_uid(self) -> str:
        return uuid4_text(self._uid_rng.getrandbits(128))

    def _next_rv(self) -> str:
        self._resource_version += 1
        return str(self._resource_version)

    def generate_name(self, base: str) -> str:
        return base[:MAX_GENERATED_BASE] + self.random_suffix()

    def random_suffix(self, length: int = 5) -> str:
        choice = self.rng.choice
        return "".join([choice(NAME_ALPHABET) for _ in range(length)])


def uuid4_text(bits: int) -> str:
    """``str(uuid.UUID(int=bits, version=4))`` without building the UUID object (one per created object):
    the same version and variant bits, the same 8-4-4-4-12 spelling."""
    bits &= ~(0xC000 << 48)
    bits |= 0x8000 << 48
    bits &= ~(0xF000 << 64)
    bits |= 4 << 76
    text = f"{bits:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def _owner_refs(obj: Object) -> builtins.list[dict[str, Any]]:
    refs = meta(obj).get("ownerReferences")
    return [r for r in refs if isinstance(r, dict)] if isinstance(refs, list) else []


def _spec_of(obj: Object) -> Any:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status")}


def _pod_is_running(obj: Object) -> bool:
    if obj.get("kind") != "Pod":
        return False
    spec = obj.get("spec")
    status = obj.get("status")
    node = spec.get("nodeName") if isinstance(spec, dict) else None
    phase = status.get("phase") if isinstance(status, dict) else None
    return bool(node) and phase not in ("Succeeded", "Failed")


def _grace_period(pod: Object) -> float:
    spec = pod.get("spec")
    value = spec.get("terminationGracePeriodSeconds") if isinstance(spec, dict) else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 30.0


def controller_ref(owner: Object) -> dict[str, Any]:
    """An ownerReference marking ``owner`` as the controller, as controllers write it."""
    md = meta(owner)
    return {
        "apiVersion": owner.get("apiVersion"),
        "kind": owner.get("kind"),
        "name": md.get("name"),
        "uid": md.get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def controller_of(obj: Object) -> dict[str, Any] | None:
    # Asked for every watch event by several controllers: scans the references without building the
    # filtered list ``_owner_refs`` returns (same answer: the first dict with a truthy ``controller``).
    md = obj.get("metadata")
    if not isinstance(md, dict):
        md = meta(obj)
    refs = md.get("ownerReferences")
    if isinstance(refs, list):
        for ref in refs:
            if isinstance(ref, dict) and ref.get("controller"):
                return ref
    return None


def owner_refs(obj: Object) -> builtins.list[dict[str, Any]]:
    return _owner_refs(obj)


def iter_keys(objects: Iterable[Object]) -> Iterator[Key]:
    for obj in objects:
        yield key_of(obj)
