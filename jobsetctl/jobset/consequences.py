"""``jobset-child-job-invalid``: the JobSet is accepted, the Jobs made of its templates are not (the
``consequence`` layer, issue #13).

jobset.md §1.3 ("Job semantics are validated later by the apiserver when the child Job is created") and
§2.2, "Not validated by the webhook": pod-template semantics such as an empty image, a ``restartPolicy``
of ``Always`` or a bad pod label pass JobSet admission, and fail only when the controller creates the
Job, as a ``JobCreationFailed`` event on every reconcile (§4.1 step 13,
``jobset_controller.go`` ``reconcileReplicatedJobs``): the JobSet exists and never runs.

The check builds each child Job the way the controller does (:func:`jobsetctl.jobset.render.child_job`:
labels, subdomain, volumeClaimPolicies volumes), adds the batch/v1 Job defaults
(:func:`jobsetctl.kube.job.default_job_spec`) and runs the API server's Job spec validation
(:func:`jobsetctl.kube.job.validate_job_spec`) on it, the very checks the fake API server of ``render``
and ``simulate`` runs when the controller creates that Job. Messages carry the API server's answer for
the Job; positions are in the JobSet.

A TrainJob's JobSet is built by the Trainer controller from its runtime; its child Jobs are checked the
same way and reported on the TrainJob (:mod:`jobsetctl.trainer.webhook_expansion`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.jobset import api, names
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.field import Path, go_quote, invalid_status, path_string
from jobsetctl.rules.registry import define, example_doc

PASSING = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: children
spec:
  replicatedJobs:
  - name: workers
    template:
      spec:
        template:
          spec:
            restartPolicy: Never
            containers: [{name: worker, image: busybox}]
"""

FAILING = PASSING.replace("restartPolicy: Never", "restartPolicy: Always   # Jobs allow only OnFailure or Never")


RULE = define(
    "jobset-child-job-invalid", Layer.CONSEQUENCE, Severity.ERROR,
    "The JobSet is accepted, but the API server refuses the Jobs the controller makes of a replicated job.",
    spec="jobset.md §1.3, §2.2, §4.1",
    doc=example_doc(
        "JobSet admission does not validate the Job template: the JobSet is accepted, and every Job "
        "creation of the controller is refused (a JobCreationFailed event on each reconcile); the JobSet "
        "never runs. The same holds for the JobSet a TrainJob's runtime produces (reported on the TrainJob).",
        PASSING, FAILING,
    ),
)


@dataclass(frozen=True, slots=True)
class ChildJobProblem:
    """One error of one child Job spec: the Job, the API server's cause, where in the JobSet it comes from."""

    job_name: str
    cause: str
    #: Position in the JobSet (``spec.replicatedJobs[i].template...``).
    at: Path

    @property
    def event(self) -> str:
        """The JobCreationFailed event the JobSet gets on every reconcile (``createJobs``), with the API
        server's answer to the create."""
        return api.job_creation_failed_message(self.job_name, invalid_status("batch", "Job", self.job_name, [self.cause]))


def child_job_problems(jobset: Any, ctx: AdmissionContext) -> Iterator[ChildJobProblem]:
    """Every error of the first child Job of every replicated job (the others differ only by index)."""
    from jobsetctl.jobset.render import child_job
    from jobsetctl.kube.job import default_job_spec, validate_job_spec

    for index, rjob in api.enumerate_replicated_jobs(jobset):
        if not isinstance(api.job_template(rjob).get("spec"), dict):
            continue
        job_spec = child_job(jobset, rjob, 0, restart_attempt=0).get("spec")
        if not isinstance(job_spec, dict):
            continue
        default_job_spec(job_spec)
        job_name = names.job_name(api.name(jobset), api.rjob_name(rjob), 0)
        for finding in validate_job_spec(job_spec, ("spec",), ctx):
            if finding.effective_severity is not Severity.ERROR:
                continue  # e.g. a gated field the API server drops: the Job is still created
            yield ChildJobProblem(job_name, finding.message, ("spec", "replicatedJobs", index, "template", *finding.at))


def check_child_jobs(jobset: Object, ctx: AdmissionContext) -> list[Finding]:
    """The findings on a JobSet (``JobSetHandler.validate_consequences``)."""
    who = f"JobSet {go_quote(api.name(jobset))}"
    return [
        RULE.finding(
            f"{who} is accepted, but its Jobs are refused, event JobCreationFailed: {p.event}",
            path=path_string(p.at), at=p.at,
        )
        for p in child_job_problems(jobset, ctx)
    ]
