"""Names Kueue fixes (apis/kueue/v1beta2, pkg/controller/constants, scheduling.md §2.1, §2.5)."""

from __future__ import annotations

from typing import Final

GROUP: Final = "kueue.x-k8s.io"
V1BETA2: Final = "v1beta2"
V1BETA1: Final = "v1beta1"
#: Served versions, newest (and stored) first.
VERSIONS: Final = (V1BETA2, V1BETA1)
STORAGE_VERSION: Final = V1BETA2
API_VERSION: Final = f"{GROUP}/{V1BETA2}"

CLUSTER_QUEUE: Final = "ClusterQueue"
LOCAL_QUEUE: Final = "LocalQueue"
COHORT: Final = "Cohort"
RESOURCE_FLAVOR: Final = "ResourceFlavor"
WORKLOAD_PRIORITY_CLASS: Final = "WorkloadPriorityClass"
TOPOLOGY: Final = "Topology"
ADMISSION_CHECK: Final = "AdmissionCheck"
WORKLOAD: Final = "Workload"
KINDS: Final = (CLUSTER_QUEUE, LOCAL_QUEUE, COHORT, RESOURCE_FLAVOR, WORKLOAD_PRIORITY_CLASS, TOPOLOGY, ADMISSION_CHECK,
                WORKLOAD)
CLUSTER_SCOPED_KINDS: Final = frozenset({CLUSTER_QUEUE, COHORT, RESOURCE_FLAVOR, WORKLOAD_PRIORITY_CLASS, TOPOLOGY,
                                         ADMISSION_CHECK})

# --- labels and annotations on jobs (pkg/controller/constants/constants.go) ---
QUEUE_LABEL: Final = "kueue.x-k8s.io/queue-name"
PRIORITY_CLASS_LABEL: Final = "kueue.x-k8s.io/priority-class"
PREBUILT_WORKLOAD: Final = "kueue.x-k8s.io/prebuilt-workload-name"
JOB_UID_LABEL: Final = "kueue.x-k8s.io/job-uid"
MAX_EXEC_TIME_LABEL: Final = "kueue.x-k8s.io/max-exec-time-seconds"
ELASTIC_JOB_ANNOTATION: Final = "kueue.x-k8s.io/elastic-job"
#: ``ElasticJobSchedulingGate``: the Job webhook gates an elastic Job's pods with it (same text as the annotation).
ELASTIC_JOB_SCHEDULING_GATE: Final = "kueue.x-k8s.io/elastic-job"
ADMISSION_GATED_BY_ANNOTATION: Final = "kueue.x-k8s.io/admission-gated-by"
PROVREQ_ANNOTATION_PREFIX: Final = "provreq.kueue.x-k8s.io/"
#: ``DefaultLocalQueueName``: a job without queue-name goes to the LocalQueue of this name, if its namespace has one.
DEFAULT_LOCAL_QUEUE: Final = "default"
#: ``DefaultWorkloadPriorityClassName`` (gate WorkloadPriorityClassDefaulting).
DEFAULT_WORKLOAD_PRIORITY_CLASS: Final = "default"

# --- TAS podset annotations (apis/kueue/v1beta2/topology_types.go) ---
PODSET_REQUIRED_TOPOLOGY: Final = "kueue.x-k8s.io/podset-required-topology"
PODSET_PREFERRED_TOPOLOGY: Final = "kueue.x-k8s.io/podset-preferred-topology"
PODSET_UNCONSTRAINED_TOPOLOGY: Final = "kueue.x-k8s.io/podset-unconstrained-topology"
PODSET_SLICE_REQUIRED_TOPOLOGY: Final = "kueue.x-k8s.io/podset-slice-required-topology"
PODSET_SLICE_SIZE: Final = "kueue.x-k8s.io/podset-slice-size"
PODSET_SLICE_REQUIRED_TOPOLOGY_CONSTRAINTS: Final = "kueue.x-k8s.io/podset-slice-required-topology-constraints"
PODSET_GROUP_NAME: Final = "kueue.x-k8s.io/podset-group-name"
TOPOLOGY_SCHEDULING_GATE: Final = "kueue.x-k8s.io/topology"
WORKLOAD_ANNOTATION: Final = "kueue.x-k8s.io/workload"
#: Every annotation a job's pod template may carry for TAS.
TAS_ANNOTATIONS: Final = (PODSET_REQUIRED_TOPOLOGY, PODSET_PREFERRED_TOPOLOGY, PODSET_UNCONSTRAINED_TOPOLOGY,
                          PODSET_SLICE_REQUIRED_TOPOLOGY, PODSET_SLICE_SIZE, PODSET_SLICE_REQUIRED_TOPOLOGY_CONSTRAINTS,
                          PODSET_GROUP_NAME)

# --- finalizers, names ---
#: ``ResourceInUseFinalizerName``: on ClusterQueues, ResourceFlavors (their webhooks) and Workloads.
RESOURCE_IN_USE_FINALIZER: Final = "kueue.x-k8s.io/resource-in-use"
#: ``MaxPodSets`` (jobframework/constants.go; the Workload CRD's podSets maxItems).
MAX_POD_SETS: Final = 18
HOSTNAME_LABEL: Final = "kubernetes.io/hostname"

# --- where pod indexes come from (TAS topologyRequest) ---
JOB_COMPLETION_INDEX_ANNOTATION: Final = "batch.kubernetes.io/job-completion-index"
JOBSET_JOB_INDEX_LABEL: Final = "jobset.sigs.k8s.io/job-index"


def kueue_group(api_version: object) -> bool:
    return isinstance(api_version, str) and api_version.startswith(GROUP + "/")
