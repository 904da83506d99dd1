"""The JobSet kind handler and API accessors: registration, versions, and tolerance of any shape."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jobsetctl.jobset import api
from jobsetctl.jobset.kind import HANDLER
from jobsetctl.jobset.update import validate_update
from jobsetctl.jobset.webhook import validate_create
from jobsetctl.kinds.interface import AdmissionContext
from jobsetctl.kinds.registry import handler_for
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import KubeVersion
from jobsetctl.rules import all_rules
from tests.jobset.builders import admit_text

ALL_GATES = "InPlaceRestart=true,RestartJob=true,ElasticJobSet=true"


def _ctx(gates: str = "") -> AdmissionContext:
    return AdmissionContext(KubeVersion.V1_37, parse_feature_gates(gates, KubeVersion.V1_37))


def test_registered_for_jobset() -> None:
    assert handler_for("jobset.x-k8s.io", "JobSet") is HANDLER
    assert HANDLER.namespaced


@pytest.mark.parametrize("version", list(KubeVersion))
def test_served_versions(version: KubeVersion) -> None:
    assert HANDLER.served_versions(version) == ("v1alpha2",)
    assert HANDLER.schema("jobset.x-k8s.io/v1alpha2", version).name == "jobset.x-k8s.io_v1alpha2_JobSet"


def test_unserved_version_is_no_match() -> None:
    result = admit_text("apiVersion: jobset.x-k8s.io/v1alpha1\nkind: JobSet\nmetadata: {name: js}\n")
    assert [f.rule.id for f in result.findings] == ["no-kind-match"]


def test_every_webhook_rule_is_registered_with_a_spec_reference() -> None:
    ours = [rule for rule in all_rules() if rule.id.startswith("jobset-") and rule.layer == "webhook"]
    assert len(ours) == 37  # 31 create checks (#1-#26b) and 6 update checks
    for rule in ours:
        assert rule.spec.startswith(("jobset.md §2.2 #", "jobset.md §2.4")), rule.id
        assert rule.layer == "webhook" and rule.summary


def test_accessors_on_malformed_input() -> None:
    malformed: Any = {"spec": {"replicatedJobs": ["x", {"name": 3, "replicas": True}], "network": [], "suspend": "yes"}}
    assert api.replicated_jobs(malformed) == [{"name": 3, "replicas": True}]
    assert list(api.enumerate_replicated_jobs(malformed)) == [(1, {"name": 3, "replicas": True})]
    assert api.replicated_job_names(malformed) == [""]
    assert api.replicas({"replicas": True}) == api.CRD_DEFAULT_REPLICAS
    assert api.replicas({"replicas": 0}) == 0
    assert api.group_name({}) == "default" and api.group_name({"groupName": ""}) == ""
    assert api.depends_on({}) is None and api.depends_on({"dependsOn": []}) == []
    assert api.subdomain(malformed) == "" and api.enable_dns_hostnames(malformed)
    assert not api.is_suspended(malformed)
    assert api.failure_policy(malformed) is None and api.restart_strategy(malformed) == "Recreate"
    assert api.name(None) == "" and api.spec("text") == {}


def test_managed_by_builtin_controller() -> None:
    assert api.is_managed_by_builtin_controller({"spec": {}})
    assert api.is_managed_by_builtin_controller({"spec": {"managedBy": api.JOBSET_CONTROLLER_NAME}})
    assert not api.is_managed_by_builtin_controller({"spec": {"managedBy": "kueue.x-k8s.io/multikueue"}})


def test_condition_texts() -> None:
    assert api.MESSAGE_FAILED_JOBS + api.first_failed_job_suffix("js-rj-0") == (
        "jobset failed due to one or more job failures (first failed job: js-rj-0)")
    assert api.action_message("RestartJobSet") == "applying RestartJobSet failure policy action"
    assert api.restarting_reason("r1") == "FailurePolicy_r1"
    assert api.JOB_FAILURE_REASONS == ("BackoffLimitExceeded", "DeadlineExceeded", "FailedIndexes",
                                       "MaxFailedIndexesExceeded", "PodFailurePolicy")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-3, max_value=3000) | st.sampled_from(["", "rj", "InPlaceRestart",
                                                                                             "RestartJob", "a.b", "Indexed"]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(
        st.sampled_from(["name", "replicas", "template", "spec", "dependsOn", "rules", "action", "completions",
                         "parallelism", "templates", "metadata", "coordinator", "replicatedJob", "volumes",
                         "containers", "volumeMounts", "restartStrategy", "subdomain", "suspend"]),
        children, max_size=4),
    max_leaves=25,
)
spec_strategy = st.dictionaries(
    st.sampled_from(["replicatedJobs", "network", "failurePolicy", "volumeClaimPolicies", "successPolicy",
                     "coordinator", "managedBy", "suspend"]),
    json_values, max_size=6,
)


@settings(max_examples=150)
@given(spec_strategy, spec_strategy)
def test_webhooks_never_raise_on_any_shape(old_spec: dict[str, Any], new_spec: dict[str, Any]) -> None:
    """Admission may see objects the schema would reject; the webhooks must not crash on them."""
    new = {"metadata": {"name": "js"}, "spec": new_spec}
    old = {"metadata": {"name": "js"}, "spec": old_spec}
    for finding in validate_create(new, _ctx(ALL_GATES)):
        assert finding.message
    for finding in validate_update(old, new, _ctx(ALL_GATES)):
        assert finding.message
