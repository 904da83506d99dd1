"""The pre-commit hook as shipped: run each hook's entry from .pre-commit-hooks.yaml on sample files."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

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


def test_hook_definitions() -> None:
    [hook] = hooks()
    assert hook["id"] == "jobsetctl-validate"
    assert hook["language"] == "python"
    assert hook["require_serial"] is True


def test_hook_passes_a_valid_file_and_fails_a_broken_one(tmp_path: Path) -> None:
    [hook] = hooks()
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
