"""The worst scenarios of the simulate fuzzing (issue #6), kept in tests/corpus/scenario-*.yaml so they stay
fixed: each runs through ``jobsetctl simulate`` (the package function the CLI calls) with every invariant
checked at every step, ends within its ``until``, and gives byte-identical JSON twice per seed.

Each file says on top what broke or what it guards (``# Broke:`` / ``# Guards:``), the validate expectation
tests/hardening/test_corpus.py holds every corpus file to (``# expect:``), the seeds to run it with
(``# seeds: 0 3``) and, on ``# expect-event: KIND EVENT [REASON]`` lines, events the run must contain.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hardening.harness import CORPUS
from tests.hardening.scenarios import case_from_file, check_case

CASES = sorted(CORPUS.glob("scenario-*.yaml"))


def header(path: Path, key: str) -> list[str]:
    prefix = f"# {key}: "
    return [line.removeprefix(prefix) for line in path.read_text(encoding="utf-8").splitlines()
            if line.startswith(prefix)]


def test_the_scenario_corpus_is_there() -> None:
    assert len(CASES) >= 3
    for path in CASES:
        assert header(path, "seeds"), f"{path.name}: no '# seeds:' line"


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_corpus_scenario(path: Path) -> None:
    case = case_from_file(path)
    expected = [tuple(line.split()) for line in header(path, "expect-event")]
    for seed in (int(s) for s in header(path, "seeds")[0].split()):
        run = check_case(path, case, seed)
        events = {(e["kind"], e["event"], e.get("reason")) for e in json.loads(run.json)["events"]}
        for kind, event, *reason in expected:
            assert any(e[:2] == (kind, event) and (not reason or e[2] == reason[0]) for e in events), \
                (path.name, seed, kind, event, reason)
