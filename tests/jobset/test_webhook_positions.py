"""Where webhook findings point in the file: (line, column, rule), through the whole validate pipeline."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobsetctl.diagnostics import Diagnostic
from tests.helpers import table, validate_files, validate_text

MANIFEST = """\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: js
spec:
  managedBy: nope
  network:
    subdomain: a.b
  successPolicy:
    operator: All
    targetReplicatedJobs: [rj, ghost]
  coordinator:
    replicatedJob: ghost
  failurePolicy:
    rules:
    - name: 9lives
      action: FailJobSet
      onJobFailureReasons: [Evicted]
  volumeClaimPolicies:
  - templates:
    - metadata:
        name: data
      spec: {}
  replicatedJobs:
  - name: rj
    replicas: 1
    groupName: G
    dependsOn: []
    template:
      spec:
        template:
          spec:
            containers:
            - name: main
              image: busybox
            volumes:
            - name: data
              emptyDir: {}
"""


def _webhook_rows(diagnostics: list[Diagnostic]) -> list[tuple[int, int, str]]:
    return [row for row, d in zip(table(diagnostics), [d for d in diagnostics if d.severity != "info"], strict=True)
            if row[2].startswith("jobset-") and d.layer == "webhook"]


def test_positions(tmp_path: Path) -> None:
    assert _webhook_rows(validate_text(tmp_path, MANIFEST)) == [
        (6, 3, "jobset-managed-by"),
        (8, 5, "jobset-subdomain-label"),
        (11, 32, "jobset-success-policy-target"),
        (13, 5, "jobset-coordinator"),
        (16, 7, "jobset-failure-rule-name-format"),
        (18, 29, "jobset-failure-rule-reason"),
        (24, 3, "jobset-vcp-volume-mount"),  # its upstream path, spec.replicatedJobs (issue #13)
        (27, 5, "jobset-group-name"),
        (28, 5, "jobset-depends-on-first"),
        (37, 15, "jobset-vcp-volume-conflict"),
    ]


@pytest.mark.parametrize(("gates", "expected"), [
    ("", [(7, 5, "jobset-inplace-restart-gate")]),
    # backoffLimit exists, so its finding points at it; the two absent fields fall back to their parent.
    ("InPlaceRestart=true", [
        (12, 7, "jobset-inplace-restart-completions"),
        (12, 7, "jobset-inplace-restart-pod-replacement-policy"),
        (13, 9, "jobset-inplace-restart-backoff-limit"),
    ]),
])
def test_in_place_restart_positions(tmp_path: Path, gates: str, expected: list[tuple[int, int, str]]) -> None:
    text = """\
    apiVersion: jobset.x-k8s.io/v1alpha2
    kind: JobSet
    metadata:
      name: js
    spec:
      failurePolicy:
        restartStrategy: InPlaceRestart
      replicatedJobs:
      - name: rj
        replicas: 1
        template:
          spec:
            backoffLimit: 6
            template:
              spec:
                containers: [{name: main, image: busybox}]
    """
    assert _webhook_rows(validate_text(tmp_path, text, gates=gates)) == expected


def test_existing_pvc_positions(tmp_path: Path) -> None:
    jobset = """\
    apiVersion: jobset.x-k8s.io/v1alpha2
    kind: JobSet
    metadata:
      name: js
    spec:
      volumeClaimPolicies:
      - templates:
        - metadata:
            name: data
          spec:
            accessModes: [ReadWriteOnce]
      replicatedJobs:
      - name: rj
        replicas: 1
        template:
          spec:
            template:
              spec:
                containers:
                - name: main
                  image: busybox
                  volumeMounts: [{name: data, mountPath: /data}]
    """
    pvc = """\
    apiVersion: v1
    kind: PersistentVolumeClaim
    metadata:
      name: data-js
    spec:
      accessModes: [ReadWriteMany]
    """
    diagnostics = validate_files(tmp_path, {"a-jobset.yaml": jobset, "b-pvc.yaml": pvc})
    rows = [(d.file.rsplit("/", 1)[-1], d.line, d.column, d.rule) for d in diagnostics if d.rule.startswith("jobset-")]
    # The retentionPolicy was defaulted (it is not in the file), so that finding points at the policy.
    assert rows == [
        ("a-jobset.yaml", 7, 5, "jobset-vcp-existing-pvc-retention"),
        ("a-jobset.yaml", 10, 7, "jobset-vcp-existing-pvc-spec"),
    ]
