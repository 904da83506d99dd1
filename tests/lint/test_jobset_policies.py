"""Lints on JobSet success, failure and startup policies (jobset.md §1.5, §4.3–§4.6, §6).

Tables of (line, column, rule) over the lint layer, yamllint-style; an empty row list is a passing
manifest. ``jobset()`` puts ``spec:`` on line 5 (plus any metadata lines) and ``replicatedJobs:``
after the given spec lines; each replicated job takes two lines.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jobsetctl.lint.jobset_failure_message_pattern import regex_error
from tests.helpers import validate_text
from tests.lint.support import errors, jobset, lints, rjob

TWO_STAGES = (rjob("prepare"), rjob("train", extra="dependsOn: [{name: prepare, status: Complete}]"))
READY_STAGES = (rjob("driver"), rjob("workers", extra="dependsOn: [{name: driver, status: Ready}]"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # jobset.md §4.5 quirk: Any without targets + dependsOn completes after the first stage.
        (jobset(*TWO_STAGES, spec="  successPolicy:\n    operator: Any\n"), [(7, 5, "jobset-success-any-depends-on")]),
        (jobset(*TWO_STAGES, spec="  successPolicy: {operator: Any}\n"), [(6, 19, "jobset-success-any-depends-on")]),
        # Required by issue #2 even when the stages only wait for Ready: the first success still ends the run.
        (jobset(*READY_STAGES, spec="  successPolicy: {operator: Any}\n"), [(6, 19, "jobset-success-any-depends-on")]),
        # A target that later stages wait to Complete: they are never created.
        (jobset(*TWO_STAGES, spec="  successPolicy: {operator: Any, targetReplicatedJobs: [prepare]}\n"),
         [(6, 57, "jobset-success-any-depends-on")]),
        # Passing: Any targeting the last stage; Any with Ready dependents on the target (driver pattern);
        # Any without stages; All (the default) with stages.
        (jobset(*TWO_STAGES, spec="  successPolicy: {operator: Any, targetReplicatedJobs: [train]}\n"), []),
        (jobset(*READY_STAGES, spec="  successPolicy: {operator: Any, targetReplicatedJobs: [driver]}\n"), []),
        (jobset(rjob("a"), rjob("b"), spec="  successPolicy: {operator: Any}\n"), []),
        (jobset(*TWO_STAGES), []),
    ],
)
def test_success_any_with_depends_on(tmp_path: Path, text: str, expected: list[tuple[int, int, str]]) -> None:
    assert lints(tmp_path, text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # jobset.md §4.5 quirk: All over targets with 0 replicas needs 0 successes.
        (jobset(rjob("driver"), rjob("workers", extra="replicas: 0"),
                spec="  successPolicy: {operator: All, targetReplicatedJobs: [workers]}\n"),
         [(6, 34, "jobset-success-all-zero-replicas")]),
        # Passing: targets with replicas; no targets; everything at 0 replicas (nothing ever succeeds);
        # an unknown target (the webhook's jobset-success-policy-target reports it).
        (jobset(rjob("driver"), rjob("workers", extra="replicas: 2"),
                spec="  successPolicy: {operator: All, targetReplicatedJobs: [workers]}\n"), []),
        (jobset(rjob("workers", extra="replicas: 0"), spec="  successPolicy: {operator: All}\n"), []),
        (jobset(rjob("workers", extra="replicas: 0"),
                spec="  successPolicy: {operator: All, targetReplicatedJobs: [workers]}\n"), []),
        (jobset(rjob("driver"), spec="  successPolicy: {operator: All, targetReplicatedJobs: [nope]}\n"), []),
    ],
)
def test_success_all_with_zero_replica_targets(tmp_path: Path, text: str, expected: list[tuple[int, int, str]]) -> None:
    assert lints(tmp_path, text) == expected


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        # jobset.md §6 #7: failurePolicy: {} makes the first failure terminal (ReachedMaxRestarts).
        ("  failurePolicy: {}\n", [(6, 3, "jobset-failure-policy-no-restarts")]),
        ("  failurePolicy:\n    restartStrategy: BlockingRecreate\n", [(6, 3, "jobset-failure-policy-no-restarts")]),
        # Rules that restart (counted) without a maxRestarts never restart either.
        ("  failurePolicy:\n    rules: [{action: RestartJobSet, onJobFailureReasons: [DeadlineExceeded]}]\n",
         [(6, 3, "jobset-failure-policy-no-restarts")]),
        # FailJobSet for some failures: the others would restart, but maxRestarts 0 refuses.
        ("  failurePolicy:\n    rules: [{action: FailJobSet, onJobFailureReasons: [PodFailurePolicy]}]\n",
         [(6, 3, "jobset-failure-policy-no-restarts")]),
        # An explicit 0 with a counted restart rule: the rule can never restart.
        ("  failurePolicy:\n    maxRestarts: 0\n    rules: [{action: RestartJobSet}]\n",
         [(7, 5, "jobset-failure-policy-no-restarts")]),
        # Passing: restarts allowed; an explicit 0 without restart rules (deliberate); an uncounted
        # restart rule (upstream's host-maintenance example); no failure policy at all.
        ("  failurePolicy: {maxRestarts: 3}\n", []),
        ("  failurePolicy: {maxRestarts: 0}\n", []),
        ("  failurePolicy:\n    maxRestarts: 0\n    rules: [{action: RestartJobSetAndIgnoreMaxRestarts,"
         " onJobFailureReasons: [PodFailurePolicy]}, {action: RestartJobSet}]\n", []),
        ("", []),
    ],
)
def test_failure_policy_without_restarts(tmp_path: Path, policy: str, expected: list[tuple[int, int, str]]) -> None:
    assert lints(tmp_path, jobset(rjob("workers"), spec=policy)) == expected


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        # jobset.md §1.5: no minimum; a negative value makes the first failure terminal.
        ("  failurePolicy: {maxRestarts: -1}\n", [(6, 19, "jobset-max-restarts-negative")]),
        ("  failurePolicy:\n    maxRestarts: -5\n    rules: [{action: RestartJobSetAndIgnoreMaxRestarts}]\n",
         [(7, 5, "jobset-max-restarts-negative")]),
        ("  failurePolicy: {maxRestarts: 0}\n", []),
    ],
)
def test_negative_max_restarts(tmp_path: Path, policy: str, expected: list[tuple[int, int, str]]) -> None:
    # One cause, one finding: a negative value is not also "no restarts".
    assert lints(tmp_path, jobset(rjob("workers"), spec=policy)) == expected


def _rules(rules: str) -> str:
    return jobset(rjob("workers"), spec=f"  failurePolicy:\n    maxRestarts: 3\n    rules:\n{rules}")


@pytest.mark.parametrize(
    ("rules", "expected"),
    [
        # jobset.md §6 #3: patterns are not validated; Go's regexp rejects these, the controller skips them.
        ("    - action: FailJobSet\n      onJobFailureMessagePatterns: ['ok', '(?=lookahead)']\n",
         [(10, 43, "jobset-failure-message-pattern")]),
        ("    - action: FailJobSet\n      onJobFailureMessagePatterns:\n      - 'exit (\\d+'\n      - '\\1'\n",
         [(11, 9, "jobset-failure-message-pattern"), (12, 9, "jobset-failure-message-pattern")]),
        ("    - action: FailJobSet\n      onJobFailureMessagePatterns: ['a{1001}']\n",
         [(10, 37, "jobset-failure-message-pattern")]),
        # Passing: RE2 syntax that Python's re would not accept (\z, \pL, [[:alpha:]], \Q...\E).
        ("    - action: FailJobSet\n      onJobFailureMessagePatterns: ['fatal\\z', '\\pL+', '[[:alpha:]]+',"
         " '\\Q(x)\\E']\n", []),
    ],
)
def test_message_patterns(tmp_path: Path, rules: str, expected: list[tuple[int, int, str]]) -> None:
    assert lints(tmp_path, _rules(rules)) == expected


@pytest.mark.parametrize(
    ("pattern", "valid"),
    [
        ("exit code \\d+", True),
        ("(?i)out of memory", True),
        ("(?P<code>\\d+)", True),
        ("\\C", False),        # RE2 accepts any-byte, Go does not
        ("\\Q\\C\\E", True),   # ...but inside \Q...\E it is literal text
        ("a**", False),
        ("[z-a]", False),
        ("(?<=x)y", False),
    ],
)
def test_regex_validity_follows_go(pattern: str, valid: bool) -> None:
    assert (regex_error(pattern) is None) is valid


@pytest.mark.parametrize(
    ("rules", "expected"),
    [
        # Duplicates are accepted (the UniqueItems marker never reached the CRD); a note, at the repeat.
        ("    - action: FailJobSet\n      onJobFailureReasons: [DeadlineExceeded, BackoffLimitExceeded, DeadlineExceeded]\n",
         [(10, 69, "jobset-failure-reason-duplicate")]),
        ("    - action: FailJobSet\n      onJobFailureReasons: [DeadlineExceeded]\n"
         "    - action: RestartJobSet\n      onJobFailureReasons: [DeadlineExceeded]\n", []),
    ],
)
def test_duplicate_reasons(tmp_path: Path, rules: str, expected: list[tuple[int, int, str]]) -> None:
    assert lints(tmp_path, _rules(rules)) == expected


def test_duplicate_reason_is_a_note_not_a_warning(tmp_path: Path) -> None:
    text = _rules("    - action: FailJobSet\n      onJobFailureReasons: [DeadlineExceeded, DeadlineExceeded]\n")
    [finding] = [d for d in validate_text(tmp_path, text) if d.rule == "jobset-failure-reason-duplicate"]
    assert str(finding.severity) == "info"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        # jobset.md §1.2: startupPolicy is deprecated in favour of dependsOn (a note).
        ("  startupPolicy: {startupPolicyOrder: InOrder}\n", [(6, 19, "jobset-startup-in-order")]),
        ("  startupPolicy: {startupPolicyOrder: AnyOrder}\n", []),
    ],
)
def test_in_order_startup(tmp_path: Path, spec: str, expected: list[tuple[int, int, str]]) -> None:
    assert lints(tmp_path, jobset(rjob("driver"), rjob("workers"), spec=spec)) == expected


def test_in_order_with_depends_on_is_left_to_cel(tmp_path: Path) -> None:
    # The CRD rejects the combination (cel-rule); the deprecation note would only add noise.
    text = jobset(*READY_STAGES, spec="  startupPolicy: {startupPolicyOrder: InOrder}\n")
    diagnostics = validate_text(tmp_path, text)
    assert [rule for _, _, rule in errors(diagnostics)] == ["cel-rule"]
    assert lints(tmp_path, text) == []


def test_in_order_hint_suggests_depends_on(tmp_path: Path) -> None:
    text = jobset(rjob("driver"), rjob("workers"), spec="  startupPolicy: {startupPolicyOrder: InOrder}\n")
    [finding] = [d for d in validate_text(tmp_path, text) if d.rule == "jobset-startup-in-order"]
    assert finding.hint == 'add dependsOn: [{name: driver, status: Ready}] to "workers" (and so on down the list)'
