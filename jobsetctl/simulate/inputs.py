"""From command-line paths to what a simulation submits: a Scenario, or plain manifests at time zero.

Everything that can be wrong with the inputs is found here, before anything runs, and reported as
diagnostics with ``file:line:column`` the way ``validate`` reports them: unreadable files, YAML errors,
Scenario errors (``scenario-*`` rules), a second Scenario, files a Scenario submits that do not exist,
non-Node objects in ``--nodes``, node names defined twice.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from jobsetctl.diagnostics import Diagnostic, Severity
from jobsetctl.kube.field import path_string
from jobsetctl.loader.objects import LoadedFile, ObjectRecord, is_scenario, load_file
from jobsetctl.loader.sources import Source, SourceProblem, discover
from jobsetctl.rules import core, get
from jobsetctl.simulate import limits
from jobsetctl.simulate import scenario as sc
from jobsetctl.simulate.nodes import is_node, pool_node_names
from jobsetctl.status import UsageError


@dataclass(slots=True)
class Inputs:
    """What to simulate. ``submissions`` are in time order (stable: file order at equal times)."""

    name: str
    scenario: sc.Scenario | None = None
    submissions: list[sc.Submission] = field(default_factory=list)
    #: Nodes from ``--nodes`` (records, for positions of problems).
    node_records: list[ObjectRecord] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files: int = 0

    @property
    def errors(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity is Severity.ERROR)

    def all_records(self) -> list[ObjectRecord]:
        return [record for submission in self.submissions for record in submission.records]


def _source_diagnostics(problems: list[SourceProblem]) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for problem in problems:
        rule = get(problem.code) or core.UNREADABLE
        out.append(Diagnostic(problem.name, 1, 1, rule.severity, rule.layer, rule.id, problem.message))
    return out


def _cache_key(source: Source) -> str:
    return os.path.realpath(source.path) if source.path else source.name


def _load_sources(sources: list[Source], cache: dict[str, LoadedFile]) -> list[LoadedFile]:
    loaded: list[LoadedFile] = []
    for source in sources:
        key = _cache_key(source)
        if key not in cache:
            cache[key] = load_file(source)
        loaded.append(cache[key])
    return loaded


def load_inputs(paths: list[str], nodes_file: str | None, max_objects: int = limits.MAX_OBJECTS) -> Inputs:
    """Read the inputs. Raises :class:`UsageError` when there is nothing to read at all."""
    if not paths:
        raise UsageError("no input: give a Scenario file, manifests (files or directories), or - for stdin")
    sources, problems = discover(list(paths))
    if nodes_file is not None:
        # ``simulate manifests/ --nodes manifests/nodes.yaml``: the nodes file is read as nodes, once, not
        # also as a manifest submitted at time zero (its nodes would be defined twice).
        node_sources, _ = discover([nodes_file])
        taken = {_cache_key(source) for source in node_sources}
        sources = [source for source in sources if _cache_key(source) not in taken]
    diagnostics = _source_diagnostics(problems)
    cache: dict[str, LoadedFile] = {}
    files = _load_sources(sources, cache)
    scenario_record: ObjectRecord | None = None
    plain: list[ObjectRecord] = []
    for loaded in files:
        diagnostics.extend(loaded.diagnostics)
        for record in loaded.records:
            if is_scenario(record.obj):
                if scenario_record is not None:
                    line, column = record.position(())
                    diagnostics.append(Diagnostic(
                        record.file, line, column, sc.MULTIPLE.severity, sc.MULTIPLE.layer, sc.MULTIPLE.id,
                        f"a second Scenario (the first is in {scenario_record.file}); simulate one at a time",
                    ))
                    continue
                scenario_record = record
            else:
                plain.append(record)
    first_stem = os.path.splitext(os.path.basename(sources[0].name))[0] if sources else "simulation"
    inputs = Inputs(first_stem, diagnostics=diagnostics, files=len(sources))
    if plain:
        inputs.submissions.append(sc.Submission(0.0, -1, records=plain))
    if scenario_record is not None:
        # Partial: a Scenario with errors is still read as far as it goes, so that its submitted files and
        # node names are checked in the same run (every problem at once; nothing runs while one is left).
        scenario, scenario_diagnostics = sc.parse_scenario(scenario_record, partial=True)
        inputs.diagnostics.extend(scenario_diagnostics)
        if scenario is not None:
            inputs.scenario = scenario
            inputs.name = scenario.name
            _load_submitted_files(scenario, inputs, cache)
            inputs.submissions.extend(scenario.submissions)
    inputs.submissions.sort(key=lambda s: s.at)
    if nodes_file is not None:
        _load_nodes_file(nodes_file, inputs)
    _check_node_names(inputs)
    _check_size(inputs, max_objects)
    inputs.diagnostics.sort(key=Diagnostic.sort_key)
    return inputs


def _load_submitted_files(scenario: sc.Scenario, inputs: Inputs, cache: dict[str, LoadedFile]) -> None:
    record = scenario.record
    for submission in scenario.submissions:
        for ref in submission.files:
            sources, problems = discover([ref.path])
            if problems or not sources:
                reason = problems[0].message if problems else f"{ref.text}: no manifests (*.yaml, *.yml, *.json) found"
                line, column = record.position(ref.at)
                rule = sc.MISSING_FILE
                inputs.diagnostics.append(Diagnostic(
                    record.file, line, column, rule.severity, rule.layer, rule.id,
                    f"{path_string(ref.at)}: {reason}", path_string(ref.at), record.ref,
                ))
                continue
            # A file submitted twice (or an input submitted again) is one file read once.
            inputs.files += sum(1 for s in sources if _cache_key(s) not in cache)
            for loaded in _load_sources(sources, cache):
                inputs.diagnostics.extend(d for d in loaded.diagnostics if d not in inputs.diagnostics)
                for submitted in loaded.records:
                    if is_scenario(submitted.obj):
                        inputs.diagnostics.append(_scenario_submitted(scenario, ref, submitted))
                    else:
                        submission.records.append(submitted)


def _scenario_submitted(scenario: sc.Scenario, ref: sc.FileRef, submitted: ObjectRecord) -> Diagnostic:
    """A submitted file holds a Scenario: this one (it would submit its own inline manifests twice, or
    nothing at all), or another one (Scenarios do not nest). Said where the file is named."""
    record = scenario.record
    line, column = record.position(ref.at)
    if submitted is record:
        rule, why = sc.INVALID_VALUE, "is this Scenario's own file; submit the manifests, not the Scenario"
    else:
        rule, why = sc.MULTIPLE, (f"holds a Scenario ({submitted.file}); a Scenario submits manifests, "
                                  "and Scenarios do not nest")
    return Diagnostic(record.file, line, column, rule.severity, rule.layer, rule.id,
                      f'{path_string(ref.at)}: "{ref.text}" {why}', path_string(ref.at), record.ref)


def _load_nodes_file(path: str, inputs: Inputs) -> None:
    sources, problems = discover([path])
    if problems or not sources:
        reason = problems[0].message if problems else f"{path}: no manifests found"
        raise UsageError(f"--nodes: {reason}")
    for loaded in _load_sources(sources, {}):
        inputs.diagnostics.extend(loaded.diagnostics)
        for record in loaded.records:
            if is_node(record.obj):
                inputs.node_records.append(record)
                continue
            line, column = record.position(("kind",))
            rule = sc.NODES_FILE
            inputs.diagnostics.append(Diagnostic(
                record.file, line, column, rule.severity, rule.layer, rule.id,
                f"--nodes takes v1 Node objects (or a v1 List of them), not {record.ref}", "kind", record.ref,
            ))


def _check_size(inputs: Inputs, max_objects: int) -> None:
    """Bounded time and memory (:mod:`jobsetctl.simulate.limits`): the nodes of ``--nodes`` and of Node
    manifests on top of the pools (which the Scenario parser counted), and the objects the inputs would
    make the controllers create."""
    total = sum(pool.count for pool in inputs.scenario.nodes) if inputs.scenario is not None else 0
    submitted_nodes = [r for s in inputs.submissions for r in s.records if is_node(r.obj)]
    for record in [*inputs.node_records, *submitted_nodes]:
        total += 1
        if total > limits.MAX_NODES:
            rule = limits.TOO_LARGE
            line, column = record.position(())
            inputs.diagnostics.append(Diagnostic(
                record.file, line, column, rule.severity, rule.layer, rule.id,
                f"{record.ref.kind} {record.ref.name}: {limits.node_limit_message(total)}", object=record.ref,
            ))
            return
    inputs.diagnostics.extend(
        limits.estimate(inputs.all_records(), pods=True, command="simulate", max_objects=max_objects))


def _check_node_names(inputs: Inputs) -> None:
    """A node defined twice would be an AlreadyExists at run time; say so now, where it is written."""
    taken: dict[str, str] = {}
    if inputs.scenario is not None:
        for pool in inputs.scenario.nodes:
            for name in pool_node_names(pool):
                taken[name] = f"node pool {pool.name!r}"
    at_zero = [r for s in inputs.submissions if s.at == 0 for r in s.records if is_node(r.obj)]
    for record in [*inputs.node_records, *at_zero]:
        name = str((record.obj.get("metadata") or {}).get("name", ""))
        where = f"{record.file}"
        if name in taken:
            line, column = record.position(("metadata", "name"))
            rule = sc.DUPLICATE_NODE
            inputs.diagnostics.append(Diagnostic(
                record.file, line, column, rule.severity, rule.layer, rule.id,
                f'node "{name}" is already defined by {taken[name]}', object=record.ref,
            ))
        else:
            taken[name] = where
