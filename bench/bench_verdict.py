"""Cost of the verdicts on workloads that never started (``jobsetctl.simulate.verdict``).

Each never-started workload is tried alone on a fresh simulated cluster made of the nodes left at the
end of the run; this measures that cost next to the run itself. The Scenario: N 8-GPU nodes in racks of
2 (16 GPUs a rack), and K JobSets whose 4-pod, 32-GPU gangs must fit in one rack: none ever does.

    python bench/bench_verdict.py                      # 500, 2,000 and 5,000 nodes, 5 and 20 gangs
    python bench/bench_verdict.py --sizes 5000:20

CPU seconds (``time.process_time``): on a shared machine the stable figure.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import yaml

from jobsetctl.simulate.inputs import load_inputs
from jobsetctl.simulate.runner import SimulateOptions, plan, run_plan
from jobsetctl.simulate.summary import summarize
from jobsetctl.simulate.timeline import annotate_groups, build_timeline
from jobsetctl.simulate.verdict import judge_never_started


def scenario(nodes: int, gangs: int) -> dict[str, object]:
    objects: list[dict[str, object]] = []
    for index in range(gangs):
        objects.append({
            "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": f"gang-{index}"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 4}},
                     "schedulingConstraints": {"topology": [{"key": "topology.example.com/rack"}]}},
        })
        objects.append({
            "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": f"train-{index}"},
            "spec": {"parallelism": 4, "completions": 4, "completionMode": "Indexed", "template": {
                "metadata": {"annotations": {"jobsetctl.dev/duration": "1h"}},
                "spec": {"restartPolicy": "Never", "schedulingGroup": {"podGroupName": f"gang-{index}"},
                         "containers": [{"name": "c", "image": "x",
                                         "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}}},
        })
    return {
        "apiVersion": "jobsetctl.dev/v1alpha1", "kind": "Scenario", "metadata": {"name": "verdicts"},
        "spec": {
            "kubernetesVersion": "1.37",
            "nodes": [{"name": "gpu", "count": nodes, "capacity": {"cpu": "64", "memory": "512Gi",
                                                                 "nvidia.com/gpu": "8"},
                       "topology": [{"key": "topology.example.com/rack", "count": nodes // 2}]}],
            "submit": [{"at": "0s", "objects": objects}],
        },
    }


def measure(nodes: int, gangs: int) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "s.yaml"
        path.write_text(yaml.safe_dump(scenario(nodes, gangs)))
        inputs = load_inputs([str(path)], None)
        start = time.process_time()
        result = run_plan(plan(inputs, SimulateOptions([str(path)])), 0)
        timeline = build_timeline(result.events, result.ledger, result.end_time)
        annotate_groups(timeline, result.ledger, result.group_records)
        summary = summarize(result.events, result.ledger, timeline)
        run_seconds = time.process_time() - start
        start = time.process_time()
        verdicts = judge_never_started(result.cluster, summary, timeline)
        return run_seconds, time.process_time() - start, len(verdicts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="500:5,2000:5,5000:5,5000:20", help="nodes:gangs,...")
    args = parser.parse_args()
    print(f"{'nodes':>6} {'gangs':>6} {'run CPU s':>10} {'verdicts CPU s':>15} {'per verdict':>12}")
    for item in args.sizes.split(","):
        nodes, gangs = (int(part) for part in item.split(":"))
        run_seconds, verdict_seconds, count = measure(nodes, gangs)
        print(f"{nodes:>6} {gangs:>6} {run_seconds:>10.2f} {verdict_seconds:>15.2f} "
              f"{verdict_seconds / max(count, 1):>12.3f}")


if __name__ == "__main__":
    main()
