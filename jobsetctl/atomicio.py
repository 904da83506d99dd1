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
the target is left as it was. A target that is not a regular file (a device, a FIFO) is written to
directly: no rename can stand in for it. A symbolic link keeps pointing at its file, which is replaced.
"""

from __future__ import annotations

import contextlib
import os
import secrets
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


def _create_temp(directory: str, base: str) -> tuple[int, str]:
    """Create and open a new hidden temporary file next to the target (``mkstemp``'s recipe: a random
    name, ``O_EXCL``, mode 0600). Unlike ``mkstemp``, a ``KeyboardInterrupt`` that lands between the file's
    creation and the return of its descriptor cannot leave it behind: the name is known before the file
    exists, so the handler removes it (after ``FileExistsError`` nothing was created and nothing is removed)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(tempfile.TMP_MAX):
        temp = os.path.join(directory, f"{TEMP_PREFIX}{base}.{secrets.token_hex(4)}{TEMP_SUFFIX}")
        try:
            return os.open(temp, flags, 0o600), temp
        except FileExistsError:
            continue
        except OSError:
            raise  # refused: nothing was created
        except BaseException:
            # Interrupted once the system call returned: the file may exist, and then it is ours.
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
    raise FileExistsError(f"no usable temporary name next to {os.path.join(directory, base)}")


@contextlib.contextmanager
def _replacing(target: str) -> Iterator[tuple[int, str]]:
    """A fresh temporary file next to ``target`` (descriptor and path); moved over ``target`` when the
    block ends normally, removed when it raises."""
    directory = os.path.dirname(os.path.abspath(target))
    base = os.path.basename(target)
    fd, temp = _create_temp(directory, base)
    try:
        yield fd, temp
        os.chmod(temp, _default_mode(target))
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    _fsync_directory(directory)


def _replaceable(path: str) -> str | None:
    """The file to replace for ``path``: itself, or the file a symbolic link leads to (the link then
    shows the new content rather than being replaced by a copy). None when ``path`` exists and is not a
    regular file: a device (``--trace /dev/null``, ``/dev/stdout``), a FIFO or the pipe of a shell's
    process substitution (``--svg >(gzip > x.svgz)``). Renaming a file over those would replace the
    device itself (as root, ``/dev/null`` would become a plain file), so they are written to directly."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return path  # not there yet (or a dangling link: replaced like a missing file)
    if not stat.S_ISREG(mode):
        return None
    return os.path.realpath(path) if os.path.islink(path) else path


@contextlib.contextmanager
def atomic_open_text(path: str | os.PathLike[str]) -> Iterator[IO[str]]:
    """``with atomic_open_text(path) as handle: ...``: the file appears at ``path`` (UTF-8, ``\\n`` line
    endings) only when the block ends without an exception."""
    target = _replaceable(os.fspath(path))
    if target is None:
        with open(path, "w", encoding="utf-8", newline="\n") as stream:
            yield stream
        return
    with _replacing(target) as (fd, _), _synced(os.fdopen(fd, "w", encoding="utf-8", newline="\n")) as handle:
        yield handle


@contextlib.contextmanager
def atomic_open_bytes(path: str | os.PathLike[str]) -> Iterator[IO[bytes]]:
    """Binary counterpart of :func:`atomic_open_text`."""
    target = _replaceable(os.fspath(path))
    if target is None:
        with open(path, "wb") as stream:
            yield stream
        return
    with _replacing(target) as (fd, _), _synced(os.fdopen(fd, "wb")) as handle:
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
