"""Upstream's preemption tests with CompositePodGroups, translated entry by entry and run as Scenarios through
``simulate`` on Kubernetes 1.37 with CompositePodGroup on (issue 11): ``TestCompositePodGroupPreemption``
(test/integration/scheduler/preemption/podgrouppreemption_test.go, commit 00a3e521) and the three tests of
preemption/podgroup/multitier_gang_preemption_test.go (commit 6eb7e283). Upstream's expectations (scheduled,
preempted, pending) are asserted, then our exact events (:mod:`tests.scheduler.upstream_cpg_events`).

Left out of TestCompositePodGroupPreemption (``COMPOSITE_LEFT_OUT``): a custom Score plugin, two
PodDisruptionBudget entries, host ports, a custom Reserve plugin. Every multitier entry is translated.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scheduler.upstream import Case
from tests.scheduler.upstream_cpg_cases import COMPOSITE, COMPOSITE_LEFT_OUT, MULTITIER
from tests.scheduler.upstream_cpg_events import COMPOSITE_EVENTS, MULTITIER_EVENTS
from tests.scheduler.upstream_pgp_cases import Expected


def _run(tmp_path: Path, build: object, expected: Expected) -> list[str]:
    case = Case()
    case.gates.update({"CompositePodGroup": True, **expected.gates})
    build(case)  # type: ignore[operator]
    run = case.run(tmp_path)
    by_podgroup = run.kube_preempted_by().count("podgroup") if expected.by_podgroup else 0
    expected.check(run.final("Running"), run.preempted(), run.final("Pending"), by_podgroup)
    assert not run.outcome.failed
    return run.events()


@pytest.mark.parametrize("entry", list(COMPOSITE))
def test_composite_pod_group_preemption(tmp_path: Path, entry: str) -> None:
    """TestCompositePodGroupPreemption: one entry (test id = upstream's case name)."""
    build, expected = COMPOSITE[entry]
    assert _run(tmp_path, build, expected) == COMPOSITE_EVENTS[entry]


@pytest.mark.parametrize("entry", list(MULTITIER))
def test_multitier_gang_preemption(tmp_path: Path, entry: str) -> None:
    """TestMultiTierCompositePodGroupPreemption_NestedDisruptionModes, TestPartialGangPreemption_PodGroupAndCompositePodGroup,
    TestCompositePodGroupPreemption_CyclicReferencesAndEdgeCases: one entry."""
    build, expected = MULTITIER[entry]
    assert _run(tmp_path, build, expected) == MULTITIER_EVENTS[entry]


def test_every_composite_entry_is_translated_or_left_out_with_a_reason() -> None:
    assert len(COMPOSITE) + len(COMPOSITE_LEFT_OUT) == 22  # TestCompositePodGroupPreemption at 00a3e521
    assert set(COMPOSITE_EVENTS) == set(COMPOSITE) and set(MULTITIER_EVENTS) == set(MULTITIER)
