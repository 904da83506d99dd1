"""Kueue in ``simulate``: when it runs, and what the run leaves for the reports.

Kueue runs when the inputs hold a ClusterQueue or the Scenario has ``spec.kueue`` (issue 14). Its
settings come from the Scenario's ``spec.kueue`` (Kueue's Configuration, and how each simulated
admission check answers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jobsetctl.kueue.engine.names import GROUP
from jobsetctl.kueue.engine.settings import EngineSettings, from_configuration

if TYPE_CHECKING:
    from jobsetctl.fakecluster.cluster import FakeCluster
    from jobsetctl.kueue.engine.history import History
    from jobsetctl.simulate.inputs import Inputs


def _group(obj: dict[str, Any]) -> str:
    api_version = obj.get("apiVersion")
    return api_version.partition("/")[0] if isinstance(api_version, str) else ""


def kueue_settings(inputs: Inputs) -> EngineSettings | None:
    """Kueue's settings when it runs in this simulation, else None."""
    scenario = inputs.scenario
    spec = scenario.kueue if scenario is not None else None
    has_queue = any(r.obj.get("kind") == "ClusterQueue" and _group(r.obj) == GROUP for r in inputs.all_records())
    if spec is None and not has_queue:
        return None
    spec = spec or {}
    return from_configuration(spec.get("configuration"), spec.get("admissionChecks"))


@dataclass(slots=True)
class KueueRun:
    """What the reports read after a run with Kueue."""

    history: History
    #: Workload key -> the Workload object as the run ended (None when deleted).
    workloads: dict[str, dict[str, Any]]


def kueue_run(cluster: FakeCluster) -> KueueRun | None:
    component = cluster.components.get("kueue")
    engine = getattr(component, "engine", None)
    if engine is None:
        return None
    workloads = {}
    for obj in cluster.api.list(GROUP, "Workload"):
        md = obj.get("metadata") or {}
        workloads[f"{md.get('namespace', '')}/{md.get('name', '')}"] = obj
    return KueueRun(engine.finish_history(), workloads)


def kueue_busy(cluster: FakeCluster) -> bool:
    """Whether Kueue has admitted workloads still running (the run is not idle while they do)."""
    engine = getattr(cluster.components.get("kueue"), "engine", None)
    return engine is not None and bool(engine.admitted_at)
