"""The short summary ``render`` writes to stderr: objects per kind, and what each replicated job asks of
the cluster (pods that exist at once and their total resource requests), so that a user sees at a
glance how big a manifest is before submitting it.

Pods per replicated job = ``replicas × min(parallelism, completions)`` with API defaults; requests =
that many times the Kubernetes ``PodRequests`` of the pod template (app containers summed, init
containers max'ed, sidecars and overhead added; a resource with only a limit counts the limit, as pod
defaulting copies it into the request: :func:`jobsetctl.kube.podspec.pod_requests`). It is computed
from every JobSet in the output, those the Trainer controller creates included, so replicated jobs of
later stages count even when only the first stage is rendered.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from jobsetctl.jobset import api as jsapi
from jobsetctl.kube.podspec import add_resources, pod_requests, scale
from jobsetctl.kube.quantity import format_quantity
from jobsetctl.reference import pods_per_job
from jobsetctl.render.capture import Entry

#: Resources measured in bytes print with binary suffixes (Gi) when they are whole bytes.
BYTE_RESOURCES = ("memory", "ephemeral-storage")


@dataclass(frozen=True, slots=True)
class ReplicatedJobDemand:
    name: str
    jobs: int
    pods_per_job: int
    requests: dict[str, Fraction]

    @property
    def pods(self) -> int:
        return self.jobs * self.pods_per_job


@dataclass(frozen=True, slots=True)
class JobSetDemand:
    namespace: str
    name: str
    replicated_jobs: list[ReplicatedJobDemand]

    @property
    def pods(self) -> int:
        return sum(r.pods for r in self.replicated_jobs)

    @property
    def requests(self) -> dict[str, Fraction]:
        return add_resources(*(r.requests for r in self.replicated_jobs))


def demand_of(js: dict[str, Any]) -> JobSetDemand:
    rows: list[ReplicatedJobDemand] = []
    for rjob in jsapi.replicated_jobs(js):
        jobs = jsapi.replicas(rjob)
        per_job = pods_per_job(jsapi.job_spec(rjob))
        per_pod = pod_requests(jsapi.pod_spec(rjob))
        rows.append(ReplicatedJobDemand(jsapi.rjob_name(rjob), jobs, per_job, scale(per_pod, jobs * per_job)))
    return JobSetDemand(jsapi.namespace(js), jsapi.name(js), rows)


def format_resources(resources: dict[str, Fraction]) -> str:
    parts = []
    for name in sorted(resources):
        amount = resources[name]
        if amount == 0:
            continue
        binary = name in BYTE_RESOURCES or name.startswith("hugepages-")
        parts.append(f"{name} {format_quantity(amount, binary=binary)}")
    return ", ".join(parts) if parts else "no requests"


def kind_counts(entries: Iterable[Entry]) -> str:
    created: Counter[str] = Counter()
    refused: Counter[str] = Counter()
    order: list[str] = []
    for entry in entries:
        if entry.kind not in order:
            order.append(entry.kind)
        (refused if entry.note is not None else created)[entry.kind] += 1
    parts = []
    for kind in order:
        text = f"{created[kind]} {kind}"
        if refused[kind]:
            text += f" (+{refused[kind]} not created yet)"
        parts.append(text)
    return ", ".join(parts)


def summary_lines(entries: list[Entry]) -> list[str]:
    created = [e for e in entries if e.note is None]
    lines = [f"rendered {len(created)} object{'s' * (len(created) != 1)}: {kind_counts(entries) or 'none'}"]
    for entry in created:
        if entry.kind != jsapi.KIND or entry.obj.get("apiVersion") != jsapi.API_VERSION:
            continue
        demand = demand_of(entry.obj)
        lines.append(f"JobSet {demand.namespace}/{demand.name}: {demand.pods} pod{'s' * (demand.pods != 1)}, "
                     f"{format_resources(demand.requests)}")
        width = max((len(r.name) for r in demand.replicated_jobs), default=0)
        for row in demand.replicated_jobs:
            lines.append(f"  {row.name:<{width}}  {row.jobs} Job{'s' * (row.jobs != 1)} x {row.pods_per_job} "
                         f"pod{'s' * (row.pods_per_job != 1)} = {row.pods:>5}  {format_resources(row.requests)}")
    return lines
