"""Benchmark the fake scheduler (issue #5): 5,000 nodes / 50,000 pods in 8-pod gangs with a rack topology
constraint, and the same doubled, on one core.

    python bench/bench_scheduler.py [--nodes 5000] [--pods 50000] [--version 1.36] [--no-double]
                                    [--profile]

A plain script: prints figures, asserts nothing. Objects go through the real API server (admission
included); the cluster has only the scheduler (no kubelet, no controllers), so the figures are the
scheduler's. Reported:

* ``create``: wall seconds to create the PodGroups and pods (the scheduler's informer work included);
* ``schedule``: wall seconds of ``run()`` (every scheduling cycle) and pods bound per second of it;
* ``end-to-end``: pods bound per second of create + schedule;
* peak RSS of the process (``resource.getrusage``; includes the interpreter and the API server's objects);
* the doubled run's schedule time divided by the base run's (target ≤ 2.3); each size runs in a fresh
  interpreter. Wall seconds are reported with process CPU seconds beside them: on a shared machine the
  CPU time is the stable measure of "one core".

Acceptance targets (issue #5): ≥ 2,000 pods/s at 5k nodes / 50k pods, peak memory < 2 GiB, 2× ≤ 2.3×.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import pstats
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jobsetctl.fakecluster.apiserver import APIServer
from jobsetctl.fakecluster.clock import VirtualClock
from jobsetctl.fakecluster.cluster import ClusterOptions
from jobsetctl.fakecluster.events import Recorder
from jobsetctl.fakecluster.manager import Manager
from jobsetctl.fakecluster.podadmission import admit_pod
from jobsetctl.fakecluster.scheduler import Scheduler
from jobsetctl.gctune import tune_for_batch
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import KubeVersion

GANG = 8
NODES_PER_RACK = 16
GATES = "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true"
API_VERSION = {"1.36": "scheduling.k8s.io/v1alpha2", "1.37": "scheduling.k8s.io/v1beta1"}


def build(version: str) -> tuple[APIServer, Manager, Scheduler]:
    kube = KubeVersion.parse(version)
    options = ClusterOptions(kube, parse_feature_gates(GATES, kube), simulate=True)
    clock = VirtualClock()
    api = APIServer(clock, kube, options.gates, pod_admission=admit_pod)
    recorder = Recorder(clock)
    manager = Manager(api, clock, recorder)
    scheduler = Scheduler(options)
    manager.add(scheduler)
    return api, manager, scheduler


def node(name: str, rack: int) -> dict[str, Any]:
    allocatable = {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "16", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "rack": f"rack-{rack}"}},
            "status": {"allocatable": allocatable, "capacity": dict(allocatable),
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name: str, group: str) -> dict[str, Any]:
    resources = {"requests": {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "1"},
                 "limits": {"nvidia.com/gpu": "1"}}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"jobset.sigs.k8s.io/jobset-name": group}},
            "spec": {"schedulingGroup": {"podGroupName": group}, "terminationGracePeriodSeconds": 0,
                     "containers": [{"name": "worker", "image": "busybox", "resources": resources}]}}


def run(nodes: int, pods: int, version: str, profile: bool = False) -> dict[str, float]:
    api, manager, _scheduler = build(version)
    for i in range(nodes):
        api.create(node(f"node-{i:05d}", i // NODES_PER_RACK))
    gc.collect()
    start, cpu_start = time.perf_counter(), time.process_time()
    for g in range(pods // GANG):
        group = f"js-{g:05d}"
        api.create({"apiVersion": API_VERSION[version], "kind": "PodGroup", "metadata": {"name": group},
                    "spec": {"schedulingPolicy": {"gang": {"minCount": GANG}},
                             "schedulingConstraints": {"topology": [{"key": "rack"}]}}})
        for i in range(GANG):
            api.create(pod(f"{group}-{i}", group))
    created, cpu_created = time.perf_counter(), time.process_time()
    profiler = cProfile.Profile() if profile else None
    if profiler:
        profiler.enable()
    manager.run(1.0)
    if profiler:
        profiler.disable()
        stats = pstats.Stats(profiler)
        stats.sort_stats("cumulative").print_stats(25)
        stats.sort_stats("tottime").print_stats(25)
    done, cpu_done = time.perf_counter(), time.process_time()
    bound = sum(1 for p in api.iter_kind("", "Pod") if (p.get("spec") or {}).get("nodeName"))
    return {"nodes": nodes, "pods": pods, "bound": bound, "create": created - start, "schedule": done - created,
            "pods_per_s": bound / (done - created), "end_to_end": bound / (done - start),
            "create_cpu": cpu_created - cpu_start, "schedule_cpu": cpu_done - cpu_created,
            "pods_per_cpu_s": bound / (cpu_done - cpu_created),
            "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def report(label: str, figures: dict[str, float]) -> None:
    print(f"{label}: {figures['nodes']:.0f} nodes, {figures['pods']:.0f} pods, {figures['bound']:.0f} bound | "
          f"create {figures['create']:.2f}s | schedule {figures['schedule']:.2f}s = "
          f"{figures['pods_per_s']:.0f} pods/s (CPU {figures['schedule_cpu']:.2f}s = "
          f"{figures['pods_per_cpu_s']:.0f} pods/s) | end-to-end {figures['end_to_end']:.0f} pods/s | "
          f"peak RSS {figures['peak_mib']:.0f} MiB")


def in_subprocess(nodes: int, pods: int, version: str) -> dict[str, float]:
    """One measurement in a fresh interpreter, so that sizes do not share heap state or GC history."""
    output = subprocess.run(
        [sys.executable, __file__, "--nodes", str(nodes), "--pods", str(pods), "--version", version, "--json"],
        check=True, capture_output=True, text=True,
    ).stdout
    figures: dict[str, float] = json.loads(output.strip().splitlines()[-1])
    return figures


def main() -> None:
    tune_for_batch()  # as the jobsetctl command does at start-up (jobsetctl/cli/__init__.py)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=50_000)
    parser.add_argument("--version", default="1.36", choices=sorted(API_VERSION))
    parser.add_argument("--no-double", action="store_true")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--json", action="store_true", help="one run in this process, figures as JSON")
    args = parser.parse_args()
    if args.json or args.profile:
        figures = run(args.nodes, args.pods, args.version, args.profile)
        print(json.dumps(figures) if args.json else "")
        if not args.json:
            report("base   ", figures)
        return
    base = in_subprocess(args.nodes, args.pods, args.version)
    report("base   ", base)
    if not args.no_double:
        double = in_subprocess(args.nodes * 2, args.pods * 2, args.version)
        report("doubled", double)
        print(f"scaling for 2x nodes and pods: schedule wall x{double['schedule'] / base['schedule']:.2f}, "
              f"CPU x{double['schedule_cpu'] / base['schedule_cpu']:.2f}; create+schedule CPU "
              f"x{(double['create_cpu'] + double['schedule_cpu']) / (base['create_cpu'] + base['schedule_cpu']):.2f}")


if __name__ == "__main__":
    main()
