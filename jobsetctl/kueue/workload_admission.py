"""Workload creates admitted once per shape: an exact shortcut through the admission chain.

A simulation creates thousands of Workloads that differ only in their names (Kueue's performance
configurations: one template per workload class and queue). The chain (CRD defaults, the mutating and
validating Workload webhooks, schema, CEL, ObjectMeta) is a pure function of the object and the context,
and only one of its stages reads ``metadata.name`` or ``metadata.namespace``: ``validate_object_meta``.
``uid`` and ``creationTimestamp`` (set by the API server before admission) pass through untouched. So a
create whose object equals, everywhere else, one admitted before without a single finding is admitted
the same way: the stored object is the earlier result with these four values put back, and only the
ObjectMeta checks of the name and namespace run again (:func:`validate_name_and_namespace`). ``spec.queueName``
(a run's Workloads of one class differ in it from queue to queue) is masked too: only the schema reads it
on a create, so a hit whose queueName passes the schema's checks for it (:func:`_queue_name_passes`) takes
it as given, and any other goes to the full chain.

Exactness, what the shortcut checks before it answers (else the full chain runs):

* the object's shape (:func:`jobsetctl.kube.jsontree.shape_bytes` of the object with the masked values
  blanked: every value with its type, dict keys in order) equals the remembered one's, the four per-object
  values aside, which must be non-empty strings (an empty namespace is defaulted by the chain); a shape is
  remembered only for a plain JSON tree (:func:`jobsetctl.kube.jsontree.content_key`), so an object with
  the same shape is that plain tree, value for value;
* the context is the same: the same API server (the memo lives and dies with it), Kubernetes version,
  feature gates and Kueue configuration objects, operation and default namespace (``ctx.now`` is read by
  no Workload stage: only Trainer's webhook stamps times);
* the chain stored ``uid``, ``creationTimestamp``, ``name`` and ``namespace`` as given, no other
  component has a webhook on Workloads (:func:`jobsetctl.kinds.registry.webhooks_for`), the handler
  has no create checks that look other objects up (``validate_in_cluster``), and the
  remembered result had no finding at all; a hit whose ObjectMeta checks find anything is handed to the
  full chain, which reports it.

``tests/kueue/test_workload_admission_memo.py`` compares the shortcut with the full chain on generated
Workloads (names valid and not, repeated shapes, findings of every stage).
"""

from __future__ import annotations

import marshal
import re
import sys
import weakref
from collections.abc import Callable
from typing import Any

from jobsetctl.admission.chain import AdmissionResult
from jobsetctl.kinds.interface import AdmissionContext, KindHandler, Object, Operation
from jobsetctl.kinds.registry import webhooks_for
from jobsetctl.kube.jsontree import content_key, shape_bytes
from jobsetctl.kube.meta import validate_name_and_namespace
from jobsetctl.kueue import api

#: The metadata values that differ from one Workload of a shape to the next.
PER_OBJECT = frozenset({"name", "namespace", "uid", "creationTimestamp"})
#: ``spec.queueName``, masked as well: a run's Workloads of one class differ in it from queue to queue. Of
#: the stages only the schema reads it on a create (its CEL rules on it are transition rules), with these
#: checks (``ObjectName``).
QUEUE_NAME = "queueName"
QUEUE_NAME_MAX_LENGTH = 253
QUEUE_NAME_PATTERN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
#: Shapes remembered per API server; the memo starts afresh when full (a run has a few thousand).
MAX_SHAPES = 8192


class _Memo:
    __slots__ = ("default_namespace", "gates", "kueue", "results", "version")

    def __init__(self, ctx: AdmissionContext) -> None:
        # The gates and the configuration are compared by identity: the memo keeps them alive.
        self.version = ctx.version
        self.gates = ctx.gates
        self.kueue = ctx.kueue
        self.default_namespace = ctx.default_namespace
        #: shape -> the admitted object of the first create of that shape, serialised (:func:`_frozen`).
        self.results: dict[Any, bytes] = {}

    def serves(self, ctx: AdmissionContext) -> bool:
        return (self.gates is ctx.gates and self.kueue is ctx.kueue and self.version == ctx.version
                and self.default_namespace == ctx.default_namespace)


_MEMOS: weakref.WeakKeyDictionary[Any, _Memo] = weakref.WeakKeyDictionary()


def _masked(obj: Object) -> dict[str, Any] | None:
    """``obj`` with the per-object metadata values and ``spec.queueName`` masked (a shallow copy down to
    them), or None when the shortcut does not apply (not a dict, a per-object value or a queueName that is
    not a non-empty string)."""
    if type(obj) is not dict:
        return None
    md = obj.get("metadata")
    if type(md) is not dict:
        return None
    masked: dict[Any, Any] = {}
    for field, value in md.items():
        if field in PER_OBJECT:
            if type(value) is not str or not value:
                return None
            value = ""  # every value at these keys is masked alike, so the mark cannot meet a real value
        masked[field] = value
    # ``{**obj, ...}`` keeps ``metadata`` at its place in the key order, which the shape includes.
    spec = obj.get("spec")
    if type(spec) is dict and QUEUE_NAME in spec:
        if type(spec[QUEUE_NAME]) is not str or not spec[QUEUE_NAME]:
            return None
        return {**obj, "metadata": masked, "spec": {**spec, QUEUE_NAME: ""}}
    return {**obj, "metadata": masked}


def _queue_name_passes(name: str) -> bool:
    """Whether the schema's ``queueName`` checks (``ObjectName``: at most 253 characters, a DNS subdomain)
    pass ``name``; ``tests/kueue/test_workload_admission_memo.py`` checks both versions' schemas say so."""
    return len(name) <= QUEUE_NAME_MAX_LENGTH and QUEUE_NAME_PATTERN.fullmatch(name) is not None


def admit_workload_create(obj: Object, ctx: AdmissionContext, handler: KindHandler,
                          full: Callable[[], AdmissionResult]) -> AdmissionResult:
    """What ``full()`` returns for the create of ``obj``, from the memo when the shape was admitted before."""
    cluster = ctx.cluster
    if cluster is None or ctx.operation is not Operation.CREATE or ctx.old is not None or \
            obj.get("apiVersion") != api.API_VERSION or webhooks_for(handler.group, handler.kind) or \
            type(handler).validate_in_cluster is not KindHandler.validate_in_cluster:
        # (A handler that looks other objects up could answer differently for the same shape.)
        return full()
    try:
        memo = _MEMOS.get(cluster)
    except TypeError:  # a view that cannot be weakly referenced: no memo
        return full()
    if memo is None or not memo.serves(ctx):
        memo = _MEMOS[cluster] = _Memo(ctx)
    # The shape: the masked object as one C-level serialisation. Equal bytes mean an equal tree, type for type
    # and key order included, because only the shape of a plain tree is ever remembered (below; see
    # ``shape_bytes``).
    masked = _masked(obj)
    shape = shape_bytes(masked) if masked is not None else None
    if shape is None:
        return full()
    admitted = memo.results.get(shape)
    if admitted is not None:
        spec = obj.get("spec")
        queue = spec.get(QUEUE_NAME) if type(spec) is dict else None
        if queue is not None and not _queue_name_passes(queue):
            return full()  # which reports it
        new = _thawed(admitted)
        md, new_md = obj["metadata"], new["metadata"]
        for field in PER_OBJECT:
            if field in md:
                new_md[field] = md[field]
        if queue is not None:
            new["spec"][QUEUE_NAME] = queue
        # The labels and annotations are the remembered object's, which passed: only these can fail.
        if not validate_name_and_namespace(new, handler.namespaced):
            return AdmissionResult(new, [], handler)
        return full()
    result = full()
    stored = result.obj
    if result.findings or not result.typed or stored is None or result.handler is not handler:
        return result
    md, stored_md = obj["metadata"], stored.get("metadata")
    if not isinstance(stored_md, dict) or any(stored_md.get(f) is not md[f] for f in PER_OBJECT if f in md) or \
            any(f in stored_md and f not in md for f in PER_OBJECT):
        return result
    spec, stored_spec = obj.get("spec"), stored.get("spec")
    if type(spec) is dict and QUEUE_NAME in spec and (
            type(stored_spec) is not dict or stored_spec.get(QUEUE_NAME) is not spec[QUEUE_NAME]):
        return result  # (the chain stores the queueName as given, or the shortcut does not apply)
    if masked is None or content_key(masked) is None:
        return result  # not a plain tree: its bytes must not stand for a shape (see shape_bytes)
    frozen = _frozen(stored)
    if frozen is None:
        return result
    if len(memo.results) >= MAX_SHAPES:
        memo.results.clear()
    memo.results[shape] = frozen
    return result


def _frozen(stored: Object) -> bytes | None:
    """The admitted object as ``marshal`` bytes, from which each hit takes its own copy (:func:`_thawed`) in one C
    call instead of :func:`copy_tree`'s walk; None when ``stored`` is no plain JSON tree (:func:`content_key`),
    whose copy marshal would not give back type for type (a ``dict`` subclass comes back a ``dict``, a
    ``bytearray`` as ``bytes``). Every string of it is interned first and written as such (format 4), so that the
    copies share their strings, as ``copy_tree``'s copies share the original's, instead of each holding its own
    (and dict keys are the interned literals the code looks them up with)."""
    if content_key(stored) is None:
        return None
    try:
        return marshal.dumps(_interned(stored), _FROZEN_FORMAT)
    except (ValueError, RecursionError):
        return None


#: Format 4 writes an interned string as interned, and a second occurrence of an object as a reference to the
#: first; :func:`_interned` makes a tree in which no container occurs twice, so only strings are referenced.
_FROZEN_FORMAT = 4


def _interned(value: Any) -> Any:
    """A copy of a plain JSON tree with every string (keys and values) interned; each container in it is new and
    occurs once (what ``marshal`` then writes as a reference is a string only)."""
    cls = type(value)
    if cls is dict:
        return {sys.intern(key): _interned(item) for key, item in value.items()}
    if cls is list:
        return [_interned(item) for item in value]
    if cls is str:
        return sys.intern(value)
    return value


def _thawed(frozen: bytes) -> Object:
    """A new copy of the object :func:`_frozen` serialised: for a plain JSON tree, what :func:`copy_tree` of it
    gives (equal, type for type and key order included, sharing no container with any other copy or within
    itself): ``marshal`` decodes each ``dict``, ``list``, ``str``, ``int``, ``float``, ``bool`` and ``None`` it
    wrote as the same type and value, and the only objects it wrote as references are strings."""
    value: Object = marshal.loads(frozen)
    return value
