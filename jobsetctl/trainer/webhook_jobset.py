"""TrainJob webhook checks of the JobSet plugin (trainer.md §2.4 J1–J13).

J1–J6 look initializer jobs up **by name** in the patched JobSetSpec (the builder finds them by
ancestor label: quirk 1). J8–J11 check the patches' job and container names.

Spec uncertainty (J8–J10) [derived]: reading Trainer HEAD, the webhook checks patch names against the
Info it builds *after* merging the patches, where the strategic merge has already appended any
unknown job or container, so J8–J10 could never fire there. trainer.md §2.4 describes them against
the runtime template; we follow the spec and check names against the *unpatched* runtime, because a
TrainJob that patches a job or container the runtime lacks fails later anyway (a replicated job
without containers, a container without image).
"""

from __future__ import annotations

from typing import Any

from jobsetctl.diagnostics import Finding
from jobsetctl.jobset import api as jobset_api
from jobsetctl.kinds.interface import ClusterView
from jobsetctl.kube.field import Path, forbidden, invalid
from jobsetctl.kube.names import domain_prefixed_path_errors
from jobsetctl.trainer import api
from jobsetctl.trainer import rules as r
from jobsetctl.trainer.expand.info import RuntimeInfo
from jobsetctl.trainer.expand.model import (
    Object,
    TrainJobView,
    as_dict,
    as_int,
    as_list,
    as_str,
    containers_of,
    dicts,
    pod_spec_of,
    template_of,
)

_PATCHES = "spec.runtimePatches"
_RUNTIME_REF = "spec.runtimeRef"
_INITIALIZERS = (
    ("dataset", api.DATASET_INITIALIZER, "datasetConfig"),
    ("model", api.MODEL_INITIALIZER, "modelConfig"),
)


def check_managers(trainjob: TrainJobView) -> list[Finding]:
    """J7: every ``manager`` is a domain-prefixed path (path reported without the index)."""
    findings: list[Finding] = []
    for index, patch in enumerate(as_list(trainjob.spec.get("runtimePatches"))):
        if not isinstance(patch, dict) or not isinstance(patch.get("manager"), str):
            continue
        manager = patch["manager"]
        at: Path = ("spec", "runtimePatches", index, "manager")
        for message in domain_prefixed_path_errors(f"{_PATCHES}.manager", manager):
            findings.append(r.PATCH_MANAGER_INVALID.finding(message, path=f"{_PATCHES}.manager", at=at))
    return findings


def _names_by_job(spec: dict[str, Any]) -> dict[str, set[str]]:
    """Container and init-container names per replicated-job name."""
    names: dict[str, set[str]] = {}
    for job in dicts(spec.get("replicatedJobs")):
        pod_spec = pod_spec_of(job)
        bucket = names.setdefault(as_str(job.get("name")), set())
        for container in containers_of(pod_spec, init=True) + containers_of(pod_spec):
            bucket.add(as_str(container.get("name")))
    return names


def check_initializers(trainjob: TrainJobView, info: RuntimeInfo) -> list[Finding]:
    """J1–J6 (``spec.runtimeRef`` Invalid, bad value the runtimeRef; pointed at ``spec.runtimeRef``, the
    upstream path, although ``spec.initializer`` is what asks for the job: issue #13)."""
    findings: list[Finding] = []
    names = _names_by_job(info.spec)
    ref = trainjob.runtime_ref.as_dict()
    for section, job_name, config in _INITIALIZERS:
        if trainjob.initializer(section) is None:
            continue
        if job_name not in names:
            detail = f"must have {job_name} job when trainJob is configured with input {config}"
            findings.append(r.INITIALIZER_JOB_MISSING.finding(invalid(_RUNTIME_REF, ref, detail), path=_RUNTIME_REF))
        elif job_name not in names[job_name]:
            detail = f"must have container with name - {job_name} in the {job_name} job"
            findings.append(r.INITIALIZER_CONTAINER_MISSING.finding(invalid(_RUNTIME_REF, ref, detail), path=_RUNTIME_REF))
        elif not _has_initializer_mount(info.spec, job_name):
            detail = (
                f"must have volumeMount with name - {api.INITIALIZER_VOLUME} in container {job_name} "
                f"of the {job_name} job"
            )
            findings.append(r.INITIALIZER_MOUNT_MISSING.finding(invalid(_RUNTIME_REF, ref, detail), path=_RUNTIME_REF))
    return findings


def _has_initializer_mount(spec: dict[str, Any], job_name: str) -> bool:
    """J3/J6 look at *containers* named like the job (an init container of that name does not count)."""
    for job in dicts(spec.get("replicatedJobs")):
        if job.get("name") != job_name:
            continue
        for container in containers_of(pod_spec_of(job)):
            if container.get("name") != job_name:
                continue
            if any(mount.get("name") == api.INITIALIZER_VOLUME for mount in dicts(container.get("volumeMounts"))):
                return True
    return False


def check_patch_targets(trainjob: TrainJobView, runtime: Object) -> list[Finding]:
    """J8–J11, one finding per offending item (bad value: the whole runtimePatches list)."""
    findings: list[Finding] = []
    names = _names_by_job(as_dict(template_of(runtime).get("spec")))
    patches = as_list(trainjob.spec.get("runtimePatches"))
    for p_index, patch in enumerate(patches):
        if not isinstance(patch, dict):
            continue
        spec_patch = as_dict(as_dict(as_dict(patch.get("trainingRuntimeSpec")).get("template")).get("spec"))
        base: Path = ("spec", "runtimePatches", p_index, "trainingRuntimeSpec", "template", "spec", "replicatedJobs")
        for j_index, job_patch in enumerate(as_list(spec_patch.get("replicatedJobs"))):
            if not isinstance(job_patch, dict):
                continue
            job_name = as_str(job_patch.get("name"))
            if job_name not in names:
                detail = "must not have replicated job that doesn't exist in the runtime job template"
                findings.append(r.PATCH_UNKNOWN_JOB.finding(
                    invalid(_PATCHES, patches, detail), path=_PATCHES, at=(*base, j_index, "name"),
                ))
                continue
            pod_patch = pod_spec_of(job_patch)
            pod_at: Path = (*base, j_index, "template", "spec", "template", "spec")
            for c_index, container in enumerate(as_list(pod_patch.get("initContainers"))):
                if isinstance(container, dict) and as_str(container.get("name")) not in names[job_name]:
                    detail = f"must not have initContainer that doesn't exist in the runtime job {job_name}"
                    findings.append(r.PATCH_UNKNOWN_INIT_CONTAINER.finding(
                        invalid(_PATCHES, patches, detail), path=_PATCHES, at=(*pod_at, "initContainers", c_index, "name"),
                    ))
            for c_index, container in enumerate(as_list(pod_patch.get("containers"))):
                if not isinstance(container, dict):
                    continue
                name = as_str(container.get("name"))
                if name not in names[job_name]:
                    detail = f"must not have container that doesn't exist in the runtime job {job_name}"
                    findings.append(r.PATCH_UNKNOWN_CONTAINER.finding(
                        invalid(_PATCHES, patches, detail), path=_PATCHES, at=(*pod_at, "containers", c_index, "name"),
                    ))
                elif as_list(container.get("env")) and name in (api.DATASET_INITIALIZER, api.MODEL_INITIALIZER, api.NODE):
                    detail = (
                        f"must not have envs for the {api.DATASET_INITIALIZER}, {api.MODEL_INITIALIZER}, "
                        f"{api.NODE} containers"
                    )
                    findings.append(r.PATCH_ENV_FORBIDDEN.finding(
                        invalid(_PATCHES, patches, detail), path=_PATCHES, at=(*pod_at, "containers", c_index, "env"),
                    ))
    return findings


def semantic_equal(a: Any, b: Any) -> bool:
    """apimachinery ``equality.Semantic.DeepEqual`` for JSON values: nil and empty lists/maps are
    equal, and so is an absent key and an empty value."""
    if _empty(a) and _empty(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return all(semantic_equal(a.get(key), b.get(key)) for key in set(a) | set(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(semantic_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b and type(a) is type(b))


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, list | dict) and not value)


def check_patch_update(old: TrainJobView, new: TrainJobView, cluster: ClusterView | None) -> list[Finding]:
    """J12, and J13 when the existing JobSet can be looked up."""
    if semantic_equal(old.spec.get("runtimePatches"), new.spec.get("runtimePatches")):
        return []
    at: Path = ("spec", "runtimePatches")
    if old.suspend is not True and new.suspend is not True:
        detail = "RuntimePatches can only be modified when the TrainJob is suspended before or after the update"
        return [r.PATCHES_WHILE_RUNNING.finding(forbidden(_PATCHES, detail), path=_PATCHES, at=at)]
    if cluster is None:
        return []
    jobset = cluster.get(jobset_api.GROUP, "JobSet", new.namespace, new.name)
    findings: list[Finding] = []
    for status in dicts(as_dict(as_dict(jobset).get("status")).get("replicatedJobsStatus")):
        active = as_int(status.get("active"))
        if active is not None and active > 0:
            detail = f"RuntimePatches cannot be modified when the JobSet's ReplicatedJob {as_str(status.get('name'))} is still active"
            findings.append(r.PATCHES_JOBSET_ACTIVE.finding(forbidden(_PATCHES, detail), path=_PATCHES, at=at))
    return findings
