"""Benchmark ``jobsetctl validate`` (issue #2 speed targets). A plain script: prints figures, asserts nothing.

    python bench/bench_validate.py [--files 1000] [--keep DIR]

Targets: ``jobsetctl --version`` under 0.3 s; a 1,000-file corpus of realistic JobSets (about 5 KiB each) at
≥ 1,000 documents/s on 2 cores; no slower than check-jsonschema on the same files with the JobSet CRD
schema (measured side by side when ``check-jsonschema`` is installed and ../shared/upstream is present).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
CRD = REPO.parent / "shared" / "upstream" / "jobset" / "crd" / "jobset.x-k8s.io_jobsets.yaml"


def realistic_jobset(rng: random.Random, index: int) -> dict[str, object]:
    """A JobSet shaped like production training manifests: driver + workers, env, resources, probes."""
    workers = rng.choice([2, 4, 8, 16])
    gpus = rng.choice([1, 4, 8])

    def container(name: str, gpu: int) -> dict[str, object]:
        return {
            "name": name,
            "image": f"ghcr.io/example/trainer:{rng.randint(1, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
            "command": ["torchrun", f"--nnodes={workers}", f"--nproc-per-node={gpu}", "train.py"],
            "args": ["--config", "/etc/config/train.yaml", "--steps", str(rng.randint(1000, 100000))],
            "ports": [{"containerPort": 29500, "name": "rdzv"}],
            "env": [
                {"name": "NCCL_DEBUG", "value": "INFO"},
                {"name": "NCCL_SOCKET_IFNAME", "value": "eth0"},
                {"name": "PYTHONUNBUFFERED", "value": "1"},
                {"name": "RUN_ID", "value": f"run-{index}"},
                {"name": "NODE_RANK", "valueFrom": {"fieldRef": {
                    "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}},
            ],
            "resources": {
                "requests": {"cpu": "48", "memory": "400Gi", "nvidia.com/gpu": str(gpu)},
                "limits": {"cpu": "48", "memory": "400Gi", "nvidia.com/gpu": str(gpu)},
            },
            "readinessProbe": {"tcpSocket": {"port": 29500}, "initialDelaySeconds": 10, "periodSeconds": 5},
            "volumeMounts": [
                {"name": "config", "mountPath": "/etc/config"},
                {"name": "dshm", "mountPath": "/dev/shm"},
                {"name": "data", "mountPath": "/data"},
            ],
        }

    def pod_spec(name: str, gpu: int) -> dict[str, object]:
        return {
            "restartPolicy": "Never",
            "priorityClassName": "high",
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"},
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In",
                                       "values": ["us-central1-a"]}]}]}}},
            "initContainers": [{"name": "warmup", "image": "busybox:1.36", "command": ["sh", "-c", "echo warm"]}],
            "containers": [container(name, gpu)],
            "volumes": [
                {"name": "config", "configMap": {"name": "train-config"}},
                {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}},
                {"name": "data", "persistentVolumeClaim": {"claimName": "dataset"}},
            ],
        }

    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": f"pretrain-{index}", "namespace": f"team-{index % 7}",
                     "labels": {"app": "llm", "kueue.x-k8s.io/queue-name": "gpu"}},
        "spec": {
            "failurePolicy": {"maxRestarts": 3, "rules": [
                {"name": "failOnConfig", "action": "FailJobSet", "onJobFailureReasons": ["PodFailurePolicy"]}]},
            "successPolicy": {"operator": "All", "targetReplicatedJobs": ["workers"]},
            "replicatedJobs": [
                {"name": "driver", "replicas": 1, "template": {"spec": {
                    "parallelism": 1, "completions": 1, "backoffLimit": 0,
                    "template": {"metadata": {"labels": {"role": "driver"}}, "spec": pod_spec("driver", 0)}}}},
                {"name": "workers", "replicas": workers, "template": {"spec": {
                    "parallelism": 2, "completions": 2, "backoffLimit": 4,
                    "podFailurePolicy": {"rules": [
                        {"action": "FailJob", "onExitCodes": {"containerName": "trainer", "operator": "In",
                                                              "values": [42]}},
                        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
                    "template": {"metadata": {"labels": {"role": "worker"}}, "spec": pod_spec("trainer", gpus)}}}},
            ],
        },
    }


def write_corpus(directory: Path, count: int) -> int:
    """``count`` JobSet files plus the PriorityClass they use, so that the corpus is valid."""
    rng = random.Random(1234)
    (directory / "priorityclass.yaml").write_text(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"
    )
    total = 0
    for i in range(count):
        text = yaml.safe_dump(realistic_jobset(rng, i), sort_keys=False)
        (directory / f"jobset-{i:04d}.yaml").write_text(text)
        total += len(text)
    return total


def best_of(runs: int, argv: list[str], env: dict[str, str] | None = None) -> tuple[float, int]:
    best = float("inf")
    code = 0
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(argv, capture_output=True, text=True, env=env)
        best = min(best, time.perf_counter() - start)
        code = proc.returncode
    return best, code


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args()
    bin_dir = Path(sys.executable).parent
    jobsetctl = str(bin_dir / "jobsetctl")

    version_time, _ = best_of(10, [jobsetctl, "--version"])
    print(f"jobsetctl --version: {version_time * 1000:.0f} ms (target < 300 ms)")

    tmp = Path(tempfile.mkdtemp(prefix="jobsetctl-bench-"))
    corpus = args.keep or tmp / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    size = write_corpus(corpus, args.files)
    print(f"corpus: {args.files} files, {size / args.files / 1024:.1f} KiB per file on average")

    start = time.perf_counter()
    for path in sorted(corpus.iterdir()):
        yaml.load(path.read_text(), Loader=yaml.CSafeLoader)
    parse = time.perf_counter() - start
    print(f"PyYAML CSafeLoader parse only, 1 core: {args.files / parse:,.0f} docs/s")

    for jobs, label in ((1, "1 core"), (0, f"{len(os.sched_getaffinity(0))} cores")):
        env = {**os.environ, "JOBSETCTL_JOBS": str(jobs)}
        elapsed, code = best_of(args.runs, [jobsetctl, "validate", "-o", "json", str(corpus)], env)
        print(f"jobsetctl validate ({label}): {elapsed:.2f} s, {args.files / elapsed:,.0f} docs/s (exit {code})")

    checker = shutil.which("check-jsonschema") or str(bin_dir / "check-jsonschema")
    if CRD.is_file() and os.path.exists(checker):
        crd = yaml.safe_load(CRD.read_text())
        schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        schema_path = tmp / "jobset-schema.json"
        schema_path.write_text(json.dumps(schema))
        files = [str(p) for p in sorted(corpus.iterdir())]
        elapsed, code = best_of(args.runs, [checker, "--schemafile", str(schema_path), *files])
        print(f"check-jsonschema (JobSet CRD schema only): {elapsed:.2f} s, {args.files / elapsed:,.0f} docs/s (exit {code})")
    else:
        print("check-jsonschema comparison skipped (pip install check-jsonschema; needs ../shared/upstream)")
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
