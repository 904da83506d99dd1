"""Every rendered object is valid: built-in kinds against the strict Kubernetes JSON Schemas of the release
it was rendered for (kubernetes-validate; scheduling.md "Authority for field names"), and rendered
JobSets against our own ``validate``.

The objects are read from the golden files, which :mod:`tests.render.test_golden` proves equal to what
``render`` prints; so every case there is checked here, without rendering twice. The upstream examples have no
golden file (only a digest: upstream content is not copied here); ``test_golden.test_upstream`` runs the same
two checks (:func:`schema_problems`, :func:`jobset_errors`) on what it renders.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from jobsetctl.diagnostics import Layer
from jobsetctl.kube.featuregates import GATES, FeatureGates
from jobsetctl.kube.versions import KubeVersion
from jobsetctl.validate import ValidateOptions, check
from tests.render.support import GOLDEN, golden_version, kube_schemas

GOLDENS = sorted(GOLDEN.glob("*.yaml"))


def _objects(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if isinstance(d, dict)]


def schema_problems(objects: list[dict[str, Any]], version: KubeVersion) -> list[str]:
    """Built-in kinds that the strict Kubernetes JSON Schemas of ``version`` reject."""
    schemas = kube_schemas(version)
    problems: list[str] = []
    for obj in objects:
        md = obj.get("metadata") or {}
        for error in schemas.errors(obj) or []:
            problems.append(f"{obj.get('kind')} {md.get('name') or md.get('generateName')}: {error}")
    return problems


@pytest.mark.parametrize("path", GOLDENS, ids=[p.stem for p in GOLDENS])
def test_builtin_kinds_match_the_kubernetes_schemas(path: Path) -> None:
    problems = schema_problems(_objects(path), golden_version(path))
    assert not problems, "\n".join(problems[:20])


def test_the_schemas_are_applied() -> None:
    """A guard for the test above: the registry resolves ``$ref`` and strictness rejects unknown fields."""
    from jobsetctl.kube.versions import KubeVersion

    schemas = kube_schemas(KubeVersion.V1_37)
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
           "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i", "colour": "blue"}]}}}}
    errors = schemas.errors(job)
    assert errors and any("colour" in e for e in errors)
    assert schemas.errors({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet"}) is None
    assert schemas.errors({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup"}) is None


CONTEXT_KINDS = ("JobSet", "PriorityClass", "Workload", "PodGroup", "CompositePodGroup",
                 # the Kueue queues a queued JobSet goes through (issue #14)
                 "LocalQueue", "ClusterQueue", "Cohort", "ResourceFlavor", "Topology", "WorkloadPriorityClass",
                 "AdmissionCheck")
JOBSET_GOLDENS = [p for p in GOLDENS if "kind: JobSet" in p.read_text(encoding="utf-8")]


def jobset_errors(objects: list[dict[str, Any]], version: KubeVersion, tmp_path: Path, *,
                  consequences: bool = True) -> list[str]:
    """Errors ``validate`` finds in the rendered JobSets as admission left them (defaults applied), next to what
    they reference that the user writes (PriorityClasses and pod groups without owner); what the controllers
    created from them (their PVCs, Services, Jobs) would be existing objects they conflict with.
    ``consequences=False`` leaves out the consequence layer (what a render already reports and goes on with)."""
    chosen = [o for o in objects
              if o.get("kind") in CONTEXT_KINDS and not (o.get("metadata") or {}).get("ownerReferences")]
    if not any(o.get("kind") == "JobSet" for o in chosen):
        return []
    manifest = tmp_path / "rendered.yaml"
    manifest.write_text(yaml.safe_dump_all(chosen, sort_keys=False), encoding="utf-8")
    every_gate = FeatureGates(version).with_enabled(n for n, g in GATES.items() if not g.locked)
    # Admission only: what fails later (a Kueue workload no flavor can serve, issue #14) is the render's own
    # diagnostic, in the golden's stderr.
    report = check(ValidateOptions(paths=[str(manifest)], version=version, gates=every_gate, admission_only=True)).report
    return [f"{d.object}: {d.rule}: {d.message}" for d in report.diagnostics
            if d.severity == "error" and d.object is not None and d.object.kind == "JobSet"
            and (consequences or d.layer is not Layer.CONSEQUENCE)]


@pytest.mark.parametrize("path", JOBSET_GOLDENS, ids=[p.stem for p in JOBSET_GOLDENS])
def test_rendered_jobsets_pass_validate(path: Path, tmp_path: Path) -> None:
    errors = jobset_errors(_objects(path), golden_version(path), tmp_path)
    assert not errors, "\n".join(errors)
