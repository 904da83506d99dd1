"""``jobsetctl render``: parse the options, call :func:`jobsetctl.render.execute`, map the outcome."""

from __future__ import annotations

import os
import sys
from enum import StrEnum
from typing import Annotated

import typer

from jobsetctl.cli.app import (
    ContextOption,
    GatesOption,
    KubeVersionOption,
    KueueConfigOption,
    MaxObjectsOption,
    app,
)
from jobsetctl.status import ExitStatus


class RenderFormat(StrEnum):
    yaml = "yaml"
    json = "json"


class GangChoice(StrEnum):
    none = "none"
    jobset = "jobset"
    replicatedjob = "replicatedjob"
    job = "job"


@app.command()
def render(
    paths: Annotated[list[str] | None, typer.Argument(help="Files, directories (recursive *.yaml, *.yml, *.json) or - for stdin.")] = None,
    output: Annotated[RenderFormat, typer.Option("--output", "-o", help="yaml (a multi-document stream) or json (a v1 List).")] = RenderFormat.yaml,
    output_dir: Annotated[str | None, typer.Option("--output-dir", help="Write one file per object here (atomically) instead of to stdout.")] = None,
    pods: Annotated[bool, typer.Option("--pods", help="Also the pods the Job controller creates.")] = False,
    all_stages: Annotated[bool, typer.Option("--all-stages", help="Also what dependsOn/InOrder release later (pretending the blocking Jobs ready or complete); objects carry jobsetctl.dev/stage.")] = False,
    gang: Annotated[GangChoice, typer.Option("--gang", help="Generate the Workload/PodGroups JobSet users write by hand: one gang per jobset, replicatedjob or job.")] = GangChoice.none,
    topology: Annotated[str | None, typer.Option("--topology", help="With --gang: node label keys, coarse to fine (two or more: a CompositePodGroup tree, 1.37).")] = None,
    priority_class: Annotated[str | None, typer.Option("--priority-class", help="With --gang: the groups' priorityClassName (and the pods' where they have none).")] = None,
    disruption_mode: Annotated[str | None, typer.Option("--disruption-mode", help="With --gang: single or all (also Pod or PodGroup).")] = None,
    kubernetes_version: KubeVersionOption = None,
    feature_gates: GatesOption = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of generated names and UIDs; same seed, same bytes.")] = 0,
    runtimes: Annotated[list[str] | None, typer.Option("--runtimes", help="Files or directories with (Cluster)TrainingRuntimes to resolve runtimeRef against.")] = None,
    context: ContextOption = None,
    strict: Annotated[bool | None, typer.Option("--strict/--no-strict", help="An object a reference names that is in neither the inputs nor the context is an error, and warnings fail (exit 1), as for validate.")] = None,
    config: Annotated[str | None, typer.Option("--config", help="Configuration file (default: nearest .jobsetctl.yaml upward).")] = None,
    max_objects: MaxObjectsOption = None,
    kueue_config: KueueConfigOption = None,
) -> int:
    """Print everything the Trainer, JobSet and Job controllers would create for the manifests, offline
    and deterministic: inputs as admission leaves them, then created objects in creation order."""
    from jobsetctl.cli.options import validate_options
    from jobsetctl.gang import parse_gang_options
    from jobsetctl.render import RenderOptions, execute
    from jobsetctl.simulate.limits import MAX_OBJECTS

    options = RenderOptions(
        validate=validate_options(paths or [], kubernetes_version, feature_gates, strict, None, runtimes or [], [], None,
                                  config, context=context or [], kueue_config=kueue_config),
        output=output.value,
        output_dir=output_dir,
        pods=pods,
        all_stages=all_stages,
        gang=parse_gang_options(gang.value, topology, priority_class, disruption_mode),
        seed=seed,
        max_objects=max_objects or MAX_OBJECTS,
    )
    color = sys.stderr.isatty() and not os.environ.get("NO_COLOR")
    outcome = execute(options, sys.stdout, sys.stderr, color=color)
    return ExitStatus.FINDINGS if outcome.failed else ExitStatus.SUCCESS
