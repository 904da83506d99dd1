"""Process exit statuses, in one place (httpie's ``ExitStatus`` idea)."""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    """What a ``jobsetctl`` command returns to the shell.

    The numbers are part of the command-line contract: CI systems and pre-commit read them.
    """

    SUCCESS = 0
    #: Errors were found in the input (or warnings, under ``--strict``), or a simulated object was rejected.
    FINDINGS = 1
    #: Unusable arguments or configuration: nothing was checked.
    USAGE = 2
    #: A bug in jobsetctl. Reported as one line, never as a traceback.
    INTERNAL = 3
    #: Interrupted with Ctrl-C.
    INTERRUPTED = 130


class UsageError(Exception):
    """Bad command-line arguments or configuration; maps to :attr:`ExitStatus.USAGE`."""
