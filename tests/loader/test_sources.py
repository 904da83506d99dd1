"""Finding and reading input files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jobsetctl.loader.sources import Source, discover, read_text


def test_directories_are_walked_for_manifest_suffixes_in_order(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "z.yml").write_text("a: 1\n")
    (tmp_path / "a.yaml").write_text("a: 1\n")
    (tmp_path / "c.json").write_text("{}")
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "x.yaml").write_text("a: 1\n")
    sources, problems = discover([str(tmp_path)])
    assert not problems
    assert [os.path.relpath(s.name, tmp_path) for s in sources] == ["a.yaml", "c.json", os.path.join("b", "z.yml")]


def test_a_named_file_is_read_whatever_its_suffix(tmp_path: Path) -> None:
    path = tmp_path / "manifest.txt"
    path.write_text("a: 1\n")
    sources, problems = discover([str(path)])
    assert [s.name for s in sources] == [str(path)] and not problems


def test_missing_path_and_broken_link(tmp_path: Path) -> None:
    (tmp_path / "dangling.yaml").symlink_to(tmp_path / "gone.yaml")
    sources, problems = discover([str(tmp_path / "missing.yaml"), str(tmp_path / "dangling.yaml")])
    assert sources == []
    assert [p.message.split(": ", 1)[1] for p in problems] == ["no such file or directory", "broken symbolic link"]


def test_symlink_loops_are_reported_not_followed(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.yaml").write_text("a: 1\n")
    (tmp_path / "sub" / "loop").symlink_to(tmp_path)
    sources, problems = discover([str(tmp_path)])
    assert len(sources) == 1
    assert len(problems) == 1 and "directory loop" in problems[0].message


def test_the_same_file_twice_is_read_once(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text("a: 1\n")
    (tmp_path / "link.yaml").symlink_to(path)
    sources, _ = discover([str(path), str(tmp_path)])
    assert len(sources) == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read anything")
def test_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "secret.yaml"
    path.write_text("a: 1\n")
    path.chmod(0)
    text, problem, _ = read_text(Source(str(path), str(path)))
    assert text is None and problem is not None and "permission denied" in problem.message


def test_non_utf8_reports_the_byte_position(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"a: 1\nb: caf\xe9\n")
    text, problem, (line, column) = read_text(Source(str(path), str(path)))
    assert text is None and problem is not None
    assert problem.code == "input-encoding"
    assert (line + 1, column + 1) == (2, 7)


def test_binary_file_is_named_as_such(tmp_path: Path) -> None:
    path = tmp_path / "blob.yaml"
    path.write_bytes(b"\x00\x01\x02\xff\xfe")
    _, problem, _ = read_text(Source(str(path), str(path)))
    assert problem is not None and problem.message.startswith("binary file")


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.yaml"
    path.write_bytes(b"\xef\xbb\xbfa: 1\n")
    text, problem, _ = read_text(Source(str(path), str(path)))
    assert problem is None and text == "a: 1\n"
