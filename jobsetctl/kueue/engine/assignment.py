"""What the flavor assigner returns (``flavorassigner.go``'s ``Assignment``, ``PodSetAssignment``,
``FlavorAssignment`` and the per-flavor attempts), its modes, and how an assignment reads: the
representative mode, the message with upstream's words, the usage it adds, the ``admission`` it writes.
The search itself is :mod:`jobsetctl.kueue.engine.flavors`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jobsetctl.kueue import fit
from jobsetctl.kueue.engine import names
from jobsetctl.kueue.engine.amounts import FlavorResource, FRQuantities, Requests, quantity_string
from jobsetctl.kueue.engine.workload import AssignmentState, WorkloadInfo

if TYPE_CHECKING:
    from jobsetctl.kueue.engine.cache import ClusterQueueState

# FlavorAssignmentMode, lowest to highest preference.
NO_FIT, PREEMPT, DEFERRED_FIT, FIT = 0, 1, 2, 3
MODE_NAMES = {NO_FIT: "NoFit", PREEMPT: "Preempt", DEFERRED_FIT: "DeferredFit", FIT: "Fit"}

# preemptionMode (granular, internal to the assigner).
P_NO_FIT, P_NO_CANDIDATES, P_PREEMPT, P_RECLAIM, P_FIT = 0, 1, 2, 3, 4
TO_MODE = {P_NO_FIT: NO_FIT, P_NO_CANDIDATES: PREEMPT, P_PREEMPT: PREEMPT, P_RECLAIM: PREEMPT, P_FIT: FIT}
#: PreemptionPossibility returned by the oracle.
NO_CANDIDATES, POSSIBLE_PREEMPT, POSSIBLE_RECLAIM = 0, 1, 2
POSSIBILITY_NAMES = {NO_CANDIDATES: "NoCandidates", POSSIBLE_PREEMPT: "Preempt", POSSIBLE_RECLAIM: "Reclaim"}
FROM_POSSIBILITY = {NO_CANDIDATES: P_NO_CANDIDATES, POSSIBLE_PREEMPT: P_PREEMPT, POSSIBLE_RECLAIM: P_RECLAIM}

MAX_BORROW = 2**62

#: Severity of NoFit reasons (``reasonSeverity``).
_SEVERITY = {names.NO_MATCHING_FLAVOR: 4, names.EXCEEDS_MAX_QUOTA: 3, names.WAITING_FOR_QUOTA: 2,
             names.TOPOLOGY_PLACEMENT_FAILED: 1}


def most_severe(a: str, b: str) -> str:
    return a if _SEVERITY.get(a, 0) >= _SEVERITY.get(b, 0) else b


@dataclass(frozen=True, slots=True)
class GranularMode:
    preemption: int
    borrowing: int

    def is_preempt(self) -> bool:
        return self.preemption in (P_PREEMPT, P_RECLAIM)


WORST = GranularMode(P_NO_FIT, MAX_BORROW)
BEST = GranularMode(P_FIT, 0)


def is_preferred(a: GranularMode, b: GranularMode, preference: str | None) -> bool:
    """``isPreferred``: whether mode ``a`` beats ``b`` under the ClusterQueue's fungibility preference."""
    if a.preemption == P_NO_FIT:
        return False
    if b.preemption == P_NO_FIT:
        return True
    a_none = a.preemption == P_NO_CANDIDATES
    b_none = b.preemption == P_NO_CANDIDATES
    if a_none != b_none:
        return not a_none
    if preference == names.PREEMPTION_OVER_BORROWING:
        if a.borrowing != b.borrowing:
            return a.borrowing < b.borrowing
        return a.preemption > b.preemption
    if a.preemption != b.preemption:
        return a.preemption > b.preemption
    return a.borrowing < b.borrowing


@dataclass(slots=True)
class Status:
    reasons: list[str] = field(default_factory=list)
    err: str | None = None
    no_fit_reason: str = ""

    def is_fit(self) -> bool:
        return self.err is None and not self.reasons

    def is_error(self) -> bool:
        return self.err is not None

    def message(self) -> str:
        if self.err is not None:
            return self.err
        reasons = self.reasons
        return reasons[0] if len(reasons) == 1 else ", ".join(sorted(reasons))


@dataclass(slots=True)
class FlavorAssignment:
    name: str
    mode: int
    tried_flavor_idx: int = 0
    borrow: int = 0


@dataclass(slots=True)
class FlavorAttempt:
    """``FlavorAssignmentAttempt``: one tried flavor and its worst outcome over the resources."""

    flavor: str
    mode: int
    borrow: int = 0
    possibility: int | None = None
    reasons: list[str] = field(default_factory=list)
    no_fit_reason: str = ""


@dataclass(slots=True)
class PodSetAssignment:
    name: str
    flavors: dict[str, FlavorAssignment]
    status: Status
    requests: Requests
    count: int
    topology_assignment: Any = None
    attempts: list[FlavorAttempt] = field(default_factory=list)
    # Copies a shared ``topology_assignment`` (see ``TASManager.encoded``) when the admission is written.
    topology_writer: Callable[[Any], Any] | None = None

    def representative_mode(self) -> int:
        status = self.status  # is_fit() and is_error() written out (asked several times per nomination)
        if status.err is None and not status.reasons:
            return FIT
        if status.err is not None or not self.flavors:
            return NO_FIT
        return min(f.mode for f in self.flavors.values())

    def update_mode(self, mode: int) -> None:
        for assignment in self.flavors.values():
            assignment.mode = mode


@dataclass(slots=True)
class Assignment:
    podsets: list[PodSetAssignment] = field(default_factory=list)
    borrowing: int = 0
    last_state: AssignmentState = field(default_factory=AssignmentState)
    usage: FRQuantities = field(default_factory=dict)
    no_fit_reason: str = ""
    _mode: int | None = None
    #: The TAS step's podsets to place and its empty-cluster placement of them, kept for the preemption
    #: steps that follow on the same assignment (:class:`jobsetctl.kueue.engine.tas_assigner.TASAssigner`).
    tas_requests: Any = None
    tas_empty: Any = None

    def representative_mode(self) -> int:
        if not self.podsets:
            return NO_FIT
        if self._mode is not None:
            return self._mode
        mode = FIT
        for podset in self.podsets:
            mode = min(mode, podset.representative_mode())
        self._mode = mode
        return mode

    def set_representative_mode(self, mode: int) -> None:
        self._mode = mode
        for podset in self.podsets:
            podset.update_mode(mode)

    def podset(self, name: str) -> PodSetAssignment | None:
        for podset in self.podsets:
            if podset.name == name:
                return podset
        return None

    def update_mode(self, name: str, mode: int) -> None:
        podset = self.podset(name)
        if podset is not None:
            podset.update_mode(mode)
            self._mode = mode

    def message(self) -> str:
        """``Assignment.Message``."""
        parts: list[str] = []
        for podset in self.podsets:
            status = podset.status
            if status.err is not None:
                return f"failed to assign flavors to pod set {podset.name}: {status.err}"
            if not status.reasons:  # fit
                continue
            parts.append(fit.NO_FLAVOR.format(pod_set=podset.name, reasons=status.message()))
        return "; ".join(parts)

    def requires_borrowing(self) -> bool:
        return self.borrowing > 0

    def total_requests(self, info: WorkloadInfo) -> FRQuantities:
        """``TotalRequestsFor``: requests per flavor-resource at the assigned counts."""
        usage: FRQuantities = {}
        for index, podset in enumerate(info.podsets):
            if index >= len(self.podsets):
                break
            psa = self.podsets[index]
            for resource, per_pod in podset.per_pod.items():
                value = per_pod * psa.count
                if value == 0:
                    continue
                flavor = psa.flavors.get(resource)
                if flavor is None:
                    continue
                key = (flavor.name, resource)
                usage[key] = usage.get(key, 0) + value
        return usage

    def flavors_needing_preemption(self) -> set[FlavorResource]:
        out: set[FlavorResource] = set()
        for podset in self.podsets:
            for resource, flavor in podset.flavors.items():
                if flavor.mode == PREEMPT:
                    out.add((flavor.name, resource))
        return out

    def to_api(self) -> list[dict[str, Any]]:
        out = []
        for podset in self.podsets:
            item: dict[str, Any] = {
                "name": podset.name,
                "flavors": {r: f.name for r, f in sorted(podset.flavors.items())},
                "resourceUsage": {r: quantity_string(r, podset.requests.get(r, 0)) for r in sorted(podset.flavors)},
                "count": podset.count,
            }
            if podset.topology_assignment is not None:
                writer = podset.topology_writer
                item["topologyAssignment"] = (podset.topology_assignment if writer is None
                                              else writer(podset.topology_assignment))
            out.append(item)
        return out

    def resolve_no_fit_reason(self, cq: ClusterQueueState) -> None:
        """``resolveNoFitReason``: the overall QuotaReserved reason of a NoFit assignment."""
        if self.representative_mode() != NO_FIT:
            return
        overall = ""
        for podset in self.podsets:
            if podset.representative_mode() != NO_FIT:
                continue
            if not podset.attempts:
                overall = most_severe(overall, names.NO_MATCHING_FLAVOR)
                continue
            group_reason: dict[int, str] = {}
            for i, attempt in enumerate(podset.attempts):
                if attempt.mode != NO_FIT:
                    continue
                groups = [g for g, rg in enumerate(cq.spec.resource_groups) if attempt.flavor in rg.flavors] or [-1 - i]
                for g in groups:
                    existing = group_reason.get(g)
                    if existing is None or _SEVERITY.get(attempt.no_fit_reason, 0) < _SEVERITY.get(existing, 0):
                        group_reason[g] = attempt.no_fit_reason
            podset_reason = ""
            for reason in group_reason.values():
                podset_reason = most_severe(podset_reason, reason)
            overall = most_severe(overall, podset_reason)
        self.no_fit_reason = overall


def format_attempts(assignment: Assignment) -> str:
    """``FormatFlavorAssignmentAttemptsForEvents`` (the QuotaReserved event's "Flavors considered")."""
    parts: list[str] = []
    for podset in assignment.podsets:
        pieces: list[str] = []
        for attempt in podset.attempts:
            if attempt.mode == FIT and attempt.borrow == 0:
                continue
            text = attempt.flavor + "("
            if attempt.possibility is None:
                text += MODE_NAMES[attempt.mode]
            else:
                text += f"preemptionMode={POSSIBILITY_NAMES[attempt.possibility]}"
            if attempt.borrow > 0:
                text += f";borrow={attempt.borrow}"
            if attempt.reasons:
                text += ";" + ";".join(attempt.reasons)
            pieces.append(text + ")")
        if pieces:
            parts.append(f"{podset.name}: " + ", ".join(pieces))
    return " | ".join(parts)
