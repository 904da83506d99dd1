"""Golden files for ``jobsetctl render``: every sample (but ``samples/invalid``, validate's corpus of
what it must reject), every upstream JobSet example, Trainer example, Kueue example and
shipped runtime (read from ``../shared/upstream``, skipped when absent), with and without ``--pods``,
and every ``--gang`` mode x release that is valid.

A golden file is the command line, the exit status and stderr as ``#`` comments, then stdout. Regenerate
with ``JOBSETCTL_UPDATE_GOLDEN=1 python -m pytest tests/render``; review the diff like code.

The render of an upstream example is upstream content (its names, commands, images): it is not copied here.
``upstream-goldens.sha256`` holds its SHA-256 instead; the text stays on the machine that has the upstream data
(``tests/render/.upstream-golden/``, git-ignored), and regenerating prints a readable diff of what changed in
pytest's terminal summary (:func:`tests.render.support.check_upstream_golden`).

Releases and gates per upstream example: the workload-aware-scheduling examples target Kubernetes 1.36
(scheduling.md, upstream README); the RestartJob and InPlaceRestart examples need their JobSet gates
(jobset.md, feature-gated failure-policy actions); everything else renders on the default release.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jobsetctl.kube.versions import KubeVersion
from tests.helpers import SAMPLES, UPSTREAM, requires_upstream
from tests.render.support import (
    GOLDEN,
    INPUTS,
    UPSTREAM_DIGESTS,
    Case,
    check_golden,
    check_upstream_golden,
    render_cli,
    upstream_digests,
)
from tests.render.test_schemas import jobset_errors, schema_problems

JOBSET_EXAMPLES = UPSTREAM / "jobset" / "examples"
TRAINER = UPSTREAM / "trainer"
KUEUE_EXAMPLES = UPSTREAM / "kueue" / "examples"
WAS = "workload-aware-scheduling"
#: A JobSet example queued to a LocalQueue its directory defines: rendered after that file (issue #14).
JOBSET_SETUPS = {"tpu-multislice/v6e-jax-workload.yaml": "tpu-multislice/kueue-config.yaml"}
#: The setup each Kueue job example's queue comes from (its relative path starts with the key). No example
#: setup offers a TAS flavor behind ``user-queue``: the jobs/ TAS JobSets render refused (kueue-tas-topology).
KUEUE_SETUPS = {
    "jobs/": "admin/single-clusterqueue-setup.yaml",
    "admin/shared-quota-sample-job": "admin/shared-quota-setup.yaml",
    "admission-fs/lq-": "admission-fs/admission-fair-sharing-setup.yaml",
    "getting-started/quick-start-job": "getting-started/quick-start-setup.yaml",
    "provisioning/sample-job": "provisioning/provisioning-setup.yaml",
    "tas/sample-job-": "tas/sample-queues.yaml",
}
#: Gates some upstream examples are written for (their relative path starts with the key).
EXAMPLE_GATES = {
    "failure-policy/restartjob": "RestartJob=true",
    "in-place-restart/jobset-": "InPlaceRestart=true",
}


def _slug(text: str) -> str:
    return text.replace("/", "-").removesuffix(".yaml").replace(".", "_")


def _example_settings(relative: str) -> tuple[str, tuple[str, ...]]:
    version = "1.36" if relative.startswith(WAS) else "1.37"
    gates = next((g for prefix, g in EXAMPLE_GATES.items() if relative.startswith(prefix)), None)
    return version, ("--feature-gates", gates) if gates else ()


def upstream_cases() -> list[Case]:
    cases: list[Case] = []
    if not UPSTREAM.is_dir():
        return cases
    for path in sorted(JOBSET_EXAMPLES.rglob("*.yaml")):
        relative = path.relative_to(JOBSET_EXAMPLES).as_posix()
        version, options = _example_settings(relative)
        name = f"upstream-jobset-{_slug(relative)}"
        setup = JOBSET_SETUPS.get(relative)
        paths = (JOBSET_EXAMPLES / setup, path) if setup else (path,)
        cases.append(Case(name, paths, options, version))
        cases.append(Case(f"{name}__pods", paths, (*options, "--pods"), version))
    # The workload-aware-scheduling examples are applied together: Workload, PodGroup(s), JobSet.
    root = JOBSET_EXAMPLES / WAS
    together = [(f"{WAS}", tuple(root / f for f in ("workload.yaml", "podgroup.yaml", "jobset.yaml")))]
    together += [(f"{WAS}-{sub}", (root / sub,)) for sub in ("tas", "preemption", "dra")]
    for slug, paths in together:
        cases.append(Case(f"upstream-jobset-{slug}__together", paths, ("--pods",), "1.36"))
    for path in sorted((TRAINER / "runtimes").glob("*.yaml")):
        cases.append(Case(f"upstream-trainer-runtimes-{_slug(path.name)}", (path,)))
    for path in sorted(KUEUE_EXAMPLES.rglob("*.yaml")):
        # A queued job example after the setup it names (kubectl apply -f setup.yaml, then the job): it renders
        # suspended with its Workload. Each other example on its own.
        relative = path.relative_to(KUEUE_EXAMPLES).as_posix()
        setup = next((KUEUE_EXAMPLES / s for prefix, s in KUEUE_SETUPS.items() if relative.startswith(prefix)), None)
        cases.append(Case(f"upstream-kueue-{_slug(relative)}", (setup, path) if setup else (path,)))
    flux_runtime = TRAINER / "examples" / "flux" / "flux-runtime.yaml"
    for path in sorted((TRAINER / "examples").rglob("*.yaml")):
        relative = path.relative_to(TRAINER / "examples").as_posix()
        options: tuple[str, ...] = ()
        if relative.startswith("flux/") and path != flux_runtime:
            options = ("--runtimes", str(flux_runtime))
        name = f"upstream-trainer-examples-{_slug(relative)}"
        cases.append(Case(name, (path,), options))
        cases.append(Case(f"{name}__pods", (path,), (*options, "--pods")))
    return cases


def sample_files() -> list[Path]:
    """Every manifest file, and every directory of manifests without subdirectories (files meant to be
    applied together, e.g. PriorityClasses next to the JobSets that use them)."""
    files = sorted(p for p in SAMPLES.rglob("*") if p.suffix in (".yaml", ".yml", ".json")
                   and "invalid" not in p.relative_to(SAMPLES).parts)  # validate's negative corpus
    leaves = sorted({f.parent for f in files if f.parent != SAMPLES and not any(d.is_dir() for d in f.parent.iterdir())})
    return files + [d for d in leaves if len([f for f in files if f.parent == d]) > 1]


TRAINING = INPUTS / "training.yaml"
STAGED = INPUTS / "staged.yaml"
#: --gang job needs one Job per replicated job (jobsetctl.gang: the Job controller's PodGroup names).
TRAINING_ONE_JOB_EACH = INPUTS / "training-one-job-each.yaml"
STAGED_ONE_JOB_EACH = INPUTS / "staged-one-job-each.yaml"
GANG_CASES = [
    Case("gang-jobset-1_35", (TRAINING,), ("--gang", "jobset"), "1.35"),
    Case("gang-jobset-1_36", (TRAINING,), ("--gang", "jobset"), "1.36"),
    Case("gang-jobset-1_37", (TRAINING,), ("--gang", "jobset"), "1.37"),
    Case("gang-replicatedjob-1_35__pods", (TRAINING,), ("--gang", "replicatedjob", "--pods"), "1.35"),
    Case("gang-replicatedjob-1_36", (TRAINING,), ("--gang", "replicatedjob"), "1.36"),
    Case("gang-replicatedjob-1_37", (TRAINING,), ("--gang", "replicatedjob"), "1.37"),
    Case("gang-job-1_37__pods", (TRAINING_ONE_JOB_EACH,), ("--gang", "job", "--pods"), "1.37"),
    Case("gang-jobset-1_36-rack__pods", (TRAINING,),
         ("--gang", "jobset", "--topology", "topology.example.com/rack", "--pods"), "1.36"),
    Case("gang-replicatedjob-1_36-rack-priority-podgroup", (TRAINING,),
         ("--gang", "replicatedjob", "--topology", "topology.example.com/rack", "--priority-class", "training",
          "--disruption-mode", "PodGroup"), "1.36"),
    Case("gang-replicatedjob-1_37-zone-rack-priority-all", (TRAINING,),
         ("--gang", "replicatedjob", "--topology", "topology.kubernetes.io/zone,topology.example.com/rack",
          "--priority-class", "training", "--disruption-mode", "all"), "1.37"),
    Case("gang-job-1_37-block-rack-single__pods", (TRAINING_ONE_JOB_EACH,),
         ("--gang", "job", "--topology", "topology.example.com/block,topology.example.com/rack",
          "--disruption-mode", "single", "--pods"), "1.37"),
    Case("gang-replicatedjob-1_37-staged-zone-rack", (STAGED,),
         ("--gang", "replicatedjob", "--topology", "topology.kubernetes.io/zone,topology.example.com/rack"), "1.37"),
    Case("gang-job-1_37-staged__all-stages", (STAGED_ONE_JOB_EACH,), ("--gang", "job", "--all-stages"), "1.37"),
]
TORCHTUNE = INPUTS / "torchtune.yaml"
STAGE_CASES = [
    Case("stages-torchtune", (TORCHTUNE,)),
    Case("stages-torchtune__all-stages-pods", (TORCHTUNE,), ("--all-stages", "--pods")),
    Case("stages-staged", (STAGED,)),
    Case("stages-staged__all-stages", (STAGED,), ("--all-stages",)),
    Case("stages-staged__all-stages-pods", (STAGED,), ("--all-stages", "--pods")),
]


def _ids(cases: list[Case]) -> list[str]:
    return [c.name for c in cases]


def _upstream_params() -> list[object]:
    cases = upstream_cases()
    if not cases:  # one skip that says why, rather than pytest's "got empty parameter set"
        return [pytest.param(None, marks=requires_upstream, id="upstream-data")]
    return [pytest.param(case, id=case.name) for case in cases]


@pytest.mark.parametrize("case", _upstream_params())
def test_upstream(case: Case, tmp_path: Path, record_property: object) -> None:
    """The render matches its digest; what it prints passes the checks test_schemas runs on golden files."""
    result = render_cli(*case.args())
    check_upstream_golden(case, result, record_property)
    version = KubeVersion.parse(case.version)
    # The consequences (a Kueue example queued without a TAS flavor) are in the digested output already.
    problems = schema_problems(result.objects(), version) + jobset_errors(
        result.objects(), version, tmp_path, consequences=False)
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("case", [*GANG_CASES, *STAGE_CASES], ids=_ids([*GANG_CASES, *STAGE_CASES]))
def test_ours(case: Case) -> None:
    result = render_cli(*case.args())
    assert result.exit == 0, result.stderr
    check_golden(case, result)


#: Samples that render only with the rest of their directory (whose case renders them), and the rule that
#: refuses them alone on every release (a consequence: their pods are refused, or Kueue creates no Workload):
#: their PriorityClasses are in a file next to them.
NEEDS_DIRECTORY = {
    "valid/gang-1.37.yaml": "ref-priority-class",
    "scenarios/manifests/gang/high.yaml": "ref-priority-class",
    "scenarios/manifests/gang/low.yaml": "ref-priority-class",
    # Its WorkloadPriorityClass is in queues.yaml next to it.
    "scenarios/manifests/kueue/team-b.yaml": "kueue-priority-class-missing",
}
RELEASES = ("1.37", "1.36", "1.35")


def _is_scenario(path: Path) -> bool:
    return path.is_file() and "\nkind: Scenario\n" in path.read_text(encoding="utf-8")


@pytest.mark.parametrize("pods", [False, True], ids=["plain", "pods"])
@pytest.mark.parametrize("path", sample_files(), ids=[p.relative_to(SAMPLES).as_posix() for p in sample_files()])
def test_samples(path: Path, pods: bool) -> None:
    """Samples render on the newest release that accepts them (their header says which). A sample that renders
    on no release fails, naming what each release said: a render crash must not pass as a skip."""
    options = ("--pods",) if pods else ()
    relative = path.relative_to(SAMPLES).as_posix()
    name = f"sample-{_slug(relative)}{'__pods' if pods else ''}"
    if _is_scenario(path):
        result = render_cli(*Case(name, (path,), options).args())
        assert (result.exit, result.stdout) == (0, ""), f"render did not pass the Scenario over: {result.stderr}"
        return
    said: list[str] = []
    for version in RELEASES:
        case = Case(name, (path,), options, version)
        result = render_cli(*case.args())
        assert result.exit in (0, 1), f"render {relative} on {version}: exit {result.exit}: {result.stderr}"
        if relative in NEEDS_DIRECTORY:
            # On older releases the sample is refused at admission first (kinds not served), and a refused
            # object has no consequences: the rule itself is checked on the newest release.
            assert result.exit == 1, result.stderr
            if version == RELEASES[0]:
                assert f"[consequence/{NEEDS_DIRECTORY[relative]}]" in result.stderr, result.stderr
            continue
        if result.exit == 0:
            check_golden(case, result)
            return
        said.append(f"{version}: {result.stderr}")
    if relative in NEEDS_DIRECTORY:
        assert path.parent in sample_files(), f"{relative} needs its directory, which is no case"
        return
    pytest.fail(f"{relative} renders on no release:\n" + "\n".join(said))


def test_every_golden_file_belongs_to_a_case() -> None:
    """A renamed or removed case must not leave its golden file behind, unchecked; upstream examples have a
    digest, never a golden file."""
    known = {c.name for c in [*GANG_CASES, *STAGE_CASES]}
    for path in sample_files():
        stem = f"sample-{_slug(path.relative_to(SAMPLES).as_posix())}"
        known.update((stem, f"{stem}__pods"))
    stale = sorted(p.name for p in GOLDEN.glob("*.yaml") if p.stem not in known)
    assert not stale, f"golden files without a case (delete them; upstream renders keep a digest only): {stale}"


@requires_upstream
def test_every_upstream_digest_belongs_to_a_case() -> None:
    names = {c.name for c in upstream_cases()}
    assert sorted(set(upstream_digests()) - names) == [], f"digests without a case: remove them from {UPSTREAM_DIGESTS.name}"
    assert sorted(names - set(upstream_digests())) == [], "cases without a digest: JOBSETCTL_UPDATE_GOLDEN=1"
