"""Assemble a fake cluster: API server, controllers, and (for ``simulate``) scheduler and kubelet.

``render`` builds one without scheduler and kubelet and runs the controllers to a fixed point;
``simulate`` adds the scheduler, the kubelet and node lifecycle and runs the virtual clock forward. Both
create exactly the same objects through the same code (issue #3: render is not a separate templating path).
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jobsetctl.diagnostics import Severity
from jobsetctl.fakecluster.apiserver import APIServer, WatchEvent, WatchType, WriteResult
from jobsetctl.fakecluster.clock import VirtualClock
from jobsetctl.fakecluster.events import Recorder
from jobsetctl.fakecluster.manager import Controller, Manager
from jobsetctl.jobset.podwebhook import WAITING_FOR_LEADER
from jobsetctl.kinds.interface import Object
from jobsetctl.kube.featuregates import FeatureGates
from jobsetctl.kube.versions import KubeVersion

if TYPE_CHECKING:
    from jobsetctl.fakecluster.invariants import InvariantChecker
    from jobsetctl.kueue.config import KueueConfiguration

#: Set (to anything) to check the scheduling invariants in every simulated cluster of this process.
CHECK_INVARIANTS_ENV = "JOBSETCTL_CHECK_INVARIANTS"

#: Controllers of every fake cluster, in the order they are registered (and receive events).
CONTROLLERS = (
    "jobsetctl.fakecluster.controllers.trainjob:TrainJobController",
    "jobsetctl.fakecluster.controllers.jobset:JobSetController",
    "jobsetctl.fakecluster.controllers.job:JobController",
    "jobsetctl.fakecluster.controllers.jobsetpods:JobSetPodController",
)
#: Kueue's controllers, registered when Kueue runs (``ClusterOptions.kueue``). The job reconciler creates
#: Workloads; the scheduler side (queues, admission, preemption) adds its components here.
KUEUE_CONTROLLERS: tuple[str, ...] = (
    "jobsetctl.fakecluster.controllers.kueue_job:KueueJobReconciler",
)
#: In a simulation with Kueue, the job reconciler with its admission half and Kueue's scheduler, queues
#: and Workload controller (:mod:`jobsetctl.kueue.engine`) take the place of :data:`KUEUE_CONTROLLERS`.
KUEUE_SIMULATION_CONTROLLERS: tuple[str, ...] = (
    "jobsetctl.kueue.engine.job_reconciler:JobReconciler",
    "jobsetctl.kueue.engine.controller:KueueController",
)
#: Extra components of a simulated cluster.
SIMULATION_COMPONENTS = (
    "jobsetctl.fakecluster.scheduler:Scheduler",
    "jobsetctl.fakecluster.kubelet:Kubelet",
)


@dataclass(frozen=True, slots=True)
class ClusterOptions:
    version: KubeVersion
    gates: FeatureGates
    seed: int = 0
    #: Scheduler, kubelet and node lifecycle (simulate). Without them pods stay Pending (render).
    simulate: bool = False
    #: Whether the Job controller creates Pods (render --pods; always on in simulate).
    create_pods: bool = True
    default_namespace: str = "default"
    #: Component settings keyed by component name (e.g. scheduler plugins), passed through untouched.
    extra: dict[str, Any] = field(default_factory=dict)
    #: Kueue's configuration when Kueue runs in the cluster (its webhooks and job reconciler), else None.
    kueue: KueueConfiguration | None = None


def _load(target: str) -> type[Controller]:
    module_name, _, attribute = target.partition(":")
    cls: type[Controller] = getattr(importlib.import_module(module_name), attribute)
    return cls


class FakeCluster:
    def __init__(self, options: ClusterOptions) -> None:
        from jobsetctl.fakecluster.podadmission import admit_pod

        self.options = options
        self.clock = VirtualClock()
        self.api = APIServer(
            self.clock, options.version, options.gates, seed=options.seed,
            default_namespace=options.default_namespace, pod_admission=admit_pod, kueue=options.kueue,
        )
        self.recorder = Recorder(self.clock)
        self.api.subscribe(self._record_lifecycle)
        self.api.on_rejected.append(self._record_rejection)
        self.manager = Manager(self.api, self.clock, self.recorder)
        self.components: dict[str, Controller] = {}
        kueue_controllers: tuple[str, ...] = ()
        if options.kueue is not None:
            kueue_controllers = KUEUE_SIMULATION_CONTROLLERS if options.simulate else KUEUE_CONTROLLERS
        targets = CONTROLLERS + kueue_controllers + (SIMULATION_COMPONENTS if options.simulate else ())
        for target in targets:
            controller = _load(target)(options)
            self.manager.add(controller)
            self.components[controller.name] = controller
        #: Scheduling invariants checked at every step (no over-commit, all-or-nothing gangs, preemption only
        #: of lower priority, taints respected). On when asked (the test suite asks for every run, through
        #: the environment), off otherwise: they cost time and a violation is a bug of ours, not of the input.
        self.invariants: InvariantChecker | None = None
        if options.simulate and (options.extra.get("check_invariants") or os.environ.get(CHECK_INVARIANTS_ENV)):
            from jobsetctl.fakecluster.invariants import InvariantChecker

            self.invariants = InvariantChecker(self.api, self.recorder)

    # ---- user actions ------------------------------------------------------------------------------
    def submit(self, obj: Object, *, shared: bool = False) -> WriteResult:
        """A user's ``kubectl create``: through admission; a rejection is recorded as ``Rejected``.
        ``shared``: see :meth:`APIServer.create`."""
        return self.api.create(obj, shared=shared)

    def run(self, until: float | None = None) -> None:
        self.manager.run(until)

    # ---- recording ---------------------------------------------------------------------------------
    def _record_lifecycle(self, event: WatchEvent) -> None:
        if event.type == WatchType.ADDED:
            self.recorder.record_for(event.obj, "Created")
        elif event.type == WatchType.DELETED:
            self.recorder.record_for(event.obj, "Deleted")

    def _record_rejection(self, obj: Object, result: WriteResult) -> None:
        rules = {f.rule.id for f in result.findings if f.effective_severity is Severity.ERROR}
        transient = bool(rules) and rules <= WAITING_FOR_LEADER
        self.recorder.record_for(obj, "Rejected", reason=result.reason(), message=result.message(),
                                 transient=transient)
