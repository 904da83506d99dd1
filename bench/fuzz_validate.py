"""A long fuzz run of ``jobsetctl validate`` (issue #6): the properties of tests/hardening/test_fuzz_validate.py
with a large budget and fresh randomness. A plain script: prints what failed and keeps the inputs.

    python bench/fuzz_validate.py [--examples 2000] [--keep DIR] [--seed N]
    python bench/fuzz_validate.py --big [--megabytes 50]

Each failing input is written to DIR (default: a temporary directory) with the mutations that made it,
ready to be copied into tests/corpus/ with a comment on what broke; so are the five slowest inputs.

``--big`` is the worst realistic case of the 50 MB class instead: one file of 50 MB of real JobSets (the
suite's test uses cheaper documents), run through the entry point; prints time and peak memory.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.hardening.mutations import (  # noqa: E402
    Setting,
    checked_diagnostics,
    dump,
    mutated,
    mutated_text,
    seed_documents,
    seed_texts,
    settings_strategy,
    write_case,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000)
    parser.add_argument("--keep", type=Path, default=None, help="where to write failing and slow inputs")
    parser.add_argument("--seed", type=int, default=None, help="hypothesis seed (default: random)")
    parser.add_argument("--big", action="store_true", help="one 50 MB file of real JobSets: time and peak memory")
    parser.add_argument("--megabytes", type=int, default=50)
    args = parser.parse_args()
    if args.big:
        return big(args.megabytes)
    keep = args.keep or Path(tempfile.mkdtemp(prefix="fuzz-validate-"))
    keep.mkdir(parents=True, exist_ok=True)
    documents = seed_documents()
    texts = seed_texts()
    failures: list[str] = []
    timings: list[tuple[float, str, str]] = []
    counter = [0]
    examples = [0]

    def record(text: str, setting: Setting, applied: list[str], old: str | None, problem: str) -> None:
        counter[0] += 1
        name = keep / f"failure-{counter[0]:04}.yaml"
        header = [f"# {problem}", f"# mutations: {'; '.join(applied)}",
                  f"# kubernetes {setting.version.value}, gates {setting.spec}"]
        name.write_text("\n".join(header) + "\n" + text + ("\n# --old:\n" + "\n".join("# " + x for x in old.splitlines()) if old else ""))
        failures.append(f"{name}: {problem}")

    @settings(max_examples=args.examples, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(case=mutated(documents), setting=settings_strategy(), update=st.booleans(),
           damaged=st.none() | mutated_text(texts))
    def run_one(case: tuple[dict[str, object], dict[str, object], list[str]], setting: Setting, update: bool,
                damaged: str | None) -> None:
        examples[0] += 1
        seed_obj, obj, applied = case
        text = dump(obj, setting.as_json) if damaged is None else damaged
        if damaged is not None:
            applied = ["damaged text"]
        old_text = dump(seed_obj, False) if update and damaged is None else None
        with tempfile.TemporaryDirectory() as directory:
            path = write_case(directory, "case.json" if setting.as_json else "case.yaml", text)
            old = write_case(directory, "old.yaml", old_text) if old_text is not None else None
            started = time.perf_counter()
            try:
                first = checked_diagnostics([path], setting, old=old)
                again = checked_diagnostics([path], setting, old=old)
                if first != again:
                    record(text, setting, applied, old_text, "not deterministic")
            except Exception as exc:
                from jobsetctl.status import UsageError

                if not (isinstance(exc, UsageError) and str(exc).startswith("--old: ")):
                    record(text, setting, applied, old_text,
                           f"{type(exc).__name__}: {exc} | " + traceback.format_exc().splitlines()[-3].strip())
            timings.append((time.perf_counter() - started, "; ".join(applied), text))
            timings.sort(key=lambda t: -t[0])
            del timings[5:]  # only the slowest are kept: their texts can be large

    if args.seed is not None:
        run_one = seed(args.seed)(run_one)
    started = time.perf_counter()
    run_one()
    elapsed = time.perf_counter() - started
    print(f"{examples[0]} inputs in {elapsed:.0f} s from {len(documents)} seed documents; "
          f"{len(failures)} failures (kept in {keep})")
    for line in failures[:50]:
        print("  FAIL", line)
    print("slowest:")
    for rank, (took, what, text) in enumerate(timings, start=1):
        slow = keep / f"slow-{rank}.yaml"
        slow.write_text(f"# {took:.2f} s: {what}\n{text}")
        print(f"  {took:6.2f} s  {what}  ({slow}, {len(text)} characters)")
    return 1 if failures else 0


def big(megabytes: int) -> int:
    """50 MB of the suite's JobSet seed, one document after another, through the installed entry point."""
    seed_text = (REPO / "tests" / "hardening" / "seeds" / "jobset.yaml").read_text()
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "big.yaml"
        size = count = 0
        with path.open("w", encoding="utf-8") as handle:
            while size < megabytes * 1024 * 1024:
                text = "---\n" + seed_text.replace("name: seed-jobset", f"name: seed-jobset-{count}")
                handle.write(text)
                size += len(text)
                count += 1
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "jobsetctl", "validate", "--jobs", "1", str(path)],
                              capture_output=True, check=False)
        elapsed = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    last = done.stdout.decode(errors="replace").strip().splitlines()[-1:] or [""]
    print(f"{megabytes} MB, {count} JobSets: exit {done.returncode} in {elapsed:.0f} s, peak RSS {peak:.0f} MiB")
    print(f"  {last[0]}")
    if done.stderr:
        print(done.stderr.decode(errors="replace"))
    return 0 if done.returncode == 0 and not done.stderr else 1


if __name__ == "__main__":
    os.environ.setdefault("NO_COLOR", "1")
    raise SystemExit(main())
