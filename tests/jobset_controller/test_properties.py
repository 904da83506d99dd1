"""Property tests: rendering is deterministic and idempotent; dependsOn never creates a stage before
its dependencies are met (jobset.md §3.1, §4.4)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from jobsetctl.jobset import api, render
from tests.jobset_controller.harness import (
    get_jobset,
    job_names,
    jobset,
    make_cluster,
    rjob,
    set_ready,
    settle,
    submit,
    succeed,
)

NAMES = ("alpha", "beta", "gamma", "delta")


@st.composite
def jobsets(draw: st.DrawFn, *, with_depends_on: bool) -> dict[str, Any]:
    count = draw(st.integers(1, len(NAMES)))
    rjobs = []
    for index in range(count):
        depends: list[dict[str, str]] | None = None
        if with_depends_on and index > 0 and draw(st.booleans()):
            targets = draw(st.lists(st.sampled_from(NAMES[:index]), min_size=1, max_size=2, unique=True))
            depends = [{"name": t, "status": draw(st.sampled_from(["Ready", "Complete"]))} for t in targets]
        rjobs.append(rjob(
            NAMES[index],
            draw(st.integers(0, 3)),
            completions=1,  # the coordinator needs it set
            group=draw(st.sampled_from(["x", "y"])),
            depends_on=depends,
            pod_metadata={"labels": {"app": "p"}} if draw(st.booleans()) else None,
        ))
    spec: dict[str, Any] = {}
    if draw(st.booleans()):
        spec["suspend"] = True
    if draw(st.booleans()):
        spec["network"] = {"subdomain": "net", "publishNotReadyAddresses": draw(st.booleans())}
    first = rjobs[0]
    if draw(st.booleans()) and first["replicas"] > 0:
        spec["coordinator"] = {"replicatedJob": first["name"], "jobIndex": first["replicas"] - 1}
    annotations = {api.EXCLUSIVE_TOPOLOGY_KEY: "rack", api.NODE_SELECTOR_STRATEGY_KEY: "true"} if draw(st.booleans()) else None
    return jobset(*rjobs, annotations=annotations, **spec)


def snapshot(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return copy.deepcopy(sorted(objects, key=lambda o: (o["kind"], o["metadata"]["name"])))


@given(jobsets(with_depends_on=False))
def test_render_is_deterministic_and_idempotent(obj: dict[str, Any]) -> None:
    first, second = make_cluster(), make_cluster()
    submit(first, obj)
    submit(second, obj)
    assert snapshot(first.api.all_objects()) == snapshot(second.api.all_objects())
    assert first.recorder.events == second.recorder.events

    stored = get_jobset(first)
    # Without dependsOn every replica exists, named <js>-<rj>-<i>, with the pure function's labels.
    expected = [f"js-{rj['name']}-{i}" for rj in stored["spec"]["replicatedJobs"] for i in range(rj["replicas"])]
    assert job_names(first) == expected
    for rj in stored["spec"]["replicatedJobs"]:
        for index in range(rj["replicas"]):
            rendered = render.child_job(stored, rj, index, restart_attempt=0)
            assert rendered == render.child_job(stored, rj, index, restart_attempt=0)
            job = first.api.get("batch", "Job", "default", rendered["metadata"]["name"])
            assert job is not None
            assert job["metadata"]["labels"] == rendered["metadata"]["labels"]
            pod_meta, rendered_meta = job["spec"]["template"]["metadata"], rendered["spec"]["template"]["metadata"]
            assert pod_meta["annotations"] == rendered_meta["annotations"]
            # The API server adds the Job's selector labels to the pod template; ours are all there.
            assert rendered_meta["labels"].items() <= pod_meta["labels"].items()

    # Reconciling again changes nothing: no object is created, updated or deleted.
    versions = {(o["kind"], o["metadata"]["name"]): o["metadata"]["resourceVersion"] for o in first.api.all_objects()}
    events_before = len(first.recorder.events)
    controller = first.components["jobset-controller"]
    first.manager.enqueue(controller, ("default", "js"))
    settle(first)
    assert {(o["kind"], o["metadata"]["name"]): o["metadata"]["resourceVersion"] for o in first.api.all_objects()} == versions
    assert len(first.recorder.events) == events_before


def _counts(cluster: Any, rjob_name: str) -> tuple[int, int]:
    """(ready-or-finished Jobs, succeeded Jobs) of one replicated job, read from the Jobs themselves."""
    ready = succeeded = 0
    for job in cluster.api.list("batch", "Job", "default"):
        if job["metadata"]["labels"][api.REPLICATED_JOB_NAME_KEY] != rjob_name:
            continue
        status = job.get("status") or {}
        done = any(c["type"] == "Complete" for c in status.get("conditions", []))
        succeeded += done
        ready += done or (status.get("ready", 0) >= 1)
    return ready, succeeded


@given(jobsets(with_depends_on=True), st.lists(st.tuples(st.booleans(), st.integers(0, 20)), max_size=25))
def test_no_depends_on_stage_created_before_its_dependencies(obj: dict[str, Any], actions: list[tuple[bool, int]]) -> None:
    obj["spec"].pop("suspend", None)
    cluster = make_cluster()
    submit(cluster, obj)
    replicas = {rj["name"]: rj["replicas"] for rj in obj["spec"]["replicatedJobs"]}

    def check() -> None:
        # Our driver actions only ever move Jobs forward (ready, then succeeded), so a dependency that
        # was met when a stage was created is still met now.
        for rj in obj["spec"]["replicatedJobs"]:
            created = any(n.startswith(f"js-{rj['name']}-") for n in job_names(cluster))
            if not created:
                continue
            for dep in rj.get("dependsOn") or []:
                ready, succeeded = _counts(cluster, dep["name"])
                wanted = replicas[dep["name"]]
                assert (succeeded if dep["status"] == "Complete" else ready) == wanted, (rj["name"], dep)

    check()
    for complete, pick in actions:
        live = [n for n in job_names(cluster)
                if not any(c["type"] == "Complete" for c in (cluster.api.get("batch", "Job", "default", n) or {})
                           .get("status", {}).get("conditions", []))]
        if not live:
            break
        name = live[pick % len(live)]
        if complete:
            succeed(cluster, name)
        else:
            set_ready(cluster, name)
        if get_jobset(cluster)["status"].get("terminalState"):
            break  # a completed JobSet deletes its active Jobs: no longer monotone
        check()
