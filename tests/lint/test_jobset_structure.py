"""Lints on JobSet structure: stages, exclusive placement, coordinator DNS, Kueue (jobset.md §3.6, §4.4,
§5, §6; scheduling.md §2.6). Child Jobs the API server refuses are a consequence, not a lint:
tests/jobset/test_consequences.py.

Tables of (line, column, rule) over the lint layer; an empty row list is a passing manifest. In
``jobset()``, ``spec:`` is line 5 (after ``meta`` lines), ``replicatedJobs:`` follows the spec lines,
and each replicated job takes two lines (three with ``extra``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import validate_text
from tests.lint.support import jobset, lints, rjob

Rows = list[tuple[int, int, str]]
EXCLUSIVE = "  annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: cloud.google.com/gke-nodepool}\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # jobset.md §4.4/§6 #2: accepted (the name counts as "seen" before its own dependsOn), never starts.
        (jobset(rjob("prepare"), rjob("train", extra="dependsOn: [{name: train, status: Complete}]")),
         [(10, 18, "jobset-depends-on-self")]),
        # The message also names what waits for it; only the self-dependency is reported.
        (jobset(rjob("prepare"), rjob("train", extra="dependsOn: [{name: prepare, status: Complete}, "
                                                      "{name: train, status: Ready}]"),
                rjob("evaluate", extra="dependsOn: [{name: train, status: Complete}]")),
         [(10, 53, "jobset-depends-on-self")]),
        # On the first replicated job the webhook already rejects any dependsOn: no lint on top.
        (jobset(rjob("train", extra="dependsOn: [{name: train, status: Complete}]")), []),
        (jobset(rjob("prepare"), rjob("train", extra="dependsOn: [{name: prepare, status: Complete}]")), []),
    ],
)
def test_depends_on_self(tmp_path: Path, text: str, expected: Rows) -> None:
    assert lints(tmp_path, text) == expected


def test_depends_on_self_names_the_blocked_stages(tmp_path: Path) -> None:
    text = jobset(rjob("prepare"), rjob("train", extra="dependsOn: [{name: train, status: Complete}]"),
                  rjob("evaluate", extra="dependsOn: [{name: train, status: Complete}]"))
    [finding] = [d for d in validate_text(tmp_path, text) if d.rule == "jobset-depends-on-self"]
    assert finding.message == (
        'replicated job "train" depends on itself: the dependency is never met, so its Jobs are never created, '
        'nor those of "evaluate" that wait for it'
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # jobset.md §3.6/§5: NonIndexed pods have no completion index, so no pod is ever the leader.
        (jobset(rjob("workers", spec="completionMode: NonIndexed, completions: 2, parallelism: 2, "), meta=EXCLUSIVE),
         [(9, 23, "jobset-exclusive-non-indexed")]),
        # The annotation on the replicated job's template counts too (jobset.md §3.6).
        (jobset("  - name: workers\n    template:\n      metadata:\n        annotations: "
                "{alpha.jobset.sigs.k8s.io/exclusive-topology: rack}\n"
                "      spec: {completionMode: NonIndexed, template: {spec: {containers: [{name: c, image: x}]}}}\n"),
         [(11, 14, "jobset-exclusive-non-indexed")]),
        # Passing: Indexed (the default); NonIndexed without exclusive placement; the node-selector
        # strategy, which skips the pod webhooks.
        (jobset(rjob("workers", spec="completions: 2, parallelism: 2, "), meta=EXCLUSIVE), []),
        (jobset(rjob("workers", spec="completionMode: NonIndexed, ")), []),
        (jobset(rjob("workers", spec="completionMode: NonIndexed, "),
                meta="  annotations: {alpha.jobset.sigs.k8s.io/exclusive-topology: rack,"
                     " alpha.jobset.sigs.k8s.io/node-selector: 'true'}\n"), []),
    ],
)
def test_exclusive_placement_on_non_indexed_jobs(tmp_path: Path, text: str, expected: Rows) -> None:
    assert lints(tmp_path, text) == expected


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        # jobset.md §5: the coordinator label names a DNS name that never resolves without hostnames.
        ("  coordinator: {replicatedJob: driver}\n  network: {enableDNSHostnames: false}\n",
         [(7, 13, "jobset-coordinator-without-dns")]),
        ("  coordinator: {replicatedJob: driver}\n  network: {enableDNSHostnames: true}\n", []),
        ("  coordinator: {replicatedJob: driver}\n", []),
        ("  network: {enableDNSHostnames: false}\n", []),
    ],
)
def test_coordinator_without_dns(tmp_path: Path, spec: str, expected: Rows) -> None:
    assert lints(tmp_path, jobset(rjob("driver", spec="completions: 1, "), spec=spec)) == expected


def test_coordinator_message_gives_the_endpoint(tmp_path: Path) -> None:
    text = jobset(rjob("driver", spec="completions: 2, parallelism: 2, "),
                  spec="  coordinator: {replicatedJob: driver, podIndex: 1}\n"
                       "  network: {enableDNSHostnames: false, subdomain: net}\n")
    [finding] = [d for d in validate_text(tmp_path, text) if d.rule == "jobset-coordinator-without-dns"]
    assert "jobset.sigs.k8s.io/coordinator=js-driver-0-1.net" in finding.message


QUEUED = "  labels: {kueue.x-k8s.io/queue-name: team-a}\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # jobset.md §5 seed worry; scheduling.md §2.6/U11: quota for every stage is reserved at admission.
        (jobset(rjob("prepare"), rjob("train", extra="dependsOn: [{name: prepare, status: Complete}]"), meta=QUEUED),
         [(5, 12, "jobset-kueue-depends-on")]),
        (jobset(rjob("prepare"), rjob("train"), meta=QUEUED), []),
        (jobset(rjob("prepare"), rjob("train", extra="dependsOn: [{name: prepare, status: Complete}]")), []),
    ],
)
def test_kueue_queue_with_stages(tmp_path: Path, text: str, expected: Rows) -> None:
    assert lints(tmp_path, text) == expected


def test_kueue_message_counts_the_idle_pods(tmp_path: Path) -> None:
    text = jobset(rjob("prepare"), rjob("train", extra="dependsOn: [{name: prepare, status: Complete}]",
                                        spec="parallelism: 4, completions: 4, "), meta=QUEUED)
    [finding] = [d for d in validate_text(tmp_path, text) if d.rule == "jobset-kueue-depends-on"]
    assert 'the 4 pod(s) of "train", which wait in dependsOn' in finding.message


TRAINJOB_QUEUED = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: tune
  labels: {{kueue.x-k8s.io/queue-name: team-a}}
spec:
  runtimeRef: {{name: {runtime}}}
"""


@pytest.mark.parametrize(
    ("runtime", "expected"),
    [
        # torchtune runtimes: the node job waits for both initializers to Complete (trainer.md §4).
        ("torchtune-llama3.2-1b", [(5, 12, "jobset-kueue-depends-on")]),
        # deepspeed: the launcher waits for the nodes to be Ready, also a stage.
        ("deepspeed-distributed", [(5, 12, "jobset-kueue-depends-on")]),
        ("torch-distributed", []),
    ],
)
def test_kueue_queue_on_a_trainjob_whose_runtime_has_stages(tmp_path: Path, runtime: str, expected: Rows) -> None:
    assert lints(tmp_path, TRAINJOB_QUEUED.format(runtime=runtime)) == expected


RUNTIME_TEMPLATE = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: staged
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      successPolicy: {operator: Any}
      failurePolicy: {maxRestarts: -1}
      replicatedJobs:
      - name: prepare
        template: {spec: {template: {spec: {containers: [{name: prepare, image: x}]}}}}
      - name: node
        dependsOn: [{name: prepare, status: Complete}, {name: node, status: Ready}]
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec: {template: {spec: {containers: [{name: node, image: x}]}}}
"""


def test_jobset_spec_lints_read_runtime_templates(tmp_path: Path) -> None:
    # A runtime's template is the JobSet every TrainJob gets: the same lints apply, at template paths.
    assert lints(tmp_path, RUNTIME_TEMPLATE) == [
        (9, 23, "jobset-success-any-depends-on"),
        (10, 23, "jobset-max-restarts-negative"),
        (15, 57, "jobset-depends-on-self"),
    ]


def test_runtime_template_messages_say_whose_spec(tmp_path: Path) -> None:
    [finding] = [d for d in validate_text(tmp_path, RUNTIME_TEMPLATE) if d.rule == "jobset-success-any-depends-on"]
    assert finding.message.startswith(
        "successPolicy Any without targetReplicatedJobs completes this runtime's JobSet template as soon as"
    )
