"""Kueue in ``simulate`` end to end: samples/scenarios/kueue.yaml (two teams, one Cohort, TAS, an admission
check, a WorkloadPriorityClass), through the package function the CLI calls.

Exact Kueue events of the JSON contract (kind Workload, group kueue.x-k8s.io), final states with assigned
flavors, ``summary.kueue``, the terminal's Kueue rows and tables, and ``--explain``.
"""

from __future__ import annotations

import io
import re
from typing import Any

import pytest

from jobsetctl.simulate.command import OutputOptions, execute
from jobsetctl.simulate.runner import SimulateOptions
from tests.helpers import SAMPLES
from tests.simulate.harness import load, run_json

SAMPLE = SAMPLES / "scenarios" / "kueue.yaml"
G = "kueue.x-k8s.io"
HASH = re.compile(r"-[0-9a-f]{5}$")


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    text, outcome = run_json(SAMPLE)
    assert outcome.report is None and not outcome.failed
    return load(text)


def kueue_events(document: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(e["time"], e["namespace"], HASH.sub("-XXXXX", e["name"]), e["event"], e.get("reason"))
            for e in document["events"] if e.get("group") == G]


def test_the_workloads_go_through_kueue_event_by_event(document: dict[str, Any]) -> None:
    a, b = "jobset-pretrain-XXXXX", "jobset-finetune-XXXXX"
    assert kueue_events(document) == [
        (0, "team-a", a, "Created", None),
        (0, "team-a", a, "QuotaReserved", "QuotaReserved"),
        (0, "team-a", a, "Admitted", "Admitted"),
        # team B's production JobSet: team A borrows 8 of team B's GPUs, team B reclaims them.
        (1200, "team-b", b, "Created", None),
        (1200, "team-a", a, "Evicted", "Preempted"),
        (1200, "team-a", a, "Preempted", "InCohortReclamation"),
        (1200, "team-b", b, "Pending", "WaitingForPreemptedWorkloads"),
        (1200, "team-a", a, "Requeued", "Preempted"),
        (1200, "team-a", a, "Pending", "PendingEvaluation"),
        (1200, "team-b", b, "QuotaReserved", "QuotaReserved"),
        (1200, "team-a", a, "Pending", "WaitingForQuota"),
        (1200, "team-a", a, "Pending", "WaitingForQuota"),
        # the simulated admission check answers Ready after its 2 minutes
        (1320, "team-b", b, "Admitted", "Admitted"),
        (4020, "team-b", b, "Finished", "Succeeded"),
        # one requeueBatchPeriod after the quota comes back
        (4021, "team-a", a, "QuotaReserved", "QuotaReserved"),
        (4021, "team-a", a, "Admitted", "Admitted"),
        (11221, "team-a", a, "Finished", "Succeeded"),
    ]


def test_kueue_messages_are_upstreams(document: dict[str, Any]) -> None:
    by_event = {(e["name"][:15], e["event"], e.get("reason")): e.get("message") for e in document["events"]
                if e.get("group") == G}
    preempted = by_event[("jobset-pretrain", "Preempted", "InCohortReclamation")]
    assert re.fullmatch(r"Preempted to accommodate a workload \(UID: [0-9a-f-]{36}, JobUID: [0-9a-f-]{36}\) due to "
                        r"reclamation within the cohort; preemptor path: /research/team-b; preemptee path: /research/team-a",
                        preempted)
    assert by_event[("jobset-finetune", "Pending", "WaitingForPreemptedWorkloads")] == (
        "couldn't assign flavors to pod set workers: insufficient unused quota for nvidia.com/gpu in flavor gpu, "
        "4 more needed. Pending the preemption of 1 workload(s)")
    assert by_event[("jobset-pretrain", "Admitted", "Admitted")] == "Admitted by ClusterQueue team-a"
    assert by_event[("jobset-finetune", "Finished", "Succeeded")] == "jobset completed successfully"


def test_jobs_are_suspended_and_resumed_by_kueue(document: dict[str, Any]) -> None:
    jobsets = [(e["time"], e["name"], e["event"]) for e in document["events"]
               if e["kind"] == "JobSet" and e["event"] in ("Suspended", "Resumed", "Completed")]
    assert jobsets == [
        (0, "pretrain", "Suspended"), (0, "pretrain", "Resumed"),
        (1200, "finetune", "Suspended"), (1200, "pretrain", "Suspended"),
        (1320, "finetune", "Resumed"), (4020, "finetune", "Completed"),
        (4021, "pretrain", "Resumed"), (11221, "pretrain", "Completed"),
    ]


def test_final_states_carry_the_assigned_flavors(document: dict[str, Any]) -> None:
    finals = [f for f in document["final"] if f.get("group") == G]
    assert [(HASH.sub("-XXXXX", f["name"]), f["state"], f["clusterQueue"], f["flavors"]) for f in finals] == [
        ("jobset-pretrain-XXXXX", "Finished", "team-a", {"workers": {"cpu": "gpu", "memory": "gpu", "nvidia.com/gpu": "gpu"}}),
        ("jobset-finetune-XXXXX", "Finished", "team-b", {"workers": {"cpu": "gpu", "memory": "gpu", "nvidia.com/gpu": "gpu"}}),
    ]


def test_summary_per_queue(document: dict[str, Any]) -> None:
    kueue = document["summary"]["kueue"]
    a, b = kueue["clusterQueues"]
    assert (a["name"], a["cohort"], a["admitted"], a["finished"], a["evictions"]) == ("team-a", "research", 1, 1, 1)
    assert a["preemptedByReason"] == {"InCohortReclamation": 1} and b["preemptingByReason"] == {"InCohortReclamation": 1}
    gpu_a = next(u for u in a["usage"] if u["resource"] == "nvidia.com/gpu")
    assert (gpu_a["nominal"], gpu_a["peak"], gpu_a["borrowedPeak"]) == (16, 24, 8)
    assert b["admissionWait"] == {"p50": 120, "p95": 120, "max": 120}  # the admission check's 2 minutes
    assert [(q["namespace"], q["name"], q["clusterQueue"]) for q in kueue["localQueues"]] == [
        ("team-a", "queue", "team-a"), ("team-b", "queue", "team-b")]


def _text(**outputs: Any) -> str:
    out = io.StringIO()
    execute(SimulateOptions([str(SAMPLE)]), OutputOptions("text", width=140, **outputs), out)
    return out.getvalue()


def test_terminal_shows_kueue_rows_and_tables() -> None:
    text = _text()
    kueue = text[text.index("\nKueue\n"):]
    assert re.search(r"team-a/jobset-pretrain-[0-9a-f]{5} +█+P░+█+ +finished", kueue)
    assert re.search(r"team-b gpu/nvidia\.com/gpu .* nominal 16, peak 12", kueue)
    queues = text[text.index("Kueue queues"):]
    assert re.search(r"team-a +research +1/1 +0 +0s/0s/0s +cpu \d+%/\d+%, memory", queues)
    assert "nvidia.com/gpu 112%/150%" in queues
    assert "InCohortReclamation 1 / -" in queues and "- / InCohortReclamation 1" in queues


def test_explain_in_kueues_words() -> None:
    at_21m = _text(explain="team-b/finetune", explain_at=21 * 60).splitlines()
    assert re.fullmatch(r"Workload team-b/jobset-finetune-[0-9a-f]{5} \(JobSet team-b/finetune\) at 21m: "
                        r"quota reserved, waiting for admission checks", at_21m[0])
    assert "  Admitted=False UnsatisfiedAdmissionChecks: The workload has not all checks ready" in at_21m
    assert "  admission check capacity-check: Pending" in at_21m
    at_40m = _text(explain="pretrain", explain_at=40 * 60).splitlines()
    assert at_40m[0].endswith("(JobSet team-a/pretrain) at 40m: pending")
    assert ("  QuotaReserved=False WaitingForQuota: couldn't assign flavors to pod set workers: insufficient unused "
            "quota for nvidia.com/gpu in flavor gpu, 4 more needed") in at_40m
    assert any(line.startswith("  set aside as inadmissible (WaitingForQuota)") for line in at_40m)
    assert "  now: no flavor can hold it" in at_40m
    missing = _text(explain="nope").splitlines()
    assert missing[0].startswith("no Workload nope (nor a job owning one) at 3h7m1s; Workloads: team-a/jobset-pretrain-")
