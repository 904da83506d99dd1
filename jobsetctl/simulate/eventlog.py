"""The notable events of a run: the log the terminal prints under the chart and the HTML page lists.

Rejections, preemptions, failures, restarts, suspensions, node failures, and why something waits (once
per waiting episode), merged with the Kubernetes Events that say something the simulation events do not
(warnings, what workload-level objects report). The routine of every pod (created, scheduled, started,
completed) is left to the chart.
"""

from __future__ import annotations

from dataclasses import dataclass

from jobsetctl.fakecluster.events import KubeEvent, SimEvent
from jobsetctl.simulate.runner import SimulationResult

#: SimEvents worth a log line (besides Rejected, always shown).
NOTABLE = {
    ("Pod", "Preempted"), ("Pod", "Failed"), ("Pod", "Unschedulable"),
    ("Job", "Failed"), ("Job", "Suspended"), ("Job", "Resumed"),
    ("JobSet", "Restarting"), ("JobSet", "Failed"), ("JobSet", "Completed"), ("JobSet", "Suspended"),
    ("JobSet", "Resumed"),
    ("TrainJob", "Failed"), ("TrainJob", "Completed"), ("TrainJob", "Suspended"), ("TrainJob", "Resumed"),
    ("Workload", "Preempted"), ("Workload", "Unschedulable"),
    ("PodGroup", "Preempted"), ("PodGroup", "Unschedulable"),
    ("CompositePodGroup", "Preempted"), ("CompositePodGroup", "Unschedulable"),
    ("Node", "Failed"),
}
#: Normal Kubernetes events of pods and Jobs that are worth a line (the rest is routine).
NOTABLE_POD_REASONS = frozenset({"Preempted", "TaintManagerEviction", "Evicted", "SuspendedJob", "Suspended",
                                 "Resumed"})
#: Kubernetes event reasons and the simulation event that tells the same news.
KUBE_REASON_EVENTS = {"FailedScheduling": "Unschedulable", "BackoffLimitExceeded": "Failed"}
#: The tone of a line's word: bad (red), waiting (yellow), warning (yellow), good (green), news (cyan).
BAD_EVENTS = frozenset({"Rejected", "Failed", "Preempted"})


@dataclass(frozen=True, slots=True)
class LogLine:
    time: float
    #: ``Kind namespace/name``.
    subject: str
    #: The simulation event (``Failed``) or the Kubernetes event reason (``TaintManagerEviction``).
    word: str
    tone: str  # bad, waiting, warning, good, news
    node: str | None
    #: ``reason: message`` (simulation events) or the message (Kubernetes events).
    detail: str

    @property
    def text(self) -> str:
        """The line as plain text (without its time)."""
        where = f" on {self.node}" if self.node else ""
        detail = f"  {self.detail}" if self.detail else ""
        return f"{self.subject} {self.word}{where}{detail}"


def subject(kind: str, namespace: str, name: str) -> str:
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def log_lines(result: SimulationResult) -> list[LogLine]:
    merged: list[tuple[float, int, int, LogLine]] = []
    waiting: set[tuple[str, str, str]] = set()
    said: set[tuple[float, str, str, str, str]] = set()
    ledger = result.ledger
    for index, event in enumerate(result.events):
        key = (event.kind, event.namespace, event.name)
        said.add((event.time, event.kind, event.namespace, event.name, event.message or ""))
        said.add((event.time, event.kind, event.namespace, event.name, event.event))
        if event.event == "Unschedulable":
            info = ledger.info(key) if event.kind == "Pod" else None
            # Once per waiting episode: a retry says it again, often with a new count ("gang 2/4
            # placeable"); the chart's note keeps the latest reason. A gang's pods echo their group.
            if key in waiting or (info is not None and info.group is not None):
                continue
            waiting.add(key)
        else:
            waiting.discard(key)
        if event.event != "Rejected" and (event.kind, event.event) not in NOTABLE:
            continue
        merged.append((event.time, 0, index, _sim_line(event)))
    for index, kube in enumerate(result.kube_events):
        if not _notable_kube_event(kube):
            continue
        where = (kube.time, kube.kind, kube.namespace, kube.name)
        # The same news twice (a simulation event and the Kubernetes event behind it): keep the first.
        if (*where, kube.message) in said or (*where, KUBE_REASON_EVENTS.get(kube.reason, kube.reason)) in said:
            continue
        merged.append((kube.time, 1, index, _kube_line(kube)))
    merged.sort(key=lambda item: (item[0], item[1], item[2]))
    return [line for _, _, _, line in merged]


def _notable_kube_event(event: KubeEvent) -> bool:
    """Warnings, and what workload-level objects report; not the per-pod routine the chart already shows
    (SuccessfulCreate, Scheduled, Started, Completed)."""
    if event.type == "Warning":
        return True
    if event.kind in ("Pod", "Job"):
        return event.reason in NOTABLE_POD_REASONS
    return True


def _sim_line(event: SimEvent) -> LogLine:
    tone = "bad" if event.event in BAD_EVENTS else ("waiting" if event.event == "Unschedulable" else "news")
    detail = ": ".join(part for part in (event.reason, event.message) if part)
    return LogLine(event.time, subject(event.kind, event.namespace, event.name), event.event, tone, event.node,
                   detail)


def _kube_line(event: KubeEvent) -> LogLine:
    return LogLine(event.time, subject(event.kind, event.namespace, event.name), event.reason,
                   "warning" if event.type == "Warning" else "good", None, event.message)
