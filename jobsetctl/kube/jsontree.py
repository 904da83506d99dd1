"""Fast deep copies of JSON-shaped trees: the manifests, templates and statuses the fake cluster moves around.

:func:`copy.deepcopy` is general: it dispatches on every value's type through a table, keeps a memo of
every object it has copied (so that shared and cyclic references come out shared and cyclic) and a
keep-alive list. Manifests need none of that: they are trees of ``dict``, ``list`` and immutable scalars,
as decoded from YAML or JSON, so a plain recursive copy gives an equal result several times faster.

What :func:`copy_tree` guarantees, for any value:

* the copy is equal to ``copy.deepcopy(value)`` and has the same types at every position;
* the copy shares no mutable container with the original (scalars are shared: they are immutable, and
  ``deepcopy`` shares them too);
* values other than plain ``dict``, ``list`` and the immutable scalars (a ``dict`` subclass, a tuple,
  a datetime...) are handed to :func:`copy.deepcopy`, so they are copied exactly as before.

The one difference from ``deepcopy``: a container that appears twice *inside* the tree is copied twice,
not once, so the two places no longer share it. That is what the API server does to every object
anyway (it decodes each request from JSON, where nothing is shared), our YAML loader never shares
containers (an alias is built afresh at each use), and a cycle cannot occur in a manifest.
"""

from __future__ import annotations

import copy
import marshal
from typing import Any, TypeVar

T = TypeVar("T")

#: Types whose values are immutable and which ``copy.deepcopy`` returns as they are.
_ATOMIC: frozenset[type] = frozenset({str, int, float, bool, type(None), bytes, complex})


def copy_tree(value: T) -> T:
    """A deep copy of a JSON-shaped tree (see the module docstring for what it guarantees)."""
    return _copy(value)


def _copy(value: Any) -> Any:
    # Written out as loops with the container test first: manifests are mostly small dicts of strings,
    # and skipping a call per scalar is what makes this several times faster than ``deepcopy``.
    # Strings first (most values), and ``items.append`` spelled out, which Python 3.11 specialises for lists
    # (a bound ``append`` kept in a local is a generic call): 8 % fewer instructions than before.
    cls = type(value)
    if cls is dict:
        copied: dict[Any, Any] = {}
        for key, item in value.items():
            item_cls = type(item)
            if item_cls is str:
                copied[key] = item
            elif item_cls is dict or item_cls is list:
                copied[key] = _copy(item)
            elif item_cls in _ATOMIC:
                copied[key] = item
            else:
                copied[key] = copy.deepcopy(item)
        return copied
    if cls is list:
        items: list[Any] = []
        for item in value:
            item_cls = type(item)
            if item_cls is str:
                items.append(item)
            elif item_cls is dict or item_cls is list:
                items.append(_copy(item))
            elif item_cls in _ATOMIC:
                items.append(item)
            else:
                items.append(copy.deepcopy(item))
        return items
    if cls in _ATOMIC:
        return value
    return copy.deepcopy(value)


class NotPlain(Exception):
    """:func:`tree_key` met a value that is not part of a plain JSON tree."""


def tree_key(value: Any) -> Any:
    """A hashable key equal for two plain JSON trees exactly when they are equal with the same types at every
    position and the same key order (``1``, ``1.0`` and ``True`` differ, and so do ``0.0`` and ``-0.0``):
    for memos keyed by content. Raises :class:`NotPlain` for anything but ``dict`` with ``str`` keys,
    ``list``, ``str``, ``int``, ``bool``, ``float`` and ``None`` (subclasses included)."""
    cls = type(value)
    if cls is str:
        return value
    # A string item is its own key: taken in line (most values of a manifest are strings), not through a call.
    if cls is dict:
        out: list[Any] = [dict]
        for key, item in value.items():
            if type(key) is not str:
                raise NotPlain
            out.append(key)
            out.append(item if type(item) is str else tree_key(item))
        return tuple(out)
    if cls is list:
        return (list, *[item if type(item) is str else tree_key(item) for item in value])
    if cls is int or cls is bool or value is None:
        return (cls, value)
    if cls is float:
        return (cls, repr(value))
    raise NotPlain


def content_key(value: Any) -> Any | None:
    """:func:`tree_key` of ``value``, or None when it is no plain JSON tree (or too deep to walk): the key of
    a memo by content, which then just does not remember that value."""
    try:
        return tree_key(value)
    except (NotPlain, RecursionError):
        return None


#: The ``marshal`` format :func:`shape_bytes` writes: version 2 is the last without back-references (version 3
#: writes an object seen twice as a reference to its first place, so the bytes would depend on which equal
#: strings happen to be the same object) and already writes floats as their 8 bytes.
_SHAPE_FORMAT = 2


def shape_bytes(value: Any) -> bytes | None:
    """``value`` serialised in one C call (``marshal`` format 2), or None when marshal refuses it (a type it
    does not know, a dict or str subclass, nesting deeper than its limit): a cheaper key for a memo by content
    than :func:`tree_key`, under one condition, below.

    Why equal bytes mean equal trees: the format is decodable (``marshal.loads``), and decoding gives back the
    value with the same type at every position (``1``, ``1.0``, ``True`` and ``"1"`` carry different type codes;
    a dict's entries are written in their order, a float as its 8 bytes, so ``0.0`` and ``-0.0`` differ) for
    every value marshal accepts, with one exception: an object that merely supports the buffer protocol
    (``bytearray``, ``memoryview``) is written as ``bytes``. And why equal trees give equal bytes: format 2
    writes every ``str`` the same way (no interned-string or back-reference codes), so the bytes depend on the
    value alone. (Two NaNs with different payloads give different bytes where :func:`tree_key` gives one key:
    a memo then misses, never answers wrongly.)

    The condition: marshal also accepts values that are no plain JSON tree (tuples, sets, bytes, non-``str``
    keys), each with its own type code. A memo may therefore only *remember* under these bytes a value that
    :func:`content_key` accepts (a plain tree, which holds no ``bytes``); a value looked up that has the same
    bytes as a remembered plain tree then decodes to that tree, type for type, so it is that tree (a buffer
    would have decoded to ``bytes``, which the remembered tree does not hold)."""
    try:
        return marshal.dumps(value, _SHAPE_FORMAT)
    except (ValueError, RecursionError):
        return None
