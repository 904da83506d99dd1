"""``jobsetctl migrate --to TARGET``: rewrite manifests for an API change nobody converts for you.

Each target is a module with ``migrate(files)``, which sees every input file at once (a conversion may need
an object from another file, e.g. the Workload a pod template names) and edits the round-trip documents in
place through :mod:`jobsetctl.fix.yamledit`, noting each object it converted or could not convert on the
file (:meth:`jobsetctl.fix.rewrite.FileEditor.note`). Objects already at the target are left alone, so a
migration run twice changes nothing the second time.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence
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


def objects(files: Sequence[FileEditor]) -> Iterator[ObjectAt]:
    """Every object of every file (the items of a ``v1`` List one by one)."""
    for editor in files:
        try:
            documents = list(editor.documents())
        except Exception as exc:  # ruamel cannot read it: say so, edit nothing
            editor.note(1, 1, "yaml-syntax", f"cannot be migrated: {str(exc).splitlines()[0]}", False)
            continue
        for index, document in documents:
            root = document.root
            if not isinstance(root, dict):
                continue
            items = root.get("items")
            if isinstance(root.get("kind"), str) and root["kind"].endswith("List") and isinstance(items, list):
                for position, item in enumerate(items):
                    if isinstance(item, dict):
                        yield ObjectAt(editor, index, ("items", position), item)
            else:
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
