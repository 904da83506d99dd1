"""Hypothesis strategies that generate whole ``jobsetctl simulate`` Scenario files, and the properties every
simulation of one must keep (issue #6: "random scenarios ... the invariants hold at every step, the run
terminates, and two runs with the same seed give byte-identical JSON").

Shared by the suite (tests/hardening/test_fuzz_simulate.py, the fixed budget) and the long run
(bench/fuzz_simulate.py). A scenario has node pools (counts 0..4, capacities, labels, taints, 0-2
topology levels), PriorityClasses, JobSets (random replicated jobs, replicas, parallelism, completion
modes, back-off limits, pod failure policies, ``dependsOn`` chains, ``InOrder``, failure and success
policies, priorities, the exclusive-placement annotation, tolerations, node selectors, suspension,
gangs as ``render --gang`` writes them: :func:`jobsetctl.gang.generate`), TrainJobs on built-in runtimes,
plain Jobs, all submitted at random times, and actions (failNode, failPod, delete, suspend/resume) at
random times, on Kubernetes 1.35, 1.36 or 1.37, always with an ``until`` bound.
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

from jobsetctl.gang import GangMode, GangOptions, generate
from jobsetctl.gang import needed_gates as gang_gates
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import KubeVersion
from jobsetctl.simulate.command import OutputOptions, SimulateOutcome, execute
from jobsetctl.simulate.report import is_allowed
from jobsetctl.simulate.runner import SimulateOptions
from jobsetctl.status import UsageError

VERSIONS = ("1.35", "1.36", "1.37")
BLOCK, RACK, POOL, HOST = "topology.example.com/block", "topology.example.com/rack", "pool", "kubernetes.io/hostname"
EXCLUSIVE = "alpha.jobset.sigs.k8s.io/exclusive-topology"
PRIORITIES = {"low": 10, "mid": 100, "high": 1000}
NAMESPACES = ("default", "team")
DURATIONS = ("10s", "90s", "5m", "30m", "1h", "2h")
TIMES = (0, 30, 60, 600, 1800, 3600, 7200)
TAINT = "dedicated"
#: Documented stop reasons (jobsetctl.simulate.runner); "limit" only past MAX_EVENTS, far beyond these scenarios.
STOP_REASONS = {"until", "done", "idle", "horizon", "limit"}


@dataclass(slots=True)
class Case:
    """One generated scenario: the document, and what is needed to judge its run."""

    document: dict[str, Any]
    version: str
    until: float
    #: One line per generated workload, for failure reports.
    notes: list[str] = field(default_factory=list)

    def text(self) -> str:
        header = "".join(f"# {note}\n" for note in self.notes)
        return header + yaml.safe_dump(self.document, sort_keys=False, width=120)


# ---- nodes ---------------------------------------------------------------------------------------------


@st.composite
def node_pools(draw: st.DrawFn) -> list[dict[str, Any]]:
    pools: list[dict[str, Any]] = []
    offset = 0
    for i in range(draw(st.integers(1, 3))):
        capacity: dict[str, Any] = {"cpu": draw(st.sampled_from(["2", "4", "8"])),
                                    "memory": draw(st.sampled_from(["8Gi", "32Gi", "128Gi"]))}
        if draw(st.booleans()):
            capacity["nvidia.com/gpu"] = draw(st.sampled_from(["1", "4", "8"]))
        if draw(st.integers(0, 4)) == 0:
            capacity["pods"] = draw(st.sampled_from(["1", "3", "8"]))
        pool: dict[str, Any] = {"name": f"p{i}", "count": draw(st.integers(0 if i else 1, 4)),
                                "capacity": capacity, "labels": {POOL: f"p{i}"}}
        if draw(st.integers(0, 3)) == 0:
            effect = draw(st.sampled_from(["NoSchedule", "NoExecute", "PreferNoSchedule"]))
            pool["taints"] = [{"key": TAINT, "value": f"p{i}", "effect": effect}]
        levels = draw(st.integers(0, 2))
        if levels:
            blocks = draw(st.integers(1, 2))
            pool["topology"] = [{"key": BLOCK, "count": blocks}]
            if levels == 2:
                pool["topology"].append({"key": RACK, "count": draw(st.integers(1, 3))})
            pool["topologyOffset"] = offset
            offset += blocks
        pools.append(pool)
    return pools


# ---- pod templates -------------------------------------------------------------------------------------


@st.composite
def pod_template(draw: st.DrawFn, *, never_restart: bool = False) -> dict[str, Any]:
    # Now and then no duration: the pod runs until the end and holds its node (contention, preemption).
    annotations = {"jobsetctl.dev/duration": draw(st.sampled_from(DURATIONS))} if draw(st.integers(0, 7)) else {}
    if draw(st.integers(0, 3)) == 0:
        annotations["jobsetctl.dev/ready-after"] = draw(st.sampled_from(["0s", "20s", "5m"]))
    if draw(st.integers(0, 3)) == 0:
        annotations["jobsetctl.dev/fail-after"] = draw(st.sampled_from(["5s", "1m", "10m"]))
        if draw(st.booleans()):
            annotations["jobsetctl.dev/fail-attempts"] = str(draw(st.integers(1, 2)))
    requests: dict[str, Any] = {"cpu": draw(st.sampled_from(["100m", "500m", "1", "2", "4", "8"]))}
    resources: dict[str, Any] = {"requests": requests}
    if draw(st.integers(0, 3)) == 0:
        resources["limits"] = {"nvidia.com/gpu": draw(st.sampled_from(["1", "4"]))}
    spec: dict[str, Any] = {
        "restartPolicy": "Never" if never_restart else draw(st.sampled_from(["Never", "Never", "OnFailure"])),
        "containers": [{"name": "main", "image": "busybox", "resources": resources}],
    }
    if draw(st.booleans()):
        spec["terminationGracePeriodSeconds"] = draw(st.sampled_from([0, 5, 30]))
    choice = draw(st.integers(0, 3))
    if choice == 1:
        spec["tolerations"] = [{"key": TAINT, "operator": "Exists"}]
    elif choice == 2:
        spec["tolerations"] = [{"operator": "Exists", "effect": draw(st.sampled_from(["NoSchedule", "NoExecute"]))}]
    if draw(st.integers(0, 4)) == 0:
        spec["nodeSelector"] = {POOL: f"p{draw(st.integers(0, 2))}"}
    if draw(st.booleans()):
        spec["priorityClassName"] = draw(st.sampled_from(sorted(PRIORITIES)))
    return {"metadata": {"annotations": annotations}, "spec": spec}


@st.composite
def job_spec(draw: st.DrawFn, *, in_jobset: bool = False) -> dict[str, Any]:
    """A Job spec. In a JobSet an unset completion mode is defaulted to Indexed (jobset.md §1.3), which then
    needs ``completions``: such Jobs are refused upstream too, so we mostly say NonIndexed explicitly."""
    parallelism = draw(st.integers(1, 3))
    spec: dict[str, Any] = {"parallelism": parallelism}
    completions = draw(st.sampled_from([parallelism, parallelism, parallelism + 1, None]))
    indexed = draw(st.booleans())
    if indexed:
        spec["completionMode"] = "Indexed"
        completions = completions or parallelism
    elif in_jobset and completions is None and draw(st.integers(0, 5)):
        spec["completionMode"] = "NonIndexed"
    if completions is not None:
        spec["completions"] = completions
    per_index = indexed and draw(st.integers(0, 4)) == 0
    failure_policy = draw(st.integers(0, 4)) == 0
    if per_index:
        spec["backoffLimitPerIndex"] = draw(st.integers(0, 2))
    elif draw(st.integers(0, 3)):
        spec["backoffLimit"] = draw(st.integers(0, 3))
    if failure_policy:
        rule = draw(st.sampled_from([
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
            {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1]}},
            {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [0]}},
        ]))
        spec["podFailurePolicy"] = {"rules": [rule]}
    spec["template"] = draw(pod_template(never_restart=per_index or failure_policy))
    return spec


# ---- workloads -----------------------------------------------------------------------------------------


@st.composite
def jobset(draw: st.DrawFn, name: str, namespace: str, version: str) -> tuple[list[dict[str, Any]], list[str], str]:
    """A JobSet, possibly with its gang objects (``render --gang``); its notes; the gang mode used."""
    rjobs: list[dict[str, Any]] = []
    count = draw(st.integers(1, 3))
    any_depends = False
    for k in range(count):
        rjob: dict[str, Any] = {"name": f"r{k}", "replicas": draw(st.integers(1, 3)),
                                "template": {"spec": draw(job_spec(in_jobset=True))}}
        if k and draw(st.integers(0, 2)) == 0:
            depends = sorted({draw(st.integers(0, k - 1)) for _ in range(draw(st.integers(1, 2)))})
            rjob["dependsOn"] = [{"name": f"r{j}", "status": draw(st.sampled_from(["Ready", "Complete"]))}
                                 for j in depends]
            any_depends = True
        rjobs.append(rjob)
    spec: dict[str, Any] = {"replicatedJobs": rjobs}
    if not any_depends and count > 1 and draw(st.integers(0, 4)) == 0:
        spec["startupPolicy"] = {"startupPolicyOrder": "InOrder"}
    if draw(st.booleans()):
        policy: dict[str, Any] = {"maxRestarts": draw(st.integers(0, 3))}
        if draw(st.integers(0, 2)) == 0:
            policy["restartStrategy"] = "BlockingRecreate"
        if draw(st.integers(0, 2)) == 0:
            policy["rules"] = [{"name": "rule0", "action": draw(st.sampled_from(
                ["FailJobSet", "RestartJobSet", "RestartJobSetAndIgnoreMaxRestarts"])),
                "onJobFailureReasons": [draw(st.sampled_from(["BackoffLimitExceeded", "PodFailurePolicy"]))],
                "targetReplicatedJobs": [f"r{draw(st.integers(0, count - 1))}"]}]
        spec["failurePolicy"] = policy
    if draw(st.integers(0, 2)) == 0:
        success: dict[str, Any] = {"operator": draw(st.sampled_from(["All", "Any"]))}
        if draw(st.booleans()):
            success["targetReplicatedJobs"] = [f"r{count - 1}"]
        spec["successPolicy"] = success
    if draw(st.integers(0, 9)) == 0:
        spec["suspend"] = True
    if draw(st.integers(0, 9)) == 0:
        spec["ttlSecondsAfterFinished"] = draw(st.sampled_from([0, 600]))
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if draw(st.integers(0, 5)) == 0:
        metadata["annotations"] = {EXCLUSIVE: draw(st.sampled_from([BLOCK, RACK, POOL, HOST]))}
    obj = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": metadata, "spec": spec}
    notes = [f"JobSet {namespace}/{name}: {count} replicated job(s)"]
    mode = draw(st.sampled_from(["none", "none", "jobset", "replicatedjob", "job"]))
    if mode == "none":
        return [obj], notes, mode
    kube = KubeVersion.parse(version)
    topology = (draw(st.sampled_from([(), (BLOCK,), (RACK,), (BLOCK, RACK)])) if kube.minor >= 36 else ())
    options = GangOptions(
        GangMode(mode), topology,
        draw(st.sampled_from([None, "low", "high"])) if kube.minor >= 36 else None,
        draw(st.sampled_from([None, "single", "all"])) if kube.minor >= 36 else None,
    )
    try:
        generated = generate([obj], options, kube)
    except UsageError:  # a combination --gang refuses (a release, a priority disagreement, dependsOn ...)
        return [obj], notes, "none"
    notes.append(f"  gang {mode} topology={','.join(topology) or '-'} priority={options.priority_class} "
                 f"disruption={options.disruption}")
    return generated.objects, notes, ",".join(gang_gates(options, kube))


@st.composite
def trainjob(draw: st.DrawFn, name: str, namespace: str) -> dict[str, Any]:
    runtime = draw(st.sampled_from(["torch-distributed", "jax-distributed", "torch-distributed-with-cache"]))
    trainer: dict[str, Any] = {"numNodes": draw(st.integers(1, 3)), "image": "busybox",
                               "resourcesPerNode": {"requests": {"cpu": draw(st.sampled_from(["1", "2"]))}}}
    # Every replicated job of the runtime gets a run time (a pod without one runs until the end, and an
    # initializer that never ends keeps the dependsOn stage after it from ever starting).
    stages = (["dataset-initializer"] if runtime.endswith("-with-cache") else []) + ["node"]
    patched = [{"name": stage, "template": {"spec": {"template": {"metadata": {"annotations": {
        "jobsetctl.dev/duration": draw(st.sampled_from(DURATIONS))}}}}}} for stage in stages]
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"runtimeRef": {"name": runtime}, "trainer": trainer,
                     **({"suspend": True} if draw(st.integers(0, 9)) == 0 else {}),
                     "runtimePatches": [{"manager": "jobsetctl.dev/fuzz", "trainingRuntimeSpec": {"template": {
                         "spec": {"replicatedJobs": patched}}}}]}}


@st.composite
def plain_job(draw: st.DrawFn, name: str, namespace: str) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": namespace},
            "spec": draw(job_spec())}


# ---- actions -------------------------------------------------------------------------------------------


@st.composite
def action(draw: st.DrawFn, pools: list[dict[str, Any]], targets: list[tuple[str, str, str]]) -> dict[str, Any]:
    at = f"{draw(st.sampled_from((*TIMES[1:], 5400, 10800)))}s"
    verbs = ["failNode"] + (["failPod", "delete", "suspend", "resume"] if targets else [])
    verb = draw(st.sampled_from(verbs))
    if verb == "failNode":
        pool = draw(st.sampled_from(pools))
        return {"at": at, "failNode": f"{pool['name']}-{draw(st.integers(0, max(pool['count'] - 1, 0)))}"}
    kind, namespace, name = draw(st.sampled_from(targets))
    if verb == "failPod":
        return {"at": at, "failPod": {"namespace": namespace, "namePrefix": f"{name}-"}}
    if verb in ("suspend", "resume") and kind not in ("JobSet", "TrainJob", "Job"):
        verb = "delete"
    if verb == "delete" and draw(st.integers(0, 5)) == 0:
        pool = draw(st.sampled_from(pools))  # a node goes away with its pods
        return {"at": at, "delete": {"kind": "Node", "name": f"{pool['name']}-0"}}
    return {"at": at, verb: {"kind": kind, "namespace": namespace, "name": name}}


# ---- scenarios -----------------------------------------------------------------------------------------


@st.composite
def scenarios(draw: st.DrawFn, *, max_workloads: int = 4) -> Case:
    version = draw(st.sampled_from(VERSIONS))
    pools = draw(node_pools())
    priority_classes: list[dict[str, Any]] = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value,
         **({"preemptionPolicy": "Never"} if name == "mid" and draw(st.booleans()) else {})}
        for name, value in PRIORITIES.items()]
    submissions: dict[int, list[dict[str, Any]]] = {0: list(priority_classes)}
    targets: list[tuple[str, str, str]] = []
    notes = [f"Kubernetes {version}; pools " + ", ".join(f"{p['name']}x{p['count']}" for p in pools)]
    gates: set[str] = set()
    for i in range(draw(st.integers(1, max_workloads))):
        namespace = draw(st.sampled_from(NAMESPACES))
        kind = draw(st.sampled_from(["JobSet", "JobSet", "JobSet", "TrainJob", "Job"]))
        if kind == "JobSet":
            name = f"js{i}"
            objects, more, needed = draw(jobset(name, namespace, version))
            notes += more
            gates.update(g for g in needed.split(",") if g and g != "none")
        elif kind == "TrainJob":
            name = f"tj{i}"
            objects = [draw(trainjob(name, namespace))]
            notes.append(f"TrainJob {namespace}/{name} on {objects[0]['spec']['runtimeRef']['name']}")
        else:
            name = f"job{i}"
            objects = [draw(plain_job(name, namespace))]
            notes.append(f"Job {namespace}/{name}")
        targets.append((kind, namespace, name))
        submissions.setdefault(draw(st.sampled_from(TIMES)), []).extend(objects)
    actions = [draw(action(pools, targets)) for _ in range(draw(st.integers(0, 4)))]
    for deleted in [a for a in actions if a.get("delete", {}).get("kind") == "Node"]:
        if draw(st.booleans()):  # the node comes back: within PodGC's quarantine, or later
            name = deleted["delete"]["name"]
            pool = next(p for p in pools if name.startswith(f"{p['name']}-"))
            at = int(deleted["at"].rstrip("s")) + draw(st.sampled_from([10, 30, 600]))
            submissions.setdefault(at, []).append({
                "apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": dict(pool["labels"])},
                "status": {"capacity": dict(pool["capacity"])}})
    until = draw(st.sampled_from([4 * 3600, 8 * 3600, 12 * 3600]))
    spec: dict[str, Any] = {"kubernetesVersion": version, "until": f"{until}s", "nodes": pools,
                            "submit": [{"at": f"{at}s", "objects": objects}
                                       for at, objects in sorted(submissions.items())]}
    known = parse_feature_gates({}, KubeVersion.parse(version)).known()
    if gates & set(known):
        spec["featureGates"] = {gate: True for gate in sorted(gates & set(known))}
    if actions:
        spec["actions"] = actions
    document = {"apiVersion": "jobsetctl.dev/v1alpha1", "kind": "Scenario", "metadata": {"name": "fuzz"}, "spec": spec}
    return Case(document, version, float(until), notes)


# ---- the properties ------------------------------------------------------------------------------------


@dataclass(slots=True)
class Run:
    json: str
    outcome: SimulateOutcome

    @property
    def checks(self) -> int:
        result = self.outcome.result
        return (result.invariant_checks or 0) if result is not None else 0


def simulate_json(path: str | Path, seed: int, version: str | None = None) -> Run:
    """``jobsetctl simulate PATH -o json --seed SEED``, through the package function the CLI calls."""
    out = io.StringIO()
    outcome = execute(SimulateOptions([str(path)], seed=seed, kubernetes_version=version), OutputOptions("json"), out)
    return Run(out.getvalue(), outcome)


def write_case(directory: str | Path, case: Case, name: str = "scenario.yaml") -> Path:
    path = Path(directory) / name
    path.write_text(case.text(), encoding="utf-8")
    return path


def case_from_file(path: str | Path) -> Case:
    """A Scenario file written by hand or kept from a fuzz run (tests/corpus/scenario-*.yaml)."""
    from jobsetctl.kube.duration import parse_duration
    from jobsetctl.kube.versions import DEFAULT_KUBE_VERSION

    document = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    spec = document["spec"]
    return Case(document, str(spec.get("kubernetesVersion") or DEFAULT_KUBE_VERSION.value),
                parse_duration(spec["until"]))


def check_case(path: str | Path, case: Case, seed: int, *, version_option: bool = False) -> Run:
    """Run twice with one seed and check every property; returns the first run. Invariant violations
    raise from inside the run (tests/conftest.py, or the caller, sets JOBSETCTL_CHECK_INVARIANTS)."""
    assert os.environ.get("JOBSETCTL_CHECK_INVARIANTS"), "the invariant checker must be on"
    version = case.version if version_option else None
    first = simulate_json(path, seed, version)
    outcome = first.outcome
    assert outcome.report is None, [d.message for d in outcome.report.diagnostics]
    result = outcome.result
    assert result is not None
    assert result.stop_reason in STOP_REASONS, result.stop_reason
    assert result.end_time <= case.until, (result.end_time, case.until)
    assert first.checks > 0, "the invariant checker executed no check"
    document = json.loads(first.json)
    assert document["summary"]["kubernetesVersion"] == case.version
    for event in document["events"]:
        assert event["time"] <= case.until and is_allowed(event["kind"], event["event"]), event
    second = simulate_json(path, seed, version)
    assert first.json == second.json, "two runs with the same seed differ"
    return first
