"""The JSON report contract, the closed event vocabulary, and the pictures, on a hand-made run."""

from __future__ import annotations

import json
from xml.etree import ElementTree

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jobsetctl.fakecluster.events import SimEvent
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import KubeVersion
from jobsetctl.simulate.final import final_states
from jobsetctl.simulate.htmlpage import render_html
from jobsetctl.simulate.picture import render_svg
from jobsetctl.simulate.report import (
    COMMON_EVENTS,
    EVENTS_BY_KIND,
    allowed_events,
    is_allowed,
    render_json,
    report_document,
)
from jobsetctl.simulate.runner import SimulationResult
from jobsetctl.simulate.summary import summarize
from jobsetctl.simulate.timeline import build_timeline
from tests.simulate.synthetic import Script, two_job_jobset


def _result(script: Script, end: float) -> SimulationResult:
    version = KubeVersion.V1_37
    return SimulationResult(
        name="two-jobs", version=version, gates=parse_feature_gates(None, version), enabled_gates=["GenericWorkload"],
        until=None, end_time=end, stop_reason="done", events=script.events, kube_events=[],
        final=[{"kind": "JobSet", "namespace": "default", "name": "js", "state": "Completed"}], ledger=script.ledger,
    )


def test_json_document_shape() -> None:
    script = two_job_jobset()
    result = _result(script, 3660)
    summary = summarize(result.events, result.ledger, build_timeline(result.events, result.ledger, 3660))
    text = render_json(result, summary)
    document = json.loads(text)
    assert document == json.loads(json.dumps(report_document(result, summary)))
    # One event per line, so that a large run's report can be grepped.
    assert sum(1 for line in text.splitlines() if line.startswith('    {"time": ')) == len(script.events)
    assert list(document) == ["version", "scenario", "endTime", "events", "final", "summary"]
    assert (document["version"], document["scenario"], document["endTime"]) == (1, "two-jobs", 3660)
    assert document["events"][:3] == [
        {"time": 0, "kind": "Node", "namespace": "", "name": "gpu-0", "event": "Created"},
        {"time": 0, "kind": "Node", "namespace": "", "name": "gpu-1", "event": "Created"},
        {"time": 0, "kind": "JobSet", "namespace": "default", "name": "js", "event": "Created"},
    ]
    assert document["events"][8] == {
        "time": 0, "kind": "Pod", "namespace": "default", "name": "js-w-1-0-fghij", "event": "Unschedulable",
        "reason": "Unschedulable", "message": "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."}
    assert len(document["events"]) == len(script.events)
    assert document["final"] == [{"kind": "JobSet", "namespace": "default", "name": "js", "state": "Completed"}]
    assert list(document["summary"])[:4] == ["kubernetesVersion", "enabledGates", "stopReason", "makespan"]
    assert document["summary"]["enabledGates"] == ["GenericWorkload"]
    assert document["summary"]["kubernetesVersion"] == "1.37"


def test_event_vocabulary_is_closed() -> None:
    assert {"Created", "Deleted", "Rejected"} == COMMON_EVENTS
    assert allowed_events("Pod") == {"Created", "Deleted", "Rejected", "Scheduled", "Unschedulable", "Started",
                                     "Ready", "Succeeded", "Failed", "Preempted"}
    assert allowed_events("Node") == {"Created", "Deleted", "Rejected", "Failed"}
    assert allowed_events("ConfigMap") == COMMON_EVENTS
    assert is_allowed("JobSet", "Restarting") and not is_allowed("Job", "Restarting")
    assert set(EVENTS_BY_KIND) == {"Pod", "Job", "JobSet", "TrainJob", "Workload", "PodGroup", "CompositePodGroup",
                                   "Node"}
    assert all(is_allowed(e.kind, e.event) for e in two_job_jobset().events)


def test_final_states_are_sorted_and_mapped() -> None:
    objects = [
        {"kind": "Pod", "metadata": {"namespace": "b", "name": "p"}, "spec": {"nodeName": "n1"},
         "status": {"phase": "Running"}},
        {"kind": "Pod", "metadata": {"namespace": "a", "name": "q"}, "spec": {}},
        {"kind": "Job", "metadata": {"namespace": "a", "name": "j"},
         "status": {"conditions": [{"type": "Complete", "status": "True"}]}},
        {"kind": "Job", "metadata": {"namespace": "a", "name": "k"}, "spec": {"suspend": True}},
        {"kind": "JobSet", "metadata": {"namespace": "a", "name": "js"},
         "status": {"conditions": [{"type": "Failed", "status": "True"}]}},
        {"kind": "TrainJob", "metadata": {"namespace": "a", "name": "tj"},
         "status": {"conditions": [{"type": "Complete", "status": "True"}]}},
        {"kind": "PodGroup", "metadata": {"namespace": "a", "name": "pg"},
         "status": {"conditions": [{"type": "PodGroupScheduled", "status": "False"}]}},
        {"kind": "CompositePodGroup", "metadata": {"namespace": "a", "name": "cpg"},
         "status": {"conditions": [{"type": "CompositePodGroupInitiallyScheduled", "status": "True"}]}},
        {"kind": "ConfigMap", "metadata": {"namespace": "a", "name": "c"}},
        {"kind": "Workload", "metadata": {"namespace": "a", "name": "w"}},
    ]
    assert final_states(objects) == [
        {"kind": "TrainJob", "namespace": "a", "name": "tj", "state": "Completed"},
        {"kind": "JobSet", "namespace": "a", "name": "js", "state": "Failed"},
        {"kind": "Job", "namespace": "a", "name": "j", "state": "Complete"},
        {"kind": "Job", "namespace": "a", "name": "k", "state": "Suspended"},
        {"kind": "PodGroup", "namespace": "a", "name": "pg", "state": "Pending"},
        {"kind": "CompositePodGroup", "namespace": "a", "name": "cpg", "state": "Scheduled"},
        {"kind": "Pod", "namespace": "a", "name": "q", "state": "Pending"},
        {"kind": "Pod", "namespace": "b", "name": "p", "state": "Running", "node": "n1"},
    ]


def test_svg_is_well_formed_and_self_contained() -> None:
    script = two_job_jobset()
    timeline = build_timeline(script.events, script.ledger, 3660)
    svg = render_svg(timeline, "jobsetctl simulate: two <jobs>")
    root = ElementTree.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == f"{ns}svg"
    assert not root.findall(f".//{ns}script") and "href" not in svg and "@import" not in svg
    bars = [r for r in root.iter(f"{ns}rect") if r.find(f"{ns}title") is not None]
    assert [b.find(f"{ns}title").text for b in bars] == [  # type: ignore[union-attr]
        # partly running: the waiting colour under a half-height running bar, one tooltip each.
        "JobSet default/js: partly running 0s–1m", "JobSet default/js: partly running 0s–1m",
        "JobSet default/js: running 1m–1h1m", "js-w-0: running 0s–1h", "js-w-1: waiting 0s–1m",
        "js-w-1: running 1m–1h1m"]
    ends = [c.find(f"{ns}title").text for c in root.iter(f"{ns}circle")  # type: ignore[union-attr]
            if c.find(f"{ns}title") is not None]
    assert ends == ["JobSet default/js: done at 1h1m", "js-w-0: done at 1h", "js-w-1: done at 1h1m"]
    assert "two &lt;jobs&gt;" in svg
    assert render_svg(timeline, "x") == render_svg(timeline, "x")  # deterministic


def test_html_embeds_svg_and_summary() -> None:
    script = two_job_jobset()
    result = _result(script, 3660)
    timeline = build_timeline(script.events, script.ledger, 3660)
    summary = summarize(script.events, script.ledger, timeline)
    html = render_html(result, timeline, summary, "jobsetctl simulate: two-jobs")
    assert html.startswith("<!DOCTYPE html>") and html.count("<svg") == 1
    assert "<td>JobSet default/js</td><td>Completed</td><td>0s</td><td>1m</td><td>1m</td><td>1h1m</td>" in html
    # One visible title (the picture inside has none of its own), times in human units.
    assert html.count("<h1>") == 1 and html.count(">jobsetctl simulate: two-jobs<") == 2  # <title> and <h1>
    assert '<p class="run">Kubernetes 1.37 · 2 nodes · seed 0 · end 1h1m (nothing left to happen)</p>' in html
    assert "3660" not in html.replace('aria-label="jobsetctl simulate: two-jobs"', "")
    # The events list: the pod that waited, once.
    assert ("<tr><td>0s</td><td>Pod default/js-w-1-0-fghij</td><td class=\"waiting\">Unschedulable</td>"
            "<td class=\"detail\">Unschedulable: 0/2 nodes are available: 2 Insufficient nvidia.com/gpu.</td></tr>"
            in html)


@pytest.mark.parametrize("event", [
    SimEvent(0.0, "Pod", "default", "p-0", "Created"),
    SimEvent(3600.0, "Pod", "bench", "js-rj-0-0-abcde", "Scheduled", node="gpu-17"),
    SimEvent(0.1, "Job", "ns", "j", "Failed", reason="BackoffLimitExceeded", message="Job has reached the specified backoff limit"),
    SimEvent(1e-07, "PodGroup", "ns", "g", "Unschedulable", message='0/3 nodes: "quoted" \\ back\nslash\ttab \x01', count=4),
    SimEvent(1234567.891234567, "Workload", "ns", "w", "Admitted", group="kueue.x-k8s.io"),
    SimEvent(12.5, "Pod", "ns", "p", "Rejected", reason="Forbidden", message="ünïcödé ✓ 名前", transient=True),
    SimEvent(7, "Node", "", "n", "Created"),  # an int time (a hand-made event)
    SimEvent(1.5, "Pod", "ns", "p", "Scheduled", node=5),  # type: ignore[arg-type]  # not a string: json.dumps
    SimEvent(2.0, "Pod", "ns", "p", "Rejected", transient=1),  # type: ignore[arg-type]  # not a bool: json.dumps
])
def test_event_json_is_json_dumps_of_as_dict(event: SimEvent) -> None:
    """``SimEvent.as_json`` (how ``-o json`` writes events) is byte for byte what ``json.dumps`` writes for
    ``as_dict`` with the report's separators."""
    assert event.as_json() == json.dumps(event.as_dict(), ensure_ascii=False, separators=(", ", ": "))


_texts = st.sampled_from(["Pod", "default", "gpu-1", "p-0-abcde", "Scheduled", ""]) | st.text(max_size=12)
_optional = st.none() | _texts
_odd = st.none() | _texts | st.integers(-3, 3) | st.lists(st.just("x"), max_size=1)


@settings(max_examples=500, deadline=None)
@given(time=st.floats(allow_nan=True, allow_infinity=True) | st.integers(-10, 10**12) | st.sampled_from([0.0, 3600.0, 0.5]),
       kind=_texts | st.integers(0, 2), namespace=_texts, name=_texts, event=_texts, node=_odd, reason=_optional,
       message=_optional, group=_optional, transient=st.booleans() | st.integers(0, 1),
       count=st.integers(1, 5))
def test_event_json_is_json_dumps_of_as_dict_generated(time: float, kind: str, namespace: str, name: str, event: str,
                                                       node: str | None, reason: str | None, message: str | None,
                                                       group: str | None, transient: bool, count: int) -> None:
    """The same over generated events: numbers of every kind, any text (escapes, unicode, the texts the
    writer caches), optional fields set or not, fields of the wrong type (``json.dumps`` then)."""
    sim = SimEvent(time, kind, namespace, name, event, node, reason, message, group, transient, count)
    try:
        expected = json.dumps(sim.as_dict(), ensure_ascii=False, separators=(", ", ": "))
    except (TypeError, ValueError, OverflowError) as error:  # as_dict refuses (nan, inf): so must as_json
        with pytest.raises(type(error)):
            sim.as_json()
        return
    assert sim.as_json() == expected
    assert sim.as_json() == expected  # again, with its texts cached
