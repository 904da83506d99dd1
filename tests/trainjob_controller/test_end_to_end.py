"""End to end on the virtual clock (``simulate``): the TrainJob controller with the real JobSet and Job
controllers, scheduler and kubelet. Pod run times come from ``jobsetctl.dev/duration`` (and failures from
``jobsetctl.dev/fail-after``) put on the pod templates through runtimePatches or an inline runtime."""

from __future__ import annotations

from pathlib import Path

from jobsetctl.trainer import api
from tests.helpers import dedent
from tests.simulate.harness import events_of, load, run_json
from tests.trainjob_controller.harness import (
    DURATION,
    FAIL_AFTER,
    add_gpu_nodes,
    advance_to,
    conditions,
    create,
    get_trainjob,
    install_builtin,
    kube_events,
    make_cluster,
    pod_patch,
    pod_timeline,
    runtime_patch,
    submit,
    torch_runtime,
    trainjob,
)

COMPLETED = ("Complete", "True", "AllJobsCompleted", "jobset completed successfully")


def test_torchtune_initializers_complete_then_the_trainer_runs_to_completion() -> None:
    """trainer.md §3.9, §3.15, §4: the dataset and model initializers run first; the trainer job
    (``dependsOn`` both ``Complete``, 2 GPUs) is created when the later one completes; the TrainJob
    copies the JobSet's ``Completed``."""
    cluster = make_cluster(simulate=True, create_pods=True)
    add_gpu_nodes(cluster, 2)
    install_builtin(cluster, "torchtune-llama3.2-1b")
    submit(cluster, trainjob(
        "tune", "torchtune-llama3.2-1b",
        initializer={
            "dataset": {"storageUri": "hf://tatsu-lab/alpaca"},
            "model": {"storageUri": "hf://meta-llama/Llama-3.2-1B-Instruct"},
        },
        runtimePatches=[runtime_patch(
            pod_patch("dataset-initializer", annotations={DURATION: "60s"}),
            pod_patch("model-initializer", annotations={DURATION: "120s"}),
            pod_patch("node", annotations={DURATION: "300s"}),
        )],
    ))
    advance_to(cluster, 3600.0)

    assert pod_timeline(cluster) == [
        (0.0, "TrainJob", "tune", "Created", None),
        (0.0, "ConfigMap", "tune-runtime-snapshot", "Created", None),
        (0.0, "JobSet", "tune", "Created", None),
        (0.0, "Service", "tune", "Created", None),
        (0.0, "PersistentVolumeClaim", "initializer-tune", "Created", None),
        (0.0, "Job", "tune-dataset-initializer-0", "Created", None),
        (0.0, "Job", "tune-model-initializer-0", "Created", None),
        (0.0, "Pod", "tune-dataset-initializer-0-0-*", "Created", None),
        (0.0, "Pod", "tune-model-initializer-0-0-*", "Created", None),
        (0.0, "Pod", "tune-dataset-initializer-0-0-*", "Started", None),
        (0.0, "Pod", "tune-dataset-initializer-0-0-*", "Ready", None),
        (0.0, "Pod", "tune-model-initializer-0-0-*", "Started", None),
        (0.0, "Pod", "tune-model-initializer-0-0-*", "Ready", None),
        (60.0, "Pod", "tune-dataset-initializer-0-0-*", "Succeeded", None),
        (60.0, "Job", "tune-dataset-initializer-0", "Completed", "CompletionsReached"),
        (120.0, "Pod", "tune-model-initializer-0-0-*", "Succeeded", None),
        (120.0, "Job", "tune-model-initializer-0", "Completed", "CompletionsReached"),
        (120.0, "Job", "tune-node-0", "Created", None),
        (120.0, "Pod", "tune-node-0-0-*", "Created", None),
        (120.0, "Pod", "tune-node-0-0-*", "Started", None),
        (120.0, "Pod", "tune-node-0-0-*", "Ready", None),
        (420.0, "Pod", "tune-node-0-0-*", "Succeeded", None),
        (420.0, "Job", "tune-node-0", "Completed", "CompletionsReached"),
        (420.0, "JobSet", "tune", "Completed", "AllJobsCompleted"),
        (420.0, "TrainJob", "tune", "Completed", "AllJobsCompleted"),
    ]
    assert conditions(cluster, "tune") == [(*COMPLETED, "2026-01-01T00:07:00Z")]
    assert get_trainjob(cluster, "tune")["status"]["jobsStatus"] == [
        {"name": name, "ready": 0, "succeeded": 1, "failed": 0, "active": 0, "suspended": 0}
        for name in ("node", "model-initializer", "dataset-initializer")  # the JobSet's order (by name, descending)
    ]
    assert kube_events(cluster, "tune") == []


def test_failing_trainer_fails_the_trainjob() -> None:
    """The Job fails (backoffLimit 0), the JobSet fails (``FailedJobs``), the TrainJob copies it."""
    cluster = make_cluster(simulate=True, create_pods=True)
    add_gpu_nodes(cluster, 1)
    create(cluster, torch_runtime(job_spec={"backoffLimit": 0}, pod_spec={"restartPolicy": "Never"},
                                  pod_annotations={DURATION: "60s", FAIL_AFTER: "10s"}))
    submit(cluster, trainjob(runtime="torch", kind=api.TRAINING_RUNTIME))
    advance_to(cluster, 3600.0)

    assert pod_timeline(cluster, since=1.0) == [
        (10.0, "Pod", "tj-node-0-0-*", "Failed", "Error"),
        (10.0, "Job", "tj-node-0", "Failed", "BackoffLimitExceeded"),
        (10.0, "JobSet", "tj", "Failed", "FailedJobs"),
        (10.0, "TrainJob", "tj", "Failed", "FailedJobs"),
    ]
    assert conditions(cluster) == [(
        "Failed", "True", "FailedJobs",
        "jobset failed due to one or more job failures (first failed job: tj-node-0)", "2026-01-01T00:00:10Z",
    )]


def test_active_deadline_stops_running_pods() -> None:
    """trainer.md §3.14: the JobSet is deleted at the deadline; its running pods get their grace period
    (30 s) and go; the TrainJob stays ``Failed/DeadlineExceeded``."""
    cluster = make_cluster(simulate=True, create_pods=True)
    add_gpu_nodes(cluster, 2)
    install_builtin(cluster, "torch-distributed")
    submit(cluster, trainjob(
        trainer={"numNodes": 2, "resourcesPerNode": {"limits": {"nvidia.com/gpu": "2"}}},
        activeDeadlineSeconds=600,
        runtimePatches=[runtime_patch(pod_patch("node", annotations={DURATION: "1h"}))],
    ))
    advance_to(cluster, 7200.0)

    assert pod_timeline(cluster, since=1.0) == [
        (600.0, "JobSet", "tj", "Deleted", None),
        (600.0, "Service", "tj", "Deleted", None),
        (600.0, "Job", "tj-node-0", "Deleted", None),
        (600.0, "TrainJob", "tj", "Failed", "DeadlineExceeded"),
        (630.0, "Pod", "tj-node-0-0-*", "Deleted", None),
        (630.0, "Pod", "tj-node-0-1-*", "Deleted", None),
    ]
    assert conditions(cluster) == [(
        "Failed", "True", "DeadlineExceeded", "TrainJob exceeded its active deadline", "2026-01-01T00:10:00Z",
    )]


TORCHTUNE_INPUT = """
    apiVersion: v1
    kind: Node
    metadata: {name: gpu-0}
    status:
      capacity: {cpu: "32", memory: 128Gi, nvidia.com/gpu: "2", pods: "110"}
      allocatable: {cpu: "32", memory: 128Gi, nvidia.com/gpu: "2", pods: "110"}
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata: {name: tune}
    spec:
      runtimeRef: {name: torchtune-llama3.2-1b}
      runtimePatches:
      - manager: example.com/test
        trainingRuntimeSpec:
          template:
            spec:
              replicatedJobs:
              - {name: dataset-initializer, template: {spec: {template: {metadata: {annotations: {jobsetctl.dev/duration: 1m}}}}}}
              - {name: model-initializer, template: {spec: {template: {metadata: {annotations: {jobsetctl.dev/duration: 2m}}}}}}
              - {name: node, template: {spec: {template: {metadata: {annotations: {jobsetctl.dev/duration: 5m}}}}}}
"""


def test_simulate_runs_a_trainjob_against_the_shipped_catalog(tmp_path: Path) -> None:
    """``jobsetctl simulate`` (the package function the CLI calls): the shipped runtimes are installed
    because a TrainJob is submitted, and the TrainJob ends ``Completed``."""
    path = tmp_path / "tune.yaml"
    path.write_text(dedent(TORCHTUNE_INPUT))
    text, _ = run_json(path)
    document = load(text)

    trainjob_rows = [e for e in events_of(document) if e[1] in ("TrainJob", "JobSet", "ConfigMap")]
    assert trainjob_rows == [
        (0, "TrainJob", "tune", "Created", None),
        (0, "ConfigMap", "tune-runtime-snapshot", "Created", None),
        (0, "JobSet", "tune", "Created", None),
        (420, "JobSet", "tune", "Completed", None),
        (420, "TrainJob", "tune", "Completed", None),
    ]
    assert [f for f in document["final"] if f["kind"] == "TrainJob"] == [
        {"kind": "TrainJob", "namespace": "default", "name": "tune", "state": "Completed"},
    ]
