"""``simulate --trace FILE``: the run as a Chrome Trace Event Format file that Perfetto and chrome://tracing open.

Layout (anchors.md §3, "Chrome Trace Event Format and Perfetto"):

* one **process** per node pool (``pid`` 1, 2, … in pool order), named with ``M`` ``process_name`` events;
* one **track** (``tid``) per node *lane*: pods run side by side on a node, and Perfetto "does not support
  overlapping B/E/X events" on one track, so each node gets as many lanes as it ever runs pods at once.
  Pods go to the lowest free lane (greedy interval partitioning, deterministic), so lane 0 is the busiest
  and a node that runs one pod at a time has a single track named after it (``gpu-3``; more lanes are
  ``gpu-3 #1`` …). No two slices on a track overlap (tested as a property);
* each pod is an ``X`` slice on its node from ``Started`` to its end (succeeded, failed, preempted, deleted,
  or the end of the run), with its namespace, workload, GPUs and outcome in ``args``;
* queue waits are async ``b``/``e`` pairs (category ``queue``, one ``id`` per chart row: a workload, a Job,
  a gang) in a ``queues`` process, so that waits, which overlap freely, never share a slice track;
* a node failure is a process-scoped instant (``i``, ``s: "p"``) on its pool;
* ``ts``/``dur`` are integer microseconds of virtual time.
"""

from __future__ import annotations

import json
from typing import Any

from jobsetctl.fakecluster.events import SimEvent
from jobsetctl.simulate.ledger import Ledger
from jobsetctl.simulate.timeline import PodSpan, Timeline

MICROSECONDS = 1_000_000
QUEUE_PROCESS_NAME = "queues"


def micros(seconds: float) -> int:
    return round(seconds * MICROSECONDS)


def assign_lanes(intervals: list[tuple[int, int]]) -> list[int]:
    """A lane per interval such that intervals in one lane do not overlap (end <= next start).

    Intervals are taken by start (then end, then input order) and each goes to the lowest-numbered lane
    that is free at its start. Returns the lanes in input order.
    """
    order = sorted(range(len(intervals)), key=lambda i: (intervals[i][0], intervals[i][1], i))
    lane_ends: list[int] = []
    lanes = [0] * len(intervals)
    for index in order:
        start, end = intervals[index]
        for lane, busy_until in enumerate(lane_ends):
            if busy_until <= start:
                lane_ends[lane] = max(end, start)
                lanes[index] = lane
                break
        else:
            lanes[index] = len(lane_ends)
            lane_ends.append(max(end, start))
    return lanes


def _metadata(name: str, pid: int, tid: int | None, value: str | int) -> dict[str, Any]:
    event: dict[str, Any] = {"name": name, "ph": "M", "pid": pid}
    if tid is not None:
        event["tid"] = tid
    event["args"] = {"sort_index": value} if name.endswith("sort_index") else {"name": value}
    return event


def _workload_label(span: PodSpan) -> str:
    if span.workload is None:
        return ""
    kind, namespace, name = span.workload
    return f"{kind} {namespace}/{name}"


def build_trace(
    timeline: Timeline, ledger: Ledger, events: list[SimEvent], scenario: str
) -> dict[str, Any]:
    """The trace document (see the module docstring)."""
    end = micros(timeline.end_time)
    pools: dict[str, int] = {}
    for node, info in ledger.nodes.items():
        del node
        pools.setdefault(info.pool, len(pools) + 1)
    for span in timeline.pods:
        if span.node is not None and span.node not in ledger.nodes:
            pools.setdefault("unknown", len(pools) + 1)
    trace: list[dict[str, Any]] = []
    for pool, pid in pools.items():
        trace.append(_metadata("process_name", pid, None, f"pool {pool}"))
        trace.append(_metadata("process_sort_index", pid, None, pid))

    # Pod slices, lane by lane on each node.
    by_node: dict[str, list[PodSpan]] = {}
    for span in timeline.pods:
        if span.node is not None and span.started is not None:
            by_node.setdefault(span.node, []).append(span)
    node_order = [n for n in ledger.nodes if n in by_node] + sorted(n for n in by_node if n not in ledger.nodes)
    next_tid = 1
    slices: list[dict[str, Any]] = []
    for node in node_order:
        spans = by_node[node]
        node_info = ledger.nodes.get(node)
        pid = pools[node_info.pool] if node_info is not None else pools["unknown"]
        intervals = [(micros(s.started or 0.0), micros(s.end) if s.end is not None else end) for s in spans]
        intervals = [(start, max(stop, start)) for start, stop in intervals]
        lanes = assign_lanes(intervals)
        lane_tids: dict[int, int] = {}
        for lane in sorted(set(lanes)):
            lane_tids[lane] = next_tid
            label = node if lane == 0 else f"{node} #{lane}"
            trace.append(_metadata("thread_name", pid, next_tid, label))
            trace.append(_metadata("thread_sort_index", pid, next_tid, next_tid))
            next_tid += 1
        for span, lane, (start, stop) in zip(spans, lanes, intervals, strict=True):
            _, namespace, name = span.key
            slices.append({
                "name": name, "cat": "pod", "ph": "X", "ts": start, "dur": stop - start,
                "pid": pid, "tid": lane_tids[lane],
                "args": {
                    "namespace": namespace, "workload": _workload_label(span),
                    "gpus": float(span.gpus), "outcome": span.outcome or "running",
                },
            })

    # Queue waits: async pairs, one id (one Perfetto track) per chart row.
    queue_pid = len(pools) + 1
    waits: list[dict[str, Any]] = []
    for row_id, row in enumerate(timeline.rows):
        kind, namespace, name = row.key
        label = f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"
        for segment in row.segments:
            if segment.state != "wait":
                continue
            start, stop = micros(segment.start), micros(segment.end)
            common = {"name": f"{label} waiting", "cat": "queue", "id": row_id + 1, "pid": queue_pid, "tid": 0}
            waits.append({**common, "ph": "b", "ts": start, "args": {"reason": row.note} if row.note else {}})
            waits.append({**common, "ph": "e", "ts": stop})
    if waits:
        trace.append(_metadata("process_name", queue_pid, None, QUEUE_PROCESS_NAME))
        trace.append(_metadata("process_sort_index", queue_pid, None, queue_pid))

    instants: list[dict[str, Any]] = []
    for event in events:
        if event.kind == "Node" and event.event == "Failed":
            failed_node = ledger.nodes.get(event.name)
            if failed_node is None:
                continue
            instants.append({
                "name": f"node {event.name} failed", "cat": "node", "ph": "i", "s": "p",
                "ts": micros(event.time), "pid": pools[failed_node.pool], "tid": 0,
                "args": {"message": event.message or ""},
            })
    timed = sorted([*slices, *waits, *instants], key=lambda e: (e["ts"], e["pid"], e.get("tid", 0)))
    return {
        "traceEvents": trace + timed,
        "displayTimeUnit": "ms",
        "otherData": {"generator": "jobsetctl simulate", "scenario": scenario, "endTime": timeline.end_time},
    }


def render_trace(timeline: Timeline, ledger: Ledger, events: list[SimEvent], scenario: str) -> str:
    return json.dumps(build_trace(timeline, ledger, events, scenario), separators=(",", ":")) + "\n"
