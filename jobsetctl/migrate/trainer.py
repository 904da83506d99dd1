"""``migrate --to trainer-v2``: Kubeflow Training Operator v1 jobs → Trainer v2 ``TrainJob``.

The shape follows the upstream migration guide (kubeflow/trainer @ 8c0f5059,
``docs/operator-guides/migration.md``, "Migrate PyTorchJob to TrainJob"): the job becomes a TrainJob of the
same name with ``runtimeRef`` to the matching built-in ClusterTrainingRuntime and ``trainer.numNodes`` = all
replicas, ``image``/``command``/``args``/``env``/``resourcesPerNode`` from the training container.

What the v1 operator did, so that the pods stay the same (kubeflow/training-operator, branch release-1.9,
``pkg/controller.v1/*``; ``pkg/apis/kubeflow.org/v1/*_defaults.go`` for defaults): one pod per replica of
every replica type (replicas default to 1, an MPIJob's Workers to 0), the first replica type holding rank 0,
and on every container the variables the training code reads (:func:`_v1_env`):

* PyTorchJob (``pytorch/envvar.go`` ``setPodEnv``, ``pytorch/master.go``), only with a Master:
  ``MASTER_ADDR``/``MASTER_PORT``, ``WORLD_SIZE`` = all replicas × ``nprocPerNode`` (1 unless a number),
  ``RANK`` = the replica index, Workers shifted by one after the Master. Trainer v2's Torch plugin sets
  ``PET_*`` for torchrun (trainer.md §3.8.2), which derives ``RANK``/``WORLD_SIZE`` itself: for a torchrun
  command nothing is added;
* JAXJob (``jax/envvar.go``): ``COORDINATOR_ADDRESS``/``COORDINATOR_PORT``, ``NUM_PROCESSES`` = all
  replicas, ``PROCESS_ID`` = the replica index;
* XGBoostJob (``xgboost/xgboost.go`` ``SetPodEnv``): ``MASTER_ADDR``/``MASTER_PORT``, ``WORLD_SIZE`` = all
  replicas, ``RANK`` (Workers shifted by the one Master), and with more than one replica ``WORKER_PORT``
  (the Workers' ``xgboostjob-port``, default 9999) and ``WORKER_ADDRS`` (every Worker's address);
* MPIJob (``mpi/mpijob_controller.go``): a hostfile of ``<job>-worker-<i> slots=<slotsPerWorker>`` (default
  1) on the launcher; Trainer v2's MPI plugin writes the same hostfile (trainer.md §3.8.4).

The migration writes these into ``trainer.env`` with Trainer v2's values: rank = the Job completion index
(the first replica type is node 0, as in v1), the addresses of v2's pods, the coordinator at Trainer v2's
rendezvous endpoint ``<job>-node-0-0.<job>:29500`` (the port the v2 plugins declare). Names the user sets
win. ``PYTHONUNBUFFERED=1``, which v1 also set, only changes log buffering and is not carried over.

Built-in runtimes (trainer.md §4): PyTorchJob → ``torch-distributed``, JAXJob → ``jax-distributed``,
XGBoostJob → ``xgboost-distributed``. Pod-template settings a TrainJob can carry go into a
``runtimePatches`` entry (manager ``jobsetctl.dev/migrate``, trainer.md §1.3: nodeSelector, affinity,
tolerations, volumes, volumeMounts, serviceAccountName, imagePullSecrets, securityContext, labels and
annotations); a template with more (another container, hostNetwork ...) gets a generated TrainingRuntime
``<job>-runtime`` with that template, written after the TrainJob. MPIJob always gets a generated runtime
(the built-in MPI runtimes are DeepSpeed/MLX images): launcher + ``node`` jobs, ``mlPolicy.mpi`` with
``slotsPerWorker``. Settings v2 has no place for (elasticPolicy, different Master and Worker templates,
runPolicy other than suspend/activeDeadlineSeconds, an MPIJob Worker without a command: v1 ran
``sleep 365d`` there and reached workers with ``kubectl exec``, v2 reaches them over SSH) leave the job as
it is, reported.
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
COMPLETION_INDEX_FIELD = trainer_api.JOB_COMPLETION_INDEX_FIELD_PATH
TRAINER_PORT = trainer_api.TRAINER_PORT


@dataclass(frozen=True, slots=True)
class Framework:
    specs_key: str
    #: Replica types in v1 rank order (the first holds rank 0).
    replica_types: tuple[str, ...]
    container: str
    runtime: str | None
    ml_policy: str
    #: Variables the v2 plugin manages (its webhook refuses them, or it overwrites them).
    reserved_env: frozenset[str] = frozenset()
    #: The container port v1 reads (``<framework>job-port``) and its default.
    port: tuple[str, int] = ("", 0)


FRAMEWORKS: dict[str, Framework] = {
    "PyTorchJob": Framework("pytorchReplicaSpecs", ("Master", "Worker"), "pytorch", "torch-distributed", "torch",
                            trainer_api.TORCH_RESERVED_ENV, ("pytorchjob-port", 23456)),
    "JAXJob": Framework("jaxReplicaSpecs", ("Worker",), "jax", "jax-distributed", "jax",
                        frozenset({trainer_api.JAX_ENV_NUM_PROCESSES, trainer_api.JAX_ENV_PROCESS_ID,
                                   trainer_api.JAX_ENV_COORDINATOR_ADDRESS}), ("jaxjob-port", 6666)),
    "XGBoostJob": Framework("xgbReplicaSpecs", ("Master", "Worker"), "xgboost", "xgboost-distributed", "xgboost",
                            trainer_api.XGBOOST_RESERVED_ENV, ("xgboostjob-port", 9999)),
    "MPIJob": Framework("mpiReplicaSpecs", ("Launcher", "Worker"), "mpi", None, "mpi"),
}
#: v1 default replicas per replica type (``setDefaultReplicas`` calls in ``*_defaults.go``): 1, except 0 Workers
#: for an MPIJob.
MPI_WORKER_DEFAULT_REPLICAS = 0
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


#: Text every candidate's document contains (its apiVersion, or the field that changes).
HINTS = (V1, "podTemplateOverrides")


def candidate(obj: Any) -> bool:
    if not isinstance(obj, dict):
        return False
    kind = obj.get("kind")
    if obj.get("apiVersion") == V1:
        return isinstance(kind, str) and kind in FRAMEWORKS
    spec = obj.get("spec")
    return kind == "TrainJob" and isinstance(spec, dict) and "podTemplateOverrides" in spec


def migrate(files: Sequence[FileEditor], target: str) -> None:
    for item in objects(files, candidate, HINTS):
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


def _replicas(spec: Any, default: int = 1) -> int:
    value = spec.get("replicas", default) if isinstance(spec, dict) else default
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
    if "Master" in framework.replica_types and "Master" in replica_specs and _replicas(replica_specs["Master"]) != 1:
        raise Refused("a Master with other than one replica (the v1 webhook requires exactly one)")
    if framework.ml_policy == "xgboost" and "Master" not in replica_specs:
        raise Refused("an XGBoostJob without a Master (the v1 webhook requires one)")
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
    reserved = [e.get("name") for e in env if isinstance(e, dict) and e.get("name") in framework.reserved_env]
    if reserved:
        raise Refused(f"env {reserved[0]} is managed by Trainer v2's {framework.ml_policy} plugin")
    v1_env = _v1_env(framework, obj, spec, replica_specs, nodes, container, env)
    env.extend(v1_env)
    if env:
        trainer["env"] = env if isinstance(container.get("env"), CommentedSeq) and len(env) == len(container["env"]) else fresh(env)
    if "resources" in container:
        trainer["resourcesPerNode"] = container["resources"]
    nproc = _nproc_per_node(spec)
    if isinstance(nproc, int):
        trainer["numProcPerNode"] = nproc
    elif nproc not in (None, "auto", "gpu"):
        raise Refused(f"nprocPerNode {nproc!r}: Trainer v2 counts processes per node from GPUs or a number")
    patch, runtime_needed = _patch(template, pod_spec, container, framework)
    new_spec = CommentedMap()
    if runtime_needed:
        runtime_name = _generated_runtime(item, framework, template, container, nodes)
        new_spec["runtimeRef"] = flow_map(name=runtime_name, kind="TrainingRuntime")
        trainer = CommentedMap(numNodes=nodes)  # the rest stays in the runtime's template
        if v1_env:
            trainer["env"] = fresh(v1_env)
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


def _v1_env(framework: Framework, obj: Any, spec: Any, replica_specs: Any, nodes: int,
            container: dict[str, Any], env: list[Any]) -> list[Any]:
    """The rank, size and coordinator variables the v1 operator set (see the module docstring), with Trainer
    v2's values; names the user already sets win."""
    name = str(obj.get("metadata", {}).get("name", ""))
    host = f"{name}-{trainer_api.NODE}-0-0.{name}"  # the v2 rendezvous host (trainer.md §3.8.2, §3.8.5, §3.8.6)
    rank = CommentedMap(fieldRef=flow_map(fieldPath=COMPLETION_INDEX_FIELD))
    values: list[tuple[str, Any]]
    if framework.ml_policy == "torch":
        if "Master" not in replica_specs or _is_torchrun(container):
            return []
        nproc = _nproc_per_node(spec)
        per_node = nproc if isinstance(nproc, int) else 1  # getNprocPerNodeInt: 1 unless a number
        values = [("MASTER_ADDR", host), ("MASTER_PORT", str(TRAINER_PORT)), ("WORLD_SIZE", str(nodes * per_node)),
                  ("RANK", rank)]
    elif framework.ml_policy == "jax":
        values = [("COORDINATOR_ADDRESS", host), ("COORDINATOR_PORT", str(TRAINER_PORT)),
                  ("NUM_PROCESSES", str(nodes)), ("PROCESS_ID", rank)]
    elif framework.ml_policy == "xgboost":
        values = [("MASTER_ADDR", host), ("MASTER_PORT", str(TRAINER_PORT)), ("WORLD_SIZE", str(nodes)), ("RANK", rank)]
        if nodes > 1:
            workers = ",".join(f"{name}-{trainer_api.NODE}-0-{index}.{name}" for index in range(1, nodes))
            values += [("WORKER_PORT", str(_v1_port(replica_specs["Worker"], framework))), ("WORKER_ADDRS", workers)]
    else:
        return []
    have = {e.get("name") for e in env if isinstance(e, dict)}
    out: list[Any] = []
    for key, value in values:
        if key in have:
            continue
        out.append(CommentedMap(name=key, valueFrom=value) if isinstance(value, CommentedMap) else flow_map(name=key, value=value))
    return out


def _nproc_per_node(spec: Any) -> Any:
    """v1 ``nprocPerNode`` (a string in the v1 API: ``"auto"``, ``"cpu"``, ``"gpu"`` or a number) as an int
    when it is a number."""
    value = spec.get("nprocPerNode")
    if isinstance(value, bool):
        return value
    if isinstance(value, int) or (isinstance(value, str) and value.isdigit()):
        return int(value)
    return value


def _v1_port(replica_spec: Any, framework: Framework) -> int:
    """``getPortFrom<Framework>Job``: the port named ``<framework>job-port`` of the default container, which
    the v1 defaulting adds (``set<Framework>DefaultPort``) when it is missing."""
    port_name, default = framework.port
    pod_spec = (replica_spec.get("template") or {}).get("spec") if isinstance(replica_spec, dict) else None
    for container in (pod_spec or {}).get("containers") or []:
        if isinstance(container, dict) and container.get("name") == framework.container:
            for port in container.get("ports") or []:
                if isinstance(port, dict) and port.get("name") == port_name and isinstance(port.get("containerPort"), int):
                    return int(port["containerPort"])
    return default


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
    workers = _replicas(replica_specs["Worker"], MPI_WORKER_DEFAULT_REPLICAS)
    if workers < 1:
        raise Refused("no Worker replicas (v1 defaults an MPIJob's Workers to 0): a TrainJob needs at least one node")
    launcher_template = replica_specs["Launcher"].get("template") or {}
    worker_template = replica_specs["Worker"].get("template") or {}
    launcher_container = _main_container(launcher_template.get("spec"), framework.container)
    worker_container = _main_container(worker_template.get("spec"), framework.container)
    if not worker_container.get("command"):
        raise Refused("the Worker has no command: v1 ran `sleep 365d` there and reached the workers with kubectl "
                      "exec; Trainer v2 reaches them over SSH, so the worker command must start sshd (e.g. "
                      "/usr/sbin/sshd -De): set it, then migrate")
    slots = spec.get("slotsPerWorker", 1)
    implementation = spec.get("mpiImplementation", "OpenMPI")
    if implementation != "OpenMPI":
        raise Refused(f"mpiImplementation {implementation!r}: Trainer v2 supports OpenMPI only")
    mpi = CommentedMap(numProcPerNode=slots, mpiImplementation="OpenMPI", runLauncherAsNode=False)
    # The launcher carries the trainer ancestor label, so its pod count is mlPolicy.numNodes (trainer.md §3.7,
    # as in the shipped deepspeed runtime): 1. The TrainJob's numNodes goes to the job named node.
    policy = CommentedMap(numNodes=1, mpi=mpi)
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
