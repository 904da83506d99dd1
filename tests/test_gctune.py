"""The command's garbage-collector settings (jobsetctl/gctune.py), checked in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys

from jobsetctl.gctune import THRESHOLDS


def test_tune_for_batch_sets_thresholds_and_freezes_what_is_alive() -> None:
    code = (
        "import gc\n"
        "from jobsetctl.gctune import tune_for_batch\n"
        "before = gc.get_freeze_count()\n"
        "tune_for_batch()\n"
        "print(gc.get_threshold(), before == 0 and gc.get_freeze_count() > 0)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == f"{THRESHOLDS} True"
