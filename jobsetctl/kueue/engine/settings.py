"""What the engine needs from Kueue's ``Configuration`` and its feature gates, as plain values.

The Configuration and the gates, with their defaults at ff69552, are the API side's
(:mod:`jobsetctl.kueue.config`, :mod:`jobsetctl.kueue.features`): :func:`from_kueue_configuration` takes
what the scheduler, the queues and the Workload controller read from them. The Scenario's
``spec.kueue.admissionChecks`` adds what only a simulation needs: how each admission check answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jobsetctl.kueue.config import (
    DEFAULT_BACKOFF_BASE_SECONDS,
    DEFAULT_BACKOFF_MAX_SECONDS,
    DEFAULT_WAIT_FOR_PODS_READY_TIMEOUT,
    KueueConfiguration,
)
from jobsetctl.kueue.features import DEFAULT_GATES


@dataclass(frozen=True, slots=True)
class WaitForPodsReady:
    """``waitForPodsReady`` (on unless the DisableWaitForPodsReady gate is set; defaults of the API side)."""

    timeout: float = DEFAULT_WAIT_FOR_PODS_READY_TIMEOUT
    #: Defaults to the timeout; 0 disables it (core.go ``waitForPodsReady``), stored as None.
    recovery_timeout: float | None = DEFAULT_WAIT_FOR_PODS_READY_TIMEOUT
    block_admission: bool = False
    #: ``requeuingStrategy.timestamp``: "Eviction" (default) or "Creation".
    timestamp: str = "Eviction"
    backoff_limit_count: int | None = None
    backoff_base_seconds: int = DEFAULT_BACKOFF_BASE_SECONDS
    backoff_max_seconds: int = DEFAULT_BACKOFF_MAX_SECONDS


@dataclass(frozen=True, slots=True)
class AdmissionCheckBehaviour:
    """How a simulated admission check answers: ``state`` (Ready, Retry or Rejected) after ``delay``."""

    name: str
    delay: float = 0.0
    state: str = "Ready"
    message: str = ""


@dataclass(frozen=True, slots=True)
class EngineSettings:
    gates: dict[str, bool] = field(default_factory=DEFAULT_GATES.as_dict)
    wait_for_pods_ready: WaitForPodsReady | None = field(default_factory=WaitForPodsReady)
    #: ``fairSharing.preemptionStrategies``; None when fair sharing is off.
    fair_sharing: tuple[str, ...] | None = None
    manage_jobs_without_queue_name: bool = False
    admission_checks: dict[str, AdmissionCheckBehaviour] = field(default_factory=dict)
    #: Tests only: off, classic preemption searches every time as upstream does (no answer reused, no
    #: candidate skipped for being known useless), so a property test can compare the shortcuts with it.
    preemption_shortcuts: bool = True
    #: Tests only: off, the engine reads every Workload version it observes afresh, the cache re-adds a
    #: workload by deleting and adding it and a retry of inadmissible workloads moves a bucket holding members
    #: of unknown backoff member by member, so a test can compare the shortcuts with the work they skip.
    engine_shortcuts: bool = True
    #: Tests only: off, the TAS books and the TAS side of the flavor assigner recompute everything as
    #: upstream does (no re-add of an unchanged workload skipped, no podsets' requests reused), so a
    #: comparison test can run the shortcuts against it.
    tas_shortcuts: bool = True

    def gate(self, name: str) -> bool:
        value = self.gates.get(name)
        return DEFAULT_GATES.enabled(name) if value is None else value


def from_kueue_configuration(config: KueueConfiguration,
                             admission_checks: list[dict[str, Any]] | None = None) -> EngineSettings:
    """The engine's settings from Kueue's Configuration and the Scenario's check behaviours."""
    wait = None
    found = config.wait_for_pods_ready
    if found is not None:
        strategy = found.requeuing_strategy
        wait = WaitForPodsReady(
            timeout=found.timeout,
            recovery_timeout=found.recovery_timeout or None,
            block_admission=found.block_admission,
            timestamp=strategy.timestamp,
            backoff_limit_count=strategy.backoff_limit_count,
            backoff_base_seconds=strategy.backoff_base_seconds,
            backoff_max_seconds=strategy.backoff_max_seconds,
        )
    fair = tuple(config.fair_sharing.preemption_strategies) if config.fair_sharing is not None else None
    checks: dict[str, AdmissionCheckBehaviour] = {}
    for item in admission_checks or []:
        if isinstance(item, dict) and item.get("name"):
            checks[str(item["name"])] = AdmissionCheckBehaviour(
                str(item["name"]), float(item.get("delay") or 0.0), str(item.get("state") or "Ready"),
                str(item.get("message") or ""))
    return EngineSettings(config.feature_gates.as_dict(), wait, fair, config.manage_jobs_without_queue_name, checks)
