"""Table tests for every CREATE rule of the JobSet validating webhook (jobset.md §2.2): (rule, message).

Each rule has failing rows with the exact upstream text and passing rows next to its boundary.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from jobsetctl.kube.names import DNS1035_LABEL_ERROR, DNS1123_SUBDOMAIN_ERROR
from tests.jobset.builders import admit_obj, jobset, rjob, rule_ids, rules_and_messages

NIL = "<nil>: Internal error: "
MAX32 = 2147483647
IN_PLACE_OK: dict[str, Any] = {"backoffLimit": MAX32, "podReplacementPolicy": "Failed"}
IN_PLACE: dict[str, Any] = {"failurePolicy": {"restartStrategy": "InPlaceRestart"}}


def _restart_job_rule(**extra: Any) -> dict[str, Any]:
    return {"failurePolicy": {"rules": [{"name": "r", "action": "RestartJob", **extra}]}}


def _coordinator(**fields: Any) -> dict[str, Any]:
    return {"coordinator": {"replicatedJob": "rj", **fields}}


def _two(second: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return jobset(rjob("a"), second, **spec)


FAILING = [
    pytest.param(
        jobset(**IN_PLACE), "",
        [("jobset-inplace-restart-gate",
          NIL + "InPlaceRestart restart strategy cannot be set when InPlaceRestart feature gate is disabled")],
        id="1-inplace-restart-gate",
    ),
    pytest.param(
        jobset(rjob("a", dependsOn=[{"name": "b", "status": "Ready"}]), rjob("b")), "",
        [("jobset-depends-on-first", NIL + "DependsOn can't be set for the first ReplicatedJob"),
         ("jobset-depends-on-order", NIL + "replicatedJob: a cannot depend on replicatedJob: b")],
        id="2-depends-on-first",
    ),
    pytest.param(
        jobset(network={"subdomain": "a_b"}), "",
        [("jobset-subdomain", f'spec.network.subdomain: Invalid value: "a_b": {DNS1123_SUBDOMAIN_ERROR}'),
         ("jobset-subdomain-label", f'spec.network.subdomain: Invalid value: "a_b": {DNS1035_LABEL_ERROR}')],
        id="3-subdomain-both",
    ),
    pytest.param(
        jobset(network={"subdomain": "svc.example"}), "",
        [("jobset-subdomain-label", f'spec.network.subdomain: Invalid value: "svc.example": {DNS1035_LABEL_ERROR}')],
        id="3b-subdomain-dot",
    ),
    pytest.param(
        jobset(network={"subdomain": "a" * 64}), "",
        [("jobset-subdomain-label", f'spec.network.subdomain: Invalid value: "{"a" * 64}": '
          ".spec.network.subdomain is too long, must be less than 63 characters")],
        id="3b-subdomain-too-long",
    ),
    pytest.param(
        jobset(managedBy="foo"), "",
        [("jobset-managed-by", 'spec.managedBy: Invalid value: "foo": must be a domain-prefixed path (such as "acme.io/foo")')],
        id="4-managed-by-no-slash",
    ),
    pytest.param(
        jobset(managedBy=""), "", [("jobset-managed-by", "spec.managedBy: Required value")], id="4-managed-by-empty",
    ),
    pytest.param(
        jobset(managedBy="Acme.io/x"), "",
        [("jobset-managed-by", f'spec.managedBy: Invalid value: "Acme.io": {DNS1123_SUBDOMAIN_ERROR}')],
        id="4-managed-by-host",
    ),
    pytest.param(
        jobset(managedBy="acme.io/a b"), "",
        [("jobset-managed-by", "spec.managedBy: Invalid value: \"a b\": Invalid path (regex used for validation is "
          "'[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')")],
        id="4-managed-by-path",
    ),
    pytest.param(
        jobset(managedBy="foo.bar/" + "a" * 63), "",
        [("jobset-managed-by-length", "spec.managedBy: Too long: may not be more than 63 bytes")],
        id="4b-managed-by-length",
    ),
    pytest.param(
        jobset(rjob(replicas=2, parallelism=2**30)), "",
        [("jobset-replicas-parallelism-overflow",
          NIL + "the product of replicas and parallelism must not exceed 2147483647 for replicatedJob 'rj'")],
        id="5-overflow",
    ),
    pytest.param(
        jobset(rjob(groupName="Workers")), "",
        [("jobset-group-name", f'spec.replicatedJobs[0].groupName: Invalid value: "Workers": {DNS1035_LABEL_ERROR}')],
        id="6-group-name-chars",
    ),
    pytest.param(
        jobset(rjob(groupName="")), "",
        [("jobset-group-name", f'spec.replicatedJobs[0].groupName: Invalid value: "": {DNS1035_LABEL_ERROR}')],
        id="6-group-name-empty",
    ),
    pytest.param(
        jobset(rjob(groupName="g" * 64)), "",
        [("jobset-group-name", f'spec.replicatedJobs[0].groupName: Invalid value: "{"g" * 64}": '
          ".spec.replicatedJob[].groupName is too long, must be less than 63 characters")],
        id="6-group-name-length",
    ),
    pytest.param(
        jobset(name="a" * 59), "",
        [("jobset-job-name", f'spec.replicatedJobs[0].name: Invalid value: "{"a" * 59}-rj-0": '
          "JobSet name is too long, job names generated for this JobSet will exceed 63 characters")],
        id="7-job-name-59",
    ),
    pytest.param(
        jobset(rjob("Workers")), "",
        [("jobset-job-name", f'spec.replicatedJobs[0].name: Invalid value: "js-Workers-0": {DNS1035_LABEL_ERROR}')],
        id="7-job-name-uppercase-rjob",
    ),
    pytest.param(
        jobset(name="1js"), "",
        [("jobset-job-name", f'spec.replicatedJobs[0].name: Invalid value: "1js-rj-0": {DNS1035_LABEL_ERROR}')],
        id="7-job-name-leading-digit",
    ),
    pytest.param(
        jobset(rjob(completions=1), name="a" * 51), "",
        [("jobset-pod-name", f'spec.replicatedJobs[0].name: Invalid value: "{"a" * 51}-rj-0": '
          "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters")],
        id="8-pod-name-51",
    ),
    pytest.param(
        _two(rjob("b", dependsOn=[{"name": "c", "status": "Complete"}])), "",
        [("jobset-depends-on-order", NIL + "replicatedJob: b cannot depend on replicatedJob: c")],
        id="9-depends-on-unknown",
    ),
    pytest.param(
        jobset(rjob("a"), rjob("b", dependsOn=[{"name": "c", "status": "Ready"}]), rjob("c")), "",
        [("jobset-depends-on-order", NIL + "replicatedJob: b cannot depend on replicatedJob: c")],
        id="9-depends-on-later",
    ),
    pytest.param(
        jobset(**IN_PLACE), "InPlaceRestart=true",
        [("jobset-inplace-restart-backoff-limit", 'spec.replicatedJobs[0].template.spec.backoffLimit: Invalid value: '
          '"null": replicatedJob rj: must be set to 2147483647 (MaxInt32) when in-place restart is enabled'),
         ("jobset-inplace-restart-pod-replacement-policy", "spec.replicatedJobs[0].template.spec.podReplacementPolicy: "
          'Invalid value: "null": replicatedJob rj: must be set to Failed when in-place restart is enabled'),
         ("jobset-inplace-restart-completions", 'spec.replicatedJobs[0].template.spec.completions: Invalid value: "null": '
          "replicatedJob rj: completions and parallelism must be set and equal to each other when in-place restart "
          "is enabled")],
        id="10-inplace-all-unset",
    ),
    pytest.param(
        jobset(rjob(completions=2, parallelism=1, job_spec={"backoffLimit": 6, "podReplacementPolicy": "TerminatingOrFailed"}),
               **IN_PLACE), "InPlaceRestart=true",
        [("jobset-inplace-restart-backoff-limit", "spec.replicatedJobs[0].template.spec.backoffLimit: Invalid value: 6: "
          "replicatedJob rj: must be set to 2147483647 (MaxInt32) when in-place restart is enabled"),
         ("jobset-inplace-restart-pod-replacement-policy", "spec.replicatedJobs[0].template.spec.podReplacementPolicy: "
          'Invalid value: "TerminatingOrFailed": replicatedJob rj: must be set to Failed when in-place restart is enabled'),
         ("jobset-inplace-restart-completions", "spec.replicatedJobs[0].template.spec.completions: Invalid value: 2: "
          "replicatedJob rj: completions and parallelism must be set and equal to each other when in-place restart "
          "is enabled")],
        id="10-inplace-wrong-values",
    ),
    pytest.param(
        jobset(successPolicy={"operator": "All", "targetReplicatedJobs": ["rj", "nope"]}), "",
        [("jobset-success-policy-target", NIL + "invalid replicatedJob name 'nope' does not appear in .spec.ReplicatedJobs")],
        id="11-success-target",
    ),
    pytest.param(
        jobset(**_restart_job_rule()), "",
        [("jobset-restart-job-gate", NIL + "RestartJob and RestartJobAndIgnoreMaxRestarts failure policy actions are "
          "not allowed when RestartJob feature gate is disabled")],
        id="12-restart-job-gate",
    ),
    pytest.param(
        jobset(failurePolicy={"rules": [{"name": "r", "action": "RestartJobAndIgnoreMaxRestarts"}]}), "",
        [("jobset-restart-job-gate", NIL + "RestartJob and RestartJobAndIgnoreMaxRestarts failure policy actions are "
          "not allowed when RestartJob feature gate is disabled")],
        id="12-restart-job-and-ignore-gate",
    ),
    pytest.param(
        jobset(rjob("a", replicas=1025), rjob("b", replicas=2000), **_restart_job_rule()), "RestartJob=true",
        [("jobset-restart-job-replicas", NIL + "JobSet cannot have a failure policy rule with RestartJob or "
          "RestartJobAndIgnoreMaxRestarts action and a replicated job with replicas > 1024")],
        id="13-restart-job-replicas-once",
    ),
    pytest.param(
        jobset(failurePolicy={"rules": [{"name": "a" * 129, "action": "FailJobSet"}]}), "",
        [("jobset-failure-rule-name-length", NIL + "invalid failure policy rule name of length 129, the rule name must "
          "be at least 1 characters long and at most 128 characters long")],
        id="14-rule-name-length",
    ),
    pytest.param(
        jobset(failurePolicy={"rules": [{"name": "1rule", "action": "FailJobSet"}]}), "",
        [("jobset-failure-rule-name-format", NIL + "invalid failure policy rule name '1rule', a failure policy rule "
          "name must start with an alphabetic character, optionally followed by a string of alphanumeric characters "
          "or '_,:', and must end with an alphanumeric character or '_'")],
        id="15-rule-name-format-start",
    ),
    pytest.param(
        jobset(failurePolicy={"rules": [{"name": "rule-", "action": "FailJobSet"}]}), "",
        [("jobset-failure-rule-name-format", NIL + "invalid failure policy rule name 'rule-', a failure policy rule "
          "name must start with an alphabetic character, optionally followed by a string of alphanumeric characters "
          "or '_,:', and must end with an alphanumeric character or '_'")],
        id="15-rule-name-format-dash",
    ),
    pytest.param(
        jobset(failurePolicy={"rules": [{"name": "r", "action": "FailJobSet", "targetReplicatedJobs": ["nope"]}]}), "",
        [("jobset-failure-rule-target",
          NIL + "invalid replicatedJob name 'nope' in failure policy does not appear in .spec.ReplicatedJobs")],
        id="16-rule-target",
    ),
    pytest.param(
        jobset(failurePolicy={"rules": [{"name": "r", "action": "FailJobSet", "onJobFailureReasons": ["Evicted"]}]}), "",
        [("jobset-failure-rule-reason",
          NIL + "invalid job failure reason 'Evicted' in failure policy is not a recognized job failure reason")],
        id="17-rule-reason",
    ),
    pytest.param(
        jobset(failurePolicy={"rules": [{"name": "x", "action": "FailJobSet"}, {"name": "z", "action": "FailJobSet"},
                                        {"name": "x", "action": "RestartJobSet"}]}), "",
        [("jobset-failure-rule-names-unique",
          NIL + "rule names are not unique, rules with indices [0 2] all have the same name 'x'")],
        id="18-rule-names-unique",
    ),
    pytest.param(
        jobset(**_coordinator(replicatedJob="nope")), "",
        [("jobset-coordinator", NIL + "coordinator replicatedJob nope does not exist")],
        id="19a-coordinator-missing",
    ),
    pytest.param(
        jobset(rjob(completions=1), **_coordinator(jobIndex=1)), "",
        [("jobset-coordinator", NIL + "coordinator job index 1 is invalid for replicatedJob rj")],
        id="19b-coordinator-job-index",
    ),
    pytest.param(
        jobset(**_coordinator()), "",
        [("jobset-coordinator", NIL + "job for coordinator pod must be indexed completion mode, and completions "
          "number must be set")],
        id="19c-coordinator-no-completions",
    ),
    pytest.param(
        jobset(rjob(completions=2, job_spec={"completionMode": "NonIndexed"}), **_coordinator()), "",
        [("jobset-coordinator", NIL + "job for coordinator pod must be indexed completion mode, and completions "
          "number must be set")],
        id="19c-coordinator-non-indexed",
    ),
    pytest.param(
        jobset(rjob(completions=2), **_coordinator(podIndex=2)), "",
        [("jobset-coordinator", NIL + "coordinator pod index 2 is invalid for replicatedJob rj job index 0")],
        id="19d-coordinator-pod-index",
    ),
    pytest.param(
        jobset(rjob(completions=1), name="c" * 28, **_coordinator()), "",
        [("jobset-coordinator-label", NIL + f'spec will lead to invalid label value "{"c" * 28}-rj-0-0.{"c" * 28}" '
          'for coordinator label "jobset.sigs.k8s.io/coordinator" (long JobSet / ReplicatedJob / SubDomain name?): '
          "must be no more than 63 characters")],
        id="20-coordinator-label-28",
    ),
    pytest.param(
        jobset(rjob(completions=1), network={"subdomain": "s" * 55}, **_coordinator()), "",
        [("jobset-coordinator-label", NIL + f'spec will lead to invalid label value "js-rj-0-0.{"s" * 55}" '
          'for coordinator label "jobset.sigs.k8s.io/coordinator" (long JobSet / ReplicatedJob / SubDomain name?): '
          "must be no more than 63 characters")],
        id="20-coordinator-label-subdomain",
    ),
]


@pytest.mark.parametrize(("obj", "gates", "expected"), FAILING)
def test_failing(obj: dict[str, Any], gates: str, expected: list[tuple[str, str]]) -> None:
    assert sorted(rules_and_messages(obj, gates)) == sorted(expected)


PASSING = [
    pytest.param(jobset(), "", id="minimal"),
    pytest.param(jobset(rjob(completions=2, parallelism=2, job_spec=IN_PLACE_OK), **IN_PLACE), "InPlaceRestart=true",
                 id="1-10-inplace-with-gate"),
    pytest.param(_two(rjob("b", dependsOn=[{"name": "a", "status": "Ready"}])), "", id="2-9-depends-on-earlier"),
    pytest.param(jobset(network={"subdomain": "my-svc"}), "", id="3-subdomain"),
    pytest.param(jobset(managedBy="kueue.x-k8s.io/multikueue"), "", id="4-managed-by"),
    pytest.param(jobset(managedBy="jobset.sigs.k8s.io/jobset-controller"), "", id="4-managed-by-reserved"),
    pytest.param(jobset(managedBy="foo.bar/" + "a" * 55), "", id="4b-managed-by-63"),
    pytest.param(jobset(rjob(replicas=1, parallelism=MAX32)), "", id="5-product-max"),
    pytest.param(jobset(rjob(replicas=MAX32)), "", id="5-parallelism-unset-counts-1"),
    pytest.param(jobset(rjob(groupName="workers")), "", id="6-group-name"),
    pytest.param(jobset(name="a" * 58), "", id="7-job-name-58"),
    pytest.param(jobset(rjob(completions=1), name="a" * 50), "", id="8-pod-name-50"),
    pytest.param(jobset(rjob(completions=1, job_spec={"completionMode": "NonIndexed"}), name="a" * 58), "",
                 id="8-pod-name-not-checked-nonindexed"),
    pytest.param(jobset(successPolicy={"operator": "Any", "targetReplicatedJobs": ["rj"]}), "", id="11-success-target"),
    pytest.param(jobset(**_restart_job_rule()), "RestartJob=true", id="12-restart-job-with-gate"),
    pytest.param(jobset(rjob(replicas=1024), **_restart_job_rule()), "RestartJob=true", id="13-replicas-1024"),
    pytest.param(jobset(rjob(replicas=5000), failurePolicy={"rules": [{"name": "r", "action": "RestartJobSet"}]}), "",
                 id="13-no-restart-job-action"),
    pytest.param(jobset(failurePolicy={"rules": [{"name": "a" * 128, "action": "FailJobSet"}]}), "", id="14-name-128"),
    pytest.param(jobset(failurePolicy={"rules": [{"name": "a_b,c:d_", "action": "FailJobSet"}]}), "", id="15-name-format"),
    pytest.param(jobset(failurePolicy={"rules": [{"name": "r", "action": "FailJobSet", "targetReplicatedJobs": ["rj"],
                                                  "onJobFailureReasons": ["BackoffLimitExceeded", "DeadlineExceeded",
                                                                          "FailedIndexes", "MaxFailedIndexesExceeded",
                                                                          "PodFailurePolicy"]}]}), "",
                 id="16-17-target-and-all-reasons"),
    pytest.param(jobset(failurePolicy={"rules": [{"action": "FailJobSet"}, {"action": "FailJobSet"}]}), "",
                 id="18-defaulted-names-distinct"),
    pytest.param(jobset(rjob(replicas=2, completions=2), **_coordinator(jobIndex=1, podIndex=1)), "", id="19-coordinator"),
    pytest.param(jobset(rjob(completions=1), name="c" * 27, **_coordinator()), "", id="20-coordinator-label-27"),
]


@pytest.mark.parametrize(("obj", "gates"), PASSING)
def test_passing(obj: dict[str, Any], gates: str) -> None:
    assert rule_ids(obj, gates) == []


def test_identical_messages_reported_once() -> None:
    """Upstream aggregates identical error strings (jobset.md §2.1)."""
    obj = jobset(successPolicy={"operator": "All", "targetReplicatedJobs": ["nope", "nope"]})
    assert rule_ids(obj) == ["jobset-success-policy-target"]


def test_all_errors_accumulate() -> None:
    """Every check runs; errors of unrelated checks appear together (jobset.md §2.2)."""
    obj = jobset(rjob(groupName="G"), managedBy="x", network={"subdomain": "a.b"},
                 successPolicy={"operator": "All", "targetReplicatedJobs": ["z"]})
    assert sorted(rule_ids(obj)) == [
        "jobset-group-name", "jobset-managed-by", "jobset-subdomain-label", "jobset-success-policy-target",
    ]


def test_plain_error_path_points_at_offending_field() -> None:
    """A plain error has no upstream path; the finding's path is the field we point at (jobset.md §2.1)."""
    findings = admit_obj(_two(rjob("b", dependsOn=[{"name": "a", "status": "Ready"}, {"name": "z", "status": "Ready"}]))).findings
    (finding,) = [f for f in findings if f.rule.id == "jobset-depends-on-order"]
    assert finding.path == "spec.replicatedJobs[1].dependsOn[1].name"
    assert finding.at == ("spec", "replicatedJobs", 1, "dependsOn", 1, "name")


def test_volume_mount_missing_reports_replicated_jobs_as_json() -> None:
    """#25's bad value is the whole replicatedJobs list; we render it as compact JSON."""
    obj = jobset(volumeClaimPolicies=[{"templates": [{"metadata": {"name": "data"}, "spec": {}}]}])
    result = admit_obj(obj)
    assert result.obj is not None
    listed = json.dumps(result.obj["spec"]["replicatedJobs"], separators=(",", ":"), sort_keys=True)
    assert rules_and_messages(obj) == [(
        "jobset-vcp-volume-mount",
        f"spec.replicatedJobs: Invalid value: {listed}: replicatedJob containers don't have a matching volumeMount: "
        "data from VolumeClaimPolicies",
    )]
