"""Helpers for the lint tables: run the whole validate pipeline, keep the lint layer's (line, column, rule)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jobsetctl.diagnostics import Diagnostic
from tests.helpers import validate_files, validate_text

Row = tuple[int, int, str]


def lint_rows(diagnostics: list[Diagnostic]) -> list[Row]:
    """(line, column, rule) of the lint findings, notes included (some lints are notes)."""
    return [(d.line, d.column, d.rule) for d in diagnostics if str(d.layer) == "lint"]


def lints(tmp_path: Path, text: str, **options: Any) -> list[Row]:
    return lint_rows(validate_text(tmp_path, text, **options))


def lints_in_files(tmp_path: Path, files: dict[str, str], **options: Any) -> list[tuple[str, int, int, str]]:
    return [(Path(d.file).name, d.line, d.column, d.rule)
            for d in validate_files(tmp_path, files, **options) if str(d.layer) == "lint"]


def errors(diagnostics: list[Diagnostic]) -> list[Row]:
    return [(d.line, d.column, d.rule) for d in diagnostics if str(d.severity) == "error"]


def rjob(name: str, *, extra: str = "", spec: str = "", pod: str = "") -> str:
    """A replicated job on two lines, or three with ``extra`` (positions stay easy to count).

    ``extra`` is one more line of the replicated job (``dependsOn: [...]``), between ``name`` and
    ``template``; ``spec`` goes into the Job spec and ``pod`` into the pod spec, both flow style.
    """
    middle = f"    {extra}\n" if extra else ""
    return (f"  - name: {name}\n{middle}"
            f"    template: {{spec: {{{spec}template: {{spec: {{{pod}containers: [{{name: c, image: busybox}}]}}}}}}}}\n")


def jobset(*rjobs: str, spec: str = "", meta: str = "", name: str = "js") -> str:
    """A JobSet: ``spec`` lines (indented two spaces) come before ``replicatedJobs``, which starts on
    line ``5 + meta lines + spec lines``."""
    return (f"apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata:\n  name: {name}\n{meta}"
            f"spec:\n{spec}  replicatedJobs:\n" + "".join(rjobs))
