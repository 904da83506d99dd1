"""The upstream conformance data stays reachable (issue #10): ``scripts/fetch-upstream`` fetches exactly the
files the tests read, at the pinned commits, into a git-ignored directory; ``JOBSETCTL_UPSTREAM`` points the
tests elsewhere."""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.helpers import REPO, UPSTREAM, requires_upstream

SCRIPT = REPO / "scripts" / "fetch-upstream"


def _script() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("fetch_upstream", str(SCRIPT))
    spec = importlib.util.spec_from_loader("fetch_upstream", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def blob_id(data: bytes) -> str:
    """What ``git hash-object`` prints for a file with these bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@requires_upstream
def test_the_manifest_lists_exactly_the_data_the_tests_read() -> None:
    listed = {destination: blob for destination, _, _, blob in _script().manifest()}
    present = {p.relative_to(UPSTREAM).as_posix(): blob_id(p.read_bytes())
               for p in UPSTREAM.rglob("*") if p.is_file() and p.name != "README.md"}
    assert present == listed


def test_the_manifest_names_pinned_repositories_only() -> None:
    script = _script()
    rows = script.manifest()
    assert len(rows) > 100
    assert {repository for _, repository, _, _ in rows} == set(script.REPOSITORIES)
    shared_readme = REPO.parent / "shared" / "upstream" / "README.md"
    if shared_readme.is_file():  # the pins agree with the data's own README
        text = shared_readme.read_text(encoding="utf-8")
        for commit in script.REPOSITORIES.values():
            assert f"commit {commit[:8]}" in text


def test_the_data_directory_is_ignored_by_git() -> None:
    assert ".upstream/" in (REPO / ".gitignore").read_text(encoding="utf-8").splitlines()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_fetch_checks_out_the_listed_files_at_the_pinned_commit(tmp_path: Path) -> None:
    """The script's mechanics on a local repository standing in for GitHub (--from): fetch the pinned commit
    only, check out the listed paths sparsely, check each blob id, and leave the target complete or absent."""
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=origin, env=env, capture_output=True, text=True, check=True).stdout

    origin = tmp_path / "origin"
    (origin / "config" / "crd").mkdir(parents=True)
    (origin / "examples").mkdir()
    (origin / "config" / "crd" / "a.yaml").write_text("kind: CustomResourceDefinition\n")
    (origin / "examples" / "b.yaml").write_text("kind: JobSet\n")
    (origin / "examples" / "unlisted.yaml").write_text("kind: Other\n")
    git("init", "-q")
    git("config", "uploadpack.allowFilter", "true")
    git("config", "uploadpack.allowAnySHA1InWant", "true")
    git("add", "-A")
    git("commit", "-q", "-m", "pinned")
    pinned = git("rev-parse", "HEAD").strip()
    (origin / "examples" / "b.yaml").write_text("kind: JobSet\nchanged: later\n")
    git("commit", "-q", "-am", "a later commit the pin must not see")

    script = _script()
    script.REPOSITORIES = {"acme/data": pinned}
    manifest = tmp_path / "files.tsv"
    rows = [("acme/crd/a.yaml", "config/crd/a.yaml", "kind: CustomResourceDefinition\n"),
            ("acme/examples/b.yaml", "examples/b.yaml", "kind: JobSet\n")]
    manifest.write_text("# test\n" + "".join(
        f"{dest}\tacme/data\t{path}\t{blob_id(text.encode())}\n" for dest, path, text in rows))
    script.MANIFEST = manifest
    target = tmp_path / "data"
    assert script.main([str(target), "--from", f"acme/data=file://{origin}"]) == 0
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()) == [
        "acme/crd/a.yaml", "acme/examples/b.yaml"]
    assert (target / "acme" / "examples" / "b.yaml").read_text() == "kind: JobSet\n"

    manifest.write_text(manifest.read_text().replace(blob_id(b"kind: JobSet\n"), "0" * 40))
    elsewhere = tmp_path / "elsewhere"
    with pytest.raises(SystemExit, match=r"examples/b\.yaml is [0-9a-f]{40}, expected 0{40}"):
        script.main([str(elsewhere), "--from", f"acme/data=file://{origin}"])
    assert not elsewhere.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "files.tsv", "origin"]  # no staging left


def test_the_tests_honour_jobsetctl_upstream(tmp_path: Path) -> None:
    code = "from tests.helpers import UPSTREAM; print(UPSTREAM)"
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True,
                          env={**os.environ, "JOBSETCTL_UPSTREAM": str(tmp_path)})
    assert done.stdout.strip() == str(tmp_path.resolve())
