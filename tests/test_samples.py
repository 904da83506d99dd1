"""The ``samples/`` corpus: valid manifests stay clean, and every rule has a sample that triggers it.

How the corpus works (``samples/README.md`` says the same for users):

* ``samples/valid/``: realistic manifests; ``jobsetctl validate samples/valid/`` (the README's first
  command, default options, no ``.jobsetctl.yaml``) must report no error and no warning.
* ``samples/invalid/<rule-id>.yaml``, or a directory ``samples/invalid/<rule-id>/`` when the sample needs
  several files: each triggers its rule. Options go in a first-line comment,
  ``# jobsetctl: --kubernetes-version 1.36 --old old.yaml``; paths in options are relative to the sample
  (its directory), and files named by an option are not inputs. A sample for a rule of another command
  names it first, ``# jobsetctl: simulate --nodes nodes.yaml`` (the default command is ``validate``;
  any command whose ``-o json`` output has a ``diagnostics`` list works).
* :data:`EXEMPT`: the rules no committable manifest can trigger, each with the reason.
* every finding about an object, of every sample, has its field path and points inside it (issue #13).

Adding a rule? ``test_every_rule_has_a_sample`` fails and names it until its sample exists.
"""

from __future__ import annotations

import contextlib
import io
import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from jobsetctl.cli.app import run
from jobsetctl.kinds.registry import clear_extra
from jobsetctl.rules import all_rules
from tests.helpers import SAMPLES, allowed_positions

VALID = SAMPLES / "valid"
INVALID = SAMPLES / "invalid"
OPTIONS_PREFIX = "# jobsetctl:"
#: Options whose value is a path (relative to the sample); such files are not inputs.
PATH_OPTIONS = frozenset({"--old", "--runtimes", "--crd", "--config", "--nodes"})
#: Commands a sample may name first in its options line.
COMMANDS = ("validate", "simulate")
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")

#: Rules that no committable manifest given to ``jobsetctl validate`` can trigger. Keep it short.
EXEMPT: dict[str, str] = {
    "input-unreadable": "needs a path that cannot be read (missing, no permission, broken symlink): not a manifest",
    "input-too-large": "needs a file over the 64 MiB input limit: not committable",
    "object-too-large": "a sample over 3 MiB is not committable; tests/hardening/test_loader_regressions.py builds one",
    "pod-jobset-follower-node-selector": "a Pod webhook: only the fake API server of render/simulate creates Pods",
    "pod-jobset-leader-lookup": "a Pod webhook: only the fake API server of render/simulate creates Pods",
    "pod-jobset-leader-not-scheduled": "a Pod webhook: only the fake API server of render/simulate creates Pods",
    "pod-jobset-leader-topology": "a Pod webhook: only the fake API server of render/simulate creates Pods",
    "pod-priority-class-not-found": "Pod admission: only the fake API server of render/simulate creates Pods",
    "pod-priority-preset": "Pod admission: only the fake API server of render/simulate creates Pods",
    # Defined for every scheduling kind by kube/scheduling_rules.py, but PodGroups and CompositePodGroups
    # have no templates and their reference names report as *-reference: nothing reports these two.
}


@dataclass(frozen=True, slots=True)
class Sample:
    """One sample: the paths to validate and the options to validate them with."""

    rule: str
    location: Path
    inputs: list[Path]
    options: list[str]
    command: str = "validate"


def _options_line(path: Path) -> list[str]:
    try:
        first = path.read_bytes().split(b"\n", 1)[0].decode("utf-8")
    except UnicodeDecodeError:
        return []
    if not first.startswith(OPTIONS_PREFIX):
        return []
    return shlex.split(first[len(OPTIONS_PREFIX):])


def _resolve(options: list[str], base: Path) -> tuple[list[str], set[Path]]:
    """Make path options absolute; return the options and the files they name."""
    resolved: list[str] = []
    named: set[Path] = set()
    pending_path = False
    for token in options:
        if pending_path:
            path = (base / token).resolve()
            named.add(path)
            resolved.append(str(path))
            pending_path = False
            continue
        name, equals, value = token.partition("=")
        if name in PATH_OPTIONS and equals:
            path = (base / value).resolve()
            named.add(path)
            resolved.append(f"{name}={path}")
        else:
            pending_path = token in PATH_OPTIONS
            resolved.append(token)
    return resolved, named


def load_sample(location: Path) -> Sample:
    if location.is_dir():
        files = sorted(p for p in location.iterdir() if p.is_file() and p.suffix in MANIFEST_SUFFIXES)
        options = [token for path in files for token in _options_line(path)]
        base = location
        rule = location.name
    else:
        files = [location]
        options = _options_line(location)
        base = location.parent
        rule = location.stem
    command = "validate"
    if options and options[0] in COMMANDS:
        command, options = options[0], options[1:]
    resolved, named = _resolve(options, base)
    inputs = [path for path in files if path.resolve() not in named]
    return Sample(rule, location, inputs, resolved, command)


def invalid_samples() -> dict[str, Sample]:
    samples: dict[str, Sample] = {}
    for location in sorted(INVALID.iterdir()):
        if location.name.startswith((".", "README")):
            continue
        sample = load_sample(location)
        assert sample.rule not in samples, f"two samples for {sample.rule}: {location}"
        samples[sample.rule] = sample
    return samples


def validate_json(paths: list[Path], options: list[str] | None = None, command: str = "validate") -> list[dict[str, Any]]:
    """``jobsetctl <command> -o json <options> <paths>`` through the real CLI; its diagnostics."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = run([command, "-o", "json", *(options or []), *(str(p) for p in paths)])
    assert status in (0, 1), f"exit status {status} for {command} {paths} {options}"
    diagnostics: list[dict[str, Any]] = json.loads(out.getvalue()).get("diagnostics", [])
    return diagnostics


@pytest.fixture(autouse=True)
def _forget_crds() -> Any:
    """A ``--crd`` sample registers a kind for the rest of the process; drop it afterwards."""
    yield
    clear_extra()


# --- valid -------------------------------------------------------------------------------------


def test_valid_samples_exist() -> None:
    assert sorted(p.name for p in VALID.glob("*.yaml")), "samples/valid/ is empty"


@pytest.mark.parametrize("path", sorted(VALID.glob("*.yaml")), ids=lambda p: p.name)
def test_valid_sample_is_clean_on_its_own_directory(path: Path) -> None:
    """Each file in ``samples/valid`` is clean when the directory is validated (as the README does):
    files may refer to each other, e.g. a TrainJob to the TrainingRuntime next to it."""
    problems = [d for d in validate_json([VALID]) if d["severity"] != "info" and Path(d["file"]) == path]
    assert problems == []


def test_valid_directory_as_in_the_readme() -> None:
    readme = (SAMPLES.parent / "README.md").read_text(encoding="utf-8")
    assert "jobsetctl validate samples/valid/" in readme
    diagnostics = validate_json([VALID])
    assert [d for d in diagnostics if d["severity"] in ("error", "warning")] == []


# --- invalid -----------------------------------------------------------------------------------


def test_every_rule_has_a_sample() -> None:
    samples = invalid_samples()
    missing = sorted(r.id for r in all_rules() if r.id not in samples and r.id not in EXEMPT)
    assert not missing, (
        "rules without a sample in samples/invalid/ (add <rule-id>.yaml, or a <rule-id>/ directory, "
        f"or an EXEMPT entry with the reason no manifest can trigger it): {', '.join(missing)}"
    )


def test_every_sample_names_a_rule() -> None:
    known = {r.id for r in all_rules()}
    strays = sorted(rule for rule in invalid_samples() if rule not in known)
    assert not strays, f"samples named after no registered rule: {', '.join(strays)}"


def test_exemptions_are_rules_without_samples() -> None:
    known = {r.id for r in all_rules()}
    samples = invalid_samples()
    assert sorted(rule for rule in EXEMPT if rule not in known) == [], "exempted ids that are not rules"
    assert sorted(rule for rule in EXEMPT if rule in samples) == [], "exempted rules that have a sample"


@pytest.mark.parametrize("rule", sorted(invalid_samples()))
def test_sample_triggers_its_rule(rule: str) -> None:
    sample = invalid_samples()[rule]
    diagnostics = validate_json(sample.inputs, sample.options, sample.command)
    found = sorted({d["rule"] for d in diagnostics})
    assert rule in found, f"{sample.location} does not trigger {rule}; it gives {found}"
    # Issue #13, over the whole registry: every finding about an object carries its field path and
    # points inside that field (the object's own first line only when the path is not in the object).
    for d in diagnostics:
        if d["object"] is None:
            continue  # the input itself (YAML, files): a position, no object
        where = f"{d['file']}:{d['line']}:{d['column']} {d['rule']}"
        assert d["path"], f"{where} has no field path"
        assert (d["line"], d["column"]) in allowed_positions(d["file"], d["object"], d["path"]), (
            f"{where} does not point inside its path {d['path']}")
