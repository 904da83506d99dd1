"""The Job controller skips the sync of a Job that its last sync left at a fixed point and that nothing has
touched since (``JobSync.settled``, ``JobController._settled``): the re-syncs its own pod creates and status
write ask for, and those after pod writes that change nothing a sync reads (``sync_inputs``). The skip must change nothing: these runs compare a cluster that skips with one that runs
every sync (``skipSettledSyncs: false``), event for event and object for object, over generated Jobs;
and a third run checks that every sync skipped, run anyway, writes nothing (``verifySettledSyncs``, on
whenever the invariants are checked, as in the whole test suite)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobsetctl.fakecluster.cluster import ClusterOptions, FakeCluster
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import KubeVersion
from tests.fakecluster.harness import add_node, job, submit, update_spec


def _cluster(skip: bool, verify: bool, version: str = "1.37") -> FakeCluster:
    kube = KubeVersion.parse(version)
    extra: dict[str, Any] = {"check_invariants": True,
                             "job-controller": {"skipSettledSyncs": skip, "verifySettledSyncs": verify}}
    return FakeCluster(ClusterOptions(kube, parse_feature_gates("", kube), simulate=True, extra=extra))


def _run(skip: bool, spec: dict[str, Any], annotations: dict[str, str], resume_at: float | None,
         version: str, *, verify: bool = False) -> tuple[list[Any], list[Any], list[Any], int]:
    fake = _cluster(skip, verify, version)
    add_node(fake, "node-a")
    add_node(fake, "node-b")
    stored = submit(fake, job(annotations=annotations, **spec))
    if resume_at is not None:
        fake.clock.call_at(resume_at, lambda: update_spec(fake, stored, suspend=False))
    fake.run(20_000)
    events = [e.as_dict() for e in fake.recorder.events]
    kube_events = [(e.time, e.kind, e.name, e.type, e.reason, e.message, e.count) for e in fake.recorder.kube_events]
    objects = sorted(repr(obj) for obj in fake.api.all_objects())
    controller = fake.components["job-controller"]
    return events, kube_events, objects, int(controller.skipped_syncs)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    parallelism=st.integers(min_value=1, max_value=4), completions=st.none() | st.integers(min_value=1, max_value=6),
    indexed=st.booleans(), backoff_limit=st.integers(min_value=0, max_value=3),
    fail_attempts=st.integers(min_value=0, max_value=3), restart=st.sampled_from(["Never", "OnFailure"]),
    deadline=st.none() | st.integers(min_value=5, max_value=200),
    replacement=st.sampled_from([None, "Failed", "TerminatingOrFailed"]),
    suspended_until=st.none() | st.integers(min_value=0, max_value=60),
    per_index=st.booleans(), version=st.sampled_from(["1.35", "1.36", "1.37"]),
)
def test_skipping_settled_syncs_changes_nothing(parallelism: int, completions: int | None, indexed: bool,
                                                backoff_limit: int, fail_attempts: int, restart: str,
                                                deadline: int | None, replacement: str | None,
                                                suspended_until: int | None, per_index: bool, version: str) -> None:
    if indexed and completions is None:
        completions = parallelism
    spec: dict[str, Any] = {"parallelism": parallelism, "completions": completions, "indexed": indexed,
                            "backoffLimit": backoff_limit, "restart": restart}
    if deadline is not None:
        spec["activeDeadlineSeconds"] = deadline
    if replacement is not None:
        spec["podReplacementPolicy"] = replacement
    if per_index and indexed and restart == "Never":
        spec["backoffLimitPerIndex"] = 1
        spec["podReplacementPolicy"] = "Failed"
    if suspended_until is not None:
        spec["suspend"] = True
    annotations = {"jobsetctl.dev/duration": "20s", "jobsetctl.dev/fail-after": "5s",
                   "jobsetctl.dev/fail-attempts": str(fail_attempts)}
    skipping = _run(True, spec, annotations, suspended_until, version)
    every = _run(False, spec, annotations, suspended_until, version)
    assert skipping[:3] == every[:3]
    assert every[3] == 0
    # Each sync it skips, run anyway, writes nothing (the controller raises otherwise).
    verified = _run(True, spec, annotations, suspended_until, version, verify=True)
    assert verified == skipping


def test_the_resyncs_a_job_asks_for_itself_are_skipped() -> None:
    """An Indexed Job of four pods that run and succeed: the syncs after its pod creates, after the
    binding of its pods (nothing a sync reads of a pod changes) and after its ready count are skipped
    (they would write nothing), the outcome as without skipping."""
    annotations = {"jobsetctl.dev/duration": "20s"}
    spec = {"parallelism": 4, "completions": 4, "indexed": True}
    skipping = _run(True, spec, annotations, None, "1.37")
    every = _run(False, spec, annotations, None, "1.37")
    assert skipping[:3] == every[:3]
    assert skipping[3] == 3
    assert [e["event"] for e in skipping[0] if e["kind"] == "Job"] == ["Created", "Completed"]
