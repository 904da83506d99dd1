"""Lints across objects: gangs that span stages, mixed schedulers in a PodGroup, exclusive placement
and priorities (scheduling.md §1.3, §3.4; jobset.md §3.6, §4.3, §4.4; trainer.md §3.10).

Rows are (file, line, column, rule) because the findings land on one of several files.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import validate_files
from tests.lint.support import lints_in_files

Rows = list[tuple[str, int, int, str]]

PODGROUP_137 = """
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {{name: pg}}
spec:
  schedulingPolicy: {{gang: {{minCount: {min_count}}}}}
"""

PODGROUP_136 = """
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {{name: pg}}
spec:
  schedulingPolicy: {{gang: {{minCount: {min_count}}}}}
"""


def staged_jobset(*, driver_status: str = "Ready", order: str = "", driver_in_group: bool = True) -> str:
    driver_group = "schedulingGroup: {podGroupName: pg}, " if driver_in_group else ""
    depends = "" if order else f"    dependsOn: [{{name: driver, status: {driver_status}}}]\n"
    return (
        "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: js}\nspec:\n"
        f"{order}  replicatedJobs:\n"
        f"  - name: driver\n    template: {{spec: {{template: {{spec: {{{driver_group}containers: [{{name: c, image: x}}]}}}}}}}}\n"
        f"  - name: workers\n{depends}"
        "    template: {spec: {parallelism: 4, completions: 4, template: {spec: {schedulingGroup: {podGroupName: pg}, "
        "containers: [{name: c, image: x}]}}}}\n"
    )


@pytest.mark.parametrize(
    ("files", "version", "expected"),
    [
        # Driver (1 pod) + 4 workers that wait for it: minCount 5 needs pods that only exist after the
        # gang runs.
        ({"pg.yaml": PODGROUP_137.format(min_count=5), "js.yaml": staged_jobset()}, "1.37",
         [("pg.yaml", 5, 29, "gang-min-count-staged")]),
        ({"pg.yaml": PODGROUP_137.format(min_count=2), "js.yaml": staged_jobset(driver_status="Complete")}, "1.37",
         [("pg.yaml", 5, 29, "gang-min-count-staged")]),
        # InOrder startup: the workers are created only once the driver is ready (jobset.md §4.3).
        ({"pg.yaml": PODGROUP_137.format(min_count=5),
          "js.yaml": staged_jobset(order="  startupPolicy: {startupPolicyOrder: InOrder}\n")}, "1.37",
         [("js.yaml", 5, 19, "jobset-startup-in-order"), ("pg.yaml", 5, 29, "gang-min-count-staged")]),
        # The same on Kubernetes 1.36.
        ({"pg.yaml": PODGROUP_136.format(min_count=5), "js.yaml": staged_jobset()}, "1.36",
         [("pg.yaml", 5, 29, "gang-min-count-staged")]),
        # Passing: the first stage alone reaches minCount (1); the gang holds only the workers, who
        # coexist; minCount above every pod is ref-gang-too-large's (an error), not this lint's.
        ({"pg.yaml": PODGROUP_137.format(min_count=1), "js.yaml": staged_jobset()}, "1.37", []),
        ({"pg.yaml": PODGROUP_137.format(min_count=4), "js.yaml": staged_jobset(driver_in_group=False)}, "1.37", []),
        ({"pg.yaml": PODGROUP_137.format(min_count=9), "js.yaml": staged_jobset()}, "1.37", []),
    ],
)
def test_gang_spanning_stages(tmp_path: Path, files: dict[str, str], version: str, expected: Rows) -> None:
    assert lints_in_files(tmp_path, files, version=version) == expected


def test_gang_too_large_stays_with_the_reference_layer(tmp_path: Path) -> None:
    files = {"pg.yaml": PODGROUP_137.format(min_count=9), "js.yaml": staged_jobset()}
    rules = [d.rule for d in validate_files(tmp_path, files) if str(d.severity) != "info"]
    assert rules == ["ref-gang-too-large"]


def test_gang_message_explains_the_wait(tmp_path: Path) -> None:
    files = {"pg.yaml": PODGROUP_137.format(min_count=5), "js.yaml": staged_jobset()}
    [finding] = [d for d in validate_files(tmp_path, files) if d.rule == "gang-min-count-staged"]
    assert finding.message == (
        'gang minCount 5 cannot be met: of the 5 pods of PodGroup "pg", only 1 can exist before the gang is '
        'admitted (JobSet "js": "workers" waits for "driver" (dependsOn), and those are in the gang '
        "themselves): the gang never starts"
    )


def test_gang_counts_plain_jobs_as_present(tmp_path: Path) -> None:
    job = """
        apiVersion: batch/v1
        kind: Job
        metadata: {name: helper}
        spec:
          parallelism: 4
          completions: 4
          template: {spec: {restartPolicy: Never, schedulingGroup: {podGroupName: pg}, containers: [{name: c, image: x}]}}
    """
    # 1 driver + 4 Job pods exist up front: 5 reaches minCount, although the workers wait.
    files = {"pg.yaml": PODGROUP_137.format(min_count=5), "js.yaml": staged_jobset(), "job.yaml": job}
    assert lints_in_files(tmp_path, files) == []


WORKLOAD_135 = """
apiVersion: scheduling.k8s.io/v1alpha1
kind: Workload
metadata: {name: wl}
spec:
  podGroups: [{name: g, policy: {gang: {minCount: 5}}}]
"""
JOBSET_135 = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec:
  replicatedJobs:
  - name: driver
    template: {spec: {template: {spec: {workloadRef: {name: wl, podGroup: g}, containers: [{name: c, image: x}]}}}}
  - name: workers
    dependsOn: [{name: driver, status: Ready}]
    template: {spec: {parallelism: 4, completions: 4, template: {spec: {workloadRef: {name: wl, podGroup: g},
      containers: [{name: c, image: x}]}}}}
"""


def test_gang_spanning_stages_on_135(tmp_path: Path) -> None:
    files = {"wl.yaml": WORKLOAD_135, "js.yaml": JOBSET_135}
    assert lints_in_files(tmp_path, files, version="1.35") == [("wl.yaml", 5, 41, "gang-min-count-staged")]


GANG_RUNTIME = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {{name: gang}}
spec:
  mlPolicy: {{numNodes: 2, torch: {{}}}}
  podGroupPolicy: {{{scheduler}: {{}}}}
  template:
    spec:
      replicatedJobs:
      - name: dataset-initializer
        template:
          metadata: {{labels: {{trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer}}}}
          spec: {{template: {{spec: {{containers: [{{name: dataset-initializer, image: x,
            volumeMounts: [{{name: initializer, mountPath: /workspace}}]}}], volumes: [{{name: initializer, emptyDir: {{}}}}]}}}}}}
      - name: node
{depends}        template:
          metadata: {{labels: {{trainer.kubeflow.org/trainjob-ancestor-step: trainer}}}}
          spec: {{template: {{spec: {{containers: [{{name: node, image: x}}]}}}}}}
"""
GANG_TRAINJOB = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj}
spec:
  runtimeRef: {kind: TrainingRuntime, name: gang}
"""
WAITS = "        dependsOn: [{name: dataset-initializer, status: Complete}]\n"


@pytest.mark.parametrize(
    ("scheduler", "depends", "expected"),
    [
        # trainer.md §3.10: the PodGroup counts every pod, initializers included, but the trainer waits
        # for the initializer: reported on the runtime and on each TrainJob that uses it.
        ("coscheduling", WAITS, [("runtime.yaml", 6, 3, "gang-min-count-staged"),
                                 ("trainjob.yaml", 5, 39, "gang-min-count-staged")]),
        ("volcano", WAITS, [("runtime.yaml", 6, 3, "gang-min-count-staged"),
                            ("trainjob.yaml", 5, 39, "gang-min-count-staged")]),
        ("coscheduling", "", []),
    ],
)
def test_trainer_gang_with_initializer_stage(tmp_path: Path, scheduler: str, depends: str, expected: Rows) -> None:
    files = {"runtime.yaml": GANG_RUNTIME.format(scheduler=scheduler, depends=depends), "trainjob.yaml": GANG_TRAINJOB}
    assert lints_in_files(tmp_path, files) == expected


def test_trainer_gang_message_gives_the_counts(tmp_path: Path) -> None:
    files = {"runtime.yaml": GANG_RUNTIME.format(scheduler="coscheduling", depends=WAITS), "trainjob.yaml": GANG_TRAINJOB}
    [finding] = [d for d in validate_files(tmp_path, files)
                 if d.rule == "gang-min-count-staged" and d.file.endswith("trainjob.yaml")]
    assert "PodGroup \"tj\", minMember 3" in finding.message and "only 1 can exist" in finding.message


def mixed_schedulers(worker_scheduler: str) -> str:
    return (
        "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: js}\nspec:\n  replicatedJobs:\n"
        "  - name: leader\n    template: {spec: {template: {spec: {schedulingGroup: {podGroupName: pg}, "
        "containers: [{name: c, image: x}]}}}}\n"
        "  - name: workers\n    template: {spec: {template: {spec: {schedulingGroup: {podGroupName: pg}, "
        f"{worker_scheduler}containers: [{{name: c, image: x}}]}}}}}}}}\n"
    )


@pytest.mark.parametrize(
    ("worker_scheduler", "version", "expected"),
    [
        # scheduling.md §1.3: 1.37 rejects every pod of a group whose pods disagree on schedulerName.
        ("schedulerName: volcano, ", "1.37", [("js.yaml", 9, 78, "podgroup-scheduler-name-mismatch")]),
        # Spelling out the default scheduler is the same scheduler.
        ("schedulerName: default-scheduler, ", "1.37", []),
        ("", "1.37", []),
        # A 1.37 rule only.
        ("schedulerName: volcano, ", "1.36", []),
    ],
)
def test_scheduler_names_in_one_group(tmp_path: Path, worker_scheduler: str, version: str, expected: Rows) -> None:
    group = (PODGROUP_137 if version == "1.37" else PODGROUP_136).format(min_count=2)
    files = {"pg.yaml": group, "js.yaml": mixed_schedulers(worker_scheduler)}
    assert lints_in_files(tmp_path, files, version=version) == expected


def test_scheduler_names_across_objects(tmp_path: Path) -> None:
    job = """
        apiVersion: batch/v1
        kind: Job
        metadata: {name: helper}
        spec:
          template: {spec: {restartPolicy: Never, schedulingGroup: {podGroupName: pg}, containers: [{name: c, image: x}]}}
    """
    # The Job (listed first: "Job" < "JobSet") sets the reference scheduler; the JobSet's pods differ.
    files = {"pg.yaml": PODGROUP_137.format(min_count=2), "job.yaml": job,
             "js.yaml": mixed_schedulers("schedulerName: volcano, ").replace("{schedulingGroup: {podGroupName: pg}, "
                                                                             "containers", "{schedulerName: volcano, "
                                                                             "schedulingGroup: {podGroupName: pg}, "
                                                                             "containers", 1)}
    rows = lints_in_files(tmp_path, files)
    assert [(f, rule) for f, _, _, rule in rows] == [("js.yaml", "podgroup-scheduler-name-mismatch")] * 2


EXCLUSIVE_JOBSET = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: {name}
  annotations: {{alpha.jobset.sigs.k8s.io/exclusive-topology: {key}}}
spec:
  replicatedJobs:
  - name: workers
    template: {{spec: {{template: {{spec: {{{priority}containers: [{{name: c, image: x}}]}}}}}}}}
"""
URGENT = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: urgent}
value: 1000
"""


@pytest.mark.parametrize(
    ("b_key", "b_priority", "expected"),
    [
        # jobset#687: different priorities do not repel; a note on both JobSets.
        ("pool", "priorityClassName: urgent, ", [("a.yaml", 5, 17, "jobset-exclusive-priority-scope"),
                                                  ("b.yaml", 5, 17, "jobset-exclusive-priority-scope")]),
        # Same priority: exclusive as intended. Another topology key: unrelated.
        ("pool", "", []),
        ("rack", "priorityClassName: urgent, ", []),
    ],
)
def test_exclusive_placement_across_priorities(tmp_path: Path, b_key: str, b_priority: str, expected: Rows) -> None:
    files = {
        "urgent.yaml": URGENT,
        "a.yaml": EXCLUSIVE_JOBSET.format(name="a", key="pool", priority=""),
        "b.yaml": EXCLUSIVE_JOBSET.format(name="b", key=b_key, priority=b_priority),
    }
    assert lints_in_files(tmp_path, files) == expected


def test_exclusive_priority_note_is_informational(tmp_path: Path) -> None:
    files = {
        "urgent.yaml": URGENT,
        "a.yaml": EXCLUSIVE_JOBSET.format(name="a", key="pool", priority=""),
        "b.yaml": EXCLUSIVE_JOBSET.format(name="b", key="pool", priority="priorityClassName: urgent, "),
    }
    notes = [d for d in validate_files(tmp_path, files) if d.rule == "jobset-exclusive-priority-scope"]
    assert {str(d.severity) for d in notes} == {"info"}
    assert "JobSet \"b\" is exclusive on the same key with priority 1000, these pods have priority 0" in notes[0].message
