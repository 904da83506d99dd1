"""TrainJob webhook checks of the ML and scheduling plugins (trainer.md §2.4 T1–T8, M1–M2, XGBoost,
Flux, Volcano). Go runs the plugins in map order; we report in a fixed order: Torch, MPI, XGBoost,
Flux, Volcano (JAX validates nothing)."""

from __future__ import annotations

from typing import Any

from jobsetctl.diagnostics import Finding
from jobsetctl.kinds.interface import ClusterView
from jobsetctl.kube import priority
from jobsetctl.kube.field import Path, forbidden, invalid, path_string
from jobsetctl.trainer import api
from jobsetctl.trainer import rules as r
from jobsetctl.trainer.expand import torchtune
from jobsetctl.trainer.expand.info import RuntimeInfo
from jobsetctl.trainer.expand.model import TrainJobView, as_dict, as_str, containers_of, pod_spec_of
from jobsetctl.trainer.expand.resources import gpu_count
from jobsetctl.trainer.expand.torch import env_injection_targets

_RUNTIME_NAME: Path = ("spec", "runtimeRef", "name")
#: Upstream field paths of the plugin errors (also where the finding points, issue #13).
_NAME = "spec.runtimeRef.name"
_NUM_NODES = "spec.trainer.numNodes"


def _go_list(names: set[str]) -> str:
    """Go's ``%v`` of a sorted ``[]string``: ``[A B]``."""
    return "[" + " ".join(sorted(names)) + "]"


def _reserved_env(trainjob: TrainJobView, reserved: frozenset[str], rule: Any) -> list[Finding]:
    if trainjob.trainer is None:
        return []
    found = {as_str(env.get("name")) for env in trainjob.trainer_env} & reserved
    if not found:
        return []
    detail = f"must not have reserved envs, invalid envs configured: {_go_list(found)}"
    env = trainjob.trainer.get("env", [])
    return [rule.finding(invalid("spec.trainer.env", env, detail), path="spec.trainer.env")]


def check_torch(trainjob: TrainJobView, info: RuntimeInfo) -> list[Finding]:
    """T1–T8 (only with ``mlPolicy.torch``)."""
    policy = info.policy("torch")
    if policy is None:
        return []
    findings: list[Finding] = []
    for target, job_name, container_name in env_injection_targets(policy):
        pod_set = info.pod_set_by_name(job_name)
        if pod_set is None or pod_set.container_or_init(container_name) is None:
            detail = f'envInjection target podSet "{job_name}" container "{container_name}" not found in runtime template'
            findings.append(r.ENV_INJECTION_TARGET_MISSING.finding(
                invalid("spec.runtimeRef", target, detail), path="spec.runtimeRef", at=_RUNTIME_NAME,
            ))
    if trainjob.trainer is None:
        return findings
    findings += _reserved_env(trainjob, api.TORCH_RESERVED_ENV, r.TORCH_RESERVED_ENV)
    if trainjob.is_torchtune():
        findings += _check_torchtune(trainjob, info)
    return findings


def _check_torchtune(trainjob: TrainJobView, info: RuntimeInfo) -> list[Finding]:
    findings: list[Finding] = []
    runtime_name = trainjob.runtime_ref.name
    model = torchtune.model_of(runtime_name)
    if model not in api.TORCHTUNE_SUPPORTED_MODELS:
        detail = f"must have a supported pretrained model, invalid model configured: {model}"
        findings.append(r.TORCHTUNE_MODEL.finding(invalid(_NAME, runtime_name, detail), path=_NAME))
    num_nodes = trainjob.num_nodes if trainjob.num_nodes is not None else 1
    if num_nodes > 1 and model != api.TORCHTUNE_MODEL_LLAMA3_3_70B:
        findings.append(r.TORCHTUNE_NUM_NODES.finding(
            invalid(_NUM_NODES, num_nodes, f"must be 1 for {model} model"), path=_NUM_NODES,
        ))
    # The webhook uses the TrainJob's numProcPerNode as given ("auto" when unset), not the CPU-derived
    # value the plugin later computes, so validation and expansion may pick different configs.
    nproc: torchtune.ProcPerNode = trainjob.num_proc_per_node if trainjob.num_proc_per_node is not None else "auto"
    args = trainjob.trainer_args or []
    _, config = torchtune.recipe_and_config(
        num_nodes, nproc, gpu_count(info.resources_for_derivation(trainjob)), args, runtime_name
    )
    if api.SUFFIX_QLORA_DISTRIBUTED in config:
        if model == api.TORCHTUNE_MODEL_QWEN2_5_1_5B:
            findings.append(r.TORCHTUNE_QLORA_MODEL.finding(
                invalid(_NAME, runtime_name, f"QLoRA is not supported for {model} model"), path=_NAME,
            ))
        if api.SUFFIX_QLORA_SINGLE_DEVICE not in config and model in (
            api.TORCHTUNE_MODEL_LLAMA3_2_1B, api.TORCHTUNE_MODEL_LLAMA3_2_3B,
        ):
            findings.append(r.TORCHTUNE_QLORA_DEVICES.finding(invalid(
                "spec.trainer.numProcPerNode", nproc, f"must be auto or 1 for {model} model when using QLoRA",
            ), path="spec.trainer.numProcPerNode"))
            findings.append(r.TORCHTUNE_QLORA_DEVICES.finding(invalid(
                "spec.trainer.resourcesPerNode", trainjob.resources_per_node,
                f"must have gpu resource with value 1 for {model} model when using QLoRA",
            ), path="spec.trainer.resourcesPerNode"))
    if num_nodes > 1 and (torchtune.uses_lora(args) or torchtune.uses_qlora(args)):
        findings.append(r.TORCHTUNE_LORA_MULTINODE.finding(invalid(
            _NUM_NODES, num_nodes, "LoRA fine-tuning is not supported for multi-node training in TorchTune",
        ), path=_NUM_NODES))
    for index, arg in enumerate(args):
        key = arg.split("=", 1)[0]
        if key in api.TORCHTUNE_IMMUTABLE_CONFIGS:
            path = path_string(("spec", "trainer", "args", index))
            detail = f'must not set immutable config "{key}" in trainer args; it is managed by the runtime'
            findings.append(r.TORCHTUNE_IMMUTABLE_ARG.finding(invalid(path, arg, detail), path=path))
    return findings


def check_mpi(trainjob: TrainJobView, info: RuntimeInfo) -> list[Finding]:
    """M1–M2 (only with ``mlPolicy.mpi``)."""
    policy = info.policy("mpi")
    if policy is None or trainjob.trainer is None:
        return []
    findings: list[Finding] = []
    num_nodes = trainjob.num_nodes if trainjob.num_nodes is not None else 1
    if num_nodes >= 2 and policy.get("runLauncherAsNode") is True and (
        info.pod_set_by_name(api.LAUNCHER) is None or info.pod_set_by_name(api.NODE) is None
    ):
        detail = "must have 1 when MPI trainingRuntime with enabled runLauncherAsNode does not have either launcher and node"
        findings.append(r.MPI_NUM_NODES.finding(invalid(_NUM_NODES, trainjob.num_nodes, detail), path=_NUM_NODES))
    return findings + _reserved_env(trainjob, api.MPI_RESERVED_ENV, r.MPI_RESERVED_ENV)


def check_xgboost(trainjob: TrainJobView, info: RuntimeInfo) -> list[Finding]:
    """One Forbidden per reserved ``DMLC_*`` entry of ``trainer.env``."""
    if info.policy("xgboost") is None or trainjob.trainer is None:
        return []
    findings: list[Finding] = []
    for index, env in enumerate(trainjob.trainer.get("env") or []):
        name = as_str(env.get("name")) if isinstance(env, dict) else ""
        if name in api.XGBOOST_RESERVED_ENV:
            path = path_string(("spec", "trainer", "env", index))
            findings.append(r.XGBOOST_RESERVED_ENV.finding(
                forbidden(path, f"{name} is reserved for the XGBoost runtime"), path=path,
            ))
    return findings


def check_flux(info: RuntimeInfo) -> list[Finding]:
    """The runtime's ``node`` job may not bring its own ``flux-installer`` init container."""
    if info.policy("flux") is None:
        return []
    findings: list[Finding] = []
    for pod_set in info.pod_sets:
        if pod_set.name != api.NODE:
            continue
        for container in containers_of(pod_set.pod_spec, init=True):
            if container.get("name") == api.FLUX_INSTALLER_CONTAINER:
                findings.append(r.FLUX_RESERVED_INIT_CONTAINER.finding(
                    invalid("spec.trainer.initContainers", api.FLUX_INSTALLER_CONTAINER,
                            "InitContainer 'flux-installer' is reserved"),
                    path="spec.trainer.initContainers",
                ))
    return findings


def check_volcano(trainjob: TrainJobView, info: RuntimeInfo, cluster: ClusterView | None) -> list[Finding]:
    """Empty queue annotation; missing PriorityClasses.

    The PriorityClass lookup is a choice of ours: offline, a PriorityClass missing from the inputs
    proves nothing, so names are checked only against PriorityClass objects the view holds, and only
    when it holds at least one (give the cluster's PriorityClasses as inputs to enable the check).
    """
    if info.group_policy("volcano") is None:
        return []
    findings: list[Finding] = []
    queue = info.annotations.get(api.VOLCANO_QUEUE_NAME_ANNOTATION)
    if queue == "":
        path = path_string(("spec", "annotations", api.VOLCANO_QUEUE_NAME_ANNOTATION))
        findings.append(r.VOLCANO_EMPTY_QUEUE.finding(
            invalid(path, "", "Volcano queue name must not be empty"), path=path, at=_queue_source(trainjob),
        ))
    known = _priority_class_names(cluster)
    for job in info.replicated_jobs:
        name = as_dict(pod_spec_of(job)).get("priorityClassName")
        if not isinstance(name, str):
            continue
        if name in api.SYSTEM_PRIORITY_CLASSES:
            return findings  # upstream returns here, skipping the remaining jobs
        if known is None or name in known:
            continue
        error = (
            "resource name may not be empty" if not name
            else f'priorityclasses.scheduling.k8s.io "{name}" not found'
        )
        findings.append(r.VOLCANO_PRIORITY_CLASS_MISSING.finding(
            invalid("spec.templateSpec.priorityClassName", name, f'PriorityClass "{name}" doesn\'t exist: {error}'),
            path="spec.templateSpec.priorityClassName", at=_RUNTIME_NAME,
            unresolved=(priority.GROUP, priority.KIND, name) if name else None,
        ))
    return findings


def _queue_source(trainjob: TrainJobView) -> Path:
    """The last runtime patch that sets the queue annotation, else the runtime reference."""
    found: Path = _RUNTIME_NAME
    for index, patch in enumerate(trainjob.runtime_patches):
        metadata = as_dict(as_dict(as_dict(patch.get("trainingRuntimeSpec")).get("template")).get("metadata"))
        if api.VOLCANO_QUEUE_NAME_ANNOTATION in as_dict(metadata.get("annotations")):
            found = ("spec", "runtimePatches", index, "trainingRuntimeSpec", "template", "metadata", "annotations",
                     api.VOLCANO_QUEUE_NAME_ANNOTATION)
    return found


def _priority_class_names(cluster: ClusterView | None) -> set[str] | None:
    if cluster is None:
        return None
    classes = cluster.list("scheduling.k8s.io", "PriorityClass")
    if not classes:
        return None
    return {as_str(as_dict(pc.get("metadata")).get("name")) for pc in classes}
