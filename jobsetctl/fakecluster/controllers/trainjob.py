"""The Kubeflow Trainer TrainJob controller (kubeflow/trainer ``pkg/controller/trainjob_controller.go``)
for the fake cluster.

One reconcile, in upstream order (trainer.md §3.1, §1.4, §2.6, §3.14):

0. TrainJob gone → nothing; ``spec.managedBy`` not ``trainer.kubeflow.org/trainjob-controller`` → nothing
   at all (no objects, no status);
1. ``runtimeRef`` of an unregistered kind → ``Failed=True``/``TrainingRuntimeNotSupported``/
   ``unsupported runtime: <Kind>.<group>``, and the reconcile counts as failed (retried with back-off);
2. else, unless already ``Complete``/``Failed``: resolve the runtime — snapshot ConfigMap first, else the
   live runtime, writing the snapshot (:mod:`.trainjob_runtime`) — expand it
   (:func:`jobsetctl.trainer.expand.expand`) and apply every object the re-apply rules allow
   (:func:`jobsetctl.trainer.expand.apply.should_apply`, :mod:`.trainjob_apply`). The first error stops
   the step: Warning event ``TrainJobResourcesCreationFailed``, action ``Reconciling``, message
   ``TrainJob resources reconciliation failed: <err>`` (truncated at 950 characters + `` ...``), no
   condition, retry with back-off. An expansion error (e.g. quirk 11) means nothing is applied, but a
   snapshot written before it stays, as upstream;
3. the ``Suspended`` condition, then the JobSet's ``Completed``/``Failed`` conditions and
   ``replicatedJobsStatus`` (:mod:`.trainjob_status`). A missing JobSet while not finished is an
   error too (no event, but back-off);
4. ``activeDeadlineSeconds``: exceeded → ``Failed``/``DeadlineExceeded``/``TrainJob exceeded its active
   deadline`` and the JobSet is deleted (background propagation, the client default); otherwise a timer
   at the deadline;
5. the status is written when it changed, even after an error; then the simulation events.

Retries: controller-runtime's default per-item back-off (5 ms doubling, at most 1000 s; forgotten after
a reconcile without error), as the JobSet controller here models it. An error wins over the deadline
timer, as in controller-runtime.

Reconcile triggers, as upstream registers them: the TrainJob's own events, and events of JobSets,
ConfigMaps, Secrets and PodGroups (Coscheduling and Volcano) whose *controller* is a TrainJob (the
JobSet, MPI/Flux and pod-group plugins' ``Owns`` watches). Upstream does **not** watch runtimes for
TrainJobs: a TrainJob whose runtime is missing picks it up at its next back-off retry, not when the
runtime is created (quirk; the coscheduling plugin's LimitRange and RuntimeClass watches, which only
re-queue suspended TrainJobs, are not modelled).

Unregistered runtime kinds: upstream then calls the status plugin of a nil runtime (a nil-interface call
in ``setTrainJobStatus``, [derived]); we follow trainer.md §1.4 and write the ``Failed`` condition. The
TrainJob webhook rejects such a kind at admission anyway, so only a TrainJob that bypassed it gets here.

Simulation events (the JSON contract's closed vocabulary), after the status write, for condition changes:
``Suspended`` (Suspended turned True), ``Resumed`` (Suspended turned False), ``Completed`` (Complete turned
True), ``Failed`` (Failed turned True); reason and message are the condition's.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Any, Final, cast

from jobsetctl.fakecluster.apiserver import WatchEvent, WatchType, controller_of, key_of
from jobsetctl.fakecluster.controllers import trainjob_status as st
from jobsetctl.fakecluster.controllers.trainjob_apply import Applier
from jobsetctl.fakecluster.controllers.trainjob_runtime import is_supported, resolve_runtime
from jobsetctl.fakecluster.manager import Controller, Manager
from jobsetctl.jobset import api as jobset_api
from jobsetctl.kinds.interface import Object
from jobsetctl.kube.featuregates import FeatureGates
from jobsetctl.kube.jsontree import copy_tree
from jobsetctl.kube.versions import split_api_version
from jobsetctl.trainer import api
from jobsetctl.trainer.expand import Expansion, expand
from jobsetctl.trainer.expand.apply import should_apply
from jobsetctl.trainer.expand.model import TrainJobView, as_dict, as_str

#: controller-runtime's default per-item rate limiter (client-go ``DefaultTypedControllerRateLimiter``).
BACKOFF_BASE_SECONDS: Final = 0.005
BACKOFF_MAX_SECONDS: Final = 1000.0
#: Kinds whose events wake their controller TrainJob: (group, kind).
OWNED_KINDS: Final = frozenset({
    (jobset_api.GROUP, jobset_api.KIND),
    ("", "ConfigMap"),
    ("", "Secret"),
    (split_api_version(api.COSCHEDULING_API_VERSION)[0], "PodGroup"),
    (split_api_version(api.VOLCANO_API_VERSION)[0], "PodGroup"),
})
EVENT_WARNING: Final = "Warning"
#: Simulation event per condition type turning True (Suspended turning False is ``Resumed``).
SIMULATION_EVENTS: Final = (
    (api.CONDITION_COMPLETE, "Completed"),
    (api.CONDITION_FAILED, "Failed"),
)

TrainJobKey = tuple[str, str]  # namespace, name


@dataclass(frozen=True, slots=True)
class _CachedExpansion:
    fingerprint: tuple[str, str, str]
    expansion: Expansion


class TrainJobController(Controller):
    name = "trainjob-controller"
    watches = OWNED_KINDS | {(api.GROUP, api.TRAINJOB)}

    def __init__(self, options: Any = None) -> None:
        super().__init__(options)
        #: Consecutive failed reconciles per key, for the back-off.
        self._failures: dict[Hashable, int] = {}
        #: The last expansion per TrainJob: upstream expands on every reconcile; the result only
        #: depends on the TrainJob's identity and spec and on the runtime snapshot.
        self._expansions: dict[Hashable, _CachedExpansion] = {}
        self.applier: Applier

    def setup(self, manager: Manager) -> None:
        super().setup(manager)
        self.applier = Applier(self.api)

    # -- options ----------------------------------------------------------------------------------------
    @property
    def gates(self) -> FeatureGates:
        gates = getattr(self.options, "gates", None)
        return gates if isinstance(gates, FeatureGates) else self.api.gates

    @property
    def default_namespace(self) -> str:
        return str(getattr(self.options, "default_namespace", None) or self.api.default_namespace)

    # -- watch ------------------------------------------------------------------------------------------
    def keys_for(self, event: WatchEvent) -> Iterable[Hashable]:
        group, kind, namespace, name = event.key
        if group == api.GROUP and kind == api.TRAINJOB:
            if event.type != WatchType.DELETED:
                yield (namespace, name)
            return
        if (group, kind) not in OWNED_KINDS:
            return
        ref = controller_of(event.obj)
        if ref is None or ref.get("kind") != api.TRAINJOB:
            return
        if split_api_version(str(ref.get("apiVersion", "")))[0] != api.GROUP:
            return
        yield (namespace, str(ref.get("name", "")))

    # -- reconcile --------------------------------------------------------------------------------------
    def reconcile(self, key: Hashable) -> float | None:
        namespace, name = cast(TrainJobKey, key)
        trainjob = self.api.get(api.GROUP, api.TRAINJOB, namespace, name)
        if trainjob is None:
            self._failures.pop(key, None)
            self._expansions.pop(key, None)
            return None
        view = TrainJobView(trainjob, self.default_namespace)
        if view.managed_by != api.MANAGED_BY_TRAINER:
            self._failures.pop(key, None)
            return None

        now = self.clock.timestamp()
        previous = copy_tree(as_dict(trainjob.get("status")))
        status = copy_tree(previous)
        errors: list[str] = []
        supported = is_supported(view)
        if not supported:
            message = api.unsupported_runtime_message(view.runtime_ref.group_kind)
            errors.append(message)
            st.set_failed_condition(status, api.REASON_RUNTIME_NOT_SUPPORTED, message, now)
        elif not st.is_finished(status):
            error = self.reconcile_objects(key, trainjob)
            if error is not None:
                errors.append(error)
                self.recorder.kube_event(
                    trainjob, EVENT_WARNING, api.EVENT_RESOURCES_CREATION_FAILED, api.reconcile_event_message(error),
                )

        st.set_suspended_condition(status, view.suspend is True, now)
        if supported:
            jobset = self.api.get(jobset_api.GROUP, jobset_api.KIND, view.namespace, view.name)
            status_error = st.copy_jobset_status(status, jobset, view.name, now)
            if status_error is not None:
                errors.append(status_error)

        deadline = st.deadline_check(trainjob, status, self.clock)
        if deadline.exceeded:
            st.set_failed_condition(status, api.REASON_DEADLINE_EXCEEDED, api.MESSAGE_DEADLINE_EXCEEDED, now)
            jobset = self.api.get(jobset_api.GROUP, jobset_api.KIND, view.namespace, view.name)
            if jobset is not None:
                self.api.delete(jobset, propagation="Background")

        self.write_status(trainjob, previous, status)

        if errors:
            failures = self._failures.get(key, 0)
            self._failures[key] = failures + 1
            return min(BACKOFF_BASE_SECONDS * (2 ** failures), BACKOFF_MAX_SECONDS)
        self._failures.pop(key, None)
        return deadline.requeue_after

    def reconcile_objects(self, key: Hashable, trainjob: Object) -> str | None:
        """``reconcileObjects``: resolve the runtime, expand, apply. Returns the first error."""
        resolved = resolve_runtime(self.api, trainjob, self.default_namespace)
        if resolved.error is not None:
            return resolved.error
        assert resolved.runtime is not None
        expansion = self.expansion(key, trainjob, resolved.runtime, resolved.snapshot_text)
        if expansion.errors:
            return expansion.errors[0]
        for desired in expansion.all_objects():
            group, kind, namespace, name = key_of(desired)
            existing = self.api.get(group, kind, namespace, name)
            if not should_apply(desired, trainjob, existing):
                continue
            error = self.applier.apply(desired, existing)
            if error is not None:
                return error
        return None

    def expansion(self, key: Hashable, trainjob: Object, runtime: Object, snapshot_text: str) -> Expansion:
        md = as_dict(trainjob.get("metadata"))
        identity = json.dumps([md.get("namespace"), md.get("name"), md.get("uid")])
        fingerprint = (identity, json.dumps(trainjob.get("spec"), sort_keys=True), snapshot_text)
        cached = self._expansions.get(key)
        if cached is not None and cached.fingerprint == fingerprint:
            return cached.expansion
        result = expand(trainjob, runtime, gates=self.gates, default_namespace=self.default_namespace)
        self._expansions[key] = _CachedExpansion(fingerprint, result)
        return result

    def write_status(self, trainjob: Object, previous: dict[str, Any], status: dict[str, Any]) -> None:
        """The status patch (only when something changed), then the simulation events of the changes."""
        if st.ordered_status(status) == st.ordered_status(previous):
            return
        trainjob["status"] = st.ordered_status(status)
        self.api.update_status(trainjob)
        for event, condition in simulation_events(previous, status):
            self.recorder.record_for(
                trainjob, event, reason=as_str(condition.get("reason")), message=as_str(condition.get("message")),
            )


def simulation_events(previous: dict[str, Any], status: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(event, condition) for each condition change the JSON contract reports, in a fixed order."""
    out: list[tuple[str, dict[str, Any]]] = []
    before = st.find_condition(previous, api.CONDITION_SUSPENDED)
    after = st.find_condition(status, api.CONDITION_SUSPENDED)
    if after is not None and (before is None or before.get("status") != after.get("status")):
        if after.get("status") == st.TRUE:
            out.append(("Suspended", after))
        elif before is not None:
            out.append(("Resumed", after))
    for condition_type, event in SIMULATION_EVENTS:
        now_true = st.find_condition(status, condition_type)
        if now_true is not None and now_true.get("status") == st.TRUE and not st.is_condition_true(previous, condition_type):
            out.append((event, now_true))
    return out
