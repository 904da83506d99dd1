"""The defaulting webhook ``mjobset.kb.io`` (jobset.md §1.1 step 2), through the admission chain."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from jobsetctl.jobset.defaults import apply_webhook_defaults
from tests.jobset.builders import admit_obj, jobset, rjob


def _admitted(obj: dict[str, Any]) -> dict[str, Any]:
    result = admit_obj(obj)
    assert result.obj is not None
    return result.obj


def test_minimal_jobset_defaults() -> None:
    spec = _admitted(jobset())["spec"]
    assert spec["successPolicy"] == {"operator": "All"}
    assert spec["startupPolicy"] == {"startupPolicyOrder": "AnyOrder"}
    assert spec["network"] == {"enableDNSHostnames": True, "publishNotReadyAddresses": True}
    job_spec = spec["replicatedJobs"][0]["template"]["spec"]
    assert job_spec["completionMode"] == "Indexed"
    assert job_spec["template"]["spec"]["restartPolicy"] == "OnFailure"


def test_not_defaulted_fields_stay_absent() -> None:
    """subdomain, suspend, managedBy, coordinator, ttlSecondsAfterFinished and failurePolicy have no
    webhook default (jobset.md §1.1)."""
    spec = _admitted(jobset())["spec"]
    for absent in ("suspend", "managedBy", "coordinator", "ttlSecondsAfterFinished", "failurePolicy"):
        assert absent not in spec
    assert "subdomain" not in spec["network"]


def test_explicit_values_are_kept() -> None:
    obj = jobset(
        rjob(job_spec={"completionMode": "NonIndexed"}, pod_spec={"restartPolicy": "Never"}),
        successPolicy={"operator": "Any"},
        startupPolicy={"startupPolicyOrder": "InOrder"},
        network={"enableDNSHostnames": False, "publishNotReadyAddresses": False, "subdomain": "svc"},
    )
    spec = _admitted(obj)["spec"]
    assert spec["successPolicy"] == {"operator": "Any"}
    assert spec["startupPolicy"] == {"startupPolicyOrder": "InOrder"}
    assert spec["network"] == {"enableDNSHostnames": False, "publishNotReadyAddresses": False, "subdomain": "svc"}
    job_spec = spec["replicatedJobs"][0]["template"]["spec"]
    assert job_spec["completionMode"] == "NonIndexed"
    assert job_spec["template"]["spec"]["restartPolicy"] == "Never"


def test_partial_network_is_completed() -> None:
    spec = _admitted(jobset(network={"enableDNSHostnames": False}))["spec"]
    assert spec["network"] == {"enableDNSHostnames": False, "publishNotReadyAddresses": True}


def test_failure_rule_names_by_list_index() -> None:
    """``failurePolicyRule<i>`` uses the rule's index, not a count of unnamed rules."""
    rules = [{"name": "first", "action": "FailJobSet"}, {"action": "RestartJobSet"}, {"name": "", "action": "FailJobSet"}]
    spec = _admitted(jobset(failurePolicy={"rules": rules}))["spec"]
    assert [r["name"] for r in spec["failurePolicy"]["rules"]] == ["first", "failurePolicyRule1", "failurePolicyRule2"]


def test_retention_policy_defaulted_per_policy() -> None:
    mount = {"volumeMounts": [{"name": "a", "mountPath": "/a"}, {"name": "b", "mountPath": "/b"}]}
    policies = [
        {"templates": [{"metadata": {"name": "a"}}]},
        {"templates": [{"metadata": {"name": "b"}}], "retentionPolicy": {"whenDeleted": "Retain"}},
    ]
    obj = jobset(rjob(pod_spec={"containers": [{"name": "c", "image": "i", **mount}]}), volumeClaimPolicies=policies)
    spec = _admitted(obj)["spec"]
    assert [p["retentionPolicy"] for p in spec["volumeClaimPolicies"]] == [
        {"whenDeleted": "Delete"}, {"whenDeleted": "Retain"},
    ]


def test_replicated_job_without_template_gets_zero_value_structs() -> None:
    """Go decodes an absent template as a zero struct and still writes the defaults into it."""
    obj: dict[str, Any] = {"spec": {"replicatedJobs": [{"name": "rj"}]}}
    apply_webhook_defaults(obj)
    assert obj["spec"]["replicatedJobs"][0]["template"] == {
        "spec": {"completionMode": "Indexed", "template": {"spec": {"restartPolicy": "OnFailure"}}}
    }


def test_update_applies_create_time_defaults_to_both_sides() -> None:
    """mjobset.kb.io is registered for CREATE only, so the stored object carries its defaults; issue #2 has
    ``--old`` apply create-time defaults to both sides, as ``kubectl apply`` of the same manifest would leave
    them (the stored values survive the merge)."""
    result = admit_obj(jobset(), old=jobset())
    assert result.obj is not None
    assert result.obj["spec"]["successPolicy"] == {"operator": "All"}
    assert result.obj["spec"]["replicatedJobs"][0]["template"]["spec"]["completionMode"] == "Indexed"


def test_resending_the_same_manifest_is_not_a_change() -> None:
    assert [f.rule.id for f in admit_obj(jobset(), old=jobset()).findings if f.rule.id.startswith("jobset-")] == []


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=20,
)
spec_keys = st.sampled_from(["replicatedJobs", "network", "failurePolicy", "volumeClaimPolicies", "successPolicy"])


@given(st.dictionaries(spec_keys, json_values, max_size=5))
def test_defaulting_tolerates_any_shape_and_is_idempotent(spec: dict[str, Any]) -> None:
    obj: dict[str, Any] = {"spec": spec}
    apply_webhook_defaults(obj)
    once = copy.deepcopy(obj)
    apply_webhook_defaults(obj)
    assert obj == once
