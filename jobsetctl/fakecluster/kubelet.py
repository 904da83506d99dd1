"""The kubelet of every simulated node: runs bound pods on the virtual clock (``simulate`` only).

A pod's behaviour comes from its annotations (copied from the pod template; issue #4 contract):

``jobsetctl.dev/duration``
    how long the containers run once started (``90s``, ``2h``); absent: until the simulation ends.
``jobsetctl.dev/ready-after``
    when the pod turns Ready after its (re)start; default ``0s``.
``jobsetctl.dev/fail-after``
    the containers exit with code 1 at that point of an attempt instead of succeeding (whatever
    ``duration`` says). With ``restartPolicy: Never`` the pod fails and the Job controller replaces
    it; with ``OnFailure`` the container restarts in place after the crash-loop back-off
    (10 s, 20 s, 40 s … capped at 5 min, as the Kubernetes documentation describes it; the real
    kubelet measures the back-off from the previous crash and may restart the first crash at once —
    [UNCONFIRMED] detail, not modelled), and the Job counts the restarts against ``backoffLimit``.
``jobsetctl.dev/fail-attempts: "N"``
    only the first N attempts fail. Attempts are counted per pod identity — (JobSet, replicated
    job, job index, completion index) from the JobSet labels, else (Job, completion index) — across
    Job retries and JobSet restarts, so that a restart can recover. Every container start (a new pod
    or an in-place restart) is one attempt. A NonIndexed Job's pods share one identity.

Pods start the moment they are bound (``spec.nodeName`` set): phase Running, ``startTime``,
container statuses (init containers shown as completed, sidecars as running). Simulation events:
Pod ``Started`` (once per pod), ``Ready`` (each time the Ready condition turns True),
``Succeeded``, ``Failed`` (reason ``Error``, the exit code in the message).

A pod with a ``deletionTimestamp`` on a live node stops making progress (the containers got their
SIGTERM) and is killed when its grace period ends: the containers exit 143 (128 + SIGTERM, as a
process that does not handle the signal), the phase becomes Failed (the kubelet sets a terminal
phase before it lets a Job pod go) and the pod is removed once no finalizer holds it. No ``Failed``
simulation event is recorded for such a kill: the pod was stopped on request.

Node failure and what follows (taint eviction, PodGC) is :mod:`.nodelifecycle`; the simulate engine
calls :meth:`Kubelet.fail_node` and :meth:`Kubelet.fail_pod`. A deleted Node stops its pods, which
PodGC collects (:mod:`.nodelifecycle`); a pod bound to a node that does not exist starts when a Node of
that name is created within PodGC's quarantine, and is collected otherwise.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Any

from jobsetctl.fakecluster.apiserver import WatchEvent, WatchType, controller_of
from jobsetctl.fakecluster.manager import Controller, Manager
from jobsetctl.fakecluster.nodelifecycle import ConditionUpdate, NodeLifecycle, set_pod_conditions
from jobsetctl.jobset import api as jobset_api
from jobsetctl.kinds.interface import Object
from jobsetctl.kube.duration import DurationError, parse_duration

DURATION_ANNOTATION = "jobsetctl.dev/duration"
READY_AFTER_ANNOTATION = "jobsetctl.dev/ready-after"
FAIL_AFTER_ANNOTATION = "jobsetctl.dev/fail-after"
FAIL_ATTEMPTS_ANNOTATION = "jobsetctl.dev/fail-attempts"
COMPLETION_INDEX_KEY = "batch.kubernetes.io/job-completion-index"

#: Crash-loop back-off: ``kubelet`` ``initialBackOff`` and ``MaxContainerBackOff``.
CRASH_BACKOFF_SECONDS = 10.0
MAX_CRASH_BACKOFF_SECONDS = 300.0
FAILURE_EXIT_CODE = 1
#: 128 + SIGTERM: what a container stopped at the end of its grace period reports here.
KILLED_EXIT_CODE = 143
DEFAULT_GRACE_SECONDS = 30

RUNNING, BACKOFF, DONE = "running", "backoff", "done"


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


@dataclass(frozen=True, slots=True)
class Behaviour:
    duration: float | None = None
    ready_after: float = 0.0
    fail_after: float | None = None
    fail_attempts: int | None = None
    problems: tuple[str, ...] = ()


#: Behaviours by the four annotation values: the pods of one template share them (a start parsed the
#: durations of every pod again), and a Behaviour (problems included) follows from the values alone.
_BEHAVIOURS: dict[tuple[Any, ...], Behaviour] = {}
_MAX_BEHAVIOURS = 10_000
_MISSING = object()


def behaviour_of(pod: Object) -> Behaviour:
    """The annotations of a pod as a :class:`Behaviour`; a malformed value is ignored and reported."""
    annotations = _mapping(_mapping(pod.get("metadata")).get("annotations"))
    values = (annotations.get(DURATION_ANNOTATION, _MISSING), annotations.get(READY_AFTER_ANNOTATION, _MISSING),
              annotations.get(FAIL_AFTER_ANNOTATION, _MISSING), annotations.get(FAIL_ATTEMPTS_ANNOTATION, _MISSING))
    if not all(value is _MISSING or type(value) is str for value in values):
        return _parse_behaviour(annotations)  # malformed input (1 and True are equal keys): not kept
    found = _BEHAVIOURS.get(values)
    if found is None:
        if len(_BEHAVIOURS) >= _MAX_BEHAVIOURS:
            _BEHAVIOURS.clear()
        found = _BEHAVIOURS[values] = _parse_behaviour(annotations)
    return found


def _parse_behaviour(annotations: dict[str, Any]) -> Behaviour:
    problems: list[str] = []

    def seconds(key: str) -> float | None:
        if key not in annotations:
            return None
        try:
            return parse_duration(annotations[key])
        except DurationError as exc:
            problems.append(f"{key}: {exc}")
            return None

    duration, ready_after, fail_after = (seconds(DURATION_ANNOTATION), seconds(READY_AFTER_ANNOTATION),
                                         seconds(FAIL_AFTER_ANNOTATION))
    attempts: int | None = None
    raw = annotations.get(FAIL_ATTEMPTS_ANNOTATION)
    if raw is not None:
        if isinstance(raw, str) and raw.strip().isdigit():
            attempts = int(raw.strip())
        else:
            problems.append(f'{FAIL_ATTEMPTS_ANNOTATION}: invalid count "{raw}": expected a whole number')
    return Behaviour(duration, ready_after or 0.0, fail_after, attempts, tuple(problems))


def attempt_identity(pod: Object) -> tuple[str, ...]:
    """The identity attempts are counted for (see the module docstring)."""
    meta = _mapping(pod.get("metadata"))
    labels = _mapping(meta.get("labels"))
    annotations = _mapping(meta.get("annotations"))
    namespace = str(meta.get("namespace", ""))
    index = str(annotations.get(COMPLETION_INDEX_KEY, labels.get(COMPLETION_INDEX_KEY, "")))
    jobset = labels.get(jobset_api.JOBSET_NAME_KEY)
    if isinstance(jobset, str):
        return ("jobset", namespace, jobset, str(labels.get(jobset_api.REPLICATED_JOB_NAME_KEY, "")),
                str(labels.get(jobset_api.JOB_INDEX_KEY, "")), index)
    ref = controller_of(pod)
    if ref is not None and ref.get("kind") == "Job":
        return ("job", namespace, str(ref.get("name", "")), index)
    return ("pod", namespace, str(meta.get("name", "")))


def crash_backoff(crashes: int) -> float:
    delay = CRASH_BACKOFF_SECONDS * (2 ** max(crashes - 1, 0))
    return min(delay, MAX_CRASH_BACKOFF_SECONDS)


@dataclass(slots=True)
class PodRun:
    """What the kubelet knows about one pod it runs."""

    uid: str
    node: str
    behaviour: Behaviour
    state: str = RUNNING
    attempt_started: float = 0.0
    ready_at: float | None = None
    exit_at: float | None = None
    exit_code: int = 0
    restart_at: float | None = None
    crashes: int = 0
    ready: bool = False
    kill_at: float | None = None

    def next_due(self) -> float | None:
        if self.kill_at is not None:
            return self.kill_at
        candidates: list[float] = []
        if self.state == RUNNING:
            if self.ready_at is not None and not self.ready:
                candidates.append(self.ready_at)
            if self.exit_at is not None:
                candidates.append(self.exit_at)
        elif self.state == BACKOFF and self.restart_at is not None:
            candidates.append(self.restart_at)
        return min(candidates) if candidates else None


class Kubelet(Controller):
    name = "kubelet"
    #: Nodes too: a deleted node stops its pods and PodGC collects them (:mod:`.nodelifecycle`).
    watches = frozenset({("", "Pod"), ("", "Node")})

    def __init__(self, options: Any = None) -> None:
        super().__init__(options)
        self._runs: dict[str, PodRun] = {}
        #: A pod started in the current reconcile whose status is not written yet.
        self._unwritten: Object | None = None
        #: Attempts started per identity (:func:`attempt_identity`).
        self.attempts: dict[tuple[str, ...], int] = {}

    def setup(self, manager: Manager) -> None:
        super().setup(manager)
        self.lifecycle = NodeLifecycle(self.api, self.clock, self.recorder)

    # -- actions for the simulate engine ---------------------------------------------------------------
    def fail_node(self, name: str) -> bool:
        """The node stops reporting; see :meth:`.NodeLifecycle.fail_node`. False if it does not exist."""
        return self.lifecycle.fail_node(name)

    def fail_pod(self, pod: Object) -> bool:
        """The pod's containers exit with code 1 now (as ``fail-after`` would). False when the pod is
        not running on a live node."""
        uid = str(_mapping(pod.get("metadata")).get("uid", ""))
        run = self._runs.get(uid)
        current = self.api.get_by_uid(uid)
        if run is None or current is None or run.state != RUNNING or run.kill_at is not None:
            return False
        if self.lifecycle.is_failed(run.node):
            return False
        self._exit(current, run, FAILURE_EXIT_CODE)
        self.manager.enqueue(self, ("pod", uid))
        return True

    # -- watch -----------------------------------------------------------------------------------------
    def keys_for(self, event: WatchEvent) -> Iterable[Hashable]:
        # A tuple, not a generator: this runs for every pod write.
        group, kind, _, name = event.key
        if group == "" and kind == "Node":
            return (("node", name),) if event.type in (WatchType.ADDED, WatchType.DELETED) else ()
        if group != "" or kind != "Pod":
            return ()
        uid = str(_mapping(event.obj.get("metadata")).get("uid", ""))
        if event.type == WatchType.DELETED:
            self._runs.pop(uid, None)
            return ()
        node = _mapping(event.obj.get("spec")).get("nodeName")
        if not node:
            return ()
        run = self._runs.get(uid)
        if run is not None and self._nothing_to_do(run, event.obj, str(node)):
            return ()
        return (("pod", uid),)

    def _nothing_to_do(self, run: PodRun, pod: Object, node: str) -> bool:
        """Whether a reconcile of a pod the kubelet runs would change nothing now: a finished run (its
        pod is terminal), or one whose next step is in the future and already has its timer, on a live
        node and not being deleted. Most pod writes (ours, the Job controller's) are such events."""
        if run.state == DONE:
            return True
        if _mapping(pod.get("metadata")).get("deletionTimestamp") or self.lifecycle.is_failed(node) or \
                self.lifecycle.is_deleted(node):
            return False
        due = run.next_due()
        return due is None or due > self.clock.now

    # -- reconcile -------------------------------------------------------------------------------------
    def reconcile(self, key: Hashable) -> float | None:
        try:
            return self._sync(key)
        finally:
            if self._unwritten is not None:
                self._write(self._unwritten)

    def _sync(self, key: Hashable) -> float | None:
        if isinstance(key, tuple) and key[0] == "node":
            self._node_changed(str(key[1]))
            return None
        uid = str(key[1]) if isinstance(key, tuple) else ""
        pod = self.api.get_by_uid(uid)
        if pod is None:
            self._runs.pop(uid, None)
            return None
        node = str(_mapping(pod.get("spec")).get("nodeName", ""))
        if self.lifecycle.is_failed(node):
            # Nobody runs the pod any more; eviction and PodGC take it from here.
            self.lifecycle.watch_pod(pod)
            return None
        run = self._runs.get(uid)
        if run is not None and self.lifecycle.is_deleted(node):
            return None  # the machine is gone: nothing progresses; PodGC collects the pod
        if run is None:
            if _phase(pod) in ("Succeeded", "Failed"):
                return None
            if _mapping(pod.get("metadata")).get("deletionTimestamp"):
                # Not started (also: bound to a node that does not exist, where it never starts and
                # which PodGC would collect): nothing to stop, so it goes now. Checked before the node,
                # or such a pod stays Terminating forever.
                self._discard_unstarted(pod)
                return None
            if self.api.get("", "Node", "", node) is None:
                # A pod bound to a node that does not exist never starts; PodGC's gcOrphaned sees the
                # missing node and collects the pod after the quarantine, unless the node appears.
                self.lifecycle.node_missing(node)
                return None
            run = self._start(pod, node)
            # The start is written with whatever else happens at this instant (the pod turning Ready,
            # or exiting), in one status update, as the kubelet's status manager sends one status per
            # sync: without a readiness probe a container is ready from its first status on.
            self._unwritten = pod
        now = self.clock.now
        meta = _mapping(pod.get("metadata"))
        if meta.get("deletionTimestamp") and run.state != DONE:
            if run.kill_at is None:
                grace = meta.get("deletionGracePeriodSeconds")
                grace = grace if isinstance(grace, int) else DEFAULT_GRACE_SECONDS
                run.kill_at = self.clock.seconds_of(str(meta["deletionTimestamp"])) + grace
                self.recorder.kube_event(pod, "Normal", "Killing", "Stopping container " + ", ".join(
                    str(_mapping(c).get("name")) for c in _list(_mapping(pod.get("spec")).get("containers"))))
            if now >= run.kill_at:
                self._kill(pod, run)
                return None
            return run.kill_at - now
        if run.state == DONE:
            return None
        if run.state == RUNNING:
            if run.ready_at is not None and not run.ready and now >= run.ready_at and (
                    run.exit_at is None or run.ready_at <= run.exit_at):
                self._set_ready(pod, run, True)
            if run.exit_at is not None and now >= run.exit_at:
                self._exit(pod, run, run.exit_code)
        elif run.state == BACKOFF and run.restart_at is not None and now >= run.restart_at:
            self._restart(pod, run)
        due = run.next_due()
        return None if due is None else max(due - now, 0.0)

    def _write(self, pod: Object) -> None:
        """The pod's status update: what this sync changed, the start included (see ``reconcile``)."""
        self._unwritten = None
        self.api.update_status(pod)

    def _node_changed(self, name: str) -> None:
        """A Node came or went. Gone: see :meth:`.NodeLifecycle.node_deleted`. Created (or back within
        PodGC's quarantine): the pods already bound to its name start, or run on."""
        if self.api.get("", "Node", "", name) is None:
            self.lifecycle.node_deleted(name)
            return
        self.lifecycle.node_created(name)
        for pod in list(self.api.iter_kind("", "Pod")):
            if _mapping(pod.get("spec")).get("nodeName") == name:
                self.manager.enqueue(self, ("pod", str(_mapping(pod.get("metadata")).get("uid", ""))))

    # -- transitions -----------------------------------------------------------------------------------
    def _start(self, pod: Object, node: str) -> PodRun:
        behaviour = behaviour_of(pod)
        for problem in behaviour.problems:
            self.recorder.kube_event(pod, "Warning", "InvalidBehaviour", problem)
        run = PodRun(uid=str(_mapping(pod.get("metadata")).get("uid", "")), node=node, behaviour=behaviour)
        self._runs[run.uid] = run
        now = self.clock.timestamp()
        status = _mapping(pod.get("status"))
        status["phase"] = "Running"
        status["startTime"] = now
        spec = _mapping(pod.get("spec"))
        init_statuses: list[dict[str, Any]] = []
        for container in _list(spec.get("initContainers")):
            container = _mapping(container)
            sidecar = container.get("restartPolicy") == "Always"
            state: dict[str, Any] = ({"running": {"startedAt": now}} if sidecar else
                                     {"terminated": {"exitCode": 0, "reason": "Completed",
                                                     "startedAt": now, "finishedAt": now}})
            init_statuses.append({"name": container.get("name"), "image": container.get("image"),
                                  "ready": True, "restartCount": 0, "started": sidecar, "state": state})
        if init_statuses:
            status["initContainerStatuses"] = init_statuses
        status["containerStatuses"] = [
            {"name": _mapping(c).get("name"), "image": _mapping(c).get("image"), "ready": False,
             "restartCount": 0, "started": True, "state": {"running": {"startedAt": now}}}
            for c in _list(spec.get("containers"))
        ]
        self._write_ready_conditions(pod, False, now, "ContainersNotReady", before=(("Initialized", "True", None, None),))
        self._begin_attempt(pod, run)
        self.recorder.record_for(pod, "Started", node=node)
        for c in _list(spec.get("containers")):
            self.recorder.kube_event(pod, "Normal", "Started", f"Started container {_mapping(c).get('name')}")
        return run

    def _begin_attempt(self, pod: Object, run: PodRun) -> None:
        identity = attempt_identity(pod)
        attempt = self.attempts.get(identity, 0) + 1
        self.attempts[identity] = attempt
        behaviour = run.behaviour
        now = self.clock.now
        fails = behaviour.fail_after is not None and (
            behaviour.fail_attempts is None or attempt <= behaviour.fail_attempts)
        run.state = RUNNING
        run.attempt_started = now
        run.ready = False
        run.ready_at = now + behaviour.ready_after
        if fails and behaviour.fail_after is not None:
            run.exit_at, run.exit_code = now + behaviour.fail_after, FAILURE_EXIT_CODE
        elif behaviour.duration is not None:
            run.exit_at, run.exit_code = now + behaviour.duration, 0
        else:
            run.exit_at, run.exit_code = None, 0

    def _write_ready_conditions(self, pod: Object, ready: bool, now: str, reason: str,
                                before: tuple[ConditionUpdate, ...] = ()) -> None:
        """Ready and ContainersReady (after the conditions ``before``, in one pass over the pod's list)."""
        message = None
        if not ready:
            names = [str(_mapping(c).get("name")) for c in _list(_mapping(pod.get("spec")).get("containers"))]
            message = f"containers with unready status: [{' '.join(names)}]"
        status, why = ("True", None) if ready else ("False", reason)
        set_pod_conditions(pod, now, (*before, ("Ready", status, why, message), ("ContainersReady", status, why, message)))

    def _set_ready(self, pod: Object, run: PodRun, ready: bool) -> None:
        run.ready = ready
        now = self.clock.timestamp()
        for cs in _list(_mapping(pod.get("status")).get("containerStatuses")):
            _mapping(cs)["ready"] = ready
        self._write_ready_conditions(pod, ready, now, "ContainersNotReady")
        self._write(pod)
        if ready:
            self.recorder.record_for(pod, "Ready", node=run.node)

    def _terminate_containers(self, pod: Object, code: int, now: str) -> None:
        reason = "Completed" if code == 0 else "Error"
        for cs in _list(_mapping(pod.get("status")).get("containerStatuses")):
            cs = _mapping(cs)
            started = _mapping(_mapping(cs.get("state")).get("running")).get("startedAt", now)
            cs["ready"] = False
            cs["started"] = False
            cs["state"] = {"terminated": {"exitCode": code, "reason": reason, "startedAt": started,
                                          "finishedAt": now}}

    def _exit(self, pod: Object, run: PodRun, code: int) -> None:
        now = self.clock.timestamp()
        restart_policy = _mapping(pod.get("spec")).get("restartPolicy")
        status = _mapping(pod.get("status"))
        if code == 0 or restart_policy == "Never":
            self._terminate_containers(pod, code, now)
            status["phase"] = "Succeeded" if code == 0 else "Failed"
            self._write_ready_conditions(pod, False, now, "PodCompleted" if code == 0 else "PodFailed")
            run.state, run.ready = DONE, False
            self._write(pod)
            if code == 0:
                self.recorder.record_for(pod, "Succeeded", node=run.node)
            else:
                names = [str(_mapping(c).get("name")) for c in _list(_mapping(pod.get("spec")).get("containers"))]
                self.recorder.record_for(pod, "Failed", node=run.node, reason="Error",
                                         message=f"container {', '.join(names)} exited with code {code}")
            return
        # OnFailure: restart in place after the crash-loop back-off; the pod stays Running.
        run.crashes += 1
        delay = crash_backoff(run.crashes)
        run.state, run.ready, run.restart_at, run.exit_at = BACKOFF, False, self.clock.now + delay, None
        meta = _mapping(pod.get("metadata"))
        where = f"{meta.get('name')}_{meta.get('namespace')}({meta.get('uid')})"
        for cs in _list(status.get("containerStatuses")):
            cs = _mapping(cs)
            started = _mapping(_mapping(cs.get("state")).get("running")).get("startedAt", now)
            cs["lastState"] = {"terminated": {"exitCode": code, "reason": "Error", "startedAt": started,
                                              "finishedAt": now}}
            cs["ready"] = False
            cs["started"] = False
            cs["state"] = {"waiting": {"reason": "CrashLoopBackOff", "message":
                                       f"back-off {delay:g}s restarting failed container={cs.get('name')} pod={where}"}}
            self.recorder.kube_event(pod, "Warning", "BackOff",
                                     f"Back-off restarting failed container {cs.get('name')} in pod {where}")
        self._write_ready_conditions(pod, False, now, "ContainersNotReady")
        self._write(pod)

    def _restart(self, pod: Object, run: PodRun) -> None:
        now = self.clock.timestamp()
        for cs in _list(_mapping(pod.get("status")).get("containerStatuses")):
            cs = _mapping(cs)
            cs["restartCount"] = int(cs.get("restartCount") or 0) + 1
            cs["started"] = True
            cs["state"] = {"running": {"startedAt": now}}
        run.restart_at = None
        self._begin_attempt(pod, run)
        self.api.update_status(pod)
        for c in _list(_mapping(pod.get("spec")).get("containers")):
            self.recorder.kube_event(pod, "Normal", "Started", f"Started container {_mapping(c).get('name')}")

    def _discard_unstarted(self, pod: Object) -> None:
        """A pod deleted before its containers started: nothing to stop, it fails and goes at once."""
        _mapping(pod.get("status"))["phase"] = "Failed"
        self.api.update_status(pod)
        if self.api.get_by_uid(str(_mapping(pod.get("metadata")).get("uid", ""))) is pod and not _mapping(
                pod.get("metadata")).get("finalizers"):
            self.api.remove(pod)

    def _kill(self, pod: Object, run: PodRun) -> None:
        now = self.clock.timestamp()
        run.state = DONE
        if _phase(pod) not in ("Succeeded", "Failed"):
            self._terminate_containers(pod, KILLED_EXIT_CODE, now)
            _mapping(pod.get("status"))["phase"] = "Failed"
            self._write_ready_conditions(pod, False, now, "PodFailed")
            self.api.update_status(pod)
        if self.api.get_by_uid(run.uid) is pod and not _mapping(pod.get("metadata")).get("finalizers"):
            self.api.remove(pod)


def _phase(pod: Object) -> str:
    return str(_mapping(pod.get("status")).get("phase") or "Pending")
