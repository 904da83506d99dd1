"""Conformance over the upstream examples and runtimes: ``validate`` gives exactly what the spec predicts.

Data: ``../shared/upstream`` (README there), read in place and never copied; the module skips when it
is absent. Each example directory is validated as one input, the way ``kubectl apply -f <dir>/``
creates it (a TrainJob finds the runtime defined next to it), and the result is compared per file:
the (severity, rule) pairs of its diagnostics, notes included. Every expectation cites the spec.

What the spec predicts:

* JobSet examples are accepted, except the ones that use a feature-gated field with its gate off
  (jobset.md, feature gate table; §2.2 #1 InPlaceRestart, #12 RestartJob); with the gate on they are
  accepted too. ``startupPolicy: InOrder`` is accepted but deprecated (jobset.md §1.2): a note.
* The workload-aware-scheduling examples target Kubernetes 1.36 (``scheduling.k8s.io/v1alpha2``,
  scheduling.md §1.1): accepted on 1.36 with the feature gates their ``kind.yaml`` cluster turns on,
  and ``no matches for kind`` for their Workload and PodGroup objects on 1.37, which serves only
  v1beta1/v1alpha3 (the JobSets themselves are accepted).
* Trainer examples are accepted, except ``05-multi-step.yaml``, whose dataset-initializer container has
  no ``initializer`` volumeMount (trainer.md §3.16 #8, rejected by J3 of §2.4). The shipped runtimes are
  accepted.
* Other kinds (RBAC, an Argo Workflow, Prometheus objects, the kind cluster config, a
  ResourceClaimTemplate) are passed over with an ``unknown-kind`` note each and no error
  (shared/upstream/README.md). Kueue's kinds are checked (scheduling.md §2.1): the tpu-multislice
  ResourceFlavor, ClusterQueue and LocalQueue are accepted.
* Example files of one directory that reuse an object name (``js`` in ``failure-policy/`` and
  ``in-place-restart/``, the TrainJob ``lammps-flux`` in ``flux/``) define it twice in the directory as
  one input: ``duplicate-object``, a warning on the later file (``kubectl create`` refuses it, ``apply``
  keeps the last).
* None of this depends on the Kubernetes release for the JobSet and Trainer examples: the same on 1.35,
  1.36 and 1.37.
* Kueue examples (scheduling.md §2): every Kueue object, at either served version, is admitted, except
  ``admin/minimal-cq.yaml``, which Kueue's ClusterQueue webhook at the snapshot refuses (its onFlavors
  names a flavor the queue does not have); the kinds jobsetctl does not model are passed over; setup files
  of one directory that define the same queues are alternatives, so the directory defines them twice
  (``duplicate-object``). After admission (the consequence layer): the ``jobs/`` examples, validated alone,
  name a LocalQueue no file of their directory defines; with the administrator's setup they name as
  context, the three TAS JobSets find no TAS flavor behind it. The Trainer's Kueue example names a
  LocalQueue its comment says must exist in the cluster.
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import KubeVersion
from jobsetctl.loader.yamlload import load_documents
from jobsetctl.validate import ValidateOptions, check
from tests.helpers import UPSTREAM, requires_upstream

pytestmark = requires_upstream

JOBSET_EXAMPLES = UPSTREAM / "jobset" / "examples"
WAS = JOBSET_EXAMPLES / "workload-aware-scheduling"
TRAINER = UPSTREAM / "trainer"

Found = tuple[tuple[str, str], ...]
Layered = tuple[tuple[str, str, str], ...]
CLEAN: Found = ()
ERROR, WARNING, INFO = "error", "warning", "info"


def passed_over(documents: int) -> Found:
    """Every document is a kind jobsetctl does not check (shared/upstream/README.md)."""
    return ((INFO, "unknown-kind"),) * documents


@dataclass(frozen=True, slots=True)
class Expected:
    found: Found
    why: str


GATE_RESTART_JOB = "jobset.md feature gates, §2.2 #12: RestartJob actions need the RestartJob gate (off by default)"
GATE_IN_PLACE = "jobset.md feature gates, §2.2 #1: InPlaceRestart needs its gate (off by default)"
ACCEPTED = "jobset.md §2.2 / trainer.md §2.4: an upstream example upstream admission accepts"
README = "shared/upstream/README.md: other kinds are passed over without errors"
DUPLICATE = (WARNING, "duplicate-object")
REDEFINES = "another file of the directory defines the same object first: the directory defines it twice"

#: Files whose result is not CLEAN under default options (Kubernetes 1.37, no gates), relative to UPSTREAM.
DEFAULT: dict[str, Expected] = {
    "jobset/examples/argo-workflow/rbac.yaml": Expected(passed_over(3), README),
    "jobset/examples/argo-workflow/workflow.yaml": Expected(passed_over(1), README),
    "jobset/examples/failure-policy/restartjob-action.yaml": Expected(((ERROR, "jobset-restart-job-gate"),),
                                                                      GATE_RESTART_JOB),
    "jobset/examples/failure-policy/restartjobandignoremaxrestarts-action.yaml": Expected(
        ((ERROR, "jobset-restart-job-gate"), DUPLICATE), f"{GATE_RESTART_JOB}; {REDEFINES}"),
    "jobset/examples/in-place-restart/jobset-main-container-mode.yaml": Expected(
        ((ERROR, "jobset-inplace-restart-gate"),), GATE_IN_PLACE),
    "jobset/examples/in-place-restart/jobset-sidecar-container-mode.yaml": Expected(
        ((ERROR, "jobset-inplace-restart-gate"), DUPLICATE), f"{GATE_IN_PLACE}; {REDEFINES}"),
    "jobset/examples/in-place-restart/service-account.yaml": Expected(passed_over(5), README),
    "jobset/examples/prometheus-operator/prometheus.yaml": Expected(passed_over(5), README),
    "jobset/examples/startup-policy/startup-driver-ready.yaml": Expected(
        ((INFO, "jobset-startup-in-order"),), "jobset.md §1.2: startupPolicy is deprecated in favour of dependsOn"),
    "trainer/examples/flux/lammps-train-job.yaml": Expected((DUPLICATE,), REDEFINES),
    # The example's own comment: "A LocalQueue named training-queue in the target namespace" is a prerequisite
    # in the cluster. Validated alone (no unseen cluster here), its Workload would wait: a consequence error.
    "trainer/examples/yaml/03-kueue-integration.yaml": Expected(
        ((ERROR, "kueue-local-queue-missing"),), "scheduling.md §2.1: the TrainJob's LocalQueue is not among the inputs"),
    "trainer/examples/yaml/05-multi-step.yaml": Expected(
        ((ERROR, "trainjob-initializer-volume-mount-missing"),),
        "trainer.md §3.16 #8, §2.4 J3: the dataset-initializer container has no initializer volumeMount"),
}

#: With the gate each of them needs, the gated examples are accepted.
GATED: dict[str, str] = {
    "failure-policy": "RestartJob=true",
    "in-place-restart": "InPlaceRestart=true",
}


# --- running validate once per directory --------------------------------------------------------


def manifests(directory: Path) -> list[Path]:
    """The files ``kubectl apply -f <directory>/`` would read (not recursive)."""
    return sorted(p for p in directory.iterdir() if p.is_file() and p.suffix in (".yaml", ".yml", ".json"))


@functools.cache
def results(directory: Path, version: str = "1.37", gates: str = "") -> dict[Path, Found]:
    """(severity, rule) per file, sorted, for one directory validated as one input."""
    kube = KubeVersion.parse(version)
    options = ValidateOptions(paths=[str(p) for p in manifests(directory)], version=kube,
                              gates=parse_feature_gates(gates, kube), jobs=1)
    per_file: dict[Path, list[tuple[str, str]]] = {path: [] for path in manifests(directory)}
    for d in check(options).report.diagnostics:
        per_file[Path(d.file)].append((str(d.severity), d.rule))
    return {path: tuple(sorted(found)) for path, found in per_file.items()}


def found_for(path: Path, version: str = "1.37", gates: str = "") -> Found:
    return results(path.parent, version, gates)[path]


def expected_for(path: Path) -> Expected:
    return DEFAULT.get(str(path.relative_to(UPSTREAM)), Expected(CLEAN, ACCEPTED))


def _ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(UPSTREAM)) for p in paths]


def _files(root: Path, *, exclude: Path | None = None) -> list[Path]:
    if not root.is_dir():
        return []
    return sorted(p for p in root.rglob("*.yaml") if exclude is None or exclude not in p.parents)


JOBSET_FILES = _files(JOBSET_EXAMPLES, exclude=WAS)
TRAINER_FILES = _files(TRAINER / "examples") + _files(TRAINER / "runtimes")
WAS_FILES = _files(WAS)


# --- JobSet and Trainer examples ----------------------------------------------------------------


@pytest.mark.parametrize("path", JOBSET_FILES + TRAINER_FILES, ids=_ids(JOBSET_FILES + TRAINER_FILES))
def test_example_default_options(path: Path) -> None:
    expected = expected_for(path)
    assert found_for(path) == tuple(sorted(expected.found)), expected.why


@pytest.mark.parametrize("path", JOBSET_FILES + TRAINER_FILES, ids=_ids(JOBSET_FILES + TRAINER_FILES))
@pytest.mark.parametrize("version", ["1.35", "1.36"])
def test_example_result_does_not_depend_on_the_release(path: Path, version: str) -> None:
    # JobSet and Trainer are CRDs with their own schemas; none of these examples uses a scheduling API.
    assert found_for(path, version) == found_for(path)


GATED_FILES = [p for p in JOBSET_FILES if p.parent.name in GATED]


@pytest.mark.parametrize("path", GATED_FILES, ids=_ids(GATED_FILES))
def test_gated_examples_are_accepted_with_their_gate(path: Path) -> None:
    found = found_for(path, gates=GATED[path.parent.name])
    # Only the notes of the kinds that are passed over remain (jobset.md feature gate table), and the
    # object two files of the directory define.
    assert [f for f in found if f[0] != INFO and f != DUPLICATE] == [], GATED[path.parent.name]
    assert {rule for _, rule in found} <= {"unknown-kind", DUPLICATE[1]}


def test_every_gate_expectation_names_a_failing_example() -> None:
    failing = {Path(p).parent.name for p, e in DEFAULT.items() if any(s == ERROR for s, _ in e.found)}
    assert failing - {"yaml"} == set(GATED)


def test_table_names_existing_files() -> None:
    # An upstream rename must not turn an expectation into a silent CLEAN.
    assert [p for p in DEFAULT if not (UPSTREAM / p).is_file()] == []


def test_multi_step_example_would_pass_with_the_volume_mount(tmp_path: Path) -> None:
    """trainer.md §3.16 #8 names the cause: the rejection is the missing mount, nothing else."""
    text = (TRAINER / "examples" / "yaml" / "05-multi-step.yaml").read_text(encoding="utf-8")
    fixed = text.replace(
        "                      image: ghcr.io/kubeflow/trainer/dataset-initializer\n",
        "                      image: ghcr.io/kubeflow/trainer/dataset-initializer\n"
        "                      volumeMounts: [{name: initializer, mountPath: /workspace}]\n"
        "                  volumes: [{name: initializer, emptyDir: {}}]\n",
    )
    assert fixed != text, "the example changed upstream; update this test"
    path = tmp_path / "05-multi-step.yaml"  # a scratch copy for this test only, outside the repository
    path.write_text(fixed, encoding="utf-8")
    report = check(ValidateOptions(paths=[str(path)], jobs=1)).report
    assert [(str(d.severity), d.rule) for d in report.diagnostics if str(d.severity) != INFO] == []


# --- workload-aware scheduling (Kubernetes 1.36 examples) ---------------------------------------


def kind_gates(directory: Path) -> str:
    """The feature gates the example's kind cluster turns on (its kind.yaml, read, never validated)."""
    documents, problems = load_documents((directory / "kind.yaml").read_text(encoding="utf-8"), "kind.yaml")
    assert not problems
    gates = documents[0].value.get("featureGates", {})
    return ",".join(f"{name}={str(value).lower()}" for name, value in sorted(gates.items()))


def was_setup(path: Path) -> Path:
    """The directory whose kind.yaml configures the cluster this example runs on."""
    return path.parent if (path.parent / "kind.yaml").is_file() else WAS


def _scheduling_kinds(path: Path) -> Counter[str]:
    documents, _ = load_documents(path.read_text(encoding="utf-8"), path.name)
    return Counter(
        doc.value["kind"] for doc in documents
        if isinstance(doc.value, dict) and str(doc.value.get("apiVersion", "")).startswith("scheduling.k8s.io/v1alpha2")
    )


def _foreign_documents(path: Path) -> int:
    documents, _ = load_documents(path.read_text(encoding="utf-8"), path.name)
    ours = ("jobset.x-k8s.io/", "scheduling.k8s.io/", "trainer.kubeflow.org/", "batch/")
    return sum(1 for doc in documents if isinstance(doc.value, dict)
               and not str(doc.value.get("apiVersion", "")).startswith(ours))


@pytest.mark.parametrize("path", WAS_FILES, ids=_ids(WAS_FILES))
def test_workload_aware_scheduling_on_136_with_its_cluster_gates(path: Path) -> None:
    # scheduling.md §1.1: v1alpha2 is the 1.36 shape; the kind cluster enables the gates the fields need.
    found = results(path.parent, "1.36", kind_gates(was_setup(path)))[path]
    assert found == passed_over(_foreign_documents(path))


@pytest.mark.parametrize("path", WAS_FILES, ids=_ids(WAS_FILES))
def test_workload_aware_scheduling_on_137_is_no_kind_match(path: Path) -> None:
    # scheduling.md §1.1: 1.37 serves Workload and PodGroup as v1beta1/v1alpha3 only.
    found = found_for(path)
    v1alpha2 = sum(_scheduling_kinds(path).values())
    expected = ((ERROR, "no-kind-match"),) * v1alpha2 + passed_over(_foreign_documents(path))
    assert found == tuple(sorted(expected))


def test_workload_aware_scheduling_examples_are_all_1_36_shapes() -> None:
    kinds: Counter[str] = Counter()
    for path in WAS_FILES:
        kinds += _scheduling_kinds(path)
    # Each of the four setups has a Workload and a PodGroup (the preemption one two of each).
    assert kinds == Counter({"Workload": 5, "PodGroup": 5})


# --- Kueue examples ---------------------------------------------------------------------------------

KUEUE_EXAMPLES = UPSTREAM / "kueue" / "examples"
KUEUE_FILES = _files(KUEUE_EXAMPLES)
KUEUE_README = "shared/upstream/README.md: a kind jobsetctl does not model (a Pod, a kind cluster config, a ProvisioningRequestConfig)"
ADMIN = "kueue/examples/admin/"
TAS = "kueue/examples/tas/"


def _redefines(count: int) -> Found:
    return (DUPLICATE,) * count


#: Kueue example files whose result is not CLEAN (each directory validated as one input, default options).
#: scheduling.md §2.1: every Kueue object upstream accepts is accepted; what remains are the kinds we pass
#: over, and objects several setup files of one directory define (they are alternatives, applied one at a time).
KUEUE_DEFAULT: dict[str, Expected] = {
    "kueue/examples/sample-admission-check.yaml": Expected(passed_over(1), KUEUE_README),
    "kueue/examples/pods-kueue/kueue-pod-group.yaml": Expected(passed_over(2), KUEUE_README),
    "kueue/examples/pods-kueue/kueue-pod.yaml": Expected(passed_over(1), KUEUE_README),
    "kueue/examples/provisioning/provisioning-setup.yaml": Expected(passed_over(1), KUEUE_README),
    "kueue/examples/tas/kind-cluster.yaml": Expected(passed_over(1), KUEUE_README),
    # Upstream's own webhook refuses this example at the snapshot: onFlavors names a flavor the queue does not
    # have (it has no resource groups). clusterqueue_webhook.go validateAdmissionCheckOnFlavors, test case
    # "admissionCheckStrategy refers to a flavor that is not in quota": the example predates that check.
    f"{ADMIN}minimal-cq.yaml": Expected(((ERROR, "kueue-admission-check-flavors"),),
                                        "clusterqueue_webhook.go: onFlavors must name flavors of the queue"),
}

#: What comes after admission (consequences and lints), per file, for the directory validated alone.
QUEUE_ELSEWHERE = ("the jobs/ directory has no LocalQueue user-queue: the examples expect the administrator's setup "
                   "(admin/single-clusterqueue-setup.yaml) applied first; alone, each Workload would wait "
                   "(workload_controller.go getQueueBlocker, Misconfigured)")
KUEUE_CONSEQUENCES: dict[str, Expected] = {
    **{f"kueue/examples/jobs/{name}": Expected(((ERROR, "kueue-local-queue-missing"),), QUEUE_ELSEWHERE)
       for name in ("sample-job-partial-admission.yaml", "sample-job.yaml", "sample-jobset-tas-combined.yaml",
                    "sample-jobset-tas-required.yaml", "sample-jobset-tas-sliced.yaml", "sample-jobset.yaml")},
    # duplicate-object is a lint (issue #13): setup files of one directory are alternatives.
    f"{ADMIN}resource-flavor-taints.yaml": Expected(_redefines(1), REDEFINES),
    f"{ADMIN}resource-flavor-tolerations.yaml": Expected(_redefines(1), REDEFINES),
    f"{ADMIN}shared-quota-setup.yaml": Expected(_redefines(4), REDEFINES),
    f"{ADMIN}single-clusterqueue-setup.yaml": Expected(_redefines(1), REDEFINES),
    f"{TAS}sample-queues.yaml": Expected(_redefines(4), REDEFINES),
}
#: The jobs/ examples with the setup they name (user-queue) as context: the TAS JobSets request topology
#: levels, and that setup's only flavor has no Topology (tas_flavorassigner.go checkPodSetAndFlavorMatchForTAS).
#: No example setup offers a TAS flavor behind a LocalQueue user-queue (tas/ uses tas-user-queue).
NOT_TAS = "single-clusterqueue-setup.yaml's default-flavor has no topologyName: no flavor serves the TAS request"
KUEUE_WITH_SETUP: dict[str, Expected] = {
    f"kueue/examples/jobs/{name}": Expected(((ERROR, "kueue-tas-topology"),), NOT_TAS)
    for name in ("sample-jobset-tas-combined.yaml", "sample-jobset-tas-required.yaml", "sample-jobset-tas-sliced.yaml")
}
AFTER_ADMISSION = ("consequence", "lint")


@functools.cache
def kueue_results(directory: Path, version: str = "1.37", context: tuple[Path, ...] = ()) -> dict[Path, Layered]:
    """(severity, layer, rule) per file, sorted, for one directory validated as one input."""
    options = ValidateOptions(paths=[str(p) for p in manifests(directory)], version=KubeVersion.parse(version), jobs=1,
                              context=[str(p) for p in context])
    per_file: dict[Path, list[tuple[str, str, str]]] = {path: [] for path in manifests(directory)}
    for d in check(options).report.diagnostics:
        per_file[Path(d.file)].append((str(d.severity), str(d.layer), d.rule))
    return {path: tuple(sorted(found)) for path, found in per_file.items()}


def admission_of(found: Layered) -> Found:
    return tuple((severity, rule) for severity, layer, rule in found if layer not in AFTER_ADMISSION)


def consequences_of(found: Layered) -> Found:
    """What fails later, for an object the API server accepts (a refused object has no later; issue #13)."""
    if any(severity == ERROR for severity, _ in admission_of(found)):
        return CLEAN
    return tuple((severity, rule) for severity, layer, rule in found if layer in AFTER_ADMISSION)


@pytest.mark.parametrize("path", KUEUE_FILES, ids=_ids(KUEUE_FILES))
def test_kueue_example_is_admitted(path: Path) -> None:
    """The API server's answer (schema, CEL, Kueue's webhooks): upstream accepts every example but one."""
    expected = KUEUE_DEFAULT.get(str(path.relative_to(UPSTREAM)), Expected(CLEAN, ACCEPTED))
    assert admission_of(kueue_results(path.parent)[path]) == tuple(sorted(expected.found)), expected.why


@pytest.mark.parametrize("path", KUEUE_FILES, ids=_ids(KUEUE_FILES))
def test_kueue_example_consequences(path: Path) -> None:
    expected = KUEUE_CONSEQUENCES.get(str(path.relative_to(UPSTREAM)), Expected(CLEAN, ACCEPTED))
    assert consequences_of(kueue_results(path.parent)[path]) == tuple(sorted(expected.found)), expected.why


JOB_EXAMPLES = [p for p in KUEUE_FILES if p.parent.name == "jobs"]


@pytest.mark.parametrize("path", JOB_EXAMPLES, ids=_ids(JOB_EXAMPLES))
def test_kueue_job_example_with_its_setup_as_context(path: Path) -> None:
    setup = (KUEUE_EXAMPLES / "admin" / "single-clusterqueue-setup.yaml",)
    found = kueue_results(path.parent, context=setup)[path]
    expected = KUEUE_WITH_SETUP.get(str(path.relative_to(UPSTREAM)), Expected(CLEAN, ACCEPTED))
    assert admission_of(found) == CLEAN
    assert consequences_of(found) == tuple(sorted(expected.found)), expected.why


@pytest.mark.parametrize("path", KUEUE_FILES, ids=_ids(KUEUE_FILES))
@pytest.mark.parametrize("version", ["1.35", "1.36"])
def test_kueue_example_result_does_not_depend_on_the_release(path: Path, version: str) -> None:
    assert kueue_results(path.parent, version)[path] == kueue_results(path.parent)[path]


def test_kueue_table_names_existing_files() -> None:
    tables = [*KUEUE_DEFAULT, *KUEUE_CONSEQUENCES, *KUEUE_WITH_SETUP]
    assert [p for p in tables if not (UPSTREAM / p).is_file()] == []


def test_every_upstream_manifest_is_covered() -> None:
    covered = set(JOBSET_FILES) | set(TRAINER_FILES) | set(WAS_FILES) | set(KUEUE_FILES)
    everything = {p for p in UPSTREAM.rglob("*.yaml") if "crd" not in p.relative_to(UPSTREAM).parts}
    assert everything - covered == set()
