"""Write a file completely or not at all: temporary file in the same directory, fsync, rename.

Output files (``simulate --trace/--svg/--html``, ``render --output-dir``) must never be left
half-written, whatever stops us: an exception while producing the content, a full disk, Ctrl-C. The
recipe is the classic one:

1. create a temporary file next to the target (same directory, so the rename stays on one file system
   and is atomic on POSIX and, with :func:`os.replace`, on Windows);
2. write, flush and ``fsync`` it, so that the data is on disk before the name points at it;
3. give it the mode a plainly created file would have (``mkstemp`` makes 0600), or the mode of the file
   it replaces;
4. :func:`os.replace` it over the target and ``fsync`` the directory (best effort), so that the rename
   itself survives a crash.

On any exception, ``BaseException`` included (``KeyboardInterrupt``), the temporary file is removed and
the target is left as it was.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from typing import IO, Any

#: Temporary files are hidden and recognisable, so that a crash of the whole machine leaves an
#: obviously stale file rather than a plausible-looking output.
TEMP_PREFIX = "."
TEMP_SUFFIX = ".tmp"


def _default_mode(target: str) -> int:
    """The mode of the file being replaced, else what ``open(..., "w")`` would create under the umask."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        pass
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _fsync_directory(directory: str) -> None:
    # Not every platform or file system can open or sync a directory; the data is already safe.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def _replacing(target: str) -> Iterator[tuple[int, str]]:
    """A fresh temporary file next to ``target`` (descriptor and path); moved over ``target`` when the
    block ends normally, removed when it raises."""
    directory = os.path.dirname(os.path.abspath(target))
    base = os.path.basename(target)
    fd, temp = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{base}.", suffix=TEMP_SUFFIX, dir=directory)
    try:
        yield fd, temp
        os.chmod(temp, _default_mode(target))
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    _fsync_directory(directory)


@contextlib.contextmanager
def atomic_open_text(path: str | os.PathLike[str]) -> Iterator[IO[str]]:
    """``with atomic_open_text(path) as handle: ...``: the file appears at ``path`` (UTF-8, ``\\n`` line
    endings) only when the block ends without an exception."""
    with _replacing(os.fspath(path)) as (fd, _), _synced(os.fdopen(fd, "w", encoding="utf-8", newline="\n")) as handle:
        yield handle


@contextlib.contextmanager
def atomic_open_bytes(path: str | os.PathLike[str]) -> Iterator[IO[bytes]]:
    """Binary counterpart of :func:`atomic_open_text`."""
    with _replacing(os.fspath(path)) as (fd, _), _synced(os.fdopen(fd, "wb")) as handle:
        yield handle


@contextlib.contextmanager
def _synced(handle: IO[Any]) -> Iterator[IO[Any]]:
    """Close the handle in every case; flush and fsync it only when the block succeeded."""
    with handle:
        yield handle
        handle.flush()
        os.fsync(handle.fileno())


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_open_text(path) as handle:
        handle.write(text)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_open_bytes(path) as handle:
        handle.write(data)
