"""Every Kubeflow Trainer rule jobsetctl reports (imported by :mod:`jobsetctl.trainer.webhook`).

Ids start with ``trainjob-`` (TrainJob webhooks and expansion) or ``runtime-`` (runtime webhooks).
"""

from __future__ import annotations

from jobsetctl.diagnostics import Layer, Severity
from jobsetctl.rules.registry import define

E, W = Severity.ERROR, Severity.WARNING
WEBHOOK, REFERENCE, CONSEQUENCE = Layer.WEBHOOK, Layer.REFERENCE, Layer.CONSEQUENCE

# --- TrainJob, step A: runtime resolution (trainer.md §2.4) -----------------------------------------
RUNTIME_UNSUPPORTED = define(
    "trainjob-runtime-unsupported", WEBHOOK, E,
    "spec.runtimeRef names a kind/group other than TrainingRuntime or ClusterTrainingRuntime of trainer.kubeflow.org.",
    spec="trainer.md §2.4 step A",
)
RUNTIME_NOT_FOUND = define(
    "trainjob-runtime-not-found", REFERENCE, E,
    "The referenced TrainingRuntime (in the TrainJob's namespace) or ClusterTrainingRuntime does not exist.",
    spec="trainer.md §2.4 step A, §2.6",
    doc="Runtimes are looked up among the inputs, --runtimes files and the built-in catalog of trainer.md §4.",
)
RUNTIME_DEPRECATED = define(
    "trainjob-runtime-deprecated", REFERENCE, W,
    "The referenced ClusterTrainingRuntime is labelled trainer.kubeflow.org/support=deprecated.",
    spec="trainer.md §2.4 step A",
)

# --- TrainJob, step B: JobSet plugin -------------------------------------------------------------
INITIALIZER_JOB_MISSING = define(
    "trainjob-initializer-job-missing", WEBHOOK, E,
    "spec.initializer.dataset/model is set but the runtime has no replicated job named dataset-initializer/model-initializer.",
    spec="trainer.md §2.4 J1, J4",
)
INITIALIZER_CONTAINER_MISSING = define(
    "trainjob-initializer-container-missing", WEBHOOK, E,
    "The runtime's initializer job has no container or init container named like the job.",
    spec="trainer.md §2.4 J2, J5",
)
INITIALIZER_MOUNT_MISSING = define(
    "trainjob-initializer-volume-mount-missing", WEBHOOK, E,
    "The runtime's initializer container has no volumeMount named initializer.",
    spec="trainer.md §2.4 J3, J6",
)
PATCH_MANAGER_INVALID = define(
    "trainjob-patch-manager-invalid", WEBHOOK, E,
    "A runtimePatches[].manager is not a domain-prefixed path such as acme.io/foo.",
    spec="trainer.md §2.4 J7",
)
PATCH_UNKNOWN_JOB = define(
    "trainjob-patch-unknown-job", WEBHOOK, E,
    "A runtime patch names a replicated job the runtime does not have.",
    spec="trainer.md §2.4 J8",
)
PATCH_UNKNOWN_INIT_CONTAINER = define(
    "trainjob-patch-unknown-init-container", WEBHOOK, E,
    "A runtime patch names an init container the replicated job does not have.",
    spec="trainer.md §2.4 J9",
)
PATCH_UNKNOWN_CONTAINER = define(
    "trainjob-patch-unknown-container", WEBHOOK, E,
    "A runtime patch names a container the replicated job does not have.",
    spec="trainer.md §2.4 J10",
)
PATCH_ENV_FORBIDDEN = define(
    "trainjob-patch-env-forbidden", WEBHOOK, E,
    "A runtime patch sets env on the node, dataset-initializer or model-initializer container.",
    spec="trainer.md §2.4 J11",
    doc="Use spec.trainer.env and spec.initializer.*.env instead.",
)
PATCHES_WHILE_RUNNING = define(
    "trainjob-patches-changed-unsuspended", WEBHOOK, E,
    "runtimePatches changed by an update while the TrainJob is unsuspended before and after it.",
    spec="trainer.md §2.4 J12",
)
PATCHES_JOBSET_ACTIVE = define(
    "trainjob-patches-jobset-active", WEBHOOK, E,
    "runtimePatches changed while the existing JobSet still has active jobs.",
    spec="trainer.md §2.4 J13",
)

# --- TrainJob, step B: Torch / torchtune ---------------------------------------------------------
ENV_INJECTION_TARGET_MISSING = define(
    "trainjob-env-injection-target-missing", WEBHOOK, E,
    "An mlPolicy.torch.envInjection target container does not exist in its replicated job.",
    spec="trainer.md §2.4 T1",
)
TORCH_RESERVED_ENV = define(
    "trainjob-torch-reserved-env", WEBHOOK, E,
    "spec.trainer.env sets a PET_* variable the Torch plugin manages.",
    spec="trainer.md §2.4 T2",
)
TORCHTUNE_MODEL = define(
    "trainjob-torchtune-unsupported-model", WEBHOOK, E,
    "A torchtune TrainJob's runtime name does not denote a supported pretrained model.",
    spec="trainer.md §2.4 T3",
)
TORCHTUNE_NUM_NODES = define(
    "trainjob-torchtune-num-nodes", WEBHOOK, E,
    "Torchtune multi-node training is only supported for llama3_3/70B.",
    spec="trainer.md §2.4 T4",
)
TORCHTUNE_QLORA_MODEL = define(
    "trainjob-torchtune-qlora-unsupported", WEBHOOK, E,
    "QLoRA is not supported for qwen2_5/1.5B.",
    spec="trainer.md §2.4 T5",
)
TORCHTUNE_QLORA_DEVICES = define(
    "trainjob-torchtune-qlora-devices", WEBHOOK, E,
    "QLoRA on llama3_2 1B/3B needs a single device (numProcPerNode auto or 1, one GPU).",
    spec="trainer.md §2.4 T6",
)
TORCHTUNE_LORA_MULTINODE = define(
    "trainjob-torchtune-lora-multinode", WEBHOOK, E,
    "LoRA/QLoRA fine-tuning with torchtune is single-node only.",
    spec="trainer.md §2.4 T7",
)
TORCHTUNE_IMMUTABLE_ARG = define(
    "trainjob-torchtune-immutable-config", WEBHOOK, E,
    "spec.trainer.args overrides a config the torchtune runtime manages.",
    spec="trainer.md §2.4 T8",
)

# --- TrainJob, step B: MPI, XGBoost, Flux, Volcano -------------------------------------------------
MPI_NUM_NODES = define(
    "trainjob-mpi-num-nodes", WEBHOOK, E,
    "numNodes >= 2 with runLauncherAsNode needs both a launcher and a node replicated job.",
    spec="trainer.md §2.4 M1",
)
MPI_RESERVED_ENV = define(
    "trainjob-mpi-reserved-env", WEBHOOK, E,
    "spec.trainer.env sets an OpenMPI variable the MPI plugin manages.",
    spec="trainer.md §2.4 M2",
)
XGBOOST_RESERVED_ENV = define(
    "trainjob-xgboost-reserved-env", WEBHOOK, E,
    "spec.trainer.env sets a DMLC_* variable the XGBoost plugin manages.",
    spec="trainer.md §2.4 XGBoost",
)
FLUX_RESERVED_INIT_CONTAINER = define(
    "trainjob-flux-reserved-init-container", WEBHOOK, E,
    "The Flux runtime's node job already has an init container named flux-installer.",
    spec="trainer.md §2.4 Flux",
)
VOLCANO_EMPTY_QUEUE = define(
    "trainjob-volcano-empty-queue", WEBHOOK, E,
    "The JobSet annotation scheduling.volcano.sh/queue-name is set to an empty string.",
    spec="trainer.md §2.4 Volcano",
)
VOLCANO_PRIORITY_CLASS_MISSING = define(
    "trainjob-volcano-priority-class-missing", WEBHOOK, E,
    "A pod template of a Volcano runtime names a PriorityClass that does not exist.",
    spec="trainer.md §2.4 Volcano",
    doc="Checked only when the inputs contain at least one PriorityClass: offline, the absence of all "
    "PriorityClasses says nothing about the cluster.",
)

# --- TrainJob: what happens after admission (the consequence layer, issue #13) -----------------------
JOBSET_REJECTED = define(
    "trainjob-jobset-rejected", CONSEQUENCE, E,
    "The TrainJob is accepted, but JobSet admission refuses the JobSet its controller creates.",
    spec="trainer.md §2.7",
    doc="Trainer admits the TrainJob without building its JobSet (kubeflow/trainer "
    "test/integration/webhooks/trainjob_test.go admits a 63-character name); the JobSet webhook refuses "
    "the JobSet later, seen only as a TrainJobResourcesCreationFailed event on every reconcile: the "
    "TrainJob never runs. `validate --admission-only` leaves it out, as `kubectl apply --dry-run=server` does.",
)
RECONCILE_FAILURE = define(
    "trainjob-reconcile-failure", CONSEQUENCE, E,
    "The TrainJob is accepted, but the Trainer controller fails to build its objects: it never runs.",
    spec="trainer.md §1.4, §3.16",
)

# --- TrainingRuntime / ClusterTrainingRuntime webhooks (trainer.md §2.5) ----------------------------
RUNTIME_ANCESTOR_REPLICAS = define(
    "runtime-ancestor-replicas", WEBHOOK, E,
    "A replicated job with a trainjob-ancestor-step label has replicas other than 1.",
    spec="trainer.md §2.5",
)
RUNTIME_ANCESTOR_CONTAINER = define(
    "runtime-ancestor-container-missing", WEBHOOK, E,
    "A replicated job with a trainjob-ancestor-step label lacks the container that ancestor requires.",
    spec="trainer.md §2.5",
)
RUNTIME_SELF_DEPRECATED = define(
    "runtime-deprecated", WEBHOOK, W,
    "A ClusterTrainingRuntime created with the trainer.kubeflow.org/support=deprecated label.",
    spec="trainer.md §2.5",
)
