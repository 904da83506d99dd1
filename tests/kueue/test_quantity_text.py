"""How Kueue writes quantities in messages and resource lists (pkg/resources/resource_formatter.go
``ResourceQuantity``): one rule for the engine (:func:`jobsetctl.kueue.engine.amounts.quantity_string`) and
the lints (:func:`jobsetctl.kueue.queues.kueue_quantity_text`)."""

from __future__ import annotations

import pytest

from jobsetctl.kueue.engine.amounts import quantity_string
from jobsetctl.kueue.queues import kueue_quantity_text


@pytest.mark.parametrize(("resource", "value", "text"), [
    ("cpu", 1500, "1500m"),   # NewMilliQuantity(v, DecimalSI)
    ("cpu", 2000, "2"),
    ("memory", 2 * 1024**3, "2Gi"),
    # newCanonicalQuantity: BinarySI prints 1000000000 (not a multiple of 1024), parsed again it is DecimalSI.
    ("memory", 10**9, "1G"),
    ("ephemeral-storage", 1536, "1536"),
    ("hugepages-2Mi", 4 * 1024**2, "4Mi"),
    ("nvidia.com/gpu", 8, "8"),
    ("example.com/bytes", 2048, "2048"),  # DecimalSI unless registered as binary-formatted
])
def test_engine_and_lints_write_quantities_as_kueue_does(resource: str, value: int, text: str) -> None:
    assert quantity_string(resource, value) == kueue_quantity_text(resource, value) == text
