"""``migrate --to trainer-v2``: the migrated TrainJob renders the pods Trainer v1 would have run (issue #15).

The v1 side is a model of kubeflow/training-operator (branch release-1.9, the last v1 release line) written
from its code, cited per function: replica counts and rank order from the controllers, the variables from
``setPodEnv``/``SetPodEnv``, defaults from ``pkg/apis/kubeflow.org/v1/*_defaults.go``. The v2 side is
``jobsetctl render --pods`` of the migrated file: every Pod, with its ``batch.kubernetes.io/job-completion-index``
as the rank. Compared per rank: image, command, args, resources, and the rank/size variables; an address
variable must name the pod v1 meant (hostname.subdomain of the pod with that rank), since v1's service names
(``<job>-master-0``) do not exist under v2.

Also the one example of the upstream migration guide (kubeflow/trainer @ 8c0f5059,
``docs/operator-guides/migration.md``, "Migrate PyTorchJob to TrainJob"), entry by entry.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from jobsetctl.cli.app import run
from tests.helpers import dedent

COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = run(list(argv))
    return status, out.getvalue(), err.getvalue()


def migrate_and_render(tmp_path: Path, v1: str) -> tuple[str, list[dict[str, Any]]]:
    path = tmp_path / "job.yaml"
    path.write_text(dedent(v1))
    status, _, err = _run("migrate", "--to", "trainer-v2", "--write", str(path))
    assert status == 0 and ": migrated [migrate-trainer]" in err, err
    status, out, err = _run("render", "--pods", str(path))
    assert status == 0, err
    return path.read_text(), [o for o in yaml.safe_load_all(out) if isinstance(o, dict)]


def _field(pod: dict[str, Any], path: str) -> str:
    match = re.fullmatch(r"metadata\.(annotations|labels)\['([^']+)'\]", path)
    assert match, path
    return str(pod["metadata"][match.group(1)][match.group(2)])


def env_of(pod: dict[str, Any], container: dict[str, Any]) -> dict[str, str]:
    """The container's environment as the kubelet resolves it (fieldRefs on the pod's metadata)."""
    env: dict[str, str] = {}
    for entry in container.get("env", []):
        if "value" in entry:
            env[entry["name"]] = str(entry["value"])
        else:
            env[entry["name"]] = _field(pod, entry["valueFrom"]["fieldRef"]["fieldPath"])
    return env


def host_of(pod: dict[str, Any]) -> str:
    return f"{pod['spec']['hostname']}.{pod['spec']['subdomain']}"


def quantities(resources: dict[str, Any]) -> dict[str, Any]:
    return {kind: {name: str(value) for name, value in values.items()} for kind, values in resources.items()}


def v2_pods(objects: list[dict[str, Any]], job: str | None = None) -> dict[int, dict[str, Any]]:
    """Rank (completion index) → pod, for the pods of one replicated job (all when None)."""
    pods = [o for o in objects if o["kind"] == "Pod"
            and (job is None or o["metadata"]["labels"]["jobset.sigs.k8s.io/replicatedjob-name"] == job)]
    return {int(p["metadata"]["annotations"][COMPLETION_INDEX]): p for p in pods}


def node_container(pod: dict[str, Any]) -> dict[str, Any]:
    [container] = [c for c in pod["spec"]["containers"] if c["name"] == "node"]
    return container


def v1_replicas(specs: dict[str, Any], order: tuple[str, ...], default: dict[str, int] | None = None) -> list[tuple[str, int, int]]:
    """(replica type, index, rank) of every v1 pod. The controllers create ``replicas`` pods per type
    (``setDefaultReplicas``: 1, MPI Workers 0); rank = index, shifted by the replicas of the types before
    (PyTorch ``setPodEnv``: ``rank + 1`` for Workers; XGBoost ``SetPodEnv``: ``rank += masterReplicas``)."""
    out = []
    offset = 0
    for rtype in order:
        if rtype in specs:
            replicas = specs[rtype].get("replicas", (default or {}).get(rtype, 1))
            out += [(rtype, index, offset + index) for index in range(replicas)]
            offset += replicas
    return out


def assert_same_containers(v1_spec: dict[str, Any], container: dict[str, Any]) -> None:
    [v1_container] = [c for c in v1_spec["template"]["spec"]["containers"]]
    assert container["image"] == v1_container["image"]
    assert container.get("command") == v1_container.get("command")
    assert container.get("args") == v1_container.get("args")
    assert quantities(container.get("resources", {})) == quantities(v1_container.get("resources", {}))


# --- PyTorchJob ------------------------------------------------------------------------------------------

PYTORCH = Path(__file__).parent / "cases" / "migrate-trainer-pytorch.in.yaml"


def test_pytorchjob(tmp_path: Path) -> None:
    """pytorch/envvar.go ``setPodEnv`` with a Master: WORLD_SIZE = getTotalReplicas × getNprocPerNodeInt
    ("auto" → 1), RANK (Workers + 1), PET_NNODES = total, PET_NODE_RANK = RANK, PET_NPROC_PER_NODE = the
    defaulted "auto"; MASTER_ADDR/PET_MASTER_ADDR = ``replicaName(job, Master, 0)``, the rank-0 pod."""
    v1 = yaml.safe_load(PYTORCH.read_text())
    specs = v1["spec"]["pytorchReplicaSpecs"]
    _, objects = migrate_and_render(tmp_path, PYTORCH.read_text().replace("kueue.x-k8s.io/queue-name: team-a", "q: a"))
    pods = v2_pods(objects)
    replicas = v1_replicas(specs, ("Master", "Worker"))
    assert sorted(pods) == [rank for _, _, rank in replicas]
    total = len(replicas)
    for rtype, _, rank in replicas:
        pod = pods[rank]
        container = node_container(pod)
        assert_same_containers(specs[rtype], container)
        env = env_of(pod, container)
        assert (env["WORLD_SIZE"], env["RANK"]) == (str(total * 1), str(rank))
        assert (env["PET_NNODES"], env["PET_NODE_RANK"], env["PET_NPROC_PER_NODE"]) == (str(total), str(rank), "auto")
        assert env["MASTER_ADDR"] == env["PET_MASTER_ADDR"] == host_of(pods[0])
        assert env["MASTER_PORT"] == env["PET_MASTER_PORT"]


def test_pytorchjob_nproc_per_node_counts_in_world_size(tmp_path: Path) -> None:
    """``worldSize := int(totalReplicas) * nprocPerNode`` when nprocPerNode is a number."""
    text, objects = migrate_and_render(tmp_path, """
        apiVersion: kubeflow.org/v1
        kind: PyTorchJob
        metadata: {name: pt}
        spec:
          nprocPerNode: "2"
          pytorchReplicaSpecs:
            Master: {replicas: 1, template: {spec: {containers: [{name: pytorch, image: img, command: [python, t.py]}]}}}
            Worker: {replicas: 1, template: {spec: {containers: [{name: pytorch, image: img, command: [python, t.py]}]}}}
        """)
    assert "numProcPerNode: 2" in text  # a string in the v1 API, a number in Trainer v2
    for pod in v2_pods(objects).values():
        assert env_of(pod, node_container(pod))["WORLD_SIZE"] == "4"


def test_pytorchjob_without_master_gets_no_rank_variables(tmp_path: Path) -> None:
    """``if pytorchjob.Spec.PyTorchReplicaSpecs[Master] != nil``: no Master, no MASTER_*, RANK, WORLD_SIZE."""
    text, objects = migrate_and_render(tmp_path, """
        apiVersion: kubeflow.org/v1
        kind: PyTorchJob
        metadata: {name: pt}
        spec:
          pytorchReplicaSpecs:
            Worker: {replicas: 2, template: {spec: {containers: [{name: pytorch, image: img, command: [python, t.py]}]}}}
        """)
    assert "env:" not in text
    for pod in v2_pods(objects).values():
        assert not {"RANK", "WORLD_SIZE", "MASTER_ADDR"} & set(env_of(pod, node_container(pod)))


def test_pytorchjob_with_torchrun_leaves_rank_to_torchrun(tmp_path: Path) -> None:
    """torchrun reads PET_* (set by v2 as by v1) and sets RANK/WORLD_SIZE for its processes itself."""
    text, objects = migrate_and_render(tmp_path, """
        apiVersion: kubeflow.org/v1
        kind: PyTorchJob
        metadata: {name: pt}
        spec:
          pytorchReplicaSpecs:
            Master: {replicas: 1, template: {spec: {containers: [{name: pytorch, image: img, command: [torchrun, t.py]}]}}}
            Worker: {replicas: 2, template: {spec: {containers: [{name: pytorch, image: img, command: [torchrun, t.py]}]}}}
        """)
    assert "RANK" not in text
    pods = v2_pods(objects)
    for rank, pod in pods.items():
        env = env_of(pod, node_container(pod))
        assert (env["PET_NNODES"], env["PET_NODE_RANK"], env["PET_MASTER_ADDR"]) == ("3", str(rank), host_of(pods[0]))


# --- JAXJob ----------------------------------------------------------------------------------------------

JAXJOB = """
    apiVersion: kubeflow.org/v1
    kind: JAXJob
    metadata: {name: jaxjob-simple}
    spec:
      jaxReplicaSpecs:
        Worker:
          replicas: 3
          restartPolicy: OnFailure
          template:
            spec:
              containers:
              - name: jax
                image: docker.io/kubeflow/jaxjob-simple:latest
                command: [python3, train.py]
                imagePullPolicy: Always
                resources: {limits: {cpu: "2", memory: 4Gi}}
    """


def test_jaxjob(tmp_path: Path) -> None:
    """jax/envvar.go ``setPodEnv``: COORDINATOR_ADDRESS = ``replicaName(job, Worker, 0)`` (the rank-0 pod),
    COORDINATOR_PORT (the jaxjob-port; under v2 the port of Trainer's JAX_COORDINATOR_ADDRESS), NUM_PROCESSES =
    getTotalReplicas, PROCESS_ID = the replica index."""
    v1 = yaml.safe_load(dedent(JAXJOB))
    specs = v1["spec"]["jaxReplicaSpecs"]
    _, objects = migrate_and_render(tmp_path, JAXJOB)
    pods = v2_pods(objects)
    replicas = v1_replicas(specs, ("Worker",))
    assert sorted(pods) == [rank for _, _, rank in replicas]
    for rtype, _, rank in replicas:
        pod = pods[rank]
        container = node_container(pod)
        assert_same_containers(specs[rtype], container)
        env = env_of(pod, container)
        assert (env["NUM_PROCESSES"], env["PROCESS_ID"]) == (str(len(replicas)), str(rank))
        assert env["COORDINATOR_ADDRESS"] == host_of(pods[0])
        assert f"{env['COORDINATOR_ADDRESS']}:{env['COORDINATOR_PORT']}" == env["JAX_COORDINATOR_ADDRESS"]
        assert (env["JAX_NUM_PROCESSES"], env["JAX_PROCESS_ID"]) == (env["NUM_PROCESSES"], env["PROCESS_ID"])


# --- XGBoostJob ------------------------------------------------------------------------------------------

XGBOOSTJOB = """
    apiVersion: kubeflow.org/v1
    kind: XGBoostJob
    metadata: {name: xgboost-dist-iris}
    spec:
      xgbReplicaSpecs:
        Master:
          replicas: 1
          restartPolicy: Never
          template:
            spec:
              containers:
              - name: xgboost
                image: docker.io/kubeflow/xgboost-dist-iris:latest
                args: [--job_type=Train, --xgboost_parameter=objective:multi:softprob,num_class:3, --n_estimators=10]
                ports: [{containerPort: 9991, name: xgboostjob-port}]
                resources: {requests: {cpu: "1"}}
        Worker:
          replicas: 2
          restartPolicy: ExitCode
          template:
            spec:
              containers:
              - name: xgboost
                image: docker.io/kubeflow/xgboost-dist-iris:latest
                args: [--job_type=Train, --xgboost_parameter=objective:multi:softprob,num_class:3, --n_estimators=10]
                ports: [{containerPort: 9991, name: xgboostjob-port}]
                resources: {requests: {cpu: "1"}}
    """


def test_xgboostjob(tmp_path: Path) -> None:
    """xgboost/xgboost.go ``SetPodEnv``: MASTER_ADDR = ``replicaName(job, Master, 0)``, WORLD_SIZE =
    computeTotalReplicas, RANK (Workers + masterReplicas), and with more than one replica WORKER_PORT (the
    Worker's xgboostjob-port) and WORKER_ADDRS = ``replicaName(job, Worker, i)`` for i < total - 1, i.e. the
    pods of rank 1 … total - 1 in order."""
    v1 = yaml.safe_load(dedent(XGBOOSTJOB))
    specs = v1["spec"]["xgbReplicaSpecs"]
    _, objects = migrate_and_render(tmp_path, XGBOOSTJOB)
    pods = v2_pods(objects)
    replicas = v1_replicas(specs, ("Master", "Worker"))
    total = len(replicas)
    assert sorted(pods) == [rank for _, _, rank in replicas]
    for rtype, _, rank in replicas:
        pod = pods[rank]
        container = node_container(pod)
        assert_same_containers(specs[rtype], container)
        env = env_of(pod, container)
        assert (env["WORLD_SIZE"], env["RANK"], env["WORKER_PORT"]) == (str(total), str(rank), "9991")
        assert env["MASTER_ADDR"] == host_of(pods[0]) == env["DMLC_TRACKER_URI"]
        assert env["WORKER_ADDRS"].split(",") == [host_of(pods[r]) for r in range(1, total)]


def test_xgboostjob_single_replica_has_no_worker_variables(tmp_path: Path) -> None:
    """``if totalReplicas > 1``: WORKER_PORT and WORKER_ADDRS only with workers."""
    text, _ = migrate_and_render(tmp_path, """
        apiVersion: kubeflow.org/v1
        kind: XGBoostJob
        metadata: {name: x}
        spec:
          xgbReplicaSpecs:
            Master: {replicas: 1, template: {spec: {containers: [{name: xgboost, image: img}]}}}
        """)
    assert "WORKER_" not in text and "WORLD_SIZE, value: '1'" in text


# --- MPIJob ----------------------------------------------------------------------------------------------

MPIJOB = Path(__file__).parent / "cases" / "migrate-trainer-mpi.in.yaml"


def test_mpijob(tmp_path: Path) -> None:
    """mpi/mpijob_controller.go: one launcher pod (``newLauncher``) and ``Worker.replicas`` worker pods
    (``newWorker``), containers as written; ``newConfigMap``: a hostfile line ``<job>-worker-<i>
    slots=<slotsPerWorker>`` per worker, read by the launcher through OMPI_MCA_orte_default_hostfile =
    /etc/mpi/hostfile. Under v2 the hostfile names the node pods, with the same slots."""
    v1 = yaml.safe_load(MPIJOB.read_text())
    specs = v1["spec"]["mpiReplicaSpecs"]
    slots = v1["spec"].get("slotsPerWorker", 1)
    _, objects = migrate_and_render(tmp_path, MPIJOB.read_text())
    launchers, workers = v2_pods(objects, "launcher"), v2_pods(objects, "node")
    assert (len(launchers), len(workers)) == (1, specs["Worker"]["replicas"])
    assert_same_containers(specs["Launcher"], node_container(launchers[0]))
    for worker in workers.values():
        assert_same_containers(specs["Worker"], node_container(worker))
    launcher_env = env_of(launchers[0], node_container(launchers[0]))
    assert launcher_env["OMPI_MCA_orte_default_hostfile"] == "/etc/mpi/hostfile"
    [hostfile] = [o["data"]["hostfile"] for o in objects if o["kind"] == "ConfigMap"
                  and o["metadata"]["name"].endswith("-mpi-hostfile")]
    lines = [line.split(" slots=") for line in hostfile.splitlines()]
    assert lines == [[host_of(workers[i]), str(slots)] for i in sorted(workers)]


# --- refused, with the reason -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("job", "reason"),
    [
        ("""
         kind: MPIJob
         spec:
           mpiReplicaSpecs:
             Launcher: {template: {spec: {containers: [{name: mpi, image: i, command: [mpirun, x]}]}}}
             Worker: {replicas: 2, template: {spec: {containers: [{name: mpi, image: i}]}}}
         """, "the Worker has no command: v1 ran `sleep 365d` there"),
        ("""
         kind: MPIJob
         spec:
           mpiReplicaSpecs:
             Launcher: {template: {spec: {containers: [{name: mpi, image: i, command: [mpirun, x]}]}}}
             Worker: {template: {spec: {containers: [{name: mpi, image: i, command: [sshd]}]}}}
         """, "no Worker replicas (v1 defaults an MPIJob's Workers to 0)"),
        ("""
         kind: XGBoostJob
         spec:
           xgbReplicaSpecs:
             Worker: {replicas: 2, template: {spec: {containers: [{name: xgboost, image: i}]}}}
         """, "an XGBoostJob without a Master"),
        ("""
         kind: PyTorchJob
         spec:
           pytorchReplicaSpecs:
             Master: {replicas: 2, template: {spec: {containers: [{name: pytorch, image: i}]}}}
         """, "a Master with other than one replica"),
        ("""
         kind: XGBoostJob
         spec:
           xgbReplicaSpecs:
             Master: {template: {spec: {containers: [{name: xgboost, image: i, env: [{name: DMLC_TASK_ID, value: "0"}]}]}}}
         """, "env DMLC_TASK_ID is managed by Trainer v2's xgboost plugin"),
        ("""
         kind: JAXJob
         spec:
           jaxReplicaSpecs:
             Worker: {template: {spec: {containers: [{name: jax, image: i, env: [{name: JAX_PROCESS_ID, value: "0"}]}]}}}
         """, "env JAX_PROCESS_ID is managed by Trainer v2's jax plugin"),
    ],
)
def test_refused(tmp_path: Path, job: str, reason: str) -> None:
    path = tmp_path / "job.yaml"
    text = "apiVersion: kubeflow.org/v1\nmetadata: {name: j}\n" + dedent(job)
    path.write_text(text)
    status, _, err = _run("migrate", "--to", "trainer-v2", "--write", str(path))
    assert status == 0
    assert ": not migrated [migrate-trainer] " in err and reason in err, err
    assert path.read_text() == text


# --- the upstream migration guide ----------------------------------------------------------------------------

GUIDE_V1 = """
    apiVersion: kubeflow.org/v1
    kind: PyTorchJob
    metadata:
      name: pytorch-simple
    spec:
      pytorchReplicaSpecs:
        Master:
          replicas: 1
          restartPolicy: OnFailure
          template:
            spec:
              containers:
                - name: pytorch
                  image: docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727
                  command:
                    - "python3"
                    - "/opt/pytorch-mnist/mnist.py"
                    - "--epochs=1"
        Worker:
          replicas: 1
          restartPolicy: OnFailure
          template:
            spec:
              containers:
                - name: pytorch
                  image: docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727
                  command:
                    - "python3"
                    - "/opt/pytorch-mnist/mnist.py"
                    - "--epochs=1"
    """
GUIDE_V2 = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "TrainJob",
    "metadata": {"name": "pytorch-simple"},
    "spec": {
        "runtimeRef": {"name": "torch-distributed"},
        "trainer": {
            "numNodes": 2,
            "image": "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727",
            "command": ["python3", "/opt/pytorch-mnist/mnist.py", "--epochs=1"],
        },
    },
}


def test_the_migration_guide_example(tmp_path: Path) -> None:
    """docs/operator-guides/migration.md "Migrate PyTorchJob to TrainJob": the guide's TrainJob, plus the
    rank variables v1 gave this command (it is no torchrun; the guide leaves them out: the pods would lose
    RANK/WORLD_SIZE/MASTER_* that mnist.py's ``dist.init_process_group`` reads under v1)."""
    text, _ = migrate_and_render(tmp_path, GUIDE_V1)
    migrated = yaml.safe_load(text)
    env = migrated["spec"]["trainer"].pop("env")
    assert migrated == GUIDE_V2
    assert [e["name"] for e in env] == ["MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK"]


# --- the upstream runtime-patches guide ------------------------------------------------------------------------

OVERRIDES_FRAGMENT = """
    podTemplateOverrides:
      - targetJobs:
          - name: node
        spec:
          serviceAccountName: ml-training-sa
          nodeSelector:
            accelerator: nvidia-tesla-v100
          volumes:
            - name: training-data
              persistentVolumeClaim:
                claimName: ml-team-training-pvc
          containers:
            - name: trainer
              volumeMounts:
                - name: training-data
                  mountPath: /workspace/data
    """


def test_the_runtime_patches_guide_example(tmp_path: Path) -> None:
    """kubeflow/trainer docs/operator-guides/runtime-patches.md "Migration from PodTemplateOverrides": the
    guide's Before becomes its After. One deliberate difference: the guide's entry is owned by the Python SDK
    (``manager: trainer.kubeflow.org/kubeflow-sdk``); a file migrated by jobsetctl says so
    (``jobsetctl.dev/migrate``), since ``manager`` names who owns the entry."""
    fragment = yaml.safe_load(dedent(OVERRIDES_FRAGMENT))
    job = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": "pytorch-distributed"},
           "spec": {"runtimeRef": {"name": "torch-distributed"}, **fragment}}
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(job, sort_keys=False))
    status, _, err = _run("migrate", "--to", "trainer-v2", "--write", str(path))
    assert status == 0 and "podTemplateOverrides → runtimePatches" in err
    [override] = fragment["podTemplateOverrides"]
    after = [{"manager": "jobsetctl.dev/migrate", "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [
        {"name": "node", "template": {"spec": {"template": {"spec": override["spec"]}}}}]}}}}]
    assert yaml.safe_load(path.read_text())["spec"] == {"runtimeRef": {"name": "torch-distributed"}, "runtimePatches": after}
