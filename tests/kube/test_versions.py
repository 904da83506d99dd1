"""Where the Kubernetes JSON Schemas come from: kubernetes-validate's data directory, found without importing it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jobsetctl.kube.versions import KubeVersion, schema_dir

REPO = Path(__file__).resolve().parents[2]


def _run(code: str, *, pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = None
    if pythonpath is not None:
        import os

        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(pythonpath), str(REPO)])}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          cwd=REPO, env=env)


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("version", list(KubeVersion))
def test_schema_dir_is_the_package_data_directory(version: KubeVersion, strict: bool) -> None:
    import kubernetes_validate

    base = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
    suffix = "-local-strict" if strict else "-local"
    found = Path(schema_dir(version, strict))
    assert found.parent == base
    assert found.name.startswith(f"v{version.value}.") and found.name.endswith(suffix)
    assert (found / "_definitions.json").is_file()


def test_schemas_are_read_without_importing_kubernetes_validate() -> None:
    """Importing kubernetes-validate pulls in jsonschema, referencing, rpds and attrs (~50 ms of every
    ``validate`` and ``simulate``) for nothing: only its data files are read."""
    result = _run("""
        import sys
        from jobsetctl.admission.schema import authored_schema, builtin_schema
        from jobsetctl.kube.versions import KubeVersion, builtin_served_versions
        for version in KubeVersion:
            authored_schema("kueue.x-k8s.io_v1beta2_Workload", version)
            builtin_schema("io.k8s.api.core.v1.Pod", version)
            builtin_served_versions(version, "scheduling.k8s.io", "Workload")
        heavy = sorted(m for m in ("kubernetes_validate", "jsonschema", "referencing", "rpds", "attr")
                       if m in sys.modules)
        print(heavy)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_no_schemas_for_a_release_is_a_usage_error(tmp_path: Path) -> None:
    """A kubernetes-validate without the release's directory: the one-line upgrade message."""
    package = tmp_path / "kubernetes_validate"
    (package / "kubernetes-json-schema" / "v1.30.0-local-strict").mkdir(parents=True)
    (package / "__init__.py").write_text("raise RuntimeError('the package must not be imported')\n")
    result = _run("""
        from jobsetctl.kube.versions import KubeVersion, schema_dir
        from jobsetctl.status import UsageError
        try:
            schema_dir(KubeVersion.V1_37)
        except UsageError as exc:
            print(exc)
    """, pythonpath=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "kubernetes-validate has no schemas for Kubernetes 1.37; upgrade it"


def test_kubernetes_validate_absent_fails_as_its_import_would() -> None:
    result = _run("""
        import sys
        sys.modules["kubernetes_validate"] = None  # what an uninstalled package looks like to the importer
        from jobsetctl.kube.versions import KubeVersion, schema_dir
        try:
            schema_dir(KubeVersion.V1_37)
        except ModuleNotFoundError as exc:
            print(type(exc).__name__, exc, exc.name)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ModuleNotFoundError No module named 'kubernetes_validate' kubernetes_validate"
