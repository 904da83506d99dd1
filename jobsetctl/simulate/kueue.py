"""Kueue in ``simulate``: when it runs, and what the run leaves for the reports.

Kueue runs when the Scenario has ``spec.kueue``, the inputs or the context hold a ClusterQueue, or a job
names a queue (issue 14, :func:`jobsetctl.simulate.runner.kueue_runs`). The engine's settings come from Kueue's Configuration and the
Scenario's ``spec.kueue.admissionChecks`` (how each simulated admission check answers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jobsetctl.kueue.engine.names import GROUP
from jobsetctl.kueue.engine.settings import EngineSettings, from_kueue_configuration

if TYPE_CHECKING:
    from jobsetctl.fakecluster.cluster import FakeCluster
    from jobsetctl.kueue.config import KueueConfiguration
    from jobsetctl.kueue.engine.history import History
    from jobsetctl.simulate.inputs import Inputs


def kueue_settings(config: KueueConfiguration, inputs: Inputs) -> EngineSettings:
    """The engine's settings: Kueue's Configuration (the plan decided that Kueue runs and which
    Configuration: :func:`jobsetctl.simulate.runner.kueue_runs`) and the Scenario's check behaviours."""
    scenario = inputs.scenario
    checks = scenario.kueue_admission_checks if scenario is not None else []
    return from_kueue_configuration(config, checks)


@dataclass(slots=True)
class KueueRun:
    """What the reports read after a run with Kueue."""

    history: History
    #: Workload key -> the Workload object as the run ended (None when deleted).
    workloads: dict[str, dict[str, Any]]
    #: The engine as the run ended (``--explain`` asks it).
    engine: Any = None


def kueue_run(cluster: FakeCluster) -> KueueRun | None:
    component = cluster.components.get("kueue")
    engine = getattr(component, "engine", None)
    if engine is None:
        return None
    workloads = {}
    for obj in cluster.api.list(GROUP, "Workload"):
        md = obj.get("metadata") or {}
        workloads[f"{md.get('namespace', '')}/{md.get('name', '')}"] = obj
    return KueueRun(engine.finish_history(), workloads, engine)


def kueue_busy(cluster: FakeCluster) -> bool:
    """Whether Kueue has admitted workloads still running (the run is not idle while they do)."""
    engine = getattr(cluster.components.get("kueue"), "engine", None)
    return engine is not None and bool(engine.admitted_at)
