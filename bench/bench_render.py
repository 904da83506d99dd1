"""Speed of ``jobsetctl render --pods`` against PyYAML's C dumper serialising the same output alone.

Target: a JobSet with 1,000 replicated-job replicas of 8 pods each (1,000 Jobs, 8,000 pods) renders in
at most twice the time ``yaml.dump_all(..., Dumper=yaml.CSafeDumper)`` needs to write the same objects.
Both are measured in one run, as CPU time of this process (best of ``--repeat``), and the render time is broken down into its
phases so that a slow phase is visible:

* validate: ``jobsetctl validate`` on the input (render runs it first);
* cluster: submitting, the controllers' fixed point and the snapshots (everything in ``render()``
  but validate);
* emit: our tuned YAML emission of the result.

    python bench/bench_render.py                    # 1,000 x 8
    python bench/bench_render.py --replicas 200 --repeat 5
    python bench/bench_render.py --profile          # cProfile of one render, top functions
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from jobsetctl.gang import GangOptions
from jobsetctl.gctune import tune_for_batch
from jobsetctl.kube.featuregates import FeatureGates
from jobsetctl.kube.versions import DEFAULT_KUBE_VERSION
from jobsetctl.render.capture import printable
from jobsetctl.render.emit import NO_FOLDING, dump_yaml
from jobsetctl.render.pipeline import RenderOptions, render
from jobsetctl.validate import ValidateOptions, check

TARGET_RATIO = 2.0


def jobset(replicas: int, pods: int) -> dict[str, Any]:
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "bench", "namespace": "bench"},
        "spec": {"replicatedJobs": [{
            "name": "workers",
            "replicas": replicas,
            "template": {"spec": {
                "parallelism": pods, "completions": pods, "backoffLimit": 0,
                "template": {"spec": {"containers": [{
                    "name": "trainer", "image": "trainer:latest", "command": ["python", "train.py"],
                    "resources": {"requests": {"cpu": "8", "memory": "64Gi"}, "limits": {"nvidia.com/gpu": "8"}},
                }]}},
            }},
        }]},
    }


def best(function: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The least CPU time of ``repeat`` calls (process time: other processes on a busy machine do not
    count), and the last result."""
    times: list[float] = []
    result: Any = None
    for _ in range(repeat):
        start = time.process_time()
        result = function()
        times.append(time.process_time() - start)
    return min(times), result


def main(argv: list[str]) -> int:
    tune_for_batch()  # as the jobsetctl command does at start-up (jobsetctl/cli/__init__.py)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replicas", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "bench.yaml"
        path.write_text(yaml.safe_dump(jobset(args.replicas, args.pods), sort_keys=False), encoding="utf-8")
        vopts = ValidateOptions(paths=[str(path)], version=DEFAULT_KUBE_VERSION,
                                gates=FeatureGates(DEFAULT_KUBE_VERSION), jobs=1)
        options = RenderOptions(validate=vopts, pods=True, gang=GangOptions())

        def whole() -> str:
            rendered = render(options).rendered
            assert rendered is not None
            return dump_yaml([printable(e, stages=False) for e in rendered.printed()])

        if args.profile:
            profiler = cProfile.Profile()
            profiler.enable()
            whole()
            profiler.disable()
            pstats.Stats(profiler, stream=sys.stdout).sort_stats("cumulative").print_stats(40)
            return 0

        total, text = best(whole, args.repeat)
        validate_time, _ = best(lambda: check(vopts), args.repeat)
        render_time, outcome = best(lambda: render(options), args.repeat)
        objects = [printable(e, stages=False) for e in outcome.rendered.printed()]
        emit_time, ours = best(lambda: dump_yaml(objects), args.repeat)
        stock_time, stock = best(lambda: yaml.dump_all(objects, Dumper=yaml.CSafeDumper, default_flow_style=False,
                                                       sort_keys=False, allow_unicode=True, width=NO_FOLDING),
                                 args.repeat)
    assert ours == stock == text, "the tuned dumper must write exactly what PyYAML's C dumper writes"
    pods = sum(1 for o in objects if o["kind"] == "Pod")
    ratio = total / stock_time
    out = io.StringIO()
    out.write(f"render --pods: {args.replicas} replicas x {args.pods} pods = {pods} pods, {len(objects)} objects, "
              f"{len(text) / 1e6:.1f} MB of YAML (best of {args.repeat})\n")
    out.write(f"  render, whole       {total:8.3f} s\n")
    out.write(f"    validate          {validate_time:8.3f} s\n")
    out.write(f"    cluster           {render_time - validate_time:8.3f} s  (submit, controllers, snapshots)\n")
    out.write(f"    emit (ours)       {emit_time:8.3f} s\n")
    out.write(f"  PyYAML CSafeDumper  {stock_time:8.3f} s  (same objects, alone)\n")
    out.write(f"  ratio               {ratio:8.2f}   (target <= {TARGET_RATIO:g})\n")
    sys.stdout.write(out.getvalue())
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
