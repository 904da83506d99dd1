"""Flux (trainer.md §3.8.7): wrap the trainer command, add the flux-installer init container, volumes,
the entrypoint ConfigMap and the CURVE Secret.

The two scripts of ``<trainjob>-flux-entrypoint`` are templates inside the Trainer binary; we do not
reproduce them. Instead ``entrypoint.sh`` and ``init.sh`` hold a clearly marked placeholder listing the
values the controller substitutes (resource spec, lead host, launch flags, host list, broker URIs,
queue policy), so a render still shows everything that depends on the TrainJob. The CURVE
certificate is computed exactly (it is a function of the TrainJob UID).
"""

from __future__ import annotations

import base64
from typing import Any

from jobsetctl.trainer import api
from jobsetctl.trainer.expand.flux_curve import curve_certificate
from jobsetctl.trainer.expand.model import as_int, as_str
from jobsetctl.trainer.expand.resources import gpu_count
from jobsetctl.trainer.expand.state import State, config_map, owned_metadata
from jobsetctl.trainer.expand.upsert import upsert_volume_mounts, upsert_volumes

FLUX_ROOT = "/opt/view"


def _names(trainjob_name: str) -> tuple[str, str]:
    return trainjob_name + api.FLUX_ENTRYPOINT_SUFFIX, trainjob_name + api.FLUX_CURVE_SUFFIX


def settings(state: State) -> dict[str, str]:
    """Broker settings: defaults, then plain env of the runtime's trainer ``node`` container, then the
    TrainJob's ``trainer.env`` (first preference)."""
    values = dict(api.FLUX_SETTING_DEFAULTS)
    container = state.info.trainer_container()
    if container is not None:
        for env in container.get("env") or []:
            if isinstance(env, dict) and env.get("name") in values and isinstance(env.get("value"), str):
                values[env["name"]] = env["value"]
    for env in state.trainjob.trainer_env:
        if env.get("name") in values:
            values[env["name"]] = as_str(env.get("value"))
    return values


def _original_command(state: State) -> str:
    command: list[str] = []
    container = state.info.trainer_container()
    if container is not None and isinstance(container.get("command"), list):
        command = [c for c in container["command"] if isinstance(c, str)]
    args: list[str] = []
    if state.trainjob.trainer_command is not None:
        command = state.trainjob.trainer_command
    if state.trainjob.trainer_args is not None:
        args = state.trainjob.trainer_args
    return " ".join(command + args).strip()


def enforce(state: State) -> None:
    if state.info.policy("flux") is None:
        return
    trainer = state.trainjob.trainer
    if trainer is None or state.trainjob.num_nodes is None:
        # Upstream dereferences spec.trainer and spec.trainer.numNodes without nil checks and the
        # reconcile panics; we report it as a reconcile error instead.
        state.fail("Flux requires spec.trainer.numNodes to be set (the Flux plugin dereferences it)")
        return
    config_name, curve_name = _names(state.trainjob.name)
    flux_settings = settings(state)
    trainer["command"] = ["/bin/bash", f"{api.FLUX_CONFIG_PATH}/entrypoint.sh", _original_command(state)]
    # Quirk [derived]: args are cleared on the TrainJob, so the builder keeps the *runtime's* args.
    trainer.pop("args", None)
    installer = {
        "name": api.FLUX_INSTALLER_CONTAINER,
        "image": flux_settings["FLUX_VIEW_IMAGE"],
        "command": ["/bin/bash", f"{api.FLUX_CONFIG_PATH}/init.sh"],
        "volumeMounts": [
            {"name": api.FLUX_INSTALL_VOLUME, "mountPath": api.FLUX_INSTALL_PATH},
            {"name": config_name, "mountPath": api.FLUX_CONFIG_PATH, "readOnly": True},
        ],
    }
    for pod_set in state.info.pod_sets:
        if pod_set.name != api.NODE:
            continue
        pod_spec = pod_set.pod_spec
        upsert_volumes(pod_spec, [
            {"name": api.FLUX_SPACK_VOLUME, "emptyDir": {}},
            {"name": api.FLUX_INSTALL_VOLUME, "emptyDir": {}},
            {"name": config_name, "configMap": {"name": config_name, "defaultMode": 0o755}},
            {"name": api.FLUX_MEMORY_VOLUME, "emptyDir": {"medium": "Memory"}},
            {"name": api.FLUX_CURVE_VOLUME, "secret": {"secretName": curve_name, "defaultMode": 0o400}},
        ])
        init_containers = pod_spec.get("initContainers")
        if not isinstance(init_containers, list):
            init_containers = pod_spec["initContainers"] = []
        init_containers.append(dict(installer))
        container = pod_set.container(api.NODE)
        if container is not None:
            upsert_volume_mounts(container, [
                {"name": api.FLUX_INSTALL_VOLUME, "mountPath": api.FLUX_INSTALL_PATH},
                {"name": api.FLUX_SPACK_VOLUME, "mountPath": api.FLUX_SPACK_PATH},
                {"name": config_name, "mountPath": api.FLUX_CONFIG_PATH, "readOnly": True},
                {"name": api.FLUX_CURVE_VOLUME, "mountPath": api.FLUX_CURVE_PATH, "readOnly": True},
                {"name": api.FLUX_MEMORY_VOLUME, "mountPath": api.FLUX_MEMORY_PATH, "readOnly": True},
            ])


def _range(size: int) -> str:
    return "0" if size == 1 else f"0-{size - 1}"


def launch_parameters(state: State) -> dict[str, str]:
    """The values upstream substitutes into its scripts (``flux run`` flags, resource spec, hosts)."""
    name = state.trainjob.name
    nodes = state.trainjob.num_nodes or 0
    tasks = state.trainjob.num_proc_per_node
    if tasks is None:
        tasks = as_int((state.info.policy("flux") or {}).get("numProcPerNode")) or 1
    flags = f"-N {nodes} -n {tasks * nodes}"
    resources = f"--cores={_range(tasks)}"
    gpus = gpu_count(state.info.resources_for_derivation(state.trainjob))
    if gpus > 0:
        flags += f" -g {gpus}"
        resources += f" --gpu={_range(gpus)}"
    flux_settings = settings(state)
    fqdn = f"{name}.{state.trainjob.namespace}.svc.cluster.local"
    return {
        "resources": resources,
        "lead_host": f"{name}-{api.NODE}-0-0",
        "flags": flags,
        "flux_root": FLUX_ROOT,
        "broker_lead": f"{name}-0",
        "hosts": f"{name}-{api.NODE}-0-[{_range(nodes)}]",
        "bind": f"tcp://{flux_settings['FLUX_NETWORK_DEVICE']}:%p",
        "connect": f"tcp://%h.{fqdn}:%p",
        "queue_policy": flux_settings["FLUX_QUEUE_POLICY"],
    }


def _placeholder_script(role: str, keys: tuple[str, ...], values: dict[str, str]) -> str:
    lines = [
        "#!/bin/bash",
        f"# jobsetctl placeholder for the Flux {role} script the Kubeflow Trainer controller renders.",
        "# The script text is not reproduced offline; these are the values the controller substitutes:",
    ]
    lines += [f"#   {key}: {values[key]}" for key in keys]
    return "\n".join(lines) + "\n"


def build(state: State) -> list[dict[str, Any]]:
    """Secret ``<trainjob>-flux-curve`` and ConfigMap ``<trainjob>-flux-entrypoint``."""
    if state.info.policy("flux") is None or state.trainjob.trainer is None or state.trainjob.num_nodes is None:
        return []
    config_name, curve_name = _names(state.trainjob.name)
    values = launch_parameters(state)
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": owned_metadata(state.trainjob, curve_name),
        "data": {"curve.cert": base64.b64encode(curve_certificate(state.trainjob.name, state.trainjob.uid).encode()).decode()},
    }
    scripts = {
        "entrypoint.sh": _placeholder_script("entrypoint", ("resources", "lead_host", "flags"), values),
        "init.sh": _placeholder_script(
            "init", ("flux_root", "broker_lead", "hosts", "bind", "connect", "queue_policy"), values
        ),
    }
    return [secret, config_map(state.trainjob, config_name, scripts)]
