"""What a loaded YAML document is: its value, its problems, and the compact position tree that
``file:line:column`` comes from (:data:`PosNode`), with the look-ups that turn a field path into a position."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jobsetctl.kube.field import Path

_MERGE = "<<"


#: A position packed into one int: 0-based line in the high bits, 0-based column in the low ones (exact for
#: lines shorter than 4 Gi characters; inputs are at most 64 MiB).
_COLUMN_BITS = 32
_COLUMN_MASK = (1 << _COLUMN_BITS) - 1


def unpack(at: int) -> tuple[int, int]:
    """0-based ``(line, column)`` of a packed position."""
    return at >> _COLUMN_BITS, at & _COLUMN_MASK


class PosScalar:
    """An unquoted scalar that YAML 1.1 did not read as a string: its text is kept for the hint of a type
    error (``on`` read as true). Every other scalar is only its packed position."""

    __slots__ = ("at", "text")

    def __init__(self, at: int, text: str) -> None:
        self.at = at
        self.text = text


class PosSequence:
    __slots__ = ("at", "items")

    def __init__(self, at: int, items: tuple[PosNode, ...]) -> None:
        self.at = at
        self.items = items


class PosMapping:
    """A mapping's entries in source order, duplicates and merge keys (``<<``) included: each key as the
    string it became (None for a key that is not a scalar), where the key is, and the value."""

    __slots__ = ("at", "key_at", "keys", "values")

    def __init__(
        self, at: int, keys: tuple[str | None, ...], key_at: tuple[int, ...], values: tuple[PosNode, ...]
    ) -> None:
        self.at = at
        self.keys = keys
        self.key_at = key_at
        self.values = values


#: A node of a document's position tree: a packed position for a plain value, or one of the classes above.
PosNode = int | PosScalar | PosSequence | PosMapping


def node_position(node: PosNode) -> tuple[int, int]:
    """0-based ``(line, column)`` where a node starts."""
    return unpack(node if isinstance(node, int) else node.at)

@dataclass(slots=True)
class LoadProblem:
    """Something wrong in the YAML itself, with its 0-based position. ``code`` names the core rule."""

    code: str
    message: str
    line: int
    column: int


class Document:
    """One YAML document of a file: the built value and the position tree that positions come from.

    The position tree is built when first asked for (:attr:`node`): ``locate`` builds it (the loader re-parses
    the document's text with positions, :mod:`jobsetctl.loader.yamlload`), so a run whose inputs have no
    diagnostic never pays for positions. ``node`` given and no ``locate``: the tree is that (None: none).
    """

    __slots__ = ("_locate", "_node", "file", "index", "problems", "size", "value")

    def __init__(
        self, file: str, index: int, value: Any, node: PosNode | None, problems: list[LoadProblem] | None = None,
        size: int = 0, locate: Callable[[], PosNode | None] | None = None,
    ) -> None:
        self.file = file
        self.index = index
        self.value = value
        self._node = node
        self.problems: list[LoadProblem] = problems if problems is not None else []
        #: Characters the document spans in the source (the size of the request ``kubectl apply`` would send).
        self.size = size
        self._locate = locate

    @property
    def node(self) -> PosNode | None:
        """The document's position tree (None for a document that has none, such as a detached copy)."""
        if self._locate is not None:
            locate, self._locate = self._locate, None
            self._node = locate()
        return self._node

    def position(self, at: Path) -> tuple[int, int]:
        """1-based ``(line, column)`` of the deepest part of ``at`` that exists in the source.

        The last segment points at the *key* of a mapping entry (what an editor should highlight for
        a wrong field), or at the item of a list.
        """
        node = self.node
        if node is None:
            return (1, 1)
        line, column = node_position(node)
        for seg in at:
            if isinstance(node, PosMapping) and isinstance(seg, str):
                hit = _mapping_entry(node, seg)
                if hit is None:
                    break
                key_at, node = hit
                line, column = unpack(key_at)
            elif isinstance(node, PosSequence) and isinstance(seg, int) and 0 <= seg < len(node.items):
                node = node.items[seg]
                line, column = node_position(node)
            else:
                break
        return (line + 1, column + 1)

    def node_at(self, at: Path) -> PosNode | None:
        """The node at exactly ``at``, or None."""
        node = self.node
        for seg in at:
            if isinstance(node, PosMapping) and isinstance(seg, str):
                hit = _mapping_entry(node, seg)
                if hit is None:
                    return None
                node = hit[1]
            elif isinstance(node, PosSequence) and isinstance(seg, int) and 0 <= seg < len(node.items):
                node = node.items[seg]
            else:
                return None
        return node


def _mapping_entry(node: PosMapping, key: str) -> tuple[int, PosNode] | None:
    found: tuple[int, PosNode] | None = None
    for index, name in enumerate(node.keys):
        value = node.values[index]
        if name == key:
            found = (node.key_at[index], value)  # the last duplicate wins, as in the built value
        if name == _MERGE and found is None and isinstance(value, PosMapping):
            nested = _mapping_entry(value, key)
            if nested is not None:
                found = nested
    return found


