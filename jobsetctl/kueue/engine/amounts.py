"""Quantities as Kueue counts them: integers, milli-units for CPU (``resources.AmountFromQuantity``).

A request map is ``dict[resource name, int]``; a flavor-resource is the pair ``(flavor, resource)``
(``resources.FlavorResource``). Kueue's ``Amount`` saturates at MaxInt64 ("Unlimited"); Python integers
do not overflow, so plain ints stand in for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from jobsetctl.fakecluster.scheduler.podinfo import to_units
from jobsetctl.kueue.queues import kueue_quantity_text

CPU = "cpu"
MEMORY = "memory"
PODS = "pods"

Requests = dict[str, int]
FlavorResource = tuple[str, str]  # (flavor, resource)
FRQuantities = dict[FlavorResource, int]
MAX_INT64 = 2**63 - 1


def units(resource: str, amount: Any) -> int:
    """One quantity (manifest value or Fraction) in Kueue's integer units for ``resource``, clamped to
    int64 as ``resources.ResourceValue`` (SafeMilliValue/SafeValue) does."""
    if isinstance(amount, str):
        memo_key = (resource, amount)
        hit = _UNITS_MEMO.get(memo_key)
        if hit is not None:
            return hit
        value = _clamp(to_units(resource, amount))
        if len(_UNITS_MEMO) < 65536:
            _UNITS_MEMO[memo_key] = value
        return value
    return _clamp(to_units(resource, amount))


#: Quantity texts repeat endlessly (every admission writes the same few): parse each once.
_UNITS_MEMO: dict[tuple[str, str], int] = {}


def _clamp(value: int) -> int:
    if value > MAX_INT64:
        return MAX_INT64
    if value < -MAX_INT64 - 1:
        return -MAX_INT64 - 1
    return value


def requests_from_resource_list(raw: Any) -> Requests:
    """``resources.NewRequestsFromResourceList`` of a ``ResourceList`` mapping."""
    out: Requests = {}
    if isinstance(raw, dict):
        for name, amount in raw.items():
            if isinstance(name, str):
                out[name] = units(name, amount)
    return out


def requests_from_fractions(values: Mapping[str, Fraction]) -> Requests:
    return {name: units(name, amount) for name, amount in values.items()}


def add_into(total: Requests, more: Mapping[str, int], factor: int = 1) -> None:
    for name, value in more.items():
        total[name] = total.get(name, 0) + value * factor


def scaled(values: Mapping[str, int], factor: int) -> Requests:
    return {name: value * factor for name, value in values.items()}


def quantity_string(resource: str, value: int) -> str:
    """``ResourceFormatter.ResourceQuantityString``: one rule with the lints'
    (:func:`jobsetctl.kueue.queues.kueue_quantity_text`). Admissions write the same few amounts over and
    over (every ``resourceUsage``): each is formatted once."""
    memo_key = (resource, value)
    text = _TEXT_MEMO.get(memo_key)
    if text is None:
        text = kueue_quantity_text(resource, value)
        if len(_TEXT_MEMO) < 65536:
            _TEXT_MEMO[memo_key] = text
    return text


_TEXT_MEMO: dict[tuple[str, int], str] = {}


def resource_list_text(values: Mapping[str, int]) -> dict[str, str]:
    """A request map as an API ``ResourceList`` (sorted keys, canonical quantity text)."""
    return {name: quantity_string(name, values[name]) for name in sorted(values)}


MAX_COUNT = 2**31 - 1


def count_in(per_pod: Mapping[str, int], capacity: Mapping[str, int]) -> int:
    """``Requests.CountIn``: how many times ``per_pod`` fits in ``capacity``; requests of 0 do not limit,
    and empty requests fit 0 times (``SliceRequests.CountInWithLimitingResource``)."""
    if not per_pod:
        return 0
    best = MAX_COUNT
    for name, need in per_pod.items():
        if need == 0:
            continue
        fits = max(0, capacity.get(name, 0) // need) if need > 0 else 0
        if fits < best:
            best = fits
            if best == 0:
                return 0
    return best


def count_in_with_limiting(per_pod: Mapping[str, int], capacity: Mapping[str, int]) -> tuple[int, str]:
    """``Requests.CountInWithLimitingResource``: the count and the resource that limits it (alphabetical
    among equal limits, as Kueue iterates sorted names)."""
    if not per_pod:
        return 0, ""
    best, limiting = MAX_COUNT, ""
    for index, name in enumerate(sorted(per_pod)):
        need = per_pod[name]
        fits = MAX_COUNT if need == 0 else max(0, capacity.get(name, 0) // need)
        if index == 0 or fits < best:
            best, limiting = fits, name
    return best, limiting


def flatten(values: Iterable[tuple[FlavorResource, int]]) -> Requests:
    """``FlavorResourceQuantities.FlattenFlavors``: totals per resource over flavors."""
    out: Requests = {}
    for (_, resource), value in values:
        out[resource] = out.get(resource, 0) + value
    return out
