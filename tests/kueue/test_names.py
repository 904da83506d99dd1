"""Workload names (pkg/controller/jobframework/workload_names.go), translated from workload_names_test.go."""

from __future__ import annotations

import pytest

from jobsetctl.kueue.workload import HASH_LENGTH, workload_name

LONG_OWNER = ("marketing-campaign-autumn-2024-region-north-america-department-digital-strategy-sub-department-"
              "social-media-engagement-tracker-and-analytics-dashboard-v2-final-revision-by-engineering-team-lead-"
              "senior-architect-validation-checked-approved-by-legal-and-ops-dept")


# TestGenerateWorkloadNameWithExtra: the cases with an exact `want`.
@pytest.mark.parametrize(("case", "owner", "uid", "extra", "short", "want"), [
    ("short name, no extra (ShortWorkloadNames=false)", "name", "uid", "", False, "job-name-ef3a1"),
    ("short name, with extra (ShortWorkloadNames=false)", "name", "uid", "1", False, "job-name-2514c"),
    ("long owner name truncated (ShortWorkloadNames=false)", LONG_OWNER, "uid", "", False,
     "job-marketing-campaign-autumn-2024-region-north-america-department-digital-strategy-sub-department-social-"
     "media-engagement-tracker-and-analytics-dashboard-v2-final-revision-by-engineering-team-lead-senior-architect-"
     "validation-checked-approved-by-l-218b8"),
    ("long owner name truncated (ShortWorkloadNames=true)", LONG_OWNER, "uid", "", True,
     "job-marketing-campaign-autumn-2024-region-north-america-d-218b8"),
])
def test_generate_workload_name_with_extra(case: str, owner: str, uid: str, extra: str, short: bool, want: str) -> None:
    assert workload_name(owner, uid, "batch", "Job", short=short, extra=extra) == want


# TestGenerateWorkloadNameWithExtra: the cases with a `wantPrefix`, and the length check every case makes.
@pytest.mark.parametrize(("case", "extra"), [
    ("empty extra", ""), ("generation as extra", "1"), ("resourceVersion as extra", "100"),
    ("custom extra string", "custom-part"),
])
def test_prefix_and_length(case: str, extra: str) -> None:
    name = workload_name("my-job", "uid-123", "batch", "Job", extra=extra)
    assert name.startswith("job-my-job-")
    assert len(name) == len("job-my-job") + 1 + HASH_LENGTH


# The equality cases of TestGenerateWorkloadNameWithExtra and TestGenerateWorkloadNameWithGeneration.
@pytest.mark.parametrize(("case", "extra1", "extra2", "equal"), [
    ("different extra values produce different names", "1", "2", False),
    ("different resourceVersion values produce different names", "100", "200", False),
    ("same extra produces same name", "100", "100", True),
    ("different generations produce different names", "1", "2", False),
    ("same generation produces same name", "1", "1", True),
])
def test_name_equality(case: str, extra1: str, extra2: str, equal: bool) -> None:
    first = workload_name("my-job", "uid-123", "batch", "Job", extra=extra1)
    second = workload_name("my-job", "uid-123", "batch", "Job", extra=extra2)
    assert (first == second) is equal


def test_same_prefix_as_the_static_name() -> None:
    # "same prefix as GetWorkloadNameForOwnerWithGVK": the elastic (extra) and static names share the prefix.
    elastic = workload_name("my-job", "uid-123", "batch", "Job", extra="1")
    static = workload_name("my-job", "uid-123", "batch", "Job")
    assert elastic.rsplit("-", 1)[0] == static.rsplit("-", 1)[0] == "job-my-job"
    assert elastic != static


def test_kind_and_group_enter_the_hash() -> None:
    # getHash writes the kind and group first: a JobSet and a TrainJob of one name get different names.
    assert workload_name("x", "u", "jobset.x-k8s.io", "JobSet").startswith("jobset-x-")
    assert workload_name("x", "u", "jobset.x-k8s.io", "JobSet")[-5:] != workload_name(
        "x", "u", "trainer.kubeflow.org", "TrainJob")[-5:]
