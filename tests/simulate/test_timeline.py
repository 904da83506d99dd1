"""Events to rows, pod spans and summary metrics, on hand-made event logs (exact values)."""

from __future__ import annotations

from fractions import Fraction

from jobsetctl.simulate.gantt import axis_line, row_cells, tick_times
from jobsetctl.simulate.summary import summarize
from jobsetctl.simulate.timeline import Mark, Segment, build_timeline
from tests.simulate.synthetic import Script, two_job_jobset


def _rows(script: Script, end: float) -> list[tuple[str, int, list[Segment], list[Mark], str]]:
    timeline = build_timeline(script.events, script.ledger, end)
    return [(r.label, r.depth, r.segments, r.marks, r.outcome) for r in timeline.rows]


def test_two_job_jobset_rows() -> None:
    assert _rows(two_job_jobset(), 3660) == [
        # The JobSet is partly running while one of its two pods waits.
        ("JobSet default/js", 0, [Segment(0, 60, "partial"), Segment(60, 3660, "run")], [], "succeeded"),
        ("js-w-0", 1, [Segment(0, 3600, "run")], [], "succeeded"),
        ("js-w-1", 1, [Segment(0, 60, "wait"), Segment(60, 3660, "run")], [], "succeeded"),
    ]


def test_two_job_jobset_pod_spans() -> None:
    timeline = build_timeline(two_job_jobset().events, two_job_jobset().ledger, 3660)
    spans = [(p.key[2], p.node, p.scheduled, p.started, p.end, p.outcome, p.gpus, p.row[2], p.workload)
             for p in timeline.pods]
    assert spans == [
        ("js-w-0-0-abcde", "gpu-0", 0, 0, 3600, "succeeded", Fraction(8), "js-w-0", ("JobSet", "default", "js")),
        ("js-w-1-0-fghij", "gpu-1", 60, 60, 3660, "succeeded", Fraction(8), "js-w-1", ("JobSet", "default", "js")),
    ]
    assert timeline.node_life == {"gpu-0": (0, None), "gpu-1": (0, None)}


def test_two_job_jobset_summary() -> None:
    script = two_job_jobset()
    summary = summarize(script.events, script.ledger, build_timeline(script.events, script.ledger, 3660))
    data = summary.as_dict()
    assert data == {
        "makespan": 3660,
        "unfinishedWorkloads": 0,
        # 2 nodes x 8 GPUs x 3660 s = 16.267 h; pods 2 x 8 GPUs x 3600 s = 16 h.
        "gpuHours": {"allocatable": 16.267, "used": 16.0, "idle": 0.267},
        "preemptions": 0,
        "restarts": 0,
        "rejected": 0,
        "pods": 2,
        "podsFailed": 0,
        "nodes": 2,
        "nodesFailed": 0,
        "workloads": [{
            "kind": "JobSet", "namespace": "default", "name": "js", "state": "Completed",
            "submitted": 0, "admitted": 60, "timeToAdmission": 60, "queueingDelay": 60, "finished": 3660,
            "preemptions": 0, "restarts": 0, "gpuHours": 16.0,
        }],
    }


def test_preemption_restart_and_node_failure() -> None:
    s = Script()
    s.node(0, "gpu-0", 8)
    s.create(0, "JobSet", "js")
    s.create(0, "Job", "js-w-0", owner=("JobSet", "js"))
    s.create(0, "Pod", "js-w-0-0-aaaaa", owner=("Job", "js-w-0"), gpus=8)
    s.event(0, "Pod", "js-w-0-0-aaaaa", "Scheduled", node="gpu-0")
    s.event(0, "Pod", "js-w-0-0-aaaaa", "Started", node="gpu-0")
    s.event(100, "Pod", "js-w-0-0-aaaaa", "Preempted", node="gpu-0", reason="Preempted", message="by high")
    s.event(100, "Job", "js-w-0", "Failed")
    s.event(100, "JobSet", "js", "Restarting", reason="DefaultFailurePolicy")
    s.event(100, "Job", "js-w-0", "Deleted")
    s.create(100, "Job", "js-w-0", owner=("JobSet", "js"))
    s.create(100, "Pod", "js-w-0-0-bbbbb", owner=("Job", "js-w-0"), gpus=8)
    s.event(200, "Pod", "js-w-0-0-bbbbb", "Scheduled", node="gpu-0")
    s.event(200, "Pod", "js-w-0-0-bbbbb", "Started", node="gpu-0")
    s.event(300, "Node", "gpu-0", "Failed", message="node failed")
    s.event(300, "Pod", "js-w-0-0-bbbbb", "Failed", node="gpu-0")
    timeline = build_timeline(s.events, s.ledger, 400)
    header, job, node = timeline.rows
    assert header.segments == [Segment(0, 100, "run"), Segment(100, 200, "wait"), Segment(200, 300, "run"),
                               Segment(300, 400, "wait")]
    assert header.marks == [Mark(100, "restart")] and header.outcome == "waiting"
    assert (header.finished_at, header.end_mark) == (None, None)  # still open at the end: no end mark
    assert job.segments == [Segment(0, 100, "run"), Segment(100, 200, "wait"), Segment(200, 300, "run"),
                            Segment(300, 400, "wait")]
    assert job.marks == [Mark(100, "preempted"), Mark(100, "restart"), Mark(300, "pod-failed")]
    # The failed node gets a row of its own: down from its failure to the end, with the failure marked.
    assert (node.label, node.kind, node.segments, node.marks, node.outcome) == (
        "Node gpu-0", "node", [Segment(300, 400, "down")], [Mark(300, "node-failed")], "down")
    summary = summarize(s.events, s.ledger, timeline)
    (stats,) = summary.workloads
    assert (stats.admitted, stats.queueing, stats.preemptions, stats.restarts, stats.finished) == (0, 100, 1, 1, None)
    assert (summary.preemptions, summary.restarts, summary.pods_failed, summary.nodes_failed) == (1, 1, 1, 1)
    assert summary.makespan is None and summary.unfinished == 1
    # The node was up 300 s of 400; pods held its 8 GPUs 100 s + 100 s.
    assert (summary.gpu_allocatable, summary.gpu_used) == (Fraction(2400), Fraction(1600))


def test_suspension_and_gang_rows() -> None:
    s = Script()
    s.node(0, "n0", 0)
    s.create(0, "Job", "j", suspended=True)
    s.event(50, "Job", "j", "Resumed")
    s.create(50, "Pod", "j-0-aaaaa", owner=("Job", "j"))
    s.event(60, "Pod", "j-0-aaaaa", "Scheduled", node="n0")
    s.event(70, "Job", "j", "Suspended")
    s.event(70, "Pod", "j-0-aaaaa", "Deleted")
    s.create(80, "PodGroup", "pg")
    s.create(80, "Pod", "p1", group="pg")
    s.create(80, "Pod", "p2", group="pg")
    s.event(80, "PodGroup", "pg", "Unschedulable", message="waiting for 2 pods")
    s.event(90, "Pod", "p1", "Scheduled", node="n0")
    s.event(90, "Pod", "p2", "Scheduled", node="n0")
    s.event(95, "Pod", "p1", "Succeeded", node="n0")
    s.event(99, "Pod", "p2", "Succeeded", node="n0")
    s.create(99, "Pod", "bare")
    timeline = build_timeline(s.events, s.ledger, 100)
    by_label = {r.label: r for r in timeline.rows}
    job, gang, bare = by_label["Job default/j"], by_label["PodGroup default/pg"], by_label["Pod default/bare"]
    assert job.segments == [Segment(0, 50, "suspended"), Segment(50, 60, "wait"), Segment(60, 70, "run"),
                            Segment(70, 100, "suspended")]
    assert job.outcome == "suspended"
    # A gang ends with its last pod (its end mark there).
    assert gang.segments == [Segment(80, 90, "wait"), Segment(90, 99, "run")]
    assert (gang.outcome, gang.end_mark) == ("succeeded", Mark(99, "done"))
    assert (bare.segments, bare.outcome) == ([Segment(99, 100, "wait")], "waiting")
    # Top-level rows of every kind read "Kind namespace/name".
    assert [r.label for r in timeline.rows] == ["Job default/j", "PodGroup default/pg", "Pod default/bare"]


def test_row_cells_and_axis() -> None:
    script = two_job_jobset()
    timeline = build_timeline(script.events, script.ledger, 3660)
    cells = row_cells(timeline.rows[2], 3660, 61)
    # 1 cell is 60 s: the one-minute wait is exactly the first cell; the end mark is the last.
    assert "".join(c.char for c in cells) == "░" + "█" * 59 + "✓"
    assert "".join(c.char for c in row_cells(timeline.rows[0], 3660, 61)) == "▄" + "█" * 59 + "✓"
    assert tick_times(3660) == [0.0, 1800.0, 3600.0]
    assert tick_times(3660, 8) == [0.0, 600.0, 1200.0, 1800.0, 2400.0, 3000.0, 3600.0]
    assert axis_line(7200, 40) == "0" + " " * 19 + "1h" + " " * 16 + "2h"
    assert axis_line(7200, 80) == "0" + " " * 19 + "30m" + " " * 17 + "1h" + " " * 18 + "1h30m" + " " * 13 + "2h"


def test_a_pod_replaced_within_one_instant_keeps_one_span() -> None:
    """A Job of 2 completions, 1 at a time: the second pod starts as the first ends; one running span."""
    s = Script()
    s.node(0, "n0", 0)
    s.create(0, "Job", "j")
    s.create(0, "Pod", "j-aaaaa", owner=("Job", "j"))
    s.event(0, "Pod", "j-aaaaa", "Scheduled", node="n0")
    s.event(50, "Pod", "j-aaaaa", "Succeeded", node="n0")
    s.create(50, "Pod", "j-bbbbb", owner=("Job", "j"))
    s.event(50, "Pod", "j-bbbbb", "Scheduled", node="n0")
    s.event(100, "Pod", "j-bbbbb", "Succeeded", node="n0")
    s.event(100, "Job", "j", "Completed")
    (row,) = build_timeline(s.events, s.ledger, 100).rows
    assert (row.segments, row.end_mark) == ([Segment(0, 100, "run")], Mark(100, "done"))
