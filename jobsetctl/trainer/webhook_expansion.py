"""After admission: would the controller's objects be accepted? (trainer.md §2.7, §1.4, §3.16; the
``consequence`` layer of issue #13)

Trainer admits a TrainJob without building its JobSet. The JobSet is created later by the controller,
and a JobSet webhook rejection (e.g. generated Job or pod names over 63 characters, §2.7) only shows
as a ``TrainJobResourcesCreationFailed`` event. We expand the TrainJob and run the JobSet through
the very same admission chain; when the JobSet is accepted, its child Jobs go through the API server's
Job validation (``jobset-child-job-invalid``, :mod:`jobsetctl.jobset.consequences`). Each finding is
reported on the TrainJob, at the TrainJob field that causes it (:func:`cause_in_trainjob`); the
JobSet's (or Job's) own field path is in the message, in the upstream text.
"""

from __future__ import annotations

import importlib.util
from dataclasses import replace

from jobsetctl.diagnostics import Finding, Severity
from jobsetctl.jobset.names import generated_name
from jobsetctl.kinds.interface import AdmissionContext, Operation
from jobsetctl.kube.field import Path, go_quote, parse_path, path_string
from jobsetctl.trainer import api
from jobsetctl.trainer import rules as r
from jobsetctl.trainer.expand import expand
from jobsetctl.trainer.expand.model import Object, as_dict, as_str

#: The TrainJob has a UID by the time the controller builds the JobSet; offline it may not, and an
#: empty owner UID would make the JobSet fail ObjectMeta validation for a reason the cluster never has.
PLACEHOLDER_UID = "00000000-0000-0000-0000-000000000000"


def check_generated_objects(trainjob: Object, runtime: Object, ctx: AdmissionContext) -> list[Finding]:
    """Reconcile errors, JobSet admission errors, then the child Jobs of an accepted JobSet."""
    subject = _as_created(trainjob)
    who = f"TrainJob {go_quote(as_str(as_dict(subject.get('metadata')).get('name')))}"
    event = f"event {api.EVENT_RESOURCES_CREATION_FAILED}"
    expansion = expand(subject, runtime, gates=ctx.gates, default_namespace=ctx.default_namespace)
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
    if importlib.util.find_spec("jobsetctl.jobset.kind") is None:
        return []  # JobSet admission is not available in this build
    from jobsetctl.admission.chain import admit

    result = admit(expansion.jobset, replace(ctx, operation=Operation.CREATE))
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


def _as_created(trainjob: Object) -> Object:
    """The TrainJob as the controller sees it: with a UID and, for generateName, a generated name."""
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
