"""The ``make_sim`` fixture: simulated clusters built by the real :class:`FakeCluster` constructor, with the
end-of-run invariants (the last instant's gang check, Job accounting) checked when the test ends."""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any

import pytest

from tests.scheduler.harness import Sim, SimFactory


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    if report.when == "call":
        item.stash[_FAILED] = report.failed
    return report


_FAILED = pytest.StashKey[bool]()


@pytest.fixture
def make_sim(request: pytest.FixtureRequest) -> Iterator[SimFactory]:
    built: list[Sim] = []

    def make(version: str = "1.37", gates: str = "", *, scheduler: dict[str, Any] | None = None) -> Sim:
        sim = Sim(version, gates, scheduler=scheduler)
        built.append(sim)
        return sim

    yield make
    if request.node.stash.get(_FAILED, False):
        return  # the test's own failure says what went wrong; a second report would only repeat it
    for sim in built:
        sim.checker.finish()
