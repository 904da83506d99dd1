"""``migrate --to kueue-v1beta2`` against Kueue's own conversion tests (kubernetes-sigs/kueue @ ff69552e).

Every entry of ``apis/kueue/v1beta1/*_conversion_test.go`` re-expressed as our data: the v1beta1 object a user
would write (the Go struct as YAML; an empty Go field is an absent key) and the v1beta2 object Kueue's
``ConvertTo`` gives. The test id names file, test function and case. Entries of ``ConvertFrom`` (v1beta2 →
v1beta1) and of the round-trip tests are read backwards where the conversion is one-to-one: their v1beta1
side, migrated, must give their v1beta2 side.

What the Go tables leave empty but the CRDs require is filled in the same way on both sides, so that
admission can serve as a second oracle (jobsetctl's Kueue kinds, and Kueue's own CRDs through ``validate
--crd``): the input must be a valid v1beta1 object and the output a valid v1beta2 object. Fillers: a Workload's ``podSets`` (required
in v1beta1) and ``priority`` (CEL: required with a priority class), a condition's ``lastTransitionTime`` and
``message``, an admission's ``clusterQueue`` and pod set ``name``, ``resourceGroups`` where a ClusterQueue
borrows.

Deliberate deviations, each a test below: where Kueue's conversion silently drops what the user wrote, the
object is reported and left as it is (AdmissionCheck ``retryDelayMinutes``; ``admissionChecks`` next to
``admissionChecksStrategy``; a ``priorityClassName`` without source).

Left out (no manifest can express them): ``TestWorkloadConvertFrom/with TopologyAssignment, multiple
slices`` compares a hand-made two-slice v1beta2 encoding; its v1beta1 side is migrated below and decodes to
the same domains, but Kueue itself encodes those domains as one slice (the levels are no hostname level),
which is what we check. The integration test ``test/integration/singlecluster/conversion`` asserts status
written by Kueue's controllers after objects are created; its objects are migrated below, the controller
behaviour is not ours to migrate.
"""

from __future__ import annotations

import contextlib
import copy
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from jobsetctl.cli.app import run
from jobsetctl.kinds.registry import clear_extra
from jobsetctl.migrate.kueue import topology_slices
from tests.helpers import UPSTREAM, requires_upstream, validate_files

V1 = "kueue.x-k8s.io/v1beta1"
V2 = "kueue.x-k8s.io/v1beta2"
KUEUE_CRDS = sorted(str(p) for p in (UPSTREAM / "kueue" / "crd").glob("*.yaml"))

CQ_TESTS = "clusterqueue_conversion_test.go"
LQ_TESTS = "localqueue_conversion_test.go"
MK_TESTS = "multikueue_conversion_test.go"
WL_TESTS = "workload_conversion_test.go"
INTEGRATION = "test/integration/singlecluster/conversion/conversions_v1beta1_test.go"

NOW = "2026-08-22T00:00:00Z"


def condition(type_: str, reason: str) -> dict[str, Any]:
    return {"type": type_, "status": "True", "reason": reason, "message": "", "lastTransitionTime": NOW}


PODSETS = [{"name": "main", "count": 1, "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}]


@dataclass
class Entry:
    case: str
    kind: str
    name: str
    spec: dict[str, Any] = field(default_factory=dict)
    want_spec: dict[str, Any] | None = None  # None: the same as spec
    status: dict[str, Any] | None = None
    want_status: dict[str, Any] | None = None
    namespace: str | None = None

    def object(self, api: str, spec: dict[str, Any], status: dict[str, Any] | None) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": self.name}
        if self.namespace:
            meta["namespace"] = self.namespace
        obj: dict[str, Any] = {"apiVersion": api, "kind": self.kind, "metadata": meta, "spec": spec}
        if status is not None:
            obj["status"] = status
        return obj

    @property
    def v1beta1(self) -> dict[str, Any]:
        return self.object(V1, self.spec, self.status)

    @property
    def v1beta2(self) -> dict[str, Any]:
        spec = self.spec if self.want_spec is None else self.want_spec
        status = self.status if self.want_status is None else self.want_status
        return self.object(V2, copy.deepcopy(spec), copy.deepcopy(status))


def cq(case: str, spec: dict[str, Any], want: dict[str, Any] | None = None, **kw: Any) -> Entry:
    return Entry(case, "ClusterQueue", "test-clusterqueue", spec, want, **kw)


def lq(case: str, status: dict[str, Any] | None, want: dict[str, Any] | None = None,
       spec: dict[str, Any] | None = None) -> Entry:
    return Entry(case, "LocalQueue", "test-localqueue", spec or {"clusterQueue": "cluster-queue-1"}, None,
                 status, want, namespace="default")


def mk(case: str, spec: dict[str, Any], want: dict[str, Any], status: dict[str, Any] | None = None) -> Entry:
    return Entry(case, "MultiKueueCluster", "test-multikueuecluster", spec, want, status)


def wl(case: str, spec: dict[str, Any] | None = None, want: dict[str, Any] | None = None,
       status: dict[str, Any] | None = None, want_status: dict[str, Any] | None = None) -> Entry:
    spec = {"podSets": PODSETS, **(spec or {})}
    want = {"podSets": PODSETS, **want} if want is not None else None
    return Entry(case, "Workload", "test-workload", spec, want, status, want_status, namespace="default")


def usage(*flavors: tuple[str, list[tuple[str, str]]]) -> list[dict[str, Any]]:
    return [{"name": name, "resources": [{"name": r, "total": total} for r, total in resources]}
            for name, resources in flavors]


ADMISSION_FS = {"consumedResources": {"cpu": "10"}, "lastUpdate": NOW}
WPC_REF = {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "low"}
POD_REF = {"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": "low"}
QUOTA = [{"coveredResources": ["cpu"], "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": 9}]}]}]


def admission(topology: dict[str, Any]) -> dict[str, Any]:
    return {"admission": {"clusterQueue": "cq", "podSetAssignments": [{"name": "main", "topologyAssignment": topology}]}}


TWO_DOMAINS = {"levels": ["a", "b"], "domains": [{"values": ["a1", "b1"], "count": 10},
                                                  {"values": ["a1", "b2"], "count": 20}]}
TWO_DOMAINS_V2 = {"levels": ["a", "b"], "slices": [{
    "domainCount": 2,
    "valuesPerLevel": [{"universal": "a1"}, {"individual": {"prefix": "b", "roots": ["1", "2"]}}],
    "podCounts": {"individual": [10, 20]},
}]}
FOUR_DOMAINS = {"levels": ["a", "b"], "domains": [
    {"values": ["a1", "b1"], "count": 10}, {"values": ["a1", "b2"], "count": 20},
    {"values": ["a2", "first-in-a2"], "count": 50}, {"values": ["a2", "second-in-a2"], "count": 50}]}
# Kueue's V1Beta2From on these four domains: levels a/b are no hostname level, so one compact slice
# (compactTopologyAssignmentEncodingWithHostnamePrefixRuns without prefix keys = one run).
FOUR_DOMAINS_V2 = {"levels": ["a", "b"], "slices": [{
    "domainCount": 4,
    "valuesPerLevel": [{"individual": {"prefix": "a", "roots": ["1", "1", "2", "2"]}},
                       {"individual": {"roots": ["b1", "b2", "first-in-a2", "second-in-a2"]}}],
    "podCounts": {"individual": [10, 20, 50, 50]},
}]}

ENTRIES: list[Entry] = [
    # --- ClusterQueue -------------------------------------------------------------------------------
    cq(f"{CQ_TESTS} TestClusterQueueConvertTo/nil cohort", {}),  # cohort "" is no YAML: the pattern forbids it
    cq(f"{CQ_TESTS} TestClusterQueueConvertTo/cohort to cohortName conversion",
       {"cohort": "test-cohort"}, {"cohortName": "test-cohort"}),
    cq(f"{CQ_TESTS} TestClusterQueueConvertTo/AdmissionChecks to AdmissionChecksStrategy conversion",
       {"admissionChecks": ["check1", "check2"]},
       {"admissionChecksStrategy": {"admissionChecks": [{"name": "check1"}, {"name": "check2"}]}}),
    cq(f"{CQ_TESTS} TestClusterQueueConvertTo/AdmissionChecksStrategy preserved",
       {"admissionChecksStrategy": {"admissionChecks": [{"name": "strategy-check1"}, {"name": "strategy-check2"}]}}),
    cq(f"{CQ_TESTS} TestClusterQueueConvertTo/empty AdmissionChecks", {"admissionChecks": []}, {}),
    cq(f"{CQ_TESTS} TestClusterQueueConvertTo/FlavorFungibility Preempt to MayStopSearch",
       {"flavorFungibility": {"whenCanPreempt": "Preempt"}}, {"flavorFungibility": {"whenCanPreempt": "MayStopSearch"}}),
    cq(f"{CQ_TESTS} TestClusterQueueConvertTo/FlavorFungibility Borrow to MayStopSearch",
       {"flavorFungibility": {"whenCanBorrow": "Borrow"}}, {"flavorFungibility": {"whenCanBorrow": "MayStopSearch"}}),
    cq(f"{CQ_TESTS} TestClusterQueueConvertTo/FlavorFungibility MayStopSearch preserved",
       {"flavorFungibility": {"whenCanPreempt": "MayStopSearch", "whenCanBorrow": "MayStopSearch"}}),
    cq(f"{CQ_TESTS} TestClusterQueueConvertTo/FlavorFungibility TryNextFlavor preserved",
       {"flavorFungibility": {"whenCanPreempt": "TryNextFlavor", "whenCanBorrow": "TryNextFlavor"}}),
    cq(f"{CQ_TESTS} TestClusterQueueConvertTo/complete ClusterQueue with all fields",
       {"cohort": "prod-cohort", "admissionChecks": ["multikueue-check"],
        "flavorFungibility": {"whenCanPreempt": "TryNextFlavor", "whenCanBorrow": "MayStopSearch"},
        "queueingStrategy": "StrictFIFO"},
       {"cohortName": "prod-cohort", "admissionChecksStrategy": {"admissionChecks": [{"name": "multikueue-check"}]},
        "flavorFungibility": {"whenCanPreempt": "TryNextFlavor", "whenCanBorrow": "MayStopSearch"},
        "queueingStrategy": "StrictFIFO"},
       status={"fairSharing": {"weightedShare": 100, "admissionFairSharingStatus": ADMISSION_FS},
               "conditions": [condition("Active", "Ready")], "pendingWorkloads": 5},
       want_status={"fairSharing": {"weightedShare": 100}, "conditions": [condition("Active", "Ready")],
                    "pendingWorkloads": 5}),
    # ConvertFrom read backwards (one-to-one)
    cq(f"{CQ_TESTS} TestClusterQueueConvertFrom/cohortName to cohort conversion (backwards)",
       {"cohort": "test-cohort"}, {"cohortName": "test-cohort"}),
    cq(f"{CQ_TESTS} TestClusterQueueConvertFrom/FlavorFungibility MayStopSearch preserved (backwards)",
       {"flavorFungibility": {"whenCanPreempt": "MayStopSearch", "whenCanBorrow": "MayStopSearch"}}),
    cq(f"{CQ_TESTS} TestClusterQueueConvertFrom/complete ClusterQueue with all fields (backwards)",
       {"cohort": "prod-cohort", "flavorFungibility": {"whenCanPreempt": "MayStopSearch", "whenCanBorrow": "TryNextFlavor"},
        "queueingStrategy": "StrictFIFO"},
       {"cohortName": "prod-cohort", "flavorFungibility": {"whenCanPreempt": "MayStopSearch", "whenCanBorrow": "TryNextFlavor"},
        "queueingStrategy": "StrictFIFO"},
       status={"fairSharing": {"weightedShare": 100}, "conditions": [condition("Active", "Ready")], "pendingWorkloads": 5}),
    cq(f"{CQ_TESTS} TestClusterQueueConversion_RoundTrip/complete ClusterQueue with cohort and FlavorFungibility",
       {"cohort": "prod-cohort", "flavorFungibility": {"whenCanPreempt": "TryNextFlavor", "whenCanBorrow": "MayStopSearch"},
        "queueingStrategy": "StrictFIFO"},
       {"cohortName": "prod-cohort", "flavorFungibility": {"whenCanPreempt": "TryNextFlavor", "whenCanBorrow": "MayStopSearch"},
        "queueingStrategy": "StrictFIFO"},
       status={"conditions": [condition("Active", "Ready")], "pendingWorkloads": 10}),
    cq(f"{CQ_TESTS} TestClusterQueueConversion_RoundTrip/minimal ClusterQueue", {}),
    # zz_generated.conversion.go: ClusterQueueStatus.PendingWorkloadsStatus has no v1beta2 field
    cq("zz_generated.conversion.go autoConvert_v1beta1_ClusterQueueStatus_To_v1beta2_ClusterQueueStatus",
       {}, status={"pendingWorkloads": 1, "pendingWorkloadsStatus": {"lastChangeTime": NOW, "clusterQueuePendingWorkload": []}},
       want_status={"pendingWorkloads": 1}),
    # --- LocalQueue ---------------------------------------------------------------------------------
    lq(f"{LQ_TESTS} TestLocalQueueConvertTo/nil FlavorUsage", {}),
    lq(f"{LQ_TESTS} TestLocalQueueConvertTo/empty FlavorUsage", {"flavorUsage": []}, {"flavorsUsage": []}),
    lq(f"{LQ_TESTS} TestLocalQueueConvertTo/single FlavorUsage",
       {"flavorUsage": usage(("default-flavor", [("cpu", "10")]))},
       {"flavorsUsage": usage(("default-flavor", [("cpu", "10")]))}),
    lq(f"{LQ_TESTS} TestLocalQueueConvertTo/multiple FlavorUsage with various resources",
       {"flavorUsage": usage(("flavor-1", [("cpu", "10"), ("memory", "20Gi")]), ("flavor-2", [("cpu", "5")])),
        "pendingWorkloads": 3, "reservingWorkloads": 2, "admittedWorkloads": 1},
       {"flavorsUsage": usage(("flavor-1", [("cpu", "10"), ("memory", "20Gi")]), ("flavor-2", [("cpu", "5")])),
        "pendingWorkloads": 3, "reservingWorkloads": 2, "admittedWorkloads": 1}),
    lq(f"{LQ_TESTS} TestLocalQueueConvertTo/with conditions and status fields",
       {"fairSharing": {"weightedShare": 100, "admissionFairSharingStatus": ADMISSION_FS},
        "conditions": [condition("Active", "Ready")], "flavorUsage": usage(("default-flavor", [("cpu", "10")])),
        "pendingWorkloads": 5},
       {"fairSharing": {"weightedShare": 100, "admissionFairSharingStatus": ADMISSION_FS},  # kept for LocalQueues
        "conditions": [condition("Active", "Ready")], "flavorsUsage": usage(("default-flavor", [("cpu", "10")])),
        "pendingWorkloads": 5}),
    lq(f"{LQ_TESTS} TestLocalQueueConvertFrom/multiple FlavorsUsage with various resources (backwards)",
       {"flavorUsage": usage(("flavor-1", [("cpu", "10")])), "admittedWorkloads": 1},
       {"flavorsUsage": usage(("flavor-1", [("cpu", "10")])), "admittedWorkloads": 1}),
    lq(f"{LQ_TESTS} TestLocalQueueConversion_RoundTrip/complete LocalQueue with multiple flavors",
       {"conditions": [condition("Active", "Ready")], "flavorUsage": usage(("flavor-1", [("cpu", "10")])),
        "pendingWorkloads": 5, "reservingWorkloads": 3, "admittedWorkloads": 2},
       {"conditions": [condition("Active", "Ready")], "flavorsUsage": usage(("flavor-1", [("cpu", "10")])),
        "pendingWorkloads": 5, "reservingWorkloads": 3, "admittedWorkloads": 2},
       spec={"clusterQueue": "main-cluster-queue"}),
    lq(f"{LQ_TESTS} TestLocalQueueConversion_RoundTrip/LocalQueue with empty FlavorUsage",
       {"flavorUsage": []}, {"flavorsUsage": []}),
    # zz_generated.conversion.go: LocalQueueStatus.Flavors has no v1beta2 field
    lq("zz_generated.conversion.go autoConvert_v1beta1_LocalQueueStatus_To_v1beta2_LocalQueueStatus",
       {"flavors": [{"name": "default", "resources": ["cpu"]}], "pendingWorkloads": 0}, {"pendingWorkloads": 0}),
    # --- MultiKueueCluster ----------------------------------------------------------------------------
    mk(f"{MK_TESTS} TestMultiKueueClusterConvertTo/KubeConfig conversion",
       {"kubeConfig": {"location": "test-location", "locationType": "Secret"}},
       {"clusterSource": {"kubeConfig": {"location": "test-location", "locationType": "Secret"}}}),
    mk(f"{MK_TESTS} TestMultiKueueClusterConvertTo/complete MultiKueueCluster with status",
       {"kubeConfig": {"location": "test-location", "locationType": "Path"}},
       {"clusterSource": {"kubeConfig": {"location": "test-location", "locationType": "Path"}}},
       status={"conditions": [condition("Active", "Ready")]}),
    mk(f"{MK_TESTS} TestMultiKueueClusterConvertFrom/ClusterProfileRef conversion (backwards)",
       {"kubeConfig": {"location": "", "locationType": "Secret"}, "clusterProfileRef": {"name": "foobar"}},
       {"clusterSource": {"clusterProfileRef": {"name": "foobar"}}}),
    mk(f"{MK_TESTS} TestMultiKueueClusterConversion_RoundTrip_Reverse/complete MultiKueueCluster with ClusterProfile "
       "and status (backwards)",
       {"kubeConfig": {"location": "", "locationType": "Secret"}, "clusterProfileRef": {"name": "foobar"}},
       {"clusterSource": {"clusterProfileRef": {"name": "foobar"}}}, status={"conditions": [condition("Active", "Ready")]}),
    mk(f"{MK_TESTS} TestMultiKueueClusterConversion_RoundTrip/complete MultiKueueCluster with KubeConfig and status",
       {"kubeConfig": {"location": "test-location", "locationType": "Secret"}},
       {"clusterSource": {"kubeConfig": {"location": "test-location", "locationType": "Secret"}}},
       status={"conditions": [condition("Active", "Ready")]}),
    # --- Workload -------------------------------------------------------------------------------------
    wl(f"{WL_TESTS} TestWorkloadConvertTo/nil AccumulatedPastExexcutionTimeSeconds", status={}),
    wl(f"{WL_TESTS} TestWorkloadConvertTo/zero AccumulatedPastExexcutionTimeSeconds",
       status={"accumulatedPastExexcutionTimeSeconds": 0}, want_status={"accumulatedPastExecutionTimeSeconds": 0}),
    wl(f"{WL_TESTS} TestWorkloadConvertTo/non-zero AccumulatedPastExexcutionTimeSeconds",
       status={"accumulatedPastExexcutionTimeSeconds": 3600}, want_status={"accumulatedPastExecutionTimeSeconds": 3600}),
    wl(f"{WL_TESTS} TestWorkloadConvertTo/with conditions and other fields",
       status={"conditions": [condition("Admitted", "AdmittedByClusterQueue")], "accumulatedPastExexcutionTimeSeconds": 7200},
       want_status={"conditions": [condition("Admitted", "AdmittedByClusterQueue")],
                    "accumulatedPastExecutionTimeSeconds": 7200}),
    wl(f"{WL_TESTS} TestWorkloadConvertTo/with PodPriorityClassSource",
       {"priority": 100, "priorityClassSource": "scheduling.k8s.io/priorityclass", "priorityClassName": "low"},
       {"priority": 100, "priorityClassRef": POD_REF}),
    wl(f"{WL_TESTS} TestWorkloadConvertTo/with WorkloadPriorityClassSource",
       {"priority": 100, "priorityClassSource": "kueue.x-k8s.io/workloadpriorityclass", "priorityClassName": "low"},
       {"priority": 100, "priorityClassRef": WPC_REF}),
    wl(f"{WL_TESTS} TestWorkloadConvertTo/with TopologyAssignment",
       status=admission(TWO_DOMAINS), want_status=admission(TWO_DOMAINS_V2)),
    wl(f"{WL_TESTS} TestWorkloadConvertFrom/non-zero AccumulatedPastExecutionTimeSeconds (backwards)",
       status={"accumulatedPastExexcutionTimeSeconds": 3600}, want_status={"accumulatedPastExecutionTimeSeconds": 3600}),
    wl(f"{WL_TESTS} TestWorkloadConvertFrom/with conditions and other fields (backwards)",
       status={"conditions": [condition("Finished", "JobFinished")], "accumulatedPastExexcutionTimeSeconds": 1800},
       want_status={"conditions": [condition("Finished", "JobFinished")], "accumulatedPastExecutionTimeSeconds": 1800}),
    wl(f"{WL_TESTS} TestWorkloadConvertFrom/with PodPriorityClassRef (backwards)",
       {"priority": 100, "priorityClassSource": "scheduling.k8s.io/priorityclass", "priorityClassName": "low"},
       {"priority": 100, "priorityClassRef": POD_REF}),
    wl(f"{WL_TESTS} TestWorkloadConvertFrom/with WorkloadPriorityClassRef (backwards)",
       {"priority": 100, "priorityClassSource": "kueue.x-k8s.io/workloadpriorityclass", "priorityClassName": "low"},
       {"priority": 100, "priorityClassRef": WPC_REF}),
    wl(f"{WL_TESTS} TestWorkloadConvertFrom/with TopologyAssignment (backwards)",
       status=admission(TWO_DOMAINS), want_status=admission(TWO_DOMAINS_V2)),
    wl(f"{WL_TESTS} TestWorkloadConvertFrom/with TopologyAssignment, multiple slices (its v1beta1 side)",
       status=admission(FOUR_DOMAINS), want_status=admission(FOUR_DOMAINS_V2)),
    wl(f"{WL_TESTS} TestWorkloadConversion_RoundTrip/complete Workload with AccumulatedPastExexcutionTimeSeconds",
       status={"conditions": [condition("Admitted", "AdmittedByClusterQueue")], "accumulatedPastExexcutionTimeSeconds": 5400},
       want_status={"conditions": [condition("Admitted", "AdmittedByClusterQueue")],
                    "accumulatedPastExecutionTimeSeconds": 5400}),
    wl(f"{WL_TESTS} TestWorkloadConversion_RoundTrip/Workload with zero AccumulatedPastExexcutionTimeSeconds",
       status={"accumulatedPastExexcutionTimeSeconds": 0}, want_status={"accumulatedPastExecutionTimeSeconds": 0}),
    wl(f"{WL_TESTS} TestWorkloadConversion_RoundTrip/Workload with TopologyAssignment",
       status=admission(TWO_DOMAINS), want_status=admission(TWO_DOMAINS_V2)),
    wl("v1beta1 default priorityClassSource \"\" (kubebuilder default): no priorityClassRef",
       {"priorityClassSource": ""}, {}),
    # --- the integration test's objects (controllers' status is not ours) ---------------------------
    Entry(f"{INTEGRATION} Should update status when workloads are created/cluster-queue.queue-controller",
          "ClusterQueue", "cluster-queue.queue-controller",
          {"cohort": "cohort", "preemption": {"withinClusterQueue": "LowerPriority"},
           "resourceGroups": [{"coveredResources": ["example.com/gpu"], "flavors": [
               {"name": "model-c", "resources": [{"name": "example.com/gpu", "nominalQuota": "2", "borrowingLimit": "2"}]},
               {"name": "model-d", "resources": [{"name": "example.com/gpu", "nominalQuota": "2", "borrowingLimit": "2"}]}]}]},
          {"cohortName": "cohort", "preemption": {"withinClusterQueue": "LowerPriority"},
           "resourceGroups": [{"coveredResources": ["example.com/gpu"], "flavors": [
               {"name": "model-c", "resources": [{"name": "example.com/gpu", "nominalQuota": "2", "borrowingLimit": "2"}]},
               {"name": "model-d", "resources": [{"name": "example.com/gpu", "nominalQuota": "2", "borrowingLimit": "2"}]}]}]}),
    Entry(f"{INTEGRATION} Should update status when workloads are created/queue", "LocalQueue", "queue",
          {"clusterQueue": "cluster-queue.queue-controller"}, namespace="core-queue"),
    Entry(f"{INTEGRATION} Should update status when workloads are created/model-c", "ResourceFlavor", "model-c",
          {"nodeLabels": {"example.com/gpu": "model-c"}}),
    Entry(f"{INTEGRATION} Should correctly accout for Workload accumulated execution time/high-workload",
          "WorkloadPriorityClass", "high-workload", {}),
]


def _migrate(path: Path) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = run(["migrate", "--to", "kueue-v1beta2", "--write", str(path)])
    return status, err.getvalue()


def _as_written(obj: dict[str, Any]) -> dict[str, Any]:
    if obj["kind"] == "WorkloadPriorityClass":  # its value is top-level, not in spec
        return {k: v for k, v in obj.items() if k != "spec"} | {"value": 100}
    return obj


def _write(path: Path, obj: dict[str, Any]) -> None:
    path.write_text(yaml.safe_dump(_as_written(obj), sort_keys=False))


def _expected(entry: Entry) -> dict[str, Any]:
    return _as_written(entry.v1beta2)


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.case)
def test_kueue_conversion_table(entry: Entry, tmp_path: Path) -> None:
    path = tmp_path / "object.yaml"
    _write(path, entry.v1beta1)
    status, log = _migrate(path)
    assert status == 0, log
    assert ": migrated [migrate-kueue]" in log, log
    assert yaml.safe_load(path.read_text()) == _expected(entry)


@pytest.fixture(scope="module")
def admission_errors(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str, str], list[tuple[str, str]]]:
    """Errors of admission (a dry-run create: no cross-object consequences, the objects stand alone) on both
    sides of every entry, in one run per oracle: (oracle, case, side) → errors. Oracles: ``builtin``, Kueue's
    kinds as jobsetctl models them (issue #14: schemas and webhooks); ``crd``, Kueue's own CRDs from
    ../shared/upstream (schema and CEL, ``validate --crd``), when present."""
    root = tmp_path_factory.mktemp("kueue-admission")
    files: dict[str, tuple[str, str]] = {}
    for index, entry in enumerate(ENTRIES):
        for side, obj in (("v1beta1", entry.v1beta1), ("v1beta2", _expected(entry))):
            path = root / f"{index}-{side}.yaml"
            _write(path, obj)
            files[str(path)] = (entry.case, side)
    found: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
    oracles: dict[str, dict[str, Any]] = {"builtin": {}}
    if KUEUE_CRDS:
        oracles["crd"] = {"crds": KUEUE_CRDS}
    for oracle, options in oracles.items():
        try:
            diagnostics = validate_files(root, {}, paths=list(files), admission_only=True, **options)
        finally:
            clear_extra()  # a module-scoped fixture runs outside the per-test clean-up of tests/fix/conftest.py
        for key in files.values():
            found[(oracle, *key)] = []
        for d in diagnostics:
            if d.severity == "error":
                found[(oracle, *files[d.file])].append((d.path, d.message))
    return found


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.case)
def test_validate_admits_both_sides(entry: Entry, admission_errors: dict[tuple[str, str, str], list[tuple[str, str]]]) -> None:
    """The second oracle: the v1beta1 input and the v1beta2 output are admitted (jobsetctl's Kueue kinds)."""
    assert admission_errors[("builtin", entry.case, "v1beta1")] == []
    assert admission_errors[("builtin", entry.case, "v1beta2")] == []


@requires_upstream
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.case)
def test_kueue_crds_accept_both_sides(entry: Entry, admission_errors: dict[tuple[str, str, str], list[tuple[str, str]]]) -> None:
    """The third oracle: Kueue's own CRDs (schema and CEL) accept the v1beta1 input and the v1beta2 output."""
    assert admission_errors[("crd", entry.case, "v1beta1")] == []
    assert admission_errors[("crd", entry.case, "v1beta2")] == []


@pytest.mark.parametrize(
    ("kind", "spec", "reason"),
    [
        # zz_generated.conversion.go: "WARNING: in.RetryDelayMinutes requires manual conversion" (dropped).
        ("AdmissionCheck", {"controllerName": "kueue.x-k8s.io/provisioning-request", "retryDelayMinutes": 15},
         "spec.retryDelayMinutes has no v1beta2 field"),
        # clusterqueue_conversion.go: the strategy built from admissionChecks overwrites the written one.
        ("ClusterQueue", {"admissionChecks": ["a"], "admissionChecksStrategy": {"admissionChecks": [{"name": "b"}]}},
         "spec.admissionChecks and spec.admissionChecksStrategy are both set"),
        # workload_conversion.go: no case for source "": priorityClassName is dropped.
        ("Workload", {"podSets": PODSETS, "priority": 1, "priorityClassName": "high"},
         "spec.priorityClassName without a priorityClassSource"),
    ],
)
def test_what_kueue_would_drop_is_reported_not_converted(tmp_path: Path, kind: str, spec: dict[str, Any], reason: str) -> None:
    path = tmp_path / "object.yaml"
    text = yaml.safe_dump({"apiVersion": V1, "kind": kind, "metadata": {"name": "x"}, "spec": spec}, sort_keys=False)
    path.write_text(text)
    status, log = _migrate(path)
    assert status == 0
    assert f": not migrated [migrate-kueue] {kind} left as it is: {reason}" in log
    assert path.read_text() == text


TAS_TESTS = "pkg/util/tas/tas_assignment_test.go bothWaysTestCases (TestV1Beta2FromInternal)"


def _ind(roots: list[str], prefix: str = "", suffix: str = "") -> dict[str, Any]:
    individual: dict[str, Any] = {}
    if prefix:
        individual["prefix"] = prefix
    if suffix:
        individual["suffix"] = suffix
    return {"individual": individual | {"roots": roots}}


def _uni(value: str) -> dict[str, Any]:
    return {"universal": value}


@pytest.mark.parametrize(
    ("domains", "slices"),
    [
        pytest.param([], [], id=f"{TAS_TESTS}/empty"),
        pytest.param([(["a1", "b1"], 1)], [{"domainCount": 1, "valuesPerLevel": [_uni("a1"), _uni("b1")],
                                             "podCounts": {"universal": 1}}], id=f"{TAS_TESTS}/one domain"),
        pytest.param([(["a1", "b1"], 1), (["a2", "b2"], 1)],
                     [{"domainCount": 2, "valuesPerLevel": [_ind(["1", "2"], "a"), _ind(["1", "2"], "b")],
                       "podCounts": {"universal": 1}}],
                     id=f"{TAS_TESTS}/multiple domains, same counts, no common prefix"),
        pytest.param([(["p.a1.s", "p.b1.s"], 1), (["p.a2.s", "p.b2.s"], 2)],
                     [{"domainCount": 2, "valuesPerLevel": [_ind(["1", "2"], "p.a", ".s"), _ind(["1", "2"], "p.b", ".s")],
                       "podCounts": {"individual": [1, 2]}}],
                     id=f"{TAS_TESTS}/multiple domains, different counts, common prefix and suffix"),
        pytest.param([(["a1", "x"], 1), (["a1", "y"], 2)],
                     [{"domainCount": 2, "valuesPerLevel": [_uni("a1"), _ind(["x", "y"])],
                       "podCounts": {"individual": [1, 2]}}],
                     id=f"{TAS_TESTS}/multiple domains, universal value"),
        pytest.param([(["a123"], 1), (["a12"], 1), (["a1"], 1), (["a13"], 1)],
                     [{"domainCount": 4, "valuesPerLevel": [_ind(["23", "2", "", "3"], "a1")], "podCounts": {"universal": 1}}],
                     id=f"{TAS_TESTS}/multiple domains, same counts, shrinking prefix"),
        pytest.param([(["123b"], 1), (["23b"], 1), (["3b"], 1), (["13b"], 1)],
                     [{"domainCount": 4, "valuesPerLevel": [_ind(["12", "2", "", "1"], suffix="3b")],
                       "podCounts": {"universal": 1}}],
                     id=f"{TAS_TESTS}/multiple domains, same counts, shrinking suffix"),
        pytest.param([(["abacacada"], 1), (["abacada"], 1)],
                     [{"domainCount": 2, "valuesPerLevel": [_ind(["ac", ""], "ab", "acada")], "podCounts": {"universal": 1}}],
                     id=f"{TAS_TESTS}/multiple domains, same counts, max prefix & suffix overlap partially"),
        pytest.param([(["ababa"], 1), (["aba"], 1)],
                     [{"domainCount": 2, "valuesPerLevel": [_ind(["ab", ""], suffix="aba")], "podCounts": {"universal": 1}}],
                     id=f"{TAS_TESTS}/multiple domains, same counts, max prefix & suffix overlap fully, shrinking strings"),
        pytest.param([(["aba"], 1), (["ababa"], 1)],
                     [{"domainCount": 2, "valuesPerLevel": [_ind(["", "ab"], suffix="aba")], "podCounts": {"universal": 1}}],
                     id=f"{TAS_TESTS}/multiple domains, same counts, max prefix & suffix overlap fully, growing strings"),
    ],
)
def test_topology_assignment_encoding(domains: list[tuple[list[str], int]], slices: list[dict[str, Any]]) -> None:
    """The single-slice encoding Kueue's V1Beta2From gives for levels that are no hostname level. (The
    oneWayTestCases, several slices, are decoded by Kueue only: it never encodes them so.)"""
    assert topology_slices(domains) == slices


def test_agrees_with_the_kueue_api_table(tmp_path: Path) -> None:
    """Issue #14's plain-object conversion (jobsetctl.kueue.versions) and this migration say the same,
    entry by entry, once both are on main."""
    versions = pytest.importorskip("jobsetctl.kueue.versions", reason="issue #14's Kueue API work is not on main yet")
    for entry in ENTRIES:
        assert versions.to_v1beta2(_as_written(entry.v1beta1)) == _expected(entry), entry.case
