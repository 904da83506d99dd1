"""Atomic writes: all or nothing, whatever interrupts the write."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from jobsetctl.atomicio import atomic_open_bytes, atomic_open_text, atomic_write_bytes, atomic_write_text


def test_writes_new_file_with_umask_mode(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    atomic_write_text(target, "héllo\n")
    assert target.read_bytes() == "héllo\n".encode()
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_replaces_existing_file_and_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "out.svg"
    target.write_text("old")
    target.chmod(0o640)
    atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


class Boom(Exception):
    pass


@pytest.mark.parametrize("failure", [Boom, KeyboardInterrupt])
def test_failure_mid_write_leaves_target_unchanged_and_no_temp(tmp_path: Path, failure: type[BaseException]) -> None:
    target = tmp_path / "trace.json"
    target.write_text("previous complete content")
    with pytest.raises(failure), atomic_open_text(target) as handle:
        handle.write("half of the new ")
        handle.flush()
        # The partial data exists only in a hidden temporary file next to the target.
        temps = [p for p in tmp_path.iterdir() if p.name != "trace.json"]
        assert len(temps) == 1 and temps[0].name.startswith(".trace.json.") and temps[0].name.endswith(".tmp")
        raise failure()
    assert target.read_text() == "previous complete content"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trace.json"]


def test_failure_before_first_write_creates_nothing(tmp_path: Path) -> None:
    target = tmp_path / "picture.svg"
    with pytest.raises(Boom), atomic_open_bytes(target):
        raise Boom()
    assert list(tmp_path.iterdir()) == []


def test_missing_directory_raises_without_leaving_anything(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        atomic_write_text(tmp_path / "missing" / "out.json", "x")
    assert list(tmp_path.iterdir()) == []
