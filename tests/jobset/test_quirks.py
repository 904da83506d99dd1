"""Upstream quirks of JobSet admission (jobset.md §6 and the notes of §2.2), one test each, plus the
worked name-length boundaries of jobset.md §2.3."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from jobsetctl.jobset.webhook import validate_create
from jobsetctl.kinds.interface import AdmissionContext
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import KubeVersion
from tests.jobset.builders import admit_obj, jobset, rjob, rule_ids, rules_and_messages, webhook_findings

NIL = "<nil>: Internal error: "


def _ctx(gates: str = "") -> AdmissionContext:
    version = KubeVersion.V1_37
    return AdmissionContext(version, parse_feature_gates(gates, version))


# --- jobset.md §6 ------------------------------------------------------------------------------------


def test_quirk_1_update_does_not_rerun_create_checks() -> None:
    """§6 #1: pointing the coordinator at a replicated job that does not exist is accepted on update."""
    stored = admit_obj(jobset(rjob(completions=1), coordinator={"replicatedJob": "rj"})).obj
    assert stored is not None
    changed = {**stored, "spec": {**stored["spec"], "coordinator": {"replicatedJob": "ghost"}}}
    assert rule_ids(changed, old=stored) == []
    # The same object is rejected on create.
    assert "jobset-coordinator" in rule_ids(changed)


def test_quirk_2_self_dependency_accepted() -> None:
    """§6 #2: a replicated job may depend on itself (it never starts), except the first one."""
    assert rule_ids(jobset(rjob("a"), rjob("b", dependsOn=[{"name": "b", "status": "Ready"}]))) == []
    assert rule_ids(jobset(rjob("a", dependsOn=[{"name": "a", "status": "Ready"}]))) == ["jobset-depends-on-first"]


def test_quirk_3_patterns_and_duplicate_reasons_not_validated() -> None:
    """§6 #3: an invalid regex and repeated reasons pass admission."""
    rule = {"name": "r", "action": "FailJobSet", "onJobFailureMessagePatterns": ["([unclosed"],
            "onJobFailureReasons": ["PodFailurePolicy", "PodFailurePolicy"]}
    assert rule_ids(jobset(failurePolicy={"rules": [rule]})) == []


@pytest.mark.parametrize(("build", "rule"), [
    (lambda n: jobset(network={"subdomain": "s" * n}), "jobset-subdomain-label"),
    (lambda n: jobset(rjob(groupName="g" * n)), "jobset-group-name"),
])
def test_quirk_4_less_than_63_but_63_accepted(build: Callable[[int], dict[str, Any]], rule: str) -> None:
    """§6 #4: the messages say "less than 63 characters", yet exactly 63 passes and 64 fails."""
    assert rule_ids(build(63)) == []
    (message,) = [m for r, m in rules_and_messages(build(64))]
    assert message.endswith("is too long, must be less than 63 characters")
    assert rule_ids(build(64)) == [rule]


def test_quirk_5_pod_name_error_reports_job_name() -> None:
    """§6 #5: the pod-name check shows the longest *job* name as the bad value."""
    (message,) = [m for _, m in rules_and_messages(jobset(rjob(completions=1), name="a" * 56))]
    assert message.startswith(f'spec.replicatedJobs[0].name: Invalid value: "{"a" * 56}-rj-0": ')
    assert "-abcde" not in message


def test_quirk_6_coordinator_first_failure_only_but_label_always() -> None:
    """§6 #6: only the first coordinator problem is reported, and the label check runs regardless."""
    obj = jobset(rjob(), name="n" * 40, coordinator={"replicatedJob": "ghost", "jobIndex": -1, "podIndex": -1})
    assert rules_and_messages(obj) == [
        ("jobset-coordinator", NIL + "coordinator replicatedJob ghost does not exist"),
        ("jobset-coordinator-label", NIL + f'spec will lead to invalid label value "{"n" * 40}-ghost--1--1.{"n" * 40}" '
         'for coordinator label "jobset.sigs.k8s.io/coordinator" (long JobSet / ReplicatedJob / SubDomain name?): '
         "must be no more than 63 characters"),
    ]


# --- notes of jobset.md §2.2 --------------------------------------------------------------------------


def test_quirk_depends_on_empty_list_on_first_rejected() -> None:
    """#2: an explicit empty dependsOn on the first replicated job counts (derived from code)."""
    assert rule_ids(jobset(rjob("a", dependsOn=[]))) == ["jobset-depends-on-first"]
    assert rule_ids(jobset(rjob("a", dependsOn=None))) == []


def test_quirk_restart_job_gate_returns_early() -> None:
    """#12: without the gate, the other failure-policy checks (#13-#18) do not run."""
    rules = [{"name": "r", "action": "RestartJob", "onJobFailureReasons": ["Nope"]},
             {"name": "r", "action": "FailJobSet", "targetReplicatedJobs": ["ghost"]}]
    obj = jobset(rjob(replicas=2000), failurePolicy={"rules": rules})
    assert rule_ids(obj) == ["jobset-restart-job-gate"]
    assert sorted(rule_ids(obj, "RestartJob=true")) == [
        "jobset-failure-rule-names-unique", "jobset-failure-rule-reason", "jobset-failure-rule-target",
        "jobset-restart-job-replicas",
    ]


def test_quirk_empty_rule_name_fails_length_and_format() -> None:
    """#14 and #15 both fire for an empty name. Through the chain the defaulting webhook first names
    the rule ``failurePolicyRule<i>``, so this is only reachable by the validating webhook alone."""
    obj = jobset(failurePolicy={"rules": [{"name": "", "action": "FailJobSet"}]})
    assert [f.rule.id for f in validate_create(obj, _ctx())] == [
        "jobset-failure-rule-name-length", "jobset-failure-rule-name-format",
    ]
    assert rule_ids(obj) == []


def test_quirk_rule_name_indices_in_go_slice_format() -> None:
    """#18: indices print as Go's ``%v`` of a slice: ``[0 1 2]``."""
    rules = [{"name": "dup", "action": "FailJobSet"} for _ in range(3)]
    assert rules_and_messages(jobset(failurePolicy={"rules": rules})) == [
        ("jobset-failure-rule-names-unique",
         NIL + "rule names are not unique, rules with indices [0 1 2] all have the same name 'dup'"),
    ]


def test_quirk_vcp_path_says_template_not_templates() -> None:
    """#21: the reported path says ``template[t]`` although the field is ``templates``."""
    mount = {"volumeMounts": [{"name": "data", "mountPath": "/d"}]}
    template = {"metadata": {"name": "data"}, "spec": {}}
    obj = jobset(rjob(pod_spec={"containers": [{"name": "c", "image": "i", **mount}]}),
                 volumeClaimPolicies=[{"templates": [template]}, {"templates": [template]}])
    (finding,) = webhook_findings(obj)
    assert finding.message == ('spec.volumeClaimPolicies[1].template[0].name: Invalid value: "data": '
                               "names must be unique for VolumeClaimPolicies template")
    assert finding.path == "spec.volumeClaimPolicies[1].template[0].name"
    assert finding.at == ("spec", "volumeClaimPolicies", 1, "templates", 0, "metadata", "name")


def test_quirk_zero_replicas_index_is_minus_one() -> None:
    """§2.3: replicas 0 makes the largest job index ``-1`` (two characters)."""
    assert rule_ids(jobset(rjob(replicas=0), name="a" * 57)) == []
    assert rules_and_messages(jobset(rjob(replicas=0), name="a" * 58)) == [
        ("jobset-job-name", f'spec.replicatedJobs[0].name: Invalid value: "{"a" * 58}-rj--1": '
         "JobSet name is too long, job names generated for this JobSet will exceed 63 characters"),
    ]


# --- jobset.md §2.3 worked boundaries ------------------------------------------------------------------

JOB_TOO_LONG = "JobSet name is too long, job names generated for this JobSet will exceed 63 characters"
POD_TOO_LONG = "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters"


@pytest.mark.parametrize(("obj", "expected"), [
    pytest.param(jobset(name="a" * 58), [], id="58-passes"),
    pytest.param(jobset(name="a" * 59), ["jobset-job-name"], id="59-fails"),
    pytest.param(jobset(rjob(completions=1), name="a" * 50), [], id="completions-1-50-passes"),
    pytest.param(jobset(rjob(completions=1), name="a" * 51), ["jobset-pod-name"], id="completions-1-51-fails"),
    pytest.param(jobset(rjob(completions=1), name="a" * 27, coordinator={"replicatedJob": "rj"}), [],
                 id="coordinator-27-passes"),
    pytest.param(jobset(rjob(completions=1), name="a" * 28, coordinator={"replicatedJob": "rj"}),
                 ["jobset-coordinator-label"], id="coordinator-28-fails"),
])
def test_boundaries(obj: dict[str, Any], expected: list[str]) -> None:
    assert rule_ids(obj) == expected


def test_upstream_example_62_a_replicas_101() -> None:
    assert rules_and_messages(jobset(rjob(replicas=101), name="a" * 62)) == [
        ("jobset-job-name", f'spec.replicatedJobs[0].name: Invalid value: "{"a" * 62}-rj-100": {JOB_TOO_LONG}'),
    ]


def test_upstream_example_56_a_completions_1() -> None:
    assert rules_and_messages(jobset(rjob(completions=1), name="a" * 56)) == [
        ("jobset-pod-name", f'spec.replicatedJobs[0].name: Invalid value: "{"a" * 56}-rj-0": {POD_TOO_LONG}'),
    ]


def test_upstream_example_generate_name_49_worker() -> None:
    """generateName ``"a"*49 + "-"`` becomes a 55-character name: ``<55>-worker-0`` has 64."""
    obj = jobset(rjob("worker"), name=None, generate_name="a" * 49 + "-")
    (finding,) = webhook_findings(obj)
    assert finding.rule.id == "jobset-job-name"
    assert finding.message.endswith(JOB_TOO_LONG)
    bad_value = finding.message.split('"')[1]
    assert len(bad_value) == 64
    assert bad_value.startswith("a" * 49 + "-") and bad_value.endswith("-worker-0")


def test_upstream_example_generate_name_pvc_too_long() -> None:
    """The same generateName makes ``datasets-<55 chars>`` 64 characters long (#23)."""
    mount = {"volumeMounts": [{"name": "datasets", "mountPath": "/mnt/data"}]}
    obj = jobset(rjob("w", pod_spec={"containers": [{"name": "c", "image": "i", **mount}]}), name=None,
                 generate_name="a" * 49 + "-", volumeClaimPolicies=[{"templates": [{"metadata": {"name": "datasets"}}]}])
    assert rules_and_messages(obj) == [
        ("jobset-vcp-pvc-name-length", 'spec.volumeClaimPolicies[0].template[0].name: Invalid value: "datasets": '
         "VolumeClaimPolicies template name is too long"),
    ]


def test_long_generate_name_truncated_to_58() -> None:
    """generateName is cut to 58 characters before the 5 random ones, so any generateName with a short
    replicated job name passes the job-name check only while 63 - 5 - len('-rj-0') allows it."""
    assert rule_ids(jobset(name=None, generate_name="g" * 53)) == []
    assert rule_ids(jobset(name=None, generate_name="g" * 54)) == ["jobset-job-name"]
    assert rule_ids(jobset(name=None, generate_name="g" * 200)) == ["jobset-job-name"]


def test_no_name_skips_derived_name_checks() -> None:
    """Without name and generateName the API server rejects the object before webhooks run; we do not
    pile derived-name errors (``-rj-0``) on top."""
    obj = jobset(rjob(completions=1), name=None, coordinator={"replicatedJob": "rj"})
    assert rule_ids(obj) == []
