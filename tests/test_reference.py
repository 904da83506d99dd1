"""Checks across objects and files (scheduling.md §1.3, §1.6, §1.8, §3.1): the reference layer (what the
API server checks itself: one default PriorityClass) and the consequence layer (accepted, refused or
never scheduled later; issue #13).

Each table lists (file, line, column, rule) over several files, so that references cross files.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jobsetctl.diagnostics import Diagnostic
from jobsetctl.reference import pods_per_job
from tests.helpers import UPSTREAM, requires_upstream, validate_files

WAS = UPSTREAM / "jobset" / "examples" / "workload-aware-scheduling"


def located(diagnostics: list[Diagnostic]) -> list[tuple[str, int, int, str, str]]:
    """The findings of :mod:`jobsetctl.reference` (rule ids ``ref-*``)."""
    return [(Path(d.file).name, d.line, d.column, d.rule, str(d.severity))
            for d in diagnostics if d.rule.startswith("ref-")]


JOBSET_136 = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec:
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        parallelism: 2
        completions: 2
        template:
          spec:
            priorityClassName: high
            schedulingGroup: {podGroupName: pg}
            restartPolicy: Never
            containers: [{name: c, image: busybox}]
  - name: extra
    template:
      spec:
        template:
          spec:
            priorityClassName: missing
            schedulingGroup: {podGroupName: nowhere}
            restartPolicy: Never
            containers: [{name: c, image: busybox}]
"""

GROUPS_136 = """
apiVersion: scheduling.k8s.io/v1alpha2
kind: Workload
metadata: {name: w}
spec:
  podGroupTemplates:
  - name: workers
    schedulingPolicy: {gang: {minCount: 4}}
---
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: pg}
spec:
  podGroupTemplateRef:
    workload: {workloadName: w, podGroupTemplateName: wrong}
  schedulingPolicy: {gang: {minCount: 5}}
---
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: other}
spec:
  podGroupTemplateRef:
    workload: {workloadName: ghost, podGroupTemplateName: workers}
  schedulingPolicy: {basic: {}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 100
"""


def test_references_136_table(tmp_path: Path) -> None:
    diagnostics = validate_files(tmp_path, {"jobset.yaml": JOBSET_136, "groups.yaml": GROUPS_136}, version="1.36")
    assert located(diagnostics) == [
        # PodGroup "pg" names a template the Workload does not have.
        ("groups.yaml", 14, 33, "ref-template-missing", "error"),
        # 5 > 2 replicas × 2 pods.
        ("groups.yaml", 15, 29, "ref-gang-too-large", "error"),
        ("groups.yaml", 22, 16, "ref-workload-missing", "warning"),
        ("jobset.yaml", 23, 13, "ref-priority-class", "error"),
        ("jobset.yaml", 24, 31, "ref-group-missing", "warning"),
    ]
    by_rule = {d.rule: d.message for d in diagnostics}
    assert by_rule["ref-gang-too-large"] == (
        'gang minCount 5 is larger than the 4 pods that reference PodGroup "pg" (JobSet js/workers: 2 × 2 pods): '
        "the gang can never be admitted")
    assert by_rule["ref-priority-class"] == (
        'JobSet "js" is accepted, but the Priority admission plugin refuses its pods: '
        "no PriorityClass with name missing was found")
    assert by_rule["ref-group-missing"] == (
        'PodGroup "nowhere" is not among the inputs: its pods would wait until it exists')
    assert by_rule["ref-template-missing"] == 'Workload "w" has no podGroupTemplate "wrong"'


MIXED_PRIORITY_JOBS = """
apiVersion: batch/v1
kind: Job
metadata: {name: a}
spec:
  parallelism: 2
  template:
    spec:
      priorityClassName: high
      schedulingGroup: {podGroupName: pg}
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: b}
spec:
  parallelism: 2
  template:
    spec:
      schedulingGroup: {podGroupName: pg}
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
"""

PODGROUP_LOW = """
apiVersion: scheduling.k8s.io/{version}
kind: PodGroup
metadata: {{name: pg}}
spec:
  schedulingPolicy: {{gang: {{minCount: 4}}}}
  priorityClassName: low
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {{name: high}}
value: 100
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {{name: low}}
value: 1
"""


@pytest.mark.parametrize(
    ("version", "gates", "expected"),
    [
        # 1.36 without WorkloadAwarePreemption: the PodGroup's class is dropped; only the pods are compared
        # (the first pod template sets the reference priority 100; job "b" gets 0).
        ("1.36", "", [("jobs.yaml", 20, 25, "ref-group-priority", "warning")]),
        # 1.36 with the gate: the PodGroup's own priority (1) is the reference, a warning.
        ("1.36", "WorkloadAwarePreemption=true", [("jobs.yaml", 8, 7, "ref-group-priority", "warning"),
                                                  ("jobs.yaml", 20, 25, "ref-group-priority", "warning")]),
        # 1.37: the scheduler fails the whole group (SchedulerError), an error.
        ("1.37", "", [("jobs.yaml", 8, 7, "ref-group-priority", "error"),
                      ("jobs.yaml", 20, 25, "ref-group-priority", "error")]),
    ],
)
def test_one_priority_per_pod_group(tmp_path: Path, version: str, gates: str,
                                    expected: list[tuple[str, int, int, str, str]]) -> None:
    api = "v1alpha2" if version == "1.36" else "v1beta1"
    diagnostics = validate_files(tmp_path, {"jobs.yaml": MIXED_PRIORITY_JOBS,
                                            "pg.yaml": PODGROUP_LOW.format(version=api)},
                                 version=version, gates=gates)
    assert located(diagnostics) == expected
    messages = [d.message for d in diagnostics if d.rule == "ref-group-priority"]
    assert all(m.startswith("all pods in a single pod group should match the priority of the pod group") for m in messages)


def test_gang_counts_pods_across_files_and_kinds(tmp_path: Path) -> None:
    group = PODGROUP_LOW.format(version="v1beta1").replace("minCount: 4", "minCount: 5").replace(
        "  priorityClassName: low\n", "")
    jobs = MIXED_PRIORITY_JOBS.replace("      priorityClassName: high\n", "")
    diagnostics = validate_files(tmp_path, {"jobs.yaml": jobs, "pg.yaml": group}, version="1.37")
    assert located(diagnostics) == [("pg.yaml", 5, 29, "ref-gang-too-large", "error")]
    [message] = [d.message for d in diagnostics if d.rule == "ref-gang-too-large"]
    assert "(Job a: 2 pods; Job b: 2 pods)" in message
    # Four pods satisfy minCount 4.
    fits = validate_files(tmp_path / "fits", {"jobs.yaml": jobs, "pg.yaml": group.replace("minCount: 5", "minCount: 4")},
                          version="1.37")
    assert located(fits) == []


@pytest.mark.parametrize(
    ("spec", "pods"),
    [({}, 1), ({"parallelism": 3}, 3), ({"parallelism": 4, "completions": 2}, 2), ({"completions": 5}, 1),
     ({"parallelism": 0}, 0), ({"parallelism": "x"}, 1)],
)
def test_pods_per_job(spec: dict[str, object], pods: int) -> None:
    assert pods_per_job(spec) == pods


GLOBAL_DEFAULTS = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: first}
value: 10
globalDefault: true
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: second}
value: 20
globalDefault: true
"""


def test_only_one_global_default_priority_class(tmp_path: Path) -> None:
    diagnostics = validate_files(tmp_path, {"classes.yaml": GLOBAL_DEFAULTS}, version="1.36")
    assert located(diagnostics) == [("classes.yaml", 11, 1, "ref-global-default", "error")]
    assert [d.message for d in diagnostics if d.rule == "ref-global-default"] == [
        "PriorityClass first is already marked as default. Only one default can exist"]


WORKLOAD_135 = """
apiVersion: scheduling.k8s.io/v1alpha1
kind: Workload
metadata: {name: w}
spec:
  podGroups:
  - name: workers
    policy: {gang: {minCount: 3}}
"""

JOBS_135 = """
apiVersion: batch/v1
kind: Job
metadata: {name: r1}
spec:
  parallelism: 2
  template:
    spec:
      workloadRef: {name: w, podGroup: workers, podGroupReplicaKey: r1}
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: r2}
spec:
  parallelism: 2
  template:
    spec:
      workloadRef: {name: w, podGroup: workers, podGroupReplicaKey: r2}
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: lost}
spec:
  template:
    spec:
      workloadRef: {name: w, podGroup: nope}
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: orphan}
spec:
  template:
    spec:
      workloadRef: {name: elsewhere, podGroup: workers}
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
"""


def test_references_135_workload_ref(tmp_path: Path) -> None:
    diagnostics = validate_files(tmp_path, {"workload.yaml": WORKLOAD_135, "jobs.yaml": JOBS_135}, version="1.35")
    assert located(diagnostics) == [
        ("jobs.yaml", 29, 30, "ref-template-missing", "error"),
        ("jobs.yaml", 39, 7, "ref-group-missing", "warning"),
        # Each replica key is its own gang of 2 pods: both are smaller than minCount 3.
        ("workload.yaml", 7, 21, "ref-gang-too-large", "error"),
        ("workload.yaml", 7, 21, "ref-gang-too-large", "error"),
    ]
    messages = sorted(d.message for d in diagnostics if d.rule == "ref-gang-too-large")
    assert 'pod group "workers" replica "r1"' in messages[0] and 'replica "r2"' in messages[1]


TREE_137 = """
apiVersion: scheduling.k8s.io/v1alpha3
kind: CompositePodGroup
metadata: {name: root}
spec:
  workloadRef: {workloadName: w, templateName: root}
  schedulingPolicy: {basic: {}}
  disruptionMode: {all: {}}
  priority: 10
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: leaf}
spec:
  workloadRef: {workloadName: w, templateName: leaf}
  parentCompositePodGroupName: root
  schedulingPolicy: {basic: {}}
  disruptionMode: {single: {}}
  priority: 20
---
apiVersion: scheduling.k8s.io/v1alpha3
kind: CompositePodGroup
metadata: {name: loop-a}
spec:
  workloadRef: {workloadName: w, templateName: root}
  parentCompositePodGroupName: loop-b
  schedulingPolicy: {basic: {}}
---
apiVersion: scheduling.k8s.io/v1alpha3
kind: CompositePodGroup
metadata: {name: loop-b}
spec:
  workloadRef: {workloadName: w, templateName: root}
  parentCompositePodGroupName: loop-a
  schedulingPolicy: {basic: {}}
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: stray}
spec:
  workloadRef: {workloadName: w, templateName: leaf}
  parentCompositePodGroupName: absent
  schedulingPolicy: {basic: {}}
---
apiVersion: scheduling.k8s.io/v1beta1
kind: Workload
metadata: {name: w}
spec:
  compositePodGroupTemplates:
  - name: root
    schedulingPolicy: {basic: {}}
    podGroupTemplates:
    - name: leaf
      schedulingPolicy: {basic: {}}
"""


def test_composite_trees_137(tmp_path: Path) -> None:
    diagnostics = validate_files(tmp_path, {"tree.yaml": TREE_137}, version="1.37", gates="CompositePodGroup=true")
    assert located(diagnostics) == [
        ("tree.yaml", 15, 3, "ref-composite-tree", "error"),  # priority 20 under a parent with 10
        ("tree.yaml", 17, 3, "ref-composite-tree", "error"),  # single child of an all parent
        ("tree.yaml", 25, 3, "ref-composite-tree", "error"),  # loop-a ↔ loop-b
        ("tree.yaml", 33, 3, "ref-composite-tree", "error"),
        ("tree.yaml", 41, 3, "ref-parent-missing", "warning"),
    ]


def test_composite_tree_depth_137(tmp_path: Path) -> None:
    documents = []
    for level in range(1, 5):
        parent = f"  parentCompositePodGroupName: c{level - 1}\n" if level > 1 else ""
        documents.append(
            "apiVersion: scheduling.k8s.io/v1alpha3\nkind: CompositePodGroup\n"
            f"metadata: {{name: c{level}}}\nspec:\n  workloadRef: {{workloadName: w, templateName: t}}\n"
            f"{parent}  schedulingPolicy: {{basic: {{}}}}\n")
    documents.append(
        "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: leaf}\nspec:\n"
        "  workloadRef: {workloadName: w, templateName: t}\n  parentCompositePodGroupName: c4\n"
        "  schedulingPolicy: {basic: {}}\n")
    diagnostics = validate_files(tmp_path, {"deep.yaml": "---\n".join(documents)}, version="1.37",
                                 gates="CompositePodGroup=true")
    deep = [d for d in diagnostics if d.rule == "ref-composite-tree"]
    assert [(d.line, d.message) for d in deep] == [
        (37, 'PodGroup "leaf" is at level 5 of its CompositePodGroup tree; the maximum tree depth is 4')]


@requires_upstream
@pytest.mark.parametrize("folder", ["", "tas", "preemption", "dra"])
def test_upstream_workload_aware_scheduling_examples_pass_on_136(tmp_path: Path, folder: str) -> None:
    directory = WAS / folder
    paths = sorted(str(p) for p in directory.glob("*.yaml"))
    diagnostics = validate_files(tmp_path, {}, version="1.36", paths=paths)
    assert [d for d in diagnostics if d.severity == "error"] == []
    # Disabled gates only produce warnings (the fields are dropped, scheduling.md §1.1).
    assert {d.rule for d in diagnostics if d.severity == "warning"} <= {"podgroup-gated-field",
                                                                           "workload-gated-field"}


@requires_upstream
@pytest.mark.parametrize("folder", ["", "tas", "preemption", "dra"])
def test_upstream_v1alpha2_examples_are_no_kind_match_on_137(tmp_path: Path, folder: str) -> None:
    paths = sorted(str(p) for p in (WAS / folder).glob("*.yaml"))
    diagnostics = validate_files(tmp_path, {}, version="1.37", paths=paths)
    errors = [d for d in diagnostics if d.severity == "error"]
    assert errors and {d.rule for d in errors} == {"no-kind-match"}
    assert {d.message for d in errors} <= {
        'no matches for kind "Workload" in version "scheduling.k8s.io/v1alpha2"',
        'no matches for kind "PodGroup" in version "scheduling.k8s.io/v1alpha2"',
    }


def test_pod_template_source_hook_for_other_kinds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Trainer registers a source for TrainJobs (their pods come from the generated JobSet)."""
    from jobsetctl import reference
    from jobsetctl.kinds.interface import AdmissionContext
    from jobsetctl.kube.featuregates import parse_feature_gates
    from jobsetctl.kube.versions import KubeVersion

    monkeypatch.setattr(reference, "POD_TEMPLATE_SOURCES", dict(reference.POD_TEMPLATE_SOURCES))

    def trainjob_source(record, obj, ctx):  # type: ignore[no-untyped-def]
        yield reference.PodTemplateUse(record, "default", {"schedulingGroup": {"podGroupName": "pg"}},
                                       ("spec", "trainer"), 3, "TrainJob t: 3 pods")

    reference.register_pod_template_source("trainer.kubeflow.org", "TrainJob", trainjob_source)
    ctx = AdmissionContext(KubeVersion.V1_37, parse_feature_gates("", KubeVersion.V1_37))
    record = object()
    uses = reference.pod_template_uses(
        [(record, {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob"})], ctx)  # type: ignore[list-item]
    assert [(u.record, u.pods, u.at) for u in uses] == [(record, 3, ("spec", "trainer"))]


def test_unknown_podgroup_priority_class_is_reported_in_phase_b(tmp_path: Path) -> None:
    text = """
    apiVersion: scheduling.k8s.io/v1beta1
    kind: PodGroup
    metadata: {name: pg}
    spec:
      schedulingPolicy: {basic: {}}
      priorityClassName: nope
    """
    diagnostics = validate_files(tmp_path, {"pg.yaml": text}, version="1.37")
    assert [(d.line, d.column, d.rule, d.message) for d in diagnostics] == [
        (6, 3, "podgroup-priority",
         'podgroups.scheduling.k8s.io "pg" is forbidden: no PriorityClass with name nope was found')]
