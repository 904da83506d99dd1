"""The consequence layer for JobSets: accepted, but the Jobs made of it are refused (issue #13).

``jobset-child-job-invalid`` (jobset.md §1.3, §2.2 "not validated by the webhook", §4.1): tables of
(line, column, path, rule); ``jobset()`` (tests/lint/support.py) puts ``spec:`` on line 5 and each
replicated job on two lines. Also: ``Diagnostic.after``, which marks what upstream never gets to for
an object (webhook findings after schema or CEL errors, consequences of a refused object).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jobsetctl.diagnostics import Layer
from tests.helpers import validate_files, validate_text
from tests.lint.support import jobset, rjob

Rows = list[tuple[int, int, str, str]]


def consequences(tmp_path: Path, text: str, **options: object) -> Rows:
    return [(d.line, d.column, d.path, d.rule) for d in validate_text(tmp_path, text, **options)
            if d.layer is Layer.CONSEQUENCE]


POD = "spec.replicatedJobs[0].template.spec.template"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # jobset.md §2.2 "not validated by the webhook": Job semantics fail at Job creation.
        (jobset(rjob("workers", pod="restartPolicy: Always, ")),
         [(8, 41, f"{POD}.spec.restartPolicy", "jobset-child-job-invalid")]),
        # JobSet defaults completionMode to Indexed, which requires completions: a parallelism alone fails
        # (reported at the Job spec, where the defaulted completionMode would be).
        (jobset(rjob("workers", spec="parallelism: 4, ")),
         [(8, 16, "spec.replicatedJobs[0].template.spec.completionMode", "jobset-child-job-invalid")]),
        (jobset("  - name: workers\n    template:\n      spec:\n        template:\n          metadata:\n"
                "            labels: {'bad key!': x}\n          spec: {containers: [{name: c, image: ''}]}\n"),
         [(12, 22, f"{POD}.metadata.labels[bad key!]", "jobset-child-job-invalid"),
          (13, 41, f"{POD}.spec.containers[0].image", "jobset-child-job-invalid")]),
        # Passing: defaults (OnFailure, completions 1); parallelism with completions.
        (jobset(rjob("workers")), []),
        (jobset(rjob("workers", spec="parallelism: 4, completions: 4, ", pod="restartPolicy: Never, ")), []),
    ],
)
def test_child_job_template_rejected_at_job_creation(tmp_path: Path, text: str, expected: Rows) -> None:
    assert consequences(tmp_path, text) == expected


def test_child_job_message_says_both_halves(tmp_path: Path) -> None:
    text = jobset(rjob("workers", pod="restartPolicy: Always, "))
    [finding] = validate_text(tmp_path, text)
    # Both halves: what the API server accepts, and the event the JobSet gets (jobset_controller.go
    # createJobs) with the Job API's answer.
    assert finding.message == (
        'JobSet "js" is accepted, but its Jobs are refused, event JobCreationFailed: job "js-workers-0" creation '
        'failed with error: Job.batch "js-workers-0" is invalid: spec.template.spec.restartPolicy: Required value: '
        'valid values: "OnFailure", "Never"'
    )
    assert (finding.severity, finding.layer, finding.after) == ("error", Layer.CONSEQUENCE, None)
    # JobSet admission itself accepts it: --admission-only says nothing.
    assert validate_text(tmp_path, text, admission_only=True) == []


def test_child_job_of_a_trainjob(tmp_path: Path) -> None:
    files = {
        "runtime.yaml": """
            apiVersion: trainer.kubeflow.org/v1alpha1
            kind: TrainingRuntime
            metadata: {name: always}
            spec:
              mlPolicy: {numNodes: 1, torch: {}}
              template:
                spec:
                  replicatedJobs:
                  - name: node
                    template:
                      metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
                      spec: {template: {spec: {restartPolicy: Always, containers: [{name: node, image: x}]}}}
        """,
        "trainjob.yaml": """
            apiVersion: trainer.kubeflow.org/v1alpha1
            kind: TrainJob
            metadata: {name: tj}
            spec:
              runtimeRef: {kind: TrainingRuntime, name: always}
              trainer: {numNodes: 2}
        """,
    }
    found = [d for d in validate_files(tmp_path, files) if d.layer is Layer.CONSEQUENCE]
    # Reported on the TrainJob, at the runtime reference (the template comes from the runtime).
    assert [(Path(d.file).name, d.line, d.column, d.path, d.rule) for d in found] == [
        ("trainjob.yaml", 5, 39, "spec.runtimeRef.name", "jobset-child-job-invalid")]
    assert found[0].message == (
        'TrainJob "tj" is accepted and so is its JobSet "tj", but the Jobs are refused, event JobCreationFailed on '
        'the JobSet: job "tj-node-0" creation failed with error: Job.batch "tj-node-0" is invalid: '
        'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'
    )


# --- after: what upstream never gets to --------------------------------------------------------


def test_webhook_findings_after_a_schema_error_are_marked(tmp_path: Path) -> None:
    """The API server calls no validating webhook when the schema fails (jobset.md §2.1, trainer.md §2.1):
    the webhook's finding is reported, marked ``after: schema``; the schema error itself is not marked."""
    name = "j" * 60  # the child Job name is over 63 characters: a JobSet webhook error
    text = jobset(rjob("workers"), name=name, spec="  suspend: maybe\n")
    found = {(d.rule, d.layer, d.after) for d in validate_text(tmp_path, text)}
    assert ("schema-type", Layer.SCHEMA, None) in found
    # A type error stops everything after the schema (the webhooks could not decode the object).
    assert {rule for rule, _, _ in found} == {"schema-type"}

    # An enum error leaves the object well-typed: the webhook runs here, and its finding is marked.
    text = jobset(rjob("workers"), name=name, spec="  startupPolicy: {startupPolicyOrder: Sideways}\n")
    found = {(d.rule, d.layer, d.after) for d in validate_text(tmp_path, text)}
    assert found == {("schema-enum", Layer.SCHEMA, None), ("jobset-job-name", Layer.WEBHOOK, Layer.SCHEMA)}


def test_webhook_findings_after_a_cel_error_are_marked(tmp_path: Path) -> None:
    # startupPolicy with dependsOn is a CEL error (jobset.md §2.1); a dependsOn on the first replicated
    # job is a webhook error (§2.2 #2), which the API server never gets to.
    text = jobset(rjob("a", extra="dependsOn: [{name: b, status: Ready}]"), rjob("b"),
                  spec="  startupPolicy: {startupPolicyOrder: InOrder}\n")
    found = {(d.rule, d.after) for d in validate_text(tmp_path, text) if d.severity == "error"}
    assert ("cel-rule", None) in found
    assert ("jobset-depends-on-first", Layer.CEL) in found


def test_a_refused_object_has_no_consequences(tmp_path: Path) -> None:
    """A JobSet the webhook refuses is never stored: no Job of it is ever created. Its consequences come
    once it is accepted (saying "accepted, but" of a refused object would be false, and a consequence
    often has the same cause as the error, e.g. a negative count)."""
    text = jobset(rjob("workers", extra="dependsOn: [{name: workers, status: Ready}]", pod="restartPolicy: Always, "))
    found = {(d.rule, d.layer, d.after) for d in validate_text(tmp_path, text)}
    assert found == {("jobset-depends-on-first", Layer.WEBHOOK, None)}
    fixed = text.replace("    dependsOn: [{name: workers, status: Ready}]\n", "")
    assert {d.rule for d in validate_text(tmp_path, fixed)} == {"jobset-child-job-invalid"}


def test_a_trainjob_refused_by_its_schema_has_no_consequences(tmp_path: Path) -> None:
    text = """
        apiVersion: trainer.kubeflow.org/v1alpha1
        kind: TrainJob
        metadata: {name: neg}
        spec:
          runtimeRef: {name: torch-distributed}
          trainer: {numNodes: -1, image: x}
    """
    assert [d.rule for d in validate_text(tmp_path, text)] == ["schema-range"]


def test_built_in_validation_is_one_pass_with_the_schema(tmp_path: Path) -> None:
    """A Job has no webhook: its API validation runs with the schema and nothing is marked."""
    text = """
        apiVersion: batch/v1
        kind: Job
        metadata: {name: j}
        spec:
          backoffLimit: -1
          template:
            spec:
              restartPolicy: Never
              containers: [{name: c, image: busybox, unknownField: 1}]
    """
    found = validate_text(tmp_path, text)
    assert {d.rule for d in found} == {"schema-unknown-field", "job-value"}
    assert all(d.after is None for d in found)


def test_after_in_every_output_format(tmp_path: Path) -> None:
    import contextlib
    import io
    import json

    from jobsetctl.cli.app import run

    path = tmp_path / "js.yaml"
    path.write_text(jobset(rjob("a", extra="dependsOn: [{name: b, status: Ready}]"), rjob("b"),
                           spec="  startupPolicy: {startupPolicyOrder: InOrder}\n"), encoding="utf-8")

    def output(fmt: str) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert run(["validate", "-o", fmt, str(path)]) == 1
        return out.getvalue()

    [marked] = [d for d in json.loads(output("json"))["diagnostics"] if d["rule"] == "jobset-depends-on-first"]
    assert marked["after"] == "cel"
    assert all("after" not in d for d in json.loads(output("json"))["diagnostics"] if d["rule"] == "cel-rule")
    note = ("note: upstream stops at the cel errors of this object and never calls the validating webhooks; "
            "reported so that one pass shows everything")
    assert note in output("text")
    [result] = [r for r in json.loads(output("sarif"))["runs"][0]["results"] if r["ruleId"] == "jobset-depends-on-first"]
    assert result["properties"]["after"] == "cel" and result["message"]["text"].endswith(note)
    assert "(note: upstream stops at the cel errors" in output("github")


def test_readme_example_is_what_validate_says(tmp_path: Path) -> None:
    import re

    from tests.helpers import REPO

    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    example = re.search(r"each message says both halves, e\.g\. `([^`]*)`", readme)
    assert example is not None
    text = jobset(rjob("rj", spec="parallelism: 2, "))
    [finding] = validate_text(tmp_path, text)
    assert finding.message == example.group(1)
