"""``jobsetctl.gang``: the objects ``--gang`` generates per release, their counts and names, the wiring of
the pod templates, and the options a release cannot express (usage errors, exit 2).

Shapes: scheduling.md §1.2 (per release), §1.5 (delegation annotations), §1.6 (CompositePodGroup tree,
one priority per tree), §1.9 (KEP-6089); the upstream workload-aware-scheduling examples show what
users write by hand for Kubernetes 1.36.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from jobsetctl.gang import (
    GROUP_TEMPLATE_ANNOTATION,
    PARENT_COMPOSITE_ANNOTATION,
    GangMode,
    GangOptions,
    generate,
    parse_gang_options,
)
from jobsetctl.kube.versions import KubeVersion
from jobsetctl.status import UsageError
from tests.helpers import UPSTREAM, load_one, requires_upstream
from tests.render.support import render_cli

V35, V36, V37 = KubeVersion.V1_35, KubeVersion.V1_36, KubeVersion.V1_37


def jobset(*rjobs: dict[str, Any], name: str = "js", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": name},
            "spec": {"replicatedJobs": list(rjobs), **spec}}


def rjob(name: str, replicas: int | None = 1, parallelism: int | None = None, completions: int | None = None,
         priority_class: str | None = None, **extra: Any) -> dict[str, Any]:
    job_spec: dict[str, Any] = {}
    if parallelism is not None:
        job_spec["parallelism"] = parallelism
    if completions is not None:
        job_spec["completions"] = completions
    pod_spec: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox"}]}
    if priority_class:
        pod_spec["priorityClassName"] = priority_class
    job_spec["template"] = {"spec": pod_spec}
    out: dict[str, Any] = {"name": name, "template": {"spec": job_spec}, **extra}
    if replicas is not None:
        out["replicas"] = replicas
    return out


def options(mode: str, topology: str | None = None, priority: str | None = None,
            disruption: str | None = None) -> GangOptions:
    return parse_gang_options(mode, topology, priority, disruption)


def by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def pod_spec_of(js: dict[str, Any], index: int) -> dict[str, Any]:
    spec: dict[str, Any] = js["spec"]["replicatedJobs"][index]["template"]["spec"]["template"]["spec"]
    return spec


# --- minCount: pods that exist at once ---------------------------------------------------------------


@pytest.mark.parametrize(("replicas", "parallelism", "completions", "expected"), [
    (1, None, None, 1),      # API defaults: parallelism 1, completions = parallelism
    (3, 2, 2, 6),            # the upstream example: 3 Jobs x 2 pods
    (2, 4, 2, 4),            # completions below parallelism: only 2 pods per Job at once
    (2, 2, 8, 4),            # more completions than parallelism: 2 pods per Job at once
    (None, 5, None, 5),      # replicas default 1, completions nil: parallelism pods
])
def test_min_count_counts_pods_that_exist_at_once(replicas: int | None, parallelism: int | None,
                                                   completions: int | None, expected: int) -> None:
    js = jobset(rjob("rj", replicas, parallelism, completions))
    made = generate([js], options("replicatedjob"), V36).generated
    assert by_kind(made, "PodGroup")[0]["spec"]["schedulingPolicy"] == {"gang": {"minCount": expected}}


def test_jobset_mode_sums_the_replicated_jobs() -> None:
    js = jobset(rjob("driver"), rjob("workers", 3, 4, 4))
    made = generate([js], options("jobset"), V37).generated
    workload = by_kind(made, "Workload")[0]
    assert workload["spec"]["podGroupTemplates"] == [{"name": "jobset", "schedulingPolicy": {"gang": {"minCount": 13}}}]
    assert [g["metadata"]["name"] for g in by_kind(made, "PodGroup")] == ["js"]


def test_replicated_jobs_without_pods_get_no_group() -> None:
    js = jobset(rjob("idle", 0), rjob("workers", 2, 2, 2))
    result = generate([js], options("replicatedjob"), V37)
    assert [t["name"] for t in by_kind(result.generated, "Workload")[0]["spec"]["podGroupTemplates"]] == ["workers"]
    wired = result.objects[-1]
    assert "schedulingGroup" not in pod_spec_of(wired, 0)
    assert pod_spec_of(wired, 1)["schedulingGroup"] == {"podGroupName": "js-workers"}


# --- shapes per release ------------------------------------------------------------------------------


def test_1_35_is_one_v1alpha1_workload_and_workload_refs() -> None:
    js = jobset(rjob("driver"), rjob("workers", 2, 4, 4))
    result = generate([js], options("replicatedjob"), V35)
    assert result.generated == [{
        "apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": {"name": "js"},
        "spec": {"controllerRef": {"apiGroup": "jobset.x-k8s.io", "kind": "JobSet", "name": "js"},
                 "podGroups": [{"name": "driver", "policy": {"gang": {"minCount": 1}}},
                               {"name": "workers", "policy": {"gang": {"minCount": 8}}}]},
    }]
    wired = result.objects[-1]
    assert pod_spec_of(wired, 1)["workloadRef"] == {"name": "js", "podGroup": "workers"}


def test_1_36_templates_and_standalone_pod_groups() -> None:
    js = jobset(rjob("workers", 2, 2, 2), name="train")
    js["metadata"]["namespace"] = "ml"
    made = generate([js], options("replicatedjob", "rack", "high", "all"), V36).generated
    template = {"name": "workers", "schedulingPolicy": {"gang": {"minCount": 4}},
                "schedulingConstraints": {"topology": [{"key": "rack"}]}, "disruptionMode": "PodGroup",
                "priorityClassName": "high"}
    assert by_kind(made, "Workload")[0]["spec"]["podGroupTemplates"] == [template]
    group = by_kind(made, "PodGroup")[0]
    assert group["apiVersion"] == "scheduling.k8s.io/v1alpha2"
    assert group["metadata"] == {"name": "train-workers", "namespace": "ml"}
    assert group["spec"] == {
        "podGroupTemplateRef": {"workload": {"workloadName": "train", "podGroupTemplateName": "workers"}},
        **{k: v for k, v in template.items() if k != "name"},
    }


def test_1_37_union_disruption_mode_and_workload_ref() -> None:
    made = generate([jobset(rjob("rj", 1, 2, 2))], options("replicatedjob", None, None, "Pod"), V37).generated
    group = by_kind(made, "PodGroup")[0]
    assert group["apiVersion"] == "scheduling.k8s.io/v1beta1"
    assert group["spec"]["workloadRef"] == {"workloadName": "js", "templateName": "rj"}
    assert group["spec"]["disruptionMode"] == {"single": {}}


def test_two_keys_make_a_composite_tree_coarse_to_fine() -> None:
    js = jobset(rjob("driver"), rjob("workers", 2, 4, 4))
    made = generate([js], options("replicatedjob", "zone,rack"), V37).generated
    assert [o["kind"] for o in made] == ["Workload", "CompositePodGroup", "PodGroup", "PodGroup"]
    root = by_kind(made, "Workload")[0]["spec"]["compositePodGroupTemplates"]
    assert [t["name"] for t in root] == ["composite"]
    assert root[0]["schedulingConstraints"] == {"topology": [{"key": "zone"}]}
    assert root[0]["schedulingPolicy"] == {"gang": {"minGroupCount": 2}}
    assert [t["schedulingConstraints"] for t in root[0]["podGroupTemplates"]] == [{"topology": [{"key": "rack"}]}] * 2
    cpg = by_kind(made, "CompositePodGroup")[0]
    assert cpg["apiVersion"] == "scheduling.k8s.io/v1alpha3"
    assert cpg["spec"]["workloadRef"] == {"workloadName": "js", "templateName": "composite"}
    assert {g["spec"]["parentCompositePodGroupName"] for g in by_kind(made, "PodGroup")} == {"js"}


def test_three_keys_chain_composites_root_first() -> None:
    made = generate([jobset(rjob("rj", 2, 2, 2))], options("replicatedjob", "zone,block,rack"), V37).generated
    cpgs = by_kind(made, "CompositePodGroup")
    assert [c["metadata"]["name"] for c in cpgs] == ["js", "js-composite-1"]
    assert "parentCompositePodGroupName" not in cpgs[0]["spec"]
    assert cpgs[1]["spec"]["parentCompositePodGroupName"] == "js"
    assert by_kind(made, "PodGroup")[0]["spec"]["parentCompositePodGroupName"] == "js-composite-1"


def test_job_mode_delegates_to_the_job_controller() -> None:
    js = jobset(rjob("workers", 1, 2, 2), rjob("evaluator", 1), rjob("driver", 1))
    result = generate([js], options("job", "rack"), V37)
    assert [o["kind"] for o in result.generated] == ["Workload", "CompositePodGroup"]
    cpg = by_kind(result.generated, "CompositePodGroup")[0]
    assert cpg["spec"]["schedulingPolicy"] == {"gang": {"minGroupCount": 3}}  # one child per Job
    leaf = by_kind(result.generated, "Workload")[0]["spec"]["compositePodGroupTemplates"][0]["podGroupTemplates"][0]
    assert leaf == {"name": "workers", "schedulingPolicy": {"gang": {"minCount": 2}},
                    "schedulingConstraints": {"topology": [{"key": "rack"}]}}
    wired = result.objects[-1]
    annotations = wired["spec"]["replicatedJobs"][0]["template"]["metadata"]["annotations"]
    assert annotations == {GROUP_TEMPLATE_ANNOTATION: "workers", PARENT_COMPOSITE_ANNOTATION: "js"}
    assert "schedulingGroup" not in pod_spec_of(wired, 0)


def test_job_mode_refuses_a_replicated_job_of_several_jobs() -> None:
    """The Job controller names a delegated Job's PodGroup ``computePodGroupName(workloadName, templateName)``
    (job_scheduling_manager.go; job_scheduling_manager_test.go, TestEnsureWorkloadAndPodGroup "delegated Job
    creates the PodGroup from the parent's template"): the Job's own name is not in it, so the replicas' Jobs
    would claim one PodGroup and all but the first would never create pods. Not emitted: a usage error that
    names the replicated job, why, and what works instead."""
    js = jobset(rjob("driver", 1), rjob("workers", 2, 4, 4))
    with pytest.raises(UsageError) as raised:
        generate([js], options("job"), V37)
    message = str(raised.value)
    assert message.startswith("--gang job: JobSet js, replicated job workers has 2 replicas")
    assert "computePodGroupName" in message and "only the first would ever create pods" in message
    assert message.endswith("gang each replicated job with --gang replicatedjob, or give workers replicas: 1")
    # A replicated job without pods gets no group, and so no PodGroup to collide over.
    generate([jobset(rjob("driver", 1), rjob("spare", 2, 0, 0))], options("job"), V37)
    # The modes that name the PodGroups themselves gang any number of replicas.
    for other in ("jobset", "replicatedjob"):
        generate([js], options(other), V37)


def test_staged_jobsets_get_a_basic_composite_and_no_whole_jobset_gang() -> None:
    staged = jobset(rjob("init"), rjob("workers", 2, 2, 2, dependsOn=[{"name": "init", "status": "Complete"}]))
    made = generate([staged], options("replicatedjob", "zone,rack"), V37).generated
    assert by_kind(made, "CompositePodGroup")[0]["spec"]["schedulingPolicy"] == {"basic": {}}
    with pytest.raises(UsageError, match="one after another"):
        generate([staged], options("jobset"), V37)
    in_order = jobset(rjob("a"), rjob("b"), startupPolicy={"startupPolicyOrder": "InOrder"})
    with pytest.raises(UsageError, match="one after another"):
        generate([in_order], options("jobset"), V36)


def test_template_names_never_clash_with_replicated_jobs() -> None:
    made = generate([jobset(rjob("composite"), rjob("jobset"))], options("job"), V37).generated
    names = [by_kind(made, "Workload")[0]["spec"]["compositePodGroupTemplates"][0]["name"]]
    assert names == ["composite-x"]


def test_inputs_are_not_modified_and_other_objects_pass_through() -> None:
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1}
    js = jobset(rjob("rj", 1, 2, 2))
    before = copy.deepcopy([pc, js])
    result = generate([pc, js], options("replicatedjob"), V36)
    assert [pc, js] == before
    assert result.objects[0] is pc
    assert [o["kind"] for o in result.objects] == ["PriorityClass", "Workload", "PodGroup", "JobSet"]
    assert generate([pc, js], GangOptions(), V36).objects == [pc, js]


# --- priority ----------------------------------------------------------------------------------------


def test_priority_class_goes_on_groups_and_on_pods_without_one() -> None:
    js = jobset(rjob("a"), rjob("b", priority_class="high"))
    result = generate([js], options("replicatedjob", priority="high"), V37)
    assert {g["spec"]["priorityClassName"] for g in by_kind(result.generated, "PodGroup")} == {"high"}
    wired = result.objects[-1]
    assert pod_spec_of(wired, 0)["priorityClassName"] == "high"


def test_groups_take_the_priority_class_their_pods_share() -> None:
    js = jobset(rjob("a", priority_class="low"), rjob("b", priority_class="high"))
    groups = by_kind(generate([js], options("replicatedjob"), V37).generated, "PodGroup")
    assert [g["spec"].get("priorityClassName") for g in groups] == ["low", "high"]


def test_1_37_refuses_a_group_whose_pods_disagree_on_priority() -> None:
    js = jobset(rjob("a", priority_class="low"), rjob("b", priority_class="high"))
    with pytest.raises(UsageError, match="mixes priority classes"):
        generate([js], options("jobset"), V37)
    with pytest.raises(UsageError, match="one priority"):
        generate([js], options("replicatedjob", "zone,rack"), V37)  # one priority per tree
    with pytest.raises(UsageError, match="share one priority"):
        generate([js], options("replicatedjob", priority="other"), V37)
    # 1.36 reads a group's priority only in workload-aware preemption: the group just takes none.
    group = by_kind(generate([js], options("jobset"), V36).generated, "PodGroup")[0]
    assert "priorityClassName" not in group["spec"]


# --- usage errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("version", "args", "message"), [
    ("1.36", ["--gang", "job"], "--gang job needs Kubernetes 1.37"),
    ("1.35", ["--gang", "job"], "--gang job needs Kubernetes 1.37"),
    ("1.35", ["--gang", "jobset", "--topology", "rack"], "--topology needs Kubernetes 1.36"),
    ("1.36", ["--gang", "jobset", "--topology", "zone,rack"], "needs Kubernetes 1.37"),
    ("1.37", ["--gang", "jobset", "--topology", "a,b,c,d,e"], "at most 4 levels"),
    ("1.35", ["--gang", "jobset", "--disruption-mode", "all"], "--disruption-mode needs Kubernetes 1.36"),
    ("1.35", ["--gang", "jobset", "--priority-class", "high"], "--priority-class needs Kubernetes 1.36"),
    ("1.37", ["--gang", "jobset", "--disruption-mode", "some"], "choose single or all"),
    ("1.37", ["--gang", "everything"], "--gang"),
    ("1.37", ["--topology", "rack"], "give --gang"),
    ("1.37", ["--gang", "jobset", "--topology", "rack,rack"], "appears twice"),
    ("1.37", ["--gang", "job"], "--gang job: JobSet js, replicated job rj has 2 replicas"),
])
def test_what_a_release_cannot_express_is_a_usage_error(version: str, args: list[str], message: str,
                                                        tmp_path: Any) -> None:
    manifest = tmp_path / "js.yaml"
    manifest.write_text(yaml.safe_dump(jobset(rjob("rj", 2, 2, 2))))
    result = render_cli(str(manifest), "--kubernetes-version", version, *args)
    assert result.exit == 2
    assert result.stdout == ""
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert any(message in line for line in result.stderr.splitlines())  # said on one line


def test_already_wired_jobsets_are_refused() -> None:
    js = jobset(rjob("rj", 1, 2, 2))
    pod_spec_of(js, 0)["schedulingGroup"] = {"podGroupName": "mine"}
    with pytest.raises(UsageError, match="already names its pod group"):
        generate([js], options("replicatedjob"), V37)


def test_gang_without_jobsets_is_a_usage_error() -> None:
    trainjob = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": "t"}}
    with pytest.raises(UsageError, match="no JobSet"):
        generate([trainjob], options("jobset"), V37)


# --- against what users write by hand ------------------------------------------------------------------


@requires_upstream
def test_replicatedjob_mode_matches_the_upstream_hand_written_gang() -> None:
    """The upstream 1.36 example gangs its single replicated job with the minCount we compute."""
    root = UPSTREAM / "jobset" / "examples" / "workload-aware-scheduling"
    if not root.is_dir():
        pytest.skip("workload-aware-scheduling examples absent")
    js = load_one((root / "jobset.yaml").read_text())
    hand_written = load_one((root / "podgroup.yaml").read_text())
    pod_spec_of(js, 0).pop("schedulingGroup")
    made = generate([js], options("replicatedjob"), V36).generated
    group = by_kind(made, "PodGroup")[0]
    assert group["spec"]["schedulingPolicy"] == hand_written["spec"]["schedulingPolicy"]
    assert set(group["spec"]["podGroupTemplateRef"]["workload"]) == set(
        hand_written["spec"]["podGroupTemplateRef"]["workload"])
    assert by_kind(made, "Workload")[0]["spec"]["controllerRef"] == load_one(
        (root / "workload.yaml").read_text())["spec"]["controllerRef"]


def test_modes_are_spelled_as_on_the_command_line() -> None:
    assert [m.value for m in GangMode] == ["none", "jobset", "replicatedjob", "job"]
    assert options("JobSet").mode is GangMode.JOBSET


def test_job_mode_gets_one_pod_group_per_job_from_the_job_controller() -> None:
    """End to end on 1.37: the Job controller, not render, creates each Job's PodGroup (KEP-5547
    ``managePodGroupOnly``), from the template the Job's annotation names, under the JobSet's
    CompositePodGroup; the pods join their Job's group (job_scheduling_manager_test.go,
    TestEnsureWorkloadAndPodGroup "delegated Job creates the PodGroup from the parent's template"). One Job
    per replicated job: with more, the PodGroup names collide (see
    test_job_mode_refuses_a_replicated_job_of_several_jobs)."""
    from tests.render.support import INPUTS

    result = render_cli(str(INPUTS / "training-one-job-each.yaml"), "--gang", "job", "--pods")
    assert result.exit == 0, result.stderr
    assert ("template driver (one PodGroup per Job, minCount 1), template workers (one PodGroup per Job, "
            "minCount 4)") in result.stderr
    objects = result.objects()
    groups = by_kind(objects, "PodGroup")
    jobs = by_kind(objects, "Job")
    assert [j["metadata"]["name"] for j in jobs] == ["train-driver-0", "train-workers-0"]
    assert [g["metadata"]["ownerReferences"][0]["name"] for g in groups] == ["train-driver-0", "train-workers-0"]
    for group, job in zip(groups, jobs, strict=True):
        assert group["metadata"]["ownerReferences"][0]["name"] == job["metadata"]["name"]
        assert group["spec"]["workloadRef"]["templateName"] == job["metadata"]["labels"][
            "jobset.sigs.k8s.io/replicatedjob-name"]
        assert group["spec"]["parentCompositePodGroupName"] == "train"
    pods = by_kind(objects, "Pod")
    assert len(pods) == 5
    for pod in pods:
        owner = pod["metadata"]["ownerReferences"][0]["name"]
        group = next(g for g in groups if g["metadata"]["ownerReferences"][0]["name"] == owner)
        assert pod["spec"]["schedulingGroup"] == {"podGroupName": group["metadata"]["name"]}


def test_job_mode_with_several_replicas_emits_nothing() -> None:
    """``render --gang job`` of training.yaml (two Jobs of workers): exit 2, nothing on stdout, one line."""
    from tests.render.support import INPUTS

    result = render_cli(str(INPUTS / "training.yaml"), "--gang", "job", "--pods")
    assert result.exit == 2
    assert result.stdout == ""
    assert result.stderr.startswith("jobsetctl: error: --gang job: JobSet train, replicated job workers has 2 "
                                    "replicas")
    assert len(result.stderr.splitlines()) == 1


EXCLUSIVE_JOBSET = """\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: exclusive
  annotations:
    alpha.jobset.sigs.k8s.io/exclusive-topology: cloud.google.com/gke-nodepool
spec:
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        parallelism: 4
        completions: 4
        template:
          spec:
            containers: [{name: worker, image: busybox}]
"""


def test_render_gang_warns_when_exclusive_placement_would_deadlock_the_generated_gang(tmp_path: Path) -> None:
    """``render --gang jobset`` of an exclusive-placement JobSet: one line on stderr, objects still printed."""
    exclusive = tmp_path / "exclusive.yaml"
    exclusive.write_text(EXCLUSIVE_JOBSET)
    result = render_cli("--gang", "jobset", str(exclusive))
    assert result.exit == 0 and "kind: PodGroup" in result.stdout
    warnings = [line for line in result.stderr.splitlines() if line.startswith("jobsetctl render: warning: JobSet exclusive")]
    assert len(warnings) == 1 and "(gang-exclusive-placement-deadlock)" in warnings[0]
    assert "needs minCount 8 but only 2 pods can exist before a leader is scheduled" in warnings[0]

    plain = tmp_path / "plain.yaml"
    plain.write_text(EXCLUSIVE_JOBSET.replace(
        "  annotations:\n    alpha.jobset.sigs.k8s.io/exclusive-topology: cloud.google.com/gke-nodepool\n", ""))
    result = render_cli("--gang", "jobset", str(plain))
    assert result.exit == 0 and "warning:" not in result.stderr
