"""MPI (trainer.md §3.8.4): node counts, SSH/hostfile volumes, OpenMPI env, Secret and hostfile ConfigMap.

The SSH Secret cannot hold a real key offline: the controller generates an ECDSA P-521 key pair when
it creates the Secret. We emit a deterministic, clearly marked placeholder instead (see
:data:`PLACEHOLDER_PRIVATE_KEY`), so renders are reproducible and nobody mistakes it for a key.
"""

from __future__ import annotations

import base64
from typing import Any

from jobsetctl.trainer import api
from jobsetctl.trainer.expand.model import as_int, as_str
from jobsetctl.trainer.expand.resources import gpu_count
from jobsetctl.trainer.expand.state import State, config_map, owned_metadata
from jobsetctl.trainer.expand.upsert import env_value, upsert_env, upsert_volume_mounts, upsert_volumes

PLACEHOLDER_PRIVATE_KEY = (
    "jobsetctl placeholder: no SSH private key is rendered offline. The Kubeflow Trainer controller "
    "generates an ECDSA P-521 key pair (PEM \"EC PRIVATE KEY\") when it creates this Secret at run time.\n"
)
PLACEHOLDER_PUBLIC_KEY = (
    "jobsetctl placeholder: no SSH public key is rendered offline. The Kubeflow Trainer controller "
    "writes the authorized_keys line of the generated key pair here at run time.\n"
)


def slots(state: State) -> int:
    """Slots per host: the TrainJob's ``numProcPerNode``; else the runtime value, except that a runtime
    value of 1 becomes the GPU count when there is more than one GPU."""
    policy = state.info.policy("mpi") or {}
    own = state.trainjob.num_proc_per_node
    if own is not None:
        return own
    runtime_value = as_int(policy.get("numProcPerNode"))
    value = 1 if runtime_value is None else runtime_value
    if value == 1:
        gpus = gpu_count(state.info.resources_for_derivation(state.trainjob))
        if gpus > 1:
            return gpus
    return value


def launcher_as_node(state: State) -> bool:
    return (state.info.policy("mpi") or {}).get("runLauncherAsNode") is True


def enforce(state: State) -> None:
    policy = state.info.policy("mpi")
    if policy is None:
        return
    trainjob = state.trainjob
    node_set = state.info.pod_set_by_name(api.NODE)
    if trainjob.num_nodes is not None and node_set is not None:
        # Quirk 6: with runLauncherAsNode the launcher is one of the nodes, but never fewer than 1 node pod.
        node_set.count = max(trainjob.num_nodes - 1, 1) if launcher_as_node(state) else trainjob.num_nodes
    slot_count = slots(state)
    implementation = as_str(policy.get("mpiImplementation"), api.MPI_IMPLEMENTATION_OPENMPI)
    for pod_set in state.info.pod_sets:
        if pod_set.name not in (api.NODE, api.LAUNCHER):
            continue
        upsert_volumes(pod_set.pod_spec, [_ssh_volume(trainjob.name)])
        if pod_set.name == api.LAUNCHER:
            upsert_volumes(pod_set.pod_spec, [_hostfile_volume(trainjob.name)])
        container = pod_set.container(api.NODE)
        if container is None:
            continue
        mount_path = as_str(policy.get("sshAuthMountPath"), api.MPI_DEFAULT_SSH_AUTH_MOUNT_PATH)
        upsert_volume_mounts(container, [{"name": api.MPI_SSH_AUTH_VOLUME, "mountPath": mount_path}])
        if pod_set.name != api.LAUNCHER:
            continue
        upsert_volume_mounts(container, [{"name": api.MPI_HOSTFILE_VOLUME, "mountPath": api.MPI_HOSTFILE_DIR}])
        if implementation != api.MPI_IMPLEMENTATION_OPENMPI:
            # Quirk 11: the CRD enum admits "", the plugin only knows OpenMPI. Go prints the *pointer*
            # here (an address); we print the value.
            state.fail(f"MPI implementation for {implementation} doesn't supported")
            return
        upsert_env(container, [
            env_value(api.OPENMPI_ENV_HOSTFILE, f"{api.MPI_HOSTFILE_DIR}/{api.MPI_HOSTFILE_NAME}"),
            env_value(api.OPENMPI_ENV_KEEP_FQDN, "true"),
            env_value(api.OPENMPI_ENV_DEFAULT_SLOTS, str(slot_count)),
            env_value(api.OPENMPI_ENV_RSH_ARGS, api.OPENMPI_RSH_ARGS),
        ])


def _ssh_volume(trainjob_name: str) -> dict[str, Any]:
    return {
        "name": api.MPI_SSH_AUTH_VOLUME,
        "secret": {
            "secretName": trainjob_name + api.MPI_SSH_AUTH_SECRET_SUFFIX,
            "defaultMode": api.MPI_SSH_AUTH_DEFAULT_MODE,
            "items": [
                {"key": api.MPI_SSH_PRIVATE_KEY, "path": api.MPI_SSH_PRIVATE_KEY_FILE, "mode": api.MPI_SSH_PRIVATE_KEY_MODE},
                {"key": api.MPI_SSH_PUBLIC_KEY, "path": api.MPI_SSH_PUBLIC_KEY_FILE, "mode": api.MPI_SSH_PUBLIC_KEY_MODE},
                {"key": api.MPI_SSH_PUBLIC_KEY, "path": api.MPI_SSH_AUTHORIZED_KEYS, "mode": api.MPI_SSH_PUBLIC_KEY_MODE},
            ],
        },
    }


def _hostfile_volume(trainjob_name: str) -> dict[str, Any]:
    return {
        "name": api.MPI_HOSTFILE_VOLUME,
        "configMap": {
            "name": trainjob_name + api.MPI_HOSTFILE_CONFIGMAP_SUFFIX,
            "items": [{"key": api.MPI_HOSTFILE_NAME, "path": api.MPI_HOSTFILE_NAME, "mode": api.MPI_HOSTFILE_MODE}],
        },
    }


def ssh_secret(state: State) -> dict[str, Any]:
    """``<trainjob>-mpi-ssh-auth`` (created only if absent upstream; offline we always render it)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": owned_metadata(state.trainjob, state.trainjob.name + api.MPI_SSH_AUTH_SECRET_SUFFIX),
        "type": api.SECRET_TYPE_SSH_AUTH,
        "immutable": True,
        "data": {
            api.MPI_SSH_PRIVATE_KEY: base64.b64encode(PLACEHOLDER_PRIVATE_KEY.encode()).decode(),
            api.MPI_SSH_PUBLIC_KEY: base64.b64encode(PLACEHOLDER_PUBLIC_KEY.encode()).decode(),
        },
    }


def hostfile_config_map(state: State) -> dict[str, Any]:
    """One ``<endpoint> slots=<S>`` line per pod of the PodSets named ``node`` (and ``launcher`` with
    runLauncherAsNode), in template order; endpoints honour ``network.subdomain`` (quirk 2)."""
    slot_count = slots(state)
    openmpi = as_str((state.info.policy("mpi") or {}).get("mpiImplementation")) == api.MPI_IMPLEMENTATION_OPENMPI
    lines: list[str] = []
    for pod_set in state.info.pod_sets:
        in_hostfile = pod_set.name == api.NODE or (launcher_as_node(state) and pod_set.name == api.LAUNCHER)
        if in_hostfile and openmpi:
            lines.extend(f"{endpoint} slots={slot_count}\n" for endpoint in pod_set.endpoints)
    name = state.trainjob.name + api.MPI_HOSTFILE_CONFIGMAP_SUFFIX
    return config_map(state.trainjob, name, {api.MPI_HOSTFILE_NAME: "".join(lines)})


def build(state: State) -> list[dict[str, Any]]:
    """Secret first, then the hostfile ConfigMap (trainer.md §3.13b)."""
    if state.info.policy("mpi") is None:
        return []
    return [ssh_secret(state), hostfile_config_map(state)]
