"""Shared by the render tests: run the CLI in-process, compare golden files, check Kubernetes schemas."""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from jobsetctl.cli.app import run
from jobsetctl.kube.versions import KubeVersion, schema_dir
from tests.helpers import REPO, SAMPLES, UPSTREAM

GOLDEN = Path(__file__).resolve().parent / "golden"
INPUTS = Path(__file__).resolve().parent / "inputs"
UPDATE = os.environ.get("JOBSETCTL_UPDATE_GOLDEN") == "1"
#: The render of each upstream example is upstream content: only its SHA-256 is committed (``sha256sum``
#: format), and the text is kept in a git-ignored directory on the machine that has the upstream data, where
#: a changed digest is shown as a readable diff.
UPSTREAM_DIGESTS = Path(__file__).resolve().parent / "upstream-goldens.sha256"
LOCAL_UPSTREAM_GOLDEN = Path(__file__).resolve().parent / ".upstream-golden"
#: The ``user_properties`` key under which a regenerated upstream golden reports its diff (tests/conftest.py
#: prints them in the terminal summary, since pytest captures what a test prints).
GOLDEN_DIFF = "render-golden-diff"
#: Paths in golden files are written relative to these roots, so that goldens do not depend on the checkout.
ROOTS = (("$UPSTREAM", UPSTREAM), ("$SAMPLES", SAMPLES), ("$INPUTS", INPUTS), ("$REPO", REPO))


@dataclass(frozen=True, slots=True)
class Result:
    exit: int
    stdout: str
    stderr: str

    def objects(self) -> list[dict[str, Any]]:
        return [d for d in yaml.safe_load_all(self.stdout) if d is not None]


def render_cli(*args: str) -> Result:
    """``jobsetctl render <args>`` in-process, with its exit status and both streams."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = run(["render", *args])
    return Result(int(status), out.getvalue(), err.getvalue())


def relative(text: str) -> str:
    for marker, root in ROOTS:
        text = text.replace(str(root), marker)
    return text


@dataclass(frozen=True, slots=True)
class Case:
    """One golden case: inputs and options; ``name`` is the golden file's stem."""

    name: str
    paths: tuple[Path, ...]
    options: tuple[str, ...] = ()
    version: str = "1.37"
    tags: tuple[str, ...] = field(default=())

    def args(self) -> list[str]:
        return [*(str(p) for p in self.paths), "--kubernetes-version", self.version, *self.options]

    def header(self, result: Result) -> str:
        lines = [f"# jobsetctl render {relative(' '.join(self.args()))}", f"# exit {result.exit}"]
        lines += [f"# stderr: {relative(line)}" if line else "# stderr:" for line in result.stderr.splitlines()]
        return "\n".join(lines) + "\n"


def golden_text(case: Case, result: Result) -> str:
    return case.header(result) + result.stdout


def check_golden(case: Case, result: Result) -> None:
    path = GOLDEN / f"{case.name}.yaml"
    text = golden_text(case, result)
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    if not path.exists():
        pytest.fail(f"no golden file {path.name}; run with JOBSETCTL_UPDATE_GOLDEN=1 to create it")
    expected = path.read_text(encoding="utf-8")
    if expected != text:
        diff = _diff(expected, text, f"golden/{path.name}", "rendered")
        pytest.fail(f"render output differs from golden/{path.name} (JOBSETCTL_UPDATE_GOLDEN=1 regenerates):\n{diff}")


def _diff(old: str, new: str, old_name: str, new_name: str, lines: int = 80) -> str:
    import difflib

    return "".join(list(difflib.unified_diff(old.splitlines(True), new.splitlines(True), old_name, new_name))[:lines])


def upstream_digests() -> dict[str, str]:
    """Case name → SHA-256 of its golden text."""
    if not UPSTREAM_DIGESTS.is_file():
        return {}
    digests: dict[str, str] = {}
    for line in UPSTREAM_DIGESTS.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            digest, name = line.split(maxsplit=1)
            digests[name] = digest
    return digests


def _store_digest(name: str, digest: str) -> None:
    """Record one case's digest. Tests run in parallel: read, change and write the file under a lock."""
    import fcntl

    with open(UPSTREAM_DIGESTS.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        digests = upstream_digests()
        digests[name] = digest
        header = ("# SHA-256 of `jobsetctl render` of each upstream example (tests/render/test_golden.py): upstream\n"
                  "# content is not copied here. JOBSETCTL_UPDATE_GOLDEN=1 regenerates and prints what changed.\n")
        body = "".join(f"{digests[n]}  {n}\n" for n in sorted(digests))
        temporary = UPSTREAM_DIGESTS.with_suffix(".tmp")
        temporary.write_text(header + body, encoding="utf-8")
        temporary.replace(UPSTREAM_DIGESTS)


def check_upstream_golden(case: Case, result: Result, record_property: Any) -> None:
    """Like :func:`check_golden`, against the stored digest. The last text that matched it is kept in
    :data:`LOCAL_UPSTREAM_GOLDEN`, so that a change shows as a diff (in the failure, or, when regenerating, in
    the terminal summary)."""
    import hashlib

    text = golden_text(case, result)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    stored = upstream_digests().get(case.name)
    local = LOCAL_UPSTREAM_GOLDEN / f"{case.name}.yaml"
    previous = local.read_text(encoding="utf-8") if local.is_file() else None
    if previous is not None and hashlib.sha256(previous.encode("utf-8")).hexdigest() != stored:
        previous = None  # a copy of another digest's text: no base for a diff
    if UPDATE:
        if digest != stored:
            _store_digest(case.name, digest)
            change = (_diff(previous, text, f"{case.name} (last render)", "rendered") if previous is not None
                      else f"{case.name}: new digest (no earlier local render to compare with)\n")
            record_property(GOLDEN_DIFF, change)
    elif stored is None:
        pytest.fail(f"no digest for {case.name} in {UPSTREAM_DIGESTS.name}; run with JOBSETCTL_UPDATE_GOLDEN=1")
    elif digest != stored:
        shown = (_diff(previous, text, f"{case.name} (last matching render)", "rendered") if previous is not None
                 else "(no local copy of the matching render to diff against)")
        pytest.fail(f"render of {case.name} no longer matches its digest (JOBSETCTL_UPDATE_GOLDEN=1 regenerates "
                    f"and prints the diff):\n{shown}")
    if previous != text and (UPDATE or digest == stored):
        LOCAL_UPSTREAM_GOLDEN.mkdir(exist_ok=True)
        temporary = local.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(text, encoding="utf-8")
        temporary.replace(local)


def golden_version(path: Path) -> KubeVersion:
    """The release a golden file was rendered for, from its header line."""
    first = path.read_text(encoding="utf-8").splitlines()[0].split()
    return KubeVersion.parse(first[first.index("--kubernetes-version") + 1])


# --- Kubernetes JSON Schemas (kubernetes-validate), strict --------------------------------------------

DEFINITIONS_ID = "https://kubernetes.io/api/_definitions.json"


class KubeSchemas:
    """Validators for the built-in kinds of one release, on one ``referencing`` registry built once."""

    def __init__(self, version: KubeVersion) -> None:
        from jsonschema import Draft202012Validator
        from referencing import Registry, Resource

        self.directory = Path(schema_dir(version, strict=True))
        definitions = json.loads((self.directory / "_definitions.json").read_text(encoding="utf-8"))
        self.registry: Any = Registry().with_resource(DEFINITIONS_ID, Resource.from_contents(definitions))
        self._validator_class = Draft202012Validator
        self._validators: dict[str, Any] = {}

    def file_for(self, obj: dict[str, Any]) -> Path | None:
        api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
        group, _, version = api_version.rpartition("/")
        stem = f"{kind.lower()}-{group.split('.')[0]}-{version}" if group else f"{kind.lower()}-{version}"
        path = self.directory / f"{stem}.json"
        try:
            return path if path.is_file() else None
        except OSError:  # a name no schema file can have (e.g. a 100 000-character apiVersion)
            return None

    def errors(self, obj: dict[str, Any]) -> list[str] | None:
        """Schema errors of ``obj``; None when the release has no schema for its kind (custom resources,
        including those whose group shares its first label with a built-in one: scheduling.volcano.sh)."""
        path = self.file_for(obj)
        if path is None:
            return None
        if path.name not in self._validators:
            schema = json.loads(path.read_text(encoding="utf-8"))
            served = schema.get("properties", {}).get("apiVersion", {}).get("enum", [])
            self._validators[path.name] = (self._validator_class(schema, registry=self.registry), served)
        validator, served = self._validators[path.name]
        if obj.get("apiVersion") not in served:
            return None
        return [f"{'.'.join(str(p) for p in e.absolute_path)}: {e.message}" for e in validator.iter_errors(obj)]


@functools.cache
def kube_schemas(version: KubeVersion) -> KubeSchemas:
    return KubeSchemas(version)
