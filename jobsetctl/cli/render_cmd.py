"""``jobsetctl render`` (STUB: to be completed)."""

from __future__ import annotations

from jobsetctl.cli.app import app  # noqa: F401  (commands register on the shared app)
