"""Manifest builders for the JobSet admission tests: dicts in, the real admission chain run on YAML.

Manifests write ``replicas`` explicitly where arithmetic depends on it, so the tests hold whether or
not the schema layer has applied the CRD default yet.
"""

from __future__ import annotations

import copy
from typing import Any

import yaml

from jobsetctl.admission.chain import AdmissionResult
from jobsetctl.diagnostics import Finding
from tests.helpers import admit_text

CONTAINER: dict[str, Any] = {"name": "main", "image": "busybox"}


def rjob(
    name: str = "rj",
    replicas: int | None = 1,
    *,
    completions: int | None = None,
    parallelism: int | None = None,
    job_spec: dict[str, Any] | None = None,
    pod_spec: dict[str, Any] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """A replicated job with one container; ``job_spec``/``pod_spec`` entries are merged in."""
    spec: dict[str, Any] = {}
    if completions is not None:
        spec["completions"] = completions
    if parallelism is not None:
        spec["parallelism"] = parallelism
    spec.update(job_spec or {})
    spec["template"] = {"spec": {"containers": [dict(CONTAINER)], **(pod_spec or {})}}
    item: dict[str, Any] = {"name": name}
    if replicas is not None:
        item["replicas"] = replicas
    item.update(fields)
    item["template"] = {"spec": spec}
    return item


def jobset(*rjobs: dict[str, Any], name: str | None = "js", generate_name: str | None = None, **spec: Any) -> dict[str, Any]:
    assert "replicatedJobs" not in spec, "pass replicated jobs positionally"
    metadata: dict[str, Any] = {}
    if name is not None:
        metadata["name"] = name
    if generate_name is not None:
        metadata["generateName"] = generate_name
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": metadata,
        "spec": {**spec, "replicatedJobs": list(rjobs) if rjobs else [rjob()]},
    }


def to_yaml(obj: dict[str, Any]) -> str:
    return yaml.safe_dump(obj, sort_keys=False)


def admit_obj(obj: dict[str, Any], gates: str = "", old: dict[str, Any] | None = None) -> AdmissionResult:
    return admit_text(to_yaml(obj), gates=gates, old=None if old is None else to_yaml(old))


def webhook_findings(obj: dict[str, Any], gates: str = "", old: dict[str, Any] | None = None) -> list[Finding]:
    """The JobSet webhook's findings only (schema and CEL findings are other layers' business)."""
    return [f for f in admit_obj(obj, gates, old).findings if f.rule.id.startswith("jobset-")]


def rules_and_messages(obj: dict[str, Any], gates: str = "", old: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    return [(f.rule.id, f.message) for f in webhook_findings(obj, gates, old)]


def rule_ids(obj: dict[str, Any], gates: str = "", old: dict[str, Any] | None = None) -> list[str]:
    return [f.rule.id for f in webhook_findings(obj, gates, old)]


def variant(obj: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A deep copy with top-level ``spec`` keys replaced."""
    copied = copy.deepcopy(obj)
    copied["spec"].update(changes)
    return copied
