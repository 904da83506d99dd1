"""The flavor assigner (``pkg/scheduler/flavorassigner/flavorassigner.go``).

For each podset (or group of podsets sharing a ``podSetGroupName``) and each resource group of the
ClusterQueue, the flavors are tried in order (resuming where the last attempt stopped, with
FlavorFungibility on). A flavor is checked against the podset (taints, node affinity restricted to the
flavor's label keys, TAS support), then each resource against quota:

* more than the most this ClusterQueue could ever get (``potentialAvailable``): NoFit,
  ``insufficient quota for ...`` (reason ExceedsMaxQuota);
* within what is available now: Fit, with the height of the lowest Cohort subtree that holds it as the
  borrowing level;
* otherwise ``insufficient unused quota for ...``: Preempt if a preemption simulation finds targets
  (``Reclaim`` when they are all outside the ClusterQueue), else NoFit.

``flavorFungibility`` decides whether the search stops at a flavor that needs borrowing
(``whenCanBorrow``) or preemption (``whenCanPreempt``) and which of the tried flavors wins
(``preference``). Messages and reasons are upstream's, word for word.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from jobsetctl.fakecluster.scheduler.podinfo import parse_tolerations
from jobsetctl.fakecluster.scheduler.selectors import compile_required_node_affinity
from jobsetctl.kueue import fit
from jobsetctl.kueue.engine import names
from jobsetctl.kueue.engine.amounts import PODS, FlavorResource, FRQuantities, Requests, quantity_string
from jobsetctl.kueue.engine.assignment import (
    BEST,
    FIT,
    FROM_POSSIBILITY,
    NO_CANDIDATES,
    NO_FIT,
    P_FIT,
    P_NO_CANDIDATES,
    P_NO_FIT,
    P_PREEMPT,
    P_RECLAIM,
    POSSIBLE_PREEMPT,
    POSSIBLE_RECLAIM,
    TO_MODE,
    WORST,
    Assignment,
    FlavorAssignment,
    FlavorAttempt,
    GranularMode,
    PodSetAssignment,
    Status,
    is_preferred,
    most_severe,
)
from jobsetctl.kueue.engine.objects import FlavorSpec, Quota, ResourceGroup
from jobsetctl.kueue.engine.quota import available as node_available
from jobsetctl.kueue.engine.quota import lowest_subtree_that_fits, potential_available
from jobsetctl.kueue.engine.workload import AssignmentState, PodSetResources, WorkloadInfo

if TYPE_CHECKING:
    from jobsetctl.kueue.engine.cache import ClusterQueueState

#: ``preemptionOracle.SimulatePreemption``: (possibility, borrowing level after preemptions).
PreemptionOracle = Callable[[WorkloadInfo, FlavorResource, int], tuple[int, int]]


#: The attempt's PreemptionPossibility per granular preemption mode (None for Fit and NoFit).
_POSSIBILITY_OF = {P_NO_CANDIDATES: NO_CANDIDATES, P_PREEMPT: POSSIBLE_PREEMPT, P_RECLAIM: POSSIBLE_RECLAIM}
#: Granular modes by (preemption mode, borrowing height): immutable, so one instance per value serves every
#: attempt (the heights are few).
_GRANULAR: dict[tuple[int, int], GranularMode] = {}
#: The indexes of a group of the first podset alone (only read).
_FIRST = [0]


def _granular(preemption: int, borrowing: int) -> GranularMode:
    mode = _GRANULAR.get((preemption, borrowing))
    if mode is None:
        mode = _GRANULAR[(preemption, borrowing)] = GranularMode(preemption, borrowing)
    return mode


def _merge_attempts(dst: dict[str, FlavorAttempt], src: list[FlavorAttempt], resource: str,
                    group: ResourceGroup | None) -> None:
    """``mergeFlavorAttemptsForResource``."""
    # Merged into nothing, every flavor of ``dst`` comes from ``src``: none lacks the resource.
    first = not dst
    for attempt in src:
        existing = dst.get(attempt.flavor)
        if existing is None:
            # The attempts of one _find_flavor call are its own (fresh objects, one per flavor, read by
            # nothing else): the first one of a flavor is kept as the merged one.
            if len(attempt.reasons) > 1:
                attempt.reasons = sorted(set(attempt.reasons))
            dst[attempt.flavor] = attempt
            continue
        possibility = existing.possibility
        if attempt.possibility is not None and (possibility is None or attempt.possibility < possibility):
            possibility = attempt.possibility
        dst[attempt.flavor] = FlavorAttempt(
            attempt.flavor, min(attempt.mode, existing.mode), max(attempt.borrow, existing.borrow), possibility,
            sorted(set(existing.reasons) | set(attempt.reasons)), most_severe(existing.no_fit_reason, attempt.no_fit_reason))
    if src and group is not None and not first:
        present = {a.flavor for a in src}
        for flavor, attempt in dst.items():
            if flavor in group.flavors and flavor not in present:
                attempt.mode = NO_FIT
                attempt.reasons = sorted(set(attempt.reasons) | {f"flavor {flavor} does not provide resource {resource}"})
                attempt.no_fit_reason = names.NO_MATCHING_FLAVOR


def _taint_text(taint: Any) -> str:
    """How Go's ``%s`` prints a ``corev1.Taint`` value: ``{key value effect <nil>}`` (a quirk kept)."""
    return f"{{{taint.key} {taint.value} {taint.effect} <nil>}}"


class FlavorAssigner:
    __slots__ = ("cq", "fair_sharing", "flavors", "fungibility_enabled", "info", "oracle", "scheduling_cycle", "tas")

    def __init__(self, info: WorkloadInfo, cq: ClusterQueueState, flavors: Mapping[str, FlavorSpec],
                 oracle: PreemptionOracle, *, fair_sharing: bool = False, fungibility_enabled: bool = True,
                 scheduling_cycle: int = 0, tas: Any = None) -> None:
        self.info = info
        self.cq = cq
        self.flavors = flavors
        self.oracle = oracle
        self.fair_sharing = fair_sharing
        self.fungibility_enabled = fungibility_enabled
        self.scheduling_cycle = scheduling_cycle
        #: The TAS side (:class:`jobsetctl.kueue.engine.tas_assigner.TASAssigner`), None without TAS flavors.
        self.tas = tas

    def assign(self, counts: list[int] | None = None) -> Assignment:
        info = self.info
        cq = self.cq
        tas = self.tas
        podsets = info.podsets if not counts else [p.scaled_to(c) for p, c in zip(info.podsets, counts, strict=False)]
        assignment = Assignment([], 0, AssignmentState([], cq.generation, self.scheduling_cycle, info.scheduling_hash),
                                {})
        group_of = cq.spec.group_by_resource.get
        covers_pods = group_of(PODS) is not None
        spec_podsets = info.spec_podsets()
        spec_count = len(spec_podsets)
        # Per group: (index, podset, requests, flavors kept from a first pass); the PodSetAssignments are
        # made once their flavors and status are known (nothing reads them before).
        groups: dict[str, list[tuple[int, PodSetResources, Requests, dict[str, FlavorAssignment]]]] = {}
        single = len(podsets) == 1  # one group whatever its key
        for index, podset in enumerate(podsets):
            requests = podset.requests
            if covers_pods:
                requests[PODS] = podset.count
            kept: dict[str, FlavorAssignment] = {}
            if podset.flavors and tas is not None:
                # A second pass keeps the flavors already assigned.
                for resource, flavor in podset.flavors.items():
                    kept[resource] = FlavorAssignment(flavor, FIT)
            if single:
                groups[""] = [(index, podset, requests, kept)]
                break
            group_key = str(index)
            request = spec_podsets[index].get("topologyRequest") if index < spec_count else None
            if isinstance(request, dict) and request.get("podSetGroupName"):
                group_key = str(request["podSetGroupName"])
            groups.setdefault(group_key, []).append((index, podset, requests, kept))

        for members in groups.values():
            group_flavors: dict[str, FlavorAssignment] | None
            if len(members) == 1:
                index, _, totals, group_flavors = members[0]
                indexes = _FIRST if index == 0 else [index]
            else:
                totals = {}
                group_flavors = {}
                for _, _, requests, kept in members:
                    for resource, value in requests.items():
                        totals[resource] = totals.get(resource, 0) + value
                    group_flavors.update(kept)
                indexes = [member[0] for member in members]
            considered: dict[str, FlavorAttempt] = {}
            # The group's status: the reasons gathered, or the failing resource's status as it is.
            reasons: list[str] = []
            err: str | None = None
            no_fit_reason = ""
            for resource in (totals if len(totals) == 1 else sorted(totals)):
                group = group_of(resource)
                if group is None and totals[resource] == 0:
                    continue
                if resource in group_flavors:
                    continue
                flavors, status, attempts = self._find_flavor(indexes, totals, resource, assignment.usage, group,
                                                              spec_podsets)
                _merge_attempts(considered, attempts, resource, group)
                if (status is not None and status.err is not None) or (not flavors and totals):
                    group_flavors = None
                    if status is None:
                        reasons, err, no_fit_reason = [], None, ""
                    else:
                        reasons, err, no_fit_reason = status.reasons, status.err, status.no_fit_reason
                    break
                group_flavors.update(flavors)
                if status is not None:
                    reasons.extend(status.reasons)
            final = [considered[k] for k in sorted(considered)] if len(considered) > 1 else list(considered.values())
            failed = False
            for index, podset, requests, _ in members:
                # Each podset's status has its own list of reasons (the TAS step may add to one); a group of one
                # takes the group's list, which nothing else holds.
                psa = PodSetAssignment(podset.name, self._resolve_podset_flavors(index, requests, group_flavors),
                                       Status(reasons if single else list(reasons), err, no_fit_reason), requests,
                                       podset.count, None, final)
                self._append(assignment, psa)
                if err is not None or (requests and not psa.flavors):
                    failed = True
            if failed:
                assignment.resolve_no_fit_reason(cq)
                return assignment
        if assignment.representative_mode() == NO_FIT:
            assignment.resolve_no_fit_reason(cq)
            return assignment
        if tas is not None:
            tas.after_quota(self, assignment)
        assignment.resolve_no_fit_reason(cq)
        return assignment

    def _resolve_podset_flavors(self, index: int, requests: Requests,
                                group_flavors: dict[str, FlavorAssignment] | None) -> dict[str, FlavorAssignment]:
        if not group_flavors:
            return {}
        if requests:
            return {r: f for r, f in group_flavors.items() if r in requests}
        if self.tas is not None:
            return self.tas.group_flavors_for_empty_podset(self, index, group_flavors)
        return {}

    def _append(self, assignment: Assignment, psa: PodSetAssignment) -> None:
        flavor_idx: dict[str, int] = {}
        assignment.podsets.append(psa)
        assignment._mode = None
        usage = assignment.usage
        requests = psa.requests
        for resource, flavor in psa.flavors.items():
            if flavor.borrow > assignment.borrowing:
                assignment.borrowing = flavor.borrow
            key = (flavor.name, resource)
            usage[key] = usage.get(key, 0) + requests.get(resource, 0)
            flavor_idx[resource] = flavor.tried_flavor_idx
        assignment.last_state.last_tried.append(flavor_idx)

    def _find_flavor(self, indexes: list[int], requests: Requests, resource: str, assignment_usage: FRQuantities,
                     group: ResourceGroup | None, spec_podsets: list[dict[str, Any]],
                     ) -> tuple[dict[str, FlavorAssignment], Status | None, list[FlavorAttempt]]:
        """``findFlavorForPodSets`` (``group`` is the resource's group, ``spec_podsets`` the workload's)."""
        if group is None:
            return {}, Status([fit.UNAVAILABLE.format(resource=resource)]), []
        cq = self.cq
        fungibility = cq.spec.fungibility
        preference = fungibility.preference
        quotas = cq.node.quotas
        info = self.info
        reasons: list[str] = []
        covered = group.covered_resources
        # Sorted by resource name (the names are distinct, so the values never decide).
        if len(requests) == 1:
            # The one resource is ``resource``, which its group covers.
            group_requests = list(requests.items())
        else:
            group_requests = sorted([(r, v) for r, v in requests.items() if r in covered])
        fits_quota = self._fits_quota
        spec_count = len(spec_podsets)
        if len(indexes) == 1:
            podsets = [spec_podsets[indexes[0]] if indexes[0] < spec_count else {}]
        else:
            podsets = [spec_podsets[i] if i < spec_count else {} for i in indexes]
        best: dict[str, FlavorAssignment] = {}
        best_mode = WORST
        attempts: list[FlavorAttempt] = []
        attempted = -1
        start = 0
        last = info.last_assignment
        if self.fungibility_enabled and last is not None:
            start = last.next_flavor(indexes[0], resource)
        nomination = info.nomination_mapping
        flavor_names = group.flavors
        for idx in range(start, len(flavor_names)):
            attempted = idx
            flavor_name = flavor_names[idx]
            if nomination and not any(
                    nomination.get(info.podsets[i].name, {}).get(resource) == flavor_name for i in indexes):
                reasons.append(
                    f"skipping flavor {flavor_name} as it is not found in the nomination mapping for resource {resource}")
                continue
            mismatch = self._check_flavor(flavor_name, podsets, group)
            if mismatch is not None:
                reasons.append(mismatch)
                attempts.append(FlavorAttempt(flavor_name, NO_FIT, reasons=[mismatch],
                                              no_fit_reason=names.NO_MATCHING_FLAVOR))
                continue
            assignments: dict[str, FlavorAssignment] = {}
            mode = BEST
            max_borrow = 0
            quota_reasons: list[str] = []
            no_fit_reason = ""
            for r, value in group_requests:
                fr = (flavor_name, r)
                p_mode, borrow, reason, reason_no_fit = fits_quota(fr, assignment_usage.get(fr, 0), value,
                                                                   quotas.get(fr))
                if reason is not None:
                    quota_reasons.append(reason)
                    reasons.append(reason)
                    no_fit_reason = most_severe(no_fit_reason, reason_no_fit)
                if borrow > max_borrow:
                    max_borrow = borrow
                candidate = _GRANULAR.get((p_mode, borrow)) or _granular(p_mode, borrow)
                if is_preferred(mode, candidate, preference):
                    mode = candidate
                if mode.preemption == P_NO_FIT:
                    # Upstream returns from the ForEach callback: the other resources are still checked
                    # (and their reasons recorded), only no assignment is kept.
                    continue
                assignments[r] = FlavorAssignment(flavor_name, TO_MODE[p_mode], 0, borrow)
            preemption = mode.preemption
            attempts.append(FlavorAttempt(flavor_name, TO_MODE[preemption], max_borrow, _POSSIBILITY_OF.get(preemption),
                                          sorted(quota_reasons) if len(quota_reasons) > 1 else quota_reasons,
                                          no_fit_reason))
            if self.fungibility_enabled:
                if not should_try_next_flavor(mode, fungibility.when_can_borrow, fungibility.when_can_preempt):
                    best, best_mode = assignments, mode
                    break
                if is_preferred(mode, best_mode, preference):
                    best, best_mode = assignments, mode
            elif preemption > best_mode.preemption:
                best, best_mode = assignments, mode
                if preemption == P_FIT:
                    return best, None, attempts
        if self.fungibility_enabled:
            tried = -1 if attempted == len(flavor_names) - 1 else attempted
            for flavor in best.values():
                flavor.tried_flavor_idx = tried
            if best_mode.preemption == P_FIT:
                return best, None, attempts
        return best, Status(reasons), attempts

    def _check_flavor(self, flavor_name: str, podsets: list[dict[str, Any]], group: ResourceGroup) -> str | None:
        """``checkFlavorForPodSets``: taints, node affinity (on the flavor's own label keys) and TAS; the
        reason the flavor does not suit the podsets, None when it does (it never fails with an error)."""
        flavor = self.flavors.get(flavor_name)
        if flavor is None:
            return f"flavor {flavor_name} not found"
        tas = self.tas
        cq = self.cq
        spec, tas_flavors = cq.spec, cq.tas_flavors
        manager = tas.manager if tas is not None else None
        for podset in podsets:
            # Every object of the key is kept alive with the answer, so an id in a key stands for that object
            # alone while the entry exists: a key found is the same objects (no identity to check again).
            key = (id(podset), id(flavor), id(group), id(spec), id(tas_flavors), id(manager), flavor_name)
            hit = _CHECK_MEMO.get(key)
            if hit is not None:
                message = hit[-1]
            else:
                message = self._check_podset_by_content(podset, flavor, flavor_name, group, manager)
                if len(_CHECK_MEMO) >= MAX_CHECK_MEMO:
                    _CHECK_MEMO.clear()
                _CHECK_MEMO[key] = (podset, flavor, group, spec, tas_flavors, manager, message)
            if message is not None:
                return message
        return None

    def _check_podset_by_content(self, podset: dict[str, Any], flavor: FlavorSpec, flavor_name: str,
                                 group: ResourceGroup, manager: Any) -> str | None:
        """:meth:`_check_podset`, remembered per content of what it reads of the podset (see
        :data:`_CHECK_BY_CONTENT`): the podsets of one workload class are distinct objects alike."""
        if self.tas is None or flavor.topology_name is None:
            # Without TAS the pod spec's half is remembered by content already; a TAS check against a flavor
            # without a topology reads the pod's requests, which the key does not hold.
            return self._check_podset(podset, flavor, flavor_name, group)
        cq = self.cq
        spec, tas_flavors = cq.spec, cq.tas_flavors
        pod_spec = (podset.get("template") or {}).get("spec") or {}
        key = (repr(podset.get("topologyRequest")), repr(pod_spec.get("tolerations")), repr(pod_spec.get("nodeSelector")),
               repr(pod_spec.get("affinity")), id(flavor), id(group), id(spec), id(tas_flavors), id(manager))
        hit = _CHECK_BY_CONTENT.get(key)
        if (hit is not None and hit[0] is flavor and hit[1] is group and hit[2] is spec and hit[3] is tas_flavors
                and hit[4] is manager and hit[5] == flavor_name):
            return hit[6]
        message = self._check_podset(podset, flavor, flavor_name, group)
        if len(_CHECK_BY_CONTENT) >= MAX_CHECK_MEMO:
            _CHECK_BY_CONTENT.clear()
        _CHECK_BY_CONTENT[key] = (flavor, group, spec, tas_flavors, manager, flavor_name, message)
        return message

    def _check_podset(self, podset: dict[str, Any], flavor: FlavorSpec, flavor_name: str,
                      group: ResourceGroup) -> str | None:
        """One podset's half of ``checkFlavorForPodSets``: the TAS check, then taints and node affinity."""
        if self.tas is not None:
            message: str | None = self.tas.check_podset_and_flavor(self, podset, flavor, group)
            if message is not None:
                return message
        spec = (podset.get("template") or {}).get("spec") or {}
        return _flavor_mismatch(spec, flavor, flavor_name)

    def _fits_quota(self, fr: FlavorResource, assumed: int, request: int,
                    quota: Quota | None) -> tuple[int, int, str | None, str]:
        """``fitsResourceQuota``: the granular mode, the borrowing height, and when it does not simply fit,
        the reason and the NoFit reason of its status (``quota``: the ClusterQueue's, None when it has
        none for ``fr``)."""
        node = self.cq.node
        value = assumed + request
        max_capacity = potential_available(node, fr)
        if value > max_capacity:
            flavor, resource = fr
            return P_NO_FIT, 0, fit.EXCEEDS.format(
                resource=resource, flavor=flavor, assumed=quantity_string(resource, assumed),
                request=quantity_string(resource, request),
                capacity=quantity_string(resource, max_capacity)), names.EXCEEDS_MAX_QUOTA
        borrow, may_reclaim = lowest_subtree_that_fits(node, fr, value)
        available = max(0, node_available(node, fr))  # cq_available, written out
        if value <= available:
            return P_FIT, borrow, None, ""
        flavor, resource = fr
        reason = (f"insufficient unused quota for {resource} in flavor {flavor}, "
                  f"{quantity_string(resource, value - available)} more needed")
        if (quota is not None and quota.nominal >= value) or may_reclaim or self._can_preempt_while_borrowing():
            possibility, borrow_after = self.oracle(self.info, fr, value)
            mode = FROM_POSSIBILITY[possibility]
            return mode, borrow_after, reason, "" if mode != P_NO_FIT else names.WAITING_FOR_QUOTA
        return P_NO_FIT, borrow, reason, names.WAITING_FOR_QUOTA

    def _can_preempt_while_borrowing(self) -> bool:
        preemption = self.cq.spec.preemption
        return preemption.borrow_within_cohort != names.NEVER or (
            self.fair_sharing and preemption.reclaim_within_cohort != names.NEVER)


#: :meth:`FlavorAssigner._check_podset` answers per (podset, flavor, resource group, the ClusterQueue's spec and
#: TAS flavor caches, the TAS manager) object ids and flavor name (the objects all kept alive with the answer,
#: so their ids are not reused meanwhile). That is everything the check reads: the podset (its
#: template and topologyRequest; podsets are replaced, never edited in place, as ``TASManager.explicit``
#: and ``Placement.has_level`` assume too), the flavor, the group's resources, and through the TAS side
#: the ClusterQueue's flavors (``is_tas_only``) and TAS flavor caches (whose levels are fixed per object).
#: A podset is checked against the same flavor at every attempt of its workload.
_CHECK_MEMO: dict[tuple[Any, ...], tuple[Any, ...]] = {}
MAX_CHECK_MEMO = 16384

#: :meth:`FlavorAssigner._check_podset` answers against a TAS flavor (one with a topology) per content of the
#: podset's parts it reads: the ``repr`` of its ``topologyRequest`` (``TASManager.explicit`` and
#: ``Placement.has_level`` read nothing else of the podset) and of its pod spec's tolerations, nodeSelector and
#: affinity (:func:`_flavor_mismatch`'s key), with the same objects as :data:`_CHECK_MEMO` (the flavor, the
#: group, the ClusterQueue's spec and TAS flavor caches, the TAS manager; kept alive with the answer). The
#: ``repr`` of JSON data is one text per content (keys in another order only miss). Against a flavor without a
#: topology the TAS check reads the pod's requests too: those are not remembered here.
_CHECK_BY_CONTENT: dict[tuple[Any, ...], tuple[Any, ...]] = {}

#: ``_flavor_mismatch`` answers per (tolerations, nodeSelector, affinity) of a pod spec and flavor object
#: (kept alive here): workloads of one class carry the same ones and are checked at every attempt.
_MISMATCH_MEMO: dict[tuple[str, str, str, int], tuple[FlavorSpec, str, str | None]] = {}


def _flavor_mismatch(spec: dict[str, Any], flavor: FlavorSpec, flavor_name: str) -> str | None:
    """The non-TAS half of ``checkFlavorForPodSets`` for one podset: an untolerated taint of the flavor,
    or a node selector / required affinity the flavor's labels do not match."""
    key = (repr(spec.get("tolerations")), repr(spec.get("nodeSelector")), repr(spec.get("affinity")), id(flavor))
    hit = _MISMATCH_MEMO.get(key)
    if hit is not None and hit[0] is flavor and hit[1] == flavor_name:
        return hit[2]
    message: str | None = None
    tolerations = parse_tolerations(spec) + flavor.tolerations
    for taint in flavor.node_taints:
        if taint.effect not in ("NoSchedule", "NoExecute"):
            continue
        if not any(t.tolerates(taint) for t in tolerations):
            message = f"untolerated taint {_taint_text(taint)} in flavor {flavor_name}"
            break
    if message is None and not _flavor_selector_matches(spec, {k for k, _ in flavor.node_labels}, flavor.labels):
        message = f"flavor {flavor_name} doesn't match node affinity"
    if len(_MISMATCH_MEMO) > 16384:
        _MISMATCH_MEMO.clear()
    _MISMATCH_MEMO[key] = (flavor, flavor_name, message)
    return message


def should_try_next_flavor(mode: GranularMode, when_can_borrow: str, when_can_preempt: str) -> bool:
    """``shouldTryNextFlavor``."""
    if mode.preemption in (P_NO_FIT, P_NO_CANDIDATES):
        return True
    if mode.is_preempt() and when_can_preempt == names.TRY_NEXT_FLAVOR:
        return True
    return mode.borrowing != 0 and when_can_borrow == names.TRY_NEXT_FLAVOR


def _flavor_selector_matches(spec: dict[str, Any], allowed: set[str], labels: Mapping[str, str]) -> bool:
    """``flavorSelector``: the pod's nodeSelector and required node affinity, keeping only the keys the
    flavor labels (a term left empty matches every flavor), matched against the flavor's labels."""
    selector = {k: v for k, v in (spec.get("nodeSelector") or {}).items() if k in allowed}
    affinity = spec.get("affinity")
    terms = None
    node_affinity = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(node_affinity, dict) else None
    if isinstance(required, dict):
        kept: list[dict[str, Any]] = []
        for term in required.get("nodeSelectorTerms") or []:
            expressions = [e for e in (term.get("matchExpressions") or []) if isinstance(e, dict) and e.get("key") in allowed]
            if not expressions:
                kept = []
                break
            kept.append({"matchExpressions": expressions})
        if kept:
            terms = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": kept}}}
    compiled = compile_required_node_affinity(selector, terms)
    return compiled.matches(labels, "")
