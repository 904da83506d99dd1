"""``migrate`` parses with ruamel only the documents a target may change (jobsetctl.migrate: ``HINTS`` on the
text, then ``candidate`` on the C loader's data). Property: that selection finds exactly the candidate
objects a ruamel parse of every document finds, whatever the spelling (quotes, escapes, JSON, Lists, aliases).
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from jobsetctl.cli.app import run
from jobsetctl.fix.rewrite import FileEditor
from jobsetctl.fix.yamledit import load_document, split_segments, to_plain
from jobsetctl.loader.sources import Source
from jobsetctl.loader.yamlload import load_documents
from jobsetctl.migrate import _items, objects
from jobsetctl.migrate import kubernetes as k8s_target
from jobsetctl.migrate import kueue as kueue_target
from jobsetctl.migrate import trainer as trainer_target

load_documents("a: 1\n", "")  # raises the recursion limit once, before hypothesis records it

TARGETS = (kueue_target, trainer_target, k8s_target)
API_VERSIONS = ("kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1beta2", "kubeflow.org/v1", "v1",
                "scheduling.k8s.io/v1alpha1", "scheduling.k8s.io/v1beta1", "trainer.kubeflow.org/v1alpha1")
KINDS = ("ClusterQueue", "PyTorchJob", "Workload", "PodGroup", "TrainJob", "ConfigMap", "Pod")


def _scalar(value: str, style: str) -> str:
    """``value`` written in one of the ways YAML allows."""
    if style == "plain":
        return value
    if style == "single":
        return f"'{value}'"
    if style == "double":
        return json.dumps(value)
    if style == "escaped":  # every character as a \\x escape: none of the hint's text is left
        return '"' + "".join(f"\\x{ord(c):02x}" for c in value) + '"'
    return json.dumps(value).replace("/", "\\/")  # JSON's escaped solidus


@st.composite
def documents(draw: st.DrawFn) -> str:
    api = draw(st.sampled_from(API_VERSIONS))
    kind = draw(st.sampled_from(KINDS))
    style = draw(st.sampled_from(("plain", "single", "double", "escaped", "solidus")))
    spec_key = draw(st.sampled_from(("podTemplateOverrides", "replicas", "workloadRef")))
    spec_key_text = _scalar(spec_key, draw(st.sampled_from(("plain", "double", "escaped"))))
    body = (f"kind: {kind}\nmetadata: {{name: x}}\n"
            f"spec:\n  {spec_key_text}: [1]\n  containers: [{{name: c, {_scalar('workloadRef', style)}: {{name: w}}}}]\n")
    if draw(st.booleans()):  # the apiVersion through an alias of an anchor in the same document
        head = f"x-version: &v {_scalar(api, style)}\napiVersion: *v\n"
    else:
        head = f"apiVersion: {_scalar(api, style)}\n"
    document = head + body
    if draw(st.booleans()):  # inside a v1 List
        item = document.replace("\n", "\n    ")
        document = f"apiVersion: v1\nkind: List\nitems:\n  - {item.rstrip()}\n"
    return document


def _everything(editor: FileEditor, target: object) -> list[object]:
    """The candidates a ruamel parse of every document finds."""
    found = []
    for segment in editor.segments:
        if segment.has_content:
            root = load_document(segment).root
            found += [to_plain(obj) for obj in _items(root) if target.candidate(obj)]  # type: ignore[attr-defined]
    return found


@settings(max_examples=150, deadline=None)
@given(st.lists(documents(), min_size=1, max_size=4))
def test_the_prefilter_finds_every_candidate(docs: list[str]) -> None:
    text = "---\n".join(docs)
    for target in TARGETS:
        editor = FileEditor(Source("x.yaml", None), text, segments=split_segments(text))
        selected = [to_plain(item.obj) for item in objects([editor], target.candidate, target.HINTS)]
        assert selected == _everything(editor, target), (target.__name__, text)


def _migrate(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = run(["migrate", *argv])
    return status, out.getvalue(), err.getvalue()


def test_a_file_ruamel_cannot_read_is_reported_when_it_may_need_the_migration(tmp_path: Path) -> None:
    path = tmp_path / "queues.yaml"
    path.write_text("apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: q}\n---\n"
                    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: [unclosed\n")
    status, diff, err = _migrate("--to", "kueue-v1beta2", "--write", str(path))
    assert (status, diff) == (0, "")
    assert f"{path}:1:1: not migrated [yaml-syntax] cannot be migrated: " in err
    assert "v1beta1\nkind: LocalQueue" in path.read_text()  # the readable document is not migrated alone


def test_a_broken_file_without_anything_to_migrate_is_passed_over(tmp_path: Path) -> None:
    path = tmp_path / "notes.yaml"
    path.write_text("key: [unclosed\n")
    assert _migrate("--to", "kueue-v1beta2", str(path)) == (
        0, "", "would rewrite 0 files (1 file looked at)\n")
