"""Kubeflow Trainer v2 API constants (trainer.md §1.4, §1.5, §1.6).

Every name, label key, env name, port and message fragment the Trainer webhooks and the expansion use
lives here once, so the admission checks and ``render``/``simulate`` agree by construction.
"""

from __future__ import annotations

from typing import Final

GROUP: Final = "trainer.kubeflow.org"
VERSION: Final = "v1alpha1"
API_VERSION: Final = f"{GROUP}/{VERSION}"

TRAINJOB: Final = "TrainJob"
TRAINING_RUNTIME: Final = "TrainingRuntime"
CLUSTER_TRAINING_RUNTIME: Final = "ClusterTrainingRuntime"
#: Lower-case plural resources, as they appear in apiserver "not found" errors (trainer.md §2.4 step A).
TRAINING_RUNTIME_RESOURCE: Final = "trainingruntimes.trainer.kubeflow.org"
CLUSTER_TRAINING_RUNTIME_RESOURCE: Final = "clustertrainingruntimes.trainer.kubeflow.org"

# --- TrainJob defaults (CRD, trainer.md §1.2, §3.3) -------------------------------------------------
MANAGED_BY_TRAINER: Final = "trainer.kubeflow.org/trainjob-controller"
MANAGED_BY_MULTIKUEUE: Final = "kueue.x-k8s.io/multikueue"
DEFAULT_RUNTIME_API_GROUP: Final = GROUP
DEFAULT_RUNTIME_KIND: Final = CLUSTER_TRAINING_RUNTIME

# --- Labels with meaning (trainer.md §0, §1.5, §1.6) -----------------------------------------------
#: On ``replicatedJobs[].template.metadata.labels`` (the Job template, not the pod template).
LABEL_ANCESTOR: Final = "trainer.kubeflow.org/trainjob-ancestor-step"
ANCESTOR_DATASET_INITIALIZER: Final = "dataset-initializer"
ANCESTOR_MODEL_INITIALIZER: Final = "model-initializer"
ANCESTOR_TRAINER: Final = "trainer"
ANCESTORS: Final = (ANCESTOR_DATASET_INITIALIZER, ANCESTOR_MODEL_INITIALIZER, ANCESTOR_TRAINER)
LABEL_FRAMEWORK: Final = "trainer.kubeflow.org/framework"
LABEL_SUPPORT: Final = "trainer.kubeflow.org/support"
SUPPORT_DEPRECATED: Final = "deprecated"
LABEL_WEBHOOK_VALIDATION: Final = "trainer.kubeflow.org/webhook-validation"
WEBHOOK_VALIDATION_DISABLED: Final = "disabled"
DEPRECATION_POLICY_URL: Final = (
    "https://trainer.kubeflow.org/en/latest/operator-guides/runtime.html#runtime-deprecation-policy"
)

# --- Job and container names (trainer.md §1.6) -----------------------------------------------------
NODE: Final = "node"
LAUNCHER: Final = "launcher"
DATASET_INITIALIZER: Final = "dataset-initializer"
MODEL_INITIALIZER: Final = "model-initializer"
#: The main container the runtime webhook requires for each ancestor (trainer.md §2.5).
ANCESTOR_CONTAINER: Final = {
    ANCESTOR_TRAINER: NODE,
    ANCESTOR_DATASET_INITIALIZER: DATASET_INITIALIZER,
    ANCESTOR_MODEL_INITIALIZER: MODEL_INITIALIZER,
}
INITIALIZER_VOLUME: Final = "initializer"
DATASET_MOUNT_PATH: Final = "/workspace/dataset"
MODEL_MOUNT_PATH: Final = "/workspace/model"
ENV_STORAGE_URI: Final = "STORAGE_URI"

TRAINER_PORT: Final = 29500
DEFAULT_JOB_REPLICAS: Final = 1
JOB_COMPLETION_INDEX_FIELD_PATH: Final = "metadata.annotations['batch.kubernetes.io/job-completion-index']"

# --- Torch (trainer.md §3.8.2) ---------------------------------------------------------------------
TORCH_ENV_NUM_NODES: Final = "PET_NNODES"
TORCH_ENV_NPROC_PER_NODE: Final = "PET_NPROC_PER_NODE"
TORCH_ENV_NODE_RANK: Final = "PET_NODE_RANK"
TORCH_ENV_MASTER_ADDR: Final = "PET_MASTER_ADDR"
TORCH_ENV_MASTER_PORT: Final = "PET_MASTER_PORT"
TORCH_RESERVED_ENV: Final = frozenset(
    {TORCH_ENV_NUM_NODES, TORCH_ENV_NPROC_PER_NODE, TORCH_ENV_NODE_RANK, TORCH_ENV_MASTER_ADDR, TORCH_ENV_MASTER_PORT}
)

# --- Torchtune (trainer.md §1.6, §3.8.3) -----------------------------------------------------------
TORCHTUNE_ENTRYPOINT: Final = ("tune", "run")
TORCHTUNE_ARG_RDZV_ENDPOINT: Final = "--rdzv_endpoint"
TORCHTUNE_ARG_CONFIG: Final = "--config"
TORCHTUNE_MODEL_LLAMA3_2_1B: Final = "llama3_2/1B"
TORCHTUNE_MODEL_LLAMA3_2_3B: Final = "llama3_2/3B"
TORCHTUNE_MODEL_LLAMA3_3_70B: Final = "llama3_3/70B"
TORCHTUNE_MODEL_QWEN2_5_1_5B: Final = "qwen2_5/1.5B"
TORCHTUNE_SUPPORTED_MODELS: Final = frozenset(
    {TORCHTUNE_MODEL_LLAMA3_2_1B, TORCHTUNE_MODEL_LLAMA3_2_3B, TORCHTUNE_MODEL_LLAMA3_3_70B, TORCHTUNE_MODEL_QWEN2_5_1_5B}
)
#: Runtime command items kept when torchtune rebuilds the command, matched on the part before ``=``.
TORCHTUNE_IMMUTABLE_CONFIGS: Final = frozenset(
    {"output_dir", "tokenizer.path", "checkpointer.checkpoint_dir", "tokenizer.merges_file"}
)
TORCHTUNE_LORA_ATTN_MODULES: Final = "model.lora_attn_modules"
TORCHTUNE_QUANTIZE_BASE: Final = "model.quantize_base"
TORCHTUNE_USE_DORA: Final = "model.use_dora"
RECIPE_FULL_SINGLE_DEVICE: Final = "full_finetune_single_device"
RECIPE_FULL_DISTRIBUTED: Final = "full_finetune_distributed"
RECIPE_LORA_SINGLE_DEVICE: Final = "lora_finetune_single_device"
RECIPE_LORA_DISTRIBUTED: Final = "lora_finetune_distributed"
SUFFIX_FULL_SINGLE_DEVICE: Final = "_full_single_device"
SUFFIX_FULL_MULTI_DEVICE: Final = "_full"
SUFFIX_FULL_MULTI_NODE: Final = "_full_multinode"
SUFFIX_LORA_SINGLE_DEVICE: Final = "_lora_single_device"
SUFFIX_QLORA_SINGLE_DEVICE: Final = "_qlora_single_device"
SUFFIX_LORA_DISTRIBUTED: Final = "_lora"
SUFFIX_QLORA_DISTRIBUTED: Final = "_qlora"

# --- MPI (trainer.md §3.8.4) -----------------------------------------------------------------------
MPI_IMPLEMENTATION_OPENMPI: Final = "OpenMPI"
MPI_DEFAULT_SSH_AUTH_MOUNT_PATH: Final = "/root/.ssh"
MPI_SSH_AUTH_SECRET_SUFFIX: Final = "-mpi-ssh-auth"
MPI_SSH_AUTH_VOLUME: Final = "mpi-ssh-auth"
MPI_SSH_PRIVATE_KEY: Final = "ssh-privatekey"
MPI_SSH_PUBLIC_KEY: Final = "ssh-publickey"
MPI_SSH_PRIVATE_KEY_FILE: Final = "id_rsa"
MPI_SSH_PUBLIC_KEY_FILE: Final = "id_rsa.pub"
MPI_SSH_AUTHORIZED_KEYS: Final = "authorized_keys"
MPI_SSH_AUTH_DEFAULT_MODE: Final = 0o400
MPI_SSH_PRIVATE_KEY_MODE: Final = 0o640
MPI_SSH_PUBLIC_KEY_MODE: Final = 0o644
MPI_HOSTFILE_DIR: Final = "/etc/mpi"
MPI_HOSTFILE_NAME: Final = "hostfile"
MPI_HOSTFILE_MODE: Final = 0o444
MPI_HOSTFILE_CONFIGMAP_SUFFIX: Final = "-mpi-hostfile"
MPI_HOSTFILE_VOLUME: Final = "mpi-hostfile"
OPENMPI_ENV_HOSTFILE: Final = "OMPI_MCA_orte_default_hostfile"
OPENMPI_ENV_RSH_ARGS: Final = "OMPI_MCA_plm_rsh_args"
OPENMPI_ENV_KEEP_FQDN: Final = "OMPI_MCA_orte_keep_fqdn_hostnames"
OPENMPI_ENV_DEFAULT_SLOTS: Final = "OMPI_MCA_orte_set_default_slots"
OPENMPI_RSH_ARGS: Final = "-o ConnectionAttempts=10"
MPI_RESERVED_ENV: Final = frozenset(
    {OPENMPI_ENV_HOSTFILE, OPENMPI_ENV_RSH_ARGS, OPENMPI_ENV_KEEP_FQDN, OPENMPI_ENV_DEFAULT_SLOTS}
)
SECRET_TYPE_SSH_AUTH: Final = "kubernetes.io/ssh-auth"

# --- JAX and XGBoost (trainer.md §3.8.5, §3.8.6) ---------------------------------------------------
JAX_ENV_NUM_PROCESSES: Final = "JAX_NUM_PROCESSES"
JAX_ENV_PROCESS_ID: Final = "JAX_PROCESS_ID"
JAX_ENV_COORDINATOR_ADDRESS: Final = "JAX_COORDINATOR_ADDRESS"
XGBOOST_ENV_TRACKER_URI: Final = "DMLC_TRACKER_URI"
XGBOOST_ENV_TRACKER_PORT: Final = "DMLC_TRACKER_PORT"
XGBOOST_ENV_TASK_ID: Final = "DMLC_TASK_ID"
XGBOOST_ENV_NUM_WORKER: Final = "DMLC_NUM_WORKER"
XGBOOST_RESERVED_ENV: Final = frozenset(
    {XGBOOST_ENV_TRACKER_URI, XGBOOST_ENV_TRACKER_PORT, XGBOOST_ENV_TASK_ID, XGBOOST_ENV_NUM_WORKER}
)

# --- Flux (trainer.md §3.8.7; names confirmed in kubeflow/trainer pkg/constants/constants.go) ------
FLUX_INSTALLER_CONTAINER: Final = "flux-installer"
FLUX_INSTALLER_IMAGE: Final = "ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy"
FLUX_NETWORK_DEVICE: Final = "eth0"
FLUX_QUEUE_POLICY: Final = "fcfs"
FLUX_INSTALL_VOLUME: Final = "flux-install"
FLUX_INSTALL_PATH: Final = "/mnt/flux"
#: Upstream names this constant like a volume but uses it as the config mount *path*.
FLUX_CONFIG_PATH: Final = "/etc/flux-config"
FLUX_CURVE_VOLUME: Final = "flux-curve"
FLUX_CURVE_PATH: Final = "/curve"
FLUX_MEMORY_VOLUME: Final = "shared-memory"
FLUX_MEMORY_PATH: Final = "/dev/shm"
FLUX_SPACK_VOLUME: Final = "spack-install"
FLUX_SPACK_PATH: Final = "/opt/software"
FLUX_ENTRYPOINT_SUFFIX: Final = "-flux-entrypoint"
FLUX_CURVE_SUFFIX: Final = "-flux-curve"
#: Settings a TrainJob (or the runtime's node container) may override through env of the same name.
FLUX_SETTING_DEFAULTS: Final = {
    "FLUX_VIEW_IMAGE": FLUX_INSTALLER_IMAGE,
    "FLUX_NETWORK_DEVICE": FLUX_NETWORK_DEVICE,
    "FLUX_QUEUE_POLICY": FLUX_QUEUE_POLICY,
}

# --- Gang scheduling (trainer.md §3.10) ------------------------------------------------------------
COSCHEDULING_POD_GROUP_LABEL: Final = "scheduling.x-k8s.io/pod-group"
COSCHEDULING_API_VERSION: Final = "scheduling.x-k8s.io/v1alpha1"
VOLCANO_GROUP_NAME_ANNOTATION: Final = "scheduling.k8s.io/group-name"
VOLCANO_QUEUE_NAME_ANNOTATION: Final = "scheduling.volcano.sh/queue-name"
VOLCANO_API_VERSION: Final = "scheduling.volcano.sh/v1beta1"
DEFAULT_SCHEDULE_TIMEOUT_SECONDS: Final = 60
VOLCANO_DEFAULT_TOPOLOGY_MODE: Final = "hard"
VOLCANO_DEFAULT_HIGHEST_TIER: Final = 1
#: PriorityClasses that exist in every cluster; the Volcano check stops at the first one it meets.
SYSTEM_PRIORITY_CLASSES: Final = frozenset({"system-cluster-critical", "system-node-critical"})

# --- TrainJobStatus plugin (trainer.md §3.11; defaults of the Trainer manager configuration) ------
STATUS_ENV_URL: Final = "KUBEFLOW_TRAINER_SERVER_URL"
STATUS_ENV_CA_CERT: Final = "KUBEFLOW_TRAINER_SERVER_CA_CERT"
STATUS_ENV_TOKEN: Final = "KUBEFLOW_TRAINER_SERVER_TOKEN"
STATUS_MOUNT_PATH: Final = "/var/run/secrets/kubeflow/trainer"
STATUS_TOKEN_VOLUME: Final = "kubeflow-trainer-token"
STATUS_TOKEN_EXPIRY_SECONDS: Final = 3600
STATUS_CA_KEY: Final = "ca.crt"
STATUS_TOKEN_FILE: Final = "token"
STATUS_TLS_CONFIGMAP_SUFFIX: Final = "-tls-config"
#: Manager configuration defaults (``certManagement.webhookServiceName``, operator namespace,
#: ``statusServer.port``): a cluster may configure others; offline we can only assume the defaults.
STATUS_WEBHOOK_SERVICE: Final = "kubeflow-trainer-controller-manager"
STATUS_OPERATOR_NAMESPACE: Final = "kubeflow-system"
STATUS_SERVER_PORT: Final = 10443

# --- Runtime snapshot (trainer.md §3.2) ------------------------------------------------------------
RUNTIME_SNAPSHOT_SUFFIX: Final = "-runtime-snapshot"
RUNTIME_SNAPSHOT_KEY: Final = "runtime"

# --- Status conditions (trainer.md §1.4) -----------------------------------------------------------
CONDITION_SUSPENDED: Final = "Suspended"
CONDITION_COMPLETE: Final = "Complete"
CONDITION_FAILED: Final = "Failed"
REASON_SUSPENDED: Final = "Suspended"
REASON_RESUMED: Final = "Resumed"
REASON_RUNTIME_NOT_SUPPORTED: Final = "TrainingRuntimeNotSupported"
REASON_DEADLINE_EXCEEDED: Final = "DeadlineExceeded"
MESSAGE_SUSPENDED: Final = "TrainJob is suspended"
MESSAGE_RESUMED: Final = "TrainJob is resumed"
MESSAGE_DEADLINE_EXCEEDED: Final = "TrainJob exceeded its active deadline"
EVENT_RESOURCES_CREATION_FAILED: Final = "TrainJobResourcesCreationFailed"
EVENT_ACTION_RECONCILING: Final = "Reconciling"
EVENT_MESSAGE_PREFIX: Final = "TrainJob resources reconciliation failed: "
#: Reconcile-error events are truncated to this many characters, then `` ...`` is appended.
EVENT_MESSAGE_LIMIT: Final = 950

#: Field manager the controller applies every object with (trainer.md §3.1 step 7).
FIELD_MANAGER: Final = "trainer"


def unsupported_runtime_message(group_kind: str) -> str:
    return f"unsupported runtime: {group_kind}"


def group_kind(kind: str, group: str) -> str:
    """apimachinery ``schema.GroupKind.String()``: ``Kind.group``, or just ``Kind`` for the empty group."""
    return f"{kind}.{group}" if group else kind


def reconcile_event_message(error: str) -> str:
    """The Warning event a reconcile error produces (trainer.md §1.4)."""
    message = EVENT_MESSAGE_PREFIX + error
    if len(message) > EVENT_MESSAGE_LIMIT:
        message = message[:EVENT_MESSAGE_LIMIT] + " ..."
    return message
