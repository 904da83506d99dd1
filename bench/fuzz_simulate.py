"""A long fuzz run of ``jobsetctl simulate`` (issue #6): the properties of tests/hardening/test_fuzz_simulate.py
(every invariant at every step, termination within ``until``, byte-identical JSON for one seed) over many
more random scenarios, with fresh randomness. A plain script: prints counts and keeps failing scenarios.

    python bench/fuzz_simulate.py [--minutes 10] [--examples N] [--workloads 6] [--keep DIR] [--seed N]

It runs batches of examples until ``--examples`` scenarios ran or ``--minutes`` passed, whichever comes
first. Each failing scenario is written to DIR (default: a temporary directory) as ``failure-NNNN.yaml``
with the seed, the release option and the error in its header, ready to be replayed with
``jobsetctl simulate FILE --seed SEED -o json`` (``JOBSETCTL_CHECK_INVARIANTS=1``) and copied into
tests/corpus/ as ``scenario-*.yaml``; so are the three slowest scenarios.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import sys
import tempfile
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("JOBSETCTL_CHECK_INVARIANTS", "1")

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.hardening.scenarios import Case, check_case, scenarios, write_case  # noqa: E402

#: Events counted to show what the scenarios exercised.
INTERESTING = {("Pod", "Preempted"), ("Pod", "Failed"), ("Node", "Failed"), ("JobSet", "Restarting"),
               ("JobSet", "Completed"), ("JobSet", "Failed"), ("JobSet", "Suspended"), ("JobSet", "Resumed"),
               ("TrainJob", "Completed"), ("Job", "Completed"), ("Job", "Failed"), ("PodGroup", "Scheduled"),
               ("Workload", "Scheduled"), ("CompositePodGroup", "Scheduled")}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="stop after this much wall time")
    parser.add_argument("--examples", type=int, default=1_000_000, help="stop after this many scenarios")
    parser.add_argument("--batch", type=int, default=50, help="scenarios per hypothesis run")
    parser.add_argument("--workloads", type=int, default=6, help="at most this many workloads per scenario")
    parser.add_argument("--keep", type=Path, default=None, help="where to write failing and slow scenarios")
    parser.add_argument("--seed", type=int, default=None, help="seed of the batch seeds (default: random)")
    args = parser.parse_args()
    keep = args.keep or Path(tempfile.mkdtemp(prefix="fuzz-simulate-"))
    keep.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    deadline = time.monotonic() + args.minutes * 60
    counts: collections.Counter[str] = collections.Counter()
    exercised: collections.Counter[tuple[str, str]] = collections.Counter()
    stops: collections.Counter[str] = collections.Counter()
    failures: list[str] = []
    slowest: list[tuple[float, str]] = []

    def record(case: Case, scenario_seed: int, version_option: bool, problem: str) -> None:
        name = keep / f"failure-{len(failures) + 1:04}.yaml"
        header = [f"# {line}" for line in problem.splitlines()[-25:]]
        header.insert(0, f"# seed {scenario_seed}; --kubernetes-version option: {version_option}")
        name.write_text("\n".join(header) + "\n" + case.text(), encoding="utf-8")
        failures.append(f"{name}: {problem.splitlines()[-1] if problem else '?'}")

    @settings(max_examples=args.batch, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(case=scenarios(max_workloads=args.workloads), scenario_seed=st.integers(0, 2**31 - 1),
           version_option=st.booleans())
    def run_one(case: Case, scenario_seed: int, version_option: bool) -> None:
        if time.monotonic() > deadline or counts["scenarios"] >= args.examples:
            return
        counts["scenarios"] += 1
        started = time.perf_counter()
        with tempfile.TemporaryDirectory() as directory:
            path = write_case(directory, case)
            try:
                run = check_case(path, case, scenario_seed, version_option=version_option)
            except Exception as exc:  # every failure is kept and reported
                counts["failures"] += 1
                record(case, scenario_seed, version_option, f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
                return
        took = time.perf_counter() - started
        counts["invariant checks"] += run.checks
        result = run.outcome.result
        assert result is not None
        stops[result.stop_reason] += 1
        for event in result.events:
            if (event.kind, event.event) in INTERESTING:
                exercised[(event.kind, event.event)] += 1
        slowest.append((took, case.text()))
        slowest.sort(key=lambda item: -item[0])
        del slowest[3:]

    started = time.perf_counter()
    while time.monotonic() < deadline and counts["scenarios"] < args.examples:
        seed(rng.getrandbits(64))(run_one)()
    elapsed = time.perf_counter() - started
    print(f"{counts['scenarios']} scenarios in {elapsed:.0f} s (each run twice); "
          f"{counts['invariant checks']} invariant checks executed; {counts['failures']} failures (kept in {keep})")
    print("stop reasons: " + ", ".join(f"{reason} {n}" for reason, n in sorted(stops.items())))
    print("exercised: " + ", ".join(f"{kind} {event} {n}" for (kind, event), n in sorted(exercised.items())))
    for line in failures[:50]:
        print("  FAIL", line)
    for rank, (took, text) in enumerate(slowest, start=1):
        slow = keep / f"slow-{rank}.yaml"
        slow.write_text(f"# {took:.2f} s for two runs\n{text}", encoding="utf-8")
        print(f"  slow {took:6.2f} s  {slow}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
