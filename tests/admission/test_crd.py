"""``--crd FILE``: objects checked against the exact CRD a cluster runs (schema, defaults, CEL), with the
webhooks of a kind we know still running. Conformance tests read the upstream CRDs from
../shared/upstream and skip when it is absent; the others use small CRDs written here.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jobsetctl.admission.crd import CrdHandler, register_crd_files
from jobsetctl.diagnostics import Diagnostic
from jobsetctl.kinds.registry import clear_extra, handler_for
from jobsetctl.kube.versions import KubeVersion
from jobsetctl.status import UsageError
from tests.helpers import UPSTREAM, dedent, requires_upstream, table, validate_files

JOBSET_CRD = UPSTREAM / "jobset" / "crd" / "jobset.x-k8s.io_jobsets.yaml"
TRAINER_CRDS = UPSTREAM / "trainer" / "crd"


@pytest.fixture(autouse=True)
def no_registered_crds() -> Iterator[None]:
    clear_extra()
    yield
    clear_extra()


def admission_errors(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Errors of the schema and CEL layers (what the CRD decides)."""
    return [d for d in diagnostics if d.severity == "error" and d.rule.startswith(("schema-", "cel-"))]


WIDGET_CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: self.min <= self.max
              message: min must not exceed max
              fieldPath: .min
            properties:
              min: {type: integer, default: 0}
              max: {type: integer}
  - name: v0
    served: false
    storage: false
    schema:
      openAPIV3Schema: {type: object}
"""


def widget(spec: str) -> str:
    return "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n" + spec


def test_crd_of_an_unknown_kind_registers_a_handler(tmp_path: Path) -> None:
    crd = tmp_path / "crd.yaml"
    crd.write_text(dedent(WIDGET_CRD))
    assert handler_for("example.com", "Widget") is None
    register_crd_files([str(crd)])
    handler = handler_for("example.com", "Widget")
    assert isinstance(handler, CrdHandler)
    assert handler.namespaced is False
    assert handler.builtin is None
    # A CRD serves the same versions in every release; v0 is defined but not served.
    assert all(handler.served_versions(release) == ("v1",) for release in KubeVersion)


def test_crd_schema_defaults_and_rules_apply(tmp_path: Path) -> None:
    (tmp_path / "crd.yaml").write_text(dedent(WIDGET_CRD))
    crds = [str(tmp_path / "crd.yaml")]
    ok = validate_files(tmp_path, {"ok.yaml": widget("  max: 3\n")}, crds=crds)
    assert admission_errors(ok) == []
    bad = validate_files(tmp_path, {"bad.yaml": widget("  min: 5\n  max: 3\n")}, crds=crds)
    [error] = admission_errors(bad)
    assert (error.line, error.column, error.rule) == (6, 3, "cel-rule")
    assert error.message == 'spec.min: Invalid value: "object": min must not exceed max'
    # min defaults to 0 from the CRD schema before the rule runs
    defaulted = validate_files(tmp_path, {"neg.yaml": widget("  max: -1\n")}, crds=crds)
    assert [d.message for d in admission_errors(defaulted)] == [
        'spec.min: Invalid value: "object": min must not exceed max'
    ]


def test_version_not_served_by_the_crd(tmp_path: Path) -> None:
    (tmp_path / "crd.yaml").write_text(dedent(WIDGET_CRD))
    text = "apiVersion: example.com/v0\nkind: Widget\nmetadata:\n  name: w\n"
    diagnostics = validate_files(tmp_path, {"old.yaml": text}, crds=[str(tmp_path / "crd.yaml")])
    assert table(diagnostics) == [(1, 1, "no-kind-match")]


UNUSABLE = [
    pytest.param("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
                 "bad.yaml:2:1: not a CustomResourceDefinition: found ConfigMap (v1)", id="not-a-crd"),
    pytest.param("apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata: {name: x}\n",
                 "bad.yaml:1:1: apiextensions.k8s.io/v1beta1 CustomResourceDefinition is not served since "
                 "Kubernetes 1.22; use apiextensions.k8s.io/v1", id="v1beta1"),
    pytest.param(dedent("""
        apiVersion: apiextensions.k8s.io/v1
        kind: CustomResourceDefinition
        metadata: {name: x}
        spec:
          group: example.com
          names: {kind: X, plural: xs}
          scope: Namespaced
          versions:
          - name: v1
            served: true
            storage: true
        """), "bad.yaml:9:5: version v1 has no schema.openAPIV3Schema to check objects against", id="no-schema"),
    pytest.param(dedent("""
        apiVersion: apiextensions.k8s.io/v1
        kind: CustomResourceDefinition
        metadata: {name: x}
        spec:
          names: {kind: X, plural: xs}
          scope: Namespaced
          versions: []
        """), "bad.yaml:4:1: spec.group: Required value", id="no-group"),
    pytest.param(dedent("""
        apiVersion: apiextensions.k8s.io/v1
        kind: CustomResourceDefinition
        metadata: {name: x}
        spec:
          group: example.com
          names: {kind: X, plural: xs}
          scope: Everywhere
          versions: []
        """), "bad.yaml:7:3: spec.scope: Unsupported value: 'Everywhere': supported values: \"Cluster\", "
              "\"Namespaced\"", id="bad-scope"),
    pytest.param("key: [unclosed\n", "bad.yaml:2:1:", id="yaml-error"),
    pytest.param("", "bad.yaml:1:1: no CustomResourceDefinition in the file", id="empty"),
]


@pytest.mark.parametrize(("text", "expected"), UNUSABLE)
def test_unusable_crd_file_is_a_usage_error(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(UsageError) as caught:
        register_crd_files([str(path)])
    assert str(caught.value).startswith(f"--crd: {tmp_path}/" + expected)


def test_missing_crd_file_is_a_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(UsageError, match=f"^--crd: {missing}:1:1: no such file or directory$"):
        register_crd_files([str(missing)])


def test_nothing_is_registered_when_one_crd_is_unusable(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(dedent(WIDGET_CRD))
    (tmp_path / "b.yaml").write_text("apiVersion: v1\nkind: ConfigMap\n")
    with pytest.raises(UsageError):
        register_crd_files([str(tmp_path)])
    assert handler_for("example.com", "Widget") is None


# ------------------------------------------------------------------------------------ JobSet conformance

def jobset_examples() -> list[str]:
    return sorted(str(p) for p in (UPSTREAM / "jobset" / "examples").rglob("*.yaml"))


@requires_upstream
def test_upstream_jobset_crd_replaces_the_schema_and_keeps_the_webhooks() -> None:
    register_crd_files([str(JOBSET_CRD)])
    handler = handler_for("jobset.x-k8s.io", "JobSet")
    assert isinstance(handler, CrdHandler)
    assert handler.builtin is not None and not isinstance(handler.builtin, CrdHandler)
    assert handler.namespaced is True


@requires_upstream
def test_upstream_jobset_examples_pass_the_upstream_crd(tmp_path: Path) -> None:
    diagnostics = validate_files(tmp_path, {}, paths=jobset_examples(), crds=[str(JOBSET_CRD)], version="1.36")
    assert admission_errors(diagnostics) == []


IN_ORDER_WITH_DEPENDS_ON = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: js
spec:
  startupPolicy:
    startupPolicyOrder: InOrder
  replicatedJobs:
  - name: driver
    template:
      spec:
        template:
          spec:
            containers:
            - {name: main, image: busybox}
  - name: workers
    dependsOn:
    - {name: driver, status: Ready}
    template:
      spec:
        template:
          spec:
            containers:
            - {name: main, image: busybox}
"""


@requires_upstream
def test_in_order_with_depends_on_is_rejected_by_the_crd_rule(tmp_path: Path) -> None:
    # jobset.md §1.2 and §2.1: the spec-level CEL rule, reported at `spec`.
    diagnostics = validate_files(tmp_path, {"js.yaml": IN_ORDER_WITH_DEPENDS_ON}, crds=[str(JOBSET_CRD)])
    [error] = admission_errors(diagnostics)
    assert (error.line, error.column, error.rule) == (5, 1, "cel-rule")
    assert error.message == 'spec: Invalid value: "object": StartupPolicy and DependsOn APIs are mutually exclusive'


@requires_upstream
def test_jobset_webhook_still_runs_under_the_crd(tmp_path: Path) -> None:
    first_depends = IN_ORDER_WITH_DEPENDS_ON.replace("InOrder", "AnyOrder").replace(
        "  - name: driver\n", "  - name: driver\n    dependsOn:\n    - {name: driver, status: Ready}\n")
    diagnostics = validate_files(tmp_path, {"js.yaml": first_depends}, crds=[str(JOBSET_CRD)])
    assert any("DependsOn can't be set for the first ReplicatedJob" in d.message for d in diagnostics)


@requires_upstream
def test_immutable_fields_on_update_with_the_crd(tmp_path: Path) -> None:
    old = tmp_path / "old" / "js.yaml"
    old.parent.mkdir()
    old.write_text(dedent(IN_ORDER_WITH_DEPENDS_ON).replace("InOrder", "AnyOrder"))
    changed = IN_ORDER_WITH_DEPENDS_ON.replace("InOrder", "AnyOrder").replace("status: Ready", "status: Complete")
    diagnostics = validate_files(tmp_path, {"js.yaml": changed}, crds=[str(JOBSET_CRD)], old=str(old))
    transitions = [d for d in diagnostics if d.rule == "cel-transition"]
    assert [(d.line, d.message) for d in transitions] == [
        (17, 'spec.replicatedJobs[1].dependsOn: Invalid value: "array": Value is immutable')
    ]


# ----------------------------------------------------------------------------------- Trainer conformance

def trainer_inputs() -> list[str]:
    roots = (UPSTREAM / "trainer" / "examples", UPSTREAM / "trainer" / "runtimes")
    return sorted(str(p) for root in roots for p in root.rglob("*.yaml"))


@requires_upstream
def test_upstream_trainer_inputs_pass_the_upstream_crds(tmp_path: Path) -> None:
    register_crd_files([str(TRAINER_CRDS)])
    for kind in ("TrainJob", "TrainingRuntime", "ClusterTrainingRuntime"):
        assert isinstance(handler_for("trainer.kubeflow.org", kind), CrdHandler)
    assert handler_for("trainer.kubeflow.org", "ClusterTrainingRuntime").namespaced is False  # type: ignore[union-attr]
    diagnostics = validate_files(tmp_path, {}, paths=trainer_inputs(), crds=[str(TRAINER_CRDS)])
    assert admission_errors(diagnostics) == []


TRAINJOB = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: {name}
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    numProcPerNode: {procs}
"""


@requires_upstream
@pytest.mark.parametrize(("name", "procs", "expected"), [
    ("ok", 2, []),
    ("Bad_Name", 2, [(1, 1, "cel-rule",
                      '<nil>: Invalid value: "object": metadata.name must match RFC 1035 DNS label format')]),
    ("ok", 0, [(9, 5, "cel-rule",
                'spec.trainer.numProcPerNode: Invalid value: "integer": numProcPerNode must be greater than or equal '
                "to 1")]),
])
def test_trainjob_crd_rules(tmp_path: Path, name: str, procs: int, expected: list[tuple[int, int, str, str]]) -> None:
    # trainer.md §1.1 (root rules on metadata.name) and §1.2 (numProcPerNode >= 1).
    text = TRAINJOB.format(name=name, procs=procs)
    diagnostics = validate_files(tmp_path, {"tj.yaml": text}, crds=[str(TRAINER_CRDS)])
    cel = [(d.line, d.column, d.rule, d.message) for d in diagnostics if d.rule.startswith("cel-")]
    assert cel == expected
