r"""``jobsetctl migrate --to TARGET``: rewrite manifests for an API change nobody converts for you.

Each target is a module with ``migrate(files)``, which sees every input file at once (a conversion may need
an object from another file, e.g. the Workload a pod template names) and edits the round-trip documents in
place through :mod:`jobsetctl.fix.yamledit`, noting each object it converted or could not convert on the
file (:meth:`jobsetctl.fix.rewrite.FileEditor.note`). Objects already at the target are left alone, so a
migration run twice changes nothing the second time.

Most documents need nothing (a repository holds far more objects than the ones a migration is about). A
ruamel round-trip parse is pure Python and costs ~20x the C-accelerated loader ``validate`` uses, so each
target also has ``candidate(obj)``, a test on plain data that is true for every object the target might
change: :func:`objects` reads each document with the C loader first and builds a round-trip tree only for
documents holding a candidate (or whose text the C loader reports a problem with, so that ruamel's error
is reported as before). Before that, ``HINTS`` (strings a candidate's text must contain: its apiVersion's
group, a field name) spare even the C loader most documents. Without a backslash in the text the check is
exact: YAML spells a scalar or key without its characters only through an escape (``"\x6b"``, JSON's
``"\/"``), and aliases, merge keys and tags name text of the same document. A file that cannot be read is
therefore reported only when it may hold something to migrate.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from jobsetctl.fix.rewrite import FileEditor, RewriteOutcome
from jobsetctl.kube.field import Path
from jobsetctl.loader.sources import discover
from jobsetctl.status import UsageError

#: ``--to`` value → module implementing it.
TARGETS: dict[str, str] = {
    "kubernetes-1.36": "jobsetctl.migrate.kubernetes",
    "kubernetes-1.37": "jobsetctl.migrate.kubernetes",
    "trainer-v2": "jobsetctl.migrate.trainer",
    "kueue-v1beta2": "jobsetctl.migrate.kueue",
}


@dataclass(slots=True)
class ObjectAt:
    """One object of the inputs, as a round-trip mapping, with where it sits."""

    editor: FileEditor
    segment: int
    prefix: Path
    obj: Any

    @property
    def line(self) -> int:
        lc = getattr(self.obj, "lc", None)
        return (lc.line + self.editor.segments[self.segment].first_line) if lc is not None else 1

    def note(self, rule: str, message: str, fixed: bool) -> None:
        self.editor.note(self.line, 1, rule, message, fixed)

    def changed(self) -> None:
        document = self.editor.document(self.segment)
        assert document is not None
        document.changed = True


#: ``candidate(obj)`` of a target: may the target change this object (plain data, any shape)?
Candidate = Callable[[Any], bool]


def _is_list(root: Any) -> bool:
    return isinstance(root, dict) and isinstance(root.get("kind"), str) and root["kind"].endswith("List") \
        and isinstance(root.get("items"), list)


def _items(root: Any) -> list[Any]:
    """The objects of a document: a ``v1`` List's items, else the document itself."""
    return list(root["items"]) if _is_list(root) else [root]


def _needed(editor: FileEditor, candidate: Candidate, hints: Sequence[str]) -> list[int]:
    """The segments that hold a candidate, or that the C loader cannot read (ruamel will say why)."""
    needed = []
    for index, segment in enumerate(editor.segments):
        if not segment.has_content:
            continue
        text = segment.text
        if "\\" not in text and not any(hint in text for hint in hints):
            continue
        values = editor.plain(index)
        if values is None or any(candidate(obj) for value in values for obj in _items(value)):
            needed.append(index)
    return needed


def objects(files: Sequence[FileEditor], candidate: Candidate, hints: Sequence[str]) -> Iterator[ObjectAt]:
    """Every candidate object of every file (the items of a ``v1`` List one by one), as round-trip mappings.
    ``hints``: strings at least one of which the text of every candidate's document contains. A file ruamel
    cannot read is noted and left alone as a whole (nothing written half-way)."""
    for editor in files:
        needed = _needed(editor, candidate, hints)
        try:
            documents = [(index, editor.document(index)) for index in needed]
        except Exception as exc:  # ruamel cannot read it: say so, edit nothing
            editor.note(1, 1, "yaml-syntax", f"cannot be migrated: {str(exc).splitlines()[0]}", False)
            continue
        for index, document in documents:
            root = document.root if document is not None else None
            if not isinstance(root, dict):
                continue
            if _is_list(root):
                for position, item in enumerate(root["items"]):
                    if isinstance(item, dict) and candidate(item):
                        yield ObjectAt(editor, index, ("items", position), item)
            elif candidate(root):
                yield ObjectAt(editor, index, (), root)


def run_migrate(target: str, paths: Sequence[str]) -> RewriteOutcome:
    if target not in TARGETS:
        raise UsageError(f"unknown migration target {target!r}: one of {', '.join(TARGETS)}")
    if not paths:
        raise UsageError("no input: give files, directories, or - for standard input")
    sources, problems = discover(list(paths))
    if problems:
        raise UsageError(problems[0].message)
    files: list[FileEditor] = []
    unreadable: list[FileEditor] = []
    for source in sources:
        try:
            files.append(FileEditor.open(source))
        except UsageError as exc:  # not text: reported with the others, nothing written
            skipped = FileEditor(source, "")
            skipped.note(1, 1, "input-encoding", f"cannot be migrated: {exc}", False)
            unreadable.append(skipped)
    module = importlib.import_module(TARGETS[target])
    module.migrate(files, target)
    return RewriteOutcome(files + unreadable)
