"""The ClusterTrainingRuntimes Kubeflow Trainer ships (trainer.md §4), as lookups see them.

Each runtime is authored in ``runtimes/<name>.yaml`` in a compact format of our own, from the facts
trainer.md §4 lists, and expanded here into a full ``ClusterTrainingRuntime`` object:

``name``, ``framework`` (the ``trainer.kubeflow.org/framework`` label), optional ``labels``,
``mlPolicy``, optional ``podGroupPolicy``, optional ``jobSet`` (JobSetSpec fields other than
``replicatedJobs``) and ``jobs``: each with ``name``, optional ``ancestor`` (the Job-template label
``trainer.kubeflow.org/trainjob-ancestor-step``), ``replicas``, ``dependsOn``, ``pod`` (PodSpec fields
other than containers) and ``containers``.

Every runtime carries ``trainer.kubeflow.org/webhook-validation: disabled``, as the installation
overlay (``manifests/overlays/runtimes``) adds it, and images under ``ghcr.io/kubeflow/trainer/`` are
pinned to ``latest`` as that overlay does (trainer.md §4).
"""

from __future__ import annotations

import copy
import functools
from typing import Any

import yaml

from jobsetctl.trainer import api

#: Catalog order: trainer.md §4 table order.
CATALOG_NAMES: tuple[str, ...] = (
    "torch-distributed",
    "deepspeed-distributed",
    "mlx-distributed",
    "jax-distributed",
    "xgboost-distributed",
    "torchtune-llama3.2-1b",
    "torchtune-llama3.2-3b",
    "torchtune-qwen2.5-1.5b",
    "torch-distributed-with-cache",
)


def builtin_runtimes() -> list[dict[str, Any]]:
    """The nine shipped ClusterTrainingRuntimes, as fresh copies the caller may mutate."""
    return copy.deepcopy(list(_load_all()))


def builtin_runtime(name: str) -> dict[str, Any] | None:
    """One shipped runtime by name (a fresh copy), or None."""
    for runtime in _load_all():
        if runtime["metadata"]["name"] == name:
            return copy.deepcopy(runtime)
    return None


@functools.cache
def _load_all() -> tuple[dict[str, Any], ...]:
    # Imported here: importlib.resources costs ~10 ms, and only runs with a TrainJob read the catalog.
    from importlib import resources

    package = resources.files("jobsetctl.trainer") / "runtimes"
    return tuple(
        build_runtime(load_entry((package / f"{name}.yaml").read_text(encoding="utf-8")))
        for name in CATALOG_NAMES
    )


def load_entry(text: str) -> dict[str, Any]:
    """One catalog file: ``yaml.safe_load`` with libyaml's parser (``CSafeLoader``: the same safe
    constructor and resolver, ~10x faster than the pure-Python parser; every ``validate`` reads the catalog)."""
    entry: dict[str, Any] = yaml.load(text, Loader=yaml.CSafeLoader)
    return entry


def build_runtime(entry: dict[str, Any]) -> dict[str, Any]:
    """A ClusterTrainingRuntime object from one compact catalog entry."""
    labels = {api.LABEL_FRAMEWORK: entry["framework"]}
    labels.update(entry.get("labels") or {})
    labels[api.LABEL_WEBHOOK_VALIDATION] = api.WEBHOOK_VALIDATION_DISABLED
    jobset_spec: dict[str, Any] = dict(entry.get("jobSet") or {})
    jobset_spec["replicatedJobs"] = [_replicated_job(job) for job in entry["jobs"]]
    spec: dict[str, Any] = {"mlPolicy": entry["mlPolicy"]}
    if entry.get("podGroupPolicy"):
        spec["podGroupPolicy"] = entry["podGroupPolicy"]
    spec["template"] = {"spec": jobset_spec}
    return {
        "apiVersion": api.API_VERSION,
        "kind": api.CLUSTER_TRAINING_RUNTIME,
        "metadata": {"name": entry["name"], "labels": labels},
        "spec": spec,
    }


def _replicated_job(job: dict[str, Any]) -> dict[str, Any]:
    pod_spec: dict[str, Any] = dict(job.get("pod") or {})
    pod_spec["containers"] = job["containers"]
    template: dict[str, Any] = {}
    if job.get("ancestor"):
        template["metadata"] = {"labels": {api.LABEL_ANCESTOR: job["ancestor"]}}
    template["spec"] = {"template": {"spec": pod_spec}}
    replicated: dict[str, Any] = {"name": job["name"]}
    if "replicas" in job:
        replicated["replicas"] = job["replicas"]
    if job.get("dependsOn"):
        replicated["dependsOn"] = job["dependsOn"]
    replicated["template"] = template
    return replicated
