"""What ``fix`` and ``migrate`` share: files opened for editing, the changes made, and how they are shown
(a unified diff), checked (``--check``) or written (``--write``, atomically)."""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import IO, Any

from jobsetctl.fix.yamledit import EditableDocument, Segment, load_document, split_segments
from jobsetctl.loader.sources import STDIN_NAME, Source, read_text
from jobsetctl.status import ExitStatus, UsageError


class Mode(StrEnum):
    DIFF = "diff"
    WRITE = "write"


@dataclass(frozen=True, slots=True)
class Change:
    """One finding or object handled: ``fixed`` True when the file was edited for it, else ``message`` says
    why it was left alone (reported, never guessed)."""

    file: str
    line: int
    column: int
    rule: str
    message: str
    fixed: bool


@dataclass(slots=True)
class FileEditor:
    """One input file opened for round-trip edits; documents are parsed with ruamel only when touched."""

    source: Source
    before: str
    bom: bool = False
    segments: list[Segment] = field(default_factory=list)
    _documents: dict[int, EditableDocument | None] = field(default_factory=dict)
    changes: list[Change] = field(default_factory=list)
    #: New documents to write after segment ``index`` (a migration that splits one object in two).
    added: dict[int, list[Any]] = field(default_factory=dict)
    _final: str | None = None

    @classmethod
    def open(cls, source: Source) -> FileEditor:
        from jobsetctl.loader import sources as loaded

        if source.path is None and loaded._stdin_text is not None:  # validate read it already
            text: str | None = loaded._stdin_text
            problem = None
        else:
            text, problem, _ = read_text(source)
        if problem is not None or text is None:
            raise UsageError(problem.message if problem else f"{source.name}: cannot be read")
        bom = False
        if source.path is not None:
            with open(source.path, "rb") as handle:
                bom = handle.read(3) == b"\xef\xbb\xbf"
        return cls(source, text, bom, split_segments(text))

    @property
    def name(self) -> str:
        return self.source.name

    def segment_index(self, line: int) -> int:
        for index, segment in enumerate(self.segments):
            if segment.first_line <= line < segment.first_line + max(1, segment.line_count):
                return index
        return len(self.segments) - 1

    def document(self, index: int) -> EditableDocument | None:
        """The round-trip document of segment ``index`` (None without content); raises ruamel's error."""
        if index not in self._documents:
            segment = self.segments[index]
            self._documents[index] = load_document(segment) if segment.has_content else None
        return self._documents[index]

    def plain(self, index: int) -> list[Any] | None:
        """The values of segment ``index`` as the C-accelerated loader of ``validate`` reads them (cheap next
        to a ruamel round-trip parse), or None when that loader reports any problem with the text (the caller
        then parses it with ruamel, which reports what is wrong)."""
        from jobsetctl.loader.yamlload import load_documents

        documents, problems = load_documents(self.segments[index].text, self.name)
        if problems or any(d.problems for d in documents):
            return None
        return [d.value for d in documents]

    def documents(self) -> Iterator[tuple[int, EditableDocument]]:
        for index, segment in enumerate(self.segments):
            if segment.has_content:
                document = self.document(index)
                if document is not None:
                    yield index, document

    def note(self, line: int, column: int, rule: str, message: str, fixed: bool) -> None:
        self.changes.append(Change(self.name, line, column, rule, message, fixed))

    def add_document(self, after_index: int, root: Any) -> None:
        self.added.setdefault(after_index, []).append(root)

    def final_text(self) -> str:
        """:attr:`after`, computed once: call it when every edit is done (rendering a changed document
        dumps and merges it, which costs more than the edit)."""
        if self._final is None:
            self._final = self.after
        return self._final

    @property
    def after(self) -> str:
        from jobsetctl.fix.yamledit import dump_new

        parts: list[str] = []
        for index, segment in enumerate(self.segments):
            document = self._documents.get(index)
            parts.append(document.render() if document is not None else segment.text)
            for root in self.added.get(index, []):
                if parts and parts[-1] and not parts[-1].endswith("\n"):
                    parts.append("\n")
                indent = document.style() if document is not None else (2, 2, 0)
                parts.append(dump_new(root, indent))
        return "".join(parts)


@dataclass(slots=True)
class RewriteOutcome:
    """Every file looked at: its text before and after, and the changes made or refused."""

    files: list[FileEditor] = field(default_factory=list)
    #: Findings of validate that no fix handles (fix only), counted for the summary line.
    without_fix: int = 0
    #: Info-level findings with a fix, left alone without ``--include-info`` (fix only).
    info_with_fix: int = 0
    #: Files read (``fix``: every file validate read; None: the files opened for editing).
    looked_at: int | None = None

    @property
    def changed(self) -> list[FileEditor]:
        return [f for f in self.files if f.final_text() != f.before]

    @property
    def changes(self) -> list[Change]:
        return sorted((c for f in self.files for c in f.changes), key=lambda c: (c.file, c.line, c.column, c.rule))


def unified_diff(editor: FileEditor) -> str:
    name = editor.name
    lines = difflib.unified_diff(
        editor.before.splitlines(keepends=True), editor.final_text().splitlines(keepends=True),
        fromfile=f"a/{name}" if not os.path.isabs(name) else name,
        tofile=f"b/{name}" if not os.path.isabs(name) else name,
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def write_all(outcome: RewriteOutcome) -> None:
    """Write every changed file atomically (all texts are built before the first write)."""
    from jobsetctl.atomicio import atomic_write_bytes

    for editor in outcome.changed:
        if editor.source.path is None:
            raise UsageError("--write cannot rewrite standard input; use --diff")
    for editor in outcome.changed:
        assert editor.source.path is not None
        data = editor.final_text().encode("utf-8")
        atomic_write_bytes(editor.source.path, (b"\xef\xbb\xbf" if editor.bom else b"") + data)


def report(outcome: RewriteOutcome, mode: Mode, check: bool, verb: str, out: IO[str], err: IO[str]) -> int:
    """Print the diff (``--diff``) or write (``--write``), list what was done and refused on ``err``, and
    return the exit status: 1 under ``--check`` when a file changes (or would), else 0."""
    if mode is Mode.WRITE:
        write_all(outcome)
    else:
        for editor in outcome.changed:
            out.write(unified_diff(editor))
    for change in outcome.changes:
        state = verb if change.fixed else "not " + verb
        err.write(f"{change.file}:{change.line}:{change.column}: {state} [{change.rule}] {change.message}\n")
    changed = outcome.changed
    refused = sum(1 for c in outcome.changes if not c.fixed)
    done = "rewrote" if mode is Mode.WRITE else "would rewrite"
    summary = f"{done} {len(changed)} file{'s' if len(changed) != 1 else ''}"
    if refused:
        summary += f"; {refused} finding{'s' if refused != 1 else ''} left as {'they are' if refused != 1 else 'it is'}"
    if outcome.without_fix:
        summary += f"; {outcome.without_fix} other finding{'s' if outcome.without_fix != 1 else ''} have no fix (jobsetctl validate)"
    if outcome.info_with_fix:
        notes = outcome.info_with_fix
        summary += f"; {notes} info-level finding{'s' if notes != 1 else ''} {'have' if notes != 1 else 'has'} a fix with --include-info"
    looked = len(outcome.files) if outcome.looked_at is None else outcome.looked_at
    err.write(f"{summary} ({looked} file{'s' if looked != 1 else ''} looked at)\n")
    return ExitStatus.FINDINGS if check and changed else ExitStatus.SUCCESS


def stdin_source() -> Source:
    return Source(STDIN_NAME, None)


def plain(value: Any) -> Any:
    from jobsetctl.fix.yamledit import to_plain

    return to_plain(value)
