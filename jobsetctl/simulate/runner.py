"""Run a simulation: build the fake cluster, create the nodes, submit objects and apply actions on the
virtual clock, stop, and collect what the reports need.

Time (issue #4; anchors.md §3): everything happens on the fake cluster's virtual clock. Submissions and
actions are clock timers scheduled before the run, in time order; at one instant submissions come
before actions, each in file order, and the controllers settle after each (``Manager.run``). The run
stops at ``until`` when one is given; otherwise when nothing is left to happen, that is:

* no timer is left; or
* nothing has been written for :data:`QUIET_WINDOW` of virtual time, no submission or action is pending,
  and no pod is running or terminating (what is left are scheduler retries of pods that cannot fit); or
* :data:`DEFAULT_HORIZON` after the last submission or action (something runs forever: give ``--until``);
* or, whatever ``until`` says, once the run has recorded :func:`~jobsetctl.simulate.limits.event_limit`
  events (``stopReason: limit``): a JobSet restarting every second would otherwise take hours to
  simulate a month. The run ends where it stopped, not at ``until``.

The objects in the store (nodes apart) are counted as they are created: past
:data:`~jobsetctl.simulate.limits.MAX_OBJECTS` the run is abandoned with :class:`ObjectLimitExceeded`
(which names the owners of the runaway object), rather than growing without bound.

Before time zero the cluster gets its nodes (Scenario pools, ``--nodes``), the context's cluster objects
(``--context``: PriorityClasses, Kueue's queues and flavors, runtimes) and, when a TrainJob is submitted, the
ClusterTrainingRuntimes Kubeflow Trainer ships (:func:`jobsetctl.context.install`, as ``render``).

Determinism: the cluster's randomness comes from the seed only, timers break ties by scheduling order,
and nothing here iterates over unordered sets, so one seed gives one timeline.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jobsetctl.context import ContextFiles, install
from jobsetctl.diagnostics import Diagnostic
from jobsetctl.fakecluster.cluster import ClusterOptions, FakeCluster
from jobsetctl.fakecluster.events import KubeEvent, SimEvent
from jobsetctl.gctune import paused
from jobsetctl.kinds.interface import AdmissionContext
from jobsetctl.kube.featuregates import FeatureGates, parse_feature_gates
from jobsetctl.kube.jsontree import copy_tree
from jobsetctl.kube.versions import DEFAULT_KUBE_VERSION, KubeVersion
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.loader.sources import Source
from jobsetctl.simulate import access, limits
from jobsetctl.simulate.actions import apply_action
from jobsetctl.simulate.final import final_states
from jobsetctl.simulate.gates import needed_gates, turned_on
from jobsetctl.simulate.inputs import Inputs
from jobsetctl.simulate.kueue import kueue_busy, kueue_run, kueue_settings
from jobsetctl.simulate.ledger import Ledger
from jobsetctl.simulate.nodes import is_node, normalize_node, pool_nodes
from jobsetctl.simulate.scenario import Action
from jobsetctl.status import UsageError

if TYPE_CHECKING:
    from jobsetctl.kueue.config import KueueConfiguration
    from jobsetctl.simulate.progress import RunProgress

#: Virtual seconds without any write after which retries alone do not keep a run going.
QUIET_WINDOW = 3600.0
#: Without ``until``, a run stops this long after the last submission or action at the latest.
DEFAULT_HORIZON = 30 * 86400.0
#: Pool name of nodes from ``--nodes`` and of Node manifests among the inputs (trace processes).
NODES_FILE_POOL = "nodes"
INPUT_NODES_POOL = "inputs"


@dataclass(frozen=True, slots=True)
class SimulateOptions:
    """Plain option values of ``jobsetctl simulate`` (the CLI builds this; tests too)."""

    paths: list[str]
    nodes_file: str | None = None
    until: float | None = None
    seed: int = 0
    #: ``--kubernetes-version``; None: the Scenario's, else the default release.
    kubernetes_version: str | None = None
    #: ``--feature-gates`` as given ("A=true,B=false"); overrides the Scenario's gates one by one.
    feature_gates: str | None = None
    #: ``--max-objects``: the guard of :mod:`jobsetctl.simulate.limits`.
    max_objects: int = limits.MAX_OBJECTS
    #: ``--kueue-config``: Kueue's Configuration file (a Scenario's ``spec.kueue.configuration`` wins).
    kueue_config: str | None = None
    #: ``--context`` and the configuration's ``context:``: files whose cluster objects the cluster holds before
    #: time zero (:mod:`jobsetctl.context`).
    context: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Plan:
    """Everything decided before the run."""

    inputs: Inputs
    version: KubeVersion
    gates: FeatureGates
    #: Gates simulate turned on because the inputs need them (not set by the user).
    enabled_gates: list[str]
    until: float | None
    max_objects: int = limits.MAX_OBJECTS
    #: Kueue's configuration when Kueue runs, else None: :func:`kueue_runs`.
    kueue: KueueConfiguration | None = None
    #: The context (``--context``): its files, and the cluster objects created before time zero.
    context: ContextFiles | None = None
    installed: list[dict[str, Any]] = field(default_factory=list)


@dataclass(slots=True)
class SimulationResult:
    name: str
    version: KubeVersion
    gates: FeatureGates
    enabled_gates: list[str]
    until: float | None
    end_time: float
    #: "until", "done" (no timer left), "idle" (only retries left), "horizon" or "limit" (too many events).
    stop_reason: str
    events: list[SimEvent]
    kube_events: list[KubeEvent]
    final: list[dict[str, Any]]
    ledger: Ledger
    #: Submitted objects that admission refused, placed in their files like validate's diagnostics.
    rejections: list[Diagnostic] = field(default_factory=list)
    seed: int = 0
    #: The scheduler's per-group records (admission time, domain, why it waits), when it keeps them.
    group_records: Any = None
    #: Invariant checks executed, when the cluster checked them (JOBSETCTL_CHECK_INVARIANTS), else None.
    invariant_checks: int | None = None
    #: What Kueue leaves for the reports (:mod:`jobsetctl.simulate.kueue`), None when Kueue did not run.
    kueue: Any = None
    #: The number of timeline events at which the run would have stopped (``stopReason: limit``).
    event_limit: int = limits.MAX_EVENTS
    #: The cluster as the run left it (the verdicts on workloads that never started read its nodes and
    #: pending pods); None for results made by hand.
    cluster: FakeCluster | None = field(default=None, repr=False)

    @property
    def rejected(self) -> int:
        """Objects refused for good (the run's outcome is ``failed``); a follower pod the JobSet pod webhook
        refuses until its leader is scheduled is retried by the Job controller and is not counted."""
        return sum(1 for e in self.events if e.event == "Rejected" and not e.transient)


def plan(inputs: Inputs, options: SimulateOptions) -> Plan:
    """Version, gates and stop time: command line over Scenario over defaults. Usage errors raise."""
    scenario = inputs.scenario
    version_text = options.kubernetes_version or (scenario.kubernetes_version if scenario else None)
    try:
        version = KubeVersion.parse(version_text) if version_text else DEFAULT_KUBE_VERSION
    except UsageError as exc:
        if options.kubernetes_version is None and scenario is not None:
            line, column = scenario.kubernetes_version_at
            raise UsageError(f"{scenario.file}:{line}:{column}: spec.kubernetesVersion: {exc}") from None
        raise
    spec: dict[str, object] = {}
    if scenario is not None and scenario.feature_gates:
        try:
            parse_feature_gates(scenario.feature_gates, version)
        except UsageError as exc:
            line, column = scenario.feature_gates_at
            raise UsageError(f"{scenario.file}:{line}:{column}: spec.featureGates: {exc}") from None
        spec.update(scenario.feature_gates)
    if options.feature_gates:
        for name, value in parse_feature_gates(options.feature_gates, version).explicit.items():
            spec[name] = value
    explicit = parse_feature_gates(spec, version)
    objects = [record.obj for record in inputs.all_records()]
    gates, enabled = turned_on(explicit, needed_gates(objects, version))
    until = options.until if options.until is not None else (scenario.until if scenario else None)
    config = kueue_configuration(inputs, options)
    context, installed = _context(inputs, options, AdmissionContext(version, gates, kueue=config))
    kueue = config if kueue_runs(inputs, config, [*objects, *installed]) else None
    return Plan(inputs, version, gates, enabled, until, options.max_objects, kueue, context, installed)


def _context(inputs: Inputs, options: SimulateOptions,
             ctx: AdmissionContext) -> tuple[ContextFiles | None, list[dict[str, Any]]]:
    """The context's files (the inputs' own files left out) and the cluster objects among them."""
    if not options.context:
        return None, []
    files = {record.file for record in inputs.all_records()}
    files.update(record.file for record in inputs.node_records)
    if inputs.scenario is not None:
        files.add(inputs.scenario.file)
    sources = [Source(name, name) for name in sorted(files)]
    context = ContextFiles.discover(options.context, sources, ctx, explicit=True)
    return context, context.cluster_objects()


def kueue_configuration(inputs: Inputs, options: SimulateOptions) -> KueueConfiguration:
    """The Scenario's ``spec.kueue.configuration``, else ``--kueue-config``, else the one Kueue ships."""
    from jobsetctl.kueue.config import SHIPPED, load_kueue_config

    scenario = inputs.scenario
    from_file = load_kueue_config(options.kueue_config) if options.kueue_config else None
    if scenario is not None and scenario.kueue_configuration is not None:
        return scenario.kueue_configuration
    return from_file or SHIPPED


def kueue_runs(inputs: Inputs, config: KueueConfiguration, objects: list[dict[str, Any]]) -> bool:
    """Whether Kueue runs: the Scenario has ``spec.kueue``, the inputs or the context hold a ClusterQueue
    (``objects``), or a job Kueue manages names a queue (the ``kueue.x-k8s.io/queue-name`` label). A job that
    says it is queued is held by Kueue, as ``render`` shows it (suspended, with its Workload), rather than
    started as if it were not; without its queues it waits, and the warnings before the run say why."""
    from jobsetctl.kueue.workload import group_kind, queue_name

    if inputs.scenario is not None and inputs.scenario.kueue is not None:
        return True
    return any(group_kind(obj) == ("kueue.x-k8s.io", "ClusterQueue")
               or (queue_name(obj) and config.manages(*group_kind(obj))) for obj in objects)


def settings_problems(inputs: Inputs, options: SimulateOptions) -> list[Diagnostic]:
    """The Scenario's ``kubernetesVersion`` and ``featureGates`` that the run would use and that are not
    valid, as diagnostics at their position (:func:`jobsetctl.simulate.scenario.settings_problems`):
    reported with the Scenario's other problems, in one run (:func:`plan` would raise them one at a time).
    Values the command line overrides are not used, so not checked."""
    from jobsetctl.simulate.settings import settings_problems as scenario_settings_problems

    if inputs.scenario is None:
        return []
    if options.kubernetes_version is not None:
        try:
            KubeVersion.parse(options.kubernetes_version)
        except UsageError:
            return []  # a usage error of the command line, raised by plan()
    return scenario_settings_problems(inputs.scenario, options.kubernetes_version)


class Idle(Exception):
    """Raised from the step hook to end a run that has nothing left to do."""


class EventLimit(Exception):
    """Raised from the step hook to end a run that has recorded too many events."""


@dataclass(slots=True)
class IdleDetector:
    """Tells real progress from idle retries (see the module docstring). Call :meth:`step` after each
    timer (``Manager.run``'s ``on_step``); it raises :class:`Idle` once the run has nothing left to do."""

    cluster: FakeCluster
    ledger: Ledger
    pending_user_timers: int = 0
    last_writes: int = -1
    last_progress: float = 0.0
    busy_checked_at: int = -1
    busy: bool = True
    event_limit: int = limits.MAX_EVENTS

    def user_timer_fired(self) -> None:
        """A submission or action happened: that is progress, even if it wrote nothing."""
        self.pending_user_timers -= 1
        self.last_progress = self.cluster.clock.now

    def step(self) -> None:
        if len(self.cluster.recorder.events) > self.event_limit:
            raise EventLimit
        now = self.cluster.clock.now
        if self.ledger.writes != self.last_writes:
            self.last_writes = self.ledger.writes
            self.last_progress = now
            return
        if self.pending_user_timers or now - self.last_progress < QUIET_WINDOW:
            return
        if self.busy_checked_at != self.ledger.writes:
            # Only writes change whether something runs, so one check per write count is enough.
            self.busy_checked_at = self.ledger.writes
            self.busy = _something_runs(self.cluster)
        if not self.busy:
            raise Idle


def _something_runs(cluster: FakeCluster) -> bool:
    for pod in cluster.api.iter_kind("", "Pod"):
        spec = access.spec(pod)
        status = access.status(pod)
        if spec.get("nodeName") and status.get("phase") not in ("Succeeded", "Failed"):
            return True
    if kueue_busy(cluster):
        return True
    stored: Iterable[dict[str, Any]] = cluster.api.all_objects()
    return any(access.metadata(obj).get("deletionTimestamp") for obj in stored)


def run_plan(the_plan: Plan, seed: int = 0, watch: RunProgress | None = None) -> SimulationResult:
    """Run a planned simulation to its end and collect the result; ``watch`` is told of each instant
    (the progress line on a terminal, :mod:`jobsetctl.simulate.progress`)."""
    inputs = the_plan.inputs
    extra: dict[str, Any] = {}
    if the_plan.kueue is not None:
        extra["kueue"] = kueue_settings(the_plan.kueue, inputs)
    cluster = FakeCluster(ClusterOptions(the_plan.version, the_plan.gates, seed=seed, simulate=True, extra=extra,
                                         kueue=the_plan.kueue))
    ledger = Ledger(scheduler_pods=getattr(cluster.components.get("scheduler"), "pods", None))
    cluster.api.subscribe(ledger.on_event)
    cluster.api.subscribe(limits.ObjectBudget(cluster.clock, the_plan.max_objects))
    _create_nodes(cluster, ledger, inputs)
    install(cluster.api, [record.obj for record in inputs.all_records()], the_plan.installed)
    progress = IdleDetector(cluster, ledger)
    # Per object the inputs make (issue 12) or per submitted object (Kueue's many small Workloads).
    progress.event_limit = limits.event_limit(max(limits.objects_total(inputs.all_records()),
                                                  sum(len(s.records) for s in inputs.submissions)))
    rejections: list[Diagnostic] = []
    last_user_time = 0.0

    def user_timer(callback: Callable[[], None]) -> Callable[[], None]:
        def fire() -> None:
            progress.user_timer_fired()
            callback()
        return fire

    for submission in inputs.submissions:
        progress.pending_user_timers += 1
        last_user_time = max(last_user_time, submission.at)
        cluster.clock.call_at(submission.at, user_timer(_bind(_submit, cluster, ledger, list(submission.records), rejections)))
    actions: list[Action] = sorted(inputs.scenario.actions, key=lambda a: a.at) if inputs.scenario else []
    for action in actions:
        progress.pending_user_timers += 1
        last_user_time = max(last_user_time, action.at)
        cluster.clock.call_at(action.at, user_timer(_bind(apply_action, cluster, ledger, action)))

    until = the_plan.until
    stop_reason = "until"
    on_step = progress.step
    if watch is not None:
        def on_step() -> None:
            progress.step()
            watch.step(cluster.clock.now, cluster.recorder.events)
    try:
        with paused():
            cluster.manager.run(until if until is not None else last_user_time + DEFAULT_HORIZON,
                                on_step=on_step)
        if until is None:
            stop_reason = "done" if cluster.clock.next_time() is None else "horizon"
    except Idle:
        stop_reason = "idle"
    except EventLimit:
        stop_reason = "limit"
    except limits.ObjectLimitExceeded as exc:
        exc.owners = limits.owner_chain(cluster.api, exc.obj)
        raise
    finally:
        if watch is not None:
            watch.close()
    events = list(cluster.recorder.events)
    if stop_reason == "limit":
        end_time = cluster.clock.now  # where it stopped: the chart must not show an idle stretch to until
    elif until is not None:
        end_time = until
    else:
        end_time = events[-1].time if events else 0.0
    scheduler = cluster.components.get("scheduler")
    # The end-of-run invariants (the last instant, Job accounting); raises InvariantViolation.
    checks = cluster.invariants.finish() if cluster.invariants is not None else None
    return SimulationResult(
        name=inputs.name,
        version=the_plan.version,
        gates=the_plan.gates,
        enabled_gates=list(the_plan.enabled_gates),
        until=until,
        end_time=end_time,
        stop_reason=stop_reason,
        events=events,
        kube_events=list(cluster.recorder.kube_events),
        final=final_states(cluster.api.all_objects()),
        ledger=ledger,
        rejections=rejections,
        seed=seed,
        group_records=getattr(scheduler, "group_records", None),
        invariant_checks=checks,
        kueue=kueue_run(cluster),
        event_limit=progress.event_limit,
        cluster=cluster,
    )


def after_the_end(inputs: Inputs, until: float | None) -> list[tuple[str, float, tuple[int, int] | None, str]]:
    """Submissions and actions of the Scenario timed after ``until``: they never happen. Each as
    (file, time, (line, column) of its ``at``, what it is), for a warning that says so."""
    scenario = inputs.scenario
    if until is None or scenario is None:
        return []
    late: list[tuple[str, float, tuple[int, int] | None, str]] = []
    for submission in scenario.submissions:
        if submission.at > until:
            at = ("spec", "submit", submission.index, "at")
            late.append((scenario.file, submission.at, scenario.record.position(at), f"spec.submit[{submission.index}]"))
    for action in scenario.actions:
        if action.at > until:
            at = ("spec", "actions", action.index, "at")
            late.append((scenario.file, action.at, scenario.record.position(at),
                         f"spec.actions[{action.index}] ({action.describe()})"))
    return sorted(late, key=lambda item: item[2] or (0, 0))


def _create_nodes(cluster: FakeCluster, ledger: Ledger, inputs: Inputs) -> None:
    nodes: list[tuple[str, dict[str, Any]]] = []
    if inputs.scenario is not None:
        for pool in inputs.scenario.nodes:
            nodes.extend((pool.name, node) for node in pool_nodes(pool))
    nodes.extend((NODES_FILE_POOL, normalize_node(record.obj)) for record in inputs.node_records)
    for pool_name, node in nodes:
        ledger.pools[node["metadata"]["name"]] = pool_name
        cluster.api.create(node, skip_admission=True)


def _submit(cluster: FakeCluster, ledger: Ledger, records: list[ObjectRecord], rejections: list[Diagnostic]) -> None:
    for record in records:
        source = record.obj
        md = source.get("metadata")
        shared = type(source) is dict and type(md) is dict and not is_node(source)
        if shared and isinstance(md, dict):
            # The create copies what it keeps (admission works on a copy): only the object and the metadata
            # it fills in need to be ours here; the input stays as loaded for the next run of the plan.
            obj = {**source, "metadata": dict(md)}
        else:
            obj = copy_tree(source)
        if is_node(obj):
            obj = normalize_node(obj)
            ledger.pools.setdefault(str(obj["metadata"]["name"]), INPUT_NODES_POOL)
        result = cluster.submit(obj, shared=shared)
        if result.ok:
            continue
        if result.error:
            # Not an admission rejection (the API server records those): AlreadyExists and the like.
            cluster.recorder.record_for(obj, "Rejected", reason="AlreadyExists" if "already exists" in result.error
                                        else "Invalid", message=result.error)
            continue
        rejections.extend(record.diagnostic(finding) for finding in result.findings
                          if finding.effective_severity.value == "error")


def _bind(function: Callable[..., Any], *args: Any) -> Callable[[], None]:
    """A callback with its arguments fixed now (a lambda in a loop would see the last ones)."""
    def call() -> None:
        function(*args)
    return call


def simulate(inputs: Inputs, options: SimulateOptions) -> SimulationResult:
    """Plan and run (the inputs must be free of errors)."""
    return run_plan(plan(inputs, options), options.seed)
