"""Topology assignments: Kueue's internal form and the ``v1beta2`` API encoding
(``pkg/util/tas/tas_assignment.go``).

Internally an assignment is the ordered levels and a list of ``(values, count)`` domains. The API
stores it as ``slices``: runs of domains whose per-level values are written once when they are all
equal (``universal``) or as ``individual`` roots with a shared prefix and suffix, and pod counts the
same way. With TASAssignmentsEncodingByHostnamePrefix (beta, on) a hostname-lowest assignment is split
into runs of hosts sharing a reusable ``-``-delimited prefix, unless one slice encodes smaller.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

MAX_DOMAINS_PER_SLICE = 100_000
MAX_SLICES = 1_000
HOSTNAME = "kubernetes.io/hostname"


@dataclass(slots=True)
class TopologyAssignment:
    levels: list[str]
    domains: list[tuple[list[str], int]] = field(default_factory=list)

    def total(self) -> int:
        return sum(count for _, count in self.domains)


def to_api(ta: TopologyAssignment | None, by_hostname_prefix: bool = True) -> dict[str, Any] | None:
    """``V1Beta2From``."""
    if ta is None:
        return None
    if not by_hostname_prefix:
        return _single(ta)
    prefixed = _prefix_runs(ta)
    if len(prefixed["slices"]) <= 1 or len(ta.domains) > MAX_DOMAINS_PER_SLICE:
        return prefixed
    single = _single(ta)
    if len(_go_json(single)) < len(_go_json(prefixed)):
        return single
    return prefixed


def from_api(value: Any) -> TopologyAssignment | None:
    """``InternalFrom``."""
    if not isinstance(value, dict):
        return None
    levels = [str(level) for level in value.get("levels") or []]
    domains: list[tuple[list[str], int]] = []
    for item in value.get("slices") or []:
        if not isinstance(item, dict):
            continue
        n = int(item.get("domainCount") or 0)
        per_level = item.get("valuesPerLevel") or []
        counts = item.get("podCounts") or {}
        for i in range(n):
            values = [_value_at(per_level[k] if k < len(per_level) else {}, i) for k in range(len(levels))]
            if counts.get("universal") is not None:
                count = int(counts["universal"])
            else:
                individual = counts.get("individual") or []
                count = int(individual[i]) if i < len(individual) else 0
            domains.append((values, count))
    return TopologyAssignment(levels, domains)


def _value_at(values: dict[str, Any], index: int) -> str:
    if values.get("universal") is not None:
        return str(values["universal"])
    individual = values.get("individual") or {}
    roots = individual.get("roots") or []
    root = str(roots[index]) if index < len(roots) else ""
    return str(individual.get("prefix") or "") + root + str(individual.get("suffix") or "")


def _go_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _single(ta: TopologyAssignment) -> dict[str, Any]:
    out: dict[str, Any] = {"levels": list(ta.levels), "slices": []}
    if ta.domains:
        out["slices"].append(_slice(ta.levels, ta.domains))
    return out


def _prefix_runs(ta: TopologyAssignment) -> dict[str, Any]:
    domains = ta.domains
    keys: list[str] | None = None
    if len(domains) > 1 and ta.levels and ta.levels[-1] == HOSTNAME:
        keys = _reusable_prefix_keys(len(ta.levels) - 1, domains)
    out: dict[str, Any] = {"levels": list(ta.levels), "slices": []}
    for run in _runs(domains, keys):
        for start in range(0, len(run), MAX_DOMAINS_PER_SLICE):
            out["slices"].append(_slice(ta.levels, run[start:start + MAX_DOMAINS_PER_SLICE]))
    return out


def _runs(domains: list[tuple[list[str], int]], keys: list[str] | None) -> list[list[tuple[list[str], int]]]:
    if not domains:
        return []
    if not keys:
        return [domains]
    runs = []
    start = 0
    for i in range(1, len(domains)):
        if keys[i] == keys[start]:
            continue
        runs.append(domains[start:i])
        start = i
    runs.append(domains[start:])
    return runs


def _reusable_prefix_keys(level: int, domains: list[tuple[list[str], int]]) -> list[str] | None:
    """``reusableHostnamePrefixKeys``: the longest ``-``-ended hostname prefixes used at least twice,
    shortened until the runs fit :data:`MAX_SLICES`."""
    candidates: list[list[str]] = []
    counts: dict[str, int] = {}
    depth = 0
    for values, _ in domains:
        hostname = values[level]
        prefixes = [hostname[:end + 1] for end in range(len(hostname) - 1) if hostname[end] == "-"]
        for prefix in prefixes:
            if counts.get(prefix, 0) < 2:
                counts[prefix] = counts.get(prefix, 0) + 1
        candidates.append(prefixes)
        depth = max(depth, len(prefixes))
    for prefix_depth in range(depth, 0, -1):
        keys = []
        for prefixes in candidates:
            key = ""
            for j in range(min(len(prefixes), prefix_depth) - 1, -1, -1):
                if counts.get(prefixes[j], 0) >= 2:
                    key = prefixes[j]
                    break
            keys.append(key)
        slices = 0
        start = 0
        for i in range(1, len(domains)):
            if keys[i] == keys[start]:
                continue
            slices += -(-(i - start) // MAX_DOMAINS_PER_SLICE)
            start = i
        slices += -(-(len(domains) - start) // MAX_DOMAINS_PER_SLICE)
        if slices <= MAX_SLICES:
            return keys
    return None


def _slice(levels: list[str], domains: list[tuple[list[str], int]]) -> dict[str, Any]:
    """``compactSliceEncoding``."""
    per_level = [_compact([values[k] for values, _ in domains]) for k in range(len(levels))]
    counts = [count for _, count in domains]
    pod_counts: dict[str, Any] = {"universal": counts[0]} if all(c == counts[0] for c in counts) else {"individual": counts}
    return {"domainCount": len(domains), "valuesPerLevel": per_level, "podCounts": pod_counts}


def _compact(values: list[str]) -> dict[str, Any]:
    """``fillSingleCompactSliceValues``: universal, or roots with the longest shared prefix and suffix."""
    prefix = suffix = values[0]
    min_len = max_len = len(values[0])
    for text in values[1:]:
        n = len(text)
        min_len, max_len = min(min_len, n), max(max_len, n)
        if n < len(prefix):
            prefix = prefix[:n]
        if n < len(suffix):
            suffix = suffix[len(suffix) - n:]
        for i in range(len(prefix)):
            if text[i] != prefix[i]:
                prefix = prefix[:i]
                break
        for i in range(len(suffix)):
            if text[len(text) - 1 - i] != suffix[len(suffix) - 1 - i]:
                suffix = suffix[len(suffix) - i:]
                break
    if len(prefix) == max_len:
        return {"universal": prefix}
    if len(prefix) + len(suffix) > min_len:
        prefix = prefix[:min_len - len(suffix)]
    individual: dict[str, Any] = {}
    if prefix:
        individual["prefix"] = prefix
    if suffix:
        individual["suffix"] = suffix
    individual["roots"] = [text[len(prefix):len(text) - len(suffix)] for text in values]
    return {"individual": individual}
