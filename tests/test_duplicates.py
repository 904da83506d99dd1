"""``duplicate-object``: two input documents that define the same object (the reference layer).

An object is (group, kind, namespace after defaulting, name); cluster-scoped kinds have no namespace; the
version does not count; ``generateName`` never collides; an input that updates an ``--old`` object is no
duplicate of it. Rows are (file, line, column, rule), the finding on the second definition's name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jobsetctl.diagnostics import Diagnostic
from jobsetctl.kinds.index import already_exists, resource_plural
from tests.helpers import validate_files

RULE = "duplicate-object"
Rows = list[tuple[str, int, int, str]]


def job(name: str = "j", namespace: str | None = None, meta: str = "") -> str:
    """A Job on five lines; ``metadata.name`` is on line 3, column 12."""
    ns = f", namespace: {namespace}" if namespace is not None else ""
    return (f"apiVersion: batch/v1\nkind: Job\nmetadata: {{name: {name}{ns}{meta}}}\n"
            "spec:\n  template: {spec: {restartPolicy: Never, containers: [{name: c, image: x}]}}\n")


def priority_class(name: str = "high", namespace: str | None = None) -> str:
    ns = f", namespace: {namespace}" if namespace is not None else ""
    return f"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: {name}{ns}}}\nvalue: 10\n"


def custom(version: str, name: str = "thing") -> str:
    """A kind validate does not know (passed over with a note): still an object kubectl would create."""
    return f"apiVersion: example.com/{version}\nkind: Widget\nmetadata: {{name: {name}}}\n"


def duplicates(diagnostics: list[Diagnostic]) -> Rows:
    return [(Path(d.file).name, d.line, d.column, d.rule) for d in diagnostics if d.rule == RULE]


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        # Two documents of one file: reported on the second (it starts on line 7, its name is on line 9).
        ({"a.yaml": job() + "---\n" + job()}, [("a.yaml", 9, 12, RULE)]),
        # Across files, in input order (files sorted by name).
        ({"a.yaml": job(), "b.yaml": job()}, [("b.yaml", 3, 12, RULE)]),
        # No namespace means the default namespace.
        ({"a.yaml": job(), "b.yaml": job(namespace="default")}, [("b.yaml", 3, 12, RULE)]),
        # Different namespaces, names or kinds: different objects.
        ({"a.yaml": job(namespace="team-a"), "b.yaml": job(namespace="team-b")}, []),
        ({"a.yaml": job("one"), "b.yaml": job("two")}, []),
        ({"a.yaml": priority_class("j"), "b.yaml": job("j")}, []),
        # Cluster-scoped: the namespace written on it is cleared, so these are one PriorityClass.
        ({"a.yaml": priority_class(), "b.yaml": priority_class(namespace="team-b")}, [("b.yaml", 3, 12, RULE)]),
        # Two versions of one group and kind are the same stored object.
        ({"a.yaml": custom("v1"), "b.yaml": custom("v2")}, [("b.yaml", 3, 12, RULE)]),
        # generateName gives each its own name.
        ({"a.yaml": job("", meta=", generateName: j-").replace("name: , ", ""),
          "b.yaml": job("", meta=", generateName: j-").replace("name: , ", "")}, []),
        # Every definition after the first.
        ({"a.yaml": job(), "b.yaml": job(), "c.yaml": job()}, [("b.yaml", 3, 12, RULE), ("c.yaml", 3, 12, RULE)]),
        # Items of a v1 List are objects like any other.
        ({"a.yaml": "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: batch/v1, kind: Job, metadata: {name: j}, "
                    "spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: x}]}}}}\n"
                    "- {apiVersion: batch/v1, kind: Job, metadata: {name: j}, "
                    "spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: x}]}}}}\n"},
         [("a.yaml", 5, 48, RULE)]),
    ],
)
def test_duplicate_objects(tmp_path: Path, files: dict[str, str], expected: Rows) -> None:
    assert duplicates(validate_files(tmp_path, files)) == expected


def test_the_result_does_not_depend_on_the_order_of_the_arguments(tmp_path: Path) -> None:
    # Definitions are ordered by path, as kubectl reads a directory: b.yaml is the second either way.
    files = {"a.yaml": job(), "b.yaml": job(), "sub/a.yaml": job()}
    forward = duplicates(validate_files(tmp_path, files))
    backward = duplicates(validate_files(tmp_path, files, paths=[str(tmp_path / n) for n in reversed(files)]))
    assert forward == backward == [("b.yaml", 3, 12, RULE), ("a.yaml", 3, 12, RULE)]
    [_, nested] = [d for d in validate_files(tmp_path, files) if d.rule == RULE]
    assert Path(nested.file).parent.name == "sub" and f"first at {tmp_path / 'a.yaml'}:3:" in nested.message


def test_message_names_the_first_definition_and_the_api_error(tmp_path: Path) -> None:
    [finding] = [d for d in validate_files(tmp_path, {"a.yaml": job(), "b.yaml": job()}) if d.rule == RULE]
    first = tmp_path / "a.yaml"
    assert finding.message == (
        f'Job "default/j" is defined twice among the inputs, first at {first}:3: kubectl create (and render, '
        'simulate) refuses this one with jobs.batch "j" already exists, and kubectl apply keeps only the last '
        "definition"
    )
    # A lint: kubectl apply accepts both, and the API server's dry run says nothing (issue #13).
    assert str(finding.severity) == "warning" and str(finding.layer) == "lint"
    assert [d for d in validate_files(tmp_path, {"a.yaml": job(), "b.yaml": job()}, admission_only=True)
            if d.rule == RULE] == []
    assert finding.path == "metadata.name"


def test_cluster_scoped_objects_are_named_without_namespace(tmp_path: Path) -> None:
    files = {"a.yaml": priority_class(), "b.yaml": priority_class()}
    [finding] = [d for d in validate_files(tmp_path, files) if d.rule == RULE]
    assert finding.message.startswith('PriorityClass "high" is defined twice')
    assert 'priorityclasses.scheduling.k8s.io "high" already exists' in finding.message


def test_an_object_given_with_old_is_no_duplicate(tmp_path: Path) -> None:
    old = tmp_path / "stored" / "job.yaml"
    old.parent.mkdir()
    old.write_text(job())
    assert duplicates(validate_files(tmp_path, {"a.yaml": job()}, old=str(old))) == []


def test_two_updates_of_one_object_are(tmp_path: Path) -> None:
    old = tmp_path / "stored" / "job.yaml"
    old.parent.mkdir()
    old.write_text(job())
    diagnostics = validate_files(tmp_path, {"a.yaml": job(), "b.yaml": job()}, old=str(old))
    assert duplicates(diagnostics) == [("b.yaml", 3, 12, RULE)]
    [finding] = [d for d in diagnostics if d.rule == RULE]
    assert "is updated twice among the inputs" in finding.message and "only the last one takes effect" in finding.message


def test_ignored_with_the_annotation_on_the_second(tmp_path: Path) -> None:
    second = job(meta=", annotations: {jobsetctl.dev/ignore: duplicate-object}")
    assert duplicates(validate_files(tmp_path, {"a.yaml": job(), "b.yaml": second})) == []


def test_objects_with_admission_errors_still_count(tmp_path: Path) -> None:
    # The first Job is invalid (no containers); the input still defines it twice.
    broken = job().replace("containers: [{name: c, image: x}]", "containers: []")
    assert duplicates(validate_files(tmp_path, {"a.yaml": broken, "b.yaml": job()})) == [("b.yaml", 3, 12, RULE)]


def test_positions_of_files_checked_in_worker_processes(tmp_path: Path) -> None:
    # Enough files for the parallel phase A: the first definition's line comes from parsing its file again.
    files = {f"f{i:02}.yaml": job(f"j{i}") for i in range(48)}
    files["f00.yaml"] = "# padding\n# padding\n" + job("dup")
    files["f47.yaml"] = job("dup")
    [finding] = [d for d in validate_files(tmp_path, files, jobs=2) if d.rule == RULE]
    assert (Path(finding.file).name, finding.line) == ("f47.yaml", 3)
    assert f"first at {tmp_path / 'f00.yaml'}:5:" in finding.message


@pytest.mark.parametrize(
    ("kind", "plural"),
    [("Job", "jobs"), ("JobSet", "jobsets"), ("PriorityClass", "priorityclasses"), ("NetworkPolicy", "networkpolicies"),
     ("Ingress", "ingresses"), ("Gateway", "gateways"), ("ClusterTrainingRuntime", "clustertrainingruntimes")],
)
def test_resource_plural(kind: str, plural: str) -> None:
    assert resource_plural(kind) == plural


def test_already_exists_text() -> None:
    assert already_exists("", "ConfigMap", "c") == 'configmaps "c" already exists'
    assert already_exists("jobset.x-k8s.io", "JobSet", "js") == 'jobsets.jobset.x-k8s.io "js" already exists'
