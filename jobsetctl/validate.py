"""``jobsetctl validate``: the admission chain as a dry-run create (or update), plus references and lints.

Two phases, so that files can be checked in parallel:

A. per file (any order, any process): read, parse, split into objects, run admission without a view
   of other objects;
B. over everything (one process): the checks that look up other objects (TrainJob runtimes, existing
   PVCs, PodGroup references, priorities), then the lints.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from jobsetctl.admission.chain import AdmissionResult, admit, admit_in_cluster
from jobsetctl.diagnostics import Diagnostic, Finding, Report, Severity
from jobsetctl.kinds.index import ObjectIndex, object_key
from jobsetctl.kinds.interface import AdmissionContext
from jobsetctl.kube.featuregates import FeatureGates, parse_feature_gates
from jobsetctl.kube.versions import DEFAULT_KUBE_VERSION, KubeVersion
from jobsetctl.loader.objects import LoadedFile, ObjectRecord, load_file
from jobsetctl.loader.sources import Source, discover
from jobsetctl.rules import core, get
from jobsetctl.status import UsageError

#: Per-object opt-out annotation: a comma-separated list of rule ids.
IGNORE_ANNOTATION = "jobsetctl.dev/ignore"


@dataclass(frozen=True, slots=True)
class ValidateOptions:
    paths: Sequence[str]
    version: KubeVersion = DEFAULT_KUBE_VERSION
    gates: FeatureGates | None = None
    strict: bool = False
    ignore: frozenset[str] = frozenset()
    runtimes: Sequence[str] = ()
    crds: Sequence[str] = ()
    old: str | None = None
    #: Worker processes for phase A; 0 picks one per core when the input is large.
    jobs: int = 0

    @property
    def effective_gates(self) -> FeatureGates:
        return self.gates if self.gates is not None else parse_feature_gates(None, self.version)


@dataclass(slots=True)
class Checked:
    """An input object after admission."""

    record: ObjectRecord
    result: AdmissionResult


@dataclass(slots=True)
class Outcome:
    """Everything validate learned; ``render`` continues from ``checked``."""

    report: Report
    checked: list[Checked] = field(default_factory=list)
    context: ObjectIndex = field(default_factory=ObjectIndex)


def run(options: ValidateOptions) -> Report:
    return check(options).report


def check(options: ValidateOptions) -> Outcome:
    """Validate the inputs and return the report with the admitted objects."""
    ctx = AdmissionContext(options.version, options.effective_gates)
    _load_crds(options.crds)
    sources, source_problems = discover(list(options.paths))
    if not options.paths:
        raise UsageError("no input: give files, directories, or - for standard input")
    diagnostics: list[Diagnostic] = []
    for problem in source_problems:
        rule = get(problem.code) or core.UNREADABLE
        diagnostics.append(Diagnostic(problem.name, 1, 1, rule.severity, rule.layer, rule.id, problem.message))

    old_objects = _load_old(options.old) if options.old else {}
    files = _load_all(sources, options)
    checked: list[Checked] = []
    for loaded in files:
        diagnostics.extend(loaded.diagnostics)
        for record in loaded.records:
            checked.append(Checked(record, _admit_record(record, ctx, old_objects)))

    context = _context_index(checked, options, ctx)
    cluster_ctx = AdmissionContext(options.version, ctx.gates, cluster=context)
    findings_by_record: list[tuple[ObjectRecord, Finding]] = []
    for item in checked:
        for finding in item.result.findings:
            findings_by_record.append((item.record, finding))
        obj = item.result.obj
        if obj is not None and item.result.typed and item.result.handler is not None:
            for finding in admit_in_cluster(obj, cluster_ctx):
                findings_by_record.append((item.record, finding))
    findings_by_record.extend(_cross_object(checked, cluster_ctx))

    for record, finding in findings_by_record:
        if _ignored(record, finding, options.ignore):
            continue
        diagnostics.append(record.diagnostic(finding))

    diagnostics.sort(key=Diagnostic.sort_key)
    report = Report(diagnostics, files=len(sources), objects=len(checked))
    return Outcome(report, checked, context)


def _admit_record(
    record: ObjectRecord, ctx: AdmissionContext, old_objects: dict[tuple[str, str, str, str], dict[str, Any]]
) -> AdmissionResult:
    old = old_objects.get(_namespaced_key(record.obj, ctx)) if old_objects else None
    if old is not None:
        return admit(record.obj, ctx.for_update(), old=old)
    return admit(record.obj, ctx)


def _namespaced_key(obj: dict[str, Any], ctx: AdmissionContext) -> tuple[str, str, str, str]:
    group, kind, namespace, name = object_key(obj)
    return group, kind, namespace or ctx.default_namespace, name


def _load_all(sources: list[Source], options: ValidateOptions) -> list[LoadedFile]:
    return [load_file(source) for source in sources]


def _load_old(path: str) -> dict[tuple[str, str, str, str], dict[str, Any]]:
    sources, problems = discover([path])
    if problems:
        raise UsageError(f"--old: {problems[0].message}")
    ctx = AdmissionContext(DEFAULT_KUBE_VERSION, parse_feature_gates(None, DEFAULT_KUBE_VERSION))
    objects: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for source in sources:
        loaded = load_file(source)
        errors = [d for d in loaded.diagnostics if d.severity is Severity.ERROR]
        if errors:
            first = errors[0]
            raise UsageError(f"--old: {first.file}:{first.line}:{first.column}: {first.message}")
        for record in loaded.records:
            objects[_namespaced_key(record.obj, ctx)] = record.obj
    return objects


def _load_crds(paths: Sequence[str]) -> None:
    if not paths:
        return
    from jobsetctl.admission.crd import register_crd_files

    register_crd_files(list(paths))


def _context_index(checked: list[Checked], options: ValidateOptions, ctx: AdmissionContext) -> ObjectIndex:
    """What lookups see: the inputs as admission left them, ``--runtimes`` files, then the built-in catalog."""
    index = ObjectIndex()
    for item in checked:
        if item.result.obj is not None:
            index.add(item.result.obj)
        else:
            index.add(item.record.obj)
    for obj in _runtime_files(options.runtimes, ctx):
        index.add_missing(obj)
    from jobsetctl.trainer.catalog import builtin_runtimes

    for obj in builtin_runtimes():
        index.add_missing(obj)
    return index


def _runtime_files(paths: Sequence[str], ctx: AdmissionContext) -> Iterator[dict[str, Any]]:
    if not paths:
        return
    sources, problems = discover(list(paths))
    if problems:
        raise UsageError(f"--runtimes: {problems[0].message}")
    for source in sources:
        loaded = load_file(source)
        for record in loaded.records:
            result = admit(record.obj, ctx)
            yield result.obj if result.obj is not None else record.obj


def _cross_object(checked: list[Checked], ctx: AdmissionContext) -> Iterable[tuple[ObjectRecord, Finding]]:
    from jobsetctl.lint import run_lints
    from jobsetctl.reference import check_references

    admitted = [(c.record, c.result.obj) for c in checked if c.result.obj is not None and c.result.typed]
    yield from check_references(admitted, ctx)
    yield from run_lints(admitted, ctx)


def _ignored(record: ObjectRecord, finding: Finding, ignore: frozenset[str]) -> bool:
    if finding.rule.id in ignore:
        return True
    meta = record.obj.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    if isinstance(annotations, dict):
        value = annotations.get(IGNORE_ANNOTATION)
        if isinstance(value, str):
            listed = {part.strip() for part in value.split(",")}
            return finding.rule.id in listed or "all" in listed
    return False


def default_jobs() -> int:
    return max(1, min(os.cpu_count() or 1, 8))
