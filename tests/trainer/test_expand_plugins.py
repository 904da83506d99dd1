"""Expansion: PlainML, JAX, XGBoost, Flux and TrainJobStatus (trainer.md §3.8.1, §3.8.5–§3.8.7, §3.11)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from jobsetctl.trainer.expand import flux_curve
from tests.trainer.util import (
    RANK_FIELD,
    STATUS_GATES,
    catalog,
    container,
    ctr,
    env_map,
    env_names,
    job,
    obj,
    pod_spec,
    rjob,
    run,
    runtime,
    trainjob,
)

# --- PlainML ----------------------------------------------------------------------------------


def test_plainml_sets_count_and_env_only() -> None:
    rt = runtime(jobs=[job(containers=[container(env=[{"name": "A", "value": "1"}])])])
    expansion = run(trainjob(trainer={"numNodes": 5, "env": [{"name": "B", "value": "2"}], "image": "mine"}), rt)
    node = ctr(expansion, "node")
    assert node["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    assert node["image"] == "mine"
    assert "ports" not in node
    assert rjob(expansion, "node")["template"]["spec"]["parallelism"] == 5


def test_plainml_count_defaults_to_parallelism_not_num_nodes() -> None:
    """Without mlPolicy the trainer job's initial count is its parallelism (trainer.md §3.7)."""
    rt = runtime(jobs=[job(job_spec={"parallelism": 3})])
    assert rjob(run(trainjob(trainer={}), rt), "node")["template"]["spec"]["completions"] == 3


# --- JAX ------------------------------------------------------------------------------------


def test_jax_envs_then_trainer_env_from_builder() -> None:
    expansion = run(
        trainjob("jx", "jax-distributed", trainer={"numNodes": 2, "env": [{"name": "XLA_FLAGS", "value": "x"}]}),
        catalog("jax-distributed"),
    )
    node = ctr(expansion, "node")
    assert node["env"] == [
        {"name": "JAX_NUM_PROCESSES", "value": "2"},
        {"name": "JAX_PROCESS_ID", "valueFrom": {"fieldRef": {"fieldPath": RANK_FIELD}}},
        {"name": "JAX_COORDINATOR_ADDRESS", "value": "jx-node-0-0.jx:29500"},
        # PlainML is inactive for JAX: trainer.env comes from the JobSet builder, after the plugin's envs.
        {"name": "XLA_FLAGS", "value": "x"},
    ]
    assert node["ports"] == [{"containerPort": 29500}]
    assert rjob(expansion, "node")["template"]["spec"]["parallelism"] == 2


def test_jax_without_trainer_section_injects_nothing() -> None:
    expansion = run(trainjob("jx", "jax-distributed"), catalog("jax-distributed"))
    assert "env" not in ctr(expansion, "node")


# --- XGBoost ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("trainer", "workers"),
    [
        pytest.param({"numNodes": 3}, "3", id="cpu-one-worker-per-node"),
        pytest.param({"numNodes": 3, "resourcesPerNode": {"limits": {"nvidia.com/gpu": 4}}}, "12", id="gpu-workers"),
        pytest.param({}, "1", id="defaults"),
    ],
)
def test_xgboost_envs(trainer: dict[str, Any], workers: str) -> None:
    expansion = run(trainjob("xg", "xgboost-distributed", trainer=trainer), catalog("xgboost-distributed"))
    node = ctr(expansion, "node")
    assert node["env"] == [
        {"name": "DMLC_TRACKER_URI", "value": "xg-node-0-0.xg"},
        {"name": "DMLC_TRACKER_PORT", "value": "29500"},
        {"name": "DMLC_TASK_ID", "valueFrom": {"fieldRef": {"fieldPath": RANK_FIELD}}},
        {"name": "DMLC_NUM_WORKER", "value": workers},
    ]
    assert node["ports"] == [{"containerPort": 29500}]


def test_xgboost_user_env_precedes_dmlc_env() -> None:
    """Go runs PlainML and XGBoost in map order; we fix PlainML first (user env first)."""
    expansion = run(trainjob("xg", "xgboost-distributed", trainer={"env": [{"name": "U", "value": "1"}]}),
                    catalog("xgboost-distributed"))
    assert env_names(ctr(expansion, "node"))[:2] == ["U", "DMLC_TRACKER_URI"]


# --- Flux ------------------------------------------------------------------------------------

FLUX_RUNTIME = runtime(
    "flux-distributed",
    ml_policy={"numNodes": 1, "flux": {}},
    jobs=[job(containers=[container(image="ubuntu:jammy", args=["--verbose"])])],
    labels={"trainer.kubeflow.org/webhook-validation": "disabled"},
)


def _flux(**trainer: Any) -> Any:
    return run(trainjob("lmp", "flux-distributed", trainer=trainer, uid="1234"), FLUX_RUNTIME)


def test_flux_wraps_command_and_adds_installer_volumes_and_mounts() -> None:
    expansion = _flux(numNodes=2, numProcPerNode=4, command=["lmp", "-in", "in.x"], args=["-nocite"])
    node = ctr(expansion, "node")
    assert node["command"] == ["/bin/bash", "/etc/flux-config/entrypoint.sh", "lmp -in in.x -nocite"]
    # Quirk: args are cleared on the TrainJob, so the runtime's own args survive in the container.
    assert node["args"] == ["--verbose"]
    assert node["volumeMounts"] == [
        {"name": "flux-install", "mountPath": "/mnt/flux"},
        {"name": "spack-install", "mountPath": "/opt/software"},
        {"name": "lmp-flux-entrypoint", "mountPath": "/etc/flux-config", "readOnly": True},
        {"name": "flux-curve", "mountPath": "/curve", "readOnly": True},
        {"name": "shared-memory", "mountPath": "/dev/shm", "readOnly": True},
    ]
    spec = pod_spec(expansion, "node")
    assert spec["volumes"] == [
        {"name": "spack-install", "emptyDir": {}},
        {"name": "flux-install", "emptyDir": {}},
        {"name": "lmp-flux-entrypoint", "configMap": {"name": "lmp-flux-entrypoint", "defaultMode": 0o755}},
        {"name": "shared-memory", "emptyDir": {"medium": "Memory"}},
        {"name": "flux-curve", "secret": {"secretName": "lmp-flux-curve", "defaultMode": 0o400}},
    ]
    assert spec["initContainers"] == [{
        "name": "flux-installer",
        "image": "ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy",
        "command": ["/bin/bash", "/etc/flux-config/init.sh"],
        "volumeMounts": [
            {"name": "flux-install", "mountPath": "/mnt/flux"},
            {"name": "lmp-flux-entrypoint", "mountPath": "/etc/flux-config", "readOnly": True},
        ],
    }]
    assert [(o["kind"], o["metadata"]["name"]) for o in expansion.objects] == [
        ("Secret", "lmp-flux-curve"), ("ConfigMap", "lmp-flux-entrypoint"),
    ]


def test_flux_view_image_from_trainer_env_and_launch_parameters() -> None:
    expansion = _flux(numNodes=2, numProcPerNode=4, command=["lmp"],
                      env=[{"name": "FLUX_VIEW_IMAGE", "value": "view:noble"}],
                      resourcesPerNode={"limits": {"nvidia.com/gpu": "1"}})
    assert ctr(expansion, "node", "flux-installer", init=True)["image"] == "view:noble"
    scripts = obj(expansion, "ConfigMap", "lmp-flux-entrypoint")["data"]
    assert "-N 2 -n 8 -g 1" in scripts["entrypoint.sh"]
    assert "--cores=0-3 --gpu=0" in scripts["entrypoint.sh"]
    assert "lmp-node-0-[0-1]" in scripts["init.sh"]
    assert "tcp://%h.lmp.default.svc.cluster.local:%p" in scripts["init.sh"]
    assert "placeholder" in scripts["init.sh"] and "placeholder" in scripts["entrypoint.sh"]


def test_flux_curve_secret_is_derived_from_the_uid() -> None:
    secret = obj(_flux(numNodes=1), "Secret", "lmp-flux-curve")
    text = base64.b64decode(secret["data"]["curve.cert"]).decode()
    assert text == flux_curve.curve_certificate("lmp", "1234")
    assert 'name = "lmp"' in text
    other = obj(run(trainjob("lmp", "flux-distributed", trainer={"numNodes": 1}, uid="5678"), FLUX_RUNTIME),
                "Secret", "lmp-flux-curve")
    assert other["data"] != secret["data"]


def test_flux_without_num_nodes_is_a_reconcile_error() -> None:
    expansion = _flux(command=["x"])
    assert expansion.errors and "numNodes" in expansion.errors[0]
    assert expansion.objects == []


def test_x25519_rfc7748_vector_and_z85_rfc32_vector() -> None:
    """RFC 7748 §5.2 first test vector; ZeroMQ RFC 32 example."""
    scalar = bytes.fromhex("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4")
    u = bytes.fromhex("e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c")
    assert flux_curve.x25519(scalar, u).hex() == "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552"
    assert flux_curve.z85(bytes([0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B])) == "HelloWorld"
    assert flux_curve.z85(b"abc") == ""


# --- TrainJobStatus -----------------------------------------------------------------------------


def test_status_plugin_only_with_the_gate() -> None:
    tj = trainjob("tj", "torch-distributed", trainer={}, namespace="ml")
    assert not any(e.startswith("KUBEFLOW_") for e in env_names(ctr(run(tj, catalog("torch-distributed")), "node")))
    expansion = run(tj, catalog("torch-distributed"), STATUS_GATES)
    node = ctr(expansion, "node")
    assert env_map(node)["KUBEFLOW_TRAINER_SERVER_URL"] == (
        "https://kubeflow-trainer-controller-manager.kubeflow-system.svc:10443"
        "/apis/trainer.kubeflow.org/v1alpha1/namespaces/ml/trainjobs/tj/status"
    )
    assert env_map(node)["KUBEFLOW_TRAINER_SERVER_CA_CERT"] == "/var/run/secrets/kubeflow/trainer/ca.crt"
    assert env_map(node)["KUBEFLOW_TRAINER_SERVER_TOKEN"] == "/var/run/secrets/kubeflow/trainer/token"
    assert node["volumeMounts"] == [
        {"name": "kubeflow-trainer-token", "mountPath": "/var/run/secrets/kubeflow/trainer", "readOnly": True},
    ]
    volume = pod_spec(expansion, "node")["volumes"][0]
    assert volume["name"] == "kubeflow-trainer-token"
    sources = volume["projected"]["sources"]
    assert sources[0]["serviceAccountToken"] == {
        "audience": "trainer.kubeflow.org/v1alpha1/namespaces/ml/trainjobs/tj/status",
        "expirationSeconds": 3600,
        "path": "token",
    }
    assert sources[1]["configMap"]["name"] == "tj-tls-config"
    assert [o["metadata"]["name"] for o in expansion.objects] == ["tj-tls-config"]
    # The status env comes after the plugin envs (EnforcePodSpec runs after EnforceMLPolicy).
    assert env_names(node)[-3:] == [
        "KUBEFLOW_TRAINER_SERVER_URL", "KUBEFLOW_TRAINER_SERVER_CA_CERT", "KUBEFLOW_TRAINER_SERVER_TOKEN",
    ]
