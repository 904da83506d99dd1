"""After admission: would the controller's objects be accepted? (trainer.md §2.7, §1.4, §3.16; the
``consequence`` layer of issue #13)

Trainer admits a TrainJob without building its JobSet. The JobSet is created later by the controller,
and a JobSet webhook rejection (e.g. generated Job or pod names over 63 characters, §2.7) only shows
as a ``TrainJobResourcesCreationFailed`` event. We expand the TrainJob and run the JobSet through
the very same admission chain; when the JobSet is accepted, its child Jobs go through the API server's
Job validation (``jobset-child-job-invalid``, :mod:`jobsetctl.jobset.consequences`). Each finding is
reported on the TrainJob, at the TrainJob field that causes it (:func:`cause_in_trainjob`); the
JobSet's (or Job's) own field path is in the message, in the upstream text.

Within one validate run (:func:`one_run`) each TrainJob's runtime checks and what its controller would build
are worked out once (:func:`once`), and shared by the in-cluster webhook, the consequences and the lints.
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

from jobsetctl.diagnostics import Finding, Severity
from jobsetctl.jobset.names import generated_name
from jobsetctl.kinds.interface import AdmissionContext, ClusterView, Operation
from jobsetctl.kube.field import Path, go_quote, parse_path, path_string
from jobsetctl.kube.job import PLACEHOLDER_UID
from jobsetctl.trainer import api
from jobsetctl.trainer import rules as r
from jobsetctl.trainer.expand import Expansion, expand
from jobsetctl.trainer.expand.model import Object, as_dict, as_str

if TYPE_CHECKING:
    from jobsetctl.admission.chain import AdmissionResult

T = TypeVar("T")

#: Per run (:func:`one_run`): what :func:`once` worked out, with the objects its key names by identity.
_RUN: dict[tuple[Any, ...], tuple[tuple[object, ...], Any]] | None = None


@contextlib.contextmanager
def one_run() -> Iterator[None]:
    """While open (validate's look-up phase), :func:`once` keeps what it works out: a TrainJob's runtime checks
    run once, not once for the in-cluster webhook, once for its consequences and once for the lints. Only
    where the objects do not change meanwhile: the fake cluster of render and simulate updates stored
    objects in place, so it runs without."""
    global _RUN
    previous, _RUN = _RUN, {}
    try:
        yield
    finally:
        _RUN = previous


def once(what: str, trainjob: Object, ctx: AdmissionContext, cluster: ClusterView | None,
         compute: Callable[[], T]) -> T:
    """``compute()``, or within :func:`one_run` what it gave for the same TrainJob (the same object), cluster
    view, release, gates and Kueue configuration. Creates only: an update compares with the stored object."""
    if _RUN is None or ctx.operation is not Operation.CREATE:
        return compute()
    held = (trainjob, cluster, ctx.gates, ctx.kueue)
    key = (what, *(id(x) for x in held), ctx.version, ctx.default_namespace)
    cached = _RUN.get(key)
    if cached is not None:  # ids are unique while the entry holds the objects
        value: T = cached[1]
        return value
    value = compute()
    _RUN[key] = (held, value)
    return value


@dataclass(frozen=True, slots=True)
class Built:
    """What the controller would build for an admitted TrainJob: the expansion (also when it applies nothing:
    the lints read the best effort), and its JobSet as JobSet admission answers it (None when this build has
    no JobSet admission)."""

    expansion: Expansion
    admission: AdmissionResult | None


def build(trainjob: Object, runtime: Object, ctx: AdmissionContext) -> Built:
    """Expand the TrainJob as created against its runtime and admit the JobSet (once per run, :func:`once`)."""
    def compute() -> Built:
        expansion = expand(as_created(trainjob), runtime, gates=ctx.gates, default_namespace=ctx.default_namespace)
        if importlib.util.find_spec("jobsetctl.jobset.kind") is None:
            return Built(expansion, None)
        from jobsetctl.admission.chain import admit

        return Built(expansion, admit(expansion.jobset, replace(ctx, operation=Operation.CREATE, old=None)))

    return once("build", trainjob, ctx, ctx.cluster, compute)


def check_generated_objects(trainjob: Object, runtime: Object, ctx: AdmissionContext) -> list[Finding]:
    """Reconcile errors, JobSet admission errors, then the child Jobs of an accepted JobSet."""
    who = f"TrainJob {go_quote(as_str(as_dict(as_created(trainjob).get('metadata')).get('name')))}"
    event = f"event {api.EVENT_RESOURCES_CREATION_FAILED}"
    built = build(trainjob, runtime, ctx)
    expansion = built.expansion
    if expansion.skipped is not None:
        return []
    if expansion.errors:
        return [
            r.RECONCILE_FAILURE.finding(
                f"{who} is accepted, but its controller fails to create its objects, {event}: "
                f"{api.reconcile_event_message(error)}",
                path="spec.runtimeRef", at=("spec", "runtimeRef"),
            )
            for error in expansion.errors
        ]
    result = built.admission
    if result is None:
        return []  # JobSet admission is not available in this build
    jobset_name = as_str(as_dict(expansion.jobset.get("metadata")).get("name"))
    findings: list[Finding] = []
    for finding in result.findings:
        if finding.effective_severity is not Severity.ERROR:
            continue
        at = cause_in_trainjob(trainjob, finding.path, finding.message)
        findings.append(r.JOBSET_REJECTED.finding(
            f"{who} is accepted, but JobSet admission refuses its JobSet {go_quote(jobset_name)}, {event}: "
            f"{api.reconcile_event_message(finding.message)}",
            path=path_string(at), at=at,
        ))
    if findings or result.obj is None or not result.typed:
        return findings
    from jobsetctl.jobset.consequences import RULE as CHILD_JOB_INVALID
    from jobsetctl.jobset.consequences import child_job_problems

    for problem in child_job_problems(result.obj, ctx):
        at = cause_in_trainjob(trainjob, path_string(problem.at), problem.cause)
        findings.append(CHILD_JOB_INVALID.finding(
            f"{who} is accepted and so is its JobSet {go_quote(jobset_name)}, but the Jobs are refused, event "
            f"JobCreationFailed on the JobSet: {problem.event}",
            path=path_string(at), at=at,
        ))
    return findings


def as_created(trainjob: Object) -> Object:
    """The TrainJob as the controller sees it: with a UID (offline it may have none, and an empty owner UID
    would fail the JobSet's ObjectMeta validation for a reason the cluster never has) and, for generateName,
    a generated name."""
    meta = as_dict(trainjob.get("metadata"))
    if meta.get("uid") and meta.get("name"):
        return trainjob
    subject = dict(trainjob)
    meta = dict(meta)
    if not meta.get("uid"):
        meta["uid"] = PLACEHOLDER_UID
    generate = meta.get("generateName")
    if not meta.get("name") and isinstance(generate, str) and generate:
        meta["name"] = generated_name(generate)
    subject["metadata"] = meta
    return subject


#: Container fields of the JobSet that a TrainJob's ``spec.trainer`` sets.
_TRAINER_FIELDS = {"image": "image", "command": "command", "args": "args", "env": "env", "resources": "resourcesPerNode"}
_RUNTIME_NAME: Path = ("spec", "runtimeRef", "name")


def cause_in_trainjob(trainjob: Object, jobset_path: str, message: str) -> Path:
    """Where in the TrainJob to point for a JobSet finding, as far as we can tell.

    Derived names that are too long come from ``metadata.name``; counts from ``trainer.numNodes``;
    container fields the TrainJob sets from ``spec.trainer``; other template problems from the
    runtime; anything else from ``metadata.name``.
    """
    if "too long" in message or jobset_path.startswith("metadata"):
        return ("metadata", "name")
    trainer = as_dict(as_dict(trainjob.get("spec")).get("trainer"))
    segments = parse_path(jobset_path)
    if segments[:2] == ("spec", "suspend"):
        return ("spec", "suspend")
    if "parallelism" in segments or "completions" in segments:
        return ("spec", "trainer", "numNodes") if "numNodes" in trainer else _RUNTIME_NAME
    if "containers" in segments:
        # spec.replicatedJobs[i].template.spec.template.spec.containers[j].<field>...
        rest = segments[segments.index("containers") + 2:]
        field = _TRAINER_FIELDS.get(rest[0]) if rest and isinstance(rest[0], str) else None
        if field is not None and field in trainer:
            return ("spec", "trainer", field)
    if segments[:2] in (("spec", "replicatedJobs"), ("spec", "network")):
        return _RUNTIME_NAME
    return ("metadata", "name")
