"""Kueue's ``Configuration`` (``config.kueue.x-k8s.io/v1beta2``): the fields jobsetctl models, with upstream defaults.

Where it comes from: ``--kueue-config FILE`` (validate, render, simulate) or a Scenario's
``spec.kueue.configuration`` (which wins). Without either, Kueue runs with the configuration its release
manifests ship (``config/components/manager/controller_manager_config.yaml``): the Go defaults plus the
integrations list of that file (JobSet, TrainJob, Job and others). A file given by the user gets the
Go defaults only (``apis/config/v1beta2/defaults.go``), as Kueue reads it: a file without
``integrations`` manages ``batch/job`` alone, so its JobSets and TrainJobs are not queued.

Modelled, with their defaults (``SetDefaults_Configuration``):

* ``manageJobsWithoutQueueName`` (false) and ``managedJobsNamespaceSelector`` (``kubernetes.io/metadata.name
  NotIn [kube-system, <namespace>]``; ``namespace`` defaults to ``kueue-system``);
* ``waitForPodsReady``: **on by default in v1beta2** (there is no ``enable`` field any more; the
  ``DisableWaitForPodsReady`` gate turns it off): ``timeout`` 30m, ``blockAdmission`` false,
  ``recoveryTimeout`` = ``timeout``, ``requeuingStrategy`` {``timestamp`` Eviction, ``backoffLimitCount``
  unset (requeue forever), ``backoffBaseSeconds`` 60, ``backoffMaxSeconds`` 3600};
* ``fairSharing`` (absent: classic preemption) with ``preemptionStrategies``;
* ``admissionFairSharing`` (``usageSamplingInterval`` 5m);
* ``integrations`` (``frameworks``, ``externalFrameworks``, ``labelKeysToCopy``);
* ``resources`` (``quotaCheckStrategy``, ``excludeResourcePrefixes``, ``transformations`` with strategy
  Retain by default);
* ``objectRetentionPolicies.workloads``;
* ``featureGates`` (:mod:`jobsetctl.kueue.features`).

The other fields of the type (webhook, metrics, leader election, TLS, MultiKueue ...) are accepted and
ignored. Decoding is strict, as Kueue's (``serializer.EnableStrict``): an unknown field is an error.
Validation follows ``pkg/config/validation.go`` for the modelled fields, with its messages.

Problems are returned as ``(path, message)``; :func:`load_kueue_config` turns the first into the one-line
usage error ``file:line:col: message`` (exit 2), a Scenario into its diagnostics.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from types import MappingProxyType
from typing import Any, Final

from jobsetctl.kube.field import Path, duplicate, invalid, not_supported, path_string, required
from jobsetctl.kueue.features import DEFAULT_GATES, KueueFeatureGates, KueueGateError, parse_kueue_gates

API_VERSION: Final = "config.kueue.x-k8s.io/v1beta2"
KIND: Final = "Configuration"
DEFAULT_NAMESPACE: Final = "kueue-system"
DEFAULT_WAIT_FOR_PODS_READY_TIMEOUT: Final = 30 * 60.0
DEFAULT_BACKOFF_BASE_SECONDS: Final = 60
DEFAULT_BACKOFF_MAX_SECONDS: Final = 3600
DEFAULT_USAGE_SAMPLING_INTERVAL: Final = 5 * 60.0
#: ``defaultJobFrameworkName``: what a Configuration without ``integrations.frameworks`` manages.
DEFAULT_FRAMEWORKS: Final = ("batch/job",)
#: The frameworks of the configuration Kueue's release manifests ship (controller_manager_config.yaml).
SHIPPED_FRAMEWORKS: Final = (
    "batch/job", "kubeflow.org/mpijob", "ray.io/rayjob", "ray.io/raycluster", "ray.io/rayservice",
    "jobset.x-k8s.io/jobset", "workload.codeflare.dev/appwrapper", "trainer.kubeflow.org/trainjob", "pod",
    "deployment", "statefulset", "leaderworkerset.x-k8s.io/leaderworkerset",
)
#: The job type (apiVersion, kind) each built-in integration registers (``gvk`` / ``JobType`` of the packages under
#: pkg/controller/jobs). An owner reference matches one only with this exact apiVersion and kind
#: (integrationmanager.go ``ownerReferenceMatchingGVK``), whether or not jobsetctl models the kind.
JOB_TYPE_OF_FRAMEWORK: Final[Mapping[str, tuple[str, str]]] = MappingProxyType({
    "batch/job": ("batch/v1", "Job"),
    "deployment": ("apps/v1", "Deployment"),
    "statefulset": ("apps/v1", "StatefulSet"),
    "pod": ("v1", "Pod"),
    "jobset.x-k8s.io/jobset": ("jobset.x-k8s.io/v1alpha2", "JobSet"),
    "trainer.kubeflow.org/trainjob": ("trainer.kubeflow.org/v1alpha1", "TrainJob"),
    "kubeflow.org/mpijob": ("kubeflow.org/v2beta1", "MPIJob"),
    "kubeflow.org/jaxjob": ("kubeflow.org/v1", "JAXJob"),
    "kubeflow.org/paddlejob": ("kubeflow.org/v1", "PaddleJob"),
    "kubeflow.org/pytorchjob": ("kubeflow.org/v1", "PyTorchJob"),
    "kubeflow.org/tfjob": ("kubeflow.org/v1", "TFJob"),
    "kubeflow.org/xgboostjob": ("kubeflow.org/v1", "XGBoostJob"),
    "leaderworkerset.x-k8s.io/leaderworkerset": ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"),
    "ray.io/raycluster": ("ray.io/v1", "RayCluster"),
    "ray.io/rayjob": ("ray.io/v1", "RayJob"),
    "ray.io/rayservice": ("ray.io/v1", "RayService"),
    "sparkoperator.k8s.io/sparkapplication": ("sparkoperator.k8s.io/v1beta2", "SparkApplication"),
    "workload.codeflare.dev/appwrapper": ("workload.codeflare.dev/v1beta2", "AppWrapper"),
})
#: Every built-in integration of the snapshot (``FrameworkName`` of each package under pkg/controller/jobs).
BUILTIN_FRAMEWORKS: Final = tuple(sorted(JOB_TYPE_OF_FRAMEWORK))
#: The integrations jobsetctl models, by (group, kind) of the job.
FRAMEWORK_OF_KIND: Final[Mapping[tuple[str, str], str]] = MappingProxyType({
    ("batch", "Job"): "batch/job",
    ("jobset.x-k8s.io", "JobSet"): "jobset.x-k8s.io/jobset",
    ("trainer.kubeflow.org", "TrainJob"): "trainer.kubeflow.org/trainjob",
})
PREEMPTION_STRATEGY_SETS: Final = (
    ("LessThanOrEqualToFinalShare",),
    ("LessThanInitialShare",),
    ("LessThanOrEqualToFinalShare", "LessThanInitialShare"),
)
REQUEUING_TIMESTAMPS: Final = ("Creation", "Eviction")
QUOTA_CHECK_STRATEGIES: Final = ("IgnoreUndeclared", "BlockUndeclared")
TRANSFORMATION_STRATEGIES: Final = ("Retain", "Replace")


@dataclass(frozen=True, slots=True)
class RequeuingStrategy:
    timestamp: str = "Eviction"
    #: None: requeue without limit.
    backoff_limit_count: int | None = None
    backoff_base_seconds: int = DEFAULT_BACKOFF_BASE_SECONDS
    backoff_max_seconds: int = DEFAULT_BACKOFF_MAX_SECONDS


@dataclass(frozen=True, slots=True)
class WaitForPodsReady:
    timeout: float = DEFAULT_WAIT_FOR_PODS_READY_TIMEOUT
    block_admission: bool = False
    #: Seconds; 0 disables the recovery check. Defaults to ``timeout``.
    recovery_timeout: float = DEFAULT_WAIT_FOR_PODS_READY_TIMEOUT
    requeuing_strategy: RequeuingStrategy = field(default_factory=RequeuingStrategy)


@dataclass(frozen=True, slots=True)
class FairSharing:
    preemption_strategies: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AdmissionFairSharing:
    usage_half_life_time: float
    usage_sampling_interval: float = DEFAULT_USAGE_SAMPLING_INTERVAL
    resource_weights: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True, slots=True)
class ResourceTransformation:
    input: str
    strategy: str = "Retain"
    multiply_by: str = ""
    #: (resource name, quantity) per output.
    outputs: tuple[tuple[str, Fraction], ...] = ()


@dataclass(frozen=True, slots=True)
class Resources:
    quota_check_strategy: str | None = None
    exclude_resource_prefixes: tuple[str, ...] = ()
    transformations: tuple[ResourceTransformation, ...] = ()


@dataclass(frozen=True, slots=True)
class Integrations:
    frameworks: tuple[str, ...] = DEFAULT_FRAMEWORKS
    external_frameworks: tuple[str, ...] = ()
    label_keys_to_copy: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class WorkloadRetention:
    #: Seconds, or None for "keep forever".
    after_finished: float | None = None
    after_deactivated_by_kueue: float | None = None


def _default_selector(namespace: str) -> Mapping[str, Any]:
    return MappingProxyType({"matchExpressions": (MappingProxyType({
        "key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ("kube-system", namespace),
    }),)})


@dataclass(frozen=True, slots=True)
class KueueConfiguration:
    """The Configuration as Kueue runs with it (defaults applied, validated)."""

    namespace: str = DEFAULT_NAMESPACE
    manage_jobs_without_queue_name: bool = False
    #: A LabelSelector (read-only mapping); matched against a namespace's labels.
    managed_jobs_namespace_selector: Mapping[str, Any] = field(
        default_factory=lambda: _default_selector(DEFAULT_NAMESPACE), hash=False, compare=False)
    #: None when the ``DisableWaitForPodsReady`` gate is on.
    wait_for_pods_ready: WaitForPodsReady | None = field(default_factory=WaitForPodsReady)
    fair_sharing: FairSharing | None = None
    admission_fair_sharing: AdmissionFairSharing | None = None
    integrations: Integrations = field(default_factory=Integrations)
    resources: Resources | None = None
    object_retention: WorkloadRetention = field(default_factory=WorkloadRetention)
    feature_gates: KueueFeatureGates = DEFAULT_GATES
    #: Where the configuration came from, for messages ("the shipped configuration", a file name).
    source: str = "Kueue's shipped configuration"

    def gate(self, name: str) -> bool:
        return self.feature_gates.enabled(name)

    def manages(self, group: str, kind: str) -> bool:
        """Whether Kueue's integration for jobs of this kind is enabled (``integrations.frameworks``)."""
        framework = FRAMEWORK_OF_KIND.get((group, kind))
        return framework is not None and framework in self.integrations.frameworks

    def manages_owner(self, api_version: str, kind: str) -> bool:
        """``getJobTypeForOwner`` is not nil: an owner reference to the job type of an enabled integration, or
        of an external framework (``Kind.version.group``), any kind jobsetctl models or not."""
        if (api_version, kind) in (JOB_TYPE_OF_FRAMEWORK.get(name) for name in self.integrations.frameworks):
            return True
        group, _, version = api_version.rpartition("/")
        return f"{kind}.{version}.{group}" in self.integrations.external_frameworks


#: What Kueue runs with when the user gives no configuration: the release manifests' file.
SHIPPED: Final = KueueConfiguration(integrations=Integrations(frameworks=SHIPPED_FRAMEWORKS))


# ---- parsing --------------------------------------------------------------------------------------

#: Top-level keys of the v1beta2 type (``Configuration`` with ``ControllerManager`` inline).
_TOP_KEYS: Final = frozenset({
    "apiVersion", "kind", "namespace", "manageJobsWithoutQueueName", "managedJobsNamespaceSelector",
    "internalCertManagement", "waitForPodsReady", "clientConnection", "integrations", "multiKueue", "fairSharing",
    "admissionFairSharing", "resources", "featureGates", "objectRetentionPolicies", "visibilityServer",
    "webhook", "leaderElection", "metrics", "health", "pprofBindAddress", "controller", "tls",
})
_GO_DURATION: Final = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS: Final = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    at: Path
    message: str


class _Reader:
    def __init__(self) -> None:
        self.problems: list[ConfigProblem] = []

    def error(self, at: Path, message: str) -> None:
        self.problems.append(ConfigProblem(at, message))

    def mapping(self, value: Any, at: Path, keys: frozenset[str] | None) -> dict[str, Any] | None:
        if value is None:
            return None
        if not isinstance(value, dict):
            self.error(at, f"{path_string(at)}: expected an object, got {_shape(value)}")
            return None
        if keys is not None:
            for key in value:
                if key not in keys:
                    self.error((*at, key), f'strict decoding error: unknown field "{path_string((*at, key))}"')
        return value

    def boolean(self, value: Any, at: Path, default: bool) -> bool:
        if value is None:
            return default
        if not isinstance(value, bool):
            self.error(at, f"{path_string(at)}: expected true or false, got {_shape(value)}")
            return default
        return value

    def integer(self, value: Any, at: Path) -> int | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.error(at, f"{path_string(at)}: expected an integer, got {_shape(value)}")
            return None
        if not -(2**31) <= value < 2**31:
            self.error(at, f"{path_string(at)}: {value} does not fit an int32")
            return None
        return value

    def string(self, value: Any, at: Path) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str):
            self.error(at, f"{path_string(at)}: expected a string, got {_shape(value)}")
            return None
        return value

    def strings(self, value: Any, at: Path) -> tuple[str, ...] | None:
        if value is None:
            return None
        if not isinstance(value, list):
            self.error(at, f"{path_string(at)}: expected a list of strings, got {_shape(value)}")
            return None
        out = []
        for index, item in enumerate(value):
            text = self.string(item, (*at, index))
            if text is not None:
                out.append(text)
        return tuple(out)

    def duration(self, value: Any, at: Path) -> float | None:
        """A ``metav1.Duration`` (Go ``time.ParseDuration`` text); negative values parse (validation decides)."""
        if value is None:
            return None
        seconds = go_duration(value)
        if seconds is None:
            self.error(at, f"{path_string(at)}: time: invalid duration {_quoted(value)}")
        return seconds


def go_duration(value: Any) -> float | None:
    """Seconds of a Go duration string (``90s``, ``1h30m``, ``-5m``, ``0``), or None when it is not one."""
    if not isinstance(value, str) or not value:
        return None
    text = value
    sign = 1.0
    if text[0] in "+-":
        sign = -1.0 if text[0] == "-" else 1.0
        text = text[1:]
    if text == "0":
        return 0.0
    if not text:
        return None
    total, pos = 0.0, 0
    for match in _GO_DURATION.finditer(text):
        if match.start() != pos or match.group(1) in ("", "."):
            return None
        total += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        pos = match.end()
    return sign * total if pos == len(text) else None


def _shape(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "a string" if isinstance(value, str) else "null"


def _quoted(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


def parse_configuration(data: Any, source: str = "") -> tuple[KueueConfiguration, list[ConfigProblem]]:
    """A Configuration document (a mapping) with Kueue's defaults applied, and what is wrong with it.

    ``apiVersion`` and ``kind`` may be left out (a Scenario's ``spec.kueue.configuration`` is the body
    alone); when present they must be ``config.kueue.x-k8s.io/v1beta2`` and ``Configuration``.
    """
    reader = _Reader()
    top = reader.mapping(data if data is not None else {}, (), _TOP_KEYS) or {}
    api_version = top.get("apiVersion")
    if api_version is not None and api_version != API_VERSION:
        hint = " (v1beta1 Configurations are converted by Kueue; write v1beta2)" if api_version == \
            "config.kueue.x-k8s.io/v1beta1" else ""
        reader.error(("apiVersion",), f"apiVersion: Unsupported value: {_quoted(api_version)}: supported values: "
                                      f'"{API_VERSION}"{hint}')
    kind = top.get("kind")
    if kind is not None and kind != KIND:
        reader.error(("kind",), f'kind: Unsupported value: {_quoted(kind)}: supported values: "{KIND}"')

    gates = DEFAULT_GATES
    raw_gates = reader.mapping(top.get("featureGates"), ("featureGates",), None)
    if raw_gates is not None:
        try:
            gates = parse_kueue_gates(raw_gates)
        except KueueGateError as exc:
            reader.error(("featureGates",), f"featureGates: Invalid value: {_go_map(raw_gates)}: {exc}")

    namespace = reader.string(top.get("namespace"), ("namespace",)) or DEFAULT_NAMESPACE
    selector_raw = reader.mapping(top.get("managedJobsNamespaceSelector"), ("managedJobsNamespaceSelector",),
                                  frozenset({"matchLabels", "matchExpressions"}))
    selector = _freeze(selector_raw) if selector_raw is not None else _default_selector(namespace)

    config = KueueConfiguration(
        namespace=namespace,
        manage_jobs_without_queue_name=reader.boolean(top.get("manageJobsWithoutQueueName"),
                                                      ("manageJobsWithoutQueueName",), False),
        managed_jobs_namespace_selector=selector,
        wait_for_pods_ready=None if gates.enabled("DisableWaitForPodsReady") else _wait_for_pods_ready(reader, top),
        fair_sharing=_fair_sharing(reader, top),
        admission_fair_sharing=_admission_fair_sharing(reader, top),
        integrations=_integrations(reader, top),
        resources=_resources(reader, top, gates),
        object_retention=_retention(reader, top),
        feature_gates=gates,
        source=source or "the Kueue configuration",
    )
    return config, reader.problems


def _wait_for_pods_ready(reader: _Reader, top: dict[str, Any]) -> WaitForPodsReady:
    at: Path = ("waitForPodsReady",)
    raw = reader.mapping(top.get("waitForPodsReady"), at,
                         frozenset({"timeout", "blockAdmission", "requeuingStrategy", "recoveryTimeout"})) or {}
    timeout = reader.duration(raw.get("timeout"), (*at, "timeout"))
    if timeout is None or timeout == 0:
        timeout = DEFAULT_WAIT_FOR_PODS_READY_TIMEOUT  # defaulting replaces a zero timeout
    elif timeout < 0:
        reader.error((*at, "timeout"), invalid((*at, "timeout"), raw.get("timeout"), "must be greater than or equal to 0"))
    recovery = reader.duration(raw.get("recoveryTimeout"), (*at, "recoveryTimeout"))
    if recovery is not None and recovery < 0:
        reader.error((*at, "recoveryTimeout"), invalid((*at, "recoveryTimeout"), raw.get("recoveryTimeout"),
                                                       "must be greater than or equal to 0"))
    strategy_at: Path = (*at, "requeuingStrategy")
    strategy = reader.mapping(raw.get("requeuingStrategy"), strategy_at, frozenset({
        "timestamp", "backoffLimitCount", "backoffBaseSeconds", "backoffMaxSeconds"})) or {}
    timestamp = reader.string(strategy.get("timestamp"), (*strategy_at, "timestamp"))
    if timestamp is not None and timestamp not in REQUEUING_TIMESTAMPS:
        reader.error((*strategy_at, "timestamp"), not_supported((*strategy_at, "timestamp"), timestamp,
                                                                list(REQUEUING_TIMESTAMPS)))
        timestamp = None
    numbers: dict[str, int | None] = {}
    for key in ("backoffLimitCount", "backoffBaseSeconds", "backoffMaxSeconds"):
        value = reader.integer(strategy.get(key), (*strategy_at, key))
        if value is not None and value < 0:
            reader.error((*strategy_at, key), invalid((*strategy_at, key), value, "must be greater than or equal to 0"))
        numbers[key] = value
    base, most = numbers["backoffBaseSeconds"], numbers["backoffMaxSeconds"]
    return WaitForPodsReady(
        timeout=timeout,
        block_admission=reader.boolean(raw.get("blockAdmission"), (*at, "blockAdmission"), False),
        recovery_timeout=timeout if recovery is None else recovery,
        requeuing_strategy=RequeuingStrategy(
            timestamp=timestamp or "Eviction",
            backoff_limit_count=numbers["backoffLimitCount"],
            # cmp.Or: an explicit 0 is replaced by the default too.
            backoff_base_seconds=base or DEFAULT_BACKOFF_BASE_SECONDS,
            backoff_max_seconds=most or DEFAULT_BACKOFF_MAX_SECONDS,
        ),
    )


def _fair_sharing(reader: _Reader, top: dict[str, Any]) -> FairSharing | None:
    at: Path = ("fairSharing",)
    raw = reader.mapping(top.get("fairSharing"), at, frozenset({"preemptionStrategies"}))
    if raw is None:
        return None
    strategies = reader.strings(raw.get("preemptionStrategies"), (*at, "preemptionStrategies")) or ()
    where: Path = (*at, "preemptionStrategies")
    if not strategies:
        reader.error(where, required(where, "must be specified"))
    elif strategies not in PREEMPTION_STRATEGY_SETS:
        reader.error(where, not_supported(where, list(strategies), [",".join(s) for s in PREEMPTION_STRATEGY_SETS]))
    return FairSharing(strategies or PREEMPTION_STRATEGY_SETS[2])


def _admission_fair_sharing(reader: _Reader, top: dict[str, Any]) -> AdmissionFairSharing | None:
    at: Path = ("admissionFairSharing",)
    raw = reader.mapping(top.get("admissionFairSharing"), at,
                         frozenset({"usageHalfLifeTime", "usageSamplingInterval", "resourceWeights"}))
    if raw is None:
        return None
    half_life = reader.duration(raw.get("usageHalfLifeTime"), (*at, "usageHalfLifeTime")) or 0.0
    if half_life < 0:
        reader.error((*at, "usageHalfLifeTime"), invalid((*at, "usageHalfLifeTime"), raw.get("usageHalfLifeTime"),
                                                         "must be greater than or equal to 0"))
    interval = reader.duration(raw.get("usageSamplingInterval"), (*at, "usageSamplingInterval"))
    if interval is None or interval == 0:
        interval = DEFAULT_USAGE_SAMPLING_INTERVAL
    elif interval < 0:
        # Quirk (validation.go): the error shows usageHalfLifeTime's value at usageSamplingInterval's path.
        reader.error((*at, "usageSamplingInterval"), invalid((*at, "usageSamplingInterval"),
                                                             raw.get("usageHalfLifeTime", "0s"), "must be greater than 0"))
    weights: list[tuple[str, float]] = []
    raw_weights = reader.mapping(raw.get("resourceWeights"), (*at, "resourceWeights"), None) or {}
    for name, value in raw_weights.items():
        where: Path = (*at, "resourceWeights", name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            reader.error(where, f"{path_string(where)}: expected a number, got {_shape(value)}")
            continue
        if value < 0:
            # afsResourceWeightsPath.Key(name): the key in brackets whatever it looks like; the bad value
            # upstream shows is the whole map.
            reader.error(where, invalid(f"admissionFairSharing.resourceWeights[{name}]", raw_weights,
                                        "must be greater than or equal to 0"))
        weights.append((name, float(value)))
    return AdmissionFairSharing(half_life, interval, tuple(weights))


def _integrations(reader: _Reader, top: dict[str, Any]) -> Integrations:
    at: Path = ("integrations",)
    raw = reader.mapping(top.get("integrations"), at,
                         frozenset({"frameworks", "externalFrameworks", "labelKeysToCopy"})) or {}
    frameworks = reader.strings(raw.get("frameworks"), (*at, "frameworks")) or DEFAULT_FRAMEWORKS
    seen: set[str] = set()
    for index, name in enumerate(frameworks):
        where: Path = (*at, "frameworks", index)
        if name not in BUILTIN_FRAMEWORKS:
            reader.error(where, not_supported(where, name, list(BUILTIN_FRAMEWORKS)))
        elif name in seen:
            reader.error(where, duplicate(where, name))
        seen.add(name)
    return Integrations(
        frameworks=frameworks,
        external_frameworks=reader.strings(raw.get("externalFrameworks"), (*at, "externalFrameworks")) or (),
        label_keys_to_copy=reader.strings(raw.get("labelKeysToCopy"), (*at, "labelKeysToCopy")) or (),
    )


def _resources(reader: _Reader, top: dict[str, Any], gates: KueueFeatureGates) -> Resources | None:
    from jobsetctl.kube.quantity import QuantityError, parse_quantity

    at: Path = ("resources",)
    raw = reader.mapping(top.get("resources"), at, frozenset({
        "quotaCheckStrategy", "excludeResourcePrefixes", "transformations", "deviceClassMappings"}))
    if raw is None:
        return None
    prefixes = reader.strings(raw.get("excludeResourcePrefixes"), (*at, "excludeResourcePrefixes")) or ()
    strategy = reader.string(raw.get("quotaCheckStrategy"), (*at, "quotaCheckStrategy"))
    if strategy is not None and gates.enabled("QuotaCheckStrategy"):
        where: Path = (*at, "quotaCheckStrategy")
        if prefixes and strategy == "IgnoreUndeclared":
            reader.error(where, invalid(where, strategy,
                                        "excludeResourcePrefixes is not allowed when quotaCheckStrategy is IgnoreUndeclared"))
        if strategy not in QUOTA_CHECK_STRATEGIES:
            reader.error(where, not_supported(where, strategy, list(QUOTA_CHECK_STRATEGIES)))
    transformations: list[ResourceTransformation] = []
    inputs: set[str] = set()
    raw_list = raw.get("transformations")
    if raw_list is not None and not isinstance(raw_list, list):
        reader.error((*at, "transformations"), f"resources.transformations: expected a list, got {_shape(raw_list)}")
        raw_list = []
    for index, item in enumerate(raw_list or []):
        item_at: Path = (*at, "transformations", index)
        entry = reader.mapping(item, item_at, frozenset({"input", "strategy", "multiplyBy", "outputs"})) or {}
        name = reader.string(entry.get("input"), (*item_at, "input")) or ""
        how = reader.string(entry.get("strategy"), (*item_at, "strategy")) or "Retain"
        if how not in TRANSFORMATION_STRATEGIES:
            reader.error((*item_at, "strategy"), not_supported((*item_at, "strategy"), how, list(TRANSFORMATION_STRATEGIES)))
        if name in inputs:
            reader.error((*item_at, "input"), duplicate((*item_at, "input"), name))
        inputs.add(name)
        outputs: list[tuple[str, Fraction]] = []
        for resource, amount in (reader.mapping(entry.get("outputs"), (*item_at, "outputs"), None) or {}).items():
            try:
                outputs.append((resource, parse_quantity(amount)))
            except QuantityError as exc:
                reader.error((*item_at, "outputs", resource), f"{path_string((*item_at, 'outputs', resource))}: {exc}")
        transformations.append(ResourceTransformation(
            name, how, reader.string(entry.get("multiplyBy"), (*item_at, "multiplyBy")) or "", tuple(outputs)))
    return Resources(strategy, prefixes, tuple(transformations))


def _retention(reader: _Reader, top: dict[str, Any]) -> WorkloadRetention:
    raw = reader.mapping(top.get("objectRetentionPolicies"), ("objectRetentionPolicies",), frozenset({"workloads"})) or {}
    at: Path = ("objectRetentionPolicies", "workloads")
    workloads = reader.mapping(raw.get("workloads"), at, frozenset({"afterFinished", "afterDeactivatedByKueue"})) or {}
    values: dict[str, float | None] = {}
    for key in ("afterFinished", "afterDeactivatedByKueue"):
        seconds = reader.duration(workloads.get(key), (*at, key))
        if seconds is not None and seconds < 0:
            reader.error((*at, key), invalid((*at, key), workloads.get(key), "must be greater than or equal to 0"))
        values[key] = seconds
    return WorkloadRetention(values["afterFinished"], values["afterDeactivatedByKueue"])


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def _go_map(value: Mapping[str, Any]) -> str:
    """Go's ``%v`` of a ``map[string]bool``: keys sorted, ``map[A:true B:false]``."""
    return "map[" + " ".join(f"{k}:{str(v).lower() if isinstance(v, bool) else v}" for k, v in sorted(value.items())) + "]"


def thaw(value: Any) -> Any:
    """A plain dict/list copy of a frozen structure (a selector, for the label matcher)."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thaw(v) for v in value]
    return value


def load_kueue_config(path: str) -> KueueConfiguration:
    """``--kueue-config FILE``: the file's Configuration, or a one-line usage error at ``file:line:col``."""
    from jobsetctl.loader.yamlload import load_settings
    from jobsetctl.status import UsageError

    documents = load_settings(path, f"--kueue-config {path}: ", "cannot read: ", "not UTF-8 text")
    documents = [d for d in documents if d.value is not None]
    if len(documents) != 1:
        raise UsageError(f"{path}:1:1: a Kueue configuration file holds exactly one Configuration document "
                         f"(found {len(documents)})")
    document = documents[0]
    if not isinstance(document.value, dict):
        raise UsageError(f"{path}:1:1: a Kueue Configuration is a mapping")
    config, config_problems = parse_configuration(document.value, source=path)
    if config_problems:
        first_problem = config_problems[0]
        line, column = document.position(first_problem.at)
        raise UsageError(f"{path}:{line}:{column}: {first_problem.message}")
    return replace(config, source=path)
