"""Kueue's feature gates (``pkg/features/kube_features.go`` at the spec's snapshot, kubernetes-sigs/kueue
@ff69552e), with the default each has at that snapshot.

Kueue registers *versioned* gates (one entry per Kueue release where the gate changed) with
component-base's feature gate, whose emulation version is the Kubernetes binary version (1.3x), so
the last entry of each list is the one in force: that is the ``default``, ``stage`` and ``since``
below. Gates are set in Kueue's Configuration (``featureGates: {Name: true}``), never on jobsetctl's
``--feature-gates`` (which is for Kubernetes, JobSet and Trainer).

Checks as component-base makes them when Kueue starts (``featuregate.unsafeSetFromMap``):
``unrecognized feature gate: <Name>``; a locked gate set to the other value is
``cannot set feature gate <Name> to <value>, feature is locked to <default>``; and after the values are
set, every *enabled* gate whose dependencies are not all enabled is
``<Name> is enabled, but depends on features that are disabled: [<Dep> ...]``. The last one means that
turning ``TopologyAwareScheduling`` off alone is refused (its default-on dependents stay on): upstream
behaviour, reproduced.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

#: (name, default, stage, Kueue version of that last entry[, locked to default])
_TABLE: Final[tuple[tuple[str, bool, str, str] | tuple[str, bool, str, str, bool], ...]] = (
    ("PartialAdmission", True, "Beta", "0.5"),
    ("FlavorFungibility", True, "Beta", "0.5"),
    ("VisibilityOnDemand", True, "Beta", "0.9"),
    ("DisableWaitForPodsReady", False, "Alpha", "0.19"),
    ("PrioritySortingWithinCohort", True, "Beta", "0.6"),
    ("FairSharingPreemptWithinNominal", True, "Beta", "0.17"),
    ("FairSharingPrioritizeNonBorrowing", True, "Beta", "0.17"),
    ("MultiKueue", True, "Beta", "0.9"),
    ("TopologyAwareScheduling", True, "Beta", "0.14"),
    ("LocalQueueMetrics", True, "Beta", "0.17"),
    ("TASProfileMixed", True, "Beta", "0.15"),
    ("AdmissionFairSharing", True, "Beta", "0.15"),
    ("TASFailedNodeReplacement", True, "Beta", "0.14"),
    ("ElasticJobsViaWorkloadSlices", True, "Beta", "0.18"),
    ("ElasticJobsViaWorkloadSlicesWithTAS", False, "Alpha", "0.17"),
    ("TASFailedNodeReplacementFailFast", True, "Beta", "0.14"),
    ("TASReplaceNodeOnPodTermination", True, "Beta", "0.14"),
    ("SkipReassignmentForPodOwnedWorkloads", True, "Beta", "0.19"),
    ("TASReplaceNodeDueToNotReadyOverFixedTime", False, "Deprecated", "0.19"),
    ("ManagedJobsNamespaceSelectorAlwaysRespected", True, "GA", "0.19", True),
    ("TASBalancedPlacement", False, "Alpha", "0.15"),
    ("TASAssignmentsEncodingByHostnamePrefix", True, "Beta", "0.19"),
    ("KueueDRAIntegration", True, "Beta", "0.18"),
    ("KueueDRAIntegrationExtendedResource", True, "Beta", "0.19"),
    ("KueueDRARejectWorkloadsWhenDRADisabled", True, "Beta", "0.18"),
    ("KueueDRAIntegrationPartitionableDevices", True, "Beta", "0.19"),
    ("KueueDRAIntegrationConsumableCapacity", False, "Alpha", "0.19"),
    ("MultiKueueAdaptersForCustomJobs", True, "Beta", "0.15"),
    ("WorkloadRequestUseMergePatch", False, "Alpha", "0.14"),
    ("MultiKueueKubeConfigPathValidation", True, "Beta", "0.20"),
    ("ReclaimablePods", True, "Beta", "0.15"),
    ("MultiKueueClusterProfile", False, "Alpha", "0.15"),
    ("FailureRecoveryPolicy", False, "Alpha", "0.15"),
    ("TLSOptions", True, "GA", "0.20", True),
    ("RemoveFinalizersWithStrictPatch", True, "Beta", "0.17"),
    ("TASReplaceNodeOnNodeTaints", True, "Beta", "0.17"),
    ("AssignQueueLabelsForPods", True, "Beta", "0.17"),
    ("TASMultiLayerTopology", True, "Beta", "0.19"),
    ("SchedulingEquivalenceHashing", True, "Beta", "0.18"),
    ("CustomMetricLabels", False, "Alpha", "0.17"),
    ("SparkApplicationIntegration", False, "Alpha", "0.17"),
    ("MultiKueueOrchestratedPreemption", False, "Alpha", "0.17"),
    ("PriorityBoost", False, "Alpha", "0.17"),
    ("AdmissionGatedBy", True, "Beta", "0.19"),
    ("ShortWorkloadNames", False, "Alpha", "0.17"),
    ("FastQuotaReleaseInPodIntegration", False, "Alpha", "0.17"),
    ("RejectUpdatesToCQWithInvalidOnFlavors", False, "Alpha", "0.18"),
    ("FinishOrphanedWorkloads", True, "Beta", "0.18"),
    ("MultiKueueIncrementalDispatcherConfig", True, "Beta", "0.19"),
    ("MultiKueueIncrementalDispatcherRespectConfigOrder", True, "Beta", "0.19"),
    ("ConcurrentAdmission", False, "Alpha", "0.18"),
    ("QuotaCheckStrategy", True, "Beta", "0.19"),
    ("MetricForWorkloadCreationLatency", True, "Beta", "0.18"),
    ("TASRespectNodeAffinityPreferred", False, "Alpha", "0.18"),
    ("MultiKueueManagerQuotaAutomation", False, "Alpha", "0.18"),
    ("WorkloadIdentifierAnnotations", True, "Beta", "0.18"),
    ("WorkloadPriorityClassDefaulting", True, "Beta", "0.20"),
    ("MetricsForCohorts", True, "Beta", "0.18"),
    ("CleanupProvisioningRequestsOnEviction", True, "Beta", "0.19"),
    ("TASHandleOverlappingFlavors", True, "Beta", "0.18"),
    ("UnadmittedWorkloadsObservability", True, "Beta", "0.19"),
    ("TASRecomputeAssignmentWithinSchedulingCycle", True, "Beta", "0.19"),
    ("UnadmittedWorkloadsExplicitStatus", False, "Beta", "0.19"),
    ("DeferRayServiceFinalizationForRedisCleanup", True, "Beta", "0.19"),
    ("TASCacheNodeMatchResults", True, "Beta", "0.19"),
    ("TASCachingRemainingResources", True, "Beta", "0.19"),
    ("TASCacheTopologyTree", True, "Beta", "0.20"),
    ("SchedulerLibraryIntegration", False, "Alpha", "0.19"),
    ("VectorizedResourceRequests", True, "Beta", "0.19"),
    ("WorkloadValidateResourcesAreNonNegative", True, "Beta", "0.20"),
    ("TASValidateWorkloadSliceSize", True, "Beta", "0.20"),
    ("WorkloadValidationForPodSetMetadata", True, "Beta", "0.20"),
    ("PrioritizePreemptorWorkloads", False, "Alpha", "0.20"),
    ("LWSImmutableGroupSize", True, "Beta", "0.20"),
    ("FlavorFungibilityPreserveScanProgress", True, "Beta", "0.20"),
    ("SkipAncestorCheckForDeletedWorkloads", True, "Beta", "0.20"),
    ("MultiKueueRemoteSpecSync", True, "Beta", "0.20"),
    ("RecomputeAssignmentUponPreemptionTargetsOverlap", True, "Beta", "0.20"),
    ("PodIntegrationValidateGroupOwner", True, "Beta", "0.18"),
    ("ValidateRayAndSparkJobUpdates", True, "Beta", "0.18"),
)

#: ``defaultFeatureGateDependencies``: a gate on the left needs every gate on the right.
DEPENDENCIES: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType({
    "TASFailedNodeReplacement": ("TopologyAwareScheduling",),
    "TASFailedNodeReplacementFailFast": ("TopologyAwareScheduling", "TASFailedNodeReplacement"),
    "TASReplaceNodeOnPodTermination": ("TopologyAwareScheduling", "TASFailedNodeReplacement"),
    "TASReplaceNodeDueToNotReadyOverFixedTime": ("TopologyAwareScheduling", "TASFailedNodeReplacement"),
    "TASBalancedPlacement": ("TopologyAwareScheduling",),
    "TASReplaceNodeOnNodeTaints": ("TopologyAwareScheduling",),
    "TASMultiLayerTopology": ("TopologyAwareScheduling",),
    "TASRespectNodeAffinityPreferred": ("TopologyAwareScheduling",),
    "UnadmittedWorkloadsExplicitStatus": ("UnadmittedWorkloadsObservability",),
    "TASHandleOverlappingFlavors": ("TopologyAwareScheduling",),
    "TASProfileMixed": ("TopologyAwareScheduling",),
    "TASRecomputeAssignmentWithinSchedulingCycle": ("TopologyAwareScheduling",),
    "ElasticJobsViaWorkloadSlicesWithTAS": ("ElasticJobsViaWorkloadSlices", "TopologyAwareScheduling"),
    "KueueDRAIntegrationExtendedResource": ("KueueDRAIntegration",),
    "KueueDRAIntegrationPartitionableDevices": ("KueueDRAIntegration",),
    "KueueDRAIntegrationConsumableCapacity": ("KueueDRAIntegration",),
    "FlavorFungibilityPreserveScanProgress": ("FlavorFungibility",),
})


@dataclass(frozen=True, slots=True)
class KueueGate:
    name: str
    default: bool
    stage: str
    since: str
    locked: bool = False


GATES: Final[Mapping[str, KueueGate]] = MappingProxyType({
    row[0]: KueueGate(row[0], row[1], row[2], row[3], len(row) > 4 and bool(row[4])) for row in _TABLE
})


class KueueGateError(ValueError):
    """Gates Kueue would refuse at start-up; the message is component-base's."""


@dataclass(frozen=True, slots=True)
class KueueFeatureGates:
    """Kueue's effective gates: the snapshot's defaults overlaid with the Configuration's ``featureGates``."""

    explicit: Mapping[str, bool] = field(default_factory=lambda: MappingProxyType({}))

    def enabled(self, name: str) -> bool:
        value = self.explicit.get(name)
        return GATES[name].default if value is None else value

    def __getitem__(self, name: str) -> bool:
        return self.enabled(name)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.explicit.items())))

    def as_dict(self) -> dict[str, bool]:
        return {name: self.enabled(name) for name in sorted(GATES)}


def parse_kueue_gates(values: Mapping[str, object]) -> KueueFeatureGates:
    """The gates of a Configuration's ``featureGates`` map, checked as Kueue checks them at start-up.

    Raises :class:`KueueGateError` with component-base's message. Values must already be booleans
    (the Configuration is decoded strictly: ``map[string]bool``).
    """
    explicit: dict[str, bool] = {}
    for name, value in values.items():
        gate = GATES.get(name)
        if gate is None:
            raise KueueGateError(f"unrecognized feature gate: {name}")
        if not isinstance(value, bool):
            raise KueueGateError(f"invalid value of {name}={value}: expected true or false")
        if gate.locked and value != gate.default:
            raise KueueGateError(
                f"cannot set feature gate {name} to {str(value).lower()}, feature is locked to {str(gate.default).lower()}"
            )
        explicit[name] = value
    gates = KueueFeatureGates(MappingProxyType(explicit))
    problems = []
    for name, needs in sorted(DEPENDENCIES.items()):
        if not gates.enabled(name):
            continue
        disabled = [dep for dep in needs if not gates.enabled(dep)]
        if disabled:
            problems.append(f"{name} is enabled, but depends on features that are disabled: [{' '.join(disabled)}]")
    if problems:
        raise KueueGateError(problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]")
    return gates


DEFAULT_GATES: Final = KueueFeatureGates()
