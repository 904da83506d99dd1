"""``jobset-failure-message-pattern``: an ``onJobFailureMessagePatterns`` entry Go cannot compile.

jobset.md §1.5 and §6 #3: message patterns are RE2 regular expressions that admission does not
validate; the controller logs an invalid one and skips it, so the rule silently never matches on
it (and a rule whose only pattern is invalid never matches at all).

The check compiles each pattern with RE2 (the ``google-re2`` binding cel-python already brings),
whose syntax Go's ``regexp`` implements, plus the one escape RE2 accepts and Go rejects (``\\C``).
Without the binding the check reports nothing rather than guess.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.jobset import api
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.field import go_quote, path_string
from jobsetctl.lint.support import CLUSTER_TRAINING_RUNTIME, JOBSET, TRAINING_RUNTIME, jobset_views, lint_doc
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define

PASSING = r"""
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: patterns
spec:
  failurePolicy:
    maxRestarts: 3
    rules:
    - action: FailJobSet
      onJobFailureMessagePatterns: ['exit code \d+', 'OOMKilled']
  replicatedJobs:
  - name: workers
    template:
      spec:
        template:
          spec:
            containers: [{name: worker, image: busybox}]
"""

FAILING = r"""
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: patterns
spec:
  failurePolicy:
    maxRestarts: 3
    rules:
    - action: FailJobSet
      onJobFailureMessagePatterns: ['(?!retry)fatal']   # lookahead: not RE2
  replicatedJobs:
  - name: workers
    template:
      spec:
        template:
          spec:
            containers: [{name: worker, image: busybox}]
"""

RULE = define(
    "jobset-failure-message-pattern", Layer.LINT, Severity.WARNING,
    "An onJobFailureMessagePatterns entry is not a valid RE2 regex: the controller skips it, it never matches.",
    spec="jobset.md §1.5, §6 #3",
    doc=lint_doc(
        "Message patterns are not validated at admission. The controller logs a pattern Go cannot compile "
        "and skips it, so the rule never matches on it.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({JOBSET, TRAINING_RUNTIME, CLUSTER_TRAINING_RUNTIME})
LOCAL_KINDS = KINDS  # looks at nothing but the object itself


def _go_only_escape_error(pattern: str) -> str | None:
    r"""RE2 accepts ``\C`` (any byte); Go's parser does not. Text inside ``\Q...\E`` is literal."""
    index = 0
    while index < len(pattern) - 1:
        if pattern[index] != "\\":
            index += 1
            continue
        escaped = pattern[index + 1]
        if escaped == "Q":
            end = pattern.find("\\E", index + 2)
            if end < 0:
                return None
            index = end + 2
            continue
        if escaped == "C":
            return r"invalid escape sequence: \C"
        index += 2
    return None


@lru_cache(maxsize=256)
def regex_error(pattern: str) -> str | None:
    """Why Go's ``regexp.Compile`` rejects ``pattern``, or None when it compiles (or we cannot tell)."""
    try:
        import re2
    except ImportError:  # pragma: no cover - google-re2 ships with cel-python
        return None
    options = re2.Options()
    options.log_errors = False  # a lint reports it; RE2 would also print to stderr
    try:
        re2.compile(pattern, options)
    except Exception as exc:  # the binding raises its own error type
        detail = exc.args[0] if exc.args else str(exc)
        return detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
    return _go_only_escape_error(pattern)


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    for view in jobset_views(obj):
        for rule_index, rule in enumerate(api.failure_rules(view.obj)):
            for index, pattern in enumerate(api.as_list(api.as_dict(rule).get("onJobFailureMessagePatterns"))):
                if not isinstance(pattern, str):
                    continue
                error = regex_error(pattern)
                if error is None:
                    continue
                at = view.at("spec", "failurePolicy", "rules", rule_index, "onJobFailureMessagePatterns", index)
                yield RULE.finding(
                    f"message pattern {go_quote(pattern)} is not a valid RE2 regular expression ({error}): the "
                    "controller skips it, so it never matches",
                    path=path_string(at), at=at,
                    hint="Go regexp syntax has no lookaround and no backreferences",
                )
