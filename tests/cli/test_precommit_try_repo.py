"""The pre-commit hook as users run it: the real ``pre-commit try-repo`` in a temporary git repository that
looks like a real one (issue #10, "The pre-commit hook in a real repository").

The repository holds what pre-commit hands the hook next to the manifests: a GitHub workflow, its own
``.pre-commit-config.yaml``, ``package.json``, a Helm chart (``Chart.yaml``, ``values.yaml``, ``templates/``),
Kustomize files, ``.jobsetctl.yaml``; and manifests that need others: a TrainJob whose TrainingRuntime lives in
an unchanged file, and ``samples/valid/gang-1.37.yaml``, whose PriorityClass is in no file at all.

How the hook is installed, offline. ``language: python`` makes pre-commit create a virtualenv and
``pip install .`` the hook repository, which fetches every dependency from PyPI: too slow and too fragile for
a test, and impossible without a network. What stays real: pre-commit reads our ``.pre-commit-hooks.yaml``
as shipped, clones the hook repository, creates the virtualenv and builds and installs jobsetctl into it
with pip from ``pyproject.toml`` (build isolation on), then runs the entry on the files it selects by
``types_or``. What is arranged: ``PIP_NO_INDEX=1``; the build backend (setuptools) comes from the wheels
virtualenv itself embeds (``PIP_FIND_LINKS``); jobsetctl's runtime dependencies are found already installed
through ``PYTHONPATH``, on a directory that links exactly their distributions from this test's environment
(so pip reports them satisfied and installs nothing else; pre-commit passes ``PYTHONPATH`` on to the hook).
``language: system`` would have been simpler but would not test the hook definition users get.

The hook repository is a snapshot of the working tree (what ``pip install .`` needs and the hooks file),
committed in a temporary repository: ``try-repo`` on the checkout itself would leave out files not yet
tracked by git.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import REPO, SAMPLES, dedent

pytestmark = pytest.mark.slow

#: What the hook repository needs: the hook definitions and what ``pip install .`` builds from.
HOOK_REPO_FILES = (".pre-commit-hooks.yaml", "pyproject.toml", "README.md", "jobsetctl")


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=_git_env(cwd), check=True)
    return done.stdout


def _git_env(home: Path) -> dict[str, str]:
    # Hermetic: no user or system git configuration (hooks paths, signing) reaches the temporary repositories.
    return {
        **os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "test", "GIT_AUTHOR_EMAIL": "test@example.com",
        "GIT_COMMITTER_NAME": "test", "GIT_COMMITTER_EMAIL": "test@example.com",
    }


def _dependency_site(target: Path) -> Path:
    """A directory linking the installed distributions jobsetctl needs at run time (its requirements,
    recursively, without extras), for ``PYTHONPATH``."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    target.mkdir()
    seen: set[str] = set()
    pending = [req for req in (metadata.requires("jobsetctl") or [])]
    while pending:
        requirement = Requirement(pending.pop())
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(requirement.name)
        if name in seen:
            continue
        seen.add(name)
        distribution = metadata.distribution(requirement.name)
        pending.extend(distribution.requires or [])
        tops = {f.parts[0] for f in distribution.files or [] if f.parts[0] not in ("..", "__pycache__")}
        for top in tops:
            link = target / top
            if not link.exists():
                link.symlink_to(Path(str(distribution.locate_file(top))))
    return target


@dataclass(frozen=True)
class Hook:
    """A hook repository snapshot and the environment pre-commit installs it with, offline."""

    repo: Path
    env: dict[str, str]

    def try_repo(self, workdir: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "pre_commit", "try-repo", str(self.repo), "jobsetctl-validate", "--verbose",
             "--color", "never", *args],
            cwd=workdir, capture_output=True, text=True, env=self.env, timeout=600,
        )
        return done, time.monotonic() - started


@pytest.fixture(scope="module")
def hook(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hook]:
    from virtualenv.seed.wheels.embed import BUNDLE_FOLDER

    base = tmp_path_factory.mktemp("hook")
    repo = base / "jobsetctl"
    repo.mkdir()
    for name in HOOK_REPO_FILES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, repo / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, repo / name)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "snapshot of the working tree")
    env = {
        **_git_env(base), "PRE_COMMIT_HOME": str(base / "pre-commit-home"), "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(BUNDLE_FOLDER), "PYTHONPATH": str(_dependency_site(base / "site")), "NO_COLOR": "1",
    }
    env.pop("VIRTUAL_ENV", None)
    yield Hook(repo, env)


FILES = {
    ".github/workflows/ci.yml": """
        name: ci
        on: [push, pull_request]
        jobs:
          test:
            runs-on: ubuntu-latest
            steps:
            - uses: actions/checkout@v4
            - run: echo "${{ github.sha }}" && make test
        """,
    ".pre-commit-config.yaml": """
        repos:
        - repo: https://github.com/jobsetctl/jobsetctl
          rev: 0123456789abcdef0123456789abcdef01234567
          hooks:
          - id: jobsetctl-validate
        """,
    "package.json": '{"name": "dashboard", "version": "1.2.0", "scripts": {"test": "jest"}}\n',
    "chart/Chart.yaml": "apiVersion: v2\nname: trainer\nversion: 0.1.0\n",
    "chart/values.yaml": "image: registry.example.com/train:1\nreplicas: 2\nextra: {}\n",
    "chart/templates/jobset.yaml": """
        apiVersion: jobset.x-k8s.io/v1alpha2
        kind: JobSet
        metadata:
          name: {{ .Release.Name }}
        spec:
          replicatedJobs:
          - name: workers
            replicas: {{ .Values.replicas }}
            template:
              spec:
                template:
                  spec:
                    restartPolicy: Never
                    containers:
                    - name: main
                      image: "{{ .Values.image }}"
        """,
    "kustomize/overlays/prod/kustomization.yaml": "resources:\n- ../../base\nnamePrefix: prod-\n",
    "kustomize/base/kustomization.yaml": (
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [configmap.yaml]\n"
    ),
    "kustomize/base/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: '1'}\n",
    ".jobsetctl.yaml": 'kubernetesVersion: "1.37"\n',
    "platform/runtimes.yaml": """
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
        """,
    "jobs/trainjob.yaml": """
        apiVersion: trainer.kubeflow.org/v1alpha1
        kind: TrainJob
        metadata: {name: mnist, namespace: team-a}
        spec:
          runtimeRef: {name: team-torch, kind: TrainingRuntime}
          trainer: {numNodes: 2}
        """,
}
#: Files pre-commit hands the hook (types_or yaml/json) that hold no Kubernetes object.
NOT_MANIFESTS = (".github/workflows/ci.yml", ".pre-commit-config.yaml", "package.json", "chart/Chart.yaml",
                 "chart/values.yaml", "kustomize/overlays/prod/kustomization.yaml", ".jobsetctl.yaml")


@pytest.fixture()
def workdir(tmp_path: Path) -> Path:
    work = tmp_path / "project"
    for name, text in FILES.items():
        path = work / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text))
    (work / "gang").mkdir()
    shutil.copy2(SAMPLES / "valid" / "gang-1.37.yaml", work / "gang" / "gang-1.37.yaml")
    _git(work, "init", "-q")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "a project")
    return work


def _hook_output(done: subprocess.CompletedProcess[str]) -> str:
    """What jobsetctl printed: pre-commit's verbose section after the hook's header lines."""
    assert "jobsetctl validate" in done.stdout, done.stdout + done.stderr
    return done.stdout.split("- duration:", 1)[-1]


def _duration(done: subprocess.CompletedProcess[str]) -> float:
    found = re.search(r"- duration: ([0-9.]+)s", done.stdout)
    assert found, done.stdout
    return float(found.group(1))


def test_all_files_of_a_real_repository_pass(hook: Hook, workdir: Path) -> None:
    done, _ = hook.try_repo(workdir, "--all-files")
    output = _hook_output(done)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"jobsetctl validate\.+Passed", done.stdout), done.stdout
    assert " error " not in output, output
    for name in NOT_MANIFESTS:
        assert f"{name}\n  1:1  info    no Kubernetes object in this file; passed over  [input/not-a-manifest]" in output
    assert ("chart/templates/jobset.yaml\n  4:9  info    this looks like a Helm template: render it first "
            "(`helm template ... | jobsetctl validate -`); skipped  [input/helm-template]") in output
    # The PriorityClass of the gang sample is in no file: a warning with a hint; the hook passes.
    assert ('warning JobSet "llm-pretrain" is accepted, but the Priority admission plugin refuses its pods: '
            "no PriorityClass with name training-high was found  [consequence/ref-priority-class]") in output
    assert 'hint: PriorityClass "training-high" is cluster-scoped' in output
    print(f"hook run on all {len(FILES) + 1} files: {_duration(done)} s")


def test_files_edited_alone_resolve_against_the_unchanged_ones(hook: Hook, workdir: Path) -> None:
    """pre-commit passes only the staged files: the TrainJob alone, the gang sample alone."""
    trainjob = workdir / "jobs" / "trainjob.yaml"
    trainjob.write_text(trainjob.read_text().replace("numNodes: 2", "numNodes: 3"))
    gang = workdir / "gang" / "gang-1.37.yaml"
    gang.write_text(gang.read_text() + "# edited\n")
    _git(workdir, "add", "jobs/trainjob.yaml", "gang/gang-1.37.yaml")
    done, _ = hook.try_repo(workdir)
    output = _hook_output(done)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "jobs/trainjob.yaml" not in output  # its runtime is in platform/runtimes.yaml, unchanged
    assert "trainjob-runtime-not-found" not in output
    assert "2 warnings in 1 file (4 objects in 2 files checked)" in output, output
    print(f"hook run on 2 staged files (context: the repository's manifests): {_duration(done)} s")


def test_a_misspelt_runtime_fails_with_did_you_mean(hook: Hook, workdir: Path) -> None:
    trainjob = workdir / "jobs" / "trainjob.yaml"
    trainjob.write_text(trainjob.read_text().replace("name: team-torch", "name: team-troch"))
    _git(workdir, "add", "jobs/trainjob.yaml")
    done, _ = hook.try_repo(workdir)
    output = _hook_output(done)
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(r"jobsetctl validate\.+Failed", done.stdout)
    assert "[reference/trainjob-runtime-not-found]" in output
    assert 'hint: did you mean "team-torch"? built-in ClusterTrainingRuntimes: torch-distributed,' in output, output
