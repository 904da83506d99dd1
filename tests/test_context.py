"""The context and the unseen cluster (issue #10, jobsetctl/context.py).

pre-commit passes only the changed files: a TrainJob edited alone misses its runtime in an unchanged file,
``samples/valid/gang-1.37.yaml`` alone misses its PriorityClass. The context (``--context``, ``context:``,
by default in the hook the repository's manifests) is resolved against and never reported; a reference to a
cluster-scoped object that is nowhere is a warning with a hint (the cluster may hold it) unless ``--strict``
or unless the name is a slip of a known one.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from jobsetctl.cli.app import run
from jobsetctl.context import did_you_mean, repository_manifests
from jobsetctl.status import ExitStatus
from tests.helpers import SAMPLES, dedent, validate_files

RUNTIME = """
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainingRuntime
    metadata: {name: team-torch, namespace: team-a}
    spec:
      mlPolicy: {numNodes: 1, torch: {}}
      template:
        spec:
          replicatedJobs:
          - name: node
            template:
              metadata:
                labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
              spec:
                template:
                  spec:
                    containers:
                    - {name: node, image: registry.example.com/torch:2}
    """
TRAINJOB = """
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata: {name: mnist, namespace: team-a}
    spec:
      runtimeRef: {name: RUNTIME, kind: KIND}
      trainer: {numNodes: 2}
    """


def trainjob(name: str = "team-torch", kind: str = "TrainingRuntime") -> str:
    return TRAINJOB.replace("RUNTIME", name).replace("KIND", kind)


def command(name: str, args: list[str], cwd: Path | None = None) -> tuple[int, str, str]:
    """``jobsetctl <name> <args>`` in-process (in ``cwd``): exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.ExitStack() as stack:
        if cwd is not None:
            stack.enter_context(contextlib.chdir(cwd))
        stack.enter_context(contextlib.redirect_stdout(out))
        stack.enter_context(contextlib.redirect_stderr(err))
        status = run([name, *args])
    return status, out.getvalue(), err.getvalue()


def cli(args: list[str], cwd: Path | None = None) -> tuple[int, list[dict[str, Any]], str]:
    status, text, err = command("validate", ["-o", "json", *args], cwd)
    return status, (json.loads(text)["diagnostics"] if text else []), err


def write(base: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = base / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text))


def brief(diagnostics: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(d["rule"], d["severity"]) for d in diagnostics if d["severity"] != "info"]


# --- the context ---------------------------------------------------------------------------------------


def test_a_trainjob_alone_misses_its_namespaced_runtime(tmp_path: Path) -> None:
    write(tmp_path, {"jobs/trainjob.yaml": trainjob()})
    status, found, _ = cli([str(tmp_path / "jobs/trainjob.yaml")])
    assert status == ExitStatus.FINDINGS
    assert brief(found) == [("trainjob-runtime-not-found", "error")]  # namespaced: stays an error


def test_context_resolves_without_reporting(tmp_path: Path) -> None:
    broken = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [x]}\n---\na: [\n"
    write(tmp_path, {"jobs/trainjob.yaml": trainjob(), "platform/runtime.yaml": RUNTIME, "platform/broken.yaml": broken})
    status, found, _ = cli(["--context", str(tmp_path / "platform"), str(tmp_path / "jobs/trainjob.yaml")])
    assert (status, found) == (ExitStatus.SUCCESS, [])


def test_context_from_the_configuration_relative_to_it(tmp_path: Path) -> None:
    write(tmp_path, {"jobs/trainjob.yaml": trainjob(), "platform/runtime.yaml": RUNTIME,
                     ".jobsetctl.yaml": "context: [platform/]\n"})
    assert cli(["jobs/trainjob.yaml"], cwd=tmp_path)[:2] == (ExitStatus.SUCCESS, [])


def test_an_explicit_context_path_must_exist(tmp_path: Path) -> None:
    write(tmp_path, {"jobs/trainjob.yaml": trainjob()})
    status, _, err = cli(["--context", str(tmp_path / "nowhere"), str(tmp_path / "jobs/trainjob.yaml")])
    assert status == ExitStatus.USAGE
    assert err == f"jobsetctl: error: context: {tmp_path / 'nowhere'}: no such file or directory\n"


def test_inputs_win_over_the_context(tmp_path: Path) -> None:
    """An object both edited and in the context is checked as edited (and not called a duplicate)."""
    write(tmp_path, {"a.yaml": RUNTIME.replace("numNodes: 1", "numNodes: 0"), "b.yaml": RUNTIME})
    diagnostics = validate_files(tmp_path, {}, paths=[str(tmp_path / "a.yaml")], context=[str(tmp_path)])
    assert [d.rule for d in diagnostics if d.rule == "duplicate-object"] == []


def test_the_hook_takes_the_repositorys_manifests_as_context(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    write(tmp_path, {"jobs/trainjob.yaml": trainjob(), "platform/runtime.yaml": RUNTIME,
                     "untracked/runtime.yaml": RUNTIME.replace("team-torch", "untracked")})
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "jobs", "platform"], cwd=tmp_path, check=True)
    assert sorted(Path(p).relative_to(tmp_path).as_posix() for p in repository_manifests(str(tmp_path))) == [
        "jobs/trainjob.yaml", "platform/runtime.yaml"]
    assert cli(["--pre-commit", "jobs/trainjob.yaml"], cwd=tmp_path)[:2] == (ExitStatus.SUCCESS, [])
    # Without --pre-commit there is no default context; an explicit one replaces the repository's.
    assert brief(cli(["jobs/trainjob.yaml"], cwd=tmp_path)[1]) == [("trainjob-runtime-not-found", "error")]
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing\n")
    found = cli(["--pre-commit", "--context", str(empty), "jobs/trainjob.yaml"], cwd=tmp_path)[1]
    assert brief(found) == [("trainjob-runtime-not-found", "error")]


def test_outside_a_git_repository_there_is_no_repository_context(tmp_path: Path) -> None:
    assert repository_manifests(str(tmp_path)) == []


# --- cluster-scoped references: the cluster may hold them ----------------------------------------------


def test_gang_sample_alone_warns_about_its_priority_class(tmp_path: Path) -> None:
    sample = str(SAMPLES / "valid" / "gang-1.37.yaml")
    status, found, _ = cli([sample])
    assert status == ExitStatus.SUCCESS
    assert brief(found) == [("podgroup-priority", "warning"), ("ref-priority-class", "warning")]
    hint = ('PriorityClass "training-high" is cluster-scoped and in neither the inputs nor the context: the cluster '
            "may hold it. Add the file that defines it to the context (--context PATH, or context: in "
            ".jobsetctl.yaml); --strict makes this an error")
    assert [d["hint"] for d in found] == [hint, hint]
    status, found, _ = cli(["--strict", sample])
    assert status == ExitStatus.FINDINGS
    assert brief(found) == [("podgroup-priority", "error"), ("ref-priority-class", "error")]
    assert all("hint" not in d for d in found)
    # Its PriorityClass in the context: nothing to say.
    assert cli(["--context", str(SAMPLES / "valid" / "priorityclass.yaml"), sample])[:2] == (ExitStatus.SUCCESS, [])


def test_a_missing_cluster_training_runtime_is_a_warning(tmp_path: Path) -> None:
    write(tmp_path, {"trainjob.yaml": trainjob("platform-torch", "ClusterTrainingRuntime")})
    status, found, _ = cli([str(tmp_path / "trainjob.yaml")])
    assert status == ExitStatus.SUCCESS
    assert brief(found) == [("trainjob-runtime-not-found", "warning")]
    assert 'ClusterTrainingRuntime "platform-torch" is cluster-scoped' in found[0]["hint"]


def test_a_check_that_creates_softens_only_what_waits(tmp_path: Path) -> None:
    """render's validate (``creates``): a missing ClusterTrainingRuntime makes the Trainer webhook refuse the
    TrainJob, so it stays an error, with the advice validate gives; a missing LocalQueue only makes the
    Workload wait (``Rule.waits``), a warning as in validate."""
    diagnostics = validate_files(tmp_path, {"t.yaml": trainjob("platform-torch", "ClusterTrainingRuntime")},
                                 unseen_cluster=True, creates=True)
    assert [(d.rule, d.severity) for d in diagnostics] == [("trainjob-runtime-not-found", "error")]
    assert diagnostics[0].hint is not None and diagnostics[0].hint.endswith(
        'ClusterTrainingRuntime "platform-torch" is cluster-scoped and in neither the inputs nor the context: the '
        "cluster may hold it, but here what needs it is refused. Add the file that defines it to the context "
        "(--context PATH, or context: in .jobsetctl.yaml)")
    queued = validate_files(tmp_path, {"q.yaml": QUEUED}, unseen_cluster=True, creates=True)
    assert [(d.rule, d.severity) for d in queued] == [("kueue-local-queue-missing", "warning")]


def test_only_kueue_queue_rules_wait() -> None:
    """The rules whose findings leave everything created and waiting (workload_controller.go
    getQueueBlocker: the Workload exists, QuotaReserved=False with "LocalQueue %s doesn't exist", "ClusterQueue
    %s doesn't exist", or an inactive ClusterQueue). A missing WorkloadPriorityClass is not one: Kueue creates no
    Workload (reconciler.go, ExtractPriority)."""
    from jobsetctl.rules import all_rules

    assert sorted(rule.id for rule in all_rules() if rule.waits) == [
        "kueue-cluster-queue-inactive", "kueue-cluster-queue-missing", "kueue-local-queue-missing"]


# --- did you mean -------------------------------------------------------------------------------------


def test_a_slip_in_a_builtin_runtime_name_stays_an_error_with_did_you_mean(tmp_path: Path) -> None:
    write(tmp_path, {"trainjob.yaml": trainjob("torch-distributd", "ClusterTrainingRuntime")})
    status, found, _ = cli([str(tmp_path / "trainjob.yaml")])
    assert status == ExitStatus.FINDINGS
    assert brief(found) == [("trainjob-runtime-not-found", "error")]
    assert found[0]["hint"] == (
        'did you mean "torch-distributed"? built-in ClusterTrainingRuntimes: torch-distributed, '
        "deepspeed-distributed, mlx-distributed, jax-distributed, xgboost-distributed, torchtune-llama3.2-1b, "
        "torchtune-llama3.2-3b, torchtune-qwen2.5-1.5b, torch-distributed-with-cache; jobsetctl looks runtimes "
        "up among the inputs, the context, --runtimes files and its built-in catalog"
    )


def test_a_slip_in_a_namespaced_runtime_name(tmp_path: Path) -> None:
    write(tmp_path, {"trainjob.yaml": trainjob("team-troch"), "runtime.yaml": RUNTIME})
    found = cli([str(tmp_path)])[1]
    assert brief(found) == [("trainjob-runtime-not-found", "error")]
    assert found[0]["hint"].startswith('did you mean "team-torch"? built-in ClusterTrainingRuntimes: ')


def test_a_slip_in_a_priority_class_name_stays_an_error(tmp_path: Path) -> None:
    text = (SAMPLES / "valid" / "gang-1.37.yaml").read_text().replace("training-high", "training-hihg")
    write(tmp_path, {"gang.yaml": text})
    status, found, _ = cli(["--context", str(SAMPLES / "valid" / "priorityclass.yaml"), str(tmp_path / "gang.yaml")])
    assert status == ExitStatus.FINDINGS
    assert brief(found) == [("podgroup-priority", "error"), ("ref-priority-class", "error")]
    assert [d["hint"] for d in found] == ['did you mean "training-high"?'] * 2


@pytest.mark.parametrize(
    ("name", "known", "expected"),
    [
        ("torch-distributd", ["torch-distributed", "torch-distributed-with-cache", "mlx-distributed"],
         ["torch-distributed"]),
        ("training-mid", ["training-low", "training-high"], []),  # siblings, not slips
        ("anything", [], []),
    ],
)
def test_did_you_mean(name: str, known: list[str], expected: list[str]) -> None:
    assert did_you_mean(name, known) == expected


# --- the context is read as lookups need it ------------------------------------------------------------


def test_a_context_runtime_replaces_the_builtin_of_its_name(tmp_path: Path) -> None:
    """The platform's own torch-distributed wins over the built-in one (here: labelled deprecated)."""
    from jobsetctl.trainer.catalog import builtin_runtime

    runtime = builtin_runtime("torch-distributed")
    assert runtime is not None
    runtime["metadata"]["labels"]["trainer.kubeflow.org/support"] = "deprecated"
    write(tmp_path, {"trainjob.yaml": trainjob("torch-distributed", "ClusterTrainingRuntime"),
                     "platform/ctr.json": json.dumps(runtime)})
    found = cli(["--context", str(tmp_path / "platform"), str(tmp_path / "trainjob.yaml")])[1]
    assert brief(found) == [("trainjob-runtime-deprecated", "warning")]
    assert brief(cli([str(tmp_path / "trainjob.yaml")])[1]) == []


def test_only_files_that_may_hold_what_is_looked_up_are_parsed(tmp_path: Path) -> None:
    from jobsetctl.context import ClusterIndex, ContextFiles
    from jobsetctl.kinds.interface import AdmissionContext
    from jobsetctl.kube.featuregates import parse_feature_gates
    from jobsetctl.kube.versions import KubeVersion
    from jobsetctl.loader.sources import discover

    write(tmp_path, {
        "runtime.yaml": RUNTIME,
        "other-runtime.yaml": RUNTIME.replace("team-torch", "team-jax"),
        "priority.yaml": "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 10\n",
        "ci.yml": "name: ci\non: [push]\n",
    })
    version = KubeVersion.parse("1.37")
    files = ContextFiles(discover([str(tmp_path)])[0], AdmissionContext(version, parse_feature_gates(None, version)))
    index = ClusterIndex(files)
    assert index.get("trainer.kubeflow.org", "TrainingRuntime", "team-a", "team-torch") is not None
    assert len(files.index) == 1  # runtime.yaml only: other-runtime.yaml does not name team-torch
    assert [o["metadata"]["name"] for o in index.list("scheduling.k8s.io", "PriorityClass")] == ["high"]
    assert len(files.index) == 2
    assert index.get("trainer.kubeflow.org", "TrainingRuntime", "team-a", "missing") is None
    assert len(files.index) == 2
    assert len(index.list("trainer.kubeflow.org", "TrainingRuntime")) == 2


# --- render and simulate: the same context, the same unseen cluster -----------------------------------

QUEUED = """
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: finetune
      labels: {kueue.x-k8s.io/queue-name: team-b}
    spec:
      runtimeRef: {name: torch-distributed}
      trainer: {numNodes: 2, image: registry.example.com/ft:1}
    """
#: The queues of team-b, as the platform team keeps them.
QUEUES = SAMPLES / "valid" / "kueue-teams.yaml"
NODES = """
    apiVersion: v1
    kind: Node
    metadata: {name: node-0}
    status:
      capacity: {cpu: "64", memory: 256Gi, pods: "110"}
      allocatable: {cpu: "64", memory: 256Gi, pods: "110"}
    """
LOCAL_QUEUE_WARNING = "warning LocalQueue team-b doesn't exist  [consequence/kueue-local-queue-missing]"


def kinds(stream: str) -> list[str]:
    return [line.removeprefix("kind: ") for line in stream.splitlines() if line.startswith("kind: ")]


def test_render_goes_on_past_a_local_queue_the_cluster_may_hold(tmp_path: Path) -> None:
    """Kueue's own behaviour: the job is suspended and its Workload created, then it waits
    (workload_controller.go getQueueBlocker: "LocalQueue %s doesn't exist", Misconfigured). render prints that,
    and on stderr what validate says: a warning, an error with --strict."""
    write(tmp_path, {"finetune.yaml": QUEUED})
    job = str(tmp_path / "finetune.yaml")
    status, out, err = command("render", [job])
    assert status == ExitStatus.SUCCESS, err
    assert kinds(out) == ["TrainJob", "ConfigMap", "JobSet", "Workload", "Service", "Job"]
    assert LOCAL_QUEUE_WARNING in err and "--strict makes this an error" in err
    _, found, _ = cli([job])
    assert brief(found) == [("kueue-local-queue-missing", "warning")]
    assert found[0]["hint"] in err.replace("\n         ", " ")
    status, out, err = command("render", ["--strict", job])
    assert status == ExitStatus.FINDINGS
    assert "error   LocalQueue team-b doesn't exist" in err and kinds(out)[3] == "Workload"
    # The queues in the context: nothing to say, and nothing of the context printed.
    status, out, err = command("render", ["--context", str(QUEUES), job])
    assert (status, kinds(out)) == (ExitStatus.SUCCESS, ["TrainJob", "ConfigMap", "JobSet", "Workload", "Service", "Job"])
    assert "warning" not in err
    # ... or in the configuration's context:, relative to it.
    shutil.copy(QUEUES, tmp_path / "queues.yaml")
    (tmp_path / ".jobsetctl.yaml").write_text("context: [queues.yaml]\n")
    status, _, err = command("render", ["finetune.yaml"], cwd=tmp_path)
    assert status == ExitStatus.SUCCESS and "warning" not in err


def test_render_keeps_an_error_where_the_missing_object_refuses_a_creation(tmp_path: Path) -> None:
    """The Priority admission plugin refuses pods and pod groups of a PriorityClass it does not know
    (plugin/pkg/admission/priority: "no PriorityClass with name %v was found"): validate warns (the cluster may
    hold it), render cannot create what needs it and says where to put it. In the context, the class is
    created first and not printed."""
    sample = str(SAMPLES / "valid" / "gang-1.37.yaml")
    _, found, _ = cli([sample])
    assert brief(found) == [("podgroup-priority", "warning"), ("ref-priority-class", "warning")]
    status, out, err = command("render", [sample])
    assert (status, out) == (ExitStatus.FINDINGS, "")  # the PodGroup is refused at admission: nothing rendered
    assert "error   podgroups.scheduling.k8s.io \"llm-pretrain-workers\" is forbidden" in err
    assert err.count("but here what needs it is refused. Add the file that defines it to the context") == 2
    status, out, err = command("render", ["--pods", "--context", str(SAMPLES / "valid" / "priorityclass.yaml"), sample])
    assert status == ExitStatus.SUCCESS, err
    assert "PriorityClass" not in kinds(out) and kinds(out).count("Pod") == 8


def test_render_runs_no_workload_of_the_context(tmp_path: Path) -> None:
    """The context's JobSets are looked up, never created: only its cluster objects are (CLUSTER_KINDS)."""
    write(tmp_path, {"finetune.yaml": QUEUED})
    status, out, _ = command("render", ["--context", str(QUEUES), str(tmp_path / "finetune.yaml")])
    assert status == ExitStatus.SUCCESS
    assert "pretrain" not in out and "evaluate" not in out


def test_simulate_holds_a_queued_job_without_its_queues(tmp_path: Path) -> None:
    """Without a ClusterQueue among the inputs simulate ran a queued job at once, as if Kueue were not there,
    where render shows it suspended with its Workload. Kueue now runs for it: the job waits, and stderr says
    why before the run (no --strict in simulate); with the queues in the context, no warning."""
    write(tmp_path, {"finetune.yaml": QUEUED, "nodes.yaml": NODES})
    args = [str(tmp_path / "finetune.yaml"), "--nodes", str(tmp_path / "nodes.yaml"), "-o", "json"]
    status, out, err = command("simulate", args)
    assert status == ExitStatus.SUCCESS, err
    final = {(f["kind"], f["name"]): f["state"] for f in json.loads(out)["final"]}
    assert final[("TrainJob", "finetune")] == "Suspended"
    assert LOCAL_QUEUE_WARNING in err and "--strict" not in err
    status, out, err = command("simulate", [*args, "--context", str(QUEUES)])
    assert status == ExitStatus.SUCCESS and "warning" not in err, err
    events = json.loads(out)["events"]
    assert {e["kind"] for e in events if e["event"] == "Created"} >= {"LocalQueue", "ClusterQueue"}
    assert not [e for e in events if e.get("name") in ("pretrain", "evaluate")]
