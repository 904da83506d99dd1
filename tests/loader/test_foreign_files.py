"""Files that are no manifests (issue #10): what pre-commit hands the hook next to the manifests.

A file with no Kubernetes object is passed over with one note (``not-a-manifest``), unless ``--strict``;
a Helm template gets ``helm-template`` (an error, a note in the hook) instead of a YAML syntax error; and
``--ignore`` / the configuration's ``ignore:`` hold for these input-layer rules like for every other.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from jobsetctl.cli.app import run
from jobsetctl.loader.helm import MESSAGE
from tests.helpers import dedent, table, validate_files

WORKFLOW = """
    name: ci
    on: [push]
    jobs:
      test:
        runs-on: ubuntu-latest
        steps:
        - run: echo "${{ github.sha }}"
    """
#: Files of a real repository that hold no Kubernetes object, each passed over.
FOREIGN = {
    ".github/workflows/ci.yml": WORKFLOW,
    ".pre-commit-config.yaml": "repos:\n- repo: local\n  hooks: []\n",
    "package.json": '{"name": "web", "version": "1.0.0", "scripts": {"test": "jest"}}\n',
    "chart/values.yaml": "image: registry.example.com/train:1\nreplicas: 2\n",
    "chart/Chart.yaml": "apiVersion: v2\nname: trainer\nversion: 0.1.0\n",
    "kustomization.yaml": "resources:\n- base/\nnamePrefix: prod-\n",
    ".jobsetctl.yaml": 'kubernetesVersion: "1.37"\nignore: [jobset-kueue-depends-on]\n',
    "playbook.yml": "- hosts: all\n  tasks:\n  - name: ping\n    ping: {}\n",
    "numbers.yaml": "- 1\n- 2\n",
    "cloudformation.yaml": "Resources:\n  Bucket:\n    Type: AWS::S3::Bucket\n    Properties: {BucketName: !Ref Name}\n",
    "duplicates.yaml": "a: 1\na: 2\n",
}


@pytest.mark.parametrize("name", sorted(FOREIGN))
def test_a_file_with_no_kubernetes_object_is_a_note(tmp_path: Path, name: str) -> None:
    diagnostics = validate_files(tmp_path, {name: FOREIGN[name]})
    assert [(d.rule, d.severity) for d in diagnostics] == [("not-a-manifest", "info")]
    assert diagnostics[0].message == "no Kubernetes object in this file; passed over"


def test_strict_reports_their_documents_as_before(tmp_path: Path) -> None:
    diagnostics = validate_files(tmp_path, {"ci.yml": WORKFLOW, "numbers.yaml": "- 1\n"}, strict=True)
    assert sorted(d.rule for d in diagnostics) == ["missing-api-version-or-kind", "not-an-object"]


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        # Still Kubernetes objects with a slip: errors, not notes.
        ("metadata: {name: forgotten}\nspec: {}\n", "missing-api-version-or-kind"),
        ("apiVersion: jobset.x-k8s.io/v1alpha2\nspec: {}\n", "missing-api-version-or-kind"),
        ("kind: JobSet\n", "missing-api-version-or-kind"),
        ("- apiVersion: v1\n  kind: ConfigMap\n", "not-an-object"),
        ("just a string\n", "not-an-object"),
        ("a: [\n", "yaml-syntax"),  # not parsed: we cannot tell what it is
    ],
    ids=["metadata-only", "group-version-only", "kind-only", "list-of-objects", "scalar", "syntax"],
)
def test_a_broken_manifest_is_still_an_error(tmp_path: Path, text: str, rule: str) -> None:
    assert [d.rule for d in validate_files(tmp_path, {"x.yaml": text}) if d.severity == "error"] == [rule]


def test_one_object_among_other_documents_makes_the_file_a_manifest(tmp_path: Path) -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nname: not-an-object\n"
    assert table(validate_files(tmp_path, {"x.yaml": text})) == [(5, 1, "missing-api-version-or-kind")]


# --- Helm templates ----------------------------------------------------------------------------------

CHART_TEMPLATE = """
    apiVersion: jobset.x-k8s.io/v1alpha2
    kind: JobSet
    metadata:
      name: {{ .Release.Name }}
    spec:
    {{- if .Values.network }}
      network: {enableDNSHostnames: true}
    {{- end }}
      replicatedJobs: []
    """


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("chart/templates/jobset.yaml", CHART_TEMPLATE, (4, 9)),
        # Helm's objects and functions say so even where the text happens to parse.
        ("jobset.yaml", 'metadata:\n  name: "{{ .Release.Name }}"\n', (2, 10)),
        ("jobset.yaml", "metadata:\n  labels:\n    {{- include \"chart.labels\" . | nindent 4 }}\n", (3, 5)),
        # No valid YAML, and a template action: a template of some tool, not a syntax error.
        ("jobset.yaml", "metadata:\n  name: {{ name }}\n  {{ if x }}\n", (2, 9)),
        # In a chart's templates directory, whatever it holds.
        ("chart/templates/plain.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n", (1, 1)),
    ],
    ids=["chart-templates-dir", "helm-object-in-quotes", "helm-function", "unparsable-with-action", "plain-in-chart"],
)
def test_a_helm_template_is_recognised(tmp_path: Path, name: str, text: str, where: tuple[int, int]) -> None:
    (tmp_path / "chart").mkdir()
    (tmp_path / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    diagnostics = validate_files(tmp_path, {name: text}, paths=[str(tmp_path / name)])
    assert [(d.line, d.column, d.rule, d.severity, d.message) for d in diagnostics] == [
        (*where, "helm-template", "error", MESSAGE)
    ]


@pytest.mark.parametrize(
    "text",
    [
        # A container that runs kubectl with a Go template: data of a valid object.
        """
        apiVersion: batch/v1
        kind: Job
        metadata: {name: list-pods}
        spec:
          template:
            spec:
              restartPolicy: Never
              containers:
              - name: kubectl
                image: bitnami/kubectl
                args: [get, pods, -o, "go-template={{range .items}}{{.metadata.name}}{{end}}"]
        """,
        # An Argo-style parameter in a string.
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: '{{inputs.parameters.x}}'}\n",
    ],
    ids=["kubectl-go-template", "argo-parameter"],
)
def test_template_text_inside_a_valid_manifest_is_data(tmp_path: Path, text: str) -> None:
    assert [d.rule for d in validate_files(tmp_path, {"x.yaml": text}) if d.rule != "unknown-kind"] == []


def test_a_github_expression_in_broken_yaml_is_a_syntax_error(tmp_path: Path) -> None:
    assert [d.rule for d in validate_files(tmp_path, {"x.yml": "run: [${{ github.sha }}\n"})] == ["yaml-syntax"]


def test_the_hook_skips_templates_with_a_note_unless_strict(tmp_path: Path) -> None:
    files = {"chart/templates/jobset.yaml": CHART_TEMPLATE}
    (tmp_path / "chart").mkdir()
    (tmp_path / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    [note] = validate_files(tmp_path, files, pre_commit=True)
    assert (note.rule, note.severity, note.message) == ("helm-template", "info", f"{MESSAGE}; skipped")
    [error] = validate_files(tmp_path, files, pre_commit=True, strict=True)
    assert (error.rule, error.severity, error.message) == ("helm-template", "error", MESSAGE)


# --- --ignore and ignore: hold for the input layer ------------------------------------------------------


def _cli(args: list[str]) -> tuple[int, list[dict[str, Any]]]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        status = run(["validate", "-o", "json", *args])
    return status, json.loads(out.getvalue())["diagnostics"]


@pytest.mark.parametrize(
    ("name", "text", "rule"),
    [
        ("broken.yaml", "a: [\n", "yaml-syntax"),
        ("dup.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {a: '1', a: '2'}\n", "yaml-duplicate-key"),
        ("empty.yaml", "# nothing\n", "empty-file"),
        ("ci.yml", WORKFLOW, "not-a-manifest"),
        ("template.yaml", CHART_TEMPLATE, "helm-template"),
        ("binary.yaml", None, "input-encoding"),
    ],
    ids=["yaml-syntax", "yaml-duplicate-key", "empty-file", "not-a-manifest", "helm-template", "input-encoding"],
)
def test_ignore_holds_for_input_rules(tmp_path: Path, name: str, text: str | None, rule: str) -> None:
    path = tmp_path / name
    if text is None:
        path.write_bytes(b"\xff\xfe\x00")
    else:
        path.write_text(dedent(text))
    # unknown-kind: the ConfigMap's note.
    assert [d["rule"] for d in _cli(["--ignore", "unknown-kind", str(path)])[1]] == [rule]
    assert _cli(["--ignore", f"unknown-kind,{rule}", str(path)]) == (0, [])
    config = tmp_path / "jobsetctl.yaml"
    config.write_text(f"ignore: [{rule}, unknown-kind]\n")
    assert _cli(["--config", str(config), str(path)]) == (0, [])


def test_ignore_holds_for_an_unreadable_path(tmp_path: Path) -> None:
    missing = str(tmp_path / "nowhere.yaml")
    assert [d["rule"] for d in _cli([missing])[1]] == ["input-unreadable"]
    assert _cli(["--ignore", "input-unreadable", missing]) == (0, [])
