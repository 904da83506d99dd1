"""What the engine needs from Kueue's ``Configuration`` and its feature gates, as plain values.

The fields mirror ``config.kueue.x-k8s.io/v1beta2`` ``Configuration`` (``waitForPodsReady``,
``fairSharing``, ``admissionFairSharing``, ``manageJobsWithoutQueueName``, ``featureGates``) with the
defaults of ``apis/config/v1beta2/defaults.go`` at ff69552; :func:`from_configuration` reads a
Configuration mapping as upstream spells it. The Scenario's ``spec.kueue`` adds what only a simulation
needs: how long each admission check takes (``admissionChecks``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jobsetctl.kube.duration import DurationError, parse_duration

#: Kueue feature gates the engine consults, with their defaults at ff69552 (pkg/features/kube_features.go).
GATE_DEFAULTS: dict[str, bool] = {
    "PartialAdmission": True,
    "FlavorFungibility": True,
    "PrioritySortingWithinCohort": True,
    "TopologyAwareScheduling": True,
    "TASProfileMixed": True,
    "TASHandleOverlappingFlavors": True,
    "ReclaimablePods": True,
    "SchedulingEquivalenceHashing": True,
    "FairSharingPreemptWithinNominal": True,
    "FairSharingPrioritizeNonBorrowing": True,
    "FlavorFungibilityPreserveScanProgress": True,
    "RecomputeAssignmentUponPreemptionTargetsOverlap": True,
    "TASRecomputeAssignmentWithinSchedulingCycle": True,
    "UnadmittedWorkloadsObservability": True,
    "TASBalancedPlacement": False,
    "PrioritizePreemptorWorkloads": False,
    "DisableWaitForPodsReady": False,
}

#: ``waitForPodsReady`` defaults (apis/config/v1beta2/defaults.go). In v1beta2 the section is always
#: defaulted, so waitForPodsReady is on unless the DisableWaitForPodsReady gate is set
#: (pkg/util/waitforpodsready).
DEFAULT_PODS_READY_TIMEOUT = 1800.0
DEFAULT_BACKOFF_BASE = 60
DEFAULT_BACKOFF_MAX = 3600


@dataclass(frozen=True, slots=True)
class WaitForPodsReady:
    timeout: float = DEFAULT_PODS_READY_TIMEOUT
    #: Defaults to the timeout; 0 disables it (core.go ``waitForPodsReady``), stored as None.
    recovery_timeout: float | None = DEFAULT_PODS_READY_TIMEOUT
    block_admission: bool = False
    #: ``requeuingStrategy.timestamp``: "Eviction" (default) or "Creation".
    timestamp: str = "Eviction"
    backoff_limit_count: int | None = None
    backoff_base_seconds: int = DEFAULT_BACKOFF_BASE
    backoff_max_seconds: int = DEFAULT_BACKOFF_MAX


@dataclass(frozen=True, slots=True)
class AdmissionCheckBehaviour:
    """How a simulated admission check answers: ``state`` (Ready, Retry or Rejected) after ``delay``."""

    name: str
    delay: float = 0.0
    state: str = "Ready"
    message: str = ""


@dataclass(frozen=True, slots=True)
class EngineSettings:
    gates: dict[str, bool] = field(default_factory=lambda: dict(GATE_DEFAULTS))
    wait_for_pods_ready: WaitForPodsReady | None = field(default_factory=WaitForPodsReady)
    #: ``fairSharing.preemptionStrategies``; None when fair sharing is off.
    fair_sharing: tuple[str, ...] | None = None
    manage_jobs_without_queue_name: bool = False
    admission_checks: dict[str, AdmissionCheckBehaviour] = field(default_factory=dict)

    def gate(self, name: str) -> bool:
        return self.gates.get(name, GATE_DEFAULTS.get(name, False))


def _seconds(value: Any, default: float) -> float:
    if value is None:
        return default
    try:
        return parse_duration(value)
    except DurationError:
        return default


def from_configuration(config: dict[str, Any] | None, admission_checks: list[dict[str, Any]] | None = None) -> EngineSettings:
    """Settings from a ``Configuration`` mapping (upstream field names) and the Scenario's check behaviours."""
    config = config if isinstance(config, dict) else {}
    gates = dict(GATE_DEFAULTS)
    for name, value in (config.get("featureGates") or {}).items():
        if isinstance(value, bool):
            gates[str(name)] = value
    wait = None
    found = config.get("waitForPodsReady")
    raw_wait: dict[str, Any] = found if isinstance(found, dict) else {}
    # v1beta1 spelled an ``enable`` switch; v1beta2 has none (always defaulted).
    if raw_wait.get("enable", True) is not False and not gates.get("DisableWaitForPodsReady", False):
        timeout = _seconds(raw_wait.get("timeout"), DEFAULT_PODS_READY_TIMEOUT)
        recovery = raw_wait.get("recoveryTimeout")
        found_strategy = raw_wait.get("requeuingStrategy")
        strategy: dict[str, Any] = found_strategy if isinstance(found_strategy, dict) else {}
        limit = strategy.get("backoffLimitCount")
        wait = WaitForPodsReady(
            timeout=timeout,
            recovery_timeout=(_seconds(recovery, timeout) if recovery is not None else timeout) or None,
            block_admission=bool(raw_wait.get("blockAdmission", False)),
            timestamp=str(strategy.get("timestamp") or "Eviction"),
            backoff_limit_count=limit if isinstance(limit, int) and not isinstance(limit, bool) else None,
            backoff_base_seconds=int(strategy.get("backoffBaseSeconds") or DEFAULT_BACKOFF_BASE),
            backoff_max_seconds=int(strategy.get("backoffMaxSeconds") or DEFAULT_BACKOFF_MAX),
        )
    fair = None
    raw_fair = config.get("fairSharing")
    if isinstance(raw_fair, dict) and raw_fair.get("enable", True) is not False:
        strategies = raw_fair.get("preemptionStrategies")
        fair = tuple(str(s) for s in strategies) if isinstance(strategies, list) and strategies else (
            "LessThanOrEqualToFinalShare", "LessThanInitialShare")
    checks: dict[str, AdmissionCheckBehaviour] = {}
    for item in admission_checks or []:
        if isinstance(item, dict) and item.get("name"):
            checks[str(item["name"])] = AdmissionCheckBehaviour(
                str(item["name"]), _seconds(item.get("delay"), 0.0), str(item.get("state") or "Ready"),
                str(item.get("message") or ""))
    return EngineSettings(gates, wait, fair, bool(config.get("manageJobsWithoutQueueName", False)), checks)
