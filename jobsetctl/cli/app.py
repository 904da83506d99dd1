"""Typer commands. Each parses options into a plain value, calls one package function, maps the result
to an :class:`~jobsetctl.status.ExitStatus`. No domain logic lives here."""

from __future__ import annotations

import os
import sys
from enum import StrEnum
from typing import Annotated

import typer

from jobsetctl.status import ExitStatus, UsageError

app = typer.Typer(
    name="jobsetctl",
    help="Offline validate, render and simulate for JobSet and Kubeflow Trainer v2 manifests.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class OutputFormat(StrEnum):
    text = "text"
    json = "json"
    sarif = "sarif"
    github = "github"


def _version_callback(value: bool) -> None:
    if value:
        from jobsetctl import __version__

        typer.echo(f"jobsetctl {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", "-V", callback=_version_callback, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """Offline validate, render and simulate for JobSet and Kubeflow Trainer v2 manifests."""


KubeVersionOption = Annotated[
    str | None,
    typer.Option("--kubernetes-version", help="Kubernetes release to model: 1.35, 1.36 or 1.37 (default 1.37)."),
]
GatesOption = Annotated[
    str | None,
    typer.Option("--feature-gates", help="Kubernetes, JobSet and Trainer gates, e.g. InPlaceRestart=true,RestartJob=true."),
]
KueueConfigOption = Annotated[
    str | None,
    typer.Option("--kueue-config", help="Kueue's Configuration file (config.kueue.x-k8s.io/v1beta2): its feature gates and options (default: the configuration Kueue ships)."),
]
ContextOption = Annotated[
    list[str] | None,
    typer.Option("--context", help="Files or directories whose objects references resolve against (a PriorityClass, a runtime in an unchanged file, your cluster's queues); never reported. render and simulate create the cluster's objects among them (namespaces, PriorityClasses, Kueue queues and flavors, runtimes) before the inputs, unprinted."),
]
#: render and simulate; None: jobsetctl.simulate.limits.MAX_OBJECTS (not imported here: --version stays light).
MaxObjectsOption = Annotated[
    int | None,
    typer.Option("--max-objects", min=1, help="Refuse inputs that would make the controllers create more objects than this, and stop a run that does (default 50,000): bounded time and memory."),
]


@app.command()
def validate(
    paths: Annotated[list[str] | None, typer.Argument(help="Files, directories (recursive *.yaml, *.yml, *.json) or - for stdin.")] = None,
    output: Annotated[OutputFormat | None, typer.Option("--output", "-o", help="text, json, sarif or github (default: github under GitHub Actions, else text).")] = None,
    kubernetes_version: KubeVersionOption = None,
    feature_gates: GatesOption = None,
    strict: Annotated[bool | None, typer.Option("--strict/--no-strict", help="Warnings fail too (exit 1).")] = None,
    ignore: Annotated[str | None, typer.Option("--ignore", help="Comma-separated rule ids to skip.")] = None,
    runtimes: Annotated[list[str] | None, typer.Option("--runtimes", help="Files or directories with (Cluster)TrainingRuntimes to resolve runtimeRef against.")] = None,
    crd: Annotated[list[str] | None, typer.Option("--crd", help="A CustomResourceDefinition file; its objects are validated by its schema and CEL rules.")] = None,
    old: Annotated[str | None, typer.Option("--old", help="The objects as stored: validate the inputs as an update of these.")] = None,
    config: Annotated[str | None, typer.Option("--config", help="Configuration file (default: nearest .jobsetctl.yaml upward).")] = None,
    jobs: Annotated[int | None, typer.Option("--jobs", "-j", min=0, help="Worker processes (default: one per core for large inputs; env JOBSETCTL_JOBS).")] = None,
    context: ContextOption = None,
    pre_commit: Annotated[bool, typer.Option("--pre-commit", help="Run as the pre-commit hook: Helm templates are passed over, and without --context every manifest git tracks is the context.")] = False,
    admission_only: Annotated[bool | None, typer.Option("--admission-only/--no-admission-only", help="Only what the API server answers (kubectl apply --dry-run=server): no consequences, no lints.")] = None,
    kueue_config: KueueConfigOption = None,
) -> int:
    """Check manifests with the whole admission chain, offline: schema, defaults, CEL, webhooks,
    references across files; then what fails after admission (consequences), and lints."""
    from jobsetctl.cli.options import validate_options
    from jobsetctl.cli.reporters import REPORTERS
    from jobsetctl.validate import run

    options = validate_options(
        paths or [], kubernetes_version, feature_gates, strict, ignore, runtimes or [], crd or [], old, config, jobs,
        context=context or [], pre_commit=pre_commit, unseen_cluster=True, admission_only=admission_only,
        kueue_config=kueue_config,
    )
    report = run(options)
    for note in report.notes:
        sys.stderr.write(f"jobsetctl: warning: {note}\n")
    chosen = output.value if output else ("github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text")
    reporter = REPORTERS[chosen](color=chosen == "text" and sys.stdout.isatty() and not os.environ.get("NO_COLOR"))
    sys.stdout.write(reporter.render(report))
    failed = report.errors > 0 or (options.strict and report.warnings > 0)
    return ExitStatus.FINDINGS if failed else ExitStatus.SUCCESS


@app.command()
def rules(
    output: Annotated[OutputFormat | None, typer.Option("--output", "-o", help="text or json.")] = None,
) -> int:
    """List every rule: id, severity, layer and a one-line description."""
    from jobsetctl.cli.rules_table import render_rules

    sys.stdout.write(render_rules("json" if output is OutputFormat.json else "text"))
    return ExitStatus.SUCCESS


def run(args: list[str]) -> int:
    """Run the app and turn every outcome into an exit status; never let a traceback out."""
    try:
        result = app(args, prog_name="jobsetctl", standalone_mode=False)
    except typer.Exit as exc:
        return int(exc.exit_code)
    except typer.Abort:
        sys.stderr.write("jobsetctl: interrupted\n")
        return ExitStatus.INTERRUPTED
    except typer.TyperException as exc:  # typer's (vendored click's) usage errors
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        else:
            sys.stderr.write(f"jobsetctl: error: {exc.format_message()}\n")
        return int(getattr(exc, "exit_code", ExitStatus.USAGE))
    except UsageError as exc:
        sys.stderr.write(f"jobsetctl: error: {exc}\n")
        return ExitStatus.USAGE
    except KeyboardInterrupt:
        sys.stderr.write("jobsetctl: interrupted\n")
        return ExitStatus.INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return ExitStatus.SUCCESS
    except MemoryError:
        sys.stderr.write("jobsetctl: internal error: out of memory\n")
        return ExitStatus.INTERNAL
    except Exception as exc:  # the last line of defence: one line, no traceback
        if os.environ.get("JOBSETCTL_DEBUG"):
            raise
        where = _innermost_frame(exc)
        sys.stderr.write(f"jobsetctl: internal error: {type(exc).__name__}: {exc}{where}\n")
        return ExitStatus.INTERNAL
    if result == ExitStatus.INTERRUPTED:
        # typer turns Ctrl-C into a silent return of 130; no command returns 130 itself.
        sys.stderr.write("jobsetctl: interrupted\n")
    return int(result) if isinstance(result, int) else ExitStatus.SUCCESS


def _innermost_frame(exc: BaseException) -> str:
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    if last is None:
        return ""
    code = last.tb_frame.f_code
    return f" (at {os.path.basename(code.co_filename)}:{last.tb_lineno}; set JOBSETCTL_DEBUG=1 for a traceback)"


def _silence_stdout() -> None:
    # Python flushes stdout at exit; after a broken pipe that flush would raise again.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass


# Commands defined in their own modules register on `app` when imported.
from jobsetctl.cli import fix_cmd, render_cmd, simulate_cmd  # noqa: E402, F401
