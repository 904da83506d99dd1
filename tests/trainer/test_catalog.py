"""The built-in ClusterTrainingRuntimes (trainer.md §4), and their conformance with upstream's files."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from jobsetctl.trainer.catalog import CATALOG_NAMES, builtin_runtime, builtin_runtimes, load_entry
from jobsetctl.trainer.runtime_webhook import (
    validate_cluster_training_runtime_create,
    validate_replicated_jobs,
)
from tests.helpers import UPSTREAM, requires_upstream
from tests.trainer.util import ANCESTOR

UPSTREAM_RUNTIMES = UPSTREAM / "trainer" / "runtimes"


def test_catalog_holds_the_nine_shipped_runtimes_in_spec_order() -> None:
    """trainer.md §4 table order."""
    assert [r["metadata"]["name"] for r in builtin_runtimes()] == [
        "torch-distributed",
        "deepspeed-distributed",
        "mlx-distributed",
        "jax-distributed",
        "xgboost-distributed",
        "torchtune-llama3.2-1b",
        "torchtune-llama3.2-3b",
        "torchtune-qwen2.5-1.5b",
        "torch-distributed-with-cache",
    ]
    assert list(CATALOG_NAMES) == [r["metadata"]["name"] for r in builtin_runtimes()]


@pytest.mark.parametrize("name", CATALOG_NAMES)
def test_catalog_files_read_with_libyaml_as_pure_python_safe_load_reads_them(name: str) -> None:
    """The catalog is parsed with libyaml's CSafeLoader for speed: on every shipped file it must build exactly
    what ``yaml.safe_load`` (the pure-Python parser, same constructor and resolver) builds, types included."""
    text = (Path(__file__).resolve().parents[2] / "jobsetctl" / "trainer" / "runtimes" / f"{name}.yaml").read_text(
        encoding="utf-8")
    fast, reference = load_entry(text), yaml.safe_load(text)
    assert fast == reference
    assert repr(fast) == repr(reference)  # same types (True vs 1, "1" vs 1) and key order


def test_catalog_returns_independent_copies() -> None:
    first = builtin_runtimes()
    first[0]["metadata"]["name"] = "changed"
    first[0]["spec"]["mlPolicy"]["numNodes"] = 99
    again = builtin_runtimes()
    assert again[0]["metadata"]["name"] == "torch-distributed"
    assert again[0]["spec"]["mlPolicy"]["numNodes"] == 1
    assert builtin_runtime("nope") is None


@pytest.mark.parametrize("runtime", builtin_runtimes(), ids=lambda r: r["metadata"]["name"])
def test_every_catalog_runtime_is_a_webhook_disabled_cluster_runtime(runtime: dict[str, Any]) -> None:
    """The installation overlay labels the shipped runtimes webhook-validation=disabled (trainer.md §4)."""
    assert runtime["apiVersion"] == "trainer.kubeflow.org/v1alpha1"
    assert runtime["kind"] == "ClusterTrainingRuntime"
    labels = runtime["metadata"]["labels"]
    assert labels["trainer.kubeflow.org/webhook-validation"] == "disabled"
    assert labels["trainer.kubeflow.org/framework"]
    # Even with the label removed, the runtime webhook would accept each of them.
    del labels["trainer.kubeflow.org/webhook-validation"]
    assert validate_cluster_training_runtime_create(runtime) == []
    assert validate_replicated_jobs(runtime) == []


@pytest.mark.parametrize(
    ("name", "framework", "jobs"),
    [
        ("torch-distributed", "torch", [("node", "trainer")]),
        ("deepspeed-distributed", "deepspeed", [("node", None), ("launcher", "trainer")]),
        ("mlx-distributed", "mlx", [("node", None), ("launcher", "trainer")]),
        ("jax-distributed", "jax", [("node", "trainer")]),
        ("xgboost-distributed", "xgboost", [("node", "trainer")]),
        ("torchtune-llama3.2-1b", "torchtune",
         [("dataset-initializer", "dataset-initializer"), ("model-initializer", "model-initializer"), ("node", "trainer")]),
        ("torch-distributed-with-cache", "torch",
         [("dataset-initializer", "dataset-initializer"), ("node", "trainer")]),
    ],
)
def test_catalog_job_shapes(name: str, framework: str, jobs: list[tuple[str, str | None]]) -> None:
    runtime = builtin_runtime(name)
    assert runtime is not None
    assert runtime["metadata"]["labels"]["trainer.kubeflow.org/framework"] == framework
    found = [
        (j["name"], j["template"].get("metadata", {}).get("labels", {}).get(ANCESTOR))
        for j in runtime["spec"]["template"]["spec"]["replicatedJobs"]
    ]
    assert found == jobs


def test_torchtune_qwen_runtime_keeps_both_tokenizer_overrides() -> None:
    runtime = builtin_runtime("torchtune-qwen2.5-1.5b")
    assert runtime is not None
    node = runtime["spec"]["template"]["spec"]["replicatedJobs"][2]["template"]["spec"]["template"]["spec"]["containers"][0]
    assert "tokenizer.path=/workspace/model/vocab.json" in node["command"]
    assert "tokenizer.merges_file=/workspace/model/merges.txt" in node["command"]
    assert node["command"][5] == "qwen2_5/1.5B_full"
    assert node["resources"] == {"limits": {"nvidia.com/gpu": 2}}


# --- conformance with upstream's manifests/base/runtimes ----------------------------------------


def _untagged(image: str) -> str:
    return re.sub(r":[^/:]+$", "", image)


def _facts(runtime: dict[str, Any]) -> dict[str, Any]:
    """The fields trainer.md §4 lists, normalised for comparison."""
    spec = runtime["spec"]
    template = spec["template"]["spec"]
    jobs = []
    for job in template["replicatedJobs"]:
        pod = job["template"]["spec"]["template"]["spec"]
        containers = [
            {
                "name": c["name"],
                "image": _untagged(c.get("image", "")),
                "command": c.get("command"),
                "args": c.get("args"),
                "env": c.get("env"),
                "volumeMounts": c.get("volumeMounts"),
            }
            for c in pod.get("initContainers", []) + pod.get("containers", [])
        ]
        jobs.append({
            "name": job["name"],
            "ancestor": job["template"].get("metadata", {}).get("labels", {}).get(ANCESTOR),
            "dependsOn": job.get("dependsOn"),
            "containers": containers,
        })
    return {
        "framework": runtime["metadata"].get("labels", {}).get("trainer.kubeflow.org/framework"),
        "mlPolicy": spec.get("mlPolicy"),
        "podGroupPolicy": spec.get("podGroupPolicy"),
        "volumeClaimPolicies": template.get("volumeClaimPolicies"),
        "jobs": jobs,
    }


def _upstream_files() -> list[Path]:
    return sorted(UPSTREAM_RUNTIMES.glob("*.yaml")) if UPSTREAM_RUNTIMES.is_dir() else []


@requires_upstream
def test_upstream_ships_exactly_our_catalog() -> None:
    names = {yaml.safe_load(p.read_text())["metadata"]["name"] for p in _upstream_files()}
    assert names == set(CATALOG_NAMES)


@requires_upstream
@pytest.mark.parametrize("path", _upstream_files(), ids=lambda p: p.stem)
def test_catalog_runtime_matches_upstream_on_spec_facts(path: Path) -> None:
    upstream = yaml.safe_load(path.read_text())
    ours = builtin_runtime(upstream["metadata"]["name"])
    assert ours is not None
    assert _facts(ours) == _facts(upstream)


@requires_upstream
@pytest.mark.parametrize("path", _upstream_files(), ids=lambda p: p.stem)
def test_catalog_runtime_matches_upstream_spec_entirely_modulo_image_tags(path: Path) -> None:
    """Stronger than §4 asks: the whole spec agrees once image tags are ignored (securityContext,
    readinessProbe, network, successPolicy, resources, serviceAccountName included)."""

    def normalise(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: normalise(v) for k, v in value.items() if k != "image"} | (
                {"image": _untagged(value["image"])} if isinstance(value.get("image"), str) else {}
            )
        if isinstance(value, list):
            return [normalise(v) for v in value]
        return value

    upstream = yaml.safe_load(path.read_text())
    ours = builtin_runtime(upstream["metadata"]["name"])
    assert ours is not None
    assert normalise(ours["spec"]) == normalise(upstream["spec"])


@requires_upstream
def test_upstream_base_already_disables_webhook_for_the_cache_runtime_only() -> None:
    """A fact trainer.md §4 does not state: in manifests/base only torch-distributed-with-cache carries
    the webhook-validation label; the others get it from the overlay."""
    labelled = {
        yaml.safe_load(p.read_text())["metadata"]["name"]
        for p in _upstream_files()
        if yaml.safe_load(p.read_text())["metadata"].get("labels", {}).get("trainer.kubeflow.org/webhook-validation")
    }
    assert labelled == {"torch-distributed-with-cache"}


@pytest.mark.parametrize("name", CATALOG_NAMES)
def test_catalog_runtimes_expand_to_admitted_jobsets(tmp_path: Path, name: str) -> None:
    """A plain TrainJob against each shipped runtime passes Trainer admission and its JobSet passes
    JobSet admission (no trainjob-jobset-rejected)."""
    from tests.trainer.util import trainer_rules, trainjob, validate_objects

    diagnostics = validate_objects(tmp_path, trainjob("job", name, trainer={"numNodes": 2}))
    assert [d.rule for d in diagnostics if d.severity == "error"] == []
    assert trainer_rules(diagnostics) == []


def test_trainer_rules_are_registered_with_spec_citations() -> None:
    from jobsetctl.rules import all_rules

    trainer = [r for r in all_rules() if r.id.startswith(("trainjob-", "runtime-")) and r.layer != "lint"]
    assert len(trainer) == 32
    assert all(r.spec.startswith("trainer.md §") for r in trainer)
    layers = {r.id: r.layer.value for r in trainer if r.layer.value != "webhook"}
    assert layers == {"trainjob-runtime-not-found": "reference", "trainjob-runtime-deprecated": "reference",
                      # Admitted by Trainer, refused later (issue #13).
                      "trainjob-jobset-rejected": "consequence", "trainjob-reconcile-failure": "consequence"}
