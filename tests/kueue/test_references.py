"""Kueue's checks across objects (jobsetctl/kueue/references.py, queues.py): what Kueue says later about
objects the API server accepts, in validate's consequence layer.

Translated upstream tables (kubernetes-sigs/kueue at the spec's snapshot), entry by entry where the objects
alone decide the outcome:

* pkg/cache/scheduler/cache_test.go TestClusterQueueReadiness;
* pkg/cache/scheduler/clusterqueue_test.go TestClusterQueueUpdateWithAdmissionCheck and
  TestClusterQueueReadinessWithTAS;
* pkg/controller/core/workload_controller_inadmissible_test.go and workload_controller_test.go (the
  QuotaReserved messages of a Workload whose LocalQueue or ClusterQueue is missing).

Left out, with the reason: "queue not found" (no object to validate), "check inactive" and the inactive-AC
entries (an AdmissionCheck's Active condition is its controller's), "terminating" (deletion), the
LocalQueue/ClusterQueue StopPolicy entries ("LocalQueue lq is inactive", "ClusterQueue cq is stopped": a
stop policy is the administrator's choice, not reported).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from jobsetctl.kinds.index import ObjectIndex
from jobsetctl.kueue import queues
from jobsetctl.kueue.config import SHIPPED, KueueConfiguration
from tests.helpers import validate_files
from tests.kueue.harness import kueue_config
from tests.kueue.test_config import OFF_TAS_DEPENDENTS

G = "kueue.x-k8s.io/v1beta2"
MULTIKUEUE = "kueue.x-k8s.io/multikueue"
PROVISIONING = "kueue.x-k8s.io/provisioning-request"


def rf(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": G, "kind": "ResourceFlavor", "metadata": {"name": name}, **({"spec": spec} if spec else {})}


def ac(name: str, controller: str = "controller1") -> dict[str, Any]:
    return {"apiVersion": G, "kind": "AdmissionCheck", "metadata": {"name": name}, "spec": {"controllerName": controller}}


def topology(name: str, *levels: str) -> dict[str, Any]:
    return {"apiVersion": G, "kind": "Topology", "metadata": {"name": name},
            "spec": {"levels": [{"nodeLabel": level} for level in levels]}}


def cq(name: str = "cq", flavors: tuple[str, ...] = ("flavor1",), resource: str = "cpu", quota: str = "10",
       checks: tuple[str, ...] = (), v1beta1: bool = False, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"namespaceSelector": {}, **spec}
    if flavors:
        body["resourceGroups"] = [{"coveredResources": [resource], "flavors": [
            {"name": f, "resources": [{"name": resource, "nominalQuota": quota}]} for f in flavors]}]
    if checks and v1beta1:
        body["admissionChecks"] = list(checks)
    elif checks:
        body["admissionChecksStrategy"] = {"admissionChecks": [{"name": c} for c in checks]}
    version = "kueue.x-k8s.io/v1beta1" if v1beta1 else G
    return {"apiVersion": version, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": body}


def lq(name: str = "lq", cluster_queue: str = "cq", namespace: str = "ns") -> dict[str, Any]:
    return {"apiVersion": G, "kind": "LocalQueue", "metadata": {"name": name, "namespace": namespace},
            "spec": {"clusterQueue": cluster_queue}}


def jobset(queue: str | None = "lq", namespace: str = "ns", annotations: dict[str, str] | None = None,
           labels: dict[str, str] | None = None, replicas: int = 1, parallelism: int = 1, cpu: str = "1",
           meta_annotations: dict[str, str] | None = None) -> dict[str, Any]:
    all_labels = dict(labels or {})
    if queue is not None:
        all_labels["kueue.x-k8s.io/queue-name"] = queue
    meta: dict[str, Any] = {"name": "js", "namespace": namespace}
    if all_labels:
        meta["labels"] = all_labels
    if meta_annotations:
        meta["annotations"] = meta_annotations
    template: dict[str, Any] = {"spec": {"containers": [
        {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}]}}
    if annotations:
        template["metadata"] = {"annotations": annotations}
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": meta, "spec": {"replicatedJobs": [
        {"name": "workers", "replicas": replicas,
         "template": {"spec": {"parallelism": parallelism, "completions": parallelism, "template": template}}}]}}


def workload(queue: str | None = "lq") -> dict[str, Any]:
    spec: dict[str, Any] = {"podSets": [{"name": "main", "count": 1, "template": {"spec": {
        "containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}}}]}
    if queue is not None:
        spec["queueName"] = queue
    return {"apiVersion": G, "kind": "Workload", "metadata": {"name": "wl", "namespace": "ns"}, "spec": spec}


def found(tmp_path: Path, *objects: dict[str, Any], context: tuple[dict[str, Any], ...] = (),
          prefix: str = "kueue-", **options: Any) -> list[tuple[str, str, str, str]]:
    """(severity, rule, path, message) of the Kueue findings after admission, for the objects as one input."""
    files = {"input.yaml": yaml.safe_dump_all(objects, sort_keys=False)}
    if context:
        files["context/queues.yaml"] = yaml.safe_dump_all(context, sort_keys=False)
        options["context"] = [str(tmp_path / "context")]
    diagnostics = validate_files(tmp_path, files, paths=[str(tmp_path / "input.yaml")], **options)
    return [(str(d.severity), d.rule, d.path, d.message) for d in diagnostics
            if d.rule.startswith(prefix) and str(d.layer) in ("consequence", "lint")]


def inactive(*objects: dict[str, Any], config: KueueConfiguration = SHIPPED) -> tuple[str, str]:
    """(reason, message) of the ClusterQueue named cq among the objects (``inactiveReason``)."""
    index = ObjectIndex(objects)
    kueue = queues.Kueue(index)
    cluster_queue = kueue.get("ClusterQueue", "cq")
    assert cluster_queue is not None
    why = queues.inactive(cluster_queue, kueue, config)
    return (why.reason, why.message) if why.parts else ("Ready", "Can admit new workloads")


# ---- cache_test.go TestClusterQueueReadiness ---------------------------------------------------------------

READINESS = [
    ("flavor not found", [cq(checks=("check1",)), ac("check1")],
     ("FlavorNotFound", "Can't admit new workloads: references missing ResourceFlavor(s): flavor1.")),
    ("check not found", [cq(checks=("check1",)), rf("flavor1")],
     ("AdmissionCheckNotFound", "Can't admit new workloads: references missing AdmissionCheck(s): check1.")),
    ("flavor and check not found", [cq(checks=("check1",))],
     ("FlavorNotFound", "Can't admit new workloads: references missing ResourceFlavor(s): flavor1, references "
                        "missing AdmissionCheck(s): check1.")),
    ("ready", [cq(checks=("check1",)), rf("flavor1"), ac("check1")], ("Ready", "Can admit new workloads")),
    ("stopped", [cq(flavors=(), stopPolicy="HoldAndDrain")], ("Stopped", "Can't admit new workloads: is stopped.")),
]


@pytest.mark.parametrize(("objects", "want"), [c[1:] for c in READINESS], ids=[c[0] for c in READINESS])
def test_cluster_queue_readiness(objects: list[dict[str, Any]], want: tuple[str, str]) -> None:
    assert inactive(*objects) == want


# ---- clusterqueue_test.go TestClusterQueueUpdateWithAdmissionCheck -----------------------------------------

CHECKS = ("check1", "check2", "check3")
WITH_AC = {"flavors": (), "checks": CHECKS, "v1beta1": True}       # MakeClusterQueue(...).AdmissionChecks(...)
WITH_STRATEGY = {"flavors": (), "checks": CHECKS}                  # .AdmissionCheckStrategy(...)
UPDATE_WITH_CHECKS = [
    ("Pending clusterQueue updated valid AC list", WITH_AC,
     [ac("check1"), ac("check2", "controller2"), ac("check3", "controller3")], ("Ready", "Can admit new workloads")),
    ("Pending clusterQueue with an AC strategy updated valid AC list", WITH_STRATEGY,
     [ac("check1"), ac("check2", "controller2"), ac("check3", "controller3")], ("Ready", "Can admit new workloads")),
    ("Active clusterQueue updated with not found AC", WITH_AC, [ac("check1"), ac("check2", "controller2")],
     ("AdmissionCheckNotFound", "Can't admit new workloads: references missing AdmissionCheck(s): check3.")),
    ("Active clusterQueue with an AC strategy updated with not found AC", WITH_STRATEGY,
     [ac("check1"), ac("check2", "controller2")],
     ("AdmissionCheckNotFound", "Can't admit new workloads: references missing AdmissionCheck(s): check3.")),
    ("Active clusterQueue with an MultiKueue AC strategy updated with duplicate single instance AC Controller",
     WITH_STRATEGY, [ac("check1", MULTIKUEUE), ac("check2", "controller2"), ac("check3", MULTIKUEUE)],
     ("MultipleMultiKueueAdmissionChecks", "Can't admit new workloads: Cannot use multiple MultiKueue "
                                           "AdmissionChecks on the same ClusterQueue, found: check1,check3.")),
    ("Active clusterQueue with both MultiKueue and ProvisioningRequest ACs", WITH_AC,
     [ac("check1", MULTIKUEUE), ac("check2", "controller2"), ac("check3", PROVISIONING)],
     ("MultiKueueWithProvisioningRequest", "Can't admit new workloads: Cannot use both MultiKueue and "
                                           "ProvisioningRequest AdmissionChecks together, found: check1, check3.")),
]


@pytest.mark.parametrize(("queue", "checks", "want"), [c[1:] for c in UPDATE_WITH_CHECKS],
                         ids=[c[0] for c in UPDATE_WITH_CHECKS])
def test_cluster_queue_update_with_admission_check(queue: dict[str, Any], checks: list[dict[str, Any]],
                                                   want: tuple[str, str]) -> None:
    assert inactive(cq(**queue), *checks) == want


# ---- clusterqueue_test.go TestClusterQueueReadinessWithTAS ---------------------------------------------------

TAS_FLAVOR = rf("tas-flavor", nodeLabels={"pool": "a"}, topologyName="example-topology")
TAS_CQ = {"flavors": ("tas-flavor",), "resource": "example.com/gpu", "quota": "5"}
READINESS_WITH_TAS = [
    ("TAS CQ goes active state", cq(**TAS_CQ), False, ("Ready", "Can admit new workloads")),
    ("TAS do not support Cohorts", cq(**TAS_CQ, cohortName="some-cohort"), False, ("Ready", "Can admit new workloads")),
    ("TAS do not support Preemption", cq(**TAS_CQ, preemption={"withinClusterQueue": "LowerPriority"},
                                         flavorFungibility={"whenCanPreempt": "MayStopSearch"}),
     False, ("Ready", "Can admit new workloads")),
    ("TAS supports MultiKueue AdmissionCheck", cq(**TAS_CQ, checks=("mk-check",)), False,
     ("Ready", "Can admit new workloads")),
    ("Referenced TAS flavor without topology", cq(**TAS_CQ), True,
     ("TopologyNotFound", "Can't admit new workloads: there is no Topology \"example-topology\" for TAS flavor "
                          "\"tas-flavor\".")),
]


@pytest.mark.parametrize(("queue", "skip_topology", "want"), [c[1:] for c in READINESS_WITH_TAS],
                         ids=[c[0] for c in READINESS_WITH_TAS])
def test_cluster_queue_readiness_with_tas(queue: dict[str, Any], skip_topology: bool, want: tuple[str, str]) -> None:
    objects = [queue, TAS_FLAVOR, ac("mk-check", MULTIKUEUE), ac("pr-check", PROVISIONING)]
    if not skip_topology:
        objects.append(topology("example-topology", "tas-level-0"))
    assert inactive(*objects) == want


def test_missing_topology_with_multikueue_counts_only_when_inactive_otherwise() -> None:
    # isTASViolated skips the TAS check with a MultiKueue check; inactiveReason still lists it.
    assert inactive(cq(**TAS_CQ, checks=("mk-check",)), TAS_FLAVOR, ac("mk-check", MULTIKUEUE)) == \
        ("Ready", "Can admit new workloads")
    assert inactive(cq(**TAS_CQ, checks=("mk-check",), stopPolicy="Hold"), TAS_FLAVOR, ac("mk-check", MULTIKUEUE))[1] \
        == "Can't admit new workloads: is stopped, there is no Topology \"example-topology\" for TAS flavor \"tas-flavor\"."


def test_topology_parts_need_the_gate() -> None:
    off = kueue_config(featureGates={**OFF_TAS_DEPENDENTS, "TopologyAwareScheduling": False})
    assert inactive(cq(**TAS_CQ), TAS_FLAVOR, config=off) == ("Ready", "Can admit new workloads")


# ---- the findings on the ClusterQueue ----------------------------------------------------------------------


def test_inactive_cluster_queue_is_reported_at_each_missing_reference(tmp_path: Path) -> None:
    message = ("Can't admit new workloads: references missing ResourceFlavor(s): a,b, references missing "
               "AdmissionCheck(s): check1.")
    assert found(tmp_path, cq(flavors=("a", "b"), checks=("check1",))) == [
        ("error", "kueue-cluster-queue-inactive", "spec.resourceGroups[0].flavors[0].name", message),
        ("error", "kueue-cluster-queue-inactive", "spec.resourceGroups[0].flavors[1].name", message),
        ("error", "kueue-cluster-queue-inactive", "spec.admissionChecksStrategy.admissionChecks[0].name", message),
    ]


def test_v1beta1_cluster_queue_points_at_what_was_written(tmp_path: Path) -> None:
    assert found(tmp_path, cq(flavors=(), checks=("check1",), v1beta1=True)) == [
        ("error", "kueue-cluster-queue-inactive", "spec.admissionChecks[0]",
         "Can't admit new workloads: references missing AdmissionCheck(s): check1."),
    ]


def test_a_stopped_cluster_queue_is_not_reported(tmp_path: Path) -> None:
    assert found(tmp_path, cq(stopPolicy="Hold"), rf("flavor1"), lq(), jobset()) == []


def test_validate_softens_a_missing_flavor_the_cluster_may_hold(tmp_path: Path) -> None:
    [(severity, rule, _, _)] = found(tmp_path, cq(), unseen_cluster=True)
    assert (severity, rule) == ("warning", "kueue-cluster-queue-inactive")
    assert found(tmp_path, cq(), unseen_cluster=True, strict=True)[0][0] == "error"
    assert found(tmp_path, cq(), context=(rf("flavor1"),), unseen_cluster=True) == []


# ---- workload_controller(_inadmissible)_test.go: a workload's queue --------------------------------------------

def test_local_queue_is_not_created(tmp_path: Path) -> None:
    # "should set status QuotaReserved conditions to False with reason Misconfigured if quota not reserved
    # LocalQueue is not created"; "inadmissible workload due to missing LocalQueue (observability enabled)"
    assert found(tmp_path, workload("lq")) == [
        ("error", "kueue-local-queue-missing", "spec.queueName", "LocalQueue lq doesn't exist")]


def test_workload_without_queue_name(tmp_path: Path) -> None:
    # "workload with existing controller owner should not be finished": upstream's two spaces.
    assert found(tmp_path, workload(None)) == [("error", "kueue-local-queue-missing", "spec", "LocalQueue  doesn't exist")]


def test_cluster_queue_is_not_created(tmp_path: Path) -> None:
    # "... Misconfigured if quota not reserved ClusterQueue is not created": on the Workload when the LocalQueue
    # is not an input, on the LocalQueue when it is.
    assert found(tmp_path, workload("lq"), context=(lq(),)) == [
        ("error", "kueue-cluster-queue-missing", "spec.queueName", "ClusterQueue cq doesn't exist")]
    assert found(tmp_path, workload("lq"), lq()) == [
        ("error", "kueue-cluster-queue-missing", "spec.clusterQueue", "ClusterQueue cq doesn't exist")]


def test_cluster_queue_is_inactive_for_a_job_whose_queue_is_elsewhere(tmp_path: Path) -> None:
    # workload_controller_test.go "ClusterQueue cq is inactive" (reason Suspended)
    assert found(tmp_path, jobset(), context=(lq(), cq())) == [
        ("error", "kueue-cluster-queue-inactive", "metadata.labels[kueue.x-k8s.io/queue-name]",
         "ClusterQueue cq is inactive")]


# ---- jobs ----------------------------------------------------------------------------------------------------------

LABEL = "metadata.labels[kueue.x-k8s.io/queue-name]"
SETUP = (lq(), cq(), rf("flavor1"))


def test_queued_job_with_its_queues_is_clean(tmp_path: Path) -> None:
    assert found(tmp_path, jobset(), *SETUP) == []
    assert found(tmp_path, jobset(), context=SETUP) == []


def test_missing_local_queue(tmp_path: Path) -> None:
    assert found(tmp_path, jobset()) == [("error", "kueue-local-queue-missing", LABEL, "LocalQueue lq doesn't exist")]


def test_missing_local_queue_in_an_unseen_cluster_is_a_warning_unless_strict_or_a_slip(tmp_path: Path) -> None:
    assert found(tmp_path, jobset(), unseen_cluster=True)[0][0] == "warning"
    assert found(tmp_path, jobset(), unseen_cluster=True, strict=True)[0][0] == "error"
    # "lq" is one edit from the known "lq1": most likely a slip, so the cluster does not hold it either.
    assert found(tmp_path, jobset(), context=(lq("lq1"), cq(), rf("flavor1")), unseen_cluster=True)[0][0] == "error"


def test_local_queue_of_another_namespace_does_not_count(tmp_path: Path) -> None:
    assert found(tmp_path, jobset(), lq(namespace="other"), cq(), rf("flavor1"))[0][1] == "kueue-local-queue-missing"


def test_namespace_not_selected(tmp_path: Path) -> None:
    strict = cq(namespaceSelector={"matchLabels": {"team": "a"}})
    message = "workload namespace doesn't match ClusterQueue selector"
    assert found(tmp_path, lq(), strict, rf("flavor1")) == [
        ("error", "kueue-namespace-not-selected", "spec.clusterQueue", message)]
    assert found(tmp_path, jobset(), context=(lq(), strict, rf("flavor1"))) == [
        ("error", "kueue-namespace-not-selected", LABEL, message)]
    labelled = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns", "labels": {"team": "a"}}}
    assert found(tmp_path, jobset(), context=(lq(), strict, rf("flavor1"), labelled)) == []


def test_cluster_queue_without_namespace_selector_selects_nothing(tmp_path: Path) -> None:
    queue = cq()
    del queue["spec"]["namespaceSelector"]
    assert [f[1] for f in found(tmp_path, lq(), queue, rf("flavor1"))] == ["kueue-namespace-not-selected"]


def test_missing_workload_priority_class(tmp_path: Path) -> None:
    job = jobset(labels={"kueue.x-k8s.io/priority-class": "high"})
    assert found(tmp_path, job, *SETUP) == [
        ("error", "kueue-priority-class-missing", "metadata.labels[kueue.x-k8s.io/priority-class]",
         'WorkloadPriorityClass "high" not found')]
    wpc = {"apiVersion": G, "kind": "WorkloadPriorityClass", "metadata": {"name": "high"}, "value": 1000}
    assert found(tmp_path, job, wpc, *SETUP) == []


def test_queue_name_annotation(tmp_path: Path) -> None:
    at = "metadata.annotations[kueue.x-k8s.io/queue-name]"
    [(severity, rule, path, message)] = found(tmp_path, jobset(None, meta_annotations={"kueue.x-k8s.io/queue-name": "lq"}))
    assert (severity, rule, path) == ("warning", "kueue-queue-name-annotation", at)
    assert "since v0.15 (kueue#7271)" in message
    both = found(tmp_path, jobset(meta_annotations={"kueue.x-k8s.io/queue-name": "lq"}), *SETUP)
    assert [(f[1], f[3].endswith("(the label says the same)")) for f in both] == [("kueue-queue-name-annotation", True)]


def test_nothing_without_kueue(tmp_path: Path) -> None:
    assert found(tmp_path, jobset(), cq(), kueue=None) == []


def test_manage_jobs_without_queue_name(tmp_path: Path) -> None:
    config = kueue_config(manageJobsWithoutQueueName=True)
    assert found(tmp_path, jobset(None), kueue=config) == [
        ("error", "kueue-local-queue-missing", "metadata", "LocalQueue  doesn't exist")]
    # ApplyDefaultLocalQueue: a LocalQueue "default" in the namespace is the job's queue.
    assert found(tmp_path, jobset(None), lq("default"), cq(), rf("flavor1"), kueue=config) == []
    # Without the option the job is not Kueue's.
    assert found(tmp_path, jobset(None)) == []


# ---- TAS --------------------------------------------------------------------------------------------------------

RACK, BLOCK, HOST = "cloud.com/rack", "cloud.com/block", "kubernetes.io/hostname"
TAS_SETUP = (lq(), cq(flavors=("tas",)), rf("tas", nodeLabels={"pool": "a"}, topologyName="t"),
             topology("t", BLOCK, RACK, HOST))
PODSET_AT = "spec.replicatedJobs[0].template.spec.template.metadata.annotations"


def tas_job(**annotations: str) -> dict[str, Any]:
    return jobset(annotations={f"kueue.x-k8s.io/podset-{k.replace('_', '-')}": v for k, v in annotations.items()},
                  replicas=2, parallelism=4)


TAS_CASES = [
    ("required level of the topology", tas_job(required_topology=RACK), TAS_SETUP, []),
    ("level the topology lacks", tas_job(required_topology="cloud.com/zone"), TAS_SETUP,
     [('error', 'kueue-tas-topology', PODSET_AT,
       'couldn\'t assign flavors to pod set workers: Flavor "tas" does not contain the requested level')]),
    ("slice level the topology lacks", tas_job(required_topology=BLOCK, slice_required_topology="cloud.com/zone",
                                               slice_size="4"), TAS_SETUP,
     [('error', 'kueue-tas-topology', PODSET_AT,
       'couldn\'t assign flavors to pod set workers: Flavor "tas" does not contain the requested level')]),
    ("slice above the podset level", tas_job(required_topology=RACK, slice_required_topology=BLOCK, slice_size="4"),
     TAS_SETUP, [('error', 'kueue-tas-topology', PODSET_AT, 'couldn\'t assign flavors to pod set workers: podset '
                  'slice topology cloud.com/block is above the podset topology cloud.com/rack')]),
    ("flavor without topology", tas_job(preferred_topology=RACK), (lq(), cq(), rf("flavor1")),
     [('error', 'kueue-tas-topology', PODSET_AT, 'couldn\'t assign flavors to pod set workers: Flavor "flavor1" '
                                                 'does not support TopologyAwareScheduling')]),
    ("TAS-only queue implies TAS for a podset without annotations", jobset(), TAS_SETUP, []),
    ("a TAS flavor next to a plain one serves a TAS podset",
     tas_job(required_topology=RACK), (lq(), cq(flavors=("flavor1", "tas")), rf("flavor1"), *TAS_SETUP[2:]), []),
    ("a plain flavor next to a TAS one serves a plain podset",
     jobset(), (lq(), cq(flavors=("flavor1", "tas")), rf("flavor1"), *TAS_SETUP[2:]), []),
    ("slice size not dividing the podset", tas_job(required_topology=BLOCK, slice_required_topology=RACK,
                                                   slice_size="3"), TAS_SETUP,
     [('warning', 'kueue-tas-slice-size', PODSET_AT, 'pod set workers: slice size 3 does not divide its 8 pods: the '
                                                      'scheduler places whole slices of 3 and 2 pod(s) belong to none')]),
]


@pytest.mark.parametrize(("job", "setup", "want"), [c[1:] for c in TAS_CASES], ids=[c[0] for c in TAS_CASES])
def test_tas(tmp_path: Path, job: dict[str, Any], setup: tuple[dict[str, Any], ...], want: list[Any]) -> None:
    assert found(tmp_path, job, *setup) == want


def test_multi_layer_slice_layers_must_go_down(tmp_path: Path) -> None:
    constraints = '[{"topology": "cloud.com/rack", "size": 4}, {"topology": "cloud.com/block", "size": 2}]'
    job = jobset(annotations={"kueue.x-k8s.io/podset-required-topology": BLOCK,
                              "kueue.x-k8s.io/podset-slice-required-topology-constraints": constraints},
                 replicas=2, parallelism=4)
    assert [f[3] for f in found(tmp_path, job, *TAS_SETUP)] == [
        "couldn't assign flavors to pod set workers: additional slice layer topology cloud.com/block must be at a "
        "lower level than cloud.com/rack"]
