"""``spec.successPolicy`` of an Indexed Job (``validateSuccessPolicy`` in kubernetes
``pkg/apis/batch/validation/validation.go``).

The index-interval parser reproduces ``validateIndexesFormat``/``parseIndexInterval`` (``"1,3-5,7"``:
strictly increasing, non-overlapping, each index below ``completions``). The
``requires indexed completion mode`` text is confirmed by upstream tests; the remaining details are
from the 1.35 source as ported in public mirrors and are marked [UNCONFIRMED] where no upstream test
was read.
"""

from __future__ import annotations

from typing import Any

from jobsetctl.kube import field as kfield
from jobsetctl.kube.field import Path

MAX_SUCCESS_POLICY_RULES = 20
#: ``maxJobSuccessPolicySucceededIndexesLimit`` (64 KiB).
MAX_SUCCEEDED_INDEXES_LENGTH = 64 * 1024


class IndexFormatError(ValueError):
    pass


def _parse_int(text: str) -> int:
    if not text or not (text.isdigit() or (text[0] in "+-" and text[1:].isdigit())):
        raise IndexFormatError(f"cannot convert string to integer for index: {text!r}".replace("'", '"'))
    return int(text)


def _interval(text: str, completions: int) -> tuple[int, int]:
    limits = text.split("-")
    if len(limits) > 2:
        raise IndexFormatError(
            f'the fragment "{text}" violates the requirement that an index interval can have at most two parts '
            "separated by '-'"
        )
    first = _parse_int(limits[0])
    if first >= completions:
        raise IndexFormatError(f'too large index: "{limits[0]}"')
    if len(limits) == 1:
        return first, first
    last = _parse_int(limits[1])
    if last >= completions:
        raise IndexFormatError(f'too large index: "{limits[1]}"')
    if first >= last:
        raise IndexFormatError(f"non-increasing order, previous: {first}, current: {last}")
    return first, last


def count_indexes(indexes: str, completions: int) -> int:
    """How many indexes ``"1,3-5"`` names; raises :class:`IndexFormatError` like the upstream parser."""
    if not indexes:
        return 0
    total = 0
    previous: int | None = None
    for part in indexes.split(","):
        first, last = _interval(part, completions)
        if previous is not None and previous >= first:
            raise IndexFormatError(f"non-increasing order, previous: {previous}, current: {first}")
        total += last - first + 1
        previous = last
    return total


def validate_success_policy(spec: dict[str, Any], here: Path) -> list[tuple[str, Path, Path]]:
    """(message, at, upstream path) per problem of an Indexed Job's successPolicy."""
    problems: list[tuple[str, Path, Path]] = []
    raw_policy = spec.get("successPolicy")
    policy: dict[str, Any] = raw_policy if isinstance(raw_policy, dict) else {}
    raw_rules = policy.get("rules")
    rules: list[Any] = raw_rules if isinstance(raw_rules, list) else []
    rules_path = (*here, "rules")
    if not rules and "rules" in policy:  # absent: the schema's Required value
        message = kfield.required(rules_path, "at least one rules must be specified when the successPolicy is specified")
        problems.append((message, rules_path, rules_path))
    if len(rules) > MAX_SUCCESS_POLICY_RULES:
        problems.append((kfield.too_many(rules_path, len(rules), MAX_SUCCESS_POLICY_RULES), rules_path, rules_path))
    raw_completions = spec.get("completions")
    completions = raw_completions if isinstance(raw_completions, int) and not isinstance(raw_completions, bool) else None
    for index, raw in enumerate(rules):
        rule = raw if isinstance(raw, dict) else {}
        rule_path = (*rules_path, index)
        indexes, count = rule.get("succeededIndexes"), rule.get("succeededCount")
        if indexes is None and count is None:
            problems.append((kfield.required(
                rule_path, "at least one of succeededCount or succeededIndexes must be specified"
            ), rule_path, rule_path))
        total = 0
        if isinstance(indexes, str) and completions is not None:
            indexes_path = (*rule_path, "succeededIndexes")
            try:
                total = count_indexes(indexes, completions)
            except IndexFormatError as error:
                problems.append((kfield.invalid(
                    indexes_path, indexes, f"error parsing succeededIndexes: {error}"), indexes_path, indexes_path))
            if len(indexes) > MAX_SUCCEEDED_INDEXES_LENGTH:
                problems.append((kfield.too_long(indexes_path, MAX_SUCCEEDED_INDEXES_LENGTH), indexes_path,
                                 indexes_path))
        if isinstance(count, int) and not isinstance(count, bool):
            count_path = (*rule_path, "succeededCount")
            if count < 0:
                problems.append((kfield.invalid(count_path, count, "must be greater than or equal to 0"), count_path,
                                 count_path))
            if completions is not None and count > completions:
                problems.append((kfield.invalid(count_path, count, (
                    f"must be less than or equal to {completions} (the number of specified completions)"
                )), count_path, count_path))
            if isinstance(indexes, str) and count > total:
                problems.append((kfield.invalid(count_path, count, (
                    f"must be less than or equal to {total} (the number of indexes in the specified "
                    "succeededIndexes field)"
                )), count_path, count_path))
    return problems
