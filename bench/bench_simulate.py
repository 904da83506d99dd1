"""Speed of ``jobsetctl simulate`` end to end: build the inputs, run a simulated day, write the JSON.

Target (issue #4): a day of simulated time for 500 nodes and 5,000 pods in under 10 seconds. The
workload is generated with a fixed seed: JobSets of 2 replicated jobs x 5 four-GPU pods (10 pods each),
arriving evenly over 20 hours, each running 1 to 4 hours, on 8-GPU nodes in racks of 16. The cluster is
sized so that it is busy but not hopelessly oversubscribed, so the scheduler both places and queues.

    python bench/bench_simulate.py                 # 250/2,500, 500/5,000, 1,000/10,000
    python bench/bench_simulate.py --sizes 500:5000 --repeat 3
    python bench/bench_simulate.py --sizes 500:5000 --profile   # cProfile of one run, top functions

Wall seconds are printed with the process's CPU seconds (``time.process_time``) beside them: on a
shared machine the CPU time is the stable figure. ``--repeat`` keeps the run with the least CPU time.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import random
import sys
import tempfile
import time
from pathlib import Path

import yaml

from jobsetctl.gctune import tune_for_batch
from jobsetctl.simulate.inputs import load_inputs
from jobsetctl.simulate.report import render_json
from jobsetctl.simulate.runner import SimulateOptions, plan, run_plan
from jobsetctl.simulate.summary import summarize
from jobsetctl.simulate.timeline import build_timeline

PODS_PER_JOBSET = 10
DAY = 86400


def jobset(index: int, duration_minutes: int) -> dict[str, object]:
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": f"train-{index}", "namespace": "bench"},
        "spec": {
            "replicatedJobs": [{
                "name": name,
                "replicas": 1,
                "template": {"spec": {
                    "parallelism": 5, "completions": 5, "completionMode": "Indexed", "backoffLimit": 0,
                    "template": {
                        "metadata": {"annotations": {"jobsetctl.dev/duration": f"{duration_minutes}m"}},
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [{
                                "name": "trainer", "image": "trainer:latest",
                                "resources": {"requests": {"cpu": "4", "memory": "32Gi"},
                                              "limits": {"nvidia.com/gpu": "4"}},
                            }],
                        },
                    },
                }},
            } for name in ("a", "b")],
        },
    }


def scenario(nodes: int, pods: int, seed: int = 7) -> dict[str, object]:
    rng = random.Random(seed)
    jobsets = pods // PODS_PER_JOBSET
    submit = []
    for index in range(jobsets):
        at = int(index * 20 * 3600 / max(jobsets, 1))
        submit.append({"at": f"{at}s", "objects": [jobset(index, rng.randint(60, 240))]})
    return {
        "apiVersion": "jobsetctl.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": f"bench-{nodes}-{pods}"},
        "spec": {
            "until": "24h",
            "nodes": [{
                "name": "gpu", "count": nodes,
                "capacity": {"cpu": "128", "memory": "1Ti", "nvidia.com/gpu": "8", "pods": "110"},
                "topology": [{"key": "topology.example.com/rack", "count": max(1, nodes // 16)}],
            }],
            "submit": submit,
        },
    }


def measure(nodes: int, pods: int, directory: str) -> dict[str, float]:
    path = os.path.join(directory, f"bench-{nodes}-{pods}.yaml")
    with open(path, "w", encoding="utf-8") as handle:
        yaml.safe_dump(scenario(nodes, pods), handle, sort_keys=False)
    started, cpu_started = time.perf_counter(), time.process_time()
    inputs = load_inputs([path], None)
    assert not inputs.errors, inputs.diagnostics[:3]
    loaded, cpu_loaded = time.perf_counter(), time.process_time()
    result = run_plan(plan(inputs, SimulateOptions([path])), seed=0)
    ran, cpu_ran = time.perf_counter(), time.process_time()
    timeline = build_timeline(result.events, result.ledger, result.end_time)
    summary = summarize(result.events, result.ledger, timeline)
    out = io.StringIO()
    out.write(render_json(result, summary))
    finished, cpu_finished = time.perf_counter(), time.process_time()
    return {
        "load": loaded - started, "run": ran - loaded, "report": finished - ran, "total": finished - started,
        "cpu_load": cpu_loaded - cpu_started, "cpu_run": cpu_ran - cpu_loaded, "cpu_report": cpu_finished - cpu_ran,
        "cpu_total": cpu_finished - cpu_started,
        "events": float(len(result.events)), "pods": float(summary.pods), "json_mb": len(out.getvalue()) / 1e6,
        "completed": float(sum(1 for w in summary.workloads if w.state == "Completed")),
    }


def main(argv: list[str]) -> int:
    tune_for_batch()  # as the jobsetctl command does at start-up (jobsetctl/cli/__init__.py)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="250:2500,500:5000,1000:10000", help="nodes:pods,...")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help="cProfile one run of the first size")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as directory:
        if args.profile:
            nodes, pods = (int(part) for part in args.sizes.split(",")[0].split(":"))
            profiler = cProfile.Profile()
            profiler.enable()
            measure(nodes, pods, directory)
            profiler.disable()
            stats = pstats.Stats(profiler, stream=sys.stdout)
            stats.sort_stats("tottime").print_stats(30)
            stats.sort_stats("cumulative").print_stats(40)
            return 0
        print(f"{'nodes':>6} {'pods':>6} {'load s':>7} {'run s':>7} {'report s':>8} {'total s':>8} "
              f"{'CPU load':>8} {'CPU run':>8} {'CPU rep':>8} {'CPU tot':>8} "
              f"{'events':>8} {'pods run':>8} {'done':>5} {'JSON MB':>7}")
        for size in args.sizes.split(","):
            nodes, pods = (int(part) for part in size.split(":"))
            best = min((measure(nodes, pods, directory) for _ in range(args.repeat)), key=lambda m: m["cpu_total"])
            print(f"{nodes:>6} {pods:>6} {best['load']:>7.2f} {best['run']:>7.2f} {best['report']:>8.2f} "
                  f"{best['total']:>8.2f} {best['cpu_load']:>8.2f} {best['cpu_run']:>8.2f} "
                  f"{best['cpu_report']:>8.2f} {best['cpu_total']:>8.2f} {int(best['events']):>8} "
                  f"{int(best['pods']):>8} {int(best['completed']):>5} {best['json_mb']:>7.1f}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    raise SystemExit(main(sys.argv[1:]))
