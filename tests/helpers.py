"""Helpers shared by the tests: run the real pipeline on inline YAML and compare findings as tables."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

from jobsetctl.admission.chain import AdmissionResult, admit
from jobsetctl.diagnostics import Diagnostic
from jobsetctl.kinds.interface import AdmissionContext, Operation
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import KubeVersion
from jobsetctl.loader.yamlload import load_documents
from jobsetctl.validate import ValidateOptions, check

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SAMPLES = REPO / "samples"
#: Where ``scripts/fetch-upstream`` puts the upstream data by default (git-ignored).
FETCHED_UPSTREAM = REPO / ".upstream"


def _upstream() -> Path:
    """The upstream conformance data: ``$JOBSETCTL_UPSTREAM``, else ``../shared/upstream`` (the team's checkout),
    else ``.upstream`` (``scripts/fetch-upstream``). The data is never copied into the repository."""
    configured = os.environ.get("JOBSETCTL_UPSTREAM")
    if configured:
        return Path(configured).resolve()
    shared = SHARED / "upstream"
    return shared if shared.is_dir() or not FETCHED_UPSTREAM.is_dir() else FETCHED_UPSTREAM


UPSTREAM = _upstream()
#: The reason of every skip for want of the data; tests/conftest.py counts the skips that give it.
UPSTREAM_ABSENT = "upstream conformance data absent"

#: Conformance tests read the upstream data and skip cleanly when it is absent.
requires_upstream = pytest.mark.skipif(not UPSTREAM.is_dir(), reason=f"{UPSTREAM_ABSENT} ({UPSTREAM})")


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def load_one(text: str) -> dict[str, Any]:
    documents, problems = load_documents(dedent(text), "inline.yaml")
    assert not problems, problems
    assert len(documents) == 1
    value = documents[0].value
    assert isinstance(value, dict)
    return value


def admit_text(
    text: str,
    version: str = "1.37",
    gates: str = "",
    old: str | None = None,
) -> AdmissionResult:
    """Admission of one inline object (no cluster view), as validate's per-file phase runs it."""
    kube = KubeVersion.parse(version)
    ctx = AdmissionContext(kube, parse_feature_gates(gates, kube))
    if old is not None:
        return admit(load_one(text), ctx.for_update() if ctx.operation is Operation.CREATE else ctx, old=load_one(old))
    return admit(load_one(text), ctx)


def validate_files(tmp_path: Path, files: dict[str, str], **options: Any) -> list[Diagnostic]:
    """Write files under ``tmp_path`` and run the whole validate pipeline on them."""
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text))
    version = KubeVersion.parse(options.pop("version", "1.37"))
    gates = parse_feature_gates(options.pop("gates", ""), version)
    paths = options.pop("paths", [str(tmp_path / name) for name in files])
    outcome = check(ValidateOptions(paths=paths, version=version, gates=gates, **options))
    return outcome.report.diagnostics


def validate_text(tmp_path: Path, text: str, **options: Any) -> list[Diagnostic]:
    return validate_files(tmp_path, {"input.yaml": text}, **options)


def table(diagnostics: list[Diagnostic], *, infos: bool = False) -> list[tuple[int, int, str]]:
    """(line, column, rule) per diagnostic, yamllint-style, infos left out unless asked for."""
    return [(d.line, d.column, d.rule) for d in diagnostics if infos or d.severity != "info"]


def rules_of(diagnostics: list[Diagnostic]) -> list[str]:
    return [d.rule for d in diagnostics if d.severity != "info"]


# --- where a finding points (issue #13) ---------------------------------------------------------------


def _positions_under(node: Any) -> set[tuple[int, int]]:
    """0-based (line, column) of a node, every key and every value below it."""
    from jobsetctl.loader.yamlload import PosMapping, PosSequence, node_position, unpack

    found = {node_position(node)}
    if isinstance(node, PosMapping):
        for key_at, value in zip(node.key_at, node.values, strict=True):
            found.add(unpack(key_at))
            found |= _positions_under(value)
    elif isinstance(node, PosSequence):
        for item in node.items:
            found |= _positions_under(item)
    return found


def allowed_positions(file: str, obj: dict[str, Any] | None, path: str) -> set[tuple[int, int]]:
    """1-based (line, column) a finding at ``path`` of the object ``obj`` (a diagnostic's ``object``,
    as in ``-o json``) of ``file`` may point at: inside the deepest part of the path the object has (its
    key or anything below it). Upstream paths may name what the file does not have (a defaulted field,
    a quirk such as ``spec.RuntimeRef``); when not even the first segment exists, only the object's own
    first line will do: the finding is about the whole object."""
    from jobsetctl.kube.field import parse_path
    from jobsetctl.loader.objects import load_file
    from jobsetctl.loader.sources import Source
    from jobsetctl.loader.yamlload import PosMapping, PosSequence, node_position, unpack

    allowed: set[tuple[int, int]] = set()
    for record in load_file(Source(file, file)).records:
        if obj is not None and record.ref.as_dict() != obj:
            continue
        root = node = record.document.node_at(record.prefix)
        key_at: tuple[int, int] | None = None
        for seg in parse_path(path):
            if isinstance(node, PosMapping) and isinstance(seg, str) and seg in node.keys:
                index = len(node.keys) - 1 - node.keys[::-1].index(seg)  # the last duplicate wins
                key_at, node = unpack(node.key_at[index]), node.values[index]
            elif isinstance(node, PosSequence) and isinstance(seg, int) and 0 <= seg < len(node.items):
                key_at, node = None, node.items[seg]
            else:
                break
        if node is root:
            allowed.add(node_position(root))
        else:
            allowed |= _positions_under(node) | ({key_at} if key_at is not None else set())
    return {(line + 1, column + 1) for line, column in allowed}
