"""copy_tree (:mod:`jobsetctl.kube.jsontree`): equal to ``copy.deepcopy`` type for type, sharing no container."""

from __future__ import annotations

import copy
from collections import OrderedDict
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from jobsetctl.kube.jsontree import copy_tree

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3) | st.binary(
    max_size=2)
trees = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=2), children, max_size=3)
    | st.tuples(children) | st.builds(OrderedDict, st.dictionaries(st.text(max_size=2), children, max_size=2)),
    max_leaves=15)


def _typed(value: Any) -> Any:
    if isinstance(value, dict):
        return (type(value).__name__, [(k, _typed(v)) for k, v in value.items()])
    if isinstance(value, list | tuple):
        return (type(value).__name__, [_typed(v) for v in value])
    return (type(value).__name__, repr(value))


def _containers(value: Any) -> list[Any]:
    found = [value] if isinstance(value, dict | list) else []
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list | tuple) else ()
    for child in children:
        found.extend(_containers(child))
    return found


@given(trees)
def test_copy_tree_equals_deepcopy_type_for_type_and_shares_no_container(value: Any) -> None:
    copied = copy_tree(value)
    assert _typed(copied) == _typed(copy.deepcopy(value))
    originals = {id(c) for c in _containers(value)}
    assert not any(id(c) in originals for c in _containers(copied))
