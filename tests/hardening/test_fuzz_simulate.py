"""Fuzzing ``simulate`` (issue #6): random scenarios through the real pipeline, with the suite's fixed
hypothesis budget (tests/conftest.py); ``bench/fuzz_simulate.py`` runs the same properties for longer.

For any generated Scenario (tests/hardening/scenarios.py: node pools, topologies, gangs, priorities,
dependsOn chains, failure and success policies, TrainJobs, faults and operator actions at random times,
on Kubernetes 1.35, 1.36 or 1.37) and any seed, ``jobsetctl simulate -o json`` (the package function the
CLI calls):

* raises nothing — in particular no :class:`~jobsetctl.fakecluster.invariants.InvariantViolation`: the
  invariant checker (on for the whole suite) holds all six rules at every step: no node over-committed,
  gangs all-or-nothing at bind time, preemption only of lower priority, no pod on a node whose taints it
  does not tolerate, no dependsOn stage before its dependency is met, every pod ends in a state its Job
  accounts for;
* terminates within the Scenario's ``until`` bound, with a documented stop reason, having executed
  invariant checks;
* gives byte-identical JSON when run twice with the same seed.
"""

from __future__ import annotations

import tempfile

from hypothesis import given
from hypothesis import strategies as st

from tests.hardening.scenarios import Case, check_case, scenarios, write_case


@given(case=scenarios(), seed=st.integers(0, 2**31 - 1), version_option=st.booleans())
def test_random_scenarios_keep_every_invariant_end_and_repeat(case: Case, seed: int, version_option: bool) -> None:
    """``version_option``: the release from ``--kubernetes-version`` instead of the Scenario's field."""
    with tempfile.TemporaryDirectory() as directory:
        path = write_case(directory, case)
        check_case(path, case, seed, version_option=version_option)
