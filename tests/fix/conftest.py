"""Shared by the fix/migrate tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from jobsetctl.kinds.registry import clear_extra


@pytest.fixture(autouse=True)
def no_registered_crds() -> Iterator[None]:
    """Validating with ``crds`` (Kueue's CRDs as the oracle) registers their kinds for the rest of the process;
    drop them afterwards, or later tests in the same worker would see Kueue objects checked by those CRDs."""
    yield
    clear_extra()
