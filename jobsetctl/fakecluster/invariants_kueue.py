"""Kueue's invariants, checked from the watch stream (:class:`~jobsetctl.fakecluster.invariants.InvariantChecker`
calls :meth:`KueueBooks.on_event`). The books are the checker's own, kept from the Workload and queue
objects the API server stores, not from the engine's cache:

1. **Admitted usage is what the podsets ask.** When a Workload reserves quota, each podset assignment's
   ``resourceUsage`` is ``count`` times the podset's per-pod requests for each resource it assigns a
   flavor to, and ``count`` lies between the podset's ``minCount`` (else its count) and its count. Each
   assigned flavor is a ResourceFlavor that exists and that the ClusterQueue lists for that resource.
2. **No ClusterQueue over nominal plus borrowing limit, no Cohort tree over its quota.** After each
   reservation, the usage of the ClusterQueue's reserved Workloads (QuotaReserved=True, not Finished; their
   ``status.reclaimablePods`` left out, as Kueue counts them) per flavor-resource is at most its nominal
   quota plus its borrowing limit, and the usage of all ClusterQueues of its Cohort tree is at most the tree's nominal quotas (ClusterQueues and Cohorts)
   together. A quota lowered below what is admitted (Kueue lets that be) is no violation: only a
   reservation that makes the usage grow is checked.
3. **Admitted only with quota.** ``Admitted=True`` never without ``QuotaReserved=True``.
4. **Preemption within a ClusterQueue only of lower (or newer equal) priority.** A Workload preempted with
   reason ``InClusterQueue`` has a priority at most its preemptor's (named by UID in the message).
5. **A finished Workload is never evicted.** Kueue's cache forgets it as it sees it finish, so no later
   scheduling cycle picks it as a preemption target.
"""

from __future__ import annotations

import re
from typing import Any

from jobsetctl.fakecluster.apiserver import APIServer, WatchEvent, WatchType
from jobsetctl.fakecluster.invariants_jobs import InvariantViolation
from jobsetctl.kube import podspec
from jobsetctl.kube.quantity import QuantityError, parse_quantity

GROUP = "kueue.x-k8s.io"
_PREEMPTOR_UID = re.compile(r"Preempted to accommodate a workload \(UID: (?P<uid>[^,]*),")


def _m(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _true(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    for cond in _m(obj.get("status")).get("conditions") or []:
        if isinstance(cond, dict) and cond.get("type") == kind and cond.get("status") == "True":
            return cond
    return None


def _amount(value: Any) -> Any:
    try:
        return parse_quantity(value)
    except QuantityError:
        return None


class KueueBooks:
    def __init__(self, api: APIServer) -> None:
        self.api = api
        self.checks = 0
        #: Workload key -> usage it holds: {(flavor, resource): amount} and its ClusterQueue.
        self._held: dict[str, tuple[str, dict[tuple[str, str], Any]]] = {}
        self._preempted: set[tuple[str, str]] = set()
        #: Finished Workloads, with whether they were evicted when they finished.
        self._finished: dict[str, bool] = {}

    def on_event(self, event: WatchEvent) -> None:
        group, kind, namespace, name = event.key
        if group != GROUP or kind != "Workload":
            return
        key = f"{namespace}/{name}"
        if event.type == WatchType.DELETED:
            self._held.pop(key, None)
            self._finished.pop(key, None)
            return
        obj = event.obj
        self._check_not_evicted_after_finishing(key, obj)
        reserved = _true(obj, "QuotaReserved") is not None
        if _true(obj, "Admitted") is not None and not reserved:
            raise InvariantViolation(f"Workload {key} is Admitted without QuotaReserved")
        self.checks += 1
        holding = reserved and _true(obj, "Finished") is None
        if not holding:
            self._held.pop(key, None)
        else:
            admission = _m(_m(obj.get("status")).get("admission"))
            cq = str(admission.get("clusterQueue", ""))
            usage = self._usage(key, obj, admission)
            before = self._held.get(key)
            self._held[key] = (cq, usage)
            if before is None or before[1] != usage or before[0] != cq:
                self._check_quota(key, cq, {fr for fr, v in usage.items() if before is None or v > before[1].get(fr, 0)})
        self._check_preemption(key, obj)

    # ---- rule 5 --------------------------------------------------------------------------------------
    def _check_not_evicted_after_finishing(self, key: str, obj: dict[str, Any]) -> None:
        evicted = _true(obj, "Evicted") is not None
        if _true(obj, "Finished") is None:
            self._finished.pop(key, None)
            return
        self.checks += 1
        if key not in self._finished:
            self._finished[key] = evicted
        elif evicted and not self._finished[key]:
            raise InvariantViolation(f"Workload {key} is evicted after it finished")

    # ---- rule 1 --------------------------------------------------------------------------------------
    def _usage(self, key: str, obj: dict[str, Any], admission: dict[str, Any]) -> dict[tuple[str, str], Any]:
        podsets = {str(_m(p).get("name", "")): _m(p) for p in _m(obj.get("spec")).get("podSets") or []}
        cq = self.api.get(GROUP, "ClusterQueue", "", str(admission.get("clusterQueue", "")))
        cq_quotas = _quotas(_m(cq.get("spec"))) if cq is not None else None
        reclaimable = {str(_m(r).get("name", "")): _m(r).get("count", 0)
                       for r in _m(obj.get("status")).get("reclaimablePods") or [] if isinstance(_m(r).get("count"), int)}
        usage: dict[tuple[str, str], Any] = {}
        for psa in admission.get("podSetAssignments") or []:
            psa = _m(psa)
            podset = podsets.get(str(psa.get("name", "")), {})
            total = podset.get("count", 1)
            count = psa.get("count", total)
            minimum = podset.get("minCount", total)
            if (isinstance(count, int) and isinstance(total, int) and isinstance(minimum, int)
                    and not minimum <= count <= total):
                raise InvariantViolation(f"Workload {key} podset {psa.get('name')}: admitted count {count} outside "
                                         f"[{minimum}, {total}]")
            per_pod = podspec.pod_requests(_m(_m(podset.get("template")).get("spec")))
            for resource, flavor in _m(psa.get("flavors")).items():
                self._check_flavor(key, cq_quotas, str(flavor), str(resource))
                used = _amount(_m(psa.get("resourceUsage")).get(resource, 0))
                want = per_pod.get(resource, 0) * (count if isinstance(count, int) else 1)
                self.checks += 1
                if used is not None and used != want:
                    raise InvariantViolation(f"Workload {key} podset {psa.get('name')}: resourceUsage {resource} "
                                             f"{used} is not count x requests ({want})")
                if used is not None:
                    # What counts against quota leaves out the podset's reclaimable pods (workload.Info's
                    # TotalRequests: count minus status.reclaimablePods).
                    held = per_pod.get(resource, 0) * max(count - reclaimable.get(str(psa.get("name", "")), 0), 0) \
                        if isinstance(count, int) else used
                    usage[(str(flavor), str(resource))] = usage.get((str(flavor), str(resource)), 0) + held
        return usage

    def _check_flavor(self, key: str, cq_quotas: dict[tuple[str, str], Any] | None, flavor: str,
                      resource: str) -> None:
        self.checks += 1
        if self.api.get(GROUP, "ResourceFlavor", "", flavor) is None:
            raise InvariantViolation(f"Workload {key} is assigned ResourceFlavor {flavor}, which does not exist")
        if cq_quotas is not None and (flavor, resource) not in cq_quotas:
            raise InvariantViolation(f"Workload {key} is assigned flavor {flavor} for {resource}, which its "
                                     "ClusterQueue does not list for that resource")

    # ---- rule 2 --------------------------------------------------------------------------------------
    def _check_quota(self, key: str, cq_name: str, grown: set[tuple[str, str]]) -> None:
        if not grown:
            return
        cq = self.api.get(GROUP, "ClusterQueue", "", cq_name)
        if cq is None:
            return
        spec = _m(cq.get("spec"))
        own = _quotas(spec)
        for fr in grown:
            used = sum(u.get(fr, 0) for c, u in self._held.values() if c == cq_name)
            nominal, borrowing = own.get(fr, (0, None))
            self.checks += 1
            cohort = spec.get("cohortName") or spec.get("cohort")
            limit = nominal + borrowing if borrowing is not None else (None if cohort else nominal)
            if limit is not None and used > limit:
                raise InvariantViolation(f"ClusterQueue {cq_name} uses {used} of {fr[1]} in flavor {fr[0]}, over "
                                         f"its nominal quota plus borrowing limit ({limit}) after {key}")
            if cohort:
                members, total = self._tree(str(cohort), fr)
                tree_used = sum(u.get(fr, 0) for c, u in self._held.values() if c in members)
                if tree_used > total:
                    raise InvariantViolation(f"the Cohort tree of {cohort} uses {tree_used} of {fr[1]} in flavor "
                                             f"{fr[0]}, over its nominal quotas ({total}) after {key}")

    def _tree(self, cohort: str, fr: tuple[str, str]) -> tuple[set[str], Any]:
        """The ClusterQueues of the Cohort tree ``cohort`` belongs to and the tree's nominal quota of ``fr``."""
        parents: dict[str, str] = {}
        for obj in self.api.list(GROUP, "Cohort"):
            parent = _m(obj.get("spec")).get("parentName") or _m(obj.get("spec")).get("parent")
            if parent:
                parents[str(_m(obj.get("metadata")).get("name", ""))] = str(parent)
        root = cohort
        seen = {root}
        while root in parents and parents[root] not in seen:
            root = parents[root]
            seen.add(root)

        def root_of(name: str) -> str:
            current, visited = name, {name}
            while current in parents and parents[current] not in visited:
                current = parents[current]
                visited.add(current)
            return current
        members: set[str] = set()
        total: Any = 0
        for obj in self.api.list(GROUP, "ClusterQueue"):
            spec = _m(obj.get("spec"))
            name = spec.get("cohortName") or spec.get("cohort")
            if name and root_of(str(name)) == root:
                members.add(str(_m(obj.get("metadata")).get("name", "")))
                total += _quotas(spec).get(fr, (0, None))[0]
        for obj in self.api.list(GROUP, "Cohort"):
            if root_of(str(_m(obj.get("metadata")).get("name", ""))) == root:
                total += _quotas(_m(obj.get("spec"))).get(fr, (0, None))[0]
        return members, total

    # ---- rule 4 --------------------------------------------------------------------------------------
    def _check_preemption(self, key: str, obj: dict[str, Any]) -> None:
        cond = _true(obj, "Preempted")
        if cond is None or cond.get("reason") != "InClusterQueue":
            return
        marker = (key, str(cond.get("lastTransitionTime", "")))
        if marker in self._preempted:
            return
        self._preempted.add(marker)
        match = _PREEMPTOR_UID.match(str(cond.get("message", "")))
        preemptor = self.api.get_by_uid(match.group("uid")) if match else None
        if preemptor is None:
            return
        mine = _m(obj.get("spec")).get("priority") or 0
        theirs = _m(preemptor.get("spec")).get("priority") or 0
        self.checks += 1
        if isinstance(mine, int) and isinstance(theirs, int) and mine > theirs:
            raise InvariantViolation(f"Workload {key} (priority {mine}) preempted in its ClusterQueue by a workload "
                                     f"of priority {theirs}")


def _quotas(spec: dict[str, Any]) -> dict[tuple[str, str], tuple[Any, Any]]:
    out: dict[tuple[str, str], tuple[Any, Any]] = {}
    for group in spec.get("resourceGroups") or []:
        for flavor in _m(group).get("flavors") or []:
            for resource in _m(flavor).get("resources") or []:
                resource = _m(resource)
                nominal = _amount(resource.get("nominalQuota", 0)) or 0
                borrowing = _amount(resource["borrowingLimit"]) if resource.get("borrowingLimit") is not None else None
                out[(str(_m(flavor).get("name", "")), str(resource.get("name", "")))] = (nominal, borrowing)
    return out
