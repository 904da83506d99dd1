"""Kueue's webhooks on JobSets, TrainJobs and Jobs (jobsetctl/kueue/jobs.py, job_rules.py)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import rules_of, validate_text

TRAINJOB_WITH_KUEUE_PATCH = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj}
spec:
  runtimeRef: {name: torch-distributed}
  runtimePatches:
  - manager: kueue.x-k8s.io/manager
    trainingRuntimeSpec: {template: {spec: {}}}
"""


def test_quirk_creating_a_trainjob_that_holds_kueues_patch_is_refused(tmp_path: Path) -> None:
    # trainjob_webhook.go Default appends Kueue's runtimePatch to every TrainJob it sees created, without
    # looking for one: a TrainJob copied from a cluster (it holds the patch) is refused as a duplicate.
    assert rules_of(validate_text(tmp_path, TRAINJOB_WITH_KUEUE_PATCH)) == ["schema-duplicate"]


def test_without_the_trainjob_integration_the_patch_is_not_added(tmp_path: Path) -> None:
    config = tmp_path / "kueue.yaml"
    config.write_text("integrations: {frameworks: [batch/job]}\n")
    from jobsetctl.kueue.config import load_kueue_config

    assert rules_of(validate_text(tmp_path, TRAINJOB_WITH_KUEUE_PATCH, kueue=load_kueue_config(str(config)))) == []
