"""``migrate --to trainer-v2``: Kubeflow Training Operator v1 jobs → Trainer v2 ``TrainJob``.

The shape follows the upstream migration guide (kubeflow/trainer @ 8c0f5059,
``docs/operator-guides/migration.md``, "Migrate PyTorchJob to TrainJob"): the job becomes a TrainJob of the
same name with ``runtimeRef`` to the matching built-in ClusterTrainingRuntime and ``trainer.numNodes`` = all
replicas, ``image``/``command``/``args``/``env``/``resourcesPerNode`` from the training container.

What the v1 operator did, so that the pods stay the same (kubeflow/training-operator,
``pkg/controller.v1/pytorch/envvar.go`` ``setPodEnv``/``getTotalReplicas``): one pod per replica of every
replica type (Master + Worker), ``WORLD_SIZE`` = the sum of all replicas, ``RANK`` = the replica index
(Worker indices shifted by one after the Master), ``MASTER_ADDR``/``MASTER_PORT`` the master's. Trainer v2's
Torch plugin sets ``PET_NNODES``/``PET_NODE_RANK``/``PET_MASTER_*`` for torchrun (trainer.md §3.8.2), which
derives ``RANK``/``WORLD_SIZE`` itself; a command that is not torchrun read the plain variables, so the
migration writes them into ``trainer.env`` (``RANK`` from the Job completion index, which is the v1 rank:
the master is node 0).

Built-in runtimes (trainer.md §4): PyTorchJob → ``torch-distributed``, JAXJob → ``jax-distributed``,
XGBoostJob → ``xgboost-distributed``. Pod-template settings a TrainJob can carry go into a
``runtimePatches`` entry (manager ``jobsetctl.dev/migrate``, trainer.md §1.3: nodeSelector, affinity,
tolerations, volumes, volumeMounts, serviceAccountName, imagePullSecrets, securityContext, labels and
annotations); a template with more (another container, hostNetwork ...) gets a generated TrainingRuntime
``<job>-runtime`` with that template, written after the TrainJob. MPIJob always gets a generated runtime
(the built-in MPI runtimes are DeepSpeed/MLX images): launcher + ``node`` jobs, ``mlPolicy.mpi`` with
``slotsPerWorker``. Settings v2 has no place for (elasticPolicy, different Master and Worker templates,
runPolicy other than suspend/activeDeadlineSeconds) leave the job as it is, reported.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from jobsetctl.fix.rewrite import FileEditor
from jobsetctl.fix.yamledit import flow_map, to_plain
from jobsetctl.migrate import ObjectAt, objects
from jobsetctl.migrate.kubernetes import fresh
from jobsetctl.trainer import api as trainer_api

RULE = "migrate-trainer"
V1 = "kubeflow.org/v1"
V2 = f"{trainer_api.GROUP}/v1alpha1"
MANAGER = "jobsetctl.dev/migrate"
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
COMPLETION_INDEX_FIELD = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
TRAINER_PORT = 29500


@dataclass(frozen=True, slots=True)
class Framework:
    specs_key: str
    #: Replica types in v1 rank order (the first holds rank 0).
    replica_types: tuple[str, ...]
    container: str
    runtime: str | None
    ml_policy: str


FRAMEWORKS: dict[str, Framework] = {
    "PyTorchJob": Framework("pytorchReplicaSpecs", ("Master", "Worker"), "pytorch", "torch-distributed", "torch"),
    "JAXJob": Framework("jaxReplicaSpecs", ("Worker",), "jax", "jax-distributed", "jax"),
    "XGBoostJob": Framework("xgbReplicaSpecs", ("Master", "Worker"), "xgboost", "xgboost-distributed", "xgboost"),
    "MPIJob": Framework("mpiReplicaSpecs", ("Launcher", "Worker"), "mpi", None, "mpi"),
}
#: Pod spec fields a runtimePatches entry carries (trainer.md §1.3).
PATCHABLE_POD = ("serviceAccountName", "volumes", "imagePullSecrets", "securityContext", "nodeSelector",
                 "affinity", "tolerations", "schedulingGates", "terminationGracePeriodSeconds")
#: Container fields of the training container that map to TrainJob.trainer, or to a runtime patch.
TRAINER_FIELDS = ("name", "image", "command", "args", "env", "resources", "ports", "volumeMounts",
                  "securityContext", "imagePullPolicy", "workingDir")
#: Commands that start torchrun (which derives RANK and WORLD_SIZE from the PET_* variables).
TORCHRUN = ("torchrun", "torch.distributed.run", "torch.distributed.launch")


class Refused(Exception):
    pass


def migrate(files: Sequence[FileEditor], target: str) -> None:
    for item in objects(files):
        kind = item.obj.get("kind")
        if item.obj.get("apiVersion") == V1 and isinstance(kind, str) and kind in FRAMEWORKS:
            try:
                message = _convert(item, FRAMEWORKS[kind])
            except Refused as exc:
                item.note(RULE, f"{kind} left as it is: {exc}", False)
                continue
            item.changed()
            item.note(RULE, message, True)
        elif kind == "TrainJob" and isinstance(item.obj.get("spec"), dict) and "podTemplateOverrides" in item.obj["spec"]:
            _overrides_to_patches(item)


def _replicas(spec: Any) -> int:
    value = spec.get("replicas", 1) if isinstance(spec, dict) else 1
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise Refused("a replica count is not a number")
    return value


def _main_container(pod_spec: Any, default_name: str) -> dict[str, Any]:
    containers = pod_spec.get("containers") if isinstance(pod_spec, dict) else None
    if not isinstance(containers, list) or not containers:
        raise Refused("a replica template has no containers")
    for container in containers:
        if isinstance(container, dict) and container.get("name") == default_name:
            return container
    if len(containers) == 1 and isinstance(containers[0], dict):
        return containers[0]
    raise Refused(f"no container named {default_name!r} among several: which one trains is unclear")


def _comparable(template: Any) -> Any:
    plain = copy.deepcopy(to_plain(template))
    if isinstance(plain, dict):
        plain.get("spec", {}).pop("restartPolicy", None)
    return plain


def _convert(item: ObjectAt, framework: Framework) -> str:
    obj = item.obj
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        raise Refused("no spec")
    unknown = [k for k in spec if k not in (framework.specs_key, "runPolicy", "nprocPerNode", "slotsPerWorker",
                                            "mpiImplementation", "runLauncherAsWorker")]
    if unknown:
        raise Refused(f"spec.{unknown[0]} has no TrainJob equivalent")
    run_policy = spec.get("runPolicy") or {}
    extra = [k for k in run_policy if k not in ("suspend", "activeDeadlineSeconds", "cleanPodPolicy")]
    if extra:
        raise Refused(f"runPolicy.{extra[0]} has no TrainJob equivalent")
    replica_specs = spec.get(framework.specs_key)
    if not isinstance(replica_specs, dict) or not replica_specs:
        raise Refused(f"spec.{framework.specs_key} is empty")
    strange = [k for k in replica_specs if k not in framework.replica_types]
    if strange:
        raise Refused(f"replica type {strange[0]!r} is not one of {', '.join(framework.replica_types)}")
    if framework.ml_policy == "mpi":
        return _convert_mpi(item, spec, replica_specs, run_policy)
    present = [t for t in framework.replica_types if t in replica_specs]
    templates = [replica_specs[t].get("template") for t in present]
    if any(_comparable(t) != _comparable(templates[0]) for t in templates[1:]):
        raise Refused(f"the {' and '.join(present)} templates differ; a TrainJob runs one template on every node")
    if framework.specs_key == "pytorchReplicaSpecs" and _replicas(replica_specs.get("Master", {})) > 1:
        raise Refused("more than one Master replica")
    nodes = sum(_replicas(replica_specs[t]) for t in present)
    template = templates[0] if isinstance(templates[0], dict) else {}
    raw_pod_spec = template.get("spec")
    pod_spec: dict[str, Any] = raw_pod_spec if isinstance(raw_pod_spec, dict) else {}
    container = _main_container(pod_spec, framework.container)
    trainer = CommentedMap()
    trainer["numNodes"] = nodes
    for key in ("image", "command", "args"):
        if key in container:
            trainer[key] = container[key]
    env = list(container.get("env") or [])
    reserved = [e.get("name") for e in env if isinstance(e, dict) and str(e.get("name", "")).startswith("PET_")]
    if reserved:
        raise Refused(f"env {reserved[0]} is reserved by Trainer v2's Torch plugin")
    if framework.ml_policy == "torch" and not _is_torchrun(container):
        env.extend(_v1_torch_env(obj, nodes, env))
    if env:
        trainer["env"] = env if isinstance(container.get("env"), CommentedSeq) and len(env) == len(container["env"]) else fresh(env)
    if "resources" in container:
        trainer["resourcesPerNode"] = container["resources"]
    nproc = spec.get("nprocPerNode")
    if isinstance(nproc, int) and not isinstance(nproc, bool):
        trainer["numProcPerNode"] = nproc
    elif nproc not in (None, "auto", "gpu"):
        raise Refused(f"nprocPerNode {nproc!r}: Trainer v2 counts processes per node from GPUs or a number")
    patch, runtime_needed = _patch(template, pod_spec, container, framework)
    new_spec = CommentedMap()
    if runtime_needed:
        runtime_name = _generated_runtime(item, framework, template, container, nodes)
        new_spec["runtimeRef"] = flow_map(name=runtime_name, kind="TrainingRuntime")
        trainer = CommentedMap(numNodes=nodes)
    else:
        assert framework.runtime is not None
        new_spec["runtimeRef"] = flow_map(name=framework.runtime)
    new_spec["trainer"] = trainer
    if patch and not runtime_needed:
        new_spec["runtimePatches"] = [patch]
    _run_policy(new_spec, run_policy)
    _replace(obj, new_spec)
    where = f"TrainingRuntime {runtime_name}" if runtime_needed else f"ClusterTrainingRuntime {framework.runtime}"
    return f"{item_kind(framework)} → TrainJob on {where}, {nodes} node{'s' if nodes != 1 else ''}"


def item_kind(framework: Framework) -> str:
    return next(k for k, f in FRAMEWORKS.items() if f is framework)


def _is_torchrun(container: dict[str, Any]) -> bool:
    words = [str(w) for w in (container.get("command") or [])] + [str(w) for w in (container.get("args") or [])]
    return any(any(marker in word for marker in TORCHRUN) for word in words[:3])


def _v1_torch_env(obj: Any, nodes: int, env: list[Any]) -> list[Any]:
    """RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT as the v1 operator set them (envvar.go), for commands
    that are not torchrun; names the user already sets win."""
    name = obj.get("metadata", {}).get("name", "")
    have = {e.get("name") for e in env if isinstance(e, dict)}
    out = []
    values = [
        ("MASTER_ADDR", f"{name}-node-0-0.{name}"),  # the v2 rendezvous host (trainer.md §3.8.2)
        ("MASTER_PORT", str(TRAINER_PORT)),
        ("WORLD_SIZE", str(nodes)),
    ]
    for key, value in values:
        if key not in have:
            out.append(flow_map(name=key, value=value))
    if "RANK" not in have:
        out.append(CommentedMap(name="RANK", valueFrom=CommentedMap(fieldRef=flow_map(fieldPath=COMPLETION_INDEX_FIELD))))
    return out


def _patch(template: dict[str, Any], pod_spec: dict[str, Any], container: dict[str, Any],
           framework: Framework) -> tuple[CommentedMap | None, bool]:
    """The runtimePatches entry for what the template sets besides the training container, and whether the
    template needs a generated runtime instead (something no patch can carry)."""
    containers = pod_spec.get("containers") or []
    others = [k for k in pod_spec if k not in ("containers", "restartPolicy", *PATCHABLE_POD)]
    extra_fields = [k for k in container if k not in TRAINER_FIELDS]
    if len(containers) > 1 or pod_spec.get("initContainers") or others or extra_fields:
        return None, True
    pod_patch = CommentedMap()
    for key in PATCHABLE_POD:
        if key in pod_spec:
            pod_patch[key] = pod_spec[key]
    container_patch = CommentedMap()
    for key in ("volumeMounts", "securityContext"):
        if key in container:
            container_patch[key] = container[key]
    if container_patch:
        pod_patch["containers"] = [CommentedMap(name="node", **container_patch)]
    pod_template = CommentedMap()
    metadata = template.get("metadata")
    if isinstance(metadata, dict) and metadata:
        kept = {k: v for k, v in metadata.items() if k in ("labels", "annotations")}
        if kept:
            pod_template["metadata"] = CommentedMap(kept)
    if pod_patch:
        pod_template["spec"] = pod_patch
    if not pod_template:
        return None, False
    job = CommentedMap(name="node")
    job["template"] = CommentedMap(spec=CommentedMap(template=pod_template))
    patch = CommentedMap(manager=MANAGER)
    patch["trainingRuntimeSpec"] = CommentedMap(
        template=CommentedMap(spec=CommentedMap(replicatedJobs=[job])))
    return patch, False


def _node_template(template: dict[str, Any], container: dict[str, Any]) -> Any:
    copied = fresh(template)
    for candidate in copied.get("spec", {}).get("containers", []):
        if candidate.get("name") == container.get("name"):
            candidate["name"] = "node"
    copied.get("spec", {}).pop("restartPolicy", None)
    return copied


def _job(name: str, template: Any, ancestor: bool) -> CommentedMap:
    job = CommentedMap(name=name)
    job_template = CommentedMap()
    if ancestor:
        job_template["metadata"] = CommentedMap(labels=flow_map(**{ANCESTOR_LABEL: "trainer"}))
    job_template["spec"] = CommentedMap(template=template)
    job["template"] = job_template
    return job


def _generated_runtime(item: ObjectAt, framework: Framework, template: dict[str, Any], container: dict[str, Any],
                       nodes: int, jobs: list[CommentedMap] | None = None, ml_policy: Any = None) -> str:
    document = item.editor.document(item.segment)
    if document is not None and document.json_indent is not None:
        raise Refused("a generated TrainingRuntime cannot be written next to it in a JSON file")
    name = f"{item.obj.get('metadata', {}).get('name', 'job')}-runtime"
    meta = CommentedMap(name=name)
    namespace = item.obj.get("metadata", {}).get("namespace")
    if isinstance(namespace, str):
        meta["namespace"] = namespace
    policy = ml_policy if ml_policy is not None else CommentedMap(numNodes=nodes, **{framework.ml_policy: CommentedMap()})
    runtime_spec = CommentedMap(mlPolicy=policy)
    runtime_spec["template"] = CommentedMap(spec=CommentedMap(
        replicatedJobs=jobs if jobs is not None else [_job("node", _node_template(template, container), True)]))
    runtime = CommentedMap(apiVersion=V2, kind="TrainingRuntime", metadata=meta, spec=runtime_spec)
    item.editor.add_document(item.segment, runtime)
    return name


def _convert_mpi(item: ObjectAt, spec: Any, replica_specs: Any, run_policy: Any) -> str:
    framework = FRAMEWORKS["MPIJob"]
    if "Launcher" not in replica_specs or "Worker" not in replica_specs:
        raise Refused("an MPIJob needs a Launcher and Workers")
    if _replicas(replica_specs["Launcher"]) != 1:
        raise Refused("more than one Launcher")
    workers = _replicas(replica_specs["Worker"])
    launcher_template = replica_specs["Launcher"].get("template") or {}
    worker_template = replica_specs["Worker"].get("template") or {}
    launcher_container = _main_container(launcher_template.get("spec"), framework.container)
    worker_container = _main_container(worker_template.get("spec"), framework.container)
    slots = spec.get("slotsPerWorker", 1)
    implementation = spec.get("mpiImplementation", "OpenMPI")
    if implementation != "OpenMPI":
        raise Refused(f"mpiImplementation {implementation!r}: Trainer v2 supports OpenMPI only")
    mpi = CommentedMap(numProcPerNode=slots, mpiImplementation="OpenMPI", runLauncherAsNode=False)
    policy = CommentedMap(numNodes=workers, mpi=mpi)
    jobs = [
        _job("launcher", _node_template(launcher_template, launcher_container), True),
        _job("node", _node_template(worker_template, worker_container), False),
    ]
    name = _generated_runtime(item, framework, launcher_template, launcher_container, workers, jobs, policy)
    new_spec = CommentedMap(runtimeRef=flow_map(name=name, kind="TrainingRuntime"))
    new_spec["trainer"] = CommentedMap(numNodes=workers)
    _run_policy(new_spec, run_policy)
    _replace(item.obj, new_spec)
    return f"MPIJob → TrainJob on TrainingRuntime {name}, launcher + {workers} node{'s' if workers != 1 else ''}"


def _run_policy(new_spec: CommentedMap, run_policy: Any) -> None:
    if not isinstance(run_policy, dict):
        return
    if "suspend" in run_policy:
        new_spec["suspend"] = run_policy["suspend"]
    if "activeDeadlineSeconds" in run_policy:
        new_spec["activeDeadlineSeconds"] = run_policy["activeDeadlineSeconds"]


def _replace(obj: CommentedMap, new_spec: CommentedMap) -> None:
    obj["apiVersion"] = V2
    obj["kind"] = "TrainJob"
    obj["spec"] = new_spec


# --- podTemplateOverrides (v2.1) -> runtimePatches (v2.2+) ------------------------------------------


def _overrides_to_patches(item: ObjectAt) -> None:
    """TrainJob ``podTemplateOverrides[{targetJobs: [{name}], metadata, spec}]`` (Trainer v2.1) →
    ``runtimePatches[{manager, trainingRuntimeSpec.template.spec.replicatedJobs[{name, template.spec.template:
    {metadata, spec}}]}]`` (v2.2+, trainer.md §1.2-§1.3)."""
    spec = item.obj["spec"]
    overrides = spec.get("podTemplateOverrides")
    if "runtimePatches" in spec or not isinstance(overrides, list):
        item.note(RULE, "podTemplateOverrides next to runtimePatches: merge them by hand", False)
        return
    jobs: dict[str, CommentedMap] = {}
    for override in overrides:
        targets = override.get("targetJobs") if isinstance(override, dict) else None
        if not isinstance(targets, list) or not targets:
            item.note(RULE, "a podTemplateOverrides entry without targetJobs", False)
            return
        for target in targets:
            name = str(target.get("name", "")) if isinstance(target, dict) else ""
            pod_template = jobs.setdefault(name, CommentedMap())
            for key in ("metadata", "spec"):
                if key in override:
                    if key in pod_template:
                        item.note(RULE, f"two overrides target job {name!r}: merge them by hand", False)
                        return
                    pod_template[key] = override[key] if len(targets) == 1 else fresh(override[key])
    replicated = [CommentedMap(name=name, template=CommentedMap(spec=CommentedMap(template=t))) for name, t in jobs.items()]
    patch = CommentedMap(manager=MANAGER)
    patch["trainingRuntimeSpec"] = CommentedMap(template=CommentedMap(spec=CommentedMap(replicatedJobs=replicated)))
    position = list(spec.keys()).index("podTemplateOverrides")
    del spec["podTemplateOverrides"]
    spec.insert(position, "runtimePatches", [patch])
    item.changed()
    item.note(RULE, "podTemplateOverrides → runtimePatches (manager jobsetctl.dev/migrate)", True)
