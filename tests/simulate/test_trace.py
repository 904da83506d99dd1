"""Chrome trace: track layout, no overlapping slices on a track (property), async queue waits."""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from fractions import Fraction
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from jobsetctl.simulate.ledger import Ledger
from jobsetctl.simulate.nodes import NodeInfo
from jobsetctl.simulate.timeline import PodSpan, Timeline, build_timeline
from jobsetctl.simulate.trace import assign_lanes, build_trace, render_trace
from tests.simulate.synthetic import two_job_jobset


def _slices_by_track(trace: dict[str, Any]) -> dict[tuple[int, int], list[tuple[int, int]]]:
    tracks: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    for event in trace["traceEvents"]:
        if event["ph"] == "X":
            tracks[(event["pid"], event["tid"])].append((event["ts"], event["ts"] + event["dur"]))
    return tracks


def _assert_no_overlap(tracks: dict[tuple[int, int], list[tuple[int, int]]]) -> None:
    for track, slices in tracks.items():
        ordered = sorted(slices)
        for (_, end), (start, _) in itertools.pairwise(ordered):
            assert end <= start, f"overlapping slices on track {track}: {ordered}"


intervals = st.lists(
    st.tuples(st.integers(0, 1000), st.integers(0, 300)).map(lambda t: (t[0], t[0] + t[1])), max_size=60
)


@given(intervals)
def test_lanes_never_overlap(spans: list[tuple[int, int]]) -> None:
    lanes = assign_lanes(spans)
    by_lane: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for span, lane in zip(spans, lanes, strict=True):
        by_lane[lane].append(span)
    _assert_no_overlap({(0, lane): items for lane, items in by_lane.items()})
    assert sorted(set(lanes)) == list(range(len(set(lanes))))  # lanes are numbered densely from 0


@given(st.lists(st.tuples(st.integers(0, 1000), st.integers(1, 300)).map(lambda t: (t[0], t[0] + t[1])),
                min_size=1, max_size=60))
def test_lane_count_is_the_peak_concurrency(spans: list[tuple[int, int]]) -> None:
    peak = max(sum(1 for s, e in spans if s <= point < e) for point, _ in spans)
    assert len(set(assign_lanes(spans))) == peak


pods = st.lists(
    st.tuples(
        st.integers(0, 3),  # node
        st.integers(0, 5000),  # started
        st.one_of(st.none(), st.integers(0, 5000)),  # duration (None: still running at the end)
    ),
    max_size=80,
)


@settings(max_examples=200)
@given(pods)
def test_trace_has_no_overlapping_slices_per_track(pod_specs: list[tuple[int, int, int | None]]) -> None:
    ledger = Ledger()
    for index in range(4):
        ledger.nodes[f"n{index}"] = NodeInfo(f"n{index}", "a" if index < 2 else "b", Fraction(8))
    spans = []
    for number, (node, started, duration) in enumerate(pod_specs):
        spans.append(PodSpan(("Pod", "default", f"p{number}"), started / 10, ("Pod", "default", f"p{number}"), None,
                             node=f"n{node}", scheduled=started / 10, started=started / 10,
                             end=None if duration is None else (started + duration) / 10,
                             outcome=None if duration is None else "succeeded"))
    trace = build_trace(Timeline(1000.0, spans, [], {}), ledger, [], "prop")
    _assert_no_overlap(_slices_by_track(trace))
    assert sum(1 for e in trace["traceEvents"] if e["ph"] == "X") == len(spans)
    named = {(e["pid"], e["tid"]) for e in trace["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
    assert set(_slices_by_track(trace)) <= named  # every track is named


def test_trace_of_a_small_run_exactly() -> None:
    script = two_job_jobset()
    timeline = build_timeline(script.events, script.ledger, 3660)
    trace = json.loads(render_trace(timeline, script.ledger, script.events, "two-jobs"))
    assert trace["displayTimeUnit"] == "ms"
    assert trace["otherData"] == {"generator": "jobsetctl simulate", "scenario": "two-jobs", "endTime": 3660}
    assert trace["traceEvents"] == [
        {"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "pool gpu"}},
        {"name": "process_sort_index", "ph": "M", "pid": 1, "args": {"sort_index": 1}},
        {"name": "thread_name", "ph": "M", "pid": 1, "tid": 1, "args": {"name": "gpu-0"}},
        {"name": "thread_sort_index", "ph": "M", "pid": 1, "tid": 1, "args": {"sort_index": 1}},
        {"name": "thread_name", "ph": "M", "pid": 1, "tid": 2, "args": {"name": "gpu-1"}},
        {"name": "thread_sort_index", "ph": "M", "pid": 1, "tid": 2, "args": {"sort_index": 2}},
        {"name": "process_name", "ph": "M", "pid": 2, "args": {"name": "queues"}},
        {"name": "process_sort_index", "ph": "M", "pid": 2, "args": {"sort_index": 2}},
        {"name": "js-w-0-0-abcde", "cat": "pod", "ph": "X", "ts": 0, "dur": 3600000000, "pid": 1, "tid": 1,
         "args": {"namespace": "default", "workload": "JobSet default/js", "gpus": 8.0, "outcome": "succeeded"}},
        {"name": "Job default/js-w-1 waiting", "cat": "queue", "id": 3, "pid": 2, "tid": 0, "ph": "b", "ts": 0,
         "args": {}},
        {"name": "js-w-1-0-fghij", "cat": "pod", "ph": "X", "ts": 60000000, "dur": 3600000000, "pid": 1, "tid": 2,
         "args": {"namespace": "default", "workload": "JobSet default/js", "gpus": 8.0, "outcome": "succeeded"}},
        {"name": "Job default/js-w-1 waiting", "cat": "queue", "id": 3, "pid": 2, "tid": 0, "ph": "e",
         "ts": 60000000},
    ]
