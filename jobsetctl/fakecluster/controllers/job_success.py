"""The Job controller's ``successPolicy`` (``matchSuccessPolicy``, pkg/controller/job/success_policy.go).

For an Indexed Job, the rules are tried in order once the Job has not otherwise finished (a failure
wins): a rule with ``succeededIndexes`` matches when every index it lists succeeded, or, with
``succeededCount``, when at least that many of its indexes did; a rule with ``succeededCount`` alone
matches when that many indexes succeeded in all. A rule whose ``succeededIndexes`` parse to nothing is
skipped. The first match gives ``SuccessCriteriaMet`` with reason ``SuccessPolicy`` and the message
``Matched rules at index <i>``; the remaining pods are deleted and ``Complete`` follows with the same reason
and message once none is left (:mod:`.job_sync`). The ``JobSuccessPolicy`` gate is GA since 1.33.
"""

from __future__ import annotations

from typing import Final

from jobsetctl.fakecluster.controllers.job_pods import parse_indexes
from jobsetctl.fakecluster.controllers.job_spec import JobView, integer, items, mapping

REASON_SUCCESS_POLICY: Final = "SuccessPolicy"
MESSAGE_MATCHED: Final = "Matched rules at index"


def match_success_policy(view: JobView, succeeded: set[int], completions: int) -> str | None:
    """The ``SuccessCriteriaMet`` message of the first rule ``succeeded`` indexes match, else None."""
    policy = view.spec.get("successPolicy")
    if not isinstance(policy, dict) or not succeeded:
        return None
    for index, raw in enumerate(items(policy.get("rules"))):
        rule = mapping(raw)
        count = integer(rule.get("succeededCount"))
        listed = rule.get("succeededIndexes")
        if listed is not None:
            required = parse_indexes(listed, completions)
            if not required:
                continue
            contains = len(required & succeeded)
            if contains == len(required) or (count is not None and contains >= count):
                return f"{MESSAGE_MATCHED} {index}"
        elif count is not None and len(succeeded) >= count:
            return f"{MESSAGE_MATCHED} {index}"
    return None
