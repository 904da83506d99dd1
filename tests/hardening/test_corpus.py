"""The worst inputs found by the hardening campaign (issue #6), kept in tests/corpus/ so they stay fixed.

Each file says on top what broke (or what it guards) and, on a ``# expect:`` line, the exit status and the
diagnostics (``rule@line:column``, order-free) that ``jobsetctl validate`` must give it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hardening.harness import CORPUS, assert_sane, run_subprocess, validate_cli

CASES = sorted(p for p in CORPUS.iterdir() if p.is_file())


def expectation(path: Path) -> tuple[int, list[str]]:
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("# expect: "):
            status, *diagnostics = line.removeprefix("# expect: ").split()
            return int(status), sorted(diagnostics)
    raise AssertionError(f"{path.name}: no '# expect:' line")


def test_the_corpus_is_there_and_every_case_says_what_it_guards() -> None:
    assert len(CASES) >= 10
    for path in CASES:
        first = path.read_text(encoding="utf-8", errors="replace").splitlines()[0]
        assert first.startswith(("# Broke:", "# Guards:")), path.name
        expectation(path)


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_corpus_case(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, expected = expectation(path)
    outcome = validate_cli([str(path)], capsys)
    assert_sane(outcome)
    assert outcome.status == status, (outcome.status, outcome.stderr)
    assert sorted(f"{d['rule']}@{d['line']}:{d['column']}" for d in outcome.diagnostics) == expected


def test_the_whole_corpus_through_the_entry_point() -> None:
    """All at once, in text output, in a subprocess: no traceback, no crash, the worst status wins."""
    outcome = run_subprocess(["validate", str(CORPUS)], timeout=300)
    assert_sane(outcome)
    assert outcome.status == max(expectation(p)[0] for p in CASES)
    assert outcome.stderr == ""
