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
from jobsetctl.loader.objects import LoadedFile, ObjectRecord, load_file
from jobsetctl.loader.sources import Source, SourceProblem, discover
from jobsetctl.rules import core, get
from jobsetctl.simulate import scenario as sc
from jobsetctl.simulate.nodes import is_node, pool_nodes
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


def _load_sources(sources: list[Source], cache: dict[str, LoadedFile]) -> list[LoadedFile]:
    loaded: list[LoadedFile] = []
    for source in sources:
        key = os.path.realpath(source.path) if source.path else source.name
        if key not in cache:
            cache[key] = load_file(source)
        loaded.append(cache[key])
    return loaded


def load_inputs(paths: list[str], nodes_file: str | None) -> Inputs:
    """Read the inputs. Raises :class:`UsageError` when there is nothing to read at all."""
    if not paths:
        raise UsageError("no input: give a Scenario file, manifests (files or directories), or - for stdin")
    sources, problems = discover(list(paths))
    diagnostics = _source_diagnostics(problems)
    cache: dict[str, LoadedFile] = {}
    files = _load_sources(sources, cache)
    scenario_record: ObjectRecord | None = None
    plain: list[ObjectRecord] = []
    for loaded in files:
        diagnostics.extend(loaded.diagnostics)
        for record in loaded.records:
            if sc.is_scenario(record.obj):
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
        scenario, scenario_diagnostics = sc.parse_scenario(scenario_record)
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
                    f"{'.'.join(str(s) for s in ref.at[:3])}: {reason}", object=record.ref,
                ))
                continue
            inputs.files += len(sources)
            for loaded in _load_sources(sources, cache):
                inputs.diagnostics.extend(d for d in loaded.diagnostics if d not in inputs.diagnostics)
                submission.records.extend(r for r in loaded.records if not sc.is_scenario(r.obj))


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
                f"--nodes takes v1 Node objects (or a v1 List of them), not {record.ref}",
                object=record.ref,
            ))


def _check_node_names(inputs: Inputs) -> None:
    """A node defined twice would be an AlreadyExists at run time; say so now, where it is written."""
    taken: dict[str, str] = {}
    if inputs.scenario is not None:
        for pool in inputs.scenario.nodes:
            for node in pool_nodes(pool):
                taken[node["metadata"]["name"]] = f"node pool {pool.name!r}"
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
