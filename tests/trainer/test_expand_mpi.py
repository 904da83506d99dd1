"""Expansion: the MPI plugin (trainer.md §3.8.4) on the shipped deepspeed/mlx runtimes and variants."""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest

from jobsetctl.trainer.expand.mpi import PLACEHOLDER_PRIVATE_KEY
from tests.trainer.util import (
    catalog,
    container,
    ctr,
    env_map,
    job,
    obj,
    pod_spec,
    rjob,
    run,
    runtime,
    trainjob,
)

SSH_VOLUME = {
    "name": "mpi-ssh-auth",
    "secret": {
        "secretName": "ds-mpi-ssh-auth",
        "defaultMode": 0o400,
        "items": [
            {"key": "ssh-privatekey", "path": "id_rsa", "mode": 0o640},
            {"key": "ssh-publickey", "path": "id_rsa.pub", "mode": 0o644},
            {"key": "ssh-publickey", "path": "authorized_keys", "mode": 0o644},
        ],
    },
}
HOSTFILE_VOLUME = {
    "name": "mpi-hostfile",
    "configMap": {"name": "ds-mpi-hostfile", "items": [{"key": "hostfile", "path": "hostfile", "mode": 0o444}]},
}


def _deepspeed(**trainer: Any) -> Any:
    return run(trainjob("ds", "deepspeed-distributed", trainer=trainer), catalog("deepspeed-distributed"))


def test_deepspeed_counts_volumes_mounts_and_env() -> None:
    expansion = _deepspeed(numNodes=3, env=[{"name": "NCCL_DEBUG", "value": "INFO"}])
    assert rjob(expansion, "node")["template"]["spec"]["parallelism"] == 2
    assert rjob(expansion, "launcher")["template"]["spec"]["completions"] == 1
    assert pod_spec(expansion, "node")["volumes"] == [SSH_VOLUME]
    assert pod_spec(expansion, "launcher")["volumes"] == [SSH_VOLUME, HOSTFILE_VOLUME]
    node = ctr(expansion, "node")
    launcher = ctr(expansion, "launcher")
    assert node["volumeMounts"] == [{"name": "mpi-ssh-auth", "mountPath": "/home/mpiuser/.ssh"}]
    assert launcher["volumeMounts"] == [
        {"name": "mpi-ssh-auth", "mountPath": "/home/mpiuser/.ssh"},
        {"name": "mpi-hostfile", "mountPath": "/etc/mpi"},
    ]
    assert launcher["env"] == [
        {"name": "OMPI_MCA_orte_default_hostfile", "value": "/etc/mpi/hostfile"},
        {"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "true"},
        {"name": "OMPI_MCA_orte_set_default_slots", "value": "1"},
        {"name": "OMPI_MCA_plm_rsh_args", "value": "-o ConnectionAttempts=10"},
        {"name": "NCCL_DEBUG", "value": "INFO"},
    ]
    # runLauncherAsNode: trainer.env also reaches the node job's node container (trainer.md §3.13 step 3).
    assert node["env"] == [{"name": "NCCL_DEBUG", "value": "INFO"}]
    # Only the trainer-ancestor launcher gets the TrainJob's command; the sshd node keeps its own.
    assert node["command"] == ["/usr/sbin/sshd"]


def test_deepspeed_objects_and_hostfile() -> None:
    expansion = _deepspeed(numNodes=3)
    assert [(o["kind"], o["metadata"]["name"]) for o in expansion.objects] == [
        ("Secret", "ds-mpi-ssh-auth"), ("ConfigMap", "ds-mpi-hostfile"),
    ]
    hostfile = obj(expansion, "ConfigMap", "ds-mpi-hostfile")["data"]["hostfile"]
    # Template order: node pods first, then the launcher (runLauncherAsNode makes it a host too).
    assert hostfile == "ds-node-0-0.ds slots=1\nds-node-0-1.ds slots=1\nds-launcher-0-0.ds slots=1\n"


def test_ssh_secret_is_a_marked_deterministic_placeholder() -> None:
    secret = obj(_deepspeed(), "Secret", "ds-mpi-ssh-auth")
    assert secret["type"] == "kubernetes.io/ssh-auth"
    assert secret["immutable"] is True
    assert set(secret["data"]) == {"ssh-privatekey", "ssh-publickey"}
    text = base64.b64decode(secret["data"]["ssh-privatekey"]).decode()
    assert text == PLACEHOLDER_PRIVATE_KEY
    assert "placeholder" in text and "at run time" in text
    assert secret["metadata"]["ownerReferences"][0]["kind"] == "TrainJob"
    assert obj(_deepspeed(), "Secret", "ds-mpi-ssh-auth") == secret


def test_quirk_6_launcher_as_node_with_one_node_still_creates_both_pods() -> None:
    expansion = _deepspeed(numNodes=1)
    assert rjob(expansion, "node")["template"]["spec"]["parallelism"] == 1
    assert rjob(expansion, "launcher")["template"]["spec"]["parallelism"] == 1
    assert obj(expansion, "ConfigMap", "ds-mpi-hostfile")["data"]["hostfile"].count("\n") == 2


@pytest.mark.parametrize(
    ("trainer", "launcher_resources", "expected"),
    [
        pytest.param({}, None, "1", id="runtime-default"),
        pytest.param({"numProcPerNode": 4}, None, "4", id="trainjob-value"),
        pytest.param({"resourcesPerNode": {"limits": {"nvidia.com/gpu": 8}}}, None, "8", id="gpus-of-trainjob"),
        pytest.param({}, {"limits": {"nvidia.com/gpu": 2}}, "1", id="quirk-launcher-gpus-ignored"),
        pytest.param({"resourcesPerNode": {"limits": {"nvidia.com/gpu": 1}}}, None, "1", id="one-gpu"),
    ],
)
def test_slots_table(trainer: dict[str, Any], launcher_resources: dict[str, Any] | None, expected: str) -> None:
    rt = catalog("deepspeed-distributed")
    if launcher_resources is not None:
        rt["spec"]["template"]["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]["containers"][0][
            "resources"] = launcher_resources
    expansion = run(trainjob("ds", "deepspeed-distributed", trainer=trainer), rt)
    assert env_map(ctr(expansion, "launcher"))["OMPI_MCA_orte_set_default_slots"] == expected
    assert obj(expansion, "ConfigMap", "ds-mpi-hostfile")["data"]["hostfile"].endswith(f"slots={expected}\n")


def test_quirk_runtime_gpus_are_read_from_the_first_job_named_node() -> None:
    """ExtractResourcePerNodeFromRuntime takes the first job that is *named* node or has the trainer
    ancestor: for deepspeed that is the sshd "node" job, so only its GPUs count."""
    rt = catalog("deepspeed-distributed")
    jobs = rt["spec"]["template"]["spec"]["replicatedJobs"]
    jobs[0]["template"]["spec"]["template"]["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": 2}}
    expansion = run(trainjob("ds", "deepspeed-distributed", trainer={}), rt)
    assert env_map(ctr(expansion, "launcher"))["OMPI_MCA_orte_set_default_slots"] == "2"


def _mpi_runtime(launcher_as_node: bool, **mpi: Any) -> dict[str, Any]:
    return runtime(
        "mpi",
        ml_policy={"numNodes": 1, "mpi": {"runLauncherAsNode": launcher_as_node, **mpi}},
        jobs=[job("launcher", "trainer", [container()]), job("node", None, [container()])],
        jobset={"network": {"subdomain": "hosts"}},
    )


def test_quirk_2_hostfile_honours_subdomain_and_skips_launcher_without_launcher_as_node() -> None:
    expansion = run(trainjob("m", "mpi", trainer={"numNodes": 2}), _mpi_runtime(False))
    assert rjob(expansion, "node")["template"]["spec"]["parallelism"] == 2
    # Quirk 2: the hostfile honours network.subdomain (unlike PET_MASTER_ADDR).
    assert obj(expansion, "ConfigMap", "m-mpi-hostfile")["data"]["hostfile"] == (
        "m-node-0-0.hosts slots=1\nm-node-0-1.hosts slots=1\n"
    )
    # Default sshAuthMountPath (CRD default) when the runtime omits it.
    assert ctr(expansion, "node")["volumeMounts"] == [{"name": "mpi-ssh-auth", "mountPath": "/root/.ssh"}]
    assert "env" not in ctr(expansion, "node")


def test_quirk_11_empty_mpi_implementation_fails_the_reconcile() -> None:
    expansion = run(trainjob("m", "mpi", trainer={}), _mpi_runtime(False, mpiImplementation=""))
    assert expansion.errors == ["MPI implementation for  doesn't supported"]
    assert not expansion.applied
    assert obj(expansion, "ConfigMap", "m-mpi-hostfile")["data"]["hostfile"] == ""


def test_mpi_expansion_does_not_modify_inputs() -> None:
    rt = catalog("deepspeed-distributed")
    tj = trainjob("ds", "deepspeed-distributed", trainer={"numNodes": 3})
    before = copy.deepcopy((tj, rt))
    run(tj, rt)
    assert (tj, rt) == before
