"""``jobsetctl simulate -o json`` at cluster scale with a queue (issue 12): a contended day, and a week of
arrivals.

    python bench/bench_contended.py                                  # the curve, both variants
    python bench/bench_contended.py --sizes 500,1000 --variants plain
    python bench/bench_contended.py --sizes 5000 --variants rack --profile   # cProfile of one run
    python bench/bench_contended.py --week                           # the week of arrivals on 2,000 nodes
    python bench/bench_contended.py --write 5000 --variants rack     # only write the Scenario (to try by hand)

**The contended day** (issue 12, "the shape"): one node pool of N nodes (64 cpu, 512Gi, 8
``nvidia.com/gpu``; topology N/500 blocks x 10 racks), and ceil(N/8) JobSets of 10 replicated jobs x 8
pods (1 GPU and 4 cpu each), each replicated job gang-scheduled by its own 1.37 PodGroup
(``gang.minCount: 8``), the JobSets arriving evenly over the first hour, every pod running ``1h``; no
``until``, so the run ends when the last pod finishes (about 2h10m simulated; the cluster holds 8N of the
10N pods, so a fifth of the gangs wait). Variant ``rack``: every PodGroup also has a required rack
constraint (``schedulingConstraints.topology: [{key: topology.example.com/rack}]``). The JobSets and
PodGroups are inline in the Scenario (a 4 MB file at 5,000 nodes).

**The week** (issue 12): 10,000 JobSets on 2,000 nodes over a week: Poisson arrivals (mean gap 60.48 s),
log-normal durations (median 2 h, sigma 1, clamped to 5 min .. 2 days), one replicated job per JobSet
whose gang size is drawn from 1, 2, 4, 8, 16, 32, 64 (weights 30, 15, 15, 20, 10, 6, 4), a pod asking
for a whole node (8 GPUs, 32 cpu; ``--week-gpus 1``: 1 GPU and 4 cpu, a week at about 11% of the GPUs
that never waits), so the demand averages about 87% of the cluster's GPUs and bursts past it; a quarter of them at the high priority of two PriorityClasses, which preempts (the default
``preemptionPolicy``). Gangs are 1.37 PodGroups with ``gang.minCount`` = the size and the JobSet's
priority class; a size-1 JobSet is a plain pod.

Each run is one ``python -m jobsetctl simulate FILE -o json`` in a fresh process, end to end: parse,
create, schedule, run, write the JSON (to a file). Figures: CPU seconds of that process (user + system,
from ``wait4``'s rusage, which other engineers' load on a shared machine disturbs far less than wall
time), wall seconds beside them, pods per CPU second and per wall second, peak RSS (``ru_maxrss``), the
ratio of each size's CPU time to the previous size's (doubling: 1,000 → 2,000 → ...; 2,500 → 5,000 →
10,000), and the JSON's size. A plain script: prints figures, asserts nothing.

Targets (issue 12): 5,000 nodes / 50,000 pods at >= 2,000 pods per second on one core, peak RSS < 2 GiB,
doubling <= 2.3x, both variants; the week in under a minute.

Measured at stop 19 (2026-11-26, main 87ce390: the rack placement without per-rack indexes, settled Job
syncs skipped, the lazy YAML positions), the package compiled once, load average under 1; CPU seconds:

    case   nodes    pods  CPU s  pods/CPU s  peak MiB  CPU x
    plain    500   5,040    2.5       2,032       221      -
    plain  1,000  10,000    4.8       2,101       241  1.92x
    plain  2,500  25,040   12.8       1,960       523  2.68x (2.5x the size: 2.11x per doubling)
    plain  5,000  50,000   21.4       2,332       966  1.68x
    plain 10,000 100,000   43.7       2,288     1,866  2.04x
    rack     500   5,040    3.0       1,706       717      -
    rack   1,000  10,000    4.6       2,188       717  1.55x
    rack   2,500  25,040   10.5       2,380       717  2.30x (2.5x the size)
    rack   5,000  50,000   19.3       2,597       976  1.83x
    rack  10,000 100,000   41.3       2,420     1,901  2.15x

Thirteen more runs at 5,000 nodes that hour: plain 18.2-21.0 s, rack 18.4-20.7 s (2,379-2,750 and
2,412-2,716 pods per CPU second). Four plain runs twenty minutes earlier took 24.3-25.0 s (2,000-2,058) at a
load average of 1 with nothing else of ours running; the same hash seed gave 18.6 and 19.0 s later, and a
cProfile pair of a slow and a fast run had the same call counts with every function slower alike: the
virtual machine's host, not the code. The week: 40.7 s CPU and wall, peak 1.6 GiB, sha256
8117ca0e31ec8fc9. Every digest is the one printed before this work.

Measured 2026-11-26 after the i12-day work (see "before" below), on the shared 2-core machine at a load
average of about 3 (wall close to CPU); CPU seconds still vary by up to a tenth from run to run: over the
day's seven runs at 5,000 nodes, plain took 22.3 to 26.5 s and rack 23.7 to 27.5 s (the higher ones at a
load average of 7 to 11). Every JSON digest is the one the code before this work printed.

    case   nodes    pods  CPU s  pods/CPU s  peak MiB  CPU x
    plain    500   5,040    2.7       1,851       156      -
    plain  1,000  10,000    5.2       1,940       252  1.89x
    plain  2,500  25,040   11.4       2,201       543  2.21x (2.5x the size)
    plain  5,000  50,000   23.2       2,152       999  2.04x
    plain 10,000 100,000   48.0       2,084     1,919  1.83x of a 26.3 s 5,000 (run once, load average 9)
    rack     500   5,040    2.9       1,735       370      -
    rack   1,000  10,000    5.0       1,997       370  1.72x
    rack   2,500  25,040   12.2       2,052       550  2.44x (2.5x the size)
    rack   5,000  50,000   26.4       1,895     1,015  2.16x
    rack  10,000 100,000   52.8       1,895     1,962  2.05x of a 25.7 s 5,000 (run once, load average 9)

Back to back on the quiet machine, the unchanged code (8fcf8ec) and this one at 5,000 nodes: plain 26.2 ->
22.3 s (2,244 pods per CPU second), rack 28.6 -> 23.7 s (2,108). With main merged in (i12-week's
scheduler work), load average 1 to 2: plain 21.4 s (2,338), rack 25.3 and 24.0 s (1,979 and 2,085).

On main after all of 2026-11-26's merges (ff8162c: also i12-day2's placement caches and i12-input's
parse and lint trims), the package compiled once, load average under 1: plain 5,000 24.0 and 22.5 s (2,082
and 2,226 pods per CPU second), rack 5,000 25.0 and 24.7 s (1,997 and 2,021); the curve at 01:55 on the
same machine (before those two branches): plain 2.5 / 4.8 / 11.8 / 23.5 / 54.6 s at 500 / 1,000 / 2,500 /
5,000 / 10,000 nodes (doubling 1.91x, 1.99x, 2.32x), rack 3.0 / 5.3 / 12.5 / 28.5 / 53.1 s (1.79x, 2.28x,
1.86x); the same run at 5,000 gave 26.2 s (plain) and 26.8 s (rack) a minute later: the machine's own
run-to-run spread is about 15 %, so rack sits at the 2,000 line, not safely above it. The week on main at
01:53 (i12-week merged): 49.6 s CPU and wall, peak 1.7 GiB, sha256 8117ca0e31ec8fc9.

Where the time went at 5,000 nodes, in-process phases (plain): parse 1.6 s, lint 1.2 s, the run 21.9 s,
timeline 0.8 s, summary 0.6 s, JSON 1.3 s (before the last two JSON changes); in the run, per pod: five
writes (created, bound, started and ready in one kubelet status update, finished, tracking finalizer
released) each fanned out to the watchers, the Job controller's syncs (about 7 per Job, 4 of which change
nothing) and pod creation (template copy, pod admission, the scheduler's PodInfo), the scheduler's cycles
and its snapshot upkeep, the JobSet controller's passes. Each run also compiles the package's sources
(about 0.3 s: PYTHONDONTWRITEBYTECODE is set on this machine; an installed package has its bytecode).

Before (measured 2026-11-25, code of 8fcf8ec, same machine and script; 2,500 plain measured alone: 13.5 s):

    case   nodes    pods  CPU s  pods/CPU s  peak MiB  CPU x
    plain    500   5,040    3.9       1,278       159      -
    plain  1,000  10,000    7.4       1,356       259  1.87x
    plain  2,500  25,040   17.4       1,442       564  2.35x (2.5x the size)
    plain  5,000  50,000   31.1       1,605     1,046  1.79x
    plain 10,000 100,000   57.4       1,742     2,043  1.85x (run once, machine quieter)
    rack     500   5,040    3.7       1,350       363      -
    rack   1,000  10,000    7.6       1,320       363  2.03x
    rack   2,500  25,040   17.1       1,460       573  2.26x (2.5x the size)
    rack   5,000  50,000   33.0       1,515     1,062  1.92x
    rack  10,000 100,000   65.2       1,534     2,074  1.98x (run once, machine quieter)

Before issue 12 (e7f1a6e, same script): plain 500 took 23.6 s CPU, plain 1,000 was stopped after 134 s
CPU (240 s wall) unfinished, and 2,500 was refused (the 3.2 MB Scenario hit the 3 MiB object limit).
The week (8-GPU pods, 88,821 pods, 817 preempted, 213 h simulated): 140.1 s CPU, then 96.3 s after the
preemption what-ifs stopped feeding the between-cycle indexes and moving unrelated pods; peak 1.7 GiB.
With 1-GPU pods (``--week-gpus 1``, nothing waits): 56.7 s CPU. After (2026-11-26, i12-week), the
preemption what-ifs answered from the nodes' sums (per-pod victim search, the victim-aware node choice kept
in a heap across a gang's pods, the reprieve re-checking only the placements a returning unit touches): the
before and after code run side by side on the loaded machine, 106.0 -> 70.8 s CPU (ratio 0.67, so about
64 s where the before measured 96.3), wall 329 -> 251 s under that load, peak 1.7 GiB both, JSON sha256
8117ca0e31ec8fc9 unchanged; ``--week-gpus 1`` 65.3 -> 66.2 s side by side (no preemption: unchanged within
noise), sha256 13272881077d1011 unchanged. The preemption share of a cProfile went from 36% to under 3%;
what remains is the controllers and the API server (cumulative shares, which overlap: Job controller 27%, pod creation 23%, watch
notification 22%, JobSet controller 16%, kubelet 14%; the scheduler's cycles 12%, its informer 10%).
"""

from __future__ import annotations

import argparse
import compileall
import hashlib
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
SCHEDULING = "scheduling.k8s.io/v1beta1"
JOBSET = "jobset.x-k8s.io/v1alpha2"
RACK = "topology.example.com/rack"
BLOCK = "topology.example.com/block"
REPLICATED_JOBS = 10
GANG = 8
HOUR = 3600
WEEK = 7 * 86400


def _pod_template(group: str, duration: str, priority_class: str | None = None, gpus: int = 1) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [{"name": "worker", "image": "trainer:latest",
                        "resources": {"requests": {"cpu": str(4 * gpus), "memory": f"{16 * gpus}Gi"},
                                      "limits": {"nvidia.com/gpu": str(gpus)}}}],
    }
    if priority_class:
        spec["priorityClassName"] = priority_class
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {"metadata": {"annotations": {"jobsetctl.dev/duration": duration}}, "spec": spec}


def _pod_group(name: str, min_count: int, rack: bool, priority_class: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": min_count}}}
    if rack:
        spec["schedulingConstraints"] = {"topology": [{"key": RACK}]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {"apiVersion": SCHEDULING, "kind": "PodGroup", "metadata": {"name": name, "namespace": "bench"},
            "spec": spec}


def _jobset(name: str, duration: str, jobs: list[tuple[str, int, str, str | None]], gpus: int = 1) -> dict[str, Any]:
    """``jobs``: (replicated job name, pods, PodGroup name or "", priority class)."""
    replicated = []
    for rj, pods, group, priority_class in jobs:
        replicated.append({"name": rj, "replicas": 1, "template": {"spec": {
            "parallelism": pods, "completions": pods, "completionMode": "Indexed", "backoffLimit": 0,
            "template": _pod_template(group, duration, priority_class, gpus)}}})
    return {"apiVersion": JOBSET, "kind": "JobSet", "metadata": {"name": name, "namespace": "bench"},
            "spec": {"replicatedJobs": replicated}}


def _namespace() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}}


def _scenario(name: str, nodes: int, submit: list[dict[str, Any]]) -> dict[str, Any]:
    """The Scenario both workloads run in: one pool of ``nodes`` 8-GPU nodes in N/500 blocks x 10 racks."""
    return {
        "apiVersion": "jobsetctl.dev/v1alpha1", "kind": "Scenario", "metadata": {"name": name},
        "spec": {
            "kubernetesVersion": "1.37",
            "nodes": [{"name": "gpu", "count": nodes,
                       "capacity": {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8"},
                       "topology": [{"key": BLOCK, "count": max(1, nodes // 500)}, {"key": RACK, "count": 10}]}],
            "submit": submit,
        },
    }


def contended_day(nodes: int, rack: bool) -> dict[str, Any]:
    jobsets = math.ceil(nodes / 8)
    submit: list[dict[str, Any]] = [{"at": "0s", "objects": [_namespace()]}]
    for index in range(jobsets):
        name = f"day-{index:05d}"
        groups = [f"{name}-rj{j}" for j in range(REPLICATED_JOBS)]
        objects = [_pod_group(group, GANG, rack) for group in groups]
        objects.append(_jobset(name, "1h", [(f"rj{j}", GANG, groups[j], None) for j in range(REPLICATED_JOBS)]))
        submit.append({"at": f"{index * HOUR // jobsets}s", "objects": objects})
    return _scenario(f"contended-{'rack' if rack else 'plain'}-{nodes}", nodes, submit)


SIZES = (1, 2, 4, 8, 16, 32, 64)
SIZE_WEIGHTS = (30, 15, 15, 20, 10, 6, 4)


def week(nodes: int = 2000, jobsets: int = 10_000, seed: int = 12, gpus: int = 8) -> dict[str, Any]:
    rng = random.Random(seed)
    classes = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                "value": value} for name, value in (("bench-low", 100), ("bench-high", 1000))]
    submit: list[dict[str, Any]] = [{"at": "0s", "objects": [_namespace(), *classes]}]
    mean_gap = WEEK / jobsets
    at = 0.0
    for index in range(jobsets):
        at += rng.expovariate(1 / mean_gap)
        size = rng.choices(SIZES, SIZE_WEIGHTS)[0]
        minutes = min(max(round(rng.lognormvariate(math.log(120), 1.0)), 5), 2 * 24 * 60)
        priority_class = "bench-high" if rng.random() < 0.25 else "bench-low"
        name = f"week-{index:05d}"
        objects: list[dict[str, Any]] = []
        group = ""
        if size > 1:
            group = f"{name}-w"
            objects.append(_pod_group(group, size, False, priority_class))
        objects.append(_jobset(name, f"{minutes}m", [("w", size, group, priority_class)], gpus))
        submit.append({"at": f"{int(at)}s", "objects": objects})
    return _scenario(f"week-{nodes}", nodes, submit)


def write(scenario: dict[str, Any], path: str) -> int:
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    with open(path, "w", encoding="utf-8") as handle:
        yaml.dump(scenario, handle, Dumper=dumper, sort_keys=False, width=200)
    return os.path.getsize(path)


def run(path: str, output: str, profile: str | None = None, timeout: float | None = None) -> dict[str, Any]:
    """One ``simulate -o json`` in a fresh process; CPU and peak RSS from its rusage."""
    command = [sys.executable]
    if profile:
        # Not ``-m cProfile``: the CLI leaves with os._exit (no heap teardown), before cProfile could write.
        command += ["-c", "import cProfile, sys; from jobsetctl.cli.app import run; "
                          "from jobsetctl.gctune import tune_for_batch; tune_for_batch(); "
                          f"cProfile.run('run(sys.argv[1:])', {profile!r})"]
    else:
        command += ["-m", "jobsetctl"]
    command += ["simulate", path, "-o", "json", "--max-objects", "1000000"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    started = time.perf_counter()
    with open(output, "w", encoding="utf-8") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.PIPE, env=env, cwd=str(ROOT))
        deadline = None if timeout is None else started + timeout
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if deadline is not None and time.perf_counter() > deadline:
                process.kill()
                pid, status, usage = os.wait4(process.pid, 0)
                return {"timeout": True, "wall": time.perf_counter() - started,
                        "cpu": usage.ru_utime + usage.ru_stime, "peak_mib": usage.ru_maxrss / 1024}
            time.sleep(0.05)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    stderr = process.stderr.read().decode() if process.stderr else ""
    figures: dict[str, Any] = {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
                               "peak_mib": usage.ru_maxrss / 1024, "exit": process.returncode,
                               "json_mb": os.path.getsize(output) / 1e6}
    if process.returncode not in (0, 1):
        figures["error"] = stderr[-2000:]
        return figures
    with open(output, "rb") as raw:
        # Speed work keeps the JSON byte-identical: the digest is the guard to compare across commits.
        figures["sha256"] = hashlib.sha256(raw.read()).hexdigest()[:16]
    with open(output, encoding="utf-8") as handle:
        document = json.load(handle)
    if "events" not in document:  # refused before the run: the diagnostics report
        figures["error"] = json.dumps(document.get("diagnostics"))[:2000]
        return figures
    events = document["events"]
    figures["events"] = len(events)
    figures["bound"] = sum(1 for e in events if e.get("kind") == "Pod" and e.get("event") == "Scheduled")
    figures["end"] = document.get("endTime")
    figures["stop"] = (document.get("summary") or {}).get("stopReason")
    figures["unschedulable"] = sum(1 for e in events if e.get("kind") == "Pod" and e.get("event") == "Unschedulable")
    return figures


def _line(label: str, nodes: int, pods: int, f: dict[str, Any], previous: dict[str, Any] | None, mb: float) -> str:
    if f.get("timeout"):
        return f"{label:<6} {nodes:>6} {pods:>7}  timed out after {f['wall']:.0f}s wall ({f['cpu']:.0f}s CPU)"
    if "error" in f:
        return f"{label:<6} {nodes:>6} {pods:>7}  failed (exit {f['exit']}): {f['error'].strip().splitlines()[-1]}"
    ratio = f"{f['cpu'] / previous['cpu']:>5.2f}x" if previous and not previous.get("timeout") and "error" not in previous else "     -"
    end = f.get("end") or 0
    return (f"{label:<6} {nodes:>6} {pods:>7} {mb:>6.1f} {f['cpu']:>8.1f} {f['wall']:>8.1f} "
            f"{pods / f['cpu']:>8.0f} {pods / f['wall']:>8.0f} {f['peak_mib']:>8.0f} {ratio:>7} "
            f"{f['bound']:>7} {f['events']:>8} {f['unschedulable']:>7} {end / 3600:>6.2f}h {f['json_mb']:>7.1f} "
            f"{f['sha256']}")


HEADER = (f"{'case':<6} {'nodes':>6} {'pods':>7} {'in MB':>6} {'CPU s':>8} {'wall s':>8} {'pod/CPUs':>8} "
          f"{'pod/wall':>8} {'peak MiB':>8} {'CPU x':>7} {'bound':>7} {'events':>8} {'unsch.':>7} {'end':>7} "
          f"{'JSON MB':>7} {'json sha256':<16}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="500,1000,2500,5000,10000", help="node counts, comma-separated")
    parser.add_argument("--variants", default="plain,rack")
    parser.add_argument("--week", action="store_true", help="the week of arrivals instead of the day")
    parser.add_argument("--week-gpus", type=int, default=8, help="GPUs per pod of the week (8: a node each)")
    parser.add_argument("--profile", action="store_true", help="cProfile the first size of the first variant")
    parser.add_argument("--timeout", type=float, default=None, help="wall seconds before a run is abandoned")
    parser.add_argument("--write", type=int, default=None, help="write the Scenario of this size and stop")
    parser.add_argument("--keep", default=None, help="directory for the Scenarios and JSON outputs")
    args = parser.parse_args(argv)
    # An installed package carries its bytecode (pip compiles it); a checkout run with PYTHONDONTWRITEBYTECODE
    # set would compile every module again in every measured process (about 0.3 s each). Compile once here.
    compileall.compile_dir(str(ROOT / "jobsetctl"), quiet=1)
    directory = args.keep or tempfile.mkdtemp(prefix="bench-contended-")
    os.makedirs(directory, exist_ok=True)
    variants = [v for v in args.variants.split(",") if v]
    if args.write is not None:
        for variant in variants:
            path = os.path.join(directory, f"contended-{variant}-{args.write}.yaml")
            size = write(contended_day(args.write, variant == "rack"), path)
            print(f"{path} ({size / 1e6:.1f} MB)")
        return 0
    cases: list[tuple[str, int, dict[str, Any], int]] = []
    if args.week:
        scenario = week(gpus=args.week_gpus)
        pods = sum(int(o["spec"]["replicatedJobs"][0]["template"]["spec"]["parallelism"])
                   for s in scenario["spec"]["submit"] for o in s["objects"] if o["kind"] == "JobSet")
        cases.append(("week", 2000, scenario, pods))
    else:
        for variant in variants:
            for nodes in (int(s) for s in args.sizes.split(",")):
                cases.append((variant, nodes, contended_day(nodes, variant == "rack"), math.ceil(nodes / 8) * 80))
    print(HEADER)
    previous: dict[str, Any] | None = None
    last_variant = ""
    for label, nodes, scenario, pods in cases:
        path = os.path.join(directory, f"{label}-{nodes}.yaml")
        mb = write(scenario, path) / 1e6
        output = os.path.join(directory, f"{label}-{nodes}.json")
        profile = os.path.join(directory, f"{label}-{nodes}.prof") if args.profile else None
        figures = run(path, output, profile, args.timeout)
        if label != last_variant:
            previous, last_variant = None, label
        print(_line(label, nodes, pods, figures, previous, mb), flush=True)
        previous = figures
        if profile:
            import pstats

            stats = pstats.Stats(profile)
            stats.sort_stats("tottime").print_stats(35)
            stats.sort_stats("cumulative").print_stats(60)
            return 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
