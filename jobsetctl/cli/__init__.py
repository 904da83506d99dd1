"""Command-line entry point. Kept import-light: ``jobsetctl --version`` runs on every pre-commit."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args in (["--version"], ["-V"]):
        from jobsetctl import __version__

        print(f"jobsetctl {__version__}")
        raise SystemExit(0)
    from jobsetctl.cli.app import run
    from jobsetctl.gctune import tune_for_batch

    tune_for_batch()  # the process is ours: set here, not in run(), which tests and libraries call
    raise SystemExit(run(args))
