"""TrainJobStatus plugin (trainer.md §3.11), only with the ``TrainJobStatus`` feature gate.

The status-server URL uses the manager's default configuration (service
``kubeflow-trainer-controller-manager`` in ``kubeflow-system``, port 10443); a cluster configured
otherwise gets other values. The ``<trainjob>-tls-config`` ConfigMap copies ``ca.crt`` from the
webhook TLS Secret at run time; offline its value is a marked placeholder.
"""

from __future__ import annotations

from typing import Any

from jobsetctl.trainer import api
from jobsetctl.trainer.expand.model import dicts
from jobsetctl.trainer.expand.state import State, config_map
from jobsetctl.trainer.expand.upsert import env_value, upsert_env, upsert_volume_mounts, upsert_volumes

GATE = "TrainJobStatus"
PLACEHOLDER_CA = (
    "jobsetctl placeholder: the controller copies ca.crt from its webhook TLS Secret "
    "(kubeflow-trainer-webhook-cert) at run time.\n"
)


def enabled(state: State) -> bool:
    return state.gates.enabled(GATE)


def status_path(namespace: str, name: str) -> str:
    return f"/apis/{api.GROUP}/{api.VERSION}/namespaces/{namespace}/trainjobs/{name}/status"


def token_audience(namespace: str, name: str) -> str:
    return f"{api.GROUP}/{api.VERSION}/namespaces/{namespace}/trainjobs/{name}/status"


def enforce(state: State) -> None:
    if not enabled(state):
        return
    trainjob = state.trainjob
    pod_set = state.info.pod_set_by_ancestor(api.ANCESTOR_TRAINER)
    if pod_set is None:
        return
    service = f"https://{api.STATUS_WEBHOOK_SERVICE}.{api.STATUS_OPERATOR_NAMESPACE}.svc:{api.STATUS_SERVER_PORT}"
    envs = [
        env_value(api.STATUS_ENV_URL, service + status_path(trainjob.namespace, trainjob.name)),
        env_value(api.STATUS_ENV_CA_CERT, f"{api.STATUS_MOUNT_PATH}/{api.STATUS_CA_KEY}"),
        env_value(api.STATUS_ENV_TOKEN, f"{api.STATUS_MOUNT_PATH}/{api.STATUS_TOKEN_FILE}"),
    ]
    mount = {"name": api.STATUS_TOKEN_VOLUME, "mountPath": api.STATUS_MOUNT_PATH, "readOnly": True}
    # Every app container of the first trainer-ancestor job (init containers are left alone).
    for container in dicts(pod_set.pod_spec.get("containers")):
        upsert_env(container, envs)
        upsert_volume_mounts(container, [mount])
    upsert_volumes(pod_set.pod_spec, [_token_volume(trainjob.namespace, trainjob.name)])


def _token_volume(namespace: str, name: str) -> dict[str, Any]:
    return {
        "name": api.STATUS_TOKEN_VOLUME,
        "projected": {
            "sources": [
                {"serviceAccountToken": {
                    "audience": token_audience(namespace, name),
                    "expirationSeconds": api.STATUS_TOKEN_EXPIRY_SECONDS,
                    "path": api.STATUS_TOKEN_FILE,
                }},
                {"configMap": {
                    "name": name + api.STATUS_TLS_CONFIGMAP_SUFFIX,
                    "items": [{"key": api.STATUS_CA_KEY, "path": api.STATUS_CA_KEY}],
                }},
            ],
        },
    }


def build(state: State) -> list[dict[str, Any]]:
    if not enabled(state):
        return []
    name = state.trainjob.name + api.STATUS_TLS_CONFIGMAP_SUFFIX
    return [config_map(state.trainjob, name, {api.STATUS_CA_KEY: PLACEHOLDER_CA})]
