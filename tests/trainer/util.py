"""Builders for TrainJobs and runtimes used across the Trainer tests, and finding filters."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from jobsetctl.diagnostics import Diagnostic
from jobsetctl.kube.featuregates import FeatureGates, parse_feature_gates
from jobsetctl.kube.versions import KubeVersion
from jobsetctl.trainer.catalog import builtin_runtime
from jobsetctl.trainer.expand import Expansion, expand
from tests.helpers import validate_files

GATES: FeatureGates = FeatureGates(KubeVersion.V1_37)
STATUS_GATES: FeatureGates = parse_feature_gates("TrainJobStatus=true", KubeVersion.V1_37)
ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
#: Runtime label that keeps the runtime webhook away (trainer.md §2.5), for runtimes it would reject.
NO_WEBHOOK = {"trainer.kubeflow.org/webhook-validation": "disabled"}
RANK_FIELD = "metadata.annotations['batch.kubernetes.io/job-completion-index']"


def container(name: str = "node", image: str = "img", **fields: Any) -> dict[str, Any]:
    return {"name": name, "image": image, **fields}


def job(
    name: str = "node",
    ancestor: str | None = "trainer",
    containers: list[dict[str, Any]] | None = None,
    *,
    init_containers: list[dict[str, Any]] | None = None,
    pod: dict[str, Any] | None = None,
    job_spec: dict[str, Any] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    pod_spec = dict(pod or {})
    if init_containers is not None:
        pod_spec["initContainers"] = init_containers
    pod_spec["containers"] = containers if containers is not None else [container()]
    template: dict[str, Any] = {}
    if ancestor is not None:
        template["metadata"] = {"labels": {ANCESTOR: ancestor}}
    template["spec"] = {**(job_spec or {}), "template": {"spec": pod_spec}}
    return {"name": name, **fields, "template": template}


def runtime(
    name: str = "rt",
    *,
    kind: str = "ClusterTrainingRuntime",
    ml_policy: dict[str, Any] | None = None,
    jobs: list[dict[str, Any]] | None = None,
    pod_group_policy: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    namespace: str | None = None,
    template_metadata: dict[str, Any] | None = None,
    jobset: dict[str, Any] | None = None,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    if labels:
        metadata["labels"] = labels
    spec: dict[str, Any] = {}
    if ml_policy is not None:
        spec["mlPolicy"] = ml_policy
    if pod_group_policy is not None:
        spec["podGroupPolicy"] = pod_group_policy
    template: dict[str, Any] = {}
    if template_metadata is not None:
        template["metadata"] = template_metadata
    template["spec"] = {**(jobset or {}), "replicatedJobs": jobs if jobs is not None else [job()]}
    spec["template"] = template
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": kind, "metadata": metadata, "spec": spec}


def torch_runtime(name: str = "rt", **kwargs: Any) -> dict[str, Any]:
    kwargs.setdefault("ml_policy", {"numNodes": 1, "torch": {}})
    return runtime(name, **kwargs)


def trainjob(
    name: str = "tj",
    runtime_name: str = "rt",
    *,
    kind: str | None = None,
    trainer: dict[str, Any] | None = None,
    initializer: dict[str, Any] | None = None,
    patches: list[dict[str, Any]] | None = None,
    namespace: str | None = None,
    uid: str | None = None,
    **spec: Any,
) -> dict[str, Any]:
    ref: dict[str, Any] = {"name": runtime_name}
    if kind is not None:
        ref["kind"] = kind
    body: dict[str, Any] = {"runtimeRef": ref}
    if initializer is not None:
        body["initializer"] = initializer
    if trainer is not None:
        body["trainer"] = trainer
    if patches is not None:
        body["runtimePatches"] = patches
    body.update(spec)
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    if uid is not None:
        metadata["uid"] = uid
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": metadata, "spec": body}


def pod_patch(job_name: str, manager: str = "example.com/team", **pod_spec: Any) -> dict[str, Any]:
    """A runtime patch that touches one replicated job's pod spec."""
    return {
        "manager": manager,
        "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [
            {"name": job_name, "template": {"spec": {"template": {"spec": pod_spec}}}},
        ]}}},
    }


def catalog(name: str) -> dict[str, Any]:
    found = builtin_runtime(name)
    assert found is not None, name
    return found


def run(tj: dict[str, Any], rt: dict[str, Any], gates: FeatureGates = GATES) -> Expansion:
    return expand(copy.deepcopy(tj), copy.deepcopy(rt), gates=gates)


# --- reading an expansion -------------------------------------------------------------------------


def rjob(expansion: Expansion, name: str) -> dict[str, Any]:
    jobs = expansion.jobset["spec"]["replicatedJobs"]
    return next(j for j in jobs if j["name"] == name)


def pod_spec(expansion: Expansion, job_name: str) -> dict[str, Any]:
    spec: dict[str, Any] = rjob(expansion, job_name)["template"]["spec"]["template"]["spec"]
    return spec


def ctr(expansion: Expansion, job_name: str, name: str = "node", *, init: bool = False) -> dict[str, Any]:
    spec = pod_spec(expansion, job_name)
    return next(c for c in spec["initContainers" if init else "containers"] if c["name"] == name)


def env_map(c: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in c.get("env", [])}


def env_names(c: dict[str, Any]) -> list[str]:
    return [e["name"] for e in c.get("env", [])]


def obj(expansion: Expansion, kind: str, name: str) -> dict[str, Any]:
    return next(o for o in expansion.objects if o["kind"] == kind and o["metadata"]["name"] == name)


# --- validating ------------------------------------------------------------------------------------


def validate_objects(tmp_path: Path, *objects: dict[str, Any], **options: Any) -> list[Diagnostic]:
    text = yaml.safe_dump_all(list(objects), sort_keys=False)
    return validate_files(tmp_path, {"input.yaml": text}, **options)


def trainer_rules(diagnostics: list[Diagnostic]) -> list[str]:
    """Rule ids of the Trainer webhooks and references (lints of the same prefix are tested in tests/lint)."""
    return [d.rule for d in diagnostics if d.rule.startswith(("trainjob-", "runtime-")) and d.layer != "lint"]


def messages(diagnostics: list[Diagnostic], rule: str) -> list[str]:
    return [d.message for d in diagnostics if d.rule == rule]


def only(diagnostics: list[Diagnostic], rule: str) -> Diagnostic:
    found = [d for d in diagnostics if d.rule == rule]
    assert len(found) == 1, [(d.rule, d.message) for d in diagnostics]
    return found[0]
