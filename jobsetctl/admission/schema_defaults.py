"""Schema defaulting as the API server applies it to a custom resource while decoding.

apiextensions-apiserver, in order (``pkg/apiserver/customresource_handler.go``, ``schema/defaulting``):

1. ``PruneNonNullableNullsWithoutDefaults`` (``defaulting/prunenulls.go``): a ``null`` in an object, for a
   field that is not ``nullable`` and has no ``default``, is removed, as if it had not been written. Nulls
   inside lists are left alone (they fail validation later).
2. ``Default`` (``defaulting/algorithm.go``): for each property with a default, a missing key *or* a
   ``null`` for a non-nullable field gets a deep copy of the default; then every child is visited,
   including values just defaulted (so defaults nested inside a default apply too). List items and
   additional properties that are a non-nullable ``null`` get the items'/values' default, if any.

Built-in kinds get neither step (their Go decoder keeps ``null`` as the zero value, and their defaults are
hand-written defaulting functions, which live in each kind's handler).

Any shape is tolerated: a value of the wrong type is skipped; validation reports it.
"""

from __future__ import annotations

from typing import Any

from jobsetctl.admission.schema_node import ARRAY, MISSING, OBJECT, SchemaNode
from jobsetctl.kube.jsontree import copy_tree

_CONTAINERS = OBJECT | ARRAY


def apply_defaults(root: SchemaNode, obj: Any, *, prune_nulls: bool) -> None:
    """Default ``obj`` in place (and prune its non-nullable nulls when ``prune_nulls``)."""
    if prune_nulls:
        _prune_and_default(root, obj)
    elif root.has_defaults:
        _default(root, obj)


def _default(node: SchemaNode, value: Any) -> None:
    """Defaults only: visit the subtrees that have some."""
    t = type(value)
    if t is dict:
        for key, defaulted in node.defaulted:
            current = value.get(key, MISSING)
            if current is MISSING or (current is None and not defaulted.nullable):
                value[key] = copy_tree(defaulted.default)
        props = node.properties
        extra = node.extra
        for key, item in value.items():
            child = props.get(key, extra)
            if child is None or not child.has_defaults:
                continue
            if child is extra and item is None and not child.nullable and child.default is not MISSING:
                value[key] = item = copy_tree(child.default)
            if type(item) in (dict, list):
                _default(child, item)
    elif t is list:
        items = node.items
        if items is None or not items.has_defaults:
            return
        for index, item in enumerate(value):
            if item is None and not items.nullable and items.default is not MISSING:
                value[index] = item = copy_tree(items.default)
            if type(item) in (dict, list):
                _default(items, item)


def _prune_and_default(node: SchemaNode, value: Any) -> None:
    """Both steps in one walk: a null is pruned before defaults at the same node, as upstream orders them."""
    t = type(value)
    if t is dict:
        props = node.properties
        extra = node.extra
        if None in value.values():
            for key in [k for k, v in value.items() if v is None]:
                child = props.get(key, extra)
                if child is not None and not child.nullable and child.default is MISSING:
                    del value[key]
        for key, child in node.defaulted:
            current = value.get(key, MISSING)
            if current is MISSING or (current is None and not child.nullable):
                value[key] = copy_tree(child.default)
        for key, item in value.items():
            ti = type(item)
            if ti is dict or ti is list:
                child = props.get(key, extra)
                if child is not None:
                    _prune_and_default(child, item)
            elif item is None and extra is not None and key not in props and not extra.nullable \
                    and extra.default is not MISSING:
                value[key] = copy_tree(extra.default)
    elif t is list:
        items = node.items
        if items is None or (items.type_mask and not items.type_mask & _CONTAINERS and items.default is MISSING):
            return  # a list of scalars: nothing to prune (nulls in lists stay) and nothing to default
        for index, item in enumerate(value):
            ti = type(item)
            if item is None and not items.nullable and items.default is not MISSING:
                value[index] = item = copy_tree(items.default)
                ti = type(item)
            if ti is dict or ti is list:
                _prune_and_default(items, item)
