"""Garbage-collector settings for a short-lived command that builds large trees of objects.

CPython 3.11 runs a generation-0 collection every 700 net container allocations, and each collection
of an older generation walks every tracked object. ``validate`` builds a dict per mapping of every
manifest, ``simulate`` keeps a dict tree per pod for the whole run: with tens of thousands of live
objects the collector's walks grow with the heap, so that doubling a simulated cluster cost 2.3-2.7
times the CPU with the default settings and 2.0 times with these (bench/bench_scheduler.py, 5,000
nodes / 50,000 pods, measured 2026-11-22: schedule CPU 4.56 s -> 3.38 s, doubled 10.65 s -> 6.76 s).

Our objects are JSON-shaped trees and almost never form reference cycles, so collecting less often
frees nothing later that matters; memory stays bounded because reference counting frees the trees.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

#: Allocations between generation-0 collections, and the two older generations' ratios.
THRESHOLDS = (50_000, 20, 100)


def tune_for_batch() -> None:
    """Collect less often, and move what is alive now (imported modules, compiled schemas) out of the
    collector's sight for good (``gc.freeze``): it lives until the process exits."""
    global _batch
    _batch = True
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)


#: Set by :func:`tune_for_batch`: this process is a command that ends soon (see :func:`paused`).
_batch = False


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """No cyclic collection while a simulation runs: its young objects (pod trees, events, watch events) all
    get walked by the collector at least once, for nothing. Measured on bench/bench_contended.py (2,500
    nodes, 25,040 pods, 2026-11-25): 12.9 s of CPU with the collector, 12.1 s without, the same peak RSS
    (547 and 551 MiB), so the run leaves no garbage in cycles worth collecting; whatever it leaves is
    collected once the collector is back on.

    In a command (:func:`tune_for_batch`), what the run left alive is frozen as the collector comes back:
    otherwise every object the run made is still in the youngest generation, and the first collection
    after it walks them all (measured on bench/bench_contended.py, rack 1,000 nodes: about 2 % of the
    command's CPU); the command ends soon after, and reference counting still frees what it drops."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if _batch:
                gc.freeze()
            gc.enable()
