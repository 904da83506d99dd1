"""The flavor assigner's TAS side (``flavorassigner/tas_flavorassigner.go`` and the TAS parts of
``assignFlavors``, ``updateAssignmentForTAS``): which podsets of a workload need a topology placement,
placing them (on the cluster as it is, or empty when the assignment needs preemption) through the
flavors' :class:`~jobsetctl.kueue.engine.tas_placement.Placement`, and the TAS half of ``Fits``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jobsetctl.kube.jsontree import content_key, shape_bytes
from jobsetctl.kube.podspec import pod_requests
from jobsetctl.kueue.engine import names
from jobsetctl.kueue.engine.amounts import Requests, requests_from_fractions
from jobsetctl.kueue.engine.assignment import FIT, NO_FIT, PREEMPT
from jobsetctl.kueue.engine.tas_encoding import TopologyAssignment
from jobsetctl.kueue.engine.tas_tree import PodSetRequest
from jobsetctl.kueue.engine.tas_tree import as_mapping as _mapping

if TYPE_CHECKING:
    from jobsetctl.kueue.engine.assignment import Assignment
    from jobsetctl.kueue.engine.cache import ClusterQueueState
    from jobsetctl.kueue.engine.flavors import FlavorAssigner
    from jobsetctl.kueue.engine.objects import FlavorSpec, ResourceGroup
    from jobsetctl.kueue.engine.tas import TASManager
    from jobsetctl.kueue.engine.workload import WorkloadInfo


class TASAssigner:
    """The flavor assigner's TAS side (``tas_flavorassigner.go`` and the TAS parts of ``assignFlavors``)."""

    def __init__(self, manager: TASManager) -> None:
        self.manager = manager

    def is_tas_only(self, cq: ClusterQueueState) -> bool:
        """``isTASOnly``, remembered per ClusterQueue while its spec and TAS flavors are the same objects
        (both are replaced on change, see :meth:`TASManager.on_cluster_queue`); asked for every podset at
        every flavor check."""
        memo = self.manager.tas_only_memo
        hit = memo.get(cq.name)
        if hit is not None and hit[0] is cq and hit[1] is cq.spec and hit[2] is cq.tas_flavors:
            return hit[3]
        value = cq.is_tas_only()
        memo[cq.name] = (cq, cq.spec, cq.tas_flavors, value)
        return value

    def implied(self, podset: dict[str, Any], cq: ClusterQueueState) -> bool:
        return not self.manager.explicit(podset) and self.is_tas_only(cq)

    def requested(self, podset: dict[str, Any], cq: ClusterQueueState) -> bool:
        return self.manager.explicit(podset) or self.is_tas_only(cq)

    def check_podset_and_flavor(self, assigner: FlavorAssigner, podset: dict[str, Any], flavor: FlavorSpec,
                                group: ResourceGroup) -> str | None:
        """``checkPodSetAndFlavorMatchForTAS``."""
        cq = assigner.cq
        explicit = self.manager.explicit(podset)
        if explicit or self.is_tas_only(cq):
            if not explicit:  # implied
                return None
            if flavor.topology_name is None:
                spec = _mapping(_mapping(podset.get("template")).get("spec"))
                requests = requests_from_fractions(pod_requests(spec))
                if not any(r in group.covered_resources for r in requests):
                    return None
                return f'Flavor "{flavor.name}" does not support TopologyAwareScheduling'
            tas = cq.tas_flavors.get(flavor.name)
            if tas is None:
                return f'Flavor "{flavor.name}" information missing in TAS cache'
            if not tas.has_level(_mapping(podset.get("topologyRequest")) or None):
                return f'Flavor "{flavor.name}" does not contain the requested level'
            return None
        if flavor.topology_name is not None:
            return f'Flavor "{flavor.name}" supports only TopologyAwareScheduling'
        return None

    def group_flavors_for_empty_podset(self, assigner: FlavorAssigner, index: int, group_flavors: dict[str, Any]) -> dict[str, Any]:
        podsets = assigner.info.spec_podsets()
        request = _mapping(podsets[index].get("topologyRequest")) if index < len(podsets) else {}
        if request.get("podSetGroupName"):
            return {r: f for r, f in group_flavors.items() if f.name in assigner.cq.tas_flavors}
        return {}

    def workload_requests(self, info: WorkloadInfo, cq: ClusterQueueState, assignment: Assignment,
                          errors: dict[str, str] | None = None) -> dict[str, list[PodSetRequest]]:
        """``WorkloadsTopologyRequests``: per TAS flavor, the podsets to place."""
        out: dict[str, list[PodSetRequest]] = {}
        for _index, podset in enumerate(info.spec_podsets()):
            if not self.requested(podset, cq):
                continue
            name = str(podset.get("name") or "main")
            psa = assignment.podset(name)
            if psa is None or psa.status.is_error() or psa.count == 0:
                continue
            if psa.topology_assignment is not None:
                continue
            if not cq.tas_flavors:
                if errors is not None:
                    errors[name] = "workload requires Topology, but there is no TAS cache information"
                continue
            tas_flavors = sorted({f.name for f in psa.flavors.values() if f.name in cq.tas_flavors})
            if not tas_flavors:
                if errors is not None:
                    errors[name] = "no TAS flavor assigned"
                continue
            if len(tas_flavors) > 1:
                if errors is not None:
                    errors[name] = f"more than one TAS flavor assigned: {', '.join(tas_flavors)}"
                continue
            request = _mapping(podset.get("topologyRequest"))
            out.setdefault(tas_flavors[0], []).append(PodSetRequest(
                podset, name, self.manager.full_per_pod(info, name), psa.count, tas_flavors[0],
                self.implied(podset, cq), str(request["podSetGroupName"]) if request.get("podSetGroupName") else None))
        return out

    def requests_for_signature(self, info: WorkloadInfo, cq: ClusterQueueState, assignment: Assignment,
                               signature: tuple[Any, ...],
                               errors: dict[str, str]) -> dict[str, list[PodSetRequest]]:
        """:meth:`workload_requests`, remembered per workload while what it reads is the same: the
        ``spec.podSets`` list (podsets are replaced, never edited in place; the per-pod requests are those of
        its pod specs), the ClusterQueue, its spec and TAS flavors (both replaced on change, see
        :meth:`TASManager.on_cluster_queue`) and the podsets' signature (:func:`_podsets_signature`). A
        workload is assigned again at every attempt, for the same shapes. The requests are only read, never
        edited."""
        manager = self.manager
        if not manager.shortcuts:
            return self.workload_requests(info, cq, assignment, errors)
        spec_podsets = _mapping(info.obj.get("spec")).get("podSets")
        hit = manager.requests_memo.get(info.key)
        if hit is not None and hit[0] is spec_podsets and hit[1] is cq and hit[2] is cq.tas_flavors and \
                hit[3] is cq.spec and hit[4] == signature:
            if hit[6]:
                errors.update(hit[6])
            return hit[5]
        requests = self._requests_by_content(info, cq, assignment, signature, errors, spec_podsets)
        manager.requests_memo[info.key] = (spec_podsets, cq, cq.tas_flavors, cq.spec, signature, requests,
                                           dict(errors))
        return requests

    def _requests_by_content(self, info: WorkloadInfo, cq: ClusterQueueState, assignment: Assignment,
                             signature: tuple[Any, ...], errors: dict[str, str],
                             spec_podsets: Any) -> dict[str, list[PodSetRequest]]:
        """:meth:`workload_requests`, shared between the workloads of one class in one ClusterQueue (each
        workload asks once, at its first attempt; then :meth:`requests_for_signature` remembers them per
        workload). What it reads: of the workload, ``spec.podSets`` only (which podsets request TAS, their
        names, topology requests and groups, and the per-pod requests of their pod specs,
        :meth:`TASManager.full_per_pod`), by content; of the assignment, per podset what ``signature`` holds;
        of the ClusterQueue, its spec and TAS flavors (:meth:`is_tas_only`, the flavors' names), which are
        replaced on change and checked by identity. The key: the ClusterQueue's name, the bytes of
        ``spec.podSets`` (:func:`shape_bytes`: equal bytes mean equal trees, remembered only for a plain
        tree) and the signature. The requests handed out hold the podset and per-pod objects of the first
        workload of the class, of the same content; every reader reads them by content (``Placement._shape``
        takes their identity only as the key of a memo that holds them), and they are only read."""
        memo = self.manager.requests_by_content
        content = shape_bytes(spec_podsets)
        key = (cq.name, content, signature) if content is not None else None
        hit = memo.get(key) if key is not None else None
        if hit is not None and hit[0] is cq and hit[1] is cq.spec and hit[2] is cq.tas_flavors:
            if hit[4]:
                errors.update(hit[4])
            return hit[3]
        requests = self.workload_requests(info, cq, assignment, errors)
        if key is not None and content_key(spec_podsets) is not None:
            if len(memo) > 4096:
                memo.clear()
            memo[key] = (cq, cq.spec, cq.tas_flavors, requests, dict(errors))
        return requests

    def stashed_requests(self, info: WorkloadInfo, cq: ClusterQueueState,
                         assignment: Assignment) -> dict[str, list[PodSetRequest]] | None:
        """:meth:`workload_requests` as :meth:`after_quota` computed them for this assignment, while what
        they depend on (each podset's count, status error, flavors, topology assignment) is the same."""
        stash = assignment.tas_requests
        if stash is not None and stash[0] is info and stash[1] is cq and stash[2] == _podsets_signature(assignment):
            return stash[3]
        return None

    def find_all(self, cq: ClusterQueueState, requests: dict[str, list[PodSetRequest]], *,
                 simulate_empty: bool = False) -> dict[str, tuple[TopologyAssignment | None, str]]:
        """``FindTopologyAssignmentsForWorkload``: flavors in name order.

        On an empty cluster the answer depends only on the requests' shapes and counts, the trees and the
        non-TAS pods (usage_epoch): workloads of one class get the same answer. On the cluster as it is,
        it depends on the same and on the TAS usage, which moves only through
        :meth:`TASManager.touched` (usage_log grows) or with usage_epoch: while neither moved, the same
        requests get the same answer (a cycle nominates the heads of many ClusterQueues, often of one
        class, before it reserves anything). Both answers are remembered; the assignments are only read
        (see :meth:`TASManager.parsed`), and so is the mapping: every caller only reads it (the flavor
        assigner, the preemption simulation), and the one remembered is handed out."""
        manager = self.manager
        if not simulate_empty and not manager.shortcuts:
            return self._find_all(cq, requests, False)
        known = manager.placement_keys.get(id(requests))  # _placement_key's memo, read here first
        if known is not None and known[0] is requests and known[1] is cq.tas_flavors and manager.shortcuts:
            key, flavors, shapes = known[2]
        else:
            key, flavors, shapes = self._placement_key(cq, requests)
        memo = manager.empty_placements if simulate_empty else manager.live_placements
        moved = -1 if simulate_empty else len(manager.usage_log)
        hit = memo.get(key)
        if hit is not None and hit[0] == manager.usage_epoch and hit[1] == moved:
            for tas, tree in hit[2]:
                if tas.current_tree() is not tree:
                    break
            else:
                return hit[4]
        result = self._find_all(cq, requests, simulate_empty)
        if len(memo) > 4096:
            memo.clear()
        # The shapes in the key stay alive with the entry, so their ids are not reused meanwhile.
        memo[key] = (manager.usage_epoch, moved, [(t, t.tree) for t in flavors], shapes, result)
        return result

    def _placement_key(self, cq: ClusterQueueState,
                       requests: dict[str, list[PodSetRequest]]) -> tuple[tuple[Any, ...], list[Any], list[Any]]:
        """What a placement of these requests depends on besides the cluster's state: per flavor (name
        order), the flavor and each request's name, count, group and shape (by identity; the shapes are
        returned to be kept alive with whatever the key is kept in). Remembered per requests object
        (:meth:`requests_for_signature` hands out the same one at each attempt of a workload) while the
        ClusterQueue's TAS flavors are the same mapping; a shape is a function of its podset, per-pod
        requests and flavor, so one remembered stands for any computed again."""
        memo = self.manager.placement_keys
        hit = memo.get(id(requests))
        if hit is not None and hit[0] is requests and hit[1] is cq.tas_flavors and self.manager.shortcuts:
            return hit[2]
        parts: list[Any] = []
        flavors: list[Any] = []
        shapes: list[Any] = []
        for flavor_name in sorted(requests):
            tas = cq.tas_flavors.get(flavor_name)
            if tas is None:
                continue
            tas.current_tree()
            flavors.append(tas)
            flavor_shapes = [tas._shape(r) for r in requests[flavor_name]]
            shapes.extend(flavor_shapes)
            parts.append((flavor_name, id(tas), tuple(
                (r.name, r.count, r.group, id(shape)) for r, shape in zip(requests[flavor_name], flavor_shapes,
                                                                          strict=True))))
        found = (tuple(parts), flavors, shapes)
        if len(memo) > 16384:
            memo.clear()
        memo[id(requests)] = (requests, cq.tas_flavors, found)
        return found

    def _find_all(self, cq: ClusterQueueState, requests: dict[str, list[PodSetRequest]],
                  simulate_empty: bool) -> dict[str, tuple[TopologyAssignment | None, str]]:
        if len(requests) == 1 and self.manager.shortcuts:
            ((flavor_name, flavor_requests),) = requests.items()
            tas = cq.tas_flavors.get(flavor_name)
            if tas is None:
                return {}
            if len(flavor_requests) == 1:
                # One podset (the common case): what find_assignments does for a lone group, without
                # gathering groups and the usage assumed for the groups after it (none reads it;
                # EngineSettings.tas_shortcuts off takes the general way).
                request = flavor_requests[0]
                assignments, reason = tas._find(request, None, {}, simulate_empty)
                return {request.name: (assignments.get(request.name), reason)}
        result: dict[str, tuple[TopologyAssignment | None, str]] = {}
        assumed: dict[str, Requests] = {}
        for flavor_name in sorted(requests):
            tas = cq.tas_flavors.get(flavor_name)
            if tas is None:
                continue
            flavor_assumed = assumed if tas.current_tree().lowest_is_node else {}
            result.update(tas.find_assignments(requests[flavor_name], simulate_empty=simulate_empty,
                                               assumed=flavor_assumed))
        return result

    def after_quota(self, assigner: FlavorAssigner, assignment: Assignment) -> None:
        """The TAS step of ``assignFlavors`` once quota is assigned."""
        cq = assigner.cq
        errors: dict[str, str] = {}
        signature = _podsets_signature(assignment)
        requests = self.requests_for_signature(assigner.info, cq, assignment, signature, errors)
        if errors:
            for name, error in errors.items():
                psa = assignment.podset(name)
                if psa is not None:
                    psa.status.err = error
                    assignment._mode = None
            signature = _podsets_signature(assignment)
        assignment.tas_requests = (assigner.info, cq, signature, requests)
        if assignment.representative_mode() == FIT:
            result = self.find_all(cq, requests)
            failure = _failure(result, requests)
            if failure is not None:
                psa = assignment.podset(failure[0])
                if psa is not None:
                    psa.status.reasons.append(failure[1])
                assignment.update_mode(failure[0], PREEMPT)
            else:
                self._apply(assignment, result)
        if assignment.representative_mode() == PREEMPT:
            result = self.find_all(cq, requests, simulate_empty=True)
            assignment.tas_empty = (requests, result)
            failure = _failure(result, requests)
            if failure is not None:
                psa = assignment.podset(failure[0])
                if psa is not None:
                    for attempt in psa.attempts:
                        if attempt.flavor == failure[2]:
                            attempt.mode = NO_FIT
                            attempt.no_fit_reason = names.TOPOLOGY_PLACEMENT_FAILED
                assignment.update_mode(failure[0], NO_FIT)
            else:
                for flavor_requests in requests.values():
                    for request in flavor_requests:
                        assignment.update_mode(request.name, PREEMPT)

    def _apply(self, assignment: Assignment, result: dict[str, tuple[TopologyAssignment | None, str]]) -> None:
        manager = self.manager
        by_hostname = manager.engine.settings.gate("TASAssignmentsEncodingByHostnamePrefix")
        for name, (ta, _) in result.items():
            psa = assignment.podset(name)
            if psa is not None:
                psa.topology_assignment = manager.encoded(ta, by_hostname)
                psa.topology_writer = manager.written

    def update_assignment_for_preemption(self, info: WorkloadInfo, cq: ClusterQueueState, assignment: Assignment,
                                         targets: list[Any]) -> None:
        """``updateAssignmentForTAS``: a Preempt assignment gets the TAS placement it will have after its
        targets are gone (or, without targets, on an empty cluster, to hold the place)."""
        if assignment.representative_mode() != PREEMPT:
            return
        requests = self.stashed_requests(info, cq, assignment)
        # Podsets to place were found only for podsets that request TAS, explicitly or implied by a TAS-only
        # ClusterQueue (workload_requests): with some, the check below passes (EngineSettings.tas_shortcuts
        # off always makes it).
        if not requests or not self.manager.shortcuts:
            if not any(self.manager.explicit(p) for p in info.spec_podsets()) and not cq.is_tas_only():
                return
            if requests is None:
                requests = self.workload_requests(info, cq, assignment)
        if targets:
            preemptor = self.manager.engine.preemptor
            for target in targets:
                preemptor.remove(target.info)
            try:
                result = self.find_all(cq, requests)
            finally:
                for target in targets:
                    preemptor.add(target.info)
        elif assignment.tas_empty is not None and assignment.tas_empty[0] is requests:
            # after_quota placed these requests on the empty cluster already (and applied nothing since).
            result = assignment.tas_empty[1]
        else:
            result = self.find_all(cq, requests, simulate_empty=True)
        self._apply(assignment, result)

    def fits(self, info: WorkloadInfo, assignment: Assignment, cq: ClusterQueueState) -> bool:
        """``ClusterQueueSnapshot.Fits`` for the TAS part: each assigned domain still holds its pods."""
        tas_flavors = cq.tas_flavors
        manager = self.manager
        for psa in assignment.podsets:
            if psa.topology_assignment is None:
                continue
            tas = None  # the flavor of the first of the podset's flavors that is a TAS flavor
            for f in psa.flavors.values():
                tas = tas_flavors.get(f.name)
                if tas is not None:
                    break
            if tas is None:
                continue
            ta = manager.parsed(psa.topology_assignment)
            if ta is None:
                continue
            if not tas.holds(ta, manager.full_per_pod(info, psa.name)):
                return False
        return True


def _podsets_signature(assignment: Assignment) -> tuple[Any, ...]:
    """What :meth:`TASAssigner.workload_requests` reads from an assignment's podsets."""
    return tuple([(p.name, p.count, p.topology_assignment is None, p.status.err,
                   tuple([f.name for f in p.flavors.values()])) for p in assignment.podsets])


def _failure(result: dict[str, tuple[TopologyAssignment | None, str]],
             requests: dict[str, list[PodSetRequest]]) -> tuple[str, str, str] | None:
    for name, (_, reason) in result.items():
        if reason:
            # The flavor of the failed podset (the last request of that name, as a mapping built from all
            # of them would hold); built only on failure, most placements succeed.
            flavor_of = {r.name: r.flavor for rs in requests.values() for r in rs}
            return name, reason, flavor_of.get(name, "")
    return None
