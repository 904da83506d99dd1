"""``gang-exclusive-placement-deadlock`` and its ``render --gang`` counterpart, ``gang.deadlock_warning``.

jobset.md §3.6: exclusive placement creates a Job's followers only once its leader (completion index 0)
is scheduled; scheduling.md §1.3: a gang schedules none of its pods before ``minCount`` exist. A gang
whose ``minCount`` exceeds the leaders (plus the pods of non-exclusive members) never starts.

Rows are (file, line, column, rule) over a PodGroup file and a JobSet file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from jobsetctl.gang import deadlock_warning, generate, parse_gang_options
from jobsetctl.kube.versions import KubeVersion
from tests.helpers import validate_files
from tests.lint.support import lints_in_files

Rows = list[tuple[str, int, int, str]]
RULE = "gang-exclusive-placement-deadlock"
EXCLUSIVE = "alpha.jobset.sigs.k8s.io/exclusive-topology"
NODE_SELECTOR = "alpha.jobset.sigs.k8s.io/node-selector"


def podgroup(min_count: int, version: str = "v1beta1") -> str:
    return (f"apiVersion: scheduling.k8s.io/{version}\nkind: PodGroup\nmetadata: {{name: pg}}\n"
            f"spec:\n  schedulingPolicy: {{gang: {{minCount: {min_count}}}}}\n")


def member(name: str, replicas: int = 2, pods: int = 4, *, annotations: str = "", extra: str = "",
           spec: str = "", group: str = "schedulingGroup: {podGroupName: pg}, ") -> str:
    """A replicated job on two lines (three with ``extra``), or three (four) with template ``annotations``."""
    meta = f"metadata: {{annotations: {{{annotations}}}}}, " if annotations else ""
    more = f"    {extra}\n" if extra else ""
    return (f"  - name: {name}\n{more}    replicas: {replicas}\n"
            f"    template: {{{meta}spec: {{{spec}parallelism: {pods}, completions: {pods}, "
            f"template: {{spec: {{{group}containers: [{{name: c, image: x}}]}}}}}}}}\n")


def exclusive_jobset(*members: str, annotations: str = f"{EXCLUSIVE}: rack", name: str = "js") -> str:
    """The JobSet annotations sit on line 5; replicated jobs start on line 8."""
    return (f"apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata:\n  name: {name}\n"
            f"  annotations: {{{annotations}}}\nspec:\n  replicatedJobs:\n" + "".join(members))


def plain_jobset(*members: str, name: str = "js") -> str:
    return (f"apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata:\n  name: {name}\n"
            "spec:\n  replicatedJobs:\n" + "".join(members))


@pytest.mark.parametrize(
    ("min_count", "jobset", "expected"),
    [
        # 2 Jobs of 4 pods: before a leader is scheduled only the 2 leaders exist.
        (8, exclusive_jobset(member("workers")), [("js.yaml", 5, 17, RULE)]),
        (3, exclusive_jobset(member("workers")), [("js.yaml", 5, 17, RULE)]),
        # minCount within the leaders: they start the gang and the followers join it.
        (2, exclusive_jobset(member("workers")), []),
        # One Job is enough to deadlock: its leader waits for 1 more pod that waits for the leader.
        (2, exclusive_jobset(member("workers", replicas=1, pods=2)), [("js.yaml", 5, 17, RULE)]),
        # One pod per Job: every pod is a leader, nothing is held back.
        (4, exclusive_jobset(member("workers", replicas=4, pods=1)), []),
        # The annotation on the replicated job's template is the one reported.
        (8, plain_jobset(member("workers", annotations=f"{EXCLUSIVE}: rack")), [("js.yaml", 9, 41, RULE)]),
        # The node-selector strategy skips the pod webhooks: no leader gating.
        (8, exclusive_jobset(member("workers"), annotations=f"{EXCLUSIVE}: rack, {NODE_SELECTOR}: 'true'"), []),
        # No exclusive placement at all.
        (8, plain_jobset(member("workers")), []),
        # An exclusive member (2 leaders) plus a non-exclusive one (4 pods, all present): 6 up front.
        (6, plain_jobset(member("workers", annotations=f"{EXCLUSIVE}: rack"), member("ps", replicas=1)), []),
        (12, plain_jobset(member("workers", annotations=f"{EXCLUSIVE}: rack"), member("ps", replicas=1)),
         [("js.yaml", 9, 41, RULE)]),
        # The exclusive member is not in the gang: nothing it holds back matters to it.
        (4, plain_jobset(member("workers", annotations=f"{EXCLUSIVE}: rack", group=""), member("ps", replicas=1)),
         []),
        # NonIndexed Jobs never get a leader: jobset-exclusive-non-indexed's finding, not this one.
        (8, exclusive_jobset(member("workers", spec="completionMode: NonIndexed, ")),
         [("js.yaml", 10, 23, "jobset-exclusive-non-indexed")]),
    ],
)
def test_exclusive_gang(tmp_path: Path, min_count: int, jobset: str, expected: Rows) -> None:
    files = {"pg.yaml": podgroup(min_count), "js.yaml": jobset}
    assert lints_in_files(tmp_path, files) == expected


def test_stages_and_totals_stay_with_their_own_rules(tmp_path: Path) -> None:
    staged = exclusive_jobset(member("driver", replicas=1, pods=1),
                              member("workers", extra="dependsOn: [{name: driver, status: Ready}]"))
    # Stages alone leave 1 pod (the driver) for minCount 5: gang-min-count-staged, on the PodGroup.
    files = {"pg.yaml": podgroup(5), "js.yaml": staged}
    assert [d.rule for d in validate_files(tmp_path, files) if d.severity != "info"] == ["gang-min-count-staged"]
    # minCount above all 9 pods: ref-gang-too-large (an error), and nothing more.
    files = {"pg.yaml": podgroup(20), "js.yaml": exclusive_jobset(member("workers"))}
    assert [d.rule for d in validate_files(tmp_path, files) if d.severity != "info"] == ["ref-gang-too-large"]


def test_staged_members_do_not_count_as_present(tmp_path: Path) -> None:
    # The workers wait for the driver (dependsOn), so only the driver's 2 leaders exist up front:
    # stages alone allow minCount 8 (the driver's 8 pods), leader gating does not.
    jobset = exclusive_jobset(member("driver"), member("workers", group="",
                                                       extra="dependsOn: [{name: driver, status: Ready}]"))
    assert lints_in_files(tmp_path, {"pg.yaml": podgroup(8), "js.yaml": jobset}) == [("js.yaml", 5, 17, RULE)]


def test_plain_jobs_in_the_gang_count_as_present(tmp_path: Path) -> None:
    job = ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: helper}\nspec:\n  parallelism: 6\n  completions: 6\n"
           "  template: {spec: {restartPolicy: Never, schedulingGroup: {podGroupName: pg}, "
           "containers: [{name: c, image: x}]}}\n")
    files = {"pg.yaml": podgroup(8), "js.yaml": exclusive_jobset(member("workers")), "job.yaml": job}
    assert lints_in_files(tmp_path, files) == []  # 2 leaders + 6 Job pods
    files["pg.yaml"] = podgroup(9)
    assert lints_in_files(tmp_path, files) == [("js.yaml", 5, 17, RULE)]


def test_reported_on_the_exclusive_jobset_only(tmp_path: Path) -> None:
    files = {"pg.yaml": podgroup(12),
             "a.yaml": exclusive_jobset(member("workers"), name="a"),
             "b.yaml": plain_jobset(member("workers"), name="b")}
    assert lints_in_files(tmp_path, files) == [("a.yaml", 5, 17, RULE)]


@pytest.mark.parametrize(
    ("version", "files"),
    [
        ("1.36", {"pg.yaml": podgroup(8, "v1alpha2"), "js.yaml": exclusive_jobset(member("workers"))}),
        ("1.35", {"wl.yaml": "apiVersion: scheduling.k8s.io/v1alpha1\nkind: Workload\nmetadata: {name: wl}\n"
                             "spec:\n  podGroups: [{name: g, policy: {gang: {minCount: 8}}}]\n",
                  "js.yaml": exclusive_jobset(member("workers", group="workloadRef: {name: wl, podGroup: g}, "))}),
    ],
)
def test_earlier_releases(tmp_path: Path, version: str, files: dict[str, str]) -> None:
    assert lints_in_files(tmp_path, files, version=version) == [("js.yaml", 5, 17, RULE)]


def test_message_states_the_mechanism(tmp_path: Path) -> None:
    files = {"pg.yaml": podgroup(12),
             "js.yaml": plain_jobset(member("workers", annotations=f"{EXCLUSIVE}: rack"), member("ps", replicas=1))}
    [finding] = [d for d in validate_files(tmp_path, files) if d.rule == RULE]
    assert finding.message == (
        f"exclusive placement ({EXCLUSIVE}: rack) creates a follower pod only once its Job's leader (completion "
        'index 0) is scheduled, but PodGroup "pg" (gang minCount 12) schedules none of its pods until 12 exist, and '
        'until then only 6 can ("workers" of JobSet "js": 2 leaders of 8 pods; 4 pods of members without exclusive '
        "placement): the leaders wait for followers that wait for the leaders, and the gang never starts"
    )
    assert finding.hint is not None and finding.hint.startswith("set minCount to at most 6")
    assert finding.path == f"spec.replicatedJobs[0].template.metadata.annotations[{EXCLUSIVE}]"


# --- render --gang: gang.deadlock_warning --------------------------------------------------------------


def _jobset(annotations: dict[str, str] | None, *members: tuple[str, int, int]) -> dict[str, Any]:
    rjobs = [{"name": name, "replicas": replicas, "template": {"spec": {
        "parallelism": pods, "completions": pods, "template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}}}
        for name, replicas, pods in members]
    metadata: dict[str, Any] = {"name": "js"}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": metadata,
            "spec": {"replicatedJobs": rjobs}}


@pytest.mark.parametrize(
    ("version", "mode", "annotations", "members", "expected"),
    [
        ("1.37", "jobset", {EXCLUSIVE: "rack"}, [("w", 2, 4)],
         "PodGroup js needs minCount 8 but only 2 pods can exist before a leader is scheduled"),
        ("1.37", "replicatedjob", {EXCLUSIVE: "rack"}, [("w", 2, 4), ("ps", 1, 1)],
         "PodGroup js-w needs minCount 8 but only 2 pods can exist before a leader is scheduled"),
        ("1.37", "job", {EXCLUSIVE: "rack"}, [("w", 1, 4)],
         "each Job's PodGroup from template w needs minCount 4 but only 1 pod can exist before a leader is scheduled"),
        ("1.35", "jobset", {EXCLUSIVE: "rack"}, [("w", 3, 2)],
         "pod group jobset of Workload js needs minCount 6 but only 3 pods can exist before a leader is scheduled"),
        ("1.37", "jobset", {EXCLUSIVE: "rack"}, [("w", 4, 1)], None),  # every pod is a leader
        ("1.37", "jobset", {EXCLUSIVE: "rack", NODE_SELECTOR: "true"}, [("w", 2, 4)], None),
        ("1.37", "jobset", None, [("w", 2, 4)], None),
    ],
)
def test_render_gang_warning(version: str, mode: str, annotations: dict[str, str] | None,
                             members: list[tuple[str, int, int]], expected: str | None) -> None:
    kube = KubeVersion.parse(version)
    [plan] = generate([_jobset(annotations, *members)], parse_gang_options(mode, None, None, None), kube).plans
    warning = deadlock_warning(plan)
    if expected is None:
        assert warning is None
    else:
        assert warning is not None and expected in warning and warning.startswith("warning: JobSet js uses exclusive")
        assert "\n" not in warning and "gang-exclusive-placement-deadlock" in warning


@pytest.mark.parametrize("mode", ["jobset", "replicatedjob"])
@pytest.mark.parametrize("members", [[("w", 2, 4)], [("w", 4, 1)], [("w", 1, 3), ("ps", 2, 1)]])
def test_render_warning_agrees_with_validate_on_the_generated_objects(
        tmp_path: Path, mode: str, members: list[tuple[str, int, int]]) -> None:
    generated = generate([_jobset({EXCLUSIVE: "rack"}, *members)], parse_gang_options(mode, None, None, None),
                         KubeVersion.V1_37)
    text = yaml.safe_dump_all(generated.objects, sort_keys=False)
    found = [d.rule for d in validate_files(tmp_path, {"all.yaml": text}) if d.severity != "info"]
    warned = deadlock_warning(generated.plans[0]) is not None
    assert (RULE in found) == warned
