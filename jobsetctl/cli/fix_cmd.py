"""``jobsetctl fix`` and ``jobsetctl migrate``: parse the options, call the package, map the outcome."""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Annotated

import typer

from jobsetctl.cli.app import GatesOption, KubeVersionOption, app

PathsArgument = Annotated[list[str] | None, typer.Argument(help="Files, directories (recursive *.yaml, *.yml, *.json) or - for stdin (--diff only).")]
WriteOption = Annotated[bool, typer.Option("--write/--diff", help="Rewrite the files in place (atomically), or print a unified diff (default).")]
CheckOption = Annotated[bool, typer.Option("--check", help="Exit 1 when a file would change (or changed, with --write): for CI and pre-commit.")]


@app.command()
def fix(
    paths: PathsArgument = None,
    write: WriteOption = False,
    check: CheckOption = False,
    kubernetes_version: KubeVersionOption = None,
    feature_gates: GatesOption = None,
    ignore: Annotated[str | None, typer.Option("--ignore", help="Comma-separated rule ids to leave alone.")] = None,
    runtimes: Annotated[list[str] | None, typer.Option("--runtimes", help="Files or directories with (Cluster)TrainingRuntimes to resolve runtimeRef against.")] = None,
    config: Annotated[str | None, typer.Option("--config", help="Configuration file (default: nearest .jobsetctl.yaml upward).")] = None,
    include_info: Annotated[bool, typer.Option("--include-info", help="Also apply the fixes of info-level findings (notes such as a deprecated spelling that still works); off by default.")] = False,
) -> int:
    """Repair what validate finds, where a rule has a safe fix (see `jobsetctl rules`), keeping comments
    and formatting. Findings that cannot be fixed safely are listed, never guessed. Info-level findings are
    fixed only with --include-info."""
    from jobsetctl.cli.options import validate_options
    from jobsetctl.fix.command import run_fix
    from jobsetctl.fix.rewrite import Mode, report

    options = validate_options(paths or [], kubernetes_version, feature_gates, None, ignore, runtimes or [], [], None, config)
    outcome = run_fix(options, include_info=include_info)
    return report(outcome, Mode.WRITE if write else Mode.DIFF, check, "fixed", sys.stdout, sys.stderr)


class MigrateTarget(StrEnum):
    kubernetes_1_36 = "kubernetes-1.36"
    kubernetes_1_37 = "kubernetes-1.37"
    trainer_v2 = "trainer-v2"
    kueue_v1beta2 = "kueue-v1beta2"


@app.command()
def migrate(
    paths: PathsArgument = None,
    to: Annotated[MigrateTarget | None, typer.Option("--to", help="kubernetes-1.36, kubernetes-1.37 (Workload/PodGroup API), trainer-v2 (Kubeflow v1 jobs to TrainJob), kueue-v1beta2.")] = None,
    write: WriteOption = False,
    check: CheckOption = False,
) -> int:
    """Rewrite manifests for an API change, keeping comments and formatting: the scheduling.k8s.io
    Workload API of Kubernetes 1.36/1.37, Kubeflow Trainer v1 jobs to TrainJob, Kueue v1beta1 to v1beta2."""
    from jobsetctl.fix.rewrite import Mode, report
    from jobsetctl.migrate import run_migrate
    from jobsetctl.status import UsageError

    if to is None:
        raise UsageError("missing --to: one of " + ", ".join(t.value for t in MigrateTarget))
    outcome = run_migrate(to.value, paths or [])
    return report(outcome, Mode.WRITE if write else Mode.DIFF, check, "migrated", sys.stdout, sys.stderr)
