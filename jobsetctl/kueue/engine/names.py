"""Names Kueue writes on objects: condition types, reasons, labels, annotations, scheduling gates.

Spelled exactly as ``apis/kueue/v1beta2/*_types.go`` and ``pkg/controller/constants`` at the spec's
commit ff69552 spell them (scheduling.md §2). Grouped by what they name; the names the API side also uses
(group, labels, TAS annotations, the topology gate) are its :mod:`jobsetctl.kueue.api`'s.
"""

from __future__ import annotations

from typing import Final

from jobsetctl.kueue import api

GROUP: Final = api.GROUP
API_VERSION: Final = api.API_VERSION

# ---- Workload condition types (workload_types.go) -----------------------------------------------------
QUOTA_RESERVED: Final = "QuotaReserved"
ADMITTED: Final = "Admitted"
FINISHED: Final = "Finished"
PODS_READY: Final = "PodsReady"
EVICTED: Final = "Evicted"
PREEMPTED: Final = "Preempted"
REQUEUED: Final = "Requeued"
DEACTIVATION_TARGET: Final = "DeactivationTarget"

# ---- QuotaReserved=False reasons (UnadmittedWorkloadsObservability, beta and on at ff69552) ----------
NO_MATCHING_FLAVOR: Final = "NoMatchingFlavor"
WAITING_FOR_QUOTA: Final = "WaitingForQuota"
EXCEEDS_MAX_QUOTA: Final = "ExceedsMaxQuota"
TOPOLOGY_PLACEMENT_FAILED: Final = "TopologyPlacementFailed"
WAITING_FOR_PREEMPTED_WORKLOADS: Final = "WaitingForPreemptedWorkloads"
MISCONFIGURED: Final = "Misconfigured"
SUSPENDED: Final = "Suspended"
PENDING_EVALUATION: Final = "PendingEvaluation"
WAITING_FOR_PODS_READY: Final = "WaitingForPodsReady"
#: Admitted=False reasons.
NO_RESERVATION: Final = "NoReservation"
UNSATISFIED_ADMISSION_CHECKS: Final = "UnsatisfiedAdmissionChecks"

# ---- eviction reasons (Evicted condition, workload_types.go) ------------------------------------------
EVICTED_BY_PREEMPTION: Final = "Preempted"
EVICTED_BY_PODS_READY_TIMEOUT: Final = "PodsReadyTimeout"
EVICTED_BY_ADMISSION_CHECK: Final = "AdmissionCheck"
EVICTED_BY_CLUSTER_QUEUE_STOPPED: Final = "ClusterQueueStopped"
EVICTED_BY_LOCAL_QUEUE_STOPPED: Final = "LocalQueueStopped"
EVICTED_DUE_TO_NODE_FAILURES: Final = "NodeFailures"
DEACTIVATED: Final = "Deactivated"
REACTIVATED: Final = "Reactivated"
BACKOFF_FINISHED: Final = "BackoffFinished"
REQUEUING_LIMIT_EXCEEDED: Final = "RequeuingLimitExceeded"
#: PodsReady condition reasons.
WAIT_FOR_START: Final = "WaitForStart"
WAIT_FOR_RECOVERY: Final = "WaitForRecovery"
STARTED: Final = "Started"
RECOVERED: Final = "Recovered"
#: Finished condition reasons.
FINISHED_SUCCEEDED: Final = "Succeeded"
FINISHED_FAILED: Final = "Failed"

# ---- Preempted condition reasons -------------------------------------------------------------------
IN_CLUSTER_QUEUE: Final = "InClusterQueue"
IN_COHORT_RECLAMATION: Final = "InCohortReclamation"
IN_COHORT_FAIR_SHARING: Final = "InCohortFairSharing"
IN_COHORT_RECLAIM_WHILE_BORROWING: Final = "InCohortReclaimWhileBorrowing"
#: preemption.go ``HumanReadablePreemptionReasons``.
HUMAN_READABLE_PREEMPTION_REASONS: Final = {
    IN_CLUSTER_QUEUE: "prioritization in the ClusterQueue",
    IN_COHORT_RECLAMATION: "reclamation within the cohort",
    IN_COHORT_FAIR_SHARING: "Fair Sharing within the cohort",
    IN_COHORT_RECLAIM_WHILE_BORROWING: "reclamation within the cohort while borrowing",
    "": "UNKNOWN",
}

# ---- admission check states -------------------------------------------------------------------------
CHECK_PENDING: Final = "Pending"
CHECK_READY: Final = "Ready"
CHECK_RETRY: Final = "Retry"
CHECK_REJECTED: Final = "Rejected"

# ---- ClusterQueue ---------------------------------------------------------------------------------------
STRICT_FIFO: Final = "StrictFIFO"
BEST_EFFORT_FIFO: Final = "BestEffortFIFO"
NEVER: Final = "Never"
ANY: Final = "Any"
LOWER_PRIORITY: Final = "LowerPriority"
LOWER_OR_NEWER_EQUAL_PRIORITY: Final = "LowerOrNewerEqualPriority"
MAY_STOP_SEARCH: Final = "MayStopSearch"
TRY_NEXT_FLAVOR: Final = "TryNextFlavor"
BORROWING_OVER_PREEMPTION: Final = "BorrowingOverPreemption"
PREEMPTION_OVER_BORROWING: Final = "PreemptionOverBorrowing"
CQ_ACTIVE: Final = "Active"

# ---- labels and annotations ---------------------------------------------------------------------------
QUEUE_NAME_LABEL: Final = api.QUEUE_LABEL
PRIORITY_CLASS_LABEL: Final = api.PRIORITY_CLASS_LABEL
JOB_UID_LABEL: Final = api.JOB_UID_LABEL
POD_SET_LABEL: Final = "kueue.x-k8s.io/podset"
LOCAL_QUEUE_LABEL: Final = "kueue.x-k8s.io/local-queue-name"
CLUSTER_QUEUE_LABEL: Final = "kueue.x-k8s.io/cluster-queue-name"
WORKLOAD_ANNOTATION: Final = api.WORKLOAD_ANNOTATION
TOPOLOGY_SCHEDULING_GATE: Final = api.TOPOLOGY_SCHEDULING_GATE
POD_INDEX_OFFSET_ANNOTATION: Final = "kueue.x-k8s.io/pod-index-offset"
REQUIRED_TOPOLOGY_ANNOTATION: Final = api.PODSET_REQUIRED_TOPOLOGY
PREFERRED_TOPOLOGY_ANNOTATION: Final = api.PODSET_PREFERRED_TOPOLOGY
UNCONSTRAINED_TOPOLOGY_ANNOTATION: Final = api.PODSET_UNCONSTRAINED_TOPOLOGY
SLICE_REQUIRED_TOPOLOGY_ANNOTATION: Final = api.PODSET_SLICE_REQUIRED_TOPOLOGY
SLICE_SIZE_ANNOTATION: Final = api.PODSET_SLICE_SIZE
#: The TrainJob runtime patch Kueue owns (trainjob_controller.go ``runtimePatchManagerName``).
TRAINJOB_RUNTIME_PATCH_MANAGER: Final = "kueue.x-k8s.io/manager"
HOSTNAME_LABEL: Final = api.HOSTNAME_LABEL
