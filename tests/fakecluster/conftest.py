"""The ``make_cluster`` fixture: fake clusters built by the real :class:`FakeCluster` constructor; simulated
ones check the invariants at every step and, when the test ends, the end-of-run ones."""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any

import pytest

from jobsetctl.fakecluster.cluster import FakeCluster
from tests.fakecluster.harness import ClusterFactory, build_cluster

_FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    if report.when == "call":
        item.stash[_FAILED] = report.failed
    return report


@pytest.fixture
def make_cluster(request: pytest.FixtureRequest) -> Iterator[ClusterFactory]:
    built: list[FakeCluster] = []

    def make(version: str = "1.37", gates: str = "", *, simulate: bool = True, seed: int = 0,
             create_pods: bool = True) -> FakeCluster:
        fake = build_cluster(version, gates, simulate=simulate, seed=seed, create_pods=create_pods)
        built.append(fake)
        return fake

    yield make
    if request.node.stash.get(_FAILED, False):
        return  # the test's own failure says what went wrong
    for fake in built:
        if fake.invariants is not None:
            fake.invariants.finish()
