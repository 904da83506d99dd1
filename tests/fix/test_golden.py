"""Golden tests per fix and per migration (issue #15): inputs with comments, odd quoting, flow maps, anchors and
several documents; the output is compared byte for byte with ``<case>.out.yaml``, then:

* idempotence: the command run again changes nothing;
* the output passes ``validate`` for the target release (Kueue's kinds included: built in since issue #14);
* every finding of a fixed rule is gone.

The first line of a case names the command: ``# jobsetctl: fix`` or ``# jobsetctl: migrate --to TARGET``
(``--from-version`` is the release the input validates on). ``JOBSETCTL_UPDATE_GOLDEN=1`` rewrites the goldens.
"""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import shutil
from pathlib import Path

import pytest

from jobsetctl.cli.app import run
from tests.helpers import validate_files

CASES = Path(__file__).parent / "cases"
UPDATE = os.environ.get("JOBSETCTL_UPDATE_GOLDEN") == "1"
TARGET_VERSION = {"kubernetes-1.36": "1.36", "kubernetes-1.37": "1.37", "trainer-v2": "1.37"}


def header(case: Path) -> list[str]:
    first = case.read_text().split("\n", 1)[0]
    assert first.startswith("# jobsetctl: "), case
    return shlex.split(first[len("# jobsetctl: "):])


def command(words: list[str], path: Path, *extra: str) -> tuple[int, str, str]:
    argv = [w for w in words if w not in ("--no-validate",)]
    if "--from-version" in argv:
        at = argv.index("--from-version")
        del argv[at:at + 2]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = run([*argv, *extra, str(path)])
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("case", sorted(CASES.glob("*.in.yaml")), ids=lambda p: p.name.removesuffix(".in.yaml"))
def test_golden(case: Path, tmp_path: Path) -> None:
    words = header(case)
    work = tmp_path / "input.yaml"
    shutil.copyfile(case, work)
    status, _, err = command(words, work, "--write")
    assert status == 0, err
    assert "Traceback" not in err
    golden = case.with_name(case.name.replace(".in.yaml", ".out.yaml"))
    if UPDATE:
        golden.write_text(work.read_text())
    assert work.read_text() == golden.read_text(), err
    # idempotence: nothing left to change, --check agrees
    again = work.read_text()
    status, diff, _ = command(words, work, "--check")
    assert (status, diff) == (0, "")
    assert work.read_text() == again
    if "--no-validate" in words:
        return
    version = TARGET_VERSION.get(words[words.index("--to") + 1], "1.37") if "--to" in words else "1.37"
    # As the validate command runs: the cluster it cannot see may hold what a reference names (a Kueue
    # LocalQueue of a queued job, issue #14).
    diagnostics = validate_files(tmp_path, {}, paths=[str(work)], version=version, unseen_cluster=True)
    # An error fix said it left alone stays (fix-nothing-safe: a child Job the API server refuses is a
    # consequence error since issue #13, and which restartPolicy is meant is the user's call).
    left = {line.split("[", 1)[1].split("]", 1)[0] for line in err.splitlines() if ": not fixed [" in line}
    errors = [(d.line, d.rule, d.message) for d in diagnostics if d.severity == "error" and d.rule not in left]
    assert errors == []
    fixed_rules = {line.split("[", 1)[1].split("]", 1)[0] for line in err.splitlines() if ": fixed [" in line}
    assert not [d for d in diagnostics if d.rule in fixed_rules]


@pytest.mark.parametrize("case", sorted(CASES.glob("*.in.yaml")), ids=lambda p: p.name.removesuffix(".in.yaml"))
def test_input_is_what_the_case_says(case: Path, tmp_path: Path) -> None:
    """A migration input validates on its source release (so the test starts from a real old manifest);
    a fix input has at least one finding."""
    words = header(case)
    if "--from-version" in words:
        version = words[words.index("--from-version") + 1]
        diagnostics = validate_files(tmp_path, {}, paths=[str(case)], version=version, unseen_cluster=True)
        assert [d for d in diagnostics if d.severity == "error"] == []
    if words[0] == "fix":
        assert validate_files(tmp_path, {}, paths=[str(case)])
