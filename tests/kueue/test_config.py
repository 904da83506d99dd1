"""Kueue's Configuration (jobsetctl/kueue/config.py) and feature gates (jobsetctl/kueue/features.py).

Translated: apis/config/v1beta2/defaults_test.go ``TestSetDefaults_Configuration`` (the defaults of the
fields we model), pkg/config/validation_test.go ``TestValidate`` (the cases on those fields) and
``TestLoadAndValidateFeatureGates`` (every case: the gate dependency errors).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jobsetctl.kueue.config import (
    DEFAULT_FRAMEWORKS,
    SHIPPED,
    KueueConfiguration,
    RequeuingStrategy,
    WaitForPodsReady,
    go_duration,
    load_kueue_config,
    parse_configuration,
    thaw,
)
from jobsetctl.kueue.features import GATES, KueueGateError, parse_kueue_gates
from jobsetctl.status import UsageError

OFF_TAS_DEPENDENTS = {  # the default-on gates that depend on TopologyAwareScheduling, off (as upstream's cases set them)
    "TASProfileMixed": False, "TASHandleOverlappingFlavors": False, "TASFailedNodeReplacement": False,
    "TASFailedNodeReplacementFailFast": False, "TASReplaceNodeOnPodTermination": False,
    "TASReplaceNodeOnNodeTaints": False, "TASMultiLayerTopology": False,
    "TASRecomputeAssignmentWithinSchedulingCycle": False,
}


def messages(body: dict[str, Any]) -> list[str]:
    return [p.message for p in parse_configuration(body)[1]]


# --- defaults (TestSetDefaults_Configuration) -------------------------------------------------------

def test_defaults_of_an_empty_configuration() -> None:
    config, problems = parse_configuration({})
    assert problems == []
    assert config.namespace == "kueue-system"
    assert config.manage_jobs_without_queue_name is False
    # defaultManagedJobsNamespaceSelector
    assert thaw(config.managed_jobs_namespace_selector) == {"matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system", "kueue-system"]}]}
    # defaultWaitForPodsReady: v1beta2 has no "enable"; waitForPodsReady is on with a 30 minute timeout
    assert config.wait_for_pods_ready == WaitForPodsReady(
        timeout=1800.0, block_admission=False, recovery_timeout=1800.0,
        requeuing_strategy=RequeuingStrategy("Eviction", None, 60, 3600))
    # defaultIntegrations
    assert config.integrations.frameworks == DEFAULT_FRAMEWORKS == ("batch/job",)
    assert config.fair_sharing is None and config.admission_fair_sharing is None and config.resources is None


def test_overwrite_namespace_changes_the_default_selector() -> None:
    # "defaulting ControllerManager" with overwriteNamespace: the selector excludes that namespace.
    config, _ = parse_configuration({"namespace": "kueue-tenant-a"})
    assert thaw(config.managed_jobs_namespace_selector)["matchExpressions"][0]["values"] == [
        "kube-system", "kueue-tenant-a"]


def test_wait_for_pods_ready_defaults_follow_the_timeout() -> None:
    # "set waitForPodsReady.recoveryTimeout to the timeout" (podsReadyTimeoutOverwrite / customTimeout cases)
    config, _ = parse_configuration({"waitForPodsReady": {"timeout": "5m"}})
    assert config.wait_for_pods_ready is not None
    assert (config.wait_for_pods_ready.timeout, config.wait_for_pods_ready.recovery_timeout) == (300.0, 300.0)
    config, _ = parse_configuration({"waitForPodsReady": {"timeout": "5m", "recoveryTimeout": "3m",
                                                          "requeuingStrategy": {"timestamp": "Creation",
                                                                                "backoffLimitCount": 5}}})
    assert config.wait_for_pods_ready == WaitForPodsReady(
        300.0, False, 180.0, RequeuingStrategy("Creation", 5, 60, 3600))


def test_disable_wait_for_pods_ready_gate_turns_it_off() -> None:
    config, _ = parse_configuration({"featureGates": {"DisableWaitForPodsReady": True}})
    assert config.wait_for_pods_ready is None


def test_admission_fair_sharing_sampling_interval_default() -> None:
    config, _ = parse_configuration({"admissionFairSharing": {"usageHalfLifeTime": "168h"}})
    assert config.admission_fair_sharing is not None
    assert config.admission_fair_sharing.usage_sampling_interval == 300.0


def test_resource_transformation_strategy_defaults_to_retain() -> None:
    config, _ = parse_configuration({"resources": {"transformations": [
        {"input": "nvidia.com/mig-1g.5gb", "outputs": {"example.com/gpu-memory": "5Gi"}}]}})
    assert config.resources is not None
    assert config.resources.transformations[0].strategy == "Retain"


def test_shipped_configuration_manages_jobsets_and_trainjobs() -> None:
    # config/components/manager/controller_manager_config.yaml lists the frameworks; the Go default is batch/job.
    assert SHIPPED.manages("jobset.x-k8s.io", "JobSet") and SHIPPED.manages("trainer.kubeflow.org", "TrainJob")
    assert not KueueConfiguration().manages("jobset.x-k8s.io", "JobSet")


# --- validation (TestValidate, the cases on the fields we model) ----------------------------------

@pytest.mark.parametrize(("case", "body", "want"), [
    ("empty integrations.frameworks (defaulted)", {"integrations": {"frameworks": []}}, []),
    ("unregistered integrations.frameworks", {"integrations": {"frameworks": ["unregistered/jobframework"]}},
     ['integrations.frameworks[0]: Unsupported value: "unregistered/jobframework": supported values: '
      + ", ".join(f'"{f}"' for f in sorted(["batch/job", "deployment", "jobset.x-k8s.io/jobset", "kubeflow.org/jaxjob",
                                           "kubeflow.org/mpijob", "kubeflow.org/paddlejob", "kubeflow.org/pytorchjob",
                                           "kubeflow.org/tfjob", "kubeflow.org/xgboostjob",
                                           "leaderworkerset.x-k8s.io/leaderworkerset", "pod", "ray.io/raycluster",
                                           "ray.io/rayjob", "ray.io/rayservice",
                                           "sparkoperator.k8s.io/sparkapplication", "statefulset",
                                           "trainer.kubeflow.org/trainjob", "workload.codeflare.dev/appwrapper"]))]),
    ("duplicate integrations.frameworks", {"integrations": {"frameworks": ["batch/job", "batch/job"]}},
     ['integrations.frameworks[1]: Duplicate value: "batch/job"']),
    ("no supported waitForPodsReady.requeuingStrategy.timestamp",
     {"waitForPodsReady": {"timeout": "5m", "requeuingStrategy": {"timestamp": "NoSupported"}}},
     ['waitForPodsReady.requeuingStrategy.timestamp: Unsupported value: "NoSupported": supported values: '
      '"Creation", "Eviction"']),
    ("negative waitForPodsReady.timeout", {"waitForPodsReady": {"timeout": "-1s"}},
     ['waitForPodsReady.timeout: Invalid value: "-1s": must be greater than or equal to 0']),
    ("negative waitForPodsReady.recoveryTimeout", {"waitForPodsReady": {"timeout": "5m", "recoveryTimeout": "-1s"}},
     ['waitForPodsReady.recoveryTimeout: Invalid value: "-1s": must be greater than or equal to 0']),
    ("valid waitForPodsReady", {"waitForPodsReady": {"timeout": "50s", "blockAdmission": True, "requeuingStrategy": {
        "timestamp": "Creation", "backoffLimitCount": 10, "backoffBaseSeconds": 30, "backoffMaxSeconds": 1800}}}, []),
    ("negative waitForPodsReady.requeuingStrategy.backoffLimitCount",
     {"waitForPodsReady": {"timeout": "5m", "requeuingStrategy": {"backoffLimitCount": -1}}},
     ["waitForPodsReady.requeuingStrategy.backoffLimitCount: Invalid value: -1: must be greater than or equal to 0"]),
    ("negative waitForPodsReady.requeuingStrategy.backoffBaseSeconds",
     {"waitForPodsReady": {"timeout": "5m", "requeuingStrategy": {"backoffBaseSeconds": -1}}},
     ["waitForPodsReady.requeuingStrategy.backoffBaseSeconds: Invalid value: -1: must be greater than or equal to 0"]),
    ("negative waitForPodsReady.requeuingStrategy.backoffMaxSeconds",
     {"waitForPodsReady": {"timeout": "5m", "requeuingStrategy": {"backoffMaxSeconds": -1}}},
     ["waitForPodsReady.requeuingStrategy.backoffMaxSeconds: Invalid value: -1: must be greater than or equal to 0"]),
    ("invalid an empty preemption strategy", {"fairSharing": {"preemptionStrategies": []}},
     ["fairSharing.preemptionStrategies: Required value: must be specified"]),
    ("unsupported preemption strategy", {"fairSharing": {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "UNKNOWN"]}},
     ['fairSharing.preemptionStrategies: Unsupported value: ["LessThanOrEqualToFinalShare","UNKNOWN"]: supported '
      'values: "LessThanOrEqualToFinalShare", "LessThanInitialShare", "LessThanOrEqualToFinalShare,LessThanInitialShare"']),
    ("valid preemption strategy", {"fairSharing": {"preemptionStrategies": ["LessThanOrEqualToFinalShare",
                                                                            "LessThanInitialShare"]}}, []),
    ("valid admissionFairSharing configuration", {"admissionFairSharing": {
        "usageHalfLifeTime": "1s", "usageSamplingInterval": "1s", "resourceWeights": {"cpu": 1}}}, []),
    ("invalid admissionFairSharing.usageHalfLifeTime configuration", {"admissionFairSharing": {
        "usageHalfLifeTime": "-1s", "usageSamplingInterval": "1s"}},
     ['admissionFairSharing.usageHalfLifeTime: Invalid value: "-1s": must be greater than or equal to 0']),
    # Quirk (validation.go): the sampling-interval error shows the half-life's value.
    ("invalid admissionFairSharing.usageSamplingInterval configuration", {"admissionFairSharing": {
        "usageHalfLifeTime": "1s", "usageSamplingInterval": "-1s"}},
     ['admissionFairSharing.usageSamplingInterval: Invalid value: "1s": must be greater than 0']),
    ("invalid admissionFairSharing.resourceWeights configuration", {"admissionFairSharing": {
        "usageHalfLifeTime": "1s", "resourceWeights": {"cpu": -1}}},
     ['admissionFairSharing.resourceWeights[cpu]: Invalid value: {"cpu":-1}: must be greater than or equal to 0']),
    ("invalid .resources.transformations.strategy", {"resources": {"transformations": [
        {"input": "nvidia.com/mig-1g.5gb", "strategy": "invalid"}]}},
     ['resources.transformations[0].strategy: Unsupported value: "invalid": supported values: "Retain", "Replace"']),
    ("invalid .resources.transformations.inputs", {"resources": {"transformations": [
        {"input": "nvidia.com/mig-1g.5gb"}, {"input": "nvidia.com/mig-1g.5gb"}]}},
     ['resources.transformations[1].input: Duplicate value: "nvidia.com/mig-1g.5gb"']),
    ("negative afterFinished in .objectRetentionPolicies.workloads",
     {"objectRetentionPolicies": {"workloads": {"afterFinished": "-1s"}}},
     ['objectRetentionPolicies.workloads.afterFinished: Invalid value: "-1s": must be greater than or equal to 0']),
    ("zero afterFinished in .objectRetentionPolicies.workloads",
     {"objectRetentionPolicies": {"workloads": {"afterFinished": "0s"}}}, []),
    ("quotaCheckStrategy with value ignoreUndeclared not allowed with excludeResourcePrefixes",
     {"resources": {"quotaCheckStrategy": "IgnoreUndeclared", "excludeResourcePrefixes": ["example.com/"]}},
     ['resources.quotaCheckStrategy: Invalid value: "IgnoreUndeclared": excludeResourcePrefixes is not allowed '
      "when quotaCheckStrategy is IgnoreUndeclared"]),
    ("quotaCheckStrategy with value blockundeclared allowed with excludeResourcePrefixes",
     {"resources": {"quotaCheckStrategy": "BlockUndeclared", "excludeResourcePrefixes": ["example.com/"]}}, []),
    ("quotaCheckStrategy with unsupported value", {"resources": {"quotaCheckStrategy": "Other"}},
     ['resources.quotaCheckStrategy: Unsupported value: "Other": supported values: "IgnoreUndeclared", '
      '"BlockUndeclared"']),
    ("quotaCheckStrategy validation skipped when feature gate disabled",
     {"resources": {"quotaCheckStrategy": "Other"}, "featureGates": {"QuotaCheckStrategy": False}}, []),
])
def test_validate(case: str, body: dict[str, Any], want: list[str]) -> None:
    assert messages(body) == want


def test_strict_decoding_rejects_unknown_fields() -> None:
    assert messages({"waitForPodsReady": {"timeout": "5m", "enable": True}, "bogus": 1}) == [
        'strict decoding error: unknown field "bogus"',
        'strict decoding error: unknown field "waitForPodsReady.enable"',
    ]


def test_other_configuration_fields_are_accepted() -> None:
    shipped_file = {"health": {"healthProbeBindAddress": ":8081"}, "metrics": {"bindAddress": ":8443"},
                    "webhook": {"port": 9443}, "leaderElection": {"leaderElect": True},
                    "controller": {"groupKindConcurrency": {"Job.batch": 5}}, "clientConnection": {"qps": 300}}
    assert messages(shipped_file) == []


@pytest.mark.parametrize(("text", "seconds"), [
    ("5m", 300.0), ("1h30m", 5400.0), ("300ms", 0.3), ("0", 0.0), ("-5m", -300.0), ("1.5h", 5400.0),
    ("5", None), ("1d", None), ("", None), ("m", None),
])
def test_go_durations(text: str, seconds: float | None) -> None:
    assert go_duration(text) == seconds


# --- feature gates (TestLoadAndValidateFeatureGates) ------------------------------------------------

def _dependency(name: str, needs: str) -> str:
    return f"{name} is enabled, but depends on features that are disabled: [{needs}]"


@pytest.mark.parametrize(("case", "gates", "want"), [
    ("no feature gates is null", {}, None),
    ("cannot set TAS profile with TAS disabled", {**OFF_TAS_DEPENDENTS, "TASProfileMixed": True,
                                                  "TopologyAwareScheduling": False},
     _dependency("TASProfileMixed", "TopologyAwareScheduling")),
    ("TASReplaceNodeDueToNotReadyOverFixedTime requires TASFailedNodeReplacement", {
        "TASReplaceNodeDueToNotReadyOverFixedTime": True, "TopologyAwareScheduling": True,
        "TASFailedNodeReplacement": False, "TASFailedNodeReplacementFailFast": False,
        "TASReplaceNodeOnPodTermination": False, "TASProfileMixed": False},
     _dependency("TASReplaceNodeDueToNotReadyOverFixedTime", "TASFailedNodeReplacement")),
    ("ElasticJobsViaWorkloadSlicesWithTAS requires ElasticJobsViaWorkloadSlices", {
        "ElasticJobsViaWorkloadSlicesWithTAS": True, "TopologyAwareScheduling": True,
        "ElasticJobsViaWorkloadSlices": False, "TASProfileMixed": False},
     _dependency("ElasticJobsViaWorkloadSlicesWithTAS", "ElasticJobsViaWorkloadSlices")),
    ("ElasticJobsViaWorkloadSlicesWithTAS requires TopologyAwareScheduling", {
        **OFF_TAS_DEPENDENTS, "ElasticJobsViaWorkloadSlicesWithTAS": True, "ElasticJobsViaWorkloadSlices": True,
        "TopologyAwareScheduling": False},
     _dependency("ElasticJobsViaWorkloadSlicesWithTAS", "TopologyAwareScheduling")),
    ("ElasticJobsViaWorkloadSlicesWithTAS valid when all dependencies enabled", {
        "ElasticJobsViaWorkloadSlicesWithTAS": True, "ElasticJobsViaWorkloadSlices": True,
        "TopologyAwareScheduling": True, "TASProfileMixed": False}, None),
    ("TASHandleOverlappingFlavors requires TopologyAwareScheduling", {
        **OFF_TAS_DEPENDENTS, "TopologyAwareScheduling": False, "TASHandleOverlappingFlavors": True},
     _dependency("TASHandleOverlappingFlavors", "TopologyAwareScheduling")),
    ("TASHandleOverlappingFlavors valid when all dependencies enabled", {
        "TopologyAwareScheduling": True, "TASHandleOverlappingFlavors": True}, None),
    ("TASRecomputeAssignmentWithinSchedulingCycle requires TopologyAwareScheduling", {
        **OFF_TAS_DEPENDENTS, "TopologyAwareScheduling": False, "TASRecomputeAssignmentWithinSchedulingCycle": True},
     _dependency("TASRecomputeAssignmentWithinSchedulingCycle", "TopologyAwareScheduling")),
    ("TASFailedNodeReplacement requires TopologyAwareScheduling", {
        **OFF_TAS_DEPENDENTS, "TopologyAwareScheduling": False, "TASFailedNodeReplacement": True},
     _dependency("TASFailedNodeReplacement", "TopologyAwareScheduling")),
    ("TASBalancedPlacement requires TopologyAwareScheduling", {
        **OFF_TAS_DEPENDENTS, "TopologyAwareScheduling": False, "TASBalancedPlacement": True},
     _dependency("TASBalancedPlacement", "TopologyAwareScheduling")),
    ("TASReplaceNodeOnNodeTaints requires TopologyAwareScheduling", {
        **OFF_TAS_DEPENDENTS, "TopologyAwareScheduling": False, "TASReplaceNodeOnNodeTaints": True},
     _dependency("TASReplaceNodeOnNodeTaints", "TopologyAwareScheduling")),
    ("TASMultiLayerTopology requires TopologyAwareScheduling", {
        **OFF_TAS_DEPENDENTS, "TopologyAwareScheduling": False, "TASMultiLayerTopology": True},
     _dependency("TASMultiLayerTopology", "TopologyAwareScheduling")),
    ("TASRespectNodeAffinityPreferred requires TopologyAwareScheduling", {
        **OFF_TAS_DEPENDENTS, "TopologyAwareScheduling": False, "TASRespectNodeAffinityPreferred": True},
     _dependency("TASRespectNodeAffinityPreferred", "TopologyAwareScheduling")),
    ("TASFailedNodeReplacementFailFast requires TASFailedNodeReplacement", {
        "TopologyAwareScheduling": True, "TASFailedNodeReplacement": False, "TASFailedNodeReplacementFailFast": True,
        "TASReplaceNodeOnPodTermination": False, "TASMultiLayerTopology": False},
     _dependency("TASFailedNodeReplacementFailFast", "TASFailedNodeReplacement")),
    ("TASReplaceNodeOnPodTermination requires TASFailedNodeReplacement", {
        "TopologyAwareScheduling": True, "TASFailedNodeReplacement": False, "TASFailedNodeReplacementFailFast": False,
        "TASReplaceNodeOnPodTermination": True},
     _dependency("TASReplaceNodeOnPodTermination", "TASFailedNodeReplacement")),
    ("TASFailedNodeReplacementFailFast requires both TopologyAwareScheduling and TASFailedNodeReplacement", {
        **OFF_TAS_DEPENDENTS, "TopologyAwareScheduling": False, "TASFailedNodeReplacementFailFast": True},
     _dependency("TASFailedNodeReplacementFailFast", "TopologyAwareScheduling TASFailedNodeReplacement")),
    ("TASReplaceNodeOnPodTermination requires both TopologyAwareScheduling and TASFailedNodeReplacement", {
        **OFF_TAS_DEPENDENTS, "TopologyAwareScheduling": False, "TASReplaceNodeOnPodTermination": True},
     _dependency("TASReplaceNodeOnPodTermination", "TopologyAwareScheduling TASFailedNodeReplacement")),
    ("all TAS sub-features valid when TopologyAwareScheduling and TASFailedNodeReplacement enabled", {
        "TopologyAwareScheduling": True, "TASFailedNodeReplacement": True, "TASFailedNodeReplacementFailFast": True,
        "TASReplaceNodeOnPodTermination": True, "TASBalancedPlacement": True, "TASReplaceNodeOnNodeTaints": True,
        "TASMultiLayerTopology": True, "TASRespectNodeAffinityPreferred": True,
        "TASHandleOverlappingFlavors": True}, None),
    ("KueueDRAIntegrationConsumableCapacity requires KueueDRAIntegration", {
        "KueueDRAIntegrationConsumableCapacity": True, "KueueDRAIntegration": False,
        "KueueDRAIntegrationExtendedResource": False, "KueueDRAIntegrationPartitionableDevices": False},
     _dependency("KueueDRAIntegrationConsumableCapacity", "KueueDRAIntegration")),
])
def test_load_and_validate_feature_gates(case: str, gates: dict[str, bool], want: str | None) -> None:
    if want is None:
        parse_kueue_gates(gates)
        return
    with pytest.raises(KueueGateError) as caught:
        parse_kueue_gates(gates)
    assert str(caught.value) == want


def test_multiple_feature_gate_errors_at_once() -> None:
    # "multiple FG validation errors at once": upstream compares type and field only (map order).
    gates = {**OFF_TAS_DEPENDENTS, "TASProfileMixed": True, "TopologyAwareScheduling": False,
             "TASHandleOverlappingFlavors": True, "ElasticJobsViaWorkloadSlicesWithTAS": True,
             "ElasticJobsViaWorkloadSlices": False}
    problems = parse_configuration({"featureGates": gates})[1]
    assert [p.at for p in problems] == [("featureGates",)]
    assert problems[0].message.startswith("featureGates: Invalid value: map[")
    assert problems[0].message.count("is enabled, but depends on features that are disabled") == 3


def test_turning_tas_off_alone_is_refused() -> None:
    # Upstream behaviour: the default-on TAS gates depend on TopologyAwareScheduling (component-base checks it).
    with pytest.raises(KueueGateError, match=r"^\[TASFailedNodeReplacement is enabled"):
        parse_kueue_gates({"TopologyAwareScheduling": False})


def test_unknown_and_locked_gates() -> None:
    with pytest.raises(KueueGateError, match=r"^unrecognized feature gate: NoSuchGate$"):
        parse_kueue_gates({"NoSuchGate": True})
    with pytest.raises(KueueGateError,
                       match=r"^cannot set feature gate TLSOptions to false, feature is locked to true$"):
        parse_kueue_gates({"TLSOptions": False})


def test_gate_defaults_at_the_snapshot() -> None:
    assert {name for name, gate in GATES.items() if gate.default} >= {
        "TopologyAwareScheduling", "TASProfileMixed", "PartialAdmission", "FlavorFungibility",
        "PrioritySortingWithinCohort", "ReclaimablePods", "TASMultiLayerTopology", "WorkloadPriorityClassDefaulting"}
    assert not GATES["ShortWorkloadNames"].default and not GATES["TASBalancedPlacement"].default
    assert len(GATES) == 80


# --- the file -----------------------------------------------------------------------------------------

def test_config_file_errors_are_one_line_with_position(tmp_path: Path) -> None:
    path = tmp_path / "kueue.yaml"
    path.write_text("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
                    "waitForPodsReady:\n  timeout: 5 minutes\n")
    with pytest.raises(UsageError) as caught:
        load_kueue_config(str(path))
    assert str(caught.value) == f'{path}:4:3: waitForPodsReady.timeout: time: invalid duration "5 minutes"'


def test_config_file_with_the_shipped_content(tmp_path: Path) -> None:
    path = tmp_path / "kueue.yaml"
    path.write_text("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nmanageJobsWithoutQueueName: true\n"
                    "integrations:\n  frameworks: [batch/job, jobset.x-k8s.io/jobset]\n")
    config = load_kueue_config(str(path))
    assert config.manage_jobs_without_queue_name and config.source == str(path)
    assert config.manages("jobset.x-k8s.io", "JobSet") and not config.manages("trainer.kubeflow.org", "TrainJob")


@pytest.mark.parametrize(("text", "message"), [
    ("apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n",
     '1:1: apiVersion: Unsupported value: "config.kueue.x-k8s.io/v1beta1": supported values: '
     '"config.kueue.x-k8s.io/v1beta2" (v1beta1 Configurations are converted by Kueue; write v1beta2)'),
    ("- a\n- b\n", "1:1: a Kueue Configuration is a mapping"),
    ("a: 1\n---\nb: 2\n", "1:1: a Kueue configuration file holds exactly one Configuration document (found 2)"),
    ("featureGates: {Nope: true}\n", "1:1: featureGates: Invalid value: map[Nope:true]: unrecognized feature gate: Nope"),
])
def test_config_file_problems(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "kueue.yaml"
    path.write_text(text)
    with pytest.raises(UsageError) as caught:
        load_kueue_config(str(path))
    assert str(caught.value) == f"{path}:{message}"


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"^--kueue-config .*nope\.yaml: cannot read: no such file or directory$"):
        load_kueue_config(str(tmp_path / "nope.yaml"))
