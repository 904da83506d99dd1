"""Round-trip editing of YAML (and JSON) files that touches only what changes.

``fix`` and ``migrate`` edit documents as ruamel.yaml round-trip trees (comments, key order, quoting, flow
style and anchors are kept on the tree). Writing a whole stream back with ruamel would still reformat parts
nobody asked to change (another document's indentation, a line ruamel wraps), so:

* a file is split into its documents on the lines that start with ``---`` or ``...`` (YAML forbids those
  markers inside any scalar at column 0, so the split is exact); documents nobody edits are kept as they are,
  byte for byte, and so is every byte between them;
* an edited document is dumped twice, as loaded and as edited, with the indentation guessed from its text;
  the line hunks between those two dumps are then applied to the original text (a three-way merge), so
  ruamel's own normalisation of untouched lines cancels out. When a hunk cannot be placed on the original
  lines (ruamel reformatted exactly there), the edited dump is used for the whole document;
* the result is parsed again and compared, as data, with the edited tree: a merge that changed the meaning
  of anything is never written (the edited dump is used instead).

JSON files (a document whose text starts with ``{`` or ``[``) are written back as JSON with the indentation
they had. Byte-order mark and CRLF line endings are kept.
"""

from __future__ import annotations

import difflib
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from jobsetctl.kube.field import Path

#: A line that starts or ends a document (``---``/``...`` followed by a blank or the end of the line).
_MARKER = re.compile(r"^(---|\.\.\.)(?:[ \t]|$)")
_LINES = re.compile(r"[^\n]*\n|[^\n]+$")
#: (mapping, sequence, offset) indentations tried, most common first (kubectl, Helm, upstream examples).
_INDENTS: tuple[tuple[int, int, int], ...] = ((2, 2, 0), (2, 4, 2), (4, 4, 0), (4, 6, 4), (2, 3, 1), (3, 3, 0), (4, 4, 2))


class EditError(Exception):
    """An edit that cannot be made safely (shared anchors, merge keys, a path that is not there)."""


@dataclass(slots=True)
class Segment:
    """A slice of a file: one document with the comments after it, or text before the first document."""

    text: str
    first_line: int  # 1-based line where the slice starts

    @property
    def line_count(self) -> int:
        return self.text.count("\n") + (0 if self.text.endswith("\n") or not self.text else 1)

    @property
    def has_content(self) -> bool:
        for line in self.text.splitlines():
            stripped = line.strip()
            if stripped and not stripped.startswith("#") and not _MARKER.match(line):
                return True
            if line.startswith("---"):
                return True
        return False


def split_segments(text: str) -> list[Segment]:
    """The file cut before every ``---`` line (``...`` stays with the document it ends)."""
    segments: list[Segment] = []
    current: list[str] = []
    start = 1
    line_no = 1
    for match in _LINES.finditer(text):
        line = match.group(0)
        if line.startswith("---") and _MARKER.match(line) and current:
            segments.append(Segment("".join(current), start))
            current, start = [], line_no
        current.append(line)
        line_no += 1
    if current or not segments:
        segments.append(Segment("".join(current), start))
    return segments


def _yaml(indent: tuple[int, int, int] = (2, 2, 0)) -> YAML:
    handle = YAML(typ="rt", pure=True)
    handle.preserve_quotes = True
    handle.width = 1 << 20  # never wrap a long line the user wrote on one line
    handle.allow_duplicate_keys = False
    handle.indent(mapping=indent[0], sequence=indent[1], offset=indent[2])
    return handle


def is_json(text: str) -> bool:
    """A JSON file (written back as JSON): the text parses as JSON, not merely as flow-style YAML."""
    if not text.lstrip().startswith(("{", "[")):
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


@dataclass(slots=True)
class EditableDocument:
    """One document of a file as a round-trip tree, and how to write it back."""

    segment: Segment
    root: Any
    json_indent: int | None = None
    explicit_start: bool = False
    #: Guessed from the text when first needed (guessing dumps the tree several times).
    indent: tuple[int, int, int] | None = (2, 2, 0)
    changed: bool = False
    notes: list[str] = field(default_factory=list)
    #: The unedited tree dumped with :attr:`indent` (kept from the guess: the merge's base).
    base: str | None = None

    def style(self) -> tuple[int, int, int]:
        if self.indent is None:
            text = self.segment.text.replace("\r\n", "\n")
            self.indent, self.base = _guess_indent(text, _yaml().load(text), self.explicit_start)
        return self.indent

    def render(self) -> str:
        """The document's new text (its segment's text when nothing changed)."""
        if not self.changed:
            return self.segment.text
        original = self.segment.text
        crlf = "\r\n" in original
        base_text = original.replace("\r\n", "\n") if crlf else original
        if self.json_indent is not None:
            result = _render_json(base_text, self.root, self.json_indent)
        else:
            indent = self.style()
            result = _render_yaml(base_text, self.root, indent, self.explicit_start, self.base)
        return result.replace("\n", "\r\n") if crlf else result


def load_document(segment: Segment) -> EditableDocument:
    """Parse a segment with ruamel round-trip (raises ruamel's errors on text it cannot parse)."""
    text = segment.text.replace("\r\n", "\n")
    if is_json(text):
        indent = _json_indent(text)
        root = _yaml().load(text)
        return EditableDocument(segment, root, json_indent=indent)
    root = _yaml().load(text)
    explicit = text.lstrip("\n").startswith("---") or _strip_comments_head(text).startswith("---")
    return EditableDocument(segment, root, explicit_start=explicit, indent=None)


def _strip_header(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    body = "\n".join(lines)
    return body[3:].lstrip() if body.startswith("---") else body


def _strip_comments_head(text: str) -> str:
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            return line
    return ""


def _json_indent(text: str) -> int:
    for line in text.splitlines()[1:]:
        if line.strip():
            return len(line) - len(line.lstrip(" "))
    return 2


def _dump(root: Any, indent: tuple[int, int, int], explicit_start: bool) -> str:
    handle = _yaml(indent)
    handle.explicit_start = explicit_start
    out = io.StringIO()
    handle.dump(root, out)
    return out.getvalue()


def _guess_indent(text: str, root: Any, explicit: bool) -> tuple[tuple[int, int, int], str | None]:
    """The indentation whose dump of the unedited tree is closest to the text (exact, usually), and that dump."""
    if not isinstance(root, CommentedMap | CommentedSeq):
        return (2, 2, 0), None
    best, best_ratio, best_dump = _INDENTS[0], -1.0, None
    for indent in _INDENTS:
        try:
            dumped = _dump(root, indent, explicit)
        except Exception:  # a style ruamel cannot dump this tree in: try the next
            continue
        if dumped == text:
            return indent, dumped
        ratio = difflib.SequenceMatcher(None, text.splitlines(), dumped.splitlines(), autojunk=False).ratio()
        if ratio > best_ratio:
            best, best_ratio, best_dump = indent, ratio, dumped
    return best, best_dump


def dump_new(root: Any, indent: tuple[int, int, int] = (2, 2, 0)) -> str:
    """A document that did not exist before, starting with ``---``."""
    return _dump(root, indent, True)


def _render_yaml(original: str, root: Any, indent: tuple[int, int, int], explicit: bool,
                 base: str | None = None) -> str:
    edited = _dump(root, indent, explicit)
    if base is None:
        base = _dump(_yaml().load(original), indent, explicit)
    merged = three_way(original, base, edited)
    if merged is not None and merged != edited and _same_data(merged, edited):
        return merged
    return edited


def _render_json(original: str, root: Any, indent: int) -> str:
    edited = json.dumps(to_plain(root), indent=indent, ensure_ascii=False) + "\n"
    base = json.dumps(json.loads(original), indent=indent, ensure_ascii=False) + "\n"
    merged = three_way(original, base, edited)
    if merged is not None and _same_data(merged, edited):
        return merged
    return edited


def three_way(original: str, base: str, edited: str) -> str | None:
    """Apply the line changes ``base`` → ``edited`` to ``original``, where ``base`` is ``original`` as the
    dumper writes it. None when a change falls on lines the dumper wrote differently from the original."""
    if base == original:
        return edited
    orig_lines = original.splitlines(keepends=True)
    base_lines = base.splitlines(keepends=True)
    edit_lines = edited.splitlines(keepends=True)
    # base line index -> original line index, for lines the dumper reproduced exactly
    mapped: dict[int, int] = {}
    for block in difflib.SequenceMatcher(None, orig_lines, base_lines, autojunk=False).get_matching_blocks():
        for k in range(block.size):
            mapped[block.b + k] = block.a + k
    replacements: list[tuple[int, int, list[str]]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, base_lines, edit_lines, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if i1 < i2:
            rows = [mapped.get(i) for i in range(i1, i2)]
            if any(r is None for r in rows):
                return None
            start = rows[0]
            assert start is not None
            if rows != list(range(start, start + len(rows))):
                return None
            replacements.append((start, start + len(rows), edit_lines[j1:j2]))
        else:  # pure insertion before base line i1 (after i1 - 1)
            if i1 in mapped:
                at = mapped[i1]
            elif i1 - 1 in mapped:
                at = mapped[i1 - 1] + 1
            elif i1 == 0:
                at = 0
            else:
                return None
            replacements.append((at, at, edit_lines[j1:j2]))
    for start, end, lines in sorted(replacements, key=lambda r: (r[0], r[1]), reverse=True):
        orig_lines[start:end] = lines
    return "".join(orig_lines)


def _same_data(first: str, second: str) -> bool:
    """Both texts mean the same data, as ``validate`` reads them (its C-accelerated loader, which resolves
    plain scalars the way Kubernetes does; a ruamel round-trip load of each would cost ~20x more)."""
    from jobsetctl.loader.yamlload import load_documents

    values = []
    for text in (first, second):
        documents, problems = load_documents(text, "")
        if problems or any(d.problems for d in documents):
            return False  # an unreadable merge is simply not used
        values.append([d.value for d in documents])
    return values[0] == values[1]


def to_plain(value: Any) -> Any:
    """A round-trip value as plain dicts, lists and scalars (quoted strings as str, numbers as numbers)."""
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    return value


# --- navigation and edits on a round-trip tree ---------------------------------------------------------


def _anchored(node: Any) -> bool:
    anchor = getattr(node, "anchor", None)
    return anchor is not None and getattr(anchor, "value", None) is not None


def _own_key(node: CommentedMap, key: str) -> bool:
    """True when ``key`` is written in this mapping itself, not brought in by a ``<<`` merge key."""
    if key not in node:
        return False
    merged = getattr(node, "merge", None)
    if merged:
        return key in node._ok  # ruamel's own-key set, the only way to tell merged keys apart
    return True


def walk(root: Any, path: Path) -> Any:
    """The node at ``path``; EditError when a step is missing, merged in or shared through an anchor."""
    node = root
    for seg in path:
        if _anchored(node):
            raise EditError("the value is shared through a YAML anchor; editing it would change every alias")
        if isinstance(node, CommentedMap) and isinstance(seg, str):
            if not _own_key(node, seg):
                raise EditError(f"{seg} is not written here (missing, or brought in by a << merge key)")
            node = node[seg]
        elif isinstance(node, CommentedSeq) and isinstance(seg, int) and 0 <= seg < len(node):
            node = node[seg]
        else:
            raise EditError(f"nothing at {seg!r}")
    if _anchored(node):
        raise EditError("the value is shared through a YAML anchor; editing it would change every alias")
    return node


def find(root: Any, path: Path) -> Any:
    """The node at ``path`` or None (no checks: for reading)."""
    node = root
    for seg in path:
        try:
            node = node[seg] if isinstance(node, dict | list) else None  # type: ignore[index]
        except (KeyError, IndexError, TypeError):
            return None
        if node is None:
            return None
    return node


def mapping_at(root: Any, path: Path, *, create: bool = False) -> CommentedMap:
    """The mapping at ``path``, creating missing mappings (block style) along the way when asked."""
    node = root
    for seg in path:
        if isinstance(seg, str) and isinstance(node, CommentedMap) and seg not in node and create:
            if _anchored(node):
                raise EditError("the value is shared through a YAML anchor; editing it would change every alias")
            node[seg] = CommentedMap()
        node = walk(node, (seg,))
    if not isinstance(node, CommentedMap):
        raise EditError(f"{'.'.join(map(str, path))} is not a mapping")
    return node


def set_after(mapping: CommentedMap, key: str, value: Any, after: str | None = None) -> None:
    """Set ``key``; a new key goes right after ``after`` when that key is there, else at the end."""
    if _anchored(mapping):
        raise EditError("the value is shared through a YAML anchor; editing it would change every alias")
    if key in mapping or after is None or after not in mapping:
        mapping[key] = value
        return
    position = list(mapping.keys()).index(after) + 1
    mapping.insert(position, key, value)


def rename_key(mapping: CommentedMap, old: str, new: str, value: Any = None) -> None:
    """Replace key ``old`` by ``new`` at the same place, with ``value`` (default: the old value), keeping the
    comments written on the old key's line."""
    if _anchored(mapping):
        raise EditError("the value is shared through a YAML anchor; editing it would change every alias")
    position = list(mapping.keys()).index(old)
    comment = mapping.ca.items.pop(old, None)
    kept = mapping.pop(old)
    mapping.insert(position, new, kept if value is None else value)
    if comment is not None:
        mapping.ca.items[new] = comment


def delete(mapping: CommentedMap, key: str) -> None:
    if _anchored(mapping):
        raise EditError("the value is shared through a YAML anchor; editing it would change every alias")
    if not _own_key(mapping, key):
        raise EditError(f"{key} is not written here")
    del mapping[key]


def flow_map(**items: Any) -> CommentedMap:
    """A small mapping written in flow style (``{name: x, status: Ready}``)."""
    node = CommentedMap(items)
    node.fa.set_flow_style()
    return node


def block_seq(items: list[Any]) -> CommentedSeq:
    node = CommentedSeq(items)
    node.fa.set_block_style()
    return node


def documents_of(text: str) -> Iterator[tuple[Segment, EditableDocument | None]]:
    """Every segment of a file with its round-trip document (None for text without a document)."""
    for segment in split_segments(text):
        yield segment, (load_document(segment) if segment.has_content else None)
