"""batch/v1 Job: defaulting, selector generation, validation and update rules.

Upstream: kubernetes ``pkg/apis/batch/v1/defaults.go``, ``pkg/registry/batch/job/strategy.go``
(``generateSelector``), ``pkg/apis/batch/validation/validation.go``; scheduling.md §1.5 for the
WorkloadWithJob rules of 1.36 and 1.37.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jobsetctl.admission.chain import admit
from jobsetctl.kinds.interface import AdmissionContext
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.job import validate_job_spec
from jobsetctl.kube.job_update import gang_eligible
from jobsetctl.kube.versions import KubeVersion
from tests.helpers import admit_text, load_one, table, validate_text

HEAD = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: pi}\nspec:\n"
POD = "  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: c, image: busybox}]\n"


def job(spec: str = "", pod: str = POD, head: str = HEAD) -> str:
    return head + spec + pod


def found(text: str, version: str = "1.36", gates: str = "", old: str | None = None) -> list[tuple[str, str]]:
    result = admit_text(text, version=version, gates=gates, old=old)
    return [(f.rule.id, f.message) for f in result.findings if f.effective_severity != "info"]


def admitted(text: str, version: str = "1.36", gates: str = "") -> dict[str, Any]:
    result = admit_text(text, version=version, gates=gates)
    assert result.obj is not None
    return result.obj


# --- defaulting ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected", "absent"),
    [
        ("", {"completions": 1, "parallelism": 1, "backoffLimit": 6, "completionMode": "NonIndexed",
              "suspend": False, "manualSelector": False, "podReplacementPolicy": "TerminatingOrFailed"}, []),
        # Only when both are unset does completions get a default.
        ("  parallelism: 3\n", {"parallelism": 3}, ["completions"]),
        ("  completions: 5\n", {"completions": 5, "parallelism": 1}, []),
        ("  completionMode: Indexed\n  completions: 4\n  backoffLimitPerIndex: 1\n",
         {"backoffLimit": 2**31 - 1}, []),
        ("  podFailurePolicy:\n    rules: [{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}]\n",
         {"podReplacementPolicy": "Failed",
          "podFailurePolicy": {"rules": [{"action": "Ignore",
                                          "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]}}, []),
    ],
)
def test_job_defaults(spec: str, expected: dict[str, Any], absent: list[str]) -> None:
    obj = admitted(job(spec))
    assert {key: obj["spec"].get(key) for key in expected} == expected
    assert [key for key in absent if key in obj["spec"]] == []


def test_pod_template_gets_the_minimal_pod_defaults() -> None:
    pod_spec = admitted(job(pod="  template:\n    spec:\n      containers: [{name: c, image: b}]\n"))["spec"]["template"]["spec"]
    assert {k: pod_spec[k] for k in ("restartPolicy", "terminationGracePeriodSeconds", "schedulerName")} == {
        "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "schedulerName": "default-scheduler"}


def test_quirk_job_takes_template_labels_only_when_it_has_none() -> None:
    pod = "  template:\n    metadata: {labels: {app: x}}\n    spec:\n      restartPolicy: Never\n" \
          "      containers: [{name: c, image: b}]\n"
    assert admitted(job(pod=pod))["metadata"]["labels"] == {"app": "x"}
    own = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: pi, labels: {team: a}}\nspec:\n"
    assert admitted(job(pod=pod, head=own))["metadata"]["labels"] == {"team": "a"}


def test_selector_is_generated_only_when_a_uid_exists() -> None:
    with_uid = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: pi, uid: u-1}\nspec:\n"
    obj = admitted(job(head=with_uid))
    assert obj["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}}
    assert obj["spec"]["template"]["metadata"]["labels"] == {
        "job-name": "pi", "batch.kubernetes.io/job-name": "pi",
        "controller-uid": "u-1", "batch.kubernetes.io/controller-uid": "u-1"}
    # validate creates nothing: without a uid the object keeps its shape.
    plain = admitted(job())
    assert "selector" not in plain["spec"] and "metadata" not in plain["spec"]["template"]
    assert admit_text(job(head=with_uid)).accepted and admit_text(job()).accepted


# --- validation ---------------------------------------------------------------------------------

CONDITIONS = "onPodConditions: [{type: DisruptionTarget}]"


@pytest.mark.parametrize(
    ("spec", "pod", "expected"),
    [
        ("  parallelism: -1\n", POD, [("job-value", "spec.parallelism: Invalid value: -1: must be greater than or equal to 0")]),
        ("  ttlSecondsAfterFinished: -5\n", POD,
         [("job-value", "spec.ttlSecondsAfterFinished: Invalid value: -5: must be greater than or equal to 0")]),
        ("", "  template:\n    spec:\n      containers: [{name: c, image: b}]\n",
         [("job-restart-policy", 'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"')]),
        ("", "  template:\n    spec:\n      restartPolicy: Sometimes\n      containers: [{name: c, image: b}]\n",
         [("job-restart-policy", 'spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: '
                                 '"OnFailure", "Never"')]),
        ("  completionMode: Indexed\n  parallelism: 2\n", POD,
         [("job-completion-mode", "spec.completions: Required value: when completion mode is Indexed")]),
        ("  completionMode: Sequential\n", POD, [("job-completion-mode", 'spec.completionMode: Unsupported value: '
                                                                       '"Sequential": supported values: "NonIndexed", '
                                                                       '"Indexed"')]),
        ("  backoffLimitPerIndex: 1\n", POD,
         [("job-backoff-limit-per-index", "spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode")]),
        ("  completionMode: Indexed\n  completions: 2\n  maxFailedIndexes: 1\n", POD,
         [("job-backoff-limit-per-index", "spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified")]),
        ("  podFailurePolicy:\n    rules: [{action: '', onExitCodes: {operator: In, values: [1]}}]\n", POD,
         [("job-pod-failure-policy", 'spec.podFailurePolicy.rules[0].action: Required value: valid values: '
                                     '["Count" "FailIndex" "FailJob" "Ignore"]')]),
        ("  podFailurePolicy:\n    rules: [{action: FailIndex, " + CONDITIONS + "}]\n", POD,
         [("job-pod-failure-policy", 'spec.podFailurePolicy.rules[0].action: Invalid value: "FailIndex": requires the '
                                     "backoffLimitPerIndex to be set")]),
        ("  podFailurePolicy:\n    rules: [{action: Ignore}]\n", POD,
         [("job-pod-failure-policy", "spec.podFailurePolicy.rules[0]: Invalid value: specifying one of OnExitCodes and "
                                     "OnPodConditions is required")]),
        ("  podFailurePolicy:\n    rules: [{action: Ignore, onExitCodes: {operator: In, values: [1]}, "
         + CONDITIONS + "}]\n", POD,
         [("job-pod-failure-policy", "spec.podFailurePolicy.rules[0]: Invalid value: specifying both OnExitCodes and "
                                     "OnPodConditions is not supported")]),
        ("  podFailurePolicy:\n    rules: [{action: FailJob, onExitCodes: {containerName: x, operator: NotIn, "
         "values: [3, 1, 1]}}]\n", POD,
         [("job-pod-failure-policy", 'spec.podFailurePolicy.rules[0].onExitCodes.containerName: Invalid value: "x": '
                                     "must be one of the container or initContainer names in the pod template"),
          ("job-pod-failure-policy", "spec.podFailurePolicy.rules[0].onExitCodes.values[2]: Duplicate value: 1"),
          ("job-pod-failure-policy", "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: [3,1,1]: "
                                     "must be ordered")]),
        ("  podFailurePolicy:\n    rules: [{action: Ignore, onPodConditions: [{type: X, status: Maybe}]}]\n", POD,
         [("job-pod-failure-policy", 'spec.podFailurePolicy.rules[0].onPodConditions[0].status: Unsupported value: '
                                     '"Maybe": supported values: "False", "True", "Unknown"')]),
        ("  podReplacementPolicy: TerminatingOrFailed\n  podFailurePolicy:\n    rules: [{action: Ignore, "
         + CONDITIONS + "}]\n", POD,
         [("job-pod-replacement-policy", 'spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": '
                                         'supported values: "Failed"')]),
        ("", "  template:\n    spec:\n      restartPolicy: OnFailure\n      containers: [{name: '', image: ''}]\n",
         [("job-pod-template", "spec.template.spec.containers[0].name: Required value"),
          ("job-pod-template", "spec.template.spec.containers[0].image: Required value")]),
        ("  managedBy: kueue\n", POD,
         [("job-managed-by", 'spec.managedBy: Invalid value: "kueue": must be a domain-prefixed path (such as '
                             '"acme.io/foo")')]),
        ("  successPolicy: {rules: [{succeededCount: 1}]}\n", POD,
         [("job-success-policy", 'spec.successPolicy: Invalid value: {"rules":[{"succeededCount":1}]}: '
                                 "requires indexed completion mode")]),
        ("  completionMode: Indexed\n  completions: 3\n  successPolicy: {rules: [{succeededIndexes: '0-1,1', "
         "succeededCount: 5}]}\n", POD,
         [("job-success-policy", 'spec.successPolicy.rules[0].succeededIndexes: Invalid value: "0-1,1": error parsing '
                                 "succeededIndexes: non-increasing order, previous: 1, current: 1"),
          ("job-success-policy", "spec.successPolicy.rules[0].succeededCount: Invalid value: 5: must be less than or "
                                 "equal to 3 (the number of specified completions)"),
          ("job-success-policy", "spec.successPolicy.rules[0].succeededCount: Invalid value: 5: must be less than or "
                                 "equal to 0 (the number of indexes in the specified succeededIndexes field)")]),
        ("  manualSelector: true\n", POD, [("job-selector", "spec.selector: Required value")]),
    ],
)
def test_job_validation_table(spec: str, pod: str, expected: list[tuple[str, str]]) -> None:
    assert found(job(spec, pod)) == expected


def test_absent_required_keys_are_left_to_the_schema_layer() -> None:
    # One problem, one finding: the schema's "Required value" for an absent key is not repeated by
    # the built-in validation (which only sees a present-but-empty value).
    text = job("  podFailurePolicy:\n    rules: [{onExitCodes: {operator: In, values: [1]}}]\n")
    assert [rule for rule, _ in found(text)] == ["schema-required"]


def test_quirk_active_deadline_zero_is_accepted() -> None:
    # The API docs say "must be a positive integer", but validation only rejects negative values
    # (ValidateNonnegativeField). The brief's "> 0" is therefore not what the API server enforces.
    assert found(job("  activeDeadlineSeconds: 0\n")) == []
    assert found(job("  activeDeadlineSeconds: -1\n")) == [
        ("job-value", "spec.activeDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0")]


LONG = "a" * 64


def test_quirk_long_job_name_fails_twice_on_the_generated_labels(tmp_path: Path) -> None:
    text = job(head=f"apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {LONG}\nspec:\n")
    diagnostics = validate_text(tmp_path, text, version="1.36")
    labels = [d for d in diagnostics if d.rule == "job-name"]
    message = f'spec.template.labels: Invalid value: "{LONG}": must be no more than 63 characters'
    # One per job-name label (job-name and batch.kubernetes.io/job-name), both at metadata.name.
    assert [(d.line, d.column, d.message) for d in labels] == [(4, 3, message), (4, 3, message)]


def test_quirk_indexed_hostname_message_wording() -> None:
    name = "a" * 62
    text = job("  completionMode: Indexed\n  completions: 10\n",
               head=f"apiVersion: batch/v1\nkind: Job\nmetadata: {{name: {name}}}\nspec:\n")
    assert found(text) == [("job-name", f'metadata.name: Invalid value: "{name}": will not able to create pod with '
                                        f"invalid DNS label: {name}-9")]


def test_user_selector_without_manual_selector_is_not_auto_generated() -> None:
    [(rule, message)] = [m for m in found(job("  selector: {matchLabels: {app: x}}\n")) if m[0] == "job-selector"][:1]
    assert rule == "job-selector" and message.endswith("`selector` not auto-generated")


def test_manual_selector_must_match_template_labels() -> None:
    pod = "  template:\n    metadata: {labels: {app: web}}\n    spec:\n      restartPolicy: Never\n" \
          "      containers: [{name: c, image: b}]\n"
    spec = "  manualSelector: true\n  selector: {matchLabels: {app: api}}\n"
    assert found(job(spec, pod)) == [("job-selector", 'spec.template.metadata.labels: Invalid value: {"app":"web"}: '
                                                      "`selector` does not match template `labels`")]
    assert found(job(spec, pod.replace("app: web", "app: api"))) == []


def test_positions_of_job_findings(tmp_path: Path) -> None:
    text = (
        "apiVersion: batch/v1\n"
        "kind: Job\n"
        "metadata: {name: pi}\n"
        "spec:\n"
        "  parallelism: -2\n"
        "  backoffLimitPerIndex: 1\n"
        "  template:\n"
        "    spec:\n"
        "      containers:\n"
        "      - name: c\n"
    )
    assert table(validate_text(tmp_path, text, version="1.36")) == [
        (5, 3, "job-value"),
        (6, 3, "job-backoff-limit-per-index"),
        # restartPolicy is defaulted to Always, which is not in the file: the nearest written parent.
        (8, 5, "job-restart-policy"),
        # image is missing: the container itself.
        (10, 9, "job-pod-template"),
    ]


def test_validate_job_spec_reports_paths_under_a_prefix() -> None:
    kube = KubeVersion.V1_36
    ctx = AdmissionContext(kube, parse_feature_gates("", kube))
    prefix = ("spec", "replicatedJobs", 0, "template", "spec")
    findings = validate_job_spec({"parallelism": -1, "template": {"spec": {"restartPolicy": "Never",
                                                                           "containers": [{"name": "c", "image": "i"}]}}},
                                 prefix, ctx)
    assert [(f.path, f.at) for f in findings] == [
        ("spec.replicatedJobs[0].template.spec.parallelism", (*prefix, "parallelism"))]


# --- 1.37 spec.scheduling -----------------------------------------------------------------------

INDEXED4 = "  completionMode: Indexed\n  completions: 4\n  parallelism: 4\n"


def test_scheduling_is_dropped_with_a_warning_while_workload_with_job_is_off() -> None:
    text = job(INDEXED4 + "  scheduling: {schedulingPolicy: {gang: {minCount: 9}}}\n")
    assert found(text, "1.37") == [("job-gated-field", "spec.scheduling: ignored while the WorkloadWithJob feature gate "
                                                       "is disabled (the API server drops the field on create)")]
    assert "scheduling" not in admitted(text, "1.37")["spec"]


@pytest.mark.parametrize(
    ("scheduling", "expected"),
    [
        ("{schedulingPolicy: {gang: {minCount: 4}}, disruptionMode: {all: {}}}", []),
        ("{schedulingPolicy: {gang: {}}}", []),
        ("{schedulingPolicy: {gang: {minCount: 0}}}",
         [("job-scheduling", "spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 0: must be greater than or "
                             "equal to 1")]),
        ("{schedulingPolicy: {basic: {}, gang: {}}}",
         [("job-scheduling", 'spec.scheduling.schedulingPolicy: Invalid value: "{basic, gang}": must specify exactly '
                             "one of: `basic`, `gang`")]),
        ("{schedulingConstraints: {topology: [{key: rack}, {key: zone}]}}",
         [("job-scheduling", "spec.scheduling.schedulingConstraints.topology: Too many: 2: must have at most 1 item")]),
    ],
)
def test_job_scheduling_table(scheduling: str, expected: list[tuple[str, str]]) -> None:
    assert found(job(INDEXED4 + f"  scheduling: {scheduling}\n"), "1.37", "WorkloadWithJob=true") == expected


@pytest.mark.parametrize(
    ("scheduling", "path"),
    [
        # scheduling.md §1.5: a gang minCount above parallelism is rejected (wording [UNCONFIRMED]).
        ("{schedulingPolicy: {gang: {minCount: 5}}}", "spec.scheduling.schedulingPolicy.gang.minCount"),
    ],
)
def test_job_scheduling_rules_with_unconfirmed_wording(scheduling: str, path: str) -> None:
    result = admit_text(job(INDEXED4 + f"  scheduling: {scheduling}\n"), version="1.37", gates="WorkloadWithJob=true")
    assert [(f.rule.id, f.path) for f in result.findings] == [("job-scheduling", path)]


def test_a_basic_job_may_be_disrupted_as_a_whole() -> None:
    """An unset policy means basic; disruptionMode all is valid with it, as on the PodGroup it compiles to
    (podgrouppreemption_test.go creates basic PodGroups with disruptionMode all; issue 11 item 8)."""
    result = admit_text(job(INDEXED4 + "  scheduling: {disruptionMode: {all: {}}}\n"), version="1.37",
                        gates="WorkloadWithJob=true")
    assert result.findings == []


# --- update -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old_spec", "new_spec", "expected_rules"),
    [
        ("  parallelism: 2\n", "  parallelism: 5\n", []),
        ("  completions: 2\n", "  completions: 3\n", ["job-immutable"]),
        # Elastic Indexed Jobs: completions may change in tandem with parallelism only.
        ("  completionMode: Indexed\n  completions: 2\n  parallelism: 2\n",
         "  completionMode: Indexed\n  completions: 3\n  parallelism: 3\n", []),
        ("  completionMode: Indexed\n  completions: 2\n  parallelism: 2\n",
         "  completionMode: Indexed\n  completions: 3\n  parallelism: 2\n", ["job-immutable"]),
        ("  completionMode: NonIndexed\n", "  completionMode: Indexed\n  completions: 1\n", ["job-immutable"]),
        ("  suspend: false\n", "  suspend: true\n", []),
    ],
)
def test_job_update_table(old_spec: str, new_spec: str, expected_rules: list[str]) -> None:
    assert [rule for rule, _ in found(job(new_spec), old=job(old_spec))] == expected_rules


def test_completions_tandem_message() -> None:
    old = job("  completionMode: Indexed\n  completions: 2\n  parallelism: 2\n")
    new = job("  completionMode: Indexed\n  completions: 3\n  parallelism: 2\n")
    assert found(new, old=old) == [
        ("job-immutable", "spec.completions: Invalid value: 3: can only be modified in tandem with spec.parallelism")]


def test_template_is_immutable_unless_suspended_and_never_started() -> None:
    pod_a = POD.replace("restartPolicy: Never", "restartPolicy: Never\n      nodeSelector: {zone: a}")
    pod_b = pod_a.replace("zone: a", "zone: b")
    assert [r for r, _ in found(job(pod=pod_b), old=job(pod=pod_a))] == ["job-immutable"]
    assert found(job("  suspend: true\n", pod_b), old=job("  suspend: true\n", pod_a)) == []
    image = pod_a.replace("image: busybox", "image: other")
    assert [r for r, _ in found(job("  suspend: true\n", image), old=job("  suspend: true\n", pod_a))] == [
        "job-immutable"]


GANG_136 = "  completionMode: Indexed\n  completions: {n}\n  parallelism: {n}\n"
GROUPED_POD = POD.replace("restartPolicy: Never", "restartPolicy: Never\n      schedulingGroup: {podGroupName: pg}")


@pytest.mark.parametrize(
    ("gates", "pod", "frozen"),
    [
        ("WorkloadWithJob=true", POD, True),
        ("", POD, False),
        # A template that already names a scheduling group is not gang-eligible (the controller opts out).
        ("WorkloadWithJob=true", GROUPED_POD, False),
    ],
)
def test_136_parallelism_of_gang_eligible_job_is_frozen(gates: str, pod: str, frozen: bool) -> None:
    # Resizing 4 → 6 in tandem is fine for an elastic Indexed Job, except for a gang-eligible Job on
    # 1.36 with WorkloadWithJob (KEP-5547 "Validation for Parallelism Changes"; wording [UNCONFIRMED]).
    old, new = job(GANG_136.format(n=4), pod), job(GANG_136.format(n=6), pod)
    findings = admit_text(new, version="1.36", gates=gates, old=old).findings
    assert [(f.rule.id, f.path) for f in findings] == ([("job-immutable", "spec.parallelism")] if frozen else [])
    # 1.37 makes parallelism mutable again.
    assert admit_text(new, version="1.37", gates=gates, old=old).findings == []


def test_gang_eligibility_mirrors_the_job_controller() -> None:
    base = {"parallelism": 4, "completions": 4, "completionMode": "Indexed", "template": {"spec": {}}}
    assert gang_eligible(base)
    assert not gang_eligible({**base, "parallelism": 1, "completions": 1})
    assert not gang_eligible({**base, "completions": 8})
    assert not gang_eligible({**base, "completionMode": "NonIndexed"})
    assert not gang_eligible({**base, "template": {"spec": {"schedulingGroup": {"podGroupName": "x"}}}})


def test_137_scheduling_is_frozen_but_min_count() -> None:
    gates = "WorkloadWithJob=true"
    old = job(INDEXED4 + "  scheduling: {schedulingPolicy: {gang: {minCount: 2}}}\n")
    assert found(old.replace("minCount: 2", "minCount: 3"), "1.37", gates, old=old) == []
    assert [r for r, _ in found(old.replace("gang: {minCount: 2}", "basic: {}"), "1.37", gates, old=old)] == [
        "job-immutable"]
    assert [r for r, _ in found(job(INDEXED4), "1.37", gates, old=old)] == ["job-immutable"]


def test_job_defaulting_tolerates_any_shape() -> None:
    for junk in ("spec: 3", "spec: {template: 5, podFailurePolicy: {rules: [1, {onPodConditions: [2]}]}}"):
        result = admit(load_one(f"apiVersion: batch/v1\nkind: Job\nmetadata: {{name: x}}\n{junk}"),
                       AdmissionContext(KubeVersion.V1_37, parse_feature_gates("", KubeVersion.V1_37)))
        assert result.obj is not None


def test_volume_mount_must_name_a_pod_volume() -> None:
    """ValidateVolumeMounts: a mount of a volume the pod does not have; JobSet admission does not check
    it, the Job create does (the lint jobset-child-job-invalid reports it on the JobSet)."""
    text = """
        apiVersion: batch/v1
        kind: Job
        metadata: {name: j}
        spec:
          template:
            spec:
              restartPolicy: Never
              volumes: [{name: cfg, emptyDir: {}}]
              containers:
              - name: c
                image: busybox
                volumeMounts: [{name: data, mountPath: /data}, {name: cfg, mountPath: /cfg}]
    """
    findings = admit_text(text).findings
    assert [(f.rule.id, f.message) for f in findings] == [
        ("job-pod-template", 'spec.template.spec.containers[0].volumeMounts[0].name: Not found: "data"')
    ]
