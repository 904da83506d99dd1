"""What the compiler precomputes on every node for the validator's hot path and for subtree pruning.

:func:`derive` fills a node's private fields from its public ones (called after compiling a node and after
every ``dataclasses.replace``); :func:`finish` sets ``has_defaults``/``has_validations`` over a compiled
graph, which may be cyclic (``JSONSchemaProps``), as a fixpoint.
"""

from __future__ import annotations

import functools
import re

from jobsetctl.admission.regex_dialect import re2_to_python
from jobsetctl.admission.schema_node import (
    ARRAY,
    BOOLEAN,
    INTEGER,
    MISSING,
    NULL,
    NUMBER,
    OBJECT,
    STRING,
    TYPE_BITS,
    SchemaNode,
)

_NONE_TYPE = type(None)


def derive(node: SchemaNode) -> None:
    """Recompute the private fields of ``node`` from its public ones (after compile or ``replace``)."""
    mask = 0
    for name in node.types:
        mask |= TYPE_BITS.get(name, 0)
    if mask & NUMBER:
        mask |= INTEGER  # kube-openapi: an integer is a number (isIntFloat)
    node.type_mask = mask
    if not node.type_label:
        node.type_label = ",".join(sorted(node.types))
    node.pattern_re = _compile_pattern(node.pattern) if node.pattern else None
    node.scalar_checks = bool(
        node.enum is not None
        or node.minimum is not None
        or node.maximum is not None
        or node.min_length is not None
        or node.max_length is not None
        or node.pattern_re is not None
        or node.checked_format
        or node.quantity
        or node.any_of
        or node.one_of
        or node.all_of
    )
    node.defaulted = tuple((k, c) for k, c in node.properties.items() if c.default is not MISSING)
    node.fast = _fast_types(node)
    node.extra = node.additional if isinstance(node.additional, SchemaNode) else None
    node.walk_object = (mask == 0 or bool(mask & OBJECT)) and not node.scalar_checks
    node.walk_array = (mask == 0 or bool(mask & ARRAY)) and not node.scalar_checks


def _fast_types(node: SchemaNode) -> frozenset[type]:
    """Python types that ``node`` accepts with nothing else to check (scalars without constraints)."""
    if node.scalar_checks:
        return frozenset()
    fast: set[type] = set()
    mask = node.type_mask
    if mask == 0:
        fast |= {str, int, float, bool, _NONE_TYPE}
    if mask & STRING:
        fast.add(str)
    if mask & INTEGER:
        fast.add(int)
    if mask & NUMBER:
        fast.add(float)
    if mask & BOOLEAN:
        fast.add(bool)
    if node.nullable or mask & NULL:
        fast.add(_NONE_TYPE)
    unconstrained_object = (
        node.open
        and not node.properties
        and not node.required
        and node.additional in (None, True, False)
        and node.min_properties is None
        and node.max_properties is None
    )
    if (mask == 0 or mask & OBJECT) and unconstrained_object:
        fast.add(dict)
    unconstrained_array = (
        node.items is None and node.min_items is None and node.max_items is None and not node.unique
    )
    if (mask == 0 or mask & ARRAY) and unconstrained_array:
        fast.add(list)
    return frozenset(fast)


@functools.lru_cache(maxsize=1024)
def _compile_pattern(pattern: str) -> re.Pattern[str] | None:
    try:
        # kube-openapi checks ``pattern`` with Go's regexp: translate its dialect (``$`` is end of text).
        return re.compile(re2_to_python(pattern))
    except re.error:
        # An RE2 construct Python lacks; apiextensions would have rejected an invalid one at CRD creation.
        return None


# --- post-pass ---------------------------------------------------------------------------------------


def children(node: SchemaNode) -> list[SchemaNode]:
    out = list(node.properties.values())
    if isinstance(node.additional, SchemaNode):
        out.append(node.additional)
    if node.items is not None:
        out.append(node.items)
    out.extend(node.any_of)
    out.extend(node.one_of)
    out.extend(node.all_of)
    return out


def finish(root: SchemaNode) -> None:
    """Set ``has_defaults``/``has_validations`` under ``root`` (a fixpoint, since graphs may cycle)."""
    nodes: list[SchemaNode] = []
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        nodes.append(node)
        stack.extend(children(node))
    changed = True
    while changed:
        changed = False
        for node in reversed(nodes):
            kids = children(node)
            has_defaults = node.default is not MISSING or any(k.has_defaults for k in kids)
            has_validations = bool(node.validations) or any(k.has_validations for k in kids)
            if has_defaults != node.has_defaults or has_validations != node.has_validations:
                node.has_defaults = has_defaults
                node.has_validations = has_validations
                changed = True
