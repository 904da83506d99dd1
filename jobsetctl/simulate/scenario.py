"""The Scenario file of ``jobsetctl simulate``: node pools, what is submitted when, faults and operator actions.

A Scenario is a YAML document (``apiVersion: jobsetctl.dev/v1alpha1``, ``kind: Scenario``)::

    metadata: {name: two-teams}
    spec:
      kubernetesVersion: "1.37"        # optional; --kubernetes-version wins
      featureGates: {WorkloadWithJob: true}
      until: 24h                        # stop time; default: when nothing is left to happen
      nodes: [{name: gpu, count: 16, capacity: {...}, labels: {...}, taints: [...],
               topology: [{key: topology.example.com/block, count: 2}, ...], topologyOffset: 0}]
      submit: [{at: 0s, files: [team-a.yaml]}, {at: 30m, objects: [...]}]
      actions: [{at: 2h, failNode: gpu-3}, {at: 3h, failPod: {namespace: default, name: js-workers-0-0}},
                {at: 4h, suspend: {kind: JobSet, namespace: default, name: js}},  # resume, delete
                {at: 5h, patch: {kind: PodGroup, name: pg, merge: {spec: {schedulingPolicy: {gang: {minCount: 2}}}}}}]
      kueue:                            # Kueue runs (also with a ClusterQueue, or a job naming a queue)
        configuration: {waitForPodsReady: {timeout: 10m}}   # Kueue's Configuration; wins over --kueue-config
        admissionChecks: [{name: prov, delay: 5m, state: Ready}]   # how simulated checks answer

Its parser (:mod:`jobsetctl.simulate.scenario_parse`) reads it strictly: an unknown key, a value of the wrong type, a bad or negative duration, an
action without exactly one verb are diagnostics with ``file:line:column`` and a ``scenario-*`` rule, and the
simulation does not start (exit 1). So are times that are infinite, NaN or beyond a year, and pools of more
than 10,000 nodes in all (``simulation-too-large``; :mod:`jobsetctl.simulate.limits` has every limit). The rules are defined here (register this module in
``jobsetctl.rules.registry.RULE_MODULES``). The Kubernetes version and feature gates are validated by the
runner: an unsupported version or an unknown gate is a usage error (exit 2), as on the command line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jobsetctl.diagnostics import Diagnostic, Layer, Severity
from jobsetctl.kube.field import Path
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define

if TYPE_CHECKING:
    from jobsetctl.kueue.config import KueueConfiguration

SCENARIO_API_VERSION = "jobsetctl.dev/v1alpha1"
_SPEC = "simulate: the Scenario file (jobsetctl simulate --help)"

E = Severity.ERROR
UNKNOWN_FIELD = define("scenario-unknown-field", Layer.INPUT, E, "A Scenario has a key it does not define.", spec=_SPEC)
INVALID_TYPE = define(
    "scenario-invalid-type", Layer.INPUT, E, "A Scenario value has the wrong type (a list for a mapping ...).", spec=_SPEC
)
REQUIRED = define("scenario-required", Layer.INPUT, E, "A Scenario lacks a required field.", spec=_SPEC)
INVALID_VALUE = define(
    "scenario-invalid-value", Layer.INPUT, E,
    "A Scenario value is out of range or malformed (a count, name, label, quantity, kind).", spec=_SPEC,
)
INVALID_DURATION = define(
    "scenario-invalid-duration", Layer.INPUT, E, "A Scenario time (at, until) is not a non-negative duration.",
    spec=_SPEC,
)
MISSING_FILE = define(
    "scenario-missing-file", Layer.INPUT, E, "A file a Scenario submits does not exist or cannot be read.", spec=_SPEC
)
INVALID_ACTION = define(
    "scenario-invalid-action", Layer.INPUT, E,
    "A Scenario action does not name exactly one of failNode, failPod, suspend, resume, delete, patch.", spec=_SPEC,
)
DUPLICATE_NODE = define(
    "scenario-duplicate-node", Layer.INPUT, E, "Two node pools, or a pool and a Node manifest, define the same node.",
    spec=_SPEC,
)
MULTIPLE = define("scenario-multiple", Layer.INPUT, E, "The inputs hold more than one Scenario.", spec=_SPEC)
API_VERSION = define(
    "scenario-api-version", Layer.INPUT, E, f"A Scenario's apiVersion is not {SCENARIO_API_VERSION}.", spec=_SPEC
)
NODES_FILE = define(
    "scenario-nodes-file", Layer.INPUT, E, "The --nodes file holds something other than v1 Nodes.", spec=_SPEC
)

#: Verbs of an action, in the order they are documented.
ACTION_VERBS = ("failNode", "failPod", "suspend", "resume", "delete", "patch")
#: Kinds that ``suspend``/``resume`` act on (they set ``spec.suspend``).
SUSPENDABLE_KINDS = ("JobSet", "TrainJob", "Job")
#: Kinds an action may name without an apiVersion, and their API group.
KIND_GROUPS: dict[str, str] = {
    "JobSet": "jobset.x-k8s.io",
    "TrainJob": "trainer.kubeflow.org",
    "Job": "batch",
    "Pod": "",
    "Workload": "scheduling.k8s.io",
    "PodGroup": "scheduling.k8s.io",
    "CompositePodGroup": "scheduling.k8s.io",
    "Service": "",
    "ConfigMap": "",
    "Secret": "",
    "PersistentVolumeClaim": "",
    "Node": "",
    "PriorityClass": "scheduling.k8s.io",
}
CLUSTER_SCOPED_KINDS = frozenset({"Node", "PriorityClass", "ClusterTrainingRuntime"})
TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
#: kubelet's default ``maxPods``: a pool that does not give ``pods`` capacity gets this many pod slots.
DEFAULT_MAX_PODS = "110"




# ---- the model ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TopologyLevel:
    """One level of a pool's topology: ``count`` domains per domain of the level above."""

    key: str
    count: int


@dataclass(frozen=True, slots=True)
class NodePool:
    name: str
    count: int = 1
    capacity: dict[str, str | int | float] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[dict[str, str], ...] = ()
    topology: tuple[TopologyLevel, ...] = ()
    topology_offset: int = 0


@dataclass(frozen=True, slots=True)
class FileRef:
    """A path in ``submit[].files``, as written and resolved against the Scenario's directory."""

    text: str
    path: str
    at: Path


@dataclass(slots=True)
class Submission:
    """What arrives at one time: files (loaded by the runner) and inline objects (already records)."""

    at: float
    index: int
    files: list[FileRef] = field(default_factory=list)
    records: list[ObjectRecord] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ObjectTarget:
    """The object an action names. ``namespace`` is '' for cluster-scoped kinds."""

    group: str
    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"


@dataclass(frozen=True, slots=True)
class PodTarget:
    """``failPod``: a pod by ``name`` (exact, else ``name-`` + generated suffix) or ``namePrefix``."""

    namespace: str
    name: str | None = None
    name_prefix: str | None = None

    def describe(self) -> str:
        if self.name is not None:
            return f'pod "{self.namespace}/{self.name}"'
        return f'pod with name prefix "{self.namespace}/{self.name_prefix}"'


@dataclass(frozen=True, slots=True)
class Action:
    at: float
    index: int
    verb: str
    node: str | None = None
    pod: PodTarget | None = None
    target: ObjectTarget | None = None
    #: ``patch``: the JSON merge patch (RFC 7386) applied to the target, as ``kubectl patch --type merge``.
    merge: dict[str, Any] | None = None

    def describe(self) -> str:
        if self.verb == "failNode":
            return f"failNode {self.node}"
        if self.verb == "failPod" and self.pod is not None:
            return f"failPod {self.pod.describe()}"
        return f"{self.verb} {self.target}"


@dataclass(slots=True)
class Scenario:
    name: str
    file: str
    record: ObjectRecord
    kubernetes_version: str | None = None
    feature_gates: dict[str, Any] = field(default_factory=dict)
    until: float | None = None
    nodes: list[NodePool] = field(default_factory=list)
    submissions: list[Submission] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    #: ``spec.kueue`` as written (a mapping) when present: Kueue runs in the simulation.
    kueue: dict[str, Any] | None = None
    #: ``spec.kueue.configuration``, parsed with Kueue's defaults (:mod:`jobsetctl.kueue.config`), if given.
    kueue_configuration: KueueConfiguration | None = None
    #: ``spec.kueue.admissionChecks``: how each simulated admission check answers (name, delay, state, message).
    kueue_admission_checks: list[dict[str, Any]] = field(default_factory=list)

    # Where the version and the gates were written, for usage errors that point into the file: looked up when
    # such an error is reported, since a position costs a parse of the Scenario's text (4 MB for 5,000 nodes).
    @property
    def kubernetes_version_at(self) -> tuple[int, int]:
        return self.record.position(("spec", "kubernetesVersion"))

    @property
    def feature_gates_at(self) -> tuple[int, int]:
        return self.record.position(("spec", "featureGates"))


#: How a simulated admission check can answer (``AdmissionCheckState.state``).
CHECK_STATES = ["Ready", "Retry", "Rejected"]


def parse_scenario(record: ObjectRecord, *, partial: bool = False) -> tuple[Scenario | None, list[Diagnostic]]:
    """A Scenario from its loaded document, or None and the diagnostics that explain why not
    (:func:`jobsetctl.simulate.scenario_parse.parse_scenario`, which imports this module's model)."""
    from jobsetctl.simulate import scenario_parse

    return scenario_parse.parse_scenario(record, partial=partial)
