"""``jobsetctl validate``: the admission chain as a dry-run create (or update), plus references and lints.

Two phases, so that files can be checked in parallel:

A. per file (any order, any process): read, parse, split into objects, run admission without a view
   of other objects (:func:`check_file`);
B. over everything (one process): the checks that look up other objects (TrainJob runtimes, existing
   PVCs, PodGroup references, priorities), then the lints, then objects defined twice.

What each object is told comes in layers (:class:`~jobsetctl.diagnostics.Layer`): what the API server
answers (input, schema, defaults, CEL, webhooks, the references it checks), then the ``consequence``
layer (accepted, but a creation the controllers make later is refused: the workload never runs; errors),
then the lints. ``admission_only`` keeps exactly the first part, what ``kubectl apply --dry-run=server``
would answer, and skips the work of the rest. Consequences are reported only for objects admission
accepts: a refused object is never stored, nothing of it fails later. Upstream stops a request at the
schema and CEL errors, before the validating webhooks; we carry on, and mark the webhook findings
upstream would not have given yet (``Diagnostic.after``).

Large inputs run phase A in worker processes (one per core). Workers send back their diagnostics already
placed in the file, and the admitted objects without their YAML node trees (pickling those would cost more
than parsing); when phase B needs a position in such a file, the file is parsed again, once.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.pool
import os
import signal
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from jobsetctl.admission.chain import AdmissionResult, admit, admit_in_cluster
from jobsetctl.context import ClusterIndex, ContextFiles, repository_manifests, soften_unresolved
from jobsetctl.diagnostics import Diagnostic, Finding, Layer, Report, Severity, stopped_before
from jobsetctl.kinds.index import ObjectIndex, is_cluster_scoped, object_key
from jobsetctl.kinds.interface import AdmissionContext
from jobsetctl.kube.featuregates import FeatureGates, parse_feature_gates
from jobsetctl.kube.versions import DEFAULT_KUBE_VERSION, KubeVersion
from jobsetctl.kueue.config import SHIPPED, KueueConfiguration
from jobsetctl.loader.objects import ObjectRecord, load_file
from jobsetctl.loader.sources import Source, discover
from jobsetctl.loader.yamlload import Document
from jobsetctl.rules import core, get
from jobsetctl.status import UsageError
from jobsetctl.trainer.webhook_expansion import one_run

#: Per-object opt-out annotation: a comma-separated list of rule ids (or "all").
IGNORE_ANNOTATION = "jobsetctl.dev/ignore"
#: Below this many files one process is faster than starting workers.
PARALLEL_MIN_FILES = 48

ObjectKey = tuple[str, str, str, str]


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
    #: Worker processes for phase A: 0 = one per core when the input is large, 1 = never.
    jobs: int = 0
    #: Kueue's configuration (``--kueue-config``): Kueue's webhooks and checks run with it. The default is
    #: the configuration Kueue's release manifests ship; None models a cluster without Kueue.
    kueue: KueueConfiguration | None = SHIPPED
    #: Files and directories whose objects references resolve against, never reported (jobsetctl.context).
    context: Sequence[str] = ()
    #: Run as the pre-commit hook: Helm templates are passed over with a note, and without ``context`` the
    #: repository's manifests are the context.
    pre_commit: bool = False
    #: The inputs go to a cluster jobsetctl cannot see (validate, render): a missing cluster-scoped object a
    #: reference names may be there, a warning unless ``strict`` (:func:`jobsetctl.context.soften_unresolved`).
    unseen_cluster: bool = False
    #: The command goes on to create what the inputs lead to (render): only a missing object that refuses no
    #: creation is softened.
    creates: bool = False
    #: Only what the API server answers (``kubectl apply --dry-run=server``): no consequences, no lints.
    admission_only: bool = False

    @property
    def effective_gates(self) -> FeatureGates:
        return self.gates if self.gates is not None else parse_feature_gates(None, self.version)


@dataclass(slots=True)
class Checked:
    """An input object after admission."""

    record: ObjectRecord
    result: AdmissionResult
    #: The lints that need no other object have run on it already (phase A, see ``run_local_lints``).
    linted_locally: bool = False
    #: Layers of the (not ignored) admission errors found so far, for ``Diagnostic.after``.
    errors: frozenset[Layer] = frozenset()
    #: Its consequences have been checked already (phase A: ``KindHandler.consequences_look_up`` is False,
    #: and admission found no error).
    consequences_checked: bool = False


@dataclass(slots=True)
class Outcome:
    """Everything validate learned; ``render`` continues from ``checked``."""

    report: Report
    checked: list[Checked] = field(default_factory=list)
    #: What lookups saw besides the inputs (render creates its cluster objects: ``cluster_objects()``).
    context: ClusterIndex = field(default_factory=ClusterIndex)


@dataclass(slots=True)
class FileResult:
    """Phase A for one file. ``checked`` records lose their node trees when they cross processes."""

    diagnostics: list[Diagnostic]
    checked: list[Checked]


def run(options: ValidateOptions) -> Report:
    return check(options).report


def check(options: ValidateOptions) -> Outcome:
    """Validate the inputs and return the report with the admitted objects."""
    if not options.paths:
        raise UsageError("no input: give files, directories, or - for standard input")
    ctx = AdmissionContext(options.version, options.effective_gates, kueue=options.kueue)
    _load_crds(options.crds)
    sources, source_problems = discover(list(options.paths))
    diagnostics: list[Diagnostic] = []
    for problem in source_problems:
        rule = get(problem.code) or core.UNREADABLE
        if not _ignored_rule(rule.id, options.ignore):
            diagnostics.append(Diagnostic(problem.name, 1, 1, rule.severity, rule.layer, rule.id, problem.message))

    old_objects = _load_old(options.old, ctx) if options.old else {}
    checked: list[Checked] = []
    for result in _phase_a(sources, ctx, old_objects, options):
        diagnostics.extend(result.diagnostics)
        checked.extend(result.checked)

    with one_run():  # a TrainJob's runtime checks once for its webhook, its consequences and the lints
        return _phase_b(options, ctx, sources, diagnostics, old_objects, checked)


def _phase_b(options: ValidateOptions, ctx: AdmissionContext, sources: list[Source], diagnostics: list[Diagnostic],
             old_objects: dict[ObjectKey, dict[str, Any]], checked: list[Checked]) -> Outcome:
    """Everything that looks up other objects, then the report (see the module docstring)."""
    context = _context_index(checked, options, ctx, sources)
    cluster_ctx = AdmissionContext(options.version, ctx.gates, cluster=context, kueue=options.kueue)
    late: list[tuple[Checked, Finding]] = []

    def soften(finding: Finding) -> Finding:
        # Before the errors are noted: a warning about an object the cluster may hold refuses nothing.
        return soften_unresolved(finding, context, unseen_cluster=options.unseen_cluster, strict=options.strict,
                                 creates=options.creates)

    for item in checked:
        old = old_objects.get(_namespaced_key(item.record.obj, ctx)) if old_objects else None
        if old is not None:
            # Updates were left for now: their webhooks may look up other objects (TrainJob J13).
            item.result = admit(item.record.obj, cluster_ctx.for_update(), old=old)
            context.add(item.result.obj if item.result.obj is not None else item.record.obj)
            updated = [soften(finding) for finding in item.result.findings]
            _note_errors(item, updated, options)
            late.extend((item, finding) for finding in updated)
            continue
        obj = item.result.obj
        if obj is not None and item.result.typed and item.result.handler is not None:
            in_cluster = [soften(finding) for finding in admit_in_cluster(obj, cluster_ctx)]
            _note_errors(item, in_cluster, options)
            late.extend((item, finding) for finding in in_cluster)
            if not options.admission_only and not item.consequences_checked and not item.errors:
                consequences = item.result.handler.validate_consequences(obj, cluster_ctx)
                late.extend((item, finding) for finding in consequences)
    positions = _Positions()
    by_record = {id(item.record): item for item in checked}
    late.extend((by_record[id(record)], finding) for record, finding in _cross_object(checked, cluster_ctx, options))
    if not options.admission_only:
        late.extend((by_record[id(record)], finding) for record, finding in _duplicates(checked, ctx, old_objects, positions))
    for item, finding in late:
        if _kept(item.record.obj, finding, options) and not (finding.rule.layer is Layer.CONSEQUENCE and item.errors):
            finding = soften(finding)
            diagnostics.append(positions.diagnostic(item.record, finding, _after(item, finding)))
    diagnostics = _without_consequences_of_refused(diagnostics, checked)

    diagnostics.sort(key=Diagnostic.sort_key)
    notes = _empty_directories(options.paths, checked, diagnostics)
    report = Report(diagnostics, files=len(sources), objects=len(checked), notes=notes)
    return Outcome(report, checked, context)


def check_file(
    source: Source, ctx: AdmissionContext, old_objects: dict[ObjectKey, dict[str, Any]], options: ValidateOptions
) -> FileResult:
    """Phase A for one file: load, split into objects, admit each without a cluster view."""
    from jobsetctl.lint import run_local_lints

    ignore = options.ignore
    loaded = load_file(source, strict=options.strict, skip_templates=options.pre_commit and not options.strict,
                       positions=True)
    # --ignore and the configuration's ignore list hold for the input layer too (there is no object to
    # carry the annotation).
    diagnostics = [d for d in loaded.diagnostics if not _ignored_rule(d.rule, ignore)]
    checked: list[Checked] = []
    for record in loaded.records:
        if record.obj.get("kind") == "Scenario":
            scenario = _scenario(record, ctx, ignore)
            if scenario is not None:
                diagnostics.extend(scenario.diagnostics)
                checked.extend(scenario.checked)
                continue
        result = _admit_record(record, ctx, old_objects)
        item = Checked(record, result)
        _note_errors(item, result.findings, options)
        findings: list[Finding] = list(result.findings)
        handler = result.handler
        if result.obj is not None and result.typed and not options.admission_only:
            # Here rather than in phase B: in parallel, and with the object's node tree at hand for
            # positions (phase B would parse the file again to place a warning).
            findings += run_local_lints(record, result.obj, ctx)
            item.linted_locally = True
            if handler is not None and not handler.consequences_look_up and not item.errors:
                findings += handler.validate_consequences(result.obj, ctx)
                item.consequences_checked = True
        for finding in findings:
            if _kept(record.obj, finding, options):
                diagnostics.append(record.diagnostic(finding, _after(item, finding)))
        checked.append(item)
    return FileResult(diagnostics, checked)


def _scenario(record: ObjectRecord, ctx: AdmissionContext, ignore: frozenset[str]) -> FileResult | None:
    """A Scenario is jobsetctl's own kind (``simulate`` reads it): checked by its own parser, and the objects it
    submits inline admitted as ``simulate`` admits them (:func:`_scenario_context`). None when the document is
    no Scenario. Its files are checked when given to validate themselves (or by simulate)."""
    from jobsetctl.loader.objects import is_scenario
    from jobsetctl.simulate.scenario import parse_scenario

    if not is_scenario(record.obj):
        return None
    scenario, found = parse_scenario(record)
    if scenario is not None:
        from jobsetctl.simulate.settings import settings_problems

        found = [*found, *settings_problems(scenario)]  # an unknown release or gate, as simulate reports it
    diagnostics = [d for d in found if not _ignored_rule(d.rule, ignore)]
    inline = [r for submission in scenario.submissions for r in submission.records] if scenario is not None else []
    inline_ctx = _scenario_context(scenario, inline, ctx) if inline else None
    for item in inline:
        if inline_ctx is None:
            break
        for finding in admit(item.obj, inline_ctx).findings:
            if not _ignored(item.obj, finding, ignore):
                diagnostics.append(item.diagnostic(finding))
    return FileResult(diagnostics, [Checked(record, AdmissionResult(None, [], None, typed=False))])


def _scenario_context(scenario: Any, inline: list[ObjectRecord], ctx: AdmissionContext) -> AdmissionContext | None:
    """The release and gates simulate runs a Scenario's objects with: its ``kubernetesVersion`` (validate
    cannot tell a default ``--kubernetes-version`` from one given; the Scenario's wins here), its
    ``featureGates`` under the command line's, and the gates the objects use turned on. None when the
    Scenario names a release or gate that does not exist (reported as ``scenario-invalid-value``)."""
    from jobsetctl.kube.versions import KubeVersion
    from jobsetctl.simulate.gates import needed_gates, turned_on

    try:
        version = KubeVersion.parse(scenario.kubernetes_version) if scenario.kubernetes_version else ctx.version
        spec: dict[str, object] = {**scenario.feature_gates, **ctx.gates.explicit}
        gates, _ = turned_on(parse_feature_gates(spec, version), needed_gates([r.obj for r in inline], version))
    except UsageError:
        return None
    return AdmissionContext(version, gates)


def _empty_directories(paths: Sequence[str], checked: list[Checked], diagnostics: list[Diagnostic]) -> list[str]:
    """``no manifests found under DIR`` for each directory argument none of whose files held an object or a
    problem (a typo'd directory, or one of Helm templates and other files passed over)."""
    notes: list[str] = []
    files = {c.record.file for c in checked}
    files.update(d.file for d in diagnostics if d.severity is not Severity.INFO)
    for raw in paths:
        if raw == "-" or not os.path.isdir(raw):
            continue
        prefix = os.path.join(raw, "")
        if not any(name.startswith(prefix) for name in files):
            notes.append(f"no manifests found under {raw}")
    return notes


def _note_errors(item: Checked, findings: Iterable[Finding], options: ValidateOptions) -> None:
    """Remember the layers of an object's admission errors (those the user did not ignore)."""
    layers = {f.rule.layer for f in findings
              if f.effective_severity is Severity.ERROR and _kept(item.record.obj, f, options)}
    if layers - item.errors:
        item.errors = item.errors | layers


def _after(item: Checked, finding: Finding) -> Layer | None:
    handler = item.result.handler
    return stopped_before(finding.rule.layer, item.errors, webhooks=handler is not None and handler.webhooks)


def _without_consequences_of_refused(diagnostics: list[Diagnostic], checked: list[Checked]) -> list[Diagnostic]:
    """Consequences found in phase A, of objects that phase B found refused (a webhook error that needs a
    lookup, e.g. an existing PVC): the object is never stored, so they are dropped."""
    refused = {(item.record.file, item.record.ref) for item in checked if item.consequences_checked and item.errors}
    if not refused:
        return diagnostics
    return [d for d in diagnostics if not (d.layer is Layer.CONSEQUENCE and (d.file, d.object) in refused)]


def _phase_a(
    sources: list[Source], ctx: AdmissionContext, old_objects: dict[ObjectKey, dict[str, Any]], options: ValidateOptions
) -> Iterator[FileResult]:
    jobs = options.jobs or default_jobs()
    use_workers = (
        jobs > 1 and len(sources) >= PARALLEL_MIN_FILES and all(s.path is not None for s in sources)
        and "fork" in multiprocessing.get_all_start_methods()
    )
    if not use_workers:
        for source in sources:
            yield check_file(source, ctx, old_objects, options)
        return
    # fork: workers inherit imported modules, compiled schemas and --crd registrations for free.
    global _WORKER_STATE
    _WORKER_STATE = (ctx, old_objects, options)
    chunk = max(1, min(32, len(sources) // (jobs * 8)))
    try:
        with _worker_pool(jobs) as pool:
            for diagnostics, detached in pool.imap(_worker_check, sources, chunksize=chunk):
                yield _reattach(diagnostics, detached, ctx)
    finally:
        _WORKER_STATE = None


def _worker_pool(jobs: int) -> multiprocessing.pool.Pool:
    """A pool of forked workers that leave Ctrl-C to the parent.

    Ctrl-C in a terminal reaches the whole process group: each worker used to die on its own
    KeyboardInterrupt and print a traceback (cut short when the parent then terminated it). Workers
    ignore SIGINT from birth (they are forked with it ignored); the parent gets the KeyboardInterrupt,
    leaving the ``with`` terminates the workers, and the command line turns it into exit status 130.
    """
    context = multiprocessing.get_context("fork")
    if threading.current_thread() is not threading.main_thread():
        return context.Pool(jobs, initializer=_ignore_sigint)  # signal handlers can only be set in the main thread
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return context.Pool(jobs, initializer=_ignore_sigint)
    finally:
        signal.signal(signal.SIGINT, previous)


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


_WORKER_STATE: tuple[AdmissionContext, dict[ObjectKey, dict[str, Any]], ValidateOptions] | None = None

# What a worker sends back per object: file, document index, prefix, the object as written, the object as
# admission left it (or None), whether it was well-typed, linted, its error layers and whether its
# consequences were checked. Node trees and handlers stay behind.
_Detached = tuple[str, int, tuple[str | int, ...], dict[str, Any], dict[str, Any] | None, bool, bool, frozenset[Layer],
                  bool]


def _worker_check(source: Source) -> tuple[list[Diagnostic], list[_Detached]]:
    assert _WORKER_STATE is not None
    ctx, old_objects, options = _WORKER_STATE
    result = check_file(source, ctx, old_objects, options)
    detached = [
        (c.record.file, c.record.document.index, c.record.prefix, c.record.obj, c.result.obj, c.result.typed,
         c.linted_locally, c.errors, c.consequences_checked)
        for c in result.checked
    ]
    return result.diagnostics, detached


def _reattach(diagnostics: list[Diagnostic], detached: list[_Detached], ctx: AdmissionContext) -> FileResult:
    from jobsetctl.admission.chain import resolve_handler

    checked: list[Checked] = []
    for file, index, prefix, raw, admitted, typed, linted, errors, consequences in detached:
        record = ObjectRecord(Document(file, index, None, None), prefix, raw)
        handler = resolve_handler(admitted, ctx)[0] if admitted is not None else None
        checked.append(Checked(record, AdmissionResult(admitted, [], handler, typed), linted, errors, consequences))
    return FileResult(diagnostics, checked)


class _Positions:
    """Positions for findings of phase B, re-parsing a file whose node trees stayed in a worker."""

    def __init__(self) -> None:
        self._documents: dict[str, list[Document]] = {}

    def diagnostic(self, record: ObjectRecord, finding: Finding, after: Layer | None = None) -> Diagnostic:
        return self.attach(record).diagnostic(finding, after)

    def where(self, record: ObjectRecord, at: tuple[str | int, ...] = ("metadata", "name")) -> str:
        """``file:line`` of ``at`` in the record, for messages that point at another object."""
        return f"{record.file}:{self.attach(record).position(at)[0]}"

    def attach(self, record: ObjectRecord) -> ObjectRecord:
        """The record with its node tree (parsing its file again, once, if a worker kept the tree)."""
        if record.document.node is None:
            documents = self._documents.get(record.file)
            if documents is None:
                loaded = load_file(Source(record.file, record.file), positions=True)
                documents = [r.document for r in loaded.records]
                unique: dict[int, Document] = {d.index: d for d in documents}
                documents = [unique[i] for i in sorted(unique)]
                self._documents[record.file] = documents
            for document in documents:
                if document.index == record.document.index:
                    record.document = document
                    break
        return record


def _admit_record(
    record: ObjectRecord, ctx: AdmissionContext, old_objects: dict[ObjectKey, dict[str, Any]]
) -> AdmissionResult:
    if old_objects and _namespaced_key(record.obj, ctx) in old_objects:
        return AdmissionResult(None, [])  # an update: admitted in phase B, with a view of the other objects
    return admit(record.obj, ctx)


def lint_records(records: Sequence[ObjectRecord], ctx: AdmissionContext,
                 context: ContextFiles | None = None) -> list[Diagnostic]:
    """What validate would warn about these objects before ``simulate`` runs them: each admitted without a
    cluster view, then, looked up among the inputs, the ``context`` and the built-in runtimes, every lint, and
    the Kueue references whose absence only makes a workload wait (``Rule.waits``: a LocalQueue, a
    ClusterQueue, a flavor; a warning with its hint, as render reports it: :mod:`jobsetctl.context`).
    Admission's own findings and the other consequences are left out: the run shows what is refused."""
    from jobsetctl.kueue.references import check_kueue_references
    from jobsetctl.lint import run_lints
    from jobsetctl.trainer.catalog import builtin_runtimes

    index = ClusterIndex(context, ObjectIndex(builtin_runtimes()))
    admitted: list[tuple[ObjectRecord, dict[str, Any], bool]] = []
    for record in records:
        result = admit(record.obj, ctx)
        if result.obj is not None and result.typed:
            admitted.append((record, result.obj, False))
            index.add(result.obj)
    cluster_ctx = AdmissionContext(ctx.version, ctx.gates, cluster=index, kueue=ctx.kueue)
    waits = [(record, soften_unresolved(finding, index, unseen_cluster=True, strict=False, creates=True,
                                        has_strict=False))
             for record, finding in check_kueue_references([(r, o) for r, o, _ in admitted], cluster_ctx)
             if finding.rule.waits]
    diagnostics = [record.diagnostic(finding) for record, finding in [*waits, *run_lints(admitted, cluster_ctx)]
                   if not _ignored(record.obj, finding, frozenset())]
    return sorted(diagnostics, key=Diagnostic.sort_key)


def _namespaced_key(obj: dict[str, Any], ctx: AdmissionContext) -> ObjectKey:
    group, kind, namespace, name = object_key(obj)
    return group, kind, namespace or ctx.default_namespace, name


def _load_old(path: str, ctx: AdmissionContext) -> dict[ObjectKey, dict[str, Any]]:
    sources, problems = discover([path])
    if problems:
        raise UsageError(f"--old: {problems[0].message}")
    objects: dict[ObjectKey, dict[str, Any]] = {}
    for source in sources:
        loaded = load_file(source, strict=True)  # it must hold objects: no file is passed over here
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


def _context_index(
    checked: list[Checked], options: ValidateOptions, ctx: AdmissionContext, sources: list[Source]
) -> ClusterIndex:
    """What lookups see: the inputs as admission left them, ``--runtimes`` files, the context (files read as
    lookups need them), then the built-in catalog (:class:`jobsetctl.context.ClusterIndex`)."""
    from jobsetctl.trainer.catalog import builtin_runtimes

    context = list(options.context)
    if not context and options.pre_commit:
        context = repository_manifests()
    files = ContextFiles.discover(context, sources, ctx, explicit=bool(options.context)) if context else None
    index = ClusterIndex(files, ObjectIndex(builtin_runtimes()))
    for item in checked:
        index.add(item.result.obj if item.result.obj is not None else item.record.obj)
    for obj, accepted in _runtime_files(options.runtimes, ctx):
        index.add_missing(obj)
        if accepted:
            index.installed.append(obj)
    return index


def _runtime_files(paths: Sequence[str], ctx: AdmissionContext) -> Iterator[tuple[dict[str, Any], bool]]:
    """Each object of the ``--runtimes`` files as admission left it (as written when refused), and whether it
    was accepted."""
    if not paths:
        return
    sources, problems = discover(list(paths))
    if problems:
        raise UsageError(f"--runtimes: {problems[0].message}")
    for source in sources:
        loaded = load_file(source, strict=True)  # it must hold objects: no file is passed over here
        # A runtimes file that cannot be read was passed over in silence: its TrainJobs then reported a
        # runtime "not found" that is right there. Like --old, it is a usage error with its position.
        errors = [d for d in loaded.diagnostics if d.severity is Severity.ERROR]
        if errors:
            first = errors[0]
            raise UsageError(f"--runtimes: {first.file}:{first.line}:{first.column}: {first.message}")
        for record in loaded.records:
            result = admit(record.obj, ctx)
            yield (record.obj, False) if result.obj is None else (result.obj, True)


def _cross_object(
    checked: list[Checked], ctx: AdmissionContext, options: ValidateOptions
) -> Iterable[tuple[ObjectRecord, Finding]]:
    from jobsetctl.lint import run_lints
    from jobsetctl.reference import check_references

    admitted = [(c.record, c.result.obj) for c in checked if c.result.obj is not None and c.result.typed]
    yield from check_references(admitted, ctx)
    if options.admission_only:
        return
    # Kueue's references (a job's LocalQueue, a ClusterQueue's flavors) are refused by no API server: a
    # workload waits instead. Not part of --admission-only.
    from jobsetctl.kueue.references import check_kueue_references

    yield from check_kueue_references(admitted, ctx)
    yield from run_lints([
        (c.record, c.result.obj, c.linted_locally) for c in checked if c.result.obj is not None and c.result.typed
    ], ctx)


def _duplicates(
    checked: list[Checked], ctx: AdmissionContext, old_objects: dict[ObjectKey, dict[str, Any]], positions: _Positions
) -> Iterator[tuple[ObjectRecord, Finding]]:
    """``duplicate-object`` over every loaded object, admitted or not: the inputs define them all."""
    from jobsetctl.duplicates import Defined, check_duplicates

    def scope(item: Checked) -> bool:
        if item.result.handler is not None:
            return item.result.handler.namespaced
        group, kind, _, _ = object_key(item.record.obj)
        return not is_cluster_scoped(group, kind)

    inputs = (Defined(item.record, scope(item), bool(old_objects) and _namespaced_key(item.record.obj, ctx) in old_objects)
              for item in checked)
    yield from check_duplicates(inputs, ctx.default_namespace, positions.where)


def _ignored_rule(rule_id: str, ignore: frozenset[str]) -> bool:
    return rule_id in ignore or "all" in ignore


def _kept(obj: dict[str, Any], finding: Finding, options: ValidateOptions) -> bool:
    """Not ignored, and, with ``admission_only``, something the API server answers (by layer)."""
    if options.admission_only and not finding.rule.layer.admission:
        return False
    return not _ignored(obj, finding, options.ignore)


def _ignored(obj: dict[str, Any], finding: Finding, ignore: frozenset[str]) -> bool:
    if _ignored_rule(finding.rule.id, ignore):
        return True
    meta = obj.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    if isinstance(annotations, dict):
        value = annotations.get(IGNORE_ANNOTATION)
        if isinstance(value, str):
            listed = {part.strip() for part in value.split(",")}
            return finding.rule.id in listed or "all" in listed
    return False


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)
