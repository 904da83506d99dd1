"""Kueue's webhooks on its own kinds (jobsetctl/kueue/webhooks.py, webhook_workload.py), through the
admission chain, translated from pkg/webhooks/*_webhook_test.go (case names as upstream's).

Upstream compares field paths and error types and mostly ignores details and bad values; we compare the
whole rendered message, whose detail comes from the code."""

from __future__ import annotations

from typing import Any

import pytest

from jobsetctl.admission.chain import admit
from jobsetctl.kinds.interface import AdmissionContext
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import KubeVersion
from tests.kueue.harness import kueue_config

V137 = KubeVersion.V1_37
RG = "spec.resourceGroups"
LABEL_KEY_ERROR = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
                   "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation "
                   "is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


def ctx(**gates: bool) -> AdmissionContext:
    return AdmissionContext(V137, parse_feature_gates(None, V137), kueue=kueue_config(featureGates=gates))


def messages(obj: dict[str, Any], context: AdmissionContext | None = None, old: dict[str, Any] | None = None) -> list[str]:
    context = context or ctx(ConcurrentAdmission=True)
    result = admit(obj, context.for_update() if old is not None else context, old=old)
    return [f.message for f in result.findings if f.rule.id.startswith("kueue-")]


def cq(spec: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "cluster-queue"},
            "spec": spec or {}}


def flavor(name: str, *resources: tuple[str, ...]) -> dict[str, Any]:
    """MakeFlavorQuotas(name).Resource(name, nominal[, borrowing[, lending]])."""
    out = []
    for resource in resources:
        quota: dict[str, Any] = {"name": resource[0], "nominalQuota": resource[1] if len(resource) > 1 else "1"}
        if len(resource) > 2 and resource[2]:
            quota["borrowingLimit"] = resource[2]
        if len(resource) > 3 and resource[3]:
            quota["lendingLimit"] = resource[3]
        out.append(quota)
    return {"name": name, "resources": out}


def group(*flavors: dict[str, Any]) -> dict[str, Any]:
    return {"coveredResources": [r["name"] for r in flavors[0]["resources"]], "flavors": list(flavors)}


def res_path(field: str) -> str:
    return f"{RG}[0].flavors[0].resources[0].{field}"


# TestValidateClusterQueue
@pytest.mark.parametrize(("case", "spec", "want"), [
    ("built-in resources with qualified names", {"resourceGroups": [group(flavor("default", ("cpu",)))]}, []),
    ("invalid resource name", {"resourceGroups": [group(flavor("default", ("@cpu",)))]},
     [f'{RG}[0].coveredResources[0]: Invalid value: "@cpu": {LABEL_KEY_ERROR}']),
    ("admissionChecks defined", {"admissionChecksStrategy": {"admissionChecks": [{"name": "ac1"}]}}, []),
    ("admissionCheckStrategy defined with a valid flavor", {
        "resourceGroups": [group(flavor("flavor1", ("cpu",)))],
        "admissionChecksStrategy": {"admissionChecks": [{"name": "ac1", "onFlavors": ["flavor1"]}]}}, []),
    ("admissionCheckStrategy refers to a flavor that is not in quota", {
        "admissionChecksStrategy": {"admissionChecks": [{"name": "ac1", "onFlavors": ["flavor1"]}]}},
     ['spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]: Unsupported value: "flavor1"']),
    ("in cohort", {"cohortName": "prod"}, []),
    ("extended resources with qualified names", {"resourceGroups": [group(flavor("default", ("example.com/gpu",)))]}, []),
    ("flavor with qualified names", {"resourceGroups": [group(flavor("x86", ("cpu",)))]}, []),
    ("flavor quota with negative value", {"resourceGroups": [group(flavor("x86", ("cpu", "-1")))]},
     [f'{res_path("nominalQuota")}: Invalid value: "-1": must be greater than or equal to 0']),
    ("flavor quota with zero value", {"resourceGroups": [group(flavor("x86", ("cpu", "0")))]}, []),
    ("flavor quota with borrowingLimit 0", {"cohortName": "cohort",
                                            "resourceGroups": [group(flavor("x86", ("cpu", "1", "0")))]}, []),
    ("flavor quota with negative borrowingLimit", {"cohortName": "cohort",
                                                   "resourceGroups": [group(flavor("x86", ("cpu", "1", "-1")))]},
     [f'{res_path("borrowingLimit")}: Invalid value: "-1": must be greater than or equal to 0']),
    ("flavor quota with lendingLimit 0", {"cohortName": "cohort",
                                          "resourceGroups": [group(flavor("x86", ("cpu", "1", "", "0")))]}, []),
    ("flavor quota with negative lendingLimit", {"cohortName": "cohort",
                                                 "resourceGroups": [group(flavor("x86", ("cpu", "1", "", "-1")))]},
     [f'{res_path("lendingLimit")}: Invalid value: "-1": must be greater than or equal to 0']),
    ("flavor quota with lendingLimit and empty cohort", {"resourceGroups": [group(flavor("x86", ("cpu", "1", "", "1")))]},
     [f'{res_path("lendingLimit")}: Invalid value: "1": must be nil when cohort is empty']),
    ("flavor quota with lendingLimit greater than nominalQuota",
     {"cohortName": "cohort", "resourceGroups": [group(flavor("x86", ("cpu", "1", "", "2")))]},
     [f'{res_path("lendingLimit")}: Invalid value: "2": must be less than or equal to the nominalQuota']),
    ("namespaceSelector with invalid labels", {"namespaceSelector": {"matchLabels": {"nospecialchars^=@": "bar"}}},
     [f'spec.namespaceSelector.matchLabels: Invalid value: "nospecialchars^=@": {LABEL_KEY_ERROR}']),
    ("namespaceSelector with invalid expressions",
     {"namespaceSelector": {"matchExpressions": [{"key": "key", "operator": "In"}]}},
     ["spec.namespaceSelector.matchExpressions[0].values: Required value: must be specified when `operator` is "
      "'In' or 'NotIn'"]),
    ("multiple resource groups", {"resourceGroups": [
        group(flavor("alpha", ("cpu", "0"), ("memory", "0")), flavor("beta", ("cpu", "0"), ("memory", "0"))),
        group(flavor("gamma", ("example.com/gpu", "0")), flavor("omega", ("example.com/gpu", "0")))]}, []),
    ("resources in a flavor in different order", {"resourceGroups": [{
        "coveredResources": ["cpu", "memory"],
        "flavors": [flavor("alpha", ("cpu", "0"), ("memory", "0")), flavor("beta", ("memory", "0"), ("cpu", "0"))]}]},
     [f'{RG}[0].flavors[1].resources[0].name: Invalid value: "memory": must match the name in coveredResources',
      f'{RG}[0].flavors[1].resources[1].name: Invalid value: "cpu": must match the name in coveredResources']),
    ("resource in more than one resource group", {"resourceGroups": [
        group(flavor("alpha", ("cpu", "0"), ("memory", "0"))), group(flavor("beta", ("memory", "0")))]},
     [f'{RG}[1].coveredResources[0]: Duplicate value: "memory"']),
    ("flavor in more than one resource group", {"resourceGroups": [
        group(flavor("alpha", ("cpu",)), flavor("beta", ("cpu",))), group(flavor("beta", ("memory",)))]},
     [f'{RG}[1].flavors[0].name: Duplicate value: "beta"']),
    ("valid preemption with borrowWithinCohort", {"preemption": {
        "reclaimWithinCohort": "LowerPriority", "borrowWithinCohort": {"policy": "LowerPriority",
                                                                       "maxPriorityThreshold": 10}}}, []),
    ("existing cluster queue created with older Kueue version that has a nil borrowWithinCohort field",
     {"preemption": {"reclaimWithinCohort": "Never"}}, []),
    ("flavorFungibility preference BorrowingOverPreemption with both TryNextFlavor is valid", {"flavorFungibility": {
        "whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor", "preference": "BorrowingOverPreemption"}}, []),
    ("flavorFungibility preference PreemptionOverBorrowing with both TryNextFlavor is valid", {"flavorFungibility": {
        "whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor", "preference": "PreemptionOverBorrowing"}}, []),
    ("valid ConcurrentAdmissionPolicy", {"concurrentAdmissionPolicy": {"migration": {"mode": "TryPreferredFlavors"}},
                                         "resourceGroups": [group(flavor("flavor1", ("cpu", "1")))]}, []),
    ("ConcurrentAdmissionPolicy with StrictFIFO queueing strategy is invalid", {
        "concurrentAdmissionPolicy": {"migration": {"mode": "TryPreferredFlavors"}}, "queueingStrategy": "StrictFIFO",
        "resourceGroups": [group(flavor("flavor1", ("cpu", "1")))]},
     ['spec.queueingStrategy: Invalid value: "StrictFIFO": StrictFIFO queueing strategy cannot be used when '
      "ConcurrentAdmissionPolicy is defined"]),
    ("ConcurrentAdmissionPolicy with more than one ResourceGroup", {
        "concurrentAdmissionPolicy": {"migration": {"mode": "TryPreferredFlavors"}},
        "resourceGroups": [group(flavor("flavor1", ("cpu", "1"))), group(flavor("flavor2", ("memory", "1")))]},
     ["spec.resourceGroups: Invalid value: 2: must have exactly one ResourceGroup when ConcurrentAdmissionPolicy "
      "is defined"]),
    ("ConcurrentAdmissionPolicy with more than 16 flavors", {
        "concurrentAdmissionPolicy": {"migration": {"mode": "TryPreferredFlavors"}},
        "resourceGroups": [group(*[flavor(f"flavor-{i}", ("cpu", "1")) for i in range(17)])]},
     ["spec.resourceGroups[0].flavors: Invalid value: 17: cannot have more than 16 resource flavors in the "
      "ResourceGroup when ConcurrentAdmissionPolicy is defined"]),
    ("ConcurrentAdmissionPolicy with empty ResourceGroups", {
        "concurrentAdmissionPolicy": {"migration": {"mode": "TryPreferredFlavors"}}},
     ["spec.resourceGroups: Invalid value: 0: must have exactly one ResourceGroup when ConcurrentAdmissionPolicy "
      "is defined"]),
    ("ConcurrentAdmissionPolicy with valid LastAcceptableFlavorName", {
        "concurrentAdmissionPolicy": {"migration": {"mode": "TryPreferredFlavors",
                                                    "constraints": {"lastAcceptableFlavorName": "flavor1"}}},
        "resourceGroups": [group(flavor("flavor1", ("cpu", "1")))]}, []),
    ("ConcurrentAdmissionPolicy constraints with RetainFirstAdmission mode is forbidden", {
        "concurrentAdmissionPolicy": {"migration": {"mode": "RetainFirstAdmission",
                                                    "constraints": {"lastAcceptableFlavorName": "flavor1"}}},
        "resourceGroups": [group(flavor("flavor1", ("cpu", "1")))]},
     ['spec.concurrentAdmissionPolicy.migration.constraints: Forbidden: may only be set when migration.mode is '
      '"TryPreferredFlavors" (got "RetainFirstAdmission")']),
    ("ConcurrentAdmissionPolicy with invalid LastAcceptableFlavorName", {
        "concurrentAdmissionPolicy": {"migration": {"mode": "TryPreferredFlavors",
                                                    "constraints": {"lastAcceptableFlavorName": "non-existent-flavor"}}},
        "resourceGroups": [group(flavor("flavor1", ("cpu", "1")))]},
     ['spec.concurrentAdmissionPolicy.migration.constraints.lastAcceptableFlavorName: Invalid value: '
      '"non-existent-flavor": must be one of the flavors defined in the ClusterQueue: [flavor1]']),
])
def test_validate_cluster_queue(case: str, spec: dict[str, Any], want: list[str]) -> None:
    assert messages(cq(spec)) == want


# TestValidateClusterQueue: the flavorFungibility cases are refused by the CRD's CEL rule before the webhook
# (upstream's unit test calls the webhook function directly); both say so.
@pytest.mark.parametrize(("case", "fungibility"), [
    ("flavorFungibility preference set but whenCanPreempt != TryNextFlavor",
     {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "MayStopSearch", "preference": "BorrowingOverPreemption"}),
    ("flavorFungibility preference set but whenCanBorrow != TryNextFlavor",
     {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "MayStopSearch", "preference": "BorrowingOverPreemption"}),
    ("flavorFungibility preference PreemptionOverBorrowing but whenCanBorrow != TryNextFlavor",
     {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor", "preference": "PreemptionOverBorrowing"}),
])
def test_flavor_fungibility_preference(case: str, fungibility: dict[str, str]) -> None:
    result = admit(cq({"flavorFungibility": fungibility}), ctx())
    rules = [f.rule.id for f in result.findings]
    assert rules == ["cel-rule", "kueue-preemption"]
    preference = fungibility["preference"]
    assert result.findings[1].message == (
        f'spec.flavorFungibility.preference: Invalid value: "{preference}": preference "{preference}" requires both '
        "whenCanBorrow and whenCanPreempt to be TryNextFlavor")


def test_concurrent_admission_policy_is_ignored_without_its_gate() -> None:
    spec = {"concurrentAdmissionPolicy": {"migration": {"mode": "TryPreferredFlavors"}}}
    assert messages(cq(spec), ctx()) == []


# TestValidateClusterQueueUpdate
ALPHA = [group(flavor("alpha", ("cpu", "1")))]
GHOST = {"admissionChecks": [{"name": "ac1", "onFlavors": ["ghost"]}]}
GHOST_ERROR = ('spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]: Unsupported value: "ghost": supported '
               'values: "alpha"')


@pytest.mark.parametrize(("case", "old", "new", "gates", "want"), [
    ("queueingStrategy can be updated", {"queueingStrategy": "StrictFIFO"}, {"queueingStrategy": "BestEffortFIFO"}, {}, []),
    ("same queueingStrategy", {"queueingStrategy": "BestEffortFIFO"}, {"queueingStrategy": "BestEffortFIFO"}, {}, []),
    ("legacy cluster queue with invalid onFlavors allows unrelated updates when the feature gate is disabled",
     {"queueingStrategy": "StrictFIFO", "resourceGroups": ALPHA, "admissionChecksStrategy": GHOST},
     {"queueingStrategy": "BestEffortFIFO", "resourceGroups": ALPHA, "admissionChecksStrategy": GHOST},
     {"RejectUpdatesToCQWithInvalidOnFlavors": False}, []),
    ("legacy cluster queue with invalid onFlavors rejects unrelated updates when the feature gate is enabled",
     {"queueingStrategy": "StrictFIFO", "resourceGroups": ALPHA, "admissionChecksStrategy": GHOST},
     {"queueingStrategy": "BestEffortFIFO", "resourceGroups": ALPHA, "admissionChecksStrategy": GHOST},
     {"RejectUpdatesToCQWithInvalidOnFlavors": True}, [GHOST_ERROR]),
    ("valid admissionCheckStrategy can be added when the old cluster queue has no strategy",
     {"resourceGroups": ALPHA}, {"resourceGroups": ALPHA, "admissionChecksStrategy": {
         "admissionChecks": [{"name": "ac1", "onFlavors": ["alpha"]}]}}, {}, []),
    ("invalid admissionCheckStrategy is rejected when the old cluster queue has no strategy",
     {"resourceGroups": ALPHA}, {"resourceGroups": ALPHA, "admissionChecksStrategy": GHOST}, {}, [GHOST_ERROR]),
    ("resourceGroup flavor change revalidates admissionCheck onFlavors for legacy cluster queue",
     {"resourceGroups": ALPHA, "admissionChecksStrategy": GHOST},
     {"resourceGroups": [group(flavor("beta", ("cpu", "1")))], "admissionChecksStrategy": GHOST}, {},
     [GHOST_ERROR.replace('"alpha"', '"beta"')]),
    ("changing invalid onFlavors for a legacy cluster queue revalidates the new ref",
     {"resourceGroups": ALPHA, "admissionChecksStrategy": GHOST},
     {"resourceGroups": ALPHA, "admissionChecksStrategy": {"admissionChecks": [{"name": "ac1", "onFlavors": ["phantom"]}]}},
     {}, [GHOST_ERROR.replace("ghost", "phantom")]),
    ("changing admissionCheck name revalidates onFlavors for the new rule",
     {"resourceGroups": ALPHA, "admissionChecksStrategy": GHOST},
     {"resourceGroups": ALPHA, "admissionChecksStrategy": {"admissionChecks": [{"name": "ac2", "onFlavors": ["ghost"]}]}},
     {}, [GHOST_ERROR]),
    ("ConcurrentAdmissionPolicy cannot be added", {"resourceGroups": ALPHA},
     {"resourceGroups": ALPHA, "concurrentAdmissionPolicy": {"migration": {"mode": "TryPreferredFlavors"}}},
     {"ConcurrentAdmission": True},
     ['spec.concurrentAdmissionPolicy: Invalid value: {"migration":{"mode":"TryPreferredFlavors"}}: field is immutable']),
    ("ConcurrentAdmissionPolicy cannot be removed",
     {"resourceGroups": ALPHA, "concurrentAdmissionPolicy": {"migration": {"mode": "TryPreferredFlavors"}}},
     {"resourceGroups": ALPHA}, {"ConcurrentAdmission": True},
     ['spec.concurrentAdmissionPolicy: Invalid value: "null": field is immutable']),
])
def test_validate_cluster_queue_update(case: str, old: dict[str, Any], new: dict[str, Any], gates: dict[str, bool],
                                       want: list[str]) -> None:
    assert messages(cq(new), ctx(**gates), old=cq(old)) == want


# TestValidateTotalFlavors, TestValidateTotalCoveredResources, TestValidateFlavorResourceCombinations
def test_totals() -> None:
    many = [{"coveredResources": [f"r{g}"], "flavors": [flavor(f"f{g}-{i}", (f"r{g}", "1")) for i in range(64)]}
            for g in range(5)]
    assert messages(cq({"resourceGroups": many})) == [
        "spec.resourceGroups: Invalid value: 320: total number of flavors across all resourceGroups must be ≤ 256, got 320"]


def test_v1beta1_cluster_queues_reach_the_webhook_converted() -> None:
    # The webhook is registered for v1beta2: a v1beta1 spec.cohort is its spec.cohortName, so the lending
    # limit is allowed (a cohort), and checked against the nominal quota.
    obj = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue", "metadata": {"name": "cq"},
           "spec": {"cohort": "team", "resourceGroups": [group(flavor("x86", ("cpu", "1", "", "2")))]}}
    assert messages(obj) == [f'{res_path("lendingLimit")}: Invalid value: "2": must be less than or equal to the nominalQuota']
    del obj["spec"]["cohort"]
    assert messages(obj) == [f'{res_path("lendingLimit")}: Invalid value: "2": must be nil when cohort is empty',
                             f'{res_path("lendingLimit")}: Invalid value: "2": must be less than or equal to the nominalQuota']


# TestValidateCohort
def test_validate_cohort() -> None:
    cohort = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort", "metadata": {"name": "cohort"},
              "spec": {"resourceGroups": [group(flavor("x86", ("cpu", "1", "", "1")))]}}
    assert messages(cohort) == [f'{res_path("lendingLimit")}: Invalid value: "1": must be nil when parent is empty']
    cohort["spec"]["parentName"] = "root"
    cohort["spec"]["resourceGroups"] = [group(flavor("x86", ("cpu", "1", "", "2")))]
    assert messages(cohort) == []  # a Cohort's lending limit may exceed its nominal quota


@pytest.mark.parametrize(("weight", "want"), [
    ("1", []), ("0", []), ("-1", ['spec.fairSharing: Invalid value: "-1": must be greater than or equal to 0']),
    ("1n", ['spec.fairSharing: Invalid value: "1n": When not 0, weight must be > 10e-9']),
])
def test_fair_sharing_weight(weight: str, want: list[str]) -> None:
    assert messages(cq({"fairSharing": {"weight": weight}})) == want


# TestValidateResourceFlavor
def rf(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "resource-flavor"},
            "spec": spec}


@pytest.mark.parametrize(("case", "spec", "want"), [
    ("empty", {}, []),
    ("valid", {"nodeLabels": {"foo": "bar"}, "nodeTaints": [{"key": "spot", "value": "true", "effect": "NoSchedule"}]}, []),
    ("invalid label name", {"nodeLabels": {"@abc": "foo"}}, [f'spec.nodeLabels: Invalid value: "@abc": {LABEL_KEY_ERROR}']),
    ("invalid label value", {"nodeLabels": {"foo": "@abc"}},
     ["spec.nodeLabels: Invalid value: \"@abc\": a valid label must be an empty string or consist of alphanumeric "
      "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
      "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"]),
    ("duplicate taint (key and effect)", {"nodeTaints": [{"key": "spot", "effect": "NoSchedule"},
                                                         {"key": "spot", "value": "x", "effect": "NoSchedule"}]},
     ['spec.nodeTaints[1]: Duplicate value: {"effect":"NoSchedule","key":"spot","value":"x"}: taints must be unique '
      "by key and effect pair"]),
])
def test_validate_resource_flavor(case: str, spec: dict[str, Any], want: list[str]) -> None:
    assert messages(rf(spec)) == want


def test_finalizers_of_the_mutating_webhooks() -> None:
    for obj in (cq(), rf({})):
        result = admit(obj, ctx())
        assert result.obj is not None and result.obj["metadata"]["finalizers"] == ["kueue.x-k8s.io/resource-in-use"]
