"""Derived-name formats and the length arithmetic of jobset.md §2.3."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jobsetctl.jobset import names

label = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=70)


@pytest.mark.parametrize(("args", "expected"), [
    (("js", "rj", 0), "js-rj-0"),
    (("test-jobset", "replicated-job", 12), "test-jobset-replicated-job-12"),
])
def test_job_name(args: tuple[str, str, int], expected: str) -> None:
    assert names.job_name(*args) == expected


def test_longest_job_name_with_zero_replicas_ends_in_minus_one() -> None:
    assert names.longest_job_name("js", "rj", 0) == "js-rj--1"
    assert names.longest_job_name("js", "rj", 101) == "js-rj-100"


def test_pod_names() -> None:
    assert names.pod_hostname("js", "rj", 1, 3) == "js-rj-1-3"
    assert names.longest_pod_name_for_validation("js", "rj", 2, 4) == "js-rj-1-3-abcde"
    assert names.pod_dns_name("js", "rj", 0, 0, "") == "js-rj-0-0.js"
    assert names.pod_dns_name("js", "rj", 0, 0, "svc") == "js-rj-0-0.svc"


def test_coordinator_endpoint_of_manifest() -> None:
    """The docs' example: ``coordinator-example-driver-0-0.coordinator-example`` (jobset.md §3.2)."""
    manifest = {"metadata": {"name": "coordinator-example"}, "spec": {"coordinator": {"replicatedJob": "driver"}}}
    assert names.coordinator_endpoint_of(manifest) == "coordinator-example-driver-0-0.coordinator-example"
    assert names.coordinator_endpoint_of({"spec": {}}) is None
    with_subdomain = {"metadata": {"name": "js"}, "spec": {
        "network": {"subdomain": "net"}, "coordinator": {"replicatedJob": "rj", "jobIndex": 2, "podIndex": 5}}}
    assert names.coordinator_endpoint_of(with_subdomain) == "js-rj-2-5.net"
    assert names.coordinator_endpoint_of(with_subdomain, jobset_name="other") == "other-rj-2-5.net"


def test_service_pvc_and_node_selector_names() -> None:
    assert names.headless_service_name("js", "") == "js"
    assert names.headless_service_name("js", "svc") == "svc"
    assert names.pvc_name("checkpoints", "volume-claim-trainjob") == "checkpoints-volume-claim-trainjob"
    assert names.namespaced_job_value("default", "js-rj-0") == "default_js-rj-0"


def test_job_key_is_sha1() -> None:
    """jobset.md §3.2 example (SHA-1, although the Go comment says SHA-256: §6 #9)."""
    assert names.job_key("default", "test-jobset-replicated-job-0") == "027791c2c0a79daacbc05ab1512c28988581229f"


def test_default_rule_name() -> None:
    assert names.default_rule_name(3) == "failurePolicyRule3"


def test_jobset_name_for_validation() -> None:
    assert names.jobset_name_for_validation({"metadata": {"name": "js", "generateName": "x-"}}) == "js"
    assert names.jobset_name_for_validation({"metadata": {"generateName": "x-"}}) == "x-bcdfg"
    assert names.jobset_name_for_validation({"metadata": {}}) == ""
    assert names.jobset_name_for_validation("not an object") == ""


@given(st.text(min_size=1, max_size=120))
def test_generated_name_length(generate_name: str) -> None:
    """The API server keeps at most 58 characters of generateName and adds 5 (jobset.md §2.3)."""
    generated = names.generated_name(generate_name)
    assert len(generated) == min(len(generate_name), 58) + 5
    assert generated.startswith(generate_name[:58])


@given(label, label, st.integers(min_value=0, max_value=100_000))
def test_job_name_length_formula(jobset_name: str, rjob_name: str, replicas: int) -> None:
    """Job name length is ``L + R + dJ + 2`` with dJ the digits of ``replicas - 1`` (``-1`` counts 2)."""
    digits = len(str(replicas - 1))
    assert len(names.longest_job_name(jobset_name, rjob_name, replicas)) == len(jobset_name) + len(rjob_name) + digits + 2


@given(label, label, st.integers(min_value=0, max_value=10_000), st.integers(min_value=0, max_value=10_000))
def test_pod_name_length_formula(jobset_name: str, rjob_name: str, replicas: int, completions: int) -> None:
    """Pod name for validation is ``L + R + dJ + dP + 3`` plus 6 for ``-abcde``."""
    expected = len(jobset_name) + len(rjob_name) + len(str(replicas - 1)) + len(str(completions - 1)) + 3 + 6
    assert len(names.longest_pod_name_for_validation(jobset_name, rjob_name, replicas, completions)) == expected


@given(label, label, st.integers(min_value=0, max_value=999), st.integers(min_value=0, max_value=999), st.text(max_size=10))
def test_coordinator_endpoint_formula(js: str, rj: str, job: int, pod: int, subdomain: str) -> None:
    """``L + Rc + dj + dp + 3 + 1 + len(subdomain or JobSet name)`` (jobset.md §2.3)."""
    endpoint = names.coordinator_endpoint(js, rj, job, pod, subdomain)
    assert len(endpoint) == len(js) + len(rj) + len(str(job)) + len(str(pod)) + 3 + 1 + len(subdomain or js)
    assert endpoint.endswith("." + (subdomain or js))
