"""The Scenario samples the README and ``samples/scenarios/README.md`` show: what users run first.

Each sample is held to exactly what a user sees: the notable events printed under the chart (the log
of :mod:`jobsetctl.simulate.eventlog`), the per-workload summary, and the whole ``-o json`` document
(golden files under ``golden/samples/``; ``JOBSETCTL_UPDATE_GOLDEN=1`` rewrites them for review).
Generated name suffixes are written ``-XXXXX`` in the inline expectations (the golden files keep them).

Where an expected sequence claims upstream behaviour, the upstream source is cited next to it. Three
things are our model, not upstream's, and are marked so: the moment a node is declared failed (the
Scenario's ``failNode`` time, standing in for ``node-monitor-grace-period``), a dead node's pods being
collected when their grace period ends (upstream they stay Terminating until the node is deleted or
marked out-of-service; :mod:`jobsetctl.fakecluster.nodelifecycle`), and pod run times (annotations).

``gang-topology`` depends on the scheduler's workload-aware preemption (issue 11 changes it); its
expectations say so where they do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jobsetctl.simulate.eventlog import log_lines
from jobsetctl.simulate.inputs import load_inputs
from jobsetctl.simulate.report import is_allowed
from jobsetctl.simulate.runner import SimulateOptions, SimulationResult, plan, run_plan
from jobsetctl.simulate.summary import summarize
from jobsetctl.simulate.timeline import build_timeline
from tests.helpers import SAMPLES
from tests.simulate.harness import GENERATED_SUFFIX, assert_golden, load, run_json

SCENARIOS = sorted((SAMPLES / "scenarios").glob("*.yaml"))

# Upstream sources cited below (kubernetes/kubernetes unless said otherwise):
#   NODE      pkg/controller/nodelifecycle/node_lifecycle_controller.go: Ready=Unknown, reason NodeStatusUnknown,
#             "Kubelet stopped posting node status."; pkg/controller/util/node: event NodeNotReady "Node <name>
#             status is now: NodeNotReady"; MarkPodsNotReady: pod event NodeNotReady "Node is not ready".
#   TAINT     plugin/pkg/admission/defaulttolerationseconds: every pod tolerates node.kubernetes.io/unreachable
#             NoExecute for 300 s; pkg/controller/tainteviction/taint_eviction.go: event TaintManagerEviction
#             "Marking for deletion Pod <ns>/<name>" (emitPodDeletionEvent), condition DisruptionTarget reason
#             DeletionByTaintManager "Taint manager: deleting due to NoExecute taint" (addConditionAndDeletePod).
#   JOB       pkg/controller/job/job_controller.go: backoffLimit 0 and one failed pod: Failed, reason
#             BackoffLimitExceeded "Job has reached the specified backoff limit"; suspend: condition Suspended
#             reason JobSuspended "Job suspended", resume JobResumed "Job resumed".
#   JOBSET    kubernetes-sigs/jobset pkg/constants/constants.go: RestartingJobSetReasonDefaultFailurePolicy
#             "DefaultFailurePolicy", RestartJobSetActionMessage "applying RestartJobSet failure policy action",
#             pkg/controllers/failure_policy.go messageWithFirstFailedJob "(first failed job: <name>)";
#             JobsReady "all jobs are ready"; AllJobsCompleted "jobset completed successfully";
#             SuspendedJobs "jobset is suspended"; ResumeJobs "jobset is resumed".
#   TRAINER   kubeflow/trainer pkg/constants/constants.go: "TrainJob is suspended" / "TrainJob is resumed";
#             pkg/runtime/framework/plugins/jobset/jobset.go (Status): the TrainJob's Complete condition is
#             the JobSet's Completed condition (reason AllJobsCompleted, its message).
NODE_FAILURE_LOG = [
    (1800, "Node gpu-1", "Failed", None, "NodeStatusUnknown: Kubelet stopped posting node status."),  # NODE
    (1800, "Node gpu-1", "NodeNotReady", None, "Node gpu-1 status is now: NodeNotReady"),  # NODE
    (1800, "Pod default/resilient-workers-0-1-XXXXX", "NodeNotReady", None, "Node is not ready"),  # NODE
    # 300 s later (TAINT), the pod is marked for deletion; its 30 s grace period over, it is collected
    # (our model of a dead node's pods, see the module docstring).
    (2100, "Pod default/resilient-workers-0-1-XXXXX", "TaintManagerEviction", None,
     "Marking for deletion Pod default/resilient-workers-0-1-XXXXX"),
    (2130, "Pod default/resilient-workers-0-1-XXXXX", "Failed", "gpu-1",
     "DeletionByTaintManager: Taint manager: deleting due to NoExecute taint"),  # TAINT
    (2130, "Job default/resilient-workers-0", "Failed", None,
     "BackoffLimitExceeded: Job has reached the specified backoff limit"),  # JOB
    (2130, "JobSet default/resilient", "Restarting", None,
     "DefaultFailurePolicy: applying RestartJobSet failure policy action (first failed job: resilient-workers-0)"),
    # After the restart, 3 healthy 8-GPU nodes hold 3 of the 4 pods until gpu-spare joins at 45m.
    (2130, "Pod default/resilient-workers-0-1-XXXXX", "Unschedulable", None,
     "Unschedulable: 0/4 nodes are available: 1 node(s) had untolerated taint(s), 3 Insufficient nvidia.com/gpu. "
     "preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims "
     "found for incoming pod."),
    (2160, "Pod default/resilient-workers-1-1-XXXXX", "Unschedulable", None,
     "Unschedulable: 0/4 nodes are available: 1 node(s) had untolerated taint(s), 3 Insufficient nvidia.com/gpu. "
     "preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims "
     "found for incoming pod."),
    (2700, "JobSet default/resilient", "JobsReady", None, "all jobs are ready"),  # JOBSET
    # failPod by namePrefix: the first running pod of resilient-workers-1 exits 1.
    (7200, "Pod default/resilient-workers-1-0-XXXXX", "Failed", "gpu-3", "Error: container trainer exited with code 1"),
    (7230, "Job default/resilient-workers-1", "Failed", None,
     "BackoffLimitExceeded: Job has reached the specified backoff limit"),  # JOB
    (7230, "JobSet default/resilient", "Restarting", None,
     "DefaultFailurePolicy: applying RestartJobSet failure policy action (first failed job: resilient-workers-1)"),
    (7260, "JobSet default/resilient", "JobsReady", None, "all jobs are ready"),  # JOBSET
    (14460, "JobSet default/resilient", "Completed", None, "AllJobsCompleted: jobset completed successfully"),
]
TWO_TEAMS_LOG = [
    (3600, "Node gpu-3", "Failed", None, "NodeStatusUnknown: Kubelet stopped posting node status."),  # NODE
    (3600, "Node gpu-3", "NodeNotReady", None, "Node gpu-3 status is now: NodeNotReady"),  # NODE
    (3600, "Pod team-a/team-a-train-workers-0-3-XXXXX", "NodeNotReady", None, "Node is not ready"),  # NODE
    (3900, "Pod team-a/team-a-train-workers-0-3-XXXXX", "TaintManagerEviction", None,
     "Marking for deletion Pod team-a/team-a-train-workers-0-3-XXXXX"),  # TAINT
    (3930, "Pod team-a/team-a-train-workers-0-3-XXXXX", "Failed", "gpu-3",
     "DeletionByTaintManager: Taint manager: deleting due to NoExecute taint"),  # TAINT
    (3930, "Job team-a/team-a-train-workers-0", "Failed", None,
     "BackoffLimitExceeded: Job has reached the specified backoff limit"),  # JOB
    (3930, "JobSet team-a/team-a-train", "Restarting", None,
     "DefaultFailurePolicy: applying RestartJobSet failure policy action (first failed job: team-a-train-workers-0)"),
    (3960, "JobSet team-a/team-a-train", "JobsReady", None, "all jobs are ready"),  # JOBSET
    (5400, "Pod team-a/nightly-eval-XXXXX", "Failed", "cpu-1", "Error: container eval exited with code 1"),
    (7200, "TrainJob team-b/team-b-finetune", "Suspended", None, "Suspended: TrainJob is suspended"),  # TRAINER
    (7200, "JobSet team-b/team-b-finetune", "Suspended", None, "SuspendedJobs: jobset is suspended"),  # JOBSET
    (7200, "Job team-b/team-b-finetune-node-0", "Suspended", None, "JobSuspended: Job suspended"),  # JOB
    (9000, "TrainJob team-b/team-b-finetune", "Resumed", None, "Resumed: TrainJob is resumed"),  # TRAINER
    (9000, "JobSet team-b/team-b-finetune", "Resumed", None, "ResumeJobs: jobset is resumed"),  # JOBSET
    (9000, "Job team-b/team-b-finetune-node-0", "Resumed", None, "JobResumed: Job resumed"),  # JOB
    (14760, "JobSet team-a/team-a-train", "Completed", None, "AllJobsCompleted: jobset completed successfully"),
    (16200, "JobSet team-b/team-b-finetune", "Completed", None, "AllJobsCompleted: jobset completed successfully"),
    (16200, "TrainJob team-b/team-b-finetune", "Completed", None,
     "AllJobsCompleted: jobset completed successfully"),  # TRAINER: the JobSet's condition, copied
]
_BATCH_WAITS = ("Unschedulable: 0/8 nodes are available: 8 Insufficient nvidia.com/gpu. preemption: 0/8 nodes are "
                "available: 8 No preemption victims found for incoming pod.")
#: Depends on the scheduler (issue 11): workload-aware preemption of the low-priority gang's pods by the
#: high-priority gang at 1h, the gang's bind after its victims are gone, and the texts of both.
GANG_TOPOLOGY_LOG = [
    *[(3600, f"Pod default/batch-{i}-XXXXX", "Preempted", f"gpu-{i}",
       f"PreemptionByScheduler: Preempted by PodGroup default/hp-workers on node gpu-{i}") for i in range(4)],
    # Upstream's condition text (errPodGroupUnschedulable, schedule_one_podgroup.go, as issue 11 cites it);
    # the chart's note keeps the short explanation.
    (3600, "PodGroup default/hp-workers", "Unschedulable", None, "Unschedulable: pod group is unschedulable"),
    # The batch Job replaces its preempted pods; nothing is left for them until hp-js finishes.
    *[(3650, f"Pod default/batch-{i}-XXXXX", "Unschedulable", None, _BATCH_WAITS) for i in range(4)],
    (7230, "JobSet default/hp-js", "Completed", None, "AllJobsCompleted: jobset completed successfully"),
    (14400, "JobSet default/lp-js", "Completed", None, "AllJobsCompleted: jobset completed successfully"),
]
#   KUEUE     kubernetes-sigs/kueue pkg/controller/jobframework/reconciler.go: event CreatedWorkload "Created
#             Workload: <ns>/<name>"; pkg/scheduler/preemption/preemption.go: the victim's Preempted message
#             (preemptor by UID, both Cohort paths) and the preemptor's PreemptedWorkload event; the job is
#             suspended while it waits and resumed on admission (jobframework, issue #14's contract).
#             Event by event, with the Workload conditions, in tests/simulate/test_kueue.py.
def _jobs(time: float, jobset: str, count: int, word: str) -> list[tuple[Any, ...]]:
    detail = {"Suspended": "JobSuspended: Job suspended", "Resumed": "JobResumed: Job resumed"}[word]
    return [(time, f"Job {jobset}-workers-{i}", word, None, detail) for i in range(count)]


_SUSPENDED, _RESUMED = "SuspendedJobs: jobset is suspended", "ResumeJobs: jobset is resumed"
_PRETRAIN_WL, _FINETUNE_WL = "team-a/jobset-pretrain-99a05", "team-b/jobset-finetune-177e1"
KUEUE_LOG = [
    # Created suspended by Kueue's webhook, admitted at once (team A borrows team B's idle GPUs).
    (0, "JobSet team-a/pretrain", "Suspended", None, _SUSPENDED), *_jobs(0, "team-a/pretrain", 6, "Suspended"),
    (0, "JobSet team-a/pretrain", "Resumed", None, _RESUMED), *_jobs(0, "team-a/pretrain", 6, "Resumed"),
    (0, "JobSet team-a/pretrain", "CreatedWorkload", None, f"Created Workload: {_PRETRAIN_WL}"),  # KUEUE
    # Team B's production JobSet reclaims its GPUs: team A's workload is preempted, its JobSet suspended.
    (1200, "JobSet team-b/finetune", "Suspended", None, _SUSPENDED), *_jobs(1200, "team-b/finetune", 3, "Suspended"),
    (1200, f"Workload {_PRETRAIN_WL}", "Preempted", None,  # KUEUE
     "InCohortReclamation: Preempted to accommodate a workload (UID: 83c2854c-da91-46fd-ac2a-f24c3e323c07, JobUID: "
     "bda4351c-e273-4d4c-812a-79e10144d29e) due to reclamation within the cohort; preemptor path: /research/team-b; "
     "preemptee path: /research/team-a"),
    (1200, "JobSet team-a/pretrain", "Suspended", None, _SUSPENDED), *_jobs(1200, "team-a/pretrain", 6, "Suspended"),
    (1200, "JobSet team-b/finetune", "CreatedWorkload", None, f"Created Workload: {_FINETUNE_WL}"),  # KUEUE
    (1200, f"Workload {_FINETUNE_WL}", "PreemptedWorkload", None,  # KUEUE
     "Preempted workload team-a/jobset-pretrain-99a05 (UID: 162f6bf9-2836-41c6-a6eb-0ba0144fb5c3) in ClusterQueue "
     "team-a; preemptor effective priority: 1000 (base: 1000, boost: 0); preemptee effective priority: 0 (base: 0, "
     "boost: 0)"),
    (1201, f"Workload {_PRETRAIN_WL}", "WaitingForQuota", None,
     "couldn't assign flavors to pod set workers: insufficient unused quota for nvidia.com/gpu in flavor gpu, "
     "4 more needed"),
    # The admission check answers Ready after its 2 minutes.
    (1320, "JobSet team-b/finetune", "Resumed", None, _RESUMED), *_jobs(1320, "team-b/finetune", 3, "Resumed"),
    (4020, "JobSet team-b/finetune", "Completed", None, "AllJobsCompleted: jobset completed successfully"),
    # One requeueBatchPeriod after the quota comes back.
    (4021, "JobSet team-a/pretrain", "Resumed", None, _RESUMED), *_jobs(4021, "team-a/pretrain", 6, "Resumed"),
    (11221, "JobSet team-a/pretrain", "Completed", None, "AllJobsCompleted: jobset completed successfully"),
]
EXPECTED_LOGS = {"node-failure": NODE_FAILURE_LOG, "two-teams": TWO_TEAMS_LOG, "gang-topology": GANG_TOPOLOGY_LOG,
                 "kueue": KUEUE_LOG}

#: (workload, state, submitted, admitted, finished, preemptions, restarts, GPU-hours) per sample.
EXPECTED_WORKLOADS = {
    "node-failure": [("JobSet default/resilient", "Completed", 0, 0, 14460, 0, 2, 126.3)],
    "two-teams": [
        ("JobSet team-a/team-a-train", "Completed", 0, 0, 14760, 0, 1, 261.4),
        ("TrainJob team-b/team-b-finetune", "Completed", 1800, 1800, 16200, 0, 0, 112.3),
        # The failed pod is replaced (backoffLimit 2); 4 completions, 2 at a time, 40 minutes each.
        ("Job team-a/nightly-eval", "Completed", 2700, 2700, 7810, 0, 0, 0.0),
        ("Job team-b/scratch", "Deleted", 2700, 2700, 14400, 0, 0, 0.0),
    ],
    "gang-topology": [  # scheduler-dependent (issue 11): preemptions and hp-js's admission time
        ("JobSet default/lp-js", "Completed", 0, 0, 14400, 0, 0, 128.0),
        ("Job default/batch", "Completed", 0, 0, 25230, 4, 0, 192.0),
        ("JobSet default/hp-js", "Completed", 3600, 3630, 7230, 0, 0, 32.0),
    ],
    # Kueue's preemption suspends the JobSet (no pod Preempted events: summary.kueue counts it by reason).
    "kueue": [
        ("JobSet team-a/pretrain", "Completed", 0, 0, 11221, 0, 0, 56.2),
        ("JobSet team-b/finetune", "Completed", 1200, 1320, 4020, 0, 0, 9.0),
    ],
}


def _run(name: str) -> SimulationResult:
    path = str(SAMPLES / "scenarios" / f"{name}.yaml")
    inputs = load_inputs([path], None)
    assert not inputs.errors
    return run_plan(plan(inputs, SimulateOptions([path])), 0)


def _generic(text: str) -> str:
    return GENERATED_SUFFIX.sub("-XXXXX", text)


def test_samples_exist() -> None:
    assert {p.stem for p in SCENARIOS} == set(EXPECTED_LOGS)


@pytest.mark.parametrize("name", sorted(EXPECTED_LOGS))
def test_sample_notable_events_are_exact(name: str) -> None:
    """The "Events" section of ``jobsetctl simulate samples/scenarios/NAME.yaml``, line by line."""
    lines = [(line.time, _generic(line.subject), line.word, line.node, _generic(line.detail))
             for line in log_lines(_run(name))]
    assert lines == EXPECTED_LOGS[name]


@pytest.mark.parametrize("name", sorted(EXPECTED_WORKLOADS))
def test_sample_summary_is_exact(name: str) -> None:
    result = _run(name)
    timeline = build_timeline(result.events, result.ledger, result.end_time)
    summary = summarize(result.events, result.ledger, timeline)
    rows = [(f"{w.key[0]} {w.key[1]}/{w.key[2]}", w.state, w.submitted, w.admitted, w.finished, w.preemptions,
             w.restarts, round(float(w.gpu_seconds) / 3600, 1)) for w in summary.workloads]
    assert rows == EXPECTED_WORKLOADS[name]


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_sample_json_is_exact(path: Path, tmp_path: Path) -> None:
    """The whole ``-o json`` document: every event, the final states, the summary."""
    text, outcome = run_json(path, trace=str(tmp_path / "t.json"), svg=str(tmp_path / "c.svg"))
    assert outcome.report is None, outcome.report
    assert not outcome.failed and not outcome.never_started
    document: dict[str, Any] = load(text)
    assert all(is_allowed(e["kind"], e["event"], e.get("group")) for e in document["events"])
    assert_golden(f"samples/{path.stem}.json", text)


def test_samples_together_show_every_scenario_feature() -> None:
    from jobsetctl.simulate.nodes import is_node

    seen: set[str] = set()
    for path in SCENARIOS:
        inputs = load_inputs([str(path)], None)
        scenario = inputs.scenario
        assert scenario is not None and not inputs.errors
        spec = scenario.record.obj["spec"]
        seen.update(f"spec.{key}" for key in spec)
        for pool in spec.get("nodes", []):
            seen.update(f"nodes.{key}" for key in pool)
        for submission in spec.get("submit", []):
            seen.update(f"submit.{key}" for key in submission)
        for action in scenario.actions:
            seen.add(f"action.{action.verb}")
            if action.pod is not None:
                seen.add("failPod.name" if action.pod.name is not None else "failPod.namePrefix")
        if any(is_node(r.obj) for r in inputs.all_records()):
            seen.add("submitted Node")
        if len(scenario.nodes) > 1:
            seen.add("several pools")
    assert seen >= {
        "spec.kubernetesVersion", "spec.featureGates", "spec.until", "spec.nodes", "spec.submit", "spec.actions",
        "nodes.name", "nodes.count", "nodes.capacity", "nodes.labels", "nodes.taints", "nodes.topology",
        "nodes.topologyOffset", "submit.at", "submit.files", "submit.objects",
        "action.failNode", "action.failPod", "action.suspend", "action.resume", "action.delete",
        "failPod.name", "failPod.namePrefix", "submitted Node", "several pools",
    }
    assert (SAMPLES / "scenarios" / "manifests" / "nodes.yaml").is_file()  # the --nodes sample
