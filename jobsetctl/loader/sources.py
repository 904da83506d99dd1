"""Finding and reading input files: paths, directories (recursively), and ``-`` for standard input."""

from __future__ import annotations

import os
import re
import stat
import sys
from array import array
from dataclasses import dataclass

#: Suffixes picked up when a directory is given. Files named explicitly are read whatever their suffix.
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
#: Larger files are refused with a clear error instead of being parsed for minutes.
MAX_FILE_BYTES = 64 * 1024 * 1024
STDIN_NAME = "<stdin>"

# Standard input can be read once; its text is kept so that reporters can show source lines.
_stdin_text: str | None = None


@dataclass(frozen=True, slots=True)
class Source:
    """One input file. ``name`` is what diagnostics print; ``path`` is None for standard input."""

    name: str
    path: str | None


@dataclass(frozen=True, slots=True)
class SourceProblem:
    """A path that cannot be used. ``code`` names the core rule (``input-unreadable`` ...)."""

    name: str
    code: str
    message: str


def discover(paths: list[str]) -> tuple[list[Source], list[SourceProblem]]:
    """Expand the command-line paths into files, in a stable order, without visiting anything twice.

    Directory loops through symlinks are detected by (device, inode) of the directories on the walk.
    """
    sources: list[Source] = []
    problems: list[SourceProblem] = []
    seen_files: set[tuple[int, int]] = set()
    stdin_used = False
    for raw in paths:
        if raw == "-":
            if not stdin_used:
                sources.append(Source(STDIN_NAME, None))
                stdin_used = True
            continue
        try:
            info = os.stat(raw)
        except FileNotFoundError:
            if os.path.islink(raw):
                problems.append(SourceProblem(raw, "input-unreadable", f"{raw}: broken symbolic link"))
            else:
                problems.append(SourceProblem(raw, "input-unreadable", f"{raw}: no such file or directory"))
            continue
        except OSError as exc:
            problems.append(SourceProblem(raw, "input-unreadable", f"{raw}: {_reason(exc)}"))
            continue
        if stat.S_ISDIR(info.st_mode):
            _walk(raw, info, sources, problems, seen_files)
        elif stat.S_ISREG(info.st_mode):
            key = (info.st_dev, info.st_ino)
            if key not in seen_files:
                seen_files.add(key)
                sources.append(Source(raw, raw))
        else:
            problems.append(SourceProblem(raw, "input-unreadable", f"{raw}: not a regular file"))
    return sources, problems


def _walk(
    root: str,
    root_info: os.stat_result,
    sources: list[Source],
    problems: list[SourceProblem],
    seen_files: set[tuple[int, int]],
) -> None:
    # Depth-first with an explicit stack; `ancestors` holds the directories on the current path only,
    # so a symlink back up the tree is a loop, while two links to one sibling directory are not.
    stack: list[tuple[str, frozenset[tuple[int, int]]]] = [
        (root, frozenset({(root_info.st_dev, root_info.st_ino)}))
    ]
    while stack:
        directory, ancestors = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            problems.append(SourceProblem(directory, "input-unreadable", f"{directory}: {_reason(exc)}"))
            continue
        subdirs: list[tuple[str, frozenset[tuple[int, int]]]] = []
        for entry in entries:
            path = os.path.join(directory, entry.name)
            try:
                info = os.stat(path)
            except OSError as exc:
                if entry.name.endswith(MANIFEST_SUFFIXES):
                    problems.append(SourceProblem(path, "input-unreadable", f"{path}: {_reason(exc)}"))
                continue
            if stat.S_ISDIR(info.st_mode):
                if entry.name.startswith("."):
                    continue  # .git, .venv and friends
                key = (info.st_dev, info.st_ino)
                if key in ancestors:
                    problems.append(SourceProblem(
                        path, "input-unreadable", f"{path}: directory loop through a symbolic link, not followed"
                    ))
                    continue
                subdirs.append((path, ancestors | {key}))
            elif stat.S_ISREG(info.st_mode) and entry.name.endswith(MANIFEST_SUFFIXES):
                key = (info.st_dev, info.st_ino)
                if key not in seen_files:
                    seen_files.add(key)
                    sources.append(Source(path, path))
        stack.extend(reversed(subdirs))


def _reason(exc: OSError) -> str:
    return (exc.strerror or str(exc)).lower()


def read_text(source: Source) -> tuple[str | None, SourceProblem | None, tuple[int, int]]:
    """The decoded text of a source, or a problem. The pair is the 0-based position of a decoding error."""
    try:
        if source.path is None:
            data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
        else:
            with open(source.path, "rb") as handle:
                data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return None, SourceProblem(source.name, "input-unreadable", f"{source.name}: {_reason(exc)}"), (0, 0)
    if len(data) > MAX_FILE_BYTES:
        return None, SourceProblem(
            source.name, "input-too-large",
            f"{source.name}: larger than the {MAX_FILE_BYTES // (1024 * 1024)} MiB input limit",
        ), (0, 0)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
        if source.path is None:
            global _stdin_text
            _stdin_text = text
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start)
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1)
        kind = "binary file" if b"\x00" in data[:8192] else "not valid UTF-8"
        return None, SourceProblem(
            source.name, "input-encoding",
            f"{kind}: invalid byte 0x{data[exc.start]:02x} at offset {exc.start}",
        ), (line, column)
    return text, None, (0, 0)


#: What libyaml counts as a line break (YAML 1.1: CR LF, CR, LF, NEL, LS, PS), so that line numbers agree.
_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
# The last file whose lines were indexed. Reporters ask for the lines of one file in order; re-reading the
# file for each line made a 50 MB input with a diagnostic per document quadratic (issue #6).
# Keyed by name and, for a file, its size and modification time, so that a rewritten file is read again.
_line_index: tuple[tuple[str, int, int], str, array[int]] | None = None


def source_line(name: str, line: int) -> str | None:
    """Line ``line`` (1-based) of an input, for showing context; None when unavailable."""
    if line < 1:
        return None
    indexed = _indexed(name)
    if indexed is None:
        return None
    text, starts = indexed
    if line > len(starts):
        return None
    start = starts[line - 1]
    end = starts[line] if line < len(starts) else len(text) + 1
    return _LINE_BREAK.sub("", text[start:end])


def _indexed(name: str) -> tuple[str, array[int]] | None:
    global _line_index
    if name == STDIN_NAME:
        if _stdin_text is None:
            return None
        key = (name, id(_stdin_text), len(_stdin_text))
    else:
        try:
            info = os.stat(name)
        except OSError:
            return None
        key = (name, info.st_size, info.st_mtime_ns)
    if _line_index is not None and _line_index[0] == key:
        return _line_index[1], _line_index[2]
    if name == STDIN_NAME:
        assert _stdin_text is not None
        text = _stdin_text
    else:
        try:
            with open(name, "rb") as handle:
                data = handle.read(MAX_FILE_BYTES + 1)
        except OSError:
            return None
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        text = data.decode("utf-8", errors="replace")
    starts = array("q", [0])
    starts.extend(match.end() for match in _LINE_BREAK.finditer(text))
    if starts[-1] == len(text) and len(starts) > 1:
        starts.pop()  # a final line break does not start another line
    _line_index = (key, text, starts)
    return text, starts
