"""CPU time of ``jobsetctl fix`` and ``jobsetctl migrate`` (issue #15). A plain script: prints figures, asserts
nothing.

    python bench/bench_fix.py                      # samples + ../shared/upstream, and 2,000 synthetic files
    python bench/bench_fix.py --files 500 --baseline
    python bench/bench_fix.py --profile kueue-v1beta2
    python bench/bench_fix.py --keep /tmp/synthetic  # keep the synthetic repository (to time another version)

Inputs:

* the repository's ``samples/`` plus ``../shared/upstream`` (skipped when absent): ~340 files, among them the
  upstream CRDs (the largest YAML files users keep in Git, up to 1 MB);
* a synthetic repository of ``--files`` files (default 2,000) with comments: JobSets, TrainJobs, ConfigMaps
  and a CRD copy, of which 5 % need a migration (Trainer v1 jobs, Kueue v1beta1 queues, 1.35 Workloads with
  the pods that name them, TrainJobs with ``podTemplateOverrides``).

Figures are CPU time of this process (``time.process_time()``, best of ``--repeat``), which the other engineers'
load on the shared cores disturbs far less than wall time; validate runs in-process (``jobs=1``) so that its
CPU time is counted. ``--baseline`` also measures migrate with every document parsed by ruamel (the path
before the C-loader pre-check in :func:`jobsetctl.migrate.objects`), for a before/after figure.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import random
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

import jobsetctl.migrate as migrate_package
from jobsetctl.fix.command import run_fix
from jobsetctl.fix.rewrite import FileEditor, Mode, report
from jobsetctl.migrate import TARGETS, run_migrate
from jobsetctl.validate import ValidateOptions

REPO = Path(__file__).resolve().parents[1]
UPSTREAM = REPO.parent / "shared" / "upstream"


def cpu(function: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        function()
        best = min(best, time.process_time() - start)
    return best


@contextmanager
def full_parse() -> Iterator[None]:
    """Every document with content parsed by ruamel, as before the C-loader pre-check."""
    saved = migrate_package._needed

    def everything(editor: FileEditor, candidate: object, hints: object) -> list[int]:
        return [i for i, segment in enumerate(editor.segments) if segment.has_content]

    migrate_package._needed = everything  # type: ignore[assignment]
    try:
        yield
    finally:
        migrate_package._needed = saved  # type: ignore[assignment]


# --- the synthetic repository ------------------------------------------------------------------------


def _commented(obj: dict[str, object], rng: random.Random, note: str) -> str:
    """YAML as people write it: a header comment, block style, a few end-of-line comments."""
    lines = yaml.safe_dump(obj, sort_keys=False, default_flow_style=False).splitlines()
    for _ in range(3):
        at = rng.randrange(len(lines))
        if ":" in lines[at] and not lines[at].rstrip().endswith(":"):
            lines[at] += "   # reviewed"
    return f"# {note}\n" + "\n".join(lines) + "\n"


def _container(rng: random.Random, name: str) -> dict[str, object]:
    return {
        "name": name,
        "image": f"ghcr.io/example/trainer:{rng.randint(1, 9)}.{rng.randint(0, 20)}",
        "command": ["python", "train.py"],
        "args": ["--steps", str(rng.randint(1000, 9000))],
        "env": [{"name": "NCCL_DEBUG", "value": "INFO"}, {"name": "RUN", "value": str(rng.randint(1, 99))}],
        "resources": {"requests": {"cpu": "8", "memory": "64Gi"}, "limits": {"nvidia.com/gpu": "8"}},
        "volumeMounts": [{"name": "data", "mountPath": "/data"}],
    }


def _pod(rng: random.Random, name: str) -> dict[str, object]:
    return {"spec": {"containers": [_container(rng, name)],
                     "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]}}


def jobset(rng: random.Random, i: int) -> dict[str, object]:
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": f"train-{i}"},
            "spec": {"replicatedJobs": [
                {"name": "driver", "template": {"spec": {"template": _pod(rng, "driver")}}},
                {"name": "workers", "replicas": rng.choice([2, 4, 8]),
                 "template": {"spec": {"parallelism": 2, "completions": 2, "template": _pod(rng, "worker")}}}]}}


def trainjob(rng: random.Random, i: int) -> dict[str, object]:
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": f"tj-{i}"},
            "spec": {"runtimeRef": {"name": "torch-distributed"},
                     "trainer": {"numNodes": 2, "image": "ghcr.io/example/t:1", "command": ["torchrun", "t.py"]}}}


def configmap(rng: random.Random, i: int) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cfg-{i}"},
            "data": {f"key{k}": "value " * rng.randint(1, 20) for k in range(20)}}


def pytorchjob(rng: random.Random, i: int) -> dict[str, object]:
    template = _pod(rng, "pytorch")
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": f"pt-{i}"},
            "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": template},
                                             "Worker": {"replicas": 3, "template": template}}}}


def kueue_queue(rng: random.Random, i: int) -> dict[str, object]:
    return {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue", "metadata": {"name": f"cq-{i}"},
            "spec": {"cohort": "all", "namespaceSelector": {},
                     "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                         {"name": "default", "resources": [{"name": "cpu", "nominalQuota": 10}]}]}]}}


def workload_with_pod(rng: random.Random, i: int) -> list[dict[str, object]]:
    workload = {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": {"name": f"wl-{i}"},
                "spec": {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": 2}}}]}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p-{i}"},
           "spec": {"workloadRef": {"name": f"wl-{i}", "podGroup": "workers"},
                    "containers": [{"name": "c", "image": "busybox"}]}}
    return [workload, pod]


def overrides(rng: random.Random, i: int) -> dict[str, object]:
    job = trainjob(rng, i)
    job["spec"]["podTemplateOverrides"] = [  # type: ignore[index]
        {"targetJobs": [{"name": "node"}], "spec": {"nodeSelector": {"pool": "gpu"}}}]
    return job


def synthetic(root: Path, files: int, seed: int = 15) -> None:
    rng = random.Random(seed)
    crd = UPSTREAM / "jobset" / "crd" / "jobset.x-k8s.io_jobsets.yaml"
    migrating = (pytorchjob, kueue_queue, workload_with_pod, overrides)
    for i in range(files):
        path = root / f"team-{i % 20}" / f"m{i}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        if i % 20 == 0:
            make = migrating[(i // 20) % len(migrating)]
            made = make(rng, i)
            docs = made if isinstance(made, list) else [made]
            path.write_text("---\n".join(_commented(d, rng, "needs a migration") for d in docs))
        elif i == 1 and crd.is_file():
            shutil.copyfile(crd, path)
        else:
            make_plain = (jobset, trainjob, configmap)[i % 3]
            docs = [make_plain(rng, i), configmap(rng, i)] if i % 7 == 0 else [make_plain(rng, i)]
            path.write_text("---\n".join(_commented(d, rng, "nothing to migrate") for d in docs))


# --- runs --------------------------------------------------------------------------------------------


def migrate_once(target: str, paths: list[str]) -> None:
    outcome = run_migrate(target, paths)
    report(outcome, Mode.DIFF, False, "migrated", io.StringIO(), io.StringIO())


def fix_once(paths: list[str]) -> None:
    outcome = run_fix(ValidateOptions(paths=paths, jobs=1))
    report(outcome, Mode.DIFF, False, "fixed", io.StringIO(), io.StringIO())


def measure(name: str, paths: list[str], repeat: int, baseline: bool) -> None:
    count = sum(1 for p in paths for f in Path(p).rglob("*") if f.suffix in (".yaml", ".yml", ".json"))
    print(f"\n{name}: {count} files")
    for target in dict.fromkeys(TARGETS):
        after = cpu(lambda t=target: migrate_once(t, paths), repeat)  # type: ignore[misc]
        line = f"  migrate --to {target:<16} {after:7.2f} s CPU"
        if baseline:
            with full_parse():
                before = cpu(lambda t=target: migrate_once(t, paths), repeat)  # type: ignore[misc]
            line += f"   (every document through ruamel: {before:6.2f} s, {before / after:4.1f}x)"
        print(line)
    print(f"  fix (validate, jobs=1)          {cpu(lambda: fix_once(paths), repeat):7.2f} s CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=2000, help="synthetic repository size")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--baseline", action="store_true", help="also time migrate with every document through ruamel")
    parser.add_argument("--profile", metavar="TARGET", help="cProfile one migrate over the synthetic repository")
    parser.add_argument("--keep", metavar="DIR", help="write the synthetic repository to DIR (kept) instead of a temporary one")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-fix-") as tmp:
        root = Path(args.keep) if args.keep else Path(tmp)
        if args.keep and root.exists():
            shutil.rmtree(root)
        synthetic(root, args.files)
        if args.profile:
            profile = cProfile.Profile()
            profile.enable()
            migrate_once(args.profile, [str(root)])
            profile.disable()
            pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
            return
        repo = [str(REPO / "samples")] + ([str(UPSTREAM)] if UPSTREAM.is_dir() else [])
        measure("samples" + (" + ../shared/upstream" if UPSTREAM.is_dir() else ""), repo, args.repeat, args.baseline)
        measure(f"synthetic repository ({args.files} files, 5 % to migrate)", [str(root)], args.repeat, args.baseline)


if __name__ == "__main__":
    main()
