"""The runtime "Info" the controller and the webhook build from a runtime and a TrainJob.

trainer.md §3.3–§3.7 (``newRuntimeInfo``): JobSet labels/annotations from the template and the
patches (§3.4), runtimePatches strategic merge (§3.5), ``resourcesPerNode`` merge (§3.6), and one
PodSet per replicated job with its initial count and single-pod requests (§3.7). The webhook runs its
checks on this same Info (trainer.md §2.4), without the ML-policy plugins.

Unlike Go, a PodSet here does not copy its containers: plugins edit the working JobSetSpec directly,
with the same upsert rules the JobSet builder later applies (env by name, ports by containerPort or
name, volumeMounts by mountPath, volumes by name), which gives the same result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jobsetctl.kube.jsontree import copy_tree
from jobsetctl.trainer import api
from jobsetctl.trainer.expand.model import (
    Object,
    TrainJobView,
    as_dict,
    as_int,
    as_str,
    dicts,
    find_container,
    job_ancestor,
    ml_policy,
    pod_spec_of,
    string_map,
    template_of,
)
from jobsetctl.trainer.expand.resources import ResourceList, canonical_quantities, pod_requests
from jobsetctl.trainer.expand.smp import merge_jobset_spec, merge_resources, restore_job_order


@dataclass(slots=True)
class PodSet:
    """One replicated job as the plugins see it (trainer.md §3.7)."""

    name: str
    ancestor: str | None
    count: int
    #: The replicated job inside :attr:`RuntimeInfo.spec` (edited in place by the plugins).
    job: dict[str, Any]
    single_pod_requests: ResourceList
    endpoints: list[str] = field(default_factory=list)

    @property
    def pod_spec(self) -> dict[str, Any]:
        return pod_spec_of(self.job, create=True)

    def container(self, name: str) -> dict[str, Any] | None:
        """A container (not an init container) by name."""
        return find_container(pod_spec_of(self.job), name)

    def container_or_init(self, name: str) -> dict[str, Any] | None:
        """Trainer ``FindContainerByPodSetName``: containers first, then init containers."""
        spec = pod_spec_of(self.job)
        return find_container(spec, name) or find_container(spec, name, init=True)

    def names(self) -> set[str]:
        """Names of its containers and init containers."""
        spec = pod_spec_of(self.job)
        return {
            c["name"]
            for key in ("containers", "initContainers")
            for c in dicts(spec.get(key))
            if isinstance(c.get("name"), str)
        }


@dataclass(slots=True)
class RuntimeInfo:
    labels: dict[str, str]
    annotations: dict[str, str]
    ml_policy: dict[str, Any] | None
    pod_group_policy: dict[str, Any]
    #: The patched (and resource-merged) JobSetSpec the JobSet is built from.
    spec: dict[str, Any]
    pod_sets: list[PodSet]
    #: Scheduler labels/annotations every pod template gets (coscheduling, Volcano; §3.13 step 4).
    pod_labels: dict[str, str] = field(default_factory=dict)
    pod_annotations: dict[str, str] = field(default_factory=dict)

    def policy(self, name: str) -> dict[str, Any] | None:
        value = as_dict(self.ml_policy).get(name)
        return value if isinstance(value, dict) else None

    def group_policy(self, name: str) -> dict[str, Any] | None:
        value = self.pod_group_policy.get(name)
        return value if isinstance(value, dict) else None

    def pod_set_by_ancestor(self, ancestor: str) -> PodSet | None:
        """The *first* PodSet with that ancestor (Go ``FindByAncestor``)."""
        return next((ps for ps in self.pod_sets if ps.ancestor == ancestor), None)

    def pod_set_by_name(self, name: str) -> PodSet | None:
        return next((ps for ps in self.pod_sets if ps.name == name), None)

    def trainer_container(self) -> dict[str, Any] | None:
        """Container ``node`` of the first trainer-ancestor PodSet (quirk 12: None if it has none)."""
        trainer = self.pod_set_by_ancestor(api.ANCESTOR_TRAINER)
        return trainer.container(api.NODE) if trainer is not None else None

    @property
    def replicated_jobs(self) -> list[dict[str, Any]]:
        jobs = self.spec.get("replicatedJobs")
        return [job for job in jobs if isinstance(job, dict)] if isinstance(jobs, list) else []

    def runtime_resources_per_node(self) -> dict[str, Any] | None:
        """Trainer ``ExtractResourcePerNodeFromRuntime``: resources of container ``node`` in the first
        replicated job that is named ``node`` or has the trainer ancestor and has such a container."""
        for job in self.replicated_jobs:
            if job.get("name") == api.NODE or job_ancestor(job) == api.ANCESTOR_TRAINER:
                container = find_container(pod_spec_of(job), api.NODE)
                if container is not None:
                    return as_dict(container.get("resources"))
        return None

    def resources_for_derivation(self, trainjob: TrainJobView) -> dict[str, Any]:
        """The resources GPU/CPU-derived counts use: the TrainJob's ``resourcesPerNode`` *alone* when
        set, else the runtime's node container resources (trainer.md §3.6, quirk 4)."""
        own = trainjob.resources_per_node
        if own is not None:
            return own
        return self.runtime_resources_per_node() or {}


def build_info(trainjob: TrainJobView, runtime: Object) -> RuntimeInfo:
    """Trainer ``newRuntimeInfo`` on a defaulted TrainJob and runtime (neither is modified)."""
    template = template_of(runtime)
    template_meta = as_dict(template.get("metadata"))
    labels = string_map(template_meta.get("labels"))
    annotations = string_map(template_meta.get("annotations"))
    for patch in trainjob.runtime_patches:
        patch_meta = as_dict(as_dict(as_dict(patch.get("trainingRuntimeSpec")).get("template")).get("metadata"))
        labels.update(string_map(patch_meta.get("labels")))
        annotations.update(string_map(patch_meta.get("annotations")))

    spec = copy_tree(as_dict(template.get("spec")))
    runtime_order = [job.get("name") for job in dicts(spec.get("replicatedJobs"))]
    for patch in trainjob.runtime_patches:
        patch_spec = as_dict(as_dict(patch.get("trainingRuntimeSpec")).get("template")).get("spec")
        if isinstance(patch_spec, dict):
            spec = merge_jobset_spec(spec, patch_spec)
    restore_job_order(spec, [name for name in runtime_order if isinstance(name, str)])

    policy = ml_policy(runtime)
    mpi = as_dict(as_dict(policy).get("mpi"))
    launcher_as_node = isinstance(as_dict(policy).get("mpi"), dict) and mpi.get("runLauncherAsNode") is True
    resources_per_node = trainjob.resources_per_node
    pod_sets: list[PodSet] = []
    jobs = spec.get("replicatedJobs")
    for job in jobs if isinstance(jobs, list) else []:
        if not isinstance(job, dict):
            continue
        name = as_str(job.get("name"))
        job_spec = as_dict(as_dict(job.get("template")).get("spec"))
        parallelism = as_int(job_spec.get("parallelism"))
        count = 1 if parallelism is None else parallelism
        ancestor = job_ancestor(job)
        if ancestor == api.ANCESTOR_TRAINER and policy is not None:
            num_nodes = as_int(policy.get("numNodes"))
            count = 1 if num_nodes is None else num_nodes
        if resources_per_node is not None and (
            (ancestor == api.ANCESTOR_TRAINER and policy is not None) or (launcher_as_node and name == api.NODE)
        ):
            _merge_node_resources(job, resources_per_node)
        pod_sets.append(PodSet(name, ancestor, max(count, 1), job, pod_requests(pod_spec_of(job))))

    return RuntimeInfo(
        labels=labels,
        annotations=annotations,
        ml_policy=policy,
        pod_group_policy=as_dict(as_dict(runtime.get("spec")).get("podGroupPolicy")),
        spec=spec,
        pod_sets=pod_sets,
    )


def _merge_node_resources(job: dict[str, Any], resources_per_node: dict[str, Any]) -> None:
    """trainer.md §3.6 on the first container named ``node``.

    Quirk [derived from newRuntimeInfo]: only ``limits`` and ``requests`` of the template are merged and
    written back; resource ``claims`` of both the runtime and the TrainJob are dropped from the JobSet.
    Quantities are re-serialised as Go does (``0.5`` → ``500m``).
    """
    container = find_container(pod_spec_of(job), api.NODE)
    if container is None:
        return
    current = as_dict(container.get("resources"))
    base = {key: current[key] for key in ("limits", "requests") if isinstance(current.get(key), dict)}
    merged = merge_resources(base, resources_per_node)
    container["resources"] = {
        key: canonical_quantities(merged[key]) for key in ("limits", "requests") if merged.get(key)
    }
