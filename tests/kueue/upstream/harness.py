"""Run Kueue's unit-test tables against the engine, as Kueue's own tests run its scheduler.

Kueue's scheduler tests build a cache and a queue manager from objects, run one scheduling cycle with
no controllers around, then look at the cache, the queues, the Workloads' status and the events. The
:class:`Harness` does the same with :class:`jobsetctl.kueue.engine.core.Engine` on a fake API server:
objects are fed to the engine's handlers directly, the clock stands still at ``now`` and nothing but the
one cycle runs.
"""

from __future__ import annotations

import copy
import gzip
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

from jobsetctl.fakecluster.apiserver import APIServer, WatchEvent, WatchType, key_of
from jobsetctl.fakecluster.clock import VirtualClock
from jobsetctl.fakecluster.events import Recorder
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.quantity import parse_quantity
from jobsetctl.kube.versions import DEFAULT_KUBE_VERSION
from jobsetctl.kueue.engine.core import Engine
from jobsetctl.kueue.engine.settings import EngineSettings
from jobsetctl.kueue.features import DEFAULT_GATES

DATA = Path(__file__).parent / "data"
#: The virtual second the tests' ``now`` stands for (times before it are allowed).
T0 = 1_000_000.0
#: Go's zero time: earlier than every time a table writes.
ZERO_TIME = -1e10

#: Feature gates a table may set that the engine does not model, with why it matters.
UNMODELLED_GATES = {
    "MultiKueueOrchestratedPreemption": "preemption gates (MultiKueue orchestrated preemption) are not modelled",
    "ElasticJobsViaWorkloadSlices": "elastic workload slices are not modelled",
    "SchedulerLibraryIntegration": "the scheduler-library integration is not modelled",
    "TASMultiLayerTopology": None,
}


def load(name: str) -> dict[str, Any]:
    """A converted table, ``data/<name>.gz`` (gzip keeps the 3.2 MB of indented JSON at under 0.1 MB;
    ``zcat`` reads it)."""
    data: dict[str, Any] = json.loads(gzip.decompress((DATA / f"{name}.gz").read_bytes()))
    return data


def left_out_reason(case: dict[str, Any], needed: tuple[str, ...] | None = None) -> str | None:
    """Why a converted case cannot run: a field that did not evaluate, or a gate that is not modelled."""
    for field, error in sorted(case["errors"].items()):
        if needed is None or field in needed:
            return f"{field}: {error.partition(': ')[2] or error}"
    for gate, value in (case["fields"].get("featureGates") or {}).items():
        reason = UNMODELLED_GATES.get(gate)
        if value and reason:
            return reason
    return None


def quantity(value: Any) -> Fraction:
    return parse_quantity(value)


class Harness:
    def __init__(self, *, gates: dict[str, bool] | None = None, fair_sharing: tuple[str, ...] | None = None,
                 wait_for_pods_ready: Any = None, preemption_shortcuts: bool = True) -> None:
        self.clock = VirtualClock()
        self.clock.advance_to(T0)
        version = DEFAULT_KUBE_VERSION
        # Kueue's tables use workloads with no namespace ("/name" keys): nothing is defaulted.
        self.api = APIServer(self.clock, version, parse_feature_gates({}, version), default_namespace="")
        self.recorder = Recorder(self.clock)
        all_gates = DEFAULT_GATES.as_dict()
        all_gates.update(gates or {})
        settings = EngineSettings(gates=all_gates, wait_for_pods_ready=wait_for_pods_ready, fair_sharing=fair_sharing,
                                  preemption_shortcuts=preemption_shortcuts)
        self.engine = Engine(self.api, self.clock, self.recorder, settings)

    # ---- inputs ----------------------------------------------------------------------------------------
    def time(self, offset: float) -> str:
        return self.clock.timestamp(T0 + offset)

    def materialize(self, value: Any) -> Any:
        """Replace ``{"$time": offset}`` markers by timestamps."""
        if isinstance(value, dict):
            if set(value) == {"$time"}:
                return self.time(float(value["$time"]))
            return {k: self.materialize(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.materialize(v) for v in value]
        return value

    def add(self, obj: dict[str, Any]) -> None:
        obj = self.materialize(copy.deepcopy(obj))
        kind = obj.get("kind")
        md = obj.setdefault("metadata", {})
        name = str(md.get("name", ""))
        engine = self.engine
        if kind == "Namespace":
            self.api.create(obj, skip_admission=True)
            engine.on_namespace(obj, name)
        elif engine.on_configuration(str(kind), obj, str(md.get("namespace", "")), name):
            pass
        elif kind == "Workload":
            uid = md.get("uid")
            created = md.get("creationTimestamp")
            generation = md.get("generation")
            result = self.api.create(obj, skip_admission=True)
            assert result.ok, result.error_text()
            stored = result.obj
            assert stored is not None
            smd = stored["metadata"]
            smd["uid"] = uid if uid is not None else ""
            smd["creationTimestamp"] = created if created is not None else self.clock.timestamp(ZERO_TIME)
            if generation is not None:
                smd["generation"] = generation
            engine.observe(stored)
        else:
            result = self.api.create(obj, skip_admission=True)
            assert result.ok, result.error_text()
            if engine.tas is not None and result.obj is not None:
                list(engine.tas.keys_for(WatchEvent(WatchType.ADDED, key_of(result.obj), result.obj)))

    def schedule(self) -> None:
        self.engine.scheduler.schedule()

    # ---- outputs ---------------------------------------------------------------------------------------
    def assignments(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for cq_name, state in self.engine.cache.cluster_queues.items():
            for key, info in state.workloads.items():
                adm = (info.obj.get("status") or {}).get("admission")
                assert adm is not None, f"{key} is in the cache of {cq_name} without an admission"
                assert adm.get("clusterQueue") == cq_name
                out[key] = adm
        return out

    def workload(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.api.get("kueue.x-k8s.io", "Workload", namespace, name)

    def workloads(self) -> list[dict[str, Any]]:
        return self.api.list("kueue.x-k8s.io", "Workload")


# ---- normalisation for comparisons --------------------------------------------------------------------

def norm_resources(values: Any) -> dict[str, Fraction]:
    return {str(k): quantity(v) for k, v in (values or {}).items()}


def norm_admission(adm: Any) -> Any:
    if not adm:
        return None
    podsets = []
    for psa in adm.get("podSetAssignments") or []:
        item = {
            "name": psa.get("name"),
            "flavors": dict(psa.get("flavors") or {}),
            "resourceUsage": norm_resources(psa.get("resourceUsage")),
            "count": psa.get("count"),
        }
        if psa.get("topologyAssignment"):
            item["topologyAssignment"] = psa["topologyAssignment"]
        if psa.get("delayedTopologyRequest"):
            item["delayedTopologyRequest"] = psa["delayedTopologyRequest"]
        podsets.append(item)
    return {"clusterQueue": adm.get("clusterQueue"), "podSetAssignments": podsets}


def norm_conditions(conds: Any, *, with_time: bool = True) -> list[tuple[Any, ...]]:
    out = []
    for c in conds or []:
        row = (c.get("type"), c.get("status"), c.get("reason"), c.get("message"))
        if with_time:
            row += (c.get("lastTransitionTime"),)
        out.append(row)
    return sorted(out, key=lambda r: str(r[0]))


def norm_status(h: Harness, obj: dict[str, Any], *, with_time: bool = True) -> dict[str, Any]:
    status = h.materialize(obj.get("status") or {})
    out: dict[str, Any] = {
        "conditions": norm_conditions(status.get("conditions"), with_time=with_time),
        "admission": norm_admission(status.get("admission")),
    }
    requests = status.get("resourceRequests")
    if requests:
        out["resourceRequests"] = [(r.get("name"), norm_resources(r.get("resources"))) for r in requests]
    checks = status.get("admissionChecks")
    if checks:
        out["admissionChecks"] = sorted((c.get("name"), c.get("state"), c.get("message", "")) for c in checks)
    evictions = (status.get("schedulingStats") or {}).get("evictions")
    if evictions:
        out["evictions"] = sorted((e.get("reason"), e.get("underlyingCause", ""), e.get("count")) for e in evictions)
    requeue = status.get("requeueState")
    if requeue:
        out["requeueState"] = requeue
    return out


def norm_events(events: list[Any], *, ignore_message: bool) -> list[tuple[Any, ...]]:
    out = []
    for e in events:
        if isinstance(e, dict):
            row = (e.get("namespace"), e.get("name"), e.get("reason"), e.get("type"),
                   None if ignore_message else e.get("message", ""))
        else:
            row = (e.namespace, e.name, e.reason, e.type, None if ignore_message else e.message)
        out.append(row)
    return out
