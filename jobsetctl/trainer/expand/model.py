"""Typed-enough views of a TrainJob and a runtime, with the CRD defaults the controller relies on.

The Go controller reads typed objects the API server has defaulted (trainer.md §3.3). We get dicts
that may or may not have been through our schema defaulting, so every accessor here tolerates any
shape and falls back to the CRD default, and :func:`default_trainjob` / :func:`default_runtime`
fill in the defaults the Go code dereferences without nil checks.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from jobsetctl.trainer import api

Object = dict[str, Any]


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def dicts(value: Any) -> Iterator[dict[str, Any]]:
    """The mapping items of a list, skipping anything else (tolerates any shape)."""
    for item in as_list(value):
        if isinstance(item, dict):
            yield item


def as_str(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


def as_int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


def string_map(value: Any) -> dict[str, str]:
    return {k: v for k, v in as_dict(value).items() if isinstance(k, str) and isinstance(v, str)}


def strings(value: Any) -> list[str] | None:
    """A list of strings, or None when the field is absent (nil in Go); non-strings are skipped."""
    if not isinstance(value, list):
        return None
    return [item for item in value if isinstance(item, str)]


def child(parent: dict[str, Any], key: str) -> dict[str, Any]:
    """``parent[key]`` as a dict, created when absent or not a mapping (write access)."""
    value = parent.get(key)
    if not isinstance(value, dict):
        value = {}
        parent[key] = value
    return value


def child_list(parent: dict[str, Any], key: str) -> list[Any]:
    value = parent.get(key)
    if not isinstance(value, list):
        value = []
        parent[key] = value
    return value


# --- defaults (trainer.md §3.3) --------------------------------------------------------------------


def default_trainjob(obj: Object) -> None:
    """CRD defaults of a TrainJob, in place (a no-op on an already defaulted object)."""
    spec = child(obj, "spec")
    spec.setdefault("suspend", False)
    spec.setdefault("managedBy", api.MANAGED_BY_TRAINER)
    ref = child(spec, "runtimeRef")
    ref.setdefault("apiGroup", api.DEFAULT_RUNTIME_API_GROUP)
    ref.setdefault("kind", api.DEFAULT_RUNTIME_KIND)
    initializer = spec.get("initializer")
    if isinstance(initializer, dict):
        for section in ("dataset", "model"):
            secret_ref = as_dict(initializer.get(section)).get("secretRef")
            if isinstance(secret_ref, dict):
                secret_ref.setdefault("name", "")


def default_runtime(obj: Object) -> None:
    """CRD defaults of a (Cluster)TrainingRuntime, in place."""
    spec = as_dict(obj.get("spec"))
    policy = as_dict(spec.get("mlPolicy"))
    mpi = policy.get("mpi")
    if isinstance(mpi, dict):
        mpi.setdefault("numProcPerNode", 1)
        mpi.setdefault("mpiImplementation", api.MPI_IMPLEMENTATION_OPENMPI)
        mpi.setdefault("sshAuthMountPath", api.MPI_DEFAULT_SSH_AUTH_MOUNT_PATH)
        mpi.setdefault("runLauncherAsNode", False)
    flux = policy.get("flux")
    if isinstance(flux, dict):
        flux.setdefault("numProcPerNode", 1)
    groups = as_dict(spec.get("podGroupPolicy"))
    coscheduling = groups.get("coscheduling")
    if isinstance(coscheduling, dict):
        coscheduling.setdefault("scheduleTimeoutSeconds", api.DEFAULT_SCHEDULE_TIMEOUT_SECONDS)
    topology = as_dict(groups.get("volcano")).get("networkTopology")
    if isinstance(topology, dict):
        topology.setdefault("mode", api.VOLCANO_DEFAULT_TOPOLOGY_MODE)
        topology.setdefault("highestTierAllowed", api.VOLCANO_DEFAULT_HIGHEST_TIER)
    jobset_spec = as_dict(as_dict(spec.get("template")).get("spec"))
    for job in dicts(jobset_spec.get("replicatedJobs")):
        job.setdefault("replicas", api.DEFAULT_JOB_REPLICAS)
        job.setdefault("groupName", "default")


# --- read access ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RuntimeRef:
    name: str
    api_group: str
    kind: str

    @property
    def group_kind(self) -> str:
        return api.group_kind(self.kind, self.api_group)

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "apiGroup": self.api_group, "kind": self.kind}


class TrainJobView:
    """Read access to a TrainJob dict with CRD defaults for absent fields."""

    def __init__(self, obj: Object, default_namespace: str = "default") -> None:
        self.obj = obj
        self.meta = as_dict(obj.get("metadata"))
        self.spec = as_dict(obj.get("spec"))
        self.default_namespace = default_namespace

    @property
    def name(self) -> str:
        return as_str(self.meta.get("name"))

    @property
    def namespace(self) -> str:
        return as_str(self.meta.get("namespace")) or self.default_namespace

    @property
    def uid(self) -> str:
        return as_str(self.meta.get("uid"))

    @property
    def runtime_ref(self) -> RuntimeRef:
        ref = as_dict(self.spec.get("runtimeRef"))
        return RuntimeRef(
            as_str(ref.get("name")),
            as_str(ref.get("apiGroup"), api.DEFAULT_RUNTIME_API_GROUP),
            as_str(ref.get("kind"), api.DEFAULT_RUNTIME_KIND),
        )

    @property
    def suspend(self) -> bool | None:
        value = self.spec.get("suspend")
        return value if isinstance(value, bool) else None

    @property
    def managed_by(self) -> str:
        return as_str(self.spec.get("managedBy"), api.MANAGED_BY_TRAINER)

    @property
    def trainer(self) -> dict[str, Any] | None:
        """``spec.trainer`` or None (nil in Go: several plugins behave differently, quirk 3)."""
        value = self.spec.get("trainer")
        return value if isinstance(value, dict) else None

    @property
    def num_nodes(self) -> int | None:
        return as_int(self.trainer.get("numNodes")) if self.trainer is not None else None

    @property
    def num_proc_per_node(self) -> int | None:
        return as_int(self.trainer.get("numProcPerNode")) if self.trainer is not None else None

    @property
    def trainer_env(self) -> list[dict[str, Any]]:
        return list(dicts(self.trainer.get("env"))) if self.trainer is not None else []

    @property
    def trainer_command(self) -> list[str] | None:
        return strings(self.trainer.get("command")) if self.trainer is not None else None

    @property
    def trainer_args(self) -> list[str] | None:
        return strings(self.trainer.get("args")) if self.trainer is not None else None

    @property
    def resources_per_node(self) -> dict[str, Any] | None:
        if self.trainer is None:
            return None
        value = self.trainer.get("resourcesPerNode")
        return value if isinstance(value, dict) else None

    def initializer(self, section: str) -> dict[str, Any] | None:
        value = as_dict(self.spec.get("initializer")).get(section)
        return value if isinstance(value, dict) else None

    @property
    def runtime_patches(self) -> list[dict[str, Any]]:
        return list(dicts(self.spec.get("runtimePatches")))

    def is_torchtune(self) -> bool:
        command = self.trainer_command
        return command is not None and tuple(command) == api.TORCHTUNE_ENTRYPOINT


def ml_policy(runtime: Object) -> dict[str, Any] | None:
    """``spec.mlPolicy`` or None (absent: PlainML)."""
    value = as_dict(runtime.get("spec")).get("mlPolicy")
    return value if isinstance(value, dict) else None


def policy_source(runtime: Object, name: str) -> dict[str, Any] | None:
    value = as_dict(ml_policy(runtime)).get(name)
    return value if isinstance(value, dict) else None


def pod_group_policy(runtime: Object, name: str) -> dict[str, Any] | None:
    value = as_dict(as_dict(runtime.get("spec")).get("podGroupPolicy")).get(name)
    return value if isinstance(value, dict) else None


def template_of(runtime: Object) -> dict[str, Any]:
    """The runtime's ``spec.template`` (JobSetTemplateSpec)."""
    return as_dict(as_dict(runtime.get("spec")).get("template"))


def job_ancestor(job: dict[str, Any]) -> str | None:
    """The Job-template ancestor label of a replicated job, or None when absent."""
    labels = as_dict(as_dict(as_dict(job.get("template")).get("metadata")).get("labels"))
    value = labels.get(api.LABEL_ANCESTOR)
    return value if isinstance(value, str) else None


def pod_spec_of(job: dict[str, Any], create: bool = False) -> dict[str, Any]:
    """``template.spec.template.spec`` of a replicated job (created when ``create``)."""
    if not create:
        return as_dict(as_dict(as_dict(as_dict(job.get("template")).get("spec")).get("template")).get("spec"))
    return child(child(child(child(job, "template"), "spec"), "template"), "spec")


def containers_of(pod_spec: dict[str, Any], init: bool = False) -> list[dict[str, Any]]:
    return list(dicts(pod_spec.get("initContainers" if init else "containers")))


def find_container(pod_spec: dict[str, Any], name: str, *, init: bool = False) -> dict[str, Any] | None:
    for container in containers_of(pod_spec, init):
        if container.get("name") == name:
            return container
    return None
