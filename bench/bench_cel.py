"""Benchmark the CEL layer: evaluations per second, our compiled closures vs cel-python's interpreter.

    python bench/bench_cel.py [--seconds 1.0]

A plain script: prints figures, asserts nothing. The rule measured is the JobSet ``spec`` rule, read
from the upstream CRD when ../shared/upstream is present (else the text below, which is the same):
it runs on every JobSet ``validate`` sees. Also measured: a whole ``validate_cel`` walk of a realistic
JobSet spec through the JobSet CRD schema (when the CRD is present), on create and on update.
"""

from __future__ import annotations

import argparse
import copy
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
CRD = REPO.parent / "shared" / "upstream" / "jobset" / "crd" / "jobset.x-k8s.io_jobsets.yaml"
SPEC_RULE = (
    "!(has(self.startupPolicy) && self.startupPolicy.startupPolicyOrder == 'InOrder' && "
    "self.replicatedJobs.exists(x, has(x.dependsOn)))"
)


def spec_rule() -> str:
    if not CRD.is_file():
        return SPEC_RULE
    document = yaml.safe_load(CRD.read_text())
    schema = document["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    rules = schema["properties"]["spec"].get("x-kubernetes-validations", [])
    return str(rules[0]["rule"]) if rules else SPEC_RULE


def jobset_spec(order: str, depends: bool) -> dict[str, Any]:
    def replicated(name: str, after: str | None) -> dict[str, Any]:
        job: dict[str, Any] = {"name": name, "replicas": 4, "template": {"spec": {"template": {"spec": {
            "containers": [{"name": "main", "image": "ghcr.io/example/train:1.0",
                            "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}}}}}
        if after is not None and depends:
            job["dependsOn"] = [{"name": after, "status": "Ready"}]
        return job

    return {
        "startupPolicy": {"startupPolicyOrder": order},
        "replicatedJobs": [replicated("driver", None), replicated("workers", "driver"), replicated("eval", "workers")],
        "successPolicy": {"operator": "All"},
        "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True},
    }


def rate(call: Callable[[], object], seconds: float) -> float:
    """Calls per second, measured over about ``seconds``."""
    count = 0
    batch = 1
    start = time.perf_counter()
    while True:
        for _ in range(batch):
            call()
        count += batch
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return count / elapsed
        batch = min(batch * 2, 10_000)


def bench_rule(seconds: float) -> None:
    import celpy

    from jobsetctl.admission.cel_compile import compile_expression

    rule = spec_rule()
    ours = compile_expression(rule, None)
    environment = celpy.Environment()
    theirs = environment.program(environment.compile(rule))
    print(f"rule: {rule}")
    for label, spec in (
        ("AnyOrder (short-circuits)", jobset_spec("AnyOrder", depends=True)),
        ("InOrder, no dependsOn (full exists)", jobset_spec("InOrder", depends=False)),
        ("InOrder + dependsOn (the rule fails)", jobset_spec("InOrder", depends=True)),
    ):
        ours_rate = rate(lambda spec=spec: ours.evaluate(spec), seconds)
        theirs_rate = rate(lambda spec=spec: theirs.evaluate({"self": celpy.json_to_cel(spec)}), seconds)
        print(f"  {label:38} ours {ours_rate:>11,.0f}/s ({1e6 / ours_rate:7.2f} µs)   "
              f"cel-python {theirs_rate:>8,.0f}/s ({1e6 / theirs_rate:8.1f} µs)   x{ours_rate / theirs_rate:,.0f}")


def bench_walk(seconds: float) -> None:
    if not CRD.is_file():
        print("validate_cel walk: skipped (../shared/upstream absent)")
        return
    from jobsetctl.admission.cel import validate_cel
    from jobsetctl.admission.schema import compile_openapi
    from jobsetctl.kube.versions import DEFAULT_KUBE_VERSION

    document = yaml.safe_load(CRD.read_text())
    schema = compile_openapi(document["spec"]["versions"][0]["schema"]["openAPIV3Schema"], "jobsets",
                             DEFAULT_KUBE_VERSION)
    obj = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "train"},
           "spec": jobset_spec("AnyOrder", depends=True)}
    changed = copy.deepcopy(obj)
    changed["spec"]["replicatedJobs"][1]["replicas"] = 8
    create = rate(lambda: validate_cel(schema, obj), seconds)
    update = rate(lambda: validate_cel(schema, changed, obj), seconds)
    print(f"validate_cel, whole JobSet: create {create:,.0f}/s ({1e6 / create:.1f} µs), "
          f"update {update:,.0f}/s ({1e6 / update:.1f} µs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="time per measurement")
    args = parser.parse_args()
    bench_rule(args.seconds)
    bench_walk(args.seconds)


if __name__ == "__main__":
    main()
