"""The pre-commit hook as shipped: run each hook's entry from .pre-commit-hooks.yaml on sample files, and the
README's configuration. ``test_precommit_try_repo.py`` runs the real pre-commit on a whole repository."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import REPO


def hooks() -> list[dict[str, object]]:
    data = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert isinstance(data, list)
    return data


def run_entry(entry: str, files: list[Path]) -> subprocess.CompletedProcess[str]:
    argv = shlex.split(entry)
    # The entry names the console script; run it with this interpreter's environment.
    bin_dir = Path(sys.executable).parent
    argv[0] = str(bin_dir / argv[0])
    return subprocess.run([*argv, *map(str, files)], capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"})


def hook_named(hook_id: str) -> dict[str, object]:
    [found] = [h for h in hooks() if h["id"] == hook_id]
    return found


def test_hook_definitions() -> None:
    assert [h["id"] for h in hooks()] == ["jobsetctl-validate", "jobsetctl-fix"]
    for each in hooks():
        assert each["language"] == "python"
        assert each["require_serial"] is True
    assert hook_named("jobsetctl-validate")["entry"] == "jobsetctl validate --pre-commit"


def _readme_hook_config() -> dict[str, Any]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("### pre-commit", 1)[1]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    config = yaml.safe_load(block)
    assert isinstance(config, dict)
    return config


def test_readme_configuration_documents_files_and_exclude() -> None:
    [repo] = _readme_hook_config()["repos"]
    [hook] = [h for h in repo["hooks"] if h["id"] == "jobsetctl-validate"]
    assert set(hook) >= {"files", "exclude"}
    re.compile(hook["files"])
    re.compile(hook["exclude"])


def test_readme_rev_is_a_commit_with_this_hook_definition() -> None:
    """Until releases are tagged the README pins a commit; it must exist and carry the hook as shipped
    (a rebase or a squash changes commit ids: then point it at the new commit)."""
    [repo] = _readme_hook_config()["repos"]
    rev = str(repo["rev"])
    assert re.fullmatch(r"[0-9a-f]{40}", rev), f"rev {rev!r} is not a full commit id"
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    shallow = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=REPO, capture_output=True,
                             text=True, check=False).stdout.strip()
    shown = subprocess.run(["git", "show", f"{rev}:.pre-commit-hooks.yaml"], cwd=REPO, capture_output=True,
                           text=True, check=False)
    if shown.returncode != 0 and shallow == "true":
        pytest.skip("a shallow clone: the commit may be older than its history")
    assert shown.returncode == 0, f"README rev {rev} is no commit of this repository: {shown.stderr}"
    assert yaml.safe_load(shown.stdout) == hooks(), f"the hook definition at {rev} is not the one shipped"


def test_hook_passes_a_valid_file_and_fails_a_broken_one(tmp_path: Path) -> None:
    hook = hook_named("jobsetctl-validate")
    good = tmp_path / "cm.yaml"
    good.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    bad = tmp_path / "broken.yaml"
    bad.write_text("a: [\n")
    ok = run_entry(str(hook["entry"]), [good])
    assert ok.returncode == 0, ok.stdout + ok.stderr
    failed = run_entry(str(hook["entry"]), [good, bad])
    assert failed.returncode == 1
    assert "yaml-syntax" in failed.stdout
    assert "Traceback" not in failed.stderr


def test_fix_hook_rewrites_and_fails_once_then_passes(tmp_path: Path) -> None:
    hook = hook_named("jobsetctl-fix")
    manifest = tmp_path / "jobset.yaml"
    manifest.write_text(
        "# workers\n"
        "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: js}\nspec:\n  replicatedJobs:\n"
        "  - name: w\n    template:\n      spec:\n        parallelism: 2   # two at once\n        template:\n"
        "          spec:\n            restartPolicy: Never\n            containers: [{name: w, image: busybox}]\n"
    )
    first = run_entry(str(hook["entry"]), [manifest])
    assert first.returncode == 1, first.stdout + first.stderr  # pre-commit: files were modified
    assert "completions: 2\n" in manifest.read_text()
    assert "parallelism: 2   # two at once\n" in manifest.read_text()
    second = run_entry(str(hook["entry"]), [manifest])
    assert second.returncode == 0, second.stdout + second.stderr
    assert "Traceback" not in first.stderr + second.stderr
