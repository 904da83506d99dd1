"""Property tests: invariants of the Job controller and its helpers over generated inputs."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobsetctl.fakecluster.apiserver import WatchEvent
from jobsetctl.fakecluster.controllers.job_failure import backoff_delay
from jobsetctl.fakecluster.controllers.job_pods import first_pending_indexes, format_indexes, parse_indexes
from jobsetctl.jobset import podwebhook
from tests.fakecluster.harness import Timeline, add_node, build_cluster, job, status_of, submit


@given(st.integers(min_value=1, max_value=200).flatmap(
    lambda n: st.tuples(st.just(n), st.sets(st.integers(min_value=0, max_value=n - 1)))))
def test_completed_indexes_round_trip(case: tuple[int, set[int]]) -> None:
    completions, indexes = case
    text = format_indexes(indexes)
    assert parse_indexes(text, completions) == indexes
    assert text == format_indexes(sorted(indexes, reverse=True))


@given(st.integers(min_value=0, max_value=50), st.integers(min_value=0, max_value=60),
       st.sets(st.integers(min_value=0, max_value=70)))
def test_first_pending_indexes_are_the_lowest_free_ones(count: int, completions: int, taken: set[int]) -> None:
    chosen = first_pending_indexes(count, completions, taken)
    free = [i for i in range(completions) if i not in taken]
    assert chosen == free[:count]


@given(st.integers(min_value=1, max_value=40))
def test_pod_failure_backoff_doubles_to_ten_minutes(failures: int) -> None:
    assert backoff_delay(failures, 10, 600) == min(10 * 2 ** (failures - 1), 600)


@given(st.integers(min_value=-(2**31), max_value=2**31 - 1))
def test_every_jobset_pod_is_labelled_with_its_priority(priority: int) -> None:
    pod = {"metadata": {"annotations": {"jobset.sigs.k8s.io/jobset-name": "js"}}, "spec": {"priority": priority}}
    podwebhook.default_pod(pod, _NoLookups())
    assert pod["metadata"]["labels"] == {"jobset.sigs.k8s.io/priority": str(priority)}


class _NoLookups:
    def pods_by_name_stem(self, namespace: str, stem: str) -> list[dict[str, Any]]:
        return []

    def node(self, name: str) -> dict[str, Any] | None:
        return None


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parallelism=st.integers(min_value=1, max_value=3), completions=st.integers(min_value=1, max_value=4),
       indexed=st.booleans(), backoff_limit=st.integers(min_value=0, max_value=4),
       fail_attempts=st.integers(min_value=0, max_value=3))
def test_job_ends_once_and_never_runs_more_than_parallelism(parallelism: int, completions: int, indexed: bool,
                                                             backoff_limit: int, fail_attempts: int) -> None:
    fake = build_cluster()
    add_node(fake, "node-a")
    peak = 0

    def watch(event: WatchEvent) -> None:
        nonlocal peak
        if event.key[1] == "Pod":
            running = [p for p in fake.api.list("", "Pod") if not p["metadata"].get("deletionTimestamp")
                       and p.get("status", {}).get("phase") not in ("Succeeded", "Failed")]
            peak = max(peak, len(running))

    fake.api.subscribe(watch)
    annotations = {"jobsetctl.dev/duration": "20s", "jobsetctl.dev/fail-after": "5s",
                   "jobsetctl.dev/fail-attempts": str(fail_attempts)}
    submit(fake, job(parallelism=parallelism, completions=completions, indexed=indexed,
                     backoffLimit=backoff_limit, annotations=annotations))
    fake.run(100_000)
    status = status_of(fake)
    terminal = [c["type"] for c in status["conditions"] if c["type"] in ("Complete", "Failed")]
    assert len(terminal) == 1
    assert peak <= parallelism
    assert status.get("active", 0) == 0 and status["terminating"] == 0
    pods = fake.api.list("", "Pod")
    created = [e for e in Timeline(fake).events(kinds={"Pod"}) if e[3] == "Created"]
    succeeded_pods = [p for p in pods if p["status"]["phase"] == "Succeeded"]
    # restartPolicy Never: every pod is counted exactly once, as succeeded or as failed (the ones the
    # Job deleted when it failed included); none keeps the tracking finalizer.
    assert len(created) == len(succeeded_pods) + status.get("failed", 0)
    assert all(not p["metadata"].get("finalizers") for p in pods)
    if terminal == ["Complete"]:
        assert status["succeeded"] == completions
        assert status.get("failed", 0) <= backoff_limit
    else:
        # Past the limit; pods still running when the Job failed were deleted and count as well.
        assert status.get("failed", 0) >= backoff_limit + 1
    job_events = [e for e in Timeline(fake).events(kinds={"Job"}) if e[3] in ("Completed", "Failed")]
    assert len(job_events) == 1


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**16), fail_attempts=st.integers(min_value=0, max_value=2))
def test_simulation_is_deterministic(seed: int, fail_attempts: int) -> None:
    def timeline() -> list[tuple[Any, ...]]:
        fake = build_cluster(seed=seed)
        add_node(fake, "node-a")
        submit(fake, job(parallelism=2, completions=3, indexed=True, annotations={
            "jobsetctl.dev/duration": "20s", "jobsetctl.dev/fail-after": "5s",
            "jobsetctl.dev/fail-attempts": str(fail_attempts)}))
        fake.run(10_000)
        return [e.as_dict() for e in fake.recorder.events]  # type: ignore[misc]

    assert timeline() == timeline()
