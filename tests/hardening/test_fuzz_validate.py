"""Fuzzing ``validate`` (issue #6, part 2), with the suite's fixed hypothesis budget (tests/conftest.py);
``bench/fuzz_validate.py`` runs the same properties for longer.

Properties, for any mutation of any real manifest, in any release and with any feature gates, as a
create or as an update: validate returns diagnostics (never raises, never reports an ``internal`` rule);
every diagnostic has a position (line, column >= 1), a registered rule and a message; the same input
gives the same diagnostics.

Security: only safe YAML loading (language tags are reported and never executed); no network access,
ever; validate writes no files; an expensive CEL rule from a ``--crd`` stops at the cost limit.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jobsetctl.status import ExitStatus
from tests.hardening.harness import assert_sane, run_subprocess, validate_cli
from tests.hardening.mutations import (
    Setting,
    checked_diagnostics,
    dump,
    mutated,
    mutated_text,
    seed_documents,
    seed_files,
    seed_texts,
    settings_strategy,
    write_case,
)
from tests.helpers import SAMPLES, dedent

DOCUMENTS = seed_documents()
TEXTS = seed_texts()


def test_there_are_seeds_to_mutate() -> None:
    kinds = {d.get("kind") for d in DOCUMENTS}
    assert {"JobSet", "TrainJob", "TrainingRuntime", "PriorityClass", "Job"} <= kinds


@given(case=mutated(DOCUMENTS), setting=settings_strategy())
def test_mutated_manifests_give_diagnostics_never_exceptions(
    case: tuple[dict[str, object], dict[str, object], list[str]], setting: Setting
) -> None:
    _seed, obj, _applied = case
    with tempfile.TemporaryDirectory() as directory:
        path = write_case(directory, "case.json" if setting.as_json else "case.yaml", dump(obj, setting.as_json))
        first = checked_diagnostics([path], setting)
        again = checked_diagnostics([path], setting)
    assert first == again


@given(text=mutated_text(TEXTS), setting=settings_strategy())
def test_damaged_text_gives_diagnostics_never_exceptions(text: str, setting: Setting) -> None:
    """The file itself damaged (truncated, lines dropped, indentation shifted, noise): diagnostics with
    positions inside the file, and the same ones every time."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "case.yaml"
        path.write_bytes(text.encode("utf-8", errors="surrogatepass"))
        first = checked_diagnostics([str(path)], setting)
        again = checked_diagnostics([str(path)], setting)
    assert first == again
    lines = max(1, len(text.encode("utf-8", errors="surrogatepass").splitlines()) + 1)
    for d in first:
        assert d.line <= lines, (d, lines)


@given(case=mutated(DOCUMENTS), setting=settings_strategy(), swap=st.booleans())
def test_mutated_updates_give_diagnostics_never_exceptions(
    case: tuple[dict[str, object], dict[str, object], list[str]], setting: Setting, swap: bool
) -> None:
    """The update path: the seed as stored (--old) and the mutation as the new object, or the reverse."""
    seed, obj, _applied = case
    stored, new = (obj, seed) if swap else (seed, obj)
    with tempfile.TemporaryDirectory() as directory:
        new_path = write_case(directory, "new.yaml", dump(new, False))
        old_path = write_case(directory, "old.yaml", dump(stored, False))
        try:
            first = checked_diagnostics([new_path], setting, old=old_path)
        except Exception as exc:  # a stored object that is not even YAML-clean is a usage error (exit 2)
            from jobsetctl.status import UsageError

            assert isinstance(exc, UsageError), exc
            assert str(exc).startswith("--old: "), exc
            return
        again = checked_diagnostics([new_path], setting, old=old_path)
    assert first == again


@given(setting=settings_strategy(), data=st.data())
def test_several_mutated_files_at_once_are_order_independent(setting: Setting, data: st.DataObject) -> None:
    """Cross-object checks (references, priorities, runtimes) see every file: their result must not depend
    on the order the files are given in."""
    objects = [data.draw(mutated(DOCUMENTS))[1] for _ in range(data.draw(st.integers(2, 4)))]
    with tempfile.TemporaryDirectory() as directory:
        paths = [write_case(directory, f"f{i}.yaml", dump(obj, False)) for i, obj in enumerate(objects)]
        forward = checked_diagnostics(paths, setting)
        backward = checked_diagnostics(list(reversed(paths)), setting)
    assert forward == backward


def test_every_sample_and_seed_through_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    """Unmutated, all at once through the real CLI: a documented status and sane diagnostics."""
    files = [str(path) for path in seed_files()]
    outcome = validate_cli(files, capsys)
    assert_sane(outcome)
    assert outcome.status in (ExitStatus.SUCCESS, ExitStatus.FINDINGS), outcome.stderr
    assert outcome.report["summary"]["files"] == len(files)


# --- security ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tag",
    [
        "!!python/object/apply:os.system ['touch {marker}']",
        "!!python/object/apply:subprocess.check_call [['touch', '{marker}']]",
        "!!python/object/new:os.system ['touch {marker}']",
        "!!python/name:os.system",
        "!!python/module:os",
        "!<tag:yaml.org,2002:python/object/apply:os.system> ['touch {marker}']",
        "!ruby/object:Gem::Installer {{i: x}}",
        "!!java.io.File '{marker}'",
    ],
)
def test_language_tags_are_reported_and_never_executed(tmp_path: Path, capsys: pytest.CaptureFixture[str], tag: str) -> None:
    marker = tmp_path / "executed"
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n"
        f"  payload: {tag.format(marker=marker)}\n"
    )
    path = tmp_path / "evil.yaml"
    path.write_text(text)
    outcome = validate_cli([str(path)], capsys)
    assert_sane(outcome)
    assert not marker.exists()
    assert outcome.status == ExitStatus.FINDINGS
    [tagged] = [d for d in outcome.diagnostics if d["rule"] == "yaml-tag"]
    assert (tagged["line"], tagged["column"]) == (6, 12)
    assert "only standard tags are accepted" in tagged["message"]


SITECUSTOMIZE = '''
"""Installed on PYTHONPATH by the test: record every attempt to reach the network, and refuse it."""
import os
import socket

_LOG = os.environ["NETWORK_ATTEMPTS_LOG"]


def _record(what):
    with open(_LOG, "a") as handle:
        handle.write(what + "\\n")


def _connect(self, address, *args, **kwargs):
    _record(f"connect {address!r}")
    raise OSError("network access is forbidden in this test")


def _getaddrinfo(host, *args, **kwargs):
    _record(f"getaddrinfo {host!r}")
    raise OSError("network access is forbidden in this test")


def _create_connection(address, *args, **kwargs):
    _record(f"create_connection {address!r}")
    raise OSError("network access is forbidden in this test")


socket.socket.connect = _connect
socket.socket.connect_ex = _connect
socket.getaddrinfo = _getaddrinfo
socket.gethostbyname = _getaddrinfo
socket.create_connection = _create_connection
'''


def test_validate_never_touches_the_network(tmp_path: Path) -> None:
    """Every sample (and the upstream examples, with the upstream CRDs when present) in one subprocess whose
    sockets record and refuse: nothing may try to connect or resolve a name."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(SITECUSTOMIZE)
    log = tmp_path / "attempts.log"
    # The hook must be live in the child: prove it with a deliberate attempt first.
    probe = run_python(["-c", "import socket; socket.getaddrinfo('example.com', 80)"], hooks, log)
    assert probe.returncode != 0 and log.read_text() == "getaddrinfo 'example.com'\n"
    log.unlink()
    from tests.helpers import UPSTREAM

    args = ["validate", "-o", "json", str(SAMPLES)]
    if UPSTREAM.is_dir():
        args += [str(UPSTREAM / "jobset" / "examples"), str(UPSTREAM / "trainer" / "examples"),
                 "--crd", str(UPSTREAM / "jobset" / "crd" / "jobset.x-k8s.io_jobsets.yaml")]
    outcome = run_subprocess(args, env={"PYTHONPATH": str(hooks), "NETWORK_ATTEMPTS_LOG": str(log)}, cwd=tmp_path)
    assert_sane(outcome)
    assert not log.exists(), log.read_text()


def run_python(args: list[str], hooks: Path, log: Path) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(hooks), "NETWORK_ATTEMPTS_LOG": str(log)}
    return subprocess.run([sys.executable, *args], capture_output=True, env=env, timeout=120, check=False)


def _listing(root: Path) -> list[tuple[str, int, int]]:
    return sorted(
        (str(p.relative_to(root)), p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")
    )


def test_validate_creates_and_changes_no_files(tmp_path: Path) -> None:
    """validate only reads: the inputs' tree and the working directory are the same before and after."""
    import shutil

    inputs = tmp_path / "inputs"
    shutil.copytree(SAMPLES, inputs / "samples", symlinks=True)
    shutil.copytree(Path(__file__).parent / "seeds", inputs / "seeds")
    work = tmp_path / "work"
    work.mkdir()
    before = (_listing(inputs), _listing(work))
    for output in ("text", "sarif"):
        outcome = run_subprocess(["validate", "-o", output, str(inputs)], cwd=work)
        assert_sane(outcome)
    assert (_listing(inputs), _listing(work)) == before


EXPENSIVE_CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: self.items.all(x, self.items.all(y, self.items.all(z, x + y + z >= 0)))
              message: every triple is non-negative
            properties:
              items:
                type: array
                items: {type: integer}
"""


def test_an_expensive_cel_rule_stops_at_the_cost_limit(tmp_path: Path) -> None:
    """3,000 items under three nested ``all``: 2.7e10 evaluations if nothing stopped it."""
    crd = tmp_path / "crd.yaml"
    crd.write_text(dedent(EXPENSIVE_CRD))
    widget = tmp_path / "widget.yaml"
    widget.write_text("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec:\n  items: ["
                      + ", ".join(["1"] * 3000) + "]\n")
    outcome = run_subprocess(["validate", "-o", "json", "--crd", str(crd), str(widget)], timeout=300)
    assert_sane(outcome)
    assert outcome.status == ExitStatus.FINDINGS
    [cost] = [d for d in outcome.diagnostics if d["severity"] == "error"]
    assert (cost["rule"], cost["line"], cost["column"]) == ("cel-cost", 4, 1)
    assert "cost" in cost["message"] and "limit" in cost["message"]

