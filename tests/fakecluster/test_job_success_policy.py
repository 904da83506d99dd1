"""The Job controller's ``successPolicy`` (Indexed Jobs): upstream's ``TestMatchSuccessPolicy``
(pkg/controller/job/success_policy_test.go) entry by entry, then the whole controller in a simulation.

Not translated: "JobSuccessPolicy is disabled" (the gate is GA and locked on since 1.33, our oldest
release is 1.35)."""

from __future__ import annotations

from typing import Any

import pytest

from jobsetctl.fakecluster.controllers.job_spec import JobView
from jobsetctl.fakecluster.controllers.job_success import match_success_policy
from tests.fakecluster.harness import ClusterFactory, add_node, job, status_of, submit


def _intervals(*pairs: tuple[int, int]) -> set[int]:
    return {i for first, last in pairs for i in range(first, last + 1)}


def _rule(indexes: str | None = None, count: int | None = None) -> dict[str, Any]:
    rule: dict[str, Any] = {}
    if indexes is not None:
        rule["succeededIndexes"] = indexes
    if count is not None:
        rule["succeededCount"] = count
    return rule


M0 = "Matched rules at index 0"
CASES: list[tuple[str, list[dict[str, Any]] | None, set[int], str | None]] = [
    ("successPolicy is null", None, _intervals((0, 0)), None),
    ("any rules are nothing", [], _intervals((0, 0)), None),
    ("rules.succeededIndexes is invalid format", [_rule("invalid-form")], _intervals((0, 0)), None),
    ("rules.succeededIndexes is specified; succeededIndexes matched rules", [_rule("0-2")],
     _intervals((0, 2), (4, 7)), M0),
    ("rules.succeededIndexes is specified; succeededIndexes didn't match rules", [_rule("3")], _intervals((0, 2)), None),
    ("rules.succeededCount is specified; succeededIndexes matched rules", [_rule(count=2)], _intervals((0, 2)), M0),
    ("rules.succeededCount is specified; succeededIndexes didn't match rules", [_rule(count=4)], _intervals((0, 2)),
     None),
    ("multiple rules; rules.succeededIndexes is specified; succeededIndexes met one of rules",
     [_rule("9"), _rule("4,6")], _intervals((0, 2), (4, 7)), "Matched rules at index 1"),
    ("multiple rules; rules.succeededIndexes is specified; succeededIndexes met all rules",
     [_rule("0,1"), _rule("5")], _intervals((0, 2), (4, 7)), M0),
    ("rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes met all rules",
     [_rule("3-6", 2)], _intervals((0, 2), (4, 7)), M0),
    ("rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes didn't match rules",
     [_rule("3-6", 2)], _intervals((0, 2), (6, 7)), None),
    ("rules.succeededIndexes is specified; succeededIndexes are nothing", [_rule(count=4)], set(), None),
    ("rules.succeededIndexes is specified; succeededIndexes matched rules; rules is proper subset of succeededIndexes",
     [_rule("2-4,6-8")], _intervals((1, 5), (6, 9)), M0),
    ("rules.succeededIndexes is specified; succeededIndexes matched rules; rules equals succeededIndexes",
     [_rule("2-4,6-9")], _intervals((2, 4), (6, 9)), M0),
    ("rules.succeededIndexes is specified; succeededIndexes matched rules; rules is subset of succeededIndexes",
     [_rule("2-4,8-12")], _intervals((2, 5), (7, 15)), M0),
    ("rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules is an empty set",
     [_rule("")], _intervals((1, 3)), None),
    ("rules.succeededIndexes is specified; succeededIndexes didn't match rules; succeededIndexes is an empty set",
     [_rule("")], set(), None),
    ("rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules and succeededIndexes are "
     "empty set", [_rule("")], set(), None),
    ("rules.succeededIndexes is specified; succeededIndexes didn't match rules; all elements of "
     "rules.succeededIndexes aren't included in succeededIndexes", [_rule("10-12,14-16")],
     _intervals((1, 3), (5, 7)), None),
    ("rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules overlaps succeededIndexes at "
     "first", [_rule("1-3,5-7")], _intervals((2, 4), (6, 8)), None),
    ("rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; rules overlaps "
     "succeededIndexes at first", [_rule("1-3,5-7", 4)], _intervals((2, 4), (6, 8)), M0),
    ("rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules overlaps succeededIndexes at "
     "last", [_rule("2-4,6-9")], _intervals((1, 3), (5, 7)), None),
    ("rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; rules overlaps "
     "succeededIndexes at last", [_rule("2-4,6-9", 4)], _intervals((1, 3), (5, 7)), M0),
    ("rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules completely overlaps "
     "succeededIndexes", [_rule("0-4,6-9")], _intervals((1, 3), (7, 8)), None),
    ("rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; rules "
     "completely overlaps succeededIndexes", [_rule("0-4,6-9", 5)], _intervals((1, 3), (7, 8)), M0),
    ("rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules overlaps multiple "
     "succeededIndexes at last", [_rule("0-6,8-9")], _intervals((1, 3), (5, 9)), None),
    ("rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; rules overlaps "
     "multiple succeededIndexes at last", [_rule("0-6,8-9", 7)], _intervals((1, 3), (5, 9)), M0),
    ("rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules overlaps succeededIndexes at "
     "first, and rules equals succeededIndexes at last", [_rule("0-5,7-9")], _intervals((1, 5), (7, 10)), None),
    ("rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; rules overlaps "
     "succeededIndexes at first, and rules equals succeededIndexes at last", [_rule("0-5,7-9", 8)],
     _intervals((1, 5), (7, 10)), M0),
    ("rules.succeededIndexes is specified; succeededIndexes didn't match rules; the first rules overlaps "
     "succeededIndexes at first", [_rule("0-3,6-9")], _intervals((1, 10)), None),
    ("rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; the first "
     "rules overlaps succeededIndexes at first", [_rule("0-3,6-9", 7)], _intervals((1, 10)), M0),
]


@pytest.mark.parametrize(("case", "rules", "succeeded", "message"), CASES, ids=[c[0] for c in CASES])
def test_match_success_policy(case: str, rules: list[dict[str, Any]] | None, succeeded: set[int],
                              message: str | None) -> None:
    """TestMatchSuccessPolicy: completions 10, the case's succeeded indexes and rules."""
    spec: dict[str, Any] = {"completions": 10, "completionMode": "Indexed"}
    if rules is not None:
        spec["successPolicy"] = {"rules": rules}
    assert match_success_policy(JobView({"spec": spec}), succeeded, 10) == message, case


def test_a_job_meeting_its_success_policy_completes_without_the_other_indexes(make_cluster: ClusterFactory) -> None:
    """One index at a time; rule 0 asks for index 0 alone: when it succeeds (10 min) the Job gets
    SuccessCriteriaMet and Complete with reason SuccessPolicy, and index 1 is never created."""
    fake = make_cluster("1.37")
    add_node(fake, "n1")
    submit(fake, job("leader", parallelism=1, completions=3, indexed=True,
                     annotations={"jobsetctl.dev/duration": "10m"},
                     successPolicy={"rules": [{"succeededIndexes": "0"}]}))
    fake.run(3600)
    status = status_of(fake, "leader")
    conditions = [(c["type"], c["status"], c["reason"], c["message"]) for c in status["conditions"]]
    assert conditions == [("SuccessCriteriaMet", "True", "SuccessPolicy", "Matched rules at index 0"),
                          ("Complete", "True", "SuccessPolicy", "Matched rules at index 0")]
    assert (status["succeeded"], status["completedIndexes"]) == (1, "0")
    completed = [(e.time, e.event, e.reason) for e in fake.recorder.events if e.kind == "Job"]
    assert completed[-1] == (600, "Completed", "SuccessPolicy")
    assert len([e for e in fake.recorder.events if e.kind == "Pod" and e.event == "Created"]) == 1


def test_the_success_policy_is_matched_before_completions_are_counted(make_cluster: ClusterFactory) -> None:
    """All three indexes succeed together; rule 0 (succeededCount 1) matches first: reason SuccessPolicy,
    not CompletionsReached."""
    fake = make_cluster("1.37")
    add_node(fake, "n1")
    submit(fake, job("all", parallelism=3, completions=3, indexed=True, annotations={"jobsetctl.dev/duration": "10m"},
                     successPolicy={"rules": [{"succeededCount": 1}]}))
    fake.run(3600)
    reasons = [(c["type"], c["reason"]) for c in status_of(fake, "all")["conditions"]]
    assert reasons == [("SuccessCriteriaMet", "SuccessPolicy"), ("Complete", "SuccessPolicy")]
