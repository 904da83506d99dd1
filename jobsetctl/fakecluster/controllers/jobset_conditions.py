"""The JobSet status a reconcile pass works on, its conditions, and the events queued for after the write.

Upstream keeps a ``statusUpdateOpts`` (``shouldUpdate`` plus queued events) next to the in-memory
JobSet and writes the status once at the end of the pass; the queued events are emitted only if that
write succeeds (jobset.md §4.1 step 16, §4.9). :class:`StatusUpdate` is that pair, over a deep copy of
``status`` so that a pass that ends in an error leaves the stored object untouched.

Condition rules (upstream ``updateCondition``; jobset.md §4.9):

* a condition of a new type is appended only if its status is True;
* the same type with another status replaces it, with a new ``lastTransitionTime``;
* the same status with another reason or message is updated in place, keeping ``lastTransitionTime``;
* ``StartupPolicyInProgress`` and ``StartupPolicyCompleted`` exclude each other: setting one True flips
  a True other one to False *in place*, keeping its reason, message and ``lastTransitionTime``
  (quirk, derived from code), and no event is queued for that flip.

Every real change of the condition being set queues a Kubernetes Event with its reason and message.
Some also map to a simulation event of the closed vocabulary (``Completed``, ``Failed``, ``Suspended``,
``Resumed``); ``Restarting`` is queued by the failure policy itself, once per restart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from jobsetctl.jobset import api

NORMAL: Final = "Normal"
WARNING: Final = "Warning"
TRUE: Final = "True"
FALSE: Final = "False"

_EXCLUSIVE: Final = frozenset({
    api.ConditionType.STARTUP_POLICY_IN_PROGRESS.value,
    api.ConditionType.STARTUP_POLICY_COMPLETED.value,
})

#: JSON field order of ``JobSetStatus`` and ``ReplicatedJobStatus`` (Go struct order), for output.
STATUS_FIELDS: Final = (
    "conditions", "restarts", "restartsCountTowardsMax", "terminalState", "replicatedJobsStatus",
    "previousInPlaceRestartAttempt", "currentInPlaceRestartAttempt",
)
RJOB_STATUS_FIELDS: Final = (
    "name", "ready", "succeeded", "failed", "active", "suspended", "jobRestarts", "jobRestartsCountTowardsMax",
)
COUNTER_FIELDS: Final = ("ready", "succeeded", "failed", "active", "suspended")


@dataclass(frozen=True, slots=True)
class SimulationEvent:
    """An event of the simulation vocabulary (``Restarting``, ``Completed`` ...) with its details."""

    event: str
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class QueuedEvent:
    """A Kubernetes Event (and possibly a simulation event) to emit once the status write succeeded."""

    type: str
    reason: str
    message: str
    simulation: SimulationEvent | None = None


@dataclass(slots=True)
class StatusUpdate:
    """The working status of one pass, whether it must be written, and the events queued for after."""

    status: dict[str, Any]
    #: ``lastTransitionTime`` for conditions that change in this pass (the virtual clock's timestamp).
    now: str
    should_update: bool = False
    events: list[QueuedEvent] = field(default_factory=list)

    # -- plain fields ---------------------------------------------------------------------------------
    @property
    def restarts(self) -> int:
        return api.as_int(self.status.get("restarts")) or 0

    @property
    def restarts_count_towards_max(self) -> int:
        return api.as_int(self.status.get("restartsCountTowardsMax")) or 0

    def conditions(self) -> list[dict[str, Any]]:
        value = self.status.get("conditions")
        if not isinstance(value, list):
            value = self.status["conditions"] = []
        return value

    def replicated_jobs_status(self) -> list[dict[str, Any]]:
        return [entry for entry in api.as_list(self.status.get("replicatedJobsStatus")) if isinstance(entry, dict)]

    def entry(self, rjob_name: str) -> dict[str, Any] | None:
        for entry in self.replicated_jobs_status():
            if entry.get("name") == rjob_name:
                return entry
        return None

    def enqueue(self, event: QueuedEvent) -> None:
        self.events.append(event)

    # -- conditions -----------------------------------------------------------------------------------
    def set_condition(
        self,
        condition_type: str,
        status: str,
        reason: str,
        message: str,
        event_type: str,
        simulation: str | None = None,
    ) -> bool:
        """Apply one condition with the §4.9 rules; queue its event when something changed."""
        conditions = self.conditions()
        changed = False
        found = False
        condition_type = str(condition_type)  # a plain str in the stored object, not the StrEnum
        new = {
            "type": condition_type,
            "status": status,
            "lastTransitionTime": self.now,
            "reason": reason,
            "message": message,
        }
        for index, current in enumerate(conditions):
            if current.get("type") == condition_type:
                found = True
                if current.get("status") != status:
                    conditions[index] = new
                    changed = True
                elif current.get("reason") != reason or current.get("message") != message:
                    new["lastTransitionTime"] = current.get("lastTransitionTime", self.now)
                    conditions[index] = new
                    changed = True
            elif (
                {current.get("type"), condition_type} == _EXCLUSIVE
                and current.get("status") == TRUE
                and status == TRUE
            ):
                current["status"] = FALSE
                changed = True
        if not found and status == TRUE:
            conditions.append(new)
            changed = True
        if changed:
            self.should_update = True
            sim = SimulationEvent(simulation, reason, message) if simulation else None
            self.enqueue(QueuedEvent(event_type, reason, message, sim))
        return changed

    def set_restarting_false(self, reason: str, message: str) -> None:
        """``RestartingJobSet=False`` (only written over an existing condition)."""
        self.set_condition(api.ConditionType.RESTARTING, FALSE, reason, message, NORMAL)

    def set_failed(self, reason: str, message: str) -> None:
        """``Failed=True``, ``RestartingJobSet=False/JobSetFailed``, terminal state Failed
        (upstream ``setJobSetFailedCondition``)."""
        self.set_condition(api.ConditionType.FAILED, TRUE, reason, message, WARNING, simulation="Failed")
        self.set_restarting_false(api.REASON_JOBSET_FAILED, api.MESSAGE_JOBSET_FAILED)
        self.status["terminalState"] = api.TerminalState.FAILED.value
        self.should_update = True

    def set_completed(self) -> None:
        """``Completed=True``, ``RestartingJobSet=False/JobSetCompleted``, terminal state Completed."""
        self.set_condition(
            api.ConditionType.COMPLETED, TRUE, api.REASON_ALL_JOBS_COMPLETED, api.MESSAGE_ALL_JOBS_COMPLETED,
            NORMAL, simulation="Completed",
        )
        self.set_restarting_false(api.REASON_JOBSET_COMPLETED, api.MESSAGE_ALL_JOBS_COMPLETED)
        self.status["terminalState"] = api.TerminalState.COMPLETED.value
        self.should_update = True

    def set_suspended(self) -> None:
        self.set_condition(
            api.ConditionType.SUSPENDED, TRUE, api.REASON_SUSPENDED, api.MESSAGE_SUSPENDED, NORMAL,
            simulation="Suspended",
        )
        self.set_restarting_false(api.REASON_JOBSET_SUSPENDED, api.MESSAGE_SUSPENDED)

    def set_resumed(self) -> None:
        self.set_condition(
            api.ConditionType.SUSPENDED, FALSE, api.REASON_RESUMED, api.MESSAGE_RESUMED, NORMAL,
            simulation="Resumed",
        )

    def set_in_order_in_progress(self) -> None:
        self.set_condition(
            api.ConditionType.STARTUP_POLICY_IN_PROGRESS, TRUE, api.REASON_IN_ORDER_IN_PROGRESS,
            api.MESSAGE_IN_ORDER_IN_PROGRESS, NORMAL,
        )

    def set_in_order_completed(self) -> None:
        self.set_condition(
            api.ConditionType.STARTUP_POLICY_COMPLETED, TRUE, api.REASON_IN_ORDER_COMPLETED,
            api.MESSAGE_IN_ORDER_COMPLETED, NORMAL,
        )


def ordered_status(status: dict[str, Any]) -> dict[str, Any]:
    """``status`` as Go serialises ``JobSetStatus``: struct order, ``omitempty`` fields left out,
    ``restarts`` always present. Unknown fields are dropped, as decoding into the Go struct does."""
    out: dict[str, Any] = {}
    for key in STATUS_FIELDS:
        value = status.get(key)
        if key == "restarts":
            out[key] = api.as_int(value) or 0
        elif key == "replicatedJobsStatus":
            entries = [ordered_rjob_status(e) for e in api.as_list(value) if isinstance(e, dict)]
            if entries:
                out[key] = entries
        elif key in ("previousInPlaceRestartAttempt", "currentInPlaceRestartAttempt"):
            if api.as_int(value) is not None:  # pointers: 0 is written
                out[key] = value
        elif value not in (None, "", 0, []):
            out[key] = value
    return out


def ordered_rjob_status(entry: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in RJOB_STATUS_FIELDS:
        value = entry.get(key)
        if key in ("jobRestarts", "jobRestartsCountTowardsMax"):
            if isinstance(value, list) and value:
                out[key] = list(value)
        elif key == "name":
            out[key] = api.as_str(value)
        else:
            out[key] = api.as_int(value) or 0
    return out
