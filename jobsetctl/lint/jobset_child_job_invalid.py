"""``jobset-child-job-invalid``: a replicated job template the API server rejects when a Job is made of it.

jobset.md §1.3 ("Job semantics are validated later by the apiserver when the child Job is created") and
§2.2, "Not validated by the webhook": pod-template semantics such as an empty image, a ``restartPolicy``
of ``Always`` or a bad pod label pass JobSet admission, and fail only when the controller creates the
Job, as a ``JobCreationFailed`` event on every reconcile (§4.1 step 13): the JobSet exists and never
runs.

The check builds each child Job spec the way the API server would see it (JobSet defaults are already
on the object; the batch/v1 Job defaults are added, :func:`jobsetctl.kube.job.default_job_spec`) and runs
the API server's Job spec validation (:func:`jobsetctl.kube.job.validate_job_spec`) on it. Messages are
the API server's, for the Job; positions are in the JobSet.

A TrainJob's JobSet is built by the Trainer controller from its runtime; its child Jobs are checked the
same way and reported on the TrainJob (trainer.md §2.7 reports JobSet admission itself).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.jobset import api, names
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.field import Path, go_quote, path_string
from jobsetctl.kube.job import default_job_spec, validate_job_spec
from jobsetctl.lint.support import JOBSET, TRAINJOB, group_kind, lint_doc, plan_of
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define

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

FAILING = """
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
            restartPolicy: Always   # Jobs allow only OnFailure or Never
            containers: [{name: worker, image: busybox}]
"""

RULE = define(
    "jobset-child-job-invalid", Layer.LINT, Severity.WARNING,
    "A replicated job's template passes JobSet admission but the API server rejects the Jobs made from it.",
    spec="jobset.md §1.3, §2.2, §4.1",
    doc=lint_doc(
        "JobSet admission does not validate the Job template. The controller's Job creations fail "
        "(JobCreationFailed events) and the JobSet never runs.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({JOBSET, TRAINJOB})
LOCAL_KINDS = frozenset({JOBSET})  # a TrainJob needs its runtime, looked up among the inputs


def child_job_problems(jobset: Any, ctx: AdmissionContext) -> Iterator[tuple[str, str, Path, str]]:
    """(Job name, message, position in the JobSet, Job-relative path) per error of a child Job spec."""
    from jobsetctl.jobset.render import child_job

    for index, rjob in api.enumerate_replicated_jobs(jobset):
        if not isinstance(api.job_template(rjob).get("spec"), dict):
            continue
        # The Job exactly as the controller builds it (labels, subdomain, volumeClaimPolicies volumes),
        # so that a mount of a claim template is not mistaken for a missing volume.
        job_spec = child_job(jobset, rjob, 0, restart_attempt=0).get("spec")
        if not isinstance(job_spec, dict):
            continue
        default_job_spec(job_spec)
        job_name = names.job_name(api.name(jobset), api.rjob_name(rjob), 0)
        for finding in validate_job_spec(job_spec, ("spec",), ctx):
            if finding.effective_severity is not Severity.ERROR:
                continue  # e.g. a gated field the API server drops: the Job is still created
            at: Path = ("spec", "replicatedJobs", index, "template", *finding.at)
            yield job_name, finding.message, at, finding.path


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    if group_kind(obj) == JOBSET:
        for job_name, message, at, _ in child_job_problems(obj, ctx):
            yield RULE.finding(
                f"creating Job {go_quote(job_name)} would fail (JobCreationFailed): {message}",
                path=path_string(at), at=at,
            )
        return
    plan = plan_of(obj, ctx)
    if plan is None or plan.jobset is None or not plan.expansion.applied:
        return
    from jobsetctl.trainer.webhook_expansion import cause_in_trainjob

    for job_name, message, at, _ in child_job_problems(plan.jobset, ctx):
        jobset_path = path_string(at)
        yield RULE.finding(
            f"the Trainer controller's JobSet {go_quote(api.name(plan.jobset))} is accepted, but creating its Job "
            f"{go_quote(job_name)} would fail (JobCreationFailed): {message}",
            path=jobset_path, at=cause_in_trainjob(obj, jobset_path, message),
        )
